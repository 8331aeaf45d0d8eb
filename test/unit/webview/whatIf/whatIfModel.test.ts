import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallRow } from '../../../../src/core/view/traceView';
import { engineByName } from '../../../../src/core/sim/engines/engineTable';
import { DEFAULT_PARAMS } from '../../../../src/core/sim/params';
import { runScenario } from '../../../../src/core/sim/scenario';
import type { ScenarioCall, ScenarioResult } from '../../../../src/core/sim/scenario';
import { runSweep } from '../../../../src/core/sim/sweep';
import type { AgentWorkload } from '../../../../src/core/sim/workload';
import {
  capacitySweep,
  capNote,
  cliArgs,
  cliCommand,
  cliffChartModel,
  defaultScenario,
  fitCheck,
  headlineFigures,
  parseField,
  pointOf,
  policyRows,
  readScenario,
  resolveScenario,
  scenarioBars,
  scenarioDigest,
  scenarioSentence,
  shellWord,
  skippedText,
  splitCall,
} from '../../../../webview/whatIf/whatIfModel';
import type { ResolvedScenario, Scenario } from '../../../../webview/whatIf/whatIfModel';
import { sweepValues } from '../../../../webview/whatIf/whatIfModel';
import { workloadFromSession } from '../../../../src/core/sim/workload';
import { join } from 'node:path';
import { parseFile, repoRoot } from '../../../support/helpers';

const FAST = engineByName('fast');

// The what-if panel's view-model. Expected engine parameters come from the presets'
// published figures (docs/design/simulator.md §4–5, as in src/core/sim/params.ts) and the
// mapping `agent-trace simulate` documents for --gpu/--model; cliffs are checked
// against the core's own runSweep on the same points.

function resolved(s: Scenario, options: Parameters<typeof resolveScenario>[1] = {}): ResolvedScenario {
  const r = resolveScenario(s, options);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.scenario;
}

// One agent session (the sweep test's): 6 calls growing by 32 tokens, 0.5 s tool waits; 27 blocks at its end.
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
const small = { ...DEFAULT_PARAMS, capacityTokens: 2048, stepFixedMs: 1, prefillUsPerToken: 10, kvReadNsPerToken: 10 };
const replicas = (n: number) => ({
  replicas: n,
  staggerS: 0,
  staggerMode: 'fixed' as const,
  seed: 1,
  toolWaitScale: 1,
});

describe('what-if scenario and its engine parameters', () => {
  it('starts from the settings and falls back on unknown presets', () => {
    const s = defaultScenario({
      gpu: 'h100',
      model: 'llama-3.1-8b',
      replicas: 32,
      staggerS: 0,
      toolWaitScale: 2,
      policy: 'ttl-pin',
    });
    assert.equal(s.gpu, 'h100');
    assert.equal(s.model, 'llama-3.1-8b');
    assert.equal(s.replicas, 32);
    assert.equal(s.toolWaitScale, 2);
    assert.equal(s.policy, 'ttl-pin');
    const bad = defaultScenario({
      gpu: 'a100',
      model: 'gpt-9',
      replicas: 0,
      staggerS: -1,
      toolWaitScale: 9,
      policy: 'vllm-lru',
    });
    assert.deepEqual(
      [bad.gpu, bad.model, bad.replicas, bad.staggerS, bad.toolWaitScale],
      ['h200', 'qwen3-32b', 16, 10, 1],
    );
  });

  it('reads a saved scenario defensively, keeping what is valid', () => {
    const s = readScenario({
      gpu: 'custom',
      gpuMemoryGiB: 96,
      replicas: 0,
      model: 42,
      policy: 'cpu-offload',
      ttlS: 'auto',
      admissionCap: 'adaptive',
      toolWaitScale: '0.5',
      capacityTyped: 'yes',
    });
    assert.equal(s.gpu, 'custom');
    assert.equal(s.gpuMemoryGiB, 96);
    assert.equal(s.replicas, 16, 'N = 0 is not a scenario: the default stays');
    assert.equal(s.model, 'qwen3-32b');
    assert.equal(s.policy, 'cpu-offload');
    assert.equal(s.ttlS, 'auto');
    assert.equal(s.toolWaitScale, 0.5);
    assert.equal(s.capacityTyped, false);
    assert.deepEqual(readScenario('garbage'), defaultScenario());
  });

  it('maps a GPU and model preset as the CLI does: capacityFor, KV bytes, prefill cost, and the step costs on that GPU', () => {
    const r = resolved(defaultScenario());
    // Qwen3-32B bf16 on one H200: (140.4 × 0.9 − 61.1 − 3) GiB / 256 KiB = 255,008 tokens in 16-token blocks (docs/design/simulator.md §4).
    assert.equal(r.params.capacityTokens, 255_008);
    assert.equal(r.params.kvBytesPerToken, 262_144);
    assert.equal(r.params.prefillUsPerToken, 132.7);
    assert.equal(r.params.stepFixedMs, 16.1);
    assert.equal(r.params.kvReadNsPerToken, 64);
    assert.equal(r.params.policy, 'vllm-lru');
    assert.equal(r.params.offload, null);
    assert.deepEqual(r.replicas, { replicas: 16, staggerS: 10, staggerMode: 'fixed', seed: 1, toolWaitScale: 1 });
    assert.equal(r.gpuText, 'one H200');
    assert.equal(r.modelText, 'Qwen3-32B');
    const h100 = resolved({ ...defaultScenario(), gpu: 'h100' });
    assert.equal(h100.params.capacityTokens, 31_056);
    assert.equal(h100.params.stepFixedMs, 23);
    assert.equal(h100.params.kvReadNsPerToken, 92);
  });

  it('custom memory uses the H100 step costs; a custom model the engine defaults', () => {
    const mem = resolved({ ...defaultScenario(), gpu: 'custom', gpuMemoryGiB: 96 });
    assert.equal(mem.params.capacityTokens, 91_328);
    assert.equal(mem.params.stepFixedMs, 23);
    assert.equal(mem.gpuText, 'one 96 GiB GPU');
    const model = resolved({
      ...defaultScenario(),
      model: 'custom',
      customKvBytesPerToken: 131_072,
      customWeightsGiB: 15,
    });
    assert.equal(model.params.kvBytesPerToken, 131_072);
    assert.equal(model.params.stepFixedMs, DEFAULT_PARAMS.stepFixedMs);
    assert.equal(model.params.prefillUsPerToken, DEFAULT_PARAMS.prefillUsPerToken);
    assert.equal(model.modelText, 'a custom model (128 KiB KV per token)');
  });

  it('a typed capacity keeps the model costs; below one block it is refused at the field', () => {
    const typed = resolved({ ...defaultScenario(), capacityTyped: true, capacityTokens: 100_000 });
    assert.equal(typed.params.capacityTokens, 100_000);
    assert.equal(typed.params.stepFixedMs, 16.1);
    const low = resolveScenario({ ...defaultScenario(), capacityTyped: true, capacityTokens: 8 });
    assert.equal(low.ok, false);
    assert.match(!low.ok ? (low.errors.capacityTokens ?? '') : '', /at least one block \(16 tokens\)/);
    const tiny = resolveScenario({ ...defaultScenario(), gpu: 'custom', gpuMemoryGiB: 60 });
    assert.match(!tiny.ok ? (tiny.errors.gpuMemoryGiB ?? '') : '', /Qwen3-32B \(bf16\) does not fit on a 60 GiB GPU/);
  });

  it('maps each policy with its own parameters and leaves the others at the engine defaults', () => {
    const s = {
      ...defaultScenario(),
      ttlS: 12 as const,
      maxTtlS: 60,
      admissionCap: 6 as const,
      offloadTokens: 1_000_000,
      offloadGbps: 32,
    };
    const ttl = resolved({ ...s, policy: 'ttl-pin' }).params;
    assert.deepEqual([ttl.policy, ttl.ttlPin], ['ttl-pin', { ttlS: 12, maxTtlS: 60 }]);
    assert.deepEqual(ttl.admissionCap, DEFAULT_PARAMS.admissionCap);
    const cap = resolved({ ...s, policy: 'admission-cap' }).params;
    assert.deepEqual([cap.policy, cap.admissionCap.cap], ['admission-cap', 6]);
    assert.deepEqual(cap.ttlPin, DEFAULT_PARAMS.ttlPin);
    const offload = resolved({ ...s, policy: 'cpu-offload' }).params;
    assert.deepEqual([offload.policy, offload.offload], ['vllm-lru', { capacityTokens: 1_000_000, bandwidthGBps: 32 }]);
    assert.equal(resolved({ ...s, policy: 'sglang-lru' }).params.policy, 'sglang-lru');
    // The comparison asks for another policy of the same scenario.
    assert.equal(resolved(s, { policy: 'ttl-pin' }).params.policy, 'ttl-pin');
  });

  it('a block-hash trace keeps its block size and has no replicas', () => {
    const r = resolved(defaultScenario(), { blockSizeTokens: 512, blockTrace: true });
    assert.equal(r.params.blockSizeTokens, 512);
    assert.equal(r.params.capacityTokens % 512, 0);
    assert.equal(r.replicas, null);
  });

  it('says when no call fits in the cache', () => {
    assert.deepEqual(fitCheck(workload, { ...small, capacityTokens: 256 }), {
      tooLong: 6,
      total: 6,
      shortestTokens: 272,
    });
    assert.equal(fitCheck(workload, small).tooLong, 0);
  });
});

describe('what-if fields refuse bad input with a message', () => {
  it('non-numbers, N = 0, fractions, out of range', () => {
    const no = (field: Parameters<typeof parseField>[0], text: string, pattern: RegExp): void => {
      const r = parseField(field, text);
      assert.equal(r.ok, false, `${field} "${text}" should be refused`);
      assert.match(!r.ok ? r.message : '', pattern);
    };
    no('replicas', 'abc', /"abc" is not a number: Sessions needs a whole number from 1 to 256/);
    no('replicas', '0', /Sessions cannot be 0/);
    no('replicas', '2.5', /whole number/);
    no('replicas', '300', /from 1 to 256/);
    no('replicas', '', /empty/);
    no('capacityTokens', '8', /at least one block \(16 tokens\)/);
    no('toolWaitScale', '5', /from 0.25 to 4/);
    no('backoff', '1', /Backoff cannot be 1/);
    no('staggerS', '-1', /≥ 0/);
    no('ttlS', 'soon', /or "auto"/);
    assert.match(
      (parseField('capacityTokens', '100', 512) as { message: string }).message,
      /at least one block \(512 tokens\)/,
    );
  });

  it('numbers, thousands separators and the words a field takes', () => {
    assert.deepEqual(parseField('replicas', ' 24 '), { ok: true, value: 24 });
    assert.deepEqual(parseField('capacityTokens', '255,008'), { ok: true, value: 255_008 });
    assert.deepEqual(parseField('toolWaitScale', '0.25'), { ok: true, value: 0.25 });
    assert.deepEqual(parseField('ttlS', 'auto'), { ok: true, value: 'auto' });
    assert.deepEqual(parseField('admissionCap', 'adaptive'), { ok: true, value: 'adaptive' });
    assert.deepEqual(parseField('gpuMemoryGiB', '1e2'), { ok: true, value: 100 });
  });
});

describe('Copy as CLI', () => {
  const input = {
    filePath: '/home/USER/project/samples/claude-code-sessions.trace.jsonl',
    sessionId: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04',
    format: null,
  };

  it('writes presets as --gpu/--model and the replica flags', () => {
    const s = defaultScenario();
    assert.equal(
      cliCommand(s, resolved(s), input),
      'agent-trace simulate /home/USER/project/samples/claude-code-sessions.trace.jsonl --session ae4a77f8-aedd-4bc1-888f-c94edc91af04 --replicas 16 --stagger-s 10 --tool-wait-scale 1 --gpu h200 --model qwen3-32b --policy vllm-lru --json',
    );
    const custom = { ...s, gpu: 'custom', gpuMemoryGiB: 96, staggerMode: 'random' as const, seed: 7 };
    assert.deepEqual(cliArgs(custom, resolved(custom), input).slice(3), [
      '--replicas',
      '16',
      '--stagger-s',
      '10',
      '--stagger',
      'random',
      '--seed',
      '7',
      '--tool-wait-scale',
      '1',
      '--gpu',
      'h100',
      '--model',
      'qwen3-32b',
      '--gpu-memory-gib',
      '96',
      '--policy',
      'vllm-lru',
      '--json',
    ]);
  });

  it('writes a typed capacity with every step cost, so the CLI defaults do not matter', () => {
    const s = { ...defaultScenario(), capacityTyped: true, capacityTokens: 100_000 };
    assert.deepEqual(cliArgs(s, resolved(s), input).slice(9), [
      '--capacity-tokens',
      '100000',
      '--step-fixed-ms',
      '16.1',
      '--prefill-us-per-token',
      '132.7',
      '--kv-read-ns-per-token',
      '64',
      '--kv-bytes-per-token',
      '262144',
      '--policy',
      'vllm-lru',
      '--json',
    ]);
  });

  it("writes each policy's own flags", () => {
    const base = { ...defaultScenario(), ttlS: 'auto' as const, maxTtlS: 45 };
    const tail = (s: Scenario): string[] => cliArgs(s, resolved(s), input).slice(13);
    assert.deepEqual(tail({ ...base, policy: 'ttl-pin' }), [
      '--policy',
      'ttl-pin',
      '--ttl-s',
      'auto',
      '--max-ttl-s',
      '45',
      '--json',
    ]);
    assert.deepEqual(tail({ ...base, policy: 'admission-cap', admissionCap: 8 }), [
      '--policy',
      'admission-cap',
      '--admission-cap',
      '8',
      '--json',
    ]);
    assert.deepEqual(tail({ ...base, policy: 'admission-cap' }), [
      '--policy',
      'admission-cap',
      '--admission-cap',
      'adaptive',
      '--initial-cap',
      '8',
      '--hit-rate-floor',
      '0.8',
      '--backoff',
      '0.5',
      '--window-s',
      '30',
      '--json',
    ]);
    assert.deepEqual(tail({ ...base, policy: 'cpu-offload' }), [
      '--policy',
      'vllm-lru',
      '--offload-tokens',
      '2000000',
      '--offload-gbps',
      '25',
      '--json',
    ]);
    assert.deepEqual(tail({ ...base, policy: 'sglang-lru' }), ['--policy', 'sglang-lru', '--json']);
  });

  it('a sweep replaces the swept flag; a block-hash trace has no session or replica flags', () => {
    const s = defaultScenario();
    const args = cliArgs(s, resolved(s), input, { axis: 'replicas', values: [1, 2, 4] });
    assert.ok(!args.includes('--replicas'));
    assert.deepEqual(args.slice(-3), ['--sweep', 'replicas=1,2,4', '--json']);
    const cap = cliArgs(s, resolved(s), input, { axis: 'capacity', values: [65536, 32768], threshold: 0.2 });
    assert.ok(!cap.includes('--capacity-tokens') && !cap.includes('--gpu'));
    assert.deepEqual(cap.slice(-5), ['--sweep', 'capacity=65536,32768', '--cliff-threshold', '0.2', '--json']);
    const block = cliArgs(s, resolved(s, { blockSizeTokens: 512, blockTrace: true }), {
      filePath: 'm.jsonl',
      sessionId: null,
      format: 'mooncake',
    });
    assert.deepEqual(block, [
      'm.jsonl',
      '--format',
      'mooncake',
      '--gpu',
      'h200',
      '--model',
      'qwen3-32b',
      '--policy',
      'vllm-lru',
      '--json',
    ]);
  });

  it('writes a fleet as --gpus K --router R, and nothing for one GPU', () => {
    const s = { ...defaultScenario(), gpus: 4, router: 'session-affinity' as const };
    assert.deepEqual(cliArgs(s, resolved(s), input).slice(-7), [
      '--policy',
      'vllm-lru',
      '--gpus',
      '4',
      '--router',
      'session-affinity',
      '--json',
    ]);
    assert.deepEqual(resolved(s).params.fleet, { gpus: 4, router: 'session-affinity' });
    assert.match(resolved(s).gpuText, /^4 H200s behind the Session affinity router$/);
    const one = { ...s, gpus: 1 };
    assert.equal(resolved(one).params.fleet, undefined);
    assert.ok(!cliArgs(one, resolved(one), input).includes('--gpus'));
    // An admission cap is a one-GPU policy: refused at the GPUs field, and left out of a fleet's comparison.
    const capped = resolveScenario({ ...s, policy: 'admission-cap' });
    assert.ok(!capped.ok && /admission cap runs on one GPU/.test(capped.errors.gpus ?? ''));
    assert.deepEqual(readScenario({ gpus: 8, router: 'kv-aware' }).router, 'kv-aware');
    assert.equal(readScenario({ gpus: 8, router: 'random' }).router, defaultScenario().router);
    assert.equal(readScenario({ gpus: 999 }).gpus, 1, 'beyond the control: the default');
  });

  it('uses only the flags of the agent-trace simulate contract', () => {
    const contract = new Set([
      '--gpus',
      '--router',
      '--session',
      '--replicas',
      '--stagger-s',
      '--stagger',
      '--seed',
      '--tool-wait-scale',
      '--capacity-tokens',
      '--gpu',
      '--model',
      '--gpu-memory-gib',
      '--policy',
      '--ttl-s',
      '--max-ttl-s',
      '--admission-cap',
      '--initial-cap',
      '--hit-rate-floor',
      '--backoff',
      '--window-s',
      '--offload-tokens',
      '--offload-gbps',
      '--block-size',
      '--max-batched-tokens',
      '--max-num-seqs',
      '--max-model-len',
      '--free-order',
      '--step-fixed-ms',
      '--prefill-us-per-token',
      '--kv-read-ns-per-token',
      '--decode-us-per-seq',
      '--kv-bytes-per-token',
      '--sweep',
      '--cliff-threshold',
      '--json',
      '--format',
    ]);
    const scenarios: Scenario[] = [
      defaultScenario(),
      { ...defaultScenario(), capacityTyped: true, policy: 'admission-cap', staggerMode: 'random' },
      { ...defaultScenario(), gpu: 'custom', policy: 'cpu-offload' },
      { ...defaultScenario(), model: 'custom', policy: 'ttl-pin', gpus: 3 },
    ];
    for (const s of scenarios)
      for (const a of cliArgs(s, resolved(s), input, { axis: 'replicas', values: [1] }))
        if (a.startsWith('--')) assert.ok(contract.has(a), `${a} is not a flag of agent-trace simulate`);
  });

  it('quotes shell words only when needed', () => {
    assert.equal(shellWord('/a/b-c_d.jsonl'), '/a/b-c_d.jsonl');
    assert.equal(shellWord('replicas=1,2,4'), 'replicas=1,2,4');
    assert.equal(shellWord("/my traces/it's.jsonl"), `'/my traces/it'\\''s.jsonl'`);
  });
});

describe('sweeps and the cliff', () => {
  it('says which points a sweep skipped, and why', () => {
    assert.equal(
      skippedText('replicas', [64, 128, 256], 'cliff'),
      'Not run: N = 64, 128 and 256. The sweep stops 2 points past the cliff; the rest would only fall further.',
    );
    assert.equal(skippedText('replicas', [], 'cliff'), null);
    assert.match(
      skippedText('capacity', [16384], 'budget') ?? '',
      /^Not run: capacities 16.4k tokens\. The sweep stops starting points after 20 s/,
    );
  });

  it('capacity sweeps go from 4× down to 1/16 in whole blocks', () => {
    assert.deepEqual(
      capacitySweep(255_008),
      [1_020_032, 510_016, 382_512, 255_008, 191_248, 127_504, 89_248, 63_744, 31_872, 15_936],
    );
    assert.deepEqual(capacitySweep(20, 16), [80, 32, 16]);
  });

  it('the chart model puts the knee, the cap and the current scenario where the cliff says', () => {
    const pts = [1, 2, 4].map((n) => ({
      value: n,
      result: pointOf(runScenario(FAST, workload, { params: small, replicas: replicas(n) })),
    }));
    const cliff = runSweep(FAST, workload, { params: small }, 'replicas', [1, 2, 4]).cliff;
    const m = cliffChartModel(
      'replicas',
      'vllm-lru',
      [...pts].reverse(),
      new Map([['ttl-pin', pts]]),
      { ...cliff, at: 4, suggestedAdmissionCap: 2 },
      { x: 3, result: pts[1]!.result },
    );
    assert.deepEqual(m.xs, [1, 2, 4]);
    assert.equal(m.knee, 4);
    assert.equal(m.suggested, 2);
    assert.deepEqual(m.current, { x: 3, hit: pts[1]!.result.admissionHitRate, prefill: pts[1]!.result.prefillShare });
    assert.deepEqual(
      m.series.map((s) => s.key),
      ['hit', 'prefill', 'ideal', 'hit-ttl-pin'],
    );
  });
});

describe('what-if results as figures, sentence, bars and table', () => {
  const result = (over: Partial<ScenarioResult>): ScenarioResult => ({
    replicas: 24,
    capacityTokens: 255_008,
    policy: 'vllm-lru',
    requests: 100,
    rejectedRequests: 0,
    promptTokens: 1_000_000,
    admissionHitRate: 0.41,
    idealHitRate: 0.98,
    vllmMetricHitRate: 0.4,
    prefillTokens: 420_000,
    recomputedPrefillTokens: 400_000,
    offloadHitTokens: 0,
    preemptions: 0,
    prefillShare: 0.52,
    makespanS: 100,
    steps: 1000,
    slowdown: { mean: 2.5, max: 3 },
    sessions: [],
    calls: [],
    ...over,
  });
  const alone = pointOf(
    result({ replicas: 1, admissionHitRate: 0.97, prefillShare: 0.07, slowdown: { mean: 1, max: 1 } }),
  );

  it('says the scenario in one sentence, from the session alone', () => {
    const s = { ...defaultScenario(), replicas: 24 };
    assert.equal(
      scenarioSentence(s, resolved(s), result({}), alone),
      '24 sessions like this on one H200 with Qwen3-32B: hit rate falls from 97% to 41% and prefill becomes 52% of LLM time; each takes 2.50× as long as alone.',
    );
    const ttl = { ...s, policy: 'ttl-pin' as const, capacityTyped: true, capacityTokens: 100_000 };
    assert.match(
      scenarioSentence(
        ttl,
        resolved(ttl),
        result({ admissionHitRate: 0.9704, prefillShare: 0.07, slowdown: { mean: 1.01, max: 1.02 } }),
        alone,
      ),
      /on one H200 with Qwen3-32B and a 100,000-token KV cache under TTL pin: hit rate stays at 97% and prefill stays at 7% of LLM time\.$/,
    );
    const one = { ...s, replicas: 1 };
    assert.equal(
      scenarioSentence(one, resolved(one), result({ replicas: 1, admissionHitRate: 0.97, prefillShare: 0.07 }), null),
      'One session like this alone on one H200 with Qwen3-32B: hit rate 97% (ideal 98%) and prefill is 7% of LLM time.',
    );
    assert.match(
      scenarioSentence(s, resolved(s), result({ requests: 300 }), null, true),
      /^This trace's 300 requests on one H200 with Qwen3-32B: hit rate 41% \(ideal 98%\)/,
    );
  });

  it('headline figures carry their raw values', () => {
    const f = headlineFigures(result({ preemptions: 3, offloadHitTokens: 5000 }), alone);
    assert.deepEqual(
      f.map((x) => [x.name, x.text, x.value]),
      [
        ['whatIfHitRate', '41.0%', 0.41],
        ['whatIfRecomputed', '400,000', 400_000],
        ['whatIfPrefillShare', '52.0%', 0.52],
        ['whatIfSlowdown', '2.50×', 2.5],
        ['whatIfOffloadHits', '5,000', 5000],
        ['whatIfPreemptions', '3', 3],
      ],
    );
    assert.equal(f[0]!.note, 'ideal 98.0% · alone 97.0%');
  });

  it('splits each call into hit, reloaded, recomputed, appended and output, beside the traced call', () => {
    const call = (over: Partial<ScenarioCall>): ScenarioCall => ({
      callIndex: 0,
      promptTokens: 1000,
      outputTokens: 50,
      hitTokens: 600,
      idealHitTokens: 900,
      prefillTokens: 400,
      recomputedTokens: 300,
      offloadHitTokens: 0,
      waitedS: 0,
      latencyS: 1,
      preemptions: 0,
      rejected: false,
      ...over,
    });
    assert.deepEqual(splitCall(call({})), { hit: 600, reloaded: 0, recomputed: 300, appended: 100, output: 50 });
    assert.deepEqual(splitCall(call({ rejected: true })), {
      hit: 0,
      reloaded: 0,
      recomputed: 0,
      appended: 0,
      output: 0,
    });
    const row = (index: number, cached: number): CallRow =>
      ({ index, cached, appended: 100, output: 50, input: cached + 100 }) as unknown as CallRow;
    // Traced call 1 (index 1) had no token counts and was left out of the workload: bars map to calls 0 and 2.
    const m = scenarioBars(
      [row(0, 900), row(1, 0), row(2, 950)],
      [call({ callIndex: 0 }), call({ callIndex: 1, hitTokens: 950, recomputedTokens: 0, rejected: false })],
      [0, 2],
    );
    assert.deepEqual(m.labels, ['1', '3']);
    assert.deepEqual(m.callIndexes, [0, 2]);
    assert.deepEqual(m.traced.cached, [900, 950]);
    assert.deepEqual(m.scenario.hit, [600, 950]);
    assert.deepEqual(m.worse, [0]);
  });

  it('policy rows: current marked, results, errors and runs in progress', () => {
    const rows = policyRows(
      'ttl-pin',
      new Map<'vllm-lru' | 'ttl-pin' | 'sglang-lru', { result: ReturnType<typeof pointOf> } | { error: string }>([
        ['vllm-lru', { result: pointOf(result({})) }],
        ['ttl-pin', { result: pointOf(result({ admissionHitRate: 0.9 })) }],
        ['sglang-lru', { error: 'radix engine missing' }],
      ]),
    );
    assert.deepEqual(
      rows.map((r) => [r.policy, r.state, r.current]),
      [
        ['vllm-lru', 'done', false],
        ['sglang-lru', 'error', false],
        ['ttl-pin', 'done', true],
        ['admission-cap', 'running', false],
        ['cpu-offload', 'running', false],
      ],
    );
    assert.deepEqual(rows[0]!.cells, {
      hitRate: '41.0%',
      vsIdeal: '−57.0 pts',
      recomputed: '400,000',
      prefillShare: '52.0%',
      slowdown: '2.50×',
    });
  });

  it('digests the scenario for the collapsed section', () => {
    assert.equal(scenarioDigest(defaultScenario(), false), '16 sessions · H200 · Qwen3-32B · vLLM LRU');
    assert.equal(
      scenarioDigest(
        {
          ...defaultScenario(),
          gpu: 'custom',
          gpuMemoryGiB: 96,
          capacityTyped: true,
          capacityTokens: 64_000,
          policy: 'cpu-offload',
        },
        true,
      ),
      'the whole trace · 96 GiB GPU · Qwen3-32B · 64k tokens · CPU offload',
    );
  });
});

describe('why the two sweeps suggest different admission caps', () => {
  it('says the N sweep measured its cap on this cache and the capacity sweep estimated its cap from sizes, with the numbers of each', async () => {
    // The bundled sample's main session (the last 48 calls of the spotter log) on the default H200 with Qwen3-32B (255,008 tokens), 16 sessions 10 s apart.
    const parsed = await parseFile(join(repoRoot, 'samples/claude-code-sessions.trace.jsonl'));
    const { workload } = workloadFromSession(parsed.model.sessions[0]!);
    const replicas = { replicas: 16, staggerS: 10, staggerMode: 'fixed' as const, seed: 1, toolWaitScale: 1 };
    const base = { params: DEFAULT_PARAMS, replicas };
    const byN = runSweep(FAST, workload, base, 'replicas', sweepValues('replicas', DEFAULT_PARAMS.capacityTokens));
    const bySize = runSweep(FAST, workload, base, 'capacity', sweepValues('capacity', DEFAULT_PARAMS.capacityTokens));
    // The two caps the panel used to state side by side, unexplained: the last N before the cliff, and how many peak working sets fit.
    assert.equal(byN.cliff.suggestedAdmissionCap, byN.cliff.lastGood);
    assert.equal(
      bySize.cliff.lastGood,
      382_512,
      'the smallest capacity before the cliff: 1.5 × 255,008, in whole 16-token blocks',
    );
    // The session's peak: call 138 of the spotter log, 141,787 prompt tokens + 1 output (read from its usage line).
    // ⌊382,512 / 141,788⌋ = 2 sessions.
    assert.equal(bySize.cliff.suggestedAdmissionCap, 2);
    assert.ok(
      byN.cliff.suggestedAdmissionCap! > 2,
      `the measured cap (${byN.cliff.suggestedAdmissionCap}) admits more than the estimate`,
    );
    const n = capNote('replicas', byN.cliff, workload, DEFAULT_PARAMS.capacityTokens, replicas)!;
    assert.match(
      n,
      new RegExp(
        `^This cap is measured on this cache \\(255k tokens of KV capacity\\): ${byN.cliff.suggestedAdmissionCap} sessions, started 10 s apart, ran before the cliff\\.`,
      ),
    );
    assert.match(n, /estimate from sizes/);
    const size = capNote('capacity', bySize.cliff, workload, DEFAULT_PARAMS.capacityTokens, replicas)!;
    assert.match(
      size,
      /^This cap is an estimate from sizes, not a run: 382\.5k tokens \(the smallest capacity before the cliff\) hold 2 sessions at their peak context \(141\.8k tokens each\) at once\. The sweep against N measures the cap on this cache \(255k tokens\)/,
    );
    // Nothing to explain without a cap.
    assert.equal(
      capNote(
        'capacity',
        { ...bySize.cliff, suggestedAdmissionCap: null },
        workload,
        DEFAULT_PARAMS.capacityTokens,
        replicas,
      ),
      null,
    );
    assert.equal(capNote('replicas', null, workload, DEFAULT_PARAMS.capacityTokens, replicas), null);
  });
});
