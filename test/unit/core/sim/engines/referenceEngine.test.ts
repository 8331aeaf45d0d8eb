import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallRecord } from '../../../../../src/core/sim/engines/engineTypes';
import type { EngineParams } from '../../../../../src/core/sim/params';
import { runReference } from '../../../../../src/core/sim/engines/referenceEngine';
import { call, recordsBySession, STEP_ONLY } from '../../../../support/handWorked';
import type { Sessions } from '../../../../support/handWorked';

// Hand-worked scenarios for the vLLM rules of docs/design/simulator.md §0–1. Every step costs
// exactly 1 ms (no per-token costs), so times are step counts; blocks are 16 tokens.

function run(sessions: Sessions, params: Partial<EngineParams>, sharedPrefixTokens = 0): CallRecord[][] {
  return recordsBySession(sessions, sharedPrefixTokens, (plan) => runReference(plan, { ...STEP_ONLY, ...params }));
}

describe('reference engine: vLLM prefix-cache rules, worked by hand', () => {
  it('the n−1 cap: a fully cached, block-aligned prompt recomputes its whole last block', () => {
    // Call 0 computes its 32 prompt tokens (2 full blocks); its one output token is sampled, never computed.
    // Call 1 is those same 32 tokens: hit ≤ floor((32 − 1) / 16) = 1 block.
    const [[, second]] = run([{ startS: 0, calls: [call(32, 0, 1), call(32, 32, 1)] }], { capacityTokens: 1024 }) as [
      CallRecord[],
    ];
    assert.equal(second!.hitTokens, 16);
    assert.equal(second!.idealHitTokens, 16);
    // With one more token the cap allows both blocks: floor((33 − 1) / 16) = 2.
    const [[, third]] = run([{ startS: 0, calls: [call(32, 0, 1), call(33, 33, 1)] }], { capacityTokens: 1024 }) as [
      CallRecord[],
    ];
    assert.equal(third!.hitTokens, 32);
  });

  it('release order and LRU: the deepest blocks of the least recently released request are evicted first', () => {
    // 8 blocks. A (48 tokens = blocks a0 a1 a2) runs and frees them tail first: the queue becomes
    // [3 4 5 6 7 a2 a1 a0]. B needs 7 new blocks and pops 3 4 5 6 7 a2 a1. A's next call (its 48
    // tokens + its sampled token = 49, prefix 49) finds a0 only: 16 of the ideal 48 tokens.
    const [[, aNext], [b]] = run(
      [
        { startS: 0, calls: [call(48, 0, 1, 1), call(49, 49, 1)] },
        { startS: 0.1, calls: [call(112, 0, 1)] },
      ],
      { capacityTokens: 128 },
    ) as [CallRecord[], CallRecord[]];
    assert.equal(b!.hitTokens, 0);
    assert.equal(aNext!.hitTokens, 16);
    assert.equal(aNext!.idealHitTokens, 48);
    assert.equal(aNext!.recomputedTokens, 32);
  });

  it('current vLLM frees an unhashed partial block to the head; the legacy order costs one cached block', () => {
    // 8 blocks. X (48 tokens: x0 x1 x2 in blocks 0 1 2) ends: queue [3 4 5 6 7 2 1 0].
    // A (20 tokens) takes 3 (full, hashed) and 4 (partial) and ends. Current: 4 goes to the head,
    // 3 to the tail: [4 5 6 7 2 1 0 3]. Legacy: both to the tail: [5 6 7 2 1 0 4 3].
    // B needs 4 blocks: current pops 4 5 6 7 (nothing cached lost); legacy pops 5 6 7 2 (x2 lost).
    // X's next call (48 + 1 tokens) then hits 48 tokens (current) or 32 (legacy).
    const sessions = [
      { startS: 0, calls: [call(48, 0, 1, 2), call(49, 49, 1)] },
      { startS: 0.5, calls: [call(20, 0, 1)] },
      { startS: 1, calls: [call(64, 0, 1)] },
    ];
    assert.equal(run(sessions, { capacityTokens: 128, freeOrder: 'current' })[0]![1]!.hitTokens, 48);
    assert.equal(run(sessions, { capacityTokens: 128, freeOrder: 'legacy' })[0]![1]!.hitTokens, 32);
  });

  it('a session survives a short tool wait and loses its prefix in a long one', () => {
    // 8 blocks. Call 0: 64 tokens (a0–a3). After a 50 ms tool wait call 1 (prefix 65) hits all four.
    // During the 5 s wait after call 1, B takes 7 of the 8 blocks; call 2 then finds a0 only.
    const [[, second, third]] = run(
      [
        { startS: 0, calls: [call(64, 0, 1, 0.05), call(80, 65, 1, 5), call(96, 81, 1)] },
        { startS: 1, calls: [call(112, 0, 1)] },
      ],
      { capacityTokens: 128 },
    ) as [CallRecord[]];
    assert.equal(second!.hitTokens, 64);
    assert.equal(third!.hitTokens, 16);
    assert.equal(third!.idealHitTokens, 80);
  });

  it('preemption of the last running request, and its recompute', () => {
    // 6 blocks; A and B each: 30-token prompt, 20 output tokens (peak ceil(49/16) = 4 blocks).
    // Both reach 48 computed tokens (3 blocks each, 0 free) at step 20 and need a 4th: A, first in
    // the running list, preempts B (the last). B's 3 hashed blocks go to the tail; A pops B's
    // deepest. When B resumes (49 tokens: 30 + 19 sampled) it finds 2 blocks: 32 tokens, and
    // prefills the other 17: the 16 of its lost block and its last sampled token (never computed,
    // but now prefilled instead of decoded). It prefilled 30 + 17 = 47 tokens where an infinite
    // cache leaves 30 (nothing was cached when it first came): 17 recomputed.
    const [[a], [b]] = run(
      [
        { startS: 0, calls: [call(30, 0, 20)] },
        { startS: 0, calls: [call(30, 0, 20)] },
      ],
      { capacityTokens: 96 },
    ) as [CallRecord[], CallRecord[]];
    assert.equal(a!.preemptions, 0);
    assert.equal(b!.preemptions, 1);
    assert.equal(b!.prefillTokens, 47);
    assert.equal(b!.recomputedTokens, 17);
    assert.equal(b!.hitTokens, 0);
    // A finishes at the end of step 20.
    assert.ok(Math.abs(a!.finishedS! - 0.02) < 1e-12);
    assert.ok(b!.finishedS! > a!.finishedS!);
  });

  it('a request longer than the cache is rejected and its session goes on', () => {
    const [[big, small]] = run([{ startS: 0, calls: [call(200, 0, 1), call(32, 0, 1)] }], { capacityTokens: 128 }) as [
      CallRecord[],
    ];
    assert.equal(big!.rejected, true);
    assert.equal(small!.rejected, false);
    assert.equal(small!.finishedS, 0.001);
  });

  it('head-of-line blocking: a small request does not pass a blocked one', () => {
    // 4 blocks. A: 40-token prompt (3 blocks), 10 outputs (peak 4 blocks). B (40 tokens, 3 blocks)
    // arrives during step 1 and cannot fit beside A; C (8 tokens, 1 block) arrives during step 2
    // and would fit in the one free block, but waits behind B. A ends at the end of step 10;
    // B and C are both admitted at step 11 (t = 10 ms).
    const [, [b], [c]] = run(
      [
        { startS: 0, calls: [call(40, 0, 10)] },
        { startS: 0.0005, calls: [call(40, 0, 1)] },
        { startS: 0.0015, calls: [call(8, 0, 1)] },
      ],
      { capacityTokens: 64 },
    ) as [CallRecord[], CallRecord[], CallRecord[]];
    assert.ok(Math.abs(b!.admittedS! - 0.01) < 1e-12);
    assert.ok(Math.abs(c!.admittedS! - 0.01) < 1e-12);
  });

  it('no admissions in a step that preempted', () => {
    // 7 blocks. A and B: 30-token prompts, 20 outputs; both hold 3 blocks from step 4 (1 free).
    // C (40 tokens, 3 blocks) arrives during step 5 and waits. At step 20 A takes the free block
    // for its 4th; B then has none and preempts itself, freeing 3 blocks: enough for C, but vLLM
    // admits nobody in a step that preempted. C (and B, resumed) start at step 21 (t = 20 ms).
    const [, [b], [c]] = run(
      [
        { startS: 0, calls: [call(30, 0, 20)] },
        { startS: 0, calls: [call(30, 0, 20)] },
        { startS: 0.0045, calls: [call(40, 0, 1)] },
      ],
      { capacityTokens: 112 },
    ) as [CallRecord[], CallRecord[], CallRecord[]];
    assert.equal(b!.preemptions, 1);
    assert.equal(b!.recomputedTokens, 0); // its 3 blocks were still in the free queue
    assert.ok(Math.abs(c!.admittedS! - 0.02) < 1e-12, `C admitted at ${c!.admittedS}`);
  });

  it('shared system prompt blocks are hit across sessions', () => {
    // Two sessions share the first 64 tokens; the second arrives after the first's prompt is cached.
    const [, [second]] = run(
      [
        { startS: 0, calls: [call(100, 0, 1)] },
        { startS: 1, calls: [call(100, 0, 1)] },
      ],
      { capacityTokens: 4096 },
      64,
    ) as [CallRecord[], CallRecord[]];
    assert.equal(second!.hitTokens, 64);
  });
});
