import * as vscode from 'vscode';
import { uiText } from '../../core/text/safeText';
import { compareSessions } from '../../core/sessions/compareSessions';
import type { SessionComparison } from '../../core/sessions/compareSessions';
import type { SessionRow } from '../../core/sessions/sessionQuery';
import { buildSessionsReport, reportCsv, reportJson } from '../../core/sessions/sessionsReport';
import type { SessionsReport } from '../../core/sessions/sessionsReport';
import { Channel } from '../../protocol/channel';
import type {
  SessionsHostNotification,
  SessionsHostRequests,
  SessionsPanelContent,
  SessionsWebviewNotification,
  SessionsWebviewRequests,
} from '../../protocol/sessionsMessages';
import { checkSessionsNotification } from '../../protocol/sessionsValidate';
import { buildSessionsPageHtml, createNonce } from '../webviewHtml';
import { announceSaved } from '../savedFile';
import type { SessionsService } from './sessionsService';
import { commitTableOf } from './sessionCommitTable';
import type { CommitTable } from '../../core/sessions/sessionCommits';
import type { SessionsContext } from '../../core/context/contextAcrossSessions';
import { writeFile } from 'node:fs/promises';

/** The panels' webview type (for tests and `when` clauses). */
export const SESSIONS_PANEL_VIEW_TYPE = 'agentTrace.sessionsPanel';

/** What one open panel shows: the sessions it was opened on (by id), recomputed when they change. */
type PanelSubject = { kind: 'report'; title: string; ids: number[] } | { kind: 'compare'; a: number; b: number };

/** The host's end of a panel's page: it sends `show` and `host/error`, and takes the page's notifications (checked). */
type SessionsHostChannel = Channel<
  SessionsHostNotification,
  SessionsWebviewNotification,
  SessionsHostRequests,
  SessionsWebviewRequests
>;

interface OpenPanel {
  panel: vscode.WebviewPanel;
  channel: SessionsHostChannel;
  subject: PanelSubject;
  content: SessionsPanelContent | null;
  /** Rows of the sessions shown, by id: `open` may only name these. */
  rows: Map<number, SessionRow>;
  /** The report's cost per commit, when git has answered; `commitsAsked` counts the askings (the last one wins). */
  commits: CommitTable | null;
  commitsAsked: number;
  /** The rows (id, last write) the table was asked for: a refresh that changes none asks git nothing. */
  commitsKey: string;
  /** The context anatomy over the report's sessions once counted (or why it failed); asked and replaced as the commits are. */
  context: SessionsContext | { failed: string } | null;
  contextAsked: number;
  contextKey: string;
}

/**
 * The several-sessions report and the comparison, each in its own webview panel. They
 * follow the index: a live session that grows updates the panels showing it.
 */
export class SessionsPanels implements vscode.Disposable {
  private readonly panels = new Set<OpenPanel>();
  private readonly listener: vscode.Disposable;
  /** Why each message the pages sent was refused, in order (the output channel says the same); tests read it. */
  readonly refusals: string[] = [];

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

  /**
   * Hands `data` to the newest panel's channel exactly as its page's postMessage would
   * (VS Code gives the host a page's message as it is, and `onDidReceiveMessage` passes it
   * here). Tests use it to prove a crafted message is refused and logged, and not acted on.
   */
  receiveFromNewestPage(data: unknown): void {
    const newest = [...this.panels].pop();
    if (!newest) throw new Error('no Agent Sessions panel is open');
    newest.channel.receive(data);
  }

  private create(title: string, subject: PanelSubject): OpenPanel {
    const panel = vscode.window.createWebviewPanel(
      SESSIONS_PANEL_VIEW_TYPE,
      uiText(title, { max: 80 }),
      vscode.ViewColumn.Active,
      {
        enableScripts: true,
        localResourceRoots: [
          vscode.Uri.joinPath(this.extensionUri, 'dist'),
          vscode.Uri.joinPath(this.extensionUri, 'media'),
        ],
      },
    );
    const webview = panel.webview;
    webview.html = buildSessionsPageHtml({
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'sessionsView.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.css')).toString(),
      codiconsUri: webview
        .asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'codicons', 'codicon.css'))
        .toString(),
      nonce: createNonce(),
      title: uiText(title, { max: 80 }),
    });
    // What the channel itself cannot read (no type, a request: the page may send none) is refused like a bad notification.
    const channel: SessionsHostChannel = new Channel((m) => webview.postMessage(m), {
      onError: (why) => this.refused(entry, why),
    });
    const entry: OpenPanel = {
      panel,
      channel,
      subject,
      content: null,
      rows: new Map(),
      commits: null,
      commitsAsked: 0,
      commitsKey: '',
      context: null,
      contextAsked: 0,
      contextKey: '',
    };
    this.panels.add(entry);
    channel.onNotification((m: unknown) => this.handleNotification(entry, m));
    const sub = webview.onDidReceiveMessage((m: unknown) => channel.receive(m));
    panel.onDidDispose(() => {
      sub.dispose();
      channel.dispose();
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
      void this.askCommits(p, rows);
      void this.askContext(p, rows);
    } else {
      const a = all.find((r) => r.id === (p.subject as { a: number }).a);
      const b = all.find((r) => r.id === (p.subject as { b: number }).b);
      if (!a || !b) return;
      p.rows = new Map([
        [a.id, a],
        [b.id, b],
      ]);
      p.content = {
        kind: 'compare',
        comparison: compareSessions(a, await this.service.calls(a.id), b, await this.service.calls(b.id)),
      };
    }
    this.post(p);
  }

  private post(p: OpenPanel): void {
    if (p.content) this.notify(p, { type: 'show', content: p.content });
    if (p.commits) this.notify(p, { type: 'commits', table: p.commits });
    this.postContext(p);
  }

  private postContext(p: OpenPanel): void {
    if (p.context === null) return;
    if ('failed' in p.context) this.notify(p, { type: 'context/failed', message: p.context.failed });
    else this.notify(p, { type: 'context', context: p.context });
  }

  /**
   * The context anatomy over the report's sessions (counted in the index worker: it reads each
   * log again with the tokenizer), sent when done; a later asking replaces an earlier one, and a
   * refresh that changes no row (id, last write) asks nothing.
   */
  private async askContext(p: OpenPanel, rows: readonly SessionRow[]): Promise<void> {
    const key = rows.map((r) => `${r.id}:${r.lastWriteMs}`).join(',');
    if (key === p.contextKey) return;
    p.contextKey = key;
    const asked = ++p.contextAsked;
    try {
      const context = await this.service.contextAnatomy(rows.filter((r) => r.fileStatus === 'ok'));
      if (asked !== p.contextAsked) return;
      p.context = context;
    } catch (e) {
      if (asked !== p.contextAsked) return;
      const message = uiText(e instanceof Error ? e.message : String(e), { max: 500 });
      this.log.warn(`Agent Sessions panel: context anatomy: ${message}`);
      p.context = { failed: message };
    }
    this.postContext(p);
  }

  /** The context anatomy of the open panels, once counted (tests read it). */
  contexts(): Array<SessionsContext | { failed: string } | null> {
    return [...this.panels].map((p) => p.context);
  }

  /** The report's cost per commit (sessionCommitTable.ts), sent when git has answered; a later asking replaces an earlier one. */
  private async askCommits(p: OpenPanel, rows: readonly SessionRow[]): Promise<void> {
    const key = rows.map((r) => `${r.id}:${r.lastWriteMs}`).join(',');
    if (key === p.commitsKey) return;
    p.commitsKey = key;
    const asked = ++p.commitsAsked;
    try {
      const table = await commitTableOf(rows);
      if (asked !== p.commitsAsked) return;
      p.commits = table;
      this.notify(p, { type: 'commits', table });
    } catch (e) {
      this.log.warn(
        `Agent Sessions panel: cost per commit: ${uiText(e instanceof Error ? e.message : String(e), { max: 500 })}`,
      );
    }
  }

  /** The cost per commit of the open panels (tests read it). */
  commitTables(): Array<CommitTable | null> {
    return [...this.panels].map((p) => p.commits);
  }

  private notify(p: OpenPanel, message: SessionsHostNotification): void {
    // A refresh may finish after its panel closed: never post to a disposed webview (its promise would reject unhandled).
    if (!this.panels.has(p)) return;
    try {
      p.channel.notify(message);
    } catch {
      // The panel went between the check and the post: there is nobody to tell.
    }
  }

  /**
   * Every notification of the page is checked (the page draws trace text, so its messages
   * are untrusted too), then handled. A refusal or a failure is logged to the output
   * channel and said to the page with `host/error`; nothing is left as an unhandled rejection.
   */
  private handleNotification(p: OpenPanel, data: unknown): void {
    const checked = checkSessionsNotification(data);
    if (!checked.ok) {
      this.refused(p, checked.error);
      return;
    }
    const m = checked.value;
    this.onMessage(p, m).catch((e: unknown) => {
      const message = e instanceof Error ? e.message : String(e);
      this.log.error(`Agent Sessions panel (${m.type}): ${uiText(message, { max: 4000 })}`);
      this.notify(p, { type: 'host/error', message: uiText(message, { max: 500 }) });
    });
  }

  /** A message refused (or unreadable): logged, kept for the tests, and the page told why. */
  private refused(p: OpenPanel, why: string): void {
    const reason = uiText(why, { max: 500 });
    this.refusals.push(reason);
    this.log.warn(`Agent Sessions panel: refused a message (${reason}).`);
    this.notify(p, { type: 'host/error', message: `refused a request from the panel: ${reason}` });
  }

  private async onMessage(p: OpenPanel, m: SessionsWebviewNotification): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.post(p);
        return;
      case 'open': {
        const row = p.rows.get(m.sessionId);
        if (!row) {
          this.refused(p, `open.sessionId ${m.sessionId} is not a session this panel shows`);
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
  }

  /** Saves what the host computed (never text the page sent) where the user says. */
  private async export(p: OpenPanel, format: 'csv' | 'json'): Promise<void> {
    if (!p.content) return;
    const text =
      p.content.kind === 'report'
        ? format === 'csv'
          ? reportCsv(p.content.report)
          : reportJson(p.content.report)
        : JSON.stringify(p.content.comparison, null, 2) + '\n';
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
