import type { CallRow, LoopView, SessionView } from '../../src/core/view/traceView';
import { formatCount, formatDuration, formatPercent, formatUsd } from '../../src/core/report/formatNumbers';
import { loopAttemptText, loopBands, missCalls, missText } from '../analysis/analysisModel';
import type { LoopBand } from '../analysis/analysisModel';

/** A vertical marker on the timeline, placed between two bars. */
export interface TimelineMarker {
  kind: 'compaction' | 'subagent' | 'api-error';
  /** Category position: bar i is centred on i, so i - 0.5 is the gap before it. */
  x: number;
  /** Short text drawn on the chart. */
  label: string;
  /** Full sentence for the marker list and screen readers. */
  description: string;
  /** The call the marker list selects when clicked. */
  callIndex: number;
  /** The sub-agent's session, for sub-agent markers. */
  sessionId: string | null;
}

/** What the bars measure: tokens, or the dollars those tokens cost. */
export type BarView = 'tokens' | 'cost';

/** Everything the chart draws for one session, as plain arrays indexed by call. */
export interface TimelineModel {
  view: BarView;
  /** 1-based call numbers: users count calls from 1. */
  labels: string[];
  /**
   * The three stacks, in the view's unit: tokens (cached, appended, output) or dollars
   * (cache reads; appended = uncached input + cache writes; output). Null = unknown.
   */
  cached: (number | null)[];
  appended: (number | null)[];
  output: (number | null)[];
  /** Context size of each call (its whole input). */
  context: (number | null)[];
  /** Height of each visible stack, to place failed-tool marks above it. */
  stackTop: number[];
  /** Calls with at least one failed tool call. */
  failedCalls: number[];
  markers: TimelineMarker[];
  /** Shaded spans of the session's retry loops. */
  bands: LoopBand[];
  /** Calls whose prefix missed the cache, marked under their bars. */
  missCalls: number[];
  /** In the cost view, calls without a price: a "?" stands where their bar would be, never a $0 bar. */
  unpricedCalls: number[];
  /** The session's retry loops, for the tooltips of the calls in them. */
  loops: readonly LoopView[];
  /**
   * Shared maximum of both y axes while cached tokens are shown: bars and the context
   * line are then in the same units, so one scale keeps the line on the bar tops.
   * Null lets each axis fit its own data (cached hidden).
   */
  axisMax: number | null;
  barCount: number;
}

/** Short session id for labels: the first block of a UUID, other ids whole. */
export function shortSessionId(id: string): string {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(id) ? id.slice(0, 8) : id;
}

/** The smallest round number (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^k) at or above `value`, so explicit axis maxima get round ticks. */
export function niceCeiling(value: number): number {
  if (!(value > 0)) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) {
    if (step * power >= value * (1 - 1e-12)) return step * power;
  }
  return 10 * power;
}

/** A call's dollars in the three stacks of the cost view; unknown when the call has no price. */
export function costStacks(call: CallRow): { cached: number | null; appended: number | null; output: number | null } {
  const k = call.cost?.byKind;
  if (!k) return { cached: null, appended: null, output: null };
  return { cached: k.cacheRead, appended: k.input + k.cacheWrite5m + k.cacheWrite1h + k.gpuTime, output: k.output };
}

/** True when the session has prices: the cost view is offered. */
export function hasCosts(session: SessionView): boolean {
  return session.cost != null;
}

/** Builds the chart's data for a session; `showCached` decides what the bar stacks contain, `view` their unit. */
export function buildTimeline(session: SessionView, showCached: boolean, view: BarView = 'tokens'): TimelineModel {
  const calls = session.calls;
  const costView = view === 'cost' && hasCosts(session);
  const stacks = costView
    ? calls.map(costStacks)
    : calls.map((c) => ({ cached: c.cached, appended: c.appended, output: c.output }));
  const stackTop = stacks.map((b) => (showCached ? (b.cached ?? 0) : 0) + (b.appended ?? 0) + (b.output ?? 0));
  const context = calls.map((c) => c.input);
  let axisMax: number | null = null;
  // Bars and the context line share one scale only when both are tokens.
  if (showCached && calls.length > 0 && !costView) {
    // A loop, not Math.max(...spread): a spread of 100k+ calls overflows the stack.
    let highest = 0;
    for (let i = 0; i < calls.length; i++) highest = Math.max(highest, stackTop[i]!, context[i] ?? 0);
    axisMax = niceCeiling(highest);
  }
  return {
    view: costView ? 'cost' : 'tokens',
    labels: calls.map((c) => String(c.index + 1)),
    cached: stacks.map((b) => b.cached),
    appended: stacks.map((b) => b.appended),
    output: stacks.map((b) => b.output),
    context,
    stackTop,
    failedCalls: calls.filter((c) => c.tools.some((t) => t.failed === true)).map((c) => c.index),
    markers: timelineMarkers(session),
    // An older host sends no analysis: draw no bands rather than fail.
    bands: loopBands(session.analysis?.loops ?? [], calls.length),
    missCalls: missCalls(calls),
    unpricedCalls: costView ? calls.filter((c) => c.cost?.usd == null).map((c) => c.index) : [],
    loops: session.analysis?.loops ?? [],
    axisMax,
    barCount: calls.length,
  };
}

/** Compaction, API error and sub-agent markers, in call order. */
export function timelineMarkers(session: SessionView): TimelineMarker[] {
  const count = session.calls.length;
  const markers: TimelineMarker[] = [];
  for (const c of session.compactions) {
    const how = [c.trigger, c.preTokens !== null ? `${formatCount(c.preTokens)} tokens before` : null].filter((s) => s !== null).join(', ');
    markers.push({
      kind: 'compaction',
      x: c.beforeCall - 0.5,
      label: c.rewind ? 'rewind' : 'compaction',
      description: c.rewind ? `Rewind before call ${c.beforeCall + 1}: the conversation was cut back to an earlier message` : `Compaction before call ${c.beforeCall + 1}${how ? ` (${how})` : ''}`,
      callIndex: Math.min(c.beforeCall, Math.max(0, count - 1)),
      sessionId: null,
    });
  }
  // An older host sends no events.
  for (const e of session.events ?? []) {
    const what = e.count === 1 ? 'API error' : `${e.count} API errors`;
    markers.push({
      kind: 'api-error',
      x: e.beforeCall - 0.5,
      label: what,
      description: `${what} before call ${Math.min(e.beforeCall, count) + 1}: ${e.text}`,
      callIndex: Math.min(e.beforeCall, Math.max(0, count - 1)),
      sessionId: null,
    });
  }
  for (const s of session.subagents) {
    if (s.parentCallIndex === null) continue;
    const name = `${s.role === 'compaction' ? 'compaction agent' : 'sub-agent'} ${shortSessionId(s.sessionId)}`;
    markers.push({
      kind: 'subagent',
      // The sub-agent runs as a tool of this call, so it starts after the call's response.
      x: s.parentCallIndex + 0.5,
      label: name,
      description: `${name[0]!.toUpperCase()}${name.slice(1)} started by call ${s.parentCallIndex + 1} (${s.calls} ${s.calls === 1 ? 'call' : 'calls'})`,
      callIndex: s.parentCallIndex,
      sessionId: s.sessionId,
    });
  }
  return markers.sort((a, b) => a.x - b.x);
}

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

/** The call's dollars in one line: "Cost: $0.0123 (read $0.0021, write 5 min $0.0090, output $0.0012)", or why it is unknown. */
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

/** What the live region says when a call is selected; retry-loop attempts and cache misses follow the figures. */
export function selectionAnnouncement(call: CallRow, count: number, loops: readonly LoopView[] = []): string {
  const failed = call.tools.filter((t) => t.failed === true).length;
  const tools = call.tools.length === 0 ? 'no tools' : `${call.tools.length} ${call.tools.length === 1 ? 'tool' : 'tools'}${failed > 0 ? `, ${failed} failed` : ''}`;
  const extra = [
    ...(call.loops ?? []).flatMap((i) => (loops[i] ? [`${loopAttemptText(loops[i], call.index)}.`] : [])),
    ...(call.miss ? [`${missText(call.miss)}.`] : []),
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
    return key === 'ArrowLeft' || key === 'End' || key === 'PageUp' ? last : key === 'ArrowRight' || key === 'Home' || key === 'PageDown' ? 0 : null;
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
