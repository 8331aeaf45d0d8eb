import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ensureBuilt, fixtures, repoRoot } from '../../support/helpers';

const cli = join(repoRoot, 'dist/cli.js');
const EXCERPT = join(fixtures, 'claude-code/context-excerpt.jsonl');

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('agent-trace context (the built dist/cli.js)', () => {
  before(() => ensureBuilt(cli));

  it('prints the anatomy with the input dollars of the bill', () => {
    const r = run('context', EXCERPT);
    assert.equal(r.code, 0, r.stderr);
    // Input dollars of the six calls at claude-opus-4-6's list rates ($5 input, $0.50 read, $6.25
    // 5-minute write per MTok), summed by test/reference/context_anatomy.py: $0.57435425.
    assert.match(r.stdout, /^Context anatomy of context-excerpt\.jsonl \(claude-code\): 1 session, 6 calls$/m);
    assert.match(r.stdout, /^Input dollars: \$0\.57 /m);
    assert.match(
      r.stdout,
      /^Largest contributors\n {2}system prompt and tool definitions \(not logged\): \d+(\.\d)?k tokens in context for 6 calls, \$0\.\d\d \(estimated\)$/m,
    );
    assert.match(r.stdout, /^Suggestions\n {2}- /m);
    assert.match(r.stdout, /^ {4}how: /m);
  });

  it('--json follows the documented contract', () => {
    const r = run('context', EXCERPT, '--json');
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(doc), [
      'contextVersion',
      'file',
      'format',
      'notes',
      'sessions',
      'totals',
      'contributors',
      'suggestions',
    ]);
    assert.equal(doc.contextVersion, 1);
    assert.deepEqual(Object.keys(doc.sessions[0]), ['id', 'role', 'model', 'content', 'calibration', 'notes', 'calls']);
    assert.deepEqual(Object.keys(doc.sessions[0].calls[0]), [
      'index',
      'loggedInput',
      'estimatedInput',
      'loggedGrowth',
      'estimatedGrowth',
      'inputUsd',
      'byKind',
    ]);
    assert.ok(Math.abs(doc.totals.inputUsd - 0.57435425) < 1e-9);
    // The calls' logged inputs, from the log's usage: input + cache read + cache write.
    assert.deepEqual(
      doc.sessions[0].calls.map((c: { loggedInput: number }) => c.loggedInput),
      [26_010, 27_539, 28_616, 45_263, 46_012, 46_197],
    );
  });

  it('says what is wrong: a missing file, an unknown option', () => {
    const missing = run('context', join(fixtures, 'no-such-file.jsonl'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no such file/);
    const bad = run('context', EXCERPT, '--nope');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown option --nope\nRun "agent-trace context --help" for usage\./);
  });
});
