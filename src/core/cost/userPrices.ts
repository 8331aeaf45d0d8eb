import { isObject } from '../trace/json';

/**
 * Prices a user adds or overrides (the `agentTrace.prices` setting, `agent-trace analyze
 * --prices FILE`): a negotiated rate, a discount on list prices, or a self-hosted model
 * priced per GPU-hour. The first entry that matches a call wins, so specific entries go
 * before general ones. Per-token prices are USD per million tokens, as pricing pages write them.
 */
export type UserPriceEntry = {
  /** Model name, case-insensitive; `*` matches any run of characters (`claude-*`). */
  model: string;
  /** Only calls reporting this service tier (`priority`, `batch`, `flex`, …). */
  serviceTier: string | null;
  /** Only calls on or after this date (YYYY-MM-DD, UTC); calls of unknown date match. */
  sinceMs: number | null;
} & (
  | { kind: 'tokens'; input: number; cacheRead: number; cacheWrite5m: number; cacheWrite1h: number; output: number }
  | { kind: 'multiplier'; multiplier: number }
  | { kind: 'gpu-time'; usdPerGpuHour: number; gpus: number; concurrentSessions: number }
);

export interface UserPrices {
  entries: UserPriceEntry[];
  /** What could not be read, one sentence each naming the entry and field; those entries are left out. */
  problems: string[];
}

const TOKEN_FIELDS = ['input', 'cacheRead', 'cacheWrite5m', 'cacheWrite1h', 'output'] as const;
/** Every field an entry may have (the `agentTrace.prices` schema in package.json lists the same). */
export const USER_PRICE_FIELDS: readonly string[] = [
  'model',
  'serviceTier',
  'since',
  ...TOKEN_FIELDS,
  'multiplier',
  'usdPerGpuHour',
  'gpus',
  'concurrentSessions',
  'note',
];
const KNOWN_FIELDS = new Set<string>(USER_PRICE_FIELDS);

/** Reads user prices from a parsed JSON value: `{"prices": [...]}` or the array itself. Never throws. */
export function readUserPrices(value: unknown): UserPrices {
  const list = Array.isArray(value)
    ? value
    : isObject(value) && Array.isArray(value['prices'])
      ? value['prices']
      : null;
  if (list === null)
    return { entries: [], problems: ['prices must be a list of entries, or an object with a "prices" list'] };
  const entries: UserPriceEntry[] = [];
  const problems: string[] = [];
  list.forEach((raw, i) => {
    const at = `prices[${i}]`;
    const entry = readEntry(raw, at, problems);
    if (entry) entries.push(entry);
  });
  return { entries, problems };
}

function readEntry(raw: unknown, at: string, problems: string[]): UserPriceEntry | null {
  if (!isObject(raw)) {
    problems.push(`${at} must be an object, got ${JSON.stringify(raw)}`);
    return null;
  }
  const before = problems.length;
  const unknown = Object.keys(raw).filter((k) => !KNOWN_FIELDS.has(k));
  if (unknown.length > 0)
    problems.push(`${at} has unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}`);
  const model = raw['model'];
  if (typeof model !== 'string' || model.trim() === '')
    problems.push(`${at}.model must be a model name (or a pattern with *), got ${JSON.stringify(model)}`);
  const tier = raw['serviceTier'];
  if (tier !== undefined && tier !== null && typeof tier !== 'string')
    problems.push(`${at}.serviceTier must be a string, got ${JSON.stringify(tier)}`);
  let sinceMs: number | null = null;
  const since = raw['since'];
  if (since !== undefined && since !== null) {
    const ms = typeof since === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(since) ? Date.parse(`${since}T00:00:00Z`) : NaN;
    if (Number.isNaN(ms)) problems.push(`${at}.since must be a date YYYY-MM-DD, got ${JSON.stringify(since)}`);
    else sinceMs = ms;
  }
  const number = (field: string, min: number, orNull = true): number | null => {
    const v = raw[field];
    if (v === undefined || (orNull && v === null)) return null;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
      problems.push(`${at}.${field} must be a number ≥ ${min}, got ${JSON.stringify(v)}`);
      return null;
    }
    return v;
  };
  const base = {
    model: typeof model === 'string' ? model.trim() : '',
    serviceTier: typeof tier === 'string' ? tier : null,
    sinceMs,
  };
  const hasTokens = TOKEN_FIELDS.some((f) => raw[f] !== undefined);
  const kinds = [hasTokens, raw['multiplier'] !== undefined, raw['usdPerGpuHour'] !== undefined].filter(Boolean).length;
  if (kinds !== 1) {
    problems.push(
      `${at} needs exactly one of: per-token prices (input and output, USD per million tokens), a multiplier, or usdPerGpuHour`,
    );
    return null;
  }
  let entry: UserPriceEntry | null = null;
  if (hasTokens) {
    const input = number('input', 0);
    const output = number('output', 0);
    if (raw['input'] === undefined || raw['output'] === undefined)
      problems.push(`${at} needs both input and output prices (USD per million tokens)`);
    const cacheRead = number('cacheRead', 0);
    const cacheWrite5m = number('cacheWrite5m', 0);
    const cacheWrite1h = number('cacheWrite1h', 0);
    // A rate not given is the input rate: no cache discount, no write premium.
    if (input !== null && output !== null) {
      const write5m = cacheWrite5m ?? input;
      entry = {
        ...base,
        kind: 'tokens',
        input,
        output,
        cacheRead: cacheRead ?? input,
        cacheWrite5m: write5m,
        cacheWrite1h: cacheWrite1h ?? write5m,
      };
    }
  } else if (raw['multiplier'] !== undefined) {
    const multiplier = number('multiplier', 0, false);
    if (multiplier !== null) entry = { ...base, kind: 'multiplier', multiplier };
  } else {
    const usdPerGpuHour = number('usdPerGpuHour', 0, false);
    const gpus = number('gpus', 1) ?? 1;
    const concurrentSessions = number('concurrentSessions', 1) ?? 1;
    if (usdPerGpuHour !== null) entry = { ...base, kind: 'gpu-time', usdPerGpuHour, gpus, concurrentSessions };
  }
  return problems.length > before ? null : entry;
}

/** A model pattern as a regular expression over the lowercased name (`*` any run of characters). */
function patternRegex(pattern: string): RegExp {
  const escaped = pattern
    .toLowerCase()
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`);
}

/** True when a user entry's model pattern names this model (case-insensitive, `*` any run). */
export function patternMatches(pattern: string, model: string): boolean {
  return patternRegex(pattern).test(model.toLowerCase());
}

/**
 * User entries ready for lookup: `first` gives the first entry (in the list's order) whose
 * pattern names a model and that `fits` the call, trying only the entries that name it.
 * Exact names are looked up in a map and patterns compiled once; the entries that name a
 * model are found once per model. Trying every entry for every call, its pattern compiled
 * each time, made a list of 300,000 entries take 88 s on a 90-call trace.
 */
export class UserPriceIndex {
  private readonly exact = new Map<string, number[]>();
  private readonly patterns: Array<{ at: number; regex: RegExp }> = [];
  private readonly naming = new Map<string, number[]>();

  constructor(readonly entries: readonly UserPriceEntry[]) {
    entries.forEach((e, at) => {
      const name = e.model.toLowerCase();
      if (name.includes('*')) this.patterns.push({ at, regex: patternRegex(name) });
      else {
        const list = this.exact.get(name);
        if (list) list.push(at);
        else this.exact.set(name, [at]);
      }
    });
  }

  /** Indexes of the entries whose pattern names `model`, in list order. */
  private entriesNaming(model: string): number[] {
    const name = model.toLowerCase();
    let found = this.naming.get(name);
    if (!found) {
      const exact = this.exact.get(name) ?? [];
      const patterned = this.patterns.filter((p) => p.regex.test(name)).map((p) => p.at);
      // Both lists are in list order: merge them.
      found = [];
      let i = 0;
      let j = 0;
      while (i < exact.length || j < patterned.length)
        found.push(
          j >= patterned.length || (i < exact.length && exact[i]! < patterned[j]!) ? exact[i++]! : patterned[j++]!,
        );
      this.naming.set(name, found);
    }
    return found;
  }

  /** The first entry that names `model` and `fits` (its tier and date), or undefined. */
  first(model: string, fits: (e: UserPriceEntry) => boolean): UserPriceEntry | undefined {
    for (const at of this.entriesNaming(model)) if (fits(this.entries[at]!)) return this.entries[at];
    return undefined;
  }
}
