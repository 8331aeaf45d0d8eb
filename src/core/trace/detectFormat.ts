import type { FormatDefinition } from './formatDefinition';
import { FORMATS } from './formats';
import type { JsonObject } from './json';
import type { FormatId } from './model';

/** How many records detection looks at: line 1 alone is often a snapshot or title line. */
export const DETECTION_RECORDS = 50;

/**
 * How sure detection is: `certain` (a header or version marker, or nearly every record
 * matches), `likely` (most records, or the document's structure), `weak` (a few records
 * only: not enough to claim the file, which stays unread unless the user picks the format).
 */
export type DetectionConfidence = 'certain' | 'likely' | 'weak';

/** The detected format and why, or null with what was seen. */
export interface Detection {
  format: FormatId | null;
  evidence: string;
  /** How sure the detection is; null when nothing matched or the user chose the format. */
  confidence: DetectionConfidence | null;
  /**
   * A weak match (`format` null, confidence `weak`): the format the few records point at.
   * The file is read as it on trial, its other records skipped and said, and kept only
   * when that gives calls or prompts (parseTrace.ts); `evidence` says so for that case.
   */
  candidate?: { format: FormatId; evidence: string };
}

/** Share of the sampled records that must match for a format to claim a JSON Lines file. */
export const MIN_RECORD_SHARE = 0.5;
/** Share above which a record vote is certain. */
const CERTAIN_RECORD_SHARE = 0.9;

/**
 * Decides the format of JSON Lines from the first records by majority vote
 * (docs/design/formats.md §10): a deciding record (a canonical header) settles it at once;
 * otherwise each record votes for every format it matches and the most votes win,
 * ties going to the format listed first.
 */
export function detectRecords(
  records: readonly JsonObject[],
  formats: readonly FormatDefinition[] = FORMATS,
): Detection {
  const sample = records.slice(0, DETECTION_RECORDS);
  const votes = new Map<FormatDefinition, number>();
  for (const record of sample) {
    for (const f of formats) {
      if (f.decidesRecord?.(record))
        return { format: f.id, evidence: `a header record of ${f.label}`, confidence: 'certain' };
      if (f.matchesRecord?.(record)) votes.set(f, (votes.get(f) ?? 0) + 1);
    }
  }
  let best: FormatDefinition | null = null;
  let bestVotes = 0;
  for (const f of formats) {
    const n = votes.get(f) ?? 0;
    if (n > bestVotes) {
      best = f;
      bestVotes = n;
    }
  }
  if (best === null)
    return {
      format: null,
      evidence: `none of the first ${sample.length} records matched a known format (${describeKeys(sample)})`,
      confidence: null,
    };
  const share = bestVotes / sample.length;
  if (share < MIN_RECORD_SHARE) {
    // A weak match does not claim the file by itself: a few look-alike lines do not make a file of
    // that format. It names a candidate, read on trial (parseTrace.ts keeps it only if it gives calls).
    return {
      format: null,
      evidence: `only ${bestVotes} of the first ${sample.length} records look like ${best.label}, too few to read the file as one (${describeKeys(sample)}); choose the format (--format ${best.id}) to read it anyway`,
      confidence: 'weak',
      candidate: {
        format: best.id,
        evidence: `only ${bestVotes} of the first ${sample.length} records look like ${best.label}`,
      },
    };
  }
  return {
    format: best.id,
    evidence: `${bestVotes} of the first ${sample.length} records look like ${best.label}`,
    confidence: share >= CERTAIN_RECORD_SHARE ? 'certain' : 'likely',
  };
}

/** Decides the format of a whole JSON document (docs/design/formats.md §10, rule 1). */
export function detectDocument(value: unknown, formats: readonly FormatDefinition[] = FORMATS): Detection {
  for (const f of formats) {
    if (!f.matchesDocument?.(value)) continue;
    const confidence = f.documentConfidence?.(value) ?? 'likely';
    const evidence =
      confidence === 'certain'
        ? `the document names its format: ${f.label}`
        : `the document's top-level keys match ${f.label}, and its structure too`;
    return { format: f.id, evidence, confidence };
  }
  const keys =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? describeKeys([value as JsonObject])
      : Array.isArray(value)
        ? 'a JSON array'
        : `a JSON ${typeof value}`;
  return { format: null, evidence: `the document matched no known format (${keys})`, confidence: null };
}

/** Kept for callers that only have records: JSON Lines detection. */
export const detectFormat = detectRecords;

/** The most common top-level keys, to tell the user what the file does contain. */
function describeKeys(records: readonly JsonObject[]): string {
  const counts = new Map<string, number>();
  for (const r of records) for (const k of Object.keys(r)) counts.set(k, (counts.get(k) ?? 0) + 1);
  const top = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([k]) => `"${k}"`);
  return top.length > 0 ? `keys seen: ${top.join(', ')}` : 'no JSON objects';
}
