import { compareToRange, PUBLISHED_RANGES } from '../analysis/fingerprint';
import type { PublishedRange, RangePosition } from '../analysis/fingerprint';
import { quantile, ratio } from '../analysis/stats';
import { durationMs, localDay, startedMs } from './sessionQuery';
import type { SessionRow } from './sessionQuery';

/**
 * Several sessions at once (a selection in the Agent Sessions view, a project, a folder
 * given to `agent-trace analyze DIR`): their combined fingerprint and how the figures
 * spread across them, beside the published ranges for agent workloads.
 *
 * A main session counts with its sub-agents (tokens, cost, failed tool calls, retry
 * loops, and the hit rate and input/output ratio of those tokens; the mean appended /
 * output per call is the main thread's). The distributions are over sessions so
 * counted, so one session's many sub-agents do not outweigh the others.
 */

/** How one figure spreads over the sessions. */
export interface Distribution {
  /** Sessions where the figure is known. */
  count: number;
  min: number | null;
  p25: number | null;
  median: number | null;
  p75: number | null;
  max: number | null;
  /** Equal-width bins from min to max (one bin when all are equal). */
  histogram: Array<{ from: number; to: number; count: number }>;
  /** The published range and how many sessions fall below, within and above it (none for figures without one). */
  range: (PublishedRange & { below: number; within: number; above: number }) | null;
}

export interface SessionsReportRow {
  id: number;
  path: string;
  agentId: string;
  project: string;
  title: string | null;
  startMs: number | null;
  durationMs: number | null;
  /** Figures with the session's sub-agents. */
  calls: number;
  subagents: number;
  tokens: {
    input: number | null;
    cached: number | null;
    appended: number | null;
    cacheWrite: number | null;
    output: number | null;
  };
  cacheHitRate: number | null;
  appendToOutputMean: number | null;
  rawInputToOutput: number | null;
  costUsd: number | null;
  unpricedCalls: number;
  toolCalls: number;
  failedToolCalls: number;
  retryLoops: number;
  cacheMisses: number;
}

export interface SessionsReport {
  /** Main sessions in the report (sub-agents count with theirs). */
  sessions: number;
  /** Sessions and sub-agents together. */
  threads: number;
  firstMs: number | null;
  lastMs: number | null;
  totals: {
    calls: number;
    userTurns: number;
    tokens: { input: number; cached: number; appended: number; cacheWrite: number; output: number };
    /** Σ of the known costs; null when no session's cost is known. */
    costUsd: number | null;
    unpricedCalls: number;
    toolCalls: number;
    failedToolCalls: number;
    retryLoops: number;
    callsInLoops: number;
    cacheMisses: number;
    compactions: number;
  };
  /** The fingerprint of all the sessions as one workload. */
  combined: {
    cacheHitRate: number | null;
    rawInputToOutput: number | null;
    appendToOutput: number | null;
    toolFailureRate: number | null;
    callsInLoopsShare: number | null;
    costPerSessionUsd: number | null;
    positions: { cacheHitRate: RangePosition | null; rawInputToOutput: RangePosition | null };
  };
  distributions: {
    cacheHitRate: Distribution;
    calls: Distribution;
    costUsd: Distribution;
    rawInputToOutput: Distribution;
    appendToOutputMean: Distribution;
  };
  rows: SessionsReportRow[];
}

const BINS = 10;

export function distribution(values: readonly number[], range: PublishedRange | null): Distribution {
  const sorted = [...values].filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  const min = sorted[0] ?? null;
  const max = sorted[sorted.length - 1] ?? null;
  const histogram: Distribution['histogram'] = [];
  if (min !== null && max !== null) {
    const bins = max > min ? Math.min(BINS, sorted.length) : 1;
    const width = (max - min) / bins;
    for (let b = 0; b < bins; b++)
      histogram.push({ from: min + b * width, to: b === bins - 1 ? max : min + (b + 1) * width, count: 0 });
    for (const v of sorted) {
      const b = width === 0 ? 0 : Math.min(bins - 1, Math.floor((v - min) / width));
      histogram[b]!.count += 1;
    }
  }
  let counted: Distribution['range'] = null;
  if (range) {
    counted = { ...range, below: 0, within: 0, above: 0 };
    for (const v of sorted) counted[compareToRange(v, range)!] += 1;
  }
  return {
    count: sorted.length,
    min,
    p25: quantile(sorted, 0.25),
    median: quantile(sorted, 0.5),
    p75: quantile(sorted, 0.75),
    max,
    histogram,
    range: counted,
  };
}

function add(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : a + b;
}

/** The report of `rows` (main sessions and sub-agents; a sub-agent whose main session is in `rows` counts with it). */
export function buildSessionsReport(rows: readonly SessionRow[]): SessionsReport {
  const byKey = new Map(rows.map((r) => [`${r.fileId}\u0000${r.key}`, r]));
  /** The main session a thread counts with: its top-most ancestor in `rows`. */
  const ownerOf = (r: SessionRow): SessionRow => {
    let owner = r;
    for (let hops = 0; owner.parentKey !== null && hops < 10_000; hops++) {
      const parent = byKey.get(`${owner.fileId}\u0000${owner.parentKey}`);
      if (!parent) break;
      owner = parent;
    }
    return owner;
  };
  const reportRows = new Map<SessionRow, SessionsReportRow>();
  const totals: SessionsReport['totals'] = {
    calls: 0,
    userTurns: 0,
    tokens: { input: 0, cached: 0, appended: 0, cacheWrite: 0, output: 0 },
    costUsd: null,
    unpricedCalls: 0,
    toolCalls: 0,
    failedToolCalls: 0,
    retryLoops: 0,
    callsInLoops: 0,
    cacheMisses: 0,
    compactions: 0,
  };
  // Paired sums for the combined ratios: only sessions that know both figures.
  let hitCached = 0;
  let hitInput = 0;
  let rawInput = 0;
  let rawOutput = 0;
  let appAppended = 0;
  let appOutput = 0;
  let firstMs: number | null = null;
  let lastMs: number | null = null;
  for (const r of rows) {
    const owner = ownerOf(r);
    let row = reportRows.get(owner);
    if (!row) {
      row = {
        id: owner.id,
        path: owner.path,
        agentId: owner.agentId,
        project: owner.project,
        title: owner.title,
        startMs: owner.startMs,
        durationMs: durationMs(owner),
        calls: 0,
        subagents: 0,
        tokens: { input: null, cached: null, appended: null, cacheWrite: null, output: null },
        cacheHitRate: owner.cacheHitRate,
        appendToOutputMean: owner.appendToOutputMean,
        rawInputToOutput: owner.rawInputToOutput,
        costUsd: null,
        unpricedCalls: 0,
        toolCalls: 0,
        failedToolCalls: 0,
        retryLoops: 0,
        cacheMisses: 0,
      };
      reportRows.set(owner, row);
    }
    if (r !== owner) row.subagents += 1;
    row.calls += r.calls;
    row.tokens.input = add(row.tokens.input, r.tokens.input);
    row.tokens.cached = add(row.tokens.cached, r.tokens.cached);
    row.tokens.appended = add(row.tokens.appended, r.tokens.appended);
    row.tokens.cacheWrite = add(row.tokens.cacheWrite, r.tokens.cacheWrite);
    row.tokens.output = add(row.tokens.output, r.tokens.output);
    row.costUsd = add(row.costUsd, r.costUsd);
    row.unpricedCalls += r.unpricedCalls;
    row.toolCalls += r.toolCalls;
    row.failedToolCalls += r.failedToolCalls;
    row.retryLoops += r.retryLoops;
    row.cacheMisses += r.cacheMisses;

    totals.calls += r.calls;
    totals.userTurns += r.userTurns;
    totals.tokens.input += r.tokens.input ?? 0;
    totals.tokens.cached += r.tokens.cached ?? 0;
    totals.tokens.appended += r.tokens.appended ?? 0;
    totals.tokens.cacheWrite += r.tokens.cacheWrite ?? 0;
    totals.tokens.output += r.tokens.output ?? 0;
    totals.costUsd = add(totals.costUsd, r.costUsd);
    totals.unpricedCalls += r.unpricedCalls;
    totals.toolCalls += r.toolCalls;
    totals.failedToolCalls += r.failedToolCalls;
    totals.retryLoops += r.retryLoops;
    totals.callsInLoops += r.callsInLoops;
    totals.cacheMisses += r.cacheMisses;
    totals.compactions += r.compactions;
    if (r.tokens.cached !== null && r.tokens.input !== null) {
      hitCached += r.tokens.cached;
      hitInput += r.tokens.input;
    }
    if (r.tokens.input !== null && r.tokens.output !== null) {
      rawInput += r.tokens.input;
      rawOutput += r.tokens.output;
    }
    if (r.tokens.appended !== null && r.tokens.output !== null) {
      appAppended += r.tokens.appended;
      appOutput += r.tokens.output;
    }
    const start = startedMs(r);
    firstMs = firstMs === null ? start : Math.min(firstMs, start);
    const end = r.endMs ?? start;
    lastMs = lastMs === null ? end : Math.max(lastMs, end);
  }
  const mains = [...reportRows.keys()];
  const sessionRows = [...reportRows.values()];
  // A session's ratios over its sub-agents too, like its tokens (the mean per call stays the main thread's).
  for (const row of sessionRows) {
    row.cacheHitRate = ratio(row.tokens.cached, row.tokens.input);
    row.rawInputToOutput = ratio(row.tokens.input, row.tokens.output);
  }
  const known = (get: (r: SessionsReportRow) => number | null): number[] =>
    sessionRows.map(get).filter((v): v is number => v !== null);
  const cacheHitRate = ratio(hitCached, hitInput);
  const rawInputToOutput = ratio(rawInput, rawOutput);
  return {
    sessions: mains.length,
    threads: rows.length,
    firstMs,
    lastMs,
    totals,
    combined: {
      cacheHitRate,
      rawInputToOutput,
      appendToOutput: ratio(appAppended, appOutput),
      toolFailureRate: ratio(totals.failedToolCalls, totals.toolCalls),
      callsInLoopsShare: ratio(totals.callsInLoops, totals.calls),
      costPerSessionUsd: totals.costUsd === null || mains.length === 0 ? null : totals.costUsd / mains.length,
      positions: {
        cacheHitRate: compareToRange(cacheHitRate, PUBLISHED_RANGES.cacheHitRate),
        rawInputToOutput: compareToRange(rawInputToOutput, PUBLISHED_RANGES.rawInputToOutput),
      },
    },
    distributions: {
      cacheHitRate: distribution(
        known((r) => r.cacheHitRate),
        PUBLISHED_RANGES.cacheHitRate,
      ),
      calls: distribution(
        sessionRows.map((r) => r.calls),
        null,
      ),
      costUsd: distribution(
        known((r) => r.costUsd),
        null,
      ),
      rawInputToOutput: distribution(
        known((r) => r.rawInputToOutput),
        PUBLISHED_RANGES.rawInputToOutput,
      ),
      appendToOutputMean: distribution(
        known((r) => r.appendToOutputMean),
        PUBLISHED_RANGES.appendToOutputMean,
      ),
    },
    rows: sessionRows.sort((a, b) => (b.startMs ?? 0) - (a.startMs ?? 0) || a.id - b.id),
  };
}

/**
 * A CSV cell: quoted, quotes doubled, and a leading `=`, `+`, `-`, `@`, tab or CR
 * prefixed with `'` so a spreadsheet shows trace text instead of running it as a formula.
 */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${safe.replace(/"/g, '""')}"`;
}

const CSV_COLUMNS = [
  'path',
  'agent',
  'project',
  'title',
  'started',
  'duration_s',
  'llm_calls',
  'subagents',
  'input_tokens',
  'cached_tokens',
  'appended_tokens',
  'cache_write_tokens',
  'output_tokens',
  'cache_hit_rate',
  'append_to_output_mean',
  'raw_input_to_output',
  'cost_usd',
  'unpriced_calls',
  'tool_calls',
  'failed_tool_calls',
  'retry_loops',
  'cache_misses',
] as const;

/** One line per session (sub-agents folded in), the columns named in the header; unknown figures are empty. */
export function reportCsv(report: SessionsReport): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of report.rows) {
    const cells: Array<string | number | null> = [
      r.path,
      r.agentId,
      r.project,
      r.title,
      r.startMs === null ? null : new Date(r.startMs).toISOString(),
      r.durationMs === null ? null : Math.round(r.durationMs / 1000),
      r.calls,
      r.subagents,
      r.tokens.input,
      r.tokens.cached,
      r.tokens.appended,
      r.tokens.cacheWrite,
      r.tokens.output,
      r.cacheHitRate,
      r.appendToOutputMean,
      r.rawInputToOutput,
      r.costUsd,
      r.unpricedCalls,
      r.toolCalls,
      r.failedToolCalls,
      r.retryLoops,
      r.cacheMisses,
    ];
    lines.push(cells.map(csvCell).join(','));
  }
  return lines.join('\n') + '\n';
}

/** The report as JSON (the shape of `agent-trace analyze DIR --json`). */
export function reportJson(report: SessionsReport): string {
  return (
    JSON.stringify(
      {
        ...report,
        firstDay: report.firstMs === null ? null : localDay(report.firstMs),
        lastDay: report.lastMs === null ? null : localDay(report.lastMs),
      },
      null,
      2,
    ) + '\n'
  );
}
