import assert from 'node:assert/strict';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  truncateSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { after, describe, it } from 'node:test';
import type { SessionRow } from '../../../../src/core/sessions/sessionQuery';
import { agentRoots, resolveRoots } from '../../../../src/node/sessions/agentRegistry';
import { ftsQuery, SCHEMA_VERSION, SessionIndex, textParam } from '../../../../src/node/sessions/sessionIndex';
import { READ_CANCELLED, readFresh, SessionIndexer } from '../../../../src/node/sessions/sessionIndexer';
import { parseTrace } from '../../../../src/core/trace/parseTrace';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { readUserPrices } from '../../../../src/core/cost/userPrices';
import { openDatabase } from '../../../../src/node/sessions/sqlite';
import { indexPriceBook, ParsePool, parseThreadsFor } from '../../../../src/node/sessions/parsePool';
import { ensureBuilt, repoRoot, SPOTTER } from '../../../support/helpers';
import { addOtherAgents, createFakeHome, FAKE_HOME_SESSIONS, fakeHomeRoots } from '../../../support/fakeHome.mjs';

// The index over a fake home of real sessions (test/support/fakeHome.mjs). Expected figures are
// the ones the reader tests check against test/reference/*.py and hand counts: the spotter
// session 149 calls at 98.42% (claude_code_totals.py), the M-Claude log 41 calls, 13 failed
// tool calls and one Edit/Write loop, the Codex 0.114 rollout 9 calls at 82.96% (codex_deltas.py).

const temp: string[] = [];
after(() => {
  for (const d of temp) rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), 'agent-trace-index-'));
  temp.push(d);
  return d;
}

function setup(home = createFakeHome(join(scratch(), 'home'))): {
  home: string;
  roots: ReturnType<typeof agentRoots>;
  dbPath: string;
} {
  if (!temp.includes(home)) temp.push(home);
  // Every agent's folder inside the fake home: nothing of this machine's own sessions is read.
  return {
    home,
    roots: agentRoots(resolveRoots(fakeHomeRoots(home), { env: {}, home, workspaceFolders: [home] })),
    dbPath: join(scratch(), 'index.sqlite'),
  };
}

function byKey(rows: SessionRow[], key: string): SessionRow {
  const r = rows.find((x) => x.key === key);
  assert.ok(r, `a row for session ${key}`);
  return r;
}

/** Rows and calls without what differs between two indexes of the same files (row ids, when they were read). */
function contents(index: SessionIndex): unknown {
  const rows = index.rows(0).sort((a, b) => (a.path + a.key < b.path + b.key ? -1 : 1));
  return rows.map((r) => ({ ...r, id: undefined, fileId: undefined, live: undefined, calls: index.calls(r.id) }));
}

describe('SessionIndex over a fake home of real sessions', () => {
  it('lists every session with its figures, sub-agents under their session, the project from the log', async () => {
    const { roots, dbPath } = setup();
    const { index, notice } = SessionIndex.open(dbPath);
    assert.equal(notice, null);
    const result = await new SessionIndexer(index).sync(roots);
    assert.equal(
      result.files,
      4,
      'three Claude Code sessions and one Codex rollout; the sibling agent-*.jsonl is not a session',
    );
    assert.equal(result.counts.new, 4);
    const rows = index.rows();
    const spotter = byKey(rows, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04');
    assert.equal(spotter.calls, 149);
    assert.ok(Math.abs(spotter.cacheHitRate! - 0.9842141202938094) < 1e-12);
    assert.equal(spotter.userTurns, 2);
    assert.equal(spotter.failedToolCalls, 11);
    assert.equal(spotter.retryLoops, 1);
    assert.equal(spotter.project, '/home/USER/projects/spotter-worktrees/spotter-4te');
    assert.equal(spotter.agentId, 'claude-code');
    const subagents = rows.filter((r) => r.parentKey === spotter.key).map((r) => [r.key, r.role]);
    assert.deepEqual(subagents.sort(), [
      ['aac57f5', 'subagent'],
      ['acompact-946d2b', 'compaction'],
    ]);
    const loop = byKey(rows, 'e5821007-9ca0-4a36-afc0-94da583da0ea');
    assert.deepEqual(
      [loop.calls, loop.failedToolCalls, loop.retryLoops, loop.project],
      [41, 13, 1, 'C:\\Windows\\System32'],
    );
    const codex = byKey(rows, '01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73');
    assert.deepEqual(
      [codex.agentId, codex.calls, codex.tokens.input, codex.project],
      ['codex', 9, 95819, '/workspace/project'],
    );
    assert.ok(Math.abs(codex.cacheHitRate! - 0.8295640739310575) < 1e-12);
    assert.equal(index.calls(codex.id).length, 9);
    assert.equal(rows.length, 6);
    index.close();
  });

  it('finds sessions by prompt, tool target and error text', async () => {
    const { roots, dbPath } = setup();
    const { index } = SessionIndex.open(dbPath);
    await new SessionIndexer(index).sync(roots);
    const rows = index.rows();
    const idOf = (key: string): number => byKey(rows, key).id;
    // The M-Claude log's failing Write says "File has not been read yet" (its retry loop).
    assert.ok(index.search('has not been read yet').has(idOf('e5821007-9ca0-4a36-afc0-94da583da0ea')));
    // A target file of the same loop, by a prefix of its name.
    assert.ok(index.search('sync_raw').has(idOf('e5821007-9ca0-4a36-afc0-94da583da0ea')));
    assert.equal(index.search('sync_raw').has(idOf('01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73')), false);
    // FTS syntax in a query is searched for as text, not run.
    assert.equal(ftsQuery('a" OR "b'), '"a""" AND "OR" AND """b"*');
    assert.doesNotThrow(() => index.search('NEAR( ) * ^ "'));
    index.close();
  });

  it('after an append, reads only the new bytes, and the index equals one built from scratch', async () => {
    const { home, roots, dbPath } = setup();
    const file = join(home, FAKE_HOME_SESSIONS.spotter.rel);
    const full = readFileSync(file);
    // Cut mid-line, 60% in: the half line is left for the next read.
    const cut = Math.floor(full.length * 0.6);
    writeFileSync(file, full.subarray(0, cut));
    const { index } = SessionIndex.open(dbPath);
    const indexer = new SessionIndexer(index);
    await indexer.sync(roots);
    const before = byKey(index.rows(), 'ae4a77f8-aedd-4bc1-888f-c94edc91af04');
    assert.ok(before.calls > 0 && before.calls < 149);
    appendFileSync(file, full.subarray(cut));
    const result = await indexer.sync(roots);
    assert.equal(result.counts.appended, 1);
    assert.equal(result.counts.unchanged, 3);
    const lineStart = full.lastIndexOf(0x0a, cut - 1) + 1;
    assert.equal(result.bytesRead, full.length - lineStart, 'only the bytes after the last complete line were read');
    const fresh = SessionIndex.open(join(scratch(), 'fresh.sqlite')).index;
    await new SessionIndexer(fresh).sync(roots);
    assert.deepEqual(contents(index), contents(fresh));
    index.close();
    fresh.close();
  });

  it('a session kept live in memory reads each append from the last byte read, a half line held, and equals one built from scratch', async () => {
    const { home, roots, dbPath } = setup();
    const file = join(home, FAKE_HOME_SESSIONS.spotter.rel);
    const full = readFileSync(file);
    // Two cuts mid-line: each sync leaves a half line in the live parse's memory.
    const first = Math.floor(full.length * 0.4);
    const second = Math.floor(full.length * 0.7);
    writeFileSync(file, full.subarray(0, first));
    const { index } = SessionIndex.open(dbPath);
    const indexer = new SessionIndexer(index);
    const keepLive = (): boolean => true;
    await indexer.sync(roots, { keepLive });
    appendFileSync(file, full.subarray(first, second));
    const middle = await indexer.sync(roots, { keepLive });
    assert.equal(middle.counts.appended, 1);
    assert.equal(
      middle.bytesRead,
      second - first,
      'only the appended bytes are read: the half line is already in memory',
    );
    appendFileSync(file, full.subarray(second));
    const last = await indexer.sync(roots, { keepLive });
    assert.equal(last.bytesRead, full.length - second);
    assert.equal(byKey(index.rows(), 'ae4a77f8-aedd-4bc1-888f-c94edc91af04').calls, 149);
    const fresh = SessionIndex.open(join(scratch(), 'fresh.sqlite')).index;
    await new SessionIndexer(fresh).sync(roots);
    assert.deepEqual(contents(index), contents(fresh));
    index.close();
    fresh.close();
  });

  it('resumes an append after a restart from the parse saved in the index', async () => {
    const { home, roots, dbPath } = setup();
    const file = join(home, FAKE_HOME_SESSIONS.editLoop.rel);
    const full = readFileSync(file);
    const cut = full.indexOf(0x0a, Math.floor(full.length / 2)) + 1;
    writeFileSync(file, full.subarray(0, cut));
    // Recent files keep their saved parse.
    const first = SessionIndex.open(dbPath).index;
    await new SessionIndexer(first, { now: () => Date.now(), keepStateWithinMs: 10 * 365 * 86_400_000 }).sync(roots);
    first.close();
    appendFileSync(file, full.subarray(cut));
    // A new process: nothing in memory, the saved parse is read back from the index.
    const second = SessionIndex.open(dbPath).index;
    const result = await new SessionIndexer(second, { keepStateWithinMs: 10 * 365 * 86_400_000 }).sync(roots);
    assert.equal(result.counts.appended, 1);
    assert.equal(result.bytesRead, full.length - cut);
    const loop = byKey(second.rows(), 'e5821007-9ca0-4a36-afc0-94da583da0ea');
    assert.deepEqual([loop.calls, loop.failedToolCalls, loop.retryLoops], [41, 13, 1]);
    second.close();
  });

  it('reads a truncated or rotated file again from the start and says why; a deleted one stays listed as deleted', async () => {
    const { home, roots, dbPath } = setup();
    const { index } = SessionIndex.open(dbPath);
    const indexer = new SessionIndexer(index);
    await indexer.sync(roots);
    const loopFile = join(home, FAKE_HOME_SESSIONS.editLoop.rel);
    const full = readFileSync(loopFile);
    truncateSync(loopFile, full.indexOf(0x0a, 1000) + 1);
    let result = await indexer.sync(roots);
    assert.equal(result.counts.reread, 1);
    assert.match(result.rereads[0]!, /shrank/);
    assert.ok(byKey(index.rows(), 'e5821007-9ca0-4a36-afc0-94da583da0ea').calls < 41);
    // Another session's log copied over it (its first bytes differ), larger than before.
    copyFileSync(join(home, FAKE_HOME_SESSIONS.spotter.rel), loopFile);
    result = await indexer.sync(roots);
    assert.equal(result.counts.reread, 1);
    assert.match(result.rereads[0]!, /first bytes changed/);
    assert.equal(
      index.rows().some((r) => r.key === 'e5821007-9ca0-4a36-afc0-94da583da0ea'),
      false,
      'the old session is gone with its file content',
    );
    unlinkSync(join(home, FAKE_HOME_SESSIONS.codex.rel));
    result = await indexer.sync(roots);
    assert.equal(result.counts.deleted, 1);
    const codex = byKey(index.rows(), '01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73');
    assert.deepEqual([codex.fileStatus, codex.calls], ['deleted', 9]);
    index.close();
  });

  it('marks a file that grew as live, and not once it stops growing', async () => {
    const { home, roots, dbPath } = setup();
    const { index } = SessionIndex.open(dbPath);
    let now = Date.parse('2026-03-21T10:30:00Z');
    const indexer = new SessionIndexer(index, { now: () => now });
    await indexer.sync(roots);
    assert.equal(
      index.rows(now).some((r) => r.live),
      false,
      'nothing grew yet',
    );
    const file = join(home, FAKE_HOME_SESSIONS.codex.rel);
    appendFileSync(file, '\n');
    utimesSync(file, new Date(now), new Date(now));
    await indexer.sync(roots);
    assert.equal(byKey(index.rows(now), '01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73').live, true);
    now += 3 * 60_000;
    assert.equal(byKey(index.rows(now), '01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73').live, false);
    // A session first seen while it is being written (modified a moment ago) is live at once.
    const loop = join(home, FAKE_HOME_SESSIONS.editLoop.rel);
    utimesSync(loop, new Date(now - 10_000), new Date(now - 10_000));
    await indexer.sync(roots);
    assert.equal(byKey(index.rows(now), 'e5821007-9ca0-4a36-afc0-94da583da0ea').live, true);
    index.close();
  });

  it('a file that grew while no one looked is live by when it was written, not by when the growth was seen', async () => {
    const { home, roots, dbPath } = setup();
    const { index } = SessionIndex.open(dbPath);
    const now = Date.parse('2026-03-21T10:30:00Z');
    const indexer = new SessionIndexer(index, { now: () => now });
    await indexer.sync(roots);
    // The agent wrote its last line five minutes ago; this sync is the first to see it (a view that was hidden).
    const file = join(home, FAKE_HOME_SESSIONS.codex.rel);
    appendFileSync(file, '\n');
    utimesSync(file, new Date(now - 5 * 60_000), new Date(now - 5 * 60_000));
    await indexer.sync(roots);
    const row = byKey(index.rows(now), '01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73');
    assert.equal(row.lastWriteMs, now - 5 * 60_000);
    assert.equal(row.live, false, 'written 5 minutes ago: past the 2-minute window');
    index.close();
  });

  it('rebuilds an index of another schema version, with a message, never reading it', async () => {
    const { roots, dbPath } = setup();
    const old = openDatabase(dbPath);
    old.exec(
      `CREATE TABLE sessions(id INTEGER PRIMARY KEY, path TEXT); INSERT INTO sessions VALUES (1, '/old'); PRAGMA user_version = ${SCHEMA_VERSION + 7};`,
    );
    old.close();
    const { index, notice } = SessionIndex.open(dbPath);
    assert.equal(notice?.kind, 'old-version');
    assert.match(notice!.message, /another version.*rebuilt/);
    assert.deepEqual(index.rows(), []);
    await new SessionIndexer(index).sync(roots);
    assert.equal(index.rows().length, 6);
    index.close();
    // A pre-versioning index (tables, user_version 0) is another version too.
    const older = join(scratch(), 'older.sqlite');
    const db = openDatabase(older);
    db.exec('CREATE TABLE files(x); PRAGMA user_version = 0;');
    db.close();
    const reopened = SessionIndex.open(older);
    assert.equal(reopened.notice?.kind, 'old-version');
    reopened.index.close();
  });

  it('rebuilds a damaged index, with a message', async () => {
    const { roots, dbPath } = setup();
    const first = SessionIndex.open(dbPath).index;
    await new SessionIndexer(first).sync(roots);
    first.close();
    // Garbage over every page after the first (the header survives, the tables do not).
    const bytes = readFileSync(dbPath);
    for (let i = 4096; i < bytes.length; i++) bytes[i] = (i * 131) & 0xff;
    writeFileSync(dbPath, bytes);
    const { index, notice } = SessionIndex.open(dbPath);
    assert.equal(notice?.kind, 'corrupt');
    assert.match(notice!.message, /damaged|could not be read/);
    await new SessionIndexer(index).sync(roots);
    assert.equal(index.rows().length, 6);
    index.close();
    // Not a database at all.
    writeFileSync(dbPath, 'this is not a database, just text '.repeat(200));
    const again = SessionIndex.open(dbPath);
    assert.equal(again.notice?.kind, 'corrupt');
    again.index.close();
  });
});

describe('SessionIndex over the other agents whose folders are known', () => {
  // Real samples placed where each agent keeps them (test/support/fakeHome.mjs addOtherAgents).
  // Figures are the reader tests' hand counts: the Gemini CLI chat 1 call and 1 user turn
  // (geminiCliReader.test.ts), the OpenHands session 5 calls (4 with tool calls and the closing
  // reply in text), 1 turn, 4 tool calls with none failed (openhandsReader.test.ts), the AIPerf run 8 conversations of 20 requests (aiperfReader.test.ts).
  it('indexes a Gemini CLI chat, an OpenHands events folder (assembled as one trajectory) and an AIPerf run', async () => {
    const home = createFakeHome(join(scratch(), 'home'));
    const placed = addOtherAgents(home);
    const { roots, dbPath } = setup(home);
    const { index } = SessionIndex.open(dbPath);
    const result = await new SessionIndexer(index).sync(roots);
    assert.equal(result.files, 4 + 3);
    const rows = index.rows();
    const of = (agentId: string): SessionRow[] => rows.filter((r) => r.agentId === agentId);
    const gemini = of('gemini-cli');
    assert.deepEqual(
      gemini.map((r) => [r.path, r.calls, r.userTurns]),
      [[placed.gemini, 1, 1]],
    );
    // Its project is the path Gemini CLI's registry gives its folder (the SHA-256 of "/app"), not the `chats` folder.
    assert.equal(gemini[0]!.project, '/app');
    const openHands = of('openhands');
    assert.deepEqual(
      openHands.map((r) => [r.path, r.calls, r.userTurns, r.failedToolCalls]),
      [[placed.openHands, 5, 1, 0]],
    );
    const aiperf = of('aiperf');
    assert.equal(aiperf.length, 8);
    assert.equal(
      aiperf.reduce((n, r) => n + r.calls, 0),
      20,
    );
    assert.ok(aiperf.every((r) => r.path === placed.aiperf));
    // A second sync reads nothing: no file changed (the events folder included).
    const again = await new SessionIndexer(index).sync(roots);
    assert.equal(again.counts.unchanged, 7, JSON.stringify(again.counts));
    index.close();
  });
});

describe('SessionIndex figures follow the settings', () => {
  it("new prices or analysis settings recompute every file's figures at the next sync, files unchanged", async () => {
    const { roots, dbPath } = setup();
    const { index } = SessionIndex.open(dbPath);
    await new SessionIndexer(index, { prices: createPriceBook(), basis: 'list prices' }).sync(roots);
    const loopKey = 'e5821007-9ca0-4a36-afc0-94da583da0ea';
    // $3.36867825 at list prices (test/reference/cost_reference.mjs); every call is claude-opus-4-5.
    assert.ok(Math.abs(byKey(index.rows(), loopKey).costUsd! - 3.36867825) < 1e-6);
    // Half the list price for claude-opus-4-5 (a user price entry, as agentTrace.prices takes it).
    const half = readUserPrices([{ model: 'claude-opus-4-5*', multiplier: 0.5 }]);
    assert.deepEqual(half.problems, []);
    const again = await new SessionIndexer(index, {
      prices: createPriceBook({ user: half, userLabel: 'test' }),
      basis: 'half',
    }).sync(roots);
    assert.equal(again.counts.unchanged, 0, "every file's figures computed again");
    assert.deepEqual(again.rereads, []);
    assert.ok(
      Math.abs(byKey(index.rows(), loopKey).costUsd! - 3.36867825 / 2) < 1e-6,
      String(byKey(index.rows(), loopKey).costUsd),
    );
    // The same settings again: nothing to do.
    const third = await new SessionIndexer(index, {
      prices: createPriceBook({ user: half, userLabel: 'test' }),
      basis: 'half',
    }).sync(roots);
    assert.equal(third.counts.unchanged, 4);
    index.close();
  });
});

describe('SessionIndex read on parse threads', () => {
  // A cold index parses on parse threads (ParsePool, dist/indexParseWorker.js) while one thread
  // writes. Each file is one deterministic read whichever thread runs it, so the index must be
  // the one this thread alone builds: same rows, figures, calls, search hits and saved parses.
  it('builds the same index as one thread, over every agent of the fake home, and saves the same parses', async () => {
    const script = join(repoRoot, 'dist/indexParseWorker.js');
    ensureBuilt(script);
    const home = createFakeHome(join(scratch(), 'home'));
    addOtherAgents(home);
    const { roots } = setup(home);
    const single = SessionIndex.open(join(scratch(), 'single.sqlite')).index;
    const threaded = SessionIndex.open(join(scratch(), 'threaded.sqlite')).index;
    // The list prices on both sides: the threads build theirs from the same settings.
    const singleResult = await new SessionIndexer(single, { prices: indexPriceBook([]) }).sync(roots, {
      freshReader: () => null,
    });
    let pool: ParsePool | null = null;
    const reads: string[] = [];
    const threadedIndexer = new SessionIndexer(threaded, { prices: indexPriceBook([]) });
    const threadedResult = await threadedIndexer.sync(roots, {
      freshReader: () => {
        pool = new ParsePool(script, 2, { analysis: {}, userPrices: [] });
        const reader = pool;
        return { concurrency: reader.concurrency, read: (job) => (reads.push(job.path), reader.read(job)) };
      },
    });
    await (pool as ParsePool | null)?.close();
    assert.deepEqual({ ...threadedResult, notes: undefined }, { ...singleResult, notes: undefined });
    // The four Claude Code and Codex logs went to the threads (the assembled OpenHands session is read in this thread).
    assert.ok(reads.length >= 4, `files read on the threads: ${reads.length}`);
    assert.deepEqual(contents(threaded), contents(single));
    // Independent figures (see the top of this file): the spotter session, 149 calls at 98.42%.
    const spotter = byKey(threaded.rows(), 'ae4a77f8-aedd-4bc1-888f-c94edc91af04');
    assert.equal(spotter.calls, 149);
    assert.equal(Math.round(spotter.cacheHitRate! * 10_000) / 100, 98.42);
    for (const word of ['spotter', 'Edit', 'error'])
      assert.deepEqual([...threaded.search(word)].length, [...single.search(word)].length, word);
    // The fixtures' files are new (written now): their parses are saved, and equal (the same bytes once inflated).
    for (const f of single.files()) {
      const a = single.file(f.path)!;
      const b = threaded.file(f.path)!;
      assert.equal(b.state === null, a.state === null, f.path);
      if (a.state) assert.deepEqual(inflateRawSync(b.state!), inflateRawSync(a.state));
    }
    single.close();
    threaded.close();
  });
});

describe('parse threads for a sync', () => {
  // Thresholds from src/node/sessions/parsePool.ts: at least 4 new files and 32 MB, one thread per idle core, at most 4.
  const files = (n: number, mb: number): Array<{ sizeBytes: number }> =>
    Array.from({ length: n }, () => ({ sizeBytes: mb * 2 ** 20 }));
  it('starts none for a few small files or on a busy machine, one per idle core otherwise', () => {
    assert.equal(parseThreadsFor(files(3, 100), 2, 0), 0, 'three files');
    assert.equal(parseThreadsFor(files(100, 0.1), 2, 0), 0, '10 MB in all');
    assert.equal(parseThreadsFor(files(100, 5), 2, 0.3), 2, 'a quiet 2-core machine');
    assert.equal(parseThreadsFor(files(100, 5), 2, 1.2), 2, 'below saturation: every core');
    assert.equal(parseThreadsFor(files(100, 5), 2, 2), 0, 'saturated');
    assert.equal(parseThreadsFor(files(100, 5), 1, 0), 0, 'one core: the index worker reads');
    assert.equal(parseThreadsFor(files(100, 5), 2, 15), 0, 'every core busy');
    assert.equal(parseThreadsFor(files(100, 5), 16, 0), 4, 'at most 4');
  });

  it('a cancel drops the reads in flight at once, as cancelled reads (the sync records nothing for them)', async () => {
    const script = join(repoRoot, 'dist/indexParseWorker.js');
    ensureBuilt(script);
    const home = createFakeHome(join(scratch(), 'home'));
    const path = join(home, FAKE_HOME_SESSIONS.spotter.rel);
    const pool = new ParsePool(script, 1, { analysis: {}, userPrices: [] });
    const reading = pool.read({
      path,
      mainKey: 'main.jsonl',
      size: readFileSync(path).length,
      companions: [],
      keepState: false,
    });
    pool.cancel();
    await assert.rejects(reading, (e: Error) => e.name === READ_CANCELLED);
    await assert.rejects(
      pool.read({ path, mainKey: 'main.jsonl', size: 1, companions: [], keepState: false }),
      /closed/,
    );
    await pool.close();
  });
});

describe('a file read in many chunks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-trace-chunks-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the figures parseTrace gives over the whole file: no call lost where a chunk (1 MiB) ends', async () => {
    // The real spotter session continued ten times (fresh message ids each round, as bench/sessionCorpus.ts
    // writes them): 18 MB, read in 18 chunks. The reference is parseTrace over the file's bytes at once.
    const text = readFileSync(SPOTTER, 'utf8');
    const path = join(dir, 'long.jsonl');
    writeFileSync(path, '');
    for (let round = 0; round < 10; round++)
      appendFileSync(path, round === 0 ? text : text.replaceAll('"id":"msg_', `"id":"msg_r${round}_`));
    const expected = await parseTrace([{ key: 'long.jsonl', bytes: new Uint8Array(readFileSync(path)) }]);
    const main = expected.model.sessions[0]!;
    const size = statSync(path).size;
    assert.ok(size > 10 * 2 ** 20, `${size} bytes`);
    const r = await readFresh({ path, mainKey: 'long.jsonl', size, companions: [], keepState: false }, {}, null);
    assert.ok(!('readError' in r));
    const record = JSON.parse(r.records.find((x) => x.role === 'main')!.record) as {
      calls: number;
      tokens: { output: number; input: number };
    };
    assert.equal(record.calls, main.calls.length);
    assert.equal(
      record.tokens.output,
      main.calls.reduce((n, c) => n + (c.tokens.output ?? 0), 0),
    );
    assert.equal(
      record.tokens.input,
      main.calls.reduce((n, c) => n + (c.tokens.input ?? 0), 0),
    );
  });
});

describe('a read that fails at its first chunk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-trace-first-read-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  // The descriptors this process holds on `path`, from /proc (Linux: where CI runs).
  const openOn = (path: string): number =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(join('/proc/self/fd', fd)) === path;
      } catch {
        return false;
      }
    }).length;

  it('says why and leaves no file open (a size that is not a number: the first read throws before it starts)', {
    skip: existsSync('/proc/self/fd') ? false : 'no /proc/self/fd here to count open files',
  }, async () => {
    const path = join(dir, 'a.jsonl');
    writeFileSync(path, readFileSync(SPOTTER));
    const r = await readFresh(
      { path, mainKey: 'a.jsonl', size: Number.NaN, companions: [], keepState: false },
      {},
      null,
    );
    assert.ok('readError' in r, 'a read error, not figures');
    assert.equal(openOn(path), 0, 'the file is closed');
  });
});

describe('long strings bound as UTF-8 bytes', () => {
  // textParam hands SQLite a long string's UTF-8 bytes behind CAST(? AS TEXT) (the binding
  // encodes a string in JavaScript, one character at a time). The stored value must be the
  // TEXT the binding stores for the string itself: compared here by SQLite's own hex() and
  // typeof(), not by reading it back through the same JavaScript.
  it('stores the TEXT the string binding stores, for ASCII, accents, CJK, emoji, a NUL and lone surrogates', () => {
    const long = (s: string): string => s.repeat(Math.ceil(400 / s.length));
    const cases = [
      long('{"calls":[[0,1700000000000,null,12345,0.25]]} '),
      long('café naïve Ångström '),
      long('日本語のテキスト '),
      long('emoji 🙂 pair '),
      long('a NUL \u0000 inside '),
      long('lone high \uD800 surrogate '),
      long('lone low \uDC00 surrogate '),
      'short',
      '',
    ];
    const db = openDatabase(':memory:');
    try {
      db.exec('CREATE TABLE t(k INTEGER, way TEXT, x TEXT)');
      cases.forEach((s, k) => {
        db.run("INSERT INTO t VALUES (?, 'string', ?)", [k, s]);
        db.run("INSERT INTO t VALUES (?, 'param', CAST(? AS TEXT))", [k, textParam(s)]);
      });
      // Well-formed long strings without a NUL go as bytes (the path under test is taken).
      assert.ok(textParam(cases[0]!) instanceof Uint8Array);
      assert.ok(textParam(cases[2]!) instanceof Uint8Array);
      assert.equal(typeof textParam(cases[4]!), 'string');
      assert.equal(typeof textParam(cases[5]!), 'string');
      const rows = db.all(
        "SELECT a.k AS k, typeof(a.x) AS ta, typeof(b.x) AS tb, hex(a.x) AS ha, hex(b.x) AS hb FROM t a JOIN t b ON a.k = b.k AND a.way = 'string' AND b.way = 'param' ORDER BY a.k",
      );
      assert.equal(rows.length, cases.length);
      for (const r of rows) {
        assert.equal(r['tb'], 'text', `case ${String(r['k'])} stored as text`);
        assert.equal(r['tb'], r['ta'], `case ${String(r['k'])} type`);
        assert.equal(r['hb'], r['ha'], `case ${String(r['k'])} bytes`);
      }
      // And the bytes are the string's UTF-8 (hand check on one case: "é" is C3 A9).
      assert.ok(String(rows[1]!['hb']).startsWith(Buffer.from('café', 'utf8').toString('hex').toUpperCase()));
    } finally {
      db.close();
    }
  });
});
