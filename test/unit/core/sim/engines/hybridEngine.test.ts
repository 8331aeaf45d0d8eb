import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallRecord } from '../../../../../src/core/sim/engines/engineTypes';
import { engineByName } from '../../../../../src/core/sim/engines/engineTable';
import { runHybrid } from '../../../../../src/core/sim/engines/hybridEngine';
import { runReference } from '../../../../../src/core/sim/engines/referenceEngine';
import { MODEL_PRESETS, ParamError, validateParams } from '../../../../../src/core/sim/params';
import type { EngineParams, KvLayout } from '../../../../../src/core/sim/params';
import { call, recordsBySession, STEP_ONLY } from '../../../../support/handWorked';
import type { Sessions } from '../../../../support/handWorked';

// vLLM's hybrid KV-cache manager (docs/design/simulator.md §1.8) worked by hand on a 12-block pool
// of 16-token blocks. The equality with vLLM's own code on real sessions is the oracle suite's
// (test/oracle/vllmHybridOracle.test.ts); here, why the figures come out as they do.

const SLIDING_32: KvLayout = {
  fullGroups: 1,
  other: 'sliding-window',
  windowTokens: 32,
  otherGroups: 1,
  otherFirst: false,
};

function run(sessions: Sessions, params: Partial<EngineParams>, shared: number): CallRecord[][] {
  return recordsBySession(sessions, shared, (plan) =>
    runHybrid(plan, { ...STEP_ONLY, ...params }, { selfCheck: true }),
  );
}

describe('hybrid engine: sliding window beside full attention, worked by hand', () => {
  // s0's first call is the 96-token shared prefix (6 blocks), prefilled 32 tokens a step. Each step
  // allocates the full group's blocks first, then the sliding group's, from the head of the free
  // queue b0…b11: step 1 gives full b0 b1, sliding b2 b3; step 2 full b4 b5, sliding b6 b7. Before
  // step 3, 64 tokens are computed: the window (32) needs only tokens 33…63, so the sliding blocks
  // of tokens 0…31 (b3, then b2) are freed to the tail, still cached. Step 3: full b8 b9, sliding
  // b10 b11. At the finish both tables go back tail first: the queue is b3 b2 | b9 b8 b5 b4 b1 b0 |
  // b11 b10 b7 b6. s1 (at 100 s) shares the 96 tokens: the full group hits 6 blocks and the
  // sliding group needs 2 cached blocks in a row (ceil(31/16)) at the end of that run: b11 b10.
  const alone: Sessions = [
    { startS: 0, calls: [call(96, 0, 1)] },
    { startS: 100, calls: [call(112, 0, 1)] },
  ];
  // s0's second call (48 fresh tokens) takes 6 blocks from the head first: b3 b2 (the prefix's
  // sliding blocks 1 and 0) and b9 b8 (its full blocks 5 and 4), then b5 and b4 (full blocks 2 and 3).
  // s1's full-attention run is now blocks 0–1 (b0 b1); within it, the sliding group holds nothing:
  // no hit at all, though the full layers still hold 32 tokens.
  const evicted: Sessions = [
    { startS: 0, calls: [call(96, 0, 1), call(48, 0, 1, 1)] },
    { startS: 100, calls: [call(112, 0, 1)] },
  ];
  const params = { capacityTokens: 12 * 16, maxNumBatchedTokens: 32, kvLayout: SLIDING_32 };

  it('the next session hits the whole prefix while both groups hold it', () => {
    const [, [s1]] = run(alone, params, 96) as [CallRecord[], CallRecord[]];
    assert.equal(s1!.hitTokens, 96);
    assert.equal(s1!.idealHitTokens, 96);
  });

  it('blocks that left the window are evicted first, and without them nothing hits', () => {
    const [s0, [s1]] = run(evicted, params, 96) as [CallRecord[], CallRecord[]];
    assert.equal(s0[1]!.hitTokens, 0);
    assert.equal(s1!.hitTokens, 0);
    assert.equal(s1!.idealHitTokens, 96);
    assert.equal(s1!.prefillTokens, 112);
  });

  it('the same 12-block pool with every layer full attention keeps the whole prefix', () => {
    // One group: s0's prefix takes b0–b5 and frees them tail first after b6–b11; its second call takes b6–b8.
    const [, [s1]] = recordsBySession(evicted, 96, (plan) =>
      runReference(plan, { ...STEP_ONLY, capacityTokens: 12 * 16, maxNumBatchedTokens: 32 }),
    ) as [CallRecord[], CallRecord[]];
    assert.equal(s1!.hitTokens, 96);
  });

  it('both engine names run the hybrid engine when the parameters carry a layout', () => {
    const fast = recordsBySession(evicted, 96, (plan) => engineByName('fast')(plan, { ...STEP_ONLY, ...params }));
    assert.equal(fast[1]![0]!.hitTokens, 0);
  });
});

describe('hybrid engine: Mamba state groups beside full attention, worked by hand', () => {
  // One Mamba group numbered first (its model's first layer is a Mamba layer), one full-attention
  // group, 12 blocks of 16 tokens. s0's 96-token prefix is prefilled 32 tokens a step; each step the
  // Mamba group takes its 2 blocks first: Mamba b0 b1, full b2 b3; Mamba b4 b5, full b6 b7; Mamba b8
  // b9, full b10 b11. A Mamba group frees nothing while the request runs (one state per block). At the
  // finish the Mamba table goes back first, tail first: the queue is b9 b8 b5 b4 b1 b0 b11 b10 b7 b6 b3 b2.
  const MAMBA: KvLayout = { fullGroups: 1, other: 'mamba', windowTokens: 0, otherGroups: 1, otherFirst: true };
  const params = { capacityTokens: 12 * 16, maxNumBatchedTokens: 32, kvLayout: MAMBA };

  it('a hit ends at the last block whose state survived, however much the full layers still hold', () => {
    // s0's second call (16 fresh tokens) takes one block per group from the head: b9 and b8, the states
    // after the prefix's blocks 5 and 4. s1 then shares the 96 tokens: the full group still holds all 6
    // blocks, but from the right the first block whose state is cached is block 3 (b5): 4 blocks hit,
    // 64 tokens, the rest (112 − 64 = 48) is prefilled.
    const sessions: Sessions = [
      { startS: 0, calls: [call(96, 0, 1), call(16, 0, 1, 1)] },
      { startS: 100, calls: [call(112, 0, 1)] },
    ];
    const [, [s1]] = run(sessions, params, 96) as [CallRecord[], CallRecord[]];
    assert.equal(s1!.hitTokens, 64);
    assert.equal(s1!.idealHitTokens, 96);
    assert.equal(s1!.prefillTokens, 48);
  });

  it('while every state is there, the whole prefix hits', () => {
    const sessions: Sessions = [
      { startS: 0, calls: [call(96, 0, 1)] },
      { startS: 100, calls: [call(112, 0, 1)] },
    ];
    const [, [s1]] = run(sessions, params, 96) as [CallRecord[], CallRecord[]];
    assert.equal(s1!.hitTokens, 96);
  });

  it('without prefix caching nothing hits and a Mamba group holds one block, the state', () => {
    const noCaching = { ...params, kvLayout: { ...MAMBA, prefixCaching: false } };
    const shared: Sessions = [
      { startS: 0, calls: [call(96, 0, 1)] },
      { startS: 100, calls: [call(112, 0, 1)] },
    ];
    const [, [s1]] = run(shared, noCaching, 96) as [CallRecord[], CallRecord[]];
    assert.equal(s1!.hitTokens, 0);
    assert.equal(s1!.idealHitTokens, 0);
    assert.equal(s1!.prefillTokens, 112);
    // 160 tokens: 10 full-attention blocks + 1 state block fit the 12; with a state per block (20) they would not.
    const long: Sessions = [{ startS: 0, calls: [call(159, 0, 1)] }];
    const [[only]] = run(long, noCaching, 0) as [CallRecord[]];
    assert.equal(only!.prefillTokens, 159);
    assert.throws(() => run(long, params, 0), /nothing can be scheduled/);
  });
});

describe('hybrid layouts: what the parameters refuse', () => {
  const gptOss = MODEL_PRESETS.find((m) => m.id === 'gpt-oss-120b')!;
  const base: EngineParams = { ...STEP_ONLY, kvLayout: { ...gptOss.kvLayout! } };

  it('accepts the presets as they are', () => {
    for (const m of MODEL_PRESETS) validateParams({ ...STEP_ONLY, ...(m.kvLayout ? { kvLayout: m.kvLayout } : {}) });
  });

  it('refuses policies it does not model, a CPU tier, and chunks of part blocks', () => {
    assert.throws(() => validateParams({ ...base, policy: 'ttl-pin' }), ParamError);
    assert.throws(() => validateParams({ ...base, policy: 'sglang-lru' }), ParamError);
    assert.throws(
      () => validateParams({ ...base, offload: { capacityTokens: 1_000_000, bandwidthGBps: 25 } }),
      /offload must be null with a hybrid KV layout/,
    );
    assert.throws(
      () => validateParams({ ...base, kvLayout: { ...base.kvLayout!, other: 'chunked-local', windowTokens: 1000 } }),
      /a multiple of the block size \(16\)/,
    );
    assert.throws(() => validateParams({ ...base, kvLayout: { ...base.kvLayout!, fullGroups: 0 } }), /fullGroups/);
    assert.throws(
      () => validateParams({ ...base, kvLayout: { ...base.kvLayout!, prefixCaching: false } }),
      /prefixCaching/,
    );
  });
});
