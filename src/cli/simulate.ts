import { join } from 'node:path';
import { readCalibrationFlags } from './calibrate';
import { getHeapStatistics } from 'node:v8';
import { formatCount } from '../core/text/formatNumbers';
import { engineByName } from '../core/sim/engines/engineTable';
import type { EngineName } from '../core/sim/engines/engineTypes';
import { ParamError, paramsAsPrinted, validateParams } from '../core/sim/params';
import { paramsFor } from '../core/sim/paramsFor';
import { POLICY_CHOICES } from '../core/sim/policies';
import type { PolicyChoice } from '../core/sim/policies';
import type { EngineParams } from '../core/sim/params';
import { tooLongForCache } from '../core/sim/engines/policySupport';
import { runScenario } from '../core/sim/scenario';
import type { ScenarioResult } from '../core/sim/scenario';
import type { ReplicaOptions } from '../core/sim/simRequests';
import { DEFAULT_CLIFF, DEFAULT_TARGET_HIT_RATE, sweepScenarios } from '../core/sim/sweep';
import { checkRunFits } from '../core/sim/memoryEstimate';
import { DEFAULT_ROUTER } from '../core/sim/fleet/routers';
import type { Cliff, GpuPlan, SweepAxis } from '../core/sim/sweep';
import {
  parseWorkloadJson,
  workloadFromBlockTrace,
  workloadFromSession,
  workloadToJson,
  WorkloadError,
} from '../core/sim/workload';
import type { BlockWorkload, Workload } from '../core/sim/workload';
import type { FormatId, Session } from '../core/trace/model';
import { parseTrace } from '../core/trace/parseTrace';
import { autoThreads, runSweepOnThreads } from '../node/parallelSweep';
import { readJsonFile, readTraceFiles } from '../node/traceFiles';
import { outputFile } from './outputFile';
import { parseSimulateArgs, replicaOptions, SIMULATE_HELP, SIMULATE_USAGE } from '../core/sim/commandLine';
import type { SimulateArgs } from '../core/sim/commandLine';
import { renderScenario, renderSweep } from './simulateReport';
import type { ReportContext } from './simulateReport';
import { printError, printJson, printText } from './output';
import { UsageError } from '../core/text/usageError';

/**
 * `agent-trace simulate`: reads a trace or a workload JSON, turns it into a workload,
 * builds the engine parameters from defaults, presets and flags, runs one scenario or
 * a sweep, and prints the report or the JSON contract (docs/guide/simulate.md, docs/reference/json-output.md).
 */

/** Input that cannot be simulated (unreadable, no such session, nothing to replay): exit status 1. */
class InputError extends Error {}

/** What was simulated: the `input` object of the JSON contract. */
export interface SimulateInput {
  /** The trace file, as given; null with --workload. */
  file: string | null;
  /** The workload JSON file, as given; null with a trace. */
  workload: string | null;
  /** The trace's format; null with --workload. */
  format: FormatId | null;
  /** The traced session replayed, or the workload session whose calls are listed; null for block-hash requests. */
  session: string | null;
  workloadKind: 'sessions' | 'requests';
  /** How the workload is replayed, in words. */
  replay: string;
  /** What was left out or assumed while building the workload. */
  notes: string[];
  engine: EngineName;
  gpu: string | null;
  model: string | null;
  gpuMemoryGiB: number | null;
  params: Omit<EngineParams, 'sglangPageSizeTokens'> & { sglangPageSizeTokens?: number };
  /** Null for block-hash requests, which replay as recorded. */
  replicas: ReplicaOptions | null;
  sweep: { axis: SweepAxis; values: number[]; hitRateDropThreshold: number; targetHitRate?: number } | null;
}

/** `simulate --json` without --sweep. */
export interface ScenarioDocument {
  input: SimulateInput;
  scenario: ScenarioResult;
}

/** `simulate --json --sweep …`: one entry per point (without the per-call list), then the cliff. */
export interface SweepDocument {
  input: SimulateInput;
  sweep: Array<{ value: number } & Omit<ScenarioResult, 'calls'>>;
  cliff: Cliff;
  /** A sweep over GPUs: the capacity planner's answer. */
  plan?: GpuPlan;
}

interface LoadedWorkload {
  workload: Workload;
  format: FormatId | null;
  session: string | null;
  notes: string[];
  /** "agent-trace trace, session … (48 calls)". */
  source: string;
}

const CLOSED_LOOP =
  'closed loop: each call arrives when the previous call of its session has finished and its tool wait has passed';
const OPEN_LOOP = 'open loop: requests arrive at their recorded times, whatever the server does';

function usableCalls(s: Session): number {
  return s.calls.filter((c) => c.tokens.input !== null && c.tokens.output !== null).length;
}

/** An item by exact id, else by a unique id prefix; a message listing the choices otherwise. */
function pickById<T>(
  items: readonly T[],
  idOf: (t: T) => string,
  wanted: string,
  where: string,
  describe: (t: T) => string,
): T {
  const exact = items.find((t) => idOf(t) === wanted);
  if (exact) return exact;
  const prefixed = items.filter((t) => idOf(t).startsWith(wanted));
  if (prefixed.length === 1) return prefixed[0]!;
  const list = items.slice(0, 20).map(describe).join(', ');
  const why = prefixed.length > 1 ? `"${wanted}" matches ${prefixed.length} sessions` : `no session "${wanted}"`;
  throw new InputError(`${why} in ${where}; sessions: ${list}${items.length > 20 ? ', …' : ''}`);
}

async function loadTrace(a: SimulateArgs, file: string): Promise<LoadedWorkload> {
  const parsed = await parseTrace(await readTraceFiles(file), a.format ? { format: a.format } : {});
  if (parsed.problem) throw new InputError(`${file}: ${parsed.problem.message}`);
  const model = parsed.model;
  const format = model.format;
  // A trace whose calls carry block hashes (Mooncake, Bailian) is a request log, not agent sessions.
  if (model.sessions.some((s) => s.calls.some((c) => c.blocks !== null))) {
    const { workload, notes } = workloadFromBlockTrace(model);
    if (!workload || workload.requests.length === 0)
      throw new InputError(
        `${file}: no request has block hashes, a prompt length and an arrival time: nothing to replay`,
      );
    return {
      workload,
      format,
      session: null,
      notes,
      source: `${format} trace, ${workload.requests.length} requests with ${workload.blockSizeTokens}-token block hashes`,
    };
  }
  const describe = (s: Session): string =>
    `${s.id} (${s.role}, ${usableCalls(s)} call${usableCalls(s) === 1 ? '' : 's'})`;
  let session: Session | undefined;
  if (a.session !== null) {
    session = pickById(model.sessions, (s) => s.id, a.session, file, describe);
    if (usableCalls(session) === 0)
      throw new InputError(`session ${session.id} has no call with input and output token counts: nothing to simulate`);
  } else {
    session =
      model.sessions.find((s) => s.role === 'main' && usableCalls(s) > 0) ??
      model.sessions.find((s) => usableCalls(s) > 0);
    if (!session)
      throw new InputError(
        `${file}: no session has calls with input and output token counts (${format} gives ${model.limitations.join(' ') || 'none'}): nothing to simulate`,
      );
  }
  const { workload, notes } = workloadFromSession(session);
  const calls = workload.sessions[0]!.calls.length;
  return {
    workload,
    format,
    session: session.id,
    notes,
    source: `${format} trace, ${session.role} session ${session.id} (${calls} call${calls === 1 ? '' : 's'})`,
  };
}

async function loadWorkloadJson(a: SimulateArgs, path: string): Promise<LoadedWorkload> {
  const read = await readJsonFile(path);
  if ('error' in read) throw new InputError(`${path}: ${read.error}`);
  const value = read.value;
  let workload: Workload;
  try {
    workload = parseWorkloadJson(value);
  } catch (e) {
    if (e instanceof WorkloadError) throw new InputError(`${path}: ${e.message}`);
    throw e;
  }
  if (workload.kind === 'requests') {
    return {
      workload,
      format: null,
      session: null,
      notes: [],
      source: `workload ${path}, ${workload.requests.length} requests with ${workload.blockSizeTokens}-token block hashes`,
    };
  }
  const sessions = workload.sessions;
  const chosen =
    a.session === null
      ? sessions[0]!
      : pickById(
          sessions,
          (s) => s.id,
          a.session,
          path,
          (s) => `${s.id} (${s.calls.length} calls)`,
        );
  const calls = sessions.reduce((n, s) => n + s.calls.length, 0);
  return {
    workload,
    format: null,
    session: chosen.id,
    notes: [],
    source: `workload ${path}, ${sessions.length} session${sessions.length === 1 ? '' : 's'}, ${calls} calls`,
  };
}

/** The engine parameters of the command line (paramsFor), and the notes on flags given that do nothing. */
function buildParams(
  a: SimulateArgs,
  traceBlockSize: number | null,
  notes: string[],
): { params: EngineParams; hardware: string | null } {
  if (traceBlockSize !== null && a.blockSizeTokens !== undefined && a.blockSizeTokens !== traceBlockSize) {
    notes.push(
      `--block-size ${a.blockSizeTokens} is not used: the block hashes are per ${traceBlockSize}-token block.`,
    );
  }
  const { params: p, hardware } = paramsFor(a, traceBlockSize);
  // A sweep over GPUs starts from one GPU behind the router.
  if (a.sweep?.axis === 'gpus') p.fleet = { gpus: 1, router: a.router ?? DEFAULT_ROUTER };
  else if (a.router !== null && !(a.gpus !== null && a.gpus > 1))
    notes.push(
      `--router ${a.router} only matters with --gpus 2 or more (or --sweep gpus=…): one GPU has nothing to route.`,
    );
  // Policy settings are kept (and printed in --json) whatever the policy, but only one policy reads them.
  for (const choice of POLICY_CHOICES as readonly PolicyChoice[]) {
    if (choice.offload || choice.policy === p.policy) continue;
    const flags = choice.params.map((x) => x.flag).filter((f) => a.given.includes(f));
    // Two flags read "A and B", more "A, B, C" (the wording these notes always had).
    if (flags.length > 0)
      notes.push(
        `${flags.join(choice.params.length === 2 ? ' and ' : ', ')} only matter${flags.length === 1 ? 's' : ''} with --policy ${choice.policy}.`,
      );
  }
  return { params: p, hardware };
}

/** The documented JSON of a block-hash workload (what parseWorkloadJson reads back). */
function blockWorkloadToJson(w: BlockWorkload): object {
  return {
    blockSizeTokens: w.blockSizeTokens,
    requests: w.requests.map((r) => ({
      id: r.id,
      arrivalS: r.arrivalS,
      promptTokens: r.promptTokens,
      outputTokens: r.outputTokens,
      hashes: r.hashes,
    })),
  };
}

/** Prompt and output tokens of every call (vLLM samples at least one output token). */
function callSizes(w: Workload): Array<{ prompt: number; output: number }> {
  const size = (prompt: number, output: number) => ({ prompt, output: Math.max(1, output) });
  return w.kind === 'requests'
    ? w.requests.map((r) => size(r.promptTokens, r.outputTokens))
    : w.sessions.flatMap((s) => s.calls.map((c) => size(c.promptTokens, c.outputTokens)));
}

/**
 * A call longer than the whole KV cache can never be scheduled (the engines reject
 * it): when no call fits, say so instead of reporting an empty run; when some do
 * not, note how many.
 */
function checkFits(
  w: Workload,
  p: EngineParams,
  capacityTokens: number,
  hardware: string | null,
  notes: string[],
): void {
  if (!(Math.floor(capacityTokens / p.blockSizeTokens) > 0)) return; // validateParams names the capacity
  const sizes = callSizes(w);
  const judged = { ...p, capacityTokens };
  const tooLong = sizes.filter((c) => tooLongForCache(judged, p.blockSizeTokens, c.prompt, c.output)).length;
  if (tooLong === 0) return;
  const cache = `${formatCount(capacityTokens)} tokens${hardware ? ` (${hardware})` : ''}`;
  if (tooLong === sizes.length) {
    const shortest = Math.min(...sizes.map((c) => c.prompt + c.output));
    throw new ParamError(
      `no call fits in the KV cache of ${cache}: the shortest needs ${formatCount(shortest)} tokens (prompt + output). ` +
        'Give a larger cache: a GPU with more memory, a smaller model, or --capacity-tokens.',
    );
  }
  notes.push(
    `${tooLong} of ${sizes.length} ${w.kind === 'requests' ? 'requests' : 'calls'} need more than the whole KV cache of ${cache}: they are rejected (${p.policy === 'sglang-lru' ? 'SGLang refuses a prompt within 6 tokens of its KV pool' : 'vLLM cannot schedule a request longer than its cache'}).`,
  );
}

/** JSON with every innermost object and number array on one line: one call or one hash list per line. */
export function compactJson(value: unknown): string {
  return JSON.stringify(value, null, 2)
    .replace(/\[\n\s+([-\d.e+,\s]*?)\n\s*\]/g, (_m, body: string) => `[${body.split(/,\n\s*/).join(', ')}]`)
    .replace(
      /\{\n\s+((?:[^{}[\]]|\[[^[\]\n]*\])*?)\n\s*\}/g,
      (_m, body: string) => `{ ${body.split(/,\n\s*/).join(', ')} }`,
    );
}

function countCalls(w: Workload): number {
  return w.kind === 'requests' ? w.requests.length : w.sessions.reduce((n, s) => n + s.calls.length, 0);
}

async function simulate(a: SimulateArgs): Promise<number> {
  // A folder, a FIFO or a device is refused before anything is read (as the input readers refuse them).
  if (a.emitWorkload !== null) await outputFile(a.emitWorkload, undefined, '--emit-workload', SIMULATE_HELP);
  const loaded = a.file !== null ? await loadTrace(a, a.file) : await loadWorkloadJson(a, a.workload!);
  const { workload } = loaded;
  if (workload.kind === 'requests') {
    const agentOnly = ['--replicas', '--stagger-s', '--stagger', '--seed', '--tool-wait-scale', '--session'].find((f) =>
      a.given.includes(f),
    );
    if (agentOnly)
      throw new UsageError(
        `${agentOnly} applies to agent sessions; a block-hash trace is replayed open loop, request by request, as recorded`,
        SIMULATE_HELP,
      );
    if (a.sweep?.axis === 'replicas')
      throw new UsageError(
        '--sweep replicas applies to agent sessions; sweep capacity for a block-hash trace',
        SIMULATE_HELP,
      );
  }
  const notes = [...loaded.notes];
  const { params, hardware } = buildParams(a, workload.kind === 'requests' ? workload.blockSizeTokens : null, notes);
  const simulating = a.emitWorkload === null || a.json || a.sweep !== null;
  if (simulating) validateParams(params);
  // Judge the fit where it is known: the one capacity, or the largest of a capacity sweep.
  if (simulating)
    checkFits(
      workload,
      params,
      a.sweep?.axis === 'capacity' ? Math.max(...a.sweep.values) : params.capacityTokens,
      a.sweep?.axis === 'capacity' ? null : hardware,
      notes,
    );
  for (const n of notes) printError(`note: ${n}`);

  if (a.emitWorkload !== null) {
    const json = workload.kind === 'sessions' ? workloadToJson(workload) : blockWorkloadToJson(workload);
    await outputFile(a.emitWorkload, compactJson(json) + '\n', '--emit-workload', SIMULATE_HELP);
    const what =
      workload.kind === 'sessions'
        ? `${workload.sessions.length} session${workload.sessions.length === 1 ? '' : 's'}, ${countCalls(workload)} calls`
        : `${workload.requests.length} requests`;
    printError(`${a.emitWorkload}: workload of ${what} (from ${loaded.source})`);
    if (!simulating) return 0;
  }

  const engine = engineByName(a.engine);
  const replicas = workload.kind === 'sessions' ? replicaOptions(a) : null;
  const cliffThreshold = a.cliffThreshold ?? DEFAULT_CLIFF.hitRateDropThreshold;
  const input: SimulateInput = {
    file: a.file,
    workload: a.workload,
    format: loaded.format,
    session: loaded.session,
    workloadKind: workload.kind,
    replay: workload.kind === 'sessions' ? CLOSED_LOOP : OPEN_LOOP,
    notes,
    engine: a.engine,
    gpu: a.model ? (a.gpu?.id ?? (a.gpuMemoryGiB === null ? null : 'custom')) : null,
    model: a.model?.id ?? null,
    gpuMemoryGiB: a.model ? (a.gpuMemoryGiB ?? a.gpu!.memoryGiB) : null,
    params: paramsAsPrinted(params),
    replicas,
    sweep: a.sweep
      ? {
          ...a.sweep,
          hitRateDropThreshold: cliffThreshold,
          ...(a.sweep.axis === 'gpus' ? { targetHitRate: a.targetHitRate ?? DEFAULT_TARGET_HIT_RATE } : {}),
        }
      : null,
  };
  const options = {
    params,
    ...(replicas ? { replicas } : {}),
    ...(loaded.session !== null && workload.kind === 'sessions' ? { session: loaded.session } : {}),
  };
  const context: ReportContext = {
    source: loaded.source,
    hardware,
    engine: a.engine,
    params,
    replicas,
    workload,
    session: loaded.session,
  };

  if (a.sweep) {
    const showProgress = process.stderr.isTTY === true || a.progress;
    // Every point must fit by itself (each runs on one thread); threads run at once only as many as fit side by side.
    const budget = heapBudgetBytes();
    const largest = Math.max(
      ...sweepScenarios(options, a.sweep.axis, a.sweep.values).map(
        (point) => checkRunFits(a.engine, workload, point.options, budget).bytes,
      ),
    );
    const threads = Math.max(
      1,
      Math.min(a.threads ?? autoThreads(workload, options, a.sweep.axis, a.sweep.values), Math.floor(budget / largest)),
    );
    const cliffOptions = {
      hitRateDropThreshold: cliffThreshold,
      ...(a.targetHitRate !== null ? { targetHitRate: a.targetHitRate } : {}),
    };
    const sweep = await runSweepOnThreads(a.engine, workload, options, a.sweep.axis, a.sweep.values, cliffOptions, {
      threads,
      workerScript: join(__dirname, 'sweepWorker.js'),
      onPoint: (done, total) => {
        if (showProgress) process.stderr.write(`\rsimulating ${done}/${total}${done === total ? '\n' : ''}`);
      },
    });
    if (a.json) {
      const doc: SweepDocument = {
        input,
        sweep: sweep.points.map(({ value, result: { calls: _calls, ...rest } }) => ({ value, ...rest })),
        cliff: sweep.cliff,
        ...(sweep.plan ? { plan: sweep.plan } : {}),
      };
      printJson(doc);
    } else printText(renderSweep(context, sweep));
    return 0;
  }
  checkRunFits(a.engine, workload, options, heapBudgetBytes());
  const progress = progressPrinter(a.progress);
  progress.start(countCalls(workload) * (replicas?.replicas ?? 1));
  const scenario = runScenario(engine, workload, { ...options, progress: progress.report });
  progress.done();
  if (a.json) {
    const doc: ScenarioDocument = { input, scenario };
    printJson(doc);
  } else printText(renderScenario(context, scenario));
  return 0;
}

/** Heap this process may still fill (V8's limit, less what is in use and a margin for the report). */
function heapBudgetBytes(): number {
  const heap = getHeapStatistics();
  return Math.max(0, heap.heap_size_limit * 0.9 - heap.used_heap_size);
}

/** Simulated calls from which a run announces itself before it starts (planning alone takes seconds). */
const LARGE_RUN_CALLS = 500_000;

/**
 * Prints how far a long run has got, on stderr: on a terminal once the run has taken a
 * second (so quick runs print nothing), every quarter second after; with --progress,
 * a line a second wherever stderr goes (for logs).
 */
function progressPrinter(forced: boolean): {
  start: (calls: number) => void;
  report: (ended: number, total: number) => void;
  done: () => void;
} {
  const tty = process.stderr.isTTY === true;
  const started = Date.now();
  let last = 0;
  let overwriting = false;
  return {
    /** A run this large takes a while before its first step: say so at once. */
    start: (calls) => {
      if ((tty || forced) && calls >= LARGE_RUN_CALLS)
        process.stderr.write(`simulating ${formatCount(calls)} calls: this can take minutes; progress follows.\n`);
    },
    report: (ended, total) => {
      const now = Date.now();
      if (forced ? now - last < 1000 : !tty || now - started < 1000 || now - last < 250) return;
      last = now;
      const line = `simulating: ${formatCount(ended)} of ${formatCount(total)} calls done (${((100 * ended) / Math.max(1, total)).toFixed(0)}%)`;
      overwriting = tty && !forced;
      process.stderr.write(overwriting ? `\r${line}` : `${line}\n`);
    },
    done: () => {
      if (overwriting) process.stderr.write('\n');
    },
  };
}

/**
 * Runs `agent-trace simulate` (argv after the word "simulate") and returns the exit
 * status. Usage errors are thrown for the dispatcher (exit 2); parameters the engine
 * refuses and input that cannot be simulated are printed here (exit 1).
 */
export async function runSimulate(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(SIMULATE_USAGE);
    return 0;
  }
  // A step-cost flag given beside a calibration wins over the calibration's.
  let given = argv;
  const at = given.indexOf('--calibration');
  if (at >= 0) {
    const file = given[at + 1];
    if (file === undefined || file.startsWith('--'))
      throw new UsageError(
        '--calibration needs a FILE (agent-trace calibrate RESULTS -o FILE)',
        'agent-trace simulate --help',
      );
    const rest = [...given.slice(0, at), ...given.slice(at + 2)];
    const fitted = await readCalibrationFlags(file);
    const pairs = fitted.flatMap((f, i) => (i % 2 === 0 && !rest.includes(f) ? [f, fitted[i + 1]!] : []));
    given = [...pairs, ...rest];
  }
  const args = parseSimulateArgs(given);
  try {
    return await simulate(args);
  } catch (e) {
    if (e instanceof ParamError || e instanceof InputError) {
      printError(`agent-trace: ${e.message}`);
      return 1;
    }
    throw e;
  }
}
