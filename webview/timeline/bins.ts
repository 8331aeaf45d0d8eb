import { CALL_FLAG } from '../../src/core/view/timelineColumns';
import type { TimelineColumns } from '../../src/core/view/timelineColumns';
import type { ViewWindow } from './viewWindow';
import { visibleSlots } from './viewWindow';

// Binning: when a session has more calls than the plot has pixels, each bin stands for a
// run of neighbouring calls (its mean stack drawn solid over the light envelope of its
// largest one, the context line at its largest prompt), so a million calls draw as a
// thousand columns. Pure and O(visible calls), so it runs on every frame of a zoom.

/** The calls the timeline shows, slot by slot: every call, or the ones a filter kept. */
export interface TimelineData {
  columns: TimelineColumns;
  /** Call index of each slot when filtered (ascending); null = slot p is call p. */
  shown: Int32Array | null;
}

/** Slots of the data (calls shown). */
export function slotCount(d: TimelineData): number {
  return d.shown ? d.shown.length : d.columns.flags.length;
}

/** The call in slot `slot`. */
export function callAt(d: TimelineData, slot: number): number {
  return d.shown ? d.shown[slot]! : slot;
}

/** The slot of call `call`, or the slot of the next shown call when the filter hides it (slotCount when none follows). */
export function slotOf(d: TimelineData, call: number): number {
  if (!d.shown) return call;
  let lo = 0;
  let hi = d.shown.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (d.shown[mid]! < call) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** True when the call is shown (always, without a filter). */
export function isShown(d: TimelineData, call: number): boolean {
  const s = slotOf(d, call);
  return s < slotCount(d) && callAt(d, s) === call;
}

/** Columns of bins over a window. */
export interface Bins {
  length: number;
  /** One call per bin: the bars are the calls themselves. */
  single: boolean;
  /** First slot of each bin and how many slots it holds. */
  first: Int32Array;
  size: Int32Array;
  /** Mean of the known values in the bin (the value itself for a single call); 0 when none is known. */
  cached: Float64Array;
  appended: Float64Array;
  output: Float64Array;
  /** The largest stack (cached if shown + appended + output) of a call in the bin. */
  stackMax: Float64Array;
  /** The largest prompt (context) of a call in the bin; NaN when none is known. */
  context: Float64Array;
  /** Calls in the bin with a failed tool call, and with a cache miss. */
  failed: Int32Array;
  misses: Int32Array;
}

const known = (v: number): number => (Number.isNaN(v) ? 0 : v);

/**
 * Bins the slots a window shows into at most `maxBins` columns of whole slots: bin b
 * holds slots [first + ⌊b·n/k⌋, first + ⌊(b+1)·n/k⌋) of the n visible ones, k bins.
 */
export function binCalls(d: TimelineData, w: ViewWindow, maxBins: number, showCached: boolean): Bins {
  const count = slotCount(d);
  const { first, end } = visibleSlots(w, count);
  const span = end - first;
  const k = Math.max(0, Math.min(span, Math.max(1, Math.floor(maxBins))));
  const b: Bins = {
    length: k,
    single: span <= k,
    first: new Int32Array(k),
    size: new Int32Array(k),
    cached: new Float64Array(k),
    appended: new Float64Array(k),
    output: new Float64Array(k),
    stackMax: new Float64Array(k),
    context: new Float64Array(k),
    failed: new Int32Array(k),
    misses: new Int32Array(k),
  };
  const { cached, appended, output, input, flags } = d.columns;
  for (let bin = 0; bin < k; bin++) {
    const a = first + Math.floor((bin * span) / k);
    const e = first + Math.floor(((bin + 1) * span) / k);
    let sc = 0;
    let nc = 0;
    let sa = 0;
    let na = 0;
    let so = 0;
    let no = 0;
    let top = 0;
    let ctx = Number.NaN;
    let failed = 0;
    let misses = 0;
    for (let slot = a; slot < e; slot++) {
      const i = d.shown ? d.shown[slot]! : slot;
      const c = cached[i]!;
      const ap = appended[i]!;
      const o = output[i]!;
      if (!Number.isNaN(c)) {
        sc += c;
        nc += 1;
      }
      if (!Number.isNaN(ap)) {
        sa += ap;
        na += 1;
      }
      if (!Number.isNaN(o)) {
        so += o;
        no += 1;
      }
      const stack = (showCached ? known(c) : 0) + known(ap) + known(o);
      if (stack > top) top = stack;
      const x = input[i]!;
      if (!Number.isNaN(x) && !(x <= ctx)) ctx = x;
      const f = flags[i]!;
      if (f & CALL_FLAG.failed) failed += 1;
      if (f & CALL_FLAG.miss) misses += 1;
    }
    b.first[bin] = a;
    b.size[bin] = e - a;
    b.cached[bin] = nc > 0 ? sc / nc : 0;
    b.appended[bin] = na > 0 ? sa / na : 0;
    b.output[bin] = no > 0 ? so / no : 0;
    b.stackMax[bin] = top;
    b.context[bin] = ctx;
    b.failed[bin] = failed;
    b.misses[bin] = misses;
  }
  return b;
}

/** The bin holding slot `slot`, or −1. */
export function binOfSlot(b: Bins, slot: number): number {
  let lo = 0;
  let hi = b.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const start = b.first[mid]!;
    if (slot < start) hi = mid - 1;
    else if (slot >= start + b.size[mid]!) lo = mid + 1;
    else return mid;
  }
  return -1;
}

/** Smallest, mean and largest of one figure over some calls, and how many knew it. */
export interface FigureStats {
  known: number;
  min: number | null;
  mean: number | null;
  max: number | null;
}

/** Exact figures of the calls in slots [first, first + size): what a bin's tooltip lists. */
export interface RunStats {
  firstCall: number;
  lastCall: number;
  calls: number;
  cached: FigureStats;
  appended: FigureStats;
  output: FigureStats;
  input: FigureStats;
  failed: number;
  misses: number;
  loopAttempts: number;
}

function figure(values: Float64Array, d: TimelineData, first: number, end: number): FigureStats {
  let n = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let slot = first; slot < end; slot++) {
    const v = values[callAt(d, slot)]!;
    if (Number.isNaN(v)) continue;
    n += 1;
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return n === 0 ? { known: 0, min: null, mean: null, max: null } : { known: n, min, mean: sum / n, max };
}

/** The exact statistics of a run of slots. */
export function runStats(d: TimelineData, first: number, size: number): RunStats {
  const end = Math.min(slotCount(d), first + size);
  let failed = 0;
  let misses = 0;
  let loops = 0;
  for (let slot = first; slot < end; slot++) {
    const f = d.columns.flags[callAt(d, slot)]!;
    if (f & CALL_FLAG.failed) failed += 1;
    if (f & CALL_FLAG.miss) misses += 1;
    if (f & CALL_FLAG.loop) loops += 1;
  }
  return {
    firstCall: callAt(d, first),
    lastCall: callAt(d, end - 1),
    calls: end - first,
    cached: figure(d.columns.cached, d, first, end),
    appended: figure(d.columns.appended, d, first, end),
    output: figure(d.columns.output, d, first, end),
    input: figure(d.columns.input, d, first, end),
    failed,
    misses,
    loopAttempts: loops,
  };
}

/** The smallest round number (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^k) at or above `value`, so axis maxima get round ticks. */
export function niceCeiling(value: number): number {
  if (!(value > 0)) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
    if (step * power >= value * (1 - 1e-12)) return step * power;
  }
  return 10 * power;
}

/** The y maxima for a set of bins: one shared scale while cached tokens are shown (bars and context in the same units), else each its own. */
export function axisMaxima(b: Bins, showCached: boolean): { bars: number; context: number } {
  let bars = 0;
  let context = 0;
  for (let i = 0; i < b.length; i++) {
    if (b.stackMax[i]! > bars) bars = b.stackMax[i]!;
    const c = b.context[i]!;
    if (!Number.isNaN(c) && c > context) context = c;
  }
  if (showCached) {
    const shared = niceCeiling(Math.max(bars, context));
    return { bars: shared, context: shared };
  }
  return { bars: niceCeiling(bars), context: niceCeiling(context) };
}
