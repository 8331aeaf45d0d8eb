import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkSessionsMessage } from '../../../src/protocol/sessionsValidate';

describe('messages from the Agent Sessions panels are checked before the host acts', () => {
  it('accepts the four messages the page sends', () => {
    assert.deepEqual(checkSessionsMessage({ type: 'ready' }), { ok: true, value: { type: 'ready' } });
    assert.deepEqual(checkSessionsMessage({ type: 'export', format: 'csv' }), { ok: true, value: { type: 'export', format: 'csv' } });
    assert.deepEqual(checkSessionsMessage({ type: 'open', sessionId: 12 }), { ok: true, value: { type: 'open', sessionId: 12 } });
    assert.deepEqual(checkSessionsMessage({ type: 'log/error', message: 'x' }), { ok: true, value: { type: 'log/error', message: 'x' } });
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
    ]) {
      assert.equal(checkSessionsMessage(m).ok, false, JSON.stringify(m));
    }
    // Extra fields are dropped, never passed on.
    assert.deepEqual(checkSessionsMessage({ type: 'export', format: 'json', path: '/etc/passwd' }), { ok: true, value: { type: 'export', format: 'json' } });
    assert.equal((checkSessionsMessage({ type: 'log/error', message: 'x'.repeat(100_000) }) as { value: { message: string } }).value.message.length, 64 * 1024);
  });
});
