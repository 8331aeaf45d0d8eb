import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { CALL_FLAG } from '../../../../src/core/view/timelineColumns';
import type { TimelineColumns } from '../../../../src/core/view/timelineColumns';
import { TraceService } from '../../../../src/core/view/traceService';
import { BinPyramid, binCalls, slotCount } from '../../../../webview/timeline/bins';
import type { Bins, TimelineData } from '../../../../webview/timeline/bins';
import { parseFile, SPOTTER } from '../../../support/helpers';

// The pyramid bins a window from block sums; the reference is the plain call-by-call
// binning (no pyramid) of the same window, and, for one bin, a sum written out here.
// Data: the real spotter session's columns (149 calls, NaN where a figure is unknown, 11
// failed and 2 missed calls) laid end to end 137 times (20,413 calls), so blocks straddle
// copies, and the same with a filter (failed or missed calls only, and every third call).

const MAIN = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04';

function repeated(c: TimelineColumns, times: number): TimelineColumns {
  const tile = (a: Float64Array): Float64Array => {
    const out = new Float64Array(a.length * times);
    for (let t = 0; t < times; t++) out.set(a, t * a.length);
    return out;
  };
  const flags = new Uint8Array(c.flags.length * times);
  for (let t = 0; t < times; t++) flags.set(c.flags, t * c.flags.length);
  return {
    cached: tile(c.cached),
    appended: tile(c.appended),
    output: tile(c.output),
    input: tile(c.input),
    flags,
    missCause: new Uint8Array(flags.length),
    cost: null,
  };
}

function assertSameBins(actual: Bins, expected: Bins, what: string): void {
  assert.equal(actual.length, expected.length, what);
  assert.deepEqual([...actual.first], [...expected.first], what);
  assert.deepEqual([...actual.size], [...expected.size], what);
  // Counts and maxima are exact; means are sums added in another order (integers here, so exact too).
  for (const key of ['cached', 'appended', 'output', 'stackMax', 'context', 'failed', 'misses'] as const) {
    for (let i = 0; i < actual.length; i++) {
      const a = actual[key][i]!;
      const e = expected[key][i]!;
      if (Number.isNaN(e)) assert.ok(Number.isNaN(a), `${what}: ${key}[${i}] is NaN`);
      else assert.ok(Math.abs(a - e) <= 1e-9 * Math.max(1, Math.abs(e)), `${what}: ${key}[${i}] ${a} vs ${e}`);
    }
  }
}

describe('bin pyramid', () => {
  let columns: TimelineColumns;
  let original: TimelineColumns;

  before(async () => {
    const service = new TraceService(await parseFile(SPOTTER), {
      fileName: 'spotter.jsonl',
      formatChosen: false,
      analysis: {},
    });
    original = service.sessionBody({ sessionId: MAIN })!.columns;
    columns = repeated(original, 137);
  });

  it('bins any window like binning call by call: whole session, zoomed in, ragged edges, both stack kinds', () => {
    const d: TimelineData = { columns, shown: null };
    const pyramid = new BinPyramid(d);
    const n = slotCount(d);
    assert.equal(n, 149 * 137);
    const windows = [
      { lo: 0, hi: n },
      { lo: 17.3, hi: 9_871.6 },
      { lo: 4_095, hi: 4_097 + 700 * 3 },
      { lo: n - 5_000.5, hi: n },
      { lo: 123, hi: 123 + 1_300 },
    ];
    for (const w of windows) {
      for (const maxBins of [650, 97, 1]) {
        for (const showCached of [true, false]) {
          const what = `${w.lo}-${w.hi} in ${maxBins} bins, cached ${showCached}`;
          assertSameBins(binCalls(d, w, maxBins, showCached, pyramid), binCalls(d, w, maxBins, showCached), what);
        }
      }
    }
  });

  it('bins a filtered view (slots are the shown calls) like binning call by call', () => {
    const failedOrMissed: number[] = [];
    for (let i = 0; i < columns.flags.length; i++)
      if (columns.flags[i]! & (CALL_FLAG.failed | CALL_FLAG.miss)) failedOrMissed.push(i);
    const thirds = Int32Array.from({ length: Math.floor(columns.flags.length / 3) }, (_, k) => k * 3 + 1);
    for (const shown of [Int32Array.from(failedOrMissed), thirds]) {
      const d: TimelineData = { columns, shown };
      const pyramid = new BinPyramid(d);
      const n = slotCount(d);
      for (const w of [
        { lo: 0, hi: n },
        { lo: n / 3, hi: (2 * n) / 3 },
      ]) {
        assertSameBins(binCalls(d, w, 333, true, pyramid), binCalls(d, w, 333, true), `${n} shown, ${w.lo}-${w.hi}`);
      }
    }
  });

  it('one bin over the whole session holds the session totals, summed here from the columns of one copy', () => {
    const d: TimelineData = { columns, shown: null };
    const b = binCalls(d, { lo: 0, hi: slotCount(d) }, 1, true, new BinPyramid(d));
    let sum = 0;
    let known = 0;
    let largestPrompt = 0;
    for (let i = 0; i < 149; i++) {
      if (!Number.isNaN(original.appended[i]!)) {
        sum += original.appended[i]!;
        known += 1;
      }
      if (original.input[i]! > largestPrompt) largestPrompt = original.input[i]!;
    }
    // The same session 137 times: the same mean and the same largest prompt; 11 failed calls per copy.
    assert.equal(b.size[0], 149 * 137);
    assert.ok(Math.abs(b.appended[0]! - sum / known) < 1e-9);
    assert.equal(b.context[0], largestPrompt);
    assert.equal(b.failed[0], 11 * 137);
    assert.equal(b.misses[0], 2 * 137);
  });
});
