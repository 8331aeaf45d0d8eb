import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseSimulateArgs,
  refuseCopiedCommand,
  SIMULATE_FLAGS,
  SIMULATE_USAGE,
  WHAT_IF_FLAGS,
  writeSimulateArgs,
} from '../../../../src/core/sim/commandLine';
import { GPU_PRESETS, MODEL_PRESETS, ParamError, validateParams } from '../../../../src/core/sim/params';
import { DoesNotFitError, emptySpec, paramsFor } from '../../../../src/core/sim/paramsFor';
import { POLICY_CHOICES, POLICY_PARAMS } from '../../../../src/core/sim/policies';

const gpu = (id: string) => GPU_PRESETS.find((g) => g.id === id)!;
const model = (id: string) => MODEL_PRESETS.find((m) => m.id === id)!;

describe('the simulate grammar, written and read', () => {
  it('writes back, word for word, a command line using every flag it has', () => {
    const words = [
      'trace.jsonl',
      '--format',
      'claude-code',
      '--session',
      'abc',
      '--replicas',
      '8',
      '--stagger-s',
      '1.5',
      '--stagger',
      'random',
      '--seed',
      '3',
      '--tool-wait-scale',
      '0.5',
      '--gpu',
      'h100',
      '--model',
      'llama-3.1-8b',
      '--gpu-memory-gib',
      '96',
      '--policy',
      'admission-cap',
      '--ttl-s',
      'auto',
      '--max-ttl-s',
      '9',
      '--admission-cap',
      'adaptive',
      '--initial-cap',
      '4',
      '--hit-rate-floor',
      '0.6',
      '--backoff',
      '0.4',
      '--window-s',
      '20',
      '--offload-tokens',
      '65536',
      '--offload-gbps',
      '12.5',
      '--gpus',
      '1',
      '--router',
      'kv-aware',
      '--block-size',
      '32',
      '--max-batched-tokens',
      '4096',
      '--max-num-seqs',
      '64',
      '--max-model-len',
      '100000',
      '--sglang-page-size',
      '16',
      '--free-order',
      'legacy',
      '--decode-us-per-seq',
      '2',
      '--engine',
      'reference',
      '--sweep',
      'capacity=16384,32768',
      '--cliff-threshold',
      '0.2',
      '--threads',
      '2',
      '--emit-workload',
      'w.json',
      '--progress',
      '--json',
    ];
    const a = parseSimulateArgs(words);
    assert.deepEqual(writeSimulateArgs(a), words);
    // Every flag the parser knows was used once, so the writer knows them all.
    const used = new Set(words.filter((w) => w.startsWith('--')));
    for (const f of SIMULATE_FLAGS)
      if (
        f !== '--workload' &&
        f !== '--step-fixed-ms' &&
        f !== '--prefill-us-per-token' &&
        f !== '--kv-read-ns-per-token' &&
        f !== '--kv-bytes-per-token' &&
        f !== '--capacity-tokens' &&
        f !== '--target-hit-rate'
      )
        assert.ok(used.has(f), f);
    const costs = [
      '--workload',
      'w.json',
      '--capacity-tokens',
      '1e+21',
      '--step-fixed-ms',
      '0.1',
      '--prefill-us-per-token',
      '1e-7',
      '--kv-read-ns-per-token',
      '64',
      '--kv-bytes-per-token',
      '131072',
      '--sweep',
      'gpus=1,2',
      '--target-hit-rate',
      '0.9',
    ];
    assert.deepEqual(writeSimulateArgs(parseSimulateArgs(costs)), costs);
  });

  it("each policy's parameters are declared once: their flags parse, the help lists them, the panel may write them", () => {
    for (const c of POLICY_CHOICES)
      for (const p of c.params) {
        assert.ok(SIMULATE_FLAGS.includes(p.flag), p.flag);
        assert.ok(WHAT_IF_FLAGS.includes(p.flag), p.flag);
        assert.match(SIMULATE_USAGE, new RegExp(`^  ${p.flag} ${p.metavar.replace('|', '\\|')} +\\S`, 'm'));
      }
    assert.equal(new Set(POLICY_PARAMS.map((p) => p.flag)).size, POLICY_PARAMS.length, 'no flag declared twice');
    const a = parseSimulateArgs(['t.jsonl', '--ttl-s', 'auto', '--admission-cap', '7', '--backoff', '0.25']);
    assert.deepEqual(a.policyValues, { ttlS: 'auto', admissionCap: 7, backoff: 0.25 });
  });

  it('refuses by name a pasted command with a flag the panel cannot express', () => {
    const base = ['/t.jsonl', '--gpu', 'h200', '--model', 'qwen3-32b'];
    for (const [flag, value] of [
      ['--engine', 'reference'],
      ['--block-size', '32'],
      ['--threads', '2'],
      ['--free-order', 'legacy'],
      ['--decode-us-per-seq', '1'],
      ['--max-num-seqs', '4'],
      ['--sglang-page-size', '16'],
    ] as const) {
      assert.equal(
        refuseCopiedCommand(
          [...base, flag, value, ...(flag === '--threads' ? ['--sweep', 'replicas=1,2'] : [])],
          '/t.jsonl',
        ),
        `${flag} is not something the what-if panel writes`,
      );
    }
    assert.equal(
      refuseCopiedCommand([...base, '--progress'], '/t.jsonl'),
      '--progress is not something the what-if panel writes',
    );
    assert.equal(refuseCopiedCommand([...base, '--policy', 'ttl-pin', '--ttl-s', 'auto', '--json'], '/t.jsonl'), null);
  });
});

describe('paramsFor: presets and values to engine parameters', () => {
  it('derives the capacity and step costs from a GPU and a model (worked by hand)', () => {
    // H200: 140.4 GiB × 0.9 − 61.1 − 3 = 62.26 GiB = 62.26 × 4096 = 255,016.96 tokens of 256 KiB → 255,016 → whole 16-token blocks 255,008.
    const h200 = paramsFor({ ...emptySpec(), gpu: gpu('h200'), model: model('qwen3-32b') });
    assert.equal(h200.params.capacityTokens, 255_008);
    assert.deepEqual(
      [
        h200.params.stepFixedMs,
        h200.params.kvReadNsPerToken,
        h200.params.prefillUsPerToken,
        h200.params.kvBytesPerToken,
      ],
      [16.1, 64, 132.7, 262_144],
    );
    assert.equal(h200.hardware, 'one H200 141 GB with Qwen3-32B (bf16)');
    // H100: 79.65 × 0.9 − 64.1 = 7.585 GiB = 31,068.16 tokens → 31,056 in blocks; an H100's step costs.
    const h100 = paramsFor({ ...emptySpec(), gpu: gpu('h100'), model: model('qwen3-32b') });
    assert.deepEqual(
      [h100.params.capacityTokens, h100.params.stepFixedMs, h100.params.kvReadNsPerToken],
      [31_056, 23, 92],
    );
    // Custom memory keeps the base GPU's step costs: 96 × 0.9 − 64.1 = 22.3 GiB = 91,340.8 → 91,328.
    const custom = paramsFor({ ...emptySpec(), gpu: gpu('h100'), gpuMemoryGiB: 96, model: model('qwen3-32b') });
    assert.deepEqual(
      [custom.params.capacityTokens, custom.params.stepFixedMs, custom.hardware],
      [91_328, 23, 'one 96 GiB GPU with Qwen3-32B (bf16)'],
    );
  });

  it('refuses a model that leaves no cache unless a capacity is given; a block-hash trace keeps its block size', () => {
    const tooSmall = { ...emptySpec(), gpu: gpu('h100'), gpuMemoryGiB: 40, model: model('qwen3-32b') };
    assert.throws(
      () => paramsFor(tooSmall),
      (e: unknown) =>
        e instanceof DoesNotFitError &&
        e instanceof ParamError &&
        /does not fit on a 40 GiB GPU: 0\.9 × 40 GiB = 36\.0 GiB usable/.test(e.message),
    );
    assert.equal(paramsFor({ ...tooSmall, capacityTokens: 4096 }).params.capacityTokens, 4096);
    assert.equal(paramsFor({ ...emptySpec(), blockSizeTokens: 32 }, 512).params.blockSizeTokens, 512);
  });

  it("applies each policy's values, and a fleet only for more than one GPU", () => {
    const p = paramsFor({
      ...emptySpec(),
      policy: 'admission-cap',
      policyValues: { admissionCap: 6, ttlS: 4, offloadTokens: 1000, offloadGbps: 10 },
      gpus: 1,
      router: 'kv-aware',
    }).params;
    assert.deepEqual(
      [p.policy, p.admissionCap.cap, p.admissionCap.initialCap, p.ttlPin.ttlS, p.offload, p.fleet],
      ['admission-cap', 6, 8, 4, { capacityTokens: 1000, bandwidthGBps: 10 }, undefined],
    );
    assert.equal(
      paramsFor({ ...emptySpec(), policyValues: { offloadTokens: 1000 } }).params.offload,
      null,
      'a CPU tier needs its bandwidth too',
    );
    assert.deepEqual(paramsFor({ ...emptySpec(), gpus: 4, router: null }).params.fleet, {
      gpus: 4,
      router: 'kv-aware',
    });
    assert.throws(
      () => validateParams(paramsFor({ ...emptySpec(), policy: 'admission-cap', gpus: 2, router: null }).params),
      /fleet\.gpus must be 1 with policy 'admission-cap'/,
    );
  });
});
