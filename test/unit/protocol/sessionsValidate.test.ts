import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkSessionsNotification } from '../../../src/protocol/sessionsValidate';

describe('messages from the Agent Sessions panels are checked before the host acts', () => {
  it('accepts the four messages the page sends', () => {
    assert.deepEqual(checkSessionsNotification({ type: 'ready' }), { ok: true, value: { type: 'ready' } });
    assert.deepEqual(checkSessionsNotification({ type: 'export', format: 'csv' }), {
      ok: true,
      value: { type: 'export', format: 'csv' },
    });
    assert.deepEqual(checkSessionsNotification({ type: 'open', sessionId: 12 }), {
      ok: true,
      value: { type: 'open', sessionId: 12 },
    });
    assert.deepEqual(checkSessionsNotification({ type: 'log/error', message: 'x' }), {
      ok: true,
      value: { type: 'log/error', message: 'x' },
    });
  });

  it('refuses crafted ones: wrong types, paths, huge numbers, unknown types, extra powers', () => {
    for (const m of [
      null,
      [],
      'ready',
      { type: 'export', format: '../../etc/passwd' },
      { type: 'export' },
      { type: 'open', sessionId: '3' },
      { type: 'open', sessionId: -1 },
      { type: 'open', sessionId: 1.5 },
      { type: 'open', sessionId: 2 ** 60 },
      { type: 'open', path: '/etc/passwd' },
      { type: 'source/revealLine', file: 0, line: 1 },
      { type: 'log/error', message: { toString: 'x' } },
      { type: '__proto__' },
      { type: 'ready'.padEnd(65, ' ') },
      { type: 'open', sessionId: Number.NaN },
      { type: 'open', sessionId: Infinity },
    ]) {
      assert.equal(checkSessionsNotification(m).ok, false, JSON.stringify(m));
    }
    // Extra fields are dropped, never passed on.
    assert.deepEqual(checkSessionsNotification({ type: 'export', format: 'json', path: '/etc/passwd' }), {
      ok: true,
      value: { type: 'export', format: 'json' },
    });
    // Longer than the inspector's log limit (validate.ts, 64 KiB): refused like the inspector's, not cut.
    assert.equal(checkSessionsNotification({ type: 'log/error', message: 'x'.repeat(64 * 1024) }).ok, true);
    assert.deepEqual(checkSessionsNotification({ type: 'log/error', message: 'x'.repeat(64 * 1024 + 1) }), {
      ok: false,
      error: 'log/error.message is longer than 65536 characters',
    });
    // The reason names the field, never echoes a huge or hostile type whole.
    const odd = checkSessionsNotification({ type: `\u202e${'y'.repeat(1000)}` });
    assert.equal(odd.ok, false);
    assert.ok(!odd.ok && odd.error.length < 120, !odd.ok ? odd.error : '');
  });
});
