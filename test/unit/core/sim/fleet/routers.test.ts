import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EngineOutcome } from '../../../../../src/core/sim/engines/engineTypes';
import { startReference } from '../../../../../src/core/sim/engines/referenceEngine';
import { runFleet } from '../../../../../src/core/sim/fleet/fleet';
import type { RouterName } from '../../../../../src/core/sim/fleet/routers';
import { DEFAULT_REPLICAS, planWorkload } from '../../../../../src/core/sim/simRequests';
import { call, STEP_ONLY, workload } from '../../../../support/handWorked';
import type { Sessions } from '../../../../support/handWorked';

// Routers worked by hand. Every step costs exactly 1 ms (no per-token costs), so a call
// of P prompt tokens and O outputs that runs alone takes 1 prefill step and O − 1 decode
// steps, O ms; blocks are 16 tokens; the cache is large (nothing is evicted). A GPU's
// load is the tokens of its running and waiting requests (prompt + sampled so far);
// ties go to the lower load, then to the GPU sent fewer calls, then to GPU 0.

interface Routed {
  /** The GPU of each call, by session. */
  gpus: number[][];
  /** The hit tokens of each call, by session. */
  hits: number[][];
  outcome: EngineOutcome;
}

function route(sessions: Sessions, gpus: number, router: RouterName): Routed {
  const plan = planWorkload(workload(sessions, 0), 16, DEFAULT_REPLICAS, false);
  const outcome = runFleet(startReference, plan, STEP_ONLY, { gpus, router });
  return {
    gpus: plan.sessions.map((s) => s.requests.map((r) => outcome.fleet.gpuOf[r]!)),
    hits: plan.sessions.map((s) => s.requests.map((r) => outcome.records[r]!.hitTokens)),
    outcome,
  };
}

// Three agents of three calls each, 100 ms apart. A first call of 32 tokens and 300
// outputs runs 0.3 s (ends at start + 0.3 s); after a 0.2 s tool wait the next call
// re-sends that context (prefix 332) plus new tokens, 10 outputs (10 ms).
const threeAgents: Sessions = [0, 0.1, 0.2].map((startS) => ({
  startS,
  calls: [call(32, 0, 300, 0.2), call(400, 332, 10, 0.2), call(500, 410, 10)],
}));

describe('routers, worked by hand', () => {
  it('round-robin: each call to the next GPU in arrival order, whatever its session', () => {
    // Arrivals: s0c0 0, s1c0 0.1, s2c0 0.2 → GPUs 0, 1, 0. First calls end 0.3, 0.4, 0.5, so
    // second calls arrive 0.5 (s0), 0.6 (s1), 0.7 (s2) → GPUs 1, 0, 1. Each takes 10 ms (a cold
    // 400-token prefill is one step under the 8,192-token budget): third calls at 0.71 (s0),
    // 0.81 (s1), 0.91 (s2) → GPUs 0, 1, 0.
    const r = route(threeAgents, 2, 'round-robin');
    assert.deepEqual(r.gpus, [
      [0, 1, 0],
      [1, 0, 1],
      [0, 1, 0],
    ]);
    // s0's second call lands on GPU 1, which never saw its context: no hit, and no ideal hit there either.
    assert.equal(r.hits[0]![1], 0);
    assert.equal(r.outcome.records[1]!.idealHitTokens, 0);
  });

  it('session affinity: a session stays on the GPU of its first call, which went to the least-loaded GPU', () => {
    // s0c0 at 0: both GPUs empty → GPU 0. s1c0 at 0.1: GPU 0 holds s0 (32 + 100 sampled = 132
    // tokens), GPU 1 nothing → GPU 1. s2c0 at 0.2: GPU 0 232 tokens, GPU 1 132 → GPU 1.
    // Every later call follows its session.
    const r = route(threeAgents, 2, 'session-affinity');
    assert.deepEqual(r.gpus, [
      [0, 0, 0],
      [1, 1, 1],
      [1, 1, 1],
    ]);
    // So each second call finds its first call's KV: 32 + 299 computed tokens = 20 full blocks.
    assert.deepEqual(
      r.hits.map((h) => h[1]),
      [320, 320, 320],
    );
  });

  it('least-loaded: the GPU with the fewest running + waiting tokens', () => {
    // s0 (100 tokens, 500 outputs) at 0 → GPU 0. At 0.1, GPU 0 holds 100 + 100 = 200 tokens → s1
    // (50 tokens, 10 outputs) to GPU 1. At 0.105: GPU 0 205, GPU 1 50 + 5 = 55 → s2 to GPU 1.
    const r = route(
      [
        { startS: 0, calls: [call(100, 0, 500)] },
        { startS: 0.1, calls: [call(50, 0, 10)] },
        { startS: 0.105, calls: [call(40, 0, 10)] },
      ],
      2,
      'least-loaded',
    );
    assert.deepEqual(r.gpus, [[0], [1], [1]]);
  });

  it('KV-aware: a session goes back to the GPU holding its prefix, and away from it when that GPU is loaded', () => {
    // s0c0 (320 tokens, 1 output) at 0: both GPUs cost 320 → the tie goes to GPU 0, which
    // caches its 20 blocks and ends at 1 ms. s0c1 (352 tokens, prefix 321) arrives at 1.001 s:
    // GPU 0 holds 320 of them, cost 352 − 320 + 0 = 32; GPU 1 costs 352 → back to GPU 0.
    const alone: Sessions = [{ startS: 0, calls: [call(320, 0, 1, 1), call(352, 321, 1)] }];
    const back = route(alone, 2, 'kv-aware');
    assert.deepEqual(back.gpus, [[0, 0]]);
    assert.equal(back.hits[0]![1], 320);
    // Now two more sessions arrive before it. s1 (3,200 tokens, 100 outputs) at 0.2 s: nothing
    // cached for it anywhere, both GPUs idle, so the cost and the load tie and it goes to the GPU
    // sent fewer calls, GPU 1; it ends at 0.3 s. s2 (3,200 tokens, 2,000 outputs) at 0.3 s: both
    // idle again, one call each → GPU 0. At 1.001 s GPU 0 holds s2's 3,200 + 701 sampled tokens:
    // cost 352 − 320 + 3,901 = 3,933 against an idle GPU 1's 352 → s0c1 goes to GPU 1, hitting nothing.
    const loaded = route(
      [...alone, { startS: 0.2, calls: [call(3200, 0, 100)] }, { startS: 0.3, calls: [call(3200, 0, 2000)] }],
      2,
      'kv-aware',
    );
    assert.deepEqual(loaded.gpus, [[0, 1], [1], [0]]);
    assert.equal(loaded.hits[0]![1], 0);
  });
});
