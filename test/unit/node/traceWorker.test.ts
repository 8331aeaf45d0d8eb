import assert from 'node:assert/strict';
import {
  appendFileSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { before, describe, it } from 'node:test';
import { CALL_FLAG } from '../../../src/core/view/timelineColumns';
import { TraceCancelledError, TraceWorkerClient } from '../../../src/node/traceWorkerClient';
import type { OpenParams } from '../../../src/protocol/traceWorkerProtocol';
import { listCompanions, readTraceFiles } from '../../../src/node/traceFiles';
import { parseWithContext } from '../../../src/node/contextCollect';
import { createPriceBook } from '../../../src/core/cost/priceBook';
import { TraceService } from '../../../src/core/view/traceService';
import { ensureBuilt, repoRoot, SPOTTER } from '../../support/helpers';

// The trace worker as the extension starts it (dist/traceWorker.js, a real worker thread):
// the same answers as the core, computed off the caller's thread.

const WORKER = join(repoRoot, 'dist/traceWorker.js');

async function spotterParams(): Promise<OpenParams> {
  const files = [
    { key: basename(SPOTTER), path: SPOTTER },
    ...(await listCompanions(SPOTTER)).files.map((c) => ({ key: c.rel, path: c.path })),
  ];
  return {
    files,
    totalBytes: statSync(SPOTTER).size,
    format: null,
    fileName: basename(SPOTTER),
    analysis: {},
    prices: null,
  };
}

describe('trace worker', () => {
  before(() => ensureBuilt(WORKER));

  it('reads the spotter log with its sub-agents, says how far it got, and answers about it', async () => {
    const client = new TraceWorkerClient(WORKER);
    const progress: number[] = [];
    try {
      const opened = await client.open(await spotterParams(), (read) => progress.push(read));
      // 149 + 3 + 1 calls (the reader tests count them); the main session's summary comes with the header.
      assert.deepEqual([opened.header.sessionCount, opened.header.callCount], [3, 153]);
      assert.equal(opened.intro?.summary.llmCalls, 149);
      assert.equal(progress[progress.length - 1], statSync(SPOTTER).size, 'the last progress is the whole file');
      const body = (await client.request('sessionBody', { sessionId: opened.header.defaultSessionId! }))!;
      // Typed arrays arrive as typed arrays (moved, not copied into plain arrays).
      assert.ok(body.columns.cached instanceof Float64Array && body.columns.flags instanceof Uint8Array);
      assert.equal(body.columns.flags.filter((f) => (f & CALL_FLAG.failed) !== 0).length, 11);
      const search = await client.request('search', { query: 'string to replace not found', sessionId: null });
      assert.equal(search.total, 2);
      const edits = await client.request('callsUsingTool', {
        sessionId: opened.header.defaultSessionId!,
        tool: 'Edit',
      });
      assert.ok(edits instanceof Int32Array && edits.length > 0);
      await assert.rejects(client.request('nope' as 'header', {}), /unknown method/);
    } finally {
      client.dispose();
    }
  });

  it("counts the context anatomy off the caller's thread: the same as a parse that collected the text as it read", async () => {
    const client = new TraceWorkerClient(WORKER);
    try {
      const params = await spotterParams();
      const opened = await client.open({ ...params, prices: [] }, () => undefined);
      const id = opened.header.defaultSessionId!;
      // The worker reads the files again beside a parse to collect the messages' text (its open parse keeps none).
      const fromWorker = await client.request('sessionContext', { sessionId: id });
      const { parsed, context } = await parseWithContext(await readTraceFiles(SPOTTER), null);
      const direct = new TraceService(parsed, {
        fileName: basename(SPOTTER),
        formatChosen: false,
        analysis: {},
        prices: createPriceBook(),
        context,
      }).sessionContext({ sessionId: id });
      assert.equal(fromWorker?.content, 'text');
      assert.equal(
        fromWorker?.calibration.tokenizer,
        'o200k_base (gpt-tokenizer), line-number prefixes of file reads one token less',
      );
      assert.equal(fromWorker?.loggedInput.length, 149);
      assert.deepEqual(fromWorker, direct);
      // Null: the host turns it into "No session … in this trace." for the page (queryAnswer).
      assert.equal(await client.request('sessionContext', { sessionId: 'no-such-session' }), null);
    } finally {
      client.dispose();
    }
  });

  it('cancel stops the worker at once: the open and every pending answer reject with the reason', async () => {
    const client = new TraceWorkerClient(WORKER);
    const opening = client.open(await spotterParams(), () => undefined);
    const asked = client.request('header', {});
    client.cancel(new TraceCancelledError('Reading was cancelled.'));
    await assert.rejects(opening, TraceCancelledError);
    await assert.rejects(asked, /cancelled/);
    assert.equal(client.isStopped, true);
    await assert.rejects(client.request('header', {}), /cancelled/);
  });

  it('a file that cannot be read fails the open with the reason', async () => {
    const client = new TraceWorkerClient(WORKER);
    await assert.rejects(
      client.open(
        {
          files: [{ key: 'gone.jsonl', path: join(repoRoot, 'no-such-file.jsonl') }],
          totalBytes: null,
          format: null,
          fileName: 'gone.jsonl',
          analysis: {},
          prices: null,
        },
        () => undefined,
      ),
      /ENOENT/,
    );
    client.dispose();
  });

  it('a trace larger than the worker may hold stops the worker with a message, not the caller', async () => {
    // 8 MB of heap cannot hold the parse of a 1.8 MB log's JSON objects in flight.
    const client = new TraceWorkerClient(WORKER, 8);
    await assert.rejects(
      client.open(await spotterParams(), () => undefined),
      /more than the 8 MB of memory the inspector allows itself|stopped/,
    );
    client.dispose();
  });

  it('live tail: readMore reads only what the file gained, holds a half-written line, and asks to reopen after a truncation', async () => {
    const bytes = readFileSync(SPOTTER);
    const dir = mkdtempSync(join(tmpdir(), 'agent-trace-live-'));
    const path = join(dir, 'live.jsonl');
    const cut = bytes.indexOf(0x0a, 700_000) + 1 + 30; // 30 bytes into a line
    writeFileSync(path, bytes.subarray(0, cut));
    const client = new TraceWorkerClient(WORKER);
    try {
      const opened = await client.open(
        {
          files: [{ key: 'live.jsonl', path }],
          totalBytes: cut,
          format: null,
          fileName: 'live.jsonl',
          analysis: {},
          prices: null,
          live: true,
        },
        () => undefined,
      );
      const early = opened.header.callCount;
      // The half line is held, not read as malformed JSON.
      assert.ok(!opened.header.diagnostics.some((d) => d.severity === 'error'));
      appendFileSync(path, bytes.subarray(cut));
      const more = await client.request('readMore', {});
      assert.equal(more.kind, 'read');
      if (more.kind !== 'read') return;
      // The whole main log: 149 calls (the reader tests count them), as a one-shot read gives.
      assert.ok(early < 149);
      assert.equal(more.opened.header.callCount, 149);
      assert.deepEqual(more.bytesRead, [bytes.length]);
      // What was read from disk is what was appended, not the file again.
      assert.equal(more.newBytes, bytes.length - cut);
      // Nothing new: nothing read, the same trace.
      const again = await client.request('readMore', {});
      assert.equal(again.kind === 'read' && again.opened.header.callCount, 149);
      assert.equal(again.kind === 'read' && again.newBytes, 0);
      // Rotated: the file is shorter than what was read.
      writeFileSync(path, bytes.subarray(0, 1000));
      assert.deepEqual(await client.request('readMore', {}), { kind: 'reopen', reason: 'truncated' });
    } finally {
      client.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('live tail of a growing log: each readMore reads the appended bytes only, whatever the size already read', async () => {
    // The spotter log written line by line in five appends of growing size: each read costs its append, not the file.
    const bytes = readFileSync(SPOTTER);
    const dir = mkdtempSync(join(tmpdir(), 'agent-trace-live-'));
    const path = join(dir, 'grow.jsonl');
    const ends = [0.2, 0.4, 0.6, 0.8, 1].map((share) =>
      share === 1 ? bytes.length : bytes.indexOf(0x0a, Math.floor(bytes.length * share)) + 1,
    );
    writeFileSync(path, bytes.subarray(0, ends[0]));
    const client = new TraceWorkerClient(WORKER);
    try {
      const opened = await client.open(
        {
          files: [{ key: 'grow.jsonl', path }],
          totalBytes: ends[0]!,
          format: null,
          fileName: 'grow.jsonl',
          analysis: {},
          prices: null,
          live: true,
        },
        () => undefined,
      );
      let calls = opened.header.callCount;
      for (let k = 1; k < ends.length; k++) {
        appendFileSync(path, bytes.subarray(ends[k - 1], ends[k]));
        const more = await client.request('readMore', {});
        assert.equal(more.kind, 'read');
        if (more.kind !== 'read') return;
        assert.equal(more.newBytes, ends[k]! - ends[k - 1]!, `append ${k}: the bytes read are the bytes appended`);
        assert.deepEqual(more.bytesRead, [ends[k]]);
        assert.ok(more.opened.header.callCount >= calls, `append ${k}: calls only grow`);
        calls = more.opened.header.callCount;
      }
      assert.equal(calls, 149);
    } finally {
      client.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('live tail: a file replaced at its path (rotation) or deleted is not read on from the old offset', async () => {
    const bytes = readFileSync(SPOTTER);
    const dir = mkdtempSync(join(tmpdir(), 'agent-trace-live-'));
    const path = join(dir, 'rotate.jsonl');
    const cut = bytes.indexOf(0x0a, 300_000) + 1;
    writeFileSync(path, bytes.subarray(0, cut));
    const client = new TraceWorkerClient(WORKER);
    try {
      await client.open(
        {
          files: [{ key: 'rotate.jsonl', path }],
          totalBytes: cut,
          format: null,
          fileName: 'rotate.jsonl',
          analysis: {},
          prices: null,
          live: true,
        },
        () => undefined,
      );
      // A new, longer file moved into place: its size alone would look like an append.
      writeFileSync(join(dir, 'next.jsonl'), bytes);
      renameSync(join(dir, 'next.jsonl'), path);
      assert.deepEqual(await client.request('readMore', {}), { kind: 'reopen', reason: 'replaced' });
      unlinkSync(path);
      assert.deepEqual(await client.request('readMore', {}), { kind: 'reopen', reason: 'deleted' });
    } finally {
      client.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a file opened for reading once (not live) answers readMore with "reopen"', async () => {
    const client = new TraceWorkerClient(WORKER);
    try {
      await client.open(await spotterParams(), () => undefined);
      assert.deepEqual(await client.request('readMore', {}), { kind: 'reopen', reason: 'not-live' });
    } finally {
      client.dispose();
    }
  });

  it('bytes handed over (remote files) are read like a file', async () => {
    const client = new TraceWorkerClient(WORKER);
    try {
      const bytes = new TextEncoder().encode(
        '{"type":"header","format":"agent-trace","version":1}\n{"type":"session","id":"s","role":"main"}\n{"type":"llm_call","session":"s","id":"c","tokens":{"input":10,"cached":4,"appended":6,"cacheWrite":null,"output":2,"reasoningOutput":null}}\n',
      );
      const opened = await client.open(
        {
          files: [{ key: 'x.trace.jsonl', bytes }],
          totalBytes: bytes.length,
          format: null,
          fileName: 'x.trace.jsonl',
          analysis: {},
          prices: null,
        },
        () => undefined,
      );
      assert.deepEqual(
        [opened.header.format, opened.header.callCount, opened.intro?.summary.tokens.cached],
        ['agent-trace', 1, 4],
      );
    } finally {
      client.dispose();
    }
  });
});
