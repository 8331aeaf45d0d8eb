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
export function binCalls(
  d: TimelineData,
  w: ViewWindow,
  maxBins: number,
  showCached: boolean,
  pyramid: BinPyramid | null = null,
): Bins {
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
  const acc = new Float64Array(AGGREGATES);
  const p = pyramid && pyramid.data === d ? pyramid : null;
  for (let bin = 0; bin < k; bin++) {
    const a = first + Math.floor((bin * span) / k);
    const e = first + Math.floor(((bin + 1) * span) / k);
    acc.set(EMPTY);
    if (p) p.accumulate(acc, a, e);
    else accumulateSlots(d, acc, a, e);
    b.first[bin] = a;
    b.size[bin] = e - a;
    b.cached[bin] = acc[A.knownCached]! > 0 ? acc[A.sumCached]! / acc[A.knownCached]! : 0;
    b.appended[bin] = acc[A.knownAppended]! > 0 ? acc[A.sumAppended]! / acc[A.knownAppended]! : 0;
    b.output[bin] = acc[A.knownOutput]! > 0 ? acc[A.sumOutput]! / acc[A.knownOutput]! : 0;
    b.stackMax[bin] = showCached ? acc[A.stackMax]! : acc[A.stackMaxUncached]!;
    b.context[bin] = acc[A.context]! === -Infinity ? Number.NaN : acc[A.context]!;
    b.failed[bin] = acc[A.failed]!;
    b.misses[bin] = acc[A.misses]!;
  }
  return b;
}

/** What a run of slots adds up to, by index in an aggregate vector: sums and counts of known values, maxima, flag counts. */
const A = {
  sumCached: 0,
  knownCached: 1,
  sumAppended: 2,
  knownAppended: 3,
  sumOutput: 4,
  knownOutput: 5,
  /** Largest stack with cached tokens, and without. */
  stackMax: 6,
  stackMaxUncached: 7,
  /** Largest known prompt; −∞ when none. */
  context: 8,
  failed: 9,
  misses: 10,
} as const;
const AGGREGATES = 11;
const EMPTY = Float64Array.from({ length: AGGREGATES }, (_, i) => (i === A.context ? -Infinity : 0));

/** Adds slots [a, e) to an aggregate vector, call by call. */
function accumulateSlots(d: TimelineData, acc: Float64Array, a: number, e: number): void {
  const { cached, appended, output, input, flags } = d.columns;
  const shown = d.shown;
  for (let slot = a; slot < e; slot++) {
    const i = shown ? shown[slot]! : slot;
    const c = cached[i]!;
    const ap = appended[i]!;
    const o = output[i]!;
    if (!Number.isNaN(c)) {
      acc[A.sumCached] = acc[A.sumCached]! + c;
      acc[A.knownCached] = acc[A.knownCached]! + 1;
    }
    if (!Number.isNaN(ap)) {
      acc[A.sumAppended] = acc[A.sumAppended]! + ap;
      acc[A.knownAppended] = acc[A.knownAppended]! + 1;
    }
    if (!Number.isNaN(o)) {
      acc[A.sumOutput] = acc[A.sumOutput]! + o;
      acc[A.knownOutput] = acc[A.knownOutput]! + 1;
    }
    const rest = known(ap) + known(o);
    if (rest > acc[A.stackMaxUncached]!) acc[A.stackMaxUncached] = rest;
    if (rest + known(c) > acc[A.stackMax]!) acc[A.stackMax] = rest + known(c);
    const x = input[i]!;
    if (!Number.isNaN(x) && x > acc[A.context]!) acc[A.context] = x;
    const f = flags[i]!;
    if (f & CALL_FLAG.failed) acc[A.failed] = acc[A.failed]! + 1;
    if (f & CALL_FLAG.miss) acc[A.misses] = acc[A.misses]! + 1;
  }
}

/** Merges aggregate vector `from` (at offset `at`) into `acc`. */
function mergeInto(acc: Float64Array, from: Float64Array, at: number): void {
  for (let j = 0; j < AGGREGATES; j++) {
    const v = from[at + j]!;
    if (j === A.stackMax || j === A.stackMaxUncached || j === A.context) {
      if (v > acc[j]!) acc[j] = v;
    } else acc[j] = acc[j]! + v;
  }
}

/** Blocks per level of the pyramid: each entry of level L + 1 sums FANOUT entries of level L. */
const FANOUT = 16;

/**
 * The session's slots summed in blocks of 16, 256, 4,096… calls (sums and counts of known
 * values, maxima, flag counts), built once per data, so a bin spanning s calls is
 * aggregated from at most 2·15 entries per level instead of s calls: binning a window is
 * O(bins · log calls), not O(calls in view), which kept a zoomed-out million-call frame
 * at 9 ms of binning. Sums are added in a different order than call by call, so a
 * fractional column (dollars) can differ in its last bits. About 6 % of the columns'
 * memory.
 */
export class BinPyramid {
  /** Level L (from 1) as AGGREGATES numbers per block of FANOUT^L slots. */
  private readonly levels: Float64Array[] = [];

  constructor(readonly data: TimelineData) {
    const n = slotCount(data);
    let below = n;
    for (let level = 1; below > FANOUT; level++) {
      const blocks = Math.floor(below / FANOUT);
      const out = new Float64Array(blocks * AGGREGATES);
      const acc = new Float64Array(AGGREGATES);
      for (let b = 0; b < blocks; b++) {
        acc.set(EMPTY);
        if (level === 1) accumulateSlots(data, acc, b * FANOUT, (b + 1) * FANOUT);
        else
          for (let c = b * FANOUT; c < (b + 1) * FANOUT; c++) mergeInto(acc, this.levels[level - 2]!, c * AGGREGATES);
        out.set(acc, b * AGGREGATES);
      }
      this.levels.push(out);
      below = blocks;
    }
  }

  /** Adds slots [a, e) to `acc`: whole blocks from the highest level that fits, the ragged ends from the level below. */
  accumulate(acc: Float64Array, a: number, e: number): void {
    let lo = a;
    let hi = e;
    for (let level = 0; ; level++) {
      const top = level >= this.levels.length;
      const up = Math.ceil(lo / FANOUT);
      const down = Math.floor(hi / FANOUT);
      if (top || up >= down || down > this.levels[level]!.length / AGGREGATES) {
        this.add(level, acc, lo, hi);
        return;
      }
      this.add(level, acc, lo, up * FANOUT);
      this.add(level, acc, down * FANOUT, hi);
      lo = up;
      hi = down;
    }
  }

  /** Adds entries [lo, hi) of a level (level 0: the slots themselves). */
  private add(level: number, acc: Float64Array, lo: number, hi: number): void {
    if (lo >= hi) return;
    if (level === 0) {
      accumulateSlots(this.data, acc, lo, hi);
      return;
    }
    const entries = this.levels[level - 1]!;
    for (let i = lo; i < hi; i++) mergeInto(acc, entries, i * AGGREGATES);
  }
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
