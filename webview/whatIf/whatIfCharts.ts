import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  Tooltip,
} from 'chart.js';
import type { ChartConfiguration, ChartDataset, Plugin, Scale } from 'chart.js';
import annotationPlugin from 'chartjs-plugin-annotation';
import type { AnnotationOptions } from 'chartjs-plugin-annotation';
import { formatCompact, formatCount, formatPercent } from '../../src/core/text/formatNumbers';
import type { ScenarioCall } from '../../src/core/sim/scenario';
import type { PolicyId } from '../../src/core/sim/policies';
import { barStep, createOrUpdate, fillSelectionColumn, mirrorTooltip, writePlotArea } from '../shared/chartParts';
import type { Palette } from '../shared/palette';
import { annotationLabelStyle, tooltipStyle, withAlpha } from '../shared/palette';
import { barTooltipLines } from './whatIfModel';
import type { CliffChartModel, ScenarioBarsModel } from './whatIfModel';

Chart.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  LogarithmicScale,
  Tooltip,
  annotationPlugin,
);

type BarsChartType = 'bar' | 'line';
type BarDataset = ChartDataset<BarsChartType, (number | null)[]>;

/** Above this many calls a pair of bars per call is too thin to read: the traced calls become lines over the scenario's bars. */
export const DENSE_CALLS = 120;

/**
 * The selected session's calls under the scenario beside the same calls as traced: two
 * stacks per call. Owns its Chart; the view owns the selection and pushes it here. Facts
 * for tests go on the wrapper as data attributes.
 */
export class ScenarioBarsChart {
  private chart: Chart<BarsChartType, (number | null)[], string> | null = null;
  private model: ScenarioBarsModel | null = null;
  private calls: readonly ScenarioCall[] = [];
  private selected: number | null = null;

  constructor(
    private readonly wrapper: HTMLElement,
    private readonly canvas: HTMLCanvasElement,
    private palette: Palette,
    private readonly onPick: (bar: number) => void,
  ) {}

  render(model: ScenarioBarsModel, calls: readonly ScenarioCall[], selected: number | null): void {
    this.model = model;
    this.calls = calls;
    this.selected = selected;
    this.chart = createOrUpdate(this.chart, this.canvas, () => this.config());
    this.wrapper.dataset['barCount'] = String(model.labels.length);
    this.wrapper.dataset['dense'] = String(model.labels.length > DENSE_CALLS);
    this.wrapper.dataset['rejected'] = model.rejected.join(',');
    this.writeSelection();
  }

  /** Moves the highlighted pair without rebuilding. */
  select(bar: number | null): void {
    this.selected = bar;
    this.writeSelection();
    this.chart?.draw();
  }

  setPalette(palette: Palette): void {
    this.palette = palette;
    if (this.model) this.render(this.model, this.calls, this.selected);
  }

  destroy(): void {
    this.chart?.destroy();
    this.chart = null;
    this.model = null;
  }

  private writeSelection(): void {
    this.wrapper.dataset['selectedBar'] = this.selected === null ? '' : String(this.selected);
    this.wrapper.dataset['selectedCall'] =
      this.selected === null || !this.model ? '' : String(this.model.callIndexes[this.selected] ?? '');
  }

  private config(): ChartConfiguration<BarsChartType, (number | null)[], string> {
    const m = this.model!;
    const p = this.palette;
    const dense = m.labels.length > DENSE_CALLS;
    const bar = (
      label: string,
      data: (number | null)[],
      color: string,
      stack: 'traced' | 'scenario',
      alpha: number,
    ): BarDataset => ({
      type: 'bar',
      label,
      data,
      stack,
      // High contrast: the traced stack is outlined only, the scenario stack solid, so the two differ by more than shade.
      backgroundColor: p.highContrast ? (stack === 'traced' ? 'transparent' : color) : withAlpha(color, alpha),
      borderColor: p.highContrast ? (p.barBorder ?? color) : stack === 'traced' ? withAlpha(color, 0.6) : 'transparent',
      borderWidth: p.highContrast || stack === 'traced' ? 1 : 0,
      barPercentage: dense ? 1 : 0.9,
      categoryPercentage: dense ? 1 : 0.9,
      maxBarThickness: 28,
      order: 2,
    });
    // Dense: the traced session as two lines (its cached tokens, and its whole call) over full-width scenario bars.
    const line = (label: string, data: (number | null)[], color: string, dash: number[]): BarDataset => ({
      type: 'line',
      label,
      data,
      borderColor: color,
      backgroundColor: color,
      borderWidth: p.highContrast ? 2 : 1.3,
      borderDash: dash,
      pointRadius: 0,
      tension: 0,
      spanGaps: false,
      order: 1,
    });
    const tracedTotal = m.traced.cached.map((c, k) =>
      c === null && m.traced.appended[k] === null
        ? null
        : (c ?? 0) + (m.traced.appended[k] ?? 0) + (m.traced.output[k] ?? 0),
    );
    const traced: BarDataset[] = dense
      ? [
          line('As traced: cached', m.traced.cached, p.foreground, []),
          line('As traced: whole call', tracedTotal, p.muted, [2, 2]),
        ]
      : [
          bar('As traced: cached', m.traced.cached, p.cached, 'traced', 0.22),
          bar('As traced: appended', m.traced.appended, p.appended, 'traced', 0.3),
          bar('As traced: output', m.traced.output, p.output, 'traced', 0.3),
        ];
    const datasets: BarDataset[] = [
      ...traced,
      bar('Hit', m.scenario.hit, p.cached, 'scenario', 0.75),
      bar('Reloaded from CPU', m.scenario.reloaded, p.subagent, 'scenario', 0.9),
      bar('Recomputed', m.scenario.recomputed, p.loop, 'scenario', 0.95),
      bar('Appended', m.scenario.appended, p.appended, 'scenario', 0.95),
      bar('Output', m.scenario.output, p.output, 'scenario', 0.95),
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
        onClick: (_e, elements) => {
          const hit = elements[0];
          if (hit) this.onPick(hit.index);
        },
        onHover: (_e, elements) => {
          this.canvas.style.cursor = elements.length > 0 ? 'pointer' : 'default';
        },
        scales: {
          x: {
            stacked: true,
            grid: { display: false },
            border: { color: grid },
            ticks: { color: p.muted, autoSkip: true, maxRotation: 0, autoSkipPadding: 12 },
            title: {
              display: true,
              text: dense
                ? 'LLM call (bars: this scenario; lines: as traced)'
                : 'LLM call (left: as traced, right: this scenario)',
              color: p.muted,
              padding: { top: 2, bottom: 0 },
            },
          },
          y: {
            stacked: true,
            beginAtZero: true,
            max: m.axisMax,
            grid: { color: grid },
            border: { display: false },
            ticks: { color: p.muted, maxTicksLimit: 5, precision: 0, callback: (v) => formatCompact(Number(v)) },
            title: { display: true, text: 'tokens per call', color: p.muted },
          },
        },
        plugins: {
          tooltip: {
            enabled: true,
            ...tooltipStyle(p),
            filter: (_item, index) => index === 0,
            callbacks: {
              title: (items) => `Call ${m.labels[items[0]?.dataIndex ?? 0] ?? ''}`,
              label: (item) => barTooltipLines(m, item.dataIndex, this.calls[item.dataIndex]),
            },
          },
          annotation: { annotations: {} },
        },
      },
      plugins: [this.selectionPlugin()],
    };
  }

  private selectionPlugin(): Plugin<BarsChartType> {
    return {
      id: 'whatIfSelection',
      afterLayout: (chart) => writePlotArea(this.wrapper, chart.chartArea),
      beforeDatasetsDraw: (chart) => {
        const m = this.model;
        if (!m || this.selected === null || this.selected >= m.labels.length) return;
        fillSelectionColumn(
          chart.ctx,
          chart.chartArea,
          chart.scales['x']!.getPixelForValue(this.selected),
          barStep(chart, m.labels.length),
          this.palette,
        );
      },
      afterDatasetsDraw: (chart) => {
        const m = this.model;
        if (!m) return;
        const { ctx, chartArea: a, scales } = chart;
        const x = scales['x']!;
        // A cross under each rejected call: it never ran, so it has no bar.
        ctx.save();
        ctx.strokeStyle = this.palette.failed;
        ctx.lineWidth = 1.5;
        for (const k of m.rejected) {
          const cx = x.getPixelForValue(k);
          ctx.beginPath();
          ctx.moveTo(cx - 3, a.bottom - 9);
          ctx.lineTo(cx + 3, a.bottom - 3);
          ctx.moveTo(cx + 3, a.bottom - 9);
          ctx.lineTo(cx - 3, a.bottom - 3);
          ctx.stroke();
        }
        ctx.restore();
      },
      afterTooltipDraw: (_chart, { tooltip }) => {
        mirrorTooltip(this.wrapper, tooltip);
      },
    };
  }
}

type LinePoint = { x: number; y: number | null };
type LineDataset = ChartDataset<'line', LinePoint[]>;

/** A dash per policy, so the policy lines differ by more than colour. */
const POLICY_DASH: Record<PolicyId, number[]> = {
  'vllm-lru': [],
  'sglang-lru': [6, 3],
  'ttl-pin': [2, 3],
  'admission-cap': [8, 3, 2, 3],
  'cpu-offload': [1, 2],
};

/**
 * Hit rate and prefill share against N (or capacity): the knee, the current scenario and
 * the suggested admission cap marked, the other policies' hit rates as thin lines. Owns
 * its Chart and a keyboard cursor over the points; the view owns the data.
 */
export class CliffChart {
  private chart: Chart<'line', LinePoint[]> | null = null;
  private model: CliffChartModel | null = null;

  constructor(
    private readonly wrapper: HTMLElement,
    private readonly canvas: HTMLCanvasElement,
    private palette: Palette,
    private readonly onPick: (value: number) => void,
  ) {}

  /** The cursor's point index (keyboard), or null. */
  cursor: number | null = null;

  render(model: CliffChartModel): void {
    this.model = model;
    if (this.cursor !== null && this.cursor >= model.xs.length) this.cursor = model.xs.length - 1;
    this.chart = createOrUpdate(this.chart, this.canvas, () => this.config());
    const w = this.wrapper.dataset;
    w['points'] = model.xs.join(',');
    w['knee'] = model.knee === null ? '' : String(model.knee);
    w['suggested'] = model.suggested === null ? '' : String(model.suggested);
    w['current'] = model.current ? String(model.current.x) : '';
    w['lines'] = model.series
      .filter((s) => !s.main)
      .map((s) => s.policy)
      .join(',');
    w['axis'] = model.axis;
  }

  /** Moves the keyboard cursor; the caller announces the point. */
  setCursor(index: number | null): void {
    this.cursor = index;
    this.wrapper.dataset['cursor'] = index === null || !this.model ? '' : String(this.model.xs[index] ?? '');
    this.chart?.draw();
  }

  setPalette(palette: Palette): void {
    this.palette = palette;
    if (this.model) this.render(this.model);
  }

  destroy(): void {
    this.chart?.destroy();
    this.chart = null;
    this.model = null;
  }

  private policyColor(policy: PolicyId): string {
    const p = this.palette;
    const colors: Record<PolicyId, string> = {
      'vllm-lru': p.cached,
      'sglang-lru': p.subagent,
      'ttl-pin': p.output,
      'admission-cap': p.compaction,
      'cpu-offload': p.context,
    };
    return colors[policy];
  }

  private config(): ChartConfiguration<'line', LinePoint[]> {
    const m = this.model!;
    const p = this.palette;
    const hc = p.highContrast;
    const datasets: LineDataset[] = m.series.map((s) => {
      const color = s.kind === 'prefill' ? p.appended : s.kind === 'ideal' ? p.muted : this.policyColor(s.policy);
      return {
        label: s.label,
        data: s.points,
        borderColor: s.main ? color : withAlpha(color, hc ? 1 : 0.85),
        backgroundColor: color,
        borderWidth: s.main && s.kind !== 'ideal' ? (hc ? 3 : 2.2) : hc ? 2 : 1.3,
        borderDash: s.kind === 'prefill' ? [6, 4] : s.kind === 'ideal' ? [1, 3] : s.main ? [] : POLICY_DASH[s.policy],
        pointRadius: s.main && s.kind !== 'ideal' ? 3 : 0,
        pointHoverRadius: 5,
        pointStyle: s.kind === 'prefill' ? 'rect' : 'circle',
        tension: 0,
        spanGaps: true,
        order: s.main ? 1 : 2,
      };
    });
    if (m.current) {
      // The current scenario: diamonds on both main lines at its x.
      datasets.push({
        label: 'this scenario',
        data: [
          { x: m.current.x, y: m.current.hit },
          { x: m.current.x, y: m.current.prefill },
        ],
        showLine: false,
        borderColor: p.foreground,
        backgroundColor: p.selection,
        borderWidth: hc ? 2 : 1.5,
        pointStyle: 'rectRot',
        pointRadius: 6,
        pointHoverRadius: 7,
        order: 0,
      });
    }
    const grid = withAlpha(p.grid, hc ? 0.9 : 0.5);
    const xs = m.xs.length > 0 ? m.xs : [1];
    const lo = Math.min(...xs, m.current?.x ?? Infinity);
    const hi = Math.max(...xs, m.current?.x ?? -Infinity);
    return {
      type: 'line',
      data: { datasets },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        parsing: false,
        interaction: { mode: 'nearest', intersect: false, axis: 'x' },
        layout: { padding: { top: 18, right: 8 } },
        onClick: (_e, elements) => {
          const hit = elements[0];
          const value = hit ? (datasets[hit.datasetIndex]?.data[hit.index]?.x ?? null) : null;
          if (value !== null) this.onPick(value);
        },
        onHover: (_e, elements) => {
          this.canvas.style.cursor = elements.length > 0 ? 'pointer' : 'default';
        },
        scales: {
          x: {
            type: 'logarithmic',
            min: lo === hi ? lo / 2 : lo,
            max: lo === hi ? hi * 2 : hi,
            grid: { color: withAlpha(p.grid, hc ? 0.6 : 0.25) },
            border: { color: grid },
            afterBuildTicks: (scale: Scale) => {
              // Ticks at the values run and the current scenario (log scales otherwise label 1, 10, 100 only).
              scale.ticks = [...new Set([...xs, ...(m.current ? [m.current.x] : [])])]
                .sort((a, b) => a - b)
                .map((value) => ({ value }));
            },
            ticks: {
              color: p.muted,
              autoSkip: true,
              maxRotation: 0,
              autoSkipPadding: 8,
              callback: (v) => (m.axis === 'capacity' ? formatCompact(Number(v)) : String(v)),
            },
            title: { display: true, text: m.xLabel, color: p.muted },
          },
          y: {
            min: 0,
            max: 1,
            grid: { color: grid },
            border: { display: false },
            ticks: { color: p.muted, stepSize: 0.25, callback: (v) => `${Math.round(Number(v) * 100)}%` },
          },
        },
        plugins: {
          tooltip: {
            enabled: true,
            ...tooltipStyle(p),
            displayColors: true,
            mode: 'index',
            callbacks: {
              title: (items) => {
                const x = items[0]?.parsed.x ?? 0;
                return m.axis === 'replicas' ? `N = ${x}` : `${formatCount(x)} tokens`;
              },
              label: (item) => `${item.dataset.label ?? ''}: ${formatPercent(item.parsed.y)}`,
            },
          },
          annotation: { clip: false, annotations: this.annotations(m) },
        },
      },
      plugins: [this.marksPlugin()],
    };
  }

  private annotations(m: CliffChartModel): Record<string, AnnotationOptions> {
    const p = this.palette;
    const out: Record<string, AnnotationOptions> = {
      half: {
        type: 'line',
        scaleID: 'y',
        value: 0.5,
        borderColor: withAlpha(p.appended, 0.5),
        borderWidth: 1,
        borderDash: [2, 4],
        drawTime: 'beforeDatasetsDraw',
      },
    };
    const label = (
      content: string,
      color: string,
      yAdjust: number,
      position: 'start' | 'end' = 'start',
    ): NonNullable<Extract<AnnotationOptions, { type: 'line' }>['label']> => ({
      display: true,
      content,
      position,
      yAdjust,
      ...annotationLabelStyle(p, color),
    });
    if (m.knee !== null) {
      out['knee'] = {
        type: 'line',
        scaleID: 'x',
        value: m.knee,
        borderColor: p.loop,
        borderWidth: p.highContrast ? 3 : 2,
        drawTime: 'beforeDatasetsDraw',
        label: label(`cliff ${m.axis === 'replicas' ? `N = ${m.knee}` : formatCompact(m.knee)}`, p.loop, -16),
      };
    }
    if (m.suggested !== null) {
      out['suggested'] = {
        type: 'line',
        scaleID: 'x',
        value: m.suggested,
        borderColor: p.output,
        borderWidth: p.highContrast ? 2 : 1.5,
        borderDash: [5, 3],
        drawTime: 'beforeDatasetsDraw',
        label: label(`admit ≤ ${m.suggested}`, p.output, -4, 'end'),
      };
    }
    if (m.current) {
      out['current'] = {
        type: 'line',
        scaleID: 'x',
        value: m.current.x,
        borderColor: withAlpha(p.selection, 0.9),
        borderWidth: 1,
        borderDash: [1, 2],
        drawTime: 'beforeDatasetsDraw',
      };
    }
    return out;
  }

  /** Reports where the knee and the points are drawn (tests) and draws the keyboard cursor. */
  private marksPlugin(): Plugin<'line'> {
    return {
      id: 'cliffMarks',
      afterLayout: (chart) => {
        const x = chart.scales['x']!;
        const m = this.model;
        writePlotArea(this.wrapper, chart.chartArea);
        this.wrapper.dataset['pointPixels'] = (m?.xs ?? []).map((v) => Math.round(x.getPixelForValue(v))).join(',');
        this.wrapper.dataset['kneePixel'] = m?.knee == null ? '' : String(Math.round(x.getPixelForValue(m.knee)));
      },
      afterDatasetsDraw: (chart) => {
        const m = this.model;
        if (!m || this.cursor === null) return;
        const value = m.xs[this.cursor];
        if (value === undefined) return;
        const { ctx, chartArea: a } = chart;
        const cx = chart.scales['x']!.getPixelForValue(value);
        ctx.save();
        ctx.strokeStyle = this.palette.selection;
        ctx.lineWidth = this.palette.highContrast ? 2 : 1.5;
        ctx.strokeRect(cx - 6, a.top, 12, a.bottom - a.top);
        ctx.restore();
      },
    };
  }
}
