// The CLI's entry (dist/cli.js, package.json's `bin`): a launcher that loads only the bundle
// the command runs. `analyze` and `convert` (dist/cliAnalyze.js) need the readers, the
// analyses and the price list; the other commands (dist/cliCommands.js) bring DuckDB,
// Parquet, OTLP, secretlint, the tokenizer and the simulator, and evaluating all of that
// before a trace is read cost `analyze` about 20 MB at its start (docs/performance.md,
// "Issue 27, fifth round"). Each bundle sets its own exit status (its UsageError is its own).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { READER_YOUNG_GENERATION_MB } from '../node/youngGeneration';

/** The commands with their own options (dist/cliCommands.js); `--help`, `-h`, `--version` and no argument go there too. */
const COMMANDS = new Set([
  'simulate',
  'context',
  'sessions',
  'cost',
  'windows',
  'calibrate',
  'redact',
  'export',
  'compact',
  'team-report',
  'query',
  'compare',
  'report',
]);

/** Which bundle runs ARGV: the same split as the command dispatch in src/cli/commands.ts. */
function cliBundle(argv: readonly string[]): 'cliCommands.js' | 'cliAnalyze.js' {
  return argv.length === 0 ||
    COMMANDS.has(argv[0]!) ||
    argv.includes('--help') ||
    argv.includes('-h') ||
    argv.includes('--version')
    ? 'cliCommands.js'
    : 'cliAnalyze.js';
}

/** What a bundle gives the launcher: the exit status of `agent-trace ARGV`. */
interface CliBundle {
  main(argv: readonly string[]): Promise<number>;
}

const argv = process.argv.slice(2);
const bundle = join(__dirname, cliBundle(argv));
if (bundle.endsWith('cliAnalyze.js')) {
  // analyze and convert run on a worker thread of their own, whose young generation is bounded;
  // what it prints goes through this thread to the same stdout and stderr, in order.
  // `gc` in the thread: set before its isolate exists, V8 gives its context the function, which
  // analyze calls once between reading and the report (src/cli/analyze.ts, fullCollection).
  // No concurrent optimizing compiles: a compile on V8's background thread mallocs its zones in
  // that thread's allocator arena, which keeps the pages after they are freed (about 6 MiB of
  // resident memory at analyze's peak); compiled on the analyze thread, they reuse its arena
  // (docs/performance.md, "Issue 27, ninth session, second round").
  setFlagsFromString('--expose-gc');
  setFlagsFromString('--no-concurrent-recompilation');
  const worker = new Worker(bundle, {
    workerData: { agentTraceArgv: argv },
    resourceLimits: { maxYoungGenerationSizeMb: READER_YOUNG_GENERATION_MB },
  });
  worker.on('error', (err) => {
    process.stderr.write(`agent-trace: ${err.message}\n`);
    process.exitCode = 1;
  });
  worker.on('exit', (code) => {
    process.exitCode ||= code;
  });
} else {
  // A path known only at run time: esbuild leaves it to Node, which loads the bundle beside this one.
  const load = createRequire(__filename);
  void (load(bundle) as CliBundle).main(argv).then((code) => {
    process.exitCode = code;
  });
}
