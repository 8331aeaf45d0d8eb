import type { CallRecord } from './engineTypes';
import type { EngineParams } from './params';
import type { SimPlan, SimRequest } from './simRequests';

/**
 * Policy decisions that depend only on the workload, shared by both engines so they
 * cannot disagree on them (the engines differ in how they keep the cache, not in
 * what the policy asks for).
 */

/** Continuum-like pin time for each session: a fixed TTL, or the 90th percentile of its own tool waits, capped. */
export function pinTtlBySession(plan: SimPlan, p: EngineParams): number[] {
  return plan.sessions.map((s) => {
    if (p.ttlPin.ttlS !== 'auto') return p.ttlPin.ttlS;
    const waits = s.requests.slice(0, -1).map((r) => plan.requests[r]!.toolWaitS).sort((a, b) => a - b);
    if (waits.length === 0) return 0;
    const p90 = waits[Math.min(waits.length - 1, Math.ceil(0.9 * waits.length) - 1)]!;
    return Math.min(p90, p.ttlPin.maxTtlS);
  });
}

/** Sessions in the order an agent-level admission queue serves them: by start time, then index. */
export function sessionStartOrder(plan: SimPlan): number[] {
  return plan.sessions.map((_, i) => i).sort((a, b) => plan.sessions[a]!.startS - plan.sessions[b]!.startS || a - b);
}

/** Blocks a request needs at its longest (prompt + output − 1 computed tokens): more than the cache means it is rejected. */
export function peakBlocks(promptTokens: number, outputTokens: number, blockSize: number): number {
  return Math.ceil((promptTokens + outputTokens - 1) / blockSize);
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
    transferPerBlock: p.offload ? Math.round(((blockSize * p.kvBytesPerToken) / (p.offload.bandwidthGBps * 1e9)) * 1e9) : 0,
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
    recomputedTokens: 0,
    offloadHitTokens: 0,
    preemptions: 0,
    rejected: false,
  };
}
