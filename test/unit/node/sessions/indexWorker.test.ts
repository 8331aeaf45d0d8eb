import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SessionIndexClient } from '../../../../src/node/sessions/indexClient';
import type { IndexEvent, IndexWorkerConfig } from '../../../../src/protocol/indexWorkerProtocol';
import { createFakeHome, FAKE_HOME_SESSIONS, fakeHomeRoots } from '../../../support/fakeHome.mjs';
import { ensureBuilt, repoRoot } from '../../../support/helpers';

// The built index worker (dist/indexWorker.js), driven as the extension drives it, over a fake
// home of real sessions. A session file that grows while watched shows its new calls.

const script = join(repoRoot, 'dist/indexWorker.js');
const scratch = mkdtempSync(join(tmpdir(), 'agent-trace-worker-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function config(home: string, dbPath: string): IndexWorkerConfig {
  const r = fakeHomeRoots(home);
  return {
    dbPath,
    roots: [
      { agentId: 'claude-code', root: r.claudeCode },
      { agentId: 'codex', root: r.codex },
    ],
    analysis: {},
    prices: [],
    maxFileBytes: 2 ** 31,
    stateVersion: 'test',
  };
}

function waitForEvent(
  events: IndexEvent[],
  match: (e: IndexEvent) => boolean,
  timeoutMs = 10_000,
): Promise<IndexEvent> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      const e = events.find(match);
      if (e) resolve(e);
      else if (Date.now() > deadline)
        reject(new Error(`no such event within ${timeoutMs} ms; got ${JSON.stringify(events.map((x) => x.event))}`));
      else setTimeout(tick, 20);
    };
    tick();
  });
}

describe('the index worker', () => {
  before(() => ensureBuilt(script));

  it('indexes a fake home, then reads a live session as it grows and says what changed', async () => {
    const home = createFakeHome(join(scratch, 'home1'));
    const file = join(home, FAKE_HOME_SESSIONS.editLoop.rel);
    const full = readFileSync(file);
    // The session is running: its first 80 of 120 lines are written, now.
    let cut = 0;
    for (let i = 0; i < 80; i++) cut = full.indexOf(0x0a, cut) + 1;
    writeFileSync(file, full.subarray(0, cut));
    const events: IndexEvent[] = [];
    const client = new SessionIndexClient(script, (e) => events.push(e));
    try {
      assert.deepEqual(await client.request('configure', config(home, join(scratch, 'i1.sqlite'))), { notice: null });
      const sync = await client.request('sync', {});
      assert.equal(sync.readOnly, false);
      assert.ok(
        events.some((e) => e.event === 'progress'),
        'progress while indexing',
      );
      const before = (await client.request('rows', {})).rows.find(
        (r) => r.key === 'e5821007-9ca0-4a36-afc0-94da583da0ea',
      )!;
      assert.ok(before.calls < 41);
      // The agent writes the rest; the worker (watching files changed in the last 10 minutes) reads it.
      appendFileSync(file, full.subarray(cut));
      const changed = await waitForEvent(events, (e) => e.event === 'changed');
      assert.ok(changed.event === 'changed' && changed.paths.includes(file));
      assert.equal(changed.event === 'changed' && changed.outcomes[0]!.kind, 'appended');
      const after = (await client.request('rows', {})).rows.find(
        (r) => r.key === 'e5821007-9ca0-4a36-afc0-94da583da0ea',
      )!;
      assert.deepEqual([after.calls, after.failedToolCalls, after.retryLoops, after.live], [41, 13, 1, true]);
      assert.equal((await client.request('calls', { sessionId: after.id })).length, 41);
      assert.ok((await client.request('search', { text: 'sync_raw' })).includes(after.id));
    } finally {
      await client.dispose();
    }
  });

  it('closed, it leaves no timer behind: a process that closed its index exits at once, not 10 s later', async () => {
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const client = new SessionIndexClient(script, () => undefined);
    await client.request('configure', config(createFakeHome(join(scratch, 'home3')), join(scratch, 'i3.sqlite')));
    await client.dispose();
    // dispose waits for the worker's answer to close, or 10 s on a machine too loaded to give one.
    assert.equal(timers(), before, 'the 10-second wait is cleared once the worker answers');
  });

  it('two windows on one index: the first indexes, the second reads what it wrote', async () => {
    const home = createFakeHome(join(scratch, 'home2'));
    const db = join(scratch, 'shared.sqlite');
    const first = new SessionIndexClient(script, () => undefined);
    const second = new SessionIndexClient(script, () => undefined);
    try {
      await first.request('configure', config(home, db));
      await second.request('configure', config(home, db));
      assert.equal((await first.request('sync', {})).readOnly, false);
      assert.deepEqual(await second.request('sync', {}), { readOnly: true });
      assert.equal((await second.request('rows', {})).rows.length, 6);
    } finally {
      await first.dispose();
      await second.dispose();
    }
  });
});
