import type { FormatId, Session } from '../trace/model';

/**
 * What a session cost, call by call, in US dollars. Null is "unknown" (an unpriced
 * model, a call without token counts), never $0.
 *
 * The seam to the price module: until per-call prices are computed by the core cost
 * module, every call is unpriced and the rows say "cost unknown". The index stores
 * whatever this returns, so nothing else changes when prices arrive.
 */
export interface SessionCostFigures {
  /** Σ over the priced calls; null when no call could be priced. */
  totalUsd: number | null;
  /** Each call's cost, by call index. */
  perCallUsd: Array<number | null>;
  unpricedCalls: number;
}

/** Prices a session's calls (see above: unknown until the price module provides them). */
export function sessionCost(session: Session, _format: FormatId | null): SessionCostFigures {
  return { totalUsd: null, perCallUsd: session.calls.map(() => null), unpricedCalls: session.calls.length };
}
