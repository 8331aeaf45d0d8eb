/** Small, total accessors for untrusted JSON: they return null instead of throwing or guessing. */

export type JsonObject = { [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** Decimal notation only: `Number()` would also read "0x10", "0b101", "0o7" and "Infinity". */
const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;

/** A finite number, or a decimal string of one (OTLP writes int64 as strings); hex, binary and octal strings are not numbers here. */
export function num(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && DECIMAL.test(value)) {
    const n = Number(value);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** A number ≥ 0 (a cost, a latency), else null. */
export function nonNegative(value: unknown): number | null {
  const n = num(value);
  return n !== null && n >= 0 ? n : null;
}

/** A non-negative whole count, such as a token count, up to 2^53 − 1 (a larger double has lost its last digits). */
export function count(value: unknown): number | null {
  const n = num(value);
  return n !== null && n >= 0 && Number.isInteger(n) && n <= Number.MAX_SAFE_INTEGER ? n : null;
}

/**
 * An empty object to use as a map from trace strings (tool names, record types): with
 * no prototype, a key such as "__proto__" or "constructor" is an ordinary key instead
 * of vanishing or reading Object.prototype.
 */
export function emptyRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

export function obj(value: unknown): JsonObject | null {
  return isObject(value) ? value : null;
}

export function arr(value: unknown): unknown[] | null {
  return Array.isArray(value) ? value : null;
}

/** Leading items of a document's list that detection looks at. */
export const DETECT_SAMPLE = 20;

/**
 * True when the list's first items are mostly of a kind: at least one is, and at least as
 * many are as are not. Detection by "the first five all are" lost a whole session to one
 * hostile or broken message among them (a value nested thousands deep, a message of an
 * unknown type); the format's other marks (its top-level keys) still have to match, and
 * the reader skips what is not a message, with its line.
 */
export function mostlyOfKind(items: readonly unknown[], isKind: (v: unknown) => boolean): boolean {
  const sample = items.slice(0, DETECT_SAMPLE);
  const hits = sample.filter(isKind).length;
  return hits > 0 && hits >= sample.length - hits;
}

/** ISO-8601 time to epoch milliseconds. */
export function isoMs(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * `text` as a string of its own. In V8 a piece cut from a longer string (by `slice`, `trim`,
 * a regular expression's capture) is a view that keeps the whole longer string alive, so a
 * short text the model keeps (a failed call's error text, a prompt's preview) held on to
 * the tool output or message it was cut from: 7 MB of a 777 MB Claude Code log's model
 * was such outputs. A JSON round trip always makes a new string, equal to `text`.
 */
export function ownedText(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/** Text cut to `max` characters, with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max - 1) + '…';
}

/** The first line that is not blank, trimmed and clipped to `max`; null when there is none. */
export function firstLine(text: string, max: number): string | null {
  const line = text.split('\n').find((l) => l.trim() !== '');
  return line === undefined ? null : clip(line.trim(), max);
}

/** A chat message's text: a string, or the text parts of a content-part list joined by newlines; null when it has none. */
export function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  const parts = arr(content);
  if (!parts) return null;
  const texts = parts
    .filter(isObject)
    .map((p) => str(p['text']))
    .filter((t): t is string => t !== null);
  return texts.length > 0 ? texts.join('\n') : null;
}

/**
 * A JSON object given either as itself or as a JSON string (parsed defensively): a tool
 * call's `arguments`, and other fields writers store both ways.
 */
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
