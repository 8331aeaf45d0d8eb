import * as vscode from 'vscode';
import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import { COMPANION_LAYOUTS, companionFolderOf } from '../core/trace/formats';
import type { FormatId } from '../core/trace/model';
import type { TraceProblems } from '../core/view/traceService';
import { NotRegularFileError } from '../node/traceFiles';
import { TraceCancelledError, TraceWorkerClient } from '../node/traceWorkerClient';
import type { OpenedTrace, ReopenReason, TraceWorkerMethods, WorkerMethod } from '../protocol/traceWorkerProtocol';
import { listCompanions } from '../node/traceFiles';
import { FileTooLargeError, workerFilesFor } from './traceLoader';
import { stat } from 'node:fs/promises';
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

/** The trace grew: the new calls were read from the bytes the file gained (not the whole file again). */
export interface TraceGrowth {
  opened: OpenedTrace;
  /** Bytes read from disk for this update (the bytes the files gained). */
  newBytes: number;
  /** Where reading stands in each file (the main file first). */
  bytesRead: number[];
}

/** Why a followed file could not be read on from where its read stopped, said in the panel while it is read again (or closed). */
export type TraceReset = { reason: Exclude<ReopenReason, 'not-live' | 'stopped'>; message: string };

/** Waits this long after the last change on disk before reading (agents append in bursts). */
const RELOAD_DEBOUNCE_MS = 300;
/**
 * A file written this recently when it is opened is followed from the start (its reader
 * state kept for the bytes to come); an older one is read once, and followed from its
 * first change on (that change reads it whole once more).
 */
export const FOLLOW_RECENT_MS = 10 * 60_000;
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
  /** True for a file that ships with the extension (never live, however recently it was installed). */
  shipped?(uri: vscode.Uri): boolean;
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
  private readonly didGrow = new vscode.EventEmitter<TraceGrowth>();
  private readonly didReset = new vscode.EventEmitter<TraceReset>();
  /** Fires with the new result after the file was read again (changed on disk, another format, a retry). */
  readonly onDidReload = this.didReload.event;
  /** Fires when a followed file grew and its new bytes were read (only them): the trace as it now stands. */
  readonly onDidGrow = this.didGrow.event;
  /** Fires when a followed file was truncated, replaced or deleted: what it had shown is not current, it is read again from scratch. */
  readonly onDidReset = this.didReset.event;
  /** When the file last grew (host clock, ms), or was last written when it was opened; null when not known. */
  lastGrowthMs: number | null = null;
  /** Bytes read from disk by each update of a followed file, in order (for the tests and benchmarks: each is its append). */
  readonly growthBytes: number[] = [];
  /** Whether the trace is followed (its worker keeps the reader state to read only what the file gains). */
  private follow = false;
  /** An update in flight, and whether another change came meanwhile (it runs once the first ends). */
  private updating: Promise<void> | null = null;
  private changedAgain = false;
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
    this.didGrow.dispose();
    this.didReset.dispose();
    this.hooks.disposed(this);
  }

  /** Asks the worker about the open trace; rejects when the trace could not be read. */
  async request<M extends WorkerMethod>(
    method: M,
    params: TraceWorkerMethods[M]['params'],
  ): Promise<TraceWorkerMethods[M]['result']> {
    const result = await this.current;
    if (isLoadFailure(result) || !this.client)
      throw new Error(isLoadFailure(result) ? result.message : 'the trace is not open');
    const answer = this.client.request(method, params);
    // The first session a panel draws goes before the Problems (the worker answers in order, and both analyse).
    if (method === 'sessionBody') void answer.finally(() => this.problemsSoon(0));
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
      if (this.uri.scheme === 'file' && !this.follow && !this.hooks.shipped?.(this.uri)) {
        // A file an agent is still writing is followed from the start.
        const written = (await stat(this.uri.fsPath)).mtimeMs;
        this.follow = Date.now() - written < FOLLOW_RECENT_MS;
        this.lastGrowthMs = written;
      }
      const live = this.uri.scheme === 'file' && this.follow;
      const opening = {
        files,
        totalBytes,
        notes,
        format: this.formatOverride,
        fileName: basename(this.uri.path),
        analysis: this.hooks.analysisOptions(),
        prices: this.hooks.userPrices(),
        live,
      };
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
      this.hooks.log.info(
        `${basename(this.uri.path)}: read in ${(result.parseMs / 1000).toFixed(1)} s in the trace worker (${result.header.sessionCount} sessions, ${result.header.callCount} calls)`,
      );
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
      if (!(e instanceof TraceCancelledError))
        this.hooks.log.error(
          `Listing the problems of ${basename(this.uri.path)}: ${e instanceof Error ? e.message : String(e)}`,
        );
    }
  }

  private watch(): void {
    if (this.uri.scheme !== 'file') return;
    const folder = vscode.Uri.joinPath(this.uri, '..');
    const name = basename(this.uri.path);
    const patterns = [name];
    for (const layout of COMPANION_LAYOUTS) {
      const companions = layout.folderOf(name);
      if (companions !== null) patterns.push(`${companions}/${layout.nameGlob}`);
    }
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
    this.reloadTimer = setTimeout(() => this.changed(), RELOAD_DEBOUNCE_MS);
  }

  /** The file (or a sub-agent log) changed on disk: its new bytes are read, one update at a time. */
  private changed(): void {
    if (this.disposed) return;
    if (this.updating) {
      this.changedAgain = true;
      return;
    }
    this.updating = this.update()
      .catch((e: unknown) =>
        this.hooks.log.error(
          `${basename(this.uri.path)}: following the file: ${e instanceof Error ? e.message : String(e)}`,
        ),
      )
      .finally(() => {
        this.updating = null;
        if (this.changedAgain && !this.disposed) {
          this.changedAgain = false;
          this.changed();
        }
      });
  }

  /**
   * Reads what the trace gained since the last read: only the new bytes when it is followed
   * (readMore), the whole file otherwise (then it is followed from now on). A file that was
   * truncated, replaced or deleted is said (onDidReset) and read again from scratch, which
   * fails and says so when it is gone.
   */
  private async update(): Promise<void> {
    const load = this.current;
    const result = await load;
    const client = this.client;
    // A read under way reads to the end of the file as it is: once it ends, what came after it is read.
    if (load !== this.current) return this.update();
    if (isLoadFailure(result) || !client || !this.follow || this.uri.scheme !== 'file') {
      // Read whole once more, and followed from now on (it is being written).
      this.follow = this.uri.scheme === 'file';
      this.lastGrowthMs = Date.now();
      this.reload(false);
      await this.current;
      return;
    }
    let more;
    try {
      more = await client.request('readMore', { newFiles: await this.newCompanions(result.header.files) });
    } catch (e) {
      if (e instanceof TraceCancelledError || this.client !== client) return;
      // The worker could not read on (a read error): read from scratch, which says what is wrong.
      this.hooks.log.warn(
        `${basename(this.uri.path)}: ${e instanceof Error ? e.message : String(e)}; reading it again`,
      );
      this.reload(false);
      await this.current;
      return;
    }
    if (this.disposed || this.client !== client) return;
    if (more.kind === 'reopen') {
      if (more.reason === 'truncated' || more.reason === 'replaced' || more.reason === 'deleted')
        this.didReset.fire({ reason: more.reason, message: resetMessage(basename(this.uri.path), more.reason) });
      this.hooks.log.info(`${basename(this.uri.path)}: ${more.reason}; read again from the start`);
      this.reload(false);
      await this.current;
      return;
    }
    if (more.newBytes === 0 && more.opened.header.files.length === result.header.files.length) return;
    this.current = Promise.resolve(more.opened);
    this.lastGrowthMs = Date.now();
    this.growthBytes.push(more.newBytes);
    this.hooks.log.info(
      `${basename(this.uri.path)}: grew by ${more.newBytes} bytes, read in ${more.opened.parseMs.toFixed(0)} ms (${more.opened.header.callCount} calls)`,
    );
    this.didGrow.fire({ opened: more.opened, newBytes: more.newBytes, bytesRead: more.bytesRead });
    // The Problems follow the new lines, once the writes pause.
    this.problemsPublished = false;
    this.problemsSoon(PROBLEMS_DELAY_MS);
  }

  /** Companions (sub-agent logs) that appeared beside the trace since it was read (safe ones only, as listed at open). */
  private async newCompanions(known: readonly string[]): Promise<{ key: string; path: string }[]> {
    if (companionFolderOf(basename(this.uri.path)) === null) return [];
    const have = new Set(known);
    try {
      return (await listCompanions(this.uri.fsPath)).files
        .filter((c) => !have.has(c.rel))
        .map((c) => ({ key: c.rel, path: c.path }));
    } catch {
      // The folder cannot be listed now: the logs already read are read on.
      return [];
    }
  }

  private reload(ignoreSizeLimit: boolean): void {
    const load = this.load(ignoreSizeLimit);
    this.current = load;
    void load.then((r) => {
      if (!this.disposed && this.current === load) this.didReload.fire(r);
    });
  }
}

/** What the panel says when a followed file cannot be read on: what happened, and that its figures are being read again. */
export function resetMessage(name: string, reason: TraceReset['reason']): string {
  switch (reason) {
    case 'truncated':
      return `${name} was truncated (it is now shorter than what had been read): the figures shown were of the old content, so it is read again from the start.`;
    case 'replaced':
      return `${name} was replaced by another file (rotated or rewritten): the figures shown were of the old file, so the new one is read from the start.`;
    case 'deleted':
      return `${name} was deleted or renamed: its figures are no longer shown.`;
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
