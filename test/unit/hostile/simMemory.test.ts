import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { ArrivalSource, EngineRun } from '../../../src/core/sim/engines/engineTypes';
import { startFast } from '../../../src/core/sim/engines/fastEngine';
import { startReference } from '../../../src/core/sim/engines/referenceEngine';
import { runFleet } from '../../../src/core/sim/fleet/fleet';
import { checkRunFits, estimateRun } from '../../../src/core/sim/memoryEstimate';
import { DEFAULT_PARAMS, ParamError } from '../../../src/core/sim/params';
import type { EngineParams } from '../../../src/core/sim/params';
import type { ScenarioOptions } from '../../../src/core/sim/scenario';
import { DEFAULT_REPLICAS, planWorkload } from '../../../src/core/sim/simRequests';
import type { SimPlan } from '../../../src/core/sim/simRequests';
import type { AgentWorkload } from '../../../src/core/sim/workload';
import { ensureBuilt, repoRoot } from '../../support/helpers';

// Round two of the hostile probe, the simulator: `--gpus 1024 --router kv-aware --replicas
// 2000` overflowed V8's heap at 4.2 GB, because every GPU's engine kept per-request state
// for every call of the run (GPUs × calls). Now a GPU keeps state for the calls routed to it,
// and a run that would not fit is refused by name before it starts.

const cli = join(repoRoot, 'dist/cli.js');
const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');

/** Three sessions of four calls, each call keeping the previous context (hand-written). */
const workload: AgentWorkload = {
  kind: 'sessions',
  sharedPrefixTokens: 64,
  sessions: ['a', 'b', 'c'].map((id, i) => ({
    id,
    startS: i * 0.5,
    calls: [
      { promptTokens: 200, prefixTokens: 0, outputTokens: 20, toolWaitS: 1 },
      { promptTokens: 260, prefixTokens: 220, outputTokens: 20, toolWaitS: 1 },
      { promptTokens: 320, prefixTokens: 280, outputTokens: 20, toolWaitS: 1 },
      { promptTokens: 380, prefixTokens: 340, outputTokens: 20, toolWaitS: 1 },
    ],
  })),
};

describe('a fleet GPU keeps state only for the calls routed to it', () => {
  for (const [name, start] of [
    ['fast', startFast],
    ['reference', startReference],
  ] as const) {
    it(`${name} engine: the GPUs' plans together hold each call once (they held every call each)`, () => {
      const replicas = 10;
      const plan = planWorkload(workload, 16, { ...DEFAULT_REPLICAS, replicas }, false);
      const gpus = 8;
      const params: EngineParams = { ...DEFAULT_PARAMS, capacityTokens: 4096 };
      const plans: SimPlan[] = [];
      const watching = (p: SimPlan, ep: EngineParams, source: ArrivalSource): EngineRun => {
        plans.push(p);
        return start(p, ep, source);
      };
      const outcome = runFleet(watching, plan, params, { gpus, router: 'kv-aware' });
      assert.equal(plans.length, gpus);
      // 3 sessions × 4 calls × 10 replicas = 120 calls, none too long for the cache: each ran on one GPU, once.
      assert.equal(outcome.records.filter((r) => r.finishedS !== null && !r.rejected).length, 120);
      assert.equal(
        plans.reduce((n, p) => n + p.requests.length, 0),
        120,
      );
      for (let g = 0; g < gpus; g++)
        assert.equal(plans[g]!.requests.length, outcome.fleet.gpuOf.filter((x) => x === g).length, `GPU ${g}`);
    });
  }
});

describe('a run is measured before it starts and refused by name when it would not fit', () => {
  const options = (replicas: number, gpus: number): ScenarioOptions => ({
    params: { ...DEFAULT_PARAMS, ...(gpus > 1 ? { fleet: { gpus, router: 'kv-aware' as const } } : {}) },
    replicas: { ...DEFAULT_REPLICAS, replicas },
  });

  it('grows with the replicas and with the GPUs, not with their product', () => {
    const base = estimateRun('fast', workload, options(1, 1)).bytes;
    const moreReplicas = estimateRun('fast', workload, options(2000, 1)).bytes - base;
    const moreGpus = estimateRun('fast', workload, options(1, 1024)).bytes - base;
    const both = estimateRun('fast', workload, options(2000, 1024)).bytes - base;
    assert.ok(moreReplicas > 0 && moreGpus > 0);
    // Additive: the 2,000 × 1,024 run costs the sum of its two increments (a product term would make it ~1,000× larger).
    assert.ok(Math.abs(both - (moreReplicas + moreGpus)) < 1e-6 * both, `${both} vs ${moreReplicas} + ${moreGpus}`);
  });

  it('says how many replicas would fit, and that many do', () => {
    const budget = 64 * 2 ** 20;
    let message = '';
    assert.throws(
      () => checkRunFits('fast', workload, options(100_000, 64), budget),
      (e: unknown) => e instanceof ParamError && ((message = e.message), true),
    );
    assert.match(
      message,
      /^100,000 replicas × 12 calls \(1,200,000 calls\) on 64 GPUs would need about [\d.]+ GiB of memory, more than the 64 MiB this process can use: at most ([\d,]+) replicas fit on 64 GPUs$/,
    );
    const fit = Number(/at most ([\d,]+) replicas/.exec(message)![1]!.replace(/,/g, ''));
    assert.ok(fit >= 1 && fit < 100_000);
    assert.doesNotThrow(() => checkRunFits('fast', workload, options(fit, 64), budget));
    assert.throws(() => checkRunFits('fast', workload, options(fit + 1, 64), budget), ParamError);
  });

  it("names the GPUs when the reference engine's block pools are what does not fit", () => {
    // 2^28 tokens of cache = 16,777,216 blocks, preallocated by the reference engine on each GPU (over 300 MB each).
    const o = options(1, 1024);
    o.params.capacityTokens = 2 ** 28;
    assert.throws(
      () => checkRunFits('reference', workload, o, 4 * 2 ** 30),
      /on 1,024 GPUs would need about .* at most \d+ GPUs fit \(the reference engine keeps every block of each GPU/,
    );
    assert.doesNotThrow(() => checkRunFits('fast', workload, o, 4 * 2 ** 30));
  });
});

describe('simulate refuses a run that would exhaust the heap, before it starts', () => {
  before(() => ensureBuilt(cli));

  it('--replicas 20000 --gpus 64 on a 256 MB heap: a message naming the replicas, exit 1 (it ran until V8 died)', () => {
    const r = spawnSync(
      process.execPath,
      ['--max-old-space-size=256', cli, 'simulate', SAMPLE, '--replicas', '20000', '--gpus', '64'],
      { encoding: 'utf8', timeout: 120_000 },
    );
    assert.equal(r.status, 1, r.stderr.slice(-500));
    assert.match(
      r.stderr,
      /agent-trace: 20,000 replicas × 48 calls \(960,000 calls\) on 64 GPUs would need about .* more than the \d+ MiB this process can use: at most [\d,]+ replicas fit on 64 GPUs/,
    );
    assert.equal(r.stdout, '');
  });
});
