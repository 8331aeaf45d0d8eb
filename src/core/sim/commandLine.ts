import type { EngineName } from './engines/engineTypes';
import { describeBound, PARAM_BOUNDS, REPLICA_BOUNDS, withinBound } from './bounds';
import type { ParamBound } from './bounds';
import { DEFAULT_PARAMS, GPU_PRESETS, MODEL_PRESETS } from './params';
import { POLICY_NAMES, POLICY_PARAMS } from './policies';
import type { PolicyParam, PolicyValues } from './policies';
import { emptySpec } from './paramsFor';
import type { ScenarioSpec } from './paramsFor';
import { DEFAULT_REPLICAS } from './simRequests';
import type { ReplicaOptions } from './simRequests';
import type { SweepAxis } from './sweep';
import { DEFAULT_CLIFF, DEFAULT_TARGET_HIT_RATE, MAX_SWEEP_POINTS } from './sweep';
import { DEFAULT_ROUTER, MAX_GPUS, ROUTER_NAMES } from './fleet/routers';
import { FORMATS } from '../trace/formats';
import type { FormatId } from '../trace/model';
import { formatCount } from '../text/formatNumbers';
import { UsageError } from '../text/usageError';

/**
 * The command line of `agent-trace simulate`: a table of flags, parsed strictly and
 * without dependencies. The flag names are a contract (the webview's "Copy as CLI"
 * writes them). Values are only checked for form here (a number, one of a set); the
 * engine's own checks (validateParams) judge engine parameters, so their messages
 * name the parameter.
 */

/** A parsed `simulate` command line: the scenario's spec (paramsFor reads it), its input, replay, sweep and output. */
export interface SimulateArgs extends ScenarioSpec {
  file: string | null;
  workload: string | null;
  format: FormatId | null;
  session: string | null;
  json: boolean;
  emitWorkload: string | null;
  engine: EngineName;
  /** Replica options given on the command line (the rest take DEFAULT_REPLICAS). */
  replicas: Partial<ReplicaOptions>;
  sweep: { axis: SweepAxis; values: number[] } | null;
  cliffThreshold: number | null;
  /** Sweep points run at once (null: one per core, for sweeps big enough to gain). */
  threads: number | null;
  /** The capacity planner's hit-rate target (a sweep over GPUs). */
  targetHitRate: number | null;
  /** Show progress on stderr even when it is not a terminal. */
  progress: boolean;
  /** Every flag given, in order. */
  given: string[];
}

export const SIMULATE_HELP = 'agent-trace simulate --help';

const d = DEFAULT_PARAMS;

/** A flag's lines in the help: the flag and its value in a column of 28, the text beside it. */
function helpLines(p: PolicyParam): string {
  const [first, ...rest] = p.help(d);
  return [`  ${`${p.flag} ${p.metavar}`.padEnd(28)}${first}`, ...rest.map((line) => `${' '.repeat(30)}${line}`)].join(
    '\n',
  );
}

export const SIMULATE_USAGE = `agent-trace simulate: what N agent sessions like this one do to a vLLM prefix cache.

Usage:
  agent-trace simulate FILE [options] [--json]
  agent-trace simulate --workload W.json [options] [--json]

Replays one traced agent session (the first main session unless --session) as N
copies running at once on one GPU (or on --gpus K behind a router) with vLLM v1's
prefix cache: ${d.blockSizeTokens}-token blocks in a hash chain, at most floor((prompt-1)/${d.blockSizeTokens}) blocks
hit, an LRU free queue, FCFS scheduling with chunked prefill and recompute preemption. Each call waits for the
previous call and its tool time. A block-hash trace (Mooncake, Bailian) replays its
requests open loop at their recorded arrival times. One engine step takes
  stepFixedMs + prefill tokens x prefillUsPerToken
  + sum of decode context tokens x kvReadNsPerToken + decodes x decodeUsPerSeq.

Input:
  FILE                        a trace in any format agent-trace reads (--format ID overrides detection)
  --workload W.json           a workload JSON (shape in docs/guide/simulate.md) instead of a trace
  --session ID                the traced session to replay (a unique prefix is enough);
                              with --workload, the session whose calls are listed
Replicas:
  --replicas N                copies of the workload running at once (default ${DEFAULT_REPLICAS.replicas})
  --stagger-s S               seconds between replica starts (default ${DEFAULT_REPLICAS.staggerS})
  --stagger fixed|random      fixed gaps of S, or seeded random gaps of mean S (default ${DEFAULT_REPLICAS.staggerMode})
  --seed N                    seed of the random gaps (default ${DEFAULT_REPLICAS.seed})
  --tool-wait-scale X         multiply every tool wait by X (default ${DEFAULT_REPLICAS.toolWaitScale})
GPU and model:
  --capacity-tokens C         KV cache size in tokens (default ${formatCount(d.capacityTokens)}: Qwen3-32B on one H200)
  --gpu ${GPU_PRESETS.map((g) => g.id)
    .join('|')
    .padEnd(21)} with --model: capacity from the GPU's memory (x 0.9, minus
  --model ID                  weights and 3 GiB), and the model's KV bytes per token and
                              step costs on that GPU, unless given. Models:
${MODEL_PRESETS.map((m) => `                                ${m.id.padEnd(18)} ${m.label}`).join('\n')}
  --gpu-memory-gib G          a GPU with G GiB (with --model; step costs of --gpu, default h100)
Policy:
  --policy P                  ${POLICY_NAMES.join(', ')} (default ${d.policy})
${POLICY_PARAMS.map(helpLines).join('\n')}
Engine:
  --block-size N              tokens per KV block (default ${d.blockSizeTokens}; a block-hash trace keeps its own)
  --max-batched-tokens N      token budget of one step (default ${d.maxNumBatchedTokens})
  --max-num-seqs N            running requests at most (default ${d.maxNumSeqs})
  --max-model-len N           longest prompt + output of a call (default ${d.maxModelLenTokens})
  --sglang-page-size N        sglang-lru: SGLang's KV page size in tokens (default ${d.sglangPageSizeTokens})
  --free-order current|legacy how a finished request's blocks return to the free queue (default ${d.freeOrder})
  --step-fixed-ms X           fixed cost of a step, ms (default ${d.stepFixedMs})
  --prefill-us-per-token X    cost per prefilled token, us (default ${d.prefillUsPerToken})
  --kv-read-ns-per-token X    cost per decode context token, ns (default ${d.kvReadNsPerToken})
  --decode-us-per-seq X       cost per decoding sequence, us (default ${d.decodeUsPerSeq})
  --calibration CAL.json      the four step costs fitted to your own server's measurements by
                              agent-trace calibrate RESULTS -o CAL.json (step-cost flags given too win)
  --kv-bytes-per-token N      KV bytes per token, for the CPU tier's transfers (default ${d.kvBytesPerToken})
  --engine fast|reference     the fast engine (default) or the block-by-block reference; same results
Fleet:
  --gpus K                    K GPUs behind a router, each with the KV cache and step costs
                              above and its own cache (default 1: one GPU, as without it)
  --router R                  which GPU serves each call as it arrives (default ${DEFAULT_ROUTER}):
                                round-robin       the next GPU in turn
                                least-loaded      the fewest running + waiting tokens
                                session-affinity  a session stays on its first call's GPU
                                kv-aware          the fewest tokens to prefill there plus its
                                                  load (NVIDIA Dynamo's KV router cost)
Sweep:
  --sweep replicas=LIST       run the scenario at every replica count and find the cliff
  --sweep capacity=LIST       run it at every KV capacity (tokens) and find the cliff
  --sweep gpus=LIST           run it on every number of GPUs and find the fewest that keep
                              the hit rate at --target-hit-rate (a binary search between the
                              listed counts)
  --target-hit-rate X         the planner's target admission hit rate (default ${DEFAULT_TARGET_HIT_RATE})
                              LIST: values and ranges, comma-separated; A..B is A, 2A, 4A, ... up
                              to B (B included), e.g. replicas=1..64 or capacity=16384,65536..262144
  --cliff-threshold X         hit-rate drop below ideal that counts as the cliff (default ${DEFAULT_CLIFF.hitRateDropThreshold})
  --threads N                 sweep points run at once on worker threads (default: one per core
                              when the sweep simulates 100,000 calls or more, else 1); same results
Output:
  --json                      print the stable JSON contract (docs/reference/json-output.md)
  --emit-workload OUT.json    write the workload JSON and stop (and simulate too with --json or --sweep)
  --progress                  show progress on stderr even when it is not a terminal (it is
                              shown on a terminal once a run takes longer than a second)

Every number has bounds far past real hardware (replicas up to 100,000, a KV cache up
to 2^28 tokens, step costs up to 1,000,000, a sweep of at most 64 points); a value
outside them is refused with the flag or parameter named.

Exit status: 0 ok; 1 the input could not be read or the parameters cannot work
(the message names the parameter); 2 usage error.
`;

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** Any finite number written as a plain decimal (no hex, no blanks, no empty string, nothing that overflows to Infinity). */
function num(flag: string, v: string): number {
  if (!NUMBER.test(v)) throw new UsageError(`${flag} needs a number, not "${v}"`, SIMULATE_HELP);
  const n = Number(v);
  if (!Number.isFinite(n))
    throw new UsageError(`${flag} needs a number, not "${v}" (too large to compute with)`, SIMULATE_HELP);
  return n;
}

function wholeAtLeast(flag: string, v: string, min: number): number {
  const n = NUMBER.test(v) ? Number(v) : Number.NaN;
  if (!Number.isInteger(n) || n < min)
    throw new UsageError(`${flag} needs a whole number ${min === 1 ? '> 0' : `≥ ${min}`}, not "${v}"`, SIMULATE_HELP);
  return n;
}

/** `n` (read from `v`) if it is within a parameter's bounds (params.ts); the flag named when it is not. */
function within(flag: string, v: string, n: number, bound: ParamBound): number {
  if (!withinBound(n, bound))
    throw new UsageError(`${flag} must be ${describeBound(bound)}, not "${v}"`, SIMULATE_HELP);
  return n;
}

function atLeastZero(flag: string, v: string): number {
  const n = num(flag, v);
  if (n < 0) throw new UsageError(`${flag} needs a number ≥ 0, not "${v}"`, SIMULATE_HELP);
  return n;
}

function choice<T extends string>(flag: string, v: string, options: readonly T[]): T {
  const found = options.find((o) => o === v);
  if (found === undefined)
    throw new UsageError(`${flag} must be one of ${options.join(', ')}, not "${v}"`, SIMULATE_HELP);
  return found;
}

/** A GPU or model preset by id. */
function preset<T extends { id: string }>(flag: string, v: string, presets: readonly T[]): T {
  const id = choice(
    flag,
    v,
    presets.map((p) => p.id),
  );
  return presets.find((p) => p.id === id)!;
}

/**
 * A sweep list: comma-separated values and ranges. A..B is A, 2A, 4A, … while ≤ B,
 * then B itself if the doubling did not land on it.
 */
export function parseSweep(v: string): { axis: SweepAxis; values: number[] } {
  const eq = v.indexOf('=');
  const axisText = eq < 0 ? v : v.slice(0, eq);
  if (axisText !== 'replicas' && axisText !== 'capacity' && axisText !== 'gpus')
    throw new UsageError(`--sweep needs replicas=LIST, capacity=LIST or gpus=LIST, not "${v}"`, SIMULATE_HELP);
  const axis: SweepAxis = axisText;
  const list = eq < 0 ? '' : v.slice(eq + 1);
  const example = {
    replicas: 'replicas=1,2,4,8 or replicas=1..64',
    capacity: 'capacity=32768..262144',
    gpus: 'gpus=1..16',
  }[axis];
  if (list.trim() === '')
    throw new UsageError(`--sweep ${axis}= needs a list of values, e.g. ${example}`, SIMULATE_HELP);
  const check = (text: string): number => {
    const n = NUMBER.test(text) ? Number(text) : Number.NaN;
    if (!(n > 0) || (axis !== 'capacity' && !Number.isInteger(n))) {
      throw new UsageError(
        `--sweep ${axis} values must be ${axis !== 'capacity' ? 'whole numbers' : 'numbers'} > 0, not "${text}"`,
        SIMULATE_HELP,
      );
    }
    if (axis === 'gpus' && n > MAX_GPUS)
      throw new UsageError(`--sweep gpus values must each be at most ${MAX_GPUS}, not "${text}"`, SIMULATE_HELP);
    if (axis !== 'gpus') {
      const bound = axis === 'replicas' ? REPLICA_BOUNDS.replicas : PARAM_BOUNDS.capacityTokens;
      if (!withinBound(n, bound))
        throw new UsageError(
          `--sweep ${axis} values must each be ${describeBound(bound)}, not "${text}"`,
          SIMULATE_HELP,
        );
    }
    return n;
  };
  const values: number[] = [];
  for (const item of list.split(',')) {
    const range = item.split('..');
    if (range.length === 1) values.push(check(item.trim()));
    else if (range.length === 2) {
      const from = check(range[0]!.trim());
      const to = check(range[1]!.trim());
      if (from > to)
        throw new UsageError(`--sweep range ${item} runs backwards: write the smaller value first`, SIMULATE_HELP);
      let x = from;
      for (; x <= to; x *= 2) values.push(x);
      if (values[values.length - 1] !== to) values.push(to);
    } else throw new UsageError(`--sweep cannot read "${item}": write A..B for a range`, SIMULATE_HELP);
    if (values.length > MAX_SWEEP_POINTS)
      throw new UsageError(
        `--sweep lists at most ${MAX_SWEEP_POINTS} values (a range A..B counts A, 2A, 4A, … B)`,
        SIMULATE_HELP,
      );
  }
  return { axis, values };
}

type Apply = (a: SimulateArgs, v: string, flag: string) => void;

/** Sets a policy value read from a flag (its word, or a number: the engine's checks judge its range). */
function setPolicyValue(values: Partial<PolicyValues>, key: keyof PolicyValues, value: number | string): void {
  (values as Record<string, number | string>)[key] = value;
}

/** Every flag that takes a value, with how it sets the arguments. */
const FLAGS = new Map<string, Apply>([
  ['--workload', (a, v) => void (a.workload = v)],
  [
    '--format',
    (a, v, f) =>
      void (a.format = choice(
        f,
        v,
        FORMATS.map((x) => x.id),
      )),
  ],
  ['--session', (a, v) => void (a.session = v)],
  [
    '--replicas',
    (a, v, f) => void (a.replicas.replicas = within(f, v, wholeAtLeast(f, v, 1), REPLICA_BOUNDS.replicas)),
  ],
  ['--stagger-s', (a, v, f) => void (a.replicas.staggerS = within(f, v, atLeastZero(f, v), REPLICA_BOUNDS.staggerS))],
  ['--stagger', (a, v, f) => void (a.replicas.staggerMode = choice(f, v, ['fixed', 'random'] as const))],
  ['--seed', (a, v, f) => void (a.replicas.seed = within(f, v, wholeAtLeast(f, v, 0), REPLICA_BOUNDS.seed))],
  [
    '--tool-wait-scale',
    (a, v, f) => void (a.replicas.toolWaitScale = within(f, v, atLeastZero(f, v), REPLICA_BOUNDS.toolWaitScale)),
  ],
  ['--capacity-tokens', (a, v, f) => void (a.capacityTokens = num(f, v))],
  ['--gpu', (a, v, f) => void (a.gpu = preset(f, v, GPU_PRESETS))],
  ['--model', (a, v, f) => void (a.model = preset(f, v, MODEL_PRESETS))],
  [
    '--gpu-memory-gib',
    (a, v, f) => {
      const n = num(f, v);
      if (!withinBound(n, PARAM_BOUNDS.gpuMemoryGiB))
        throw new UsageError(`${f} needs a number > 0 and at most 100,000 (GiB), not "${v}"`, SIMULATE_HELP);
      a.gpuMemoryGiB = n;
    },
  ],
  ['--policy', (a, v, f) => void (a.policy = choice(f, v, POLICY_NAMES))],
  // Each policy's own flags, from its declaration (policies.ts): a number, or the word it takes.
  ...POLICY_PARAMS.map((p): [string, Apply] => [
    p.flag,
    (a, v, f) => void setPolicyValue(a.policyValues, p.key, p.word !== undefined && v === p.word ? v : num(f, v)),
  ]),
  ['--block-size', (a, v, f) => void (a.blockSizeTokens = num(f, v))],
  ['--max-batched-tokens', (a, v, f) => void (a.maxNumBatchedTokens = num(f, v))],
  ['--max-num-seqs', (a, v, f) => void (a.maxNumSeqs = num(f, v))],
  ['--max-model-len', (a, v, f) => void (a.maxModelLenTokens = num(f, v))],
  ['--sglang-page-size', (a, v, f) => void (a.sglangPageSizeTokens = num(f, v))],
  ['--free-order', (a, v, f) => void (a.freeOrder = choice(f, v, ['current', 'legacy'] as const))],
  ['--step-fixed-ms', (a, v, f) => void (a.stepFixedMs = num(f, v))],
  ['--prefill-us-per-token', (a, v, f) => void (a.prefillUsPerToken = num(f, v))],
  ['--kv-read-ns-per-token', (a, v, f) => void (a.kvReadNsPerToken = num(f, v))],
  ['--decode-us-per-seq', (a, v, f) => void (a.decodeUsPerSeq = num(f, v))],
  ['--kv-bytes-per-token', (a, v, f) => void (a.kvBytesPerToken = num(f, v))],
  ['--engine', (a, v, f) => void (a.engine = choice(f, v, ['fast', 'reference'] as const))],
  ['--sweep', (a, v) => void (a.sweep = parseSweep(v))],
  [
    '--cliff-threshold',
    (a, v, f) => {
      const n = num(f, v);
      if (!(n > 0 && n < 1))
        throw new UsageError(`${f} needs a hit-rate drop between 0 and 1 (0.1 = 10 points), not "${v}"`, SIMULATE_HELP);
      a.cliffThreshold = n;
    },
  ],
  [
    '--threads',
    (a, v, f) => {
      const n = num(f, v);
      if (!(Number.isInteger(n) && n >= 1 && n <= 256))
        throw new UsageError(`${f} needs a whole number from 1 to 256, not "${v}"`, SIMULATE_HELP);
      a.threads = n;
    },
  ],
  [
    '--gpus',
    (a, v, f) => {
      const n = NUMBER.test(v) ? Number(v) : Number.NaN;
      if (!(Number.isInteger(n) && n >= 1 && n <= MAX_GPUS))
        throw new UsageError(`${f} needs a whole number from 1 to ${MAX_GPUS}, not "${v}"`, SIMULATE_HELP);
      a.gpus = n;
    },
  ],
  ['--router', (a, v, f) => void (a.router = choice(f, v, ROUTER_NAMES))],
  [
    '--target-hit-rate',
    (a, v, f) => {
      const n = num(f, v);
      if (!(n > 0 && n <= 1))
        throw new UsageError(`${f} needs a hit rate above 0 and at most 1 (0.9 = 90%), not "${v}"`, SIMULATE_HELP);
      a.targetHitRate = n;
    },
  ],
  ['--emit-workload', (a, v) => void (a.emitWorkload = v)],
]);

/** Every flag `simulate` accepts (for the help test and the docs). */
export const SIMULATE_FLAGS: readonly string[] = ['--json', '--progress', ...FLAGS.keys()];

function conflict(a: SimulateArgs, one: string, others: readonly string[], why: string): void {
  const clash = others.find((o) => a.given.includes(o));
  if (a.given.includes(one) && clash)
    throw new UsageError(`${one} and ${clash} cannot go together: ${why}`, SIMULATE_HELP);
}

/** A command line that gives nothing: every default. */
function blankArgs(): SimulateArgs {
  return {
    file: null,
    workload: null,
    format: null,
    session: null,
    json: false,
    emitWorkload: null,
    engine: 'fast',
    replicas: {},
    ...emptySpec(),
    sweep: null,
    cliffThreshold: null,
    threads: null,
    targetHitRate: null,
    progress: false,
    given: [],
  };
}

/** Parses `simulate`'s arguments (after the word "simulate"); throws a UsageError naming the flag. */
export function parseSimulateArgs(argv: readonly string[]): SimulateArgs {
  const a = blankArgs();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-') || arg === '-') {
      if (a.file !== null) throw new UsageError(`unexpected argument ${arg}: simulate reads one FILE`, SIMULATE_HELP);
      a.file = arg;
      continue;
    }
    // --flag=value is read like --flag value.
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    if (a.given.includes(flag)) throw new UsageError(`${flag} given twice`, SIMULATE_HELP);
    if (flag === '--json' || flag === '--progress') {
      if (eq >= 0) throw new UsageError(`${flag} takes no value`, SIMULATE_HELP);
      if (flag === '--json') a.json = true;
      else a.progress = true;
      a.given.push(flag);
      continue;
    }
    const apply = FLAGS.get(flag);
    if (!apply) throw new UsageError(`unknown option ${flag}`, SIMULATE_HELP);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    // A value may start with one dash (a negative number, caught by the range checks) but not two.
    if (value === undefined || value === '' || (eq < 0 && value.startsWith('--')))
      throw new UsageError(`${flag} needs a value`, SIMULATE_HELP);
    a.given.push(flag);
    apply(a, value, flag);
  }

  if (a.file !== null && a.workload !== null)
    throw new UsageError('give a trace FILE or --workload W.json, not both', SIMULATE_HELP);
  if (a.file === null && a.workload === null)
    throw new UsageError('simulate needs a trace FILE or --workload W.json', SIMULATE_HELP);
  conflict(a, '--workload', ['--format'], '--format picks the reader of a trace FILE');
  conflict(
    a,
    '--capacity-tokens',
    ['--gpu', '--model', '--gpu-memory-gib'],
    'give the capacity in tokens, or a GPU and a model to compute it from',
  );
  if (a.gpu && !a.model) throw new UsageError('--gpu needs --model: the KV capacity depends on both', SIMULATE_HELP);
  if (a.gpuMemoryGiB !== null && !a.model)
    throw new UsageError(
      '--gpu-memory-gib needs --model: the KV capacity depends on the weights and KV size',
      SIMULATE_HELP,
    );
  if (a.model && !a.gpu && a.gpuMemoryGiB === null)
    throw new UsageError(
      '--model needs --gpu or --gpu-memory-gib: the KV capacity depends on the GPU memory',
      SIMULATE_HELP,
    );
  if ((a.policyValues.offloadTokens === undefined) !== (a.policyValues.offloadGbps === undefined)) {
    throw new UsageError(
      '--offload-tokens and --offload-gbps go together: a CPU tier needs a size and a bandwidth (PCIe Gen5 achieves ~25–50 GB/s)',
      SIMULATE_HELP,
    );
  }
  if (a.sweep?.axis === 'replicas') conflict(a, '--sweep', ['--replicas'], 'the sweep sets the replica count');
  if (a.sweep?.axis === 'capacity') conflict(a, '--sweep', ['--capacity-tokens'], 'the sweep sets the capacity');
  if (a.sweep?.axis === 'gpus') conflict(a, '--sweep', ['--gpus'], 'the sweep sets the number of GPUs');
  if (a.targetHitRate !== null && a.sweep?.axis !== 'gpus')
    throw new UsageError(
      '--target-hit-rate needs --sweep gpus=LIST: the planner searches the number of GPUs',
      SIMULATE_HELP,
    );
  if (a.cliffThreshold !== null && !a.sweep)
    throw new UsageError('--cliff-threshold needs --sweep: the cliff is found over a sweep', SIMULATE_HELP);
  if (a.threads !== null && !a.sweep)
    throw new UsageError('--threads needs --sweep: the threads share out the sweep points', SIMULATE_HELP);
  return a;
}

/** The replica options of a command line: what it gave over the defaults. */
export function replicaOptions(a: SimulateArgs): ReplicaOptions {
  return { ...DEFAULT_REPLICAS, ...a.replicas };
}

/** A number as the parser reads it back exactly (JavaScript's shortest round-trip form). */
function numText(n: number): string {
  return String(n);
}

/** A command line as `writeSimulateArgs` takes it: a parsed one without the record of what was given. */
export type SimulateCommand = Omit<SimulateArgs, 'given'>;

/** A command that gives nothing yet (every default), to fill in and write. */
export function emptyCommand(): SimulateCommand {
  const command: Partial<SimulateArgs> = blankArgs();
  delete command.given;
  return command as SimulateCommand;
}

/**
 * Writes a command line that `parseSimulateArgs` reads back as `c` (after the word
 * "simulate"): every value that differs from the parser's default, in the order the
 * what-if panel's "Copy as CLI" has always written them. The one writer of this grammar:
 * the panel builds a `SimulateCommand` from its scenario and calls it.
 */
export function writeSimulateArgs(c: SimulateCommand): string[] {
  const w: string[] = [];
  const put = (flag: string, value: string | number | null | undefined): void => {
    if (value !== null && value !== undefined) w.push(flag, typeof value === 'number' ? numText(value) : value);
  };
  if (c.file !== null) w.push(c.file);
  put('--workload', c.workload);
  put('--format', c.format);
  put('--session', c.session);
  put('--replicas', c.replicas.replicas);
  put('--stagger-s', c.replicas.staggerS);
  put('--stagger', c.replicas.staggerMode);
  put('--seed', c.replicas.seed);
  put('--tool-wait-scale', c.replicas.toolWaitScale);
  put('--gpu', c.gpu?.id);
  put('--model', c.model?.id);
  put('--gpu-memory-gib', c.gpuMemoryGiB);
  put('--capacity-tokens', c.capacityTokens);
  put('--step-fixed-ms', c.stepFixedMs);
  put('--prefill-us-per-token', c.prefillUsPerToken);
  put('--kv-read-ns-per-token', c.kvReadNsPerToken);
  put('--kv-bytes-per-token', c.kvBytesPerToken);
  put('--policy', c.policy);
  for (const p of POLICY_PARAMS) put(p.flag, c.policyValues[p.key]);
  put('--gpus', c.gpus);
  put('--router', c.router);
  put('--block-size', c.blockSizeTokens);
  put('--max-batched-tokens', c.maxNumBatchedTokens);
  put('--max-num-seqs', c.maxNumSeqs);
  put('--max-model-len', c.maxModelLenTokens);
  put('--sglang-page-size', c.sglangPageSizeTokens);
  put('--free-order', c.freeOrder);
  put('--decode-us-per-seq', c.decodeUsPerSeq);
  if (c.engine !== 'fast') put('--engine', c.engine);
  if (c.sweep) put('--sweep', `${c.sweep.axis}=${c.sweep.values.map(numText).join(',')}`);
  put('--cliff-threshold', c.cliffThreshold);
  put('--target-hit-rate', c.targetHitRate);
  put('--threads', c.threads);
  put('--emit-workload', c.emitWorkload);
  if (c.progress) w.push('--progress');
  if (c.json) w.push('--json');
  return w;
}

/**
 * The flags the what-if panel can express: what its "Copy as CLI" writes. Any other flag
 * in a command the page asks to copy did not come from the panel.
 */
export const WHAT_IF_FLAGS: readonly string[] = [
  '--format',
  '--session',
  '--replicas',
  '--stagger-s',
  '--stagger',
  '--seed',
  '--tool-wait-scale',
  '--gpu',
  '--model',
  '--gpu-memory-gib',
  '--capacity-tokens',
  '--step-fixed-ms',
  '--prefill-us-per-token',
  '--kv-read-ns-per-token',
  '--kv-bytes-per-token',
  '--policy',
  ...POLICY_PARAMS.map((p) => p.flag),
  '--gpus',
  '--router',
  '--sweep',
  '--cliff-threshold',
  '--json',
];

/**
 * Checks a simulate command the inspector page asks the host to put on the clipboard
 * (after the words `agent-trace simulate`, split by shellWords): it must parse as this
 * CLI parses it (so an absurd `--gpus`, `--router` or `--sweep gpus=…` is refused by
 * name), use only flags the panel can express (one it cannot, such as `--emit-workload`,
 * which writes a file, or `--engine`, is refused by name rather than silently dropped),
 * and replay the trace the panel shows and nothing else. Returns why it is refused, or null.
 */
export function refuseCopiedCommand(words: readonly string[], tracePath: string): string | null {
  let a: SimulateArgs;
  try {
    a = parseSimulateArgs(words);
  } catch (e) {
    if (e instanceof UsageError) return e.message;
    throw e;
  }
  const extra = a.given.find((f) => !WHAT_IF_FLAGS.includes(f));
  if (extra) return `${extra} is not something the what-if panel writes`;
  if (a.file !== tracePath) return 'the command replays another file than the trace this panel shows';
  return null;
}
