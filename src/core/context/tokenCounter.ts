/**
 * How the anatomy counts tokens. The core stays free of the tokenizer library (its ranks
 * are megabytes): the CLI and the host inject one (src/node/contextTokenizer.ts), and the
 * core falls back to a character estimate it marks as such.
 */

/** Counts the tokens of a text for one model family. */
export interface TokenCounter {
  /** Its name in reports, e.g. "o200k_base (gpt-tokenizer)". */
  readonly name: string;
  count(text: string): number;
}

/** Chooses a counter for a model id (null = unknown model). */
export type TokenCounterFor = (model: string | null) => TokenCounter;

/** Characters per token of the fallback estimate: the usual rule of thumb for English and code. */
export const CHARS_PER_TOKEN_ESTIMATE = 4;

/** The fallback: characters ÷ 4, rounded up. Calibration against the log corrects its scale. */
export const CHAR_ESTIMATE: TokenCounter = {
  name: 'characters ÷ 4 (estimate)',
  count: (text) => Math.ceil(text.length / CHARS_PER_TOKEN_ESTIMATE),
};

/** The median of numbers (null for none); sorts a copy. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
