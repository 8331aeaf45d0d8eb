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
   * K GPUs behind a router, each with these parameters and its own cache; absent for one
   * GPU (a fleet of one is one GPU, exactly).
   */
  fleet?: FleetParams;
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
  kvBytesPerToken: number;
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
