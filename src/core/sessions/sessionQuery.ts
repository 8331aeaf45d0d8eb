import type { SessionRecord } from './sessionRecord';

/**
 * A session as the index lists it: its record plus where it lives. Pure data, shared by
 * the Agent Sessions view, the status bar, the reports and `agent-trace sessions`.
 */
export interface SessionRow extends SessionRecord {
  /** The index's id of this session row. */
  id: number;
  /** The index's id of the session's file (a main session and its sub-agents share it). */
  fileId: number;
  /** The session file (for a sub-agent, the main session's file it was read with). */
  path: string;
  /** The agent whose folder holds the file (the registry's id: `claude-code`, `codex`, …). */
  agentId: string;
  /** The project: the session's working folder, else what the agent's folder layout says. */
  project: string;
  /** When the file last changed (ms since the epoch). */
  fileMtimeMs: number;
  /** When the session's files were last written (the file's or a sub-agent log's modification time), for `isLive`. */
  lastWriteMs: number;
  /** The file grew within LIVE_WINDOW_MS of when the rows were read (views ask `isLive` with their own clock). */
  live: boolean;
  /** `deleted` when the file is gone (its figures are the last ones read), `problem` when it could not be read. */
  fileStatus: 'ok' | 'deleted' | 'problem';
  /** Why the file could not be read. */
  problem: string | null;
}

/** A session is "live" while its files were written this recently (the inspector's live badge uses the same window). */
export const LIVE_WINDOW_MS = 2 * 60_000;

/**
 * True while the session's files were last written less than LIVE_WINDOW_MS before
 * `nowMs`. Asked at the moment a view draws, so a row stops saying "live" when the
 * window passes, whether or not anything was read since.
 */
export function isLive(row: Pick<SessionRow, 'fileStatus' | 'lastWriteMs'>, nowMs: number): boolean {
  return row.fileStatus === 'ok' && nowMs - row.lastWriteMs < LIVE_WINDOW_MS;
}

/** When the first of these live rows stops being live (ms), null when none is live at `nowMs`. */
export function nextLiveExpiry(
  rows: Iterable<Pick<SessionRow, 'fileStatus' | 'lastWriteMs'>>,
  nowMs: number,
): number | null {
  let next: number | null = null;
  for (const r of rows) {
    if (!isLive(r, nowMs)) continue;
    const end = r.lastWriteMs + LIVE_WINDOW_MS;
    if (next === null || end < next) next = end;
  }
  return next;
}

/** Narrows the list (every field optional; all given must hold). */
export interface SessionFilter {
  agents?: readonly string[];
  /** Project paths, or parts of them (case-insensitive). */
  projects?: readonly string[];
  /** Sessions active at or after this time (ms). */
  sinceMs?: number;
  /** Sessions started before this time (ms). */
  untilMs?: number;
  /** Only sessions with at least one retry loop. */
  hasRetryLoops?: boolean;
  /** Only sessions that cost more than this many dollars (unknown cost never matches). */
  costAboveUsd?: number;
  /** Only sessions whose cache hit rate is below this fraction (unknown never matches). */
  hitRateBelow?: number;
  /** Text to find in prompts, tool targets and errors; the index answers it (see SessionIndex.search). */
  text?: string;
}

export const SORT_KEYS = ['newest', 'oldest', 'cost', 'calls', 'hitRate', 'duration', 'failed', 'loops'] as const;
export type SessionSort = (typeof SORT_KEYS)[number];

export const SORT_LABELS: Record<SessionSort, string> = {
  newest: 'Newest first',
  oldest: 'Oldest first',
  cost: 'Cost, highest first',
  calls: 'LLM calls, most first',
  hitRate: 'Cache hit rate, lowest first',
  duration: 'Duration, longest first',
  failed: 'Failed tool calls, most first',
  loops: 'Retry loops, most first',
};

/** When a session was last active: its last call, else its start, else the file's time. */
export function activeMs(row: SessionRow): number {
  return row.endMs ?? row.startMs ?? row.fileMtimeMs;
}

/** When a session started: its first call or prompt, else the file's time. */
export function startedMs(row: SessionRow): number {
  return row.startMs ?? row.fileMtimeMs;
}

export function durationMs(row: SessionRow): number | null {
  return row.startMs !== null && row.endMs !== null ? Math.max(0, row.endMs - row.startMs) : null;
}

/**
 * True when the row passes every criterion of the filter but the text (answered by the
 * index). `threadUsd` is what "cost" means for the row: a main session with its
 * sub-agents (`threadCosts`), as the tree shows it; the row's own cost when not given.
 */
export function matchesFilter(row: SessionRow, filter: SessionFilter, threadUsd: number | null = row.costUsd): boolean {
  if (filter.agents && filter.agents.length > 0 && !filter.agents.includes(row.agentId)) return false;
  if (filter.projects && filter.projects.length > 0) {
    const project = row.project.toLowerCase();
    if (!filter.projects.some((p) => project.includes(p.toLowerCase()))) return false;
  }
  if (filter.sinceMs !== undefined && activeMs(row) < filter.sinceMs) return false;
  if (filter.untilMs !== undefined && startedMs(row) >= filter.untilMs) return false;
  if (filter.hasRetryLoops && row.retryLoops === 0) return false;
  if (filter.costAboveUsd !== undefined && (threadUsd === null || threadUsd <= filter.costAboveUsd)) return false;
  if (filter.hitRateBelow !== undefined && (row.cacheHitRate === null || row.cacheHitRate >= filter.hitRateBelow))
    return false;
  return true;
}

/** True when the filter narrows anything. */
export function isFiltering(filter: SessionFilter): boolean {
  return describeFilter(filter).length > 0;
}

/** The filter in words, one part per criterion ("agent codex", "cost > $1.00"). */
export function describeFilter(filter: SessionFilter): string[] {
  const parts: string[] = [];
  if (filter.agents?.length) parts.push(`agent ${filter.agents.join(', ')}`);
  if (filter.projects?.length) parts.push(`project ${filter.projects.join(', ')}`);
  if (filter.sinceMs !== undefined) parts.push(`since ${localDay(filter.sinceMs)}`);
  if (filter.untilMs !== undefined) parts.push(`before ${localDay(filter.untilMs)}`);
  if (filter.hasRetryLoops) parts.push('with retry loops');
  if (filter.costAboveUsd !== undefined) parts.push(`cost > $${filter.costAboveUsd.toFixed(2)}`);
  if (filter.hitRateBelow !== undefined) parts.push(`hit rate < ${(filter.hitRateBelow * 100).toFixed(0)}%`);
  if (filter.text) parts.push(`text "${filter.text}"`);
  return parts;
}

/** Known values sort before unknown ones whichever the direction. */
function byNumber(
  get: (r: SessionRow) => number | null,
  descending: boolean,
): (a: SessionRow, b: SessionRow) => number {
  return (a, b) => {
    const x = get(a);
    const y = get(b);
    if (x === null || y === null) return x === null ? (y === null ? 0 : 1) : -1;
    return descending ? y - x : x - y;
  };
}

/**
 * The comparator of a sort key; ties fall back to newest first. `costOf` is the cost the
 * rows are sorted by (the tree: each session with its sub-agents); the row's own by default.
 */
export function compareRows(
  sort: SessionSort,
  costOf: (r: SessionRow) => number | null = (r) => r.costUsd,
): (a: SessionRow, b: SessionRow) => number {
  const primary: (a: SessionRow, b: SessionRow) => number = {
    newest: byNumber(activeMs, true),
    oldest: byNumber(startedMs, false),
    cost: byNumber(costOf, true),
    calls: byNumber((r) => r.calls, true),
    hitRate: byNumber((r) => r.cacheHitRate, false),
    duration: byNumber(durationMs, true),
    failed: byNumber((r) => r.failedToolCalls, true),
    loops: byNumber((r) => r.retryLoops, true),
  }[sort];
  const newest = byNumber(activeMs, true);
  return (a, b) => primary(a, b) || newest(a, b) || a.id - b.id;
}

/** A main session with its sub-agents nested (as deep as the agent nested them). */
export interface SessionNode {
  row: SessionRow;
  children: SessionNode[];
  /** What it cost with every sub-agent nested under it. */
  cost: ThreadCost;
}

/** A session's cost together with the sub-agents nested under it (at any depth). */
export interface ThreadCost {
  /** Σ of its own priced calls and its sub-agents'; null when none of them is priced. */
  usd: number | null;
  /** Its own calls only (the row's `costUsd`). */
  ownUsd: number | null;
  /** Calls without a price, its own and its sub-agents'. */
  unpricedCalls: number;
  /** Sub-agents and compaction agents nested under it, at any depth. */
  subAgents: number;
}

/** The sessions of one local day. */
export interface DayGroup {
  /** "2026-03-21", local time. */
  day: string;
  sessions: SessionNode[];
}

/** A project's sessions, by day. */
export interface ProjectGroup {
  project: string;
  /** When its latest session was active (projects are listed by it, latest first). */
  latestMs: number;
  sessionCount: number;
  days: DayGroup[];
}

/** "2026-03-21" in local time. */
export function localDay(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/**
 * Nests sub-agents under the session that started them (same file, `parentKey`). A
 * sub-agent whose parent is not in `rows` (filtered out, or never read) stands alone.
 */
export function nestSessions(rows: readonly SessionRow[]): SessionNode[] {
  const nodes = new Map<string, SessionNode>();
  const keyOf = (r: { fileId: number; key: string }): string => `${r.fileId}\u0000${r.key}`;
  for (const row of rows)
    nodes.set(keyOf(row), {
      row,
      children: [],
      cost: { usd: row.costUsd, ownUsd: row.costUsd, unpricedCalls: row.unpricedCalls, subAgents: 0 },
    });
  const roots: SessionNode[] = [];
  for (const row of rows) {
    const node = nodes.get(keyOf(row))!;
    const parent = row.parentKey !== null ? nodes.get(keyOf({ fileId: row.fileId, key: row.parentKey })) : undefined;
    if (parent && parent !== node) parent.children.push(node);
    else roots.push(node);
  }
  // Children before parents, without recursion: a chain of 20,000 sub-agents is one pass, no deep stack.
  // A parent cycle never reaches a root, so its nodes are never visited and keep their own figures.
  const order: SessionNode[] = [];
  const stack = [...roots];
  while (stack.length > 0) {
    const n = stack.pop()!;
    order.push(n);
    for (const c of n.children) stack.push(c);
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i]!;
    for (const c of n.children) {
      if (c.cost.usd !== null) n.cost.usd = (n.cost.usd ?? 0) + c.cost.usd;
      n.cost.unpricedCalls += c.cost.unpricedCalls;
      n.cost.subAgents += 1 + c.cost.subAgents;
    }
  }
  return roots;
}

/** Each row's cost with its sub-agents (`SessionNode.cost`), by row id. */
export function threadCosts(rows: readonly SessionRow[]): Map<number, ThreadCost> {
  const out = new Map<number, ThreadCost>();
  const stack = nestSessions(rows);
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.set(n.row.id, n.cost);
    for (const c of n.children) stack.push(c);
  }
  return out;
}

/**
 * The tree of the Agent Sessions view: projects (latest activity first), each by day
 * (latest first), each day's sessions in `sort` order with their sub-agents nested.
 */
export function groupSessions(rows: readonly SessionRow[], sort: SessionSort): ProjectGroup[] {
  const roots = nestSessions(rows);
  const compare = compareRows(sort, threadUsd(roots));
  const byProject = new Map<string, SessionNode[]>();
  for (const node of roots) {
    const list = byProject.get(node.row.project) ?? [];
    list.push(node);
    byProject.set(node.row.project, list);
  }
  const groups: ProjectGroup[] = [];
  for (const [project, nodes] of byProject) {
    const byDay = new Map<string, SessionNode[]>();
    for (const n of nodes) {
      const day = localDay(startedMs(n.row));
      const list = byDay.get(day) ?? [];
      list.push(n);
      byDay.set(day, list);
    }
    const days = [...byDay.entries()]
      .sort((a, b) => (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0))
      .map(([day, sessions]) => {
        sortTree(sessions, compare);
        return { day, sessions };
      });
    groups.push({
      project,
      latestMs: Math.max(...nodes.map((n) => activeMs(n.row))),
      sessionCount: nodes.length,
      days,
    });
  }
  return groups.sort((a, b) => b.latestMs - a.latestMs || (a.project < b.project ? -1 : 1));
}

/** The cost a sort by cost uses: each session with its sub-agents, as the tree shows it. */
function threadUsd(roots: readonly SessionNode[]): (r: SessionRow) => number | null {
  const costs = new Map<number, number | null>();
  const stack = [...roots];
  while (stack.length > 0) {
    const n = stack.pop()!;
    costs.set(n.row.id, n.cost.usd);
    for (const c of n.children) stack.push(c);
  }
  return (r) => (costs.has(r.id) ? costs.get(r.id)! : r.costUsd);
}

/** Sorts sessions and, level by level, their sub-agents (iteratively: nesting can be deep). */
function sortTree(list: SessionNode[], compare: (a: SessionRow, b: SessionRow) => number): void {
  const stack = [list];
  while (stack.length > 0) {
    const l = stack.pop()!;
    l.sort((a, b) => compare(a.row, b.row));
    for (const n of l) if (n.children.length > 0) stack.push(n.children);
  }
}

/** How the Agent Sessions view groups sessions: by project then day, or flat by how recently they were active. */
export const GROUPINGS = ['project', 'recency'] as const;
export type SessionGrouping = (typeof GROUPINGS)[number];

/** The flat grouping's periods, most recent first. */
export const PERIODS = ['today', 'yesterday', 'week', 'older'] as const;
export type Period = (typeof PERIODS)[number];

/** What each period is called in the view. */
export const PERIOD_LABELS: Record<Period, string> = {
  today: 'Today',
  yesterday: 'Yesterday',
  week: 'This week',
  older: 'Older',
};

/** The sessions last active in one period (local days). */
export interface PeriodGroup {
  period: Period;
  sessions: SessionNode[];
}

/**
 * The period of a time, in local days before `nowMs`'s: today, yesterday, the five days
 * before (this week: the last seven days), or older. Times after now count as today.
 */
export function periodOf(ms: number, nowMs: number): Period {
  const day = (t: number): number => {
    const d = new Date(t);
    return Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()) / 86_400_000;
  };
  const back = day(nowMs) - day(ms);
  return back <= 0 ? 'today' : back === 1 ? 'yesterday' : back < 7 ? 'week' : 'older';
}

/**
 * The flat grouping of the Agent Sessions view: today, yesterday, this week, older (by
 * when each session was last active), each period's sessions in `sort` order with their
 * sub-agents nested; empty periods are left out.
 */
export function groupByPeriod(rows: readonly SessionRow[], sort: SessionSort, nowMs: number): PeriodGroup[] {
  const roots = nestSessions(rows);
  const compare = compareRows(sort, threadUsd(roots));
  const byPeriod = new Map<Period, SessionNode[]>();
  for (const n of roots) {
    const p = periodOf(activeMs(n.row), nowMs);
    const list = byPeriod.get(p) ?? [];
    list.push(n);
    byPeriod.set(p, list);
  }
  return PERIODS.filter((p) => byPeriod.has(p)).map((period) => {
    const sessions = byPeriod.get(period)!;
    sortTree(sessions, compare);
    return { period, sessions };
  });
}

/**
 * A `--since` value: a duration back from now (`30m`, `12h`, `7d`, `2w`) or a date
 * (`2026-03-01`, local midnight). Null when it is neither.
 */
export function parseSince(text: string, nowMs: number): number | null {
  const rel = /^(\d+(?:\.\d+)?)\s*(m|min|h|d|w)$/i.exec(text.trim());
  if (rel) {
    const unit = { m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 }[
      rel[2]!.toLowerCase() as 'm' | 'min' | 'h' | 'd' | 'w'
    ];
    return nowMs - Number(rel[1]) * unit;
  }
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.trim());
  if (date) {
    const ms = new Date(Number(date[1]), Number(date[2]) - 1, Number(date[3])).getTime();
    return Number.isNaN(ms) ? null : ms;
  }
  return null;
}
