import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { StepLogEntry } from '../../src/core/sim/engines/engineTypes';
import type { EngineParams } from '../../src/core/sim/params';
import { runReference } from '../../src/core/sim/engines/referenceEngine';
import { DEFAULT_REPLICAS, planWorkload } from '../../src/core/sim/simRequests';
import type { SimPlan } from '../../src/core/sim/simRequests';
import type { Workload } from '../../src/core/sim/workload';
import { workloadToJson } from '../../src/core/sim/workload';
import { besideCheckout } from '../support/helpers';

/**
 * Running the vLLM prefix-cache oracle next to the simulator. The oracle (vLLM's own
 * KV-cache files and a mirror of its scheduler, Python 3 without packages) is not part
 * of this repository: it is looked for in $VLLM_ORACLE_DIR, else in a `shared/vllm-oracle`
 * folder beside the checkout (for a git worktree, beside its main checkout too). When it is
 * absent the suite skips, saying why.
 */

const HARNESS = join(__dirname, 'vllm_oracle_harness.py');

/**
 * An engine's oracle folder ($<ENV>, else `shared/<folder>` beside the checkout), or why it
 * cannot run. Set, the variable is the only place looked at (<ENV>=none shows what a clone
 * without the oracle runs).
 */
export function findEngineOracle(
  engine: string,
  envVar: string,
  folder: string,
): { dir: string } | { missing: string } {
  const fromEnv = process.env[envVar];
  const candidates = fromEnv ? [fromEnv] : besideCheckout(`shared/${folder}`);
  const dir = candidates.find((d) => existsSync(join(d, 'oracle.py')));
  if (!dir)
    return {
      missing: `the ${engine} oracle is not beside the repository (looked in ${candidates.join(', ')}; set ${envVar} to the folder holding oracle.py)`,
    };
  if (spawnSync('python3', ['-c', 'import sys; sys.exit(sys.version_info < (3, 10))']).status !== 0)
    return { missing: `python3 (3.10 or later) is not installed: the ${engine} oracle is Python` };
  return { dir };
}

/** vLLM's oracle folder, or why it cannot run. */
export function findOracle(): { dir: string } | { missing: string } {
  return findEngineOracle('vLLM', 'VLLM_ORACLE_DIR', 'vllm-oracle');
}

/** The oracle's report, with the harness's own figures (ideal at admission, time parts). */
export interface OracleReport {
  calls: number;
  prompt_tokens: number;
  admission_hit_tokens: number;
  admission_hit_rate: number;
  ideal_hit_rate: number;
  ideal_at_admission_hit_tokens: number;
  ideal_at_admission_hit_rate: number;
  vllm_metric_hit_rate: number;
  vllm_prefix_cache_queries: number;
  vllm_prefix_cache_hits: number;
  prefill_tokens_computed: number;
  recomputed_prefill_tokens: number;
  recomputed_prefill_tokens_at_admission_ideal: number;
  decode_tokens: number;
  decode_context_tokens: number;
  preemptions: number;
  rejected_calls_too_long: number;
  engine_steps: number;
  makespan_s: number;
  busy_s: number;
  t_prefill_s: number;
  t_decode_s: number;
  t_fixed_s: number;
  decode_steps: number;
  corrections: string[];
  /** vLLM's manager of each KV-cache group, and the spec it was given (what the oracle really ran). */
  kv_cache_managers: string[];
  kv_cache_specs: string[];
  per_call?: Array<{
    session: string;
    call: number;
    prompt: number;
    admit_hit: number;
    ideal_hit_at_arrival: number;
    ideal_hit_at_admission: number;
    prefill_computed: number;
    preemptions: number;
    first_sched_s: number;
    finish_s: number;
  }>;
}

export interface OracleJob {
  /** Agent sessions (replayed as `replicas` copies `staggerS` apart) or block-hash requests (open loop, their own block size). */
  workload: Workload;
  replicas: number;
  staggerS: number;
  params: EngineParams;
  /** Declare the oracle's one KV-cache group as MLA layers (one latent "head" of this many values) instead of full attention. */
  mla?: { headSize: number };
}

/** One layer of a model as vLLM declares its KV cache. */
export interface OracleLayer {
  kind: 'full' | 'mla' | 'sliding-window' | 'chunked-local' | 'mamba';
  window?: number;
}

/** What vLLM's own code makes of a model's layers: its KV-cache groups in order, the bytes of one pool block, the blocks a memory holds. */
export interface OracleKvConfig {
  groups: Array<{ spec: string; window: number | null; layers: number }>;
  numBlocks: number;
  poolBlockBytes: number;
  /** With Mamba layers: one state's bytes as vLLM's MambaSpec counts them (before padding), and each group's block size. */
  mambaStateBytes?: number;
  blockSizes?: number[];
}

/** A Mamba layer's state as vLLM's MambaSpec is given it: shapes, bytes per value of each, its block size and padded page. */
export interface OracleMambaState {
  shapes: number[][];
  dtypeBytes: number[];
  blockSize: number;
  pagePadded: number;
}

/** Runs vLLM's KV-cache grouping (kv_cache_utils.get_kv_cache_groups and get_kv_cache_config_from_groups) on a model's layers. */
export function runKvConfig(
  oracleDir: string,
  config: {
    layers: OracleLayer[];
    numKvHeads: number;
    headSize: number;
    availableBytes: number;
    blockSize?: number;
    mamba?: OracleMambaState;
  },
): Promise<OracleKvConfig> {
  return runPythonJson<OracleKvConfig>([HARNESS, '--oracle-dir', oracleDir], 'oracle', { kvConfig: config });
}

/** Runs the oracle on a job; `steps` writes its step log there (JSON lines). */
export function runOracle(
  oracleDir: string,
  job: OracleJob,
  options: { steps?: string; perCall?: boolean; mirrorAsIs?: boolean } = {},
): Promise<OracleReport> {
  const args = [HARNESS, '--oracle-dir', oracleDir];
  if (options.steps) args.push('--steps', options.steps);
  if (options.perCall) args.push('--per-call');
  if (options.mirrorAsIs) args.push('--mirror-as-is');
  return runPythonJson<OracleReport>(args, 'oracle', {
    ...oracleInput(job),
    params: { ...job.params, blockSizeTokens: planBlockSize(job) },
    ...(job.mla ? { mla: job.mla } : {}),
  });
}

/** A job as both engines' harnesses read it on stdin (the caller sets `params`). */
export function oracleInput(job: OracleJob): {
  workload: unknown;
  replicas: number;
  staggerS: number;
  params: EngineParams;
} {
  const w = job.workload;
  const workload =
    w.kind === 'sessions' ? workloadToJson(w) : { blockSizeTokens: w.blockSizeTokens, requests: w.requests };
  return { workload, replicas: job.replicas, staggerS: job.staggerS, params: job.params };
}

/** Runs a Python harness with `input` as JSON on stdin and reads its JSON report from stdout. */
export function runPythonJson<T>(args: string[], name: string, input: unknown): Promise<T> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('python3', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${name} exited with ${code}: ${err.slice(-2000)}`));
      else resolvePromise(JSON.parse(out) as T);
    });
    child.stdin.end(JSON.stringify(input));
  });
}

/** The block size a job runs with: a block-hash trace keeps its own. */
export function planBlockSize(job: OracleJob): number {
  return job.workload.kind === 'requests' ? job.workload.blockSizeTokens : job.params.blockSizeTokens;
}

/** The simulator's plan for a job: the same N copies, the same fixed stagger. */
export function planJob(job: OracleJob): SimPlan {
  return planWorkload(
    job.workload,
    planBlockSize(job),
    { ...DEFAULT_REPLICAS, replicas: job.replicas, staggerS: job.staggerS },
    false,
  );
}

/** The parameters a job runs with (a block-hash trace's own block size). */
export function jobParams(job: OracleJob): EngineParams {
  return { ...job.params, blockSizeTokens: planBlockSize(job) };
}

/** A request as the oracle names it: "session-call", sessions numbered copy by copy; a block-hash request is a one-call session. */
export function oracleRequestId(plan: SimPlan, request: number): string {
  const r = plan.requests[request]!;
  return r.session < 0 ? `${r.callIndex}-0` : `${r.session}-${r.callIndex}`;
}

/** The reference engine's step log of a job, with request ids as the oracle writes them. */
export function referenceSteps(job: OracleJob): Array<StepLogEntry & { ids: (r: number) => string }> {
  const plan = planJob(job);
  const ids = (r: number): string => oracleRequestId(plan, r);
  const steps: Array<StepLogEntry & { ids: (r: number) => string }> = [];
  runReference(plan, jobParams(job), { onStepLog: (e) => steps.push({ ...e, ids }) });
  return steps;
}
