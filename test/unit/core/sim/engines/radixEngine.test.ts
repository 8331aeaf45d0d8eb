import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { CallRecord, EngineOutcome } from '../../../../../src/core/sim/engines/engineTypes';
import { runFast } from '../../../../../src/core/sim/engines/fastEngine';
import { DEFAULT_PARAMS, ParamError, validateParams } from '../../../../../src/core/sim/params';
import type { EngineParams } from '../../../../../src/core/sim/params';
import { engineByName } from '../../../../../src/core/sim/engines/engineTable';
import { runRadix } from '../../../../../src/core/sim/engines/radixEngine';
import type { RadixStepState } from '../../../../../src/core/sim/engines/radixEngine';
import { runReference } from '../../../../../src/core/sim/engines/referenceEngine';
import { planWorkload } from '../../../../../src/core/sim/simRequests';
import type { BlockWorkload } from '../../../../../src/core/sim/workload';
import { call, recordsBySession, STEP_ONLY as VLLM_STEP_ONLY } from '../../../../support/handWorked';
import type { Sessions } from '../../../../support/handWorked';
import { agentWorkloadArb, blockWorkloadArb } from '../../../../support/workloadArbitraries';

// Hand-worked scenarios for SGLang's radix cache (docs/design/simulator.md §2) as radixEngine.ts
// models it. Every step costs exactly 1 ms (no per-token costs), so times are step
// counts. Capacities are in tokens: the radix cache has no blocks.
const STEP_ONLY: EngineParams = { ...VLLM_STEP_ONLY, policy: 'sglang-lru' };

/** Runs the radix engine (self-checking) and returns the records by session; `steps` collects the per-step state. */
function run(sessions: Sessions, params: Partial<EngineParams>, sharedPrefixTokens = 0, steps?: RadixStepState[]): CallRecord[][] {
  return recordsBySession(sessions, sharedPrefixTokens, (plan) => runRadix(plan, { ...STEP_ONLY, ...params }, { selfCheck: true, onStep: (s) => steps?.push(s) }));
}

/** The same workload under vLLM's block pool (16-token blocks). */
function runVllm(sessions: Sessions, params: Partial<EngineParams>, sharedPrefixTokens = 0): CallRecord[][] {
  return recordsBySession(sessions, sharedPrefixTokens, (plan) => runReference(plan, { ...STEP_ONLY, ...params, policy: 'vllm-lru' }));
}

const near = (a: number | null, b: number): boolean => a !== null && Math.abs(a - b) < 1e-12;

describe('radix engine: SGLang RadixCache rules, worked by hand', () => {
  it('token-level hits: a 40-token shared prefix hits all 40 tokens, where vLLM hits 2 blocks = 32', () => {
    // s0's call (100 tokens, the first 40 shared) is inserted when it finishes at 1 ms. s1 arrives at
    // 1 s and matches the 40 shared tokens exactly; its own tokens differ from position 40 on.
    const sessions = [
      { startS: 0, calls: [call(100, 0, 1)] },
      { startS: 1, calls: [call(100, 0, 1)] },
    ];
    const [, [radix]] = run(sessions, { capacityTokens: 4096 }, 40) as [CallRecord[], CallRecord[]];
    const [, [vllm]] = runVllm(sessions, { capacityTokens: 4096 }, 40) as [CallRecord[], CallRecord[]];
    assert.equal(radix!.hitTokens, 40);
    assert.equal(radix!.idealHitTokens, 40);
    assert.equal(vllm!.hitTokens, 32);
  });

  it('the next turn hits every computed token: prompt + output − 1, not rounded to blocks', () => {
    // Call 0: 30-token prompt, 5 outputs. At its finish the tree gets the 34 computed tokens (the 5th
    // output is sampled, never computed). Call 1 re-sends all 35 and hits 34 (= its len − 1 cap too);
    // vLLM hits floor(34 / 16) = 2 blocks = 32.
    const sessions = [{ startS: 0, calls: [call(30, 0, 5), call(35, 35, 1)] }];
    assert.equal(run(sessions, { capacityTokens: 1024 })[0]![1]!.hitTokens, 34);
    assert.equal(runVllm(sessions, { capacityTokens: 1024 })[0]![1]!.hitTokens, 32);
  });

  it('the len − 1 cap: a fully cached prompt recomputes only its last token', () => {
    // Call 0 computes its 32 prompt tokens. Call 1 is the same 32 tokens: match_prefix looks at the
    // first 31 only (splitting the 32-token node at 31) and prefills 1 token. vLLM: floor(31/16) = 1
    // block = 16.
    const [[, second]] = run([{ startS: 0, calls: [call(32, 0, 1), call(32, 32, 1)] }], { capacityTokens: 1024 }) as [CallRecord[]];
    assert.equal(second!.hitTokens, 31);
    assert.equal(second!.idealHitTokens, 31);
    const [[, vllmSecond]] = runVllm([{ startS: 0, calls: [call(32, 0, 1), call(32, 32, 1)] }], { capacityTokens: 1024 }) as [CallRecord[]];
    assert.equal(vllmSecond!.hitTokens, 16);
    // One more token (its previous output) and all 32 computed tokens hit.
    const [[, third]] = run([{ startS: 0, calls: [call(32, 0, 1), call(33, 33, 1)] }], { capacityTokens: 1024 }) as [CallRecord[]];
    assert.equal(third!.hitTokens, 32);
  });

  it('LRU leaf eviction: the older unlocked leaf goes first, whole, even when that frees more than needed', () => {
    // 100 tokens. s0 (40 tokens) finishes at 1 ms: leaf A [0,40). s1 (40 tokens) at 10 ms: leaf B,
    // newer. s2 (30 tokens) at 20 ms finds 100 − 80 = 20 free: the shortfall is 10, and the oldest
    // leaf, A, goes whole (40 tokens; trimming 10 would have left s0 30). s1's second call (0.5 s
    // later, its 40 tokens + its sampled token) still hits B's 40; s0's, at 1 s, hits nothing.
    const steps: RadixStepState[] = [];
    const [[, s0Next], [, s1Next], [s2]] = run(
      [
        { startS: 0, calls: [call(40, 0, 1, 1), call(41, 41, 1)] },
        { startS: 0.01, calls: [call(40, 0, 1, 0.5), call(41, 41, 1)] },
        { startS: 0.02, calls: [call(30, 0, 1)] },
      ],
      { capacityTokens: 100 },
      0,
      steps,
    ) as [CallRecord[], CallRecord[], CallRecord[]];
    assert.equal(s2!.hitTokens, 0);
    assert.equal(s1Next!.hitTokens, 40);
    assert.equal(s0Next!.hitTokens, 0);
    assert.equal(s0Next!.idealHitTokens, 40);
    assert.equal(s0Next!.recomputedTokens, 40);
    // The step that admitted s2: the tree holds B only (40) and s2's 30-token chunk is private, so
    // 30 tokens sit free that a block-exact eviction would have kept cached.
    const admit = steps.find((s) => near(s.nowS, 0.02))!;
    assert.deepEqual([admit.treeTokens, admit.privateTokens], [40, 30]);
  });

  it('a locked path is never evicted: an older node of a running request stays, a newer unlocked leaf goes', () => {
    // 100 tokens. A (40-token prompt, 30 outputs) prefills in step 1; its 40 tokens go into the tree,
    // locked while it runs, and are not touched again: the oldest node. B (20 tokens) arrives during
    // step 2, runs in step 3 and leaves an unlocked leaf. C (40 tokens) arrives during step 5; at
    // step 6 (t = 5 ms) the tree holds A 40 + B 20 and A holds 5 private decode tokens: 35 free,
    // shortfall 5. The only candidate is B's leaf (A's is locked), so B goes, and C starts at once.
    // A's next call (its 69 computed tokens + the sampled one) still hits all 69; B's hits nothing.
    const [[, aNext], [, bNext], [c]] = run(
      [
        { startS: 0, calls: [call(40, 0, 30, 0.5), call(70, 70, 1)] },
        { startS: 0.0015, calls: [call(20, 0, 1, 1), call(21, 21, 1)] },
        { startS: 0.0045, calls: [call(40, 0, 1)] },
      ],
      { capacityTokens: 100 },
    ) as [CallRecord[], CallRecord[], CallRecord[]];
    assert.ok(near(c!.admittedS, 0.005), `C admitted at ${c!.admittedS}`);
    assert.equal(bNext!.hitTokens, 0);
    assert.equal(bNext!.idealHitTokens, 20);
    assert.equal(aNext!.hitTokens, 69);
  });

  it('a match refreshes its path even when the request cannot be admitted yet', () => {
    // 100 tokens. s0's call 0 leaves A [0,30) at 1 ms; s1's leaves B [0,30) at 2.5 ms (newer). R
    // (35-token prompt, 10 outputs) runs from 2.5 ms, its prompt locked: 5 tokens free. s0's call 1
    // (H: 80 tokens, hits A's 30, needs 50) arrives at 6.5 ms and stays blocked (free 1 + B's 30 <
    // 50), but every step's match_prefix refreshes A. At 8.5 ms R's decode needs a token and none is
    // free: the least recently used leaf is now B, not A. When R ends (12.5 ms) H gets in with its
    // 30-token hit; B's next call hits nothing.
    const [[, h], [, bNext]] = run(
      [
        { startS: 0, calls: [call(30, 0, 1, 0.0055), call(80, 31, 1)] },
        { startS: 0.0015, calls: [call(30, 0, 1, 1), call(31, 31, 1)] },
        { startS: 0.0025, calls: [call(35, 0, 10)] },
      ],
      { capacityTokens: 100 },
    ) as [CallRecord[], CallRecord[], CallRecord[]];
    assert.ok(near(h!.admittedS, 0.0125), `H admitted at ${h!.admittedS}`);
    assert.equal(h!.hitTokens, 30);
    assert.equal(bNext!.hitTokens, 0);
    assert.equal(bNext!.idealHitTokens, 30);
  });

  it("a session's prefix survives a short tool wait and is lost in a long one", () => {
    // 128 tokens. Call 0 (64 tokens) leaves node [0,64). After 50 ms call 1 (prefix 65: call 0's 64
    // tokens and its sampled token) hits 64 and adds leaf [64,80). During the 5 s wait s1 arrives with
    // 100 tokens: 48 free, shortfall 52; the leaf [64,80) goes (16), then its parent [0,64), now an
    // unlocked leaf (64). Call 2 hits nothing of its ideal 80. (vLLM, block by block from the tail,
    // kept the first block: 16 tokens; referenceEngine.test.ts.)
    const long = run(
      [
        { startS: 0, calls: [call(64, 0, 1, 0.05), call(80, 65, 1, 5), call(96, 81, 1)] },
        { startS: 1, calls: [call(100, 0, 1)] },
      ],
      { capacityTokens: 128 },
    );
    const [second, third] = [long[0]![1]!, long[0]![2]!];
    assert.equal(second.hitTokens, 64);
    assert.equal(third.hitTokens, 0);
    assert.equal(third.idealHitTokens, 80);
    assert.equal(third.recomputedTokens, 80);
    // With a 60-token s1 the shortfall is 12: the 16-token leaf alone covers it, and call 2 keeps 64.
    const short = run(
      [
        { startS: 0, calls: [call(64, 0, 1, 0.05), call(80, 65, 1, 5), call(96, 81, 1)] },
        { startS: 1, calls: [call(60, 0, 1)] },
      ],
      { capacityTokens: 128 },
    );
    assert.equal(short[0]![2]!.hitTokens, 64);
    assert.equal(short[0]![2]!.recomputedTokens, 16);
  });

  it('preemption of the last running request, and its recompute', () => {
    // 100 tokens; A and B each: 30-token prompt, 30 outputs (peak 59). Both prefill in step 1 and
    // their prompts go into the tree, locked (60). After step k each holds k − 1 private decode
    // tokens, so after step 21 all 100 are used. At step 22 A needs one token: nothing is evictable,
    // so B (the last) is preempted: its 20 private tokens are freed, never inserted, and its [0,30)
    // is unlocked. B (30 + 21 sampled = 51 tokens) stays blocked while A runs (A's decode tokens
    // use the free room and B's own prefix cannot be evicted for it). A ends at step 30 (30 ms).
    // At step 31 B hits its 30 prompt tokens (the least recent leaf, A's [30,59), makes room) and
    // prefills the other 21: the 20 decode tokens it had computed and its last sampled one; it
    // samples its 22nd token at once and finishes 8 decode steps later, at 39 ms. It prefilled
    // 30 + 21 tokens where an infinite cache leaves 30: 21 recomputed.
    const [[a], [b]] = run(
      [
        { startS: 0, calls: [call(30, 0, 30)] },
        { startS: 0, calls: [call(30, 0, 30)] },
      ],
      { capacityTokens: 100 },
    ) as [CallRecord[], CallRecord[]];
    assert.equal(a!.preemptions, 0);
    assert.equal(b!.preemptions, 1);
    assert.equal(b!.hitTokens, 0); // recorded at its first admission
    assert.equal(b!.prefillTokens, 51);
    assert.equal(b!.recomputedTokens, 21);
    assert.ok(near(a!.finishedS, 0.03), `A finished at ${a!.finishedS}`);
    assert.ok(near(b!.finishedS, 0.039), `B finished at ${b!.finishedS}`);
  });

  it('a request longer than the cache is rejected, to the token, and its session goes on', () => {
    // 128 tokens: at its longest a request holds prompt + output − 1 computed tokens.
    const [[fits]] = run([{ startS: 0, calls: [call(120, 0, 9)] }], { capacityTokens: 128 }) as [CallRecord[]];
    assert.equal(fits!.rejected, false);
    const [[big, small]] = run([{ startS: 0, calls: [call(120, 0, 10), call(32, 0, 1)] }], { capacityTokens: 128 }) as [CallRecord[]];
    assert.equal(big!.rejected, true);
    assert.equal(small!.rejected, false);
    assert.equal(small!.finishedS, 0.001);
  });

  it('chunks enter the tree at the end of their step: requests admitted together do not share', () => {
    // Two sessions with a 64-token shared prefix arrive together and are admitted in step 1. vLLM
    // keys the first one's blocks when it schedules them, so the second hits 64; in the radix tree
    // the first one's tokens arrive after the step (cache_unfinished_req), so the second hits 0.
    // A third session later hits the prefix in both.
    const sessions = [
      { startS: 0, calls: [call(100, 0, 1)] },
      { startS: 0, calls: [call(100, 0, 1)] },
      { startS: 1, calls: [call(100, 0, 1)] },
    ];
    const radix = run(sessions, { capacityTokens: 4096 }, 64);
    const vllm = runVllm(sessions, { capacityTokens: 4096 }, 64);
    assert.deepEqual(radix.map((s) => s[0]!.hitTokens), [0, 0, 64]);
    assert.deepEqual(vllm.map((s) => s[0]!.hitTokens), [0, 64, 64]);
  });

  it('block-hash traces: a hashed block is shared token by token, the partial last block never', () => {
    // 40-token prompts, 16-token blocks: two hashed blocks and an 8-token partial block, which has
    // keys of its own. The second request repeats both hashes (32 tokens hit, not 39); the third
    // differs from the second block on (16).
    const trace: BlockWorkload = {
      kind: 'requests',
      blockSizeTokens: 16,
      requests: [
        { id: 'a', arrivalS: 0, promptTokens: 40, outputTokens: 1, hashes: [1, 2, 3] },
        { id: 'b', arrivalS: 1, promptTokens: 40, outputTokens: 1, hashes: [1, 2, 3] },
        { id: 'c', arrivalS: 2, promptTokens: 40, outputTokens: 1, hashes: [1, 5, 3] },
      ],
    };
    const o = runRadix(planWorkload(trace, 16), { ...STEP_ONLY, capacityTokens: 1024 }, { selfCheck: true });
    assert.deepEqual(o.records.map((r) => r.hitTokens), [0, 32, 16]);
  });

  it('an offload tier is refused with sglang-lru, by name', () => {
    assert.throws(
      () => validateParams({ ...DEFAULT_PARAMS, policy: 'sglang-lru', offload: { capacityTokens: 4096, bandwidthGBps: 25 } }),
      (e: unknown) => e instanceof ParamError && /^offload must be null with policy 'sglang-lru'/.test(e.message),
    );
    assert.doesNotThrow(() => validateParams({ ...DEFAULT_PARAMS, policy: 'vllm-lru', offload: { capacityTokens: 4096, bandwidthGBps: 25 } }));
  });
});

// Random small workloads (short prompts, tiny caches, small token budgets: eviction, chunked
// prefill, preemption and rejection all happen), from workloadArbitraries.ts as in engines.property.test.ts.

const RUNS = Number(process.env['PROPERTY_RUNS'] ?? 200);

const paramsArb: fc.Arbitrary<EngineParams> = fc
  .record({
    // Tokens, not blocks: capacities that are no multiple of 16 too.
    capacity: fc.integer({ min: 24, max: 640 }),
    budget: fc.integer({ min: 8, max: 256 }),
    seqs: fc.integer({ min: 1, max: 8 }),
    stepMs: fc.double({ min: 0.5, max: 30, noNaN: true }),
    prefillUs: fc.double({ min: 0, max: 200, noNaN: true }),
    kvNs: fc.double({ min: 0, max: 200, noNaN: true }),
  })
  .map((x) => ({
    ...DEFAULT_PARAMS,
    policy: 'sglang-lru' as const,
    capacityTokens: x.capacity,
    maxNumBatchedTokens: x.budget,
    maxNumSeqs: x.seqs,
    stepFixedMs: x.stepMs,
    prefillUsPerToken: x.prefillUs,
    kvReadNsPerToken: x.kvNs,
  }));

/** Runs with the engine's self-checks (tree recount, private tokens, used ≤ capacity after every step) and checks the records. */
function checkedRun(plan: ReturnType<typeof planWorkload>, p: EngineParams): EngineOutcome {
  let peak = 0;
  const o = runRadix(plan, p, { selfCheck: true, onStep: (s) => (peak = Math.max(peak, s.treeTokens + s.privateTokens)) });
  assert.ok(peak <= Math.floor(p.capacityTokens), `used ${peak} of ${p.capacityTokens}`);
  for (const r of o.records) {
    assert.ok(r.finishedS !== null, `request ${r.request} never finished`);
    if (r.rejected) {
      assert.ok(r.promptTokens + r.outputTokens - 1 > p.capacityTokens);
      continue;
    }
    assert.ok(r.hitTokens <= r.idealHitTokens, `request ${r.request}: hit ${r.hitTokens} > ideal ${r.idealHitTokens}`);
    assert.ok(r.idealHitTokens <= r.promptTokens - 1 || r.idealHitTokens === 0, `request ${r.request}: ideal ${r.idealHitTokens} not below its prompt`);
    assert.ok(r.finishedS >= r.arrivalS, `request ${r.request} finished before it arrived`);
    assert.ok(r.admittedS !== null && r.admittedS >= r.arrivalS);
    assert.equal(r.offloadHitTokens, 0);
  }
  assert.ok(o.totals.vllmHits <= o.totals.vllmQueries);
  return o;
}

describe('the engine table', () => {
  it('the block-pool engines refuse sglang-lru instead of running it as vLLM', () => {
    const plan = planWorkload({ kind: 'sessions', sharedPrefixTokens: 0, sessions: [{ id: 'a', startS: 0, calls: [{ promptTokens: 40, prefixTokens: 0, outputTokens: 4, toolWaitS: 0 }] }] }, 16);
    for (const run of [runFast, runReference]) assert.throws(() => run(plan, { ...STEP_ONLY, policy: 'sglang-lru' }), /radix engine/);
  });
});

describe('radix engine on random workloads (property tests)', () => {
  it(`agent workloads: invariants hold, and both engine names run sglang-lru on it (${RUNS} cases)`, () => {
    fc.assert(
      fc.property(agentWorkloadArb(true), paramsArb, (w, p) => {
        const o = checkedRun(planWorkload(w, 16), p);
        assert.deepEqual(engineByName('reference')(planWorkload(w, 16), p), o);
        assert.deepEqual(engineByName('fast')(planWorkload(w, 16), p), o);
      }),
      { numRuns: RUNS, seed: Number(process.env['PROPERTY_SEED'] ?? 20261201) },
    );
  });

  it(`block-hash workloads: invariants hold, and the fast engine name runs sglang-lru on it (${RUNS} cases)`, () => {
    fc.assert(
      fc.property(blockWorkloadArb, paramsArb, (w, p) => {
        const o = checkedRun(planWorkload(w, 16), p);
        assert.deepEqual(engineByName('fast')(planWorkload(w, 16), p), o);
      }),
      { numRuns: RUNS, seed: Number(process.env['PROPERTY_SEED'] ?? 12012026) },
    );
  });

  it(`without prefix sharing and with room for everything, the times are vLLM's (${RUNS} cases)`, () => {
    // Nothing is ever hit and nothing evicted or preempted, so both engines schedule the same
    // chunks in the same steps, and the same integer-ns step cost gives the same clock.
    fc.assert(
      fc.property(agentWorkloadArb(false), paramsArb, (w, p) => {
        const roomy = { ...p, capacityTokens: 1 << 20 };
        const radix = runRadix(planWorkload(w, 16), roomy);
        const vllm = runReference(planWorkload(w, 16), { ...roomy, policy: 'vllm-lru' });
        assert.deepEqual(radix, vllm);
      }),
      { numRuns: RUNS, seed: Number(process.env['PROPERTY_SEED'] ?? 1201) },
    );
  });
});
