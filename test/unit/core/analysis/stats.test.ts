import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NumberSample } from '../../../../src/core/analysis/stats';

describe('NumberSample', () => {
  it('gives the sum, mean, median and R-7 quantiles of what was added', () => {
    const s = new NumberSample(10);
    for (const v of [3, 1, 4, 1, 5, 9, 2, 6]) s.add(v);
    // By hand: sum 31, mean 31 / 8; sorted 1 1 2 3 4 5 6 9, so the median sits at rank 3.5
    // (between 3 and 4) and the 90th percentile at rank 0.9 × 7 = 6.3 (6 + 0.3 × (9 − 6)).
    assert.equal(s.size, 8);
    assert.equal(s.sum(), 31);
    assert.equal(s.mean(), 3.875);
    assert.equal(s.median(), 3.5);
    assert.ok(Math.abs(s.quantile(0.9)! - 6.9) < 1e-12);
    assert.equal(s.quantile(0), 1);
    assert.equal(s.quantile(1), 9);
    // The mean is of the values as added, after the sort too.
    assert.equal(s.mean(), 3.875);
  });

  it('is null when empty, and refuses values once sorted', () => {
    const s = new NumberSample(4);
    assert.equal(s.mean(), null);
    assert.equal(s.sum(), null);
    assert.equal(s.median(), null);
    s.add(2);
    assert.equal(s.median(), 2);
    assert.throws(() => s.add(1), /after a quantile/);
  });
});
