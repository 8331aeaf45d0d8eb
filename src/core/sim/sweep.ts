import type { Engine } from './engines/engineTypes';
import { ParamError } from './params';
import { runScenario } from './scenario';
import type { ScenarioOptions, ScenarioResult } from './scenario';
import { DEFAULT_REPLICAS } from './simRequests';
import type { Workload } from './workload';

/** What a sweep varies. */
export type SweepAxis = 'replicas' | 'capacity';

/** One point of a sweep. */
export interface SweepPoint {
  value: number;
  result: ScenarioResult;
}

/** Where the workload falls off the cliff, and what to do about it. */
export interface Cliff {
  axis: SweepAxis;
  /** The smallest replica count (or the largest capacity) where the cliff condition holds; null when no point reaches it. */
  at: number | null;
  /** Which condition fired first there. */
  reason: 'hit-rate' | 'prefill-share' | null;
  /** The hit-rate drop below ideal that counts as the cliff (absolute, e.g. 0.1 = 10 points). */
  hitRateDropThreshold: number;
  /** The last point before the cliff. */
  lastGood: number | null;
  /** Sessions to admit at once to stay before the cliff. */
  suggestedAdmissionCap: number | null;
  /** One sentence for people. */
  summary: string;
}

/** A sweep and its cliff. */
export interface SweepResult {
  axis: SweepAxis;
  points: SweepPoint[];
  cliff: Cliff;
}

/** Options of the cliff test. */
export interface CliffOptions {
  hitRateDropThreshold: number;
}

export const DEFAULT_CLIFF: CliffOptions = { hitRateDropThreshold: 0.1 };

function pct(v: number | null): string {
  return v === null ? 'unknown' : `${(v * 100).toFixed(0)}%`;
}

/** True when a point is past the cliff; the reason says which condition holds. */
export function pastCliff(r: ScenarioResult, o: CliffOptions): 'hit-rate' | 'prefill-share' | null {
  if (r.admissionHitRate !== null && r.idealHitRate !== null && r.idealHitRate - r.admissionHitRate > o.hitRateDropThreshold) return 'hit-rate';
  if (r.prefillShare !== null && r.prefillShare > 0.5) return 'prefill-share';
  return null;
}

/** The largest prompt + output of any call: a session's working set at its peak. */
export function peakSessionTokens(workload: Workload): number {
  if (workload.kind === 'requests') return workload.requests.reduce((m, r) => Math.max(m, r.promptTokens + r.outputTokens), 0);
  let peak = 0;
  for (const s of workload.sessions) for (const c of s.calls) peak = Math.max(peak, c.promptTokens + c.outputTokens);
  return peak;
}

/**
 * Runs a scenario at every value of a sweep (replica counts, or KV capacities in
 * tokens) and finds the cliff: the smallest N, or the largest capacity,
 * where the hit rate falls more than a threshold below the ideal or prefill time
 * overtakes decode time. The suggested admission cap is the last replica count before
 * the cliff; for a capacity sweep, how many peak working sets fit in the capacity
 * just above it (the analytic first guess of docs/design/simulator.md §5).
 */
export function runSweep(engine: Engine, workload: Workload, base: ScenarioOptions, axis: SweepAxis, values: readonly number[], cliffOptions: CliffOptions = DEFAULT_CLIFF, onPoint?: (done: number, total: number) => void): SweepResult {
  const scenarios = sweepScenarios(base, axis, values);
  const alone = new Map<string, Array<number | null>>();
  const points: SweepPoint[] = [];
  scenarios.forEach(({ value, options }, i) => {
    points.push({ value, result: runScenario(engine, workload, options, alone) });
    onPoint?.(i + 1, scenarios.length);
  });
  return { axis, points, cliff: findCliff(axis, points, workload, cliffOptions) };
}

/**
 * A sweep's points in sweep order (replica counts rising, capacities falling), each with
 * the scenario it runs: for runSweep, and for callers that run the points elsewhere
 * (worker threads) and hand them to findCliff.
 */
export function sweepScenarios(base: ScenarioOptions, axis: SweepAxis, values: readonly number[]): Array<{ value: number; options: ScenarioOptions }> {
  if (values.length === 0) throw new ParamError('the sweep needs at least one value');
  for (const v of values) {
    if (!(Number.isFinite(v) && v > 0) || (axis === 'replicas' && !Number.isInteger(v))) throw new ParamError(`sweep ${axis} values must be ${axis === 'replicas' ? 'whole numbers' : 'numbers'} > 0, got ${JSON.stringify(v)}`);
  }
  // Replicas rise, capacities fall: the cliff is the first point in that order.
  const ordered = [...new Set(values)].sort((a, b) => (axis === 'replicas' ? a - b : b - a));
  const replicas = base.replicas ?? DEFAULT_REPLICAS;
  return ordered.map((value) => ({
    value,
    options: axis === 'replicas' ? { ...base, replicas: { ...replicas, replicas: value } } : { ...base, params: { ...base.params, capacityTokens: value } },
  }));
}

/**
 * The cliff of sweep points already run, in sweep order (replica counts rising,
 * capacities falling): for callers that run the points themselves, e.g. one at a time
 * in a worker, stopping early.
 */
export function findCliff(axis: SweepAxis, points: readonly SweepPoint[], workload: Workload, cliffOptions: CliffOptions = DEFAULT_CLIFF): Cliff {
  const ordered = points.map((p) => p.value);
  let at: number | null = null;
  let reason: Cliff['reason'] = null;
  let lastGood: number | null = null;
  for (const p of points) {
    const why = pastCliff(p.result, cliffOptions);
    if (why) {
      at = p.value;
      reason = why;
      break;
    }
    lastGood = p.value;
  }
  const peak = peakSessionTokens(workload);
  let suggested: number | null;
  if (axis === 'replicas') suggested = at === null ? null : (lastGood ?? 1);
  else suggested = at === null ? null : Math.max(1, Math.floor((lastGood ?? at) / Math.max(1, peak)));
  const unit = axis === 'replicas' ? 'sessions' : 'tokens of KV capacity';
  let summary: string;
  if (at === null) summary = `No cliff in this sweep: ${axis === 'capacity' ? 'down' : 'up'} to ${ordered[ordered.length - 1]} ${unit}, the hit rate stays within ${pct(cliffOptions.hitRateDropThreshold)} of ideal and decode dominates.`;
  else {
    const r = points.find((p) => p.value === at)!.result;
    const what = reason === 'hit-rate' ? `the hit rate falls to ${pct(r.admissionHitRate)} (ideal ${pct(r.idealHitRate)})` : `prefill becomes ${pct(r.prefillShare)} of LLM time`;
    summary = `The cliff is at ${at} ${unit}: ${what}. Admit at most ${suggested} session${suggested === 1 ? '' : 's'} at once to stay before it.`;
  }
  // Rejected calls are left out of every hit rate, so a sweep can look healthy where calls no longer fit at all.
  const rejecting = points.find((p) => p.result.rejectedRequests > 0);
  if (rejecting) summary += ` At ${rejecting.value} ${unit}${axis === 'capacity' ? ' and below' : ''}, ${rejecting.result.rejectedRequests} of ${rejecting.result.requests} calls do not fit in the cache and are rejected (left out of the hit rates).`;
  return { axis, at, reason, hitRateDropThreshold: cliffOptions.hitRateDropThreshold, lastGood, suggestedAdmissionCap: suggested, summary };
}
