import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countMissCauses, findCacheMisses } from '../../../../src/core/analysis/cacheMisses';
import { EDIT_LOOP, parseFile, SPOTTER } from '../../../support/helpers';
import { SessionBuilder } from '../../../support/sessionBuilder';

const MIN = 60_000;
const at = (minute: number): { startMs: number; endMs: number } => ({
  startMs: minute * MIN,
  endMs: minute * MIN + 1000,
});

describe('cache-miss causes on hand-built sessions', () => {
  it('each cause in turn, and calls that kept their prefix are no miss', () => {
    const s = new SessionBuilder()
      .call({ input: 1000, cached: 100 }, [], at(0)) // c0: 10% cached → first call
      .call({ input: 1500, cached: 1000 }, [], at(1)) // c1: all of c0's prompt came back → no miss
      .call({ input: 1600, cached: 200 }, [], at(10)) // c2: 200 < 0.5 × 1500, 9 min idle > 5 → idle gap
      .call({ input: 1700, cached: 100 }, [], { ...at(11), model: 'other' }) // c3: 1 min, new model → prefix change
      .compaction()
      .call({ input: 300, cached: 0 }, [], { ...at(12), model: 'other' }) // c4: compaction
      .call({ input: 400, cached: 100 }, [], { ...at(13), model: 'other' }) // c5: 100 < 150, nothing explains it
      .call({ input: 500, cached: null }, [], at(14)) // c6: cache unknown → not judged
      .build();
    const misses = findCacheMisses(s);
    assert.deepEqual(
      misses.map((m) => [m.callIndex, m.cause]),
      [
        [0, 'first-call'],
        [2, 'idle-gap'],
        [3, 'prefix-change'],
        [4, 'compaction'],
        [5, 'unexplained'],
      ],
    );
    // c2 lost 1500 − 200 tokens of c1's prompt; the gap is 10:00 − 1:01 = 8 min 59 s.
    assert.equal(misses[1]!.lostTokens, 1300);
    assert.match(misses[1]!.detail, /^idle 8 min 59 s since the previous call > cache TTL 5 min 00 s$/);
    assert.deepEqual(countMissCauses(misses), {
      'first-call': 1,
      'subagent-start': 0,
      compaction: 1,
      'idle-gap': 1,
      'prefix-change': 1,
      unexplained: 1,
    });
  });

  it('a miss after a rewind is put down to the rewind, in words that say so', () => {
    const s = new SessionBuilder()
      .call({ input: 1000, cached: 900 }, [], at(0))
      .compaction()
      .call({ input: 600, cached: 0 }, [], at(1))
      .build();
    s.compactions[0]!.rewind = true;
    const miss = findCacheMisses(s)[0]!;
    assert.equal(miss.cause, 'compaction');
    assert.equal(miss.detail, 'a rewind to an earlier message cut the context back just before this call');
  });

  it('the TTL is a setting: with 10 minutes the 9-minute gap no longer explains the miss', () => {
    const s = new SessionBuilder()
      .call({ input: 1000, cached: 900 }, [], at(0))
      .call({ input: 1100, cached: 0 }, [], at(9))
      .build();
    assert.equal(findCacheMisses(s)[0]!.cause, 'idle-gap');
    assert.equal(findCacheMisses(s, { cacheTtlMs: 10 * MIN, missRatio: 0.5 })[0]!.cause, 'unexplained');
  });

  it("a sub-agent's first call is a sub-agent start; a well-cached first call is no miss", () => {
    const sub = new SessionBuilder('x', 'subagent').call({ input: 1000, cached: 0 }).build();
    assert.deepEqual(
      findCacheMisses(sub).map((m) => m.cause),
      ['subagent-start'],
    );
    const warm = new SessionBuilder().call({ input: 1000, cached: 600 }).build();
    assert.deepEqual(findCacheMisses(warm), []);
  });
});

describe('cache-miss causes on the real Claude Code fixtures', async () => {
  it('spotter: the model switch at call 5 (opus → haiku) and the /compact before call 138', async () => {
    const main = (await parseFile(SPOTTER)).model.sessions[0]!;
    // By hand from the file: call 5 (line 103) is the first claude-haiku call, cache_read 0;
    // call 138 (line 1492) follows the compact_boundary on line 1481.
    assert.deepEqual(
      findCacheMisses(main).map((m) => [m.callIndex, m.cause]),
      [
        [5, 'prefix-change'],
        [138, 'compaction'],
      ],
    );
  });

  it('M-Claude: the first call and four idle gaps of 24, 6, 11 and 14 minutes', async () => {
    const main = (await parseFile(EDIT_LOOP)).model.sessions[0]!;
    // cache_read 0 on calls 0, 4, 22, 27 and 40; the gaps read off the timestamps of the
    // call before and the prompt or tool result that starts each call.
    const misses = findCacheMisses(main);
    assert.deepEqual(
      misses.map((m) => [m.callIndex, m.cause]),
      [
        [0, 'first-call'],
        [4, 'idle-gap'],
        [22, 'idle-gap'],
        [27, 'idle-gap'],
        [40, 'idle-gap'],
      ],
    );
    assert.deepEqual(
      misses.slice(1).map((m) => /idle (\d+ min \d+ s)/.exec(m.detail)![1]),
      ['24 min 25 s', '6 min 03 s', '11 min 40 s', '14 min 19 s'],
    );
  });
});
