import { mean, ratio, sum } from '../analysis/stats';
import type { CallRecord, Engine, EngineOutcome, FleetOutcome } from './engines/engineTypes';
import type { RouterName } from './fleet/routers';
import type { EngineParams } from './params';
import { ParamError, validateParams, validateReplicas } from './params';
import { DEFAULT_REPLICAS, planWorkload } from './simRequests';
import type { ReplicaOptions, SimPlan } from './simRequests';
import type { Workload } from './workload';

/** One call of the chosen session under the scenario. */
export interface ScenarioCall {
  callIndex: number;
  promptTokens: number;
  outputTokens: number;
  hitTokens: number;
  idealHitTokens: number;
  /** Tokens it prefilled, over all its admissions (after a preemption, generated tokens too). */
  prefillTokens: number;
  /** prefillTokens − (promptTokens − idealHitTokens): the prefill eviction and preemption added. */
  recomputedTokens: number;
  offloadHitTokens: number;
  /** Time from arrival to first being scheduled. */
  waitedS: number | null;
  latencyS: number | null;
  preemptions: number;
  rejected: boolean;
  /** On a fleet: the GPU that ran it (0-based; null when rejected). */
  gpu?: number | null;
}

/** One GPU of a fleet under the scenario. */
export interface ScenarioGpu {
  /** 0-based. */
  gpu: number;
  /** Calls the router sent it. */
  requests: number;
  /** Sessions at least one of whose calls it ran. */
  sessions: number;
  promptTokens: number;
  admissionHitRate: number | null;
  idealHitRate: number | null;
  recomputedPrefillTokens: number;
  preemptions: number;
  prefillShare: number | null;
  steps: number;
  /** Time its steps took. */
  busyS: number;
  /** busyS / the fleet's makespan. */
  utilization: number | null;
  /** When its last call ended. */
  makespanS: number;
}

/** A session's time under the scenario and alone. */
export interface ScenarioSession {
  id: string;
  completionS: number | null;
  aloneS: number | null;
  slowdown: number | null;
}

/** A scenario's outputs (docs/reference/json-output.md, "Outputs"), named as the CLI's JSON prints them. */
export interface ScenarioResult {
  replicas: number;
  capacityTokens: number;
  policy: string;
  requests: number;
  rejectedRequests: number;
  promptTokens: number;
  /** Σ hit tokens at first admission / Σ prompt tokens. */
  admissionHitRate: number | null;
  /** The same with an infinite cache. */
  idealHitRate: number | null;
  /** vLLM's prefix_cache_hits / prefix_cache_queries (every lookup of a not-preempted request). */
  vllmMetricHitRate: number | null;
  /** sglang-lru only: SGLang's logged hit rate, #cached-token / (#cached-token + #new-token) over prefill batches (docs/design/simulator.md §2.3). */
  sglangMetricHitRate?: number | null;
  /** sglang-lru only: tokens evicted from the radix tree. */
  evictedTokens?: number;
  /** Prefill tokens computed by all calls (rejected calls compute nothing). */
  prefillTokens: number;
  /** prefillTokens − Σ (prompt − ideal hit): the extra prefill eviction and preemption caused, token-exact. */
  recomputedPrefillTokens: number;
  offloadHitTokens: number;
  preemptions: number;
  /** Prefill's share of LLM (GPU step) time. */
  prefillShare: number | null;
  makespanS: number;
  steps: number;
  slowdown: { mean: number | null; max: number | null };
  sessions: ScenarioSession[];
  /** Per-call records of the chosen session (the first replica of the first session by default). */
  calls: ScenarioCall[];
  /** On a fleet (more than one GPU): how many, the router, and each GPU. */
  gpus?: number;
  router?: RouterName;
  perGpu?: ScenarioGpu[];
}

/** How to run a scenario: its parameters, replicas and the session to report (what the what-if worker is sent, too). */
export interface ScenarioOptions {
  params: EngineParams;
  /** Absent or null: DEFAULT_REPLICAS (a block-hash workload replays as recorded). */
  replicas?: ReplicaOptions | null;
  /** Which session's calls to report, by workload session id; absent or null: the first. */
  session?: string | null;
  /** Told now and then how many calls of the run have ended (long runs show progress). */
  progress?: (endedCalls: number, totalCalls: number) => void;
}

/** Checks what only the workload and parameters together can show (a call longer than the model allows). */
export function validateScenario(workload: Workload, p: EngineParams): void {
  validateParams(p);
  if (workload.kind === 'sessions') {
    workload.sessions.forEach((s, i) =>
      s.calls.forEach((c, k) => {
        const len = c.promptTokens + Math.max(1, c.outputTokens);
        if (len > p.maxModelLenTokens) {
          throw new ParamError(
            `sessions[${i}].calls[${k}] has ${len} tokens (prompt + output), longer than maxModelLenTokens ${p.maxModelLenTokens}`,
          );
        }
      }),
    );
  }
}

/** Completion time of every session of a run (last call's end − the session's start). */
function completions(plan: SimPlan, outcome: EngineOutcome): Array<number | null> {
  return plan.sessions.map((s, i) => {
    const end = outcome.sessionEndS[i];
    return end === null || end === undefined ? null : end - s.startS;
  });
}

/**
 * Runs a workload as N replicas under an engine and reports its outputs. Each
 * session's slowdown compares its completion time with the same session run alone
 * on the same GPU with the same parameters.
 */
export function runScenario(
  engine: Engine,
  workload: Workload,
  options: ScenarioOptions,
  aloneCache?: Map<string, Array<number | null>>,
): ScenarioResult {
  const p = options.params;
  validateScenario(workload, p);
  const replicas = options.replicas ?? DEFAULT_REPLICAS;
  if (workload.kind === 'sessions') validateReplicas(replicas);
  const tokenLevel = p.policy === 'sglang-lru';
  const plan = planWorkload(workload, p.blockSizeTokens, replicas, tokenLevel);
  const outcome = engine(plan, p, options.progress ? { progress: options.progress } : {});
  const done = outcome.records.filter((r) => !r.rejected);
  const prompt = sum(done.map((r) => r.promptTokens));
  const completion = completions(plan, outcome);

  // Alone: each workload session by itself, from time 0, no replicas, on one GPU.
  let alone: Array<number | null> = [];
  if (workload.kind === 'sessions') {
    const oneGpu: EngineParams = { ...p };
    delete oneGpu.fleet;
    const key = JSON.stringify({ p: oneGpu, scale: replicas.toolWaitScale });
    alone = aloneCache?.get(key) ?? [];
    if (alone.length === 0) {
      alone = workload.sessions.map((s) => {
        const single: Workload = {
          kind: 'sessions',
          sharedPrefixTokens: workload.sharedPrefixTokens,
          sessions: [{ ...s, startS: 0 }],
        };
        const soloPlan = planWorkload(
          single,
          p.blockSizeTokens,
          { ...DEFAULT_REPLICAS, toolWaitScale: replicas.toolWaitScale },
          tokenLevel,
        );
        return completions(soloPlan, engine(soloPlan, oneGpu))[0] ?? null;
      });
      aloneCache?.set(key, alone);
    }
  }
  const sessions: ScenarioSession[] = plan.sessions.map((s, i) => {
    const c = completion[i] ?? null;
    const a = alone[s.source] ?? null;
    return { id: s.id, completionS: c, aloneS: a, slowdown: c !== null && a !== null && a > 0 ? c / a : null };
  });
  const slowdowns = sessions.map((s) => s.slowdown).filter((v): v is number => v !== null);

  const chosen =
    options.session == null
      ? 0
      : plan.sessions.findIndex(
          (s) => s.replica === 0 && workload.kind === 'sessions' && workload.sessions[s.source]!.id === options.session,
        );
  if (chosen < 0) throw new ParamError(`session "${options.session}" is not in the workload`);
  const calls: ScenarioCall[] =
    plan.sessions.length > 0
      ? plan.sessions[chosen]!.requests.map((id) => {
          const r = outcome.records[id]!;
          return {
            callIndex: r.callIndex,
            promptTokens: r.promptTokens,
            outputTokens: r.outputTokens,
            hitTokens: r.hitTokens,
            idealHitTokens: r.idealHitTokens,
            prefillTokens: r.prefillTokens,
            recomputedTokens: r.recomputedTokens,
            offloadHitTokens: r.offloadHitTokens,
            waitedS: r.admittedS === null ? null : r.admittedS - r.arrivalS,
            latencyS: r.finishedS === null || r.rejected ? null : r.finishedS - r.arrivalS,
            preemptions: r.preemptions,
            rejected: r.rejected,
            ...(outcome.fleet ? { gpu: r.rejected ? null : outcome.fleet.gpuOf[id]! } : {}),
          };
        })
      : [];
  const t = outcome.totals;
  return {
    replicas: replicas.replicas,
    capacityTokens: p.capacityTokens,
    policy: p.policy,
    requests: outcome.records.length,
    rejectedRequests: t.rejectedRequests,
    promptTokens: prompt,
    admissionHitRate: ratio(sum(done.map((r) => r.hitTokens)), prompt),
    idealHitRate: ratio(sum(done.map((r) => r.idealHitTokens)), prompt),
    vllmMetricHitRate: ratio(t.vllmHits, t.vllmQueries),
    ...(p.policy === 'sglang-lru'
      ? {
          sglangMetricHitRate: ratio(t.sglangCachedTokens ?? 0, (t.sglangCachedTokens ?? 0) + (t.sglangNewTokens ?? 0)),
          evictedTokens: t.evictedTokens ?? 0,
        }
      : {}),
    prefillTokens: sum(done.map((r) => r.prefillTokens)),
    recomputedPrefillTokens: sum(done.map((r) => r.recomputedTokens)),
    offloadHitTokens: sum(done.map((r) => r.offloadHitTokens)),
    preemptions: t.preemptions,
    prefillShare: ratio(t.prefillMs, t.prefillMs + t.decodeMs),
    makespanS: t.makespanS,
    steps: t.steps,
    slowdown: { mean: mean(slowdowns), max: slowdowns.length > 0 ? slowdowns.reduce((a, b) => Math.max(a, b)) : null },
    sessions,
    calls,
    ...(outcome.fleet && p.fleet
      ? { gpus: p.fleet.gpus, router: p.fleet.router, perGpu: gpuResults(outcome.records, outcome.fleet, t.makespanS) }
      : {}),
  };
}

/** Each GPU of a fleet: what the router sent it and what its cache made of it. */
function gpuResults(records: readonly CallRecord[], fleet: FleetOutcome, makespanS: number): ScenarioGpu[] {
  // Each GPU's records in one pass (a filter per GPU made 1,024 GPUs read every record 1,024 times).
  const byGpu: CallRecord[][] = fleet.gpus.map(() => []);
  for (const r of records) {
    const g = fleet.gpuOf[r.request]!;
    if (g >= 0) byGpu[g]!.push(r);
  }
  return fleet.gpus.map((t, g) => {
    const mine = byGpu[g]!;
    const prompt = sum(mine.map((r) => r.promptTokens));
    const busyS = (t.prefillMs + t.decodeMs + t.transferMs) / 1000;
    return {
      gpu: g,
      requests: mine.length,
      sessions: new Set(mine.filter((r) => r.session >= 0).map((r) => r.session)).size,
      promptTokens: prompt,
      admissionHitRate: ratio(sum(mine.map((r) => r.hitTokens)), prompt),
      idealHitRate: ratio(sum(mine.map((r) => r.idealHitTokens)), prompt),
      recomputedPrefillTokens: sum(mine.map((r) => r.recomputedTokens)),
      preemptions: t.preemptions,
      prefillShare: ratio(t.prefillMs, t.prefillMs + t.decodeMs),
      steps: t.steps,
      busyS,
      utilization: makespanS > 0 ? busyS / makespanS : null,
      makespanS: t.makespanS,
    };
  });
}
