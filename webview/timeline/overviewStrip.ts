import { formatCount } from '../../src/core/text/formatNumbers';
import type { Palette } from '../shared/palette';
import { withAlpha } from '../shared/palette';
import { binCalls, callAt, slotCount } from './bins';
import type { Bins, TimelineData } from './bins';
import { clampWindow, fitAll, showsAll } from './viewWindow';
import type { ViewWindow } from './viewWindow';
import { capture, release } from '../shared/pointer';

/** What the strip tells its owner. */
export interface OverviewCallbacks {
  onWindow(w: ViewWindow): void;
}

/** Pixels from a brush edge that grab the edge (resize) rather than the brush (move). */
const EDGE_PX = 6;

/**
 * The whole session in a thin strip under the timeline, with a brush over the part the
 * timeline shows: drag the brush to pan, drag its edges to zoom, click beside it to
 * centre it there. The session is binned once per data or width change; each window
 * change only redraws the brush. Owns its canvas; the owner keeps the window.
 */
export class OverviewStrip {
  private data: TimelineData | null = null;
  private showCached = true;
  private bins: Bins | null = null;
  private binsWidth = 0;
  /** The session drawn once (bins and failure ticks); each window change only copies it and draws the brush. */
  private backdrop: HTMLCanvasElement | null = null;
  private window: ViewWindow = { lo: 0, hi: 1 };
  private drag: { mode: 'move' | 'lo' | 'hi'; x: number; window: ViewWindow; pointer: number } | null = null;
  private left = 0;
  private width = 0;

  constructor(
    private readonly wrapper: HTMLElement,
    private readonly canvas: HTMLCanvasElement,
    private palette: Palette,
    private readonly callbacks: OverviewCallbacks,
  ) {
    canvas.addEventListener('pointerdown', (e) => this.onPointerDown(e));
    canvas.addEventListener('pointermove', (e) => this.onPointerMove(e));
    canvas.addEventListener('pointerup', (e) => this.endDrag(e));
    canvas.addEventListener('pointercancel', (e) => this.endDrag(e));
    // Its own box: a split, the sidebar, a narrower editor change the strip's width, and its canvas must follow.
    new ResizeObserver(() => {
      if (this.canvas.width !== Math.round(this.canvas.clientWidth * (window.devicePixelRatio || 1))) this.draw();
    }).observe(canvas);
  }

  setData(data: TimelineData, showCached: boolean): void {
    this.data = data;
    this.showCached = showCached;
    this.bins = null;
    this.backdrop = null;
    this.draw();
  }

  setPalette(palette: Palette): void {
    this.palette = palette;
    this.backdrop = null;
    this.draw();
  }

  /** Lines the strip up with the timeline's plot area (left offset and width in CSS pixels). */
  align(left: number, width: number): void {
    if (Math.abs(left - this.left) < 0.5 && Math.abs(width - this.width) < 0.5) return;
    this.left = left;
    this.width = width;
    this.bins = null;
    this.draw();
  }

  setWindow(w: ViewWindow): void {
    this.window = w;
    this.draw();
  }

  clear(): void {
    this.data = null;
    this.bins = null;
    this.canvas.getContext('2d')?.clearRect(0, 0, this.canvas.width, this.canvas.height);
  }

  private get count(): number {
    return this.data ? slotCount(this.data) : 0;
  }

  private xOf(slot: number): number {
    return this.left + (slot / Math.max(1, this.count)) * this.width;
  }

  private slotAt(px: number): number {
    return ((px - this.left) / Math.max(1, this.width)) * this.count;
  }

  /** Paints the session (binned to the strip's width, once) and the brush. */
  draw(): void {
    const d = this.data;
    const ctx = this.canvas.getContext('2d');
    if (!d || !ctx) return;
    const ratio = window.devicePixelRatio || 1;
    const cssWidth = this.canvas.clientWidth;
    const cssHeight = this.canvas.clientHeight;
    if (cssWidth === 0 || cssHeight === 0) return;
    if (this.canvas.width !== Math.round(cssWidth * ratio) || this.canvas.height !== Math.round(cssHeight * ratio)) {
      this.canvas.width = Math.round(cssWidth * ratio);
      this.canvas.height = Math.round(cssHeight * ratio);
    }
    if (this.width <= 0) {
      this.left = 0;
      this.width = cssWidth;
    }
    const p = this.palette;
    if (
      !this.bins ||
      this.binsWidth !== this.width ||
      !this.backdrop ||
      this.backdrop.width !== this.canvas.width ||
      this.backdrop.height !== this.canvas.height
    ) {
      this.bins = binCalls(d, fitAll(this.count), Math.max(1, Math.floor(this.width)), this.showCached);
      this.binsWidth = this.width;
      this.backdrop = this.paintBackdrop(this.bins, cssHeight, ratio);
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    ctx.drawImage(this.backdrop, 0, 0);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    // The brush: the window, with the rest dimmed.
    const w = this.window;
    const bx0 = this.xOf(w.lo);
    const bx1 = Math.max(bx0 + 2, this.xOf(w.hi));
    ctx.fillStyle = withAlpha(p.foreground, 0.18);
    ctx.fillRect(this.left, 0, bx0 - this.left, cssHeight);
    ctx.fillRect(bx1, 0, this.left + this.width - bx1, cssHeight);
    ctx.strokeStyle = p.selection;
    ctx.lineWidth = p.highContrast ? 2 : 1.5;
    ctx.strokeRect(bx0 + 0.75, 0.75, bx1 - bx0 - 1.5, cssHeight - 1.5);
    // Grips on the edges.
    ctx.fillStyle = p.selection;
    ctx.fillRect(bx0, cssHeight / 2 - 6, 3, 12);
    ctx.fillRect(bx1 - 3, cssHeight / 2 - 6, 3, 12);
    const count = this.count;
    const first = Math.max(0, Math.min(count - 1, Math.floor(w.lo)));
    const last = Math.max(first, Math.min(count - 1, Math.ceil(w.hi) - 1));
    this.wrapper.dataset['brush'] = `${Math.round(bx0)},${Math.round(bx1)}`;
    this.wrapper.dataset['brushArea'] = `${Math.round(this.left)},${Math.round(this.left + this.width)}`;
    this.canvas.setAttribute('aria-valuemin', '1');
    this.canvas.setAttribute('aria-valuemax', String(Math.max(1, count)));
    this.canvas.setAttribute('aria-valuenow', String(count > 0 ? callAt(d, first) + 1 : 1));
    this.canvas.setAttribute(
      'aria-valuetext',
      count === 0
        ? 'no calls'
        : showsAll(w, count)
          ? `all ${formatCount(count)} calls`
          : `calls ${formatCount(callAt(d, first) + 1)} to ${formatCount(callAt(d, last) + 1)} of ${formatCount(count)}`,
    );
  }

  /** The whole session, binned to the strip's width, on a canvas of its own. */
  private paintBackdrop(b: Bins, cssHeight: number, ratio: number): HTMLCanvasElement {
    const backdrop = document.createElement('canvas');
    backdrop.width = this.canvas.width;
    backdrop.height = this.canvas.height;
    const ctx = backdrop.getContext('2d')!;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    const p = this.palette;
    let max = 0;
    for (let i = 0; i < b.length; i++)
      max = Math.max(max, b.stackMax[i]!, Number.isNaN(b.context[i]!) ? 0 : b.context[i]!);
    const h = cssHeight - 2;
    const scale = max > 0 ? h / max : 0;
    ctx.fillStyle = withAlpha(p.foreground, 0.05);
    ctx.fillRect(this.left, 0, this.width, cssHeight);
    ctx.fillStyle = withAlpha(p.cached, p.highContrast ? 1 : 0.6);
    for (let i = 0; i < b.length; i++) {
      const x0 = this.xOf(b.first[i]!);
      const x1 = this.xOf(b.first[i]! + b.size[i]!);
      const top = b.stackMax[i]! * scale;
      if (top > 0) ctx.fillRect(x0, cssHeight - 1 - top, Math.max(1, x1 - x0), top);
    }
    // Failed calls as ticks along the top, so the strip shows where trouble was.
    ctx.fillStyle = p.failed;
    for (let i = 0; i < b.length; i++)
      if (b.failed[i]! > 0)
        ctx.fillRect(
          this.xOf(b.first[i]!),
          0,
          Math.max(1, this.xOf(b.first[i]! + b.size[i]!) - this.xOf(b.first[i]!)),
          3,
        );
    return backdrop;
  }

  private offsetX(e: MouseEvent): number {
    return e.clientX - this.canvas.getBoundingClientRect().left;
  }

  private onPointerDown(e: PointerEvent): void {
    if (!this.data || e.button !== 0) return;
    const x = this.offsetX(e);
    const bx0 = this.xOf(this.window.lo);
    const bx1 = this.xOf(this.window.hi);
    let mode: 'move' | 'lo' | 'hi';
    if (Math.abs(x - bx0) <= EDGE_PX) mode = 'lo';
    else if (Math.abs(x - bx1) <= EDGE_PX) mode = 'hi';
    else if (x > bx0 && x < bx1) mode = 'move';
    else {
      // Beside the brush: centre the brush there, then drag it from there.
      const span = this.window.hi - this.window.lo;
      const at = this.slotAt(x);
      const next = clampWindow({ lo: at - span / 2, hi: at + span / 2 }, this.count);
      this.window = next;
      this.callbacks.onWindow(next);
      this.draw();
      mode = 'move';
    }
    this.drag = { mode, x, window: this.window, pointer: e.pointerId };
    capture(this.canvas, e.pointerId);
  }

  private onPointerMove(e: PointerEvent): void {
    const x = this.offsetX(e);
    if (!this.drag) {
      const bx0 = this.xOf(this.window.lo);
      const bx1 = this.xOf(this.window.hi);
      this.canvas.style.cursor =
        Math.abs(x - bx0) <= EDGE_PX || Math.abs(x - bx1) <= EDGE_PX
          ? 'ew-resize'
          : x > bx0 && x < bx1
            ? 'grab'
            : 'pointer';
      return;
    }
    if (this.drag.pointer !== e.pointerId || !this.data) return;
    const delta = ((x - this.drag.x) / Math.max(1, this.width)) * this.count;
    const w = this.drag.window;
    let next: ViewWindow;
    if (this.drag.mode === 'move') next = clampWindow({ lo: w.lo + delta, hi: w.hi + delta }, this.count);
    else if (this.drag.mode === 'lo')
      next = clampWindow({ lo: Math.min(w.lo + delta, w.hi - 1), hi: w.hi }, this.count);
    else next = clampWindow({ lo: w.lo, hi: Math.max(w.hi + delta, w.lo + 1) }, this.count);
    // An edge drag keeps the other edge where it is (clampWindow keeps the middle otherwise).
    if (this.drag.mode === 'lo' && next.hi !== w.hi)
      next = clampWindow({ lo: w.hi - (next.hi - next.lo), hi: w.hi }, this.count);
    if (this.drag.mode === 'hi' && next.lo !== w.lo)
      next = clampWindow({ lo: w.lo, hi: w.lo + (next.hi - next.lo) }, this.count);
    this.window = next;
    this.callbacks.onWindow(next);
    this.draw();
  }

  private endDrag(e: PointerEvent): void {
    release(this.canvas, e.pointerId);
    this.drag = null;
  }
}
