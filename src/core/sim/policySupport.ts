import type { EngineParams } from './params';
import type { SimPlan } from './simRequests';

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
