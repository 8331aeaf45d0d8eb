import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parseTrace, TraceParse } from '../../../../src/core/trace/parseTrace';
import { listCompanions } from '../../../../src/node/traceFiles';
import { fixtures, SPOTTER } from '../../../support/helpers';

// The incremental reader (what live tail builds on): bytes pushed in pieces, with
// snapshots taken in between, must end with exactly the model a one-shot read gives,
// for every JSON Lines sample of every format.

function jsonlFixtures(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return jsonlFixtures(path);
    return name.endsWith('.jsonl') ? [path] : [];
  });
}

/** Reads `paths` (the opened file first) in `piece`-byte pushes, snapshotting every `every` pushes. */
function incrementally(keys: string[], paths: string[], piece: number, every: number): TraceParse {
  const parse = new TraceParse(keys);
  let pushes = 0;
  paths.forEach((path, index) => {
    if (index > 0 && !parse.acceptsCompanions()) return;
    const bytes = readFileSync(path);
    for (let at = 0; at < bytes.length; at += piece) {
      if (!parse.push(index, bytes.subarray(at, at + piece))) return;
      if (++pushes % every === 0) parse.snapshot();
    }
    parse.endFile(index);
  });
  return parse;
}

describe('TraceParse: bytes in pieces, snapshots between, the same model at the end', () => {
  const files = jsonlFixtures(fixtures).filter((f) => !f.includes('/subagents/'));

  for (const path of files) {
    it(relative(fixtures, path), async () => {
      const companions = (await listCompanions(path)).files;
      const keys = [basename(path), ...companions.map((c) => c.rel)];
      const paths = [path, ...companions.map((c) => c.path)];
      const whole = await parseTrace(keys.map((key, i) => ({ key, bytes: readFileSync(paths[i]!) })));
      // Pieces that split lines (and UTF-8 characters) anywhere.
      const parse = incrementally(keys, paths, 4099, 3);
      assert.deepEqual(parse.snapshot(), whole);
      // Asking twice changes nothing.
      assert.deepEqual(parse.snapshot(), whole);
    });
  }

  it('resumes where it stopped: the bytes read, a line held until its newline comes', () => {
    const bytes = readFileSync(SPOTTER);
    const cut = bytes.indexOf(0x0a, 500_000) + 1 + 20; // 20 bytes into the next line
    const parse = new TraceParse([basename(SPOTTER)]);
    parse.push(0, bytes.subarray(0, cut));
    assert.equal(parse.bytesRead(0), cut);
    assert.equal(parse.pendingBytes(0), 20);
    const early = parse.snapshot();
    // The half line is not read (nor reported) yet.
    assert.ok(!early.model.diagnostics.some((d) => d.severity === 'error'));
    parse.push(0, bytes.subarray(cut));
    parse.endFile(0);
    assert.equal(parse.bytesRead(0), bytes.length);
    const calls = (p: TraceParse): number => p.snapshot().model.sessions.reduce((n, s) => n + s.calls.length, 0);
    assert.ok(early.model.sessions[0]!.calls.length < calls(parse));
    // 149 main-thread calls: the whole log (the reader tests count them).
    assert.equal(calls(parse), 149);
  });

  it('stops once a mebibyte of the opened file is NUL bytes with no record, like a one-shot read', async () => {
    const binary = new Uint8Array(2 ** 20 + 16); // all NUL: binary data, no line of text
    const parse = new TraceParse(['bin.jsonl']);
    assert.equal(parse.push(0, binary), false);
    assert.equal(parse.stopped, true);
    assert.equal(parse.push(0, new TextEncoder().encode('{}\n')), false);
    assert.equal(parse.snapshot().problem?.kind, 'binary');
    assert.deepEqual(parse.snapshot(), await parseTrace([{ key: 'bin.jsonl', bytes: binary }]));
  });

  it('a line with a NUL byte among records is skipped and said; reading goes on', async () => {
    const bytes = new Uint8Array([0x7b, 0x7d, 0x0a, 0x00, 0x0a]);
    const parse = new TraceParse(['nul.jsonl']);
    assert.equal(parse.push(0, bytes), true);
    parse.endFile(0);
    assert.equal(parse.stopped, false);
    assert.ok(parse.snapshot().model.diagnostics.some((d) => d.line === 1 && /NUL bytes/.test(d.message)));
    assert.deepEqual(parse.snapshot(), await parseTrace([{ key: 'nul.jsonl', bytes }]));
  });
});
