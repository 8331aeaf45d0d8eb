import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';
import type { ChartConfiguration, Plugin } from 'chart.js';
import type { PartKind } from '../../src/core/context/contextParts';
import type { SessionContext } from '../../src/core/context/contextView';
import { formatCompact, formatCount } from '../../src/core/text/formatNumbers';
import { barStep, createOrUpdate, fillSelectionColumn, mirrorTooltip, writePlotArea } from '../shared/chartParts';
import type { Palette } from '../shared/palette';
import { tooltipStyle, withAlpha } from '../shared/palette';
import { capture, release } from '../shared/pointer';
import { panBy, zoomAround } from '../timeline/viewWindow';
import type { ViewWindow } from '../timeline/viewWindow';
import { callsInWindow, compositionBars, KIND_WORDS, stackKinds } from './contextModel';
import type { CompositionBars } from './contextModel';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

/** What the chart tells its owner. */
export interface CompositionCallbacks {
  /** A bar of one call was clicked: select it. */
  onPick(call: number): void;
  /** The window was zoomed or panned here (wheel, drag): the timeline moves with it. */
  onWindow(w: ViewWindow): void;
}

/** A pointer that moves less than this between down and up clicked; more dragged (as on the timeline). */
const DRAG_PX = 4;

/** The colour of each part kind: the theme's chart colours, the lighter shade for the kind beside it. */
export function kindColor(kind: PartKind, p: Palette): string {
  const solid: Record<PartKind, [string, number]> = {
    system: [p.muted, 0.55],
    memory: [p.subagent, 0.5],
    mcpSchemas: [p.subagent, 0.8],
    userText: [p.output, 0.95],
    injected: [p.output, 0.5],
    toolUse: [p.appended, 0.5],
    toolResult: [p.appended, 0.95],
    subagentResult: [p.failed, 0.7],
    assistantText: [p.cached, 0.95],
    thinking: [p.cached, 0.5],
    compactionSummary: [p.compaction, 0.95],
    restored: [p.compaction, 0.45],
  };
  const [color, alpha] = solid[kind];
  return withAlpha(color, alpha);
}

/**
 * The stacked "context composition" chart: each call's input by part kind, bottom up in
 * the anatomy's order, over the same window of calls as the timeline (its zoom and pan are
 * the timeline's: the page moves both), the selected call's column tinted. Wheel zooms
 * around the pointer and a drag pans, with the timeline's own window arithmetic.
 */
export class CompositionChart {
  private chart: Chart<'bar', number[], string> | null = null;
  private ctx: SessionContext | null = null;
  private bars: CompositionBars | null = null;
  private window: ViewWindow = { lo: 0, hi: 1 };
  private selected: number | null = null;
  private drag: { x: number; window: ViewWindow; moved: boolean; pointer: number } | null = null;

  constructor(
    private readonly wrapper: HTMLElement,
    private readonly canvas: HTMLCanvasElement,
    private palette: Palette,
    private readonly callbacks: CompositionCallbacks,
  ) {
    canvas.addEventListener('wheel', (e) => this.onWheel(e), { passive: false });
    canvas.addEventListener('pointerdown', (e) => this.onPointerDown(e));
    canvas.addEventListener('pointermove', (e) => this.onPointerMove(e));
    canvas.addEventListener('pointerup', (e) => this.onPointerUp(e));
    canvas.addEventListener('pointercancel', () => (this.drag = null));
  }

  /** Draws a session's anatomy over a window of calls. */
  show(ctx: SessionContext, window: ViewWindow): void {
    this.ctx = ctx;
    this.window = window;
    this.draw();
  }

  setWindow(window: ViewWindow): void {
    if (!this.ctx || (window.lo === this.window.lo && window.hi === this.window.hi)) return;
    this.window = window;
    this.draw();
  }

  select(call: number | null): void {
    this.selected = call;
    this.chart?.draw();
    this.wrapper.dataset['selected'] = call === null ? '' : String(call);
  }

  setPalette(palette: Palette): void {
    this.palette = palette;
    if (this.ctx) this.draw(true);
  }

  destroy(): void {
    this.chart?.destroy();
    this.chart = null;
  }

  private get count(): number {
    return this.ctx?.loggedInput.length ?? 0;
  }

  private draw(fresh = false): void {
    const ctx = this.ctx;
    if (!ctx) return;
    const { first, end } = callsInWindow(this.window.lo, this.window.hi, this.count);
    this.bars = compositionBars(ctx, first, end);
    if (fresh) this.destroy();
    this.chart = createOrUpdate(this.chart, this.canvas, () => this.config());
    const w = this.wrapper.dataset;
    w['calls'] = `${first},${end}`;
    w['bars'] = String(this.bars.first.length);
    w['binned'] = String(!this.bars.single);
    this.writeStacks();
  }

  /**
   * The drawn stack of every bar, bottom up, as chart.js placed it (`data-stacks`: for each
   * bar, its kinds' segments as kind:top:base in pixels), with the y axis's pixel at 0 and at
   * its top value (`data-y-scale`: px0,pxTop,top): what a test measures the stacks against.
   */
  private writeStacks(): void {
    const chart = this.chart;
    const bars = this.bars;
    const ctx = this.ctx;
    if (!chart || !bars || !ctx || bars.first.length > 60) {
      delete this.wrapper.dataset['stacks'];
      return;
    }
    const y = chart.scales['y']!;
    const top = y.max;
    this.wrapper.dataset['yScale'] = `${y.getPixelForValue(0).toFixed(2)},${y.getPixelForValue(top).toFixed(2)},${top}`;
    const stacks = bars.first.map((_, i) =>
      stackKinds(ctx.kinds)
        .map((kind, d) => {
          const element = chart.getDatasetMeta(d).data[i] as unknown as { y: number; base: number } | undefined;
          return element && (bars.byKind[kind]?.[i] ?? 0) > 0
            ? `${kind}:${element.y.toFixed(2)}:${element.base.toFixed(2)}`
            : null;
        })
        .filter((s) => s !== null)
        .join(' '),
    );
    this.wrapper.dataset['stacks'] = stacks.join('|');
  }

  private label(i: number): string {
    const b = this.bars!;
    const first = b.first[i]! + 1;
    return b.size[i] === 1 ? String(first) : `${first}–${first + b.size[i]! - 1}`;
  }

  private config(): ChartConfiguration<'bar', number[], string> {
    const ctx = this.ctx!;
    const bars = this.bars!;
    const p = this.palette;
    const estimated = new Set(ctx.estimatedKinds);
    return {
      type: 'bar',
      data: {
        labels: bars.first.map((_, i) => this.label(i)),
        datasets: stackKinds(ctx.kinds).map((kind) => ({
          label: `${KIND_WORDS[kind]}${estimated.has(kind) ? ' (estimated)' : ''}`,
          data: bars.byKind[kind] ?? [],
          backgroundColor: kindColor(kind, p),
          borderColor: p.barBorder ?? undefined,
          borderWidth: p.barBorder ? 1 : 0,
          categoryPercentage: 1,
          barPercentage: bars.first.length > 80 ? 1 : 0.85,
          stack: 'input',
        })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: {
            stacked: true,
            ticks: { color: p.muted, autoSkip: true, maxRotation: 0, font: { family: p.fontFamily, size: 11 } },
            grid: { display: false },
            title: {
              display: true,
              text: bars.single ? 'call' : `calls (each bar the mean of ${formatCount(bars.size[0]!)})`,
              color: p.muted,
            },
          },
          y: {
            stacked: true,
            beginAtZero: true,
            ticks: {
              color: p.muted,
              font: { family: p.fontFamily, size: 11 },
              callback: (v) => formatCompact(Number(v)),
            },
            grid: { color: p.grid },
            title: { display: true, text: 'input tokens', color: p.muted },
          },
        },
        plugins: {
          legend: { display: false },
          tooltip: {
            enabled: true,
            ...tooltipStyle(p),
            callbacks: {
              title: (items) => `Call ${items[0]?.label ?? ''}`,
              label: (item) => `${item.dataset.label ?? ''}: ${formatCount(Math.round(Number(item.raw)))} tokens`,
              footer: (items) => {
                const total = items.reduce((a, it) => a + Number(it.raw), 0);
                const i = items[0]?.dataIndex ?? 0;
                const logged = bars.single ? ctx.loggedInput[bars.first[i]!] : null;
                return `parts ${formatCount(Math.round(total))}${logged !== null && logged !== undefined ? ` · logged input ${formatCount(logged)}` : ''}`;
              },
            },
            filter: (item) => Number(item.raw) > 0,
          },
        },
        onClick: (_e, elements) => {
          const i = elements[0]?.index;
          if (i === undefined || !this.bars || this.drag?.moved) return;
          if (this.bars.size[i] === 1) this.callbacks.onPick(this.bars.first[i]!);
          // A bin opens to its calls.
          else this.callbacks.onWindow({ lo: this.bars.first[i]!, hi: this.bars.first[i]! + this.bars.size[i]! });
        },
      },
      plugins: [this.selectionPlugin()],
    };
  }

  private selectionPlugin(): Plugin<'bar', unknown> {
    return {
      id: 'contextSelection',
      afterLayout: (chart) => writePlotArea(this.wrapper, chart.chartArea),
      beforeDatasetsDraw: (chart) => {
        const b = this.bars;
        const s = this.selected;
        if (!b || s === null || b.first.length === 0) return;
        const last = b.first.length - 1;
        if (s < b.first[0]! || s >= b.first[last]! + b.size[last]!) return;
        const i = Math.min(last, Math.floor((s - b.first[0]!) / b.size[0]!));
        fillSelectionColumn(
          chart.ctx,
          chart.chartArea,
          chart.scales['x']!.getPixelForValue(i),
          barStep(chart as unknown as Chart, b.first.length),
          this.palette,
        );
      },
      afterTooltipDraw: (_chart, { tooltip }) => {
        mirrorTooltip(this.wrapper, tooltip);
      },
    };
  }

  /** The call position under a pixel x, over the window. */
  private callAtX(x: number): number {
    const a = this.chart?.chartArea;
    if (!a || a.right <= a.left) return (this.window.lo + this.window.hi) / 2;
    return this.window.lo + ((x - a.left) / (a.right - a.left)) * (this.window.hi - this.window.lo);
  }

  private onWheel(e: WheelEvent): void {
    if (!this.ctx || this.count === 0) return;
    e.preventDefault();
    const rect = this.canvas.getBoundingClientRect();
    const sideways = Math.abs(e.deltaX) > Math.abs(e.deltaY) || e.shiftKey;
    const span = this.window.hi - this.window.lo;
    const next = sideways
      ? panBy(this.window, ((e.shiftKey ? e.deltaY : e.deltaX) / Math.max(1, rect.width)) * span, this.count)
      : zoomAround(this.window, Math.exp(-e.deltaY * 0.002), this.callAtX(e.clientX - rect.left), this.count);
    this.callbacks.onWindow(next);
  }

  private onPointerDown(e: PointerEvent): void {
    if (e.button !== 0) return;
    this.drag = { x: e.clientX, window: this.window, moved: false, pointer: e.pointerId };
    capture(this.canvas, e.pointerId);
  }

  private onPointerMove(e: PointerEvent): void {
    const drag = this.drag;
    const a = this.chart?.chartArea;
    if (!drag || drag.pointer !== e.pointerId || !a) return;
    const dx = e.clientX - drag.x;
    if (!drag.moved && Math.abs(dx) < DRAG_PX) return;
    drag.moved = true;
    const span = drag.window.hi - drag.window.lo;
    this.callbacks.onWindow(panBy(drag.window, (-dx / Math.max(1, a.right - a.left)) * span, this.count));
  }

  private onPointerUp(e: PointerEvent): void {
    release(this.canvas, e.pointerId);
    // chart.js's click comes after pointerup: a drag must not also pick.
    const moved = this.drag?.moved ?? false;
    setTimeout(() => {
      if (this.drag && moved) this.drag = null;
    });
    if (!moved) this.drag = null;
  }
}
