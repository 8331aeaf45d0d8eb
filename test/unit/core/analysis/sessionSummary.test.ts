import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../src/core/analysis/sessionSummary';
import { median, quantile } from '../../../../src/core/analysis/stats';
import type { CallTokens, Session } from '../../../../src/core/trace/model';
import { SessionBuilder } from '../../../support/sessionBuilder';

/** A session of calls with the given tokens; everything else blank. */
function session(calls: Array<Partial<CallTokens>>): Session {
  return calls.reduce((b, tokens) => b.call(tokens), new SessionBuilder()).build();
}

describe('summarizeSession', () => {
  it('computes the headline ratios by hand', () => {
    // cached/appended/output: (900,100,10) (1800,200,50) (0,1000,100)
    // Σinput = 1000+2000+1000 = 4000, Σcached = 2700 → hit rate 0.675
    // Σoutput = 160 → raw input/output = 25; Σappended = 1300 → aggregate 8.125
    // per call appended/output: 10, 4, 10 → mean 8, median 10
    const s = summarizeSession(
      session([
        { input: 1000, cached: 900, appended: 100, output: 10 },
        { input: 2000, cached: 1800, appended: 200, output: 50 },
        { input: 1000, cached: 0, appended: 1000, output: 100 },
      ]),
    );
    assert.equal(s.cacheHitRate, 0.675);
    assert.equal(s.rawInputToOutput, 25);
    assert.deepEqual(s.appendToOutput, { mean: 8, median: 10, aggregate: 8.125 });
    assert.deepEqual(s.tokens, { input: 4000, cached: 2700, appended: 1300, cacheWrite: null, output: 160 });
  });

  it('keeps unknown as null: no cache data gives no hit rate, not 0%', () => {
    const s = summarizeSession(
      session([
        { appended: 100, output: 10 },
        { appended: 50, output: 5 },
      ]),
    );
    assert.equal(s.tokens.cached, null);
    assert.equal(s.tokens.input, null);
    assert.equal(s.cacheHitRate, null);
    assert.equal(s.rawInputToOutput, null);
    assert.equal(s.appendToOutput.aggregate, 10);
  });

  it('leaves calls with zero output out of the per-call ratio (no infinities)', () => {
    const s = summarizeSession(
      session([
        { input: 10, cached: 0, appended: 10, output: 0 },
        { input: 10, cached: 5, appended: 5, output: 5 },
      ]),
    );
    assert.deepEqual(s.appendToOutput, { mean: 1, median: 1, aggregate: 3 });
  });

  it('an empty session has null figures and zero counts', () => {
    const s = summarizeSession(session([]));
    assert.equal(s.llmCalls, 0);
    assert.equal(s.cacheHitRate, null);
    assert.deepEqual(s.appendToOutput, { mean: null, median: null, aggregate: null });
  });
});

describe('stats', () => {
  it('median of even and odd counts; quantile interpolates', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(quantile([10, 20, 30, 40, 50], 0.9), 46);
    assert.equal(median([]), null);
  });
});
