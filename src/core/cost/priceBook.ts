import { calcPrice } from '@pydantic/genai-prices';
import type { ModelInfo } from '@pydantic/genai-prices';
import type { CallRates, PriceBook, PriceQuery, PriceQuote } from './costTypes';
import { customModel, findLibraryModel, GENAI_PRICES_VERSION, libraryRates } from './genaiPrices';
import type { PricedModel } from './genaiPrices';
import supplement from './price-supplement.json';
import { UserPriceIndex } from './userPrices';
import type { UserPriceEntry, UserPrices } from './userPrices';

/**
 * Prices calls from, in order: the user's own prices (first match wins), the maintained
 * price list of @pydantic/genai-prices, and the small dated supplement for what that list
 * lacks (service tiers, US-only inference). Only the host and the CLI build one; the
 * webview gets the resulting rates with the view.
 */

/** Price multipliers keyed by provider, then value; null = no public price. */
type MultiplierTable = Record<string, { source: string; multipliers: Record<string, number | null> }>;

const SERVICE_TIERS = supplement.serviceTiers as MultiplierTable;
const INFERENCE_GEO = supplement.inferenceGeo as MultiplierTable;

/** Dated model prices the library lacks, in its own model format: each applies from its `since` date on. */
const SUPPLEMENT_MODELS = supplement.models.map((m) => {
  const info = m.model as unknown as ModelInfo;
  return {
    sinceMs: Date.parse(`${m.since}T00:00:00Z`),
    /** The entry with its own match rule, for finding it; `priced` matches any name once found. */
    matcher: { id: m.provider, name: m.provider, api_pattern: '^$', models: [info] },
    priced: customModel(m.provider, info),
  };
});

const supplementMatches = new Map<string, typeof SUPPLEMENT_MODELS>();

/** The supplement's entry for a model at a date, matched by the library's own rules (once per model name). */
function supplementModel(model: string, timeMs: number): PricedModel | null {
  let entries = supplementMatches.get(model);
  if (!entries) {
    entries = SUPPLEMENT_MODELS.filter((m) => calcPrice({ input_tokens: 0 }, model, { provider: m.matcher }) !== null);
    supplementMatches.set(model, entries);
  }
  return entries.find((m) => timeMs >= m.sinceMs)?.priced ?? null;
}

/** Dates before this are relative clocks (traces that start at 0), not calendar dates. */
const EARLIEST_CALENDAR_MS = Date.UTC(2020, 0, 1);

export interface PriceBookOptions {
  user?: UserPrices | null;
  /** Where the user prices came from, for the source line ("prices.json", "agentTrace.prices"). */
  userLabel?: string;
  /** Date for calls whose trace gives none (default: now). */
  todayMs?: number;
}

export const SUPPLEMENT_CHECKED: string = supplement.checked;

/** The price source line: library version, supplement date, user prices. */
export function priceSourceLine(userLabel: string | null): string {
  return `@pydantic/genai-prices ${GENAI_PRICES_VERSION} + price-supplement.json (checked ${SUPPLEMENT_CHECKED})${userLabel ? ` + user prices (${userLabel})` : ''}`;
}

function scaled(rates: CallRates, m: number): CallRates {
  return {
    input: rates.input * m,
    cacheRead: rates.cacheRead * m,
    cacheWrite5m: rates.cacheWrite5m * m,
    cacheWrite1h: rates.cacheWrite1h === null ? null : rates.cacheWrite1h * m,
    output: rates.output * m,
  };
}

/** A multiplier from a supplement table, or why there is none; no table for this provider = no change. */
function lookup(
  table: MultiplierTable,
  provider: string,
  value: string | null,
  what: string,
): { m: number; note: string | null } | { unknown: string } {
  const forProvider = table[provider];
  if (!forProvider || value === null) return { m: 1, note: null };
  const m = forProvider.multipliers[value];
  if (m === undefined || m === null) return { unknown: `${what} "${value}" has no public ${provider} price` };
  return { m, note: m === 1 ? null : `${what} ${value} ×${m}` };
}

export function createPriceBook(options: PriceBookOptions = {}): PriceBook {
  const user = options.user?.entries ?? [];
  const userIndex = new UserPriceIndex(user);
  const todayMs = options.todayMs ?? Date.now();
  // One priced model per user token entry, made once so its rates are cached for this book only.
  const userModels = new Map<UserPriceEntry, PricedModel>();
  const userModel = (entry: UserPriceEntry & { kind: 'tokens' }): PricedModel => {
    let m = userModels.get(entry);
    if (!m) {
      m = customModel('user', {
        id: entry.model,
        match: { regex: '.*' },
        prices: {
          input_mtok: entry.input,
          cache_read_mtok: entry.cacheRead,
          cache_write_mtok: entry.cacheWrite5m,
          cache_write_1h_mtok: entry.cacheWrite1h,
          output_mtok: entry.output,
        },
      });
      userModels.set(entry, m);
    }
    return m;
  };

  const quote = (q: PriceQuery): PriceQuote => {
    if (q.model === null) return { kind: 'unknown', reason: 'the trace names no model', key: 'no-model' };
    const dated = q.timeMs !== null && q.timeMs >= EARLIEST_CALENDAR_MS;
    const when = new Date(dated ? q.timeMs! : todayMs);
    const notes = dated ? [] : [`the call's date is unknown: priced as of ${when.toISOString().slice(0, 10)}`];
    const fits = (e: UserPriceEntry): boolean =>
      (e.serviceTier === null || e.serviceTier === q.serviceTier) &&
      (e.sinceMs === null || !dated || q.timeMs! >= e.sinceMs);
    const mine = userIndex.first(q.model, fits);
    if (mine?.kind === 'tokens') {
      return {
        kind: 'tokens',
        rates: libraryRates(userModel(mine), when, q.inputTokens).rates,
        origin: 'user',
        priceId: `user: ${mine.model}`,
        notes,
      };
    }
    if (mine?.kind === 'gpu-time') {
      return {
        kind: 'gpu-time',
        usdPerHour: (mine.usdPerGpuHour * mine.gpus) / mine.concurrentSessions,
        origin: 'user',
        priceId: `user: ${mine.model} per GPU-hour`,
        notes,
      };
    }
    if (q.selfHosted) {
      return {
        kind: 'unknown',
        reason: `"${q.model}" runs on your own server: give it a price per GPU-hour`,
        key: `self-hosted:${q.model}`,
      };
    }
    const newer = dated ? supplementModel(q.model, q.timeMs!) : null;
    const priced = newer ?? findLibraryModel(q.model, q.providerHint);
    if (!priced) return { kind: 'unknown', reason: `no price for model "${q.model}"`, key: `model:${q.model}` };
    const provider = priced.provider.id;
    const tier = lookup(SERVICE_TIERS, provider, q.serviceTier, 'service tier');
    if ('unknown' in tier)
      return {
        kind: 'unknown',
        reason: `${tier.unknown} (model "${q.model}")`,
        key: `tier:${provider}:${q.serviceTier}`,
      };
    const geo = lookup(INFERENCE_GEO, provider, q.inferenceGeo, 'inference region');
    if ('unknown' in geo)
      return {
        kind: 'unknown',
        reason: `${geo.unknown} (model "${q.model}")`,
        key: `geo:${provider}:${q.inferenceGeo}`,
      };
    const { rates, tierNote } = libraryRates(priced, when, q.inputTokens);
    const m = tier.m * geo.m * (mine?.kind === 'multiplier' ? mine.multiplier : 1);
    for (const note of [
      tierNote,
      tier.note,
      geo.note,
      mine?.kind === 'multiplier' ? `your multiplier ×${mine.multiplier}` : null,
    ])
      if (note) notes.push(note);
    const origin =
      newer !== null || tier.note !== null || geo.note !== null ? 'supplement' : mine ? 'user' : 'genai-prices';
    return { kind: 'tokens', rates: m === 1 ? rates : scaled(rates, m), origin, priceId: priced.priceId, notes };
  };

  return { quote, source: priceSourceLine(user.length > 0 ? (options.userLabel ?? 'user') : null) };
}
