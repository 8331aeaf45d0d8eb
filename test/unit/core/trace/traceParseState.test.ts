import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { deserialize, serialize } from 'node:v8';
import { parseTrace, TraceParse } from '../../../../src/core/trace/parseTrace';
import type { ParsedTrace, SavedTraceParse } from '../../../../src/core/trace/parseTrace';
import { EDIT_LOOP, fixtures, parseFile, SPOTTER } from '../../../support/helpers';

// What the session index needs of the incremental parse beyond live reading: any cut of
// the bytes (mid-line, mid-character), companion logs arriving before the opened log's
// format is decided, and a parse saved as plain data that another process resumes.
// Each ends equal to parseTrace reading the files whole.

const CODEX = join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl');
const MAIN_KEY = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl';
const SUBAGENT = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl';
const COMPACT = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-acompact-946d2b.jsonl';

/** Pushes `bytes` into file `index` in pieces cut at the given positions. */
function pushCut(parse: TraceParse, index: number, bytes: Uint8Array, cuts: number[]): void {
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    if (at > from) parse.push(index, bytes.subarray(from, at));
    from = Math.max(from, at);
  }
}

/** A seeded generator, so a failing cut pattern can be replayed. */
function cutsFor(length: number, count: number, seed: number): number[] {
  let s = seed;
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    out.push(s % length);
  }
  return out.sort((a, b) => a - b);
}

/** What a parse says, in a form deepEqual compares exactly (sessions, figures, diagnostics). */
function comparable(parsed: ParsedTrace): unknown {
  return JSON.parse(JSON.stringify({ model: parsed.model, problem: parsed.problem, detection: parsed.detection }));
}

/** Byte offsets where each line starts (and one past the last newline). */
function lineStarts(bytes: Uint8Array): number[] {
  const starts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) starts.push(i + 1);
  return starts;
}

/** Through the structured-clone serializer the index stores it with: no prototypes, no functions survive. */
function roundTrip(parse: TraceParse): TraceParse {
  const saved = parse.saveState();
  assert.ok(saved, 'the parse can be saved');
  const restored = TraceParse.restore(deserialize(serialize(saved)) as SavedTraceParse);
  assert.ok(restored, 'and restored');
  return restored;
}

describe('TraceParse for the session index', () => {
  for (const [name, path] of [
    ['the M-Claude edit-loop log', EDIT_LOOP],
    ['a Codex 0.114 rollout', CODEX],
  ] as const) {
    it(`reads ${name} pushed in random pieces, a snapshot halfway, exactly as parseTrace reads it whole`, async () => {
      const bytes = readFileSync(path);
      const whole = await parseTrace([{ key: 'f.jsonl', bytes }]);
      for (const seed of [1, 2, 3]) {
        const parse = new TraceParse(['f.jsonl']);
        const cuts = cutsFor(bytes.length, 40, seed);
        pushCut(parse, 0, bytes.subarray(0, cuts[20]!), cuts.slice(0, 20));
        parse.snapshot();
        pushCut(
          parse,
          0,
          bytes.subarray(cuts[20]!),
          cuts.slice(21).map((c) => c - cuts[20]!),
        );
        assert.deepEqual(comparable(parse.snapshot()), comparable(whole), `seed ${seed}`);
        parse.endFile(0);
        assert.deepEqual(comparable(parse.snapshot()), comparable(whole), `seed ${seed}, file ended`);
      }
    });
  }

  it("a snapshot in the middle of a line shows the complete lines only; the resume point is that line's start", async () => {
    const bytes = readFileSync(EDIT_LOOP);
    const starts = lineStarts(bytes);
    assert.equal(starts.length, 121, '120 lines, the last one ended by a newline');
    // 40 bytes into line 60 (0-based): the snapshot must equal a parse of lines 0..59.
    const cut = starts[60]! + 40;
    const parse = new TraceParse(['f.jsonl']);
    parse.push(0, bytes.subarray(0, cut));
    assert.deepEqual(parse.resumePoints(), [{ key: 'f.jsonl', offset: starts[60], line: 60 }]);
    assert.equal(parse.bytesRead(0), cut, 'the half line is held in memory: a live reader pushes from here');
    const prefix = await parseTrace([{ key: 'f.jsonl', bytes: bytes.subarray(0, starts[60]) }]);
    assert.deepEqual(comparable(parse.snapshot()), comparable(prefix));
    parse.push(0, bytes.subarray(cut));
    assert.deepEqual(comparable(parse.snapshot()), comparable(await parseTrace([{ key: 'f.jsonl', bytes }])));
  });

  it('reads a Claude Code session whose sub-agent logs arrive while the main log grows', async () => {
    const whole = await parseFile(SPOTTER);
    assert.equal(whole.model.sessions.length, 3, 'main session, one sub-agent, one compaction agent');
    const main = readFileSync(SPOTTER);
    const dir = join(SPOTTER, '..');
    const half = Math.floor(main.length / 2);
    const parse = new TraceParse([MAIN_KEY, SUBAGENT, COMPACT]);
    parse.push(0, main.subarray(0, half));
    parse.push(1, readFileSync(join(dir, SUBAGENT)));
    parse.push(2, readFileSync(join(dir, COMPACT)));
    parse.push(0, main.subarray(half));
    assert.deepEqual(comparable(parse.snapshot()), comparable(whole));
  });

  it('holds sub-agent lines that come before the main log has enough records to decide its format, then reads them', async () => {
    const whole = await parseFile(SPOTTER);
    const main = readFileSync(SPOTTER);
    const dir = join(SPOTTER, '..');
    // Three lines: far fewer records than format detection waits for (50).
    const early = lineStarts(main)[3]!;
    const parse = new TraceParse([MAIN_KEY, SUBAGENT, COMPACT]);
    parse.push(0, main.subarray(0, early));
    parse.push(1, readFileSync(join(dir, SUBAGENT)));
    parse.push(2, readFileSync(join(dir, COMPACT)));
    // A snapshot decides tentatively and reads the held lines on that decision...
    const tentative = parse.snapshot();
    const partial = await parseTrace([
      { key: MAIN_KEY, bytes: main.subarray(0, early) },
      { key: SUBAGENT, bytes: readFileSync(join(dir, SUBAGENT)) },
      { key: COMPACT, bytes: readFileSync(join(dir, COMPACT)) },
    ]);
    assert.deepEqual(comparable(tentative), comparable(partial));
    // ...and takes it back: held through a save and a restore, they are read once the format is decided.
    const resumed = roundTrip(parse);
    resumed.push(0, main.subarray(early));
    assert.deepEqual(comparable(resumed.snapshot()), comparable(whole));
  });

  it('saves its state as plain data that another process resumes from the last complete line', async () => {
    const bytes = readFileSync(EDIT_LOOP);
    const whole = await parseTrace([{ key: 'f.jsonl', bytes }]);
    const starts = lineStarts(bytes);
    const cut = starts[72]! + 17; // mid-line: the half line is not saved
    const parse = new TraceParse(['f.jsonl']);
    parse.push(0, bytes.subarray(0, cut));
    const resumed = roundTrip(parse);
    assert.equal(resumed.bytesRead(0), starts[72], 'the restored parse reads again from the start of the half line');
    resumed.push(0, bytes.subarray(resumed.bytesRead(0)));
    assert.deepEqual(comparable(resumed.snapshot()), comparable(whole));
    // The original is untouched by the save and still reads on.
    parse.push(0, bytes.subarray(cut));
    parse.endFile(0);
    assert.deepEqual(comparable(parse.snapshot()), comparable(whole));
  });

  it('a Codex rollout resumes too', async () => {
    const bytes = readFileSync(CODEX);
    const whole = await parseTrace([{ key: 'f.jsonl', bytes }]);
    const parse = new TraceParse(['f.jsonl']);
    parse.push(0, bytes.subarray(0, Math.floor(bytes.length / 3)));
    const resumed = roundTrip(parse);
    resumed.push(0, bytes.subarray(resumed.bytesRead(0)));
    resumed.endFile(0);
    assert.deepEqual(comparable(resumed.snapshot()), comparable(whole));
  });

  it('a parse that stopped (a binary file) or a saved state of another shape is not resumed', () => {
    const parse = new TraceParse(['bin.jsonl']);
    parse.push(0, new Uint8Array(2 ** 20 + 16));
    assert.equal(parse.stopped, true);
    assert.equal(parse.saveState(), null);
    assert.equal(TraceParse.restore({ parser: {}, files: [] } as unknown as SavedTraceParse), null);
  });
});
