// `agent-trace analyze` and `convert` of one trace or folder: dist/cliAnalyze.js, loaded by
// the launcher (src/cli/main.ts) without the other commands' dependencies (DuckDB, Parquet,
// OTLP, secretlint, the tokenizer, the simulator), which analyze never runs: each of them
// costs memory from the moment its module is evaluated (docs/performance.md, "fifth round").
// convert's redaction and the folder report are loaded when they are used.
import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import type { RedactionMode } from '../core/redact/redactor';
import { buildTraceReport } from '../core/report/traceReport';
import type { TraceReport } from '../core/report/traceReport';
import { defaultWritePrice } from '../core/cost/cacheTtlWhatIf';
import type { TtlOption } from '../core/cost/cacheTtlWhatIf';
import { createPriceBook } from '../core/cost/priceBook';
import { readUserPrices } from '../core/cost/userPrices';
import { FORMATS as SUPPORTED_FORMATS } from '../core/trace/formats';
import type { FormatId } from '../core/trace/model';
import { parseTrace } from '../core/trace/parseTrace';
import { renderTextReport } from '../core/report/textReport';
import { readJsonFile, readTraceFiles } from '../node/traceFiles';
import { outputFile } from './outputFile';
import { redactionLine, redactionModeFlag, redactJsonLinesText } from './redaction';
import { UsageError } from '../core/text/usageError';
import { printError, printJson, printText } from './output';
import { VERSION } from './version';
import { withExitStatus } from './exitStatus';
import { basename, join } from 'node:path';
import { stat } from 'node:fs/promises';
import { isMainThread, workerData } from 'node:worker_threads';

/**
 * A full garbage collection, when the launcher made V8's `gc` available to this thread
 * (src/cli/main.ts). Between reading and the report: the reader's garbage in the old
 * generation (about 12 MB at 777 MB) is otherwise still there when the report allocates on
 * top of it, and the process peaks higher (docs/performance.md, "Issue 27, ninth session").
 * Between the report and printing it: the model (about 60 MB at 777 MB) is garbage by then,
 * and the JSON text is made and handed to the main thread on a heap without it
 * (docs/performance.md, "Issue 27, tenth session").
 */
function fullCollection(): void {
  const gc = (globalThis as { gc?: unknown }).gc;
  if (typeof gc === 'function') gc();
}

/** More parse threads than this only queue for the same cores (and each holds its own heap). */
const MAX_PARSE_THREADS = 16;

interface Args {
  command: string | null;
  file: string | null;
  json: boolean;
  out: string | null;
  format: FormatId | null;
  minLoopAttempts: number | null;
  cacheTtlMin: number | null;
  noRedact: boolean;
  redact: RedactionMode;
  prices: string | null;
  whatIfTtlMin: number | null;
  whatIfTtlWrite: number | null;
  budget: number | null;
  parseThreads: number;
}

function positiveNumber(flag: string, value: string | undefined, integer: boolean): number {
  const n = Number(value);
  if (value === undefined || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${flag} needs a ${integer ? 'whole ' : ''}number > 0, not "${value ?? ''}"`);
  }
  return n;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = {
    command: null,
    file: null,
    json: false,
    out: null,
    format: null,
    minLoopAttempts: null,
    cacheTtlMin: null,
    prices: null,
    whatIfTtlMin: null,
    whatIfTtlWrite: null,
    budget: null,
    parseThreads: 0,
    noRedact: false,
    redact: 'default',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') args.json = true;
    else if (a === '--no-redact') args.noRedact = true;
    else if (a === '--redact') args.redact = redactionModeFlag(argv[++i] ?? '');
    else if (a === '-o' || a === '--out') args.out = argv[++i] ?? null;
    else if (a === '--format') {
      const f = argv[++i];
      const known = SUPPORTED_FORMATS.find((s) => s.id === f);
      if (!known)
        throw new UsageError(`unknown --format "${f ?? ''}"; one of: ${SUPPORTED_FORMATS.map((s) => s.id).join(', ')}`);
      args.format = known.id;
    } else if (a === '--min-loop-attempts') args.minLoopAttempts = positiveNumber(a, argv[++i], true);
    else if (a === '--cache-ttl-min') args.cacheTtlMin = positiveNumber(a, argv[++i], false);
    else if (a === '--prices') {
      const file = argv[++i];
      if (file === undefined || file.startsWith('--'))
        throw new UsageError('--prices needs a FILE (JSON, see docs/guide/cost.md)');
      args.prices = file;
    } else if (a === '--what-if-ttl-min') args.whatIfTtlMin = positiveNumber(a, argv[++i], false);
    else if (a === '--what-if-ttl-write') args.whatIfTtlWrite = positiveNumber(a, argv[++i], false);
    else if (a === '--budget') args.budget = positiveNumber(a, argv[++i], false);
    else if (a === '--parse-threads')
      args.parseThreads = Math.min(MAX_PARSE_THREADS, positiveNumber(a, argv[++i], true));
    else if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
    else if (args.command === null) args.command = a;
    else if (args.file === null) args.file = a;
    else throw new UsageError(`unexpected argument ${a}`);
  }
  return args;
}

/** A user price file: unreadable JSON or a bad entry is a usage error naming the file and the entry. */
async function readPriceFile(path: string): Promise<ReturnType<typeof readUserPrices>> {
  // Streamed from a regular file only (a FIFO named here must not block the CLI), nesting bounded.
  let read: Awaited<ReturnType<typeof readJsonFile>>;
  try {
    read = await readJsonFile(path, 'a price list');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new UsageError(`--prices ${path}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  }
  if ('error' in read) throw new UsageError(`--prices ${path}: ${read.error}`);
  const prices = readUserPrices(read.value);
  if (prices.problems.length > 0) throw new UsageError(`--prices ${path}: ${prices.problems.join('; ')}`);
  return prices;
}

/** Whether PATH is a folder (`analyze DIR`); anything unreadable is not. */
async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Reads the trace of ARGS and, for analyze, builds its report: the exit status when that is
 * all (a folder, convert, an unreadable -o), else the report and whether reading met a problem.
 * A function of its own so that the model goes when it returns: a frame that held it may keep
 * it alive in a stale register until the frame ends, and the report is printed after a full
 * collection without it (runAnalyze).
 */
async function readAndReport(args: Args): Promise<number | { report: TraceReport; failed: boolean }> {
  if (args.command !== 'analyze' && args.command !== 'convert')
    throw new UsageError(`unknown command "${args.command ?? ''}"`);
  if (!args.file) throw new UsageError(`${args.command} needs a FILE`);
  const options: Partial<AnalysisOptions> = {};
  if (args.minLoopAttempts !== null) options.minLoopAttempts = args.minLoopAttempts;
  if (args.cacheTtlMin !== null) options.cacheTtlMs = args.cacheTtlMin * 60_000;
  if (args.budget !== null && args.command !== 'analyze') throw new UsageError('--budget applies to analyze and cost');
  if (args.command === 'analyze' && (await isDirectory(args.file))) {
    if (args.budget !== null)
      throw new UsageError('--budget applies to one trace; for a folder: agent-trace cost DIR/*.jsonl --budget USD');
    if (args.format) throw new UsageError('--format applies to one file, not to a folder');
    const { analyzeFolder } = await import('./sessions');
    return analyzeFolder(
      args.file,
      options,
      args.json,
      (t) => process.stdout.write(t),
      (t) => process.stderr.write(t),
    );
  }
  // An -o that is a folder, a FIFO or a device is refused before the trace is read.
  if (args.command === 'convert' && args.out) await outputFile(args.out);
  // parseTrace is done with a chunk when it asks for the next: one read buffer will do. Parse
  // threads are handed chunks to keep, so they get a new buffer each.
  const files = await readTraceFiles(args.file, { reuseBuffer: args.parseThreads === 0 });
  const parsed =
    args.parseThreads > 0
      ? await (await import('../node/parallelParse')).parseTraceParallel(files, {
          threads: args.parseThreads,
          workerScript: join(__dirname, 'parseChunkWorker.js'),
          ...(args.format ? { format: args.format } : {}),
        })
      : await parseTrace(files, args.format ? { format: args.format } : {});
  fullCollection();
  if (args.command === 'convert') {
    if (!args.out) throw new UsageError('convert needs -o OUT.trace.jsonl');
    if (parsed.problem) {
      printError(`${args.file}: ${parsed.problem.message}`);
      return 1;
    }
    const redactor = args.noRedact ? null : (await import('../node/secretlintDetector')).createRedactor(args.redact);
    await outputFile(
      args.out,
      await redactJsonLinesText(
        (await import('../core/trace/canonical/canonicalFormat')).writeCanonical(
          parsed.model,
          `agent-trace ${VERSION}`,
        ),
        redactor,
      ),
    );
    const calls = parsed.model.sessions.reduce((n, s) => n + s.calls.length, 0);
    printError(
      `${args.out}: ${parsed.model.sessions.length} sessions, ${calls} LLM calls (from ${parsed.model.format})`,
    );
    printError(redactor ? redactionLine(redactor.summary()) : 'redaction: off (--no-redact)');
    return 0;
  }
  if (args.whatIfTtlWrite !== null && args.whatIfTtlMin === null)
    throw new UsageError('--what-if-ttl-write needs --what-if-ttl-min');
  const customTtl: TtlOption | null =
    args.whatIfTtlMin === null
      ? null
      : {
          ttlMs: args.whatIfTtlMin * 60_000,
          write:
            args.whatIfTtlWrite !== null
              ? { inputMultiple: args.whatIfTtlWrite }
              : defaultWritePrice(args.whatIfTtlMin * 60_000),
        };
  const book = createPriceBook(
    args.prices ? { user: await readPriceFile(args.prices), userLabel: basename(args.prices) } : {},
  );
  return { report: buildTraceReport(parsed, options, { book, customTtl }), failed: parsed.problem !== null };
}

/** `agent-trace analyze|convert …` (any command line the other commands do not claim): its exit status. */
export async function runAnalyze(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  const read = await readAndReport(args);
  if (typeof read === 'number') return read;
  const file = args.file ?? '';
  // Nothing refers to the model any more: this frame never held it (readAndReport's did).
  fullCollection();
  const { report, failed } = read;
  if (args.json) printJson(report);
  else printText(renderTextReport(basename(file), report));
  if (failed) return 1;
  return args.budget === null
    ? 0
    : (await import('./cost')).budgetExit(file, report.cost?.totalUsd ?? null, args.budget);
}

/** dist/cliAnalyze.js's entry, for the launcher: the exit status of `agent-trace ARGV`. */
export function main(argv: readonly string[]): Promise<number> {
  return withExitStatus(() => runAnalyze(argv));
}

// Run as the launcher's worker thread (src/cli/main.ts): the command line comes with the thread.
if (!isMainThread && Array.isArray((workerData as { agentTraceArgv?: unknown } | null)?.agentTraceArgv))
  void main((workerData as { agentTraceArgv: string[] }).agentTraceArgv).then((code) => {
    process.exitCode = code;
  });
