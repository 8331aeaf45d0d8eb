import { Chart } from 'chart.js';
import type { ChartArea, ChartConfiguration, ChartType, DefaultDataPoint, TooltipModel } from 'chart.js';
import type { Palette } from './palette';
import { withAlpha } from './palette';

// Pieces the timeline and the what-if charts share: building or refreshing a Chart,
// the selection column, the bar step, and the facts mirrored on the wrapper for tests.

/** A new Chart on `canvas`, or `chart` given a fresh configuration and redrawn without animation. */
export function createOrUpdate<TType extends ChartType, TData = DefaultDataPoint<TType>, TLabel = unknown>(
  chart: Chart<TType, TData, TLabel> | null,
  canvas: HTMLCanvasElement,
  config: () => ChartConfiguration<TType, TData, TLabel>,
): Chart<TType, TData, TLabel> {
  if (!chart) return new Chart(canvas, config());
  const fresh = config();
  chart.data = fresh.data;
  // An empty object is a valid options object for every chart type; TypeScript cannot see that for a generic one.
  chart.options = fresh.options ?? ({} as NonNullable<typeof fresh.options>);
  chart.update('none');
  return chart;
}

/** Reports the plot area on the wrapper (`data-plot-area`: left,top,right,bottom in whole pixels), for tests and keyboard users. */
export function writePlotArea(wrapper: HTMLElement, a: ChartArea): void {
  wrapper.dataset['plotArea'] = [a.left, a.top, a.right, a.bottom].map((v) => Math.round(v)).join(',');
}

/** The width of one category on the x axis; the whole plot for a single bar. */
export function barStep(chart: Chart, count: number): number {
  const x = chart.scales['x']!;
  const a = chart.chartArea;
  return count > 1 ? Math.abs(x.getPixelForValue(1) - x.getPixelForValue(0)) : a.right - a.left;
}

/** Tints the selected call's column behind the bars. */
export function fillSelectionColumn(
  ctx: CanvasRenderingContext2D,
  a: ChartArea,
  cx: number,
  step: number,
  palette: Palette,
): void {
  ctx.save();
  ctx.fillStyle = withAlpha(palette.selection, palette.highContrast ? 0.35 : 0.22);
  ctx.fillRect(cx - step / 2, a.top, step, a.bottom - a.top);
  ctx.restore();
}

/**
 * The tooltip is painted on the canvas: its text goes on the wrapper (`data-tooltip`)
 * while it shows, for tests. True when it shows.
 */
export function mirrorTooltip<TType extends ChartType>(wrapper: HTMLElement, tooltip: TooltipModel<TType>): boolean {
  const shown = tooltip.opacity > 0 && tooltip.getActiveElements().length > 0;
  if (shown) wrapper.dataset['tooltip'] = [...tooltip.title, ...tooltip.body.flatMap((b) => b.lines)].join('\n');
  else delete wrapper.dataset['tooltip'];
  return shown;
}
