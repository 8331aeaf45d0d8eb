import { BarController, BarElement, CategoryScale, Chart, LinearScale, LineController, LineElement, PointElement, Tooltip } from 'chart.js';
import type { ChartConfiguration, ChartDataset, Plugin, TooltipItem } from 'chart.js';
import annotationPlugin from 'chartjs-plugin-annotation';
import type { AnnotationOptions } from 'chartjs-plugin-annotation';
import zoomPlugin from 'chartjs-plugin-zoom';
import type { CallRow } from '../../src/core/view/traceView';
import { displayText } from '../../src/core/text/safeText';
import { formatCompact, formatUsd } from '../../src/core/report/formatNumbers';
import { analysisTooltipLines } from '../analysis/analysisModel';
import type { LoopBand } from '../analysis/analysisModel';
import { barStep, createOrUpdate, fillSelectionColumn, mirrorTooltip, writePlotArea } from '../shared/chartParts';
import type { Palette } from '../shared/palette';
import { annotationLabelStyle, tooltipStyle, withAlpha } from '../shared/palette';
import type { TimelineModel } from './timelineModel';
import { tooltipLines, tooltipTitle } from './timelineModel';

// Only what the timeline draws, so the bundle carries no unused controllers or scales.
Chart.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Tooltip, annotationPlugin, zoomPlugin);

/** What the timeline tells its owner. */
export interface TimelineCallbacks {
  /** A bar was clicked. */
  onPick(index: number): void;
  /** The visible calls changed (zoom, pan or reset): null when every call shows. */
  onZoom?(range: { first: number; last: number } | null): void;
}

/** Fewest calls a zoom shows. */
const MIN_ZOOM_CALLS = 4;

type TimelineChartType = 'bar' | 'line';
type Dataset = ChartDataset<TimelineChartType, (number | null)[]>;

/** Room under the x axis for the cache-miss diamonds, between the axis line and the call numbers. */
const MISS_LANE_PX = 12;

/**
 * The chart.js timeline of one session. Owns the Chart instance and the marks it draws
 * itself (selection column, failed-tool triangles, retry-loop bands, cache-miss
 * diamonds); the app owns the selection state and pushes it here. Test-visible facts go
 * on the wrapper as data attributes.
 */
export class TimelineChart {
  private chart: Chart<TimelineChartType, (number | null)[], string> | null = null;
  private model: TimelineModel | null = null;
  private calls: CallRow[] = [];
  private selected: number | null = null;
  private showCached = true;

  constructor(
    private readonly wrapper: HTMLElement,
    private readonly canvas: HTMLCanvasElement,
    private palette: Palette,
    private readonly callbacks: TimelineCallbacks,
  ) {}

  /** Draws a session (or redraws it after a data or toggle change). */
  render(calls: CallRow[], model: TimelineModel, showCached: boolean, selected: number | null): void {
    this.calls = calls;
    this.model = model;
    this.showCached = showCached;
    this.selected = selected;
    this.applyDefaults();
    this.chart = createOrUpdate(this.chart, this.canvas, () => this.config());
    // New data or options show every call again.
    this.zoomChanged();
    this.wrapper.dataset['barCount'] = String(model.barCount);
    this.wrapper.dataset['showCached'] = String(showCached);
    this.wrapper.dataset['barView'] = model.view;
    this.wrapper.dataset['failedCalls'] = String(model.failedCalls.length);
    this.wrapper.dataset['loopBands'] = String(model.bands.length);
    this.wrapper.dataset['loopBandSpans'] = model.bands.map((b) => `${b.x0 + 0.5}-${b.x1 - 0.5}`).join(' ');
    this.wrapper.dataset['missCalls'] = model.missCalls.join(',');
    this.wrapper.dataset['unpricedCalls'] = model.unpricedCalls.join(',');
    this.writeSelection();
  }

  /** Moves the highlighted bar without rebuilding the chart. */
  select(index: number | null): void {
    this.selected = index;
    this.writeSelection();
    this.chart?.draw();
  }

  /** New theme colours: re-reads everything colour-dependent and repaints. */
  setPalette(palette: Palette): void {
    this.palette = palette;
    if (this.model) this.render(this.calls, this.model, this.showCached, this.selected);
    else this.writePalette();
  }

  /**
   * Zooms the x axis: `factor` > 1 shows fewer calls, < 1 more, centred on `around`
   * (a call index; the middle of the view when null). Keyboard users' zoom; the mouse
   * wheel with Ctrl, a drag across the plot and a pinch do the same.
   */
  zoomBy(factor: number, around: number | null): void {
    const chart = this.chart;
    const m = this.model;
    if (!chart || !m || m.barCount < 2) return;
    const { first, last } = this.visibleRange() ?? { first: 0, last: m.barCount - 1 };
    const shown = last - first + 1;
    const next = Math.max(Math.min(MIN_ZOOM_CALLS, m.barCount), Math.min(m.barCount, Math.round(shown / factor)));
    const centre = around ?? (first + last) / 2;
    let lo = Math.round(centre - (next - 1) / 2);
    lo = Math.max(0, Math.min(m.barCount - next, lo));
    if (next >= m.barCount) this.resetZoom();
    else {
      chart.zoomScale('x', { min: lo, max: lo + next - 1 }, 'none');
      this.zoomChanged();
    }
  }

  /** Shows every call again. */
  resetZoom(): void {
    if (!this.chart) return;
    this.chart.resetZoom('none');
    this.zoomChanged();
  }

  /** The calls on screen when zoomed in; null when every call shows. */
  visibleRange(): { first: number; last: number } | null {
    const chart = this.chart;
    const m = this.model;
    if (!chart || !m || !chart.isZoomedOrPanned()) return null;
    const x = chart.scales['x']!;
    const first = Math.max(0, Math.ceil(x.min));
    const last = Math.min(m.barCount - 1, Math.floor(x.max));
    return first === 0 && last === m.barCount - 1 ? null : { first, last };
  }

  private zoomChanged(): void {
    const range = this.visibleRange();
    this.wrapper.dataset['zoom'] = range ? `${range.first}-${range.last}` : '';
    this.callbacks.onZoom?.(range);
  }

  /** Releases the canvas (session without calls, or teardown). */
  destroy(): void {
    this.chart?.destroy();
    this.chart = null;
    this.model = null;
  }

  private writeSelection(): void {
    this.wrapper.dataset['selectedCall'] = this.selected === null ? '' : String(this.selected);
  }

  private writePalette(): void {
    const p = this.palette;
    this.wrapper.dataset['palette'] = JSON.stringify({ cached: p.cached, appended: p.appended, output: p.output, context: p.context, failed: p.failed, loop: p.loop, miss: p.miss, barBorder: p.barBorder, highContrast: p.highContrast });
  }

  private applyDefaults(): void {
    Chart.defaults.font.family = this.palette.fontFamily;
    Chart.defaults.font.size = 11;
    Chart.defaults.color = this.palette.muted;
    Chart.defaults.borderColor = withAlpha(this.palette.grid, 0.6);
    this.writePalette();
  }

  private config(): ChartConfiguration<TimelineChartType, (number | null)[], string> {
    const m = this.model!;
    const p = this.palette;
    // High contrast: outlined, solid segments; elsewhere cached is softened so the small appended/output slices stand out.
    const bar = (label: string, data: (number | null)[], color: string, alpha: number, hidden = false): Dataset => ({
      type: 'bar',
      label,
      data,
      backgroundColor: p.highContrast ? color : withAlpha(color, alpha),
      borderColor: p.barBorder ?? 'transparent',
      borderWidth: p.barBorder ? 1 : 0,
      stack: 'tokens',
      yAxisID: 'y',
      hidden,
      barPercentage: 0.92,
      categoryPercentage: 1,
      // A session of three calls should not draw three slabs.
      maxBarThickness: 56,
      order: 2,
    });
    const cost = m.view === 'cost';
    const datasets: Dataset[] = [
      bar(cost ? 'Cache read $' : 'Cached', m.cached, p.cached, 0.55, !this.showCached),
      bar(cost ? 'Appended $' : 'Appended', m.appended, p.appended, 0.95),
      bar(cost ? 'Output $' : 'Output', m.output, p.output, 0.95),
      {
        type: 'line',
        label: 'Context',
        data: m.context,
        borderColor: withAlpha(p.context, p.highContrast ? 1 : 0.85),
        backgroundColor: p.context,
        borderWidth: p.highContrast ? 2 : 1.5,
        pointRadius: 0,
        pointHoverRadius: 3,
        tension: 0,
        spanGaps: false,
        yAxisID: 'y1',
        order: 1,
      },
    ];
    const grid = withAlpha(p.grid, p.highContrast ? 0.9 : 0.5);
    return {
      type: 'bar',
      data: { labels: m.labels, datasets },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false, axis: 'x' },
        layout: { padding: { top: 26, right: 4, left: 0, bottom: 0 } },
        onClick: (_event, elements) => {
          const hit = elements[0];
          if (hit) this.callbacks.onPick(hit.index);
        },
        onHover: (_event, elements) => {
          this.canvas.style.cursor = elements.length > 0 ? 'pointer' : 'default';
        },
        scales: {
          x: {
            stacked: true,
            grid: { display: false },
            border: { color: grid },
            // The gap between the axis line and the call numbers holds the cache-miss diamonds.
            ticks: { color: p.muted, autoSkip: true, maxRotation: 0, autoSkipPadding: 12, padding: m.missCalls.length > 0 ? MISS_LANE_PX : 3 },
            title: { display: true, text: 'LLM call', color: p.muted, padding: { top: 2, bottom: 0 } },
          },
          y: {
            stacked: true,
            beginAtZero: true,
            max: m.axisMax ?? undefined,
            grid: { color: grid },
            border: { display: false },
            ticks: cost
              ? { color: p.muted, maxTicksLimit: 6, callback: (v) => formatUsd(Number(v)) }
              : { color: p.muted, maxTicksLimit: 6, precision: 0, callback: (v) => formatCompact(Number(v)) },
            title: { display: true, text: cost ? (this.showCached ? 'US dollars per call' : 'dollars of appended + output') : this.showCached ? 'tokens per call' : 'appended + output tokens', color: p.muted },
          },
          y1: {
            position: 'right',
            beginAtZero: true,
            max: m.axisMax ?? undefined,
            grid: { display: false },
            border: { display: false },
            ticks: { color: p.muted, maxTicksLimit: 6, precision: 0, callback: (v) => formatCompact(Number(v)) },
            title: { display: true, text: 'context size', color: p.muted },
          },
        },
        plugins: {
          tooltip: {
            enabled: true,
            // One tooltip per call: the first item stands for the whole column.
            filter: (_item: TooltipItem<TimelineChartType>, index: number) => index === 0,
            ...tooltipStyle(p),
            callbacks: {
              // Canvas text follows bidi controls too: trace strings are shown with them escaped.
              title: (items) => {
                const call = this.calls[items[0]?.dataIndex ?? -1];
                return call ? displayText(tooltipTitle(call)) : '';
              },
              label: (item) => {
                const call = this.calls[item.dataIndex];
                return call ? [...tooltipLines(call), ...analysisTooltipLines(call, m.loops)].map((line) => displayText(line)) : '';
              },
            },
          },
          annotation: { clip: false, annotations: this.annotations() },
          zoom: {
            limits: { x: { min: 'original', max: 'original', minRange: Math.min(MIN_ZOOM_CALLS, m.barCount) - 1 } },
            // A plain wheel keeps scrolling the page; Ctrl + wheel, a drag across the plot or a pinch zoom in on calls.
            zoom: {
              mode: 'x',
              wheel: { enabled: true, modifierKey: 'ctrl' },
              pinch: { enabled: true },
              drag: { enabled: true, threshold: 8, backgroundColor: withAlpha(p.selection, 0.15), borderColor: p.selection, borderWidth: 1 },
              onZoomComplete: () => this.zoomChanged(),
            },
            // Shift + drag pans a zoomed view.
            pan: { enabled: true, mode: 'x', modifierKey: 'shift', onPanComplete: () => this.zoomChanged() },
          },
        },
      },
      plugins: [this.marksPlugin()],
    };
  }

  private annotations(): Record<string, AnnotationOptions> {
    const p = this.palette;
    const out: Record<string, AnnotationOptions> = {};
    let lastLabelX = -Infinity;
    let stagger = 0;
    this.model!.markers.forEach((marker, i) => {
      const color = marker.kind === 'compaction' ? p.compaction : marker.kind === 'api-error' ? p.failed : p.subagent;
      // Labels of nearby markers would overlap; drop each close one a row lower.
      stagger = marker.x - lastLabelX < 12 ? (stagger + 1) % 3 : 0;
      lastLabelX = marker.x;
      // A label centred on a line near either end of the plot would be cut off by the canvas edge.
      const where = (marker.x + 0.5) / Math.max(1, this.model!.barCount);
      const halfLabel = marker.label.length * 3 + 6;
      const xAdjust = where < 0.05 ? halfLabel : where > 0.95 ? -halfLabel : 0;
      out[`marker${i}`] = {
        type: 'line',
        scaleID: 'x',
        value: marker.x,
        borderColor: color,
        borderWidth: p.highContrast ? 2 : 1.5,
        borderDash: marker.kind === 'compaction' ? [5, 3] : marker.kind === 'api-error' ? [1, 2] : [2, 3],
        drawTime: 'afterDatasetsDraw',
        label: {
          display: true,
          content: marker.label,
          position: 'start',
          yAdjust: -22 + stagger * 16,
          xAdjust,
          ...annotationLabelStyle(p, color),
        },
      };
    });
    return out;
  }

  /** Draws the loop bands, selection column, failed-tool triangles and miss diamonds, and reports the plot area for tests and keyboard users. */
  private marksPlugin(): Plugin<TimelineChartType> {
    return {
      id: 'callMarks',
      afterLayout: (chart) => writePlotArea(this.wrapper, chart.chartArea),
      beforeDatasetsDraw: (chart) => {
        const m = this.model;
        if (!m) return;
        const { ctx, chartArea: a, scales } = chart;
        const x = scales['x']!;
        const step = barStep(chart, m.barCount);
        const pixels: string[] = [];
        // Zoomed in, marks of calls off screen must not spill outside the plot.
        ctx.save();
        ctx.beginPath();
        ctx.rect(a.left, 0, a.right - a.left, chart.height);
        ctx.clip();
        for (const band of m.bands) {
          const [x0, x1] = this.bandPixels(chart, band, step);
          if (x1 <= a.left || x0 >= a.right) continue;
          this.drawBand(ctx, band, x0, x1, a.top, a.bottom);
          pixels.push(`${Math.round(x0)}-${Math.round(x1)}`);
        }
        this.wrapper.dataset['loopBandPixels'] = pixels.join(' ');
        if (this.selected !== null && this.selected < m.barCount) fillSelectionColumn(ctx, a, x.getPixelForValue(this.selected), step, this.palette);
        ctx.restore();
      },
      afterDatasetsDraw: (chart) => {
        const m = this.model;
        if (!m) return;
        const { ctx, chartArea: a, scales } = chart;
        const x = scales['x']!;
        const y = scales['y']!;
        const step = barStep(chart, m.barCount);
        const size = Math.max(this.palette.highContrast ? 7 : 5, Math.min(9, step * 0.9));
        ctx.save();
        ctx.beginPath();
        ctx.rect(a.left - 1, 0, a.right - a.left + 2, chart.height);
        ctx.clip();
        ctx.fillStyle = this.palette.failed;
        for (const i of m.failedCalls) {
          const cx = x.getPixelForValue(i);
          const top = Math.max(a.top + size + 2, y.getPixelForValue(m.stackTop[i] ?? 0));
          // A small downward triangle just above the bar: visible however thin the bar is.
          ctx.beginPath();
          ctx.moveTo(cx, top - 2);
          ctx.lineTo(cx - size / 2, top - 2 - size);
          ctx.lineTo(cx + size / 2, top - 2 - size);
          ctx.closePath();
          ctx.fill();
        }
        // A diamond under the axis for each cache miss: another shape, another place than the failed-tool triangles.
        const half = Math.max(3, Math.min(4.5, step * 0.45));
        const cy = a.bottom + MISS_LANE_PX / 2 + 1;
        ctx.fillStyle = this.palette.miss;
        ctx.strokeStyle = this.palette.barBorder ?? this.palette.miss;
        ctx.lineWidth = 1;
        for (const i of m.missCalls) {
          const cx = x.getPixelForValue(i);
          ctx.beginPath();
          ctx.moveTo(cx, cy - half);
          ctx.lineTo(cx + half, cy);
          ctx.lineTo(cx, cy + half);
          ctx.lineTo(cx - half, cy);
          ctx.closePath();
          ctx.fill();
          if (this.palette.barBorder) ctx.stroke();
        }
        // Cost view: an unpriced call's cost is unknown, so it gets a question mark, not an empty (zero) bar.
        if (m.unpricedCalls.length > 0) {
          ctx.fillStyle = this.palette.muted;
          ctx.font = `bold 12px ${this.palette.fontFamily}`;
          ctx.textAlign = 'center';
          ctx.textBaseline = 'bottom';
          for (const i of m.unpricedCalls) ctx.fillText('?', x.getPixelForValue(i), a.bottom - 2);
        }
        for (const band of m.bands) {
          const [x0, x1] = this.bandPixels(chart, band, step);
          if (x1 <= a.left || x0 >= a.right) continue;
          this.drawBandLabel(ctx, band, x0, x1, a.top, a.right);
        }
        if (this.selected !== null && this.selected < m.barCount) {
          // Outline the selected stack itself; the column behind it is already tinted.
          const cx = x.getPixelForValue(this.selected);
          const top = Math.min(a.bottom - 3, y.getPixelForValue(m.stackTop[this.selected] ?? 0)) - 1.5;
          const width = Math.max(3, step - 1);
          ctx.strokeStyle = this.palette.selection;
          ctx.lineWidth = this.palette.highContrast ? 2 : 1.5;
          ctx.strokeRect(cx - width / 2, top, width, a.bottom - top);
        }
        ctx.restore();
      },
      afterTooltipDraw: (_chart, { tooltip }) => {
        if (mirrorTooltip(this.wrapper, tooltip)) this.wrapper.dataset['tooltipCall'] = String(tooltip.dataPoints[0]?.dataIndex ?? '');
        else delete this.wrapper.dataset['tooltipCall'];
      },
    };
  }

  /** Left and right pixel edges of a band: the outer edges of its first and last bars. */
  private bandPixels(chart: Chart, band: LoopBand, step: number): [number, number] {
    const x = chart.scales['x']!;
    const a = chart.chartArea;
    const first = x.getPixelForValue(band.x0 + 0.5) - step / 2;
    const last = x.getPixelForValue(band.x1 - 0.5) + step / 2;
    return [Math.max(a.left, first), Math.min(a.right, last)];
  }

  /**
   * A retry loop's band behind the bars. Gave-up loops are hatched with dashed edges,
   * escaped ones plain with solid edges, so the two differ by more than colour.
   */
  private drawBand(ctx: CanvasRenderingContext2D, band: LoopBand, x0: number, x1: number, top: number, bottom: number): void {
    const p = this.palette;
    const width = Math.max(2, x1 - x0);
    ctx.save();
    ctx.fillStyle = withAlpha(p.loop, p.highContrast ? 0.2 : 0.1);
    ctx.fillRect(x0, top, width, bottom - top);
    if (!band.escaped) {
      ctx.beginPath();
      ctx.rect(x0, top, width, bottom - top);
      ctx.clip();
      ctx.strokeStyle = withAlpha(p.loop, p.highContrast ? 0.55 : 0.3);
      ctx.lineWidth = 1;
      ctx.beginPath();
      const h = bottom - top;
      for (let sx = x0 - h; sx < x0 + width; sx += 7) {
        ctx.moveTo(sx, bottom);
        ctx.lineTo(sx + h, top);
      }
      ctx.stroke();
    }
    ctx.restore();
    ctx.save();
    ctx.strokeStyle = withAlpha(p.loop, p.highContrast ? 1 : 0.8);
    ctx.lineWidth = p.highContrast ? 2 : 1;
    ctx.setLineDash(band.escaped ? [] : [4, 3]);
    ctx.beginPath();
    ctx.moveTo(x0 + 0.5, top);
    ctx.lineTo(x0 + 0.5, bottom);
    ctx.moveTo(x1 - 0.5, top);
    ctx.lineTo(x1 - 0.5, bottom);
    ctx.stroke();
    ctx.restore();
  }

  /** The band's label at its top left, on a tooltip-coloured box so it reads over bars; shortened or left out when the band is too narrow. */
  private drawBandLabel(ctx: CanvasRenderingContext2D, band: LoopBand, x0: number, x1: number, top: number, right: number): void {
    const p = this.palette;
    ctx.save();
    ctx.font = `10px ${p.fontFamily}`;
    const pad = 4;
    const text = [band.label, band.shortLabel].find((t) => ctx.measureText(t).width + 2 * pad <= Math.max(x1 - x0, 0) + 40) ?? null;
    if (text) {
      const w = ctx.measureText(text).width + 2 * pad;
      const lx = Math.min(x0 + 2, right - w);
      const ly = top + 3;
      ctx.fillStyle = p.tooltipBackground;
      ctx.fillRect(lx, ly, w, 14);
      ctx.strokeStyle = p.loop;
      ctx.lineWidth = 1;
      ctx.setLineDash(band.escaped ? [] : [3, 2]);
      ctx.strokeRect(lx + 0.5, ly + 0.5, w - 1, 13);
      ctx.fillStyle = p.foreground;
      ctx.textBaseline = 'middle';
      ctx.fillText(text, lx + pad, ly + 7.5);
    }
    ctx.restore();
  }
}
