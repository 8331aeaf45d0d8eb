import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engineByName } from '../../../../src/core/sim/engines/engineTable';
import { DEFAULT_PARAMS } from '../../../../src/core/sim/params';
import { runScenario } from '../../../../src/core/sim/scenario';
import { runSweep } from '../../../../src/core/sim/sweep';
import type { AgentWorkload } from '../../../../src/core/sim/workload';
import { parseWhatIfDocument, WhatIfDocumentError } from '../../../../src/core/share/whatIfDocument';

// The sweep test's session: 6 calls growing by 32 tokens, a 0.5 s tool wait between them.
const calls = Array.from({ length: 6 }, (_, k) => ({ promptTokens: 256 + 32 * k, prefixTokens: k === 0 ? 0 : 256 + 32 * k - 16, outputTokens: 16, toolWaitS: 0.5 }));
const workload: AgentWorkload = { kind: 'sessions', sharedPrefixTokens: 0, sessions: [{ id: 'agent', startS: 0, calls }] };
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
      input: { file: 'x.jsonl', session: 'agent', workloadKind: 'sessions', notes: [], gpu: 'h100', model: 'qwen3-32b', replicas, params },
      scenario,
      alone: null,
      callIndexes: [0, 1, 2, 3, 4, 5],
      policies: [],
      sweep: { axis: 'gpus', points: sweep.points.map((p) => ({ value: p.value, result: point(p.result) })), lines: {}, cliff: sweep.cliff, skipped: [], stoppedBy: null },
    }),
  ) as Record<string, unknown>;
}

describe('what-if documents of a fleet (the panel\'s export, the report\'s what-if)', () => {
  it('keep the fleet: GPUs, router, each GPU and each call\'s GPU, and a sweep over GPUs', () => {
    const raw = documentOf(4);
    const doc = parseWhatIfDocument(raw);
    // Nothing the engine wrote is dropped or changed on the way through the parser.
    assert.deepEqual(JSON.parse(JSON.stringify(doc.scenario)), raw['scenario']);
    assert.equal(doc.scenario.gpus, 4);
    assert.equal(doc.scenario.router, 'session-affinity');
    assert.deepEqual(doc.input.params, { capacityTokens: 2048, blockSizeTokens: 16, policy: 'vllm-lru', gpus: 4, router: 'session-affinity' });
    // Every call went to one of the four GPUs: the per-GPU calls add up to 8 copies × 6 calls.
    assert.equal(doc.scenario.perGpu!.length, 4);
    assert.equal(doc.scenario.perGpu!.reduce((s, g) => s + g.requests, 0), 48);
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
    assert.throws(() => parseWhatIfDocument(bad), (e: unknown) => e instanceof WhatIfDocumentError && /^scenario\.router should be one of round-robin, least-loaded, session-affinity, kv-aware$/.test(e.message));
    const zero = documentOf(4);
    ((zero['input'] as { params: Record<string, unknown> }).params['fleet'] as Record<string, unknown>)['gpus'] = 0;
    assert.throws(() => parseWhatIfDocument(zero), (e: unknown) => e instanceof WhatIfDocumentError && /^input\.params\.fleet\.gpus should be a whole number from 1 to 1024$/.test(e.message));
  });
});
