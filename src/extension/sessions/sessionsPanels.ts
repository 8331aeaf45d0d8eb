import * as vscode from 'vscode';
import { uiText } from '../../core/text/safeText';
import { compareSessions } from '../../core/sessions/compareSessions';
import type { SessionComparison } from '../../core/sessions/compareSessions';
import type { SessionRow } from '../../core/sessions/sessionQuery';
import { buildSessionsReport, reportCsv, reportJson } from '../../core/sessions/sessionsReport';
import type { SessionsReport } from '../../core/sessions/sessionsReport';
import type { SessionsHostMessage, SessionsPanelContent } from '../../protocol/sessionsMessages';
import { checkSessionsMessage } from '../../protocol/sessionsValidate';
import { createNonce } from '../webviewHtml';
import { announceSaved } from '../savedFile';
import type { SessionsService } from './sessionsService';
import { writeFile } from 'node:fs/promises';

/** The panels' webview type (for tests and `when` clauses). */
export const SESSIONS_PANEL_VIEW_TYPE = 'agentTrace.sessionsPanel';

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The page of a sessions panel: the same strict CSP as the inspector (nothing by
 * default, one nonce script, styles and fonts from the extension only), no worker, no
 * connections. Trace data arrives by postMessage and is drawn with textContent.
 */
export function sessionsPanelHtml(r: { cspSource: string; scriptUri: string; styleUri: string; codiconsUri: string; nonce: string; title: string }): string {
  const csp = ["default-src 'none'", `script-src 'nonce-${r.nonce}'`, `style-src ${r.cspSource}`, `font-src ${r.cspSource}`, `img-src ${r.cspSource} data:`].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" id="vscode-codicon-stylesheet" href="${escapeAttribute(r.codiconsUri)}">
<link rel="stylesheet" href="${escapeAttribute(r.styleUri)}">
<title>${escapeAttribute(r.title)}</title>
</head>
<body>
<main id="app" class="sessions-page" aria-busy="true"><p class="loading">Loading sessions…</p></main>
<script nonce="${r.nonce}" src="${escapeAttribute(r.scriptUri)}"></script>
</body>
</html>`;
}

/** What one open panel shows: the sessions it was opened on (by id), recomputed when they change. */
type PanelSubject = { kind: 'report'; title: string; ids: number[] } | { kind: 'compare'; a: number; b: number };

interface OpenPanel {
  panel: vscode.WebviewPanel;
  subject: PanelSubject;
  content: SessionsPanelContent | null;
  /** Rows of the sessions shown, by id: `open` may only name these. */
  rows: Map<number, SessionRow>;
}

/**
 * The several-sessions report and the comparison, each in its own webview panel. They
 * follow the index: a live session that grows updates the panels showing it.
 */
export class SessionsPanels implements vscode.Disposable {
  private readonly panels = new Set<OpenPanel>();
  private readonly listener: vscode.Disposable;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly service: SessionsService,
    private readonly log: vscode.LogOutputChannel,
    private readonly openSession: (row: SessionRow) => Promise<void>,
  ) {
    this.listener = service.onDidChange(() => {
      for (const p of this.panels) void this.refresh(p);
    });
  }

  dispose(): void {
    this.listener.dispose();
    for (const p of this.panels) p.panel.dispose();
  }

  /** Opens the report of some sessions (with their sub-agents); returns it. */
  async openReport(title: string, ids: number[]): Promise<SessionsReport> {
    const p = this.create(title, { kind: 'report', title, ids });
    await this.refresh(p);
    return (p.content as Extract<SessionsPanelContent, { kind: 'report' }>).report;
  }

  /** Opens two sessions side by side; returns the comparison. */
  async openCompare(a: number, b: number): Promise<SessionComparison> {
    const p = this.create('Compare sessions', { kind: 'compare', a, b });
    await this.refresh(p);
    return (p.content as Extract<SessionsPanelContent, { kind: 'compare' }>).comparison;
  }

  /** The content of the open panels (tests read it). */
  contents(): SessionsPanelContent[] {
    return [...this.panels].map((p) => p.content).filter((c): c is SessionsPanelContent => c !== null);
  }

  private create(title: string, subject: PanelSubject): OpenPanel {
    const panel = vscode.window.createWebviewPanel(SESSIONS_PANEL_VIEW_TYPE, uiText(title, { max: 80 }), vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist'), vscode.Uri.joinPath(this.extensionUri, 'media')],
    });
    const webview = panel.webview;
    webview.html = sessionsPanelHtml({
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'sessionsView.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.css')).toString(),
      codiconsUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'codicons', 'codicon.css')).toString(),
      nonce: createNonce(),
      title: uiText(title, { max: 80 }),
    });
    const entry: OpenPanel = { panel, subject, content: null, rows: new Map() };
    this.panels.add(entry);
    const sub = webview.onDidReceiveMessage((m: unknown) => void this.onMessage(entry, m));
    panel.onDidDispose(() => {
      sub.dispose();
      this.panels.delete(entry);
    });
    return entry;
  }

  private async refresh(p: OpenPanel): Promise<void> {
    const all = this.service.current();
    if (p.subject.kind === 'report') {
      const wanted = new Set(p.subject.ids);
      const rows = all.filter((r) => wanted.has(r.id));
      p.rows = new Map(rows.map((r) => [r.id, r]));
      p.content = { kind: 'report', title: p.subject.title, report: buildSessionsReport(rows) };
    } else {
      const a = all.find((r) => r.id === (p.subject as { a: number }).a);
      const b = all.find((r) => r.id === (p.subject as { b: number }).b);
      if (!a || !b) return;
      p.rows = new Map([
        [a.id, a],
        [b.id, b],
      ]);
      p.content = { kind: 'compare', comparison: compareSessions(a, await this.service.calls(a.id), b, await this.service.calls(b.id)) };
    }
    this.post(p);
  }

  private post(p: OpenPanel): void {
    // A refresh may finish after its panel closed: never post to a disposed webview (its promise would reject unhandled).
    if (!p.content || !this.panels.has(p)) return;
    p.panel.webview.postMessage({ type: 'show', content: p.content } satisfies SessionsHostMessage).then(undefined, () => undefined);
  }

  private async onMessage(p: OpenPanel, data: unknown): Promise<void> {
    const checked = checkSessionsMessage(data);
    if (!checked.ok) {
      this.log.warn(`Agent Sessions panel: refused a message (${checked.error}).`);
      return;
    }
    const m = checked.value;
    try {
      switch (m.type) {
        case 'ready':
          this.post(p);
          return;
        case 'open': {
          const row = p.rows.get(m.sessionId);
          if (!row) {
            this.log.warn(`Agent Sessions panel: refused to open session ${m.sessionId}, which this panel does not show.`);
            return;
          }
          await this.openSession(row);
          return;
        }
        case 'export':
          await this.export(p, m.format);
          return;
        case 'log/error':
          this.log.error(`Agent Sessions panel: ${uiText(m.message, { max: 2000 })}`);
          return;
      }
    } catch (e) {
      this.log.error(`Agent Sessions panel (${m.type}): ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Saves what the host computed (never text the page sent) where the user says. */
  private async export(p: OpenPanel, format: 'csv' | 'json'): Promise<void> {
    if (!p.content) return;
    const text = p.content.kind === 'report' ? (format === 'csv' ? reportCsv(p.content.report) : reportJson(p.content.report)) : JSON.stringify(p.content.comparison, null, 2) + '\n';
    const name = p.content.kind === 'report' ? `agent-sessions.${format}` : 'agent-sessions-compare.json';
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({
      defaultUri: folder ? vscode.Uri.joinPath(folder, name) : undefined,
      filters: format === 'csv' ? { CSV: ['csv'] } : { JSON: ['json'] },
      saveLabel: 'Export',
      title: p.content.kind === 'report' ? 'Export the sessions report' : 'Export the comparison',
    });
    if (!target) return;
    if (target.scheme === 'file') await writeFile(target.fsPath, text);
    else await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(text));
    announceSaved(`Saved ${uiText(target.path.split('/').pop() ?? 'the export', { max: 120 })}.`, target, this.log);
  }
}
