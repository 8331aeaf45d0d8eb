import { durationMs } from './sessionQuery';
import type { SessionRow } from './sessionQuery';
import type { CallRecord } from './sessionRecord';

/**
 * Two sessions side by side: their headline figures with the difference B − A, and
 * both timelines call by call (the n-th call of one beside the n-th of the other), with
 * running cost, retry-loop calls and cache misses.
 */

/** Which way is better for a figure, so a delta can be called an improvement. */
type Better = 'higher' | 'lower' | null;

export interface ComparedFigure {
  id: string;
  label: string;
  /** How to print it: tokens, a share, dollars, a duration, a count or a ratio. */
  unit: 'count' | 'tokens' | 'percent' | 'usd' | 'ms' | 'ratio';
  a: number | null;
  b: number | null;
  /** b − a; null when either is unknown. */
  delta: number | null;
  /** (b − a) / a; null when either is unknown or a is 0. */
  relative: number | null;
  /** Which session the delta favours, when the figure has a better direction and they differ. */
  favours: 'a' | 'b' | null;
}

/** One call position of the aligned timelines. */
export interface AlignedCall {
  index: number;
  a: CallRecord | null;
  b: CallRecord | null;
  /** Running cost up to and including this call (null once a call's cost is unknown). */
  costA: number | null;
  costB: number | null;
}

export interface SessionComparison {
  a: SessionSide;
  b: SessionSide;
  figures: ComparedFigure[];
  calls: AlignedCall[];
}

/** What the comparison shows of each session (plain data: the webview prints it as text). */
export interface SessionSide {
  id: number;
  title: string | null;
  agentId: string;
  project: string;
  model: string | null;
  startMs: number | null;
  path: string;
}

function figure(
  id: string,
  label: string,
  unit: ComparedFigure['unit'],
  a: number | null,
  b: number | null,
  better: Better,
): ComparedFigure {
  const delta = a === null || b === null ? null : b - a;
  const relative = delta === null || a === null || a === 0 ? null : delta / a;
  let favours: ComparedFigure['favours'] = null;
  if (delta !== null && delta !== 0 && better !== null) favours = delta > 0 === (better === 'higher') ? 'b' : 'a';
  return { id, label, unit, a, b, delta, relative, favours };
}

function running(calls: readonly CallRecord[]): Array<number | null> {
  let total: number | null = 0;
  return calls.map((c) => {
    total = total === null || c.costUsd === null ? null : total + c.costUsd;
    return total;
  });
}

function side(r: SessionRow): SessionSide {
  return {
    id: r.id,
    title: r.title,
    agentId: r.agentId,
    project: r.project,
    model: r.model,
    startMs: r.startMs,
    path: r.path,
  };
}

/** Compares two sessions (their own figures: a sub-agent compares as itself). */
export function compareSessions(
  a: SessionRow,
  callsA: readonly CallRecord[],
  b: SessionRow,
  callsB: readonly CallRecord[],
): SessionComparison {
  const figures: ComparedFigure[] = [
    figure('calls', 'LLM calls', 'count', a.calls, b.calls, null),
    figure('userTurns', 'User turns', 'count', a.userTurns, b.userTurns, null),
    figure('duration', 'Duration', 'ms', durationMs(a), durationMs(b), null),
    figure('input', 'Input tokens', 'tokens', a.tokens.input, b.tokens.input, null),
    figure('cached', 'Cached tokens', 'tokens', a.tokens.cached, b.tokens.cached, null),
    figure('appended', 'Appended tokens', 'tokens', a.tokens.appended, b.tokens.appended, 'lower'),
    figure('output', 'Output tokens', 'tokens', a.tokens.output, b.tokens.output, null),
    figure('cacheHitRate', 'Cache hit rate', 'percent', a.cacheHitRate, b.cacheHitRate, 'higher'),
    figure(
      'appendToOutputMean',
      'Appended / output (mean per call)',
      'ratio',
      a.appendToOutputMean,
      b.appendToOutputMean,
      'lower',
    ),
    figure('cost', 'Cost', 'usd', a.costUsd, b.costUsd, 'lower'),
    figure('failedToolCalls', 'Failed tool calls', 'count', a.failedToolCalls, b.failedToolCalls, 'lower'),
    figure('retryLoops', 'Retry loops', 'count', a.retryLoops, b.retryLoops, 'lower'),
    figure('callsInLoops', 'Calls in retry loops', 'count', a.callsInLoops, b.callsInLoops, 'lower'),
    figure('cacheMisses', 'Cache misses', 'count', a.cacheMisses, b.cacheMisses, 'lower'),
    figure('compactions', 'Compactions', 'count', a.compactions, b.compactions, null),
  ];
  const costA = running(callsA);
  const costB = running(callsB);
  const length = Math.max(callsA.length, callsB.length);
  const calls: AlignedCall[] = [];
  for (let i = 0; i < length; i++) {
    calls.push({
      index: i,
      a: callsA[i] ?? null,
      b: callsB[i] ?? null,
      costA: i < callsA.length ? costA[i]! : null,
      costB: i < callsB.length ? costB[i]! : null,
    });
  }
  return { a: side(a), b: side(b), figures, calls };
}
