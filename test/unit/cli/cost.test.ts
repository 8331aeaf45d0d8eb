import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
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
    assert.match(over.stderr, /ae4a77f8-aedd-4bc1-888f-c94edc91af04\.jsonl: over budget: \$2\.91 against a budget of \$2\.50: over by \$0\.406 \(16%\)/);
    assert.doesNotMatch(over.stderr, /tracelab/);
  });

  it('--json: each trace, the total and what is over', () => {
    const r = run('cost', spotter, codex, '--budget', '2.5', '--json');
    assert.equal(r.code, 3);
    const out = JSON.parse(r.stdout) as { budgetUsd: number; totalUsd: number; calls: number; traces: Array<{ calls: number; usd: number; overBudgetUsd: number | null }> };
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
