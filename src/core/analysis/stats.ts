/** Plain statistics over numbers; empty input gives null, never 0 or NaN. */

export function sum(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

export function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : sum(values) / values.length;
}

/** Median; the mean of the two middle values for an even count. */
export function median(values: readonly number[]): number | null {
  return quantile(values, 0.5);
}

/** Quantile by linear interpolation between closest ranks (the "R-7" rule spreadsheets use). */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  // A typed array sorts numbers natively, several times faster than a comparator over a million values.
  return quantileOfSorted(Float64Array.from(values).sort(), q);
}

/** a / b, or null when either is unknown or b is 0. */
export function ratio(a: number | null, b: number | null): number | null {
  return a === null || b === null || b === 0 ? null : a / b;
}

/**
 * Numbers gathered for a mean and quantiles, in a typed array sized once for the most
 * there can be (a session's call count). A million values pushed onto a plain array cost
 * its final 8 MB about three times over (each growth copies it, and the old copies wait
 * for a full collection), and `quantile` copied it once more: several such arrays at once
 * were the trace worker's peak on a million-call session. Same results as `mean`,
 * `median` and `quantile` on the values in the order they were added.
 */
export class NumberSample {
  private readonly values: Float64Array;
  private count = 0;
  private total = 0;
  private sorted = false;

  constructor(capacity: number) {
    this.values = new Float64Array(capacity);
  }

  add(value: number): void {
    if (this.sorted) throw new Error('NumberSample: add after a quantile was taken');
    this.values[this.count++] = value;
    this.total += value;
  }

  get size(): number {
    return this.count;
  }

  /** The sum in the order added; null when empty. */
  sum(): number | null {
    return this.count === 0 ? null : this.total;
  }

  mean(): number | null {
    return this.count === 0 ? null : this.total / this.count;
  }

  median(): number | null {
    return this.quantile(0.5);
  }

  /** As `quantile`; sorts the gathered values in place (the sum and mean stay as added). */
  quantile(q: number): number | null {
    if (this.count === 0) return null;
    const view = this.values.subarray(0, this.count);
    if (!this.sorted) {
      view.sort();
      this.sorted = true;
    }
    return quantileOfSorted(view, q);
  }
}

function quantileOfSorted(sorted: Float64Array, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (pos - lo);
}
