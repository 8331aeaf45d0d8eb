import { compareToRange } from '../../src/core/analysis/fingerprint';
import {
  formatCompact,
  formatCount,
  formatDuration,
  formatPercent,
  formatRatio,
} from '../../src/core/text/formatNumbers';
import type { AlignedCall, ComparedFigure } from '../../src/core/sessions/compareSessions';
import type { Distribution, SessionsReport } from '../../src/core/sessions/sessionsReport';
import type { Figure, FigureGroup } from '../shared/figures';

/**
 * What the sessions panels print, as plain data (tested in Node): the report's figure
 * groups and distribution rows, the comparison's rows, and the runs of retry-loop calls
 * the comparison shades. The views only place these in the DOM, as text.
 */

export function formatUsd(usd: number | null): string {
  if (usd === null) return 'unknown';
  if (usd > 0 && usd < 0.01) return '<$0.01';
  return `$${usd.toFixed(2)}`;
}

function rangeNote(
  value: number | null,
  d: Distribution['range'] | { low: number; high: number; what: string; source: string } | null,
  format: (v: number) => string,
): Figure['range'] {
  if (!d) return undefined;
  const position = compareToRange(value, d);
  return {
    position,
    text:
      position === null ? '' : `${position === 'within' ? '✓ within' : position} ${format(d.low)}–${format(d.high)}`,
    title: `Published range of the ${d.what}: ${d.source}`,
  };
}

const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;

/** The report's headline figures, grouped. */
export function reportFigures(r: SessionsReport): FigureGroup[] {
  const t = r.totals;
  const c = r.combined;
  const hit = r.distributions.cacheHitRate.range;
  const raw = r.distributions.rawInputToOutput.range;
  return [
    {
      label: 'Sessions',
      figures: [
        {
          name: 'sessions',
          label: 'Sessions',
          value: formatCount(r.sessions),
          hint: 'Main sessions; their sub-agents count with them.',
        },
        {
          name: 'threads',
          label: 'With sub-agents',
          value: formatCount(r.threads),
          hint: 'Main sessions and sub-agents.',
        },
        {
          name: 'llmCalls',
          label: 'LLM calls',
          value: formatCount(t.calls),
          hint: 'Every call of every session and sub-agent.',
        },
        { name: 'userTurns', label: 'User turns', value: formatCount(t.userTurns), hint: 'Prompts the user typed.' },
      ],
    },
    {
      label: 'Tokens',
      figures: [
        {
          name: 'input',
          label: 'Input',
          value: formatCount(t.tokens.input),
          hint: 'Σ prompt tokens (cached + appended).',
        },
        {
          name: 'cached',
          label: 'Cached',
          value: formatCount(t.tokens.cached),
          hint: 'Σ prompt tokens served from the prefix cache.',
        },
        {
          name: 'appended',
          label: 'Appended',
          value: formatCount(t.tokens.appended),
          hint: 'Σ prompt tokens that needed prefill.',
        },
        { name: 'output', label: 'Output', value: formatCount(t.tokens.output), hint: 'Σ generated tokens.' },
      ],
    },
    {
      label: 'Fingerprint',
      figures: [
        {
          name: 'cacheHitRate',
          label: 'Cache hit rate',
          value: formatPercent(c.cacheHitRate),
          hint: 'Σcached / Σinput over all the sessions.',
          range: rangeNote(c.cacheHitRate, hit, pct),
        },
        {
          name: 'rawInputToOutput',
          label: 'Input : output',
          value: formatRatio(c.rawInputToOutput),
          hint: 'Σinput / Σoutput.',
          range: rangeNote(c.rawInputToOutput, raw, (v) => `${v}×`),
        },
        {
          name: 'appendToOutput',
          label: 'Appended : output',
          value: formatRatio(c.appendToOutput),
          hint: 'Σappended / Σoutput.',
        },
        {
          name: 'toolFailures',
          label: 'Failed tool calls',
          value: `${formatCount(t.failedToolCalls)} of ${formatCount(t.toolCalls)}`,
          hint: `Failure rate ${formatPercent(c.toolFailureRate)}.`,
        },
        {
          name: 'retryLoops',
          label: 'Retry loops',
          value: formatCount(t.retryLoops),
          hint: `${formatPercent(c.callsInLoopsShare)} of the calls were spent in retry loops.`,
        },
        {
          name: 'cost',
          label: 'Cost',
          value: formatUsd(t.costUsd),
          hint:
            t.unpricedCalls > 0
              ? `${formatCount(t.unpricedCalls)} calls could not be priced: the total leaves them out.`
              : 'Every call priced.',
        },
      ],
    },
  ];
}

/** One distribution as a row of text: the five numbers and, for figures with one, the published range. */
export interface DistributionRow {
  name: string;
  label: string;
  spread: string;
  range: string;
}

export function distributionRows(r: SessionsReport): DistributionRow[] {
  const row = (
    name: string,
    label: string,
    d: Distribution,
    format: (v: number | null) => string,
  ): DistributionRow => ({
    name,
    label,
    spread:
      d.count === 0
        ? 'unknown'
        : `${format(d.min)} · ${format(d.p25)} · ${format(d.median)} · ${format(d.p75)} · ${format(d.max)}`,
    range: d.range
      ? `published ${format(d.range.low)}–${format(d.range.high)}: ${d.range.below} below, ${d.range.within} within, ${d.range.above} above`
      : '',
  });
  return [
    row('cacheHitRate', 'Cache hit rate', r.distributions.cacheHitRate, formatPercent),
    row('calls', 'LLM calls', r.distributions.calls, (v) => formatCount(v)),
    row('cost', 'Cost', r.distributions.costUsd, formatUsd),
    row('rawInputToOutput', 'Input : output', r.distributions.rawInputToOutput, formatRatio),
    row('appendToOutputMean', 'Appended : output (mean per call)', r.distributions.appendToOutputMean, formatRatio),
  ];
}

/** A compared figure's cells: A, B and the difference (with its sign and which side it favours). */
export function comparedCells(f: ComparedFigure): { a: string; b: string; delta: string } {
  const fmt = (v: number | null): string => {
    if (v === null) return 'unknown';
    switch (f.unit) {
      case 'percent':
        return formatPercent(v);
      case 'usd':
        return formatUsd(v);
      case 'ms':
        return formatDuration(v);
      case 'ratio':
        return formatRatio(v);
      case 'tokens':
        return formatCompact(v);
      case 'count':
        return formatCount(v);
    }
  };
  let delta = '—';
  if (f.delta !== null) {
    const sign = f.delta > 0 ? '+' : f.delta < 0 ? '−' : '±';
    const magnitude = f.unit === 'percent' ? `${(Math.abs(f.delta) * 100).toFixed(1)} pt` : fmt(Math.abs(f.delta));
    const relative =
      f.relative !== null && f.unit !== 'percent'
        ? ` (${f.relative > 0 ? '+' : '−'}${Math.abs(f.relative * 100).toFixed(0)}%)`
        : '';
    delta = `${sign}${magnitude}${f.delta === 0 ? '' : relative}`;
  }
  return { a: fmt(f.a), b: fmt(f.b), delta };
}

/** Runs of consecutive calls that were retry-loop attempts, as [first, last] call indexes. */
export function loopRuns(calls: readonly AlignedCall[], side: 'a' | 'b'): Array<[number, number]> {
  const runs: Array<[number, number]> = [];
  let start: number | null = null;
  for (const c of calls) {
    const inLoop = c[side]?.inLoop === true;
    if (inLoop && start === null) start = c.index;
    if (!inLoop && start !== null) {
      runs.push([start, c.index - 1]);
      start = null;
    }
  }
  if (start !== null) runs.push([start, calls[calls.length - 1]!.index]);
  return runs;
}
