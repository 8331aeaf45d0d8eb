import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { EngineOutcome } from '../../../../../src/core/sim/engines/engineTypes';
import { runFast, startFast } from '../../../../../src/core/sim/engines/fastEngine';
import { startReference } from '../../../../../src/core/sim/engines/referenceEngine';
import { runFleet } from '../../../../../src/core/sim/fleet/fleet';
import { ROUTER_NAMES } from '../../../../../src/core/sim/fleet/routers';
import type { RouterName } from '../../../../../src/core/sim/fleet/routers';
import { DEFAULT_PARAMS } from '../../../../../src/core/sim/params';
import type { EngineParams } from '../../../../../src/core/sim/params';
import { planWorkload } from '../../../../../src/core/sim/simRequests';
import { agentWorkloadArb, blockWorkloadArb } from '../../../../support/workloadArbitraries';

// A fleet's answer must not depend on the engine: the fast engine jumps over stretches of
// steps, and the router must still see every GPU exactly as the step-by-step reference
// engine leaves it when a call arrives. On random small workloads (tiny caches, small
// budgets: eviction, chunked prefill, preemption, rejection) and every router, fleets of
// 1–4 GPUs give identical outcomes under both engines; a fleet of one GPU gives exactly
// the single-GPU engine's outcome; every call ran on exactly one GPU.

const RUNS = Number(process.env['PROPERTY_RUNS'] ?? 200);

const paramsArb: fc.Arbitrary<EngineParams> = fc
  .record({
    blocks: fc.integer({ min: 3, max: 40 }),
    budget: fc.integer({ min: 8, max: 256 }),
    seqs: fc.integer({ min: 1, max: 8 }),
    freeOrder: fc.constantFrom('current' as const, 'legacy' as const),
    pin: fc.boolean(),
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
    policy: x.pin ? ('ttl-pin' as const) : ('vllm-lru' as const),
    ttlPin: { ttlS: 'auto' as const, maxTtlS: 0.3 },
    stepFixedMs: x.stepMs,
    prefillUsPerToken: x.prefillUs,
    kvReadNsPerToken: x.kvNs,
  }));

const fleetArb = fc.record({
  gpus: fc.integer({ min: 1, max: 4 }),
  router: fc.constantFrom<RouterName>(...ROUTER_NAMES),
});

describe('fleets: the same answer from both engines', () => {
  it(`agent workloads: identical outcomes on ${RUNS} random cases`, () => {
    fc.assert(
      fc.property(agentWorkloadArb(), paramsArb, fleetArb, (w, p, fleet) => {
        const reference = runFleet(startReference, planWorkload(w, 16), p, fleet, { selfCheck: true });
        assert.deepEqual(runFleet(startFast, planWorkload(w, 16), p, fleet, { selfCheck: true }), reference);
        for (const [r, rec] of reference.records.entries()) assert.equal(reference.fleet.gpuOf[r]! >= 0, !rec.rejected);
        if (fleet.gpus === 1) {
          const outcome: EngineOutcome = { ...reference };
          delete outcome.fleet;
          assert.deepEqual(outcome, runFast(planWorkload(w, 16), p));
        }
      }),
      { numRuns: RUNS, seed: Number(process.env['PROPERTY_SEED'] ?? 20261130) },
    );
  });

  it(`block-hash workloads: identical outcomes on ${RUNS} random cases`, () => {
    fc.assert(
      fc.property(blockWorkloadArb, paramsArb, fleetArb, (w, p, fleet) => {
        const q = { ...p, policy: 'vllm-lru' as const };
        const reference = runFleet(startReference, planWorkload(w, 16), q, fleet, { selfCheck: true });
        assert.deepEqual(runFleet(startFast, planWorkload(w, 16), q, fleet, { selfCheck: true }), reference);
      }),
      { numRuns: RUNS, seed: Number(process.env['PROPERTY_SEED'] ?? 30112026) },
    );
  });
});
