#!/usr/bin/env node
// The before/after check for refactors: runs a build of the CLI on every sample and on a
// fixed list of command lines, keeps each output byte for byte (stdout, stderr and exit
// status), and compares them with another build's, so a change that must not alter a
// figure is checked against the build before it.
//
//   npm run build && node scripts/compareOutputs.mjs --save /tmp/before     (on the old build)
//   npm run build && node scripts/compareOutputs.mjs --against /tmp/before  (on the new one)
//   node scripts/compareOutputs.mjs --save /tmp/after && node scripts/compareOutputs.mjs --compare /tmp/before /tmp/after
//
//   --cli PATH     runs another build's CLI (another checkout's dist/cli.js, or a copy of one
//                  made before the change) instead of dist/cli.js
//   --kinds LIST   only these outputs (default: all of them):
//                    analyze.json, analyze.txt, convert.jsonl, simulate.json   per sample file
//                    commands   the fixed command lines: `simulate` with every policy, preset,
//                               fleet, sweep and refusal it has, the commands' --help, and
//                               `analyze` / `convert` of the simulator's inputs (about 210)
//   --saved-only   with --against: compare only the outputs DIR holds (a save cut short)
//   --resume       with --save: make only the outputs DIR does not hold yet (a save cut short)
//   --jobs N       run N commands at a time (default 1; the outputs do not depend on it)
//
// Samples: every file under samples/ and test/fixtures/ (hostile cases, workloads and all:
// a refusal is an output too) but licences and notes, then the shared traces
// ($AGENT_TRACE_SHARED_TRACES, or shared/traces beside the checkout; `none` leaves them out)
// and the local-only samples ($AGENT_TRACE_LOCAL_SAMPLES); files over 64 MiB are skipped.
// Where a JSON output differs, its differing values are listed (path: before → after; its
// diagnostics compared as a set, so one added does not shift every other). Exits 1 when an
// output differs, 2 on a usage error.
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TRACE_KINDS = ['analyze.json', 'analyze.txt', 'convert.jsonl', 'simulate.json'];
const KINDS = [...TRACE_KINDS, 'commands'];
const USAGE =
  'usage: node scripts/compareOutputs.mjs --save DIR [--resume] | --against DIR [--saved-only] | --compare BEFORE AFTER   [--cli PATH] [--kinds LIST] [--jobs N]';

// ---------------------------------------------------------------- the command lines

/** Agent traces and workloads (closed loop) and a block-hash trace (open loop), all committed. */
const AGENT = [
  'test/fixtures/claude-code/edit-retry-loop.jsonl',
  'test/fixtures/codex/tracelab-agents-md-0.114.jsonl',
  'samples/claude-code-sessions.trace.jsonl',
];
const WORKLOADS = [
  'test/fixtures/workloads/growing-session.workload.json',
  'test/fixtures/workloads/two-sessions-small-cache.workload.json',
];
const BLOCKS = 'test/fixtures/mooncake/conversation_trace.head300.jsonl';

/** Every scenario shape the command line can say, once per agent input. */
const VARIANTS = [
  [],
  ['--replicas', '8', '--stagger-s', '2'],
  ['--replicas', '6', '--stagger', 'random', '--seed', '7', '--tool-wait-scale', '0.5'],
  ['--policy', 'sglang-lru'],
  ['--policy', 'sglang-lru', '--sglang-page-size', '16', '--replicas', '4'],
  ['--policy', 'ttl-pin', '--replicas', '8'],
  ['--policy', 'ttl-pin', '--ttl-s', '5', '--max-ttl-s', '20', '--replicas', '8'],
  ['--policy', 'admission-cap', '--replicas', '8'],
  ['--policy', 'admission-cap', '--admission-cap', '3', '--replicas', '8'],
  [
    '--policy',
    'admission-cap',
    '--initial-cap',
    '4',
    '--hit-rate-floor',
    '0.7',
    '--backoff',
    '0.6',
    '--window-s',
    '10',
    '--replicas',
    '8',
  ],
  ['--offload-tokens', '100000', '--offload-gbps', '25', '--replicas', '8', '--capacity-tokens', '20000'],
  ['--gpu', 'h200', '--model', 'llama-3.1-8b', '--replicas', '4'],
  ['--gpu', 'h100', '--model', 'qwen3-32b', '--replicas', '4'],
  ['--gpu-memory-gib', '96', '--model', 'qwen3-30b-a3b'],
  ['--gpu', 'h100', '--gpu-memory-gib', '96', '--model', 'llama-3.1-70b-fp8'],
  [
    '--capacity-tokens',
    '30000',
    '--step-fixed-ms',
    '10',
    '--prefill-us-per-token',
    '50',
    '--kv-read-ns-per-token',
    '40',
    '--kv-bytes-per-token',
    '131072',
    '--decode-us-per-seq',
    '3',
  ],
  [
    '--block-size',
    '32',
    '--max-batched-tokens',
    '4096',
    '--max-num-seqs',
    '16',
    '--max-model-len',
    '200000',
    '--free-order',
    'legacy',
  ],
  ['--gpus', '4', '--router', 'kv-aware', '--replicas', '12'],
  ['--gpus', '3', '--router', 'session-affinity', '--replicas', '6', '--policy', 'ttl-pin'],
  ['--router', 'round-robin'],
  ['--ttl-s', '5', '--backoff', '0.4'],
  ['--engine', 'reference', '--replicas', '3'],
  ['--sweep', 'replicas=1..16'],
  ['--sweep', 'capacity=16384..131072', '--replicas', '4', '--cliff-threshold', '0.2'],
  ['--sweep', 'gpus=1..4', '--replicas', '16', '--target-hit-rate', '0.8'],
];

/** Refusals: usage errors (exit 2) and parameters that cannot work (exit 1). */
const REFUSALS = [
  ['--policy', 'lfu'],
  ['--ttl-s', 'soon'],
  ['--admission-cap', '0', '--policy', 'admission-cap'],
  ['--backoff', '1.5', '--policy', 'admission-cap'],
  ['--offload-tokens', '1000'],
  ['--offload-tokens', '1000', '--offload-gbps', '25', '--policy', 'sglang-lru'],
  ['--gpu', 'h100'],
  ['--model', 'qwen3-32b'],
  ['--gpu-memory-gib', '40', '--model', 'qwen3-32b'],
  ['--gpu', 'h100', '--model', 'qwen3-32b', '--capacity-tokens', '1000'],
  ['--gpus', '2', '--policy', 'admission-cap'],
  ['--capacity-tokens', '1e15'],
  ['--step-fixed-ms', '1e308'],
  ['--replicas', '0'],
  ['--sglang-page-size', '64', '--policy', 'sglang-lru', '--capacity-tokens', '64'],
  ['--sweep', 'replicas=1..4', '--replicas', '2'],
];

/** The fixed command lines, each run from the repository's root. */
function commandLines() {
  const list = [
    ['simulate', '--help'],
    ['analyze', '--help'],
    ['convert', '--help'],
  ];
  for (const file of AGENT) {
    list.push(['analyze', file], ['analyze', file, '--json'], ['convert', file]);
    for (const v of VARIANTS) list.push(['simulate', file, ...v], ['simulate', file, ...v, '--json']);
  }
  for (const w of WORKLOADS)
    for (const v of VARIANTS.slice(0, 12)) list.push(['simulate', '--workload', w, ...v, '--json']);
  for (const v of REFUSALS) list.push(['simulate', AGENT[0], ...v]);
  list.push(
    ['simulate', BLOCKS],
    ['simulate', BLOCKS, '--json'],
    ['simulate', BLOCKS, '--block-size', '32', '--json'],
    ['simulate', BLOCKS, '--policy', 'sglang-lru', '--json'],
    ['simulate', BLOCKS, '--gpu', 'h200', '--model', 'qwen3-32b-fp8'],
    ['simulate', BLOCKS, '--sweep', 'capacity=65536..1048576', '--json'],
    ['simulate', BLOCKS, '--replicas', '4'],
  );
  return list;
}

/** The saved file's name of a command line: its place in the list and its words. */
function commandName(argv, i) {
  return `commands__${String(i).padStart(3, '0')}-${argv
    .join('_')
    .replace(/[^\w.=-]+/g, '_')
    .slice(0, 120)}.txt`;
}

// ---------------------------------------------------------------- the samples

/** Every file under `folder` but the licences and notes beside the samples, sorted. */
function filesUnder(folder) {
  if (!existsSync(folder)) return [];
  const out = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile() && !/^(LICENSE|NOTICE|README)|\.md$|\.txt$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

/** The samples, each with the name its outputs are saved under (`shared/…` and `local/…` for the folders outside the repository). */
function samples() {
  const shared = process.env.AGENT_TRACE_SHARED_TRACES ?? join(root, '../shared/traces');
  const local = process.env.AGENT_TRACE_LOCAL_SAMPLES ?? '';
  const groups = [
    ['', join(root, 'samples'), root],
    ['', join(root, 'test/fixtures'), root],
    ['shared/', shared, shared],
    ['local/', local, local],
  ];
  const out = [];
  for (const [prefix, folder, base] of groups) {
    if (!folder || folder === 'none') continue;
    for (const file of filesUnder(folder))
      if (statSync(file).size <= 64 * 2 ** 20) out.push({ file, name: prefix + relative(base, file) });
  }
  return out;
}

// ---------------------------------------------------------------- running the CLI

/** Runs the CLI in `cwd` and resolves with its exit status, stdout and stderr as one text. */
function run(cli, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.on('error', reject);
    child.on('close', (status) =>
      resolve(
        `exit ${status}\n--- stdout\n${Buffer.concat(out).toString('utf8')}\n--- stderr\n${Buffer.concat(err).toString('utf8')}`,
      ),
    );
  });
}

/**
 * Every output this run makes, one at a time: [file name, (scratch) => Promise of its text].
 * `scratch` is a folder of the job's own, named `<scratch>` in the text.
 */
function* outputs(cli, kinds) {
  if (kinds.some((k) => TRACE_KINDS.includes(k))) {
    for (const { file, name } of samples()) {
      const cases = {
        'analyze.json': () => run(cli, ['analyze', '--json', file]),
        'analyze.txt': () => run(cli, ['analyze', file]),
        'convert.jsonl': async (scratch) => {
          const out = join(scratch, 'out.trace.jsonl');
          rmSync(out, { force: true });
          const said = await run(cli, ['convert', file, '-o', out]);
          return `${said}\n--- file\n${existsSync(out) ? readFileSync(out, 'utf8') : '(none)'}`;
        },
        'simulate.json': () => run(cli, ['simulate', '--json', file]),
      };
      for (const kind of TRACE_KINDS)
        if (kinds.includes(kind)) yield [`${name.replaceAll('/', '__')}.${kind}`, cases[kind]];
    }
  }
  if (kinds.includes('commands')) {
    for (const [i, argv] of commandLines().entries())
      yield [commandName(argv, i), async () => `$ agent-trace ${argv.join(' ')}\n${await run(cli, argv)}`];
  }
}

// ---------------------------------------------------------------- comparing

/** The JSON on an output's stdout, or undefined when there is none. */
function stdoutJson(text) {
  const m = /^exit [^\n]*\n--- stdout\n([\s\S]*)\n--- stderr\n/.exec(text);
  if (!m) return undefined;
  try {
    return JSON.parse(m[1]);
  } catch {
    return undefined;
  }
}

function short(v) {
  const s = v === undefined ? '(absent)' : JSON.stringify(v);
  return s.length > 260 ? `${s.slice(0, 257)}…` : s;
}

/** Every leaf that differs, as "path: before → after". */
function leafDiff(a, b, path = '', out = []) {
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${path || '.'}: ${short(a)} → ${short(b)}`);
    return out;
  }
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)]))
    leafDiff(a[k], b[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`, out);
  return out;
}

/** What differs between two outputs: values of their JSON (diagnostics as a set), or that their text does. */
function explain(before, after) {
  if (before === null) return ['only after'];
  if (after === null) return ['only before'];
  const a = stdoutJson(before);
  const b = stdoutJson(after);
  if (a === undefined || b === undefined || typeof a !== 'object' || typeof b !== 'object' || a === null || b === null)
    return ['the text differs'];
  const without = (r) => {
    const rest = { ...r };
    delete rest.diagnostics;
    return rest;
  };
  const lines = leafDiff(without(a), without(b));
  const said = (d) => `line ${d?.line ?? '-'} ${d?.severity}: ${d?.message}`;
  const had = new Set((Array.isArray(a.diagnostics) ? a.diagnostics : []).map(said));
  const has = new Set((Array.isArray(b.diagnostics) ? b.diagnostics : []).map(said));
  for (const d of has) if (!had.has(d)) lines.push(`diagnostic added: ${short(d)}`);
  for (const d of had) if (!has.has(d)) lines.push(`diagnostic removed: ${short(d)}`);
  // Same values, other bytes: the order of keys, spacing, or stderr and exit status.
  return lines.length > 0 ? lines : ['the text differs (same JSON values)'];
}

function report(name, before, after) {
  console.log(`differs: ${name}`);
  for (const line of explain(before, after).slice(0, 40)) console.log(`  ${line}`);
}

function compareFolders(before, after, kinds) {
  const wanted = (name) =>
    kinds.some((k) =>
      k === 'commands' ? name.startsWith('commands__') : !name.startsWith('commands__') && name.endsWith(`.${k}`),
    );
  const names = [...new Set([...readdirSync(before), ...readdirSync(after)])].filter(wanted).sort();
  let differ = 0;
  for (const name of names) {
    const x = existsSync(join(before, name)) ? readFileSync(join(before, name), 'utf8') : null;
    const y = existsSync(join(after, name)) ? readFileSync(join(after, name), 'utf8') : null;
    if (x === y) continue;
    differ += 1;
    report(name, x, y);
  }
  console.log(
    `${names.length - differ} of ${names.length} outputs byte-identical${differ ? `, ${differ} differ` : ''}`,
  );
  return differ;
}

// ---------------------------------------------------------------- the command line of this script

const argv = process.argv.slice(2);
function option(flag, takesValue) {
  const at = argv.indexOf(flag);
  if (at < 0) return null;
  const [, value] = argv.splice(at, takesValue ? 2 : 1);
  return takesValue ? (value ?? '') : true;
}
const cli = resolve(option('--cli', true) || join(root, 'dist/cli.js'));
const savedOnly = option('--saved-only', false) === true;
const resume = option('--resume', false) === true;
const jobs = Number(option('--jobs', true) ?? '1');
const kindsOption = option('--kinds', true);
const kinds = kindsOption ? kindsOption.split(',') : KINDS;
const [mode, dir, other] = argv;
const unknownKind = kinds.find((k) => !KINDS.includes(k));
if (
  unknownKind !== undefined ||
  !['--save', '--against', '--compare'].includes(mode) ||
  !dir ||
  (mode === '--compare') !== (other !== undefined) ||
  (savedOnly && mode !== '--against') ||
  (resume && mode !== '--save') ||
  !Number.isInteger(jobs) ||
  jobs < 1
) {
  console.error(unknownKind !== undefined ? `unknown kind ${unknownKind}: the kinds are ${KINDS.join(', ')}` : USAGE);
  process.exit(2);
}
if (mode === '--compare') process.exit(compareFolders(resolve(dir), resolve(other), kinds) ? 1 : 0);
if (!existsSync(cli)) {
  console.error(`${cli} is missing: run npm run build first`);
  process.exit(2);
}

const folder = resolve(dir);
if (mode === '--save') mkdirSync(folder, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), 'agent-trace-compare-'));
let compared = 0;
let differ = 0;
const queue = outputs(cli, kinds);
/** One worker: takes the next output, makes it in its own scratch folder, saves or compares it. Results are reported as they come. */
async function worker(index) {
  const own = join(scratch, `job${index}`);
  mkdirSync(own);
  for (let next = queue.next(); !next.done; next = queue.next()) {
    const [name, make] = next.value;
    const file = join(folder, name);
    if ((savedOnly || resume) && existsSync(file) === resume) continue;
    const text = (await make(own)).replaceAll(own, '<scratch>');
    compared += 1;
    if (mode === '--save') writeFileSync(file, text);
    else {
      const saved = existsSync(file) ? readFileSync(file, 'utf8') : null;
      if (saved !== text) {
        differ += 1;
        report(name, saved, text);
      }
    }
  }
}
try {
  await Promise.all(Array.from({ length: jobs }, (_, i) => worker(i)));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(
  mode === '--save'
    ? `saved ${compared} outputs to ${folder}`
    : `${compared - differ} of ${compared} outputs byte-identical${differ ? `, ${differ} differ` : ''}`,
);
process.exit(differ ? 1 : 0);
