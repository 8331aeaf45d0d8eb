import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import { buildTraceReport } from '../core/report/traceReport';
import { writeCanonical } from '../core/trace/canonical/canonicalFormat';
import { FORMATS as SUPPORTED_FORMATS } from '../core/trace/formats';
import type { FormatId } from '../core/trace/model';
import { parseTrace } from '../core/trace/parseTrace';
import { renderTextReport } from '../core/report/textReport';
import { readTraceFiles } from '../node/traceFiles';
import { analyzeFolder, isDirectory, runSessions } from './sessions';
import { runSimulate } from './simulate';
import { UsageError } from './usageError';
import { version } from '../../package.json';
import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';

/** The CLI's version is the package's: one number to bump. */
const VERSION = version;

const USAGE = `agent-trace ${VERSION}: where an agent's tokens go, from its trace.

Usage:
  agent-trace analyze FILE [--json] [--format ID] [--min-loop-attempts N] [--cache-ttl-min M]
  agent-trace analyze DIR [--json] [--min-loop-attempts N] [--cache-ttl-min M]
  agent-trace sessions [--json] [--agent ID] [--since 7d] [--project P]
  agent-trace convert FILE -o OUT.trace.jsonl [--format ID]
  agent-trace simulate (FILE | --workload W.json) [options] [--json]
  agent-trace --help | --version

Formats (detected automatically; --format overrides):
${SUPPORTED_FORMATS.map((f) => `  ${f.id.padEnd(12)} ${f.label}`).join('\n')}

analyze prints per session: LLM calls, user turns, token totals, cache hit rate,
raw input/output and appended/output ratios beside the published ranges for
agent workloads, prefill vs decode share of LLM time, tool calls by tool,
exploration vs execution by quarter, context growth and compactions, cache-miss
causes and retry loops of failing tool calls. --json prints the stable contract
described in the README. Given a folder, analyze reads every session in it
(*.jsonl, *.json, *.traj; sub-agent logs with their session) and prints their
combined fingerprint and how the figures spread across them.

sessions lists the agent sessions on this machine (Claude Code, Codex) with their
figures; agent-trace sessions --help lists its options. --min-loop-attempts (default 3) is the fewest failed
attempts that make a retry loop; --cache-ttl-min (default 5) the provider's
cache TTL an idle gap must exceed to explain a cache miss.

simulate replays a traced agent session as N sessions sharing one GPU's vLLM
prefix cache and reports the hit rate, recomputed prefill, preemptions, prefill
share and slowdown, or sweeps N or the cache size to find the cliff. Its options:
agent-trace simulate --help.

Exit status: 0 ok, 1 the file could not be read as a trace (simulate: or the
parameters cannot work), 2 usage error.
`;

interface Args {
  command: string | null;
  file: string | null;
  json: boolean;
  out: string | null;
  format: FormatId | null;
  minLoopAttempts: number | null;
  cacheTtlMin: number | null;
}

function positiveNumber(flag: string, value: string | undefined, integer: boolean): number {
  const n = Number(value);
  if (value === undefined || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new UsageError(`${flag} needs a ${integer ? 'whole ' : ''}number > 0, not "${value ?? ''}"`);
  }
  return n;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { command: null, file: null, json: false, out: null, format: null, minLoopAttempts: null, cacheTtlMin: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') args.json = true;
    else if (a === '-o' || a === '--out') args.out = argv[++i] ?? null;
    else if (a === '--format') {
      const f = argv[++i];
      const known = SUPPORTED_FORMATS.find((s) => s.id === f);
      if (!known) throw new UsageError(`unknown --format "${f ?? ''}"; one of: ${SUPPORTED_FORMATS.map((s) => s.id).join(', ')}`);
      args.format = known.id;
    } else if (a === '--min-loop-attempts') args.minLoopAttempts = positiveNumber(a, argv[++i], true);
    else if (a === '--cache-ttl-min') args.cacheTtlMin = positiveNumber(a, argv[++i], false);
    else if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
    else if (args.command === null) args.command = a;
    else if (args.file === null) args.file = a;
    else throw new UsageError(`unexpected argument ${a}`);
  }
  return args;
}

async function main(argv: readonly string[]): Promise<number> {
  // simulate and sessions have their own options and help.
  if (argv[0] === 'simulate') return runSimulate(argv.slice(1));
  if (argv[0] === 'sessions') return runSessions(argv.slice(1), (t) => process.stdout.write(t), (t) => process.stderr.write(t));
  if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) {
    process.stdout.write(USAGE);
    return argv.length === 0 ? 2 : 0;
  }
  if (argv.includes('--version')) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const args = parseArgs(argv);
  if (args.command !== 'analyze' && args.command !== 'convert') throw new UsageError(`unknown command "${args.command ?? ''}"`);
  if (!args.file) throw new UsageError(`${args.command} needs a FILE`);
  const options: Partial<AnalysisOptions> = {};
  if (args.minLoopAttempts !== null) options.minLoopAttempts = args.minLoopAttempts;
  if (args.cacheTtlMin !== null) options.cacheTtlMs = args.cacheTtlMin * 60_000;
  if (args.command === 'analyze' && (await isDirectory(args.file))) {
    if (args.format) throw new UsageError('--format applies to one file, not to a folder');
    return analyzeFolder(args.file, options, args.json, (t) => process.stdout.write(t), (t) => process.stderr.write(t));
  }
  const files = await readTraceFiles(args.file);
  const parsed = await parseTrace(files, args.format ? { format: args.format } : {});
  if (args.command === 'convert') {
    if (!args.out) throw new UsageError('convert needs -o OUT.trace.jsonl');
    if (parsed.problem) {
      process.stderr.write(`${args.file}: ${parsed.problem.message}\n`);
      return 1;
    }
    await writeFile(args.out, writeCanonical(parsed.model, `agent-trace ${VERSION}`));
    const calls = parsed.model.sessions.reduce((n, s) => n + s.calls.length, 0);
    process.stderr.write(`${args.out}: ${parsed.model.sessions.length} sessions, ${calls} LLM calls (from ${parsed.model.format})\n`);
    return 0;
  }
  const report = buildTraceReport(parsed, options);
  process.stdout.write(args.json ? JSON.stringify(report, null, 2) + '\n' : renderTextReport(basename(args.file), report));
  return parsed.problem ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`agent-trace: ${err.message}\nRun "${err.helpCommand}" for usage.\n`);
      process.exitCode = 2;
    } else {
      const e = err as NodeJS.ErrnoException;
      process.stderr.write(`agent-trace: ${e.code === 'ENOENT' ? `no such file: ${e.path ?? ''}` : (e.message ?? String(err))}\n`);
      process.exitCode = 1;
    }
  },
);
