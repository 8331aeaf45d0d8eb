import { formatCount } from '../../src/core/text/formatNumbers';
import { shortSessionId } from '../../src/core/view/sessionList';
import { CALL_FLAG } from '../../src/core/view/timelineColumns';
import type { CompactionMark, EventMark, LoopView, SubagentLink } from '../../src/core/view/traceView';
import type { TimelineData } from './bins';
import { callAt, slotCount, slotOf } from './bins';

// What the timeline marks besides the bars, and how marks stay readable when thousands of
// them share a few hundred pixels: nearby glyphs fold into one with a count, overlapping
// labels into "+N". Also the jumps: next / previous failure, miss, loop, compaction.

/** A vertical marker on the timeline: a compaction or failed API requests before a call, or a sub-agent started by one. */
export interface TimelineMarker {
  kind: 'compaction' | 'subagent' | 'api-error';
  /** The call it belongs to: the first call after the compaction or the errors, the call that started the sub-agent. */
  callIndex: number;
  /** Short text drawn on the chart. */
  label: string;
  /** Full sentence for the marker list and screen readers. */
  description: string;
  /** The sub-agent's session, for sub-agent markers. */
  sessionId: string | null;
}

/** Compaction, API error and sub-agent markers, in call order (those before a call first at a tie). */
export function timelineMarkers(
  calls: number,
  compactions: readonly CompactionMark[],
  events: readonly EventMark[],
  subagents: readonly SubagentLink[],
): TimelineMarker[] {
  const markers: TimelineMarker[] = [];
  for (const c of compactions) {
    const how = [c.trigger, c.preTokens !== null ? `${formatCount(c.preTokens)} tokens before` : null]
      .filter((s) => s !== null)
      .join(', ');
    markers.push({
      kind: 'compaction',
      callIndex: Math.min(c.beforeCall, Math.max(0, calls - 1)),
      label: c.rewind ? 'rewind' : 'compaction',
      description: c.rewind
        ? `Rewind before call ${c.beforeCall + 1}: the conversation was cut back to an earlier message`
        : `Compaction before call ${c.beforeCall + 1}${how ? ` (${how})` : ''}`,
      sessionId: null,
    });
  }
  for (const e of events) {
    const what = e.count === 1 ? 'API error' : `${e.count} API errors`;
    markers.push({
      kind: 'api-error',
      callIndex: Math.min(e.beforeCall, Math.max(0, calls - 1)),
      label: what,
      description: `${what} before call ${Math.min(e.beforeCall, calls) + 1}: ${e.text}`,
      sessionId: null,
    });
  }
  for (const s of subagents) {
    if (s.parentCallIndex === null) continue;
    const name = `${s.role === 'compaction' ? 'compaction agent' : 'sub-agent'} ${shortSessionId(s.sessionId)}`;
    markers.push({
      kind: 'subagent',
      callIndex: s.parentCallIndex,
      label: name,
      description: `${name[0]!.toUpperCase()}${name.slice(1)} started by call ${s.parentCallIndex + 1} (${s.calls} ${s.calls === 1 ? 'call' : 'calls'})`,
      sessionId: s.sessionId,
    });
  }
  const order = (m: TimelineMarker): number => (m.kind === 'subagent' ? 1 : 0);
  return markers.sort((a, b) => a.callIndex - b.callIndex || order(a) - order(b));
}

/** A label to place at `x` (its left end), `width` pixels wide. */
export interface LabelItem {
  x: number;
  width: number;
  text: string;
}

/** A label as drawn: one or several merged items. */
export interface PlacedLabel {
  x: number;
  text: string;
  /** How many items it stands for. */
  items: number;
}

/**
 * Merges overlapping labels left to right: an item that starts within `gap` pixels of the
 * end of the last kept label is folded into it, which then says how many it stands for:
 * "compaction ×4" when they all read the same, "compaction +3" otherwise. The merged
 * text's own width (`measure`) decides what the next label must clear. Greedy and linear;
 * input in x order.
 */
export function mergeLabels(
  items: readonly LabelItem[],
  gap = 4,
  measure: (text: string) => number = (t) => t.length * 6 + 10,
): PlacedLabel[] {
  const out: PlacedLabel[] = [];
  let lastEnd = -Infinity;
  let last: (PlacedLabel & { base: string; same: boolean }) | null = null;
  for (const item of items) {
    if (last && item.x < lastEnd + gap) {
      last.items += 1;
      last.same &&= item.text === last.base;
      last.text = last.same ? `${last.base} ×${last.items}` : `${last.base} +${last.items - 1}`;
      lastEnd = Math.max(lastEnd, last.x + measure(last.text));
      continue;
    }
    last = { x: item.x, text: item.text, items: 1, base: item.text, same: true };
    out.push(last);
    lastEnd = item.x + item.width;
  }
  return out.map(({ x, text, items }) => ({ x, text, items }));
}

/** A glyph for one or more marked calls that fall within a few pixels of each other. */
export interface MarkGroup {
  /** Centre of the group, pixels. */
  x: number;
  count: number;
  /** The first call of the group. */
  callIndex: number;
}

/** The slots (ascending) whose call carries `flag`: found once per data, so each frame walks only the marked slots in view. */
export function markedSlots(d: TimelineData, flag: number): Int32Array {
  const flags = d.columns.flags;
  const n = slotCount(d);
  let k = 0;
  for (let slot = 0; slot < n; slot++) if (flags[callAt(d, slot)]! & flag) k += 1;
  const out = new Int32Array(k);
  k = 0;
  for (let slot = 0; slot < n; slot++) if (flags[callAt(d, slot)]! & flag) out[k++] = slot;
  return out;
}

/** The first index of a sorted list holding a value ≥ `value`. */
export function lowerBound(sorted: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Groups marked calls so no two glyphs are closer than `minGap` pixels: each group is one
 * glyph with a count. `pixelOf` gives a slot's centre. `marked` is the data's marked slots
 * (markedSlots), when the caller keeps them; linear in the marked slots shown.
 */
export function groupMarks(
  d: TimelineData,
  flag: number,
  firstSlot: number,
  endSlot: number,
  pixelOf: (slot: number) => number,
  minGap: number,
  marked: Int32Array = markedSlots(d, flag),
): MarkGroup[] {
  const out: MarkGroup[] = [];
  const end = lowerBound(marked, endSlot);
  for (let k = lowerBound(marked, firstSlot); k < end; ) {
    const x0 = pixelOf(marked[k]!);
    // The group is every following mark less than minGap right of its first (pixels grow with
    // slots): found by binary search, so a zoomed-out window of a million calls costs per
    // glyph drawn, not per marked call.
    let lo = k + 1;
    let hi = end;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pixelOf(marked[mid]!) - x0 < minGap) lo = mid + 1;
      else hi = mid;
    }
    out.push({ x: (x0 + pixelOf(marked[lo - 1]!)) / 2, count: lo - k, callIndex: callAt(d, marked[k]!) });
    k = lo;
  }
  return out;
}

/** What the jump keys and buttons move between. */
export type JumpKind = 'failure' | 'miss' | 'loop' | 'compaction';

export const JUMP_KINDS: readonly JumpKind[] = ['failure', 'miss', 'loop', 'compaction'];

/** Words for a kind: singular and plural. */
export const JUMP_WORDS: Record<JumpKind, [string, string]> = {
  failure: ['failed call', 'failed calls'],
  miss: ['cache miss', 'cache misses'],
  loop: ['retry loop', 'retry loops'],
  compaction: ['compaction', 'compactions'],
};

/** The calls a jump kind stops at, ascending: failed calls, missed calls, each loop's first attempt, the first call after each compaction. */
export function jumpTargets(kind: JumpKind, d: TimelineData, loops: readonly LoopView[]): number[] {
  if (kind === 'loop') {
    const firsts = loops
      .map((l) => l.attemptCalls[0] ?? l.firstCall)
      .filter((c) => c >= 0 && c < d.columns.flags.length);
    return [...new Set(firsts)].sort((a, b) => a - b);
  }
  const flag = kind === 'failure' ? CALL_FLAG.failed : kind === 'miss' ? CALL_FLAG.miss : CALL_FLAG.compaction;
  const out: number[] = [];
  const flags = d.columns.flags;
  for (let i = 0; i < flags.length; i++) if (flags[i]! & flag) out.push(i);
  return out;
}

/** Where a jump lands: the target call, its place among the targets (1-based) and how many there are. */
export interface Jump {
  callIndex: number;
  ordinal: number;
  total: number;
}

/**
 * The next (direction 1) or previous (−1) target after / before call `from`, wrapping
 * around; from no selection, the first or the last. Null when there is none.
 */
export function jump(targets: readonly number[], from: number | null, direction: 1 | -1): Jump | null {
  const n = targets.length;
  if (n === 0) return null;
  let k: number;
  if (from === null) k = direction === 1 ? 0 : n - 1;
  else {
    // First target > from (or last < from), by binary search.
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (targets[mid]! <= from) lo = mid + 1;
      else hi = mid;
    }
    if (direction === 1) k = lo < n ? lo : 0;
    else {
      const before = targets[lo - 1] === from ? lo - 2 : lo - 1;
      k = before >= 0 ? before : n - 1;
    }
  }
  return { callIndex: targets[k]!, ordinal: k + 1, total: n };
}

/** The slot range a loop covers in the data (its first to its last call, filtered calls skipped), or null when none of it is shown. */
export function loopSlots(
  d: TimelineData,
  loop: Pick<LoopView, 'firstCall' | 'lastCall'>,
): { first: number; last: number } | null {
  const first = slotOf(d, loop.firstCall);
  const last = slotOf(d, loop.lastCall + 1) - 1;
  if (first >= slotCount(d) || last < first) return null;
  return { first, last };
}
