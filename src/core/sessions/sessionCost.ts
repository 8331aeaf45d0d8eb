import { priceSession } from '../cost/callCost';
import type { PriceBook } from '../cost/costTypes';
import type { FormatId, Session } from '../trace/model';

/**
 * What a session cost, call by call, in US dollars, from the core cost module (each call
 * priced on its own: its date, its long-context tier, its cache writes by TTL). Null is
 * "unknown" (an unpriced model, a call without token counts), never $0.
 */
export interface SessionCostFigures {
  /** Σ over the priced calls; null when no call could be priced. */
  totalUsd: number | null;
  /** Each call's cost, by call index. */
  perCallUsd: Array<number | null>;
  unpricedCalls: number;
}

/** Prices a session's calls; without a price book every call is unpriced. */
export function sessionCost(session: Session, format: FormatId | null, book: PriceBook | null): SessionCostFigures {
  if (book === null)
    return { totalUsd: null, perCallUsd: session.calls.map(() => null), unpricedCalls: session.calls.length };
  const cost = priceSession(session, format, book);
  return {
    totalUsd: session.calls.length === 0 ? null : cost.totalUsd,
    perCallUsd: Array.from({ length: cost.calls.length }, (_, i) => cost.calls.usdOf(i)),
    unpricedCalls: cost.unpricedCalls,
  };
}
