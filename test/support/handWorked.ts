import type { CallRecord, EngineOutcome } from '../../src/core/sim/engines/engineTypes';
import { DEFAULT_PARAMS } from '../../src/core/sim/params';
import type { EngineParams } from '../../src/core/sim/params';
import { DEFAULT_REPLICAS, planWorkload } from '../../src/core/sim/simRequests';
import type { SimPlan } from '../../src/core/sim/simRequests';
import type { AgentWorkload, WorkloadCall } from '../../src/core/sim/workload';

// Helpers for the engines' hand-worked scenarios: every step costs exactly 1 ms (no
// per-token costs), so times are step counts; plans use 16-token blocks.

/** The default parameters with a fixed 1 ms step and no per-token costs (vLLM LRU). */
export const STEP_ONLY: EngineParams = {
  ...DEFAULT_PARAMS,
  stepFixedMs: 1,
  prefillUsPerToken: 0,
  kvReadNsPerToken: 0,
  decodeUsPerSeq: 0,
};

/** One call of a session. */
export const call = (
  promptTokens: number,
  prefixTokens: number,
  outputTokens: number,
  toolWaitS = 0,
): WorkloadCall => ({ promptTokens, prefixTokens, outputTokens, toolWaitS });

/** Sessions by start time, named s0, s1, … in order. */
export type Sessions = Array<{ startS: number; calls: WorkloadCall[] }>;

export function workload(sessions: Sessions, sharedPrefixTokens: number): AgentWorkload {
  return { kind: 'sessions', sharedPrefixTokens, sessions: sessions.map((s, i) => ({ id: `s${i}`, ...s })) };
}

/** Plans the sessions (16-token blocks, the default replicas), runs `engine` on the plan, and returns the records by session. */
export function recordsBySession(
  sessions: Sessions,
  sharedPrefixTokens: number,
  engine: (plan: SimPlan) => EngineOutcome,
): CallRecord[][] {
  const plan = planWorkload(workload(sessions, sharedPrefixTokens), 16, DEFAULT_REPLICAS);
  const outcome = engine(plan);
  return plan.sessions.map((s) => s.requests.map((r) => outcome.records[r]!));
}
