// Time and memory of `agent-trace analyze` (every feature on: cost, the cache-TTL what-if,
// loops, misses, the ideal cache) and of the streaming reader alone, against a baseline
// measured in the same run (this machine is noisy, so only ratios are meaningful):
//   baseline  = read the file, split it into lines, JSON.parse every line (no model)
//   floor     = the least a one-thread reader of this design can do: the file streamed in 256 KB
//               chunks, split and decoded line by line (LineReader), and JSON.parse of each line
//               its format's reader reads (a Claude Code progress line, which the reader only
//               counts, is not even parsed; a Codex log's lines are all parsed, as the lines
//               its reader skips are under 2% of its bytes); no record checks, no reader, no report
//   parse     = parseTrace over the file streamed in 256 KB chunks, building the full model
//   analyze   = what `agent-trace analyze --json` does: read, parse, price, analyse, print
//               (the JSON written to a sink, not a terminal), on a thread of its own with the
//               CLI's bounded young generation, as the CLI runs it
//   threads   = the same analyze with the file parsed on parse threads (src/node/parallelParse.ts,
//               one per core beside the reading thread, which parses too when they are full)
// Each measurement runs in its own child process, so one's peak memory does not hide the
// other's; peak RSS is the child's own maximum resident set (getrusage), start included.
//
// Run: npm run bench [-- options]   (bundled by scripts/runBench.mjs like the other benchmarks)
//   --mb N          size of each generated log (default 111; 777 is the big case)
//   --formats LIST  claude,codex (default both): Claude Code and Codex logs made of real records
//   --runs N        measurements of each kind, alternated (default 1); the median is shown
//   --threads N     parse threads of the `threads` measurement, beside the reading thread (default:
//                   one per core but one, at least 1, at most 3; 0 leaves that measurement out)
//   --before FILE   also measures analyze with another build of this benchmark (bundled from
//                   an older checkout: dist/bench/parseTrace.bench.js there), in the same run
//   --profile       also prints where analyze's time goes, stage by stage, and the hottest
//                   functions of a V8 CPU profile of one analyze run
//   N               (a bare number) N copies of the Claude Code sample, as before
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { findCacheMisses, countMissCauses } from '../src/core/analysis/cacheMisses';
import { fingerprint } from '../src/core/analysis/fingerprint';
import { idealTtlCurve } from '../src/core/analysis/idealTtlCache';
import { findRetryLoopsOnly } from '../src/core/analysis/retryLoops';
import { DEFAULT_ANALYSIS_OPTIONS } from '../src/core/analysis/sessionAnalysis';
import { summarizeSession } from '../src/core/analysis/sessionSummary';
import { cacheTtlWhatIf, ttlCalls } from '../src/core/cost/cacheTtlWhatIf';
import { priceTrace } from '../src/core/cost/callCost';
import { loopCost } from '../src/core/cost/loopCost';
import { createPriceBook } from '../src/core/cost/priceBook';
import { buildTraceReport } from '../src/core/report/traceReport';
import type { TraceReport } from '../src/core/report/traceReport';
import { terminalJson } from '../src/core/text/safeText';
import { LineReader } from '../src/core/text/lineReader';
import { MAX_JSON_DEPTH } from '../src/core/trace/jsonStream';
import { parseTrace } from '../src/core/trace/parseTrace';
import { checkRecord } from '../src/core/trace/recordChecks';
import { parseTraceParallel } from '../src/node/parallelParse';
import { readTraceFiles, regularFileChunks } from '../src/node/traceFiles';
import { READER_YOUNG_GENERATION_MB } from '../src/node/youngGeneration';
import { claude, codex } from '../scripts/makeBigTraces';

type Kind = 'baseline' | 'floor' | 'parse' | 'analyze' | 'threads' | 'before';

interface Measure {
  count: number;
  ms: number;
  /** CPU time of the process (every thread, user and system) over the same span: less moved by other processes than the wall clock. */
  cpuMs: number;
  /** CPU time of the thread that reads (and the report): on parse threads, the part that bounds the wall clock on idle cores (Linux only). */
  mainCpuMs?: number;
  peakMB: number;
}

const MB = 2 ** 20;

function load(): string {
  return loadavg()[0]!.toFixed(1);
}

/** The plain loop: the file's bytes, decoded and split at newlines in pieces of at most 64 MiB (a string cannot hold 777 MB), each line JSON.parsed. */
function plainLoop(path: string): number {
  const bytes = readFileSync(path);
  let n = 0;
  for (let at = 0; at < bytes.length; ) {
    let end = Math.min(bytes.length, at + 64 * MB);
    if (end < bytes.length) end = bytes.lastIndexOf(0x0a, end) + 1 || bytes.length;
    for (const line of bytes.toString('utf8', at, end).split('\n')) if (line && JSON.parse(line)) n += 1;
    at = end;
  }
  return n;
}

/**
 * The report of PATH and its number of calls, read on `threads` parse threads when given: a
 * function of its own, as in the CLI (src/cli/analyze.ts, readAndReport), so the model is
 * garbage once it returns.
 */
async function reportOf(path: string, threads: number): Promise<{ report: TraceReport; calls: number }> {
  // One reused read buffer when parsing on this thread, as the CLI does.
  const files = await readTraceFiles(path, { reuseBuffer: threads === 0 });
  const parsed =
    threads > 0
      ? await parseTraceParallel(files, { threads, workerScript: join(__dirname, 'parseChunkWorker.js') })
      : await parseTrace(files);
  // The CLI's full collection between reading and the report (src/cli/analyze.ts); children run with --expose-gc.
  global.gc?.();
  const report = buildTraceReport(parsed, {}, { book: createPriceBook({}), customTtl: null });
  return { report, calls: parsed.model.sessions.reduce((n, s) => n + s.calls.length, 0) };
}

/** What `agent-trace analyze --json FILE` does (src/cli/main.ts), its output written to a sink; on `threads` parse threads when given. */
async function analyze(path: string, threads = 0): Promise<number> {
  const { report, calls } = await reportOf(path, threads);
  // The CLI's second full collection: the model is garbage, the JSON is made without it.
  global.gc?.();
  const text = terminalJson(JSON.stringify(report, null, 2)) + '\n';
  return calls + (text.length > 0 ? 0 : 1);
}

/**
 * The floor (see the head of this file). The lines it leaves unparsed are found by a text
 * search, which is not a safe test for a reader (docs/performance.md: the progress-line skim),
 * only a generous one for a bound.
 */
async function floorLoop(path: string, format: string): Promise<number> {
  let n = 0;
  await eachLine(path, (text) => {
    if (format === 'claude' && text.includes('"type":"progress"')) return;
    if (JSON.parse(text)) n += 1;
  });
  return n;
}

async function parseOnly(path: string): Promise<number> {
  const parsed = await parseTrace(await readTraceFiles(path));
  return parsed.model.sessions.reduce((n, s) => n + s.calls.length, 0);
}

/** CPU time of the calling thread so far, in ms (10 ms ticks; NaN where /proc/thread-self is not). */
function threadCpuMs(): number {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

interface ThreadResult {
  count: number;
  cpuMs: number;
}

/**
 * analyze as the CLI runs it (src/cli/main.ts): on a thread of its own whose young generation
 * is bounded, its output passed back, so its peak memory and CPU are what a user's run has,
 * the thread's own isolate included. The child runs with --expose-gc, which reaches the thread.
 */
function analyzeOnThread(path: string, threads: number): Promise<ThreadResult> {
  return new Promise((resolve, reject) => {
    // As the CLI's launcher: optimizing compiles on the thread itself, not on V8's background threads.
    setFlagsFromString('--no-concurrent-recompilation');
    const worker = new Worker(__filename, {
      workerData: { benchAnalyze: { path, threads } },
      resourceLimits: { maxYoungGenerationSizeMb: READER_YOUNG_GENERATION_MB },
    });
    worker.once('message', (result: ThreadResult) => resolve(result));
    worker.once('error', reject);
  });
}

/** One measurement in this process; prints a JSON line for the parent. */
async function measure(which: string, path: string): Promise<void> {
  global.gc?.();
  const m0 = threadCpuMs();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let readingCpuMs: number | null = null;
  let count: number;
  if (which === 'baseline') count = plainLoop(path);
  else if (which === 'floor') count = await floorLoop(path, process.env['BENCH_FORMAT'] ?? '');
  else if (which === 'parse') count = await parseOnly(path);
  else {
    const result = await analyzeOnThread(path, which === 'threads' ? Number(process.env['BENCH_THREADS']) : 0);
    count = result.count;
    readingCpuMs = result.cpuMs;
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  console.log(
    JSON.stringify({
      count,
      ms,
      cpuMs: (cpu.user + cpu.system) / 1000,
      mainCpuMs: readingCpuMs ?? threadCpuMs() - m0,
      peakMB: process.resourceUsage().maxRSS / 1024,
    }),
  );
}

/** Lines of the file, through the same stream and LineReader the reader uses; `each` sees every decoded line. */
async function eachLine(path: string, each: ((text: string) => void) | null): Promise<number> {
  let n = 0;
  const reader = new LineReader({
    onLine: (line) => {
      n += 1;
      if (each && line.text !== null && line.text.trim() !== '') each(line.text);
    },
  });
  for await (const chunk of regularFileChunks(path)) reader.push(chunk);
  reader.end();
  return n;
}

/**
 * Where analyze's time goes. The reading stages are cumulative passes over the same file
 * (each adds one step to the one before), so their differences are each step's cost; the
 * analysis stages run the report's own functions one at a time on the parsed model.
 */
async function stages(path: string): Promise<void> {
  const rows: Array<[string, number]> = [];
  const time = async <T>(name: string, fn: () => T | Promise<T>): Promise<T> => {
    global.gc?.();
    const t0 = performance.now();
    const value = await fn();
    rows.push([name, performance.now() - t0]);
    return value;
  };
  await time('read: the file streamed in 256 KB chunks', async () => {
    let bytes = 0;
    for await (const chunk of regularFileChunks(path)) bytes += chunk.length;
    return bytes;
  });
  await time('+ split and decode lines (LineReader)', () => eachLine(path, null));
  await time('+ JSON.parse each line', () => eachLine(path, (t) => JSON.parse(t)));
  await time('+ the record checks (depth, counts)', () =>
    eachLine(path, (t) => checkRecord(JSON.parse(t), MAX_JSON_DEPTH)),
  );
  const model = (
    await time('parseTrace: all of the above + the format reader', async () => parseTrace(await readTraceFiles(path)))
  ).model;
  const book = createPriceBook({});
  const priced = await time('price every call', () => priceTrace(model, book));
  const o = DEFAULT_ANALYSIS_OPTIONS;
  await time('summary', () => model.sessions.map((s) => summarizeSession(s)));
  const loops = await time('retry loops (the loops alone, as the report asks)', () =>
    model.sessions.map((s) => findRetryLoopsOnly(s, o.minLoopAttempts)),
  );
  await time('cache misses', () => model.sessions.map((s) => countMissCauses(findCacheMisses(s, o))));
  await time('fingerprint', () => model.sessions.map((s) => fingerprint(s, o)));
  await time('loop costs', () =>
    model.sessions.map((s, i) => loops[i]!.loops.map((l) => loopCost(l, s, priced.sessions[i]!))),
  );
  await time('cache-TTL what-if', () =>
    model.sessions.map((s, i) => cacheTtlWhatIf(ttlCalls(s, priced.sessions[i]!), null)),
  );
  await time('ideal cache curve', () => model.sessions.map((s) => idealTtlCurve(s)));
  const report = await time('buildTraceReport (all the analysis above, once)', () =>
    buildTraceReport(
      { model, detection: { format: model.format, evidence: '', confidence: null }, problem: null },
      {},
      { book, customTtl: null },
    ),
  );
  await time('JSON output (stringify, terminal-safe)', () => terminalJson(JSON.stringify(report, null, 2)).length);
  console.log(JSON.stringify({ rows }));
}

function child(
  which: string,
  path: string,
  extra: string[] = [],
  script = __filename,
  threads = 0,
  format = '',
): Measure {
  const out = spawnSync(process.execPath, ['--expose-gc', ...extra, script, which, path], {
    env: { ...process.env, BENCH_THREADS: String(threads), BENCH_FORMAT: format },
    encoding: 'utf8',
    maxBuffer: 64 * MB,
  });
  if (out.status !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as Measure;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** The hottest functions (self time) of a V8 CPU profile, grouped by function and file. */
function hottest(profileDir: string, top: number): string[] {
  // One profile per thread; analyze's is the busiest (the child's main thread waits for it).
  let self = new Map<string, number>();
  let total = 0;
  let busiest = -1;
  for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as {
      nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
      samples: number[];
      timeDeltas: number[];
    };
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const thread = new Map<string, number>();
    let threadTotal = 0;
    let busy = 0;
    profile.samples.forEach((id, i) => {
      const n = byId.get(id)!;
      const dt = profile.timeDeltas[i] ?? 0;
      threadTotal += dt;
      if (n.callFrame.functionName !== '(idle)') busy += dt;
      const where = n.callFrame.url ? `${n.callFrame.url.split('/').at(-1)}:${n.callFrame.lineNumber + 1}` : '';
      const key = `${n.callFrame.functionName || '(anonymous)'} ${where}`.trim();
      thread.set(key, (thread.get(key) ?? 0) + dt);
    });
    if (busy > busiest) [self, total, busiest] = [thread, threadTotal, busy];
  }
  if (busiest < 0) return ['(no profile written)'];
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(
      ([k, us]) => `  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`,
    );
}

function option(args: string[], name: string): string | null {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? null) : null;
}

async function main(args: string[]): Promise<void> {
  const copies = args[0] !== undefined && /^\d+$/.test(args[0]) ? Number(args[0]) : null;
  const mb = Number(option(args, '--mb') ?? 111);
  const runs = Number(option(args, '--runs') ?? 1);
  const formats = (option(args, '--formats') ?? (copies !== null ? 'claude' : 'claude,codex')).split(',');
  const profile = args.includes('--profile');
  const before = option(args, '--before');
  const threads = Number(option(args, '--threads') ?? Math.max(1, Math.min(3, cpus().length - 1)));
  const dir = mkdtempSync(join(tmpdir(), 'agent-trace-bench-'));
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}; load average at start ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  try {
    for (const format of formats) {
      const path = join(dir, `${format}.jsonl`);
      const size = copies !== null ? { copies } : { mb };
      if (format === 'claude') await claude(size, path);
      else if (format === 'codex') await codex(size, path);
      else throw new Error(`unknown format ${format} (claude, codex)`);
      const fileMb = statSync(path).size / MB;
      // One baseline run thrown away: the first read of a file just written costs more (at 777 MB its
      // plain loop took 6.7 s of CPU, then 5.0 s), and the baseline would be the run that paid it.
      child('baseline', path);
      const all: Record<Kind, Measure[]> = { baseline: [], floor: [], parse: [], analyze: [], threads: [], before: [] };
      const kinds: Kind[] = [
        'baseline',
        'floor',
        'parse',
        'analyze',
        ...(threads > 0 ? (['threads'] as const) : []),
        ...(before ? (['before'] as const) : []),
      ];
      const loads: string[] = [];
      for (let r = 0; r < runs; r++) {
        for (const which of kinds) {
          loads.push(load());
          all[which].push(
            which === 'before'
              ? child('analyze', path, [], before!)
              : child(which, path, [], __filename, threads, format),
          );
        }
      }
      const m = (which: keyof typeof all, k: 'ms' | 'cpuMs' | 'mainCpuMs' | 'peakMB'): number =>
        median(all[which].map((x) => x[k] ?? Number.NaN));
      const base = m('baseline', 'ms');
      console.log(
        `\n${format}: ${fileMb.toFixed(0)} MB, ${all.baseline[0]!.count} lines, ${all.analyze[0]!.count} LLM calls; load average during the runs ${loads.join(', ')}`,
      );
      for (const which of kinds) {
        const label = {
          baseline: 'baseline (read + split + JSON.parse)',
          floor: 'floor (lines + JSON.parse of those read)',
          parse: 'parseTrace (full model)',
          analyze: 'analyze --json (every feature on)',
          threads: `analyze --json, ${threads} parse thread${threads === 1 ? '' : 's'}`,
          before: 'analyze --json, the --before build',
        }[which];
        const ratio =
          which === 'baseline'
            ? ''
            : `  ${(m(which, 'ms') / base).toFixed(2)}× the baseline (CPU ${(m(which, 'cpuMs') / m('baseline', 'cpuMs')).toFixed(2)}×)` +
              (which === 'threads'
                ? `; ${(m('analyze', 'ms') / m('threads', 'ms')).toFixed(2)}× as fast as one thread, on ${(m('threads', 'cpuMs') / m('analyze', 'cpuMs')).toFixed(2)}× its CPU (the reading thread ${(m('threads', 'mainCpuMs') / m('analyze', 'mainCpuMs')).toFixed(2)}×)`
                : '');
        console.log(
          `  ${label.padEnd(38)} ${m(which, 'ms').toFixed(0).padStart(6)} ms  ${(fileMb / (m(which, 'ms') / 1000)).toFixed(0).padStart(4)} MB/s  CPU ${m(which, 'cpuMs').toFixed(0).padStart(6)} ms  peak RSS ${m(which, 'peakMB').toFixed(0).padStart(5)} MiB${ratio}`,
        );
      }
      if (profile) {
        const out = spawnSync(process.execPath, ['--expose-gc', __filename, 'stages', path], {
          encoding: 'utf8',
          maxBuffer: 64 * MB,
        });
        if (out.status !== 0) throw new Error(out.stderr);
        const { rows } = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { rows: Array<[string, number]> };
        console.log(
          `  stages (one process, load average ${load()}; reading stages are cumulative, Δ is the step's own cost):`,
        );
        let prev = 0;
        rows.forEach(([name, ms], i) => {
          const delta = i > 0 && i < 4 ? `  Δ ${(ms - prev).toFixed(0)} ms` : '';
          console.log(
            `    ${name.padEnd(52)} ${ms.toFixed(0).padStart(6)} ms  ${(ms / base).toFixed(2)}× baseline${delta}`,
          );
          prev = ms;
        });
        const profDir = join(dir, `prof-${format}`);
        child('analyze', path, ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
        console.log(`  hottest functions of one analyze run (self time, V8 CPU profile):`);
        for (const line of hottest(profDir, 20)) console.log(line);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `\nload average at end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
}

// The parent runs with its options; each child with its mode and the file; a child's analyze thread with workerData.
const [mode, arg] = process.argv.slice(2);
const onThread = isMainThread
  ? undefined
  : (workerData as { benchAnalyze?: { path: string; threads: number } }).benchAnalyze;
if (onThread) {
  const m0 = threadCpuMs();
  void analyze(onThread.path, onThread.threads).then((count) =>
    parentPort!.postMessage({ count, cpuMs: threadCpuMs() - m0 } satisfies ThreadResult),
  );
} else if (mode === 'baseline' || mode === 'floor' || mode === 'parse' || mode === 'analyze' || mode === 'threads')
  void measure(mode, arg!);
else if (mode === 'stages') void stages(arg!);
else if (mode === '--help')
  console.log(
    'usage: npm run bench [-- [--mb N] [--formats claude,codex] [--runs N] [--threads N] [--before BUNDLE] [--profile] | N]',
  );
else void main(process.argv.slice(2));
