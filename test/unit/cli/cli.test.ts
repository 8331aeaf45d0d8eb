import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { fixtures, repoRoot, SPOTTER } from '../helpers';

const cli = join(repoRoot, 'dist/cli.js');

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('agent-trace CLI (the built dist/cli.js)', () => {
  before(() => {
    if (!existsSync(cli)) execFileSync(process.execPath, ['esbuild.mjs'], { cwd: repoRoot, stdio: 'inherit' });
  });

  it('analyze --json follows the documented contract', () => {
    const r = run('analyze', SPOTTER, '--json');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(report), ['format', 'detection', 'limitations', 'problem', 'sessions', 'diagnostics']);
    assert.match(report.detection, /records look like Claude Code session log/);
    assert.equal(report.limitations.length, 1);
    assert.equal(report.format, 'claude-code');
    const main = report.sessions[0];
    assert.deepEqual(Object.keys(main), ['id', 'parentId', 'role', 'agent', 'model', 'llmCalls', 'userTurns', 'tokens', 'tokensSource', 'cacheHitRate', 'rawInputToOutput', 'appendToOutput']);
    assert.deepEqual(Object.keys(main.tokens), ['input', 'cached', 'appended', 'cacheWrite', 'output']);
    assert.deepEqual(Object.keys(main.appendToOutput), ['mean', 'median', 'aggregate']);
    assert.equal(main.llmCalls, 149);
    assert.equal(main.tokens.cached, 11560832);
    assert.equal(report.sessions[1].parentId, main.id);
    // Diagnostic lines are 1-based in the contract: the undercount note sits on file line 141.
    const note = report.diagnostics.find((d: { message: string }) => /output_tokens/.test(d.message));
    assert.equal(note.line, 141);
  });

  it('analyze prints a readable report', () => {
    const r = run('analyze', SPOTTER);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /LLM calls 149, user turns 2/);
    assert.match(r.stdout, /cache hit rate \(Σcached\/Σinput\)\s+98\.4%/);
    assert.match(r.stdout, /sub-agent aac57f5/);
  });

  it('exit 1 with the message for a file that is not a trace; null fields in JSON', () => {
    const r = run('analyze', join(fixtures, 'bad-input/empty.trace.jsonl'), '--json');
    assert.equal(r.code, 1);
    const report = JSON.parse(r.stdout);
    assert.equal(report.format, null);
    assert.match(report.problem, /empty/);
  });

  it('exit 2 and usage for bad arguments; exit 1 for a missing file', () => {
    assert.equal(run('frobnicate', 'x').code, 2);
    const bad = run('analyze', 'x', '--format', 'nope');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown --format "nope"; one of: agent-trace, claude-code/);
    const missing = run('analyze', join(fixtures, 'no-such-file.jsonl'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no such file/);
  });

  it('convert writes a canonical trace that analyzes to the same figures', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-trace-cli-'));
    try {
      const out = join(dir, 'spotter.trace.jsonl');
      const c = run('convert', SPOTTER, '-o', out);
      assert.equal(c.code, 0, c.stderr);
      assert.match(readFileSync(out, 'utf8').split('\n')[0]!, /"type":"header","format":"agent-trace","version":1/);
      const a = JSON.parse(run('analyze', SPOTTER, '--json').stdout);
      const b = JSON.parse(run('analyze', out, '--json').stdout);
      assert.equal(b.format, 'agent-trace');
      assert.deepEqual(b.sessions, a.sessions);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
