import * as vscode from 'vscode';
import { uiText } from '../../core/text/safeText';
import { formatCompact, formatPercent } from '../../core/text/formatNumbers';
import { cacheExpiresAt, countdownText, ttlExplanation } from '../../core/sessions/cacheCountdown';
import { contextWindowFor } from '../../core/sessions/contextWindow';
import { BudgetWatch } from '../../core/sessions/budgetWatch';
import type { BudgetState } from '../../core/sessions/budgetWatch';
import { activeMs, isLive, localDay, threadCosts } from '../../core/sessions/sessionQuery';
import type { SessionRow } from '../../core/sessions/sessionQuery';
import { formatUsd, sessionLabel } from '../../core/sessions/sessionText';
import { agentLabel } from '../../node/sessions/agentRegistry';
import { budgetSettings, statusBarSettings } from '../settings';
import type { SessionsService } from './sessionsService';
import { statusWindows } from './planWindowsView';
import type { PlanWindowsModel } from './planWindowsView';

/** The command the item runs on click (opens the session). */
export const STATUS_BAR_COMMAND = 'agentTrace.sessions.openStatusSession';

/** What the item shows for one session at one moment: numbers and our own words only. */
export interface StatusBarView {
  text: string;
  tooltip: string;
  /** When the countdown ends (ms), null when unknown. */
  expiresAtMs: number | null;
}

/** The item's text and tooltip for a session at `nowMs` (pure, for tests). */
export function statusBarView(row: SessionRow, nowMs: number): StatusBarView {
  const last = row.lastCall;
  const context = last && last.input !== null ? last.input + (last.output ?? 0) : null;
  const window = contextWindowFor(last?.model ?? row.model, context);
  const expiresAtMs = last ? cacheExpiresAt(last, row.cacheTtlMs) : null;
  const contextText =
    context === null
      ? 'ctx ?'
      : window
        ? `ctx ${Math.round((100 * context) / window)}%`
        : `ctx ${formatCompact(context)}`;
  const text = `$(pulse) ${contextText} · hit ${formatPercent(row.cacheHitRate)} · ${formatUsd(row.costUsd)} · ${countdownText(expiresAtMs, nowMs)}`;
  const lines = [
    `${agentLabel(row.agentId)} session${isLive(row, nowMs) ? ' (live)' : ''}: ${sessionLabel(row, 120)}`,
    uiText(row.project, { max: 200 }),
    '',
    context === null
      ? 'Context: unknown (the last call has no token counts).'
      : window
        ? `Context: ${context.toLocaleString('en-US')} of the model's ${window.toLocaleString('en-US')}-token window used by the last call (${Math.round((100 * context) / window)}%).`
        : `Context: ${context.toLocaleString('en-US')} tokens used by the last call (the model's window is not known).`,
    `Cache hit rate so far: ${formatPercent(row.cacheHitRate)} (cached / input tokens over ${row.calls} calls).`,
    `Cost so far: ${row.costUsd === null ? 'unknown' : formatUsd(row.costUsd)}${row.unpricedCalls > 0 ? ` (${row.unpricedCalls} calls not priced)` : ''}.`,
    expiresAtMs === null
      ? 'Prompt cache: the log has no request times.'
      : `Prompt cache: ${countdownText(expiresAtMs, nowMs).replace('cache ', '')}${expiresAtMs > nowMs ? ' left' : ''} since the last request. ${ttlExplanation({ ttlMs: row.cacheTtlMs, basis: row.cacheTtlBasis })} A call after it expires pays to write the whole prompt again.`,
    '',
    'Click to open the session in the inspector.',
  ];
  return { text, tooltip: lines.join('\n'), expiresAtMs };
}

/** The session the item follows: the most recently active main session of the chosen agents, if active recently enough. */
export function statusBarSession(
  rows: readonly SessionRow[],
  agents: readonly string[],
  activeWithinMs: number,
  nowMs: number,
): SessionRow | null {
  let best: SessionRow | null = null;
  for (const r of rows) {
    if (r.role !== 'main' || r.fileStatus !== 'ok') continue;
    if (agents.length > 0 && !agents.includes(r.agentId)) continue;
    if (nowMs - activeMs(r) > activeWithinMs) continue;
    if (!best || activeMs(r) > activeMs(best)) best = r;
  }
  return best;
}

/** The session's cost with its sub-agents and the cost of today's sessions (each whole, by local day of its last activity), for the budgets. */
export function budgetFigures(
  rows: readonly SessionRow[],
  session: SessionRow | null,
  nowMs: number,
): { session: { key: string; usd: number | null } | null; day: { key: string; usd: number | null } } {
  const today = localDay(nowMs);
  let dayUsd: number | null = null;
  for (const r of rows) {
    if (r.fileStatus !== 'ok' || r.costUsd === null || localDay(activeMs(r)) !== today) continue;
    dayUsd = (dayUsd ?? 0) + r.costUsd;
  }
  const thread = session ? (threadCosts(rows).get(session.id)?.usd ?? session.costUsd) : null;
  return {
    session: session ? { key: `${session.path}\u0000${session.key}`, usd: thread } : null,
    day: { key: today, usd: dayUsd },
  };
}

/**
 * A status bar item for the agent session active most recently: how full its context
 * is, its cache hit rate, its cost so far and the time left before the provider's
 * prompt cache expires ("cache 3:12", then "cache expired"). It follows live sessions
 * as they grow; the countdown ticks each second while it runs. Settings choose the
 * agents, how recent "active" is, or hide it.
 */
export class SessionsStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('agentTrace.session', vscode.StatusBarAlignment.Right, 90);
  private session: SessionRow | null = null;
  private ticker: ReturnType<typeof setInterval> | undefined;
  private usage: vscode.Disposable | null = null;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly budgets = new BudgetWatch();
  private budget: { state: BudgetState; lines: string[] } = { state: 'ok', lines: [] };
  /** Budget notifications raised, in order (tests read them). */
  readonly budgetNotices: string[] = [];

  constructor(
    private readonly service: SessionsService,
    private readonly windows: PlanWindowsModel | null = null,
  ) {
    this.item.name = 'Agent Session';
    this.item.command = STATUS_BAR_COMMAND;
    this.disposables.push(
      service.onDidChange(() => this.update()),
      ...(windows ? [windows.onDidChange(() => this.render())] : []),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('agentTrace.statusBar')) this.applySettings();
        else if (e.affectsConfiguration('agentTrace.budget')) this.update();
      }),
    );
    this.applySettings();
  }

  dispose(): void {
    clearInterval(this.ticker);
    this.usage?.dispose();
    for (const d of this.disposables) d.dispose();
    this.item.dispose();
  }

  /** The session shown, if any (the click opens it). */
  get current(): SessionRow | null {
    return this.session;
  }

  /** The item's text as shown (tests read it). */
  get text(): string | null {
    return this.session ? this.item.text : null;
  }

  /** The item's tooltip as shown (tests read it). */
  get tooltip(): string | null {
    return this.session ? String(this.item.tooltip ?? '') : null;
  }

  /** `ok`, `near` (80% of a budget) or `over`: the item's colour (tests read it). */
  get budgetState(): BudgetState {
    return this.budget.state;
  }

  private applySettings(): void {
    if (statusBarSettings().enabled) {
      this.usage ??= this.service.use();
      this.update();
    } else {
      this.usage?.dispose();
      this.usage = null;
      this.session = null;
      clearInterval(this.ticker);
      this.item.hide();
    }
  }

  private update(): void {
    const settings = statusBarSettings();
    if (!settings.enabled) return;
    const previous = this.session;
    this.session = statusBarSession(
      this.service.current(),
      settings.agents,
      settings.activeWithinMinutes * 60_000,
      Date.now(),
    );
    if (this.session && this.session.path !== previous?.path)
      void this.service.watch([this.session.path]).catch(() => undefined);
    this.checkBudgets();
    this.render();
  }

  /** The colour follows the budgets; a crossing seen while watching is told once (BudgetWatch). */
  private checkBudgets(): void {
    const budgets = budgetSettings();
    if (budgets.perSessionUsd === null && budgets.perDayUsd === null) {
      this.budget = { state: 'ok', lines: [] };
      return;
    }
    const rows = this.service.current();
    const figures = budgetFigures(rows, this.session, Date.now());
    const { state, crossings } = this.budgets.update(budgets, figures);
    const lines: string[] = [];
    if (budgets.perSessionUsd !== null && figures.session)
      lines.push(
        `Session budget: ${formatUsd(figures.session.usd)} of ${formatUsd(budgets.perSessionUsd)} (with sub-agents).`,
      );
    if (budgets.perDayUsd !== null)
      lines.push(
        `Day budget: ${formatUsd(figures.day.usd)} of ${formatUsd(budgets.perDayUsd)} (sessions active today).`,
      );
    this.budget = { state, lines };
    for (const c of crossings) {
      // Our own words and numbers only; still through uiText, as everything shown in VS Code's UI.
      const text = uiText(c.message, { max: 300 });
      this.budgetNotices.push(text);
      void vscode.window.showWarningMessage(text);
    }
  }

  /** The session's view, then its plan's open windows (a limit's share joins the text) and the budgets in the tooltip. */
  private compose(session: SessionRow, now: number): StatusBarView {
    const view = statusBarView(session, now);
    let { text, tooltip } = view;
    const plan = this.windows?.planOf(session.agentId) ?? null;
    if (plan) {
      const w = statusWindows(plan, now, this.windows?.server.get(plan.family));
      if (w.text) text = `${text} · ${w.text}`;
      if (w.lines.length > 0) tooltip = `${tooltip}\n\n${w.lines.join('\n')}`;
    }
    if (this.budget.lines.length > 0) tooltip = `${tooltip}\n\n${this.budget.lines.join('\n')}`;
    return { text, tooltip, expiresAtMs: view.expiresAtMs };
  }

  private render(): void {
    clearInterval(this.ticker);
    this.ticker = undefined;
    if (!this.session) {
      this.item.hide();
      return;
    }
    const now = Date.now();
    const view = this.compose(this.session, now);
    this.item.text = view.text;
    // A plain string: VS Code shows it as text, so nothing from the trace can render as Markdown or a link.
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor =
      this.budget.state === 'over'
        ? new vscode.ThemeColor('statusBarItem.errorBackground')
        : this.budget.state === 'near'
          ? new vscode.ThemeColor('statusBarItem.warningBackground')
          : undefined;
    this.item.accessibilityInformation = { label: view.text.replace('$(pulse) ', 'Agent session: '), role: 'button' };
    this.item.show();
    if (view.expiresAtMs !== null && view.expiresAtMs > now) {
      this.ticker = setInterval(() => {
        if (!this.session) return;
        const v = this.compose(this.session, Date.now());
        this.item.text = v.text;
        this.item.tooltip = v.tooltip;
        if (v.expiresAtMs === null || v.expiresAtMs <= Date.now()) {
          clearInterval(this.ticker);
          this.ticker = undefined;
        }
      }, 1000);
    }
  }
}
