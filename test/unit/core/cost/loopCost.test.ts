import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findRetryLoops } from '../../../../src/core/analysis/retryLoops';
import { priceSession } from '../../../../src/core/cost/callCost';
import { failingCarryUsd, loopCost, loopWastedUsd } from '../../../../src/core/cost/loopCost';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import type { CallTokens } from '../../../../src/core/trace/model';
import { failed, ok, SessionBuilder } from '../../../support/sessionBuilder';

// A retry loop in dollars, by hand. Five Claude Haiku 4.5 calls (input $1, read $0.10,
// 5-minute write $1.25, output $5 per million tokens), each writing its new tokens to a
// 5-minute cache; calls 0–2 each fail an Edit on app.ts with 400 characters of error
// (100 tokens), call 3's Edit succeeds.
//   wasted (tokens 210 + 300): outputs (100 + 50 + 60) × 5 = 1,050 µ$; each error prefilled once
//     by the next call, all of whose new tokens are 5-minute writes: 3 × 100 × 1.25 = 375 µ$. 1,425 µ$.
//   carried forward (tokens 100 × 4 + 100 × 3 + 100 × 2 = 900): each error at the next call's write
//     price, then at every later call's read price:
//     call 0's: 100 × (1.25 + 3 × 0.1) = 155; call 1's: 100 × (1.25 + 2 × 0.1) = 145; call 2's: 100 × (1.25 + 0.1) = 135.
//     435 µ$.

const µ = 1e-6;
const when = Date.UTC(2026, 1, 12, 14);

function tokens(read: number, write: number, output: number): Partial<CallTokens> {
  return {
    input: read + write,
    cached: read,
    appended: write,
    cacheWrite: write,
    cacheWrite5m: write,
    cacheWrite1h: 0,
    output,
  };
}

function session() {
  const haiku = { model: 'claude-haiku-4-5-20251001', startMs: when };
  return new SessionBuilder()
    .call(tokens(10_000, 1_000, 100), [failed('Edit', { targetFile: 'app.ts' })], haiku)
    .call(tokens(11_000, 200, 50), [failed('Edit', { targetFile: 'app.ts' })], haiku)
    .call(tokens(11_200, 300, 60), [failed('Edit', { targetFile: 'app.ts' })], haiku)
    .call(tokens(11_500, 500, 70), [ok('Edit', { targetFile: 'app.ts' })], haiku)
    .call(tokens(12_000, 100, 10), [], haiku)
    .build();
}

function close(actual: number | null, expected: number, what: string): void {
  assert.notEqual(actual, null, `${what} is null`);
  assert.ok(Math.abs(actual! - expected) < 1e-12, `${what}: ${actual} ≠ ${expected}`);
}

describe('retry loops in dollars (hand-worked)', () => {
  it('wasted and carried forward: the same tokens as the loop counts, each at the price its call paid', () => {
    const s = session();
    const retry = findRetryLoops(s, 3);
    const loop = retry.loops[0]!;
    assert.deepEqual([loop.wastedTokens, loop.carryForwardTokens, loop.escaped], [510, 900, true]);
    const cost = priceSession(
      { ...s, agent: { name: 'claude-code', version: null } },
      'agent-trace',
      createPriceBook(),
    );
    const usd = loopCost(loop, s, cost);
    close(usd.wastedUsd, 1425 * µ, 'wasted');
    close(usd.carriedForwardUsd, 435 * µ, 'carried forward');
    // The waste alone (what the team tables hold): the same hand-worked 1,425 µ$.
    close(loopWastedUsd(loop, s, cost), 1425 * µ, 'wasted alone');
    close(failingCarryUsd(retry.failing[2]!, s, cost), 135 * µ, 'the third failure');
  });

  it('a loop that touches an unpriced call has no dollar figure', () => {
    const s = session();
    s.calls[1]!.model = 'glm-4.6';
    const cost = priceSession(
      { ...s, agent: { name: 'claude-code', version: null } },
      'agent-trace',
      createPriceBook(),
    );
    const usd = loopCost(findRetryLoops(s, 3).loops[0]!, s, cost);
    assert.deepEqual(usd, { wastedUsd: null, carriedForwardUsd: null });
    assert.equal(loopWastedUsd(findRetryLoops(s, 3).loops[0]!, s, cost), null);
  });
});
