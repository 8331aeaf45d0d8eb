import type { MissCause } from '../../src/core/analysis/cacheMisses';
import { MISS_CAUSES } from '../../src/core/analysis/cacheMisses';
import { compareToRange, PUBLISHED_RANGES } from '../../src/core/analysis/fingerprint';
import type { Fingerprint, PublishedRange, RangePosition } from '../../src/core/analysis/fingerprint';
import type { SessionSummary } from '../../src/core/analysis/sessionSummary';
import type { AnalysisView, CallRow, LoopView } from '../../src/core/view/traceView';
import {
  formatCompact,
  formatCount,
  formatDuration,
  formatPercent,
  formatRatio,
  formatUsd,
} from '../../src/core/text/formatNumbers';
import type { FigureGroup, RangeNote } from '../shared/figures';

// View-models of the session analyses (fingerprint, retry loops, cache misses): plain data
// in, plain data out, so the DOM layer only copies strings into elements.

/** How a published range is written: as a percentage of a fraction, or as a ratio. */
type RangeUnit = 'percent' | 'ratio';

/** A bound without trailing zeros: 0.91 → "91", 0.846 → "84.6", 559.8 → "559.8". */
function bound(value: number, unit: RangeUnit): string {
  const v = unit === 'percent' ? value * 100 : value;
  return String(Math.round(v * 10) / 10);
}

/** "84.6–99.5%" or "53.9–559.8×". */
export function rangeText(range: PublishedRange, unit: RangeUnit): string {
  return `${bound(range.low, unit)}–${bound(range.high, unit)}${unit === 'percent' ? '%' : '×'}`;
}

const POSITION_SYMBOL: Record<RangePosition, string> = { below: '↓', within: '✓', above: '↑' };

/**
 * Where a figure falls against its published range, in words (never colour alone);
 * an unknown figure keeps the range but gets no verdict.
 */
export function rangeNote(value: number | null, range: PublishedRange, unit: RangeUnit): RangeNote {
  const position = compareToRange(value, range);
  const span = rangeText(range, unit);
  const source = `Published range of ${range.what} on real agents: ${span}. Source: ${range.source}.`;
  if (position === null) return { position: null, text: `range ${span}`, title: `${source} This session: unknown.` };
  return {
    position,
    text: `${POSITION_SYMBOL[position]} ${position} ${span}`,
    title: `${source} This session is ${position} it.`,
  };
}

/** Decode's share of LLM time: what prefill leaves. */
export function decodeShare(prefill: number | null): number | null {
  return prefill === null ? null : 1 - prefill;
}

/** "measured" or "estimated" for the prefill/decode split, with its basis for the hover. */
export function prefillBasis(fp: Fingerprint): { text: string; title: string } {
  const p = fp.prefillShare;
  const basis = p.basis.replace(/^estimated:\s*/i, '');
  return p.estimated
    ? {
        text: 'estimated',
        title: `Estimated with a cost model (${basis}): the trace has no server prefill and decode times.`,
      }
    : { text: 'measured', title: `Measured: ${basis}.` };
}

function signedCount(value: number | null): string {
  if (value === null) return formatCount(null);
  const rounded = Math.round(value);
  return `${rounded > 0 ? '+' : rounded < 0 ? '−' : ''}${formatCount(Math.abs(rounded))}`;
}

/**
 * The headline ratios of the fingerprint, shown in the summary strip beside the token
 * totals: the figures with published ranges carry their verdicts. `name` is the stable
 * `data-figure` key. An older host that sends no analysis gets no p90.
 */
export function headlineGroups(s: SessionSummary, a: AnalysisView | undefined): FigureGroup[] {
  const r = PUBLISHED_RANGES;
  return [
    {
      label: 'Ratios',
      figures: [
        {
          name: 'cacheHitRate',
          label: 'Cache hit rate',
          value: formatPercent(s.cacheHitRate),
          hint: 'Σcached / Σinput',
          range: rangeNote(s.cacheHitRate, r.cacheHitRate, 'percent'),
        },
        {
          name: 'rawInputToOutput',
          label: 'Input : output',
          value: formatRatio(s.rawInputToOutput),
          hint: 'Σinput / Σoutput',
          range: rangeNote(s.rawInputToOutput, r.rawInputToOutput, 'ratio'),
        },
      ],
    },
    {
      label: 'Append : output',
      figures: [
        {
          name: 'appendToOutputMean',
          label: 'Mean',
          value: formatRatio(s.appendToOutput.mean),
          hint: 'Mean over calls of appended / output',
          range: rangeNote(s.appendToOutput.mean, r.appendToOutputMean, 'ratio'),
        },
        {
          name: 'appendToOutputMedian',
          label: 'Median',
          value: formatRatio(s.appendToOutput.median),
          hint: 'Median over calls of appended / output',
        },
        {
          name: 'appendToOutputP90',
          label: 'p90',
          value: formatRatio(a?.fingerprint.appendToOutputP90 ?? null),
          hint: '90th percentile over calls of appended / output',
        },
        {
          name: 'appendToOutputAggregate',
          label: 'Σappended / Σoutput',
          value: formatRatio(s.appendToOutput.aggregate),
          hint: 'Σappended / Σoutput over the whole session',
        },
      ],
    },
  ];
}

/** The rest of the fingerprint's figures, as cards of the collapsible panel. */
export function fingerprintGroups(a: AnalysisView): FigureGroup[] {
  const fp = a.fingerprint;
  const decode = decodeShare(fp.prefillShare.value);
  const basis = prefillBasis(fp);
  const { toolTimeMs, llmTimeMs } = fp.tools;
  const toolShare =
    toolTimeMs !== null && llmTimeMs !== null && toolTimeMs + llmTimeMs > 0
      ? toolTimeMs / (toolTimeMs + llmTimeMs)
      : null;
  return [
    {
      label: 'LLM time',
      tag: { name: 'prefillBasis', text: basis.text, title: basis.title },
      figures: [
        {
          name: 'prefillShare',
          label: 'Prefill',
          value: formatPercent(fp.prefillShare.value),
          hint: `Prefill's share of LLM time. ${basis.title}`,
        },
        {
          name: 'decodeShare',
          label: 'Decode',
          value: formatPercent(decode),
          hint: `Decode's share of LLM time (1 − prefill). ${basis.title}`,
          range: rangeNote(decode, PUBLISHED_RANGES.decodeShare, 'percent'),
        },
      ],
    },
    {
      label: 'Output per call',
      figures: [
        {
          name: 'outputPerCallMean',
          label: 'Mean',
          value: formatCount(fp.outputPerCall.mean),
          hint: 'Mean output tokens per call',
        },
        {
          name: 'outputPerCallMedian',
          label: 'Median',
          value: formatCount(fp.outputPerCall.median),
          hint: 'Median output tokens per call',
        },
      ],
    },
    {
      label: 'Tool vs LLM time',
      figures: [
        {
          name: 'toolTime',
          label: 'Tools',
          value: formatDuration(toolTimeMs),
          hint: 'Σ tool call durations (parallel calls add up, so this can exceed wall time)',
        },
        {
          name: 'llmTime',
          label: 'LLM',
          value: formatDuration(llmTimeMs),
          hint: 'Σ LLM call durations as the client measured them',
        },
        {
          name: 'toolTimeShare',
          label: 'Tools share',
          value: formatPercent(toolShare),
          hint: 'Tool time / (tool time + LLM time)',
        },
      ],
    },
    {
      label: 'Context',
      figures: [
        {
          name: 'contextMean',
          label: 'Mean',
          value: formatCount(fp.context.meanTokens),
          hint: 'Mean prompt size (tokens) over calls',
        },
        { name: 'contextMax', label: 'Max', value: formatCount(fp.context.maxTokens), hint: 'Largest prompt (tokens)' },
        {
          name: 'growthPerCall',
          label: 'Growth / call',
          value: signedCount(fp.context.growthPerCall),
          hint: 'Mean change of the prompt from one call to the next, compactions left out',
        },
      ],
    },
  ];
}

/** One line for the collapsed fingerprint: the panel's known figures, the decode share with its verdict. */
export function fingerprintDigest(a: AnalysisView): string {
  const fp = a.fingerprint;
  const decode = decodeShare(fp.prefillShare.value);
  const note = rangeNote(decode, PUBLISHED_RANGES.decodeShare, 'percent');
  const { toolTimeMs, llmTimeMs } = fp.tools;
  const tools = Object.keys(fp.tools.byTool).length;
  const compactions = fp.compactions.length;
  const parts = [
    decode !== null
      ? `decode ${formatPercent(decode)} of LLM time (${note.position} ${rangeText(PUBLISHED_RANGES.decodeShare, 'percent')}), ${prefillBasis(fp).text}`
      : null,
    fp.outputPerCall.median !== null ? `output ${formatCount(fp.outputPerCall.median)} per call (median)` : null,
    toolTimeMs !== null && llmTimeMs !== null
      ? `tools ${formatDuration(toolTimeMs)} vs LLM ${formatDuration(llmTimeMs)}`
      : toolTimeMs !== null
        ? `tool time ${formatDuration(toolTimeMs)}`
        : null,
    fp.context.maxTokens !== null ? `context up to ${formatCount(fp.context.maxTokens)}` : null,
    tools > 0 ? `${tools} ${tools === 1 ? 'tool' : 'tools'}` : null,
    compactions > 0 ? `${compactions} ${compactions === 1 ? 'compaction' : 'compactions'}` : null,
  ].filter((p): p is string => p !== null);
  // Unknown figures are left out of the line; the panel itself says "unknown".
  return parts.length > 0 ? parts.join(' · ') : 'no figures known in this trace';
}

/** A row of the tools table. */
export interface ToolRow {
  tool: string;
  calls: string;
  failed: string;
  failureRate: string;
  latencyMedian: string;
  latencyP90: string;
  /** True when at least one call of the tool failed (the row gets an icon, not only colour). */
  hasFailures: boolean;
}

/** Tools by number of calls, most used first (the order the core gives). */
export function toolRows(fp: Fingerprint): ToolRow[] {
  return Object.entries(fp.tools.byTool).map(([tool, t]) => ({
    tool,
    calls: formatCount(t.total),
    failed: formatCount(t.failed),
    failureRate: formatPercent(t.failureRate),
    latencyMedian: formatDuration(t.latencyMsMedian),
    latencyP90: formatDuration(t.latencyMsP90),
    hasFailures: t.failed > 0,
  }));
}

/** One quarter of the session for the exploration / execution table. */
export interface QuarterColumn {
  label: string;
  /** 1-based call range, "calls 1–11"; "no calls" for an empty quarter. */
  calls: string;
  explore: number;
  execute: number;
  other: number;
  total: number;
}

/**
 * The four quarters of the session's calls with their tool calls by intent. Quarter q
 * holds the calls i with ⌊4i/n⌋ = q, the split the core uses.
 */
export function quarterColumns(fp: Fingerprint, callCount: number): QuarterColumn[] {
  return fp.intentByQuartile.map((q, i) => {
    const first = Math.ceil((i * callCount) / 4);
    const last = Math.ceil(((i + 1) * callCount) / 4) - 1;
    return {
      label: `Q${i + 1}`,
      calls: last < first ? 'no calls' : first === last ? `call ${first + 1}` : `calls ${first + 1}–${last + 1}`,
      explore: q.explore,
      execute: q.execute,
      other: q.other,
      total: q.explore + q.execute + q.other,
    };
  });
}

/** A row of the compactions table. */
export interface CompactionRow {
  /** 1-based number of the first call after the compaction. */
  beforeCall: string;
  contextBefore: string;
  lostCached: string;
  reprefill: string;
}

/** What each compaction cost, formatted. */
export function compactionRows(fp: Fingerprint): CompactionRow[] {
  return fp.compactions.map((c) => ({
    beforeCall: `before call ${c.beforeCall + 1}`,
    contextBefore: formatCount(c.contextBefore),
    lostCached: formatCount(c.lostCachedTokens),
    reprefill: formatCount(c.reprefillTokens),
  }));
}

/** Miss causes as the session sums name them. */
export const MISS_CAUSE_LABELS: Record<MissCause, string> = {
  'first-call': 'first call',
  'subagent-start': 'sub-agent start',
  compaction: 'compaction',
  'idle-gap': 'idle gap > TTL',
  'prefix-change': 'prefix change (model switch)',
  unexplained: 'unexplained',
};

/** Miss causes as a call's tooltip names them, before the detail that explains them. */
const MISS_CAUSE_SHORT: Record<MissCause, string> = {
  'first-call': 'first call',
  'subagent-start': 'sub-agent start',
  compaction: 'compaction',
  'idle-gap': 'idle gap',
  'prefix-change': 'prefix change',
  unexplained: 'unexplained',
};

/** A cause of the session's misses with its count. */
export interface MissCauseEntry {
  cause: MissCause;
  label: string;
  count: number;
  /** "4 idle gap > TTL". */
  text: string;
}

/** The non-zero miss causes in the core's order. */
export function missCauseEntries(counts: Partial<Record<MissCause, number>> | undefined): MissCauseEntry[] {
  if (!counts) return [];
  return MISS_CAUSES.filter((c) => (counts[c] ?? 0) > 0).map((cause) => {
    const count = counts[cause]!;
    return { cause, label: MISS_CAUSE_LABELS[cause], count, text: `${formatCount(count)} ${MISS_CAUSE_LABELS[cause]}` };
  });
}

/**
 * The whole miss sentence: "Cache miss: idle gap — idle 24 min 25 s … > cache TTL 5 min 00 s; 20k tokens re-prefilled".
 * After an idle gap (or an unexplained miss) the tokens of the previous prompt the cache lost are prefilled again.
 * After a compaction they are not: the summary replaced them, and what the call prefilled is its own appended
 * tokens (`appended`), the CLI's "re-prefilled" figure of the compaction.
 */
export function missText(miss: NonNullable<CallRow['miss']>, appended: number | null = null): string {
  const reprefilled = miss.cause === 'compaction' ? appended : miss.lostTokens;
  const lost = reprefilled !== null ? `; ${formatCompact(reprefilled)} tokens re-prefilled` : '';
  return `Cache miss: ${MISS_CAUSE_SHORT[miss.cause] ?? miss.cause} — ${miss.detail}${lost}`;
}

/** Splits text at spaces into lines of at most `width` characters (a longer word gets its own line). */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line === '') line = word;
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** Tooltip width in characters: canvas tooltips do not wrap by themselves. */
const TOOLTIP_WIDTH = 60;

/** The tooltip lines a call's analyses add: its retry-loop attempts, then its cache miss. */
export function analysisTooltipLines(call: CallRow, loops: readonly LoopView[]): string[] {
  const out: string[] = [];
  for (const i of call.loops ?? []) {
    const loop = loops[i];
    if (!loop) continue;
    out.push(...wrapText(loopAttemptText(loop, call.index), TOOLTIP_WIDTH));
  }
  if (call.miss) out.push(...wrapText(missText(call.miss, call.appended), TOOLTIP_WIDTH));
  return out;
}

/** "Retry loop: Edit/Write attempt 2 of 4 on sync_raw_logs.py (gave up)". */
export function loopAttemptText(loop: LoopView, callIndex: number): string {
  const n = loop.attemptCalls.indexOf(callIndex) + 1;
  const which = n > 0 ? `attempt ${n} of ${loop.attempts}` : `${loop.attempts} attempts`;
  return `Retry loop: ${loop.tool} ${which} on ${shortTarget(loop)} (${outcomeText(loop)})`;
}

/** The file name of a file target, the whole command or tool otherwise. */
export function shortTarget(loop: Pick<LoopView, 'target' | 'targetKind'>): string {
  if (loop.targetKind !== 'file') return loop.target;
  const parts = loop.target.split(/[\\/]/);
  return parts[parts.length - 1] || loop.target;
}

/** "escaped at call 23" or "gave up". */
export function outcomeText(loop: Pick<LoopView, 'escaped' | 'escapeCall'>): string {
  return loop.escaped ? (loop.escapeCall !== null ? `escaped at call ${loop.escapeCall + 1}` : 'escaped') : 'gave up';
}

/** Columns of the loops table, in display order. */
export const LOOP_COLUMNS = [
  { key: 'tool', label: 'Tool', numeric: false, hint: 'Tools used in the attempts' },
  { key: 'target', label: 'Target', numeric: false, hint: 'The file, command or tool the attempts failed on' },
  { key: 'attempts', label: 'Attempts', numeric: true, hint: 'Failed attempts in the loop' },
  { key: 'callsSpanned', label: 'Calls spanned', numeric: true, hint: 'LLM calls from the first attempt to the last' },
  {
    key: 'outcome',
    label: 'Outcome',
    numeric: false,
    hint: 'Escaped: a later attempt on the target succeeded; gave up: none did',
  },
  {
    key: 'wastedTokens',
    label: 'Wasted tokens',
    numeric: true,
    hint: 'Output of the calls that made the attempts plus the error text (estimated)',
  },
  {
    key: 'carryForwardTokens',
    label: 'Carry-forward tokens',
    numeric: true,
    hint: 'Error text times the later calls that re-read it (estimated)',
  },
  {
    key: 'wastedUsd',
    label: 'Wasted $',
    numeric: true,
    hint: 'The wasted tokens in dollars: each output at its call’s output price, each error text at the price the next call paid to prefill it',
  },
  {
    key: 'carriedForwardUsd',
    label: 'Carried $',
    numeric: true,
    hint: 'The carry-forward tokens in dollars: each error text at every later call’s price for it',
  },
] as const;

/** A sortable column of the loops table. */
export type LoopSortKey = (typeof LOOP_COLUMNS)[number]['key'];

/** How the loops table is sorted; null key keeps the session's order (first attempt first). */
export interface LoopSort {
  key: LoopSortKey;
  direction: 'ascending' | 'descending';
}

/** A row of the loops table: values to sort by, strings to show, where to go on click. */
export interface LoopRow {
  /** Index into `AnalysisView.loops`. */
  index: number;
  tool: string;
  target: string;
  targetShort: string;
  /** What precedes `targetShort` in `target` (a file's folder), shown first so narrow cells cut it, not the name. */
  targetDir: string;
  attempts: number;
  callsSpanned: number;
  escaped: boolean;
  outcome: string;
  wastedTokens: number | null;
  carryForwardTokens: number | null;
  wastedUsd: number | null;
  carriedForwardUsd: number | null;
  /** "calls 15–21" (1-based). */
  span: string;
  firstError: string | null;
  /** The call the row selects: the first attempt's. */
  firstCall: number;
  file: string;
  /** The file's index in the trace, what `source/revealLine` sends (never a path). */
  fileIndex: number;
  /** 0-based line of the first attempt's result, for `source/revealLine`. */
  line: number;
  /** "lines 61–74" (1-based, as editors show them). */
  lines: string;
  display: Record<LoopSortKey, string>;
}

/** The loops of a session as table rows, in the order the core lists them. */
export function loopRows(loops: readonly LoopView[]): LoopRow[] {
  return loops.map((l, index) => {
    const outcome = outcomeText(l);
    return {
      index,
      tool: l.tool,
      target: l.target,
      targetShort: shortTarget(l),
      targetDir: l.target.endsWith(shortTarget(l)) ? l.target.slice(0, l.target.length - shortTarget(l).length) : '',
      attempts: l.attempts,
      callsSpanned: l.callsSpanned,
      escaped: l.escaped,
      outcome,
      wastedTokens: l.wastedTokens,
      carryForwardTokens: l.carryForwardTokens,
      wastedUsd: l.wastedUsd ?? null,
      carriedForwardUsd: l.carriedForwardUsd ?? null,
      span: l.firstCall === l.lastCall ? `call ${l.firstCall + 1}` : `calls ${l.firstCall + 1}–${l.lastCall + 1}`,
      firstError: l.firstError,
      firstCall: l.attemptCalls[0] ?? l.firstCall,
      file: l.file,
      fileIndex: l.fileIndex,
      line: l.firstLine,
      lines: l.firstLine === l.lastLine ? `line ${l.firstLine + 1}` : `lines ${l.firstLine + 1}–${l.lastLine + 1}`,
      display: {
        tool: l.tool,
        target: l.target,
        attempts: formatCount(l.attempts),
        callsSpanned: formatCount(l.callsSpanned),
        outcome,
        wastedTokens: formatCount(l.wastedTokens),
        carryForwardTokens: formatCount(l.carryForwardTokens),
        wastedUsd: formatUsd(l.wastedUsd ?? null),
        carriedForwardUsd: formatUsd(l.carriedForwardUsd ?? null),
      },
    };
  });
}

function sortValue(row: LoopRow, key: LoopSortKey): string | number | null {
  switch (key) {
    case 'tool':
      return row.tool.toLowerCase();
    case 'target':
      return row.target.toLowerCase();
    case 'outcome':
      // Gave up sorts above escaped when descending: it is the worse outcome.
      return row.escaped ? 0 : 1;
    default:
      return row[key];
  }
}

/** Session order: by first attempt (the core lists loops as they close, so an early loop that escaped can come first). */
function sessionOrder(a: LoopRow, b: LoopRow): number {
  return a.firstCall - b.firstCall || a.index - b.index;
}

/** Rows sorted by a column; unknown values go last either way, ties keep the session order. */
export function sortLoopRows(rows: readonly LoopRow[], sort: LoopSort | null): LoopRow[] {
  if (!sort) return [...rows].sort(sessionOrder);
  const sign = sort.direction === 'ascending' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const va = sortValue(a, sort.key);
    const vb = sortValue(b, sort.key);
    if (va === null || vb === null) return va === vb ? sessionOrder(a, b) : va === null ? 1 : -1;
    const c = typeof va === 'number' && typeof vb === 'number' ? va - vb : String(va).localeCompare(String(vb));
    return c !== 0 ? sign * c : sessionOrder(a, b);
  });
}

/** The sort after clicking a column header: a new column starts descending for numbers (largest first) and ascending for text; the same column flips. */
export function nextLoopSort(current: LoopSort | null, key: LoopSortKey): LoopSort {
  if (current && current.key === key)
    return { key, direction: current.direction === 'ascending' ? 'descending' : 'ascending' };
  const numeric = LOOP_COLUMNS.find((c) => c.key === key)?.numeric ?? false;
  return { key, direction: numeric || key === 'outcome' ? 'descending' : 'ascending' };
}

/** The `aria-sort` of a column header. */
export function ariaSort(sort: LoopSort | null, key: LoopSortKey): 'ascending' | 'descending' | 'none' {
  return sort && sort.key === key ? sort.direction : 'none';
}

/** Reads a stored sort defensively (it may come from an older build). */
export function readLoopSort(raw: unknown): LoopSort | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  const key = LOOP_COLUMNS.find((c) => c.key === r['key'])?.key;
  const direction = r['direction'] === 'ascending' || r['direction'] === 'descending' ? r['direction'] : null;
  return key && direction ? { key, direction } : null;
}

/** A shaded band on the timeline over the calls a retry loop spans. */
export interface LoopBand {
  /** Index into `AnalysisView.loops`. */
  loop: number;
  /** Category positions of the band's edges: bar i covers [i - 0.5, i + 0.5]. */
  x0: number;
  x1: number;
  escaped: boolean;
  /** Text drawn in the band: "✗ Bash ×7 gave up". */
  label: string;
  /** The same for narrow bands: "✗ ×7". */
  shortLabel: string;
}

/** Bands for the loops, left to right, clamped to the bars that exist. */
export function loopBands(loops: readonly LoopView[], barCount: number): LoopBand[] {
  const bands: LoopBand[] = [];
  loops.forEach((l, loop) => {
    const first = Math.max(0, l.firstCall);
    const last = Math.min(barCount - 1, l.lastCall);
    if (barCount <= 0 || last < first) return;
    const mark = l.escaped ? '✓' : '✗';
    bands.push({
      loop,
      x0: first - 0.5,
      x1: last + 0.5,
      escaped: l.escaped,
      label: `${mark} ${l.tool} ×${l.attempts} ${l.escaped ? 'escaped' : 'gave up'}`,
      shortLabel: `${mark} ×${l.attempts}`,
    });
  });
  return bands.sort((a, b) => a.x0 - b.x0 || a.loop - b.loop);
}

/** The calls with a cache miss, in order. */
export function missCalls(calls: readonly CallRow[]): number[] {
  return calls.filter((c) => c.miss).map((c) => c.index);
}

/** The next call after `from` whose miss has `cause`, wrapping around; null when there is none. */
export function nextMissCall(calls: readonly CallRow[], cause: MissCause, from: number | null): number | null {
  const hits = calls.filter((c) => c.miss?.cause === cause).map((c) => c.index);
  if (hits.length === 0) return null;
  return hits.find((i) => from === null || i > from) ?? hits[0]!;
}

/** The sentence over the loops table; says so briefly when there are none. */
export function loopHeadline(a: AnalysisView): string {
  return a.loopSentence ?? 'No retry loops in this session.';
}
