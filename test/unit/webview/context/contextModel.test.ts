import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptySessionContext } from '../../../../src/core/context/contextView';
import type { SessionContext } from '../../../../src/core/context/contextView';
import {
  appendedBy,
  callAnatomy,
  callsInWindow,
  compositionBars,
  inputComparison,
  stackKinds,
} from '../../../../webview/context/contextModel';

// The context panel's view model on a small session worked by hand: five calls, a base of
// 100 tokens, tool results growing by 10 a call.

function session(): SessionContext {
  return {
    ...emptySessionContext('s', ''),
    notes: [],
    kinds: ['system', 'toolResult', 'restored'],
    estimatedKinds: ['system', 'restored'],
    byKind: { system: [100, 100, 100, 100, 100], toolResult: [0, 10, 20, 30, 40], restored: [0, 0, 0, 0, 6] },
    loggedInput: [100, 112, 118, null, 150],
    inputUsd: [0.1, 0.2, null, 0.3, 0.4],
    appended: [
      { call: 0, kind: 'system', label: 'base', tokens: 100, estimated: true, carriedCalls: 5, usd: 1 },
      { call: 1, kind: 'toolResult', label: 'a', tokens: 10, estimated: false, carriedCalls: 4, usd: 0.5 },
      { call: 4, kind: 'toolResult', label: 'b', tokens: 10, estimated: false, carriedCalls: 1, usd: 0.1 },
      { call: 4, kind: 'restored', label: 'c', tokens: 6, estimated: true, carriedCalls: 1, usd: 0.1 },
    ],
  };
}

describe('the context panel’s model', () => {
  it('draws one bar a call when they fit, and the mean of each bin when they do not', () => {
    const ctx = session();
    const one = compositionBars(ctx, 1, 4);
    assert.deepEqual([one.first, one.size, one.single], [[1, 2, 3], [1, 1, 1], true]);
    assert.deepEqual(one.byKind.toolResult, [10, 20, 30]);
    // 5 calls in at most 2 bars: bins of 3 and 2; tool results (0+10+20)/3 = 10 and (30+40)/2 = 35; restored 0 and 6/2 = 3.
    const binned = compositionBars(ctx, 0, 5, 2);
    assert.deepEqual([binned.first, binned.size, binned.single], [[0, 3], [3, 2], false]);
    assert.deepEqual(binned.byKind.toolResult, [10, 35]);
    assert.deepEqual(binned.byKind.restored, [0, 3]);
    assert.deepEqual(binned.byKind.system, [100, 100]);
  });

  it('stacks the base, then what a compaction left, then the conversation', () => {
    assert.deepEqual(stackKinds(['system', 'userText', 'toolResult', 'compactionSummary', 'restored']), [
      'system',
      'compactionSummary',
      'restored',
      'userText',
      'toolResult',
    ]);
  });

  it('finds the calls a window touches, inside the session', () => {
    assert.deepEqual(callsInWindow(1.5, 3.2, 5), { first: 1, end: 4 });
    assert.deepEqual(callsInWindow(-2, 99, 5), { first: 0, end: 5 });
  });

  it('gives a call’s anatomy: rows by kind with shares, its sum against the log, what it appended', () => {
    const view = callAnatomy(session(), 4)!;
    assert.deepEqual(
      view.rows.map((r) => [r.kind, r.tokens, r.estimated]),
      [
        ['system', 100, true],
        ['restored', 6, true],
        ['toolResult', 40, false],
      ],
    );
    assert.equal(view.total, 146);
    assert.ok(Math.abs(view.rows[0]!.share - 100 / 146) < 1e-12);
    // 146 against the logged 150: 4 under, 2.7%.
    assert.equal(inputComparison(view), 'parts 146 tokens · logged input 150 (−2.7%)');
    assert.deepEqual(
      view.appended.map((p) => p.label),
      ['b', 'c'],
    );
    assert.match(inputComparison(callAnatomy(session(), 3)!), /the log does not say/);
    assert.equal(callAnatomy(session(), 5), null);
    assert.deepEqual(appendedBy(session().appended, 2), []);
  });
});
