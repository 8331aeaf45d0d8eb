// `npm test`: every check, in the order that fails fastest. Each stage's own output is
// shown as it runs; the last line sums the test counts of all stages:
//   "N passed, N failed"
import { spawn } from 'node:child_process';

const stages = [
  { name: 'typecheck', cmd: ['npm', 'run', '--silent', 'typecheck'] },
  { name: 'lint', cmd: ['npm', 'run', '--silent', 'lint'] },
  { name: 'package', cmd: ['npm', 'run', '--silent', 'package'] },
  { name: 'unit', cmd: ['node', 'scripts/runUnitTests.mjs', 'test/unit'], counts: 'node' },
  {
    name: 'engines against the vLLM oracle (Python)',
    cmd: ['node', 'scripts/runUnitTests.mjs', 'test/oracle'],
    counts: 'node',
  },
  { name: 'browser (Chromium)', cmd: ['node', 'scripts/runUnitTests.mjs', 'test/browser'], counts: 'node' },
  { name: 'extension host (VS Code)', cmd: ['node', 'scripts/runHostTests.mjs'], counts: 'mocha' },
  { name: 'UI end-to-end (VS Code + Chromium)', cmd: ['node', 'scripts/runUnitTests.mjs', 'test/e2e'], counts: 'node' },
];

/** Runs a command, echoing its output, and returns its exit code and output. */
function run(cmd) {
  return new Promise((resolve) => {
    const child = spawn(cmd[0], cmd.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      process.stdout.write(d);
    });
    child.stderr.on('data', (d) => process.stderr.write(d));
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

/** Test counts from a stage's output: node's runner ("ℹ pass N") or the mocha runner ("N passed, N failed"). */
function counts(kind, out) {
  if (kind === 'node') {
    const pass = /^ℹ pass (\d+)$/m.exec(out);
    const fail = /^ℹ fail (\d+)$/m.exec(out);
    return pass && fail ? { passed: Number(pass[1]), failed: Number(fail[1]) } : null;
  }
  const m = /^(\d+) passed, (\d+) failed/m.exec(out);
  return m ? { passed: Number(m[1]), failed: Number(m[2]) } : null;
}

const started = Date.now();
let passed = 0;
let failed = 0;
const summary = [];
for (const stage of stages) {
  const t0 = Date.now();
  console.log(`\n=== ${stage.name} ===`);
  const { code, out } = await run(stage.cmd);
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  if (stage.counts) {
    const c = counts(stage.counts, out) ?? { passed: 0, failed: 1 };
    // A stage that crashed before reporting still counts as a failure.
    if (code !== 0 && c.failed === 0) c.failed = 1;
    passed += c.passed;
    failed += c.failed;
    summary.push(`${stage.name}: ${c.passed} passed, ${c.failed} failed (${seconds} s)`);
  } else {
    summary.push(`${stage.name}: ${code === 0 ? 'ok' : `FAILED (exit ${code})`} (${seconds} s)`);
    if (code !== 0) {
      failed += 1;
      break;
    }
  }
}
console.log('\n=== summary ===');
for (const line of summary) console.log(line);
console.log(`total time ${((Date.now() - started) / 1000).toFixed(0)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
