import { calcPrice } from '@pydantic/genai-prices';
import type { ModelInfo, ModelPrice, Provider, Usage } from '@pydantic/genai-prices';
import type { CallRates } from './costTypes';

// The adapter to @pydantic/genai-prices (github.com/pydantic/genai-prices): it finds the
// model, picks the price in force on the call's date and the long-context tier of the
// call's own input, and splits usage into what each rate applies to. This file only asks
// it questions; it never re-implements those rules. The library is pure JavaScript (no
// Node APIs) but carries its whole price list (≈500 kB minified), so only the host and
// the CLI import this file, never the webview (enforced by lint).

/** The library version bundled (package.json pins it; a unit test checks they agree). */
export const GENAI_PRICES_VERSION = '0.1.8';

/** A model the library (or a custom provider in its format) prices. */
export interface PricedModel {
  /** A provider holding only this model, so each price lookup matches at once. */
  provider: Provider;
  model: ModelInfo;
  /** "provider/model" as the library names them. */
  priceId: string;
}

/** Rates of one call and whether a long-context tier applied. */
export interface ResolvedRates {
  rates: CallRates;
  /** The tier the call's input size selected, in words, when above the base tier. */
  tierNote: string | null;
}

const modelCache = new Map<string, PricedModel | null>();

/** The model found, alone in its provider and matching any name, so later lookups by its id find it at once. */
function narrowed(provider: Provider, model: ModelInfo): PricedModel {
  const only: ModelInfo = { ...model, match: { regex: '.*' } };
  return { provider: { ...provider, models: [only] }, model: only, priceId: `${provider.id}/${model.id}` };
}

/**
 * Finds the library's price entry for a model name as a trace writes it: with the
 * provider the format implies first (Claude Code → anthropic, Codex → openai), then by the
 * library's own matching, which also reads `provider/model` names (`anthropic/claude-…`).
 */
export function findLibraryModel(model: string, providerHint: string | null): PricedModel | null {
  const key = `${providerHint ?? ''}\u0000${model}`;
  const cached = modelCache.get(key);
  if (cached !== undefined) return cached;
  const probe: Usage = { input_tokens: 0 };
  let found = providerHint ? calcPrice(probe, model, { providerId: providerHint }) : null;
  // 'litellm' makes the library split "provider/model" names and otherwise match by model name.
  found ??= calcPrice(probe, model, { providerId: 'litellm' });
  const priced = found ? narrowed(found.provider, found.model) : null;
  modelCache.set(key, priced);
  return priced;
}

/** A custom provider in the library's own format, for prices the library lacks (supplement, user prices). */
export function customModel(providerId: string, model: ModelInfo): PricedModel {
  return narrowed({ id: providerId, name: providerId, api_pattern: '^$', models: [model] }, model);
}

function isTiered(v: unknown): v is { base: number; tiers: Array<{ start: number; price: number }> } {
  return typeof v === 'object' && v !== null && 'tiers' in v && Array.isArray((v as { tiers: unknown }).tiers);
}

/** Input sizes where some price of this entry changes tier. */
function tierStarts(price: ModelPrice): number[] {
  const starts = new Set<number>();
  for (const v of Object.values(price)) if (isTiered(v)) for (const t of v.tiers) starts.add(t.start);
  return [...starts].sort((a, b) => a - b);
}

const DAY_MS = 86_400_000;

/** How finely a model's price can change with time: never, by day (start dates), or by time of day. */
function timeGrain(model: ModelInfo): 'none' | 'day' | 'exact' {
  if (!Array.isArray(model.prices)) return 'none';
  return model.prices.some(
    (p) => p.constraint !== undefined && 'type' in p.constraint && p.constraint.type === 'time_of_date',
  )
    ? 'exact'
    : 'day';
}

/** The price entry in force at a time (the library picks it), with what decides the rates' cache key. */
interface DatedEntry {
  price: ModelPrice;
  starts: number[];
  hasFee: boolean;
}

/** Per priced model (custom ones are new objects per price book, so a changed user price is never served stale). */
const caches = new WeakMap<PricedModel, { entries: Map<string, DatedEntry>; rates: Map<string, ResolvedRates> }>();

/**
 * The per-token rates of one call, at its date and its own input size. Each rate is what
 * the library charges for a usage made only of that kind (at the same input size, so the
 * same tier), divided by the tokens; a fixed per-request fee, where a model has one, is
 * spread over the call's input tokens, so rates × tokens give the library's own total.
 * Rates are asked once per model, date (or time of day, where the price depends on it)
 * and tier, so pricing thousands of calls asks the library a few dozen times.
 */
export function libraryRates(priced: PricedModel, when: Date, inputTokens: number): ResolvedRates {
  const grain = timeGrain(priced.model);
  const timeKey =
    grain === 'none' ? '' : grain === 'day' ? String(Math.floor(when.getTime() / DAY_MS)) : String(when.getTime());
  const options = { provider: priced.provider, timestamp: when };
  let cache = caches.get(priced);
  if (!cache) caches.set(priced, (cache = { entries: new Map(), rates: new Map() }));
  let dated = cache.entries.get(timeKey);
  if (!dated) {
    const found = calcPrice({ input_tokens: 1 }, priced.model.id, options);
    if (!found) throw new Error(`the library no longer prices ${priced.priceId}`);
    dated = {
      price: found.model_price,
      starts: tierStarts(found.model_price),
      hasFee: found.model_price['requests_kcount'] !== undefined,
    };
    cache.entries.set(timeKey, dated);
  }
  const L = Math.max(1, Math.round(inputTokens));
  const band = dated.starts.filter((s) => L > s).length;
  const key = `${timeKey}\u0000${dated.hasFee ? `L${L}` : `b${band}`}`;
  const cached = cache.rates.get(key);
  if (cached) return cached;
  const total = (usage: Usage): number => calcPrice(usage, priced.model.id, options)!.total_price;
  const perToken = (usage: Usage): number => total(usage) / L;
  const entry = dated.price;
  const input = perToken({ input_tokens: L });
  const hasWrite = entry['cache_write_mtok'] !== undefined;
  const OUT = 1_000_000;
  const rates: CallRates = {
    input,
    cacheRead: perToken({ input_tokens: L, cache_read_tokens: L }),
    // Without a write price the library bills written tokens as input: no premium, as for OpenAI.
    cacheWrite5m: perToken({ input_tokens: L, cache_write_tokens: L }),
    cacheWrite1h:
      entry['cache_write_1h_mtok'] !== undefined
        ? perToken({ input_tokens: L, cache_write_tokens: L, cache_write_1h_tokens: L })
        : hasWrite
          ? null
          : input,
    output: (total({ input_tokens: L, output_tokens: OUT }) - input * L) / OUT,
  };
  const resolved: ResolvedRates = {
    rates,
    tierNote:
      band > 0 ? `long-context tier (input over ${dated.starts[band - 1]!.toLocaleString('en-US')} tokens)` : null,
  };
  cache.rates.set(key, resolved);
  return resolved;
}

/** The library's own total for a usage, for tests that check rates × tokens against it. */
export function libraryTotal(priced: PricedModel, when: Date, usage: Usage): number {
  return calcPrice(usage, priced.model.id, { provider: priced.provider, timestamp: when })!.total_price;
}
