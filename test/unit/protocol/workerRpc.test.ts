import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { isRpcResponse, respond, RpcError, WorkerRpc } from '../../../src/protocol/workerRpc';
import type { RpcRequest, RpcResponse } from '../../../src/protocol/workerRpc';

// The client's and the worker's ends of WorkerRpc over a real MessageChannel (the port a
// worker thread talks through), so every message is cloned as it is between threads.

interface Methods {
  twice: { params: { n: number }; result: number };
  later: { params: { n: number; ms: number }; result: number };
  refuse: { params: { why: string }; result: never };
  column: { params: { length: number }; result: Int32Array };
  unclonable: { params: Record<string, never>; result: unknown };
}

/** A worker answering Methods on `port`; its own messages (`{ note }`) go out before each answer. */
function serve(port: MessagePort): void {
  const post = (m: RpcResponse | { note: string }, transfer: readonly unknown[] = []): void =>
    port.postMessage(m, transfer as ArrayBuffer[]);
  port.on('message', (m: RpcRequest<Methods>) => {
    post({ note: `working on ${m.id}` });
    switch (m.method) {
      case 'twice':
        respond(post, m.id, () => m.params.n * 2);
        return;
      case 'later':
        respond(post, m.id, () => new Promise((resolve) => setTimeout(() => resolve(m.params.n), m.params.ms)));
        return;
      case 'refuse':
        respond(
          post,
          m.id,
          () => {
            throw new RangeError(m.params.why);
          },
          { codeOf: (e) => (e instanceof RangeError ? 'range' : null) },
        );
        return;
      case 'column':
        respond(post, m.id, () => new Int32Array(m.params.length).fill(7), {
          transfer: (ok) => [(ok as Int32Array).buffer],
        });
        return;
      case 'unclonable':
        respond(post, m.id, () => ({ f: () => 1 }));
        return;
    }
  });
}

function pair(): { rpc: WorkerRpc<Methods>; notes: string[]; close(): void } {
  const { port1, port2 } = new MessageChannel();
  serve(port2);
  const rpc = new WorkerRpc<Methods>((request, transfer) => port1.postMessage(request, transfer as ArrayBuffer[]));
  const notes: string[] = [];
  port1.on('message', (m: RpcResponse | { note: string }) => {
    if (!rpc.receive(m)) notes.push((m as { note: string }).note);
  });
  return {
    rpc,
    notes,
    close: () => {
      port1.close();
      port2.close();
    },
  };
}

describe('WorkerRpc and respond', () => {
  it('answers each request with its own result, whatever order the answers come in', async () => {
    const { rpc, notes, close } = pair();
    try {
      const slow = rpc.request('later', { n: 5, ms: 30 });
      const fast = rpc.request('twice', { n: 21 });
      assert.equal(await fast, 42);
      assert.equal(await slow, 5);
      // The worker's own messages are not answers: the client's protocol gets them.
      assert.deepEqual(notes, ['working on 1', 'working on 2']);
    } finally {
      close();
    }
  });

  it("rejects with the worker's error, its message and its code", async () => {
    const { rpc, close } = pair();
    try {
      await assert.rejects(
        rpc.request('refuse', { why: 'block size 0 is not allowed' }),
        (e: unknown) => e instanceof RpcError && e.message === 'block size 0 is not allowed' && e.code === 'range',
      );
    } finally {
      close();
    }
  });

  it('moves a transferred answer rather than copying it', async () => {
    const { rpc, close } = pair();
    try {
      const column = await rpc.request('column', { length: 1000 });
      assert.ok(column instanceof Int32Array);
      assert.equal(column.length, 1000);
      assert.equal(column[999], 7);
    } finally {
      close();
    }
  });

  it('answers an answer that cannot be sent with why, instead of never answering', async () => {
    const { rpc, close } = pair();
    try {
      await assert.rejects(
        rpc.request('unclonable', {}),
        (e: unknown) => e instanceof RpcError && /could not be cloned/i.test(e.message),
      );
    } finally {
      close();
    }
  });

  it('once stopped, rejects what is pending and everything asked later with the first reason', async () => {
    const sent: unknown[] = [];
    const rpc = new WorkerRpc<Methods>((request) => sent.push(request));
    const pending = rpc.request('twice', { n: 1 });
    assert.deepEqual(sent, [{ kind: 'request', id: 1, method: 'twice', params: { n: 1 } }]);
    rpc.stop(new Error('the worker stopped (exit code 1)'));
    rpc.stop(new Error('a later reason'));
    await assert.rejects(pending, /exit code 1/);
    await assert.rejects(rpc.request('twice', { n: 2 }), /exit code 1/);
    assert.equal(sent.length, 1, 'nothing is posted to a stopped worker');
    assert.match(String(rpc.stopped?.message), /exit code 1/);
    // A late answer to a request already settled is taken and dropped.
    assert.equal(rpc.receive({ kind: 'response', id: 1, ok: 2 }), true);
  });

  it('tells answers from other messages', () => {
    assert.equal(isRpcResponse({ kind: 'response', id: 3, ok: null }), true);
    assert.equal(isRpcResponse({ kind: 'response', id: 3, err: 'x' }), true);
    for (const other of [
      null,
      'response',
      { kind: 'progress', bytesRead: 1 },
      { kind: 'response', id: '3' },
      { event: 'notice' },
      { type: 'done', seq: 1 },
    ]) {
      assert.equal(isRpcResponse(other), false, JSON.stringify(other));
    }
  });
});
