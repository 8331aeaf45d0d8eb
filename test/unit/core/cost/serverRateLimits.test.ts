import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { planWindows } from '../../../../src/core/cost/planWindows';
import type { WindowCall } from '../../../../src/core/cost/planWindows';
import { checkServerWindows, latestRateLimits, lineRateLimits } from '../../../../src/core/cost/serverRateLimits';
import type { ServerRateLimits } from '../../../../src/core/cost/serverRateLimits';
import { needsShared, sharedTrace } from '../../../support/helpers';

const rtchess = sharedTrace('codex/rtchess-exported-session.jsonl');

const H = 3_600_000;
const T0 = Date.UTC(2026, 11, 1, 8, 0, 0);

function report(percent5h: number, percentWeek: number, observedAtMs: number, resets5hMs: number): ServerRateLimits {
  return {
    observedAtMs,
    planType: null,
    windows: [
      { slot: 'primary', kind: '5h', usedPercent: percent5h, windowMinutes: 300, resetsAtMs: resets5hMs },
      {
        slot: 'secondary',
        kind: 'weekly',
        usedPercent: percentWeek,
        windowMinutes: 10080,
        resetsAtMs: T0 + 7 * 24 * H,
      },
    ],
  };
}

describe('Codex rate_limits beside the counted windows', () => {
  it('reads a token_count line, and nothing else', () => {
    const line =
      '{"timestamp":"2025-11-22T20:48:46.593Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":0.0,"window_minutes":300,"resets_at":1763862524},"secondary":{"used_percent":3.0,"window_minutes":10080,"resets_at":1764176208},"plan_type":"<b>pro</b>"}}}';
    const r = lineRateLimits(line)!;
    assert.equal(r.observedAtMs, Date.parse('2025-11-22T20:48:46.593Z'));
    assert.equal(r.planType, null, 'a plan type that is not a plain word is dropped');
    assert.deepEqual(r.windows, [
      { slot: 'primary', kind: '5h', usedPercent: 0, windowMinutes: 300, resetsAtMs: 1763862524000 },
      { slot: 'secondary', kind: 'weekly', usedPercent: 3, windowMinutes: 10080, resetsAtMs: 1764176208000 },
    ]);
    assert.equal(lineRateLimits('{"type":"event_msg","payload":{"type":"token_count","rate_limits":null}}'), null);
    assert.equal(lineRateLimits('{"rate_limits": trunc'), null, 'a cut line (a tail’s first) is passed over');
    assert.equal(
      lineRateLimits(
        '{"timestamp":"2025-11-22T20:48:46Z","type":"event_msg","payload":{"type":"token_count","rate_limits":{"primary":{"used_percent":"9","window_minutes":300,"resets_at":1}}}}',
      ),
      null,
      'a percentage that is not a number is no report',
    );
  });

  it('hand-worked: calls count by their end inside [reset − length, report]; the percentage implies the limit', () => {
    // Server: 5-hour window resets at 13:00, so it began at 08:00; the report came at 10:00 with 4% used.
    const resets = T0 + 5 * H;
    const calls: WindowCall[] = [
      // Started 07:59, ended 08:00:30: inside (the server counts it when it completes).
      { timeMs: T0 - 60_000, endMs: T0 + 30_000, session: 'a', tokens: 1_000_000, usd: 1 },
      // Ended 07:59:59: before the server's window.
      { timeMs: T0 - 120_000, endMs: T0 - 1000, session: 'a', tokens: 5_000_000, usd: 5 },
      // 09:00, no end time: its start is used.
      { timeMs: T0 + H, session: 'a', tokens: 1_000_000, usd: 2 },
      // Ended 10:00:01: after the report, not yet in its percentage.
      { timeMs: T0 + 2 * H - 60_000, endMs: T0 + 2 * H + 1000, session: 'a', tokens: 9_000_000, usd: 9 },
    ];
    const ours = planWindows('codex', calls, { align: 'call', anchorMs: {}, limits: {} }, T0 + 2 * H).windows;
    const [five, week] = checkServerWindows(report(4, 0, T0 + 2 * H, resets), calls, ours);
    assert.equal(five!.serverStartMs, T0);
    assert.equal(five!.calls, 2);
    assert.equal(five!.tokens, 2_000_000);
    assert.equal(five!.usd, 3);
    // 2M tokens are 4%: 50M; a whole 4 may be anything in (3, 5): 40M to 66.67M.
    assert.equal(five!.impliedTokens!.value, 50_000_000);
    assert.equal(five!.impliedTokens!.low, 40_000_000);
    assert.ok(Math.abs(five!.impliedTokens!.high! - 66_666_666.67) < 1);
    assert.equal(five!.impliedUsd!.value, 75);
    // Our 5-hour window opened with the first call (07:58 start), so it resets 2 min before the server's.
    assert.equal(five!.ours!.startMs, T0 - 120_000);
    assert.equal(five!.resetDiffMs, -120_000);
    // 0% used implies nothing, whatever our logs saw.
    assert.equal(week!.impliedTokens, null);
    assert.equal(week!.impliedUsd, null);
    // A percentage with decimals has no rounding range; 1% has no upper bound.
    const [fine] = checkServerWindows(report(2.5, 0, T0 + 2 * H, resets), calls, ours);
    assert.deepEqual(fine!.impliedTokens, { value: 80_000_000, low: null, high: null });
    const [one] = checkServerWindows(report(1, 0, T0 + 2 * H, resets), calls, ours);
    assert.deepEqual(one!.impliedTokens, { value: 200_000_000, low: 100_000_000, high: null });
  });

  it('the real rtchess rollout: its last report, read by hand from the log', { skip: needsShared(rtchess) }, () => {
    const text = readFileSync(rtchess!, 'utf8');
    // Its last line: {"timestamp":"2025-11-23T11:45:55.628Z", … "primary":{"used_percent":1.0,
    // "window_minutes":300,"resets_at":1763915305},"secondary":{"used_percent":0.0,"window_minutes":10080,"resets_at":1764459345}
    const r = latestRateLimits(text)!;
    assert.equal(new Date(r.observedAtMs).toISOString(), '2025-11-23T11:45:55.628Z');
    assert.deepEqual(
      r.windows.map((w) => [w.kind, w.usedPercent, new Date(w.resetsAtMs).toISOString()]),
      [
        ['5h', 1, '2025-11-23T16:28:25.000Z'],
        ['weekly', 0, '2025-11-29T23:35:45.000Z'],
      ],
    );
    // The tail alone holds it (what the CLI and the extension read first).
    assert.deepEqual(latestRateLimits(text.slice(-256 * 1024)), r);
  });
});
