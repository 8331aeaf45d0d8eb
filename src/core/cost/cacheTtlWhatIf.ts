import { formatSignedPercent, formatUsd } from '../text/formatNumbers';
import type { LlmCall, Session } from '../trace/model';
import { pricedTokens } from './callCost';
import type { PricedTokens, SessionCost } from './callCost';
import type { CallRates } from './costTypes';

/**
 * The provider's cache TTL, what-if: which calls found the cache expired after an idle
 * gap, what re-writing it cost, and the session replayed under another TTL with that
 * TTL's write price. Pure and small: the host builds the calls, the webview replays them
 * again for a TTL the user types (docs/cost.md explains the model).
 */

/** One call as the replay needs it. */
export interface TtlCall {
  index: number;
  /** Idle time since the previous call of the session ended; null for the first call or when a time is unknown. */
  gapMs: number | null;
  /** The previous call's cache cannot carry into this one: first call, a compaction just before, a model switch. */
  reset: boolean;
  /** The call's prompt as priced. With automatic caching (no cache writes in the log) the uncached part counts as written. */
  tokens: PricedTokens;
  /** Prefix tokens the provider could cache for the next call: read + written. */
  cacheable: number;
  /** The log has no cache writes (OpenAI-style automatic caching): what is not read is cached without a write price. */
  automaticCaching: boolean;
  /** Per-token prices; null when the call is priced per GPU-hour (the TTL does not change it) or not priced. */
  rates: CallRates | null;
  /** What the call cost as logged; null when unpriced. */
  actualUsd: number | null;
}

/** How a replayed TTL prices a cache write. */
export type TtlWritePrice = '5m' | '1h' | { inputMultiple: number };

export interface TtlOption {
  ttlMs: number;
  write: TtlWritePrice;
}

/** The session replayed under one TTL. */
export interface TtlReplay {
  ttlMs: number;
  /** "5-minute write price", "1-hour write price", "1.5× the input price". */
  writeLabel: string;
  /** Σ over the priced calls; null when a call needs a price the model lacks (`unavailable` says which). */
  costUsd: number | null;
  /** Against the session's cost as logged. */
  deltaUsd: number | null;
  deltaShare: number | null;
  /** Calls whose idle gap outlasted this TTL and lost a prefix they could have read. */
  expiredCalls: number[];
  /** Per expired call: its idle gap, the tokens it wrote again and what that cost beyond reading them (null without prices). */
  rewrites: Array<{ callIndex: number; gapMs: number; tokens: number; usd: number | null }>;
  /** Prefix tokens written again instead of read. */
  rewriteTokens: number;
  /** What writing them again cost beyond reading them. */
  rewriteUsd: number | null;
  unavailable: string | null;
}

export interface TtlWhatIf {
  /** The TTL the session ran with, and how we know. */
  actualTtlMs: number;
  actualTtlBasis: string;
  /** The session's cost as logged, over the calls priced per token or per GPU-hour. */
  actualUsd: number | null;
  pricedCalls: number;
  unpricedCalls: number;
  replays: TtlReplay[];
  /** "With 1-hour caching this session would have cost $X (−Y%); 14 calls re-wrote the cache after a gap longer than 5 min." */
  sentence: string | null;
}

export const FIVE_MINUTES_MS = 5 * 60_000;
export const ONE_HOUR_MS = 60 * 60_000;

/**
 * The calls of a session as the replay needs them, made anew each time they are walked:
 * a million of them at once were ~150 MB, walked one at a time they are a few bytes each
 * for a moment. `length` is the number of calls.
 */
export interface TtlCallSource extends Iterable<TtlCall> {
  readonly length: number;
}

/** The calls of a session as the replay needs them, walked as they are made (see TtlCallSource). */
export function ttlCallSource(session: Session, cost: SessionCost): TtlCallSource {
  return { length: session.calls.length, [Symbol.iterator]: () => ttlCallsOf(session, cost) };
}

/** The calls of a session as the replay needs them, as an array (a page that replays them again keeps them). */
export function ttlCalls(session: Session, cost: SessionCost): TtlCall[] {
  return [...ttlCallsOf(session, cost)];
}

function* ttlCallsOf(session: Session, cost: SessionCost): Generator<TtlCall> {
  const resets = new Set(session.compactions.map((c) => c.beforeCall));
  let previous: LlmCall | null = null;
  for (let i = 0; i < session.calls.length; i++) {
    const call = session.calls[i]!;
    const split = pricedTokens(call);
    const rates = cost.calls.ratesOf(i);
    const tokens: PricedTokens =
      'missing' in split
        ? { uncached: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: 0 }
        : { ...split.tokens };
    // Automatic caching (OpenAI, DeepSeek): nothing is "written" in the log and writing has no price of its own, so
    // the whole prompt is cached for the next call. A log that only leaves the writes out (a provider with a write
    // price) keeps its uncached tokens uncached.
    const automaticCaching = call.tokens.cacheWrite === null && (rates === null || rates.cacheWrite5m === rates.input);
    if (automaticCaching) {
      tokens.cacheWrite5m += tokens.uncached;
      tokens.uncached = 0;
    }
    const start = call.startMs ?? call.endMs;
    const gapMs =
      previous !== null && start !== null && previous.endMs !== null && start >= previous.endMs
        ? start - previous.endMs
        : null;
    const reset =
      previous === null ||
      resets.has(i) ||
      (previous.model !== null && call.model !== null && previous.model !== call.model);
    previous = call;
    yield {
      index: call.index,
      gapMs,
      reset,
      tokens,
      cacheable: tokens.cacheRead + tokens.cacheWrite5m + tokens.cacheWrite1h,
      automaticCaching,
      rates,
      actualUsd: cost.calls.usdOf(i),
    };
  }
}

/** The TTL the log shows: 1 hour when most written tokens were 1-hour writes, else 5 minutes. */
export function observedTtl(calls: Iterable<TtlCall>): { ttlMs: number; basis: string } {
  let fiveMin = 0;
  let oneHour = 0;
  for (const c of calls) {
    if (c.automaticCaching) continue;
    oneHour += c.tokens.cacheWrite1h;
    fiveMin += c.tokens.cacheWrite5m;
  }
  if (oneHour > fiveMin) return { ttlMs: ONE_HOUR_MS, basis: 'most cache writes in the log are 1-hour writes' };
  if (fiveMin > 0) return { ttlMs: FIVE_MINUTES_MS, basis: 'the log’s cache writes are 5-minute writes' };
  return {
    ttlMs: FIVE_MINUTES_MS,
    basis: 'assumed: the provider keeps a cached prefix about 5 minutes after its last use',
  };
}

function writeRate(rates: CallRates, write: TtlWritePrice): number | null {
  if (write === '5m') return rates.cacheWrite5m;
  if (write === '1h') return rates.cacheWrite1h;
  return rates.input * write.inputMultiple;
}

export function writeLabel(write: TtlWritePrice): string {
  if (write === '5m') return '5-minute write price';
  if (write === '1h') return '1-hour write price';
  return `${write.inputMultiple}× the input price`;
}

/** A TTL's default write price: the shortest provider TTL that covers it (5 minutes or 1 hour). */
export function defaultWritePrice(ttlMs: number): TtlWritePrice {
  return ttlMs <= FIVE_MINUTES_MS ? '5m' : '1h';
}

/**
 * Replays the calls under one TTL. A call's reusable prefix is what it read; after a gap
 * the log shows the cache outlived by (longer than the TTL it ran with), it is what the
 * previous call left cached, so a longer TTL can win it back. A call whose gap outlasts
 * the replayed TTL reads nothing and writes its whole cacheable prefix again.
 */
export function replayTtl(
  calls: Iterable<TtlCall>,
  option: TtlOption,
  actual: { ttlMs: number } = observedTtl(calls),
): TtlReplay {
  let cost = 0;
  let actualUsd = 0;
  let rewriteTokens = 0;
  let rewriteUsd = 0;
  const expired: number[] = [];
  const rewrites: TtlReplay['rewrites'] = [];
  let unavailable: string | null = null;
  let previous: TtlCall | null = null;
  for (const c of calls) {
    const prev = previous;
    previous = c;
    if (c.actualUsd === null) continue;
    actualUsd += c.actualUsd;
    if (c.rates === null) {
      cost += c.actualUsd;
      continue;
    }
    const read = c.tokens.cacheRead;
    let reusable = read;
    let readNow = read;
    if (!c.reset && prev !== null && c.gapMs !== null) {
      if (c.gapMs > actual.ttlMs) reusable = Math.max(read, Math.min(c.cacheable, prev.cacheable));
      readNow = c.gapMs <= option.ttlMs ? reusable : c.gapMs > actual.ttlMs ? read : 0;
    }
    const write = writeRate(c.rates, option.write);
    if (write === null) {
      unavailable ??= `no 1-hour cache-write price for call ${c.index + 1}'s model`;
      continue;
    }
    const written = c.cacheable - readNow;
    cost +=
      c.tokens.uncached * c.rates.input +
      readNow * c.rates.cacheRead +
      written * write +
      c.tokens.output * c.rates.output;
    if (reusable > readNow) {
      const extra = (reusable - readNow) * (write - c.rates.cacheRead);
      expired.push(c.index);
      rewrites.push({ callIndex: c.index, gapMs: c.gapMs!, tokens: reusable - readNow, usd: extra });
      rewriteTokens += reusable - readNow;
      rewriteUsd += extra;
    }
  }
  const costUsd = unavailable ? null : cost;
  return {
    ttlMs: option.ttlMs,
    writeLabel: writeLabel(option.write),
    costUsd,
    deltaUsd: costUsd === null ? null : costUsd - actualUsd,
    deltaShare: costUsd === null || actualUsd === 0 ? null : (costUsd - actualUsd) / actualUsd,
    expiredCalls: expired,
    rewrites,
    rewriteTokens,
    rewriteUsd: unavailable ? null : rewriteUsd,
    unavailable,
  };
}

/** The longest TTL a user may replay (a week), in minutes. */
export const MAX_CUSTOM_TTL_MIN = 7 * 24 * 60;
/** The dearest write price a user may type, as a multiple of the input price. */
export const MAX_WRITE_MULTIPLE = 1000;

/** A TTL the user types: minutes, and the write price as a multiple of the input price (null: the provider TTL that covers it). */
export interface CustomTtl {
  minutes: number;
  writeMultiple: number | null;
}

/** Replays the session under the user's TTL, against the TTL it ran with. */
export function customReplay(
  calls: Iterable<TtlCall>,
  what: Pick<TtlWhatIf, 'actualTtlMs'>,
  custom: CustomTtl,
): TtlReplay {
  const ttlMs = custom.minutes * 60_000;
  return replayTtl(
    calls,
    {
      ttlMs,
      write: custom.writeMultiple === null ? defaultWritePrice(ttlMs) : { inputMultiple: custom.writeMultiple },
    },
    { ttlMs: what.actualTtlMs },
  );
}

/** The replays for 5 minutes, 1 hour and an optional custom TTL, with the sentence. */
export function cacheTtlWhatIf(calls: TtlCallSource, custom: TtlOption | null = null): TtlWhatIf {
  const actual = observedTtl(calls);
  const options: TtlOption[] = [
    { ttlMs: FIVE_MINUTES_MS, write: '5m' },
    { ttlMs: ONE_HOUR_MS, write: '1h' },
  ];
  if (custom) options.push(custom);
  const replays = options.map((o) => replayTtl(calls, o, actual));
  let pricedCalls = 0;
  let pricedUsd = 0;
  for (const c of calls) {
    if (c.actualUsd === null) continue;
    pricedCalls += 1;
    pricedUsd += c.actualUsd;
  }
  const actualUsd = pricedCalls === 0 ? null : pricedUsd;
  return {
    actualTtlMs: actual.ttlMs,
    actualTtlBasis: actual.basis,
    actualUsd,
    pricedCalls,
    unpricedCalls: calls.length - pricedCalls,
    replays,
    sentence: ttlSentence(actual.ttlMs, replays[0]!, replays[1]!, calls.length - pricedCalls, actualUsd),
  };
}

function ttlSentence(
  actualTtlMs: number,
  fiveMin: TtlReplay,
  oneHour: TtlReplay,
  unpriced: number,
  actualUsd: number | null,
): string | null {
  if (actualUsd === null) return null;
  const ranHour = actualTtlMs === ONE_HOUR_MS;
  const other = ranHour ? fiveMin : oneHour;
  if (other.costUsd === null || other.deltaShare === null) return null;
  const n = fiveMin.expiredCalls.length;
  const calls = `${n} call${n === 1 ? '' : 's'}`;
  const head = `With ${ranHour ? '5-minute' : '1-hour'} caching this session would have cost ${formatUsd(other.costUsd)} (${formatSignedPercent(other.deltaShare)})`;
  const tail = ranHour
    ? `${calls} would have re-written the cache after a gap longer than 5 min`
    : `${calls} re-wrote the cache after a gap longer than 5 min`;
  const left = unpriced > 0 ? ` (${unpriced} unpriced call${unpriced === 1 ? '' : 's'} left out)` : '';
  return `${head}; ${tail}.${left}`;
}
