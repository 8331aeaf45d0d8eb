import type { PartKind } from '../../src/core/context/contextParts';
import type { AppendedPart, SessionContext } from '../../src/core/context/contextView';
import { formatCount, formatPercent } from '../../src/core/text/formatNumbers';

// The context panel's view model: the composition chart's bars over a window of calls, a
// call's anatomy as rows, the calibration in words. Pure, so it is tested in Node.

/** Each part kind in the chart's legend and the anatomy's rows: short words. */
export const KIND_WORDS: Readonly<Record<PartKind, string>> = {
  system: 'system prompt and tools',
  memory: 'memory files',
  mcpSchemas: 'MCP tool schemas',
  userText: 'typed user text',
  injected: 'agent-written input',
  toolUse: 'tool calls written',
  toolResult: 'tool results',
  subagentResult: 'sub-agent results',
  assistantText: 'assistant text',
  thinking: 'thinking',
  compactionSummary: 'compaction summary',
  restored: 'restored after compaction',
};

/**
 * The chart's stack, bottom up, in the order a call's input is laid out: the unlogged base,
 * then what a compaction left (its summary, what it restored), then the conversation since.
 */
export const STACK_ORDER: readonly PartKind[] = [
  'system',
  'memory',
  'mcpSchemas',
  'compactionSummary',
  'restored',
  'userText',
  'injected',
  'assistantText',
  'thinking',
  'toolUse',
  'toolResult',
  'subagentResult',
];

/** A session's kinds in stack order. */
export function stackKinds(kinds: readonly PartKind[]): PartKind[] {
  return STACK_ORDER.filter((k) => kinds.includes(k));
}

/** Most bars the composition chart draws: more calls than this are binned (each bar the mean of its calls). */
export const MAX_BARS = 240;

/** The composition chart's bars over calls [first, end): one per call, or bins of neighbouring calls. */
export interface CompositionBars {
  /** First call of each bar, and how many calls it holds. */
  first: number[];
  size: number[];
  /** One call per bar. */
  single: boolean;
  /** Tokens of each kind per bar (a bin's mean), for every kind of the session. */
  byKind: Partial<Record<PartKind, number[]>>;
}

/** The bars for calls [first, end) of a session, at most `maxBars` of them. */
export function compositionBars(ctx: SessionContext, first: number, end: number, maxBars = MAX_BARS): CompositionBars {
  const calls = Math.max(0, end - first);
  const per = Math.max(1, Math.ceil(calls / maxBars));
  const starts: number[] = [];
  const sizes: number[] = [];
  for (let c = first; c < end; c += per) {
    starts.push(c);
    sizes.push(Math.min(per, end - c));
  }
  const byKind: Partial<Record<PartKind, number[]>> = {};
  for (const kind of ctx.kinds) {
    const column = ctx.byKind[kind] ?? [];
    byKind[kind] = starts.map((s, i) => {
      let sum = 0;
      for (let c = s; c < s + sizes[i]!; c++) sum += column[c] ?? 0;
      return sum / sizes[i]!;
    });
  }
  return { first: starts, size: sizes, single: per === 1, byKind };
}

/** The calls [first, end) a window over call numbers touches, inside the session. */
export function callsInWindow(lo: number, hi: number, count: number): { first: number; end: number } {
  const first = Math.max(0, Math.min(count, Math.floor(lo)));
  return { first, end: Math.max(first, Math.min(count, Math.ceil(hi))) };
}

/** One row of a call's anatomy. */
export interface AnatomyRow {
  kind: PartKind;
  label: string;
  tokens: number;
  /** Of the parts' sum. */
  share: number;
  estimated: boolean;
}

/** A call's input by part kind, what it appended, and how the parts compare with the logged input. */
export interface CallAnatomyView {
  call: number;
  rows: AnatomyRow[];
  /** Σ parts. */
  total: number;
  loggedInput: number | null;
  inputUsd: number | null;
  /** The largest parts this call appended. */
  appended: AppendedPart[];
}

/** The anatomy of call `call` (null: no such call). */
export function callAnatomy(ctx: SessionContext, call: number): CallAnatomyView | null {
  if (call < 0 || call >= ctx.loggedInput.length) return null;
  const estimated = new Set(ctx.estimatedKinds);
  const rows: AnatomyRow[] = [];
  let total = 0;
  for (const kind of stackKinds(ctx.kinds)) {
    const tokens = ctx.byKind[kind]?.[call] ?? 0;
    if (tokens <= 0) continue;
    total += tokens;
    rows.push({ kind, label: KIND_WORDS[kind], tokens, share: 0, estimated: estimated.has(kind) });
  }
  for (const r of rows) r.share = total > 0 ? r.tokens / total : 0;
  return {
    call,
    rows,
    total,
    loggedInput: ctx.loggedInput[call] ?? null,
    inputUsd: ctx.inputUsd[call] ?? null,
    appended: appendedBy(ctx.appended, call),
  };
}

/** The parts call `call` appended (the list is in call order: a binary search finds them). */
export function appendedBy(list: readonly AppendedPart[], call: number): AppendedPart[] {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]!.call < call) lo = mid + 1;
    else hi = mid;
  }
  const out: AppendedPart[] = [];
  for (let i = lo; i < list.length && list[i]!.call === call; i++) out.push(list[i]!);
  return out;
}

/** How the parts compare with the logged input, in words: "parts 27,513 · logged 27,539 (−0.1%)". */
export function inputComparison(view: CallAnatomyView): string {
  if (view.loggedInput === null || view.loggedInput <= 0)
    return `parts ${formatCount(view.total)} tokens · the log does not say this call's input`;
  const diff = (view.total - view.loggedInput) / view.loggedInput;
  const sign = diff > 0 ? '+' : diff < 0 ? '−' : '±';
  return `parts ${formatCount(view.total)} tokens · logged input ${formatCount(view.loggedInput)} (${sign}${(Math.abs(diff) * 100).toFixed(1)}%)`;
}

/** The tokenizer and its calibration, in words. */
export function calibrationText(ctx: SessionContext): string {
  const c = ctx.calibration;
  const how =
    ctx.content === 'sizes' ? 'from the sizes the log keeps (characters ÷ 4, output tokens)' : `with ${c.tokenizer}`;
  if (c.comparedCalls === 0 || c.medianAbsError === null)
    return `Counted ${how}; no call's growth could be compared with the log, so nothing was calibrated.`;
  const predicted =
    c.predictive.medianAbsError === null
      ? ''
      : `; ${formatPercent(c.predictive.medianAbsError)} when each call is predicted from the earlier calls only`;
  return `Counted ${how}, calibrated on ${formatCount(c.comparedCalls)} calls' logged input growth (× ${c.factor.toFixed(2)}, + ${framing(c)}): median error ${formatPercent(c.medianAbsError)} of what a call appended (${formatPercent(c.medianAbsErrorRaw)} before calibration${predicted}), ${formatPercent(c.medianInputError)} of a call's whole input.`;
}

/** Tokens in words for tables: 38k, 1.2k, 950. */
export function tokensShort(tokens: number): string {
  if (tokens < 1000) return String(Math.round(tokens));
  return tokens < 10_000 ? `${(tokens / 1000).toFixed(1)}k` : `${formatCount(Math.round(tokens / 1000))}k`;
}

/** Dollars for tables: $1.92, $0.0042, — when unpriced. */
export function usdShort(value: number | null): string {
  if (value === null) return '—';
  return value >= 0.01 || value === 0 ? `$${value.toFixed(2)}` : `$${value.toPrecision(2)}`;
}

/** The fitted framing in words: per piece, or per call when that fitted the log better. */
function framing(c: SessionContext['calibration']): string {
  return c.perCall > 0 ? `${c.perCall.toFixed(0)} tokens a call` : `${c.perPiece.toFixed(0)} tokens a piece`;
}
