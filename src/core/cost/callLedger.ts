import type { TraceCost } from './callCost';
import type { FormatId, TraceModel } from '../trace/model';

/**
 * Every priced call of some traces as one flat list: the rows that plan windows, budgets
 * and the cost tables (by day, model, agent, commit) group in their own ways. One row a
 * call: a few numbers and shared strings, so a month of sessions stays small.
 */

/** One call, priced. */
export interface LedgerCall {
  /** When it started (or ended, when the start is unknown); null when the trace has no time for it. */
  timeMs: number | null;
  /** When it ended (its usage was reported); null when unknown. */
  endMs: number | null;
  /** The session it belongs to (a sub-agent's own id). */
  session: string;
  /** The main session of its file: sub-agents count towards it. */
  thread: string;
  agent: FormatId | 'unknown';
  model: string | null;
  /** Whole prompt (cached included) + output; 0 for unknown counts. */
  tokens: number;
  usd: number | null;
  /** The trace file it came from, as the caller named it. */
  file: string;
}

/** The calls of one parsed and priced trace. */
export function ledgerOf(model: TraceModel, cost: TraceCost, file: string): LedgerCall[] {
  const out: LedgerCall[] = [];
  const main = model.sessions.find((s) => s.role === 'main') ?? model.sessions[0];
  model.sessions.forEach((s, si) => {
    const costs = cost.sessions[si]!.calls;
    // A sub-agent's thread is its parent's when the parent is in the file, else its own.
    const thread =
      s.parentId !== null && model.sessions.some((p) => p.id === s.parentId)
        ? rootOf(model, s.parentId)
        : s.role === 'main'
          ? s.id
          : (main?.id ?? s.id);
    s.calls.forEach((c, i) => {
      out.push({
        timeMs: c.startMs ?? c.endMs,
        endMs: c.endMs,
        session: s.id,
        thread,
        agent: model.format ?? 'unknown',
        model: c.model,
        tokens: (c.tokens.input ?? 0) + (c.tokens.output ?? 0),
        usd: costs.usdOf(i),
        file,
      });
    });
  });
  return out;
}

function rootOf(model: TraceModel, id: string): string {
  let at = id;
  for (let guard = 0; guard < 64; guard++) {
    const s = model.sessions.find((x) => x.id === at);
    if (!s || s.parentId === null || !model.sessions.some((p) => p.id === s.parentId)) return at;
    at = s.parentId;
  }
  return at;
}
