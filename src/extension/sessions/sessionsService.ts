import * as vscode from 'vscode';
import { uiText } from '../../core/text/safeText';
import type { SessionsContext } from '../../core/context/contextAcrossSessions';
import type { SessionRow } from '../../core/sessions/sessionQuery';
import type { CallRecord } from '../../core/sessions/sessionRecord';
import { SessionIndexClient } from '../../node/sessions/indexClient';
import type { IndexEvent, IndexWorkerConfig } from '../../protocol/indexWorkerProtocol';
import type { SyncProgress } from '../../protocol/indexWorkerProtocol';
import { unreadNote } from '../../node/sessions/sessionIndexer';
import { maxFileBytes, readAnalysisOptions, sessionAgentRoots } from '../settings';
import { join } from 'node:path';

/** The Agent Sessions view (package.json `contributes.views`). */
const SESSIONS_VIEW_ID = 'agentTrace.sessions';
/** A first index still running after this long gets a notification with Cancel. */
const NOTIFY_AFTER_MS = 2000;

/** While anything shows sessions, the agents' folders are looked at again this often (new sessions, other windows' writes). */
const RESCAN_MS = 30_000;

/**
 * The extension host's view of the session index: starts the index worker when first
 * needed (the Agent Sessions view opens, the status bar starts), keeps the rows it last
 * read, re-reads them when the worker says sessions changed, and runs syncs with a
 * progress notification that can be cancelled. Trees, the status bar and the panels
 * listen to `onDidChange`.
 */
export class SessionsService implements vscode.Disposable {
  private client: SessionIndexClient | null = null;
  private starting: Promise<SessionIndexClient> | null = null;
  private rows: SessionRow[] = [];
  private generation = -1;
  private syncing: Promise<void> | null = null;
  /** One more sync after the running one: asked for while it ran, it may have missed what changed since it began. */
  private followUp: Promise<void> | null = null;
  private rescan: ReturnType<typeof setInterval> | undefined;
  private users = 0;
  /** Discovery notes already logged (each once per window). */
  private readonly saidNotes = new Set<string>();
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [];
  /** Fires after the rows changed (a sync, a live session that grew). */
  readonly onDidChange = this.changed.event;
  /** Set once the first sync finished: the view can tell "no sessions" from "not read yet". */
  ready = false;
  /** The last sync's progress, while one runs (the view shows it). */
  progress: SyncProgress | null = null;
  /** What the last sync could not read (folders, files), said once in the log and shown by the view; null when nothing. */
  unread: { count: number; note: string } | null = null;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    /** The worker script; the tests and the benchmark run the same one. */
    private readonly workerScript = join(context.extensionUri.fsPath, 'dist', 'indexWorker.js'),
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (
          ['sessionRoots', 'analysis', 'maxFileSizeMB', 'prices'].some((k) => e.affectsConfiguration(`agentTrace.${k}`))
        ) {
          void this.reconfigure();
        }
      }),
      vscode.window.onDidChangeWindowState((s) => {
        if (s.focused && this.users > 0) void this.sync(false);
      }),
    );
  }

  dispose(): void {
    clearInterval(this.rescan);
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
    void this.client?.dispose();
  }

  /** Where the index lives: the extension's global storage (one per machine and VS Code flavour). */
  get indexPath(): string {
    return join(this.context.globalStorageUri.fsPath, 'sessions.sqlite');
  }

  private config(): IndexWorkerConfig {
    return {
      dbPath: this.indexPath,
      roots: sessionAgentRoots(this.context.globalStorageUri.fsPath).map((r) => ({
        agentId: r.agent.id,
        root: r.root,
      })),
      prices: vscode.workspace.getConfiguration('agentTrace').get<unknown>('prices') ?? [],
      analysis: readAnalysisOptions(),
      maxFileBytes: maxFileBytes(),
      stateVersion: String((this.context.extension.packageJSON as { version?: unknown }).version ?? 'dev'),
    };
  }

  private async start(): Promise<SessionIndexClient> {
    if (this.client && !this.client.stopped) return this.client;
    this.starting ??= (async () => {
      const client = new SessionIndexClient(this.workerScript, (e) => this.onEvent(e));
      const { notice } = await client.request('configure', this.config());
      if (notice) this.notice(notice);
      this.client = client;
      return client;
    })().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async reconfigure(): Promise<void> {
    if (!this.client) return;
    await this.client.request('configure', this.config());
    await this.sync(false);
  }

  private notice(message: string): void {
    // The index's notices name files and folders on disk: text only in a notification, which renders links.
    this.log.warn(uiText(message, { max: 1000 }));
    void vscode.window.showWarningMessage(`Agent Sessions: ${uiText(message, { max: 400 })}`);
  }

  private onEvent(e: IndexEvent): void {
    switch (e.event) {
      case 'progress':
        this.progress = e;
        return;
      case 'written':
        // A first index shows each batch of sessions as it is written, not after its last file.
        if (!this.ready) void this.reload().catch(() => undefined);
        return;
      case 'changed':
        for (const o of e.outcomes) {
          if (o.kind === 'reread') this.log.info(`${o.path} was read again from the start: ${o.reason ?? ''}`);
          if (o.kind === 'deleted')
            this.log.info(`${o.path} was deleted; its session stays listed with the figures last read.`);
        }
        void this.reload();
        return;
      case 'notice':
        this.notice(e.message);
        return;
      case 'log':
        this.log[e.level](e.message);
        return;
    }
  }

  /**
   * Something shows sessions (the view, the status bar): keep them fresh while it does.
   * Returns a disposable that says it stopped.
   */
  use(): vscode.Disposable {
    this.users += 1;
    if (this.users === 1) {
      void this.sync(false);
      this.rescan = setInterval(() => void this.sync(false), RESCAN_MS);
    }
    return new vscode.Disposable(() => {
      this.users -= 1;
      if (this.users === 0) clearInterval(this.rescan);
    });
  }

  /** The rows as last read. */
  current(): SessionRow[] {
    return this.rows;
  }

  /** Reads the rows again if the index changed; true when they did (and onDidChange fired). */
  async reload(): Promise<boolean> {
    const client = await this.start();
    const { generation, rows } = await client.request('rows', {});
    if (generation === this.generation && this.ready) return false;
    this.generation = generation;
    this.rows = rows;
    this.changed.fire();
    return true;
  }

  /**
   * Reads what changed in the agents' folders. The first index (or one asked for) shows
   * a notification with how far it got and a Cancel button; later ones show in the
   * status bar only. Another window indexing means this one only reads.
   */
  sync(interactive: boolean): Promise<void> {
    if (this.syncing) {
      // The running sync may have listed the folders before the caller's change: run once more
      // after it (callers that ask meanwhile share that one), rather than answer with its result.
      this.followUp ??= this.syncing
        .catch(() => undefined)
        .then(() => {
          this.followUp = null;
          return this.sync(interactive);
        });
      return this.followUp;
    }
    this.syncing = this.runSync(interactive).finally(() => {
      this.syncing = null;
      this.progress = null;
    });
    return this.syncing;
  }

  private async runSync(interactive: boolean): Promise<void> {
    const client = await this.start();
    // A warm index shows at once: its rows first, then what changed since.
    if (!this.ready && this.rows.length === 0) {
      // Ready before the rows are told about, so listeners see rows and "ready" in one event.
      const { generation, rows } = await client.request('rows', {});
      if (rows.length > 0) {
        this.generation = generation;
        this.rows = rows;
        this.ready = true;
        this.changed.fire();
      }
    }
    const cold = !this.ready && this.rows.length === 0;
    let unreadChanged = false;
    const run = async (report: (p: SyncProgress) => void, token: vscode.CancellationToken | null): Promise<void> => {
      const timer = setInterval(() => this.progress && report(this.progress), 250);
      const cancel = token?.onCancellationRequested(() => client.cancelSync());
      try {
        const result = await client.request('sync', {});
        if (!result.readOnly) {
          for (const r of result.rereads) this.log.info(`Read again from the start: ${uiText(r, { max: 400 })}`);
          if (result.cancelled) this.log.info('Indexing sessions was cancelled; what was read so far is kept.');
          for (const n of result.notes) {
            if (this.saidNotes.has(n)) continue;
            this.saidNotes.add(n);
            this.log.info(uiText(n, { max: 400 }));
          }
          // Said once: a rescan every 30 s that finds the same entries says nothing new.
          const note = unreadNote(result);
          if (note !== (this.unread?.note ?? null)) {
            if (note !== null) this.log.warn(uiText(note, { max: 2000 }));
            this.unread = note === null ? null : { count: result.unlisted.length + result.unread.length, note };
            unreadChanged = true;
          }
        }
      } finally {
        clearInterval(timer);
        cancel?.dispose();
      }
      // One event per sync, and none when nothing changed: the rows when they did, else
      // "ready" alone when this was the first sync (the view can say "no sessions").
      const wasReady = this.ready;
      this.ready = true;
      const fired = await this.reload();
      // What could not be read changed (the view's message says it): that is a change too.
      if (!fired && (!wasReady || unreadChanged)) this.changed.fire();
    };
    try {
      if (cold || interactive) {
        // The view's own progress bar at once; a notification (with Cancel) only when the index
        // takes a while, or when the user asked for it: a new user's four files were done in a
        // second, and the toast over their first screen said nothing they needed.
        const cancel = new vscode.CancellationTokenSource();
        let reportTo: ((p: SyncProgress) => void) | null = null;
        const syncing = run((p) => reportTo?.(p), cancel.token);
        let settled = false;
        void syncing.then(
          () => (settled = true),
          () => (settled = true),
        );
        // The view's bar is a courtesy: if VS Code cannot show it (the view gone), the index goes on.
        Promise.resolve(
          vscode.window.withProgress({ location: { viewId: SESSIONS_VIEW_ID } }, () => syncing.catch(() => undefined)),
        ).catch((e: unknown) =>
          this.log.debug(`Agent Sessions progress: ${e instanceof Error ? e.message : String(e)}`),
        );
        if (!interactive) await Promise.race([syncing, new Promise((r) => setTimeout(r, NOTIFY_AFTER_MS))]);
        if (!settled) {
          await vscode.window.withProgress(
            { location: vscode.ProgressLocation.Notification, title: 'Indexing agent sessions', cancellable: true },
            (progress, token) => {
              let shown = 0;
              token.onCancellationRequested(() => cancel.cancel());
              reportTo = (p) => {
                const percent = p.bytesTotal > 0 ? (100 * p.bytesDone) / p.bytesTotal : 0;
                progress.report({
                  increment: percent - shown,
                  message: `${p.filesDone} of ${p.filesTotal} files (${(p.bytesDone / 2 ** 20).toFixed(0)} of ${(p.bytesTotal / 2 ** 20).toFixed(0)} MB)`,
                });
                shown = percent;
              };
              if (this.progress) reportTo(this.progress);
              return syncing;
            },
          );
        }
        try {
          await syncing;
        } finally {
          cancel.dispose();
        }
      } else {
        await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'Agent sessions' }, () =>
          run(() => undefined, null),
        );
      }
    } catch (e) {
      this.log.error(`Indexing agent sessions: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      if (interactive)
        void vscode.window.showErrorMessage(
          `Agent Sessions: indexing failed (${uiText(e instanceof Error ? e.message : String(e), { max: 300 })}); see the Agent Trace Inspector output.`,
        );
    }
  }

  async calls(sessionId: number): Promise<CallRecord[]> {
    return (await this.start()).request('calls', { sessionId });
  }

  /** The context anatomy of these sessions, summed by tool, MCP server and file; counted in the index worker, off the host's event loop. */
  async contextAnatomy(rows: readonly SessionRow[]): Promise<SessionsContext> {
    const byPath = new Map<string, string[]>();
    for (const r of rows) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r.key]);
    const files = [...byPath].map(([path, sessionKeys]) => ({ path, sessionKeys }));
    return (await this.start()).request('context', { files });
  }

  async search(text: string): Promise<Set<number>> {
    return new Set(await (await this.start()).request('search', { text }));
  }

  /** Reads one file now and asks the worker to watch it closely (an inspector or the status bar shows it). */
  async watch(paths: string[]): Promise<void> {
    const client = await this.start();
    await client.request('watch', { paths });
  }
}
