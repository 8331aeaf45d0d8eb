import { tabTitle } from '../core/sessions/sessionTitle';
import * as vscode from 'vscode';
import type { TraceReport } from '../core/report/traceReport';
import type { TraceQueryName, TraceQueryResult } from '../core/view/traceQueries';
import { uiText } from '../core/text/safeText';
import { Channel } from '../protocol/channel';
import { checkRequestParams, checkWebviewNotification, shellWords } from '../protocol/validate';
import { noCall, queryAnswer, TRACE_QUERY_NAMES } from '../protocol/traceQueryChecks';
import { refuseCopiedCommand } from '../core/sim/commandLine';
import type {
  CallRef,
  HostNotification,
  HostRequests,
  InspectorSettings,
  LiveState,
  WebviewNotification,
  WebviewRequests,
} from '../protocol/messages';
import type { TraceAnalysisRegistry } from './analysisRegistry';
import { pickCalibration } from './calibrationFile';
import { ANALYSIS_SETTINGS, maxFileBytes, PRICE_SETTINGS, readWhatIfDefaults, userPriceSetting } from './settings';
import { SETTING_DEFAULTS } from './settingDefaults';
import { isLoadFailure, TraceDocument } from './traceDocument';
import type { LoadFailure, LoadResult } from './traceDocument';
import { traceFileUri } from './traceLoader';
import { buildWebviewHtml, createNonce } from './webviewHtml';
import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';

/** The default editor for *.trace.jsonl. */
export const INSPECTOR_VIEW_TYPE = 'agentTrace.inspector';
/** The same editor offered through "Open With…" for other trace files (*.jsonl); a second id because priority is per contribution. */
export const INSPECTOR_ANY_VIEW_TYPE = 'agentTrace.inspectorAny';

/** How long the HTML report waits for a panel's what-if results before leaving them out. */
const WHATIF_ANSWER_MS = 3000;
/**
 * Typed arrays of an answer this big or bigger go to the page one message each, the next
 * once the last was delivered (Channel's `partBytes`): a million calls' timeline columns
 * are seven 8 MB arrays, which VS Code copied several times over at once when sent whole.
 */
const ANSWER_PART_BYTES = 2 ** 20;

type HostChannel = Channel<HostNotification, WebviewNotification, HostRequests, WebviewRequests>;

/** One open inspector panel and its channel. */
interface InspectorPanel {
  document: TraceDocument;
  panel: vscode.WebviewPanel;
  channel: HostChannel;
  ready: boolean;
  /** A call to select once the webview is ready ("Show in Timeline"). */
  pendingSelect: CallRef | null;
}

/**
 * The Agent Trace Inspector editor: a read-only custom editor, so files of any size
 * are streamed from disk rather than loaded into a text model. Owns the set of open
 * panels and the selections waiting for a panel; each document owns its parse (see
 * TraceDocument), and the registry publishes its problems.
 */
export class InspectorProvider implements vscode.CustomReadonlyEditorProvider<TraceDocument>, vscode.Disposable {
  private readonly panels = new Set<InspectorPanel>();
  /** The panel focused last (null when it closed). */
  private lastActive: InspectorPanel | null = null;
  private readonly documents = new Set<TraceDocument>();
  /** "Show in Timeline" before the panel exists: the call its first panel selects. */
  private readonly queuedSelects = new Map<string, CallRef>();
  private readonly configListener: vscode.Disposable;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly registry: TraceAnalysisRegistry,
    private readonly log: vscode.LogOutputChannel,
  ) {
    // The analyses and costs follow the settings: each worker analyses or prices again (the file is not read again) and the panels ask anew.
    this.configListener = vscode.workspace.onDidChangeConfiguration((e) => {
      // The registry re-reads the settings in its own listener, which was registered first.
      const analysis = e.affectsConfiguration(ANALYSIS_SETTINGS);
      const prices = e.affectsConfiguration(PRICE_SETTINGS);
      if (analysis || prices) void this.reanalyse(analysis, prices);
    });
  }

  dispose(): void {
    this.configListener.dispose();
  }

  openCustomDocument(uri: vscode.Uri): TraceDocument {
    const doc = new TraceDocument(uri, {
      workerScript: vscode.Uri.joinPath(this.extensionUri, 'dist', 'traceWorker.js').fsPath,
      maxBytes: maxFileBytes,
      analysisOptions: () => this.registry.analysisOptions,
      userPrices: userPriceSetting,
      loaded: (d, result) => this.registry.inspectorLoaded(d, d.uri, result),
      disposed: (d) => {
        this.documents.delete(d);
        this.registry.inspectorClosed(d);
      },
      log: this.log,
      // The bundled sample: the install writes it with the time of the install, which is not an agent writing it.
      shipped: (u) =>
        u.scheme === this.extensionUri.scheme && u.path.startsWith(`${this.extensionUri.path.replace(/\/$/, '')}/`),
    });
    this.documents.add(doc);
    return doc;
  }

  resolveCustomEditor(document: TraceDocument, panel: vscode.WebviewPanel): void {
    const webview = panel.webview;
    const roots = [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')];
    webview.options = { enableScripts: true, localResourceRoots: roots };
    webview.html = buildWebviewHtml({
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js')).toString(),
      workerUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'whatIfWorker.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.css')).toString(),
      codiconsUri: webview
        .asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'codicons', 'codicon.css'))
        .toString(),
      nonce: createNonce(),
      title: basename(document.uri.path),
    });
    // Messages the channel itself cannot read (no type, a bad request id) are logged and answered too.
    const channel: HostChannel = new Channel((m) => webview.postMessage(m), {
      onError: (m) => this.refused(entry, m),
      partBytes: ANSWER_PART_BYTES,
    });
    const key = document.uri.toString();
    const entry: InspectorPanel = {
      document,
      panel,
      channel,
      ready: false,
      pendingSelect: this.queuedSelects.get(key) ?? null,
    };
    this.queuedSelects.delete(key);
    this.panels.add(entry);
    const subscriptions: vscode.Disposable[] = [
      webview.onDidReceiveMessage((m: unknown) => channel.receive(m)),
      document.onDidReload((r) => {
        if (entry.ready) this.sendResult(entry, r, false);
      }),
      document.onDidGrow((g) => {
        if (entry.ready)
          entry.channel.notify({
            type: 'trace/didChange',
            header: g.opened.header,
            sessions: g.opened.sessions,
            appended: { newBytes: g.newBytes },
            live: liveState(document),
          });
      }),
      document.onDidReset((r) => {
        if (entry.ready) entry.channel.notify({ type: 'trace/reset', reason: r.reason, message: r.message });
      }),
      document.onDidProgress((p) => {
        if (entry.ready) channel.notify({ type: 'load/progress', ...p });
      }),
    ];
    // A hidden inspector's page is gone (no retainContextWhenHidden: see docs/design/architecture.md): messages to it
    // are dropped until it is rebuilt and says `ready` again. Until then a selection waits for it (Show in Timeline
    // from a CodeLens while the inspector is a background tab), and the page's own state brings back its view.
    subscriptions.push(
      panel.onDidChangeViewState(() => {
        if (!panel.visible) entry.ready = false;
      }),
    );
    channel.onNotification((m: unknown) => this.handleNotification(entry, m));
    // Every answer comes from the document's trace worker: the page gets what it draws. Params
    // are checked before use (shape, type, range; ids only, never paths); a refusal or a
    // failure is logged here and answered by the channel as `err`.
    const answer = <M extends keyof WebviewRequests>(
      method: M,
      run: (params: WebviewRequests[M]['params']) => Promise<WebviewRequests[M]['result']>,
    ): void => {
      channel.onRequest(method, ((raw: unknown) =>
        this.answering(method, () => run(this.checkedParams(method, raw)))) as never);
    };
    // Every trace query goes to the worker by its own name, as checked.
    const forward = <M extends TraceQueryName>(method: M): void =>
      answer(method, async (params) =>
        queryAnswer(method, params, (await document.request(method, params)) as TraceQueryResult<M>),
      );
    for (const method of TRACE_QUERY_NAMES) forward(method);
    answer('callTranscript', async ({ sessionId, callIndex, maxChars }) => {
      // The worker reads the call's records again from the trace's own files (by index, never a path from the page), bounded.
      const transcript = await document.request('callTranscript', { sessionId, callIndex, maxChars });
      if (!transcript) throw new Error(noCall({ sessionId, callIndex }));
      return transcript;
    });
    answer('whatIfWorkload', ({ sessionId }) =>
      document.request('whatIfWorkload', { sessionId, filePath: document.uri.fsPath, format: document.formatOverride }),
    );
    answer('whatif/calibration', () => pickCalibration(document.uri));
    this.lastActive = entry;
    const viewState = panel.onDidChangeViewState((e) => {
      if (e.webviewPanel.active) this.lastActive = entry;
    });
    panel.onDidDispose(() => {
      channel.dispose();
      viewState.dispose();
      for (const s of subscriptions) s.dispose();
      this.panels.delete(entry);
      if (this.lastActive === entry) this.lastActive = null;
    });
  }

  /**
   * Selects a call in every inspector showing `uri` (at once, or when its webview is
   * ready), revealing the panel if asked. False when no inspector shows it.
   */
  selectCall(uri: vscode.Uri, ref: CallRef, options: { reveal?: boolean } = {}): boolean {
    let found = false;
    for (const p of this.panels) {
      if (p.document.uri.toString() !== uri.toString()) continue;
      if (options.reveal && !found) p.panel.reveal(p.panel.viewColumn);
      found = true;
      // Sent in any case: a live page selects it at once, and VS Code delivers it to a page it is rebuilding (which
      // keeps it until its trace is shown). A page not known to be live also gets it with its next `init`.
      p.channel.notify({ type: 'call/select', ref });
      if (!p.ready) p.pendingSelect = ref;
    }
    return found;
  }

  /** Remembers a call for the next inspector that opens on `uri` (it selects it once ready). */
  queueSelect(uri: vscode.Uri, ref: CallRef): void {
    this.queuedSelects.set(uri.toString(), ref);
  }

  /** Forgets a queued selection no panel took (the open failed or was cancelled). */
  dropQueuedSelect(uri: vscode.Uri): void {
    this.queuedSelects.delete(uri.toString());
  }

  /**
   * The what-if panel's last scenario and sweep in an inspector showing `uri`, as the
   * webview answers it: untrusted, the caller checks it (parseWhatIfDocument). Null when
   * no ready panel shows the trace or none has run a scenario.
   */
  async whatIfDocument(uri: vscode.Uri): Promise<unknown> {
    for (const p of this.panels) {
      if (!p.ready || p.document.uri.toString() !== uri.toString()) continue;
      try {
        const answer = await Promise.race([
          p.channel.request('whatif/current', {}),
          new Promise<null>((resolve) => setTimeout(() => resolve(null), WHATIF_ANSWER_MS)),
        ]);
        if (answer !== null && answer !== undefined) return answer;
      } catch (e) {
        this.log.warn(
          `what-if results for the report: ${uiText(e instanceof Error ? e.message : String(e), { max: 1000 })}`,
        );
      }
    }
    return null;
  }

  /** The document of the active inspector panel, if an inspector is focused. */
  activeDocument(): TraceDocument | null {
    for (const p of this.panels) if (p.panel.active) return p.document;
    return null;
  }

  /**
   * The document of the inspector last focused, still open: what a command run from
   * elsewhere (the walkthrough's "Export a report" link) means by "the trace".
   */
  recentDocument(): TraceDocument | null {
    return this.activeDocument() ?? this.lastActive?.document ?? null;
  }

  /** An open inspector document on `uri`, if any. */
  documentFor(uri: vscode.Uri): TraceDocument | null {
    for (const d of this.documents) if (d.uri.toString() === uri.toString()) return d;
    return null;
  }

  /** The CLI's report of an inspector document, from its worker (Analyze Agent Session). */
  async report(document: TraceDocument): Promise<TraceReport | LoadFailure> {
    const result = await document.result;
    if (isLoadFailure(result)) return result;
    return document.request('report', {});
  }

  /** Every document analyses (or prices) again with the current settings; its panels then ask again for what they show. */
  private async reanalyse(analysis: boolean, prices: boolean): Promise<void> {
    if (this.documents.size > 0)
      this.log.info(
        `${prices ? 'agentTrace.prices' : 'The analysis settings'} changed: ${this.documents.size} open trace${this.documents.size === 1 ? '' : 's'} ${prices ? 'priced' : 'analysed'} again`,
      );
    for (const document of this.documents) {
      try {
        if (prices) await document.reprice(userPriceSetting());
        if (analysis || prices) await document.reanalyse(this.registry.analysisOptions);
        for (const p of this.panels)
          if (p.document === document && p.ready) this.sendResult(p, await document.result, false);
      } catch (e) {
        this.log.error(
          `Refreshing the inspector after a settings change: ${uiText(e instanceof Error ? e.message : String(e), { max: 4000 })}`,
        );
      }
    }
  }

  /**
   * Tells a panel how a load ended: `init` (first answer to `ready`) or `trace/didChange`
   * (a reload or new settings) with the header and the first sessions, or `load/stopped`.
   */
  private sendResult(entry: InspectorPanel, result: LoadResult, first: boolean): void {
    if (isLoadFailure(result)) {
      entry.channel.notify({
        type: 'load/stopped',
        reason: result.reason,
        message: result.message,
        canRetry: true,
        overSizeLimit: result.overSizeLimit,
      });
      return;
    }
    // A file named by its UUID gets its session's title on the tab (VS Code 1.106 and later show a custom editor's title; earlier ones keep the file name).
    const named = tabTitle(result.header.fileName, result.header.title);
    if (named !== null) entry.panel.title = uiText(named, { max: 60 });
    if (first) {
      entry.channel.notify({
        type: 'init',
        header: result.header,
        sessions: result.sessions,
        intro: result.intro,
        settings: readSettings(),
        select: entry.pendingSelect,
        live: liveState(entry.document),
      });
      entry.pendingSelect = null;
    } else {
      entry.channel.notify({
        type: 'trace/didChange',
        header: result.header,
        sessions: result.sessions,
        live: liveState(entry.document),
      });
    }
  }

  /**
   * A notification from the page: checked for shape, type and range first (the page shows
   * hostile text, so its messages are untrusted too), then handled. A refusal or a
   * failure is logged to the output channel and answered with `host/error`; nothing is
   * left as an unhandled rejection.
   */
  private handleNotification(entry: InspectorPanel, raw: unknown): void {
    const checked = checkWebviewNotification(raw);
    if (!checked.ok) {
      this.refused(entry, checked.error);
      return;
    }
    const m = checked.value;
    this.onMessage(entry, m).catch((e: unknown) => {
      const message = e instanceof Error ? e.message : String(e);
      this.log.error(
        `Inspector message ${m.type}: ${uiText(e instanceof Error ? (e.stack ?? message) : message, { max: 4000, multiline: true })}`,
      );
      this.answerError(entry, message);
    });
  }

  /** A message refused (or unreadable): logged, and the page told why. */
  private refused(entry: InspectorPanel, why: string): void {
    this.log.warn(`Refused a message from the inspector page: ${uiText(why, { max: 500 })}`);
    this.answerError(entry, `refused a request from the panel: ${why}`);
  }

  private answerError(entry: InspectorPanel, message: string): void {
    try {
      entry.channel.notify({ type: 'host/error', message: uiText(message, { max: 500 }) });
    } catch {
      // The panel is gone: there is nobody to answer.
    }
  }

  /** Params of a request, checked; a refusal is thrown (and so answered as `err`). */
  private checkedParams<M extends keyof WebviewRequests>(method: M, raw: unknown): WebviewRequests[M]['params'] {
    const checked = checkRequestParams(method, raw);
    if (!checked.ok) throw new Error(`refused ${method}: ${checked.error}`);
    return checked.value;
  }

  /** Runs a request's handler, logging its failure (the channel answers it). */
  private async answering<T>(method: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (e) {
      this.log.warn(
        `Inspector request ${method}: ${uiText(e instanceof Error ? e.message : String(e), { max: 1000 })}`,
      );
      throw e;
    }
  }

  private async onMessage(entry: InspectorPanel, m: WebviewNotification): Promise<void> {
    switch (m.type) {
      case 'ready': {
        // Hidden webviews drop messages and reloads re-run the page: answer every `ready`.
        entry.ready = true;
        if (entry.document.isLoading) entry.channel.notify({ type: 'load/progress', ...entry.document.progress });
        const load = entry.document.result;
        const result = await load;
        // A reload that started meanwhile answers through onDidReload.
        if (load === entry.document.result) this.sendResult(entry, result, true);
        return;
      }
      case 'load/cancel':
        entry.document.cancel();
        return;
      case 'load/retry':
        entry.document.retry(m.ignoreSizeLimit);
        return;
      case 'source/reveal':
        await this.revealCall(entry.document, m.ref, m.toolId);
        return;
      case 'source/revealLine': {
        // By the index the host gave the file: only the loaded trace's own files open.
        const result = await entry.document.result;
        const files = isLoadFailure(result) ? [basename(entry.document.uri.path)] : result.header.files;
        const uri = traceFileUri(entry.document.uri, files, m.file);
        if (!uri) throw new Error(`there is no file ${m.file} in this trace (it has ${files.length})`);
        await revealLine(uri, m.line);
        return;
      }
      case 'format/choose':
        entry.document.reloadAs(m.format);
        return;
      case 'clipboard/write': {
        // The page composed it: it goes on the clipboard only as the simulate command of this trace (a user pastes it into a shell).
        const why = refuseCopiedCommand(shellWords(m.text)!.slice(2), entry.document.uri.fsPath);
        if (why !== null) {
          this.refused(entry, `clipboard/write: ${why}`);
          return;
        }
        await vscode.env.clipboard.writeText(m.text);
        return;
      }
      case 'whatif/export':
        // The page's fileName was checked to be a plain `name.json`; the host still names the file itself, after its trace.
        await this.exportWhatIf(entry.document, m.json);
        return;
      case 'log/error':
        this.log.error(`webview: ${uiText(m.message, { max: 4000, multiline: true })}`);
        return;
      default: {
        // checkWebviewNotification lets only the types above through; the compiler checks this switch covers them.
        const unhandled: never = m;
        throw new Error(`unhandled message ${JSON.stringify((unhandled as { type?: unknown }).type)}`);
      }
    }
  }

  /** Asks where to save a what-if export (beside the trace, named after it, by default) and writes it. */
  private async exportWhatIf(document: TraceDocument, json: string): Promise<void> {
    const safeName = whatIfExportName(document.uri.path);
    const target = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.joinPath(document.uri, '..', safeName),
      filters: { JSON: ['json'] },
      saveLabel: 'Export What-If',
      title: 'Export the what-if scenario and its results',
    });
    if (!target) return;
    try {
      if (target.scheme === 'file') await writeFile(target.fsPath, json);
      else await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(json));
      void vscode.window.showInformationMessage(
        `What-if scenario saved to ${uiText(basename(target.path), { max: 120 })}.`,
      );
    } catch (e) {
      void vscode.window.showErrorMessage(
        `Could not save ${uiText(basename(target.path), { max: 120 })}: ${uiText(e instanceof Error ? e.message : String(e), { max: 300 })}`,
      );
    }
  }

  private async revealCall(document: TraceDocument, ref: CallRef, toolId: string | null): Promise<void> {
    const result = await document.result;
    if (isLoadFailure(result)) return;
    const source = await document.request('sourceOf', { sessionId: ref.sessionId, callIndex: ref.callIndex, toolId });
    if (!source) return;
    const uri = traceFileUri(document.uri, result.header.files, source.file);
    if (uri) await revealLine(uri, source.line);
  }
}

/** How long ago the document's file last grew, for the page's "live" badge. */
function liveState(document: TraceDocument): LiveState {
  return { grewMsAgo: document.lastGrowthMs === null ? null : Math.max(0, Date.now() - document.lastGrowthMs) };
}

function readSettings(): InspectorSettings {
  const config = vscode.workspace.getConfiguration('agentTrace');
  return {
    showCached: config.get<boolean>('timeline.showCached', SETTING_DEFAULTS['timeline.showCached']),
    whatIf: readWhatIfDefaults(),
  };
}

/** The default name of a what-if export: the trace's own name (safe characters only) with .whatif.json. */
export function whatIfExportName(tracePath: string): string {
  const base = basename(tracePath)
    .replace(/\.(jsonl|json|traj)$/i, '')
    .replace(/[^\w.@+-]+/g, '_')
    .replace(/^\.+/, '');
  return `${base || 'trace'}.whatif.json`;
}

/** Opens a file as text beside the inspector with the line selected and centred. */
async function revealLine(uri: vscode.Uri, line: number): Promise<void> {
  const position = new vscode.Position(Math.max(0, line), 0);
  const editor = await vscode.window.showTextDocument(uri, {
    viewColumn: vscode.ViewColumn.Beside,
    preserveFocus: false,
    preview: true,
    selection: new vscode.Range(position, position),
  });
  editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenter);
}
