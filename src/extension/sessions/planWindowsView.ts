import { open } from 'node:fs/promises';
import * as vscode from 'vscode';
import { checkServerWindows, latestRateLimits, RATE_LIMIT_TAIL_BYTES } from '../../core/cost/serverRateLimits';
import type { ServerRateLimits, ServerWindowCheck } from '../../core/cost/serverRateLimits';
import { planFamily } from '../../core/cost/planWindows';
import type { PlanFamily, PlanWindow, PlanWindows, WindowShare } from '../../core/cost/planWindows';
import { formatCompact, formatCount, formatPercent, formatUsd } from '../../core/text/formatNumbers';
import type { SessionRow } from '../../core/sessions/sessionQuery';
import type { CallRecord } from '../../core/sessions/sessionRecord';
import {
  localDateTime,
  localTime,
  plainText,
  sessionLabel,
  shortDuration,
  TREE_LABEL_MAX,
} from '../../core/sessions/sessionText';
import {
  activeWindow,
  limitText,
  PLAN_LABELS,
  serverCheckLines,
  sessionPlanWindows,
  WINDOW_KIND_LABELS,
  windowCallsOf,
  windowSessions,
  windowShortText,
} from '../../core/sessions/sessionWindows';
import { windowSettings } from '../settings';
import type { SessionsService } from './sessionsService';
import type { SessionsTreeNode } from './sessionsTree';

/** The Plan Windows view's id (package.json `views`, beside Agent Sessions). */
export const WINDOWS_VIEW_ID = 'agentTrace.windows';

/** How often the windows are counted again while nothing is read ("resets in", the window that closes). */
const RECOUNT_MS = 60_000;

/**
 * Claude's and Codex's plan windows over this machine's sessions, kept current: counted from
 * the calls the session index already holds (asked once per session and kept while the
 * session does not change), again whenever the index changes, the settings change, or a
 * minute passes. The status bar and the Plan Windows view read it.
 */
export class PlanWindowsModel implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires after each count. */
  readonly onDidChange = this.changed.event;
  /** Each plan with a call in the last 8 days, Claude first. */
  plans: PlanWindows[] = [];
  /** Settings that could not be used, in words. */
  problems: string[] = [];
  /** The rows counted, by session key (a window's shares name sessions by key). */
  rowsByKey = new Map<string, SessionRow>();
  /** Codex's own figures (its logs' last `rate_limits`) beside its windows; empty without a report. */
  server = new Map<PlanFamily, ServerWindowCheck[]>();
  private readonly reportCache = new Map<string, { lastWriteMs: number; report: ServerRateLimits | null }>();
  private readonly callCache = new Map<number, { calls: number; lastWriteMs: number; records: CallRecord[] }>();
  private running: Promise<void> | null = null;
  private again = false;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly listeners: vscode.Disposable[];

  constructor(private readonly service: SessionsService) {
    this.listeners = [
      service.onDidChange(() => this.recount()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('agentTrace.windows')) this.recount();
      }),
    ];
    this.timer = setInterval(() => this.recount(), RECOUNT_MS);
    this.recount();
  }

  dispose(): void {
    clearInterval(this.timer);
    for (const l of this.listeners) l.dispose();
    this.changed.dispose();
  }

  /** Counts again now, or right after the count under way (never two at once). */
  recount(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.count();
        } catch {
          // The index worker stopped or restarted: the next change counts again.
        }
      } while (this.again);
      this.running = null;
    })();
    return this.running;
  }

  private async count(): Promise<void> {
    const now = Date.now();
    const rows = windowSessions(this.service.current(), now);
    const sessions: Array<{ row: SessionRow; calls: CallRecord[] }> = [];
    const keep = new Set<number>();
    for (const row of rows) {
      keep.add(row.id);
      let cached = this.callCache.get(row.id);
      if (!cached || cached.calls !== row.calls || cached.lastWriteMs !== row.lastWriteMs) {
        cached = { calls: row.calls, lastWriteMs: row.lastWriteMs, records: await this.service.calls(row.id) };
        this.callCache.set(row.id, cached);
      }
      sessions.push({ row, calls: cached.records });
    }
    for (const id of [...this.callCache.keys()]) if (!keep.has(id)) this.callCache.delete(id);
    const problems: string[] = [];
    this.plans = sessionPlanWindows(
      sessions,
      (family) => {
        const s = windowSettings(family);
        problems.push(...s.problems);
        return s.options;
      },
      now,
    );
    this.problems = problems;
    this.rowsByKey = new Map(rows.map((r) => [r.key, r]));
    this.server = await this.serverFigures(sessions);
    this.changed.fire();
  }

  /** Codex's last rate-limit report among its recent logs (newest file first), set beside its windows. */
  private async serverFigures(
    sessions: ReadonlyArray<{ row: SessionRow; calls: CallRecord[] }>,
  ): Promise<Map<PlanFamily, ServerWindowCheck[]>> {
    const out = new Map<PlanFamily, ServerWindowCheck[]>();
    const plan = this.plans.find((p) => p.family === 'codex');
    const codex = sessions.filter((s) => planFamily(s.row.agentId) === 'codex');
    if (!plan || codex.length === 0) return out;
    const byFile = new Map<string, SessionRow>();
    for (const { row } of codex) {
      const seen = byFile.get(row.path);
      if (!seen || row.lastWriteMs > seen.lastWriteMs) byFile.set(row.path, row);
    }
    let best: ServerRateLimits | null = null;
    // The newest few files: a report is on every token_count line, so the newest log holds the latest.
    for (const row of [...byFile.values()].sort((a, b) => b.lastWriteMs - a.lastWriteMs).slice(0, 3)) {
      let cached = this.reportCache.get(row.path);
      if (!cached || cached.lastWriteMs !== row.lastWriteMs) {
        cached = { lastWriteMs: row.lastWriteMs, report: await tailReport(row.path) };
        this.reportCache.set(row.path, cached);
      }
      if (cached.report && (!best || cached.report.observedAtMs > best.observedAtMs)) best = cached.report;
    }
    for (const path of [...this.reportCache.keys()]) if (!byFile.has(path)) this.reportCache.delete(path);
    if (best)
      out.set(
        'codex',
        checkServerWindows(
          best,
          codex.flatMap((s) => windowCallsOf(s.row, s.calls)),
          plan.windows,
        ),
      );
    return out;
  }

  /** The plan a session's calls count against, if it has windows. */
  planOf(agentId: string): PlanWindows | null {
    const family = planFamily(agentId);
    return this.plans.find((p) => p.family === family) ?? null;
  }
}

/** The last rate-limit report in a log's tail; null when there is none or the file cannot be read. */
async function tailReport(path: string): Promise<ServerRateLimits | null> {
  try {
    const handle = await open(path, 'r');
    try {
      const size = (await handle.stat()).size;
      const length = Math.min(size, RATE_LIMIT_TAIL_BYTES);
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, size - length);
      return latestRateLimits(buffer.toString('utf8'));
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}

/** The server's figure for our window `w`: its report of the same kind taken while `w` was open. */
function serverCheckOf(w: PlanWindow, server: readonly ServerWindowCheck[]): ServerWindowCheck | null {
  return server.find((c) => c.server.kind === w.kind && c.ours?.startMs === w.startMs) ?? null;
}

/** A window's figures in lines of our own words and numbers (the tooltip, the status bar's tooltip), Codex's own figure for it last. */
export function windowLines(
  plan: PlanFamily,
  w: PlanWindow,
  nowMs: number,
  server: readonly ServerWindowCheck[] = [],
): string[] {
  const span =
    w.kind === '5h'
      ? `${localDateTime(w.startMs)} – ${localTime(w.endMs)}`
      : `${localDateTime(w.startMs)} – ${localDateTime(w.endMs)}`;
  const lines = [
    `${PLAN_LABELS[plan]}, ${WINDOW_KIND_LABELS[w.kind]} window ${span}${w.active ? ` (open, resets in ${shortDuration(w.endMs - nowMs)})` : ''}`,
    `Used: ${formatCompact(w.tokens)} tokens, ${w.usd === null ? 'cost unknown' : `${formatUsd(w.usd)} at list price`} in ${formatCount(w.calls)} calls${w.unpricedCalls > 0 ? ` (${w.unpricedCalls} not priced)` : ''}.`,
  ];
  if (w.burn)
    lines.push(
      `Burn rate: ${formatCompact(w.burn.tokensPerHour)} tokens/h${w.burn.usdPerHour === null ? '' : `, ${formatUsd(w.burn.usdPerHour)}/h`} (first to last call).`,
    );
  if (w.projected)
    lines.push(
      `At the reset: ~${formatCompact(w.projected.tokens)} tokens${w.projected.usd === null ? '' : `, ~${formatUsd(w.projected.usd)}`} at this rate.`,
    );
  for (const l of w.limits) lines.push(`Limit ${limitText(l, w.active)}.`);
  if (w.limits.length === 0)
    lines.push(
      `No limit set (agentTrace.windows.${plan}.${w.kind === '5h' ? 'limit5h' : 'limitWeekly'}): the plans publish none.`,
    );
  const check = serverCheckOf(w, server);
  if (check) lines.push(...serverCheckLines(check));
  return lines;
}

/** A plan's windows open now: the 5-hour one, then the weekly one. */
function openWindows(plan: PlanWindows): PlanWindow[] {
  return [activeWindow(plan, '5h'), activeWindow(plan, 'weekly')].filter((w): w is PlanWindow => w !== null);
}

/** The status bar's words for a session's plan: the open 5-hour and weekly windows. */
export function statusWindows(
  plan: PlanWindows,
  nowMs: number,
  server: readonly ServerWindowCheck[] = [],
): { text: string | null; lines: string[] } {
  const open = openWindows(plan);
  // The item's text stays short: a window joins it only when a limit makes it a share of something.
  const limited = open.filter((w) => w.limits.length > 0);
  const text = limited.length > 0 ? limited.map((w) => windowShortText(w, nowMs)).join(' · ') : null;
  const lines = open.flatMap((w, i) => [...(i > 0 ? [''] : []), ...windowLines(plan.family, w, nowMs, server)]);
  return { text, lines };
}

type WindowsNode =
  | { kind: 'plan'; plan: PlanWindows }
  | { kind: 'window'; plan: PlanFamily; window: PlanWindow }
  | { kind: 'share'; plan: PlanFamily; window: PlanWindow; share: WindowShare }
  | { kind: 'problem'; text: string };

/** Open windows first, then the rest newest first. */
function ordered(plan: PlanWindows): PlanWindow[] {
  return [...plan.windows].sort(
    (a, b) => Number(b.active) - Number(a.active) || b.startMs - a.startMs || (a.kind === '5h' ? -1 : 1),
  );
}

/**
 * The Plan Windows view: per plan its windows of the last 8 days (open ones first), each
 * with what it used, its limit's share and when it resets, and under it the sessions that
 * used it (a click opens one). Every label is our words and numbers, or a session title
 * through sessionLabel (plain text).
 */
export class PlanWindowsTree implements vscode.TreeDataProvider<WindowsNode>, vscode.Disposable {
  private readonly didChange = new vscode.EventEmitter<WindowsNode | undefined>();
  readonly onDidChangeTreeData = this.didChange.event;
  private readonly listener: vscode.Disposable;

  constructor(private readonly model: PlanWindowsModel) {
    this.listener = model.onDidChange(() => this.didChange.fire(undefined));
  }

  dispose(): void {
    this.listener.dispose();
    this.didChange.dispose();
  }

  getChildren(element?: WindowsNode): WindowsNode[] {
    if (!element)
      return [
        ...this.model.problems.map((text): WindowsNode => ({ kind: 'problem', text })),
        ...this.model.plans.map((plan): WindowsNode => ({ kind: 'plan', plan })),
      ];
    if (element.kind === 'plan')
      return ordered(element.plan).map((window) => ({ kind: 'window', plan: element.plan.family, window }));
    if (element.kind === 'window')
      return element.window.sessions.map((share) => ({
        kind: 'share',
        plan: element.plan,
        window: element.window,
        share,
      }));
    return [];
  }

  getTreeItem(element: WindowsNode): vscode.TreeItem {
    const now = Date.now();
    switch (element.kind) {
      case 'problem': {
        const item = new vscode.TreeItem(element.text, vscode.TreeItemCollapsibleState.None);
        item.iconPath = new vscode.ThemeIcon('warning');
        return item;
      }
      case 'plan': {
        const item = new vscode.TreeItem(PLAN_LABELS[element.plan.family], vscode.TreeItemCollapsibleState.Expanded);
        item.id = `plan:${element.plan.family}`;
        const open = openWindows(element.plan);
        item.description = open.length > 0 ? open.map((w) => windowShortText(w, now)).join(' · ') : 'no window open';
        const { lines } = statusWindows(element.plan, now, this.model.server.get(element.plan.family));
        item.tooltip = lines.length > 0 ? lines.join('\n') : 'No call in the last 5 hours or the last week.';
        item.iconPath = new vscode.ThemeIcon('dashboard');
        return item;
      }
      case 'window': {
        const w = element.window;
        const span =
          w.kind === '5h'
            ? `${localDateTime(w.startMs)}–${localTime(w.endMs)}`
            : `${localDateTime(w.startMs).slice(0, 10)} – ${localDateTime(w.endMs).slice(0, 10)}`;
        const item = new vscode.TreeItem(
          `${WINDOW_KIND_LABELS[w.kind]} ${span}`,
          vscode.TreeItemCollapsibleState.Collapsed,
        );
        item.id = `window:${element.plan}:${w.kind}:${w.startMs}`;
        const limit = w.limits[0];
        const server = this.model.server.get(element.plan) ?? [];
        const check = serverCheckOf(w, server);
        item.description = [
          `${formatCompact(w.tokens)} tokens`,
          w.usd === null ? null : formatUsd(w.usd),
          `${formatCount(w.calls)} calls`,
          limit ? formatPercent(limit.share) : null,
          w.active ? `resets in ${shortDuration(w.endMs - now)}` : null,
          check ? `Codex: ${formatPercent(check.server.usedPercent / 100)} used` : null,
        ]
          .filter((p) => p !== null)
          .join(' · ');
        item.tooltip = windowLines(element.plan, w, now, server).join('\n');
        item.iconPath = new vscode.ThemeIcon(w.active ? 'watch' : 'history');
        return item;
      }
      case 'share': {
        const s = element.share;
        const row = this.model.rowsByKey.get(s.session);
        const label = (max: number): string => (row ? sessionLabel(row, max) : plainText(s.session, max));
        const item = new vscode.TreeItem(label(TREE_LABEL_MAX), vscode.TreeItemCollapsibleState.None);
        item.description = `${formatPercent(s.tokenShare)} of tokens · ${s.usd === null ? 'cost unknown' : formatUsd(s.usd)} · ${formatCount(s.calls)} calls`;
        item.tooltip = `${label(200)}\n${formatPercent(s.tokenShare)} of this window's tokens${s.usdShare === null ? '' : `, ${formatPercent(s.usdShare)} of its dollars`}, in ${formatCount(s.calls)} calls.`;
        item.iconPath = new vscode.ThemeIcon(row?.role === 'main' ? 'comment-discussion' : 'type-hierarchy-sub');
        if (row && row.fileStatus !== 'deleted') {
          const node: SessionsTreeNode = {
            kind: 'session',
            node: {
              row,
              children: [],
              cost: { usd: row.costUsd, ownUsd: row.costUsd, unpricedCalls: row.unpricedCalls, subAgents: 0 },
            },
          };
          item.command = {
            command: 'agentTrace.sessions.open',
            title: 'Open in Agent Trace Inspector',
            arguments: [node],
          };
        }
        return item;
      }
    }
  }
}
