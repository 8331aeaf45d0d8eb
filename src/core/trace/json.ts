/** Small, total accessors for untrusted JSON: they return null instead of throwing or guessing. */

export type JsonObject = { [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** A finite number, or a decimal string of one (OTLP writes int64 as strings). */
export function num(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** A non-negative whole count, such as a token count. */
export function count(value: unknown): number | null {
  const n = num(value);
  return n !== null && n >= 0 && Number.isInteger(n) ? n : null;
}

export function obj(value: unknown): JsonObject | null {
  return isObject(value) ? value : null;
}

export function arr(value: unknown): unknown[] | null {
  return Array.isArray(value) ? value : null;
}

/** ISO-8601 time to epoch milliseconds. */
export function isoMs(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

/** Text cut to `max` characters, with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max - 1) + '…';
}

/** A tool call's `arguments`: a JSON string (parsed defensively) or, in some writers, an object. */
export function parseArguments(value: unknown): JsonObject | null {
  if (isObject(value)) return value;
  if (typeof value !== 'string') return null;
  try {
    const parsed: unknown = JSON.parse(value);
    return isObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** The first of `keys` that holds a non-empty string (or an array of strings, joined with spaces). */
export function firstArgument(args: Readonly<Record<string, unknown>> | null, keys: readonly string[]): string | null {
  if (!args) return null;
  for (const k of keys) {
    const v = args[k];
    if (typeof v === 'string' && v !== '') return v;
    if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return v.join(' ');
  }
  return null;
}
