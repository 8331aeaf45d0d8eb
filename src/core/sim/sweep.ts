import type { Engine } from './engines/engineTypes';
import { DEFAULT_ROUTER, MAX_GPUS } from './fleet/routers';
import type { RouterName } from './fleet/routers';
import { describeBound, PARAM_BOUNDS, ParamError, REPLICA_BOUNDS, shownValue, withinBound } from './params';
import { runScenario } from './scenario';
import type { ScenarioOptions, ScenarioResult } from './scenario';
import { DEFAULT_REPLICAS } from './simRequests';
import type { ReplicaOptions } from './simRequests';
import type { Workload } from './workload';

/** What a sweep varies: concurrent sessions, the KV cache of each GPU, or the number of GPUs behind the router. */
export type SweepAxis = 'replicas' | 'capacity' | 'gpus';

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

/** A sweep and its cliff (and, over GPUs, the capacity planner's answer). */
export interface SweepResult {
  axis: SweepAxis;
  points: SweepPoint[];
  cliff: Cliff;
  plan?: GpuPlan;
}

/** The capacity planner's answer: the fewest GPUs behind the router that keep the hit rate at the target. */
export interface GpuPlan {
  targetHitRate: number;
  replicas: number;
  router: RouterName;
  /** The fewest GPUs found that reach the target; null when no count tried does. */
  gpus: number | null;
  /** Every GPU count run (the sweep's and the search's), in rising order, with its hit rate. */
  tried: Array<{ gpus: number; admissionHitRate: number | null }>;
  summary: string;
}

/** The hit rate a fleet should keep, unless told otherwise. */
export const DEFAULT_TARGET_HIT_RATE = 0.9;

/** Options of the cliff test (and, over GPUs, the planner's target hit rate). */
export interface CliffOptions {
  hitRateDropThreshold: number;
  targetHitRate?: number;
}

export const DEFAULT_CLIFF: CliffOptions = { hitRateDropThreshold: 0.1 };

function pct(v: number | null): string {
  return v === null ? 'unknown' : `${(v * 100).toFixed(0)}%`;
}

/** True when a point is past the cliff; the reason says which condition holds. */
export function pastCliff(r: ScenarioResult, o: CliffOptions): 'hit-rate' | 'prefill-share' | null {
  if (
    r.admissionHitRate !== null &&
    r.idealHitRate !== null &&
    r.idealHitRate - r.admissionHitRate > o.hitRateDropThreshold
  )
    return 'hit-rate';
  if (r.prefillShare !== null && r.prefillShare > 0.5) return 'prefill-share';
  return null;
}

/** The largest prompt + output of any call: a session's working set at its peak. */
export function peakSessionTokens(workload: Workload): number {
  if (workload.kind === 'requests')
    return workload.requests.reduce((m, r) => Math.max(m, r.promptTokens + r.outputTokens), 0);
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
/** Points a sweep runs at most: a doubling range covers 1 to 2^63 in 64. */
export const MAX_SWEEP_POINTS = 64;

export function runSweep(
  engine: Engine,
  workload: Workload,
  base: ScenarioOptions,
  axis: SweepAxis,
  values: readonly number[],
  cliffOptions: CliffOptions = DEFAULT_CLIFF,
  onPoint?: (done: number, total: number) => void,
): SweepResult {
  const scenarios = sweepScenarios(base, axis, values);
  const alone = new Map<string, Array<number | null>>();
  const points: SweepPoint[] = [];
  scenarios.forEach(({ value, options }, i) => {
    points.push({ value, result: runScenario(engine, workload, options, alone) });
    onPoint?.(i + 1, scenarios.length);
  });
  const cliff = findCliff(axis, points, workload, cliffOptions);
  if (axis !== 'gpus') return { axis, points, cliff };
  return {
    axis,
    points,
    cliff,
    plan: planGpus(points, base, cliffOptions.targetHitRate ?? DEFAULT_TARGET_HIT_RATE, (o) =>
      runScenario(engine, workload, o, alone),
    ),
  };
}

/**
 * A sweep's points in sweep order (replica counts rising, capacities falling), each with
 * the scenario it runs: for runSweep, and for callers that run the points elsewhere
 * (worker threads) and hand them to findCliff.
 */
export function sweepScenarios(
  base: ScenarioOptions,
  axis: SweepAxis,
  values: readonly number[],
): Array<{ value: number; options: ScenarioOptions }> {
  if (values.length === 0) throw new ParamError('the sweep needs at least one value');
  if (values.length > MAX_SWEEP_POINTS)
    throw new ParamError(`a sweep runs at most ${MAX_SWEEP_POINTS} points, got ${values.length}`);
  for (const v of values) {
    if (!(Number.isFinite(v) && v > 0) || (axis !== 'capacity' && !Number.isInteger(v)))
      throw new ParamError(
        `sweep ${axis} values must be ${axis !== 'capacity' ? 'whole numbers' : 'numbers'} > 0, got ${shownValue(v)}`,
      );
    if (axis === 'gpus' && v > MAX_GPUS)
      throw new ParamError(`sweep gpus values must be at most ${MAX_GPUS}, got ${v}`);
    if (axis !== 'gpus') {
      const bound = axis === 'replicas' ? REPLICA_BOUNDS.replicas : PARAM_BOUNDS.capacityTokens;
      if (!withinBound(v, bound))
        throw new ParamError(`sweep ${axis} values must be ${describeBound(bound)}, got ${shownValue(v)}`);
    }
  }
  // Replicas rise, capacities and GPU counts fall: the cliff is the first point in that order.
  const ordered = [...new Set(values)].sort((a, b) => (axis === 'replicas' ? a - b : b - a));
  const replicas = base.replicas ?? DEFAULT_REPLICAS;
  return ordered.map((value) => ({ value, options: sweepPoint(base, axis, value, replicas) }));
}

/** The scenario of one sweep value. */
function sweepPoint(base: ScenarioOptions, axis: SweepAxis, value: number, replicas: ReplicaOptions): ScenarioOptions {
  if (axis === 'replicas') return { ...base, replicas: { ...replicas, replicas: value } };
  if (axis === 'capacity') return { ...base, params: { ...base.params, capacityTokens: value } };
  return {
    ...base,
    params: { ...base.params, fleet: { gpus: value, router: base.params.fleet?.router ?? DEFAULT_ROUTER } },
  };
}

/**
 * The capacity planner (sweeps over GPUs): the fewest GPUs, behind the sweep's router, at
 * which the admission hit rate reaches `target`. The sweep's points bracket it; between
 * the largest count that falls short and the smallest that reaches it, a binary search
 * runs more counts (`run`), taking the hit rate to rise with the number of GPUs.
 */
export function planGpus(
  points: readonly SweepPoint[],
  base: ScenarioOptions,
  target: number,
  run: (options: ScenarioOptions) => ScenarioResult,
): GpuPlan {
  const router = base.params.fleet?.router ?? DEFAULT_ROUTER;
  const replicas = (base.replicas ?? DEFAULT_REPLICAS).replicas;
  const hit = new Map<number, number | null>(points.map((p) => [p.value, p.result.admissionHitRate]));
  const reaches = (g: number): boolean => (hit.get(g) ?? -1) >= target;
  const swept = [...hit.keys()].sort((a, b) => a - b);
  const first = swept.find(reaches);
  let gpus: number | null = null;
  if (first !== undefined) {
    let lo = swept.filter((g) => g < first).reduce((m, g) => Math.max(m, g), 0);
    let hi = first;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (!hit.has(mid))
        hit.set(mid, run(sweepPoint(base, 'gpus', mid, base.replicas ?? DEFAULT_REPLICAS)).admissionHitRate);
      if (reaches(mid)) hi = mid;
      else lo = mid;
    }
    gpus = hi;
  }
  const tried = [...hit.entries()].sort((a, b) => a[0] - b[0]).map(([g, h]) => ({ gpus: g, admissionHitRate: h }));
  const who = `${replicas} session${replicas === 1 ? '' : 's'} like this`;
  let summary: string;
  if (gpus !== null)
    summary = `To serve ${who} at ≥ ${pct(target)} hit rate you need ${gpus} GPU${gpus === 1 ? '' : 's'} with the ${router} router (${pct(hit.get(gpus) ?? null)} there).`;
  else {
    const best = tried.reduce((b, t) => ((t.admissionHitRate ?? -1) > (b.admissionHitRate ?? -1) ? t : b), tried[0]!);
    summary = `No GPU count tried (up to ${swept[swept.length - 1]}) serves ${who} at ≥ ${pct(target)} hit rate with the ${router} router: the best is ${pct(best.admissionHitRate)} at ${best.gpus} GPU${best.gpus === 1 ? '' : 's'}.`;
  }
  return { targetHitRate: target, replicas, router, gpus, tried, summary };
}

/**
 * The cliff of sweep points already run, in sweep order (replica counts rising,
 * capacities falling): for callers that run the points themselves, e.g. one at a time
 * in a worker, stopping early.
 */
export function findCliff(
  axis: SweepAxis,
  points: readonly SweepPoint[],
  workload: Workload,
  cliffOptions: CliffOptions = DEFAULT_CLIFF,
): Cliff {
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
  else if (axis === 'capacity')
    suggested = at === null ? null : Math.max(1, Math.floor((lastGood ?? at) / Math.max(1, peak)));
  else suggested = null; // over GPUs the answer is a GPU count (the plan), not a cap
  const unit = axis === 'replicas' ? 'sessions' : axis === 'capacity' ? 'tokens of KV capacity' : 'GPUs';
  let summary: string;
  if (at === null)
    summary = `No cliff in this sweep: ${axis === 'replicas' ? 'up' : 'down'} to ${ordered[ordered.length - 1]} ${unit}, the hit rate stays within ${pct(cliffOptions.hitRateDropThreshold)} of ideal and decode dominates.`;
  else {
    const r = points.find((p) => p.value === at)!.result;
    const what =
      reason === 'hit-rate'
        ? `the hit rate falls to ${pct(r.admissionHitRate)} (ideal ${pct(r.idealHitRate)})`
        : `prefill becomes ${pct(r.prefillShare)} of LLM time`;
    const advice =
      axis === 'gpus'
        ? lastGood === null
          ? 'Every GPU count swept is past it.'
          : `Keep at least ${lastGood} GPUs to stay before it.`
        : `Admit at most ${suggested} session${suggested === 1 ? '' : 's'} at once to stay before it.`;
    summary = `The cliff is at ${at} ${unit}: ${what}. ${advice}`;
  }
  // Rejected calls are left out of every hit rate, so a sweep can look healthy where calls no longer fit at all.
  const rejecting = points.find((p) => p.result.rejectedRequests > 0);
  if (rejecting)
    summary += ` At ${rejecting.value} ${unit}${axis === 'capacity' ? ' and below' : ''}, ${rejecting.result.rejectedRequests} of ${rejecting.result.requests} calls do not fit in the cache and are rejected (left out of the hit rates).`;
  return {
    axis,
    at,
    reason,
    hitRateDropThreshold: cliffOptions.hitRateDropThreshold,
    lastGood,
    suggestedAdmissionCap: suggested,
    summary,
  };
}
