import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engineByName } from '../../../../src/core/sim/engines/engineTable';
import { DEFAULT_PARAMS, ParamError } from '../../../../src/core/sim/params';
import { runSweep } from '../../../../src/core/sim/sweep';
import type { AgentWorkload } from '../../../../src/core/sim/workload';

const FAST = engineByName('fast');
const REFERENCE = engineByName('reference');

// One agent session: 6 calls, each prompt = the previous prompt + its 16 output tokens + 16
// new tokens (256, 288, …, 416), a 0.5 s tool wait between calls. Its context at the
// end is 416 + 16 = 432 tokens = 27 blocks of 16. The cache holds 2,048 tokens = 128 blocks.
// While every replica waits on a tool, LRU keeps all their contexts only while
// N × 27 ≤ 128, i.e. N ≤ 4: the cliff must come after 4 replicas, and well before 8
// (8 × 27 = 216 blocks, 1.7× the cache).
const calls = Array.from({ length: 6 }, (_, k) => ({
  promptTokens: 256 + 32 * k,
  prefixTokens: k === 0 ? 0 : 256 + 32 * k - 16,
  outputTokens: 16,
  toolWaitS: 0.5,
}));
const workload: AgentWorkload = {
  kind: 'sessions',
  sharedPrefixTokens: 0,
  sessions: [{ id: 'agent', startS: 0, calls }],
};
const params = { ...DEFAULT_PARAMS, capacityTokens: 2048, stepFixedMs: 1, prefillUsPerToken: 10, kvReadNsPerToken: 10 };

describe('sweeps and the cliff', () => {
  it('the cliff appears between two replica counts on a small cache', () => {
    const sweep = runSweep(FAST, workload, { params }, 'replicas', [1, 2, 3, 4, 6, 8, 12]);
    const byN = new Map(sweep.points.map((p) => [p.value, p.result]));
    for (const n of [1, 2, 3]) {
      const r = byN.get(n)!;
      assert.ok(
        r.idealHitRate! - r.admissionHitRate! < 0.01,
        `N=${n}: ${r.admissionHitRate} vs ideal ${r.idealHitRate}`,
      );
    }
    for (const n of [8, 12]) {
      const r = byN.get(n)!;
      assert.ok(
        r.idealHitRate! - r.admissionHitRate! > 0.3,
        `N=${n} should thrash: ${r.admissionHitRate} vs ideal ${r.idealHitRate}`,
      );
    }
    assert.ok(sweep.cliff.at !== null && sweep.cliff.at > 4 && sweep.cliff.at <= 8, `cliff at ${sweep.cliff.at}`);
    assert.equal(sweep.cliff.reason, 'hit-rate');
    assert.equal(sweep.cliff.suggestedAdmissionCap, sweep.cliff.lastGood);
    assert.match(
      sweep.cliff.summary,
      /^The cliff is at \d+ sessions: the hit rate falls to \d+% \(ideal \d+%\)\. Admit at most \d+ sessions at once/,
    );
  });

  it('a capacity sweep finds the largest capacity past the cliff for a fixed number of sessions', () => {
    // 6 replicas need 6 × 27 = 162 blocks = 2,592 tokens to keep every context.
    const sweep = runSweep(
      FAST,
      workload,
      { params, replicas: { replicas: 6, staggerS: 0, staggerMode: 'fixed', seed: 1, toolWaitScale: 1 } },
      'capacity',
      [8192, 4096, 3072, 2048, 1024],
    );
    assert.deepEqual(
      sweep.points.map((p) => p.value),
      [8192, 4096, 3072, 2048, 1024],
    );
    assert.ok(sweep.cliff.at !== null && sweep.cliff.at < 2592 && sweep.cliff.at >= 1024, `cliff at ${sweep.cliff.at}`);
    // Suggested: how many 432-token working sets fit in the last good capacity.
    assert.equal(sweep.cliff.suggestedAdmissionCap, Math.floor(sweep.cliff.lastGood! / 432));
  });

  it('a sweep that looks healthy but rejects calls says so', () => {
    // At 400 tokens (25 whole blocks) the last call (416 prompt + 16 output = 432 tokens) is longer than the
    // cache; the fifth (384 + 16 = 400) just fits. One of six calls is rejected.
    const sweep = runSweep(FAST, workload, { params }, 'capacity', [8192, 400]);
    assert.deepEqual(
      sweep.points.map((p) => p.result.rejectedRequests),
      [0, 1],
    );
    assert.match(
      sweep.cliff.summary,
      /At 400 tokens of KV capacity and below, 1 of 6 calls do not fit in the cache and are rejected/,
    );
  });

  it('both engines give the same sweep', () => {
    const a = runSweep(FAST, workload, { params }, 'replicas', [2, 6]);
    const b = runSweep(REFERENCE, workload, { params }, 'replicas', [2, 6]);
    assert.deepEqual(a, b);
  });

  it('over GPUs: the planner finds the fewest GPUs that keep the hit rate at the target', () => {
    // 16 copies, 50 ms apart, behind session affinity: each copy's first call ends before the next
    // starts, so idle GPUs take turns and the copies spread evenly. A copy keeps 27 blocks while
    // its tool runs; the 128-block cache of a GPU holds 4 of them (108 blocks) but not 5 or 6
    // (135, 162): 4 GPUs (4 copies each) is the fewest that keeps every context. The sweep lists
    // 1, 8 and 16; the search runs 4, 2 and 3 between 1 and 8.
    const base = {
      params: { ...params, fleet: { gpus: 1, router: 'session-affinity' as const } },
      replicas: { replicas: 16, staggerS: 0.05, staggerMode: 'fixed' as const, seed: 1, toolWaitScale: 1 },
    };
    const sweep = runSweep(FAST, workload, base, 'gpus', [1, 8, 16], {
      hitRateDropThreshold: 0.1,
      targetHitRate: 0.75,
    });
    assert.deepEqual(
      sweep.points.map((p) => p.value),
      [16, 8, 1],
    );
    assert.equal(sweep.plan!.gpus, 4);
    assert.deepEqual(
      sweep.plan!.tried.map((t) => t.gpus),
      [1, 2, 3, 4, 8, 16],
    );
    // The same answer by running every count from 1 up (no search).
    const scan = Array.from({ length: 16 }, (_, i) => i + 1).find(
      (gpus) => runSweep(FAST, workload, base, 'gpus', [gpus]).points[0]!.result.admissionHitRate! >= 0.75,
    );
    assert.equal(scan, 4);
    assert.match(
      sweep.plan!.summary,
      /^To serve 16 sessions like this at ≥ 75% hit rate you need 4 GPUs with the session-affinity router/,
    );
    // On one GPU the point is the single-GPU scenario itself.
    assert.deepEqual(
      sweep.points[2]!.result,
      runSweep(FAST, workload, { ...base, params }, 'replicas', [16]).points[0]!.result,
    );
  });

  it('bad sweep values are refused by name', () => {
    assert.throws(
      () => runSweep(FAST, workload, { params }, 'replicas', [0, 2]),
      (e: unknown) =>
        e instanceof ParamError && /sweep replicas values must be whole numbers > 0, got 0/.test(e.message),
    );
    assert.throws(
      () => runSweep(FAST, workload, { params: { ...params, capacityTokens: 8 } }, 'replicas', [1]),
      (e: unknown) =>
        e instanceof ParamError && /^capacityTokens must be at least one block \(16 tokens\), got 8$/.test(e.message),
    );
  });
});
