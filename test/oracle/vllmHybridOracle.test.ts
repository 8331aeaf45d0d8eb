import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { EngineOutcome } from '../../src/core/sim/engines/engineTypes';
import { engineByName } from '../../src/core/sim/engines/engineTable';
import {
  capacityFor,
  DEFAULT_PARAMS,
  GPU_MEMORY_UTILIZATION,
  GPU_PRESETS,
  MODEL_PRESETS,
  RESERVED_GIB,
} from '../../src/core/sim/params';
import type { FreeOrder, KvLayout } from '../../src/core/sim/params';
import { workloadFromSession } from '../../src/core/sim/workload';
import type { AgentWorkload } from '../../src/core/sim/workload';
import { fixtures, parseFile, repoRoot } from '../support/helpers';
import { findOracle, jobParams, planJob, runKvConfig, runOracle } from './oracleRun';
import type { OracleJob, OracleLayer, OracleReport } from './oracleRun';

// The hybrid engine against vLLM's own hybrid KV-cache manager (HybridKVCacheCoordinator
// with SlidingWindowManager or ChunkedLocalAttentionManager, one shared block pool), driven
// by the oracle's scheduler mirror. Real sessions are replayed as N copies on a roomy cache
// and on a tight one (copies evict each other; running requests are preempted), with both
// free-queue orders, for each hybrid preset's layout: admissions, hits, ideal hits, vLLM's
// hit counters, prefill (in total and per call), preemptions, steps and times must be equal.
// Windows are also shrunk below the sessions' call sizes so that blocks really leave the
// window mid-request and hits have to find a whole window of cached blocks.

const oracle = findOracle();
const skipAll = 'missing' in oracle ? oracle.missing : false;
const oracleDir = 'dir' in oracle ? oracle.dir : '';

const layoutOf = (id: string): KvLayout => {
  const m = MODEL_PRESETS.find((x) => x.id === id);
  assert.ok(m?.kvLayout, `no hybrid preset ${id}`);
  return m.kvLayout;
};

interface Source {
  name: string;
  path: string;
  calls?: number;
  replicas: number;
  staggerS: number;
}

const SOURCES: Source[] = [
  {
    name: 'bundled sample (Claude Code)',
    path: join(repoRoot, 'samples/claude-code-sessions.trace.jsonl'),
    calls: 7,
    replicas: 3,
    staggerS: 0.5,
  },
  {
    name: 'Claude Code, edit retry loop',
    path: join(fixtures, 'claude-code/edit-retry-loop.jsonl'),
    calls: 8,
    replicas: 4,
    staggerS: 3,
  },
  {
    name: 'Codex CLI 0.114 (TraceLab)',
    path: join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl'),
    replicas: 8,
    staggerS: 2,
  },
  {
    name: 'mini-swe-agent, pvlib',
    path: join(fixtures, 'mini-swe-agent/pvlib__pvlib-python-1072.traj.json'),
    replicas: 8,
    staggerS: 1,
  },
];

interface LayoutCase {
  name: string;
  layout: () => KvLayout;
  /** The block size vLLM runs the model with (a Mamba hybrid's raised one); absent, 16. */
  blockSizeTokens?: number;
}

const presetBlockSize = (id: string): number => MODEL_PRESETS.find((x) => x.id === id)!.blockSizeTokens!;

const LAYOUTS: LayoutCase[] = [
  { name: 'gpt-oss (sliding window 128 + full)', layout: () => layoutOf('gpt-oss-120b') },
  { name: 'Gemma 3 (sliding window 1024 ×5 : full)', layout: () => layoutOf('gemma-3-27b') },
  { name: 'Llama 4 (chunked local 8192 ×3 : full)', layout: () => layoutOf('llama-4-scout') },
  {
    name: 'chunked local, 512-token chunks',
    layout: () => ({ ...layoutOf('llama-4-scout'), windowTokens: 512 }),
  },
  {
    name: 'sliding window 1000, full first',
    layout: () => ({ fullGroups: 1, other: 'sliding-window', windowTokens: 1000, otherGroups: 2, otherFirst: false }),
  },
  {
    name: 'Nemotron Nano 9B v2 (Mamba2 ×7 groups : full, 768-token blocks)',
    layout: () => layoutOf('nemotron-nano-9b'),
    blockSizeTokens: presetBlockSize('nemotron-nano-9b'),
  },
  {
    // Finer blocks than vLLM would pick, so that a Mamba hit lands inside the sessions' calls often.
    name: 'Mamba ×2 groups, full first, 64-token blocks',
    layout: () => ({ fullGroups: 1, other: 'mamba', windowTokens: 0, otherGroups: 2, otherFirst: false }),
    blockSizeTokens: 64,
  },
  {
    name: 'Qwen3-Next (Gated DeltaNet ×3 : full, no prefix caching, 544-token blocks)',
    layout: () => layoutOf('qwen3-next-80b'),
    blockSizeTokens: presetBlockSize('qwen3-next-80b'),
  },
];

async function loadWorkload(s: Source): Promise<AgentWorkload> {
  const parsed = await parseFile(s.path);
  assert.equal(parsed.problem, null);
  const usable = (x: (typeof parsed.model.sessions)[number]): boolean =>
    x.calls.some((c) => c.tokens.input !== null && c.tokens.output !== null);
  const session =
    parsed.model.sessions.find((x) => x.role === 'main' && usable(x)) ?? parsed.model.sessions.find(usable)!;
  const w = workloadFromSession(session).workload;
  if (s.calls !== undefined) w.sessions[0]!.calls = w.sessions[0]!.calls.slice(0, s.calls);
  return w;
}

/**
 * Roomy: every copy's largest call at once, in every group. Tight: a little more than one
 * largest call needs at its peak, its whole length in each full-attention group and, in each
 * other group, a window (or chunk) plus one prefill chunk, so copies evict each other.
 */
function capacities(
  w: AgentWorkload,
  replicas: number,
  layout: KvLayout,
  bs = 16,
): Array<{ label: string; capacityTokens: number }> {
  const largest = Math.max(
    ...w.sessions.flatMap((s) => s.calls.map((c) => c.promptTokens + Math.max(1, c.outputTokens))),
  );
  const whole = (t: number): number => Math.ceil(t / bs) * bs;
  const groups = layout.fullGroups + layout.otherGroups;
  // A Mamba group keeps a state per block (with prefix caching: as many blocks as full attention),
  // or one block per request without.
  const otherPeak =
    layout.other !== 'mamba'
      ? Math.min(largest, layout.windowTokens + DEFAULT_PARAMS.maxNumBatchedTokens)
      : layout.prefixCaching === false
        ? bs
        : largest;
  const peak = layout.fullGroups * largest + layout.otherGroups * otherPeak;
  return [
    { label: 'roomy', capacityTokens: whole(largest * replicas * groups * 1.1) },
    { label: 'tight', capacityTokens: whole(peak * 1.2) },
  ];
}

function compare(o: EngineOutcome, job: OracleJob, r: OracleReport): string[] {
  const bad: string[] = [];
  const eq = (what: string, ours: number, theirs: number): void => {
    if (ours !== theirs) bad.push(`${what}: ours ${ours}, oracle ${theirs}`);
  };
  const near = (what: string, ours: number, theirs: number): void => {
    if (Math.abs(ours - theirs) > 1e-6 * Math.max(1, Math.abs(theirs)))
      bad.push(`${what}: ours ${ours}, oracle ${theirs}`);
  };
  const done = o.records.filter((x) => !x.rejected);
  const sum = (f: (x: (typeof done)[number]) => number): number => done.reduce((a, x) => a + f(x), 0);
  eq('calls admitted', done.length, r.calls);
  eq('rejected calls', o.totals.rejectedRequests, r.rejected_calls_too_long);
  eq(
    'prompt tokens',
    sum((x) => x.promptTokens),
    r.prompt_tokens,
  );
  eq(
    'hit tokens at first admission',
    sum((x) => x.hitTokens),
    r.admission_hit_tokens,
  );
  eq(
    'ideal hit tokens',
    sum((x) => x.idealHitTokens),
    r.ideal_at_admission_hit_tokens,
  );
  eq("vLLM's prefix_cache_queries", o.totals.vllmQueries, r.vllm_prefix_cache_queries);
  eq("vLLM's prefix_cache_hits", o.totals.vllmHits, r.vllm_prefix_cache_hits);
  eq(
    'prefill tokens computed',
    sum((x) => x.prefillTokens),
    r.prefill_tokens_computed,
  );
  eq(
    'recomputed prefill tokens',
    sum((x) => x.recomputedTokens),
    r.recomputed_prefill_tokens_at_admission_ideal,
  );
  eq('preemptions', o.totals.preemptions, r.preemptions);
  eq('engine steps', o.totals.steps, r.engine_steps);
  near('makespan (s)', o.totals.makespanS, r.makespan_s);
  const fixedS = jobParams(job).stepFixedMs / 1e3;
  near('prefill time (s)', o.totals.prefillMs / 1e3, r.t_prefill_s + fixedS * (r.engine_steps - r.decode_steps));
  near('decode time (s)', o.totals.decodeMs / 1e3, r.t_decode_s + fixedS * r.decode_steps);
  (r.per_call ?? []).forEach((c, i) => {
    const x = done[i];
    if (!x) return;
    const where = `call ${c.call} of ${c.session}`;
    eq(`${where}: hit`, x.hitTokens, c.admit_hit);
    eq(`${where}: ideal hit`, x.idealHitTokens, c.ideal_hit_at_admission);
    eq(`${where}: prefill tokens`, x.prefillTokens, c.prefill_computed);
    eq(`${where}: preemptions`, x.preemptions, c.preemptions);
    near(`${where}: first scheduled (s)`, x.admittedS ?? -1, c.first_sched_s);
    near(`${where}: finished (s)`, x.finishedS ?? -1, c.finish_s);
  });
  return bad.slice(0, 12);
}

const seen: Array<{ name: string; preemptions: number; belowIdeal: boolean; hit: number; ideal: number }> = [];

/** Which (source, layout, free order, cache) runs: every layout on two sessions at the tight cache, and a few of the rest (the oracle is Python; this keeps the suite to minutes). */
interface Case {
  source: string;
  layout: string;
  order: FreeOrder;
  side: 'roomy' | 'tight';
}

const CASES: Case[] = [
  ...LAYOUTS.flatMap((l) =>
    ['Codex CLI 0.114 (TraceLab)', 'mini-swe-agent, pvlib'].map(
      (source): Case => ({ source, layout: l.name, order: 'current', side: 'tight' }),
    ),
  ),
  { source: 'Claude Code, edit retry loop', layout: LAYOUTS[0]!.name, order: 'legacy', side: 'tight' },
  { source: 'Claude Code, edit retry loop', layout: LAYOUTS[2]!.name, order: 'current', side: 'tight' },
  { source: 'mini-swe-agent, pvlib', layout: LAYOUTS[1]!.name, order: 'legacy', side: 'tight' },
  { source: 'Codex CLI 0.114 (TraceLab)', layout: LAYOUTS[3]!.name, order: 'legacy', side: 'tight' },
  { source: 'bundled sample (Claude Code)', layout: LAYOUTS[0]!.name, order: 'current', side: 'roomy' },
  { source: 'Codex CLI 0.114 (TraceLab)', layout: LAYOUTS[2]!.name, order: 'current', side: 'roomy' },
  // Mamba: both free orders, two more sessions, a roomy pool.
  { source: 'Claude Code, edit retry loop', layout: LAYOUTS[5]!.name, order: 'legacy', side: 'tight' },
  { source: 'bundled sample (Claude Code)', layout: LAYOUTS[6]!.name, order: 'current', side: 'tight' },
  { source: 'mini-swe-agent, pvlib', layout: LAYOUTS[6]!.name, order: 'legacy', side: 'tight' },
  { source: 'Codex CLI 0.114 (TraceLab)', layout: LAYOUTS[5]!.name, order: 'current', side: 'roomy' },
  { source: 'Claude Code, edit retry loop', layout: LAYOUTS[7]!.name, order: 'legacy', side: 'tight' },
];

/** The manager vLLM gives each kind of layer: what the oracle must have run. */
const MANAGER: Record<KvLayout['other'], string> = {
  'sliding-window': 'SlidingWindowManager',
  'chunked-local': 'ChunkedLocalAttentionManager',
  mamba: 'MambaManager',
};

describe('hybrid engine = vLLM hybrid KV-cache manager, on real sessions', { skip: skipAll }, () => {
  describe('each case', { concurrency: 2 }, () => {
    for (const c of CASES) {
      const source = SOURCES.find((x) => x.name === c.source)!;
      const lc = LAYOUTS.find((x) => x.name === c.layout)!;
      const label = `${source.name}, ${lc.name}, ${c.side} cache, ${c.order} free order`;
      it(label, { skip: existsSync(source.path) ? false : `${source.path} is missing` }, async () => {
        const workload = await loadWorkload(source);
        const layout = lc.layout();
        const bs = lc.blockSizeTokens ?? 16;
        const cap = capacities(workload, source.replicas, layout, bs).find((x) => x.label === c.side)!;
        const job: OracleJob = {
          workload,
          replicas: source.replicas,
          staggerS: source.staggerS,
          params: {
            ...DEFAULT_PARAMS,
            blockSizeTokens: bs,
            capacityTokens: cap.capacityTokens,
            freeOrder: c.order,
            kvLayout: layout,
          },
        };
        const report = await runOracle(oracleDir, job, { perCall: true });
        // The oracle really ran vLLM's hybrid coordinator with this layout's managers, in this order.
        const kinds = [
          ...new Array<string>(layout.otherGroups).fill(MANAGER[layout.other]),
          ...new Array<string>(layout.fullGroups).fill('FullAttentionManager'),
        ];
        assert.deepEqual(report.kv_cache_managers, layout.otherFirst ? kinds : [...kinds].reverse());
        const outcome = engineByName('reference')(planJob(job), jobParams(job), { selfCheck: true });
        const bad = compare(outcome, job, report);
        seen.push({
          name: label,
          preemptions: report.preemptions,
          belowIdeal: report.admission_hit_tokens < report.ideal_at_admission_hit_tokens,
          hit: report.admission_hit_tokens,
          ideal: report.ideal_at_admission_hit_tokens,
        });
        if (bad.length > 0) assert.fail(`${cap.capacityTokens}-token cache:\n  ${bad.join('\n  ')}`);
      });
    }
    after(() => {
      for (const s of seen) console.log(`  ${s.name}: hit ${s.hit} of ideal ${s.ideal}, ${s.preemptions} preemptions`);
    });
  });

  it('the cases evict and preempt', () => {
    assert.ok(
      seen.some((s) => s.preemptions > 0),
      'no case preempted',
    );
    assert.ok(
      seen.some((s) => s.belowIdeal),
      'no case hit less than its ideal',
    );
  });
});

// Each preset's layers as its published config declares them (docs/design/simulator.md §4.1 cites
// the files): which layers are full attention, the window or chunk of the others, KV heads and
// head size (MLA: one latent of kv_lora_rank + qk_rope_head_dim values).
const PUBLISHED: Record<string, { layers: OracleLayer[]; numKvHeads: number; headSize: number }> = {
  // openai/gpt-oss-120b config.json: 36 layers, layer_types alternate sliding_attention / full_attention from layer 0.
  'gpt-oss-120b': {
    layers: Array.from({ length: 36 }, (_, i) =>
      i % 2 === 0 ? { kind: 'sliding-window', window: 128 } : { kind: 'full' },
    ),
    numKvHeads: 8,
    headSize: 64,
  },
  // openai/gpt-oss-20b: 24 layers, the same pattern.
  'gpt-oss-20b': {
    layers: Array.from({ length: 24 }, (_, i) =>
      i % 2 === 0 ? { kind: 'sliding-window', window: 128 } : { kind: 'full' },
    ),
    numKvHeads: 8,
    headSize: 64,
  },
  // google/gemma-3-27b-it text_config: 62 layers, every 6th global (sliding_window_pattern 6), window 1024.
  'gemma-3-27b': {
    layers: Array.from({ length: 62 }, (_, i) =>
      (i + 1) % 6 === 0 ? { kind: 'full' } : { kind: 'sliding-window', window: 1024 },
    ),
    numKvHeads: 16,
    headSize: 128,
  },
  // meta-llama/Llama-4-Scout-17B-16E-Instruct text_config: 48 layers, every 4th global (no RoPE), the rest chunked by 8192.
  'llama-4-scout': {
    layers: Array.from({ length: 48 }, (_, i) =>
      (i + 1) % 4 === 0 ? { kind: 'full' } : { kind: 'chunked-local', window: 8192 },
    ),
    numKvHeads: 8,
    headSize: 128,
  },
  // deepseek-ai/DeepSeek-V3: 61 MLA layers, kv_lora_rank 512 + qk_rope_head_dim 64.
  'deepseek-v3-tp8': { layers: Array.from({ length: 61 }, () => ({ kind: 'mla' })), numKvHeads: 1, headSize: 576 },
  // moonshotai/Kimi-K2-Instruct: 61 MLA layers, the same latent.
  'kimi-k2-tp8': { layers: Array.from({ length: 61 }, () => ({ kind: 'mla' })), numKvHeads: 1, headSize: 576 },
};

const SPEC_OF: Record<string, string> = {
  'sliding-window': 'SlidingWindowSpec',
  'chunked-local': 'ChunkedLocalAttentionSpec',
};

describe("presets = vLLM's own grouping of each model's published layers", { skip: skipAll }, () => {
  for (const [id, model] of Object.entries(PUBLISHED)) {
    it(`${id}: groups, bytes per pool block, and capacity on an H200`, async () => {
      const preset = MODEL_PRESETS.find((m) => m.id === id)!;
      const gpu = GPU_PRESETS.find((g) => g.id === 'h200')!;
      const kvGiB = gpu.memoryGiB * GPU_MEMORY_UTILIZATION - preset.weightsGiB - RESERVED_GIB;
      const vllm = await runKvConfig(oracleDir, { ...model, availableBytes: Math.floor(kvGiB * 2 ** 30) });
      assert.equal(preset.kvBytesPerToken * 16, vllm.poolBlockBytes, 'bytes of one pool block');
      // The capacity is vLLM's num_blocks of 16 tokens (one of them its null block: docs/design/simulator.md §4.1).
      assert.equal(capacityFor(gpu, preset), vllm.numBlocks * 16);
      const l = preset.kvLayout;
      if (!l) {
        assert.equal(vllm.groups.length, 1);
        assert.match(vllm.groups[0]!.spec, /^(FullAttentionSpec|MLAAttentionSpec)$/);
        return;
      }
      const other = { spec: SPEC_OF[l.other]!, window: l.windowTokens };
      const full = { spec: 'FullAttentionSpec', window: null };
      const want = l.otherFirst
        ? [...new Array(l.otherGroups).fill(other), ...new Array(l.fullGroups).fill(full)]
        : [...new Array(l.fullGroups).fill(full), ...new Array(l.otherGroups).fill(other)];
      assert.deepEqual(
        vllm.groups.map((g) => ({ spec: g.spec, window: g.window })),
        want,
      );
    });
  }
});

describe("MLA: vLLM gives the latent cache full attention's manager, so its bytes per token only set the capacity", {
  skip: skipAll,
}, () => {
  // The same sessions on two MLA models: DeepSeek-V3 leaves ~660k tokens per H200 (every copy fits),
  // Kimi K2's heavier weights ~51k (copies evict each other).
  const source = SOURCES.find((x) => x.name === 'mini-swe-agent, pvlib')!;
  const replicas = 8;
  const hits = new Map<string, { hit: number; ideal: number }>();
  for (const id of ['deepseek-v3-tp8', 'kimi-k2-tp8']) {
    it(`${id} on an H200, ${source.name} ×${replicas}`, {
      skip: existsSync(source.path) ? false : 'fixture missing',
    }, async () => {
      const preset = MODEL_PRESETS.find((m) => m.id === id)!;
      const capacityTokens = capacityFor(GPU_PRESETS.find((g) => g.id === 'h200')!, preset)!;
      const workload = await loadWorkload(source);
      {
        const job: OracleJob = {
          workload,
          replicas,
          staggerS: 1,
          params: { ...DEFAULT_PARAMS, capacityTokens, kvBytesPerToken: preset.kvBytesPerToken },
          mla: { headSize: 576 },
        };
        const mla = await runOracle(oracleDir, job, { perCall: true });
        assert.deepEqual(mla.kv_cache_specs, ['MLAAttentionSpec']);
        assert.deepEqual(mla.kv_cache_managers, ['FullAttentionManager']);
        // The same pool declared as full-attention layers: every figure equal.
        const full = await runOracle(oracleDir, { ...job, mla: undefined }, { perCall: true });
        assert.deepEqual({ ...mla, kv_cache_specs: [] }, { ...full, kv_cache_specs: [] });
        const outcome = engineByName('reference')(planJob(job), jobParams(job));
        const bad = compare(outcome, job, mla);
        if (bad.length > 0) assert.fail(`${capacityTokens}-token cache, ×${replicas}:\n  ${bad.join('\n  ')}`);
        hits.set(id, { hit: mla.admission_hit_tokens, ideal: mla.ideal_at_admission_hit_tokens });
        console.log(
          `  ${id}: ${capacityTokens} tokens on an H200, ×${replicas}: hit ${mla.admission_hit_tokens} of ideal ${mla.ideal_at_admission_hit_tokens}, ${mla.preemptions} preemptions`,
        );
      }
    });
  }
  it('the larger latent cache keeps every prefix, the smaller one loses some', () => {
    const big = hits.get('deepseek-v3-tp8');
    const small = hits.get('kimi-k2-tp8');
    if (!big || !small) return;
    assert.equal(big.hit, big.ideal);
    assert.ok(small.hit < small.ideal, JSON.stringify(small));
  });
});

// Mamba / linear-attention hybrids (docs/design/simulator.md §4.1 has the arithmetic and its sources).
// nvidia/NVIDIA-Nemotron-Nano-9B-v2 config.json: hybrid_override_pattern, one letter per layer (M Mamba2,
// * attention, - an MLP without a cache); mamba_num_heads 128, mamba_head_dim 80, n_groups 8,
// ssm_state_size 128, conv_kernel 4; attention 8 KV heads × 128. Qwen/Qwen3-Next-80B-A3B-Instruct
// config.json: 48 layers, full attention every 4th (full_attention_interval 4), Gated DeltaNet otherwise;
// linear_num_key_heads 16, linear_num_value_heads 32, key and value head dims 128, linear_conv_kernel_dim 4;
// attention 2 KV heads × 256.
const NEMOTRON_PATTERN = 'M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-';

interface MambaModel {
  layers: OracleLayer[];
  numKvHeads: number;
  headSize: number;
  /** The state as vLLM's shape calculator gives it at TP 1: conv state, then SSM / recurrent state. */
  shapes: number[][];
  /** One layer's state in bytes, counted by hand (bf16). */
  stateBytes: number;
  /** One attention layer's K and V bytes per token, by hand. */
  attnBytesPerToken: number;
  /** The Mamba groups' block size vLLM gives them (prefix caching: the attention block; without: max_model_len). */
  mambaBlockSize: (attentionBlock: number) => number;
  /** vLLM's attention block size rule for the model (vllm/model_executor/models/config.py, HybridAttentionMambaModelConfig). */
  blockSize: (state: number, attn: number) => number;
}

const cdiv = (a: number, b: number): number => Math.ceil(a / b);
const MAMBA_MODELS: Record<string, MambaModel> = {
  'nemotron-nano-9b': {
    layers: [...NEMOTRON_PATTERN].filter((c) => c !== '-').map((c) => ({ kind: c === 'M' ? 'mamba' : 'full' })),
    numKvHeads: 8,
    headSize: 128,
    // conv: (conv_kernel − 1) × (heads × head_dim + 2 × n_groups × state) = 3 × (10,240 + 2,048); SSM: heads × head_dim × state.
    shapes: [
      [3, 12_288],
      [128, 80, 128],
    ],
    stateBytes: (3 * 12_288 + 128 * 80 * 128) * 2, // (36,864 + 1,310,720) × 2 = 2,695,168
    attnBytesPerToken: 2 * 8 * 128 * 2, // 4,096
    mambaBlockSize: (b) => b,
    // With prefix caching: the smallest multiple of lcm(chunk_size 128, 16) whose page holds a state.
    blockSize: (state, attn) => 128 * cdiv(cdiv(state, attn), 128), // 128 × ⌈658 / 128⌉ = 768
  },
  'qwen3-next-80b': {
    layers: Array.from({ length: 48 }, (_, i) => ({ kind: (i + 1) % 4 === 0 ? 'full' : 'mamba' })),
    numKvHeads: 2,
    headSize: 256,
    // conv: 3 × (2 × 16 × 128 + 32 × 128) = 3 × 8,192; recurrent: value heads × key dim × value dim.
    shapes: [
      [3, 8_192],
      [32, 128, 128],
    ],
    stateBytes: (3 * 8_192 + 32 * 128 * 128) * 2, // (24,576 + 524,288) × 2 = 1,097,728
    attnBytesPerToken: 2 * 2 * 256 * 2, // 2,048
    mambaBlockSize: () => 262_144, // max_model_len (max_position_embeddings): one block, the state
    // Without prefix caching: the smallest multiple of 16 whose page holds a state.
    blockSize: (state, attn) => 16 * cdiv(state, 16 * attn), // 16 × ⌈1,097,728 / 32,768⌉ = 16 × 34 = 544
  },
};

describe("Mamba presets = vLLM's own grouping and state arithmetic of each model's published config", {
  skip: skipAll,
}, () => {
  for (const [id, model] of Object.entries(MAMBA_MODELS)) {
    it(`${id}: state bytes, block size, groups, bytes per pool block, capacity on an H200`, async () => {
      const preset = MODEL_PRESETS.find((m) => m.id === id)!;
      const l = preset.kvLayout!;
      const bs = preset.blockSizeTokens!;
      assert.equal(bs, model.blockSize(model.stateBytes, model.attnBytesPerToken), 'the raised block size');
      const page = bs * model.attnBytesPerToken;
      assert.ok(page >= model.stateBytes, 'an attention page holds a state');
      const gpu = GPU_PRESETS.find((g) => g.id === 'h200')!;
      const kvGiB = gpu.memoryGiB * GPU_MEMORY_UTILIZATION - preset.weightsGiB - RESERVED_GIB;
      const vllm = await runKvConfig(oracleDir, {
        layers: model.layers,
        numKvHeads: model.numKvHeads,
        headSize: model.headSize,
        blockSize: bs,
        availableBytes: Math.floor(kvGiB * 2 ** 30),
        mamba: { shapes: model.shapes, dtypeBytes: [2, 2], blockSize: model.mambaBlockSize(bs), pagePadded: page },
      });
      assert.equal(vllm.mambaStateBytes, model.stateBytes, "MambaSpec's bytes of one state");
      const mambaGroups = new Array<string>(l.otherGroups).fill('MambaSpec');
      const fullGroups = new Array<string>(l.fullGroups).fill('FullAttentionSpec');
      assert.deepEqual(
        vllm.groups.map((g) => g.spec),
        l.otherFirst ? [...mambaGroups, ...fullGroups] : [...fullGroups, ...mambaGroups],
      );
      assert.deepEqual(
        vllm.blockSizes,
        vllm.groups.map((g) => (g.spec === 'MambaSpec' ? model.mambaBlockSize(bs) : bs)),
      );
      assert.equal(
        l.prefixCaching !== false,
        model.mambaBlockSize(bs) === bs,
        'prefix caching ⇔ Mamba blocks are attention blocks',
      );
      assert.equal(preset.kvBytesPerToken * bs, vllm.poolBlockBytes, 'bytes of one pool block');
      assert.equal(capacityFor(gpu, preset, bs), vllm.numBlocks * bs);
    });
  }
});
