import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { deepText, HOSTILE_DIR, PAYLOADS, RAW_CONTROL } from '../../support/hostileCorpus';
import { EDIT_LOOP, ensureBuilt, fixtures, repoRoot } from '../../support/helpers';

// The share commands (report, redact, export, compare) on hostile input, as the issue's probe
// ran them: a trace whose file name and session ids carry terminal escapes, bidi overrides
// and command links; replica counts no machine can hold; replay results that are broken,
// deep, a FIFO or full of __proto__ keys; a what-if document with absurd values. Each
// command prints nothing a terminal acts on and ends with a clear message (file and line),
// never a crash, a hang or a stack.

const cli = join(repoRoot, 'dist/cli.js');
const AIPERF = join(fixtures, 'aiperf/qwen_concurrency1.profile_export.jsonl');

function run(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Nothing a terminal would act on, and no stack trace (a crash). */
function assertInert(r: { stdout: string; stderr: string }, where: string): void {
  assert.doesNotMatch(r.stdout, RAW_CONTROL, `${where}: stdout`);
  assert.doesNotMatch(r.stderr, RAW_CONTROL, `${where}: stderr`);
  assert.doesNotMatch(r.stderr, /^\s+at .+:\d+:\d+\)?$/m, `${where}: a stack trace`);
}

describe('agent-trace report, redact, export, compare on hostile input', () => {
  let dir: string;
  let hostile: string;
  before(() => {
    ensureBuilt(cli);
    dir = mkdtempSync(join(tmpdir(), 'share-hostile-'));
    // The canonical payload trace (session ids with command links and bidi) under a name with terminal escapes.
    // (PAYLOADS.ansi holds a URL, whose slashes a file name cannot.)
    hostile = join(dir, `x\u001b[2J\u001b]0;pwned\u0007\u009b31m${PAYLOADS.bidi}.trace.jsonl`);
    copyFileSync(join(HOSTILE_DIR, 'payloads.trace.jsonl'), hostile);
  });

  it('export, redact, report and compare print the hostile file name and session ids with their escapes visible', () => {
    const runs = {
      export: run('export', hostile, '--to', 'aiperf', '-o', join(dir, 'e.jsonl')),
      exportSession: run(
        'export',
        hostile,
        '--to',
        'aiperf',
        '-o',
        join(dir, 'e2.jsonl'),
        '--session',
        `nope${PAYLOADS.ansi}`,
      ),
      redact: run('redact', hostile, '-o', join(dir, 'r.jsonl')),
      report: run('report', hostile, '-o', join(dir, 'r.html')),
      compare: run('compare', hostile, AIPERF),
      compareJson: run('compare', hostile, AIPERF, '--json'),
    };
    for (const [name, r] of Object.entries(runs)) assertInert(r, name);
    assert.equal(runs.export.code, 0, runs.export.stderr);
    // The suggested compare command names the file with its escape sequences shown, not sent.
    assert.ok(runs.export.stderr.includes('\\x1b[2J\\x1b]0;pwned\\x07'), runs.export.stderr);
    assert.equal(runs.exportSession.code, 1);
    assert.match(runs.exportSession.stderr, /no session "nope\\x1b\[2J/);
    assert.ok(runs.exportSession.stderr.includes('sub \\u202egnp.exe'), runs.exportSession.stderr);
    assert.equal(runs.redact.code, 0, runs.redact.stderr);
    assert.equal(runs.report.code, 0, runs.report.stderr);
    // The JSON is still JSON, its strings the file's own (escaped as JSON, read back the same).
    const json = JSON.parse(runs.compareJson.stdout) as { input: { file: string } };
    assert.equal(json.input.file, hostile);
  });

  it("refuses replica counts and staggers outside the simulator's bounds by name, at once (1e12 replicas ran until killed)", () => {
    for (const [flag, value] of [
      ['--replicas', '1000000000000'],
      ['--replicas', '1e12'],
      ['--replicas', '0'],
      ['--stagger-s', '1e308'],
      ['--stagger-s', '-1'],
    ] as const) {
      for (const command of ['export', 'compare'] as const) {
        const args =
          command === 'export'
            ? ['export', EDIT_LOOP, '--to', 'aiperf', '-o', join(dir, 'x.jsonl'), flag, value]
            : ['compare', EDIT_LOOP, AIPERF, flag, value];
        const r = run(...args);
        assert.equal(r.code, 2, `${command} ${flag} ${value}: ${r.stderr}`);
        assert.match(
          r.stderr,
          new RegExp(`^agent-trace: ${flag} needs a (whole )?number from \\d`),
          `${command} ${flag} ${value}`,
        );
      }
    }
  });

  it('compare: replay results that are broken, deep, not files or full of __proto__ keys get a message with the file and the line', () => {
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(broken, '{"metadata": {"x_request_id": "a"},\n');
    const deep = join(dir, 'deep.jsonl');
    writeFileSync(deep, `{"metadata": {"x_request_id": "a"}, "metrics": ${deepText(100_000)}}\n`);
    const b = run('compare', EDIT_LOOP, broken);
    assert.equal(b.code, 1);
    assert.ok(b.stderr.startsWith(`${broken}: not AIPerf's profile_export.jsonl or a vllm bench result (`), b.stderr);
    assert.ok(b.stderr.includes(`${broken}:1: `), b.stderr);
    assert.doesNotMatch(b.stderr, /Supported: /);
    const d = run('compare', EDIT_LOOP, deep);
    assert.equal(d.code, 1);
    assert.ok(d.stderr.includes(`${deep}:1: A value on this line nests deeper than 512 levels`), d.stderr);
    // A FIFO and a folder: refused at once (a plain read of a FIFO waits forever).
    const fifo = join(dir, 'results.fifo.jsonl');
    execFileSync('mkfifo', [fifo]);
    const f = run('compare', EDIT_LOOP, fifo);
    assert.equal(f.code, 1);
    assert.match(f.stderr, /results\.fifo\.jsonl is a named pipe \(FIFO\), not a regular file; not read/);
    mkdirSync(join(dir, 'results-dir.jsonl'));
    assert.match(run('compare', EDIT_LOOP, join(dir, 'results-dir.jsonl')).stderr, /is a folder, not a regular file/);
    for (const r of [b, d, f]) assertInert(r, 'compare');
  });

  it('compare: results with __proto__ / constructor ids, 1e308 timings and one deep line still compare, and say which line was left out', () => {
    const lines = readFileSync(AIPERF, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    const poisoned = lines.map((l, i) => {
      const r = JSON.parse(l) as { metadata: Record<string, unknown>; metrics: Record<string, { value: unknown }> };
      if (i === 0) r.metadata['conversation_id'] = '__proto__';
      if (i === 1) r.metadata['x_request_id'] = 'constructor';
      if (i === 2) r.metrics['time_to_first_token']!.value = 1e308;
      return JSON.stringify(r);
    });
    poisoned.splice(3, 0, `{"metadata": {"x_request_id": "deep"}, "metrics": ${deepText(5000)}}`);
    const file = join(dir, 'proto.profile_export.jsonl');
    writeFileSync(file, `${poisoned.join('\n')}\n`);
    const r = run('compare', EDIT_LOOP, file, '--json');
    assertInert(r, 'compare');
    // Nothing joins (another trace's results), so the exit status is 1: but with the comparison, not a crash.
    assert.equal(r.code, 1, r.stderr);
    const out = JSON.parse(r.stdout) as { matched: number; input: { resultsFormat: string } };
    assert.equal(out.input.resultsFormat, 'aiperf');
    assert.match(
      r.stderr,
      /^note: 1 line of .*proto\.profile_export\.jsonl left out: line 4: Line nests deeper than 512 levels/m,
    );
    assert.equal(({} as { conversation_id?: unknown }).conversation_id, undefined);
  });

  it('--whatif: absurd replicas, a FIFO, deep nesting and broken JSON are refused with the field or the line', () => {
    const doc = (replicas: unknown): string =>
      JSON.stringify({
        input: {
          workloadKind: 'sessions',
          replicas: { replicas, staggerS: 0 },
          params: { capacityTokens: 4096, blockSizeTokens: 16, policy: 'vllm-lru' },
        },
        scenario: {
          policy: 'vllm-lru',
          replicas: 1,
          capacityTokens: 4096,
          requests: 1,
          rejectedRequests: 0,
          promptTokens: 1,
          prefillTokens: 1,
          recomputedPrefillTokens: 0,
          offloadHitTokens: 0,
          preemptions: 0,
          makespanS: 1,
          steps: 1,
          slowdown: { mean: 1, max: 1 },
        },
      });
    const huge = join(dir, 'huge.whatif.json');
    writeFileSync(huge, doc(1e12));
    const h = run('compare', EDIT_LOOP, AIPERF, '--whatif', huge);
    assert.equal(h.code, 2, h.stderr);
    assert.match(
      h.stderr,
      /is not a what-if export \(the panel's Export JSON\): input\.replicas\.replicas should be a whole number from 1 to 100,000/,
    );
    const fifo = join(dir, 'w.fifo.json');
    execFileSync('mkfifo', [fifo]);
    const f = run('report', EDIT_LOOP, '-o', join(dir, 'w.html'), '--whatif', fifo);
    assert.equal(f.code, 2, f.stderr);
    assert.match(f.stderr, /--whatif .*w\.fifo\.json: w\.fifo\.json is a named pipe \(FIFO\), not a regular file/);
    const deep = join(dir, 'deep.whatif.json');
    writeFileSync(deep, `{"input":\n${deepText(100_000)}}`);
    assert.match(
      run('compare', EDIT_LOOP, AIPERF, '--whatif', deep).stderr,
      /--whatif .*deep\.whatif\.json: nests deeper than 512 levels at line 2/,
    );
    const broken = join(dir, 'broken.whatif.json');
    writeFileSync(broken, '{\n"input": {\n}\n,,\n}');
    assert.match(
      run('report', EDIT_LOOP, '-o', join(dir, 'b.html'), '--whatif', broken).stderr,
      /--whatif .*broken\.whatif\.json: not valid JSON at line 4/,
    );
  });
});
