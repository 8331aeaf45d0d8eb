import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Channel } from '../../../src/protocol/channel';

type Requests = {
  'sum/get': { params: { a: number; b: number }; result: number };
  'fail/get': { params: null; result: string };
  'slow/get': { params: null; result: string };
  'columns/get': {
    params: null;
    result: { label: string; big: Float64Array; small: Uint8Array; nested: { more: Float64Array[] } };
  };
};
type ANote = { type: 'ready' };
type BNote = { type: 'init'; value: number };

/** Two channels back to back, as the host and the webview are; messages cross asynchronously like postMessage. */
function pair(timeoutMs = 1000) {
  const errors: string[] = [];
  const host: Channel<BNote, ANote, Record<never, never>, Requests> = new Channel(
    (m) => queueMicrotask(() => web.receive(structuredClone(m))),
    {
      timeoutMs,
      onError: (e) => errors.push(`host: ${e}`),
    },
  );
  const web: Channel<ANote, BNote, Requests, Record<never, never>> = new Channel(
    (m) => queueMicrotask(() => host.receive(structuredClone(m))),
    {
      timeoutMs,
      onError: (e) => errors.push(`web: ${e}`),
    },
  );
  return { host, web, errors };
}

describe('Channel', () => {
  it('delivers notifications both ways (ready → init handshake)', async () => {
    const { host, web } = pair();
    const got: number[] = [];
    host.onNotification((m) => {
      if (m.type === 'ready') host.notify({ type: 'init', value: 42 });
    });
    const inited = new Promise<void>((resolve) =>
      web.onNotification((m) => {
        got.push(m.value);
        resolve();
      }),
    );
    web.notify({ type: 'ready' });
    await inited;
    assert.deepEqual(got, [42]);
  });

  it('answers a request with its result, matched by id even when answers come back out of order', async () => {
    const { host, web } = pair();
    host.onRequest('sum/get', async ({ a, b }) => {
      await new Promise((r) => setTimeout(r, a)); // the first request answers last
      return a + b;
    });
    const [x, y] = await Promise.all([web.request('sum/get', { a: 30, b: 1 }), web.request('sum/get', { a: 1, b: 2 })]);
    assert.equal(x, 31);
    assert.equal(y, 3);
  });

  it("rejects with the other side's error message", async () => {
    const { host, web } = pair();
    host.onRequest('fail/get', () => {
      throw new Error('No call 7 in session s');
    });
    await assert.rejects(web.request('fail/get', null), /No call 7 in session s/);
  });

  it('rejects a request nobody handles', async () => {
    const { web } = pair();
    await assert.rejects(web.request('sum/get', { a: 1, b: 1 }), /no handler for sum\/get/);
  });

  it('times out when no answer comes', async () => {
    const { host, web } = pair(50);
    host.onRequest('slow/get', () => new Promise<string>(() => undefined));
    await assert.rejects(web.request('slow/get', null), /slow\/get got no answer within 50 ms/);
  });

  it('rejects pending requests on dispose and reports stray responses instead of throwing', async () => {
    const { host, web, errors } = pair();
    host.onRequest('slow/get', () => new Promise<string>(() => undefined));
    const pending = web.request('slow/get', null);
    web.dispose();
    await assert.rejects(pending, /closed/);
    web.receive({ type: 'response', inReplyTo: 999, ok: 1 });
    web.receive('not a message');
    assert.deepEqual(errors, [
      'web: response to unknown or expired request 999',
      'web: ignored a message without a string "type"',
    ]);
  });

  it('ignores a request whose id is not a plain whole number, and says so; an unknown method is answered and said', async () => {
    const { host, errors } = pair();
    const posted: unknown[] = [];
    const lone: Channel<BNote, ANote, Record<never, never>, Requests> = new Channel((m) => posted.push(m), {
      onError: (e) => errors.push(`lone: ${e}`),
    });
    lone.onRequest('sum/get', ({ a, b }) => a + b);
    for (const id of ['1', 1.5, 2 ** 53 + 2, Number.NaN, {}])
      lone.receive({ type: 'sum/get', id, params: { a: 1, b: 2 } });
    lone.receive({ type: 'files/read', id: 4, params: { path: '/etc/passwd' } });
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(posted, [{ type: 'response', inReplyTo: 4, err: 'no handler for files/read' }]);
    assert.equal(errors.filter((e) => /ignored a request whose id is not a whole number/.test(e)).length, 5);
    assert.ok(errors.some((e) => /no handler for request "files\/read"/.test(e)));
    void host;
  });

  it('sends big typed arrays of an answer one message each, each after the last was delivered, then the answer', async () => {
    const sent: { type: string; index?: number; deliveredBefore: number }[] = [];
    let delivered = 0;
    const errors: string[] = [];
    // The host side posts like webview.postMessage: a promise settled once the page has the message.
    const host: Channel<BNote, ANote, Record<never, never>, Requests> = new Channel(
      (m) => {
        const message = m as { type: string; index?: number };
        sent.push({
          type: message.type,
          ...(message.index !== undefined ? { index: message.index } : {}),
          deliveredBefore: delivered,
        });
        return new Promise<void>((resolve) =>
          setTimeout(() => {
            web.receive(structuredClone(m));
            delivered += 1;
            resolve();
          }, 2),
        );
      },
      { partBytes: 64, onError: (e) => errors.push(`host: ${e}`) },
    );
    const web: Channel<ANote, BNote, Requests, Record<never, never>> = new Channel(
      (m) => queueMicrotask(() => host.receive(structuredClone(m))),
      { onError: (e) => errors.push(`web: ${e}`) },
    );
    const big = Float64Array.from({ length: 100 }, (_, i) => i * 1.5);
    const other = Float64Array.from({ length: 10 }, (_, i) => -i);
    const small = Uint8Array.of(1, 2, 3);
    const answer = { label: 'columns', big, small, nested: { more: [other, big.subarray(0, 8)] } };
    host.onRequest('columns/get', () => answer);
    const got = await web.request('columns/get', null);
    // 100 × 8 bytes and 10 × 8 bytes reach 64 bytes, as do the 8 values of the subarray; the 3-byte array does not.
    assert.deepEqual(
      sent.map((m) => [m.type, m.index ?? null]),
      [
        ['response/part', 0],
        ['response/part', 1],
        ['response/part', 2],
        ['response', null],
      ],
    );
    // Each message went out only after the one before it was delivered.
    assert.deepEqual(
      sent.map((m) => m.deliveredBefore),
      [0, 1, 2, 3],
    );
    assert.deepEqual(got, answer);
    assert.ok(got.big instanceof Float64Array && got.nested.more[0] instanceof Float64Array);
    // The answer the handler made is left as it was.
    assert.equal(answer.big, big);
    assert.deepEqual(errors, []);
  });

  it('rejects an answer whose parts did not all come, and reports malformed or stray parts', async () => {
    const errors: string[] = [];
    const posted: unknown[] = [];
    const web: Channel<ANote, BNote, Requests, Record<never, never>> = new Channel((m) => posted.push(m), {
      onError: (e) => errors.push(e),
    });
    const pending = web.request('columns/get', null);
    const id = (posted[0] as { id: number }).id;
    web.receive({ type: 'response/part', inReplyTo: id, index: 'x', data: new Float64Array(2) });
    web.receive({ type: 'response/part', inReplyTo: id, index: 0, data: [1, 2] });
    web.receive({ type: 'response/part', inReplyTo: id + 7, index: 0, data: new Float64Array(2) });
    web.receive({ type: 'response/part', inReplyTo: id, index: 0, data: new Float64Array(2) });
    web.receive({
      type: 'response',
      inReplyTo: id,
      ok: { label: 'x', big: { $responsePart: 0 }, small: { $responsePart: 1 }, nested: { more: [] } },
    });
    await assert.rejects(pending, /without all of its parts/);
    assert.deepEqual(errors, [
      'ignored a malformed response part',
      'ignored a malformed response part',
      `part of a response to unknown or expired request ${id + 7}`,
    ]);
  });
});
