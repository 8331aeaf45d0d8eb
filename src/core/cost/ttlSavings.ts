import { formatUsd } from '../text/formatNumbers';
import type { TraceModel } from '../trace/model';
import type { TraceCost } from './callCost';
import { cacheTtlWhatIf, ONE_HOUR_MS, ttlCallSource } from './cacheTtlWhatIf';

/**
 * The provider cache TTL what-if (cacheTtlWhatIf, docs/guide/cost.md) summed over many
 * sessions: what they cost as logged, what they would have cost with 5-minute and with
 * 1-hour caching, and how many calls re-wrote the cache after an idle gap longer than 5 minutes.
 */
export interface TtlSavings {
  sessions: number;
  /** As logged, over the calls the replays priced. */
  loggedUsd: number;
  fiveMinuteUsd: number;
  oneHourUsd: number;
  /** loggedUsd − oneHourUsd: positive when 1-hour caching would have saved. */
  oneHourSavingUsd: number;
  /** Calls that found the 5-minute cache expired and wrote their prefix again. */
  rewritesAfter5m: number;
  /** Sessions left out because a replay needed a price their model lacks. */
  sessionsLeftOut: number;
}

/** Adds one trace's sessions (sub-agents included) to the sums. */
export function addTtlSavings(sum: TtlSavings, model: TraceModel, cost: TraceCost): void {
  model.sessions.forEach((s, i) => {
    if (s.calls.length === 0) return;
    const what = cacheTtlWhatIf(ttlCallSource(s, cost.sessions[i]!));
    const five = what.replays[0]!;
    const hour = what.replays[1]!;
    if (what.actualUsd === null) return;
    if (five.costUsd === null || hour.costUsd === null) {
      sum.sessionsLeftOut += 1;
      return;
    }
    sum.sessions += 1;
    sum.loggedUsd += what.actualUsd;
    sum.fiveMinuteUsd += five.costUsd;
    sum.oneHourUsd += hour.costUsd;
    sum.oneHourSavingUsd += what.actualUsd - hour.costUsd;
    // Under 5 minutes, the calls whose gap outlasted it (as logged for a 5-minute session).
    sum.rewritesAfter5m += what.actualTtlMs === ONE_HOUR_MS ? 0 : five.expiredCalls.length;
  });
}

/** Sums that start at zero. */
export function emptyTtlSavings(): TtlSavings {
  return {
    sessions: 0,
    loggedUsd: 0,
    fiveMinuteUsd: 0,
    oneHourUsd: 0,
    oneHourSavingUsd: 0,
    rewritesAfter5m: 0,
    sessionsLeftOut: 0,
  };
}

/** "1-hour caching would have saved $14.20 over 30 days; 212 calls re-wrote the cache after a gap longer than 5 min." */
export function ttlSavingsSentence(s: TtlSavings, period: string): string {
  const n = s.rewritesAfter5m;
  const calls = `${n} call${n === 1 ? '' : 's'} re-wrote the cache after a gap longer than 5 min`;
  const head =
    s.oneHourSavingUsd > 0
      ? `1-hour caching would have saved ${formatUsd(s.oneHourSavingUsd)} ${period}`
      : `1-hour caching would have saved nothing ${period} (it would have cost ${formatUsd(-s.oneHourSavingUsd)} more)`;
  const left =
    s.sessionsLeftOut > 0
      ? ` (${s.sessionsLeftOut} session${s.sessionsLeftOut === 1 ? '' : 's'} without a 1-hour price left out)`
      : '';
  return `${head}; ${calls}.${left}`;
}
