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
  const sorted = Float64Array.from(values).sort();
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (pos - lo);
}

/** a / b, or null when either is unknown or b is 0. */
export function ratio(a: number | null, b: number | null): number | null {
  return a === null || b === null || b === 0 ? null : a / b;
}
