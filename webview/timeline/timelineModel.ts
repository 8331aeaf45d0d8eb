import type { CallRow, LoopView } from '../../src/core/view/traceView';
import { formatCount, formatDuration, formatPercent, formatUsd } from '../../src/core/text/formatNumbers';
import { loopAttemptText, missText } from '../analysis/analysisModel';
import type { FigureStats, RunStats } from './bins';

export { shortSessionId } from '../../src/core/view/sessionList';
export { niceCeiling } from './bins';

/** A time of day, local, 24-hour: "14:05:09". */
export function formatClock(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** When the call ran: start → end (duration), with what is known. */
export function callTimeText(call: CallRow): string {
  if (call.startMs !== null && call.endMs !== null) {
    return `${formatClock(call.startMs)} → ${formatClock(call.endMs)} (${formatDuration(call.endMs - call.startMs)})`;
  }
  if (call.startMs !== null) return `started ${formatClock(call.startMs)}`;
  if (call.endMs !== null) return `ended ${formatClock(call.endMs)}`;
  return 'unknown';
}

/** The call's prefix-cache hit: cached / input, null when either is unknown. */
export function callHitRate(call: CallRow): number | null {
  if (call.cached === null || call.input === null || call.input === 0) return null;
  return call.cached / call.input;
}

/** Tool names with ✗ on failed ones: "Bash, Edit ✗". */
export function toolsText(call: CallRow): string {
  if (call.tools.length === 0) return 'none';
  return call.tools.map((t) => (t.failed === true ? `${t.name} ✗` : t.name)).join(', ');
}

/** Tooltip title: 1-based call number and model. */
export function tooltipTitle(call: CallRow): string {
  return `Call ${call.index + 1}${call.model ? ` · ${call.model}` : ''}`;
}

/** Tooltip body, one figure per line; unknown figures say so. */
export function tooltipLines(call: CallRow): string[] {
  const cost = costText(call);
  return [
    `Time: ${callTimeText(call)}`,
    `Input: ${formatCount(call.input)}`,
    `Cached: ${formatCount(call.cached)}`,
    `Appended: ${formatCount(call.appended)}`,
    `Cache write: ${formatCount(call.cacheWrite)}${call.cacheWrite1h ? ` (${formatCount(call.cacheWrite1h)} for 1 h)` : ''}`,
    `Output: ${formatCount(call.output)}`,
    `Hit: ${formatPercent(callHitRate(call))}`,
    ...(cost ? [cost] : []),
    `Tools: ${toolsText(call)}`,
  ];
}

/** A call's dollars by kind for its tooltip, or why they are unknown; null when the view has no prices. */
export function costText(call: CallRow): string | null {
  const c = call.cost;
  if (!c) return null;
  if (c.usd === null || !c.byKind) return `Cost: unknown (${c.unpriced ?? 'no price'})`;
  const k = c.byKind;
  const parts: Array<[string, number]> = [
    ['uncached', k.input],
    ['read', k.cacheRead],
    ['write 5 min', k.cacheWrite5m],
    ['write 1 h', k.cacheWrite1h],
    ['output', k.output],
    ['GPU time', k.gpuTime],
  ];
  const shown = parts.filter(([, v]) => v > 0).map(([label, v]) => `${label} ${formatUsd(v)}`);
  return `Cost: ${formatUsd(c.usd)}${shown.length > 0 ? ` (${shown.join(', ')})` : ''}`;
}

/** What the bars measure: tokens, or the dollars those tokens cost. */
export type BarView = 'tokens' | 'cost';

/** "min 1,200 · mean 3,400 · max 9,000" (one value when all are equal; "unknown" when none is known); dollars in the cost view. */
export function statsText(f: FigureStats, view: BarView = 'tokens'): string {
  if (f.known === 0) return 'unknown';
  const fmt = view === 'cost' ? formatUsd : formatCount;
  if (f.min === f.max) return fmt(f.min);
  return `min ${fmt(f.min)} · mean ${fmt(f.mean)} · max ${fmt(f.max)}`;
}

/** Tooltip title of a bin of several calls: "Calls 1,201–1,260 (60 calls)". */
export function binTitle(s: RunStats): string {
  return `Calls ${formatCount(s.firstCall + 1)}–${formatCount(s.lastCall + 1)} (${formatCount(s.calls)} calls)`;
}

/** Tooltip body of a bin: the exact spread of each figure and what happened in it. */
export function binLines(s: RunStats, view: BarView = 'tokens'): string[] {
  const lines =
    view === 'cost'
      ? [
          `Cache read: ${statsText(s.cached, view)}`,
          `Appended (writes + uncached): ${statsText(s.appended, view)}`,
          `Output: ${statsText(s.output, view)}`,
        ]
      : [
          `Input: ${statsText(s.input)}`,
          `Cached: ${statsText(s.cached)}`,
          `Appended: ${statsText(s.appended)}`,
          `Output: ${statsText(s.output)}`,
        ];
  // In the cost view a call without a price has no dollars: the figures above leave it out, this says how many.
  const unpriced = view === 'cost' ? s.calls - s.output.known : 0;
  if (unpriced > 0)
    lines.push(
      `No price for ${formatCount(unpriced)} ${unpriced === 1 ? 'call' : 'calls'} (their model is not in the price list): left out of the dollars`,
    );
  if (s.failed > 0) lines.push(`Failed tool calls in ${formatCount(s.failed)} ${s.failed === 1 ? 'call' : 'calls'}`);
  if (s.misses > 0) lines.push(`Cache misses: ${formatCount(s.misses)}`);
  if (s.loopAttempts > 0)
    lines.push(`Retry-loop attempts in ${formatCount(s.loopAttempts)} ${s.loopAttempts === 1 ? 'call' : 'calls'}`);
  lines.push('Click to zoom to these calls');
  return lines;
}

/** What the live region says when a call is selected; retry-loop attempts and cache misses follow the figures. */
export function selectionAnnouncement(call: CallRow, count: number, loops: readonly LoopView[] = []): string {
  const failed = call.tools.filter((t) => t.failed === true).length;
  const tools =
    call.tools.length === 0
      ? 'no tools'
      : `${call.tools.length} ${call.tools.length === 1 ? 'tool' : 'tools'}${failed > 0 ? `, ${failed} failed` : ''}`;
  const extra = [
    ...(call.loops ?? []).flatMap((i) => (loops[i] ? [`${loopAttemptText(loops[i], call.index)}.`] : [])),
    ...(call.miss ? [`${missText(call.miss, call.appended)}.`] : []),
  ];
  return (
    `Call ${call.index + 1} of ${count}: input ${formatCount(call.input)}, cached ${formatCount(call.cached)}, ` +
    `appended ${formatCount(call.appended)}, output ${formatCount(call.output)}, hit ${formatPercent(callHitRate(call))}, ${tools}.` +
    extra.map((e) => ` ${e}`).join('')
  );
}

const NAVIGATION_KEYS = new Set(['ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown']);
/** Calls PageUp/PageDown move by. */
export const PAGE_STEP = 10;

/** True for keys that move the timeline selection. */
export function isNavigationKey(key: string): boolean {
  return NAVIGATION_KEYS.has(key);
}

/** The selection after a navigation key; from no selection, forward keys start at the first call, backward keys at the last. */
export function moveSelection(current: number | null, key: string, count: number): number | null {
  if (count <= 0) return null;
  const last = count - 1;
  if (current === null) {
    return key === 'ArrowLeft' || key === 'End' || key === 'PageUp'
      ? last
      : key === 'ArrowRight' || key === 'Home' || key === 'PageDown'
        ? 0
        : null;
  }
  const at = Math.min(Math.max(current, 0), last);
  switch (key) {
    case 'ArrowLeft':
      return Math.max(0, at - 1);
    case 'ArrowRight':
      return Math.min(last, at + 1);
    case 'PageUp':
      return Math.max(0, at - PAGE_STEP);
    case 'PageDown':
      return Math.min(last, at + PAGE_STEP);
    case 'Home':
      return 0;
    case 'End':
      return last;
    default:
      return at;
  }
}

/** Keeps a selection valid after the trace changed: the same index if it still exists, else the last call. */
export function clampSelection(index: number | null, count: number): number | null {
  if (index === null || count <= 0) return null;
  return Math.min(Math.max(index, 0), count - 1);
}
