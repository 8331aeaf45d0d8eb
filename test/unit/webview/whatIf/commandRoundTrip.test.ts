import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseSimulateArgs,
  refuseCopiedCommand,
  replicaOptions,
  writeSimulateArgs,
} from '../../../../src/core/sim/commandLine';
import { GPU_PRESETS, MODEL_PRESETS } from '../../../../src/core/sim/params';
import { paramsFor } from '../../../../src/core/sim/paramsFor';
import { POLICY_CHOICES } from '../../../../src/core/sim/policies';
import { cliArgs, defaultScenario, resolveScenario } from '../../../../webview/whatIf/whatIfModel';
import type { Scenario } from '../../../../webview/whatIf/whatIfModel';

// "Copy as CLI" is the panel's scenario written in the simulate grammar: read back by the
// same parser the CLI uses and turned into parameters by the same paramsFor, it must give
// the engine exactly what the panel ran, on every preset and every policy. The expected
// side is the panel's own resolveScenario, a different path through the scenario (its
// fields, not flags), so a flag written wrongly or a value the writer drops shows here.

const TRACE = '/home/me/proj/session one.jsonl';
const input = { filePath: TRACE, sessionId: 'ae4a77f8', format: null };

/** Every GPU (and a custom one) × every model (and a custom one) × every policy choice, with each policy's variants. */
function scenarios(): Array<{ name: string; s: Scenario }> {
  const out: Array<{ name: string; s: Scenario }> = [];
  const base = defaultScenario();
  const gpus = [...GPU_PRESETS.map((g) => ({ gpu: g.id })), { gpu: 'custom', gpuMemoryGiB: 180 }];
  const models = [
    ...MODEL_PRESETS.map((m) => ({ model: m.id })),
    { model: 'custom', customKvBytesPerToken: 65_536, customWeightsGiB: 20 },
  ];
  for (const g of gpus)
    for (const m of models)
      for (const c of POLICY_CHOICES) {
        const s: Scenario = {
          ...base,
          ...g,
          ...m,
          policy: c.id,
          replicas: 12,
          staggerS: 2.5,
          toolWaitScale: 0.75,
          ttlS: 7.5,
          maxTtlS: 40,
          initialCap: 5,
          hitRateFloor: 0.7,
          backoff: 0.25,
          windowS: 12,
          offloadTokens: 500_000,
          offloadGbps: 32,
        };
        out.push({ name: `${g.gpu}/${m.model}/${c.id}`, s });
      }
  for (const c of POLICY_CHOICES) {
    out.push({
      name: `typed capacity/${c.id}`,
      s: { ...base, policy: c.id, capacityTyped: true, capacityTokens: 123_456 },
    });
    out.push({
      name: `random stagger, fleet/${c.id}`,
      s: {
        ...base,
        policy: c.id,
        staggerMode: 'random',
        seed: 99,
        gpus: c.id === 'admission-cap' ? 1 : 6,
        router: 'least-loaded',
      },
    });
  }
  out.push({ name: 'ttl-pin auto', s: { ...base, policy: 'ttl-pin', ttlS: 'auto', maxTtlS: 12 } });
  out.push({ name: 'fixed admission cap', s: { ...base, policy: 'admission-cap', admissionCap: 6, initialCap: 3 } });
  return out;
}

describe('Copy as CLI and the simulate grammar: one grammar in both directions', () => {
  it('write → parse → paramsFor gives the parameters and replicas the panel ran, on every preset and policy', () => {
    let checked = 0;
    for (const { name, s } of scenarios()) {
      const r = resolveScenario(s);
      if (!r.ok) continue; // a model that does not fit this GPU: the panel runs nothing, and writes nothing
      const words = cliArgs(s, r.scenario, input);
      const a = parseSimulateArgs(words);
      assert.deepEqual(paramsFor(a).params, r.scenario.params, `${name}: ${words.join(' ')}`);
      assert.deepEqual(replicaOptions(a), r.scenario.replicas, name);
      assert.deepEqual(writeSimulateArgs(a), words, `${name}: writing the parsed command gives the same words`);
      assert.equal(refuseCopiedCommand(words, TRACE), null, `${name}: the host lets the panel's own command through`);
      checked += 1;
    }
    // 2 GPUs + custom × 5 models + custom × 5 policies, less the pairs whose weights do not fit, plus the variants.
    assert.ok(checked >= 60, `only ${checked} scenarios could run`);
  });

  it('sweeps: the swept flag is left out and the sweep written; the rest still round-trips', () => {
    const s = { ...defaultScenario(), policy: 'ttl-pin' as const };
    const r = resolveScenario(s);
    assert.ok(r.ok);
    for (const sweep of [
      { axis: 'replicas' as const, values: [1, 2, 4, 8] },
      { axis: 'capacity' as const, values: [262_144, 65_536], threshold: 0.25 },
    ]) {
      const words = cliArgs(s, r.scenario, input, sweep);
      const a = parseSimulateArgs(words);
      assert.deepEqual(a.sweep, { axis: sweep.axis, values: sweep.values });
      assert.equal(a.cliffThreshold, sweep.axis === 'capacity' ? 0.25 : null);
      const params = paramsFor(a).params;
      // The swept value is the sweep's; every other parameter is the panel's.
      if (sweep.axis === 'capacity')
        assert.deepEqual({ ...params, capacityTokens: 0 }, { ...r.scenario.params, capacityTokens: 0 });
      else assert.deepEqual(params, r.scenario.params);
      assert.deepEqual(writeSimulateArgs(a), words);
    }
  });
});
