/**
 * What a call costs, in US dollars, and the prices behind it. Pure types: the webview
 * imports these (and the TTL replay) without the price library, which only the host and
 * the CLI load (src/core/cost/priceBook.ts).
 */

/** What a call's dollars are spent on. `gpuTime` is for self-hosted models priced per GPU-hour. */
export type CostKind = 'input' | 'cacheRead' | 'cacheWrite5m' | 'cacheWrite1h' | 'output' | 'gpuTime';

export const COST_KINDS: readonly CostKind[] = [
  'input',
  'cacheRead',
  'cacheWrite5m',
  'cacheWrite1h',
  'output',
  'gpuTime',
];

/** Dollars by kind; every kind present (0 when none). */
export type CostByKind = Record<CostKind, number>;

/**
 * One call's prices in USD per token, for its own date, its own long-context tier (chosen
 * by its own input size) and its service tier. `cacheWrite1h` is null when the model has
 * a write price but no 1-hour one. A provider without cache-write prices (OpenAI, DeepSeek)
 * has both write rates equal to `input`: writing costs nothing extra there.
 */
export interface CallRates {
  input: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number | null;
  output: number;
}

/** Where a price came from. */
export type PriceOrigin = 'genai-prices' | 'supplement' | 'user';

/** The answer of a price book for one call. */
export type PriceQuote =
  | {
      kind: 'tokens';
      rates: CallRates;
      origin: PriceOrigin /** e.g. "anthropic/claude-haiku-4-5". */;
      priceId: string;
      notes: string[];
    }
  | { kind: 'gpu-time'; usdPerHour: number; origin: 'user'; priceId: string; notes: string[] }
  | {
      kind: 'unknown' /** Why, in words naming the model or tier. */;
      reason: string /** Groups unknown calls for one diagnostic. */;
      key: string;
    };

/** What the price book needs to know about a call. */
export interface PriceQuery {
  model: string | null;
  /** Provider id the trace's format implies (`anthropic` for Claude Code, `openai` for Codex), else null. */
  providerHint: string | null;
  /** True for serving traces of one's own server: only user prices apply. */
  selfHosted: boolean;
  /** When the call ran (ms since the epoch), for price history; null = unknown. */
  timeMs: number | null;
  /** Whole prompt of this call: it picks the long-context tier. */
  inputTokens: number;
  serviceTier: string | null;
  inferenceGeo: string | null;
}

/** Looks up prices. Implemented by priceBook.ts (library, supplement, user prices). */
export interface PriceBook {
  quote(query: PriceQuery): PriceQuote;
  /** Where the prices come from, for `cost.priceSource`. */
  readonly source: string;
}

/** One call priced. `usd` is null when the price or a needed count is unknown (never 0 for "unknown"). */
export interface CallCost {
  usd: number | null;
  byKind: CostByKind | null;
  /** Null for unknown prices and for GPU-time prices. */
  rates: CallRates | null;
  priceId: string | null;
  origin: PriceOrigin | null;
  /** Why `usd` is null. */
  unpriced: string | null;
  /** Assumptions made, in words ("cache writes have no TTL split: priced at the 5-minute rate"). */
  notes: string[];
}

/** Totals over calls. Unpriced calls are counted, never added as 0. */
export interface CostSummary {
  /** Σ over priced calls; null when there were calls and none could be priced. */
  totalUsd: number | null;
  byModel: Record<string, { usd: number | null; calls: number; unpricedCalls: number }>;
  byKind: CostByKind;
  pricedCalls: number;
  unpricedCalls: number;
  priceSource: string;
}

export function zeroByKind(): CostByKind {
  return { input: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0, output: 0, gpuTime: 0 };
}
