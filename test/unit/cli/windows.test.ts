import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createFakeHome, fakeHomeRoots } from '../../support/fakeHome.mjs';
import { ensureBuilt, fixtures, repoRoot } from '../../support/helpers';

// `agent-trace windows` on real sessions. Expected figures: the reader tests' independent
// call counts and test/reference/cost_reference.mjs's dollars (the spotter file with its
// sub-agents: 153 calls, $2.9056013; the Codex rollout: 9 calls, $0.0893795).

const cli = join(repoRoot, 'dist/cli.js');
const scratch = mkdtempSync(join(tmpdir(), 'agent-trace-cli-windows-'));
const home = createFakeHome(join(scratch, 'home'));
const roots = fakeHomeRoots(home);
const spotter = join(fixtures, 'claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl');
const codex = join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl');

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], {
    encoding: 'utf8',
    env: { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: '', CODEX_HOME: '', TZ: 'UTC' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

after(() => rmSync(scratch, { recursive: true, force: true }));

interface WindowJson {
  kind: string;
  startedAt: string;
  resetsAt: string;
  calls: number;
  costUsd: number;
  limits: Array<{ unit: string; share: number }>;
  sessions: Array<{ session: string; calls: number; file: string }>;
}

describe('agent-trace windows', () => {
  before(() => ensureBuilt(cli));

  it('--json: one 5-hour and one weekly window per plan, opened by the first call, with the dollars of the reference pricer', () => {
    const r = run('windows', spotter, codex, '--json', '--limit-5h', '$2');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { plans: Array<{ plan: string; windows: WindowJson[] }> };
    assert.deepEqual(out.plans.map((p) => p.plan).sort(), ['claude', 'codex']);
    const claude = out.plans.find((p) => p.plan === 'claude')!.windows;
    assert.deepEqual(
      claude.map((w) => [w.kind, w.calls]),
      [
        ['5h', 153],
        ['weekly', 153],
      ],
    );
    // The spotter session's first call is at 2026-02-12T14:11 (its log); the window resets 5 h later.
    assert.equal(claude[0]!.resetsAt, new Date(Date.parse(claude[0]!.startedAt) + 5 * 3_600_000).toISOString());
    assert.ok(claude[0]!.startedAt.startsWith('2026-02-12T14:11'));
    assert.ok(Math.abs(claude[0]!.costUsd - 2.9056013) < 1e-6);
    // $2.9056013 of a $2 limit.
    assert.ok(Math.abs(claude[0]!.limits[0]!.share - 2.9056013 / 2) < 1e-6);
    // Sub-agents are sessions of their own: 149 + 3 + 1 calls.
    assert.deepEqual(
      claude[0]!.sessions.map((s) => s.calls).sort((a, b) => a - b),
      [1, 3, 149],
    );
    const cx = out.plans.find((p) => p.plan === 'codex')!.windows;
    assert.deepEqual(
      cx.map((w) => w.calls),
      [9, 9],
    );
    assert.ok(Math.abs(cx[0]!.costUsd - 0.0893795) < 1e-6);
  });

  it('text: every figure, and the share of each session', () => {
    const r = run('windows', codex, '--limit-5h', '1M');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Codex: windows open at the first call/);
    assert.match(r.stdout, /5-hour 2026-03-21 10:05 – 15:05/);
    assert.match(r.stdout, /used {7}97\.7k tokens, \$0\.089 in 9 calls/);
    assert.match(r.stdout, /limit {6}of 1M tokens: 9\.8%/);
    assert.match(r.stdout, /100\.0% of tokens/);
  });

  it("without files: this machine's Claude Code and Codex sessions, as agent-trace sessions finds them", () => {
    const rootArgs = ['--root', `claude-code=${roots.claudeCode}`, '--root', `codex=${roots.codex}`, '--no-index'];
    const r = run('windows', '--json', '--since', '2026-01-01', ...rootArgs);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { plans: Array<{ plan: string; windows: WindowJson[] }> };
    const files = new Set(
      out.plans.flatMap((p) => p.windows.flatMap((w) => w.sessions.map((s) => s.file.split('/').pop()))),
    );
    assert.ok(files.has('ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl'));
    assert.ok([...files].some((f) => f!.startsWith('rollout-2026-03-21')));
    // Nothing in the last 8 days of the real clock: said, exit 1.
    const none = run('windows', ...rootArgs);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no Claude Code or Codex call with a time found/);
  });

  it('a limit it cannot read is a usage error', () => {
    const r = run('windows', codex, '--limit-5h', 'lots');
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--limit-5h needs tokens/);
  });
});
