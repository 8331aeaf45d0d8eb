import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engineByName } from '../../../../src/core/sim/engines/engineTable';
import { DEFAULT_PARAMS, ParamError } from '../../../../src/core/sim/params';
import { runScenario } from '../../../../src/core/sim/scenario';
import { runSweep } from '../../../../src/core/sim/sweep';
import type { AgentWorkload } from '../../../../src/core/sim/workload';
import { parseWhatIfDocument, whatIfParams, WhatIfDocumentError } from '../../../../src/core/share/whatIfDocument';

// The sweep test's session: 6 calls growing by 32 tokens, a 0.5 s tool wait between them.
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
const FAST = engineByName('fast');

function documentOf(gpus: number): Record<string, unknown> {
  const params = { ...DEFAULT_PARAMS, capacityTokens: 2048, fleet: { gpus, router: 'session-affinity' as const } };
  const replicas = { replicas: 8, staggerS: 0.05, staggerMode: 'fixed' as const, seed: 1, toolWaitScale: 1 };
  const scenario = runScenario(FAST, workload, { params, replicas });
  const sweep = runSweep(FAST, workload, { params, replicas }, 'gpus', [1, 2, 4]);
  const point = (r: object): object => ({ ...r, calls: undefined, sessions: undefined, perGpu: undefined });
  return JSON.parse(
    JSON.stringify({
      command: null,
      sentence: null,
      input: {
        file: 'x.jsonl',
        session: 'agent',
        workloadKind: 'sessions',
        notes: [],
        gpu: 'h100',
        model: 'qwen3-32b',
        replicas,
        params,
      },
      scenario,
      alone: null,
      callIndexes: [0, 1, 2, 3, 4, 5],
      policies: [],
      sweep: {
        axis: 'gpus',
        points: sweep.points.map((p) => ({ value: p.value, result: point(p.result) })),
        lines: {},
        cliff: sweep.cliff,
        skipped: [],
        stoppedBy: null,
      },
    }),
  ) as Record<string, unknown>;
}

describe("what-if documents of a fleet (the panel's export, the report's what-if)", () => {
  it("keep the fleet: GPUs, router, each GPU and each call's GPU, and a sweep over GPUs", () => {
    const raw = documentOf(4);
    const doc = parseWhatIfDocument(raw);
    // Nothing the engine wrote is dropped or changed on the way through the parser.
    assert.deepEqual(JSON.parse(JSON.stringify(doc.scenario)), raw['scenario']);
    assert.equal(doc.scenario.gpus, 4);
    assert.equal(doc.scenario.router, 'session-affinity');
    assert.deepEqual(doc.input.params, {
      capacityTokens: 2048,
      blockSizeTokens: 16,
      policy: 'vllm-lru',
      gpus: 4,
      router: 'session-affinity',
    });
    // Every call went to one of the four GPUs: the per-GPU calls add up to 8 copies × 6 calls.
    assert.equal(doc.scenario.perGpu!.length, 4);
    assert.equal(
      doc.scenario.perGpu!.reduce((s, g) => s + g.requests, 0),
      48,
    );
    assert.ok(doc.scenario.calls.every((c) => c.gpu !== undefined && c.gpu !== null && c.gpu >= 0 && c.gpu < 4));
    assert.equal(doc.sweep!.axis, 'gpus');
    assert.deepEqual(doc.sweep!.points.map((p) => p.result.gpus ?? 1).sort(), [1, 2, 4]);
  });

  it('one GPU reads as one GPU and no router', () => {
    const raw = documentOf(1);
    delete (raw['input'] as { params: Record<string, unknown> }).params['fleet'];
    assert.deepEqual(parseWhatIfDocument(raw).input.params.gpus, 1);
    assert.equal(parseWhatIfDocument(raw).input.params.router, null);
  });

  it('refuses a router or a GPU count the simulator does not have, by name', () => {
    const bad = documentOf(4);
    (bad['scenario'] as Record<string, unknown>)['router'] = '<img src=x onerror=alert(1)>';
    assert.throws(
      () => parseWhatIfDocument(bad),
      (e: unknown) =>
        e instanceof WhatIfDocumentError &&
        /^scenario\.router should be one of round-robin, least-loaded, session-affinity, kv-aware$/.test(e.message),
    );
    const zero = documentOf(4);
    ((zero['input'] as { params: Record<string, unknown> }).params['fleet'] as Record<string, unknown>)['gpus'] = 0;
    assert.throws(
      () => parseWhatIfDocument(zero),
      (e: unknown) =>
        e instanceof WhatIfDocumentError &&
        /^input\.params\.fleet\.gpus should be a whole number from 1 to 1024$/.test(e.message),
    );
  });
});

describe('what-if documents from the page or a file are hostile: bounds, indexes and keys', () => {
  const replicasOf = (d: Record<string, unknown>): Record<string, unknown> =>
    (d['input'] as { replicas: Record<string, unknown> }).replicas;

  it("refuses replicas, stagger and tool-wait scale outside the simulator's bounds, by name (Compare replays that many copies)", () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['replicas', 1e12, /^input\.replicas\.replicas should be a whole number from 1 to 100,000$/],
      ['replicas', 2.5, /^input\.replicas\.replicas should be a whole number/],
      ['replicas', 0, /^input\.replicas\.replicas should be/],
      ['staggerS', -5, /^input\.replicas\.staggerS should be a number from 0 to 10,000,000$/],
      ['staggerS', 1e308, /^input\.replicas\.staggerS should be/],
      ['toolWaitScale', 1e308, /^input\.replicas\.toolWaitScale should be a number from 0 to 1000$/],
    ];
    for (const [key, value, want] of cases) {
      const d = documentOf(1);
      replicasOf(d)[key] = value;
      assert.throws(
        () => parseWhatIfDocument(d),
        (e: unknown) => e instanceof WhatIfDocumentError && want.test(e.message),
        `${key} = ${String(value)}`,
      );
    }
  });

  it('refuses call indexes that are not whole numbers (they pick the traced call of each bar)', () => {
    for (const bad of [-1, 0.5, 1e308, '3']) {
      const d = documentOf(1);
      (d['callIndexes'] as unknown[])[2] = bad;
      assert.throws(
        () => parseWhatIfDocument(d),
        (e: unknown) =>
          e instanceof WhatIfDocumentError &&
          /^callIndexes\[2\] should be a whole number from 0 to 2\^31$/.test(e.message),
        String(bad),
      );
    }
  });

  it("whatIfParams takes only the defaults' own keys: __proto__ and constructor cannot reach the prototype; an unknown policy is named", () => {
    const raw = JSON.parse(
      '{"capacityTokens": 4096, "__proto__": {"polluted": true, "capacityTokens": 1}, "constructor": {"prototype": {"polluted": true}}}',
    ) as Record<string, unknown>;
    const p = whatIfParams(raw);
    assert.equal(p.capacityTokens, 4096);
    assert.equal(Object.getPrototypeOf(p), Object.prototype);
    assert.equal((p as unknown as { polluted?: unknown }).polluted, undefined);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
    assert.throws(
      () => whatIfParams({ policy: '<img src=x>' }),
      (e: unknown) =>
        e instanceof ParamError &&
        /^policy must be one of vllm-lru, sglang-lru, ttl-pin, admission-cap, got "<img src=x>"$/.test(e.message),
    );
    assert.throws(
      () => whatIfParams({ prefillUsPerToken: 1e300 }),
      (e: unknown) => e instanceof ParamError && /^prefillUsPerToken must be/.test(e.message),
    );
  });
});

describe('whatIfParams keeps the fleet a what-if ran on (Compare predicts on the same GPUs)', () => {
  it('the fleet of a fleet export, checked; without one, one GPU', () => {
    const raw = documentOf(4);
    const params = whatIfParams((raw['input'] as { params: unknown }).params);
    assert.deepEqual(params.fleet, { gpus: 4, router: 'session-affinity' });
    // The same scenario on the params read back equals the one the document carries.
    const replicas = { replicas: 8, staggerS: 0.05, staggerMode: 'fixed' as const, seed: 1, toolWaitScale: 1 };
    assert.deepEqual(JSON.parse(JSON.stringify(runScenario(FAST, workload, { params, replicas }))), raw['scenario']);
    assert.equal(whatIfParams({ capacityTokens: 2048 }).fleet, undefined);
    assert.throws(
      () => whatIfParams({ fleet: { gpus: 4, router: 'nearest' } }),
      (e: unknown) => e instanceof ParamError && /fleet\.router/.test(e.message),
    );
    assert.throws(
      () => whatIfParams({ fleet: { gpus: '4', router: 'kv-aware' } }),
      (e: unknown) => e instanceof ParamError && /^fleet must be/.test(e.message),
    );
  });
});
