import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, fixtures, repoRoot, SPOTTER } from '../../support/helpers';

// `agent-trace calibrate` on real AIPerf runs and the hand-made vllm bench result, and
// `simulate --calibration` using what it wrote.

const cli = join(repoRoot, 'dist/cli.js');
const scratch = mkdtempSync(join(tmpdir(), 'agent-trace-cli-calibrate-'));
const aiperf = join(fixtures, 'aiperf/qwen_concurrency1.profile_export.jsonl');

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

before(() => ensureBuilt(cli));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe('agent-trace calibrate', () => {
  it('prints the fit, what it cannot tell apart, the worst residuals and the simulate flags', () => {
    const r = run('calibrate', aiperf, '--top', '3');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /10 requests, 2,000 intervals between token arrivals/);
    assert.match(r.stdout, /per decoding sequence +not identified: every step decoded at most one request/);
    assert.match(r.stdout, /Worst residuals \(3 of 2,000\)/);
    // The mean of the file's 1,990 gaps between tokens (each request ran alone): 18.082 ms.
    assert.match(r.stdout, /fixed per step +18\.082 ms/);
    assert.match(r.stdout, /agent-trace simulate FILE --step-fixed-ms 18\.08\d+ --prefill-us-per-token/);
  });

  it('-o writes the JSON that simulate --calibration runs with; a step flag given beside it wins', () => {
    const cal = join(scratch, 'cal.json');
    const r = run('calibrate', aiperf, '-o', cal, '--json');
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(readFileSync(cal, 'utf8'));
    assert.deepEqual(JSON.parse(r.stdout), doc);
    const flags: string[] = doc.simulateFlags;
    assert.equal(flags.length, 8);
    const base = ['simulate', SPOTTER, '--replicas', '2', '--json'];
    const withFile = run(...base, '--calibration', cal);
    const withFlags = run(...base, ...flags);
    assert.equal(withFile.code, 0, withFile.stderr);
    assert.ok(withFile.stdout === withFlags.stdout, 'the same run as with the printed flags');
    // The calibration changes the run: its steps are shorter than the default preset's.
    const preset = run(...base);
    assert.notEqual(JSON.parse(withFile.stdout).scenario.makespanS, JSON.parse(preset.stdout).scenario.makespanS);
    const replaced = [...flags];
    replaced[1] = '5';
    const both = run(...base, '--calibration', cal, '--step-fixed-ms', '5');
    assert.equal(both.code, 0, both.stderr);
    assert.ok(both.stdout === run(...base, ...replaced).stdout, 'the flag given beside the calibration wins');
  });

  it('reads a vllm bench result, leaving out the failed request', () => {
    const r = run(
      'calibrate',
      join(fixtures, 'vllm-bench/openai-infqps-concurrency2-Qwen3-8B-20260315-101500.json'),
      '--json',
    );
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.format, 'vllm-bench');
    assert.equal(doc.requests, 3);
    assert.equal(doc.skippedRequests, 1);
  });

  it('says what is wrong with a file it cannot use, and with a calibration that is not one', () => {
    const notResults = run('calibrate', SPOTTER);
    assert.equal(notResults.code, 1);
    assert.match(notResults.stderr, /neither an AIPerf profile_export\.jsonl nor a vllm bench result/);
    const bad = join(scratch, 'bad.json');
    writeFileSync(bad, JSON.stringify({ model: { stepFixedMs: -1 } }));
    const r = run('simulate', SPOTTER, '--calibration', bad);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /not a calibration \(no "model\.stepFixedMs" from 0 to 1,000,000\)/);
    // Past the engine's bounds is not a calibration either (1e308 µs per token once made the clock infinite).
    writeFileSync(
      bad,
      JSON.stringify({ model: { stepFixedMs: 1, prefillUsPerToken: 1e308, kvReadNsPerToken: 0, decodeUsPerSeq: 0 } }),
    );
    assert.match(
      run('simulate', SPOTTER, '--calibration', bad).stderr,
      /no "model\.prefillUsPerToken" from 0 to 1,000,000/,
    );
    assert.equal(run('calibrate').code, 2);
  });
});
