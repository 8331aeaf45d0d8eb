import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createFakeHome, fakeHomeRoots } from '../../support/fakeHome.mjs';
import { ensureBuilt, repoRoot } from '../../support/helpers';

// `agent-trace sessions` and `agent-trace analyze DIR` on a fake home of real sessions
// (test/support/fakeHome.mjs); the figures are the reader tests' independent ones.

const cli = join(repoRoot, 'dist/cli.js');
const scratch = mkdtempSync(join(tmpdir(), 'agent-trace-cli-sessions-'));
const home = createFakeHome(join(scratch, 'home'));
const roots = fakeHomeRoots(home);
const index = join(scratch, 'index.sqlite');

function run(...args: string[]) {
  // HOME points at the fake home too, so nothing of the machine's own sessions can be listed.
  const r = spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    env: { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: '', CODEX_HOME: '' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const rootArgs = ['--root', `claude-code=${roots.claudeCode}`, '--root', `codex=${roots.codex}`];

after(() => rmSync(scratch, { recursive: true, force: true }));

describe('agent-trace sessions', () => {
  before(() => ensureBuilt(cli));

  it('--json lists every session and sub-agent with the figures of the view', () => {
    const r = run('sessions', '--json', '--index', index, ...rootArgs);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { sessions: Array<Record<string, unknown>> };
    assert.equal(out.sessions.length, 6);
    const spotter = out.sessions.find((s) => s['id'] === 'ae4a77f8-aedd-4bc1-888f-c94edc91af04')!;
    assert.deepEqual(
      [spotter['agent'], spotter['llmCalls'], spotter['userTurns'], spotter['failedToolCalls'], spotter['retryLoops']],
      ['claude-code', 149, 2, 11, 1],
    );
    const subagents = out.sessions.filter((s) => s['parentId'] === 'ae4a77f8-aedd-4bc1-888f-c94edc91af04');
    assert.equal(subagents.length, 2);
    // Costs from test/reference/cost_reference.mjs (its own price matching over the raw logs): the spotter
    // file with its sub-agents $2.9056013 over 153 calls, M-Claude's $3.36867825, the Codex rollout $0.0893795.
    const usd = (s: Record<string, unknown>): number => s['costUsd'] as number;
    assert.ok(Math.abs(usd(spotter) + subagents.reduce((a, s) => a + usd(s), 0) - 2.9056013) < 1e-6);
    assert.ok(
      Math.abs(usd(out.sessions.find((s) => s['id'] === 'e5821007-9ca0-4a36-afc0-94da583da0ea')!) - 3.36867825) < 1e-6,
    );
    assert.ok(
      Math.abs(usd(out.sessions.find((s) => s['id'] === '01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73')!) - 0.0893795) < 1e-6,
    );
    assert.equal(spotter['unpricedCalls'], 0);
    assert.deepEqual(Object.keys(spotter), [
      'id',
      'parentId',
      'role',
      'agent',
      'model',
      'path',
      'project',
      'title',
      'startedAt',
      'endedAt',
      'durationMs',
      'llmCalls',
      'userTurns',
      'tokens',
      'cacheHitRate',
      'costUsd',
      'unpricedCalls',
      'toolCalls',
      'failedToolCalls',
      'retryLoops',
      'cacheMisses',
      'live',
      'file',
      'problem',
    ]);
  });

  it('--agent, --since and --project narrow the list (a session keeps its sub-agents)', () => {
    const ids = (...args: string[]): string[] =>
      (
        JSON.parse(run('sessions', '--json', '--index', index, ...rootArgs, ...args).stdout) as {
          sessions: Array<{ id: string }>;
        }
      ).sessions
        .map((s) => s.id)
        .sort();
    assert.deepEqual(ids('--agent', 'codex'), ['01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73']);
    assert.deepEqual(ids('--since', '2026-02-11', '--agent', 'claude-code'), [
      'aac57f5',
      'acompact-946d2b',
      'ae4a77f8-aedd-4bc1-888f-c94edc91af04',
    ]);
    assert.deepEqual(ids('--project', 'windows'), ['e5821007-9ca0-4a36-afc0-94da583da0ea']);
  });

  it('prints sessions grouped by project, newest first, titles as plain text', () => {
    const r = run('sessions', '--index', index, ...rootArgs);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^4 sessions \(6 with sub-agents\), newest first\n/);
    const projects = r.stdout
      .split('\n')
      .filter((l) => /^\S/.test(l))
      .slice(1);
    assert.deepEqual(projects, [
      '/workspace/project',
      '/home/USER/projects/spotter-worktrees/spotter-4te',
      '/home/marco/projects/spotter',
      'C:\\Windows\\System32',
    ]);
    assert.match(
      r.stdout,
      / 149 calls {2}hit {2}98\.4% +\$\d\.\d\d {3}11 failed {3}1 loops {2}Work on bead spotter-4te/,
    );
    // M-Claude's log: $3.36867825 by test/reference/cost_reference.mjs.
    assert.match(r.stdout, / 41 calls {2}hit {2}85\.5% +\$3\.37 {3}13 failed {3}1 loops {2}open M-Claude repo/);
  });

  it('refuses what it cannot use, naming the flag', () => {
    assert.equal(run('sessions', '--agent', 'cursor').code, 2);
    assert.match(run('sessions', '--since', 'last tuesday').stderr, /--since needs a duration/);
    assert.match(run('sessions', '--root', 'codex').stderr, /--root needs ID=DIR/);
  });
});

describe('agent-trace analyze DIR', () => {
  before(() => ensureBuilt(cli));

  it('summarises every session in a folder as the several-sessions view does', () => {
    const r = run('analyze', home, '--json');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    // Σ over the six logs by test/reference/claude_code_totals.py and codex_deltas.py.
    assert.deepEqual(
      [report.sessions, report.threads, report.totals.calls, report.totals.tokens.input, report.totals.tokens.cached],
      [4, 6, 204, 14126761, 13467690],
    );
    assert.equal(report.combined.cacheHitRate, 13467690 / 14126761);
    assert.deepEqual(
      [report.distributions.cacheHitRate.range.below, report.distributions.cacheHitRate.range.within],
      [2, 2],
    );
    const text = run('analyze', home);
    assert.match(text.stdout, /: 4 sessions \(6 with sub-agents\), 2026-01-01 – 2026-03-21/);
    assert.match(text.stdout, /cache hit rate +95\.3% +\[within published 84\.6–99\.5%\]/);
  });

  it('says so when a folder holds no session', () => {
    const empty = mkdtempSync(join(tmpdir(), 'agent-trace-empty-'));
    const r = run('analyze', empty);
    rmSync(empty, { recursive: true, force: true });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no agent session found/);
  });
});
