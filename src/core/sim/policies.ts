import type { BoundedParam, ParamBound } from './bounds';
import { PARAM_BOUNDS } from './bounds';

/**
 * The one policy vocabulary: the cache policies the engines run (`--policy`,
 * `EngineParams.policy`), the what-if panel's choices (`agentTrace.whatIf.policy`),
 * which are those policies plus `cpu-offload`, vLLM's LRU with a CPU tier (the CLI's
 * `--offload-tokens` / `--offload-gbps` on `vllm-lru`), and each policy's own
 * parameters, declared once: the command line's flags and help, the panel's fields, the
 * text report and the setting's enum all read this file. See docs/design/simulator.md.
 */

/** The policies an engine runs, in the order the CLI lists them. */
export const POLICY_NAMES = ['vllm-lru', 'sglang-lru', 'ttl-pin', 'admission-cap'] as const;

/** A policy an engine runs. */
export type PolicyName = (typeof POLICY_NAMES)[number];

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

/** The policy part of the engine parameters (`EngineParams` extends it). */
export interface PolicySettings {
  policy: PolicyName;
  ttlPin: TtlPinParams;
  admissionCap: AdmissionCapParams;
  offload: OffloadParams | null;
}

/** The policies' defaults (docs/design/simulator.md §3): vLLM's LRU, no CPU tier. */
export const DEFAULT_POLICY_SETTINGS: PolicySettings = {
  policy: 'vllm-lru',
  ttlPin: { ttlS: 'auto', maxTtlS: 30 },
  admissionCap: { cap: 'adaptive', initialCap: 8, hitRateFloor: 0.8, backoff: 0.5, windowS: 30 },
  offload: null,
};

/** A CPU tier when none was chosen yet: 2M tokens (~500 GB of Qwen3-32B KV) over PCIe at an achieved 25 GB/s (docs/design/simulator.md §3.6). */
export const DEFAULT_OFFLOAD: OffloadParams = { capacityTokens: 2_000_000, bandwidthGBps: 25 };

/** Every policy parameter by the name the panel saves it under and the command line sets. */
export interface PolicyValues {
  ttlS: number | 'auto';
  maxTtlS: number;
  admissionCap: number | 'adaptive';
  initialCap: number;
  hitRateFloor: number;
  backoff: number;
  windowS: number;
  offloadTokens: number;
  offloadGbps: number;
}

/** A policy parameter's name. */
export type PolicyParamKey = keyof PolicyValues;

/** One parameter of a policy: its flag, its field in the panel and its bounds. */
export interface PolicyParam {
  key: PolicyParamKey;
  /** The command line's flag and what its value looks like in the help ("X|auto"). */
  flag: `--${string}`;
  metavar: string;
  /** The help's lines (the first beside the flag); `d` gives the defaults to name. */
  help: (d: PolicySettings) => string[];
  /** The panel field's label, in messages too; `formLabel` when the form says more. */
  label: string;
  formLabel?: string;
  /** The unit in messages; `formUnit` beside the field when it differs. */
  unit?: string;
  formUnit?: string;
  /** A word the value may be instead of a number ('auto', 'adaptive'). */
  word?: string;
  /** The panel asks for a whole number (the engine's bound may allow fractions). */
  whole?: boolean;
  bound: ParamBound;
  /** The value in these settings (the panel's default; offload's when there is no CPU tier). */
  read: (s: PolicySettings) => number | string;
  /** False: the parameter does nothing with these values (adaptive's when the cap is a number). */
  used?: (v: PolicyValues) => boolean;
}

/** One policy as the what-if panel offers it, with its own parameters. */
export interface PolicyChoice {
  id: PolicyName | 'cpu-offload';
  /** The engine policy it runs. */
  policy: PolicyName;
  /** True: with a CPU tier (`EngineParams.offload`). */
  offload: boolean;
  label: string;
  /** Short name for sentences and chart lines. */
  short: string;
  hint: string;
  /** Its parameters, in the order the help, the form and a written command list them. */
  params: readonly PolicyParam[];
  /** Sets its parameters given in `v` (the rest keep their defaults). */
  apply: (s: PolicySettings, v: Partial<PolicyValues>) => void;
  /** Refuses its impossible parameters by name when it runs (validateParams calls it). */
  check: (s: PolicySettings, c: PolicyChecks) => void;
  /** How the text report names it with its parameters. */
  describe: (s: PolicySettings) => string;
}

/** What a policy's check is given: `need` refuses a value unless `ok`, `bounded` one outside its bound (bounds.ts). */
export interface PolicyChecks {
  need: (ok: boolean, name: string, want: string, got: unknown) => void;
  bounded: (name: BoundedParam, label: string, value: unknown) => void;
}

const whole = (n: unknown): boolean => typeof n === 'number' && Number.isInteger(n) && n > 0;
const noCheck = (): void => {};

const adaptive = (v: PolicyValues): boolean => v.admissionCap === 'adaptive';

/** The panel's choices, in the order of its comparison table (and of the setting's enum). */
export const POLICY_CHOICES = [
  {
    id: 'vllm-lru',
    policy: 'vllm-lru',
    offload: false,
    label: 'vLLM LRU',
    short: 'vLLM LRU',
    hint: "vLLM v1's prefix cache: freed blocks go to an LRU queue and are reused until evicted.",
    params: [],
    apply: () => {},
    check: noCheck,
    describe: (s) => s.policy,
  },
  {
    id: 'sglang-lru',
    policy: 'sglang-lru',
    offload: false,
    label: 'SGLang LRU',
    short: 'SGLang LRU',
    hint: "SGLang's radix cache: token-level prefixes, least recently used leaves evicted first.",
    params: [],
    apply: () => {},
    check: noCheck,
    describe: (s) => s.policy,
  },
  {
    id: 'ttl-pin',
    policy: 'ttl-pin',
    offload: false,
    label: 'TTL pin (Continuum-like)',
    short: 'TTL pin',
    hint: "Keep a session's KV on the GPU while its tool runs, for a time to live.",
    params: [
      {
        key: 'ttlS',
        flag: '--ttl-s',
        metavar: 'X|auto',
        help: (d) => [
          "ttl-pin: seconds to keep a session's KV after a call",
          `(default ${d.ttlPin.ttlS}: the 90th percentile of its tool waits)`,
        ],
        label: 'Pin time',
        unit: 's',
        word: 'auto',
        bound: PARAM_BOUNDS.ttlS,
        read: (s) => s.ttlPin.ttlS,
      },
      {
        key: 'maxTtlS',
        flag: '--max-ttl-s',
        metavar: 'X',
        help: (d) => [`ttl-pin: cap on the auto pin time (default ${d.ttlPin.maxTtlS})`],
        label: 'Longest auto pin',
        unit: 's',
        bound: PARAM_BOUNDS.maxTtlS,
        read: (s) => s.ttlPin.maxTtlS,
      },
    ],
    apply: (s, v) => {
      if (v.ttlS !== undefined) s.ttlPin.ttlS = v.ttlS;
      if (v.maxTtlS !== undefined) s.ttlPin.maxTtlS = v.maxTtlS;
    },
    check: (s, { need, bounded }) => {
      const t = s.ttlPin.ttlS;
      need(t === 'auto' || (Number.isFinite(t) && t >= 0), 'ttlPin.ttlS', "a number ≥ 0 or 'auto'", t);
      if (t !== 'auto') bounded('ttlS', 'ttlPin.ttlS', t);
      need(
        Number.isFinite(s.ttlPin.maxTtlS) && s.ttlPin.maxTtlS >= 0,
        'ttlPin.maxTtlS',
        'a number ≥ 0',
        s.ttlPin.maxTtlS,
      );
      bounded('maxTtlS', 'ttlPin.maxTtlS', s.ttlPin.maxTtlS);
    },
    describe: (s) =>
      `ttl-pin (pin ${s.ttlPin.ttlS === 'auto' ? `auto, at most ${s.ttlPin.maxTtlS} s` : `${s.ttlPin.ttlS} s`})`,
  },
  {
    id: 'admission-cap',
    policy: 'admission-cap',
    offload: false,
    label: 'Admission cap (CONCUR-like)',
    short: 'admission cap',
    hint: 'Admit at most a number of sessions at once; the rest wait for a slot.',
    params: [
      {
        key: 'admissionCap',
        flag: '--admission-cap',
        metavar: 'N|adaptive',
        help: (d) => [`admission-cap: sessions active at once (default ${d.admissionCap.cap})`],
        label: 'Cap',
        formLabel: 'Cap (sessions)',
        word: 'adaptive',
        bound: PARAM_BOUNDS.cap,
        read: (s) => s.admissionCap.cap,
      },
      {
        key: 'initialCap',
        flag: '--initial-cap',
        metavar: 'N',
        help: (d) => [`adaptive: the starting cap (default ${d.admissionCap.initialCap})`],
        label: 'Starting cap',
        bound: PARAM_BOUNDS.initialCap,
        read: (s) => s.admissionCap.initialCap,
        used: adaptive,
      },
      {
        key: 'hitRateFloor',
        flag: '--hit-rate-floor',
        metavar: 'X',
        help: (d) => [
          `adaptive: cut the cap when the hit rate falls below X x ideal (default ${d.admissionCap.hitRateFloor})`,
        ],
        label: 'Hit-rate floor',
        formUnit: '× ideal',
        bound: PARAM_BOUNDS.hitRateFloor,
        read: (s) => s.admissionCap.hitRateFloor,
        used: adaptive,
      },
      {
        key: 'backoff',
        flag: '--backoff',
        metavar: 'X',
        help: (d) => [`adaptive: multiply the cap by X when cutting it (default ${d.admissionCap.backoff})`],
        label: 'Backoff',
        formUnit: '×',
        bound: PARAM_BOUNDS.backoff,
        read: (s) => s.admissionCap.backoff,
        used: adaptive,
      },
      {
        key: 'windowS',
        flag: '--window-s',
        metavar: 'X',
        help: (d) => [`adaptive: control interval in simulated seconds (default ${d.admissionCap.windowS})`],
        label: 'Window',
        unit: 's',
        bound: PARAM_BOUNDS.windowS,
        read: (s) => s.admissionCap.windowS,
        used: adaptive,
      },
    ],
    apply: (s, v) => {
      if (v.admissionCap !== undefined) s.admissionCap.cap = v.admissionCap;
      if (v.initialCap !== undefined) s.admissionCap.initialCap = v.initialCap;
      if (v.hitRateFloor !== undefined) s.admissionCap.hitRateFloor = v.hitRateFloor;
      if (v.backoff !== undefined) s.admissionCap.backoff = v.backoff;
      if (v.windowS !== undefined) s.admissionCap.windowS = v.windowS;
    },
    check: (s, { need, bounded }) => {
      const a = s.admissionCap;
      need(a.cap === 'adaptive' || whole(a.cap), 'admissionCap.cap', "a whole number > 0 or 'adaptive'", a.cap);
      if (a.cap !== 'adaptive') bounded('cap', 'admissionCap.cap', a.cap);
      need(whole(a.initialCap), 'admissionCap.initialCap', 'a whole number > 0', a.initialCap);
      bounded('initialCap', 'admissionCap.initialCap', a.initialCap);
      need(a.hitRateFloor > 0 && a.hitRateFloor <= 1, 'admissionCap.hitRateFloor', 'in (0, 1]', a.hitRateFloor);
      need(a.backoff > 0 && a.backoff < 1, 'admissionCap.backoff', 'in (0, 1)', a.backoff);
      need(a.windowS > 0, 'admissionCap.windowS', 'a number > 0', a.windowS);
      bounded('windowS', 'admissionCap.windowS', a.windowS);
    },
    describe: (s) => {
      const a = s.admissionCap;
      return a.cap === 'adaptive'
        ? `admission-cap (adaptive from ${a.initialCap}, floor ${a.hitRateFloor} of ideal, backoff ${a.backoff}, window ${a.windowS} s)`
        : `admission-cap (${a.cap} sessions)`;
    },
  },
  {
    id: 'cpu-offload',
    policy: 'vllm-lru',
    offload: true,
    label: 'CPU offload (vLLM LRU + CPU tier)',
    short: 'CPU offload',
    hint: 'vLLM LRU with a CPU tier: evicted blocks are saved there and reloaded instead of recomputed.',
    params: [
      {
        key: 'offloadTokens',
        flag: '--offload-tokens',
        metavar: 'C',
        help: () => ['a CPU tier holding C tokens of evicted KV (needs --offload-gbps)'],
        label: 'CPU tier size',
        unit: 'tokens',
        whole: true,
        bound: PARAM_BOUNDS.offloadTokens,
        read: (s) => (s.offload ?? DEFAULT_OFFLOAD).capacityTokens,
      },
      {
        key: 'offloadGbps',
        flag: '--offload-gbps',
        metavar: 'B',
        help: () => ["the CPU tier's transfer bandwidth in GB/s"],
        label: 'CPU tier bandwidth',
        unit: 'GB/s',
        bound: PARAM_BOUNDS.offloadGbps,
        read: (s) => (s.offload ?? DEFAULT_OFFLOAD).bandwidthGBps,
      },
    ],
    // A tier needs both its size and its bandwidth (the command line refuses one without the other).
    apply: (s, v) => {
      if (v.offloadTokens !== undefined && v.offloadGbps !== undefined)
        s.offload = { capacityTokens: v.offloadTokens, bandwidthGBps: v.offloadGbps };
    },
    // The CPU tier is checked with the engine's parameters (validateParams: it needs the block size and KV bytes).
    check: noCheck,
    describe: (s) => s.policy,
  },
] as const satisfies readonly PolicyChoice[];

/** A choice of the what-if panel. */
export type PolicyId = (typeof POLICY_CHOICES)[number]['id'];

/** The ids of the panel's choices, in order. */
export const POLICY_IDS: readonly PolicyId[] = POLICY_CHOICES.map((c) => c.id);

/** The panel's choice of this id. */
export function policyChoice(id: PolicyId): PolicyChoice {
  return POLICY_CHOICES.find((c) => c.id === id)!;
}

/** Every policy parameter, in declaration order (the order of the help, the form and a written command). */
export const POLICY_PARAMS: readonly PolicyParam[] = (POLICY_CHOICES as readonly PolicyChoice[]).flatMap(
  (c) => c.params,
);

/** The choice a parameter belongs to. */
export function choiceOfParam(key: PolicyParamKey): PolicyChoice {
  return (POLICY_CHOICES as readonly PolicyChoice[]).find((c) => c.params.some((p) => p.key === key))!;
}

/** The panel's starting values of every policy parameter: the engine's defaults, and the CPU tier's. */
export function defaultPolicyValues(s: PolicySettings = DEFAULT_POLICY_SETTINGS): PolicyValues {
  return Object.fromEntries(POLICY_PARAMS.map((p) => [p.key, p.read(s)])) as unknown as PolicyValues;
}

/** The values of a choice's parameters that it uses (what the panel shows and a written command carries). */
export function usedPolicyValues(id: PolicyId, v: PolicyValues): Partial<PolicyValues> {
  return Object.fromEntries(
    policyChoice(id)
      .params.filter((p) => p.used?.(v) ?? true)
      .map((p) => [p.key, v[p.key]]),
  );
}

/** Sets the engine policy of a choice and the parameters given for it, over `s`. */
export function applyPolicy(s: PolicySettings, id: PolicyId, v: Partial<PolicyValues>): void {
  const choice = policyChoice(id);
  s.policy = choice.policy;
  choice.apply(s, v);
}

/** The text report's name for the policy with its parameters ("ttl-pin (pin auto, at most 30 s)"). */
export function describePolicy(s: PolicySettings): string {
  const choice = (POLICY_CHOICES as readonly PolicyChoice[]).find((c) => c.id === s.policy);
  return choice ? choice.describe(s) : s.policy;
}
