import { MISS_CAUSES } from '../analysis/cacheMisses';
import type { MissCause } from '../analysis/cacheMisses';
import type { SessionAnalysis } from '../analysis/sessionAnalysis';
import type { Session } from '../trace/model';

/** Bits of `TimelineColumns.flags`: what the timeline marks on a call. */
export const CALL_FLAG = {
  /** At least one of its tool calls failed. */
  failed: 1,
  /** Its prefix missed the cache. */
  miss: 2,
  /** It made an attempt in a retry loop. */
  loop: 4,
  /** One of its tool calls started a sub-agent. */
  subagent: 8,
  /** A compaction came just before it. */
  compaction: 16,
} as const;

/** A kind of call the timeline can jump between or filter to. */
export type CallFlag = keyof typeof CALL_FLAG;

/**
 * One session's calls as the timeline draws them: a column per figure, one entry per
 * call, NaN where the trace does not say. Typed arrays, each over its own buffer, so a
 * million calls travel host → webview as 34 MB of numbers instead of a million objects.
 */
export interface TimelineColumns {
  cached: Float64Array;
  appended: Float64Array;
  output: Float64Array;
  /** The call's whole prompt: the context size. */
  input: Float64Array;
  /** CALL_FLAG bits. */
  flags: Uint8Array;
  /** 1 + the index in MISS_CAUSES of the call's miss cause; 0 when it did not miss. */
  missCause: Uint8Array;
}

const nan = (v: number | null): number => (v === null ? Number.NaN : v);

/** Builds the columns of a session from its calls and its analysis (misses, loops). */
export function buildTimelineColumns(session: Session, analysis: SessionAnalysis): TimelineColumns {
  const n = session.calls.length;
  const columns: TimelineColumns = {
    cached: new Float64Array(n),
    appended: new Float64Array(n),
    output: new Float64Array(n),
    input: new Float64Array(n),
    flags: new Uint8Array(n),
    missCause: new Uint8Array(n),
  };
  for (let i = 0; i < n; i++) {
    const c = session.calls[i]!;
    columns.cached[i] = nan(c.tokens.cached);
    columns.appended[i] = nan(c.tokens.appended);
    columns.output[i] = nan(c.tokens.output);
    columns.input[i] = nan(c.tokens.input);
    let failed = false;
    for (const t of c.toolCalls) if (t.isError === true) failed = true;
    if (failed) columns.flags[i]! |= CALL_FLAG.failed;
  }
  for (const m of analysis.misses) {
    if (m.callIndex < 0 || m.callIndex >= n) continue;
    // The first miss of a call wins, as the call rows report it.
    if (columns.missCause[m.callIndex] === 0) columns.missCause[m.callIndex] = MISS_CAUSES.indexOf(m.cause) + 1;
    columns.flags[m.callIndex]! |= CALL_FLAG.miss;
  }
  for (const loop of analysis.retry.loops) for (const a of loop.attempts) if (a.callIndex >= 0 && a.callIndex < n) columns.flags[a.callIndex]! |= CALL_FLAG.loop;
  for (const c of session.compactions) if (c.beforeCall >= 0 && c.beforeCall < n) columns.flags[c.beforeCall]! |= CALL_FLAG.compaction;
  return columns;
}

/** Marks the calls that started each sub-agent (their tool call ids name the parent tool call). */
export function markSubagentStarts(columns: TimelineColumns, parentCallIndexes: readonly (number | null)[]): void {
  for (const i of parentCallIndexes) if (i !== null && i >= 0 && i < columns.flags.length) columns.flags[i]! |= CALL_FLAG.subagent;
}

/** The miss cause coded in `missCause`, or null. */
export function missCauseOf(code: number): MissCause | null {
  return code > 0 ? (MISS_CAUSES[code - 1] ?? null) : null;
}
