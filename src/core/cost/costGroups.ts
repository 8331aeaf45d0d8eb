import type { LedgerCall } from './callLedger';
import type { Session } from '../trace/model';

/**
 * Cost grouped by day, model, agent, or by the git commits and branches the sessions led
 * to. The join with git is a rule on data the caller reads from `git log` (no network): a
 * commit belongs to a session when it was made during the session or within `graceMs` after
 * its last call, and touches a file the session edited (docs/guide/windows.md states it).
 */

/** One group's figures. Unpriced calls are counted, never added as $0. */
export interface CostGroup {
  key: string;
  usd: number | null;
  calls: number;
  unpricedCalls: number;
  tokens: number;
  /** Of the priced dollars of every group; null when nothing was priced. */
  share: number | null;
}

function finish(groups: Map<string, { usd: number; priced: number; calls: number; tokens: number }>): CostGroup[] {
  let all = 0;
  for (const g of groups.values()) all += g.usd;
  const out = [...groups].map(([key, g]) => ({
    key,
    usd: g.priced > 0 ? g.usd : null,
    calls: g.calls,
    unpricedCalls: g.calls - g.priced,
    tokens: g.tokens,
    share: g.priced > 0 && all > 0 ? g.usd / all : null,
  }));
  return out.sort((a, b) => (b.usd ?? -1) - (a.usd ?? -1) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The calls grouped by `keyOf`, dearest first. */
export function costBy(calls: Iterable<LedgerCall>, keyOf: (c: LedgerCall) => string): CostGroup[] {
  const groups = new Map<string, { usd: number; priced: number; calls: number; tokens: number }>();
  for (const c of calls) {
    const key = keyOf(c);
    const g = groups.get(key) ?? { usd: 0, priced: 0, calls: 0, tokens: 0 };
    g.calls += 1;
    g.tokens += c.tokens;
    if (c.usd !== null) {
      g.usd += c.usd;
      g.priced += 1;
    }
    groups.set(key, g);
  }
  return finish(groups);
}

/** Tools that change a file (Claude Code, Codex, Gemini CLI, OpenHands, SWE-agent and common MCP names). */
const EDIT_TOOLS = new Set(
  [
    'Edit',
    'MultiEdit',
    'Write',
    'NotebookEdit',
    'apply_patch',
    'edit',
    'create',
    'insert',
    'str_replace_editor',
    'str_replace_based_edit_tool',
    'write_file',
    'edit_file',
    'replace',
    'patch',
    'write_to_file',
    'replace_in_file',
    'apply_diff',
    'FileEditAction',
    'FileWriteAction',
  ].map((n) => n.toLowerCase()),
);

/** The files a session changed through its edit tools, as the log names them. */
export function editedFiles(session: Session): string[] {
  const out = new Set<string>();
  for (const call of session.calls)
    for (const t of call.toolCalls) if (t.targetFile && EDIT_TOOLS.has(t.name.toLowerCase())) out.add(t.targetFile);
  return [...out];
}

const slashes = (p: string): string => p.replace(/\\/g, '/').replace(/\/+$/, '');

/**
 * Whether a commit's file (relative to its repository) is a file the session edited. A path
 * under the session's folder is compared from there: equal, or the commit's path ends with it
 * (the session ran in a sub-folder of the repository). A path elsewhere (the log came from
 * another machine) matches when it ends with the commit's path.
 */
export function sameFile(edited: string, cwd: string | null, commitFile: string): boolean {
  const e = slashes(edited);
  const f = slashes(commitFile);
  const base = cwd === null ? null : slashes(cwd);
  if (base !== null && e.startsWith(base + '/')) {
    const rel = e.slice(base.length + 1);
    return f === rel || f.endsWith('/' + rel);
  }
  return e === f || e.endsWith('/' + f);
}

/** A session (with its sub-agents) as the join needs it. */
export interface ThreadSpan {
  thread: string;
  file: string;
  startMs: number;
  endMs: number;
  cwd: string | null;
  edited: string[];
  usd: number | null;
  calls: number;
  unpricedCalls: number;
}

/** A commit as `git log` gives it. */
export interface GitCommit {
  sha: string;
  timeMs: number;
  subject: string;
  files: string[];
  /** The branch it is on (nearest branch tip); null when none holds it. */
  branch: string | null;
}

/** A commit with the sessions joined to it and its part of their cost. */
export interface CommitCost {
  sha: string;
  subject: string;
  timeMs: number;
  branch: string | null;
  usd: number | null;
  sessions: Array<{ thread: string; file: string; usd: number | null; commitsOfSession: number }>;
}

/** Default time after a session's last call in which its commits still count: one hour. */
export const COMMIT_GRACE_MS = 60 * 60_000;

/**
 * Joins sessions to commits. A session's cost is shared equally by the commits joined to
 * it (none counted twice); sessions joined to none are left over, with their cost.
 */
export function joinCommits(
  threads: readonly ThreadSpan[],
  commits: readonly GitCommit[],
  graceMs = COMMIT_GRACE_MS,
): { commits: CommitCost[]; unjoined: ThreadSpan[] } {
  const bySha = new Map<string, CommitCost>();
  const unjoined: ThreadSpan[] = [];
  for (const t of threads) {
    const joined = commits.filter(
      (c) =>
        c.timeMs >= t.startMs &&
        c.timeMs <= t.endMs + graceMs &&
        c.files.some((f) => t.edited.some((e) => sameFile(e, t.cwd, f))),
    );
    if (joined.length === 0) {
      unjoined.push(t);
      continue;
    }
    const part = t.usd === null ? null : t.usd / joined.length;
    for (const c of joined) {
      const row = bySha.get(c.sha) ?? {
        sha: c.sha,
        subject: c.subject,
        timeMs: c.timeMs,
        branch: c.branch,
        usd: null,
        sessions: [],
      };
      if (part !== null) row.usd = (row.usd ?? 0) + part;
      row.sessions.push({ thread: t.thread, file: t.file, usd: part, commitsOfSession: joined.length });
      bySha.set(c.sha, row);
    }
  }
  return { commits: [...bySha.values()].sort((a, b) => a.timeMs - b.timeMs), unjoined };
}
