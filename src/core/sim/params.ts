/**
 * Engine parameters, GPU and model presets, and the checks that turn impossible
 * values into errors naming the parameter (docs/design/simulator.md §1.1, §4, §5).
 */

import { describeBound, PARAM_BOUNDS, REPLICA_BOUNDS, withinBound } from './bounds';
import type { BoundedParam, ParamBound } from './bounds';
import { DEFAULT_POLICY_SETTINGS, POLICY_CHOICES } from './policies';
import type { PolicyChoice, PolicySettings } from './policies';
import { MAX_GPUS, ROUTER_NAMES } from './fleet/routers';
import type { FleetParams } from './fleet/routers';

export { describeBound, PARAM_BOUNDS, REPLICA_BOUNDS, withinBound } from './bounds';
export type { ParamBound } from './bounds';
export type { AdmissionCapParams, OffloadParams, TtlPinParams } from './policies';

/** How a finished request's blocks go back to the free queue (docs/design/simulator.md §1.6). */
export type FreeOrder = 'current' | 'legacy';

/** Everything the engine needs besides the workload: the policy and its parameters (policies.ts), and these. */
export interface EngineParams extends PolicySettings {
  blockSizeTokens: number;
  capacityTokens: number;
  maxNumBatchedTokens: number;
  maxNumSeqs: number;
  /** Longest prompt + output a request may have (vLLM's max_model_len, SGLang's context length). */
  maxModelLenTokens: number;
  /** SGLang's KV page size in tokens (sglang-lru only; SGLang's default is 1: docs/design/simulator.md §2). */
  sglangPageSizeTokens: number;
  freeOrder: FreeOrder;
  stepFixedMs: number;
  prefillUsPerToken: number;
  kvReadNsPerToken: number;
  decodeUsPerSeq: number;
  /** KV bytes per token, for the offload tier's transfer time. */
  kvBytesPerToken: number;
  /**
   * The model's KV-cache groups when its layers do not all keep every token (sliding-window
   * or chunked-local layers next to full attention: docs/design/simulator.md §1.8); absent,
   * one group of full-attention layers, as every engine assumed before.
   */
  kvLayout?: KvLayout;
  /**
   * K GPUs behind a router, each with these parameters and its own cache; absent for one
   * GPU (a fleet of one is one GPU, exactly).
   */
  fleet?: FleetParams;
}

/**
 * vLLM's KV-cache groups of a hybrid model (docs/design/simulator.md §1.8): every group has
 * the same number of layers and its own block table, all share one block pool, so one
 * pool block holds `bs` tokens of one group's layers.
 */
export interface KvLayout {
  /** Groups of full-attention layers. */
  fullGroups: number;
  /** What the other layers are: attention over a window or a chunk, or Mamba / linear-attention layers that keep a state. */
  other: 'sliding-window' | 'chunked-local' | 'mamba';
  /** The sliding window, or the attention chunk, in tokens (not read for Mamba layers). */
  windowTokens: number;
  /**
   * Mamba layers only: false when vLLM turns prefix caching off for the model (its class does not
   * declare Mamba prefix caching, e.g. Qwen3-Next in vLLM of early 2026): no lookups and no hits,
   * and each Mamba group holds one block, the request's state (docs/design/simulator.md §1.8).
   * Absent: true.
   */
  prefixCaching?: boolean;
  /** Groups of the other layers. */
  otherGroups: number;
  /** The model's first layer is one of the other kind: vLLM then numbers (allocates, frees) their groups first. */
  otherFirst: boolean;
}

/** GPU memory as the framework sees it. */
export interface GpuPreset {
  id: string;
  label: string;
  memoryGiB: number;
  hbmTBps: number;
}

/** A model's KV size and the step-time constants it gives on an H100 and an H200 (docs/design/simulator.md §4–5). */
export interface ModelPreset {
  id: string;
  label: string;
  /** KV bytes of one token in one pool block: all layers, or one KV-cache group's layers for a hybrid model (docs/design/simulator.md §4.1). */
  kvBytesPerToken: number;
  /** The KV-cache groups of a hybrid model (absent: every layer full attention). */
  kvLayout?: KvLayout;
  /**
   * The block size vLLM forces for this model (a Mamba hybrid: attention blocks raised until an
   * attention page holds a Mamba state, docs/design/simulator.md §4.1); absent, the default 16.
   */
  blockSizeTokens?: number;
  weightsGiB: number;
  prefillUsPerToken: number;
  timing: Record<string, { stepFixedMs: number; kvReadNsPerToken: number }>;
}

export const GPU_PRESETS: readonly GpuPreset[] = [
  { id: 'h100', label: 'H100 SXM 80 GB', memoryGiB: 79.65, hbmTBps: 3.35 },
  { id: 'h200', label: 'H200 141 GB', memoryGiB: 140.4, hbmTBps: 4.8 },
];

export const MODEL_PRESETS: readonly ModelPreset[] = [
  {
    id: 'qwen3-32b',
    label: 'Qwen3-32B (bf16)',
    kvBytesPerToken: 262_144,
    weightsGiB: 61.1,
    prefillUsPerToken: 132.7,
    timing: { h100: { stepFixedMs: 23, kvReadNsPerToken: 92 }, h200: { stepFixedMs: 16.1, kvReadNsPerToken: 64 } },
  },
  {
    id: 'qwen3-32b-fp8',
    label: 'Qwen3-32B (FP8 weights)',
    kvBytesPerToken: 262_144,
    weightsGiB: 30.5,
    prefillUsPerToken: 132.7,
    timing: { h100: { stepFixedMs: 11.5, kvReadNsPerToken: 92 }, h200: { stepFixedMs: 8.1, kvReadNsPerToken: 64 } },
  },
  {
    id: 'llama-3.1-8b',
    label: 'Llama-3.1-8B (bf16)',
    kvBytesPerToken: 131_072,
    weightsGiB: 15,
    prefillUsPerToken: 32.5,
    timing: { h100: { stepFixedMs: 5.6, kvReadNsPerToken: 46 }, h200: { stepFixedMs: 3.9, kvReadNsPerToken: 32 } },
  },
  {
    id: 'qwen3-30b-a3b',
    label: 'Qwen3-30B-A3B (bf16, MoE)',
    kvBytesPerToken: 98_304,
    weightsGiB: 56.9,
    prefillUsPerToken: 13.3,
    timing: { h100: { stepFixedMs: 21.4, kvReadNsPerToken: 35 }, h200: { stepFixedMs: 15, kvReadNsPerToken: 24 } },
  },
  // Derived the same way as §5: weights (70.56 GB) / HBM bandwidth / 0.85 MBU; KV bytes / bandwidth / 0.85; 2 FLOP per parameter / (989 TFLOPS × 0.5).
  {
    id: 'llama-3.1-70b-fp8',
    label: 'Llama-3.1-70B (FP8 weights)',
    kvBytesPerToken: 327_680,
    weightsGiB: 65.7,
    prefillUsPerToken: 285,
    timing: { h100: { stepFixedMs: 24.8, kvReadNsPerToken: 115 }, h200: { stepFixedMs: 17.3, kvReadNsPerToken: 80 } },
  },
  // Models whose cache is not "every layer, every token" (docs/design/simulator.md §4.1, sources there). Same
  // derivations as above; kvBytesPerToken is one pool block's bytes per token (one KV-cache group's layers,
  // bf16 KV), kvReadNsPerToken reads only the full-attention layers' context (a window is bounded).
  {
    id: 'gpt-oss-120b',
    label: 'gpt-oss-120b (MXFP4, sliding window 128 + full)',
    kvBytesPerToken: 36_864,
    kvLayout: { fullGroups: 1, other: 'sliding-window', windowTokens: 128, otherGroups: 1, otherFirst: true },
    weightsGiB: 60.8,
    prefillUsPerToken: 20.6,
    timing: { h100: { stepFixedMs: 22.9, kvReadNsPerToken: 12.9 }, h200: { stepFixedMs: 16, kvReadNsPerToken: 9 } },
  },
  {
    id: 'gpt-oss-20b',
    label: 'gpt-oss-20b (MXFP4, sliding window 128 + full)',
    kvBytesPerToken: 24_576,
    kvLayout: { fullGroups: 1, other: 'sliding-window', windowTokens: 128, otherGroups: 1, otherFirst: true },
    weightsGiB: 12.8,
    prefillUsPerToken: 14.6,
    timing: { h100: { stepFixedMs: 4.8, kvReadNsPerToken: 8.6 }, h200: { stepFixedMs: 3.4, kvReadNsPerToken: 6 } },
  },
  {
    id: 'gemma-3-27b',
    label: 'Gemma 3 27B (bf16, sliding window 1024 ×5 : full)',
    kvBytesPerToken: 81_920,
    kvLayout: { fullGroups: 1, other: 'sliding-window', windowTokens: 1024, otherGroups: 6, otherFirst: true },
    weightsGiB: 51,
    prefillUsPerToken: 110.8,
    timing: {
      h100: { stepFixedMs: 19.2, kvReadNsPerToken: 28.8 },
      h200: { stepFixedMs: 13.4, kvReadNsPerToken: 20.1 },
    },
  },
  {
    id: 'llama-4-scout',
    label: 'Llama 4 Scout 17B-16E (FP8, chunked local 8192 ×3 : full)',
    kvBytesPerToken: 49_152,
    kvLayout: { fullGroups: 1, other: 'chunked-local', windowTokens: 8192, otherGroups: 3, otherFirst: true },
    weightsGiB: 101.2,
    prefillUsPerToken: 68.8,
    timing: { h100: { stepFixedMs: 38.3, kvReadNsPerToken: 17.3 }, h200: { stepFixedMs: 26.7, kvReadNsPerToken: 12 } },
  },
  // Mamba / linear-attention hybrids (docs/design/simulator.md §4.1): vLLM raises the attention block until
  // one attention page holds a Mamba state and pads the state to that page, so all groups share one page.
  // kvBytesPerToken is one group's attention bytes per token; the block size is the raised one.
  {
    id: 'nemotron-nano-9b',
    label: 'NVIDIA Nemotron Nano 9B v2 (bf16, Mamba2 ×27 : full ×4)',
    kvBytesPerToken: 16_384,
    kvLayout: { fullGroups: 1, other: 'mamba', windowTokens: 0, otherGroups: 7, otherFirst: true },
    blockSizeTokens: 768,
    weightsGiB: 16.6,
    prefillUsPerToken: 36,
    timing: { h100: { stepFixedMs: 6.2, kvReadNsPerToken: 5.8 }, h200: { stepFixedMs: 4.4, kvReadNsPerToken: 4 } },
  },
  {
    id: 'qwen3-next-80b',
    label: 'Qwen3-Next-80B-A3B (FP8, Gated DeltaNet ×3 : full, no prefix caching)',
    kvBytesPerToken: 24_576,
    kvLayout: {
      fullGroups: 1,
      other: 'mamba',
      windowTokens: 0,
      otherGroups: 3,
      otherFirst: true,
      prefixCaching: false,
    },
    blockSizeTokens: 544,
    weightsGiB: 74.2,
    prefillUsPerToken: 12.1,
    timing: { h100: { stepFixedMs: 28, kvReadNsPerToken: 8.6 }, h200: { stepFixedMs: 19.5, kvReadNsPerToken: 6 } },
  },
  // MLA: one 576-value latent per layer and token, kept whole on every GPU of a tensor-parallel group, so
  // these are per GPU of an 8-GPU node: an eighth of the weights and FLOPs, the whole latent cache.
  {
    id: 'deepseek-v3-tp8',
    label: 'DeepSeek-V3/R1 (FP8, MLA, per GPU of 8-way TP)',
    kvBytesPerToken: 70_272,
    weightsGiB: 80.2,
    prefillUsPerToken: 18.7,
    timing: {
      h100: { stepFixedMs: 30.2, kvReadNsPerToken: 24.7 },
      h200: { stepFixedMs: 21.1, kvReadNsPerToken: 17.2 },
    },
  },
  {
    id: 'kimi-k2-tp8',
    label: 'Kimi K2 (FP8, MLA, per GPU of 8-way TP)',
    kvBytesPerToken: 70_272,
    weightsGiB: 120,
    prefillUsPerToken: 16.2,
    timing: {
      h100: { stepFixedMs: 45.2, kvReadNsPerToken: 24.7 },
      h200: { stepFixedMs: 31.6, kvReadNsPerToken: 17.2 },
    },
  },
];

/** GPU memory utilisation vLLM uses by default, and memory kept for activations, CUDA graphs and NCCL (docs/design/simulator.md §4). */
export const GPU_MEMORY_UTILIZATION = 0.9;
export const RESERVED_GIB = 3;

/**
 * KV capacity in tokens for a GPU and a model: usable memory minus weights and
 * reserve, divided by KV bytes per token, rounded down to whole blocks. Null when
 * the weights do not fit.
 */
export function capacityFor(gpu: GpuPreset, model: ModelPreset, blockSizeTokens = 16): number | null {
  const kvGiB = gpu.memoryGiB * GPU_MEMORY_UTILIZATION - model.weightsGiB - RESERVED_GIB;
  if (kvGiB <= 0) return null;
  const tokens = Math.floor((kvGiB * 2 ** 30) / model.kvBytesPerToken);
  return Math.floor(tokens / blockSizeTokens) * blockSizeTokens;
}

/** The engine defaults: a ~32B dense bf16 model on one H100 (docs/design/simulator.md §5), vLLM's scheduler defaults (§1.1). */
export const DEFAULT_PARAMS: EngineParams = {
  blockSizeTokens: 16,
  // Qwen3-32B bf16 on one H200 (docs/design/simulator.md §4: ~255k tokens); on an H100 it barely fits (~31k).
  capacityTokens: 255_008,
  maxNumBatchedTokens: 8192,
  maxNumSeqs: 1024,
  maxModelLenTokens: 1_000_000,
  sglangPageSizeTokens: 1,
  freeOrder: 'current',
  stepFixedMs: 23,
  prefillUsPerToken: 133,
  kvReadNsPerToken: 92,
  decodeUsPerSeq: 0,
  kvBytesPerToken: 262_144,
  ...copyPolicySettings(DEFAULT_POLICY_SETTINGS),
};

function copyPolicySettings(s: PolicySettings): PolicySettings {
  return {
    policy: s.policy,
    ttlPin: { ...s.ttlPin },
    admissionCap: { ...s.admissionCap },
    offload: s.offload && { ...s.offload },
  };
}

/** A copy of parameters that shares no nested object with them (the core has no structuredClone). */
export function copyParams(p: EngineParams): EngineParams {
  const copy: EngineParams = { ...p, ...copyPolicySettings(p) };
  if (p.fleet) copy.fleet = { ...p.fleet };
  if (p.kvLayout) copy.kvLayout = { ...p.kvLayout };
  return copy;
}

/** A parameter that cannot work, named. */
export class ParamError extends Error {}

/** A value for a message: numbers as written (Infinity and NaN too, where JSON would say null), the rest as JSON. */
export function shownValue(v: unknown): string {
  return typeof v === 'number' ? String(v) : (JSON.stringify(v) ?? String(v));
}

/** Checks parameters; throws a ParamError naming the first impossible one. */
export function validateParams(p: EngineParams): void {
  const need = (ok: boolean, name: string, want: string, got: unknown): void => {
    if (!ok) throw new ParamError(`${name} must be ${want}, got ${shownValue(got)}`);
  };
  const bounded = (name: BoundedParam, label: string, value: unknown): void =>
    need(withinBound(value, PARAM_BOUNDS[name]), label, describeBound(PARAM_BOUNDS[name]), value);
  const whole = (n: number): boolean => Number.isInteger(n) && n > 0;
  need(whole(p.blockSizeTokens), 'blockSizeTokens', 'a whole number > 0', p.blockSizeTokens);
  bounded('blockSizeTokens', 'blockSizeTokens', p.blockSizeTokens);
  need(
    Number.isFinite(p.capacityTokens) && p.capacityTokens >= p.blockSizeTokens,
    'capacityTokens',
    `at least one block (${p.blockSizeTokens} tokens)`,
    p.capacityTokens,
  );
  bounded('capacityTokens', 'capacityTokens', p.capacityTokens);
  need(whole(p.maxNumBatchedTokens), 'maxNumBatchedTokens', 'a whole number > 0', p.maxNumBatchedTokens);
  bounded('maxNumBatchedTokens', 'maxNumBatchedTokens', p.maxNumBatchedTokens);
  need(whole(p.maxNumSeqs), 'maxNumSeqs', 'a whole number > 0', p.maxNumSeqs);
  bounded('maxNumSeqs', 'maxNumSeqs', p.maxNumSeqs);
  need(whole(p.maxModelLenTokens), 'maxModelLenTokens', 'a whole number > 0', p.maxModelLenTokens);
  bounded('maxModelLenTokens', 'maxModelLenTokens', p.maxModelLenTokens);
  bounded('sglangPageSizeTokens', 'sglangPageSizeTokens', p.sglangPageSizeTokens);
  if (p.policy === 'sglang-lru') {
    // SGLang caps running requests at half the pool (kv_cache_configurator); a pool of one page admits none.
    need(
      Math.floor(p.capacityTokens / p.sglangPageSizeTokens) >= 2,
      'capacityTokens',
      `at least two ${p.sglangPageSizeTokens}-token pages with policy 'sglang-lru'`,
      p.capacityTokens,
    );
    // A prefill chunk is cut to whole pages (schedule_policy.py add_one_req, l.1145): a budget under a page admits nothing.
    need(
      p.maxNumBatchedTokens >= p.sglangPageSizeTokens,
      'maxNumBatchedTokens',
      `at least one ${p.sglangPageSizeTokens}-token page with policy 'sglang-lru'`,
      p.maxNumBatchedTokens,
    );
  }
  for (const name of ['stepFixedMs', 'prefillUsPerToken', 'kvReadNsPerToken', 'decodeUsPerSeq'] as const) {
    need(Number.isFinite(p[name]) && p[name] >= 0, name, 'a number ≥ 0', p[name]);
    bounded(name, name, p[name]);
  }
  need(
    p.stepFixedMs + p.prefillUsPerToken + p.kvReadNsPerToken + p.decodeUsPerSeq > 0,
    'stepFixedMs',
    'such that a step takes some time (all step costs are 0)',
    p.stepFixedMs,
  );
  bounded('kvBytesPerToken', 'kvBytesPerToken', p.kvBytesPerToken);
  // The policy's own parameters, checked as its declaration says (policies.ts).
  for (const choice of POLICY_CHOICES as readonly PolicyChoice[])
    if (!choice.offload && choice.policy === p.policy) choice.check(p, { need, bounded });
  if (p.fleet) {
    need(
      Number.isInteger(p.fleet.gpus) && p.fleet.gpus >= 1 && p.fleet.gpus <= MAX_GPUS,
      'fleet.gpus',
      `a whole number from 1 to ${MAX_GPUS}`,
      p.fleet.gpus,
    );
    need(
      (ROUTER_NAMES as readonly string[]).includes(p.fleet.router),
      'fleet.router',
      `one of ${ROUTER_NAMES.join(', ')}`,
      p.fleet.router,
    );
    // The admission cap holds sessions back before their first call, for one GPU; across a fleet it is not modelled.
    need(
      p.fleet.gpus === 1 || p.policy !== 'admission-cap',
      'fleet.gpus',
      "1 with policy 'admission-cap' (an admission cap across several GPUs is not modelled)",
      p.fleet.gpus,
    );
  }
  if (p.kvLayout) {
    const l = p.kvLayout;
    need(
      p.policy === 'vllm-lru' || p.policy === 'admission-cap',
      'policy',
      "'vllm-lru' or 'admission-cap' with a hybrid KV layout (sliding-window, chunked-local or Mamba layers)",
      p.policy,
    );
    need(!p.offload, 'offload', 'null with a hybrid KV layout (no CPU tier is modelled for it)', p.offload);
    need(
      Number.isInteger(l.fullGroups) && l.fullGroups >= 1,
      'kvLayout.fullGroups',
      'a whole number > 0',
      l.fullGroups,
    );
    need(
      Number.isInteger(l.otherGroups) && l.otherGroups >= 1,
      'kvLayout.otherGroups',
      'a whole number > 0',
      l.otherGroups,
    );
    need(
      l.other === 'sliding-window' || l.other === 'chunked-local' || l.other === 'mamba',
      'kvLayout.other',
      "'sliding-window', 'chunked-local' or 'mamba'",
      l.other,
    );
    need(
      l.prefixCaching === undefined || l.prefixCaching === true || (l.prefixCaching === false && l.other === 'mamba'),
      'kvLayout.prefixCaching',
      'absent, true, or false with Mamba layers (only a Mamba hybrid turns prefix caching off)',
      l.prefixCaching,
    );
    need(
      l.other === 'mamba' || (Number.isInteger(l.windowTokens) && l.windowTokens >= 2),
      'kvLayout.windowTokens',
      'a whole number ≥ 2',
      l.windowTokens,
    );
    // vLLM's chunked-local manager needs chunks of whole blocks (its hit starts at a chunk boundary).
    need(
      l.other !== 'chunked-local' || l.windowTokens % p.blockSizeTokens === 0,
      'kvLayout.windowTokens',
      `a multiple of the block size (${p.blockSizeTokens}) for chunked-local layers`,
      l.windowTokens,
    );
  }
  if (p.offload) {
    // The radix engine (sglang-lru) has no CPU tier: refuse rather than silently drop it.
    need(
      p.policy !== 'sglang-lru',
      'offload',
      "null with policy 'sglang-lru' (the radix cache has no CPU tier)",
      p.offload,
    );
    need(
      Number.isFinite(p.offload.capacityTokens) && p.offload.capacityTokens >= p.blockSizeTokens,
      'offload.capacityTokens',
      `at least one block (${p.blockSizeTokens} tokens)`,
      p.offload.capacityTokens,
    );
    bounded('offloadTokens', 'offload.capacityTokens', p.offload.capacityTokens);
    need(p.offload.bandwidthGBps > 0, 'offload.bandwidthGBps', 'a number > 0', p.offload.bandwidthGBps);
    bounded('offloadGbps', 'offload.bandwidthGBps', p.offload.bandwidthGBps);
    need(p.kvBytesPerToken > 0, 'kvBytesPerToken', 'a number > 0 with an offload tier', p.kvBytesPerToken);
  }
}

/** Checks replay options (agent sessions); throws a ParamError naming the first impossible one. */
export function validateReplicas(r: { replicas: number; staggerS: number; seed: number; toolWaitScale: number }): void {
  for (const name of ['replicas', 'staggerS', 'seed', 'toolWaitScale'] as const) {
    const b: ParamBound = REPLICA_BOUNDS[name];
    if (!withinBound(r[name], b))
      throw new ParamError(`${name} must be ${describeBound(b)}, got ${shownValue(r[name])}`);
  }
}

/**
 * The parameters as `simulate --json` and the what-if panel's export print them: SGLang's
 * page size only under the policy that reads it, so the other policies' documents stay as
 * they were before it existed.
 */
export function paramsAsPrinted(
  p: EngineParams,
): Omit<EngineParams, 'sglangPageSizeTokens'> & { sglangPageSizeTokens?: number } {
  if (p.policy === 'sglang-lru') return p;
  const rest: Omit<EngineParams, 'sglangPageSizeTokens'> & { sglangPageSizeTokens?: number } = { ...p };
  delete rest.sglangPageSizeTokens;
  return rest;
}
