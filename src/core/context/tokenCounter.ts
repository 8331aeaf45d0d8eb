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
  /**
   * True when count() would look at the text's length only (a budgeted counter past its
   * budget): a caller may then pass a length to countLength() instead of building the text.
   */
  readonly lengthOnly?: boolean;
  /** Tokens of a text of `chars` characters, from its length alone (with lengthOnly). */
  countLength?(chars: number): number;
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

/** Characters counted exactly per trace before the budgeted counter estimates (2 MiB of text: about a second). */
export const EXACT_CHARS_BUDGET = 2 * 2 ** 20;

/**
 * A counter that counts exactly until `budgetChars` characters were counted, then estimates
 * each text from its length at the tokens-per-character ratio measured so far: tokenizing a
 * 1 GB log would cost many times its reading (docs/guide/context.md#cost-of-the-anatomy).
 * `estimatedChars` says how much was estimated, for the notes.
 */
export class BudgetedCounter implements TokenCounter {
  readonly name: string;
  private exactChars = 0;
  private exactTokens = 0;
  estimatedChars = 0;

  constructor(
    private readonly inner: TokenCounter,
    private readonly budgetChars = EXACT_CHARS_BUDGET,
  ) {
    this.name = inner.name;
  }

  get lengthOnly(): boolean {
    return !(this.exactChars < this.budgetChars || this.exactChars === 0);
  }

  count(text: string): number {
    if (!this.lengthOnly) {
      const n = this.inner.count(text);
      this.exactChars += text.length;
      this.exactTokens += n;
      return n;
    }
    return this.countLength(text.length);
  }

  countLength(chars: number): number {
    this.estimatedChars += chars;
    return Math.round((chars * this.exactTokens) / this.exactChars);
  }
}

/** A line-number prefix of a file read as Claude Code sends it: padding, the number, `→` (U+2192). */
const LINE_NUMBER_PREFIX = /^ *\d+\u2192/gm;

/** How many lines of a text start with a file read's line-number prefix (`     1→`). */
export function lineNumberPrefixes(text: string): number {
  if (!text.includes('\u2192')) return 0;
  let n = 0;
  LINE_NUMBER_PREFIX.lastIndex = 0;
  while (LINE_NUMBER_PREFIX.exec(text) !== null) n++;
  return n;
}

/** The median of numbers (null for none); works on a copy. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  // Selection, not a sort: the calibration takes several medians of a long session's ninety thousand calls.
  return medianInPlace(Float64Array.from(values));
}

/** The median of the numbers of `a` (null for none), reordering `a`: for callers that built the array for it. */
export function medianInPlace(a: Float64Array): number | null {
  const n = a.length;
  if (n === 0) return null;
  const mid = n >> 1;
  const upper = select(a, mid);
  if (n % 2 === 1) return upper;
  // Everything before `mid` is ≤ it after the selection: the lower middle is their largest.
  let lower = a[0]!;
  for (let i = 1; i < mid; i++) if (a[i]! > lower) lower = a[i]!;
  return (lower + upper) / 2;
}

/** Puts the k-th smallest value at a[k], smaller or equal ones before it and larger or equal after (quickselect, median-of-three pivot); returns it. */
function select(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (hi > lo) {
    const m = (lo + hi) >> 1;
    // Median of three as the pivot, placed at a[m].
    if (a[m]! < a[lo]!) swap(a, m, lo);
    if (a[hi]! < a[lo]!) swap(a, hi, lo);
    if (a[hi]! < a[m]!) swap(a, hi, m);
    const pivot = a[m]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        swap(a, i, j);
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k]!;
  }
  return a[k]!;
}

function swap(a: Float64Array, i: number, j: number): void {
  const t = a[i]!;
  a[i] = a[j]!;
  a[j] = t;
}

/** The note for text counted by its length past the exact budget. */
export function estimatedTextNote(chars: number): string {
  return `past the first ${Math.round(EXACT_CHARS_BUDGET / 2 ** 20)} MiB of text, ${(chars / 2 ** 20).toFixed(1)} MiB were counted from their length at the tokens per character measured on the first`;
}
