import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engineByName } from '../../../../src/core/sim/engines/engineTable';
import { DEFAULT_PARAMS } from '../../../../src/core/sim/params';
import { runScenario } from '../../../../src/core/sim/scenario';
import type { ScenarioOptions } from '../../../../src/core/sim/scenario';
import { runSweep } from '../../../../src/core/sim/sweep';
import type { AgentWorkload } from '../../../../src/core/sim/workload';
import { pointOf, REPLICA_SWEEP } from '../../../../webview/whatIf/whatIfModel';
import { MemoEngine, WhatIfSim } from '../../../../webview/whatIf/whatIfSim';
import type { FromWorker, SweepJob } from '../../../../src/protocol/whatIfWorkerProtocol';

const FAST = engineByName('fast');

// The what-if worker's jobs, run in Node: the smart sweep, its cliff (the core's own
// runSweep over the points run), the memo, and errors per policy.

// One session (as in the core's sweep test): 6 calls, 27 blocks at its end; a 128-block cache thrashes past N = 4.
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
const base: ScenarioOptions = {
  params,
  replicas: { replicas: 1, staggerS: 0, staggerMode: 'fixed', seed: 1, toolWaitScale: 1 },
  session: 'agent',
};

function sweepJob(over: Partial<SweepJob> = {}): SweepJob {
  return {
    type: 'sweep',
    seq: 7,
    workloadId: 1,
    axis: 'replicas',
    values: [...REPLICA_SWEEP],
    base,
    threshold: 0.1,
    pointsAfterCliff: 2,
    budgetMs: 60_000,
    lines: [],
    ...over,
  };
}

function collect(): { posted: FromWorker[]; post: (m: FromWorker) => void } {
  const posted: FromWorker[] = [];
  return { posted, post: (m) => posted.push(m) };
}

describe('what-if worker jobs', () => {
  it('sweeps N in order, posts every point, stops two points past the cliff, and finds the core cliff', () => {
    const { posted, post } = collect();
    new WhatIfSim(workload, new MemoEngine(FAST), post).sweep(sweepJob());
    const points = posted.filter((m): m is Extract<FromWorker, { type: 'sweep/point' }> => m.type === 'sweep/point');
    const end = posted.find((m): m is Extract<FromWorker, { type: 'sweep/cliff' }> => m.type === 'sweep/cliff')!;
    assert.deepEqual(
      points.map((p) => p.value),
      end.run,
    );
    assert.deepEqual(
      points.map((p) => p.done),
      end.run.map((_, i) => i + 1),
    );
    const full = runSweep(
      FAST,
      workload,
      { params, replicas: base.replicas!, session: 'agent' },
      'replicas',
      REPLICA_SWEEP,
    );
    // The run ends two points after the first point past the cliff.
    const at = full.cliff.at!;
    assert.equal(end.run.length, REPLICA_SWEEP.indexOf(at) + 3);
    assert.deepEqual(end.skipped, REPLICA_SWEEP.slice(end.run.length));
    assert.equal(end.stoppedBy, 'cliff');
    // The cliff is the core's for the points run, and the same point as the full sweep's.
    assert.deepEqual(
      end.cliff,
      runSweep(FAST, workload, { params, replicas: base.replicas!, session: 'agent' }, 'replicas', end.run).cliff,
    );
    assert.equal(end.cliff.at, at);
    // Each point equals the scenario run alone.
    for (const p of points)
      assert.deepEqual(
        p.result,
        pointOf(
          runScenario(FAST, workload, { params, replicas: { ...base.replicas!, replicas: p.value }, session: 'agent' }),
        ),
      );
  });

  it('a capacity sweep runs capacities from the largest down', () => {
    const { posted, post } = collect();
    const values = [1024, 8192, 2048, 4096, 3072];
    new WhatIfSim(workload, new MemoEngine(FAST), post).sweep(
      sweepJob({ axis: 'capacity', values, base: { ...base, replicas: { ...base.replicas!, replicas: 6 } } }),
    );
    const end = posted.find((m): m is Extract<FromWorker, { type: 'sweep/cliff' }> => m.type === 'sweep/cliff')!;
    assert.deepEqual(end.run.slice(0, 2), [8192, 4096]);
    assert.deepEqual(
      end.cliff,
      runSweep(
        FAST,
        workload,
        { params, replicas: { ...base.replicas!, replicas: 6 }, session: 'agent' },
        'capacity',
        end.run,
      ).cliff,
    );
  });

  it('stops starting points when the time budget is spent, and says so', () => {
    const { posted, post } = collect();
    let clock = 0;
    // Every clock reading advances 100 ms: three readings per point.
    new WhatIfSim(workload, new MemoEngine(FAST), post, () => (clock += 100)).sweep(sweepJob({ budgetMs: 500 }));
    const end = posted.find((m): m is Extract<FromWorker, { type: 'sweep/cliff' }> => m.type === 'sweep/cliff')!;
    assert.equal(end.stoppedBy, 'budget');
    assert.ok(end.run.length >= 1 && end.run.length < 4, `ran ${end.run.join(',')}`);
  });

  it('runs the other policies at the points run, and reports an engine that refuses its parameters', () => {
    const { posted, post } = collect();
    const ttl: ScenarioOptions = { ...base, params: { ...params, policy: 'ttl-pin' } };
    const broken: ScenarioOptions = {
      ...base,
      params: { ...params, policy: 'admission-cap', admissionCap: { ...params.admissionCap, backoff: 2 } },
    };
    new WhatIfSim(workload, new MemoEngine(FAST), post).sweep(
      sweepJob({
        lines: [
          { policy: 'ttl-pin', spec: ttl },
          { policy: 'admission-cap', spec: broken },
        ],
      }),
    );
    const end = posted.find((m): m is Extract<FromWorker, { type: 'sweep/cliff' }> => m.type === 'sweep/cliff')!;
    const ttlPoints = posted
      .filter((m) => m.type === 'sweep/point' && m.line === 'ttl-pin')
      .map((m) => (m as { value: number }).value);
    assert.deepEqual(ttlPoints, end.run);
    const error = posted.find((m) => m.type === 'sweep/lineError');
    assert.match(
      error && error.type === 'sweep/lineError' ? error.error : '',
      /admissionCap\.backoff must be in \(0, 1\)/,
    );
  });

  it('a scenario posts its result, then the same alone; a comparison posts each policy or its error', () => {
    const { posted, post } = collect();
    const memo = new MemoEngine(FAST);
    const sim = new WhatIfSim(workload, memo, post);
    const spec: ScenarioOptions = { ...base, replicas: { ...base.replicas!, replicas: 8 } };
    sim.scenario({ type: 'scenario', seq: 1, workloadId: 1, spec, alone: true });
    assert.deepEqual(
      posted.map((m) => m.type),
      ['scenario/result', 'scenario/alone'],
    );
    const result = posted[0]?.type === 'scenario/result' ? posted[0].result : null;
    assert.deepEqual(result, runScenario(FAST, workload, { params, replicas: spec.replicas!, session: 'agent' }));
    // The same scenario again comes from the memo: no engine run.
    const runs = memo.runs;
    sim.scenario({ type: 'scenario', seq: 2, workloadId: 1, spec, alone: true });
    assert.equal(memo.runs, runs);
    sim.compare({
      type: 'compare',
      seq: 3,
      workloadId: 1,
      policies: [
        { policy: 'ttl-pin', spec: { ...spec, params: { ...params, policy: 'ttl-pin' } } },
        {
          policy: 'cpu-offload',
          spec: { ...spec, params: { ...params, offload: { capacityTokens: 1, bandwidthGBps: 25 } } },
        },
      ],
    });
    const rows = posted.filter(
      (m): m is Extract<FromWorker, { type: 'scenario/policy' }> => m.type === 'scenario/policy',
    );
    assert.deepEqual(
      rows.map((r) => [r.policy, r.result !== null]),
      [
        ['ttl-pin', true],
        ['cpu-offload', false],
      ],
    );
    assert.match(rows[1]!.error ?? '', /offload\.capacityTokens must be at least one block/);
  });

  it('the memo forgets everything once it holds more call records than its limit', () => {
    const memo = new MemoEngine(FAST, 20);
    const sim = new WhatIfSim(workload, memo, () => undefined);
    const spec = (n: number): ScenarioOptions => ({ ...base, replicas: { ...base.replicas!, replicas: n } });
    sim.scenario({ type: 'scenario', seq: 1, workloadId: 1, spec: spec(2), alone: false });
    const afterFirst = memo.runs;
    sim.scenario({ type: 'scenario', seq: 2, workloadId: 1, spec: spec(2), alone: false });
    assert.equal(memo.runs, afterFirst, '12 records fit: recalled');
    sim.scenario({ type: 'scenario', seq: 3, workloadId: 1, spec: spec(3), alone: false });
    sim.scenario({ type: 'scenario', seq: 4, workloadId: 1, spec: spec(2), alone: false });
    assert.ok(memo.runs > afterFirst + 1, 'N = 3 (18 records) overflowed the memo: N = 2 ran again');
  });
});
