import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CallCosts, COST_KIND_INDEX, priceCall, priceTrace, pricingContext } from '../../../../src/core/cost/callCost';
import type { CallCost, CostByKind } from '../../../../src/core/cost/costTypes';
import { COST_KINDS } from '../../../../src/core/cost/costTypes';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { readUserPrices } from '../../../../src/core/cost/userPrices';
import { EDIT_LOOP, fixtures, parseFile, REJECTIONS, SPOTTER } from '../../../support/helpers';

// A session's call costs are kept by column (CallCosts: dollars by kind in one typed array,
// the rates, price ids and notes stored once per distinct value). Here every call of real
// sessions is priced again on its own with priceCall, one CallCost object per call as the
// costs were kept before, and the columns must give back exactly that, with the session's
// totals equal to the sum of those per-call figures added here in call order.

const SAMPLES = [SPOTTER, EDIT_LOOP, REJECTIONS, join(fixtures, 'canonical/priced-session.trace.jsonl')];

describe('CallCosts: the columns give back what pricing each call alone gives (real samples)', () => {
  for (const path of SAMPLES) {
    it(path.split('/').pop()!, async () => {
      const { model } = await parseFile(path);
      // With a discount on one model family too, so calls carry notes and rates that differ from the list's.
      const book = createPriceBook({
        user: readUserPrices([{ model: 'claude-haiku-*', multiplier: 0.5 }]),
        userLabel: 'test',
      });
      const cost = priceTrace(model, book);
      let calls = 0;
      model.sessions.forEach((session, s) => {
        const columns = cost.sessions[s]!.calls;
        assert.equal(columns.length, session.calls.length);
        const context = pricingContext(model.format, session);
        let sum = 0;
        let priced = 0;
        session.calls.forEach((call, i) => {
          const alone = priceCall(call, book, context).cost;
          assert.deepEqual(columns.at(i), alone, `${session.id} call ${i + 1}`);
          assert.equal(columns.usdOf(i), alone.usd);
          assert.deepEqual(columns.ratesOf(i), alone.rates);
          assert.deepEqual([...columns.notesOf(i)], alone.notes);
          assert.equal(columns.priceIdOf(i), alone.priceId);
          assert.equal(columns.unpricedOf(i), alone.unpriced);
          COST_KINDS.forEach((k) => {
            const v = columns.kindOf(i, COST_KIND_INDEX[k]);
            if (alone.byKind === null) assert.ok(Number.isNaN(v), `${k} of an unpriced call is NaN`);
            else assert.equal(v, alone.byKind[k]);
          });
          if (alone.usd !== null) {
            sum += alone.usd;
            priced += 1;
          }
        });
        // The notes tallied from the entries equal a count over each call's own notes, in the order first met.
        const tally = new Map<string, { calls: number; first: number }>();
        session.calls.forEach((call, i) => {
          for (const note of priceCall(call, book, context).cost.notes) {
            const t = tally.get(note);
            if (t) t.calls += 1;
            else tally.set(note, { calls: 1, first: i });
          }
        });
        assert.deepEqual([...columns.noteTally()], [...tally]);
        const summary = cost.sessions[s]!;
        assert.equal(summary.pricedCalls, priced);
        if (priced > 0)
          assert.ok(
            Math.abs(summary.totalUsd! - sum) <= 1e-12 * Math.max(1, sum),
            `${session.id} total ${summary.totalUsd} ≠ ${sum}`,
          );
        assert.equal([...columns].length, session.calls.length);
        calls += session.calls.length;
      });
      assert.ok(calls > 0);
    });
  }

  it('out of range there is no call: at() is undefined, usdOf() null, kindOf() NaN, ratesOf() null', async () => {
    const { model } = await parseFile(SPOTTER);
    const columns = priceTrace(model, createPriceBook()).sessions[0]!.calls;
    for (const i of [-1, columns.length, 1.5]) {
      assert.equal(columns.at(i), undefined);
      assert.equal(columns.priceIdOf(i), undefined);
      assert.equal(columns.unpricedOf(i), undefined);
      assert.equal(columns.usdOf(i), null);
      assert.equal(columns.ratesOf(i), null);
    }
    assert.ok(Number.isNaN(columns.kindOf(columns.length, 0)));
  });

  it('a kind first met after other calls, an unpriced call, -0 and NaN: each call gives back its own values', () => {
    // Four calls written by hand: 1 priced with no GPU time and no 1-hour writes, 2 unpriced,
    // 3 with 1-hour writes (the first call that has any), 4 with a -0 and a NaN among its kinds.
    const kinds = (input: number, cacheWrite1h: number, gpuTime: number): CostByKind => ({
      input,
      cacheRead: 0,
      cacheWrite5m: 0,
      cacheWrite1h,
      output: 0.5,
      gpuTime,
    });
    const priced = (usd: number, byKind: CostByKind): CallCost => ({
      usd,
      byKind,
      rates: null,
      priceId: 'p',
      origin: null,
      unpriced: null,
      notes: [],
    });
    const calls: CallCost[] = [
      priced(1.5, kinds(1, 0, 0)),
      { usd: null, byKind: null, rates: null, priceId: null, origin: null, unpriced: 'no price', notes: [] },
      priced(2.75, kinds(0.25, 2, 0)),
      priced(Number.NaN, kinds(-0, 0, Number.NaN)),
    ];
    const columns = new CallCosts(calls.length);
    for (const c of calls) columns.push(c);
    const h = COST_KIND_INDEX.cacheWrite1h;
    const g = COST_KIND_INDEX.gpuTime;
    assert.deepEqual(
      [0, 1, 2, 3].map((i) => columns.kindOf(i, h)),
      [0, Number.NaN, 2, 0],
    );
    assert.ok(Object.is(columns.kindOf(3, COST_KIND_INDEX.input), -0));
    assert.deepEqual(
      [0, 1, 2, 3].map((i) => columns.kindOf(i, g)),
      [0, Number.NaN, 0, Number.NaN],
    );
    assert.deepEqual(columns.at(0), calls[0]);
    assert.deepEqual(columns.at(1), calls[1]);
    assert.deepEqual(columns.at(2), calls[2]);
    assert.equal(columns.usdOf(3), null);
    assert.ok(Object.is(columns.at(3)!.byKind!.input, -0));
    assert.ok(Number.isNaN(columns.kindOf(0, 1.5)));
  });

  it('a copy of the notes is handed out: changing it does not change the call’s notes', async () => {
    const { model } = await parseFile(join(fixtures, 'canonical/priced-session.trace.jsonl'));
    // A discount notes itself on every call it applies to ("your multiplier ×0.8").
    const book = createPriceBook({ user: readUserPrices([{ model: 'claude-*', multiplier: 0.8 }]), userLabel: 'test' });
    const columns = priceTrace(model, book).sessions[0]!.calls;
    const i = [...columns].findIndex((c) => c.notes.length > 0);
    assert.ok(i >= 0, 'the fixture has a call with a note');
    const before = [...columns.notesOf(i)];
    columns.at(i)!.notes.push('changed');
    assert.deepEqual([...columns.notesOf(i)], before);
  });
});
