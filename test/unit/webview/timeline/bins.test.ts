import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CALL_FLAG } from '../../../../src/core/view/timelineColumns';
import type { TimelineColumns } from '../../../../src/core/view/timelineColumns';
import {
  axisMaxima,
  binCalls,
  binOfSlot,
  callAt,
  isShown,
  runStats,
  slotCount,
  slotOf,
} from '../../../../webview/timeline/bins';
import type { TimelineData } from '../../../../webview/timeline/bins';
import { fitAll } from '../../../../webview/timeline/viewWindow';

// Small columns whose bins are worked out by hand in the comments.

function columns(
  rows: Array<[cached: number, appended: number, output: number, input: number, flags?: number]>,
): TimelineColumns {
  return {
    cached: Float64Array.from(rows.map((r) => r[0])),
    appended: Float64Array.from(rows.map((r) => r[1])),
    output: Float64Array.from(rows.map((r) => r[2])),
    input: Float64Array.from(rows.map((r) => r[3])),
    flags: Uint8Array.from(rows.map((r) => r[4] ?? 0)),
    missCause: new Uint8Array(rows.length),
    cost: null,
  };
}

const F = CALL_FLAG.failed;
const M = CALL_FLAG.miss;

// Six calls: (cached, appended, output, input, flags).
const six = columns([
  [100, 10, 5, 110],
  [200, 20, 6, 220, F],
  [300, 30, 7, 330],
  [0, 400, 8, 400, M],
  [410, 10, 9, 420, F | M],
  [NaN, 50, NaN, NaN],
]);
const data: TimelineData = { columns: six, shown: null };

describe('binning calls to pixels', () => {
  it('one bar per call when there is room: each bin is its call', () => {
    const b = binCalls(data, fitAll(6), 100, true);
    assert.equal(b.single, true);
    assert.equal(b.length, 6);
    assert.deepEqual([...b.cached], [100, 200, 300, 0, 410, 0]);
    // Stack of call 1: 200 + 20 + 6; of call 5: the unknowns count as nothing, 50 is known.
    assert.deepEqual([...b.stackMax], [115, 226, 337, 408, 429, 50]);
    assert.ok(Number.isNaN(b.context[5]!));
  });

  it('three bins of two calls: means of the known values, the largest stack and prompt, the marked calls counted', () => {
    const b = binCalls(data, fitAll(6), 3, true);
    assert.equal(b.single, false);
    assert.deepEqual([...b.first], [0, 2, 4]);
    assert.deepEqual([...b.size], [2, 2, 2]);
    // Bin 0: cached mean (100+200)/2 = 150, appended 15, output 5.5; largest stack 226, largest prompt 220.
    assert.deepEqual([b.cached[0], b.appended[0], b.output[0], b.stackMax[0], b.context[0]], [150, 15, 5.5, 226, 220]);
    // Bin 2: call 5 knows only appended: cached mean 410 (one known), appended (10+50)/2 = 30, output 9.
    assert.deepEqual([b.cached[2], b.appended[2], b.output[2], b.context[2]], [410, 30, 9, 420]);
    assert.deepEqual([...b.failed], [1, 0, 1]);
    assert.deepEqual([...b.misses], [0, 1, 1]);
  });

  it('uneven bins: 6 calls in 4 bins hold 1, 2, 1, 2 calls (⌊b·6/4⌋ boundaries 0, 1, 3, 4, 6)', () => {
    const b = binCalls(data, fitAll(6), 4, true);
    assert.deepEqual([...b.first], [0, 1, 3, 4]);
    assert.deepEqual([...b.size], [1, 2, 1, 2]);
    assert.deepEqual([binOfSlot(b, 0), binOfSlot(b, 2), binOfSlot(b, 5), binOfSlot(b, 6)], [0, 1, 3, -1]);
  });

  it('without cached, stacks are appended + output; axes then scale apart', () => {
    const b = binCalls(data, fitAll(6), 100, false);
    assert.deepEqual([...b.stackMax], [15, 26, 37, 408, 19, 50]);
    assert.deepEqual(axisMaxima(b, false), { bars: 500, context: 500 });
    // With cached shown both axes share the larger (429 stack vs 420 prompt → 500).
    assert.deepEqual(axisMaxima(binCalls(data, fitAll(6), 100, true), true), { bars: 500, context: 500 });
  });

  it('a window bins only the calls it touches', () => {
    const b = binCalls(data, { lo: 2.5, hi: 4.2 }, 100, true);
    assert.deepEqual([...b.first], [2, 3, 4]);
  });

  it('a filter (shown calls) bins those calls only, in their slots', () => {
    const failed: TimelineData = { columns: six, shown: Int32Array.from([1, 4]) };
    assert.equal(slotCount(failed), 2);
    assert.deepEqual([callAt(failed, 0), callAt(failed, 1)], [1, 4]);
    // Call 3 is hidden: its slot is the next shown call's.
    assert.deepEqual([slotOf(failed, 1), slotOf(failed, 3), slotOf(failed, 5)], [0, 1, 2]);
    assert.deepEqual([isShown(failed, 4), isShown(failed, 3)], [true, false]);
    const b = binCalls(failed, fitAll(2), 1, true);
    // Both failed calls in one bin: cached (200 + 410) / 2 = 305.
    assert.deepEqual([b.cached[0], b.failed[0], b.misses[0]], [305, 2, 1]);
  });

  it('a run of calls gives exact min, mean and max for the tooltip', () => {
    const s = runStats(data, 3, 3);
    assert.deepEqual([s.firstCall, s.lastCall, s.calls, s.failed, s.misses], [3, 5, 3, 1, 2]);
    assert.deepEqual(s.cached, { known: 2, min: 0, mean: 205, max: 410 });
    assert.deepEqual(s.appended, { known: 3, min: 10, mean: 460 / 3, max: 400 });
    assert.deepEqual(s.input, { known: 2, min: 400, mean: 410, max: 420 });
  });

  it('bins a million calls into a thousand columns whose sums add back up to the whole', () => {
    const n = 1_000_000;
    const c: TimelineColumns = {
      cached: new Float64Array(n),
      appended: new Float64Array(n),
      output: new Float64Array(n),
      input: new Float64Array(n),
      flags: new Uint8Array(n),
      missCause: new Uint8Array(n),
      cost: null,
    };
    for (let i = 0; i < n; i++) {
      c.cached[i] = i % 1000;
      c.appended[i] = 1;
      c.output[i] = 2;
      c.input[i] = (i % 1000) + 1;
      if (i % 997 === 0) c.flags[i] = F;
    }
    const b = binCalls({ columns: c, shown: null }, fitAll(n), 1000, true);
    assert.equal(b.length, 1000);
    let calls = 0;
    let failed = 0;
    let cachedSum = 0;
    for (let k = 0; k < b.length; k++) {
      calls += b.size[k]!;
      failed += b.failed[k]!;
      cachedSum += b.cached[k]! * b.size[k]!;
    }
    // Every call in exactly one bin; failures every 997th call: ⌈1,000,000 / 997⌉ = 1,004.
    assert.equal(calls, n);
    assert.equal(failed, 1004);
    // Σ (i mod 1000) over a million calls: 1,000 runs of 0…999 = 1,000 × 499,500.
    assert.equal(cachedSum, 1000 * 499_500);
  });
});
