import { formatCompact } from '../../src/core/text/formatNumbers';
import type { CostColumns } from '../../src/core/view/timelineColumns';
import type { Palette } from '../shared/palette';
import { diagonalHatch, mixOver } from '../shared/palette';
import type { TimelineData } from './bins';
import { callAt, slotCount } from './bins';
import { groupMarks } from './marks';
import type { MarkGroup } from './marks';

// The cost view's calls without a price. Their dollars are unknown (NaN, never $0), so
// they have no bar; without a mark they would look like free calls. Each gets a short
// hatched stub on the axis with a "?" (one stub and a count for calls a few pixels
// apart); the tooltip names the model that has no price.

/** Height of the stub, pixels: taller than a hairline so it reads as a mark, short so no one takes it for a value. */
const STUB_PX = 14;

/** Calls of a session without a price: their dollars are unknown. 0 without prices. */
export function countUnpriced(cost: CostColumns | null): number {
  if (!cost) return 0;
  let n = 0;
  for (let i = 0; i < cost.output.length; i++) if (Number.isNaN(cost.output[i]!)) n += 1;
  return n;
}

/** Slots whose call has no dollars, per data (the bars' data changes with the view, the filter or the session). */
const unpricedSlotsOf = new WeakMap<TimelineData, Int32Array>();

/** The cost view's unpriced calls among slots [first, end), grouped so no two stubs are closer than `minGap` pixels. */
export function unpricedGroups(
  d: TimelineData,
  first: number,
  end: number,
  pixelOf: (slot: number) => number,
  minGap: number,
): MarkGroup[] {
  let slots = unpricedSlotsOf.get(d);
  if (!slots) {
    // In the cost view the bars' output column holds dollars: NaN is a call without a price.
    const dollars = d.columns.output;
    const found: number[] = [];
    for (let slot = 0, n = slotCount(d); slot < n; slot++)
      if (Number.isNaN(dollars[callAt(d, slot)]!)) found.push(slot);
    slots = Int32Array.from(found);
    unpricedSlotsOf.set(d, slots);
  }
  return groupMarks(d, 0, first, end, pixelOf, minGap, slots);
}

/** A diagonal hatch in the muted colour, as a pattern (one fill per stub). */
function hatchOf(ctx: CanvasRenderingContext2D, p: Palette): CanvasPattern | string {
  return (
    diagonalHatch(ctx, 5, p.background, mixOver(p.muted, p.highContrast ? 0.9 : 0.6, p.background)) ??
    mixOver(p.muted, 0.3, p.background)
  );
}

/**
 * Paints a hatched, dashed-outline stub standing on the axis (`base`, pixels) with a "?"
 * for each group, and the group's count above it when it stands for more than one call.
 */
export function paintUnpriced(
  ctx: CanvasRenderingContext2D,
  groups: readonly MarkGroup[],
  base: number,
  p: Palette,
): void {
  if (groups.length === 0) return;
  const fill = hatchOf(ctx, p);
  const width = 9;
  const top = base - STUB_PX;
  ctx.save();
  ctx.font = `bold 10px ${p.fontFamily}`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  for (const g of groups) {
    const x0 = g.x - width / 2;
    ctx.fillStyle = fill;
    ctx.fillRect(x0, top, width, STUB_PX);
    ctx.strokeStyle = p.barBorder ?? p.muted;
    ctx.lineWidth = 1;
    ctx.setLineDash([2, 2]);
    ctx.strokeRect(x0 + 0.5, top + 0.5, width - 1, STUB_PX - 1);
    ctx.setLineDash([]);
    ctx.fillStyle = p.foreground;
    ctx.fillText('?', g.x, top + STUB_PX / 2 + 0.5);
    if (g.count > 1) {
      ctx.font = `10px ${p.fontFamily}`;
      ctx.textBaseline = 'bottom';
      ctx.fillText(formatCompact(g.count), g.x, top - 1);
      ctx.font = `bold 10px ${p.fontFamily}`;
      ctx.textBaseline = 'middle';
    }
  }
  ctx.restore();
}
