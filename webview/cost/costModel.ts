import type { IdealTtlCurve } from '../../src/core/analysis/idealTtlCache';
import { TRACELAB_PUBLISHED } from '../../src/core/analysis/idealTtlCache';
import {
  FIVE_MINUTES_MS,
  MAX_CUSTOM_TTL_MIN,
  MAX_WRITE_MULTIPLE,
  ONE_HOUR_MS,
} from '../../src/core/cost/cacheTtlWhatIf';
import type { TtlReplay, TtlWhatIf } from '../../src/core/cost/cacheTtlWhatIf';
// The panel's own replay is the worker's (TraceService.customTtl); re-exported for the page and its tests.
export { customReplay, MAX_CUSTOM_TTL_MIN } from '../../src/core/cost/cacheTtlWhatIf';
export type { CustomTtl } from '../../src/core/cost/cacheTtlWhatIf';
import {
  formatCount,
  formatPercent,
  formatRatio,
  formatSignedPercent,
  formatTtl,
  formatUsd,
} from '../../src/core/text/formatNumbers';

// The cost panel's figures as strings, pure so unit tests read them without a page: the
// session's cache TTL replays (5 minutes, 1 hour, a TTL the user types) and the session in
// an ideal idle-TTL cache beside TraceLab's published measurements.

/** The TTL the panel offers first, and the bounds of what the user may type. */
export const DEFAULT_CUSTOM_TTL_MIN = 30;

/** Reads a typed number of minutes, or says what is wrong with it. */
export function parseTtlMinutes(text: string): number | string {
  const v = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(v)) return 'Type a number of minutes.';
  if (v <= 0) return 'The TTL must be more than 0 minutes.';
  if (v > MAX_CUSTOM_TTL_MIN) return `At most ${formatCount(MAX_CUSTOM_TTL_MIN)} minutes (a week).`;
  return v;
}

/** Reads a typed write price (× the input price); empty means the default. */
export function parseWriteMultiple(text: string): number | null | string {
  if (text.trim() === '') return null;
  const v = Number(text.trim());
  if (!Number.isFinite(v) || v < 0) return 'Type a multiple of the input price (1.25, 2), or leave it empty.';
  if (v > MAX_WRITE_MULTIPLE) return `At most ${formatCount(MAX_WRITE_MULTIPLE)}× the input price.`;
  return v;
}

/** One row of the TTL table. */
export interface TtlRow {
  key: '5m' | '1h' | 'custom';
  ttl: string;
  writePrice: string;
  cost: string;
  /** "as logged", "+13%", "−28%". */
  change: string;
  expiredCalls: number[];
  expired: string;
  rewrite: string;
  /** Which way the row moves the bill, for colour: cheaper, dearer or the log itself. */
  tone: 'cheaper' | 'dearer' | 'logged' | 'unknown';
}

function row(key: TtlRow['key'], r: TtlReplay, actualTtlMs: number): TtlRow {
  const logged =
    r.ttlMs === actualTtlMs &&
    r.writeLabel === (actualTtlMs === ONE_HOUR_MS ? '1-hour write price' : '5-minute write price');
  const n = r.expiredCalls.length;
  return {
    key,
    ttl: formatTtl(r.ttlMs),
    writePrice: r.writeLabel,
    cost: r.unavailable ? 'unknown' : formatUsd(r.costUsd),
    change: r.unavailable ? r.unavailable : logged ? 'as logged' : formatSignedPercent(r.deltaShare),
    expiredCalls: r.expiredCalls,
    expired: `${formatCount(n)} call${n === 1 ? '' : 's'}`,
    rewrite:
      n === 0 ? '—' : `${formatCount(r.rewriteTokens)} tokens, ${formatUsd(r.rewriteUsd)} more than reading them`,
    tone:
      r.unavailable || r.deltaShare === null
        ? 'unknown'
        : logged
          ? 'logged'
          : r.deltaShare < 0
            ? 'cheaper'
            : r.deltaShare > 0
              ? 'dearer'
              : 'logged',
  };
}

/** The rows: 5 minutes, 1 hour, and the user's TTL when given. */
export function ttlRows(what: TtlWhatIf, custom: TtlReplay | null): TtlRow[] {
  const [five, hour] = what.replays;
  const rows = [row('5m', five!, what.actualTtlMs), row('1h', hour!, what.actualTtlMs)];
  if (custom) rows.push(row('custom', custom, what.actualTtlMs));
  return rows;
}

/** "Ran with a 5-minute cache (the log's cache writes are 5-minute writes); logged cost $2.05 over 149 priced calls." */
export function ttlBasisText(what: TtlWhatIf): string {
  const ran =
    what.actualTtlMs === FIVE_MINUTES_MS
      ? '5-minute'
      : what.actualTtlMs === ONE_HOUR_MS
        ? '1-hour'
        : formatTtl(what.actualTtlMs);
  const unpriced = what.unpricedCalls > 0 ? `; ${formatCount(what.unpricedCalls)} unpriced calls are left out` : '';
  return `Ran with a ${ran} cache (${what.actualTtlBasis}); logged cost ${formatUsd(what.actualUsd)} over ${formatCount(what.pricedCalls)} priced calls${unpriced}.`;
}

/** A published ratio as they wrote it: 18.9×, 7.4×, 1.8×. */
function published(ratio: number): string {
  return `${ratio}×`;
}

/** A row of the TraceLab comparison. */
export interface IdealRow {
  ttl: string;
  hitRate: string;
  publishedHitRate: string;
  amplification: string;
  publishedAmplification: string;
}

export function idealRows(curve: IdealTtlCurve): IdealRow[] {
  return curve.points.map((p) => ({
    ttl: formatTtl(p.ttlMs),
    hitRate: formatPercent(p.hitRate),
    publishedHitRate: p.published ? `${p.published.approximate ? '≈' : ''}${formatPercent(p.published.hitRate)}` : '—',
    amplification: formatRatio(p.amplification),
    publishedAmplification: p.published ? published(p.published.amplification) : '—',
  }));
}

/** The session's own cache beside the deployed caches TraceLab measured. */
export function idealSummary(curve: IdealTtlCurve): string {
  const d = TRACELAB_PUBLISHED.deployedAmplification;
  const effective =
    curve.effectiveTtlMs === null
      ? ''
      : ` It behaves like an ideal cache with a ${formatTtl(curve.effectiveTtlMs)} idle TTL.`;
  return (
    `This session's cache served ${formatPercent(curve.realHitRate)} of its prompts (${formatPercent(curve.optimalHitRate)} with no TTL) and prefilled ` +
    `${formatRatio(curve.realAmplification)} the genuinely new tokens; TraceLab measured ≈${published(d.merged)} on deployed caches ` +
    `(${published(d.claude)} Claude, ${published(d.codex)} Codex).${effective}`
  );
}
