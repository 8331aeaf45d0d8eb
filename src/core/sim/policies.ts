/**
 * The one policy vocabulary: the cache policies the engines run (`--policy`,
 * `EngineParams.policy`) and the what-if panel's choices (`agentTrace.whatIf.policy`),
 * which are those policies plus `cpu-offload`, vLLM's LRU with a CPU tier (the CLI's
 * `--offload-tokens` / `--offload-gbps` on `vllm-lru`). See docs/design/simulator.md.
 */

/** The policies an engine runs, in the order the CLI lists them. */
export const POLICY_NAMES = ['vllm-lru', 'sglang-lru', 'ttl-pin', 'admission-cap'] as const;

/** A policy an engine runs. */
export type PolicyName = (typeof POLICY_NAMES)[number];

/** One policy as the what-if panel offers it. */
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
}

/** The panel's choices, in the order of its comparison table (and of the setting's enum). */
export const POLICY_CHOICES = [
  { id: 'vllm-lru', policy: 'vllm-lru', offload: false, label: 'vLLM LRU', short: 'vLLM LRU', hint: "vLLM v1's prefix cache: freed blocks go to an LRU queue and are reused until evicted." },
  { id: 'sglang-lru', policy: 'sglang-lru', offload: false, label: 'SGLang LRU', short: 'SGLang LRU', hint: "SGLang's radix cache: token-level prefixes, least recently used leaves evicted first." },
  { id: 'ttl-pin', policy: 'ttl-pin', offload: false, label: 'TTL pin (Continuum-like)', short: 'TTL pin', hint: "Keep a session's KV on the GPU while its tool runs, for a time to live." },
  { id: 'admission-cap', policy: 'admission-cap', offload: false, label: 'Admission cap (CONCUR-like)', short: 'admission cap', hint: 'Admit at most a number of sessions at once; the rest wait for a slot.' },
  { id: 'cpu-offload', policy: 'vllm-lru', offload: true, label: 'CPU offload (vLLM LRU + CPU tier)', short: 'CPU offload', hint: 'vLLM LRU with a CPU tier: evicted blocks are saved there and reloaded instead of recomputed.' },
] as const satisfies readonly PolicyChoice[];

/** A choice of the what-if panel. */
export type PolicyId = (typeof POLICY_CHOICES)[number]['id'];

/** The ids of the panel's choices, in order. */
export const POLICY_IDS: readonly PolicyId[] = POLICY_CHOICES.map((c) => c.id);

/** The panel's choice of this id. */
export function policyChoice(id: PolicyId): PolicyChoice {
  return POLICY_CHOICES.find((c) => c.id === id)!;
}
