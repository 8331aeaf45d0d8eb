import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cacheExpiresAt,
  countdownText,
  FIVE_MINUTES_MS,
  ONE_HOUR_MS,
  sessionCacheTtl,
} from '../../../../src/core/sessions/cacheCountdown';
import type { Session } from '../../../../src/core/trace/model';
import { EDIT_LOOP, parseFile } from '../../../support/helpers';

describe('the prompt-cache countdown', () => {
  it('counts down from the last request start plus the TTL, rounding up to whole seconds', () => {
    const start = Date.parse('2026-03-21T10:00:00Z');
    const expires = cacheExpiresAt({ startMs: start, endMs: start + 20_000 }, FIVE_MINUTES_MS)!;
    assert.equal(expires, start + 300_000, 'from the request, not from the response 20 s later');
    assert.equal(countdownText(expires, start + 108_000), 'cache 3:12');
    assert.equal(countdownText(expires, start + 299_500), 'cache 0:01');
    assert.equal(countdownText(expires, start + 300_000), 'cache expired');
    assert.equal(countdownText(start + ONE_HOUR_MS, start), 'cache 1:00:00');
    assert.equal(countdownText(null, start), 'cache ?');
    assert.equal(
      cacheExpiresAt({ startMs: null, endMs: start }, FIVE_MINUTES_MS),
      start + FIVE_MINUTES_MS,
      'the response time when the request time is unknown',
    );
  });

  it('takes the TTL from the last cache write the log records, the 5-minute lower bound for Codex, else the setting', async () => {
    const session = (await parseFile(EDIT_LOOP)).model.sessions[0]!;
    const withWrites = (w5: number | null, w1h: number | null): Session => ({
      ...session,
      calls: session.calls.map((c, i) => ({
        ...c,
        tokens: { ...c.tokens, cacheWrite5m: i === 0 ? 100 : w5, cacheWrite1h: w1h },
      })),
    });
    assert.deepEqual(sessionCacheTtl(withWrites(null, 500), 5 * 60_000), { ttlMs: ONE_HOUR_MS, basis: 'log-1h' });
    assert.deepEqual(sessionCacheTtl(withWrites(200, 0), 7 * 60_000), { ttlMs: FIVE_MINUTES_MS, basis: 'log-5m' });
    // The log itself: every cache write of M-Claude's log is a 5-minute one (60 lines say ephemeral_1h_input_tokens 0, grep).
    assert.deepEqual(sessionCacheTtl(session, 7 * 60_000), { ttlMs: FIVE_MINUTES_MS, basis: 'log-5m' });
    // A log without the split: the setting decides.
    const noSplit: Session = {
      ...session,
      calls: session.calls.map((c) => ({ ...c, tokens: { ...c.tokens, cacheWrite5m: null, cacheWrite1h: null } })),
    };
    assert.deepEqual(sessionCacheTtl(noSplit, 7 * 60_000), { ttlMs: 7 * 60_000, basis: 'setting' });
    assert.deepEqual(sessionCacheTtl({ ...session, agent: { name: 'codex', version: null } }, 7 * 60_000), {
      ttlMs: FIVE_MINUTES_MS,
      basis: 'openai-minimum',
    });
  });
});
