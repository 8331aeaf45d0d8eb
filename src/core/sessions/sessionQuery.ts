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
  /** The file grew within the last minutes: the agent is (probably) still running. */
  live: boolean;
  /** `deleted` when the file is gone (its figures are the last ones read), `problem` when it could not be read. */
  fileStatus: 'ok' | 'deleted' | 'problem';
  /** Why the file could not be read. */
  problem: string | null;
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

/** True when the row passes every criterion of the filter but the text (answered by the index). */
export function matchesFilter(row: SessionRow, filter: SessionFilter): boolean {
  if (filter.agents && filter.agents.length > 0 && !filter.agents.includes(row.agentId)) return false;
  if (filter.projects && filter.projects.length > 0) {
    const project = row.project.toLowerCase();
    if (!filter.projects.some((p) => project.includes(p.toLowerCase()))) return false;
  }
  if (filter.sinceMs !== undefined && activeMs(row) < filter.sinceMs) return false;
  if (filter.untilMs !== undefined && startedMs(row) >= filter.untilMs) return false;
  if (filter.hasRetryLoops && row.retryLoops === 0) return false;
  if (filter.costAboveUsd !== undefined && (row.costUsd === null || row.costUsd <= filter.costAboveUsd)) return false;
  if (filter.hitRateBelow !== undefined && (row.cacheHitRate === null || row.cacheHitRate >= filter.hitRateBelow)) return false;
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
function byNumber(get: (r: SessionRow) => number | null, descending: boolean): (a: SessionRow, b: SessionRow) => number {
  return (a, b) => {
    const x = get(a);
    const y = get(b);
    if (x === null || y === null) return x === null ? (y === null ? 0 : 1) : -1;
    return descending ? y - x : x - y;
  };
}

/** The comparator of a sort key; ties fall back to newest first. */
export function compareRows(sort: SessionSort): (a: SessionRow, b: SessionRow) => number {
  const primary: (a: SessionRow, b: SessionRow) => number = {
    newest: byNumber(activeMs, true),
    oldest: byNumber(startedMs, false),
    cost: byNumber((r) => r.costUsd, true),
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
  for (const row of rows) nodes.set(keyOf(row), { row, children: [] });
  const roots: SessionNode[] = [];
  for (const row of rows) {
    const node = nodes.get(keyOf(row))!;
    const parent = row.parentKey !== null ? nodes.get(keyOf({ fileId: row.fileId, key: row.parentKey })) : undefined;
    if (parent && parent !== node) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

/**
 * The tree of the Agent Sessions view: projects (latest activity first), each by day
 * (latest first), each day's sessions in `sort` order with their sub-agents nested.
 */
export function groupSessions(rows: readonly SessionRow[], sort: SessionSort): ProjectGroup[] {
  const compare = compareRows(sort);
  const roots = nestSessions(rows);
  const byProject = new Map<string, SessionNode[]>();
  for (const node of roots) {
    const list = byProject.get(node.row.project) ?? [];
    list.push(node);
    byProject.set(node.row.project, list);
  }
  const sortTree = (list: SessionNode[]): void => {
    list.sort((a, b) => compare(a.row, b.row));
    for (const n of list) sortTree(n.children);
  };
  const groups: ProjectGroup[] = [];
  for (const [project, nodes] of byProject) {
    const byDay = new Map<string, SessionNode[]>();
    for (const n of nodes) {
      const day = localDay(startedMs(n.row));
      const list = byDay.get(day) ?? [];
      list.push(n);
      byDay.set(day, list);
    }
    const days = [...byDay.entries()].sort((a, b) => (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0)).map(([day, sessions]) => {
      sortTree(sessions);
      return { day, sessions };
    });
    groups.push({ project, latestMs: Math.max(...nodes.map((n) => activeMs(n.row))), sessionCount: nodes.length, days });
  }
  return groups.sort((a, b) => b.latestMs - a.latestMs || (a.project < b.project ? -1 : 1));
}

/**
 * A `--since` value: a duration back from now (`30m`, `12h`, `7d`, `2w`) or a date
 * (`2026-03-01`, local midnight). Null when it is neither.
 */
export function parseSince(text: string, nowMs: number): number | null {
  const rel = /^(\d+(?:\.\d+)?)\s*(m|min|h|d|w)$/i.exec(text.trim());
  if (rel) {
    const unit = { m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 }[rel[2]!.toLowerCase() as 'm' | 'min' | 'h' | 'd' | 'w'];
    return nowMs - Number(rel[1]) * unit;
  }
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.trim());
  if (date) {
    const ms = new Date(Number(date[1]), Number(date[2]) - 1, Number(date[3])).getTime();
    return Number.isNaN(ms) ? null : ms;
  }
  return null;
}
