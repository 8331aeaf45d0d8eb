import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIVE_HOURS_MS, parseLimit, planFamily, windowsOf } from '../../../../src/core/cost/planWindows';
import type { WindowCall, WindowOptions } from '../../../../src/core/cost/planWindows';

// Hand-built timelines; every expected figure is worked out in the comments.
const T0 = Date.UTC(2026, 11, 1, 9, 20); // 2026-12-01 09:20 UTC
const MIN = 60_000;
const H = 60 * MIN;
const call = (atMin: number, tokens: number, usd: number | null, session = 'a'): WindowCall => ({
  timeMs: T0 + atMin * MIN,
  session,
  tokens,
  usd,
});
const opts = (over: Partial<WindowOptions> = {}): WindowOptions => ({
  align: 'call',
  anchorMs: {},
  limits: {},
  ...over,
});

describe('plan windows', () => {
  it('a call one minute before a 5-hour edge stays in the window; one at the edge opens the next', () => {
    // Window 1 opens at 09:20 and covers [09:20, 14:20). Calls at +0, +60 min, +299 min are in it;
    // the call at +300 min (14:20 exactly) opens window 2 at 14:20, ending 19:20.
    const calls = [call(0, 1000, 0.1), call(60, 2000, 0.2), call(299, 3000, 0.3), call(300, 4000, 0.4)];
    const w = windowsOf(calls, '5h', opts(), T0 + 1000 * H);
    assert.equal(w.length, 2);
    assert.deepEqual([w[0]!.startMs, w[0]!.endMs, w[0]!.calls, w[0]!.tokens], [T0, T0 + 5 * H, 3, 6000]);
    assert.ok(Math.abs(w[0]!.usd! - 0.6) < 1e-12);
    assert.deepEqual(
      [w[1]!.startMs, w[1]!.endMs, w[1]!.calls, w[1]!.tokens],
      [T0 + 300 * MIN, T0 + 300 * MIN + FIVE_HOURS_MS, 1, 4000],
    );
    // Burn over first → last call: 6,000 tokens in 299 min = 6000 / (299/60) ≈ 1,204.01 tokens/h.
    assert.ok(Math.abs(w[0]!.burn!.tokensPerHour - 6000 / (299 / 60)) < 1e-9);
    // A window of one call has no span, so no rate.
    assert.equal(w[1]!.burn, null);
    assert.deepEqual([w[0]!.active, w[1]!.active], [false, false]);
  });

  it('a gap longer than a window starts a fresh one at the next call, not at the old edge', () => {
    // Calls at 0 and +30 min, then nothing for 7 hours: the call at +450 min opens a window at 16:50, not at 14:20.
    const w = windowsOf([call(0, 10, 0.01), call(30, 10, 0.01), call(450, 10, 0.01)], '5h', opts(), T0);
    assert.deepEqual(
      w.map((x) => (x.startMs - T0) / MIN),
      [0, 450],
    );
    // ccusage's alignment floors the start to the hour: 09:20 → 09:00 and 16:50 → 16:00.
    const h = windowsOf(
      [call(0, 10, 0.01), call(30, 10, 0.01), call(450, 10, 0.01)],
      '5h',
      opts({ align: 'hour' }),
      T0,
    );
    assert.deepEqual(
      h.map((x) => (x.startMs - T0) / MIN),
      [-20, 400],
    );
  });

  it('with floored starts, a call past the floored edge opens the next window although it is within 5 h of the first call', () => {
    // Floored window [09:00, 14:00): the call at +280 min (14:00) is outside it.
    const h = windowsOf([call(0, 1, null), call(279, 1, null), call(280, 1, null)], '5h', opts({ align: 'hour' }), T0);
    assert.deepEqual(
      h.map((x) => x.calls),
      [2, 1],
    );
  });

  it('a weekly window with a fixed reset time counts from the anchor, used or not', () => {
    // Reset every Monday 08:00 UTC; 2026-11-30 is a Monday. T0 (Tue 09:20) is in [11-30 08:00, 12-07 08:00);
    // a call 6 days later (12-07 09:20) is past the reset, in the next week.
    const anchor = Date.UTC(2026, 10, 30, 8, 0);
    const w = windowsOf([call(0, 5, 1), call(6 * 24 * 60, 7, 2)], 'weekly', opts({ anchorMs: { weekly: anchor } }), T0);
    assert.deepEqual(
      w.map((x) => [x.startMs, x.calls]),
      [
        [anchor, 1],
        [anchor + 7 * 24 * H, 1],
      ],
    );
    // Without the anchor, the week opens at the first call and the second one falls within it.
    assert.equal(windowsOf([call(0, 5, 1), call(6 * 24 * 60, 7, 2)], 'weekly', opts(), T0).length, 1);
  });

  it('an active window: used, burn rate, projection to reset and time to the limit', () => {
    // Calls at +0 (100k tokens, $1), +30 min (200k, $2), +60 min (300k, $3): 600k tokens and $6 in 1 h,
    // so 600k tokens/h and $6/h. Now = +90 min: the window ends at +300 min, 3.5 h left.
    // Projected at reset: 600k + 600k × 3.5 = 2.7M tokens; $6 + $6 × 3.5 = $27.
    // Limit 1M tokens: 400k left at 600k/h = 40 min, before the reset. Limit $50: $44 left at $6/h = 7 h 20 min, after it.
    const calls = [call(0, 100_000, 1), call(30, 200_000, 2, 'b'), call(60, 300_000, 3)];
    const [w] = windowsOf(calls, '5h', opts({ limits: { '5h': { tokens: 1_000_000, usd: 50 } } }), T0 + 90 * MIN);
    assert.equal(w!.active, true);
    assert.ok(Math.abs(w!.burn!.tokensPerHour - 600_000) < 1e-6);
    assert.ok(Math.abs(w!.burn!.usdPerHour! - 6) < 1e-9);
    assert.ok(Math.abs(w!.projected!.tokens - 2_700_000) < 1e-6);
    assert.ok(Math.abs(w!.projected!.usd! - 27) < 1e-9);
    const [tok, usd] = w!.limits;
    assert.deepEqual([tok!.unit, tok!.share, tok!.reachedBeforeReset], ['tokens', 0.6, true]);
    assert.ok(Math.abs(tok!.timeToLimitMs! - 40 * MIN) < 1);
    assert.equal(usd!.unit, 'usd');
    assert.ok(Math.abs(usd!.timeToLimitMs! - (7 * H + 20 * MIN)) < 1);
    assert.equal(usd!.reachedBeforeReset, false);
    // Shares: session a 400k of 600k tokens and $4 of $6; b 200k and $2.
    assert.deepEqual(
      w!.sessions.map((s) => [s.session, s.calls, s.tokens]),
      [
        ['a', 2, 400_000],
        ['b', 1, 200_000],
      ],
    );
    assert.ok(Math.abs(w!.sessions[0]!.tokenShare - 2 / 3) < 1e-12);
    assert.ok(Math.abs(w!.sessions[1]!.usdShare! - 1 / 3) < 1e-12);
  });

  it('a limit already passed reads 0 time left; unpriced calls are counted, never priced as $0', () => {
    const [w] = windowsOf(
      [call(0, 600, null), call(10, 600, 0.5)],
      '5h',
      opts({ limits: { '5h': { tokens: 1000, usd: null } } }),
      T0 + 20 * MIN,
    );
    assert.deepEqual(
      [w!.unpricedCalls, w!.usd, w!.limits[0]!.timeToLimitMs, w!.limits[0]!.reachedBeforeReset],
      [1, 0.5, 0, true],
    );
    const [none] = windowsOf([call(0, 1, null)], '5h', opts(), T0);
    assert.equal(none!.usd, null);
  });

  it('limits and plans are read from words', () => {
    assert.deepEqual(parseLimit('2M'), { tokens: 2_000_000 });
    assert.deepEqual(parseLimit('500k'), { tokens: 500_000 });
    assert.deepEqual(parseLimit('$40'), { usd: 40 });
    assert.deepEqual(parseLimit('12.5usd'), { usd: 12.5 });
    assert.equal(parseLimit('0'), null);
    assert.equal(parseLimit('lots'), null);
    assert.deepEqual(
      [planFamily('claude-code'), planFamily('codex'), planFamily('gemini-cli')],
      ['claude', 'codex', null],
    );
  });
});
