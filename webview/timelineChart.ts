import { BarController, BarElement, CategoryScale, Chart, LinearScale, LineController, LineElement, PointElement, Tooltip } from 'chart.js';
import type { ChartConfiguration, ChartDataset, Plugin, TooltipItem } from 'chart.js';
import annotationPlugin from 'chartjs-plugin-annotation';
import type { AnnotationOptions } from 'chartjs-plugin-annotation';
import type { CallRow } from '../src/core/analysis/traceView';
import { formatCompact } from '../src/core/report/formatNumbers';
import type { Palette } from './palette';
import { withAlpha } from './palette';
import type { TimelineModel } from './timelineModel';
import { tooltipLines, tooltipTitle } from './timelineModel';

// Only what the timeline draws, so the bundle carries no unused controllers or scales.
Chart.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Tooltip, annotationPlugin);

/** What the timeline tells its owner. */
export interface TimelineCallbacks {
  /** A bar was clicked. */
  onPick(index: number): void;
}

type TimelineChartType = 'bar' | 'line';
type Dataset = ChartDataset<TimelineChartType, (number | null)[]>;

/**
 * The chart.js timeline of one session. Owns the Chart instance and the marks it draws
 * itself (selection column, failed-tool triangles); the app owns the selection state and
 * pushes it here. Test-visible facts go on the wrapper as data attributes.
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
    if (!this.chart) {
      this.chart = new Chart(this.canvas, this.config());
    } else {
      const fresh = this.config();
      this.chart.data = fresh.data;
      this.chart.options = fresh.options ?? {};
      this.chart.update('none');
    }
    this.wrapper.dataset['barCount'] = String(model.barCount);
    this.wrapper.dataset['showCached'] = String(showCached);
    this.wrapper.dataset['failedCalls'] = String(model.failedCalls.length);
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
    this.wrapper.dataset['palette'] = JSON.stringify({ cached: p.cached, appended: p.appended, output: p.output, context: p.context, failed: p.failed, barBorder: p.barBorder, highContrast: p.highContrast });
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
    const datasets: Dataset[] = [
      bar('Cached', m.cached, p.cached, 0.55, !this.showCached),
      bar('Appended', m.appended, p.appended, 0.95),
      bar('Output', m.output, p.output, 0.95),
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
            ticks: { color: p.muted, autoSkip: true, maxRotation: 0, autoSkipPadding: 12 },
            title: { display: true, text: 'LLM call', color: p.muted, padding: { top: 2, bottom: 0 } },
          },
          y: {
            stacked: true,
            beginAtZero: true,
            max: m.axisMax ?? undefined,
            grid: { color: grid },
            border: { display: false },
            ticks: { color: p.muted, maxTicksLimit: 6, precision: 0, callback: (v) => formatCompact(Number(v)) },
            title: { display: true, text: this.showCached ? 'tokens per call' : 'appended + output tokens', color: p.muted },
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
            displayColors: false,
            backgroundColor: p.tooltipBackground,
            borderColor: p.tooltipBorder,
            borderWidth: 1,
            titleColor: p.foreground,
            bodyColor: p.foreground,
            padding: 8,
            cornerRadius: 3,
            caretSize: 5,
            titleFont: { weight: 'bold', size: 12 },
            bodyFont: { size: 12 },
            callbacks: {
              title: (items) => {
                const call = this.calls[items[0]?.dataIndex ?? -1];
                return call ? tooltipTitle(call) : '';
              },
              label: (item) => {
                const call = this.calls[item.dataIndex];
                return call ? tooltipLines(call) : '';
              },
            },
          },
          annotation: { clip: false, annotations: this.annotations() },
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
      const color = marker.kind === 'compaction' ? p.compaction : p.subagent;
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
        borderDash: marker.kind === 'compaction' ? [5, 3] : [2, 3],
        drawTime: 'afterDatasetsDraw',
        label: {
          display: true,
          content: marker.label,
          position: 'start',
          yAdjust: -22 + stagger * 16,
          xAdjust,
          backgroundColor: p.tooltipBackground,
          borderColor: color,
          borderWidth: 1,
          borderRadius: 2,
          color: p.foreground,
          font: { size: 10 },
          padding: { x: 4, y: 2 },
        },
      };
    });
    return out;
  }

  /** Draws the selection column and failed-tool triangles, and reports the plot area for tests and keyboard users. */
  private marksPlugin(): Plugin<TimelineChartType> {
    return {
      id: 'callMarks',
      afterLayout: (chart) => {
        const a = chart.chartArea;
        this.wrapper.dataset['plotArea'] = [a.left, a.top, a.right, a.bottom].map((v) => Math.round(v)).join(',');
      },
      beforeDatasetsDraw: (chart) => {
        if (this.selected === null || !this.model || this.selected >= this.model.barCount) return;
        const { ctx, chartArea: a, scales } = chart;
        const x = scales['x']!;
        const step = this.model.barCount > 1 ? Math.abs(x.getPixelForValue(1) - x.getPixelForValue(0)) : a.right - a.left;
        const cx = x.getPixelForValue(this.selected);
        ctx.save();
        ctx.fillStyle = withAlpha(this.palette.selection, this.palette.highContrast ? 0.35 : 0.22);
        ctx.fillRect(cx - step / 2, a.top, step, a.bottom - a.top);
        ctx.restore();
      },
      afterDatasetsDraw: (chart) => {
        const m = this.model;
        if (!m) return;
        const { ctx, chartArea: a, scales } = chart;
        const x = scales['x']!;
        const y = scales['y']!;
        const step = m.barCount > 1 ? Math.abs(x.getPixelForValue(1) - x.getPixelForValue(0)) : a.right - a.left;
        const size = Math.max(this.palette.highContrast ? 7 : 5, Math.min(9, step * 0.9));
        ctx.save();
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
    };
  }
}
