import { join } from 'node:path';
import type { EngineOutcome } from '../../src/core/sim/engines/engineTypes';
import type { RadixDebug, RadixStepLog } from '../../src/core/sim/engines/radixEngine';
import { runRadix } from '../../src/core/sim/engines/radixEngine';
import { DEFAULT_REPLICAS, planWorkload } from '../../src/core/sim/simRequests';
import type { SimPlan } from '../../src/core/sim/simRequests';
import type { OracleJob } from './oracleRun';
import { findEngineOracle, oracleInput, runPythonJson } from './oracleRun';

/**
 * Running the SGLang radix-cache oracle next to the sglang-lru engine. The oracle (SGLang's
 * own RadixCache, allocators and PrefillAdder driven by a mirror of its scheduler loop,
 * Python 3 without packages) is not part of this repository: it is looked for in
 * $SGLANG_ORACLE_DIR, else in a `shared/sglang-oracle` folder beside the checkout (for a
 * git worktree, beside its main checkout too). When it is absent the suite skips, saying why.
 */

const HARNESS = join(__dirname, 'sglang_oracle_harness.py');

/** SGLang's oracle folder ($SGLANG_ORACLE_DIR, else `shared/sglang-oracle` beside the checkout), or why it cannot run. */
export function findSglangOracle(): { dir: string } | { missing: string } {
  return findEngineOracle('SGLang', 'SGLANG_ORACLE_DIR', 'sglang-oracle');
}

/** One call as the oracle reports it (with the harness's prefill count). */
export interface SglangOracleCall {
  session: string;
  call: number;
  prompt: number;
  output: number;
  admit_hit: number;
  ideal_hit: number;
  sglang_cached_tokens: number;
  retractions: number;
  prefill_computed: number;
  first_sched_s: number;
  finish_s: number | null;
}

/** The oracle's report, with the harness's own figures. */
export interface SglangOracleReport {
  calls: number;
  page_size: number;
  capacity_tokens: number;
  prompt_tokens: number;
  admission_hit_tokens: number;
  admission_hit_rate: number;
  ideal_infinite_cache_hit_tokens: number;
  ideal_hit_rate: number;
  sglang_metric_cached_tokens: number;
  sglang_metric_new_tokens: number;
  sglang_metric_hit_rate: number;
  evicted_tokens: number;
  evict_calls: number;
  prefill_tokens_computed: number;
  recomputed_prefill_tokens: number;
  decode_tokens: number;
  retractions: number;
  clipped_output_calls: number;
  rejected_calls_too_long: number;
  aborted_calls_oom: number;
  engine_steps: number;
  prefill_steps: number;
  decode_steps: number;
  makespan_s: number;
  t_prefill_s: number;
  t_decode_s: number;
  t_fixed_s: number;
  decode_context_tokens: number;
  tree_evictable_tokens_at_end: number;
  tree_protected_tokens_at_end: number;
  pool_free_tokens_at_end: number;
  crash?: string;
  per_call?: SglangOracleCall[];
}

/** Runs the oracle on a job; `steps` writes its step log there (JSON lines). */
export function runSglangOracle(
  oracleDir: string,
  job: OracleJob,
  options: { steps?: string } = {},
): Promise<SglangOracleReport> {
  const args = [HARNESS, '--oracle-dir', oracleDir];
  if (options.steps) args.push('--steps', options.steps);
  return runPythonJson<SglangOracleReport>(args, 'SGLang oracle harness', oracleInput(job));
}

/** The simulator's plan for a job, with token keys: the same N copies, the same fixed stagger. */
export function planRadixJob(job: OracleJob): SimPlan {
  const bs = job.workload.kind === 'requests' ? job.workload.blockSizeTokens : job.params.blockSizeTokens;
  return planWorkload(job.workload, bs, { ...DEFAULT_REPLICAS, replicas: job.replicas, staggerS: job.staggerS }, true);
}

/** A request as the oracle names it: "session-call", sessions numbered copy by copy; a block-hash request is a one-call session. */
export function radixRequestId(plan: SimPlan, request: number): string {
  const r = plan.requests[request]!;
  return r.session < 0 ? `${r.callIndex}-0` : `${r.session}-${r.callIndex}`;
}

/** The engine's run of a job, with its per-call cached tokens and (optionally) its step log. */
export function runRadixJob(
  job: OracleJob,
  debug: RadixDebug = {},
): { outcome: EngineOutcome; cachedTokens: number[]; plan: SimPlan } {
  const plan = planRadixJob(job);
  const cachedTokens = new Array<number>(plan.requests.length).fill(0);
  const outcome = runRadix(plan, job.params, { ...debug, cachedTokens });
  return { outcome, cachedTokens, plan };
}

/** The engine's step log of a job. */
export function radixSteps(job: OracleJob): { steps: RadixStepLog[]; plan: SimPlan } {
  const steps: RadixStepLog[] = [];
  const { plan } = runRadixJob(job, { onRadixStep: (e) => steps.push(e) });
  return { steps, plan };
}
