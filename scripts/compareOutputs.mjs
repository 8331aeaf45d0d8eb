// Before/after check for refactors: runs the built CLI (dist/cli.js) on every sample trace
// and keeps each output byte for byte, so a change that must not alter a figure can be
// checked against the build before it.
//
//   npm run build && node scripts/compareOutputs.mjs --save /tmp/before     (on the old build)
//   npm run build && node scripts/compareOutputs.mjs --against /tmp/before  (on the new one)
//   … --cli PATH    runs another build of the CLI instead of dist/cli.js
//   … --kinds LIST  only these outputs (analyze.json,analyze.txt,convert.jsonl,simulate.json)
//   … --saved-only  with --against: compare only the outputs DIR holds (a save cut short)
//
// For each file of samples/, test/fixtures/ and the shared traces (AGENT_TRACE_SHARED_TRACES,
// when set to a folder): `analyze --json`, the text report, `convert` and `simulate --json`
// (stdout, stderr and exit code each). Exits 1 and names the outputs that differ.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const argv = process.argv.slice(2);
const cliAt = argv.indexOf('--cli');
const cli = cliAt >= 0 ? argv.splice(cliAt, 2)[1] : join(root, 'dist/cli.js');
const savedOnlyAt = argv.indexOf('--saved-only');
const savedOnly = savedOnlyAt >= 0 && argv.splice(savedOnlyAt, 1).length > 0;
const kindsAt = argv.indexOf('--kinds');
const kinds = kindsAt >= 0 ? argv.splice(kindsAt, 2)[1].split(',') : null;
const [mode, dir] = argv;
if ((mode !== '--save' && mode !== '--against') || !dir) {
  console.error('usage: node scripts/compareOutputs.mjs --save DIR | --against DIR');
  process.exit(2);
}
if (!existsSync(cli)) {
  console.error(`${cli} is missing: run npm run build first`);
  process.exit(2);
}

/** Every file under `folder`, but the licences and notes beside the samples. */
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

const shared = process.env.AGENT_TRACE_SHARED_TRACES;
const traces = [...filesUnder(join(root, 'samples')), ...filesUnder(join(root, 'test/fixtures')), ...(shared && shared !== 'none' ? filesUnder(shared) : [])];
const scratch = mkdtempSync(join(tmpdir(), 'agent-trace-compare-'));

function run(args) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 30, env: { ...process.env, NO_COLOR: '1' } });
  return `exit ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

let differ = 0;
let compared = 0;
try {
  for (const trace of traces) {
    if (statSync(trace).size > 64 * 2 ** 20) continue;
    const rel = relative(shared && trace.startsWith(shared) ? shared : root, trace);
    const name = (shared && trace.startsWith(shared) ? 'shared/' : '') + rel;
    const out = join(scratch, 'out.trace.jsonl');
    const cases = {
      'analyze.json': () => run(['analyze', '--json', trace]),
      'analyze.txt': () => run(['analyze', trace]),
      'convert.jsonl': () => {
        rmSync(out, { force: true });
        const said = run(['convert', trace, '-o', out]);
        return `${said}\n--- file\n${existsSync(out) ? readFileSync(out, 'utf8') : '(none)'}`;
      },
      'simulate.json': () => run(['simulate', '--json', trace]),
    };
    for (const [kind, make] of Object.entries(cases)) {
      if (kinds && !kinds.includes(kind)) continue;
      if (savedOnly && !existsSync(join(dir, `${name.replaceAll('/', '__')}.${kind}`))) continue;
      const text = make().replaceAll(scratch, '<scratch>');
      const file = join(dir, `${name.replaceAll('/', '__')}.${kind}`);
      compared += 1;
      if (mode === '--save') {
        mkdirSync(dir, { recursive: true });
        writeFileSync(file, text);
      } else if (!existsSync(file) || readFileSync(file, 'utf8') !== text) {
        differ += 1;
        console.log(`differs: ${name} (${kind})`);
      }
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(mode === '--save' ? `saved ${compared} outputs of ${traces.length} traces to ${dir}` : `${compared - differ} of ${compared} outputs byte-identical (${traces.length} traces)${differ ? `, ${differ} differ` : ''}`);
process.exit(differ ? 1 : 0);
