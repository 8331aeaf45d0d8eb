// The part of a session the timeline shows, and how zoom and pan move it. Positions are
// the timeline's slots: slot p covers [p, p + 1) on the x axis, so a window [lo, hi)
// shows hi − lo slots and "fit all" is [0, count). Pure, so it is tested in Node.

/** The x range shown, in slots (fractions allowed, so zoom is smooth). */
export interface ViewWindow {
  lo: number;
  hi: number;
}

/** Fewest slots a zoom shows (more would be a handful of wide slabs). */
export const MIN_SPAN = 10;

/** The whole session. */
export function fitAll(count: number): ViewWindow {
  return { lo: 0, hi: Math.max(1, count) };
}

/** The span a window may have with `count` slots: at least MIN_SPAN (or all, when fewer), at most all. */
function spanLimits(count: number): { min: number; max: number } {
  const max = Math.max(1, count);
  return { min: Math.min(MIN_SPAN, max), max };
}

/** Keeps a window inside [0, count) with a span between the limits, keeping its middle where it can. */
export function clampWindow(w: ViewWindow, count: number): ViewWindow {
  const { min, max } = spanLimits(count);
  const span = Math.min(max, Math.max(min, w.hi - w.lo));
  const middle = (w.lo + w.hi) / 2;
  let lo = middle - span / 2;
  lo = Math.max(0, Math.min(max - span, lo));
  return { lo, hi: lo + span };
}

/**
 * Zooms by `factor` (> 1 zooms in, showing fewer slots) keeping the slot under
 * `anchor` (an x position in slots) where it is on screen.
 */
export function zoomAround(w: ViewWindow, factor: number, anchor: number, count: number): ViewWindow {
  const { min, max } = spanLimits(count);
  const span = w.hi - w.lo;
  const next = Math.min(max, Math.max(min, span / factor));
  const at = Math.min(w.hi, Math.max(w.lo, anchor));
  const share = span > 0 ? (at - w.lo) / span : 0.5;
  const lo = at - share * next;
  return clampWindow({ lo, hi: lo + next }, count);
}

/** Moves the window by `slots` (negative: left), stopping at the ends. */
export function panBy(w: ViewWindow, slots: number, count: number): ViewWindow {
  return clampWindow({ lo: w.lo + slots, hi: w.hi + slots }, count);
}

/** One page left (−1) or right (+1): the next window of the same span, overlapping it by a tenth so the eye keeps its place. */
export function pageBy(w: ViewWindow, direction: -1 | 1, count: number): ViewWindow {
  return panBy(w, direction * (w.hi - w.lo) * 0.9, count);
}

/** The window of the same span centred on slot `slot`. */
export function centerOn(w: ViewWindow, slot: number, count: number): ViewWindow {
  const span = w.hi - w.lo;
  return clampWindow({ lo: slot + 0.5 - span / 2, hi: slot + 0.5 + span / 2 }, count);
}

/** The window moved as little as needed to show slot `slot` whole (with a slot of margin); the same window when it does. */
export function ensureVisible(w: ViewWindow, slot: number, count: number): ViewWindow {
  const span = w.hi - w.lo;
  const margin = Math.min(1, span / 4);
  if (slot >= w.lo + margin && slot + 1 <= w.hi - margin) return w;
  if (slot < w.lo + margin) return clampWindow({ lo: slot - margin, hi: slot - margin + span }, count);
  return clampWindow({ lo: slot + 1 + margin - span, hi: slot + 1 + margin }, count);
}

/** The window showing slots [first, last] with a little room around them (a bin clicked, a loop opened). */
export function windowAround(first: number, last: number, count: number): ViewWindow {
  const span = last - first + 1;
  const pad = Math.max(1, span * 0.1);
  return clampWindow({ lo: first - pad, hi: last + 1 + pad }, count);
}

/** True when the window shows every slot. */
export function showsAll(w: ViewWindow, count: number): boolean {
  return w.lo <= 1e-9 && w.hi >= Math.max(1, count) - 1e-9;
}

/** The slots a window touches: [first, end). */
export function visibleSlots(w: ViewWindow, count: number): { first: number; end: number } {
  const first = Math.max(0, Math.min(count, Math.floor(w.lo)));
  const end = Math.max(first, Math.min(count, Math.ceil(w.hi)));
  return { first, end };
}
