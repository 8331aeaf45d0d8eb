#!/usr/bin/env node
// Before/after check for refactors of the CLI (the simulate grammar, the engine parameters,
// the reports): runs the built CLI with a fixed list of command lines on the committed
// samples (`simulate` with every policy, preset, fleet, sweep and refusal it has, `--help`,
// `analyze` and `convert`) and writes each one's stdout, stderr and exit status into a
// folder; `--compare A B` then lists the command lines whose output differs by a byte.
//
//   node scripts/cliSnapshot.mjs --out /tmp/before      (with the old build)
//   node scripts/cliSnapshot.mjs --out /tmp/after       (with the new build)
//   node scripts/cliSnapshot.mjs --compare /tmp/before /tmp/after
//
// `--cli PATH` runs another build's CLI (another checkout's dist/cli.js). Reader changes
// have their own, wider check over every sample: scripts/analyzeSnapshot.mjs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Agent traces and workloads (closed loop) and a block-hash trace (open loop), all committed. */
const AGENT = ['test/fixtures/claude-code/edit-retry-loop.jsonl', 'test/fixtures/codex/tracelab-agents-md-0.114.jsonl', 'samples/claude-code-sessions.trace.jsonl'];
const WORKLOADS = ['test/fixtures/workloads/growing-session.workload.json', 'test/fixtures/workloads/two-sessions-small-cache.workload.json'];
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
  ['--policy', 'admission-cap', '--initial-cap', '4', '--hit-rate-floor', '0.7', '--backoff', '0.6', '--window-s', '10', '--replicas', '8'],
  ['--offload-tokens', '100000', '--offload-gbps', '25', '--replicas', '8', '--capacity-tokens', '20000'],
  ['--gpu', 'h200', '--model', 'llama-3.1-8b', '--replicas', '4'],
  ['--gpu', 'h100', '--model', 'qwen3-32b', '--replicas', '4'],
  ['--gpu-memory-gib', '96', '--model', 'qwen3-30b-a3b'],
  ['--gpu', 'h100', '--gpu-memory-gib', '96', '--model', 'llama-3.1-70b-fp8'],
  ['--capacity-tokens', '30000', '--step-fixed-ms', '10', '--prefill-us-per-token', '50', '--kv-read-ns-per-token', '40', '--kv-bytes-per-token', '131072', '--decode-us-per-seq', '3'],
  ['--block-size', '32', '--max-batched-tokens', '4096', '--max-num-seqs', '16', '--max-model-len', '200000', '--free-order', 'legacy'],
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

function commands() {
  const list = [['simulate', '--help'], ['analyze', '--help'], ['convert', '--help']];
  for (const file of AGENT) {
    list.push(['analyze', file], ['analyze', file, '--json'], ['convert', file]);
    for (const v of VARIANTS) list.push(['simulate', file, ...v], ['simulate', file, ...v, '--json']);
  }
  for (const w of WORKLOADS) for (const v of VARIANTS.slice(0, 12)) list.push(['simulate', '--workload', w, ...v, '--json']);
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

/** A file name for a command line. */
function slug(argv, i) {
  return `${String(i).padStart(3, '0')}-${argv.join('_').replace(/[^\w.=-]+/g, '_').slice(0, 120)}`;
}

function snapshot(out, cli) {
  mkdirSync(out, { recursive: true });
  const list = commands();
  list.forEach((argv, i) => {
    const r = spawnSync(process.execPath, [cli, ...argv], { cwd: root, encoding: 'utf8', maxBuffer: 256 * 2 ** 20, env: { ...process.env, NO_COLOR: '1' } });
    writeFileSync(join(out, `${slug(argv, i)}.txt`), `$ agent-trace ${argv.join(' ')}\nexit ${r.status}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`);
  });
  console.log(`${list.length} command lines written to ${out}`);
}

function compare(a, b) {
  const names = [...new Set([...readdirSync(a), ...readdirSync(b)])].sort();
  let differ = 0;
  for (const name of names) {
    const x = existsSync(join(a, name)) ? readFileSync(join(a, name), 'utf8') : null;
    const y = existsSync(join(b, name)) ? readFileSync(join(b, name), 'utf8') : null;
    if (x === y) continue;
    differ += 1;
    console.log(`differs: ${name}${x === null ? ' (only after)' : y === null ? ' (only before)' : ''}`);
  }
  console.log(`${names.length - differ} identical, ${differ} differ`);
  return differ === 0 ? 0 : 1;
}

const args = process.argv.slice(2);
const at = (flag) => {
  const i = args.indexOf(flag);
  return i < 0 ? null : (args[i + 1] ?? null);
};
if (args[0] === '--compare' && args.length === 3) process.exit(compare(args[1], args[2]));
const out = at('--out');
if (!out) {
  console.error('usage: node scripts/cliSnapshot.mjs --out DIR [--cli dist/cli.js] | --compare BEFORE AFTER');
  process.exit(2);
}
snapshot(resolve(out), resolve(at('--cli') ?? join(root, 'dist/cli.js')));
