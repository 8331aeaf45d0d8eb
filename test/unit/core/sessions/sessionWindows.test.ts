import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { priceTrace } from '../../../../src/core/cost/callCost';
import { ledgerOf } from '../../../../src/core/cost/callLedger';
import { planWindows } from '../../../../src/core/cost/planWindows';
import type { WindowOptions } from '../../../../src/core/cost/planWindows';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { activeMs } from '../../../../src/core/sessions/sessionQuery';
import type { SessionRow } from '../../../../src/core/sessions/sessionQuery';
import { indexRecords } from '../../../../src/core/sessions/sessionRecord';
import {
  limitSetting,
  sessionPlanWindows,
  windowCallsOf,
  windowSessions,
  windowShortText,
} from '../../../../src/core/sessions/sessionWindows';
import { EDIT_LOOP, parseFile } from '../../../support/helpers';

// The M-Claude log (41 calls in 50 minutes) as the session index keeps it, counted into plan windows the
// way the status bar and the Plan Windows view count them. Expected figures from the independent references:
// test/reference/claude_code_totals.py (input 2,069,302 incl. cached, output 24,363) and
// test/reference/cost_reference.mjs ($3.36867825 at list price).
const TOKENS = 2_069_302 + 24_363;
const USD = 3.36867825;

async function indexedMClaude(): Promise<{ row: SessionRow; calls: ReturnType<typeof indexRecords>[number]['calls'] }> {
  const parsed = await parseFile(EDIT_LOOP);
  const [main] = indexRecords(parsed, {}, createPriceBook());
  // The row the index would list: the record plus the index's own columns.
  const row = {
    ...main!.session,
    id: 1,
    fileId: 1,
    path: EDIT_LOOP,
    agentId: 'claude-code',
    project: '/p',
    fileMtimeMs: 0,
    lastWriteMs: 0,
    live: false,
    fileStatus: 'ok',
    problem: null,
  } as SessionRow;
  return { row, calls: main!.calls };
}

const NO_LIMITS: WindowOptions = { align: 'call', anchorMs: {}, limits: {} };

describe('plan windows from the session index', () => {
  it("a session's calls: every timed call, whole prompt plus output, its list-price dollars", async () => {
    const { row, calls } = await indexedMClaude();
    const wc = windowCallsOf(row, calls);
    assert.equal(wc.length, 41);
    assert.equal(
      wc.reduce((s, c) => s + c.tokens, 0),
      TOKENS,
    );
    assert.ok(Math.abs(wc.reduce((s, c) => s + (c.usd ?? 0), 0) - USD) < 1e-9);
    assert.ok(wc.every((c) => c.session === row.key));
  });

  it('equal, window for window, to what the CLI counts from a fresh read of the log (ledgerOf)', async () => {
    const parsed = await parseFile(EDIT_LOOP);
    const ledger = ledgerOf(parsed.model, priceTrace(parsed.model, createPriceBook()), EDIT_LOOP);
    const options: WindowOptions = { align: 'call', anchorMs: {}, limits: { '5h': { tokens: 3_000_000, usd: 40 } } };
    const last = Math.max(...ledger.map((c) => c.timeMs!));
    const now = last + 60_000;
    const fromLog = planWindows(
      'claude',
      ledger.map((c) => ({ timeMs: c.timeMs!, session: c.session, tokens: c.tokens, usd: c.usd })),
      options,
      now,
    );
    const { row, calls } = await indexedMClaude();
    const [fromIndex] = sessionPlanWindows([{ row, calls }], () => options, now);
    assert.deepEqual(
      fromIndex!.windows.map((w) => ({ ...w, usd: Number(w.usd!.toFixed(9)) })),
      fromLog.windows.map((w) => ({ ...w, usd: Number(w.usd!.toFixed(9)) })),
    );
  });

  it('one minute after the last call: one open 5-hour window from the first call, its share of a $40 limit, and the short text', async () => {
    const { row, calls } = await indexedMClaude();
    const times = calls.map((c) => c.startMs ?? c.endMs!);
    const first = Math.min(...times);
    const now = Math.max(...times) + 60_000;
    const plans = sessionPlanWindows(
      [{ row, calls }],
      () => ({ align: 'call', anchorMs: {}, limits: { '5h': { tokens: null, usd: 40 } } }),
      now,
    );
    assert.deepEqual(
      plans.map((p) => p.family),
      ['claude'],
    );
    const five = plans[0]!.windows.find((w) => w.kind === '5h')!;
    assert.equal(five.active, true);
    assert.equal(five.startMs, first);
    assert.equal(five.endMs, first + 5 * 3_600_000);
    assert.equal(five.tokens, TOKENS);
    // $3.36867825 of $40 is 8.42%. The calls span under 1 h 30 min, so the burn rate is over $2.2/h, and the $36.63 left
    // needs (40 − 3.37) / (3.37 / span) hours: more than the hours left before the reset.
    const spanH = (Math.max(...times) - first) / 3_600_000;
    const hoursToLimit = (40 - USD) / (USD / spanH);
    const hoursLeft = (first + 5 * 3_600_000 - now) / 3_600_000;
    assert.ok(hoursToLimit > hoursLeft, `${hoursToLimit} h to the limit, ${hoursLeft} h to the reset`);
    assert.ok(Math.abs(five.limits[0]!.share - USD / 40) < 1e-12);
    assert.equal(five.limits[0]!.reachedBeforeReset, false);
    assert.equal(windowShortText(five, now), '5h 8.4%');
    // Without a limit, what it used and when it resets.
    const bare = sessionPlanWindows([{ row, calls }], () => NO_LIMITS, now)[0]!.windows.find((w) => w.kind === '5h')!;
    const minutesLeft = Math.round((first + 5 * 3_600_000 - now) / 60_000);
    assert.equal(
      windowShortText(bare, now),
      `5h 2.09M tokens · resets in ${Math.floor(minutesLeft / 60)} h ${String(minutesLeft % 60).padStart(2, '0')} min`,
    );
  });

  it('only Claude Code and Codex sessions active in the last 8 days count', async () => {
    const { row } = await indexedMClaude();
    const last = activeMs(row);
    const gemini = { ...row, id: 2, agentId: 'gemini-cli' } as SessionRow;
    const gone = { ...row, id: 3, fileStatus: 'problem' } as SessionRow;
    assert.deepEqual(
      windowSessions([row, gemini, gone], last + 7 * 24 * 3_600_000).map((r) => r.id),
      [1],
    );
    assert.deepEqual(windowSessions([row], last + 9 * 24 * 3_600_000), []);
  });

  it('a limit setting: tokens, dollars, both, none, or a named problem', () => {
    assert.deepEqual(limitSetting('2M'), { limit: { tokens: 2_000_000, usd: null }, problem: null });
    assert.deepEqual(limitSetting(' $40 , 500k '), { limit: { tokens: 500_000, usd: 40 }, problem: null });
    assert.deepEqual(limitSetting(''), { limit: null, problem: null });
    assert.deepEqual(limitSetting('2 apples'), {
      limit: null,
      problem: '"2 apples" is neither tokens (2M, 500k) nor dollars ($40)',
    });
  });
});
