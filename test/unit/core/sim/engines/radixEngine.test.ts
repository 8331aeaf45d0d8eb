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
function run(
  sessions: Sessions,
  params: Partial<EngineParams>,
  sharedPrefixTokens = 0,
  steps?: RadixStepState[],
): CallRecord[][] {
  return recordsBySession(sessions, sharedPrefixTokens, (plan) =>
    runRadix(plan, { ...STEP_ONLY, ...params }, { selfCheck: true, onStep: (s) => steps?.push(s) }),
  );
}

/** The same workload under vLLM's block pool (16-token blocks). */
function runVllm(sessions: Sessions, params: Partial<EngineParams>, sharedPrefixTokens = 0): CallRecord[][] {
  return recordsBySession(sessions, sharedPrefixTokens, (plan) =>
    runReference(plan, { ...STEP_ONLY, ...params, policy: 'vllm-lru' }),
  );
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
    const [[, second]] = run([{ startS: 0, calls: [call(32, 0, 1), call(32, 32, 1)] }], { capacityTokens: 1024 }) as [
      CallRecord[],
    ];
    assert.equal(second!.hitTokens, 31);
    assert.equal(second!.idealHitTokens, 31);
    const [[, vllmSecond]] = runVllm([{ startS: 0, calls: [call(32, 0, 1), call(32, 32, 1)] }], {
      capacityTokens: 1024,
    }) as [CallRecord[]];
    assert.equal(vllmSecond!.hitTokens, 16);
    // One more token (its previous output) and all 32 computed tokens hit.
    const [[, third]] = run([{ startS: 0, calls: [call(32, 0, 1), call(33, 33, 1)] }], { capacityTokens: 1024 }) as [
      CallRecord[],
    ];
    assert.equal(third!.hitTokens, 32);
  });

  it('LRU leaf eviction: the older unlocked leaf goes first, whole, even when that frees more than needed', () => {
    // 100 tokens. s0 (40 tokens) finishes at 1 ms: leaf A [0,40). s1 (40 tokens) at 10 ms: leaf B,
    // newer. s2 (30 tokens) at 20 ms finds 100 − 80 = 20 free, so SGLang evicts 30 (its size), and
    // the oldest leaf, A, goes whole (40 tokens; trimming 30 would have left s0 10). s1's second call (0.5 s
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

  it('admission reserves the running requests’ future outputs; then eviction frees whole leaves, oldest first, and stops at the request’s size', () => {
    // 100 tokens. A (40-token prompt, 30 outputs) is admitted at once: 40 + 30 + a page (1) = 71 <
    // 100 (PrefillAdder.add_one_req). B (20 tokens, 1 output) arrives during step 2: A holds 41
    // tokens and reserves its 28 outputs still to come × new_token_ratio ≈ 0.7 (≈ 19.6), so 100 −
    // 41 − 19.6 ≈ 39 > 20 + 1 + 1 and B runs in step 3 (t = 2 ms), leaving an unlocked 20-token
    // leaf. C (40 tokens, 1 output) arrives during step 5: 100 − A's 43 − 26 × ≈ 0.7 ≈ 39 (B's
    // leaf counts as free) < 42, so C waits until A ends at 31 ms (a block pool would have let it in).
    // A's end leaves [0,40) with a [40,69) leaf; 11 tokens are free, C needs 40, so SGLang evicts
    // 40 (not the 29 missing): B's leaf (20, the oldest) then A's [40,69) (29). A's next call hits
    // the 40 tokens of [0,40) only; B's next call hits nothing.
    const [[a, aNext], [, bNext], [c]] = run(
      [
        { startS: 0, calls: [call(40, 0, 30, 0.5), call(70, 70, 1)] },
        { startS: 0.0015, calls: [call(20, 0, 1, 1), call(21, 21, 1)] },
        { startS: 0.0045, calls: [call(40, 0, 1)] },
      ],
      { capacityTokens: 100 },
    ) as [CallRecord[], CallRecord[], CallRecord[]];
    assert.ok(near(a!.finishedS, 0.031), `A finished at ${a!.finishedS}`);
    assert.ok(near(c!.admittedS, 0.031), `C admitted at ${c!.admittedS}`);
    assert.equal(bNext!.hitTokens, 0);
    assert.equal(bNext!.idealHitTokens, 20);
    assert.equal(aNext!.hitTokens, 40);
    assert.equal(aNext!.idealHitTokens, 69);
  });

  it('a short allocation evicts the whole request’s size, not the shortfall: a prefix survives only when nothing is missing', () => {
    // 128 tokens. Call 0 (64 tokens) leaves node [0,64). After 50 ms call 1 (prefix 65: call 0's 64
    // tokens and its sampled token) hits 64 and adds leaf [64,80): 48 tokens free. During the 5 s
    // tool wait s1 arrives. With 48 tokens it fits in the free room and nothing is evicted: call 2
    // hits all 80. With 49 tokens one token is missing, and SGLang evicts 49
    // (mem_cache/common.py evict_from_tree_cache): the leaf [64,80) (16), then its parent [0,64),
    // now an unlocked leaf (64). Call 2 hits nothing of its ideal 80 (evicting the shortfall would
    // have kept 64).
    const runWith = (s1: number): CallRecord[][] =>
      run(
        [
          { startS: 0, calls: [call(64, 0, 1, 0.05), call(80, 65, 1, 5), call(96, 81, 1)] },
          { startS: 1, calls: [call(s1, 0, 1)] },
        ],
        { capacityTokens: 128 },
      );
    const fits = runWith(48);
    assert.equal(fits[0]![1]!.hitTokens, 64);
    assert.equal(fits[0]![2]!.hitTokens, 80);
    const short = runWith(49);
    assert.equal(short[0]![2]!.hitTokens, 0);
    assert.equal(short[0]![2]!.idealHitTokens, 80);
    assert.equal(short[0]![2]!.recomputedTokens, 80);
  });

  it('a decode that finds no room retracts the request with the fewest outputs, which re-prefills what it had', () => {
    // 200 tokens; A and B each: 10-token prompt, 100 outputs. A is admitted at 0 (10 + 100 + 1 =
    // 111 < 200). B arrives during step 2 and is admitted in step 3 (t = 2 ms): A holds 11 tokens
    // and its 98 outputs still to come count at new_token_ratio ≈ 0.7, so 200 − 11 − ≈ 69 ≈ 120 >
    // 111, though both need 220 in the end. At step 93 (t = 92 ms) A holds 10 + 90 and B 10 + 89
    // tokens: the next decode needs 2, 1 is free and nothing is evictable (both paths locked), so
    // retract_decode takes B (90 outputs to A's 91),
    // frees its KV without inserting it and queues it again. A ends at 101 ms; B comes back with
    // its prompt (in the tree since its prefill) hit and re-prefills the other 90 tokens (its
    // 89 decode tokens and its last sampled one), evicting A's 99-token leaf to make room for
    // them; 10 more outputs end it at 111 ms.
    const [[a], [b]] = run(
      [
        { startS: 0, calls: [call(10, 0, 100)] },
        { startS: 0.0015, calls: [call(10, 0, 100)] },
      ],
      { capacityTokens: 200 },
    ) as [CallRecord[], CallRecord[]];
    assert.equal(a!.preemptions, 0);
    assert.equal(b!.preemptions, 1);
    assert.equal(b!.hitTokens, 0); // recorded at its first admission
    assert.equal(b!.prefillTokens, 100);
    assert.ok(near(a!.finishedS, 0.101), `A finished at ${a!.finishedS}`);
    assert.ok(near(b!.finishedS, 0.111), `B finished at ${b!.finishedS}`);
  });

  it('a prompt too long for the pool is refused (max_req_input_len), a long output is clipped, and the session goes on', () => {
    // 128 tokens: max_req_len = 127 and prompts of max_req_len − 5 = 122 tokens or more are refused
    // (managers/utils.py validate_input_length). A 121-token prompt is served, its 10 outputs clipped
    // to 128 − 121 − 1 (a page) − 1 = 5 (init_req_max_new_tokens): it ends after 5 steps.
    const [[fits]] = run([{ startS: 0, calls: [call(121, 0, 10)] }], { capacityTokens: 128 }) as [CallRecord[]];
    assert.equal(fits!.rejected, false);
    assert.ok(near(fits!.finishedS, 0.005), `finished at ${fits!.finishedS}`);
    const [[big, small]] = run([{ startS: 0, calls: [call(122, 0, 1), call(32, 0, 1)] }], { capacityTokens: 128 }) as [
      CallRecord[],
    ];
    assert.equal(big!.rejected, true);
    assert.equal(small!.rejected, false);
    assert.equal(small!.finishedS, 0.001);
  });

  it('pages: hits are whole pages, and a page-16 pool evicts and allocates pages', () => {
    // The first test's 40-token shared prefix at page size 16: the match rounds down to pages
    // (RadixKey.match), so the second session hits 32 tokens, as vLLM's 16-token blocks do.
    const sessions = [
      { startS: 0, calls: [call(100, 0, 1)] },
      { startS: 1, calls: [call(100, 0, 1)] },
    ];
    const [, [paged]] = run(sessions, { capacityTokens: 4096, sglangPageSizeTokens: 16 }, 40) as [
      CallRecord[],
      CallRecord[],
    ];
    assert.equal(paged!.hitTokens, 32);
    assert.equal(paged!.idealHitTokens, 32);
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
    assert.deepEqual(
      radix.map((s) => s[0]!.hitTokens),
      [0, 0, 64],
    );
    assert.deepEqual(
      vllm.map((s) => s[0]!.hitTokens),
      [0, 64, 64],
    );
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
    assert.deepEqual(
      o.records.map((r) => r.hitTokens),
      [0, 32, 16],
    );
  });

  it('an offload tier is refused with sglang-lru, by name', () => {
    assert.throws(
      () =>
        validateParams({
          ...DEFAULT_PARAMS,
          policy: 'sglang-lru',
          offload: { capacityTokens: 4096, bandwidthGBps: 25 },
        }),
      (e: unknown) => e instanceof ParamError && /^offload must be null with policy 'sglang-lru'/.test(e.message),
    );
    assert.doesNotThrow(() =>
      validateParams({ ...DEFAULT_PARAMS, policy: 'vllm-lru', offload: { capacityTokens: 4096, bandwidthGBps: 25 } }),
    );
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
    pageSize: fc.constantFrom(1, 16),
  })
  .map((x) => ({
    ...DEFAULT_PARAMS,
    policy: 'sglang-lru' as const,
    // SGLang needs two pages at least.
    capacityTokens: Math.max(x.capacity, 2 * x.pageSize),
    sglangPageSizeTokens: x.pageSize,
    maxNumBatchedTokens: Math.max(x.budget, x.pageSize),
    maxNumSeqs: x.seqs,
    stepFixedMs: x.stepMs,
    prefillUsPerToken: x.prefillUs,
    kvReadNsPerToken: x.kvNs,
  }));

/** Runs with the engine's self-checks (tree recount, private tokens, used ≤ capacity after every step) and checks the records. */
function checkedRun(plan: ReturnType<typeof planWorkload>, p: EngineParams): EngineOutcome {
  let peak = 0;
  const o = runRadix(plan, p, {
    selfCheck: true,
    onStep: (s) => (peak = Math.max(peak, s.treeTokens + s.privateTokens)),
  });
  assert.ok(peak <= Math.floor(p.capacityTokens), `used ${peak} of ${p.capacityTokens}`);
  for (const r of o.records) {
    assert.ok(r.finishedS !== null, `request ${r.request} never finished`);
    if (r.rejected) {
      // validate_input_length: prompts of max_req_input_len (the pool − 6) tokens or more; or a
      // prompt whose pages and one more fill the pool (its output clipped to nothing, it never fits).
      const ps = p.sglangPageSizeTokens;
      const pool = Math.floor(p.capacityTokens / ps) * ps;
      const tooLong = r.promptTokens >= Math.min(p.maxModelLenTokens - 1, pool - 1) - 5;
      assert.ok(
        tooLong || Math.ceil(r.promptTokens / ps) * ps + ps >= pool,
        `request ${r.request} (${r.promptTokens} tokens) refused`,
      );
      continue;
    }
    assert.ok(r.hitTokens <= r.idealHitTokens, `request ${r.request}: hit ${r.hitTokens} > ideal ${r.idealHitTokens}`);
    assert.ok(
      r.idealHitTokens <= r.promptTokens - 1 || r.idealHitTokens === 0,
      `request ${r.request}: ideal ${r.idealHitTokens} not below its prompt`,
    );
    assert.ok(r.finishedS >= r.arrivalS, `request ${r.request} finished before it arrived`);
    assert.ok(r.admittedS !== null && r.admittedS >= r.arrivalS);
    assert.equal(r.offloadHitTokens, 0);
  }
  assert.ok(o.totals.vllmHits <= o.totals.vllmQueries);
  return o;
}

describe('the engine table', () => {
  it('the block-pool engines refuse sglang-lru instead of running it as vLLM', () => {
    const plan = planWorkload(
      {
        kind: 'sessions',
        sharedPrefixTokens: 0,
        sessions: [
          { id: 'a', startS: 0, calls: [{ promptTokens: 40, prefixTokens: 0, outputTokens: 4, toolWaitS: 0 }] },
        ],
      },
      16,
    );
    for (const run of [runFast, runReference])
      assert.throws(() => run(plan, { ...STEP_ONLY, policy: 'sglang-lru' }), /radix engine/);
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

  it(`without prefix sharing and with room for everything, nothing is hit, evicted or retracted (${RUNS} cases)`, () => {
    // Every token is fresh and the pool holds every call at once: each call prefills its whole
    // prompt, SGLang's counters see no cached token, and the tree never has to give anything back.
    fc.assert(
      fc.property(agentWorkloadArb(false), paramsArb, (w, p) => {
        const plan = planWorkload(w, 16);
        const roomy = { ...p, capacityTokens: 1 << 20 };
        const o = runRadix(plan, roomy, { selfCheck: true });
        for (const r of o.records) {
          assert.equal(r.rejected, false);
          assert.equal(r.hitTokens, 0);
          assert.equal(r.prefillTokens, r.promptTokens);
        }
        assert.equal(o.totals.preemptions, 0);
        assert.equal(o.totals.evictedTokens, 0);
        assert.equal(o.totals.sglangCachedTokens, 0);
        // #new-token counts each admitted chunk rounded up to pages.
        assert.ok(o.totals.sglangNewTokens! >= o.records.reduce((a, r) => a + r.promptTokens, 0));
      }),
      { numRuns: RUNS, seed: Number(process.env['PROPERTY_SEED'] ?? 1201) },
    );
  });
});
