import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { EngineOutcome } from '../../../../../src/core/sim/engines/engineTypes';
import { runFast } from '../../../../../src/core/sim/engines/fastEngine';
import { DEFAULT_PARAMS } from '../../../../../src/core/sim/params';
import type { EngineParams } from '../../../../../src/core/sim/params';
import type { PolicyName } from '../../../../../src/core/sim/policies';
import { runReference } from '../../../../../src/core/sim/engines/referenceEngine';
import { planWorkload } from '../../../../../src/core/sim/simRequests';
import { agentWorkloadArb, blockWorkloadArb } from '../../../../support/workloadArbitraries';

// Two engines, one answer: on random small workloads (short prompts, tiny caches, small
// token budgets, so eviction, chunked prefill, preemption and rejection all happen) the
// fast engine must give exactly the reference engine's outcome, and both must respect
// the invariants: hits ≤ ideal ≤ prompt, nothing finishes before it arrives, and after
// every step of both engines their pools check themselves (ref counts ≥ 0 and equal to
// the tables holding each block, blocks in use + free = capacity, hash index consistent).

const RUNS = Number(process.env['PROPERTY_RUNS'] ?? 300);

const paramsArb: fc.Arbitrary<EngineParams> = fc
  .record({
    blocks: fc.integer({ min: 3, max: 40 }),
    budget: fc.integer({ min: 8, max: 256 }),
    seqs: fc.integer({ min: 1, max: 8 }),
    freeOrder: fc.constantFrom('current' as const, 'legacy' as const),
    policy: fc.constantFrom<PolicyName>('vllm-lru', 'ttl-pin', 'admission-cap'),
    ttl: fc.oneof(fc.constant<'auto'>('auto'), fc.double({ min: 0, max: 0.4, noNaN: true })),
    cap: fc.oneof(fc.constant<'adaptive'>('adaptive'), fc.integer({ min: 1, max: 3 })),
    offload: fc.option(fc.integer({ min: 1, max: 30 })),
    stepMs: fc.double({ min: 0.5, max: 30, noNaN: true }),
    prefillUs: fc.double({ min: 0, max: 200, noNaN: true }),
    kvNs: fc.double({ min: 0, max: 200, noNaN: true }),
  })
  .map((x) => ({
    ...DEFAULT_PARAMS,
    capacityTokens: x.blocks * 16,
    maxNumBatchedTokens: x.budget,
    maxNumSeqs: x.seqs,
    freeOrder: x.freeOrder,
    policy: x.policy,
    ttlPin: { ttlS: x.ttl, maxTtlS: 0.3 },
    admissionCap: { ...DEFAULT_PARAMS.admissionCap, cap: x.cap, initialCap: 2, windowS: 0.05 },
    offload: x.offload === null ? null : { capacityTokens: x.offload * 16, bandwidthGBps: 25 },
    stepFixedMs: x.stepMs,
    prefillUsPerToken: x.prefillUs,
    kvReadNsPerToken: x.kvNs,
  }));

function checkInvariants(o: EngineOutcome): void {
  for (const r of o.records) {
    if (r.rejected) continue;
    assert.ok(r.hitTokens <= r.idealHitTokens, `request ${r.request}: hit ${r.hitTokens} > ideal ${r.idealHitTokens}`);
    assert.ok(
      r.idealHitTokens < r.promptTokens + r.outputTokens,
      `request ${r.request}: ideal ${r.idealHitTokens} not below its length`,
    );
    assert.ok(r.finishedS !== null && r.finishedS >= r.arrivalS, `request ${r.request} finished before it arrived`);
    assert.ok(r.admittedS !== null && r.admittedS >= r.arrivalS);
  }
  assert.ok(o.totals.vllmHits <= o.totals.vllmQueries);
}

describe('fast engine = reference engine (property tests)', () => {
  it(`agent workloads: identical outcomes on ${RUNS} random cases`, () => {
    fc.assert(
      fc.property(agentWorkloadArb(), paramsArb, (w, p) => {
        const plan = planWorkload(w, 16);
        const reference = runReference(plan, p, { selfCheck: true });
        checkInvariants(reference);
        assert.deepEqual(runFast(planWorkload(w, 16), p, { selfCheck: true }), reference);
      }),
      { numRuns: RUNS, seed: Number(process.env['PROPERTY_SEED'] ?? 20261129) },
    );
  });

  it(`block-hash workloads: identical outcomes on ${RUNS} random cases`, () => {
    fc.assert(
      fc.property(blockWorkloadArb, paramsArb, (w, p) => {
        const plan = planWorkload(w, 16);
        const reference = runReference(plan, { ...p, policy: 'vllm-lru' }, { selfCheck: true });
        checkInvariants(reference);
        assert.deepEqual(runFast(planWorkload(w, 16), { ...p, policy: 'vllm-lru' }, { selfCheck: true }), reference);
      }),
      { numRuns: RUNS, seed: Number(process.env['PROPERTY_SEED'] ?? 11292026) },
    );
  });
});
