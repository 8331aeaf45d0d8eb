import { MISS_CAUSES } from '../analysis/cacheMisses';
import type { MissCause } from '../analysis/cacheMisses';
import type { SessionAnalysis } from '../analysis/sessionAnalysis';
import { COST_KIND_INDEX } from '../cost/callCost';
import type { SessionCost } from '../cost/callCost';
import type { Session } from '../trace/model';
import type { CallRow, CompactionMark, LoopView, SubagentLink } from './traceView';

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
  /**
   * Each call's dollars in the three stacks of the cost view (cache reads; uncached input,
   * cache writes and GPU time; output), NaN for a call without a price; null when the
   * session was not priced.
   */
  cost: CostColumns | null;
}

/** A session's calls in dollars, stacked as the token bars are. */
export interface CostColumns {
  cached: Float64Array;
  appended: Float64Array;
  output: Float64Array;
}

const nan = (v: number | null): number => (v === null ? Number.NaN : v);

/** Columns of n calls, all zero, with dollar columns when the session is priced. */
function emptyColumns(n: number, priced: boolean): TimelineColumns {
  return {
    cached: new Float64Array(n),
    appended: new Float64Array(n),
    output: new Float64Array(n),
    input: new Float64Array(n),
    flags: new Uint8Array(n),
    missCause: new Uint8Array(n),
    cost: priced ? { cached: new Float64Array(n), appended: new Float64Array(n), output: new Float64Array(n) } : null,
  };
}

/** Builds the columns of a session from its calls, its analysis (misses, loops) and its prices. */
export function buildTimelineColumns(
  session: Session,
  analysis: SessionAnalysis,
  cost: SessionCost | null = null,
): TimelineColumns {
  const n = session.calls.length;
  const columns = emptyColumns(n, cost !== null);
  if (cost && columns.cost) {
    const c = columns.cost;
    const kind = (i: number, k: keyof typeof COST_KIND_INDEX): number => cost.calls.kindOf(i, COST_KIND_INDEX[k]);
    for (let i = 0; i < n; i++) {
      // NaN (unpriced) stays NaN through the sum.
      c.cached[i] = kind(i, 'cacheRead');
      c.appended[i] = kind(i, 'input') + kind(i, 'cacheWrite5m') + kind(i, 'cacheWrite1h') + kind(i, 'gpuTime');
      c.output[i] = kind(i, 'output');
    }
  }
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
  for (const loop of analysis.retry.loops)
    for (const a of loop.attempts)
      if (a.callIndex >= 0 && a.callIndex < n) columns.flags[a.callIndex]! |= CALL_FLAG.loop;
  for (const c of session.compactions)
    if (c.beforeCall >= 0 && c.beforeCall < n) columns.flags[c.beforeCall]! |= CALL_FLAG.compaction;
  return columns;
}

/** Marks the calls that started each sub-agent (their tool call ids name the parent tool call). */
export function markSubagentStarts(columns: TimelineColumns, parentCallIndexes: readonly (number | null)[]): void {
  for (const i of parentCallIndexes)
    if (i !== null && i >= 0 && i < columns.flags.length) columns.flags[i]! |= CALL_FLAG.subagent;
}

/** The miss cause coded in `missCause`, or null. */
export function missCauseOf(code: number): MissCause | null {
  return code > 0 ? (MISS_CAUSES[code - 1] ?? null) : null;
}

/**
 * The same columns from a built view's call rows (the HTML report carries rows, not the
 * model): figures, failed tools and misses from each row, loops, compactions and
 * sub-agent starts from the session's marks, dollars from each row's cost (null when the
 * view was built without prices). Equal to buildTimelineColumns on the same session.
 */
export function timelineColumnsOfRows(
  rows: readonly CallRow[],
  loops: readonly Pick<LoopView, 'attemptCalls'>[],
  compactions: readonly Pick<CompactionMark, 'beforeCall'>[],
  subagents: readonly Pick<SubagentLink, 'parentCallIndex'>[],
): TimelineColumns {
  const n = rows.length;
  const priced = rows.some((r) => r.cost !== null);
  const columns = emptyColumns(n, priced);
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    columns.cached[i] = nan(r.cached);
    columns.appended[i] = nan(r.appended);
    columns.output[i] = nan(r.output);
    columns.input[i] = nan(r.input);
    if (r.tools.some((t) => t.failed === true)) columns.flags[i]! |= CALL_FLAG.failed;
    if (r.miss) {
      columns.missCause[i] = MISS_CAUSES.indexOf(r.miss.cause) + 1;
      columns.flags[i]! |= CALL_FLAG.miss;
    }
    if (columns.cost) {
      const k = r.cost?.byKind;
      columns.cost.cached[i] = k ? k.cacheRead : Number.NaN;
      columns.cost.appended[i] = k ? k.input + k.cacheWrite5m + k.cacheWrite1h + k.gpuTime : Number.NaN;
      columns.cost.output[i] = k ? k.output : Number.NaN;
    }
  }
  for (const loop of loops) for (const c of loop.attemptCalls) if (c >= 0 && c < n) columns.flags[c]! |= CALL_FLAG.loop;
  for (const c of compactions)
    if (c.beforeCall >= 0 && c.beforeCall < n) columns.flags[c.beforeCall]! |= CALL_FLAG.compaction;
  markSubagentStarts(
    columns,
    subagents.map((s) => s.parentCallIndex),
  );
  return columns;
}
