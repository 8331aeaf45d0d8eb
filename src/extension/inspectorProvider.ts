import * as vscode from 'vscode';
import { buildCallDetail, buildTraceView, formatChoices } from '../core/analysis/traceView';
import type { TraceView } from '../core/analysis/traceView';
import type { ParsedTrace } from '../core/trace/parseTrace';
import { Channel } from '../protocol/channel';
import type { CallRef, HostNotification, HostRequests, InspectorSettings, WebviewNotification, WebviewRequests } from '../protocol/messages';
import { isLoadFailure, TraceDocument } from './traceDocument';
import type { LoadFailure } from './traceDocument';
import { fileUri } from './traceLoader';
import { buildWebviewHtml, createNonce } from './webviewHtml';
import { basename } from 'node:path';

/** The default editor for *.trace.jsonl. */
export const INSPECTOR_VIEW_TYPE = 'agentTrace.inspector';
/** The same editor offered through "Open With…" for other trace files (*.jsonl); a second id because priority is per contribution. */
export const INSPECTOR_ANY_VIEW_TYPE = 'agentTrace.inspectorAny';

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

/** Turns a load result into what the webview renders; a failed load still gets a view with its message. */
export function toTraceView(uri: vscode.Uri, result: ParsedTrace | LoadFailure, formatChosen = false): TraceView {
  const fileName = basename(uri.path);
  if (!isLoadFailure(result)) return buildTraceView(result, fileName, formatChosen);
  return {
    fileName,
    format: null,
    formatLabel: null,
    detection: '',
    formatChosen,
    formatChoices: formatChoices(),
    limitations: [],
    problem: { kind: 'unreadable', message: result.message },
    sessions: [],
    diagnostics: [],
    skippedRecords: {},
  };
}

/**
 * The Agent Trace Inspector editor: a read-only custom editor, so files of any size
 * are streamed from disk rather than loaded into a text model. Owns the set of open
 * panels; each document owns its parse (see TraceDocument).
 */
export class InspectorProvider implements vscode.CustomReadonlyEditorProvider<TraceDocument> {
  private readonly panels = new Set<InspectorPanel>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly diagnostics: vscode.DiagnosticCollection,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  openCustomDocument(uri: vscode.Uri): TraceDocument {
    const maxBytes = (): number => vscode.workspace.getConfiguration('agentTrace').get<number>('maxFileSizeMB', 2048) * 2 ** 20;
    return new TraceDocument(uri, maxBytes, {
      loaded: (doc, result) => this.publishDiagnostics(doc.uri, result),
      disposed: (doc) => this.clearDiagnostics(doc.uri),
    });
  }

  resolveCustomEditor(document: TraceDocument, panel: vscode.WebviewPanel): void {
    const webview = panel.webview;
    const roots = [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')];
    webview.options = { enableScripts: true, localResourceRoots: roots };
    webview.html = buildWebviewHtml({
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', 'inspector.css')).toString(),
      codiconsUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'codicons', 'codicon.css')).toString(),
      nonce: createNonce(),
      title: basename(document.uri.path),
    });
    const channel: HostChannel = new Channel((m) => void webview.postMessage(m), { onError: (m) => this.log.warn(m) });
    const entry: InspectorPanel = { document, panel, channel, ready: false, pendingSelect: null };
    this.panels.add(entry);
    const subscriptions: vscode.Disposable[] = [
      webview.onDidReceiveMessage((m: unknown) => channel.receive(m)),
      document.onDidReload((r) => {
        if (entry.ready) channel.notify({ type: 'trace/didChange', trace: toTraceView(document.uri, r, document.formatOverride !== null) });
      }),
      document.onDidProgress((p) => {
        if (entry.ready) channel.notify({ type: 'load/progress', ...p });
      }),
    ];
    channel.onNotification((m) => void this.onMessage(entry, m));
    channel.onRequest('call/details', async ({ sessionId, callIndex }) => {
      const result = await document.result;
      const detail = isLoadFailure(result) ? null : buildCallDetail(result.model, sessionId, callIndex);
      if (!detail) throw new Error(`No call ${callIndex + 1} in session ${sessionId}.`);
      return detail;
    });
    panel.onDidDispose(() => {
      channel.dispose();
      for (const s of subscriptions) s.dispose();
      this.panels.delete(entry);
    });
  }

  /** Selects a call in every inspector showing `uri` (or in the one that opens next). */
  selectCall(uri: vscode.Uri, ref: CallRef): boolean {
    let found = false;
    for (const p of this.panels) {
      if (p.document.uri.toString() !== uri.toString()) continue;
      found = true;
      if (p.ready) p.channel.notify({ type: 'call/select', ref });
      else p.pendingSelect = ref;
    }
    return found;
  }

  /** The document of the active inspector panel, if an inspector is focused. */
  activeDocument(): TraceDocument | null {
    for (const p of this.panels) if (p.panel.active) return p.document;
    return null;
  }

  private async onMessage(entry: InspectorPanel, m: WebviewNotification): Promise<void> {
    switch (m.type) {
      case 'ready': {
        // Hidden webviews drop messages and reloads re-run the page: answer every `ready`.
        entry.ready = true;
        if (entry.document.progress.bytesRead > 0) entry.channel.notify({ type: 'load/progress', ...entry.document.progress });
        const result = await entry.document.result;
        entry.channel.notify({ type: 'init', trace: toTraceView(entry.document.uri, result, entry.document.formatOverride !== null), settings: readSettings(), select: entry.pendingSelect });
        entry.pendingSelect = null;
        return;
      }
      case 'source/reveal':
        await this.revealCall(entry.document, m.ref, m.toolId);
        return;
      case 'source/revealLine': {
        const result = await entry.document.result;
        const files = isLoadFailure(result) ? [basename(entry.document.uri.path)] : result.model.files;
        await revealLine(fileUri(entry.document.uri, files, m.file), m.line);
        return;
      }
      case 'format/choose':
        entry.document.reloadAs(m.format);
        return;
      case 'log/error':
        this.log.error(`webview: ${m.message}`);
        return;
    }
  }

  private async revealCall(document: TraceDocument, ref: CallRef, toolId: string | null): Promise<void> {
    const result = await document.result;
    if (isLoadFailure(result)) return;
    const call = result.model.sessions.find((s) => s.id === ref.sessionId)?.calls[ref.callIndex];
    if (!call) return;
    const tool = toolId === null ? undefined : call.toolCalls.find((t) => t.id === toolId);
    const source = tool ? (tool.resultSource ?? tool.source) : call.source;
    await revealLine(fileUri(document.uri, result.model.files, result.model.files[source.file] ?? ''), source.line);
  }

  /** Problems-view URIs set per trace, to clear them when its last editor closes. */
  private readonly diagnosticUris = new Map<string, vscode.Uri[]>();

  private clearDiagnostics(uri: vscode.Uri): void {
    for (const u of this.diagnosticUris.get(uri.toString()) ?? [uri]) this.diagnostics.delete(u);
    this.diagnosticUris.delete(uri.toString());
  }

  private publishDiagnostics(uri: vscode.Uri, result: ParsedTrace | LoadFailure): void {
    this.clearDiagnostics(uri);
    if (isLoadFailure(result)) {
      this.diagnostics.set(uri, [new vscode.Diagnostic(new vscode.Range(0, 0, 0, 0), result.message, vscode.DiagnosticSeverity.Error)]);
      return;
    }
    const byFile = new Map<string, vscode.Diagnostic[]>();
    const { model, problem } = result;
    const add = (key: string, d: vscode.Diagnostic): void => {
      const list = byFile.get(key) ?? [];
      list.push(d);
      byFile.set(key, list);
    };
    for (const key of model.files) byFile.set(key, []);
    if (problem) add(model.files[0] ?? '', new vscode.Diagnostic(new vscode.Range(0, 0, 0, 0), problem.message, vscode.DiagnosticSeverity.Error));
    for (const d of model.diagnostics) {
      const line = Math.max(0, d.line);
      const diagnostic = new vscode.Diagnostic(new vscode.Range(line, 0, line, Number.MAX_SAFE_INTEGER), d.message, SEVERITY[d.severity]);
      diagnostic.source = 'Agent Trace';
      add(model.files[d.file] ?? '', diagnostic);
    }
    const uris: vscode.Uri[] = [];
    for (const [key, list] of byFile) {
      const target = fileUri(uri, model.files, key);
      uris.push(target);
      this.diagnostics.set(target, list);
    }
    this.diagnosticUris.set(uri.toString(), uris);
  }
}

const SEVERITY = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  info: vscode.DiagnosticSeverity.Information,
} as const;

function readSettings(): InspectorSettings {
  const config = vscode.workspace.getConfiguration('agentTrace');
  return { showCached: config.get<boolean>('timeline.showCached', true) };
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
