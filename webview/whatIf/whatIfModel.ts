import type { SessionSummary } from '../../src/core/analysis/sessionSummary';
import type { CallRow } from '../../src/core/view/traceView';
import { formatCompact, formatCount, formatPercent, formatRatio } from '../../src/core/text/formatNumbers';
import {
  capacityFor,
  DEFAULT_PARAMS,
  GPU_PRESETS,
  MODEL_PRESETS,
  PARAM_BOUNDS,
  ParamError,
  validateParams,
} from '../../src/core/sim/params';
import type { EngineParams, GpuPreset, ModelPreset } from '../../src/core/sim/params';
import {
  defaultPolicyValues,
  POLICY_CHOICES,
  POLICY_PARAMS,
  policyChoice,
  usedPolicyValues,
} from '../../src/core/sim/policies';
import type { PolicyId, PolicyParamKey, PolicyValues } from '../../src/core/sim/policies';
import { doesNotFitText, DoesNotFitError, paramsFor } from '../../src/core/sim/paramsFor';
import type { ScenarioSpec } from '../../src/core/sim/paramsFor';
import { emptyCommand, writeSimulateArgs } from '../../src/core/sim/commandLine';
import type { FormatId } from '../../src/core/trace/model';
import { tooLongForCache } from '../../src/core/sim/engines/policySupport';
import type { ScenarioCall, ScenarioGpu, ScenarioResult } from '../../src/core/sim/scenario';
import { DEFAULT_ROUTER, ROUTER_NAMES } from '../../src/core/sim/fleet/routers';
import type { RouterName } from '../../src/core/sim/fleet/routers';
import { DEFAULT_REPLICAS } from '../../src/core/sim/simRequests';
import type { ReplicaOptions } from '../../src/core/sim/simRequests';
import { DEFAULT_CLIFF, peakSessionTokens } from '../../src/core/sim/sweep';
import type { Cliff, SweepAxis } from '../../src/core/sim/sweep';
import type { Workload } from '../../src/core/sim/workload';
import {
  WHATIF_DEFAULTS,
  WHATIF_MAX_REPLICAS,
  WHATIF_MAX_TOOL_WAIT_SCALE,
  WHATIF_MIN_TOOL_WAIT_SCALE,
} from '../../src/protocol/messages';
import type { WhatIfCalibration, WhatIfDefaults } from '../../src/protocol/messages';
import { readCalibrationDocument } from '../../src/core/sim/calibrate';
import type { PointResult } from '../../src/protocol/whatIfWorkerProtocol';

// The what-if panel's view-model: the scenario the controls describe, its checks, the
// engine parameters and replica options it maps to (exactly as `agent-trace simulate`
// builds them from the same flags), the command that reproduces it, and the figures,
// sentence, bars and cliff the results become. Plain data in, plain data out.

/** Concurrent sessions the N control allows (the same range as the setting). */
export const MAX_REPLICAS = WHATIF_MAX_REPLICAS;
/** Tool-wait scale the control allows (the same range as the setting). */
export const MIN_TOOL_WAIT_SCALE = WHATIF_MIN_TOOL_WAIT_SCALE;
export const MAX_TOOL_WAIT_SCALE = WHATIF_MAX_TOOL_WAIT_SCALE;
/** The tool-wait slider's stops (the field takes any value in range). */
export const TOOL_WAIT_STOPS: readonly number[] = [0.25, 0.33, 0.5, 0.67, 0.75, 1, 1.25, 1.5, 2, 3, 4];
/** GPUs the panel's fleet control allows (the CLI takes up to 1,024). */
export const MAX_PANEL_GPUS = 64;
/** The routers as the panel offers them. */
export const ROUTER_CHOICES: ReadonlyArray<{ id: RouterName; label: string; hint: string }> = [
  { id: 'round-robin', label: 'Round-robin', hint: 'Each call to the next GPU in turn.' },
  { id: 'least-loaded', label: 'Least-loaded', hint: 'The GPU with the fewest running + waiting tokens.' },
  { id: 'session-affinity', label: 'Session affinity', hint: "A session stays on its first call's GPU." },
  {
    id: 'kv-aware',
    label: 'KV-aware (Dynamo-like)',
    hint: 'The fewest tokens to prefill there plus its load: back to the GPU holding the prefix, unless it is loaded.',
  },
];
/** Every choice of the panel, as it is saved per file (UI intent, never results); each policy's own values are declared in policies.ts. */
export interface Scenario extends PolicyValues {
  /** A GPU preset id, or 'custom' for a GPU of `gpuMemoryGiB` with an H100's step costs. */
  gpu: string;
  gpuMemoryGiB: number;
  /** A model preset id, or 'custom' (KV bytes per token and weights given, default step costs). */
  model: string;
  customKvBytesPerToken: number;
  customWeightsGiB: number;
  /** True: the capacity is typed in tokens; false: it comes from the GPU and the model. */
  capacityTyped: boolean;
  capacityTokens: number;
  replicas: number;
  staggerS: number;
  staggerMode: 'fixed' | 'random';
  seed: number;
  toolWaitScale: number;
  policy: PolicyId;
  /** What the cliff chart sweeps. */
  sweepAxis: SweepAxis;
  /** GPUs behind the router (1: one GPU, as without a fleet). */
  gpus: number;
  router: RouterName;
  /** Step times fitted on the person's own server (`agent-trace calibrate`), in place of the GPU and model's; null: the presets'. */
  calibration: WhatIfCalibration | null;
}

/** The panel's own defaults when the host sends none (an older host): the host's built-in ones. */
export const BUILTIN_DEFAULTS: WhatIfDefaults = WHATIF_DEFAULTS;

/** The starting scenario: the settings' defaults, the engine's defaults for the rest. */
export function defaultScenario(d: WhatIfDefaults = BUILTIN_DEFAULTS): Scenario {
  const p = DEFAULT_PARAMS;
  const gpu = GPU_PRESETS.some((g) => g.id === d.gpu) ? d.gpu : BUILTIN_DEFAULTS.gpu;
  return {
    gpu,
    gpuMemoryGiB: GPU_PRESETS.find((g) => g.id === gpu)!.memoryGiB,
    model: MODEL_PRESETS.some((m) => m.id === d.model) ? d.model : BUILTIN_DEFAULTS.model,
    customKvBytesPerToken: p.kvBytesPerToken,
    customWeightsGiB: 61.1,
    capacityTyped: false,
    capacityTokens: p.capacityTokens,
    replicas: clampWhole(d.replicas, 1, MAX_REPLICAS, BUILTIN_DEFAULTS.replicas),
    staggerS: Number.isFinite(d.staggerS) && d.staggerS >= 0 ? d.staggerS : BUILTIN_DEFAULTS.staggerS,
    staggerMode: 'fixed',
    seed: DEFAULT_REPLICAS.seed,
    toolWaitScale:
      d.toolWaitScale >= MIN_TOOL_WAIT_SCALE && d.toolWaitScale <= MAX_TOOL_WAIT_SCALE ? d.toolWaitScale : 1,
    policy: POLICY_CHOICES.some((c) => c.id === d.policy) ? d.policy : 'vllm-lru',
    ...defaultPolicyValues(p),
    sweepAxis: 'replicas',
    gpus: 1,
    router: DEFAULT_ROUTER,
    calibration: null,
  };
}

function clampWhole(v: number, low: number, high: number, fallback: number): number {
  return Number.isInteger(v) && v >= low && v <= high ? v : fallback;
}

// ---- fields: what a person may type, and the message when it cannot be used ----

/** The numeric fields of the panel (text boxes: a person can type anything). */
export type NumericField =
  | 'gpuMemoryGiB'
  | 'customKvBytesPerToken'
  | 'customWeightsGiB'
  | 'capacityTokens'
  | 'replicas'
  | 'staggerS'
  | 'seed'
  | 'toolWaitScale'
  | 'gpus'
  | PolicyParamKey;

/** How a field's text is read. */
interface FieldRule {
  label: string;
  whole: boolean;
  min: number;
  /** True: the value must be above `min`, not equal. */
  minOpen?: boolean;
  max?: number;
  maxOpen?: boolean;
  /** A word the field also takes ('auto', 'adaptive'). */
  word?: string;
  unit?: string;
}

const FIELD_RULES: Record<NumericField, FieldRule> = {
  gpuMemoryGiB: {
    label: 'GPU memory',
    whole: false,
    min: 0,
    minOpen: true,
    max: PARAM_BOUNDS.gpuMemoryGiB.max,
    unit: 'GiB',
  },
  customKvBytesPerToken: { label: 'KV bytes per token', whole: true, min: 1 },
  customWeightsGiB: { label: 'Weights', whole: false, min: 0, unit: 'GiB' },
  capacityTokens: { label: 'KV capacity', whole: true, min: 16, unit: 'tokens' },
  replicas: { label: 'Sessions', whole: true, min: 1, max: MAX_REPLICAS },
  staggerS: { label: 'Start stagger', whole: false, min: 0, unit: 's' },
  seed: { label: 'Seed', whole: true, min: 0 },
  toolWaitScale: { label: 'Tool-wait scale', whole: false, min: MIN_TOOL_WAIT_SCALE, max: MAX_TOOL_WAIT_SCALE },
  gpus: { label: 'GPUs', whole: true, min: 1, max: MAX_PANEL_GPUS },
  // Each policy's fields read its declaration: label, unit, the word it takes, the engine's bounds.
  ...(Object.fromEntries(
    POLICY_PARAMS.map((p) => [
      p.key,
      {
        label: p.label,
        whole: p.whole ?? p.bound.integer ?? false,
        min: p.bound.min,
        minOpen: p.bound.minExclusive,
        max: p.bound.max,
        maxOpen: p.bound.maxExclusive,
        word: p.word,
        unit: p.unit,
      },
    ]),
  ) as Record<PolicyParamKey, FieldRule>),
};

/** A field's label, for messages and aria labels. */
export function fieldLabel(field: NumericField): string {
  return FIELD_RULES[field].label;
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
/** "255,008" as people write thousands (the derived capacity is shown that way). */
const GROUPED = /^\d{1,3}(,\d{3})+$/;

/** A field's text read, or the reason it cannot be used (shown at the field). */
export type FieldValue = { ok: true; value: number | string } | { ok: false; message: string };

/**
 * Reads what a person typed in a numeric field. `blockSizeTokens` is the smallest
 * capacity (one block). Refuses non-numbers, out-of-range values and fractions where a
 * whole number is needed, with a message naming the field and what it takes.
 */
export function parseField(field: NumericField, text: string, blockSizeTokens = 16): FieldValue {
  const rule = FIELD_RULES[field];
  const raw = text.trim();
  if (rule.word && raw.toLowerCase() === rule.word) return { ok: true, value: rule.word };
  const min = field === 'capacityTokens' || field === 'offloadTokens' ? blockSizeTokens : rule.min;
  const want = wantText(rule, min, field, blockSizeTokens);
  if (raw === '') return { ok: false, message: `${rule.label} is empty: enter ${want}.` };
  const plain = GROUPED.test(raw) ? raw.replace(/,/g, '') : raw;
  if (!DECIMAL.test(plain)) return { ok: false, message: `"${raw}" is not a number: ${rule.label} needs ${want}.` };
  const n = Number(plain);
  const tooLow = rule.minOpen ? n <= min : n < min;
  const tooHigh = rule.max !== undefined && (rule.maxOpen ? n >= rule.max : n > rule.max);
  if (!Number.isFinite(n) || tooLow || tooHigh || (rule.whole && !Number.isInteger(n))) {
    return {
      ok: false,
      message: `${rule.label} ${field === 'replicas' && n === 0 ? 'cannot be 0' : `cannot be ${raw}`}: enter ${want}.`,
    };
  }
  return { ok: true, value: n };
}

function wantText(rule: FieldRule, min: number, field: NumericField, blockSizeTokens: number): string {
  const unit = rule.unit ? ` ${rule.unit}` : '';
  const kind = rule.whole ? 'a whole number' : 'a number';
  let range: string;
  if (field === 'capacityTokens' || field === 'offloadTokens')
    range = `${kind} of tokens, at least one block (${blockSizeTokens} tokens)`;
  else if (rule.max !== undefined)
    range = `${kind} from ${num(min)}${rule.minOpen ? ' (exclusive)' : ''} to ${num(rule.max)}${rule.maxOpen ? ' (exclusive)' : ''}${unit}`;
  else range = `${kind} ${rule.minOpen ? '>' : '≥'} ${num(min)}${unit}`;
  return rule.word ? `${range}, or "${rule.word}"` : range;
}

/** A number as typed and as the CLI reads it back exactly (JavaScript's shortest round-trip form). */
function num(n: number): string {
  return String(n);
}

/** The text a field shows for a scenario value. */
export function fieldText(field: NumericField, s: Scenario): string {
  const v = s[field];
  if (typeof v === 'string') return v;
  return field === 'capacityTokens' || field === 'offloadTokens' ? formatCount(v) : String(v);
}

/** Sets a field's value on a scenario (a new object). */
export function withField(s: Scenario, field: NumericField, value: number | string): Scenario {
  return { ...s, [field]: value };
}

/** Reads a saved scenario defensively (an older build may have saved another shape); anything unusable takes its default. */
export function readScenario(raw: unknown, defaults: WhatIfDefaults = BUILTIN_DEFAULTS): Scenario {
  const base = defaultScenario(defaults);
  if (typeof raw !== 'object' || raw === null) return base;
  const r = raw as Record<string, unknown>;
  const out: Scenario = { ...base };
  if (typeof r['gpu'] === 'string' && (r['gpu'] === 'custom' || GPU_PRESETS.some((g) => g.id === r['gpu'])))
    out.gpu = r['gpu'];
  if (typeof r['model'] === 'string' && (r['model'] === 'custom' || MODEL_PRESETS.some((m) => m.id === r['model'])))
    out.model = r['model'];
  if (typeof r['capacityTyped'] === 'boolean') out.capacityTyped = r['capacityTyped'];
  if (r['staggerMode'] === 'fixed' || r['staggerMode'] === 'random') out.staggerMode = r['staggerMode'];
  if (POLICY_CHOICES.some((c) => c.id === r['policy'])) out.policy = r['policy'] as PolicyId;
  if (r['sweepAxis'] === 'replicas' || r['sweepAxis'] === 'capacity') out.sweepAxis = r['sweepAxis'];
  if ((ROUTER_NAMES as readonly unknown[]).includes(r['router'])) out.router = r['router'] as RouterName;
  for (const field of Object.keys(FIELD_RULES) as NumericField[]) {
    const v = r[field];
    if (typeof v !== 'number' && typeof v !== 'string') continue;
    const parsed = parseField(field, String(v));
    if (parsed.ok) (out as unknown as Record<string, unknown>)[field] = parsed.value;
  }
  out.calibration = readSavedCalibration(r['calibration']);
  return out;
}

/** A saved calibration, checked as the host checked the file; anything else is none. */
function readSavedCalibration(raw: unknown): WhatIfCalibration | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const name = (raw as Record<string, unknown>)['name'];
  if (typeof name !== 'string' || name === '' || name.length > 255) return null;
  const read = readCalibrationDocument(raw);
  return read.ok ? { name, ...read.fit } : null;
}

// ---- the scenario as the engine runs it ----

/** A scenario the engine can run: parameters, replicas, and how to say what it is. */
export interface ResolvedScenario {
  params: EngineParams;
  /** Null for a block-hash trace: its requests replay as recorded. */
  replicas: ReplicaOptions | null;
  /** The capacity the GPU and model give (null: the weights do not fit, or a typed capacity). */
  derivedCapacityTokens: number | null;
  /** "one H200" / "one 96 GiB GPU". */
  gpuText: string;
  /** "Qwen3-32B" / "a custom model". */
  modelText: string;
}

/** Where a scenario cannot run: messages by field ('gpu', 'model', 'policy' or a numeric field), or for the whole scenario. */
export type ResolveResult =
  | { ok: true; scenario: ResolvedScenario }
  | { ok: false; errors: Partial<Record<NumericField | 'gpu' | 'model' | 'scenario', string>> };

/** The GPU as the capacity formula sees it: a preset, or the H100's speed with custom memory (as the CLI's --gpu-memory-gib). */
export function gpuOf(s: Scenario): { base: GpuPreset; gpu: GpuPreset; custom: boolean } {
  const custom = s.gpu === 'custom';
  const base = GPU_PRESETS.find((g) => g.id === (custom ? 'h100' : s.gpu)) ?? GPU_PRESETS[0]!;
  return {
    base,
    custom,
    gpu: custom ? { ...base, memoryGiB: s.gpuMemoryGiB, label: `${s.gpuMemoryGiB} GiB GPU` } : base,
  };
}

/** The model preset, or a custom model from its KV bytes per token and weights (no step costs: the engine's defaults). */
export function modelOf(s: Scenario): { model: ModelPreset; custom: boolean } {
  const preset = MODEL_PRESETS.find((m) => m.id === s.model);
  if (preset) return { model: preset, custom: false };
  return {
    custom: true,
    model: {
      id: 'custom',
      label: 'custom model',
      kvBytesPerToken: s.customKvBytesPerToken,
      weightsGiB: s.customWeightsGiB,
      prefillUsPerToken: DEFAULT_PARAMS.prefillUsPerToken,
      timing: {},
    },
  };
}

/** "Qwen3-32B (bf16)" → "Qwen3-32B". */
function shortModel(label: string): string {
  return label.replace(/\s*\(.*\)\s*$/, '');
}

/** "256 KiB" for KV bytes per token. */
export function kvBytesText(bytes: number): string {
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${formatCount(bytes)} B`;
}

/** Why a model does not fit on a GPU, as the CLI says it, and what to do about it here. */
function doesNotFit(e: DoesNotFitError): string {
  return `${doesNotFitText(e.model, e.gpu, e.customMemory)}. Choose more memory, a smaller model, or type the capacity.`;
}

/**
 * The spec of a scenario (what `paramsFor` reads and `cliArgs` writes): the GPU and the
 * model (a custom GPU is an H100's speed with its memory; a custom model its KV size and
 * weights), a typed capacity, the chosen policy with the values it uses, the fleet.
 */
export function scenarioSpec(s: Scenario, policy: PolicyId = s.policy): ScenarioSpec {
  const { base } = gpuOf(s);
  const choice = policyChoice(policy);
  return {
    gpu: base,
    model: modelOf(s).model,
    gpuMemoryGiB: s.gpu === 'custom' ? s.gpuMemoryGiB : null,
    capacityTokens: s.capacityTyped ? s.capacityTokens : null,
    policy: choice.policy,
    policyValues: usedPolicyValues(policy, s),
    gpus: s.gpus > 1 ? s.gpus : null,
    router: s.gpus > 1 ? s.router : null,
  };
}

/**
 * The engine parameters and replica options of a scenario, built the way `agent-trace
 * simulate` builds them from the flags `cliArgs` writes: defaults; with a GPU and a
 * model, the capacity from capacityFor, the model's KV bytes per token and prefill
 * cost, and the model's step costs on that GPU (an H100's for custom memory); a typed
 * capacity keeps the model's costs. `blockSizeTokens` is the trace's for block-hash
 * traces. `policy` overrides the scenario's (the policy comparison).
 */
export function resolveScenario(
  s: Scenario,
  options: { blockSizeTokens?: number; blockTrace?: boolean; policy?: PolicyId } = {},
): ResolveResult {
  const errors: Partial<Record<NumericField | 'gpu' | 'model' | 'scenario', string>> = {};
  const { base, custom: customGpu } = gpuOf(s);
  const { model, custom: customModel } = modelOf(s);
  const spec = scenarioSpec(s, options.policy ?? s.policy);
  let resolved: ReturnType<typeof paramsFor>;
  try {
    // A block-hash trace keeps its own block size; otherwise the model's (a Mamba hybrid's raised one) or 16, as the CLI.
    resolved = paramsFor(spec, options.blockTrace ? (options.blockSizeTokens ?? null) : null);
  } catch (e) {
    if (!(e instanceof DoesNotFitError)) throw e;
    return { ok: false, errors: { [customGpu ? 'gpuMemoryGiB' : 'model']: doesNotFit(e) } };
  }
  const blockSizeTokens = resolved.params.blockSizeTokens;
  // Step times from the person's own server replace the preset's (as `simulate --calibration` does).
  const p = s.calibration ? { ...resolved.params, ...s.calibration.model } : resolved.params;
  const derived = resolved.derivedCapacityTokens;
  if (!s.capacityTyped && derived !== null && derived < blockSizeTokens)
    errors[customGpu ? 'gpuMemoryGiB' : 'model'] = `${model.label} leaves less than one block of KV cache on this GPU.`;
  // An admission cap holds sessions back on one GPU: said at the GPUs field.
  if (p.fleet && p.policy === 'admission-cap')
    errors.gpus = 'An admission cap runs on one GPU: choose 1 GPU, or another policy.';
  if (s.capacityTyped && s.capacityTokens < blockSizeTokens)
    errors.capacityTokens = `KV capacity must be at least one block (${blockSizeTokens} tokens).`;
  if (Object.keys(errors).length === 0) {
    try {
      validateParams(p);
    } catch (e) {
      if (!(e instanceof ParamError)) throw e;
      errors.scenario = `These parameters cannot work: ${e.message}.`;
    }
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const replicas: ReplicaOptions | null = options.blockTrace
    ? null
    : {
        replicas: s.replicas,
        staggerS: s.staggerS,
        staggerMode: s.staggerMode,
        seed: s.staggerMode === 'random' ? s.seed : DEFAULT_REPLICAS.seed,
        toolWaitScale: s.toolWaitScale,
      };
  return {
    ok: true,
    scenario: {
      params: p,
      replicas,
      derivedCapacityTokens: s.capacityTyped ? null : derived,
      gpuText: fleetText(s, customGpu ? `${s.gpuMemoryGiB} GiB GPU` : base.label.split(' ')[0]!),
      modelText:
        (customModel
          ? `a custom model (${kvBytesText(model.kvBytesPerToken)} KV per token)`
          : shortModel(model.label)) + (s.calibration ? ` (step times from ${s.calibration.name})` : ''),
    },
  };
}

/** "one H200", or "4 H200s behind the KV-aware router". */
function fleetText(s: Scenario, gpu: string): string {
  if (s.gpus <= 1) return `one ${gpu}`;
  const router = ROUTER_CHOICES.find((c) => c.id === s.router)?.label ?? s.router;
  return `${s.gpus} ${gpu}s behind the ${router.replace(/ \(.*\)$/, '')} router`;
}

/**
 * What the step-times note says: the four costs the run charges and where they come from
 * (the calibration file and how well it fitted, or the GPU and model presets).
 */
export function stepTimesText(s: Scenario): string {
  let p: EngineParams;
  if (s.calibration) p = { ...DEFAULT_PARAMS, ...s.calibration.model };
  else {
    try {
      p = paramsFor(scenarioSpec(s)).params;
    } catch {
      return 'The GPU and model presets’ step times (the model does not fit this GPU).';
    }
  }
  // Four significant digits: 18.08 ms, 131.9 µs (the command carries them to the nanosecond).
  const v = (x: number): string => String(Number(x.toPrecision(4)));
  const costs = `${v(p.stepFixedMs)} ms per step, ${v(p.prefillUsPerToken)} µs per prefilled token, ${v(p.kvReadNsPerToken)} ns per KV token read, ${v(p.decodeUsPerSeq)} µs per decoding sequence`;
  const c = s.calibration;
  if (!c) return `From the GPU and model presets: ${costs}.`;
  const fit = [
    c.requests === null ? null : `fitted to ${formatCount(c.requests)} requests`,
    c.medianAbsRelError === null ? null : `median error ${formatPercent(c.medianAbsRelError)}`,
  ].filter((x) => x !== null);
  return `From ${c.name}: ${costs}${fit.length > 0 ? `; ${fit.join(', ')}` : ''}.`;
}

/** The derived capacity for the capacity field's hint, or null when the weights do not fit. */
export function derivedCapacity(s: Scenario, blockSizeTokens = 16): number | null {
  const { gpu } = gpuOf(s);
  return capacityFor(gpu, modelOf(s).model, blockSizeTokens);
}

/** Calls longer than the whole cache are rejected by vLLM: none fitting is an error, some a note (as the CLI says). */
export function fitCheck(w: Workload, p: EngineParams): { tooLong: number; total: number; shortestTokens: number } {
  const sizes =
    w.kind === 'requests'
      ? w.requests.map((r) => [r.promptTokens, Math.max(1, r.outputTokens)] as const)
      : w.sessions.flatMap((x) => x.calls.map((c) => [c.promptTokens, Math.max(1, c.outputTokens)] as const));
  let tooLong = 0;
  let shortest = Infinity;
  for (const [prompt, output] of sizes) {
    if (tooLongForCache(p, p.blockSizeTokens, prompt, output)) tooLong += 1;
    shortest = Math.min(shortest, prompt + output);
  }
  return { tooLong, total: sizes.length, shortestTokens: Number.isFinite(shortest) ? shortest : 0 };
}

// ---- Copy as CLI ----

/** What the command needs besides the scenario: the file, the session and the format. */
export interface CommandInput {
  filePath: string;
  /** Null for a block-hash trace. */
  sessionId: string | null;
  format: string | null;
}

/** A shell word: left bare when safe, else single-quoted. */
export function shellWord(word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The arguments of `agent-trace simulate` that reproduce a scenario (after the word
 * "simulate"), with the flag names of the CLI's contract. With a GPU preset and a model
 * preset the CLI derives capacity and step costs itself; otherwise the capacity and every
 * cost the panel used are written out, so the CLI's defaults do not matter. A sweep
 * replaces the swept flag.
 */
export function cliArgs(
  s: Scenario,
  r: ResolvedScenario,
  input: CommandInput,
  sweep: { axis: SweepAxis; values: readonly number[]; threshold?: number } | null = null,
): string[] {
  const c = emptyCommand();
  c.file = input.filePath;
  c.format = input.format as FormatId | null;
  c.session = input.sessionId;
  if (r.replicas) {
    if (sweep?.axis !== 'replicas') c.replicas.replicas = r.replicas.replicas;
    c.replicas.staggerS = r.replicas.staggerS;
    if (r.replicas.staggerMode === 'random')
      Object.assign(c.replicas, { staggerMode: 'random', seed: r.replicas.seed });
    c.replicas.toolWaitScale = r.replicas.toolWaitScale;
  }
  const p = r.params;
  const spec = scenarioSpec(s);
  if (MODEL_PRESETS.some((m) => m.id === s.model) && !s.capacityTyped && sweep?.axis !== 'capacity') {
    Object.assign(c, { gpu: spec.gpu, model: spec.model, gpuMemoryGiB: spec.gpuMemoryGiB });
  } else {
    // No preset the CLI knows (or the capacity is the sweep's): the capacity and every cost the panel used.
    if (sweep?.axis !== 'capacity') c.capacityTokens = p.capacityTokens;
    Object.assign(c, {
      stepFixedMs: p.stepFixedMs,
      prefillUsPerToken: p.prefillUsPerToken,
      kvReadNsPerToken: p.kvReadNsPerToken,
      kvBytesPerToken: p.kvBytesPerToken,
    });
  }
  if (s.calibration) {
    // The calibration's four step costs, written out: explicit flags win over a preset's.
    const m = s.calibration.model;
    Object.assign(c, {
      stepFixedMs: m.stepFixedMs,
      prefillUsPerToken: m.prefillUsPerToken,
      kvReadNsPerToken: m.kvReadNsPerToken,
      decodeUsPerSeq: m.decodeUsPerSeq,
    });
  }
  Object.assign(c, { policy: spec.policy, policyValues: spec.policyValues, gpus: spec.gpus, router: spec.router });
  if (sweep) {
    c.sweep = { axis: sweep.axis, values: [...sweep.values] };
    if (sweep.threshold !== undefined && sweep.threshold !== DEFAULT_CLIFF.hitRateDropThreshold)
      c.cliffThreshold = sweep.threshold;
  }
  c.json = true;
  return writeSimulateArgs(c);
}

/** The whole command line, ready to paste into a shell. */
export function cliCommand(
  s: Scenario,
  r: ResolvedScenario,
  input: CommandInput,
  sweep: { axis: SweepAxis; values: readonly number[]; threshold?: number } | null = null,
): string {
  return ['agent-trace', 'simulate', ...cliArgs(s, r, input, sweep)].map(shellWord).join(' ');
}

// ---- sweeps and the cliff ----

/** Replica counts of the cliff sweep, in the order they are run. */
export const REPLICA_SWEEP: readonly number[] = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256];
/** Points run after the first one past the cliff: enough to see the fall, without running every large N. */
export const POINTS_AFTER_CLIFF = 2;
/** A sweep stops starting new points after this long, and says which it skipped. */
export const SWEEP_BUDGET_MS = 20_000;

/**
 * Why the two sweeps suggest different admission caps for the same cache, said under the
 * cliff's summary. The sweep against N measures its cap: sessions started as set, on this
 * cache, the last N before the cliff. The sweep against KV capacity cannot run more
 * sessions than the scenario's, so its cap is an estimate from sizes
 * (docs/design/simulator.md §5): how many sessions at their peak context fit at once in
 * the smallest capacity before the cliff. Staggered sessions are seldom all at their peak
 * together, so the measured cap is usually the larger. Null without a cap to explain.
 */
export function capNote(
  axis: SweepAxis,
  cliff: Cliff | null,
  workload: Workload | null,
  capacityTokens: number,
  replicas: ReplicaOptions | null,
): string | null {
  if (!cliff || cliff.suggestedAdmissionCap === null || workload === null || workload.kind !== 'sessions') return null;
  const cap = cliff.suggestedAdmissionCap;
  const sessions = (n: number): string => `${formatCount(n)} session${n === 1 ? '' : 's'}`;
  if (axis === 'replicas') {
    const started = replicas ? `, started ${formatCount(replicas.staggerS)} s apart,` : '';
    return (
      `This cap is measured on this cache (${formatCompact(capacityTokens)} tokens of KV capacity): ${sessions(cap)}${started} ran before the cliff. ` +
      'The sweep against KV capacity gives an estimate from sizes instead (sessions all at their peak context at once), which is more cautious.'
    );
  }
  if (axis !== 'capacity' || cliff.lastGood === null) return null;
  const peak = peakSessionTokens(workload);
  return (
    `This cap is an estimate from sizes, not a run: ${formatCompact(cliff.lastGood)} tokens (the smallest capacity before the cliff) hold ${sessions(cap)} at their peak context ` +
    `(${formatCompact(peak)} tokens each) at once. The sweep against N measures the cap on this cache (${formatCompact(capacityTokens)} tokens) with the sessions started as set; ` +
    'they are seldom all at their peak together, so it usually admits more.'
  );
}

/** Capacities of a capacity sweep, largest first: from 4× the current capacity down to 1/16, in whole blocks. */
export function capacitySweep(capacityTokens: number, blockSizeTokens = 16): number[] {
  const factors = [4, 2, 1.5, 1, 0.75, 0.5, 0.35, 0.25, 0.125, 0.0625];
  const values = factors.map((f) =>
    Math.max(blockSizeTokens, Math.floor((capacityTokens * f) / blockSizeTokens) * blockSizeTokens),
  );
  return [...new Set(values)].sort((a, b) => b - a);
}

/** The values a sweep runs, in order (replicas rising, capacities falling). */
export function sweepValues(axis: SweepAxis, capacityTokens: number, blockSizeTokens = 16): number[] {
  return axis === 'replicas' ? [...REPLICA_SWEEP] : capacitySweep(capacityTokens, blockSizeTokens);
}

/** A scenario result as a sweep point keeps it. */
export function pointOf(r: ScenarioResult): PointResult {
  const rest: Partial<ScenarioResult> = { ...r };
  delete rest.calls;
  delete rest.sessions;
  return rest as PointResult;
}

/** "48, 64, 96, 128, 192 and 256" (capacities compact: "64k"). */
export function valuesText(axis: SweepAxis, values: readonly number[]): string {
  const words = values.map((v) => (axis === 'capacity' ? formatCompact(v) : String(v)));
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

/** Why a sweep stopped early, for the note under the chart; null when every point ran. */
export function skippedText(
  axis: SweepAxis,
  skipped: readonly number[],
  stoppedBy: 'cliff' | 'budget' | null,
): string | null {
  if (skipped.length === 0 || stoppedBy === null) return null;
  const what =
    axis === 'replicas' ? `N = ${valuesText(axis, skipped)}` : `capacities ${valuesText(axis, skipped)} tokens`;
  return stoppedBy === 'cliff'
    ? `Not run: ${what}. The sweep stops ${POINTS_AFTER_CLIFF} points past the cliff; the rest would only fall further.`
    : `Not run: ${what}. The sweep stops starting points after ${SWEEP_BUDGET_MS / 1000} s on this trace.`;
}

// ---- the figures, the sentence, the bars ----

/** One figure of the results strip; `value` is the raw number (tests compare it with the CLI's JSON). */
export interface WhatIfFigure {
  name: string;
  label: string;
  text: string;
  /** Smaller text under it ("ideal 98.9%"). */
  note: string;
  value: number | null;
  hint: string;
}

/** The headline figures of a scenario: hit rate vs ideal, recomputed prefill, prefill share, slowdown vs alone. */
export function headlineFigures(r: ScenarioResult, alone: PointResult | null): WhatIfFigure[] {
  const figures: WhatIfFigure[] = [
    {
      name: 'whatIfHitRate',
      label: 'Hit rate',
      text: formatPercent(r.admissionHitRate),
      note: `ideal ${formatPercent(r.idealHitRate)}${alone && r.replicas > 1 ? ` · alone ${formatPercent(alone.admissionHitRate)}` : ''}`,
      value: r.admissionHitRate,
      hint: 'Prompt tokens served from the GPU prefix cache when each call was first admitted, over all prompt tokens; ideal: with an infinite cache.',
    },
    {
      name: 'whatIfRecomputed',
      label: 'Recomputed prefill',
      text: formatCount(r.recomputedPrefillTokens),
      note: `tokens of ${formatCount(r.promptTokens)} prompt`,
      value: r.recomputedPrefillTokens,
      hint: 'Prompt tokens prefilled again although they had been computed before (evicted or preempted).',
    },
    {
      name: 'whatIfPrefillShare',
      label: 'Prefill share',
      text: formatPercent(r.prefillShare),
      note: alone && r.replicas > 1 ? `alone ${formatPercent(alone.prefillShare)}` : 'of LLM time',
      value: r.prefillShare,
      hint: "Prefill's share of GPU step time (prefill + decode); above 50% the server is prefill-bound.",
    },
    {
      name: 'whatIfSlowdown',
      label: 'Slowdown vs alone',
      text: formatRatio(r.slowdown.mean),
      note: `max ${formatRatio(r.slowdown.max)}`,
      value: r.slowdown.mean,
      hint: "Each session's completion time over the same session's time running alone on the same GPU (mean over sessions).",
    },
  ];
  // Only a CPU tier reloads anything.
  if (r.offloadHitTokens > 0) {
    figures.push({
      name: 'whatIfOffloadHits',
      label: 'Reloaded from CPU',
      text: formatCount(r.offloadHitTokens),
      note: 'tokens, not recomputed',
      value: r.offloadHitTokens,
      hint: 'Prompt tokens reloaded from the CPU tier instead of recomputed.',
    });
  }
  if (r.preemptions > 0 || r.rejectedRequests > 0) {
    figures.push({
      name: 'whatIfPreemptions',
      label: 'Preemptions',
      text: formatCount(r.preemptions),
      note: r.rejectedRequests > 0 ? `${formatCount(r.rejectedRequests)} calls rejected` : 'requests pushed back',
      value: r.preemptions,
      hint: 'Running requests the scheduler preempted for lack of KV blocks (recomputed later); rejected: longer than the whole cache.',
    });
  }
  return figures;
}

function pctWhole(v: number): string {
  return `${Math.round(v * 100)}%`;
}

/** Words for a policy in the sentence: nothing for the default. */
function underPolicy(policy: PolicyId): string {
  const c = POLICY_CHOICES.find((x) => x.id === policy)!;
  return policy === 'vllm-lru' ? '' : ` under ${c.short}`;
}

/**
 * The plain sentence over the results, e.g. "24 sessions like this on one H200 with
 * Qwen3-32B: hit rate falls from 97% to 41% and prefill becomes 52% of LLM time."
 * "From" is the same session running alone (N = 1) under the same scenario.
 */
export function scenarioSentence(
  s: Scenario,
  rs: ResolvedScenario,
  r: ScenarioResult,
  alone: PointResult | null,
  blockTrace = false,
): string {
  const where = `${rs.gpuText} with ${rs.modelText}${s.capacityTyped ? ` and a ${formatCount(rs.params.capacityTokens)}-token KV cache` : ''}${underPolicy(s.policy)}`;
  const hit = r.admissionHitRate;
  const prefill = r.prefillShare;
  if (blockTrace) {
    return `This trace's ${formatCount(r.requests)} requests on ${where}: hit rate ${hit === null ? 'unknown' : pctWhole(hit)} (ideal ${r.idealHitRate === null ? 'unknown' : pctWhole(r.idealHitRate)}) and prefill ${prefill === null ? 'unknown' : `is ${pctWhole(prefill)}`} of LLM time.`;
  }
  const n = r.replicas;
  const who = n === 1 ? 'One session like this alone' : `${n} sessions like this`;
  const base = n > 1 ? alone : null;
  let hitText: string;
  if (hit === null) hitText = 'hit rate unknown';
  else if (base?.admissionHitRate == null)
    hitText = `hit rate ${pctWhole(hit)} (ideal ${r.idealHitRate === null ? 'unknown' : pctWhole(r.idealHitRate)})`;
  else if (pctWhole(hit) === pctWhole(base.admissionHitRate)) hitText = `hit rate stays at ${pctWhole(hit)}`;
  else
    hitText = `hit rate ${hit < base.admissionHitRate ? 'falls' : 'rises'} from ${pctWhole(base.admissionHitRate)} to ${pctWhole(hit)}`;
  let prefillText: string;
  if (prefill === null) prefillText = 'prefill share unknown';
  else if (base?.prefillShare == null || pctWhole(prefill) === pctWhole(base.prefillShare))
    prefillText = `prefill ${base?.prefillShare == null ? 'is' : 'stays at'} ${pctWhole(prefill)} of LLM time`;
  else prefillText = `prefill ${prefill > base.prefillShare ? 'becomes' : 'falls to'} ${pctWhole(prefill)} of LLM time`;
  const slow =
    n > 1 && r.slowdown.mean !== null && r.slowdown.mean >= 1.05
      ? `; each takes ${formatRatio(r.slowdown.mean)} as long as alone`
      : '';
  return `${who} on ${where}: ${hitText} and ${prefillText}${slow}.`;
}

/** The per-call bars: the session as traced and under the scenario, one pair per replayed call. */
export interface ScenarioBarsModel {
  /** 1-based call numbers of the session. */
  labels: string[];
  /** The session's call index of each bar (for selecting it in the timeline). */
  callIndexes: number[];
  traced: { cached: (number | null)[]; appended: (number | null)[]; output: (number | null)[] };
  scenario: { hit: number[]; reloaded: number[]; recomputed: number[]; appended: number[]; output: number[] };
  /** Bars of calls the scenario rejected (longer than the cache). */
  rejected: number[];
  /** Calls whose scenario hit is below the traced hit by more than 10% of the prompt. */
  worse: number[];
  axisMax: number;
}

/** One scenario call split into what the stack shows: hit, reloaded, recomputed, new (appended) prefill, output. */
export function splitCall(c: ScenarioCall): {
  hit: number;
  reloaded: number;
  recomputed: number;
  appended: number;
  output: number;
} {
  if (c.rejected) return { hit: 0, reloaded: 0, recomputed: 0, appended: 0, output: 0 };
  const hit = c.hitTokens;
  const reloaded = c.offloadHitTokens;
  // Preemption recomputes generated tokens too, so `recomputed` may exceed the prompt's rest: the bar then shows the work done.
  const recomputed = c.recomputedTokens;
  const appended = Math.max(0, c.promptTokens - hit - reloaded - recomputed);
  return { hit, reloaded, recomputed, appended, output: c.outputTokens };
}

/** A call's traced figures, beside which the scenario bars draw the simulated ones. */
export type TracedCall = Pick<CallRow, 'cached' | 'appended' | 'output'>;

/** The session the what-if panel replays: its summary and, once the timeline has them, its calls' traced figures. */
export interface WhatIfSession {
  summary: SessionSummary;
  traced: ArrayLike<TracedCall | undefined>;
}

/** Builds the bars from the traced calls (the timeline's figures) and the scenario's calls of the same session. */
export function scenarioBars(
  traced: ArrayLike<TracedCall | undefined>,
  calls: readonly ScenarioCall[],
  callIndexes: readonly number[],
): ScenarioBarsModel {
  const m: ScenarioBarsModel = {
    labels: [],
    callIndexes: [],
    traced: { cached: [], appended: [], output: [] },
    scenario: { hit: [], reloaded: [], recomputed: [], appended: [], output: [] },
    rejected: [],
    worse: [],
    axisMax: 1,
  };
  let highest = 0;
  calls.forEach((c, k) => {
    const index = callIndexes[c.callIndex] ?? c.callIndex;
    const row = traced[index];
    m.labels.push(String(index + 1));
    m.callIndexes.push(index);
    m.traced.cached.push(row?.cached ?? null);
    m.traced.appended.push(row?.appended ?? null);
    m.traced.output.push(row?.output ?? null);
    const part = splitCall(c);
    m.scenario.hit.push(part.hit);
    m.scenario.reloaded.push(part.reloaded);
    m.scenario.recomputed.push(part.recomputed);
    m.scenario.appended.push(part.appended);
    m.scenario.output.push(part.output);
    if (c.rejected) m.rejected.push(k);
    if (row?.cached != null && c.promptTokens > 0 && (row.cached - part.hit) / c.promptTokens > 0.1) m.worse.push(k);
    highest = Math.max(
      highest,
      part.hit + part.reloaded + part.recomputed + part.appended + part.output,
      (row?.cached ?? 0) + (row?.appended ?? 0) + (row?.output ?? 0),
    );
  });
  m.axisMax = Math.max(1, highest);
  return m;
}

/** Tooltip lines of one bar pair. */
export function barTooltipLines(m: ScenarioBarsModel, k: number, c: ScenarioCall | undefined): string[] {
  if (!c) return [];
  const t = (v: number | null | undefined): string => formatCount(v ?? null);
  const lines = [
    `As traced: cached ${t(m.traced.cached[k])}, appended ${t(m.traced.appended[k])}, output ${t(m.traced.output[k])}`,
    `Scenario: hit ${t(m.scenario.hit[k])} (ideal ${t(c.idealHitTokens)}), recomputed ${t(m.scenario.recomputed[k])}, appended ${t(m.scenario.appended[k])}, output ${t(m.scenario.output[k])}`,
  ];
  if (c.offloadHitTokens > 0) lines.push(`Reloaded from CPU: ${t(c.offloadHitTokens)}`);
  if (c.waitedS !== null && c.waitedS > 0.0005)
    lines.push(`Waited ${c.waitedS.toFixed(c.waitedS < 10 ? 2 : 1)} s for the scheduler`);
  if (c.preemptions > 0) lines.push(`Preempted ${c.preemptions} time${c.preemptions === 1 ? '' : 's'}`);
  if (c.rejected) lines.push('Rejected: longer than the whole KV cache');
  return lines;
}

// ---- the policy comparison ----

/** One row of the policy table. */
export interface PolicyRow {
  policy: PolicyId;
  label: string;
  current: boolean;
  /** 'running' until its result arrives. */
  state: 'running' | 'done' | 'error';
  error: string | null;
  cells: { hitRate: string; vsIdeal: string; recomputed: string; prefillShare: string; slowdown: string };
  values: { hitRate: number | null; recomputed: number | null; prefillShare: number | null; slowdown: number | null };
}

/** The policy table's rows, current policy marked; `results` maps a policy to its result or error. */
export function policyRows(
  current: PolicyId,
  results: ReadonlyMap<PolicyId, { result: PointResult } | { error: string }>,
): PolicyRow[] {
  return POLICY_CHOICES.map((c) => {
    const got = results.get(c.id);
    const blank = { hitRate: '…', vsIdeal: '…', recomputed: '…', prefillShare: '…', slowdown: '…' };
    const none = { hitRate: null, recomputed: null, prefillShare: null, slowdown: null };
    if (!got)
      return {
        policy: c.id,
        label: c.label,
        current: c.id === current,
        state: 'running',
        error: null,
        cells: blank,
        values: none,
      };
    if ('error' in got)
      return {
        policy: c.id,
        label: c.label,
        current: c.id === current,
        state: 'error',
        error: got.error,
        cells: { ...blank, hitRate: '—', vsIdeal: '—', recomputed: '—', prefillShare: '—', slowdown: '—' },
        values: none,
      };
    const r = got.result;
    const gap = r.admissionHitRate !== null && r.idealHitRate !== null ? r.admissionHitRate - r.idealHitRate : null;
    return {
      policy: c.id,
      label: c.label,
      current: c.id === current,
      state: 'done',
      error: null,
      cells: {
        hitRate: formatPercent(r.admissionHitRate),
        vsIdeal: gap === null ? 'unknown' : `${gap <= -0.0005 ? '−' : ''}${(Math.abs(gap) * 100).toFixed(1)} pts`,
        recomputed: formatCount(r.recomputedPrefillTokens),
        prefillShare: formatPercent(r.prefillShare),
        slowdown: formatRatio(r.slowdown.mean),
      },
      values: {
        hitRate: r.admissionHitRate,
        recomputed: r.recomputedPrefillTokens,
        prefillShare: r.prefillShare,
        slowdown: r.slowdown.mean,
      },
    };
  });
}

/** The digest beside the collapsed section's title. */
export function scenarioDigest(s: Scenario, blockTrace: boolean): string {
  const gpu =
    s.gpu === 'custom'
      ? `${s.gpuMemoryGiB} GiB GPU`
      : (GPU_PRESETS.find((g) => g.id === s.gpu)?.label.split(' ')[0] ?? s.gpu);
  const model =
    s.model === 'custom' ? 'custom model' : shortModel(MODEL_PRESETS.find((m) => m.id === s.model)?.label ?? s.model);
  const policy = POLICY_CHOICES.find((c) => c.id === s.policy)?.short ?? s.policy;
  const fleet =
    s.gpus > 1
      ? `${s.gpus} GPUs, ${
          ROUTER_CHOICES.find((c) => c.id === s.router)
            ?.label.replace(/ \(.*\)$/, '')
            .toLowerCase() ?? s.router
        }`
      : null;
  return [
    blockTrace ? 'the whole trace' : `${s.replicas} session${s.replicas === 1 ? '' : 's'}`,
    gpu,
    model,
    s.capacityTyped ? `${formatCompact(s.capacityTokens)} tokens` : null,
    s.calibration ? 'calibrated steps' : null,
    policy,
    fleet,
  ]
    .filter((x) => x !== null)
    .join(' · ');
}

/** One GPU of a fleet as the results table shows it. */
export interface GpuRow {
  gpu: string;
  cells: { calls: string; sessions: string; hitRate: string; ideal: string; recomputed: string; busy: string };
  values: { hitRate: number | null; utilization: number | null; requests: number };
}

/** Each GPU's load (its calls, sessions and how busy it was) and hit rate; null for one GPU. */
export function gpuRows(perGpu: readonly ScenarioGpu[] | undefined): GpuRow[] | null {
  if (!perGpu) return null;
  return perGpu.map((g) => ({
    gpu: String(g.gpu + 1),
    cells: {
      calls: formatCount(g.requests),
      sessions: formatCount(g.sessions),
      hitRate: formatPercent(g.admissionHitRate),
      ideal: formatPercent(g.idealHitRate),
      recomputed: formatCount(g.recomputedPrefillTokens),
      busy: formatPercent(g.utilization),
    },
    values: { hitRate: g.admissionHitRate, utilization: g.utilization, requests: g.requests },
  }));
}

// ---- the cliff chart ----

/** One line of the cliff chart. */
export interface CliffSeries {
  key: string;
  label: string;
  /** What it plots: the hit rate, its ideal, or the prefill share. */
  kind: 'hit' | 'ideal' | 'prefill';
  policy: PolicyId;
  /** True for the current policy's lines. */
  main: boolean;
  points: Array<{ x: number; y: number | null }>;
}

/** Everything the cliff chart draws. */
export interface CliffChartModel {
  axis: SweepAxis;
  /** The values run, in axis order. */
  xs: number[];
  series: CliffSeries[];
  /** Where the cliff is (null: none found), the suggested admission cap (replicas axis only), the current scenario. */
  knee: number | null;
  suggested: number | null;
  current: { x: number; hit: number | null; prefill: number | null } | null;
  xLabel: string;
}

/** Builds the cliff chart from the sweep's points (main policy and the others' lines). */
export function cliffChartModel(
  axis: SweepAxis,
  policy: PolicyId,
  main: ReadonlyArray<{ value: number; result: PointResult }>,
  lines: ReadonlyMap<PolicyId, ReadonlyArray<{ value: number; result: PointResult }>>,
  cliff: Cliff | null,
  current: { x: number; result: PointResult } | null,
): CliffChartModel {
  const order = (a: { value: number }, b: { value: number }): number => a.value - b.value;
  const sorted = [...main].sort(order);
  const label = POLICY_CHOICES.find((c) => c.id === policy)?.short ?? policy;
  const series: CliffSeries[] = [
    {
      key: 'hit',
      label: `hit rate (${label})`,
      kind: 'hit',
      policy,
      main: true,
      points: sorted.map((p) => ({ x: p.value, y: p.result.admissionHitRate })),
    },
    {
      key: 'prefill',
      label: `prefill share (${label})`,
      kind: 'prefill',
      policy,
      main: true,
      points: sorted.map((p) => ({ x: p.value, y: p.result.prefillShare })),
    },
    {
      key: 'ideal',
      label: 'ideal hit rate',
      kind: 'ideal',
      policy,
      main: true,
      points: sorted.map((p) => ({ x: p.value, y: p.result.idealHitRate })),
    },
  ];
  for (const c of POLICY_CHOICES) {
    const pts = lines.get(c.id);
    if (c.id === policy || !pts || pts.length === 0) continue;
    series.push({
      key: `hit-${c.id}`,
      label: `hit rate (${c.short})`,
      kind: 'hit',
      policy: c.id,
      main: false,
      points: [...pts].sort(order).map((p) => ({ x: p.value, y: p.result.admissionHitRate })),
    });
  }
  return {
    axis,
    xs: sorted.map((p) => p.value),
    series,
    knee: cliff?.at ?? null,
    suggested: axis === 'replicas' ? (cliff?.suggestedAdmissionCap ?? null) : null,
    current: current
      ? { x: current.x, hit: current.result.admissionHitRate, prefill: current.result.prefillShare }
      : null,
    xLabel: axis === 'replicas' ? 'concurrent sessions (N)' : 'KV capacity (tokens)',
  };
}

/** What a screen reader hears for one point of the cliff chart. */
export function cliffPointText(axis: SweepAxis, value: number, r: PointResult, cliff: Cliff | null): string {
  const at =
    axis === 'replicas' ? `${value} session${value === 1 ? '' : 's'}` : `${formatCount(value)} tokens of KV capacity`;
  const flag =
    cliff?.at === value
      ? ' The cliff.'
      : cliff?.at != null && (axis === 'replicas' ? value > cliff.at : value < cliff.at)
        ? ' Past the cliff.'
        : '';
  return `${at}: hit rate ${formatPercent(r.admissionHitRate)} (ideal ${formatPercent(r.idealHitRate)}), prefill ${formatPercent(r.prefillShare)} of LLM time, slowdown ${formatRatio(r.slowdown.mean)}.${flag}`;
}
