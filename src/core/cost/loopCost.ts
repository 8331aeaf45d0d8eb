import { errorTokens, laterCallsReading } from '../analysis/retryLoops';
import type { FailingToolCall, RetryLoop } from '../analysis/retryLoops';
import type { Session, ToolCall } from '../trace/model';
import { pricedTokens } from './callCost';
import type { SessionCost } from './callCost';
import type { CallRates } from './costTypes';

/**
 * Retry loops and failing tool calls in dollars: the same tokens the loop analysis counts
 * (docs/guide/inspector.md, "How the analyses decide"), each priced at the rate of the call that pays for
 * it. An attempt's output at its own call's output rate; an error text at the rate the next
 * call paid to prefill it (its appended tokens' blended rate: uncached or written to the
 * cache), then at each later call's cache-read rate while it stays in the context.
 */

/** $/token the call paid for its appended tokens (uncached and cache writes together), or null when unpriced. */
export function appendRate(session: Session, rates: CallRates | null, callIndex: number): number | null {
  if (!rates) return null;
  const split = pricedTokens(session.calls[callIndex]!);
  if ('missing' in split) return null;
  const t = split.tokens;
  const appended = t.uncached + t.cacheWrite5m + t.cacheWrite1h;
  if (appended === 0) return rates.input;
  const write1h = rates.cacheWrite1h ?? rates.cacheWrite5m;
  return (t.uncached * rates.input + t.cacheWrite5m * rates.cacheWrite5m + t.cacheWrite1h * write1h) / appended;
}

/** Dollars to carry `tokens` from after `callIndex` through the calls that re-read them, or null when one is unpriced. */
function carryUsd(session: Session, cost: SessionCost, callIndex: number, tokens: number): number | null {
  const later = laterCallsReading(session, callIndex);
  let usd = 0;
  for (let j = callIndex + 1; j <= callIndex + later; j++) {
    const rates = cost.calls.ratesOf(j);
    const rate = j === callIndex + 1 ? appendRate(session, rates, j) : (rates?.cacheRead ?? null);
    if (rate === null) return null;
    usd += tokens * rate;
  }
  return usd;
}

function toolOf(session: Session, callIndex: number, toolId: string): ToolCall | null {
  return session.calls[callIndex]?.toolCalls.find((t) => t.id === toolId) ?? null;
}

export interface LoopCost {
  /** The attempts' outputs and the first prefill of each error text; null when a call involved is unpriced. */
  wastedUsd: number | null;
  /** Each error text at the rate of every later call that re-read it. */
  carriedForwardUsd: number | null;
}

export function loopCost(loop: RetryLoop, session: Session, cost: SessionCost): LoopCost {
  return loopCostOf(loop, session, cost, true);
}

/**
 * The loop's wasted dollars alone (`loopCost(…).wastedUsd`, the same sum in the same order),
 * without the carry: that walks every later call for each attempt, and the team tables hold only the waste.
 */
export function loopWastedUsd(loop: RetryLoop, session: Session, cost: SessionCost): number | null {
  return loopCostOf(loop, session, cost, false).wastedUsd;
}

function loopCostOf(loop: RetryLoop, session: Session, cost: SessionCost, withCarry: boolean): LoopCost {
  let wasted: number | null = 0;
  let carried: number | null = 0;
  const counted = new Set<number>();
  for (const a of loop.attempts) {
    const call = session.calls[a.callIndex]!;
    const rates = cost.calls.ratesOf(a.callIndex);
    if (!counted.has(a.callIndex) && call.tokens.output !== null) {
      counted.add(a.callIndex);
      wasted = wasted === null || rates === null ? null : wasted + call.tokens.output * rates.output;
    }
    const tool = toolOf(session, a.callIndex, a.toolId);
    const tokens = tool ? errorTokens(tool) : null;
    if (tokens === null) continue;
    const next = session.calls[a.callIndex + 1];
    if (next) {
      const rate = appendRate(session, cost.calls.ratesOf(next.index), next.index);
      wasted = wasted === null || rate === null ? null : wasted + tokens * rate;
    }
    if (!withCarry) continue;
    const carry = carryUsd(session, cost, a.callIndex, tokens);
    carried = carried === null || carry === null ? null : carried + carry;
  }
  return { wastedUsd: wasted, carriedForwardUsd: withCarry ? carried : null };
}

/** What one failing tool call's error text costs to carry (its `carryForwardTokens` in dollars). */
export function failingCarryUsd(failing: FailingToolCall, session: Session, cost: SessionCost): number | null {
  if (failing.errorTokens === null) return null;
  return carryUsd(session, cost, failing.callIndex, failing.errorTokens);
}
