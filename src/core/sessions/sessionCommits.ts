import { joinCommits } from '../cost/costGroups';
import type { CommitCost, GitCommit, ThreadSpan } from '../cost/costGroups';
import type { SessionRow } from './sessionQuery';

/**
 * The several-sessions report's cost per commit: the report's sessions joined to their git
 * history by the rule `agent-trace cost --by commit` uses (costGroups.ts joinCommits; the rule
 * is in docs/guide/windows.md), from the index's rows (times, dollars, folder) and the files
 * each session's log shows it edited.
 */

/** The table the report's page shows. */
export interface CommitTable {
  /** Commits joined to at least one session, oldest first. */
  commits: CommitCost[];
  /** Sessions (a main session with its sub-agents) joined to no commit, and their dollars. */
  unjoined: { sessions: number; usd: number | null };
  /** Sessions whose folder is in no git repository here. */
  noRepository: number;
  /** Minutes after a session's last call in which its commits still count. */
  graceMinutes: number;
}

/**
 * One log's sessions as the join needs them: its main session with its sub-agents, over the
 * index's rows of that file (their first and last calls, their dollars, the main session's
 * folder) and the files the log's edit tools changed (costGroups.ts editedFiles over its
 * sessions). Null when no row has a time.
 */
export function fileSpan(file: string, rows: readonly SessionRow[], edited: readonly string[]): ThreadSpan | null {
  const main = rows.find((r) => r.role === 'main') ?? rows[0];
  if (!main) return null;
  let startMs = Infinity;
  let endMs = -Infinity;
  let usd: number | null = null;
  let calls = 0;
  let unpricedCalls = 0;
  for (const r of rows) {
    if (r.startMs !== null) startMs = Math.min(startMs, r.startMs);
    if (r.endMs !== null) endMs = Math.max(endMs, r.endMs);
    if (r.costUsd !== null) usd = (usd ?? 0) + r.costUsd;
    calls += r.calls;
    unpricedCalls += r.unpricedCalls;
  }
  if (!Number.isFinite(startMs) || !Number.isFinite(endMs)) return null;
  return {
    thread: main.key,
    file,
    startMs,
    endMs,
    cwd: main.cwd,
    edited: [...edited],
    usd,
    calls,
    unpricedCalls,
  };
}

/** The spans of one repository joined to its commits, added to the table being built. */
export function addRepository(
  table: CommitTable,
  spans: readonly ThreadSpan[],
  commits: readonly GitCommit[],
  graceMs: number,
): void {
  const joined = joinCommits(spans, commits, graceMs);
  table.commits.push(...joined.commits);
  table.commits.sort((a, b) => a.timeMs - b.timeMs);
  addUnjoined(table, joined.unjoined);
}

/** Sessions joined to no commit (or in no repository), counted with their dollars. */
export function addUnjoined(table: CommitTable, spans: readonly ThreadSpan[]): void {
  for (const s of spans) {
    table.unjoined.sessions += 1;
    if (s.usd !== null) table.unjoined.usd = (table.unjoined.usd ?? 0) + s.usd;
  }
}
