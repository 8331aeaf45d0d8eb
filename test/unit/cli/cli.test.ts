import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ensureBuilt, fixtures, repoRoot, SPOTTER } from '../../support/helpers';

const cli = join(repoRoot, 'dist/cli.js');

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('agent-trace CLI (the built dist/cli.js)', () => {
  before(() => ensureBuilt(cli));

  it("the README's first command: npx agent-trace analyze on the bundled sample (the bin must be executable)", () => {
    const r = spawnSync('npx', ['--no-install', 'agent-trace', 'analyze', 'samples/claude-code-sessions.trace.jsonl'], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    // Counted from the sample's llm_call records: 48 calls; Σcached 4,997,060 / Σinput 5,062,122 = 98.7%.
    assert.match(r.stdout, /session ae4a77f8-aedd-4bc1-888f-c94edc91af04\n[^\n]*\n {2}LLM calls 48, user turns 2\n/);
    assert.match(r.stdout, /input 5,062,122 {2}cached 4,997,060/);
    assert.match(r.stdout, /cache hit rate \(Σcached\/Σinput\) +98\.7%/);
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
    assert.deepEqual(Object.keys(main), [
      'id', 'parentId', 'role', 'agent', 'model', 'llmCalls', 'userTurns', 'tokens', 'tokensSource', 'cacheHitRate', 'rawInputToOutput', 'appendToOutput',
      'outputPerCall', 'toolCalls', 'retryLoops', 'retryLoopSummary', 'missCauses', 'prefillShare', 'intentByQuartile', 'context', 'compactions',
    ]);
    assert.deepEqual(Object.keys(main.tokens), ['input', 'cached', 'appended', 'cacheWrite', 'output']);
    assert.deepEqual(Object.keys(main.appendToOutput), ['mean', 'median', 'p90', 'aggregate']);
    // The tool-call and retry-loop fields, with figures from test/reference/claude_retry_loops.py and hand counts.
    assert.deepEqual(Object.keys(main.toolCalls), ['total', 'failed', 'byTool', 'toolTimeMs', 'llmTimeMs']);
    assert.deepEqual([main.toolCalls.total, main.toolCalls.failed, main.toolCalls.byTool.Edit.total, main.toolCalls.byTool.Edit.failed], [162, 11, 45, 2]);
    assert.deepEqual(main.retryLoops, [
      {
        tool: 'Bash', target: 'git add && git commit', attempts: 7, callsSpanned: 32, escaped: false, file: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl',
        firstLine: 1209, lastLine: 1463, firstError: main.retryLoops[0].firstError, wastedTokens: 7550, carryForwardTokens: 62358,
      },
    ]);
    assert.match(main.retryLoops[0].firstError, /^Pre-commit validation failed/);
    assert.deepEqual(main.missCauses, { 'first-call': 0, 'subagent-start': 0, compaction: 1, 'idle-gap': 0, 'prefix-change': 1, unexplained: 0 });
    assert.equal(main.prefillShare.estimated, true);
    assert.equal(main.intentByQuartile.length, 4);
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
    assert.match(r.stdout, /cache hit rate \(Σcached\/Σinput\)\s+98\.4%\s+\[within published 84\.6%–99\.5%\]/);
    assert.match(r.stdout, /retry loops: 4\.7% of this session's calls were spent in 1 retry loop/);
    assert.match(r.stdout, /Bash on git add && git commit: 7 attempts over 32 calls, gave up/);
    assert.match(r.stdout, /cache misses: 1 compaction, 1 prefix change \(model switch\)/);
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
    assert.match(run('analyze', 'x', '--min-loop-attempts', '0').stderr, /--min-loop-attempts needs a whole number > 0, not "0"/);
    const bad = run('analyze', 'x', '--format', 'nope');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown --format "nope"; one of: agent-trace, claude-code/);
    const missing = run('analyze', join(fixtures, 'no-such-file.jsonl'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no such file/);
  });

  it('--min-loop-attempts and --cache-ttl-min change the analysis', () => {
    const loops = (args: string[]) => JSON.parse(run('analyze', SPOTTER, '--json', ...args).stdout).sessions[0].retryLoops.length;
    assert.equal(loops([]), 1);
    // The 7-attempt loop is the only run of 3 or more; at 8 there is none.
    assert.equal(loops(['--min-loop-attempts', '8']), 0);
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
      // Lines differ by design: a loop points at the canonical file's own tool_call lines.
      type Loop = { file: string; firstLine: number; lastLine: number };
      const placeless = (sessions: Array<{ retryLoops: Loop[] }>) =>
        sessions.map((s) => ({ ...s, retryLoops: s.retryLoops.map(({ file: _f, firstLine: _a, lastLine: _b, ...rest }) => rest) }));
      assert.deepEqual(placeless(b.sessions), placeless(a.sessions));
      const loop: Loop = b.sessions[0].retryLoops[0];
      const record = JSON.parse(readFileSync(out, 'utf8').split('\n')[loop.firstLine - 1]!);
      assert.deepEqual([loop.file, record.type, record.name, record.isError], ['spotter.trace.jsonl', 'tool_call', 'Bash', true]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
