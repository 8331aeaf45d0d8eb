import {
  capacityFor,
  copyParams,
  DEFAULT_PARAMS,
  GPU_MEMORY_UTILIZATION,
  GPU_PRESETS,
  ParamError,
  RESERVED_GIB,
} from './params';
import type { EngineParams, FreeOrder, GpuPreset, ModelPreset } from './params';
import { POLICY_CHOICES } from './policies';
import type { PolicyChoice, PolicyName, PolicyValues } from './policies';
import { DEFAULT_ROUTER } from './fleet/routers';
import type { RouterName } from './fleet/routers';

/**
 * A scenario's engine side as the `simulate` command line says it and the what-if panel
 * chooses it: presets, the engine parameters given, the policy with its own values, the
 * fleet. `paramsFor` turns it into the `EngineParams` every engine runs, the one way
 * both do (defaults, then the GPU and model presets, then every value given).
 */
export interface ScenarioSpec {
  /** A GPU preset (null: none given; with a model and custom memory, an H100's step costs). */
  gpu: GpuPreset | null;
  /** A model preset, or the panel's custom model (its KV size and weights, no step costs). */
  model: ModelPreset | null;
  /** Memory of a custom GPU, instead of the preset's. */
  gpuMemoryGiB: number | null;
  /** A capacity given in tokens, instead of the one the GPU and model give. */
  capacityTokens: number | null;
  blockSizeTokens?: number;
  maxNumBatchedTokens?: number;
  maxNumSeqs?: number;
  maxModelLenTokens?: number;
  sglangPageSizeTokens?: number;
  freeOrder?: FreeOrder;
  stepFixedMs?: number;
  prefillUsPerToken?: number;
  kvReadNsPerToken?: number;
  decodeUsPerSeq?: number;
  kvBytesPerToken?: number;
  policy?: PolicyName;
  /** The policies' own parameters given (each policy reads its own: policies.ts). */
  policyValues: Partial<PolicyValues>;
  /** GPUs behind the router (null or 1: one GPU). */
  gpus: number | null;
  router: RouterName | null;
}

/** A spec that gives nothing: the engine's defaults. */
export function emptySpec(): ScenarioSpec {
  return {
    gpu: null,
    model: null,
    gpuMemoryGiB: null,
    capacityTokens: null,
    policyValues: {},
    gpus: null,
    router: null,
  };
}

/** The engine parameters a spec asks for, and what its presets came to. */
export interface SpecParams {
  params: EngineParams;
  /** "one H200 141 GB with Qwen3-32B (bf16)" when a model was given, else null. */
  hardware: string | null;
  /** The capacity the GPU and model give (null: no model, or its weights do not fit). */
  derivedCapacityTokens: number | null;
}

/** "Qwen3-32B (bf16) does not fit on an H100 SXM 80 GB: 0.9 × 79.65 GiB = 71.7 GiB usable, not more than its weights (…) + 3 GiB reserve". */
export function doesNotFitText(model: ModelPreset, gpu: GpuPreset, customMemory: boolean): string {
  const usable = gpu.memoryGiB * GPU_MEMORY_UTILIZATION;
  return (
    `${model.label} does not fit on ${customMemory ? `a ${gpu.label}` : `an ${gpu.label}`}: ${GPU_MEMORY_UTILIZATION} × ${gpu.memoryGiB} GiB = ${usable.toFixed(1)} GiB usable, ` +
    `not more than its weights (${model.weightsGiB} GiB) + ${RESERVED_GIB} GiB reserve`
  );
}

/** A model whose weights leave no KV cache on the GPU, with no capacity given instead. */
export class DoesNotFitError extends ParamError {
  constructor(
    readonly model: ModelPreset,
    readonly gpu: GpuPreset,
    readonly customMemory: boolean,
  ) {
    super(`${doesNotFitText(model, gpu, customMemory)}, so no KV cache is left`);
  }
}

const ENGINE_KEYS = [
  'maxNumBatchedTokens',
  'maxNumSeqs',
  'maxModelLenTokens',
  'sglangPageSizeTokens',
  'freeOrder',
  'stepFixedMs',
  'prefillUsPerToken',
  'kvReadNsPerToken',
  'decodeUsPerSeq',
  'kvBytesPerToken',
  'policy',
] as const;

/**
 * The engine parameters of a spec: the defaults; the block size (a block-hash trace's
 * own, `traceBlockSizeTokens`, over any given); with a model, the capacity from the GPU's
 * memory (capacityFor), the model's KV bytes per token and prefill cost, and its step
 * costs on that GPU (an H100's for custom memory); then a capacity given in tokens and
 * every parameter given; each policy's values (policies.ts); a fleet for more than one
 * GPU. Throws a DoesNotFitError when the model leaves no KV cache and no capacity is
 * given; the parameters are checked by validateParams, not here.
 */
export function paramsFor(spec: ScenarioSpec, traceBlockSizeTokens: number | null = null): SpecParams {
  const p = copyParams(DEFAULT_PARAMS);
  // A Mamba hybrid's block size is vLLM's raised one (docs/design/simulator.md §4.1); a size given still wins.
  if (spec.model?.blockSizeTokens !== undefined) p.blockSizeTokens = spec.model.blockSizeTokens;
  if (spec.blockSizeTokens !== undefined) p.blockSizeTokens = spec.blockSizeTokens;
  if (traceBlockSizeTokens !== null) p.blockSizeTokens = traceBlockSizeTokens;
  let hardware: string | null = null;
  let derived: number | null = null;
  if (spec.model) {
    const base = spec.gpu ?? GPU_PRESETS.find((g) => g.id === 'h100')!;
    const custom = spec.gpuMemoryGiB !== null;
    const gpu = custom ? { ...base, memoryGiB: spec.gpuMemoryGiB!, label: `${spec.gpuMemoryGiB} GiB GPU` } : base;
    derived = capacityFor(gpu, spec.model, p.blockSizeTokens);
    if (derived === null && spec.capacityTokens === null) throw new DoesNotFitError(spec.model, gpu, custom);
    p.capacityTokens = derived ?? 0;
    p.kvBytesPerToken = spec.model.kvBytesPerToken;
    if (spec.model.kvLayout) p.kvLayout = { ...spec.model.kvLayout };
    p.prefillUsPerToken = spec.model.prefillUsPerToken;
    const timing = spec.model.timing[base.id];
    if (timing) {
      p.stepFixedMs = timing.stepFixedMs;
      p.kvReadNsPerToken = timing.kvReadNsPerToken;
    }
    hardware = `one ${gpu.label} with ${spec.model.label}`;
  }
  if (spec.capacityTokens !== null) p.capacityTokens = spec.capacityTokens;
  const given = p as unknown as Record<string, unknown>;
  for (const key of ENGINE_KEYS) if (spec[key] !== undefined) given[key] = spec[key];
  // Every policy's values are kept (and printed in --json) whatever the policy; only its own policy reads them.
  for (const choice of POLICY_CHOICES as readonly PolicyChoice[]) choice.apply(p, spec.policyValues);
  // A fleet only when there is one: one GPU is one GPU, exactly as without --gpus.
  if (spec.gpus !== null && spec.gpus > 1) p.fleet = { gpus: spec.gpus, router: spec.router ?? DEFAULT_ROUTER };
  return { params: p, hardware, derivedCapacityTokens: derived };
}
