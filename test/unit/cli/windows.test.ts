import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createFakeHome, fakeHomeRoots } from '../../support/fakeHome.mjs';
import { ensureBuilt, fixtures, needsShared, repoRoot, sharedTrace } from '../../support/helpers';

// `agent-trace windows` on real sessions. Expected figures: the reader tests' independent
// call counts and test/reference/cost_reference.mjs's dollars (the spotter file with its
// sub-agents: 153 calls, $2.9056013; the Codex rollout: 9 calls, $0.0893795).

const cli = join(repoRoot, 'dist/cli.js');
const scratch = mkdtempSync(join(tmpdir(), 'agent-trace-cli-windows-'));
const home = createFakeHome(join(scratch, 'home'));
const roots = fakeHomeRoots(home);
const spotter = join(fixtures, 'claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl');
const codex = join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl');
const edgerunner = join(fixtures, 'codex/edgerunner-code-mode-0.144.1.head558.jsonl');
const rtchess = sharedTrace('codex/rtchess-exported-session.jsonl');

/**
 * A different method from the program's: straight from the rollout's lines, each distinct
 * `token_count` report (the running total changed) is one call at that line's time, of
 * last_token_usage's input + output tokens; the last line with `rate_limits` is the server's
 * report. Per server window: the calls timed in [resets_at − window_minutes, the report].
 */
function byHand(file: string): Array<{ kind: number; percent: number; calls: number; tokens: number }> {
  type Usage = { input_tokens: number; output_tokens: number };
  type Limit = { used_percent: number; window_minutes: number; resets_at: number };
  type Row = {
    timestamp: string;
    type: string;
    payload: {
      type?: string;
      info?: { total_token_usage: Usage; last_token_usage: Usage } | null;
      rate_limits?: Record<'primary' | 'secondary', Limit> | null;
    };
  };
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Row)
    .filter((r) => r.type === 'event_msg' && r.payload.type === 'token_count');
  const last = rows.filter((r) => r.payload.rate_limits).pop()!;
  const seen: Array<{ t: number; tokens: number }> = [];
  let previous = '';
  for (const r of rows) {
    const info = r.payload.info;
    if (!info) continue;
    const total = JSON.stringify(info.total_token_usage);
    if (total === previous) continue;
    previous = total;
    seen.push({
      t: Date.parse(r.timestamp),
      tokens: info.last_token_usage.input_tokens + info.last_token_usage.output_tokens,
    });
  }
  return (['primary', 'secondary'] as const).map((slot) => {
    const w = last.payload.rate_limits![slot];
    const start = w.resets_at * 1000 - w.window_minutes * 60_000;
    const inside = seen.filter((c) => c.t >= start && c.t <= Date.parse(last.timestamp));
    return {
      kind: w.window_minutes,
      percent: w.used_percent,
      calls: inside.length,
      tokens: inside.reduce((a, c) => a + c.tokens, 0),
    };
  });
}

interface ServerJson {
  planType: string | null;
  windows: Array<{
    kind: string;
    windowMinutes: number;
    usedPercent: number;
    reportedAt: string;
    ours: { calls: number; tokens: number; resetDiffMs: number | null };
    impliedLimit: { tokens: { value: number; low: number; high: number | null } | null };
  }>;
}

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

  it("Codex's own rate_limits beside our windows: its percentages, our tokens in its windows, the limit they imply", () => {
    const r = run('windows', edgerunner, '--json');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { plans: Array<{ plan: string; server: ServerJson | null }> };
    const server = out.plans.find((p) => p.plan === 'codex')!.server!;
    assert.equal(server.planType, 'plus');
    const hand = byHand(edgerunner);
    // By hand from the log's last report (2026-07-10T18:56:33.182Z): 29% of the 5-hour and 5% of the
    // weekly window, 38 of its 110 calls (8,509,717 tokens) in both windows.
    assert.deepEqual(hand, [
      { kind: 300, percent: 29, calls: 38, tokens: 8_509_717 },
      { kind: 10080, percent: 5, calls: 38, tokens: 8_509_717 },
    ]);
    assert.deepEqual(
      server.windows.map((w) => [w.windowMinutes, w.usedPercent, w.ours.calls, w.ours.tokens]),
      hand.map((h) => [h.kind, h.percent, h.calls, h.tokens]),
    );
    assert.equal(server.windows[0]!.reportedAt, '2026-07-10T18:56:33.182Z');
    // 8,509,717 ÷ 29% = 29,343,852; a whole 29 is anything in (28, 30): 28,365,723 to 30,391,846.
    const five = server.windows[0]!.impliedLimit.tokens!;
    assert.equal(Math.round(five.value), 29_343_852);
    assert.equal(Math.round(five.low), 28_365_723);
    assert.equal(Math.round(five.high!), 30_391_846);
    // 8,509,717 ÷ 5% = 170,194,340.
    assert.equal(Math.round(server.windows[1]!.impliedLimit.tokens!.value), 170_194_340);
    const text = run('windows', edgerunner);
    assert.match(
      text.stdout,
      /Codex's own figure \(plus plan, 2026-07-10 18:56\): 5-hour window 29\.0% used, resets 23:41/,
    );
    assert.match(
      text.stdout,
      /Our logs in its window up to then: 8\.51M tokens, \$5\.68 in 38 calls: a limit of ~29\.3M tokens \(28\.4M tokens–30\.4M tokens: the percent is whole\)/,
    );
    // A log whose rate_limits are all null has no server figures.
    const none = JSON.parse(run('windows', codex, '--json').stdout) as { plans: Array<{ server: unknown }> };
    assert.equal(none.plans[0]!.server, null);
  });

  it('the rtchess rollout: the server window opens at its first call’s end, as ours does', {
    skip: needsShared(rtchess),
  }, () => {
    const out = JSON.parse(run('windows', rtchess!, '--json').stdout) as { plans: Array<{ server: ServerJson }> };
    const [five, week] = out.plans[0]!.server.windows;
    // By hand: the last report (11:45:55.628Z) says 1% of a 5-hour window resetting at 16:28:25Z,
    // i.e. opened 11:28:25Z; 52 calls (6,814,499 tokens) have reported since; 1% implies 681,449,900.
    assert.deepEqual(byHand(rtchess!)[0], { kind: 300, percent: 1, calls: 52, tokens: 6_814_499 });
    assert.deepEqual([five!.ours.calls, five!.ours.tokens], [52, 6_814_499]);
    assert.equal(Math.round(five!.impliedLimit.tokens!.value), 681_449_900);
    // Our 5-hour window opened at the first call's start (11:27:57.715Z), 27.3 s before the server's.
    assert.equal(five!.ours.resetDiffMs, Date.parse('2025-11-23T16:27:57.715Z') - Date.parse('2025-11-23T16:28:25Z'));
    assert.equal(week!.usedPercent, 0);
    assert.equal(week!.impliedLimit.tokens, null, '0% used implies no limit');
  });

  it('a limit it cannot read is a usage error', () => {
    const r = run('windows', codex, '--limit-5h', 'lots');
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--limit-5h needs tokens/);
  });
});
