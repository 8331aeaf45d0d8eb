import { priceTrace } from '../core/cost/callCost';
import type { TraceCost } from '../core/cost/callCost';
import { ledgerOf } from '../core/cost/callLedger';
import type { LedgerCall } from '../core/cost/callLedger';
import type { PriceBook } from '../core/cost/costTypes';
import { matchesFilter } from '../core/sessions/sessionQuery';
import { plainText } from '../core/sessions/sessionText';
import { parseTrace } from '../core/trace/parseTrace';
import type { TraceModel } from '../core/trace/model';
import { readTraceFiles } from '../node/traceFiles';
import { isDirectory, parseSessionsArgs, syncLocalSessions, traceFilesIn } from './sessions';
import type { SessionsArgs } from './sessions';

/**
 * The calls that `windows` and `cost --by` group: from the files named, or else from this
 * machine's sessions as `agent-trace sessions` finds them (its index and its options).
 */

/** One trace read for a ledger: its model is kept for the commands that look further (edited files, re-pricing). */
export interface LedgerTrace {
  file: string;
  model: TraceModel;
  cost: TraceCost;
  calls: LedgerCall[];
}

/** The files given, or the local sessions that pass `args.filter`; unreadable ones are reported on `err` and left out. */
export async function readLedger(
  files: readonly string[],
  args: SessionsArgs,
  book: PriceBook,
  now: number,
  err: (text: string) => void,
): Promise<{ traces: LedgerTrace[]; unread: number; looked: string }> {
  let paths: string[] = [...files];
  let looked = files.join(', ');
  if (paths.length === 0) {
    const { index, rows, roots } = await syncLocalSessions(args.roots, args.index, now, err);
    index.close();
    looked = roots.map((r) => `${r.agent.id} ${r.root}`).join(', ');
    const mains = rows.filter(
      (r) =>
        r.fileStatus === 'ok' &&
        (r.role === 'main' || !rows.some((p) => p.fileId === r.fileId && p.key === r.parentKey)),
    );
    paths = [...new Set(mains.filter((r) => matchesFilter(r, args.filter)).map((r) => r.path))];
  }
  // A folder stands for the traces in it, as for analyze DIR.
  const expanded: string[] = [];
  for (const p of paths) {
    if (await isDirectory(p)) expanded.push(...(await traceFilesIn(p)));
    else expanded.push(p);
  }
  paths = expanded;
  const traces: LedgerTrace[] = [];
  let unread = 0;
  for (const path of paths) {
    try {
      const parsed = await parseTrace(await readTraceFiles(path));
      if (parsed.problem) {
        unread += 1;
        err(`agent-trace: ${plainText(path, 200)}: not read (${plainText(parsed.problem.message, 200)})\n`);
        continue;
      }
      const cost = priceTrace(parsed.model, book);
      traces.push({ file: path, model: parsed.model, cost, calls: ledgerOf(parsed.model, cost, path) });
    } catch (e) {
      unread += 1;
      err(`agent-trace: ${plainText(path, 200)}: ${e instanceof Error ? e.message : String(e)}\n`);
    }
  }
  return { traces, unread, looked };
}

/** `sessions`' options plus the command's own; positional arguments are files. */
export function parseLedgerArgs(
  argv: readonly string[],
  now: number,
  help: string,
  own: (argv: readonly string[], i: number) => number | null,
): { args: SessionsArgs; files: string[] } {
  const files: string[] = [];
  const args = parseSessionsArgs(
    argv,
    now,
    (a, i) => {
      const used = own(a, i);
      if (used !== null) return used;
      if (!a[i]!.startsWith('-')) {
        files.push(a[i]!);
        return i;
      }
      return null;
    },
    help,
  );
  return { args, files };
}
