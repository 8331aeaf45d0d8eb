import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engineByName } from '../../../../src/core/sim/engines/engineTable';
import { runScenario } from '../../../../src/core/sim/scenario';
import type { AgentWorkload, BlockWorkload } from '../../../../src/core/sim/workload';
import type { WhatIfWorkload } from '../../../../src/protocol/messages';
import { pointOf, readScenario } from '../../../../webview/whatIf/whatIfModel';
import type { NumericField, Scenario } from '../../../../webview/whatIf/whatIfModel';
import {
  newScenarioRun,
  newSweepRun,
  planRuns,
  reduceLaneFailure,
  reduceWorkerMessage,
} from '../../../../webview/whatIf/whatIfRuns';
import type { RunPlan, WhatIfRuns } from '../../../../webview/whatIf/whatIfRuns';

// The what-if panel's run planner and worker-message reducer, without a page: which jobs a
// scenario needs (and which a change leaves running), and how the workers' messages fill
// the runs on screen.

// One agent session of two calls: 100 + 20 and 300 + 20 tokens (prompt + output).
const agent: AgentWorkload = {
  kind: 'sessions',
  sharedPrefixTokens: 0,
  sessions: [
    {
      id: 'main',
      startS: 0,
      calls: [
        { promptTokens: 100, prefixTokens: 0, outputTokens: 20, toolWaitS: 1 },
        { promptTokens: 300, prefixTokens: 120, outputTokens: 20, toolWaitS: 0 },
      ],
    },
  ],
};
const agentData: WhatIfWorkload = {
  workload: agent,
  notes: [],
  filePath: '/t/a.jsonl',
  sessionId: 'main',
  callIndexes: [0, 1],
  format: 'claude-code',
};
// Two block-hash requests of 3 and 2 blocks of 512 tokens.
const blocks: BlockWorkload = {
  kind: 'requests',
  blockSizeTokens: 512,
  requests: [
    { id: 'r1', arrivalS: 0, promptTokens: 1500, outputTokens: 10, hashes: [1, 2, 3] },
    { id: 'r2', arrivalS: 1, promptTokens: 1000, outputTokens: 10, hashes: [1, 2] },
  ],
};
const blockData: WhatIfWorkload = {
  workload: blocks,
  notes: [],
  filePath: '/t/m.jsonl',
  sessionId: null,
  callIndexes: [],
  format: 'mooncake',
};

const FIELDS = new Set<string>([
  'gpuMemoryGiB',
  'customKvBytesPerToken',
  'customWeightsGiB',
  'capacityTokens',
  'replicas',
  'staggerS',
  'seed',
  'toolWaitScale',
  'ttlS',
  'maxTtlS',
  'admissionCap',
  'initialCap',
  'hitRateFloor',
  'backoff',
  'windowS',
  'offloadTokens',
  'offloadGbps',
]);
const isField = (name: string): name is NumericField => FIELDS.has(name);
const NONE = new Set<NumericField>();

/** The default scenario with a typed capacity of `capacityTokens`. */
function typed(capacityTokens: number, over: Partial<Scenario> = {}): Scenario {
  return { ...readScenario(null), capacityTyped: true, capacityTokens, ...over };
}

function run(plan: RunPlan): Extract<RunPlan, { kind: 'run' }> {
  assert.equal(plan.kind, 'run', JSON.stringify(plan));
  return plan as Extract<RunPlan, { kind: 'run' }>;
}

describe('what-if run planner', () => {
  it('runs nothing while a field holds text that is not a value, and says which', () => {
    assert.deepEqual(planRuns(typed(4096), agentData, new Set<NumericField>(['replicas']), isField), {
      kind: 'invalid',
      message: 'Not updated: Sessions needs a valid value.',
    });
    assert.deepEqual(planRuns(typed(4096), agentData, new Set<NumericField>(['replicas', 'capacityTokens']), isField), {
      kind: 'invalid',
      message: 'Not updated: Sessions, KV capacity need a valid value.',
    });
  });

  it('names the field a scenario fails on: a 10 GiB GPU cannot hold 61 GiB of Qwen3-32B weights', () => {
    const plan = planRuns({ ...readScenario(null), gpu: 'custom', gpuMemoryGiB: 10 }, agentData, NONE, isField);
    assert.equal(plan.kind, 'unresolved');
    if (plan.kind !== 'unresolved') return;
    assert.deepEqual(
      plan.fieldErrors.map(([f]) => f),
      ['gpuMemoryGiB'],
    );
    assert.equal(plan.message, 'Fix the marked field to run this scenario.');
  });

  it('refuses a cache no call fits in, blaming the typed capacity', () => {
    // 64 tokens = 4 blocks; the shorter call needs ceil((100 + 20 − 1) / 16) = 8 blocks.
    const plan = planRuns(typed(64), agentData, NONE, isField);
    assert.equal(plan.kind, 'no-fit');
    if (plan.kind !== 'no-fit') return;
    assert.equal(plan.capacityField, true);
    assert.match(
      plan.message,
      /^No call fits in a KV cache of 64 tokens: the shortest needs 120 \(prompt \+ output\)\./,
    );
  });

  it('notes the calls too long for the cache when some fit', () => {
    // 160 tokens = 10 blocks: call 1 needs 8, call 2 needs ceil(319 / 16) = 20.
    const plan = run(planRuns(typed(160), agentData, NONE, isField));
    assert.match(plan.fitNote ?? '', /^1 of 2 calls need more than the whole KV cache of 160 tokens/);
    assert.equal(run(planRuns(typed(4096), agentData, NONE, isField)).fitNote, null);
  });

  it('plans the scenario, the other four policies and a sweep over N; alone only for more than one session', () => {
    const plan = run(planRuns(typed(4096, { replicas: 4 }), agentData, NONE, isField));
    assert.equal(plan.scenario.spec.params.policy, 'vllm-lru');
    assert.equal(plan.scenario.spec.params.capacityTokens, 4096);
    assert.equal(plan.scenario.spec.replicas?.replicas, 4);
    assert.equal(plan.scenario.spec.session, 'main');
    assert.deepEqual(
      plan.scenario.others.map((o) => o.policy),
      ['sglang-lru', 'ttl-pin', 'admission-cap', 'cpu-offload'],
    );
    // cpu-offload is vLLM's LRU with a CPU tier.
    const offload = plan.scenario.others.find((o) => o.policy === 'cpu-offload')!.spec.params;
    assert.equal(offload.policy, 'vllm-lru');
    assert.ok(offload.offload !== null);
    assert.equal(plan.scenario.alone, true);
    assert.equal(plan.sweep.request.axis, 'replicas');
    assert.deepEqual(plan.sweep.request.lines, plan.scenario.others);
    assert.equal(run(planRuns(typed(4096, { replicas: 1 }), agentData, NONE, isField)).scenario.alone, false);
  });

  it('moving the swept value reruns the scenario and keeps the sweep; changing what the sweep holds fixed reruns both', () => {
    const at4 = run(planRuns(typed(4096, { replicas: 4 }), agentData, NONE, isField));
    const at8 = run(planRuns(typed(4096, { replicas: 8 }), agentData, NONE, isField));
    assert.notEqual(at8.scenario.key, at4.scenario.key);
    assert.equal(at8.sweep.key, at4.sweep.key);
    const stagger = run(planRuns(typed(4096, { replicas: 4, staggerS: 30 }), agentData, NONE, isField));
    assert.notEqual(stagger.sweep.key, at4.sweep.key);
    // The same scenario planned twice: nothing new to run.
    assert.equal(run(planRuns(typed(4096, { replicas: 4 }), agentData, NONE, isField)).scenario.key, at4.scenario.key);
  });

  it('a block-hash trace replays as recorded: no replicas, its own block size, a sweep over capacity', () => {
    const plan = run(planRuns(typed(8192, { sweepAxis: 'replicas' }), blockData, NONE, isField));
    assert.equal(plan.scenario.spec.replicas, null);
    assert.equal(plan.scenario.spec.session, null);
    assert.equal(plan.scenario.spec.params.blockSizeTokens, 512);
    assert.equal(plan.scenario.alone, false);
    assert.equal(plan.sweep.request.axis, 'capacity');
  });
});

describe('what-if worker-message reducer', () => {
  const scenario = typed(4096, { replicas: 2 });
  const plan = run(planRuns(scenario, agentData, NONE, isField));
  const fast = engineByName('fast');
  const result = runScenario(fast, agent, {
    params: plan.scenario.spec.params,
    replicas: plan.scenario.spec.replicas!,
    session: 'main',
  });

  function fresh(): WhatIfRuns {
    return {
      scenario: newScenarioRun(5, plan.scenario, scenario, plan.resolved),
      sweep: newSweepRun(6, plan.sweep, scenario, plan.resolved),
    };
  }

  it('drops messages of runs that are no longer the latest', () => {
    const runs = fresh();
    assert.equal(reduceWorkerMessage(runs, { type: 'scenario/result', seq: 4, result, ms: 1 }).changed, false);
    assert.equal(runs.scenario!.result, null);
    assert.equal(
      reduceWorkerMessage(runs, {
        type: 'sweep/point',
        seq: 5,
        line: null,
        value: 1,
        result: pointOf(result),
        done: 1,
        total: 7,
        ms: 1,
      }).changed,
      false,
    );
    assert.deepEqual(runs.sweep!.main, []);
  });

  it('the first result starts the comparison and fills in the current policy; a later one does not start it again', () => {
    const runs = fresh();
    const first = reduceWorkerMessage(runs, { type: 'scenario/result', seq: 5, result, ms: 3 });
    assert.deepEqual(first, { changed: true, resultArrived: true, startCompare: true, scenarioFailed: false });
    assert.equal(runs.scenario!.result, result);
    assert.equal(runs.scenario!.ms, 3);
    assert.deepEqual(runs.scenario!.policies.get('vllm-lru'), { result: pointOf(result) });
    // Two sessions: "alone" comes in its own message.
    assert.equal(runs.scenario!.alone, null);
    reduceWorkerMessage(runs, { type: 'scenario/alone', seq: 5, result: pointOf(result), ms: 1 });
    assert.deepEqual(runs.scenario!.alone, pointOf(result));
    runs.scenario!.compareSeq = 9;
    assert.equal(reduceWorkerMessage(runs, { type: 'scenario/result', seq: 5, result, ms: 3 }).startCompare, false);
    reduceWorkerMessage(runs, {
      type: 'scenario/policy',
      seq: 9,
      policy: 'ttl-pin',
      result: null,
      error: 'refused',
      ms: 1,
    });
    assert.deepEqual(runs.scenario!.policies.get('ttl-pin'), { error: 'refused' });
    reduceWorkerMessage(runs, { type: 'done', seq: 9, job: 'compare', ms: 1 });
    assert.equal(runs.scenario!.compareStatus, 'done');
  });

  it('sweep points go to the main line or a policy line, then the cliff and the end', () => {
    const runs = fresh();
    const point = pointOf(result);
    reduceWorkerMessage(runs, {
      type: 'sweep/point',
      seq: 6,
      line: null,
      value: 1,
      result: point,
      done: 1,
      total: 9,
      ms: 1,
    });
    reduceWorkerMessage(runs, {
      type: 'sweep/point',
      seq: 6,
      line: 'sglang-lru',
      value: 1,
      result: point,
      done: 2,
      total: 9,
      ms: 1,
    });
    reduceWorkerMessage(runs, { type: 'sweep/lineError', seq: 6, line: 'ttl-pin', error: 'no' });
    const sw = runs.sweep!;
    assert.deepEqual(sw.main, [{ value: 1, result: point }]);
    assert.deepEqual(sw.lines.get('sglang-lru'), [{ value: 1, result: point }]);
    assert.equal(sw.lineErrors.get('ttl-pin'), 'no');
    assert.deepEqual([sw.done, sw.total], [2, 9]);
    const cliff = {
      axis: 'replicas' as const,
      at: null,
      reason: null,
      hitRateDropThreshold: 0.1,
      lastGood: null,
      suggestedAdmissionCap: null,
      summary: 'none',
    };
    reduceWorkerMessage(runs, {
      type: 'sweep/cliff',
      seq: 6,
      cliff,
      run: [1],
      skipped: [2],
      stoppedBy: 'budget',
      ms: 12,
    });
    assert.deepEqual([sw.cliff, sw.run, sw.skipped, sw.stoppedBy, sw.ms], [cliff, [1], [2], 'budget', 12]);
    reduceWorkerMessage(runs, { type: 'done', seq: 6, job: 'sweep', ms: 1 });
    assert.equal(sw.status, 'done');
  });

  it('a failed lane marks its own run only, whether the worker reported it or died', () => {
    const runs = fresh();
    assert.equal(
      reduceWorkerMessage(runs, { type: 'error', seq: 5, job: 'scenario', message: 'boom' }).scenarioFailed,
      true,
    );
    assert.deepEqual([runs.scenario!.status, runs.scenario!.error, runs.sweep!.status], ['error', 'boom', 'running']);
    const other = fresh();
    other.scenario!.compareSeq = 8;
    assert.equal(reduceLaneFailure(other, 'compare', 8, 'worker died').scenarioFailed, false);
    assert.deepEqual([other.scenario!.compareStatus, other.scenario!.status], ['error', 'running']);
    reduceLaneFailure(other, 'sweep', 6, 'worker died');
    assert.deepEqual([other.sweep!.status, other.sweep!.error], ['error', 'worker died']);
    // An older sweep's failure changes nothing.
    reduceLaneFailure(other, 'scenario', 4, 'old');
    assert.equal(other.scenario!.status, 'running');
  });
});
