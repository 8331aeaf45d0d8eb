import * as vscode from 'vscode';
import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import { claudeSubagentFolder } from '../core/trace/claudeCode/companions';
import type { FormatId } from '../core/trace/model';
import type { TraceProblems } from '../core/view/traceService';
import { NotRegularFileError } from '../node/traceFiles';
import { TraceCancelledError, TraceWorkerClient } from '../node/traceWorkerClient';
import type { OpenedTrace, TraceWorkerMethods, WorkerMethod } from '../node/traceWorkerProtocol';
import { FileTooLargeError, workerFilesFor } from './traceLoader';
import { basename } from 'node:path';

/** Reading progress of the current load. */
export interface LoadProgress {
  bytesRead: number;
  totalBytes: number | null;
}

/** A trace that could not be read (I/O error, too large, out of memory) or whose reading was cancelled: shown in the panel. */
export interface LoadFailure {
  message: string;
  reason: 'failed' | 'cancelled';
  /** The file is above `agentTrace.maxFileSizeMB`: the panel offers to read it anyway. */
  overSizeLimit: boolean;
}

/** What a load ends with: the trace, open in its worker, or why not. */
export type LoadResult = OpenedTrace | LoadFailure;

/** Waits this long after the last change on disk before re-reading (agents append in bursts). */
const RELOAD_DEBOUNCE_MS = 400;
/** Problems of a trace no panel is drawing yet are listed this long after it is read. */
const PROBLEMS_DELAY_MS = 2000;
/** Below this many calls listing the problems takes milliseconds: they are listed at once, not after the first timeline. */
const PROBLEMS_AT_ONCE_CALLS = 20_000;

/** What a document needs from the extension. */
export interface TraceDocumentHooks {
  /** The bundled worker script (dist/traceWorker.js). */
  workerScript: string;
  maxBytes(): number;
  analysisOptions(): Partial<AnalysisOptions>;
  /** `agentTrace.prices` as the user wrote it (the worker builds the price book from it). */
  userPrices(): unknown;
  /** A load ended: its problems for the Problems view, or its failure. */
  loaded(doc: TraceDocument, result: TraceProblems | LoadFailure): void;
  disposed(doc: TraceDocument): void;
  log: vscode.LogOutputChannel;
}

/**
 * The inspector's document: one trace file (plus its sub-agent logs), read by a trace
 * worker off the extension host's event loop and kept there; every inspector panel on
 * the file asks it through this document. Owns the worker, the file watchers and the
 * reload timer; a reload or a cancel stops the worker it replaces. Switching sessions,
 * settings and toggles ask the same worker again: only a change of the file (or of the
 * chosen format) reads it again.
 */
export class TraceDocument implements vscode.CustomDocument {
  private current: Promise<LoadResult>;
  private client: TraceWorkerClient | null = null;
  private readonly watchers: vscode.FileSystemWatcher[] = [];
  private reloadTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly didReload = new vscode.EventEmitter<LoadResult>();
  private readonly didProgress = new vscode.EventEmitter<LoadProgress>();
  /** Fires with the new result after the file was read again (changed on disk, another format, a retry). */
  readonly onDidReload = this.didReload.event;
  /** Fires while a file is read. */
  readonly onDidProgress = this.didProgress.event;
  progress: LoadProgress = { bytesRead: 0, totalBytes: null };
  /** The format the user chose in the panel; null = detect. */
  formatOverride: FormatId | null = null;
  /** Loads started, for the benchmarks and tests: switching sessions or settings must not add one. */
  loads = 0;
  private disposed = false;

  constructor(
    readonly uri: vscode.Uri,
    private readonly hooks: TraceDocumentHooks,
  ) {
    this.current = this.load(false);
    this.watch();
  }

  /** The latest load (waits for one in progress). */
  get result(): Promise<LoadResult> {
    return this.current;
  }

  /** True while the file is being read. */
  get isLoading(): boolean {
    return !this.settled;
  }

  private settled = false;

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.reloadTimer);
    clearTimeout(this.problemsTimer);
    for (const w of this.watchers) w.dispose();
    this.client?.dispose();
    this.client = null;
    this.didReload.dispose();
    this.didProgress.dispose();
    this.hooks.disposed(this);
  }

  /** Asks the worker about the open trace; rejects when the trace could not be read. */
  async request<M extends WorkerMethod>(method: M, params: TraceWorkerMethods[M]['params']): Promise<TraceWorkerMethods[M]['result']> {
    const result = await this.current;
    if (isLoadFailure(result) || !this.client) throw new Error(isLoadFailure(result) ? result.message : 'the trace is not open');
    const answer = this.client.request(method, params);
    // The first session a panel draws goes before the Problems (the worker answers in order, and both analyse).
    if (method === 'body') void answer.finally(() => this.problemsSoon(0));
    return answer;
  }

  private problemsTimer: ReturnType<typeof setTimeout> | undefined;
  private problemsPublished = false;

  /** Publishes the Problems once, `delayMs` from now (or sooner, when a panel's first session is drawn). */
  private problemsSoon(delayMs: number): void {
    if (this.problemsPublished) return;
    clearTimeout(this.problemsTimer);
    this.problemsTimer = setTimeout(() => {
      if (this.problemsPublished) return;
      this.problemsPublished = true;
      void this.publishProblems();
    }, delayMs);
  }

  /** Stops reading (the panel's Cancel); the panels show why and offer to read it again. */
  cancel(): void {
    this.client?.cancel(new TraceCancelledError('Reading was cancelled.'));
  }

  /** Reads the file again, this once above the size limit if asked. */
  retry(ignoreSizeLimit: boolean): void {
    clearTimeout(this.reloadTimer);
    this.reload(ignoreSizeLimit);
  }

  /** Reads the file again as `format` (null: detect) and tells the panels. */
  reloadAs(format: FormatId | null): void {
    this.formatOverride = format;
    clearTimeout(this.reloadTimer);
    this.reload(false);
  }

  /** New analysis settings: the worker analyses again (no re-read) and the Problems follow. */
  async reanalyse(options: Partial<AnalysisOptions>): Promise<void> {
    const result = await this.current;
    if (isLoadFailure(result) || !this.client) return;
    await this.client.request('setAnalysisOptions', { analysis: options });
    await this.publishProblems();
  }

  /** New `agentTrace.prices`: the worker prices again (no re-read). */
  async reprice(prices: unknown): Promise<void> {
    const result = await this.current;
    if (isLoadFailure(result) || !this.client) return;
    await this.client.request('setPrices', { prices });
  }

  private async load(ignoreSizeLimit: boolean): Promise<LoadResult> {
    this.loads += 1;
    this.settled = false;
    this.client?.dispose();
    const client = new TraceWorkerClient(this.hooks.workerScript);
    this.client = client;
    this.progress = { bytesRead: 0, totalBytes: null };
    let result: LoadResult;
    try {
      const { files, totalBytes, notes } = await workerFilesFor(this.uri, this.hooks.maxBytes(), ignoreSizeLimit);
      this.progress = { bytesRead: 0, totalBytes };
      const opening = { files, totalBytes, notes, format: this.formatOverride, fileName: basename(this.uri.path), analysis: this.hooks.analysisOptions(), prices: this.hooks.userPrices() };
      result = await client.open(opening, (bytesRead, total) => {
        if (this.client !== client || this.disposed) return;
        this.progress = { bytesRead, totalBytes: total };
        this.didProgress.fire(this.progress);
      });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      const cancelled = e instanceof TraceCancelledError;
      result = {
        message: cancelled ? message : loadFailureMessage(basename(this.uri.path), e),
        reason: cancelled ? 'cancelled' : 'failed',
        overSizeLimit: e instanceof FileTooLargeError,
      };
      if (this.client === client) {
        client.dispose();
        this.client = null;
      }
    }
    // A newer load (a reload, a retry) replaced this one: it says nothing.
    if (this.disposed || (this.client !== client && this.client !== null)) return result;
    this.settled = true;
    if (isLoadFailure(result)) {
      this.hooks.log.warn(`${basename(this.uri.path)}: ${result.message}`);
      if (result.reason === 'failed') this.hooks.loaded(this, result);
    } else {
      this.hooks.log.info(`${basename(this.uri.path)}: read in ${(result.parseMs / 1000).toFixed(1)} s in the trace worker (${result.header.sessionCount} sessions, ${result.header.callCount} calls)`);
      // Problems wait for the first panel's timeline (or a moment, when no panel asks).
      this.problemsPublished = false;
      this.problemsSoon(result.header.callCount < PROBLEMS_AT_ONCE_CALLS ? 0 : PROBLEMS_DELAY_MS);
    }
    return result;
  }

  private async publishProblems(): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      const problems = await client.request('problems', {});
      if (this.client === client && !this.disposed) this.hooks.loaded(this, problems);
    } catch (e) {
      if (!(e instanceof TraceCancelledError)) this.hooks.log.error(`Listing the problems of ${basename(this.uri.path)}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private watch(): void {
    if (this.uri.scheme !== 'file') return;
    const folder = vscode.Uri.joinPath(this.uri, '..');
    const name = basename(this.uri.path);
    const patterns = [name];
    const subagents = claudeSubagentFolder(name);
    if (subagents) patterns.push(`${subagents}/*.jsonl`);
    for (const pattern of patterns) {
      const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, pattern));
      w.onDidChange(() => this.scheduleReload());
      w.onDidCreate(() => this.scheduleReload());
      // Deleted or renamed away: read again, which fails and says so, so no stale figures stay on screen.
      w.onDidDelete(() => this.scheduleReload());
      this.watchers.push(w);
    }
  }

  private scheduleReload(): void {
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => this.reload(false), RELOAD_DEBOUNCE_MS);
  }

  private reload(ignoreSizeLimit: boolean): void {
    const load = this.load(ignoreSizeLimit);
    this.current = load;
    void load.then((r) => {
      if (!this.disposed && this.current === load) this.didReload.fire(r);
    });
  }
}

/** Why a trace could not be read, in words: a vanished file says it was deleted or renamed. */
export function loadFailureMessage(name: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT' || (e instanceof vscode.FileSystemError && e.code === 'FileNotFound')) {
    return `${name} is gone: it was deleted or renamed after it was opened, so its figures are no longer shown. Open it again from where it is now.`;
  }
  if (e instanceof FileTooLargeError || e instanceof NotRegularFileError) return e.message;
  return `Could not read ${name}: ${e instanceof Error ? e.message : String(e)}`;
}

/** True when the load failed or was cancelled. */
export function isLoadFailure<T extends object>(r: T | LoadFailure): r is LoadFailure {
  return 'reason' in r && 'overSizeLimit' in r;
}
