import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { priceTrace } from '../../../../src/core/cost/callCost';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { BudgetWatch, overBudgetText } from '../../../../src/core/sessions/budgetWatch';
import { fixtures, parseText } from '../../../support/helpers';

// A growing log: the hand-built timeline of handWorkedTtl.test.ts (six Claude Haiku 4.5 calls)
// read again after each line is appended, as a live session is. Its calls cost, by hand
// (µ$, see that test): 13,000; 2,750; 15,500; 16,750; 18,000; 3,025, so the running total is
// 13,000 / 15,750 / 31,250 / 48,000 / 66,000 / 69,025. A $0.04 budget is crossed by the fourth
// call (48,000 µ$), and only there. `near` starts at 80% ($0.032): the totals before, up to 31,250 µ$,
// stay below it, so the state goes straight from ok to over.

const LINES = readFileSync(join(fixtures, 'canonical/ttl-timeline.trace.jsonl'), 'utf8').trimEnd().split('\n');
const book = createPriceBook();

async function totalAfter(lines: number): Promise<number | null> {
  const parsed = await parseText(LINES.slice(0, lines).join('\n') + '\n', 'growing.trace.jsonl');
  return priceTrace(parsed.model, book).total.totalUsd;
}

describe('budgets on a growing log', () => {
  it('the crossing is told once, when the call that crosses it is written', async () => {
    const watch = new BudgetWatch();
    const told: Array<{ calls: number; message: string }> = [];
    const states: string[] = [];
    // Lines 0–1 are the header and the session; each later line adds a call.
    for (let n = 2; n <= LINES.length; n++) {
      const usd = await totalAfter(n);
      const { state, crossings } = watch.update(
        { perSessionUsd: 0.04, perDayUsd: null },
        { session: { key: 'ttl', usd }, day: null },
      );
      states.push(state);
      for (const c of crossings) told.push({ calls: n - 2, message: c.message });
      // Read twice at the same size (a watcher firing again): nothing new is told.
      assert.deepEqual(
        watch.update({ perSessionUsd: 0.04, perDayUsd: null }, { session: { key: 'ttl', usd }, day: null }).crossings,
        [],
      );
    }
    assert.deepEqual(states, ['ok', 'ok', 'ok', 'ok', 'over', 'over', 'over']);
    assert.equal(told.length, 1);
    assert.equal(told[0]!.calls, 4);
    // $0.048 against $0.04: over by $0.0080, 20%.
    assert.equal(
      told[0]!.message,
      'Agent Trace: this session cost $0.048 against a budget of $0.040: over by $0.0080 (20%).',
    );
  });

  it('near from 80%, and a new crossing after the budget is raised is told again', () => {
    const watch = new BudgetWatch();
    const at = (usd: number, budget: number) =>
      watch.update({ perSessionUsd: budget, perDayUsd: null }, { session: { key: 's', usd }, day: null });
    assert.equal(at(0.79, 1).state, 'ok');
    assert.equal(at(0.8, 1).state, 'near');
    assert.equal(at(1.01, 1).crossings.length, 1);
    assert.equal(at(1.01, 2).state, 'ok'); // raised: under again
    assert.equal(at(2.5, 2).crossings.length, 1); // crossed again
  });

  it('a figure first seen over is shown over, not told; a day budget is watched apart from the session', () => {
    const watch = new BudgetWatch();
    const first = watch.update(
      { perSessionUsd: 1, perDayUsd: 5 },
      { session: { key: 'a', usd: 3 }, day: { key: '2026-12-01', usd: 4 } },
    );
    assert.deepEqual([first.state, first.crossings.length], ['over', 0]);
    const next = watch.update(
      { perSessionUsd: 1, perDayUsd: 5 },
      { session: { key: 'a', usd: 3.2 }, day: { key: '2026-12-01', usd: 5.5 } },
    );
    assert.deepEqual(
      next.crossings.map((c) => c.scope),
      ['day'],
    );
    assert.match(
      next.crossings[0]!.message,
      /today’s sessions cost \$5\.50 against a budget of \$5\.00: over by \$0\.500 \(10%\)/,
    );
    // Unknown cost: never over, never told.
    assert.deepEqual(
      watch.update({ perSessionUsd: 1, perDayUsd: null }, { session: { key: 'b', usd: null }, day: null }),
      { state: 'ok', crossings: [] },
    );
    assert.equal(overBudgetText(12, 10), '$12.00 against a budget of $10.00: over by $2.00 (20%)');
  });
});
