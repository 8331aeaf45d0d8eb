import { Chart, LinearScale } from 'chart.js';
import type { ChartArea, Plugin, Scale } from 'chart.js';
import { formatCompact, formatCount, formatUsd } from '../../src/core/text/formatNumbers';
import { CALL_FLAG } from '../../src/core/view/timelineColumns';
import type { CallRow, LoopView } from '../../src/core/view/traceView';
import { analysisTooltipLines } from '../analysis/analysisModel';
import { writePlotArea } from '../shared/chartParts';
import type { Palette } from '../shared/palette';
import { diagonalHatchTile, mixOver, withAlpha } from '../shared/palette';
import { PlotRaster, pack, unpack } from './plotRaster';
import type { Packed, Tile } from './plotRaster';
import { axisMaxima, BinPyramid, binCalls, binOfSlot, callAt, runStats, slotCount, slotOf } from './bins';
import type { Bins, TimelineData } from './bins';
import { groupMarks, loopSlots, lowerBound, markedSlots, mergeLabels } from './marks';
import type { TimelineMarker } from './marks';
import { binLines, binTitle, tooltipLines, tooltipTitle } from './timelineModel';
import type { BarView } from './timelineModel';
import { clampWindow, fitAll, panBy, visibleSlots, zoomAround } from './viewWindow';
import type { ViewWindow } from './viewWindow';
import { capture, release } from '../shared/pointer';
import { paintUnpriced, unpricedGroups } from './unpricedMarks';

// Only the scales: the bars, the context line and every mark are painted by this file's
// plugin, one fillRect per bin, because chart.js bar elements cost tens of milliseconds
// per update at a thousand bars while a frame has sixteen.
Chart.register(LinearScale);

/** What the timeline tells its owner. */
export interface TimelineCallbacks {
  /** A single call's bar was clicked: select it. */
  onPick(callIndex: number): void;
  /** The window changed by mouse, wheel or touch. */
  onWindow(w: ViewWindow): void;
  /** The row of a call, if the page has it (single-call tooltips); asks for it otherwise. */
  rowOf(callIndex: number): CallRow | undefined;
  /** chart.js laid the plot out (its area may have moved: a resize, wider axis labels). */
  onLayout?(): void;
}

/** Room under the x axis for the cache-miss diamonds, between the axis line and the call numbers. */
const MISS_LANE_PX = 12;
/** Pixels per bin when calls outnumber pixels: a 2-px column keeps the mean and the envelope apart. */
const BIN_PX = 2;
/** Least distance between two failure triangles or miss diamonds; closer ones fold into one glyph with a count. */
const MARK_GAP_PX = 16;
/** A pointer that moves less than this between down and up clicked; more dragged. */
const DRAG_PX = 4;
/**
 * Loop bands narrower than this are painted by pixel column: thousands of retry loops in a
 * zoomed-out million-call session become a few hundred hatched runs instead of thousands
 * of overlapping hatched rectangles (the canvas is rasterised in software, per frame).
 */
const NARROW_BAND_PX = 3;
/** Marker lines of one kind closer than this are drawn once (a wall of lines reads as nothing): their labels still count them all. */
const MARKER_LINE_GAP_PX = 4;
/** The dash of each marker kind: on and off pixels. */
const MARKER_DASH: Record<TimelineMarker['kind'], [number, number]> = {
  compaction: [5, 3],
  'api-error': [1, 2],
  subagent: [2, 3],
};
/** Sessions (or filters) with more slots than this bin from a BinPyramid. */
const PYRAMID_FROM_SLOTS = 8192;
/** CSS pixels the marker lines reach above the plot (to the foot of their labels). */
const MARKER_OVERHANG_PX = 4;
/** Context-line points at least this far apart (CSS pixels) are stroked as a smooth path; closer ones go into the pixel buffer. */
const LINE_VECTOR_GAP_PX = 6;
/** A marker's label, placed before overlapping ones merge. */
interface MarkerLabel {
  x: number;
  width: number;
  text: string;
  color: string;
}
/** Band pixel spans listed on the wrapper for tests, at most (a zoomed-out session has thousands). */
const BAND_PIXELS_LISTED = 1000;

/** A retry loop's band in slot order: the loop, its first and last slots. */
interface Band {
  loop: LoopView;
  first: number;
  last: number;
}

/** Round steps for call-number ticks. */
function tickStep(span: number, target: number): number {
  const raw = Math.max(1, span / Math.max(1, target));
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

/**
 * The timeline of one session: chart.js lays out the axes; this class bins the calls
 * the window shows and paints them, the context line, the loop bands, the markers and
 * the selection, and turns wheel, drag and clicks into window changes and picks. Owns
 * the Chart and the tooltip element; the owner keeps the window and the selection and
 * pushes them here. Test-visible facts go on the wrapper as data attributes.
 */
export class TimelineChart {
  private chart: Chart | null = null;
  private data: TimelineData | null = null;
  private loops: readonly LoopView[] = [];
  private showCached = true;
  private window: ViewWindow = { lo: 0, hi: 1 };
  private bins: Bins | null = null;
  /** Block sums of the data, so binning a wide window costs O(bins), not O(calls in view); null for short sessions. */
  private pyramid: BinPyramid | null = null;
  private selected: number | null = null;
  private hoverX: number | null = null;
  private frame = 0;
  private drag: { x: number; window: ViewWindow; moved: boolean; pointer: number } | null = null;
  private readonly tooltip: HTMLDivElement;
  private hatchPixels: Tile | null = null;
  private hatchKey = '';
  /** The plot's pixels (bands, bars, dense context line, marker lines), drawn in one call per frame. */
  private readonly raster = new PlotRaster();
  private rasterImage: ImageData | null = null;
  private rasterLayer: HTMLCanvasElement | null = null;
  private packedColors = new Map<string, Packed>();
  private colorProbe: CanvasRenderingContext2D | null | undefined;
  /** Whether this frame's context line went into the buffer (dense) or is stroked by paintFront. */
  private lineRastered = false;
  /** This frame's marker labels in x order, found with their lines. */
  private markerLabels: MarkerLabel[] = [];
  // Found once per data (setData), so a frame visits only what is in view:
  /** Loop bands by first slot, and the running maximum of their last slots (binary-searched for the first band in view). */
  private bands: Band[] = [];
  private bandReach = new Float64Array(0);
  /** Markers by the slot edge their line is drawn at, and those edges. */
  private placedMarkers: TimelineMarker[] = [];
  private markerEdges = new Float64Array(0);
  /** Slots of failed calls and of cache misses. */
  private failedSlots: Int32Array = new Int32Array(0);
  private missSlots: Int32Array = new Int32Array(0);
  /** Label widths by text (the labels repeat; measureText per label per frame was a fifth of the render). */
  private textWidths = new Map<string, number>();
  private textFontFamily = '';
  /** Milliseconds the last render took (binning, layout and painting): the benchmark reads it. */
  lastRenderMs = 0;

  constructor(
    private readonly wrapper: HTMLElement,
    private readonly canvas: HTMLCanvasElement,
    private palette: Palette,
    private readonly callbacks: TimelineCallbacks,
  ) {
    this.tooltip = document.createElement('div');
    this.tooltip.className = 'timeline-tooltip';
    this.tooltip.setAttribute('aria-hidden', 'true');
    this.tooltip.hidden = true;
    wrapper.appendChild(this.tooltip);
    canvas.addEventListener('wheel', (e) => this.onWheel(e), { passive: false });
    canvas.addEventListener('pointerdown', (e) => this.onPointerDown(e));
    canvas.addEventListener('pointermove', (e) => this.onPointerMove(e));
    canvas.addEventListener('pointerup', (e) => this.onPointerUp(e));
    canvas.addEventListener('pointercancel', () => (this.drag = null));
    canvas.addEventListener('pointerleave', () => {
      this.hoverX = null;
      this.hideTooltip();
    });
  }

  /** A session (or a filter of it) to draw; the window is set separately. */
  /** What the bars measure; the panel swaps the columns, the chart names the unit. */
  barView: BarView = 'tokens';

  setData(
    data: TimelineData,
    loops: readonly LoopView[],
    markers: readonly TimelineMarker[],
    showCached: boolean,
  ): void {
    this.data = data;
    this.loops = loops;
    this.showCached = showCached;
    this.window = clampWindow(this.window, slotCount(data));
    const flags = data.columns.flags;
    let failed = 0;
    const misses: number[] = [];
    for (let i = 0; i < flags.length; i++) {
      if (flags[i]! & CALL_FLAG.failed) failed += 1;
      if (flags[i]! & CALL_FLAG.miss) misses.push(i);
    }
    this.wrapper.dataset['barCount'] = String(slotCount(data));
    this.wrapper.dataset['showCached'] = String(showCached);
    this.wrapper.dataset['failedCalls'] = String(failed);
    this.wrapper.dataset['missCount'] = String(misses.length);
    // The list only while it is short enough to read.
    this.wrapper.dataset['missCalls'] = misses.length <= 5000 ? misses.join(',') : '';
    this.wrapper.dataset['loopBands'] = String(loops.length);
    this.wrapper.dataset['loopBandSpans'] = loops.map((l) => `${l.firstCall}-${l.lastCall}`).join(' ');
    this.index(data, loops, markers);
    // Short sessions bin call by call as fast as from blocks.
    this.pyramid = slotCount(data) > PYRAMID_FROM_SLOTS ? new BinPyramid(data) : null;
    this.writeSelection();
    this.render();
  }

  /** Orders the loops, markers and marked calls by slot, once per data. */
  private index(d: TimelineData, loops: readonly LoopView[], markers: readonly TimelineMarker[]): void {
    const bands: Band[] = [];
    for (const loop of loops) {
      const slots = loopSlots(d, loop);
      if (slots) bands.push({ loop, first: slots.first, last: slots.last });
    }
    bands.sort((b1, b2) => b1.first - b2.first || b1.loop.firstCall - b2.loop.firstCall);
    this.bands = bands;
    this.bandReach = new Float64Array(bands.length);
    let reach = -Infinity;
    bands.forEach((b, i) => (this.bandReach[i] = reach = Math.max(reach, b.last)));
    const count = slotCount(d);
    const placed: { marker: TimelineMarker; edge: number }[] = [];
    for (const m of markers) {
      const slot = slotOf(d, m.callIndex);
      if (slot >= count) continue;
      // A compaction or an API error comes before its call, a sub-agent starts after its call's response.
      placed.push({
        marker: m,
        edge: m.kind !== 'subagent' ? slot : callAt(d, slot) === m.callIndex ? slot + 1 : slot,
      });
    }
    // Stable: markers at the same edge keep their order.
    placed.sort((p1, p2) => p1.edge - p2.edge);
    this.placedMarkers = placed.map((p) => p.marker);
    this.markerEdges = Float64Array.from(placed, (p) => p.edge);
    this.failedSlots = markedSlots(d, CALL_FLAG.failed);
    this.missSlots = markedSlots(d, CALL_FLAG.miss);
  }

  /** The width of a label in the current font, measured once per text. */
  private textWidth(ctx: CanvasRenderingContext2D, text: string): number {
    // Every label is 10 px in the palette's font: a new font family measures anew.
    if (this.palette.fontFamily !== this.textFontFamily) {
      this.textFontFamily = this.palette.fontFamily;
      this.textWidths.clear();
    }
    let w = this.textWidths.get(text);
    if (w === undefined) {
      w = ctx.measureText(text).width;
      this.textWidths.set(text, w);
    }
    return w;
  }

  /** Shows a window (clamped) and repaints on the next frame. */
  setWindow(w: ViewWindow): void {
    this.window = this.data ? clampWindow(w, slotCount(this.data)) : w;
    this.schedule();
  }

  get currentWindow(): ViewWindow {
    return this.window;
  }

  /** Moves the highlighted call without re-binning. */
  select(callIndex: number | null): void {
    this.selected = callIndex;
    this.writeSelection();
    this.chart?.draw();
  }

  /** New theme colours: repaint. */
  setPalette(palette: Palette): void {
    this.palette = palette;
    this.writePalette();
    if (this.chart) {
      this.chart.destroy();
      this.chart = null;
    }
    this.render();
  }

  /** Releases the canvas (session without calls, or teardown). */
  destroy(): void {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.chart?.destroy();
    this.chart = null;
    this.data = null;
    this.bins = null;
    this.pyramid = null;
    this.hideTooltip();
  }

  /** Plot width in CSS pixels (the overview strip lines up with it). */
  plotArea(): ChartArea | null {
    return this.chart?.chartArea ?? null;
  }

  /** Renders at the next animation frame, once however many changes come before it. */
  schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  /** Bins and paints now. */
  render(): void {
    const d = this.data;
    if (!d) return;
    const t0 = performance.now();
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    if (!this.chart) this.create();
    const chart = this.chart!;
    const area = chart.chartArea;
    const width =
      area && area.right > area.left ? area.right - area.left : Math.max(100, this.canvas.clientWidth - 100);
    const count = slotCount(d);
    const span = this.window.hi - this.window.lo;
    // One bar per call while each gets 2 px or more, else one bin per 2 px.
    const maxBins = span <= width / BIN_PX ? Number.POSITIVE_INFINITY : Math.floor(width / BIN_PX);
    this.bins = binCalls(d, this.window, maxBins, this.showCached, this.pyramid);
    const { bars, context } = axisMaxima(this.bins, this.showCached);
    const scales = chart.options.scales!;
    const x = scales['x']!;
    x.min = this.window.lo;
    x.max = this.window.hi;
    scales['y']!.max = bars;
    scales['y1']!.max = context;
    const cost = this.barView === 'cost';
    // The right axis is the context line's: in the cost view (the line is tokens, not drawn) or with no context size
    // known it would read "context size" over labels of 0.
    let contextKnown = false;
    for (let i = 0; i < this.bins.length && !contextKnown; i++) contextKnown = this.bins.context[i]! > 0;
    scales['y1']!.display = !cost && contextKnown;
    this.wrapper.dataset['contextAxis'] = !cost && contextKnown ? 'shown' : 'hidden';
    (scales['y'] as { title: { text: string } }).title.text = cost
      ? this.showCached
        ? 'US dollars per call'
        : 'dollars of appended + output'
      : this.showCached
        ? 'tokens per call'
        : 'appended + output tokens';
    (scales['y'] as { ticks: { precision: number | undefined } }).ticks.precision = cost ? undefined : 0;
    this.wrapper.dataset['barView'] = this.barView;
    (scales['x'] as { ticks: { padding: number } }).ticks.padding =
      this.wrapper.dataset['missCount'] !== '0' ? MISS_LANE_PX : 3;
    chart.update('none');
    const { first, end } = visibleSlots(this.window, count);
    const w = this.wrapper.dataset;
    w['view'] = `${this.window.lo.toFixed(3)},${this.window.hi.toFixed(3)}`;
    w['viewCalls'] = end > first ? `${callAt(d, first) + 1}-${callAt(d, end - 1) + 1}` : '';
    w['bins'] = String(this.bins.length);
    w['callsPerBin'] = this.bins.single ? '1' : (span / Math.max(1, this.bins.length)).toFixed(1);
    if (this.hoverX !== null) this.showTooltipAt(this.hoverX);
    this.lastRenderMs = performance.now() - t0;
    w['renderMs'] = this.lastRenderMs.toFixed(2);
  }

  private create(): void {
    const p = this.palette;
    Chart.defaults.font.family = p.fontFamily;
    Chart.defaults.font.size = 11;
    Chart.defaults.color = p.muted;
    this.writePalette();
    const grid = withAlpha(p.grid, p.highContrast ? 0.9 : 0.5);
    const slotTicks = (scale: Scale): void => {
      const d = this.data;
      if (!d) return;
      const min = scale.min;
      const max = scale.max;
      const span = max - min;
      const step = tickStep(span, Math.max(2, Math.floor((scale.width || 600) / 70)));
      const ticks: { value: number }[] = [];
      const count = slotCount(d);
      for (let slot = Math.ceil((min - 0.5) / step) * step; slot + 0.5 <= max && slot < count; slot += step) {
        if (slot >= 0) ticks.push({ value: slot + 0.5 });
      }
      scale.ticks = ticks;
    };
    this.chart = new Chart(this.canvas, {
      type: 'bar',
      data: { datasets: [] },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        events: [],
        layout: { padding: { top: 26, right: 4, left: 0, bottom: 0 } },
        scales: {
          x: {
            type: 'linear',
            min: 0,
            max: 1,
            offset: false,
            grid: { display: false },
            border: { color: grid },
            afterBuildTicks: slotTicks,
            ticks: {
              color: p.muted,
              maxRotation: 0,
              autoSkip: false,
              padding: 3,
              callback: (v) => {
                const d = this.data;
                if (!d) return '';
                const slot = Math.floor(Number(v));
                return slot >= 0 && slot < slotCount(d) ? formatCount(callAt(d, slot) + 1) : '';
              },
            },
            title: { display: true, text: 'LLM call', color: p.muted, padding: { top: 2, bottom: 0 } },
          },
          y: {
            type: 'linear',
            min: 0,
            max: 1,
            grid: { color: grid },
            border: { display: false },
            // Dollars of one call are fractions of a cent: no whole-number ticks in the cost view.
            ticks: {
              color: p.muted,
              maxTicksLimit: 6,
              callback: (v) => (this.barView === 'cost' ? formatUsd(Number(v)) : formatCompact(Number(v))),
            },
            title: { display: true, text: 'tokens per call', color: p.muted },
          },
          y1: {
            type: 'linear',
            position: 'right',
            min: 0,
            max: 1,
            grid: { display: false },
            border: { display: false },
            ticks: { color: p.muted, maxTicksLimit: 6, precision: 0, callback: (v) => formatCompact(Number(v)) },
            title: { display: true, text: 'context size', color: p.muted },
          },
        },
        plugins: { legend: { display: false }, tooltip: { enabled: false } },
      },
      plugins: [this.painter()],
    });
  }

  private writeSelection(): void {
    this.wrapper.dataset['selectedCall'] = this.selected === null ? '' : String(this.selected);
  }

  private writePalette(): void {
    const p = this.palette;
    this.wrapper.dataset['palette'] = JSON.stringify({
      cached: p.cached,
      appended: p.appended,
      output: p.output,
      context: p.context,
      failed: p.failed,
      loop: p.loop,
      miss: p.miss,
      barBorder: p.barBorder,
      highContrast: p.highContrast,
    });
  }

  // ---- input ----

  /** The slot (fractional) under a canvas x position. */
  private slotAtPixel(px: number): number | null {
    const a = this.chart?.chartArea;
    if (!a || a.right <= a.left) return null;
    return this.window.lo + ((px - a.left) / (a.right - a.left)) * (this.window.hi - this.window.lo);
  }

  private offsetX(e: MouseEvent): number {
    const r = this.canvas.getBoundingClientRect();
    return e.clientX - r.left;
  }

  private onWheel(e: WheelEvent): void {
    if (!this.data) return;
    const anchor = this.slotAtPixel(this.offsetX(e));
    if (anchor === null) return;
    e.preventDefault();
    const count = slotCount(this.data);
    const a = this.chart!.chartArea;
    const slotsPerPx = (this.window.hi - this.window.lo) / Math.max(1, a.right - a.left);
    let next: ViewWindow;
    if (!e.ctrlKey && (Math.abs(e.deltaX) > Math.abs(e.deltaY) || e.shiftKey)) {
      // A sideways swipe (or Shift + wheel) pans.
      const dx = Math.abs(e.deltaX) > Math.abs(e.deltaY) ? e.deltaX : e.deltaY;
      next = panBy(this.window, dx * slotsPerPx, count);
    } else {
      // The wheel and a pinch (Chromium sends it as a wheel with ctrlKey) zoom around the pointer.
      const lines = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
      const factor = Math.exp(-e.deltaY * lines * (e.ctrlKey ? 0.01 : 0.0015));
      next = zoomAround(this.window, factor, anchor, count);
    }
    this.window = next;
    this.callbacks.onWindow(next);
    this.schedule();
  }

  private onPointerDown(e: PointerEvent): void {
    if (!this.data || e.button !== 0) return;
    this.drag = { x: e.clientX, window: this.window, moved: false, pointer: e.pointerId };
    capture(this.canvas, e.pointerId);
  }

  private onPointerMove(e: PointerEvent): void {
    const x = this.offsetX(e);
    if (this.drag && this.drag.pointer === e.pointerId && this.data) {
      const dx = e.clientX - this.drag.x;
      if (!this.drag.moved && Math.abs(dx) < DRAG_PX) return;
      this.drag.moved = true;
      this.canvas.style.cursor = 'grabbing';
      this.hideTooltip();
      const a = this.chart!.chartArea;
      const w = this.drag.window;
      const next = panBy(w, (-dx * (w.hi - w.lo)) / Math.max(1, a.right - a.left), slotCount(this.data));
      this.window = next;
      this.callbacks.onWindow(next);
      this.schedule();
      return;
    }
    this.hoverX = x;
    this.showTooltipAt(x);
  }

  private onPointerUp(e: PointerEvent): void {
    const drag = this.drag;
    this.drag = null;
    release(this.canvas, e.pointerId);
    this.canvas.style.cursor = '';
    if (!drag || drag.moved || !this.data || !this.bins) return;
    const bin = this.binAtPixel(this.offsetX(e));
    if (bin < 0) return;
    const size = this.bins.size[bin]!;
    const first = this.bins.first[bin]!;
    if (size === 1) this.callbacks.onPick(callAt(this.data, first));
    else {
      const next = clampWindow({ lo: first, hi: first + size }, slotCount(this.data));
      this.window = next;
      this.callbacks.onWindow(next);
      this.schedule();
    }
  }

  private binAtPixel(px: number): number {
    const a = this.chart?.chartArea;
    if (!this.bins || !a || px < a.left || px > a.right) return -1;
    const slot = Math.floor(this.slotAtPixel(px)!);
    return binOfSlot(this.bins, slot);
  }

  // ---- tooltip ----

  private showTooltipAt(px: number): void {
    const d = this.data;
    const bins = this.bins;
    const bin = this.binAtPixel(px);
    if (!d || !bins || bin < 0) {
      this.hideTooltip();
      return;
    }
    const first = bins.first[bin]!;
    const size = bins.size[bin]!;
    let title: string;
    let lines: string[];
    if (size === 1) {
      const call = callAt(d, first);
      const row = this.callbacks.rowOf(call);
      if (row) {
        title = tooltipTitle(row);
        lines = [...tooltipLines(row), ...analysisTooltipLines(row, this.loops)];
      } else {
        const s = runStats(d, first, 1);
        title = `Call ${formatCount(call + 1)}`;
        lines = [
          `Input: ${formatCount(s.input.max)}`,
          `Cached: ${formatCount(s.cached.max)}`,
          `Appended: ${formatCount(s.appended.max)}`,
          `Output: ${formatCount(s.output.max)}`,
          'Loading tools…',
        ];
      }
      this.wrapper.dataset['tooltipCall'] = String(call);
      delete this.wrapper.dataset['tooltipBin'];
    } else {
      const s = runStats(d, first, size);
      title = binTitle(s);
      lines = binLines(s, this.barView);
      delete this.wrapper.dataset['tooltipCall'];
      this.wrapper.dataset['tooltipBin'] = `${s.firstCall}-${s.lastCall}`;
    }
    const tip = this.tooltip;
    tip.replaceChildren(
      Object.assign(document.createElement('div'), { className: 'tt-title', textContent: title }),
      ...lines.map((l) => Object.assign(document.createElement('div'), { textContent: l })),
    );
    tip.hidden = false;
    this.wrapper.dataset['tooltip'] = [title, ...lines].join('\n');
    // Beside the pointer, inside the wrapper.
    const a = this.chart!.chartArea;
    const wrapWidth = this.wrapper.clientWidth;
    const tipWidth = tip.offsetWidth;
    const left = px + 14 + tipWidth > wrapWidth ? px - 14 - tipWidth : px + 14;
    tip.style.left = `${Math.max(0, left)}px`;
    tip.style.top = `${a.top}px`;
  }

  private hideTooltip(): void {
    this.tooltip.hidden = true;
    delete this.wrapper.dataset['tooltip'];
    delete this.wrapper.dataset['tooltipCall'];
    delete this.wrapper.dataset['tooltipBin'];
  }

  /** Refreshes an open tooltip (a row it waited for arrived). */
  refreshTooltip(): void {
    if (this.hoverX !== null && !this.tooltip.hidden) this.showTooltipAt(this.hoverX);
  }

  // ---- painting ----

  private painter(): Plugin<'bar'> {
    return {
      id: 'timelinePainter',
      afterLayout: (chart) => {
        writePlotArea(this.wrapper, chart.chartArea);
        this.callbacks.onLayout?.();
      },
      beforeDatasetsDraw: (chart) => this.paintBehind(chart),
      afterDatasetsDraw: (chart) => this.paintFront(chart),
    };
  }

  private pixel(chart: Chart, slotEdge: number): number {
    return chart.scales['x']!.getPixelForValue(slotEdge);
  }

  /** A CSS colour as a packed pixel, through a one-pixel canvas (any colour syntax the theme uses); cached. */
  private packed(color: string): Packed {
    let c = this.packedColors.get(color);
    if (c !== undefined) return c;
    const probe = (this.colorProbe ??= document.createElement('canvas').getContext('2d', { willReadFrequently: true }));
    if (!probe) return pack(0, 0, 0, 255);
    probe.clearRect(0, 0, 1, 1);
    probe.fillStyle = color;
    probe.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = probe.getImageData(0, 0, 1, 1).data;
    c = pack(r!, g!, b!, a!);
    this.packedColors.set(color, c);
    return c;
  }

  /** The hatching of gave-up loops as pixels (the same tile the pattern fill used), per palette. */
  private hatchTile(): Tile | null {
    const p = this.palette;
    const key = `${p.loop}|${p.background}|${p.highContrast}`;
    if (this.hatchPixels && this.hatchKey === key) return this.hatchPixels;
    const tile = diagonalHatchTile(
      7,
      mixOver(p.loop, p.highContrast ? 0.2 : 0.1, p.background),
      mixOver(p.loop, p.highContrast ? 0.55 : 0.3, p.background),
    );
    const t = tile?.getContext('2d', { willReadFrequently: true });
    this.hatchPixels =
      tile && t
        ? {
            width: tile.width,
            height: tile.height,
            pixels: new Uint32Array(t.getImageData(0, 0, tile.width, tile.height).data.buffer.slice(0)),
          }
        : null;
    this.hatchKey = key;
    return this.hatchPixels;
  }

  /**
   * Everything in the plot that grows with the window's calls, loops and markers, written
   * into one pixel buffer (plotRaster.ts says why) and drawn in one call: the loop bands
   * (wide ones one by one, narrow ones as runs of pixel columns, gave up over escaped), the
   * selected call's column, the bars (per bin, the envelope of its largest call, then its
   * mean stack), the context line where it is dense, and the marker lines.
   */
  private paintBehind(chart: Chart): void {
    const d = this.data;
    const bins = this.bins;
    if (!d || !bins) return;
    const { ctx, chartArea: a } = chart;
    const p = this.palette;
    const dpr = chart.currentDevicePixelRatio || 1;
    // The buffer covers the plot's whole device pixels; x and y below are in them, from its top left.
    // The marker lines start a little above the plot, so the buffer does too; `top` is the plot's top row.
    const ox = Math.round(a.left * dpr);
    const oy = Math.round((a.top - MARKER_OVERHANG_PX) * dpr);
    const r = this.raster;
    r.reset(Math.round(a.right * dpr) - ox, Math.round(a.bottom * dpr) - oy, ox, oy);
    if (r.width === 0 || r.height === 0) return;
    const top = Math.round(a.top * dpr) - oy;
    const xOf = (slotEdge: number): number => this.pixel(chart, slotEdge) * dpr - ox;
    const y = chart.scales['y']!;
    const yOf = (v: number): number => Math.round(y.getPixelForValue(v) * dpr) - oy;
    const bottom = r.height;
    // Loop bands.
    const bandPixels: string[] = [];
    let bandsInView = 0;
    const columns = new Uint8Array(r.width + 1);
    const hatch = this.hatchTile();
    const escapedFill = this.packed(mixOver(p.loop, p.highContrast ? 0.2 : 0.1, p.background));
    const edge = {
      color: this.packed(p.loop),
      alpha: p.highContrast ? 1 : 0.8,
      width: Math.max(1, Math.round((p.highContrast ? 2 : 1) * dpr)),
    };
    const band = (escaped: boolean, x0: number, x1: number, edges: boolean): void => {
      const left = Math.round(x0);
      const right = Math.max(left + Math.round(2 * dpr), Math.round(x1));
      if (escaped || !hatch) r.fill(left, right, top, bottom, escapedFill);
      else r.fillTile(left, right, top, bottom, hatch);
      if (!edges) return;
      // Gave up: dashed edges (4 on, 3 off); escaped: solid.
      const [on, off] = escaped ? [1, 0] : [Math.round(4 * dpr), Math.round(3 * dpr)];
      r.vertical(left, left + edge.width, top, bottom, edge.color, edge.alpha, on, off);
      r.vertical(right - edge.width, right, top, bottom, edge.color, edge.alpha, on, off);
    };
    for (let i = lowerBound(this.bandReach, this.window.lo - 1); i < this.bands.length; i++) {
      const b = this.bands[i]!;
      if (b.first >= this.window.hi) break;
      const x0 = Math.max(a.left, this.pixel(chart, b.first));
      const x1 = Math.min(a.right, this.pixel(chart, b.last + 1));
      if (x1 <= a.left || x0 >= a.right) continue;
      bandsInView += 1;
      if (bandPixels.length < BAND_PIXELS_LISTED) bandPixels.push(`${Math.round(x0)}-${Math.round(x1)}`);
      if (x1 - x0 >= NARROW_BAND_PX) {
        band(b.loop.escaped, x0 * dpr - ox, x1 * dpr - ox, true);
        continue;
      }
      const state = b.loop.escaped ? 1 : 2;
      const c0 = Math.max(0, Math.floor(x0 * dpr - ox));
      const c1 = Math.min(r.width, Math.max(c0 + 1, Math.ceil(x1 * dpr - ox)));
      for (let c = c0; c < c1; c++) if (columns[c]! < state) columns[c] = state;
    }
    for (let c = 0; c < r.width; ) {
      const state = columns[c]!;
      let e = c + 1;
      while (e < r.width && columns[e] === state) e++;
      // Edges only on runs wide enough to show them.
      if (state !== 0) band(state === 1, c, e, e - c >= NARROW_BAND_PX * 2 * dpr);
      c = e;
    }
    this.wrapper.dataset['loopBandPixels'] = bandsInView <= BAND_PIXELS_LISTED ? bandPixels.join(' ') : '';
    // The selected call's column.
    if (this.selected !== null) {
      const slot = slotOf(d, this.selected);
      if (slot < slotCount(d) && callAt(d, slot) === this.selected) {
        const x0 = xOf(slot);
        const x1 = xOf(slot + 1);
        r.fill(
          x0,
          x0 + Math.max(2 * dpr, x1 - x0),
          top,
          bottom,
          this.packed(mixOver(p.selection, p.highContrast ? 0.35 : 0.22, p.background)),
        );
      }
    }
    // Bars, in opaque colours blended over the background once.
    const colors = {
      cached: this.packed(p.highContrast ? p.cached : mixOver(p.cached, 0.55, p.background)),
      appended: this.packed(p.highContrast ? p.appended : mixOver(p.appended, 0.95, p.background)),
      output: this.packed(p.highContrast ? p.output : mixOver(p.output, 0.95, p.background)),
      envelope: this.packed(mixOver(p.foreground, p.highContrast ? 0.35 : 0.16, p.background)),
    };
    const base = yOf(0);
    const n = bins.length;
    const lefts = new Int32Array(n);
    const rights = new Int32Array(n);
    for (let b = 0; b < n; b++) {
      const x0 = xOf(bins.first[b]!);
      const x1 = xOf(bins.first[b]! + bins.size[b]!);
      // Single calls get a small gap between bars (and at most 56 px); bins touch.
      let w = bins.single ? Math.max(dpr, (x1 - x0) * 0.92) : Math.max(dpr, x1 - x0);
      w = Math.min(w, 56 * dpr);
      const left = bins.single ? (x0 + x1) / 2 - w / 2 : x0;
      lefts[b] = Math.round(left);
      rights[b] = Math.max(lefts[b]! + 1, Math.round(left + w));
    }
    const heights = new Float64Array(n);
    const segment = (values: Float64Array, color: Packed): void => {
      for (let b = 0; b < n; b++) {
        const v = values[b]!;
        if (!(v > 0)) continue;
        const y0 = yOf(heights[b]!);
        heights[b] = heights[b]! + v;
        r.fill(lefts[b]!, rights[b]!, yOf(heights[b]!), y0, color);
      }
    };
    if (this.showCached) segment(bins.cached, colors.cached);
    segment(bins.appended, colors.appended);
    segment(bins.output, colors.output);
    // The envelope above the mean stack only: each pixel written once.
    if (!bins.single)
      for (let b = 0; b < n; b++)
        r.fill(lefts[b]!, rights[b]!, yOf(bins.stackMax[b]!), yOf(heights[b]!), colors.envelope);
    if (p.barBorder && bins.single) {
      const border = this.packed(p.barBorder);
      for (let b = 0; b < n; b++)
        if (heights[b]! > 0 && rights[b]! - lefts[b]! >= 3 * dpr)
          r.outline(lefts[b]!, rights[b]!, yOf(heights[b]!), base, dpr, border);
    }
    // The context line where its points are closer than a few pixels (sparser, paintFront strokes it smooth).
    this.lineRastered = n * LINE_VECTOR_GAP_PX > a.right - a.left;
    if (this.lineRastered) {
      const y1 = chart.scales['y1']!;
      const xs = new Float64Array(n);
      const ys = new Float64Array(n);
      for (let b = 0; b < n; b++) {
        const v = bins.context[b]!;
        xs[b] = (xOf(bins.first[b]!) + xOf(bins.first[b]! + bins.size[b]!)) / 2;
        ys[b] = Number.isNaN(v) ? Number.NaN : y1.getPixelForValue(v) * dpr - oy;
      }
      const [lr, lg, lb, la] = unpack(this.packed(p.context));
      // Half a pixel thicker than the stroked path: whole pixels without anti-aliasing read thinner.
      r.polyline(
        xs,
        ys,
        n,
        (p.highContrast ? 2.5 : 2) * dpr,
        pack(lr, lg, lb, 255),
        (la / 255) * (p.highContrast ? 1 : 0.85),
      );
    }
    this.markerLines(chart, dpr, ox, oy);
    this.blit(ctx, ox, oy);
  }

  /** Puts the buffer on its layer canvas and draws that over the plot, one device pixel per pixel. */
  private blit(ctx: CanvasRenderingContext2D, ox: number, oy: number): void {
    const r = this.raster;
    if (
      !this.rasterImage ||
      this.rasterImage.width !== r.width ||
      this.rasterImage.height !== r.height ||
      this.rasterImage.data.buffer !== r.pixels.buffer
    ) {
      this.rasterImage = new ImageData(new Uint8ClampedArray(r.pixels.buffer), r.width, r.height);
    }
    const layer = (this.rasterLayer ??= document.createElement('canvas'));
    if (layer.width !== r.width || layer.height !== r.height) {
      layer.width = r.width;
      layer.height = r.height;
    }
    layer.getContext('2d')!.putImageData(this.rasterImage, 0, 0);
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(layer, ox, oy);
    ctx.restore();
  }

  /**
   * The compaction, API-error and sub-agent lines in view, into the buffer (one per kind
   * within a few pixels: a wall of lines reads as nothing), and their labels for paintFront
   * to merge and draw.
   */
  private markerLines(chart: Chart, dpr: number, ox: number, oy: number): void {
    const { ctx, chartArea: a } = chart;
    const p = this.palette;
    ctx.font = `10px ${p.fontFamily}`;
    const items: MarkerLabel[] = [];
    const lines = new Map<TimelineMarker['kind'], number>();
    const lineWidth = Math.max(1, Math.round((p.highContrast ? 2 : 1.5) * dpr));
    const bottom = Math.round(a.bottom * dpr) - oy;
    let drawn = 0;
    const markers = this.placedMarkers;
    const edges = this.markerEdges;
    for (let i = lowerBound(edges, this.window.lo - 1); i < edges.length && edges[i]! <= this.window.hi + 1; i++) {
      const m = markers[i]!;
      const x = this.pixel(chart, edges[i]!);
      if (x < a.left - 1 || x > a.right + 1) continue;
      const color = m.kind === 'compaction' ? p.compaction : m.kind === 'api-error' ? p.failed : p.subagent;
      if (x - (lines.get(m.kind) ?? -Infinity) >= MARKER_LINE_GAP_PX) {
        const [on, off] = MARKER_DASH[m.kind];
        const left = Math.round(x * dpr - ox - lineWidth / 2);
        this.raster.vertical(
          left,
          left + lineWidth,
          0,
          bottom,
          this.packed(color),
          1,
          Math.round(on * dpr),
          Math.round(off * dpr),
        );
        lines.set(m.kind, x);
        drawn += 1;
      }
      const width = this.textWidth(ctx, m.label) + 10;
      items.push({ x: Math.min(a.right - width, Math.max(a.left, x - width / 2)), width, text: m.label, color });
    }
    this.markerLabels = items;
    this.wrapper.dataset['markerLines'] = String(drawn);
  }

  private paintFront(chart: Chart): void {
    const d = this.data;
    const bins = this.bins;
    if (!d || !bins) return;
    const { ctx, chartArea: a } = chart;
    const p = this.palette;
    const y = chart.scales['y']!;
    const y1 = chart.scales['y1']!;
    const count = slotCount(d);
    const { first, end } = visibleSlots(this.window, count);
    const center = (slot: number): number => this.pixel(chart, slot + 0.5);
    ctx.save();
    ctx.beginPath();
    ctx.rect(a.left, 0, a.right - a.left, chart.height);
    ctx.clip();
    // The context line: each bin's largest prompt, broken where it is unknown.
    ctx.strokeStyle = withAlpha(p.context, p.highContrast ? 1 : 0.85);
    ctx.lineWidth = p.highContrast ? 2 : 1.5;
    ctx.beginPath();
    let drawing = false;
    for (let b = 0; b < (this.lineRastered ? 0 : bins.length); b++) {
      const v = bins.context[b]!;
      if (Number.isNaN(v)) {
        drawing = false;
        continue;
      }
      const px = (this.pixel(chart, bins.first[b]!) + this.pixel(chart, bins.first[b]! + bins.size[b]!)) / 2;
      const py = y1.getPixelForValue(v);
      if (drawing) ctx.lineTo(px, py);
      else ctx.moveTo(px, py);
      drawing = true;
    }
    ctx.stroke();
    // Failure triangles over the bars and miss diamonds under the axis: one glyph per group of nearby calls, with a count when it stands for more than one.
    const failures = groupMarks(d, CALL_FLAG.failed, first, end, center, MARK_GAP_PX, this.failedSlots);
    const size = p.highContrast ? 7 : 6;
    ctx.font = `10px ${p.fontFamily}`;
    ctx.textBaseline = 'bottom';
    ctx.textAlign = 'center';
    for (const g of failures) {
      const bin = binOfSlot(bins, slotOf(d, g.callIndex));
      const top = Math.max(a.top + size + 12, y.getPixelForValue(bin >= 0 ? bins.stackMax[bin]! : 0)) - 2;
      ctx.fillStyle = p.failed;
      ctx.beginPath();
      ctx.moveTo(g.x, top);
      ctx.lineTo(g.x - size / 2, top - size);
      ctx.lineTo(g.x + size / 2, top - size);
      ctx.closePath();
      ctx.fill();
      if (g.count > 1) {
        ctx.fillStyle = p.foreground;
        ctx.fillText(formatCompact(g.count), g.x, top - size - 1);
      }
    }
    this.wrapper.dataset['failureGlyphs'] = String(failures.length);
    const misses = groupMarks(d, CALL_FLAG.miss, first, end, center, MARK_GAP_PX, this.missSlots);
    const half = p.highContrast ? 4.5 : 4;
    const cy = a.bottom + MISS_LANE_PX / 2 + 1;
    ctx.strokeStyle = p.barBorder ?? p.miss;
    ctx.lineWidth = 1;
    for (const g of misses) {
      ctx.fillStyle = p.miss;
      ctx.beginPath();
      ctx.moveTo(g.x, cy - half);
      ctx.lineTo(g.x + half, cy);
      ctx.lineTo(g.x, cy + half);
      ctx.lineTo(g.x - half, cy);
      ctx.closePath();
      ctx.fill();
      if (p.barBorder) ctx.stroke();
      if (g.count > 1) {
        ctx.fillStyle = p.foreground;
        ctx.textAlign = 'left';
        ctx.textBaseline = 'middle';
        ctx.fillText(formatCompact(g.count), g.x + half + 1, cy);
        ctx.textAlign = 'center';
        ctx.textBaseline = 'bottom';
      }
    }
    this.wrapper.dataset['missGlyphs'] = String(misses.length);
    // The cost view's calls without a price: a "?" stub on the axis, not an empty gap that reads as $0.
    const unpriced = this.barView === 'cost' ? unpricedGroups(d, first, end, center, MARK_GAP_PX) : [];
    paintUnpriced(ctx, unpriced, y.getPixelForValue(0), p);
    this.wrapper.dataset['unpricedGlyphs'] = String(unpriced.length);
    this.paintMarkerLabels(chart);
    this.paintBandLabels(chart);
    // The selected call, outlined.
    if (this.selected !== null) {
      const slot = slotOf(d, this.selected);
      const bin = slot < count && callAt(d, slot) === this.selected ? binOfSlot(bins, slot) : -1;
      if (bin >= 0) {
        const x0 = this.pixel(chart, slot);
        const x1 = this.pixel(chart, slot + 1);
        const top =
          Math.min(a.bottom - 3, y.getPixelForValue(bins.single ? bins.stackMax[bin]! : bins.stackMax[bin]!)) - 1.5;
        const width = Math.max(3, x1 - x0 - 1);
        ctx.strokeStyle = p.selection;
        ctx.lineWidth = p.highContrast ? 2 : 1.5;
        ctx.strokeRect((x0 + x1) / 2 - width / 2, top, width, a.bottom - top);
      }
    }
    ctx.restore();
  }

  /** The marker labels markerLines found, merged where they would overlap. */
  private paintMarkerLabels(chart: Chart): void {
    const { ctx, chartArea: a } = chart;
    const p = this.palette;
    ctx.font = `10px ${p.fontFamily}`;
    const items = this.markerLabels;
    const placed = mergeLabels(items, 4, (text) => this.textWidth(ctx, text) + 10);
    // Merged labels count the markers they stand for: "compaction +59".
    let k = 0;
    for (const label of placed) {
      const color = items[k]!.color;
      k += label.items;
      const width = this.textWidth(ctx, label.text) + 10;
      const lx = Math.min(a.right - width, Math.max(a.left, label.x));
      ctx.fillStyle = p.tooltipBackground;
      ctx.fillRect(lx, a.top - 22, width, 15);
      ctx.strokeStyle = color;
      ctx.lineWidth = 1;
      ctx.strokeRect(lx + 0.5, a.top - 21.5, width - 1, 14);
      ctx.fillStyle = p.foreground;
      ctx.textAlign = 'left';
      ctx.textBaseline = 'middle';
      ctx.fillText(label.text, lx + 5, a.top - 14);
    }
    this.wrapper.dataset['markerLabels'] = placed.map((l) => l.text).join('|');
  }

  /** Loop band labels at their top left, left out where they would overlap the previous one. */
  private paintBandLabels(chart: Chart): void {
    const { ctx, chartArea: a } = chart;
    const p = this.palette;
    ctx.font = `10px ${p.fontFamily}`;
    let lastEnd = -Infinity;
    for (let i = lowerBound(this.bandReach, this.window.lo - 1); i < this.bands.length; i++) {
      const { loop, first, last } = this.bands[i]!;
      if (first >= this.window.hi) break;
      const x0 = Math.max(a.left, this.pixel(chart, first));
      const x1 = Math.min(a.right, this.pixel(chart, last + 1));
      if (x1 <= a.left || x0 >= a.right) continue;
      // Its label would start under the previous one (lx ≤ x0 + 2): no room, whatever its text.
      if (x0 + 2 < lastEnd + 4) continue;
      const mark = loop.escaped ? '✓' : '✗';
      const long = `${mark} ${loop.tool} ×${loop.attempts} ${loop.escaped ? 'escaped' : 'gave up'}`;
      const short = `${mark} ×${loop.attempts}`;
      const pad = 4;
      const text = [long, short].find((t) => this.textWidth(ctx, t) + 2 * pad <= Math.max(x1 - x0, 0) + 40) ?? null;
      if (!text) continue;
      const w = this.textWidth(ctx, text) + 2 * pad;
      const lx = Math.min(x0 + 2, a.right - w);
      if (lx < lastEnd + 4) continue;
      lastEnd = lx + w;
      const ly = a.top + 3;
      ctx.fillStyle = p.tooltipBackground;
      ctx.fillRect(lx, ly, w, 14);
      ctx.strokeStyle = p.loop;
      ctx.lineWidth = 1;
      ctx.setLineDash(loop.escaped ? [] : [3, 2]);
      ctx.strokeRect(lx + 0.5, ly + 0.5, w - 1, 13);
      ctx.setLineDash([]);
      ctx.fillStyle = p.foreground;
      ctx.textAlign = 'left';
      ctx.textBaseline = 'middle';
      ctx.fillText(text, lx + pad, ly + 7.5);
    }
  }
}

export { fitAll };
