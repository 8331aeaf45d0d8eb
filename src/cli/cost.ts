import { basename } from 'node:path';
import { createPriceBook } from '../core/cost/priceBook';
import { formatCount, formatUsd } from '../core/report/formatNumbers';
import { overBudgetText } from '../core/sessions/budgetWatch';
import { plainText } from '../core/sessions/sessionText';
import { terminalJson, terminalText } from '../core/text/safeText';
import { UsageError } from '../core/text/usageError';
import { printError } from './output';
import { parseLedgerArgs, readLedger } from './ledger';
import type { LedgerTrace } from './ledger';

export const COST_USAGE = `Usage: agent-trace cost [FILE|DIR...] [--json] [--budget USD] [options]

What each trace cost (its sessions and sub-agents, every call priced on its own:
docs/guide/cost.md) and the total. Without FILEs: this machine's sessions, as
agent-trace sessions finds them (--since, --agent, --project, --root, --index work
the same).

  --budget USD      exit with 3 when a trace cost more than USD, saying by how much
  --json            every figure as JSON (docs/reference/json-output.md)

Exit status: 0 ok, 1 nothing could be read, 2 usage error, 3 over the --budget.
`;

const HELP = 'agent-trace cost --help';

/** Over the budget: says by how much on stderr and gives exit status 3; an unknown cost is said, not failed. */
export function budgetExit(file: string, usd: number | null, budget: number, err: (text: string) => void = (t) => printError(t.trimEnd())): number {
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
  return { file: t.file, calls: t.calls.length, unpricedCalls: t.calls.length - priced, usd: total, overBudgetUsd: budget !== null && total !== null && total > budget ? total - budget : null };
}

/** `agent-trace cost`: exit status. */
export async function runCost(argv: readonly string[], write: (text: string) => void, writeErr: (text: string) => void, now = Date.now()): Promise<number> {
  const out = (text: string): void => write(terminalText(text));
  const err = (text: string): void => writeErr(terminalText(text));
  if (argv.includes('--help') || argv.includes('-h')) {
    out(COST_USAGE);
    return 0;
  }
  let budget: number | null = null;
  const { args, files } = parseLedgerArgs(argv, now, HELP, (a, i) => {
    if (a[i] === '--budget') {
      const n = Number(a[i + 1]);
      if (a[i + 1] === undefined || !Number.isFinite(n) || n <= 0) throw new UsageError(`--budget needs dollars > 0, not "${a[i + 1] ?? ''}"`, HELP);
      budget = n;
      return i + 1;
    }
    return null;
  });
  const { traces, unread, looked } = await readLedger(files, args, createPriceBook(), now, err);
  if (traces.length === 0) {
    err(`agent-trace: no trace read${unread > 0 ? '' : ` (looked in ${plainText(looked, 400)})`}\n`);
    return 1;
  }
  const totals = traces.map((t) => traceTotal(t, budget));
  const all = totals.reduce((s, t) => s + (t.usd ?? 0), 0);
  const unpriced = totals.reduce((s, t) => s + t.unpricedCalls, 0);
  const calls = totals.reduce((s, t) => s + t.calls, 0);
  if (args.json) {
    write(terminalJson(JSON.stringify({ budgetUsd: budget, totalUsd: totals.every((t) => t.usd === null) ? null : all, calls, unpricedCalls: unpriced, unreadFiles: unread, traces: totals }, null, 2)) + '\n');
  } else {
    const lines = totals.map((t) => `${(t.usd === null ? 'unknown' : formatUsd(t.usd)).padStart(9)}  ${formatCount(t.calls).padStart(6)} calls${t.unpricedCalls > 0 ? ` (${t.unpricedCalls} not priced)` : ''}  ${plainText(basename(t.file), 90)}`);
    lines.push(`${formatUsd(all).padStart(9)}  ${formatCount(calls).padStart(6)} calls in ${totals.length} trace${totals.length === 1 ? '' : 's'}${unpriced > 0 ? `, ${unpriced} not priced (left out, never $0)` : ''}${budget !== null ? `; budget ${formatUsd(budget)} a trace` : ''}`);
    out(lines.join('\n') + '\n');
  }
  let code = 0;
  if (budget !== null) for (const t of totals) code = Math.max(code, budgetExit(t.file, t.usd, budget, err));
  return code;
}
