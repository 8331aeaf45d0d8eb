import { formatSignedPercent, formatUsd } from '../text/formatNumbers';
import type { TraceModel } from '../trace/model';
import { priceCall } from './callCost';
import type { TraceCost } from './callCost';
import type { PriceBook } from './costTypes';

/**
 * The same calls priced as if another model had served them: each call keeps its token
 * split (uncached, cache read, 5-minute and 1-hour writes, output), its date and its
 * long-context size, and takes model M's rates for them, so M's cache prices apply (a
 * provider without write prices bills writes as input). The counts stay the logged
 * model's: M's tokenizer would count the same text differently, and M would have answered
 * differently; the sentence says so.
 */

/** The trace on model M, against what it cost as logged over the calls priced both ways. */
export interface Repriced {
  model: string;
  /** Σ on M over the calls priced both ways; null when none was. */
  usd: number | null;
  /** Σ as logged over the same calls. */
  loggedUsd: number | null;
  deltaUsd: number | null;
  deltaShare: number | null;
  /** Calls priced both ways, and those left out (no price on M or as logged). */
  calls: number;
  leftOut: number;
  /** Why calls could not be priced on M, once per reason. */
  reasons: string[];
  sentence: string;
}

/** The tokenizer caveat every re-pricing carries. */
export const TOKENIZER_NOTE =
  'The token counts are the logged model’s: a different tokenizer would count the same text differently, and another model would not have answered the same way.';

/** Re-prices every call of the trace (sub-agents included) on `as`. */
export function repriceOn(model: TraceModel, cost: TraceCost, book: PriceBook, as: string): Repriced {
  let usd = 0;
  let logged = 0;
  let both = 0;
  let leftOut = 0;
  const reasons = new Set<string>();
  model.sessions.forEach((s, si) => {
    const costs = cost.sessions[si]!.calls;
    s.calls.forEach((c, i) => {
      const was = costs.usdOf(i);
      // A service tier or region is the logged provider's: on M the call is priced at its standard rate.
      const now = priceCall({ ...c, model: as, serviceTier: null, inferenceGeo: null }, book, {
        providerHint: null,
        selfHosted: false,
      }).cost;
      if (now.usd === null || was === null) {
        leftOut += 1;
        if (now.unpriced) reasons.add(now.unpriced);
        return;
      }
      usd += now.usd;
      logged += was;
      both += 1;
    });
  });
  const priced = both > 0;
  const deltaShare = priced && logged > 0 ? (usd - logged) / logged : null;
  const left =
    leftOut > 0
      ? ` (${leftOut} call${leftOut === 1 ? '' : 's'} left out: ${[...reasons].join('; ') || 'not priced as logged'})`
      : '';
  const sentence = priced
    ? `On ${as} this session would have cost ${formatUsd(usd)}, ${formatSignedPercent(deltaShare)} against ${formatUsd(logged)} as logged${left}. ${TOKENIZER_NOTE}`
    : `No call could be priced on ${as}${left}.`;
  return {
    model: as,
    usd: priced ? usd : null,
    loggedUsd: priced ? logged : null,
    deltaUsd: priced ? usd - logged : null,
    deltaShare,
    calls: both,
    leftOut,
    reasons: [...reasons],
    sentence,
  };
}
