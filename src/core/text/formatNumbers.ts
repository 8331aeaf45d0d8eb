/** Number formatting shared by the CLI and the webview, so both print the same figures. */

/** "unknown" for null: the UI never shows a missing value as 0. */
export const UNKNOWN = 'unknown';

/** Null, NaN and ±Infinity are all "not known": no figure is ever printed as NaN or ∞. */
function unknown(value: number | null): value is null {
  return value === null || !Number.isFinite(value);
}

/**
 * One formatter for every count: `toLocaleString` sets up a new one per call, which was most
 * of the timeline's axis labelling per frame. Made on first use: setting one up reads ICU's
 * locale data, about 5 MiB resident, which `analyze --json` never needs (docs/performance.md,
 * "Issue 27, ninth session").
 */
let countFormat: Intl.NumberFormat | null = null;

/** Whole tokens with thousands separators: 1,234,567. */
export function formatCount(value: number | null): string {
  if (unknown(value)) return UNKNOWN;
  countFormat ??= new Intl.NumberFormat('en-US');
  return countFormat.format(Math.round(value));
}

/** Compact token count for axes and labels: 950, 12.3k, 1.24M. */
export function formatCompact(value: number | null): string {
  if (unknown(value)) return UNKNOWN;
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${trim(value / 1e9, abs >= 1e10 ? 1 : 2)}B`;
  if (abs >= 1e6) return `${trim(value / 1e6, abs >= 1e7 ? 1 : 2)}M`;
  if (abs >= 1e3) return `${trim(value / 1e3, abs >= 1e4 ? 1 : 2)}k`;
  return String(Math.round(value));
}

/** A fraction as a percentage with one decimal: 0.9712 → "97.1%". */
export function formatPercent(value: number | null): string {
  return unknown(value) ? UNKNOWN : `${(value * 100).toFixed(1)}%`;
}

/** A ratio with a multiplication sign: 365.5 → "365.5×", 2.04 → "2.04×". */
export function formatRatio(value: number | null): string {
  if (unknown(value)) return UNKNOWN;
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toFixed(digits)}×`;
}

/** A duration in ms as "850 ms", "12.4 s", "3 min 05 s", "2 h 14 min". */
export function formatDuration(ms: number | null): string {
  if (unknown(ms)) return UNKNOWN;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const totalSeconds = Math.round(s);
  const m = Math.floor(totalSeconds / 60);
  if (m < 60) return `${m} min ${String(totalSeconds % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

function trim(value: number, digits: number): string {
  return value.toFixed(digits).replace(/\.?0+$/, '');
}

/** US dollars with enough digits to see small sessions: "$12", "$1.23", "$0.045", "$0.0012"; "unknown" for null. */
export function formatUsd(usd: number | null): string {
  if (usd === null) return UNKNOWN;
  if (usd === 0) return '$0';
  const a = Math.abs(usd);
  // Below a hundredth of a cent, two significant digits: a call's input can cost $0.000048.
  const text =
    a >= 0.0001 ? a.toFixed(a >= 100 ? 0 : a >= 1 ? 2 : a >= 0.01 ? 3 : 4) : String(Number(a.toPrecision(2)));
  return `${usd < 0 && Number(text) !== 0 ? '−' : ''}$${text}`;
}

/** A signed share: −12%, +8%. */
export function formatSignedPercent(share: number | null): string {
  if (share === null) return UNKNOWN;
  const pct = Math.round(share * 100);
  return `${pct < 0 ? '−' : '+'}${Math.abs(pct)}%`;
}

/** A TTL: "45 s", "1 min 30 s", "5 min", "1 h", "1 h 30 min". */
export function formatTtl(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  const min = Math.round(s / 60);
  const h = Math.floor(min / 60);
  return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
}
