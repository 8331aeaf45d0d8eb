/**
 * Engine parameters, GPU and model presets, and the checks that turn impossible
 * values into errors naming the parameter (docs/design/simulator.md §1.1, §4, §5).
 */

import type { PolicyName } from './policies';

/** How a finished request's blocks go back to the free queue (docs/design/simulator.md §1.6). */
export type FreeOrder = 'current' | 'legacy';

/** Continuum-like pinning: keep a session's KV on the GPU while its tool runs (docs/design/simulator.md §3.1). */
export interface TtlPinParams {
  /** Pin time in seconds, or 'auto': the 90th percentile of the session's own tool waits, if below `maxTtlS`. */
  ttlS: number | 'auto';
  maxTtlS: number;
}

/** CONCUR-like agent-level admission control (docs/design/simulator.md §3.2). */
export interface AdmissionCapParams {
  /** At most this many sessions active at once; 'adaptive' starts at `initialCap` and adjusts on hit rate. */
  cap: number | 'adaptive';
  initialCap: number;
  /** Adaptive: cut the cap when the window's hit rate falls below this share of the ideal. */
  hitRateFloor: number;
  /** Adaptive: multiplicative decrease. */
  backoff: number;
  /** Adaptive: control interval in simulated seconds. */
  windowS: number;
}

/** An optional CPU tier: evicted blocks are saved there, and a hit reloads them instead of recomputing (docs/design/simulator.md §3.6). */
export interface OffloadParams {
  capacityTokens: number;
  bandwidthGBps: number;
}

/** Everything the engine needs besides the workload. */
export interface EngineParams {
  blockSizeTokens: number;
  capacityTokens: number;
  maxNumBatchedTokens: number;
  maxNumSeqs: number;
  /** Longest prompt + output a request may have (vLLM's max_model_len). */
  maxModelLenTokens: number;
  freeOrder: FreeOrder;
  stepFixedMs: number;
  prefillUsPerToken: number;
  kvReadNsPerToken: number;
  decodeUsPerSeq: number;
  /** KV bytes per token, for the offload tier's transfer time. */
  kvBytesPerToken: number;
  policy: PolicyName;
  ttlPin: TtlPinParams;
  admissionCap: AdmissionCapParams;
  offload: OffloadParams | null;
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
  { id: 'qwen3-32b', label: 'Qwen3-32B (bf16)', kvBytesPerToken: 262_144, weightsGiB: 61.1, prefillUsPerToken: 132.7, timing: { h100: { stepFixedMs: 23, kvReadNsPerToken: 92 }, h200: { stepFixedMs: 16.1, kvReadNsPerToken: 64 } } },
  { id: 'qwen3-32b-fp8', label: 'Qwen3-32B (FP8 weights)', kvBytesPerToken: 262_144, weightsGiB: 30.5, prefillUsPerToken: 132.7, timing: { h100: { stepFixedMs: 11.5, kvReadNsPerToken: 92 }, h200: { stepFixedMs: 8.1, kvReadNsPerToken: 64 } } },
  { id: 'llama-3.1-8b', label: 'Llama-3.1-8B (bf16)', kvBytesPerToken: 131_072, weightsGiB: 15, prefillUsPerToken: 32.5, timing: { h100: { stepFixedMs: 5.6, kvReadNsPerToken: 46 }, h200: { stepFixedMs: 3.9, kvReadNsPerToken: 32 } } },
  { id: 'qwen3-30b-a3b', label: 'Qwen3-30B-A3B (bf16, MoE)', kvBytesPerToken: 98_304, weightsGiB: 56.9, prefillUsPerToken: 13.3, timing: { h100: { stepFixedMs: 21.4, kvReadNsPerToken: 35 }, h200: { stepFixedMs: 15, kvReadNsPerToken: 24 } } },
  // Derived the same way as §5: weights (70.56 GB) / HBM bandwidth / 0.85 MBU; KV bytes / bandwidth / 0.85; 2 FLOP per parameter / (989 TFLOPS × 0.5).
  { id: 'llama-3.1-70b-fp8', label: 'Llama-3.1-70B (FP8 weights)', kvBytesPerToken: 327_680, weightsGiB: 65.7, prefillUsPerToken: 285, timing: { h100: { stepFixedMs: 24.8, kvReadNsPerToken: 115 }, h200: { stepFixedMs: 17.3, kvReadNsPerToken: 80 } } },
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
  freeOrder: 'current',
  stepFixedMs: 23,
  prefillUsPerToken: 133,
  kvReadNsPerToken: 92,
  decodeUsPerSeq: 0,
  kvBytesPerToken: 262_144,
  policy: 'vllm-lru',
  ttlPin: { ttlS: 'auto', maxTtlS: 30 },
  admissionCap: { cap: 'adaptive', initialCap: 8, hitRateFloor: 0.8, backoff: 0.5, windowS: 30 },
  offload: null,
};

/** A parameter that cannot work, named. */
export class ParamError extends Error {}

/** Checks parameters; throws a ParamError naming the first impossible one. */
export function validateParams(p: EngineParams): void {
  const need = (ok: boolean, name: string, want: string, got: unknown): void => {
    if (!ok) throw new ParamError(`${name} must be ${want}, got ${JSON.stringify(got)}`);
  };
  const whole = (n: number): boolean => Number.isInteger(n) && n > 0;
  need(whole(p.blockSizeTokens), 'blockSizeTokens', 'a whole number > 0', p.blockSizeTokens);
  need(Number.isFinite(p.capacityTokens) && p.capacityTokens >= p.blockSizeTokens, 'capacityTokens', `at least one block (${p.blockSizeTokens} tokens)`, p.capacityTokens);
  need(whole(p.maxNumBatchedTokens), 'maxNumBatchedTokens', 'a whole number > 0', p.maxNumBatchedTokens);
  need(whole(p.maxNumSeqs), 'maxNumSeqs', 'a whole number > 0', p.maxNumSeqs);
  need(whole(p.maxModelLenTokens), 'maxModelLenTokens', 'a whole number > 0', p.maxModelLenTokens);
  for (const [name, v] of [['stepFixedMs', p.stepFixedMs], ['prefillUsPerToken', p.prefillUsPerToken], ['kvReadNsPerToken', p.kvReadNsPerToken], ['decodeUsPerSeq', p.decodeUsPerSeq]] as const) {
    need(Number.isFinite(v) && v >= 0, name, 'a number ≥ 0', v);
  }
  need(p.stepFixedMs + p.prefillUsPerToken + p.kvReadNsPerToken + p.decodeUsPerSeq > 0, 'stepFixedMs', 'such that a step takes some time (all step costs are 0)', p.stepFixedMs);
  if (p.policy === 'ttl-pin') {
    const t = p.ttlPin.ttlS;
    need(t === 'auto' || (Number.isFinite(t) && t >= 0), 'ttlPin.ttlS', "a number ≥ 0 or 'auto'", t);
    need(Number.isFinite(p.ttlPin.maxTtlS) && p.ttlPin.maxTtlS >= 0, 'ttlPin.maxTtlS', 'a number ≥ 0', p.ttlPin.maxTtlS);
  }
  if (p.policy === 'admission-cap') {
    const a = p.admissionCap;
    need(a.cap === 'adaptive' || whole(a.cap), 'admissionCap.cap', "a whole number > 0 or 'adaptive'", a.cap);
    need(whole(a.initialCap), 'admissionCap.initialCap', 'a whole number > 0', a.initialCap);
    need(a.hitRateFloor > 0 && a.hitRateFloor <= 1, 'admissionCap.hitRateFloor', 'in (0, 1]', a.hitRateFloor);
    need(a.backoff > 0 && a.backoff < 1, 'admissionCap.backoff', 'in (0, 1)', a.backoff);
    need(a.windowS > 0, 'admissionCap.windowS', 'a number > 0', a.windowS);
  }
  if (p.offload) {
    // The radix engine (sglang-lru) has no CPU tier: refuse rather than silently drop it.
    need(p.policy !== 'sglang-lru', 'offload', "null with policy 'sglang-lru' (the radix cache has no CPU tier)", p.offload);
    need(Number.isFinite(p.offload.capacityTokens) && p.offload.capacityTokens >= p.blockSizeTokens, 'offload.capacityTokens', `at least one block (${p.blockSizeTokens} tokens)`, p.offload.capacityTokens);
    need(p.offload.bandwidthGBps > 0, 'offload.bandwidthGBps', 'a number > 0', p.offload.bandwidthGBps);
    need(p.kvBytesPerToken > 0, 'kvBytesPerToken', 'a number > 0 with an offload tier', p.kvBytesPerToken);
  }
}
