import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, fixtures, repoRoot } from '../../support/helpers';

// `agent-trace cost` and `--budget`. Dollars from test/reference/cost_reference.mjs (its own
// price matching over the raw logs): the spotter file with its sub-agents $2.9056013 over 153
// calls, the Codex rollout $0.0893795 over 9.

const cli = join(repoRoot, 'dist/cli.js');
const spotter = join(fixtures, 'claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl');
const codex = join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl');

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('agent-trace cost --budget', () => {
  before(() => ensureBuilt(cli));

  it('under the budget: exit 0; over it: exit 3, saying by how much', () => {
    assert.equal(run('cost', spotter, '--budget', '3').code, 0);
    const over = run('cost', spotter, codex, '--budget', '2.5');
    assert.equal(over.code, 3);
    // $2.9056013 − $2.50 = $0.4056013, 16% over; the Codex rollout ($0.089) is under and not named.
    assert.match(
      over.stderr,
      /ae4a77f8-aedd-4bc1-888f-c94edc91af04\.jsonl: over budget: \$2\.91 against a budget of \$2\.50: over by \$0\.406 \(16%\)/,
    );
    assert.doesNotMatch(over.stderr, /tracelab/);
  });

  it('--json: each trace, the total and what is over', () => {
    const r = run('cost', spotter, codex, '--budget', '2.5', '--json');
    assert.equal(r.code, 3);
    const out = JSON.parse(r.stdout) as {
      budgetUsd: number;
      totalUsd: number;
      calls: number;
      traces: Array<{ calls: number; usd: number; overBudgetUsd: number | null }>;
    };
    assert.equal(out.budgetUsd, 2.5);
    assert.equal(out.calls, 162);
    assert.ok(Math.abs(out.totalUsd - (2.9056013 + 0.0893795)) < 1e-6);
    assert.ok(Math.abs(out.traces[0]!.overBudgetUsd! - 0.4056013) < 1e-6);
    assert.equal(out.traces[1]!.overBudgetUsd, null);
  });

  it('analyze FILE --budget: the same exit and words; a bad budget is a usage error', () => {
    const over = run('analyze', spotter, '--budget', '2.5');
    assert.equal(over.code, 3);
    assert.match(over.stderr, /over by \$0\.406 \(16%\)/);
    assert.equal(run('analyze', spotter, '--budget', '3', '--json').code, 0);
    assert.equal(run('analyze', spotter, '--budget', '-1').code, 2);
    assert.equal(run('cost', spotter, '--budget', 'x').code, 2);
  });
});

describe('agent-trace cost --by', () => {
  before(() => ensureBuilt(cli));

  it('day and agent: the reference dollars of each file land on its day and its agent', () => {
    const day = JSON.parse(run('cost', spotter, codex, '--by', 'day', '--json').stdout) as {
      by: { groups: Array<{ key: string; usd: number; calls: number }> };
    };
    assert.deepEqual(
      day.by.groups.map((g) => [g.key, g.calls]),
      [
        ['2026-02-12', 153],
        ['2026-03-21', 9],
      ],
    );
    assert.ok(Math.abs(day.by.groups[0]!.usd - 2.9056013) < 1e-6);
    const agent = JSON.parse(run('cost', spotter, codex, '--by', 'agent', '--json').stdout) as {
      by: { groups: Array<{ key: string; usd: number; share: number }> };
    };
    assert.deepEqual(
      agent.by.groups.map((g) => g.key),
      ['claude-code', 'codex'],
    );
    assert.ok(Math.abs(agent.by.groups[1]!.usd - 0.0893795) < 1e-6);
    assert.ok(Math.abs(agent.by.groups[0]!.share - 2.9056013 / (2.9056013 + 0.0893795)) < 1e-6);
    const text = run('cost', spotter, codex, '--by', 'model');
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^cost by model\n/);
    assert.equal(run('cost', spotter, '--by', 'week').code, 2);
  });

  describe('commit and branch, on a real git history made from the session’s own edits', () => {
    // The spotter session ran in /home/USER/projects/spotter-worktrees/spotter-4te from
    // 2026-02-12 14:11:57 UTC to about 14:52 and wrote (among others) lib/spotter/telemetry/otel.ex
    // and .dialyzerignore. The history, by committer time (UTC):
    //   E 13:00 main     adds otel.ex and README.md      before the session: no
    //   A 14:30 main     changes otel.ex                 during it, an edited file: yes
    //   C 14:40 main     changes README.md               during it, but no file it edited: no
    //   B 15:20 feature  adds .dialyzerignore, README    within the hour after it, an edited file: yes
    //   D 17:00 feature  changes otel.ex                 more than an hour after it: no
    // So A and B share the session's $2.9056013 (with its sub-agents): $1.45280065 each;
    // by branch, main (A) and feature (B) $1.45280065 each. With --grace-min 10, B is out and A has it all.
    const repo = mkdtempSync(join(tmpdir(), 'agent-trace-cost-git-'));
    const git = (date: string | null, ...args: string[]): void => {
      const env = {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@example.com',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@example.com',
        ...(date ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {}),
      };
      const r = spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8', env });
      assert.equal(r.status, 0, r.stderr);
    };
    const put = (file: string, text: string): void => {
      mkdirSync(dirname(join(repo, file)), { recursive: true });
      writeFileSync(join(repo, file), text);
    };
    const commit = (date: string, message: string, files: Record<string, string>): void => {
      for (const [f, t] of Object.entries(files)) put(f, t);
      git(null, 'add', '-A');
      git(date, 'commit', '-q', '-m', message);
    };
    const shas: Record<string, string> = {};
    const head = (name: string): void => {
      shas[name] = spawnSync('git', ['-C', repo, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
    };
    before(() => {
      git(null, 'init', '-q', '-b', 'main');
      commit('2026-02-12T13:00:00Z', 'E before', { 'lib/spotter/telemetry/otel.ex': 'v0\n', 'README.md': 'r0\n' });
      commit('2026-02-12T14:30:00Z', 'A otel', { 'lib/spotter/telemetry/otel.ex': 'v1\n' });
      head('A');
      commit('2026-02-12T14:40:00Z', 'C readme', { 'README.md': 'r1\n' });
      git(null, 'checkout', '-q', '-b', 'feature');
      commit('2026-02-12T15:20:00Z', 'B dialyzer', { '.dialyzerignore': 'x\n', 'README.md': 'r2\n' });
      head('B');
      commit('2026-02-12T17:00:00Z', 'D late', { 'lib/spotter/telemetry/otel.ex': 'v2\n' });
    });
    after(() => rmSync(repo, { recursive: true, force: true }));

    it('--by commit joins A and B and shares the cost equally', () => {
      const r = run('cost', spotter, '--by', 'commit', '--repo', repo, '--json');
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as {
        by: {
          commits: Array<{ sha: string; subject: string; branch: string; usd: number }>;
          unjoined: { sessions: number };
        };
      };
      assert.deepEqual(
        out.by.commits.map((c) => [c.sha, c.subject, c.branch]),
        [
          [shas['A'], 'A otel', 'main'],
          [shas['B'], 'B dialyzer', 'feature'],
        ],
      );
      for (const c of out.by.commits) assert.ok(Math.abs(c.usd - 2.9056013 / 2) < 1e-6, String(c.usd));
      assert.equal(out.by.unjoined.sessions, 0);
      const text = run('cost', spotter, '--by', 'commit', '--repo', repo);
      assert.match(
        text.stdout,
        /^cost by commit \(sessions joined to the commits made during them or within 60 min after/,
      );
      assert.match(text.stdout, /\$1\.45 {2}[0-9a-f]{10} {2}2026-02-12 14:30 {2}main {2}A otel {2}\(1 session\)/);
    });

    it('--by branch sums the commits of each branch; a shorter grace leaves B out', () => {
      const out = JSON.parse(run('cost', spotter, '--by', 'branch', '--repo', repo, '--json').stdout) as {
        by: { branches: Array<{ branch: string; usd: number; commits: number }> };
      };
      assert.deepEqual(out.by.branches.map((b) => [b.branch, b.commits]).sort(), [
        ['feature', 1],
        ['main', 1],
      ]);
      const short = JSON.parse(
        run('cost', spotter, '--by', 'commit', '--repo', repo, '--grace-min', '10', '--json').stdout,
      ) as { by: { commits: Array<{ subject: string; usd: number }> } };
      assert.deepEqual(
        short.by.commits.map((c) => c.subject),
        ['A otel'],
      );
      assert.ok(Math.abs(short.by.commits[0]!.usd - 2.9056013) < 1e-6);
    });

    it('a session whose folder is no repository here is said and left unjoined', () => {
      const r = run('cost', spotter, '--by', 'commit', '--json');
      assert.match(r.stderr, /1 session not in a git repository here/);
      assert.equal((JSON.parse(r.stdout) as { by: { unjoined: { sessions: number } } }).by.unjoined.sessions, 1);
    });
  });
});

describe('agent-trace cost --as-model and --ttl-savings', () => {
  before(() => ensureBuilt(cli));
  // The hand-built timeline (handWorkedTtl.test.ts, repriceModel.test.ts): 69,025 µ$ as logged on
  // Claude Haiku 4.5; 207,075 µ$ on Claude Sonnet 4.5 (three times every rate); 63,200 µ$ with
  // 1-hour caching, so 5,825 µ$ saved; calls 2, 3 and 4 re-wrote the cache after gaps over 5 min.
  const timeline = join(fixtures, 'canonical/ttl-timeline.trace.jsonl');

  it('says what the session would have cost on another model, and that the tokenizer would differ', () => {
    const r = run('cost', timeline, '--as-model', 'claude-sonnet-4-5');
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /ttl-timeline\.trace\.jsonl: On claude-sonnet-4-5 this session would have cost \$0\.207, \+200% against \$0\.069 as logged\. The token counts are the logged model’s: a different tokenizer/,
    );
    const json = JSON.parse(run('cost', timeline, '--as-model', 'claude-sonnet-4-5', '--json').stdout) as {
      traces: Array<{ asModel: { usd: number; loggedUsd: number; deltaShare: number; calls: number } }>;
    };
    const m = json.traces[0]!.asModel;
    assert.ok(Math.abs(m.usd - 0.207075) < 1e-12 && Math.abs(m.loggedUsd - 0.069025) < 1e-12);
    assert.ok(Math.abs(m.deltaShare - 2) < 1e-12);
  });

  it('sums the 1-hour what-if over the sessions', () => {
    const r = run('cost', timeline, '--ttl-savings');
    assert.match(
      r.stdout,
      /^1-hour caching would have saved \$0\.0058 over this session; 3 calls re-wrote the cache after a gap longer than 5 min\./,
    );
    const json = JSON.parse(
      run('cost', timeline, join(fixtures, 'claude-code/edit-retry-loop.jsonl'), '--ttl-savings', '--json').stdout,
    ) as {
      ttlSavings: {
        sessions: number;
        loggedUsd: number;
        oneHourUsd: number;
        oneHourSavingUsd: number;
        rewritesAfter5m: number;
      };
    };
    // The M-Claude session adds its own what-if (docs/guide/cost.md's screenshot: $3.37 as logged, $2.43 with
    // 1-hour caching, 4 calls re-wrote the cache), so the sums are 2 sessions and 3 + 4 = 7 re-writes.
    assert.equal(json.ttlSavings.sessions, 2);
    assert.equal(json.ttlSavings.rewritesAfter5m, 7);
    assert.ok(Math.abs(json.ttlSavings.loggedUsd - (0.069025 + 3.36867825)) < 1e-6);
  });
});
