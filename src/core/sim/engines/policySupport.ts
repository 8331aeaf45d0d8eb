import type { ArrivalSource, CallRecord, EngineOutcome, EngineTotals } from './engineTypes';
import type { EngineParams } from '../params';
import type { SimPlan, SimRequest } from '../simRequests';

/**
 * What the engines share so they cannot disagree on it: policy decisions that depend
 * only on the workload, which calls can never fit, and a step's cost and the clock
 * (the engines differ in how they keep the cache, not in what the policy asks for or
 * what a step costs).
 */

/** Continuum-like pin time for each session: a fixed TTL, or the 90th percentile of its own tool waits, capped. */
export function pinTtlBySession(plan: SimPlan, p: EngineParams): number[] {
  return plan.sessions.map((s) => {
    if (p.ttlPin.ttlS !== 'auto') return p.ttlPin.ttlS;
    const waits = s.requests
      .slice(0, -1)
      .map((r) => plan.requests[r]!.toolWaitS)
      .sort((a, b) => a - b);
    if (waits.length === 0) return 0;
    const p90 = waits[Math.min(waits.length - 1, Math.ceil(0.9 * waits.length) - 1)]!;
    return Math.min(p90, p.ttlPin.maxTtlS);
  });
}

/** Sessions in the order an agent-level admission queue serves them: by start time, then index. */
export function sessionStartOrder(plan: SimPlan): number[] {
  return plan.sessions.map((_, i) => i).sort((a, b) => plan.sessions[a]!.startS - plan.sessions[b]!.startS || a - b);
}

/** SGLang's limits for a pool of `capacityTokens` at its page size (tp_worker.py get_worker_info; docs/design/simulator.md §2). */
export function sglangLimits(p: Pick<EngineParams, 'capacityTokens' | 'sglangPageSizeTokens' | 'maxModelLenTokens'>): {
  maxTotalTokens: number;
  maxReqLen: number;
  maxReqInputLen: number;
} {
  const ps = p.sglangPageSizeTokens;
  const maxTotalTokens = Math.floor(Math.floor(p.capacityTokens) / ps) * ps;
  const maxReqLen = Math.min(p.maxModelLenTokens - 1, maxTotalTokens - 1);
  return { maxTotalTokens, maxReqLen, maxReqInputLen: maxReqLen - 5 };
}

/**
 * Whether a call can never be served by a cache of `p.capacityTokens`, so it is rejected
 * on arrival. vLLM serves a request only if prompt + max_tokens ≤ max_model_len, and will
 * not start with a max_model_len whose blocks exceed the cache (vllm/v1/core/kv_cache_utils.py
 * check_enough_kv_cache_memory: ⌈max_model_len / block⌉ blocks must fit), so the longest
 * call is the cache's whole blocks in tokens. SGLang (sglang-lru) refuses a prompt of
 * max_req_input_len tokens or more (managers/utils.py validate_input_length), and clips a
 * longer output to what the pool can hold instead of refusing it.
 */
export function tooLongForCache(
  p: Pick<EngineParams, 'policy' | 'capacityTokens' | 'sglangPageSizeTokens' | 'maxModelLenTokens'>,
  blockSizeTokens: number,
  promptTokens: number,
  outputTokens: number,
): boolean {
  if (p.policy === 'sglang-lru') return promptTokens >= sglangLimits(p).maxReqInputLen;
  return promptTokens + outputTokens > Math.floor(p.capacityTokens / blockSizeTokens) * blockSizeTokens;
}

/** A scheduled request decodes (one new token, its prompt done) rather than prefills: the step cost charges the two differently. */
export function isDecoding(numTokens: number, numComputed: number, promptTokens: number): boolean {
  return numTokens - numComputed === 1 && numComputed >= promptTokens;
}

/**
 * The engines keep time in whole nanoseconds: every step cost is an integer, so a sum
 * of many steps is exact and the fast engine's closed-form jump over a stretch of
 * decode steps lands on exactly the reference engine's time (doubles hold integers
 * exactly up to 2^53 ns, 104 days).
 */
export interface StepCostsNs {
  fixed: number;
  prefillPerToken: number;
  kvPerToken: number;
  decodePerSeq: number;
  transferPerBlock: number;
}

/** Seconds to whole nanoseconds. */
export function toNs(seconds: number): number {
  return Math.round(seconds * 1e9);
}

/** The step cost constants in whole nanoseconds (per-token costs rounded to the nearest ns). */
export function stepCostsNs(p: EngineParams, blockSize: number): StepCostsNs {
  return {
    fixed: Math.round(p.stepFixedMs * 1e6),
    prefillPerToken: Math.round(p.prefillUsPerToken * 1e3),
    kvPerToken: Math.round(p.kvReadNsPerToken),
    decodePerSeq: Math.round(p.decodeUsPerSeq * 1e3),
    transferPerBlock: p.offload
      ? Math.round(((blockSize * p.kvBytesPerToken) / (p.offload.bandwidthGBps * 1e9)) * 1e9)
      : 0,
  };
}

/** A request's record before it runs (every engine starts from the same one). */
export function newCallRecord(r: SimRequest): CallRecord {
  return {
    request: r.id,
    session: r.session,
    callIndex: r.callIndex,
    promptTokens: r.promptTokens,
    outputTokens: r.outputTokens,
    arrivalS: r.arrivalS === null ? 0 : toNs(r.arrivalS) / 1e9,
    admittedS: null,
    finishedS: null,
    hitTokens: 0,
    idealHitTokens: 0,
    prefillTokens: 0,
    recomputedTokens: 0,
    offloadHitTokens: 0,
    preemptions: 0,
    rejected: false,
  };
}

/**
 * Once a run is over: each call's recomputed prefill, the prefill it computed beyond
 * what an infinite cache would have left it (prompt − ideal hit), token-exact, with the
 * re-prefill of generated tokens after a preemption. Never negative: a call computes at
 * least its prompt minus its hit, and its hit is at most the ideal.
 */
export function settleRecomputed(records: CallRecord[]): void {
  for (const rec of records)
    rec.recomputedTokens = rec.rejected ? 0 : rec.prefillTokens - (rec.promptTokens - rec.idealHitTokens);
}

/** An engine's totals before its first step (an SGLang run adds its own counters after these). */
export function newEngineTotals(): EngineTotals {
  return {
    steps: 0,
    preemptions: 0,
    rejectedRequests: 0,
    vllmQueries: 0,
    vllmHits: 0,
    prefillMs: 0,
    decodeMs: 0,
    transferMs: 0,
    makespanS: 0,
  };
}

/**
 * The clock of one run and where its time went, in whole nanoseconds, kept by the same
 * arithmetic in every engine so equal schedules give bit-identical times.
 */
export class StepClock {
  now = 0;
  prefillNs = 0;
  decodeNs = 0;
  transferNs = 0;
  steps = 0;

  constructor(readonly cost: StepCostsNs) {}

  /** One step that prefilled `prefillTokens`, ran `decodes` decodes over `decodeContext` tokens of context and moved `transferBlocks` to or from the CPU tier. */
  chargeStep(prefillTokens: number, decodeContext: number, decodes: number, transferBlocks: number): void {
    const c = this.cost;
    const prefillNs = prefillTokens * c.prefillPerToken;
    const decodeNs = decodeContext * c.kvPerToken + decodes * c.decodePerSeq;
    const transferNs = transferBlocks * c.transferPerBlock;
    // The weights are read once per step: that fixed cost serves the decodes if there are any.
    if (decodes > 0) this.decodeNs += decodeNs + c.fixed;
    else this.prefillNs += c.fixed;
    this.prefillNs += prefillNs;
    this.transferNs += transferNs;
    this.steps += 1;
    this.now += c.fixed + prefillNs + decodeNs + transferNs;
  }

  /** The run's outcome once it is over: its totals filled in, the source's records and when each session ended. */
  outcome(totals: EngineTotals, source: ArrivalSource, refusedByEngine = 0): EngineOutcome {
    this.fillTotals(totals, source.records, source.rejectedRequests + refusedByEngine);
    return { records: source.records, totals, sessionEndS: source.sessionEndS };
  }

  /** The run's totals once it is over: times in ms, the makespan from the records; the calls' recomputed prefill. */
  fillTotals(totals: EngineTotals, records: CallRecord[], rejectedRequests: number): void {
    settleRecomputed(records);
    totals.steps = this.steps;
    totals.prefillMs = this.prefillNs / 1e6;
    totals.decodeMs = this.decodeNs / 1e6;
    totals.transferMs = this.transferNs / 1e6;
    totals.makespanS = records.reduce((m, r) => Math.max(m, r.finishedS ?? 0), 0);
    totals.rejectedRequests = rejectedRequests;
  }
}
