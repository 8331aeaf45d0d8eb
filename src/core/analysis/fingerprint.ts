import type { Session } from '../trace/model';
import { decodeMs, prefillMs, QWEN3_32B_H100 } from './costModel';
import type { CostModel } from './costModel';
import { median, NumberSample, quantile, ratio } from './stats';
import { DEFAULT_INTENT_MAPPING, toolIntent } from './toolTaxonomy';
import type { IntentMapping, ToolIntent } from './toolTaxonomy';

/** A published range for agent workloads and where it comes from. */
export interface PublishedRange {
  low: number;
  high: number;
  /** What the figure is, as the source defines it. */
  what: string;
  source: string;
}

/**
 * The ranges measured on real agents (Claude Code driving Qwen and Gemma on vLLM), from
 * "Agentic AI Workload Characteristics" (arXiv 2605.26297), so a user sees at once whether
 * a session is typical.
 */
export const PUBLISHED_RANGES = {
  cacheHitRate: {
    low: 0.846,
    high: 0.995,
    what: 'prefix-cache hit rate',
    source: 'Agentic AI Workload Characteristics (arXiv 2605.26297)',
  },
  rawInputToOutput: {
    low: 53.9,
    high: 559.8,
    what: 'raw input / output tokens',
    source: 'Agentic AI Workload Characteristics (arXiv 2605.26297)',
  },
  appendToOutputMean: {
    low: 1.5,
    high: 7.3,
    what: 'appended / output tokens, mean per call',
    source: 'Agentic AI Workload Characteristics (arXiv 2605.26297)',
  },
  decodeShare: {
    low: 0.91,
    high: 0.986,
    what: 'decode share of LLM time',
    source: 'Agentic AI Workload Characteristics (arXiv 2605.26297)',
  },
} as const satisfies Record<string, PublishedRange>;

/** Where a figure falls against its published range. */
export type RangePosition = 'below' | 'within' | 'above';

export function compareToRange(value: number | null, range: PublishedRange): RangePosition | null {
  // NaN compares false with everything, so it used to land "within": an unknown figure has no place.
  if (value === null || !Number.isFinite(value)) return null;
  return value < range.low ? 'below' : value > range.high ? 'above' : 'within';
}

/** Per-tool figures. */
export interface ToolStats {
  total: number;
  failed: number;
  failureRate: number | null;
  latencyMsMedian: number | null;
  latencyMsP90: number | null;
}

/** Prefill's share of LLM time, measured from server timings or estimated with a cost model. */
export interface PrefillShare {
  value: number | null;
  estimated: boolean;
  /** What it rests on: "vLLM server timings of 12 calls" or the cost model's name. */
  basis: string;
}

/** What a compaction cost. */
export interface CompactionCost {
  beforeCall: number;
  /** Context just before (the agent's own figure, else the last call's input). */
  contextBefore: number | null;
  /** Tokens of that context the first call after did not get from the cache. */
  lostCachedTokens: number | null;
  /** Tokens the first call after had to prefill. */
  reprefillTokens: number | null;
}

/** The workload fingerprint of a session: the figures the agentic-serving literature uses. */
export interface Fingerprint {
  appendToOutputP90: number | null;
  outputPerCall: { mean: number | null; median: number | null };
  prefillShare: PrefillShare;
  tools: {
    total: number;
    failed: number;
    byTool: Record<string, ToolStats>;
    toolTimeMs: number | null;
    llmTimeMs: number | null;
  };
  /** Tool calls by intent in each quarter of the session's calls. */
  intentByQuartile: Array<{ explore: number; execute: number; other: number }>;
  context: { meanTokens: number | null; maxTokens: number | null; growthPerCall: number | null };
  compactions: CompactionCost[];
}

/** Options of the fingerprint. */
export interface FingerprintOptions {
  intent: IntentMapping;
  costModel: CostModel;
}

export const DEFAULT_FINGERPRINT_OPTIONS: FingerprintOptions = {
  intent: DEFAULT_INTENT_MAPPING,
  costModel: QWEN3_32B_H100,
};

function prefillShare(session: Session, costModel: CostModel): PrefillShare {
  let measuredPrefill = 0;
  let measuredDecode = 0;
  let measured = 0;
  for (const c of session.calls) {
    if (c.server?.prefillMs != null && c.server.decodeMs != null) {
      measuredPrefill += c.server.prefillMs;
      measuredDecode += c.server.decodeMs;
      measured += 1;
    }
  }
  if (measured > 0) {
    return {
      value: ratio(measuredPrefill, measuredPrefill + measuredDecode),
      estimated: false,
      basis: `server prefill and decode times of ${measured} call${measured === 1 ? '' : 's'}`,
    };
  }
  let p = 0;
  let d = 0;
  let n = 0;
  for (const c of session.calls) {
    const { cached, appended, input, output } = c.tokens;
    if (appended === null || output === null) continue;
    p += prefillMs(costModel, cached ?? 0, appended);
    d += decodeMs(costModel, input ?? appended, output);
    n += 1;
  }
  if (n === 0) return { value: null, estimated: true, basis: 'no call reports appended and output tokens' };
  return {
    value: ratio(p, p + d),
    estimated: true,
    basis: `estimated: ${costModel.label}, running alone (docs/design/simulator.md §5)`,
  };
}

function toolStats(session: Session): Fingerprint['tools'] {
  const byName = new Map<string, { total: number; failed: number; latencies: number[] }>();
  let total = 0;
  let failed = 0;
  // Running sums in call order (as `sum` adds): a million calls build no array for them.
  let toolTimeMs: number | null = null;
  for (const c of session.calls) {
    for (const t of c.toolCalls) {
      total += 1;
      const s = byName.get(t.name) ?? { total: 0, failed: 0, latencies: [] };
      s.total += 1;
      if (t.isError === true) {
        s.failed += 1;
        failed += 1;
      }
      if (t.durationMs !== null) {
        s.latencies.push(t.durationMs);
        toolTimeMs = (toolTimeMs ?? 0) + t.durationMs;
      }
      byName.set(t.name, s);
    }
  }
  // Object.fromEntries makes every name an own property, "__proto__" and "constructor" included.
  const byTool: Record<string, ToolStats> = Object.fromEntries(
    [...byName.entries()]
      .sort((a, b) => b[1].total - a[1].total || a[0].localeCompare(b[0]))
      .map(([name, s]) => [
        name,
        {
          total: s.total,
          failed: s.failed,
          failureRate: ratio(s.failed, s.total),
          latencyMsMedian: median(s.latencies),
          latencyMsP90: quantile(s.latencies, 0.9),
        },
      ]),
  );
  let llmTimeMs: number | null = null;
  for (const c of session.calls)
    if (c.startMs !== null && c.endMs !== null) llmTimeMs = (llmTimeMs ?? 0) + (c.endMs - c.startMs);
  return { total, failed, byTool, toolTimeMs, llmTimeMs };
}

function intentByQuartile(session: Session, mapping: IntentMapping): Fingerprint['intentByQuartile'] {
  const n = session.calls.length;
  const quarters = [0, 1, 2, 3].map(() => ({ explore: 0, execute: 0, other: 0 }));
  // A tool's intent depends on its name and command alone: a call repeated is not classed again.
  const known = new Map<string, Map<string | null, ToolIntent>>();
  session.calls.forEach((c, i) => {
    // Quarter q holds calls [q·n/4, (q+1)·n/4): the same split for any n.
    const q = Math.min(3, Math.floor((i * 4) / Math.max(1, n)));
    for (const t of c.toolCalls) {
      let byCommand = known.get(t.name);
      if (byCommand === undefined) known.set(t.name, (byCommand = new Map()));
      let intent = byCommand.get(t.command);
      if (intent === undefined) byCommand.set(t.command, (intent = toolIntent(t, mapping)));
      quarters[q]![intent] += 1;
    }
  });
  return quarters;
}

function contextFigures(session: Session): Fingerprint['context'] {
  const boundaries = new Set(session.compactions.map((c) => c.beforeCall));
  // Sums and counts in call order (what `mean` would add), not arrays of a million inputs and steps.
  let knownSum = 0;
  let known = 0;
  let max: number | null = null;
  let growthSum = 0;
  let growth = 0;
  let previous: number | null = null;
  session.calls.forEach((c, i) => {
    const b = c.tokens.input;
    if (b !== null) {
      knownSum += b;
      known += 1;
      if (max === null || b > max) max = b;
    }
    // A compaction resets the context; that step is not growth.
    if (i > 0 && previous !== null && b !== null && !boundaries.has(i)) {
      growthSum += b - previous;
      growth += 1;
    }
    previous = b;
  });
  return {
    meanTokens: known === 0 ? null : knownSum / known,
    maxTokens: max,
    growthPerCall: growth === 0 ? null : growthSum / growth,
  };
}

function compactionCosts(session: Session): CompactionCost[] {
  return session.compactions.map((c) => {
    const before = session.calls[c.beforeCall - 1];
    const after = session.calls[c.beforeCall];
    const contextBefore = c.preTokens ?? before?.tokens.input ?? null;
    const cachedAfter = after?.tokens.cached ?? null;
    return {
      beforeCall: c.beforeCall,
      contextBefore,
      lostCachedTokens:
        contextBefore !== null && cachedAfter !== null ? Math.max(0, contextBefore - cachedAfter) : null,
      reprefillTokens: after?.tokens.appended ?? null,
    };
  });
}

/** Computes a session's fingerprint (the headline ratios are in SessionSummary). */
export function fingerprint(session: Session, options: FingerprintOptions = DEFAULT_FINGERPRINT_OPTIONS): Fingerprint {
  const perCall = new NumberSample(session.calls.length);
  const outputs = new NumberSample(session.calls.length);
  for (const c of session.calls) {
    const { appended, output } = c.tokens;
    if (output !== null) outputs.add(output);
    if (appended !== null && output !== null && output > 0) perCall.add(appended / output);
  }
  return {
    appendToOutputP90: perCall.quantile(0.9),
    outputPerCall: { mean: outputs.mean(), median: outputs.median() },
    prefillShare: prefillShare(session, options.costModel),
    tools: toolStats(session),
    intentByQuartile: intentByQuartile(session, options.intent),
    context: contextFigures(session),
    compactions: compactionCosts(session),
  };
}
