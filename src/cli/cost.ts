import { basename } from 'node:path';
import { COMMIT_GRACE_MS, costBy, editedFiles, joinCommits } from '../core/cost/costGroups';
import type { CommitCost, CostGroup, GitCommit, ThreadSpan } from '../core/cost/costGroups';
import { createPriceBook } from '../core/cost/priceBook';
import { repriceOn } from '../core/cost/repriceModel';
import type { Repriced } from '../core/cost/repriceModel';
import { addTtlSavings, emptyTtlSavings, ttlSavingsSentence } from '../core/cost/ttlSavings';
import { parseSince } from '../core/sessions/sessionQuery';
import { localDay } from '../core/sessions/sessionQuery';
import { localDateTime } from '../core/sessions/sessionText';
import { commitsBetween, repositoryOf } from '../node/gitLog';
import { formatCount, formatUsd } from '../core/text/formatNumbers';
import { overBudgetText } from '../core/sessions/budgetWatch';
import { plainText } from '../core/sessions/sessionText';
import { terminalJson, terminalText } from '../core/text/safeText';
import { UsageError } from '../core/text/usageError';
import { printError } from './output';
import { parseLedgerArgs, readLedger } from './ledger';
import type { LedgerTrace } from './ledger';
import type { LedgerCall } from '../core/cost/callLedger';

export const COST_USAGE = `Usage: agent-trace cost [FILE|DIR...] [--json] [--budget USD] [--by KEY] [options]

What each trace cost (its sessions and sub-agents, every call priced on its own:
docs/guide/cost.md) and the total. Without FILEs: this machine's sessions, as
agent-trace sessions finds them (--since, --agent, --project, --root, --index work
the same).

  --budget USD      exit with 3 when a trace cost more than USD, saying by how much
  --by KEY          the cost by day, model, agent, commit or branch. commit and branch join
                    each session to the commits of its git repository (git log, no network)
                    made during it or within --grace-min after its last call that touch a
                    file it edited; a session's cost is shared equally by its commits
  --as-model M      each trace re-priced as if model M had served its calls (M's prices
                    and cache rules on the same token counts; its tokenizer would differ)
  --ttl-savings     the provider cache TTL what-if summed over the traces: what 1-hour
                    caching would have saved (local sessions: the last 30 days unless --since)
  --repo DIR        the repository to join with (default: each session's own folder's)
  --grace-min N     minutes after a session in which its commits count (default 60)
  --json            every figure as JSON (docs/reference/json-output.md)

Exit status: 0 ok, 1 nothing could be read, 2 usage error, 3 over the --budget.
`;

const HELP = 'agent-trace cost --help';

/** Over the budget: says by how much on stderr and gives exit status 3; an unknown cost is said, not failed. */
export function budgetExit(
  file: string,
  usd: number | null,
  budget: number,
  err: (text: string) => void = (t) => printError(t.trimEnd()),
): number {
  if (usd === null) {
    err(`agent-trace: ${plainText(file, 200)}: cost unknown (no call could be priced): the --budget was not checked\n`);
    return 0;
  }
  if (usd <= budget) return 0;
  err(`agent-trace: ${plainText(file, 200)}: over budget: ${overBudgetText(usd, budget)}\n`);
  return 3;
}

interface TraceTotal {
  file: string;
  calls: number;
  unpricedCalls: number;
  usd: number | null;
  overBudgetUsd: number | null;
}

function traceTotal(t: LedgerTrace, budget: number | null): TraceTotal {
  let usd = 0;
  let priced = 0;
  for (const c of t.calls) {
    if (c.usd === null) continue;
    usd += c.usd;
    priced += 1;
  }
  const total = priced > 0 ? usd : t.calls.length === 0 ? 0 : null;
  return {
    file: t.file,
    calls: t.calls.length,
    unpricedCalls: t.calls.length - priced,
    usd: total,
    overBudgetUsd: budget !== null && total !== null && total > budget ? total - budget : null,
  };
}

/** `agent-trace cost`: exit status. */
export async function runCost(
  argv: readonly string[],
  write: (text: string) => void,
  writeErr: (text: string) => void,
  now = Date.now(),
): Promise<number> {
  const out = (text: string): void => write(terminalText(text));
  const err = (text: string): void => writeErr(terminalText(text));
  if (argv.includes('--help') || argv.includes('-h')) {
    out(COST_USAGE);
    return 0;
  }
  let budget: number | null = null;
  let by: GroupKey | null = null;
  let repo: string | null = null;
  let graceMs = COMMIT_GRACE_MS;
  let asModel: string | null = null;
  let ttlSavings = false;
  const { args, files } = parseLedgerArgs(argv, now, HELP, (a, i) => {
    if (a[i] === '--by') {
      const k = a[i + 1];
      if (!GROUP_KEYS.includes(k as GroupKey))
        throw new UsageError(`--by is one of ${GROUP_KEYS.join(', ')}, not "${k ?? ''}"`, HELP);
      by = k as GroupKey;
      return i + 1;
    }
    if (a[i] === '--as-model') {
      const m = a[i + 1];
      if (m === undefined || m.startsWith('--') || m.trim() === '')
        throw new UsageError('--as-model needs a model name (claude-sonnet-4-5, gpt-5, …)', HELP);
      asModel = m;
      return i + 1;
    }
    if (a[i] === '--ttl-savings') {
      ttlSavings = true;
      return i;
    }
    if (a[i] === '--repo') {
      const d = a[i + 1];
      if (d === undefined || d.startsWith('--')) throw new UsageError('--repo needs a folder', HELP);
      repo = d;
      return i + 1;
    }
    if (a[i] === '--grace-min') {
      const n = Number(a[i + 1]);
      if (a[i + 1] === undefined || !Number.isFinite(n) || n < 0)
        throw new UsageError(`--grace-min needs minutes ≥ 0, not "${a[i + 1] ?? ''}"`, HELP);
      graceMs = n * 60_000;
      return i + 1;
    }
    if (a[i] === '--budget') {
      const n = Number(a[i + 1]);
      if (a[i + 1] === undefined || !Number.isFinite(n) || n <= 0)
        throw new UsageError(`--budget needs dollars > 0, not "${a[i + 1] ?? ''}"`, HELP);
      budget = n;
      return i + 1;
    }
    return null;
  });
  const defaultSince = ttlSavings && files.length === 0 && args.filter.sinceMs === undefined;
  if (defaultSince) args.filter.sinceMs = parseSince('30d', now)!;
  const book = createPriceBook();
  const { traces, unread, looked } = await readLedger(files, args, book, now, err);
  if (traces.length === 0) {
    err(`agent-trace: no trace read${unread > 0 ? '' : ` (looked in ${plainText(looked, 400)})`}\n`);
    return 1;
  }
  const totals = traces.map((t) => traceTotal(t, budget));
  const all = totals.reduce((s, t) => s + (t.usd ?? 0), 0);
  const unpriced = totals.reduce((s, t) => s + t.unpricedCalls, 0);
  const calls = totals.reduce((s, t) => s + t.calls, 0);
  const grouped = by === null ? null : await groupCost(by, traces, repo, graceMs, err);
  const repriced: Array<Repriced | null> = traces.map((t) =>
    asModel === null ? null : repriceOn(t.model, t.cost, book, asModel),
  );
  let savings: (ReturnType<typeof emptyTtlSavings> & { period: string; sentence: string }) | null = null;
  if (ttlSavings) {
    const sum = emptyTtlSavings();
    for (const t of traces) addTtlSavings(sum, t.model, t.cost);
    const period =
      files.length > 0
        ? sum.sessions === 1
          ? 'over this session'
          : `over these ${sum.sessions} sessions`
        : args.filter.sinceMs !== undefined
          ? `over the ${sum.sessions} sessions since ${localDateTime(args.filter.sinceMs)}`
          : `over ${sum.sessions} sessions`;
    savings = { ...sum, period, sentence: ttlSavingsSentence(sum, period) };
  }
  if (args.json) {
    const traceRows = totals.map((t, i) => (asModel === null ? t : { ...t, asModel: repriced[i] }));
    write(
      terminalJson(
        JSON.stringify(
          {
            budgetUsd: budget,
            totalUsd: totals.every((t) => t.usd === null) ? null : all,
            calls,
            unpricedCalls: unpriced,
            unreadFiles: unread,
            traces: traceRows,
            ...(grouped ? { by: grouped.json } : {}),
            ...(savings ? { ttlSavings: savings } : {}),
          },
          null,
          2,
        ),
      ) + '\n',
    );
  } else if (grouped || asModel !== null || savings) {
    const parts: string[] = [];
    if (grouped) parts.push(grouped.text.trimEnd());
    if (asModel !== null)
      traces.forEach((t, i) =>
        parts.push(`${plainText(basename(t.file), 90)}: ${plainText(repriced[i]!.sentence, 600)}`),
      );
    if (savings) {
      parts.push(
        [
          savings.sentence,
          `  as logged ${formatUsd(savings.loggedUsd)}, with 5-minute caching ${formatUsd(savings.fiveMinuteUsd)}, with 1-hour caching ${formatUsd(savings.oneHourUsd)} (each call priced on its own; docs/guide/cost.md)`,
        ].join('\n'),
      );
    }
    out(parts.join('\n\n') + '\n');
  } else {
    const lines = totals.map(
      (t) =>
        `${(t.usd === null ? 'unknown' : formatUsd(t.usd)).padStart(9)}  ${formatCount(t.calls).padStart(6)} calls${t.unpricedCalls > 0 ? ` (${t.unpricedCalls} not priced)` : ''}  ${plainText(basename(t.file), 90)}`,
    );
    lines.push(
      `${formatUsd(all).padStart(9)}  ${formatCount(calls).padStart(6)} calls in ${totals.length} trace${totals.length === 1 ? '' : 's'}${unpriced > 0 ? `, ${unpriced} not priced (left out, never $0)` : ''}${budget !== null ? `; budget ${formatUsd(budget)} a trace` : ''}`,
    );
    out(lines.join('\n') + '\n');
  }
  let code = 0;
  if (budget !== null) for (const t of totals) code = Math.max(code, budgetExit(t.file, t.usd, budget, err));
  return code;
}

/** What `--by` groups by. */
export const GROUP_KEYS = ['day', 'model', 'agent', 'commit', 'branch'] as const;
type GroupKey = (typeof GROUP_KEYS)[number];

function groupLine(g: CostGroup, label: string): string {
  return `${(g.usd === null ? 'unknown' : formatUsd(g.usd)).padStart(9)}  ${(g.share === null ? '' : `${(g.share * 100).toFixed(1)}%`).padStart(6)}  ${formatCount(g.calls).padStart(6)} calls${g.unpricedCalls > 0 ? ` (${g.unpricedCalls} not priced)` : ''}  ${label}`;
}

/** Sessions (with their sub-agents) as spans of time with the files they edited. */
function threadSpans(traces: readonly LedgerTrace[]): ThreadSpan[] {
  const spans: ThreadSpan[] = [];
  for (const t of traces) {
    const threadOf = new Map<string, string>();
    for (const c of t.calls) threadOf.set(c.session, c.thread);
    const byThread = new Map<string, ThreadSpan>();
    for (const c of t.calls) {
      const s = byThread.get(c.thread) ?? {
        thread: c.thread,
        file: t.file,
        startMs: Infinity,
        endMs: -Infinity,
        cwd: null,
        edited: [],
        usd: null,
        calls: 0,
        unpricedCalls: 0,
      };
      s.calls += 1;
      if (c.usd === null) s.unpricedCalls += 1;
      else s.usd = (s.usd ?? 0) + c.usd;
      if (c.timeMs !== null) {
        s.startMs = Math.min(s.startMs, c.timeMs);
        s.endMs = Math.max(s.endMs, c.timeMs);
      }
      byThread.set(c.thread, s);
    }
    for (const session of t.model.sessions) {
      const s = byThread.get(threadOf.get(session.id) ?? session.id);
      if (!s) continue;
      s.cwd ??= session.cwd;
      s.edited.push(...editedFiles(session));
    }
    for (const s of byThread.values()) if (Number.isFinite(s.startMs)) spans.push(s);
  }
  return spans;
}

/** The commits of each session's repository over its time, joined (see joinCommits). */
async function joinWithGit(
  traces: readonly LedgerTrace[],
  repo: string | null,
  graceMs: number,
  err: (text: string) => void,
): Promise<{ commits: CommitCost[]; unjoined: ThreadSpan[] }> {
  const spans = threadSpans(traces);
  const byRepo = new Map<string, ThreadSpan[]>();
  const noRepo: ThreadSpan[] = [];
  const repoOfDir = new Map<string, string | null>();
  for (const s of spans) {
    let r = repo;
    if (r === null && s.cwd !== null) {
      if (!repoOfDir.has(s.cwd)) repoOfDir.set(s.cwd, await repositoryOf(s.cwd));
      r = repoOfDir.get(s.cwd)!;
    }
    if (r === null) noRepo.push(s);
    else byRepo.set(r, [...(byRepo.get(r) ?? []), s]);
  }
  if (noRepo.length > 0)
    err(
      `agent-trace: ${noRepo.length} session${noRepo.length === 1 ? '' : 's'} not in a git repository here (give one with --repo DIR)\n`,
    );
  const commits: CommitCost[] = [];
  const unjoined: ThreadSpan[] = [...noRepo];
  for (const [r, list] of byRepo) {
    const history: GitCommit[] = await commitsBetween(
      r,
      Math.min(...list.map((s) => s.startMs)),
      Math.max(...list.map((s) => s.endMs)) + graceMs,
    );
    const joined = joinCommits(list, history, graceMs);
    commits.push(...joined.commits);
    unjoined.push(...joined.unjoined);
  }
  return { commits: commits.sort((a, b) => a.timeMs - b.timeMs), unjoined };
}

async function groupCost(
  by: GroupKey,
  traces: readonly LedgerTrace[],
  repo: string | null,
  graceMs: number,
  err: (text: string) => void,
): Promise<{ text: string; json: Record<string, unknown> }> {
  const calls = traces.flatMap((t) => t.calls);
  if (by === 'day' || by === 'model' || by === 'agent') {
    const keyOf =
      by === 'day'
        ? (c: LedgerCall) => (c.timeMs === null ? 'unknown time' : localDay(c.timeMs))
        : by === 'model'
          ? (c: LedgerCall) => c.model ?? 'unknown model'
          : (c: LedgerCall) => c.agent;
    const groups = costBy(calls, keyOf);
    if (by === 'day') groups.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return {
      text: [`cost by ${by}`, ...groups.map((g) => groupLine(g, plainText(g.key, 80)))].join('\n') + '\n',
      json: { key: by, groups },
    };
  }
  const { commits, unjoined } = await joinWithGit(traces, repo, graceMs, err);
  const rule = `sessions joined to the commits made during them or within ${Math.round(graceMs / 60_000)} min after that touch a file they edited; a session's cost shared equally by its commits`;
  const left = unjoined.reduce((s, t) => s + (t.usd ?? 0), 0);
  const leftLine =
    unjoined.length > 0
      ? `${formatUsd(left).padStart(9)}          ${unjoined.length} session${unjoined.length === 1 ? '' : 's'} joined to no commit`
      : null;
  const unjoinedJson = {
    sessions: unjoined.length,
    usd: unjoined.some((t) => t.usd !== null) ? left : null,
    threads: unjoined.map((t) => ({ thread: t.thread, file: t.file, usd: t.usd })),
  };
  if (by === 'commit') {
    const lines = [`cost by commit (${rule})`];
    for (const c of commits)
      lines.push(
        `${(c.usd === null ? 'unknown' : formatUsd(c.usd)).padStart(9)}  ${c.sha.slice(0, 10)}  ${localDateTime(c.timeMs)}  ${plainText(c.branch ?? '(no branch)', 30)}  ${plainText(c.subject, 60)}  (${c.sessions.length} session${c.sessions.length === 1 ? '' : 's'})`,
      );
    if (leftLine) lines.push(leftLine);
    return {
      text: lines.join('\n') + '\n',
      json: {
        key: 'commit',
        graceMs,
        commits: commits.map((c) => ({ ...c, committedAt: new Date(c.timeMs).toISOString() })),
        unjoined: unjoinedJson,
      },
    };
  }
  const branches = new Map<string, { usd: number | null; commits: number }>();
  for (const c of commits) {
    const key = c.branch ?? '(no branch)';
    const b = branches.get(key) ?? { usd: null, commits: 0 };
    b.commits += 1;
    if (c.usd !== null) b.usd = (b.usd ?? 0) + c.usd;
    branches.set(key, b);
  }
  const rows = [...branches].map(([branch, b]) => ({ branch, ...b })).sort((a, b) => (b.usd ?? -1) - (a.usd ?? -1));
  const lines = [`cost by branch (${rule}; a commit on the branch whose tip is nearest)`];
  for (const b of rows)
    lines.push(
      `${(b.usd === null ? 'unknown' : formatUsd(b.usd)).padStart(9)}  ${String(b.commits).padStart(4)} commit${b.commits === 1 ? ' ' : 's'}  ${plainText(b.branch, 60)}`,
    );
  if (leftLine) lines.push(leftLine);
  return { text: lines.join('\n') + '\n', json: { key: 'branch', graceMs, branches: rows, unjoined: unjoinedJson } };
}
