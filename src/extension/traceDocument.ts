import * as vscode from 'vscode';
import { claudeSubagentFolder } from '../core/trace/claudeCode/companions';
import type { FormatId } from '../core/trace/model';
import type { ParsedTrace } from '../core/trace/parseTrace';
import { NotRegularFileError } from '../node/traceFiles';
import { FileTooLargeError, loadTrace } from './traceLoader';
import { basename } from 'node:path';

/** Reading progress of the current load. */
export interface LoadProgress {
  bytesRead: number;
  totalBytes: number | null;
}

/** A trace that could not be read at all (I/O error, too large): shown in the panel as a problem. */
export interface LoadFailure {
  message: string;
}

/** Waits this long after the last change on disk before re-reading (agents append in bursts). */
const RELOAD_DEBOUNCE_MS = 400;

/**
 * The inspector's document: one trace file (plus its sub-agent logs), parsed once per
 * change on disk and shared by every inspector panel open on it. Owns the parse
 * result, the file watchers and the reload timer; panels only listen.
 */
export class TraceDocument implements vscode.CustomDocument {
  private current: Promise<ParsedTrace | LoadFailure>;
  private readonly watchers: vscode.FileSystemWatcher[] = [];
  private reloadTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly didReload = new vscode.EventEmitter<ParsedTrace | LoadFailure>();
  private readonly didProgress = new vscode.EventEmitter<LoadProgress>();
  /** Fires with the new result after the file changed on disk. */
  readonly onDidReload = this.didReload.event;
  /** Fires while a large file is read. */
  readonly onDidProgress = this.didProgress.event;
  progress: LoadProgress = { bytesRead: 0, totalBytes: null };
  /** The format the user chose in the panel; null = detect. */
  formatOverride: FormatId | null = null;

  constructor(
    readonly uri: vscode.Uri,
    private readonly maxBytes: () => number,
    private readonly hooks: {
      loaded(doc: TraceDocument, result: ParsedTrace | LoadFailure): void;
      disposed(doc: TraceDocument): void;
    },
  ) {
    this.current = this.load();
    this.watch();
  }

  /** The latest parse (waits for one in progress). */
  get result(): Promise<ParsedTrace | LoadFailure> {
    return this.current;
  }

  dispose(): void {
    clearTimeout(this.reloadTimer);
    for (const w of this.watchers) w.dispose();
    this.didReload.dispose();
    this.didProgress.dispose();
    this.hooks.disposed(this);
  }

  private async load(): Promise<ParsedTrace | LoadFailure> {
    let result: ParsedTrace | LoadFailure;
    try {
      result = await loadTrace(
        this.uri,
        this.maxBytes(),
        (bytesRead, totalBytes) => {
          this.progress = { bytesRead, totalBytes };
          this.didProgress.fire(this.progress);
        },
        this.formatOverride,
      );
    } catch (e) {
      result = { message: loadFailureMessage(basename(this.uri.path), e) };
    }
    this.hooks.loaded(this, result);
    return result;
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

  /** Reads the file again as `format` (null: detect) and tells the panels. */
  reloadAs(format: FormatId | null): void {
    this.formatOverride = format;
    clearTimeout(this.reloadTimer);
    this.reload();
  }

  private scheduleReload(): void {
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => this.reload(), RELOAD_DEBOUNCE_MS);
  }

  private reload(): void {
    this.current = this.load();
    void this.current.then((r) => this.didReload.fire(r));
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

/** True when the load failed before parsing. */
export function isLoadFailure(r: ParsedTrace | LoadFailure): r is LoadFailure {
  return !('model' in r);
}
