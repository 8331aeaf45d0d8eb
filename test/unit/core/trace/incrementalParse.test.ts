import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { deserialize, serialize } from 'node:v8';
import { IncrementalTraceParser } from '../../../../src/core/trace/incrementalParse';
import type { SavedParse } from '../../../../src/core/trace/incrementalParse';
import { parseTrace } from '../../../../src/core/trace/parseTrace';
import type { ParsedTrace } from '../../../../src/core/trace/parseTrace';
import { EDIT_LOOP, fixtures, parseFile, SPOTTER } from '../../../support/helpers';
import { join } from 'node:path';

const CODEX = join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl');
const SUBAGENT = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl';
const COMPACT = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-acompact-946d2b.jsonl';

/** Pushes `bytes` in pieces cut at the given positions (any byte, mid-line and mid-character included). */
function pushCut(parser: IncrementalTraceParser, key: string, bytes: Uint8Array, cuts: number[]): void {
  let from = 0;
  for (const at of [...cuts, bytes.length]) {
    if (at > from) parser.push(key, bytes.subarray(from, at));
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

describe('IncrementalTraceParser', () => {
  for (const [name, path] of [
    ['the M-Claude edit-loop log', EDIT_LOOP],
    ['a Codex 0.114 rollout', CODEX],
  ] as const) {
    it(`reads ${name} pushed in random pieces exactly as parseTrace reads it whole`, async () => {
      const bytes = readFileSync(path);
      const whole = await parseTrace([{ key: 'f.jsonl', bytes }]);
      for (const seed of [1, 2, 3]) {
        const parser = new IncrementalTraceParser();
        pushCut(parser, 'f.jsonl', bytes, cutsFor(bytes.length, 40, seed));
        assert.deepEqual(comparable(parser.snapshot()!), comparable(whole), `seed ${seed}`);
        assert.deepEqual(comparable(parser.finish()), comparable(whole), `seed ${seed}, finished`);
      }
    });
  }

  it('a snapshot in the middle of a line shows the complete lines only, and the parse goes on unchanged', async () => {
    const bytes = readFileSync(EDIT_LOOP);
    // Cut 40 bytes into line 60 (of 120): the snapshot must equal a parse of the first 60 lines.
    const lineStarts = [0];
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a) lineStarts.push(i + 1);
    assert.equal(lineStarts.length, 121);
    const cut = lineStarts[60]! + 40;
    const parser = new IncrementalTraceParser();
    parser.push('f.jsonl', bytes.subarray(0, cut));
    assert.equal(parser.offset('f.jsonl'), lineStarts[60], 'the next read resumes at the start of the unfinished line');
    const prefix = await parseTrace([{ key: 'f.jsonl', bytes: bytes.subarray(0, lineStarts[60]) }]);
    assert.deepEqual(comparable(parser.snapshot()!), comparable(prefix));
    parser.push('f.jsonl', bytes.subarray(cut));
    assert.deepEqual(comparable(parser.snapshot()!), comparable(await parseTrace([{ key: 'f.jsonl', bytes }])));
  });

  it('reads a Claude Code session and its sub-agent logs, the sub-agents arriving while the main log grows', async () => {
    const whole = await parseFile(SPOTTER);
    assert.equal(whole.model.sessions.length, 3, 'main session, one sub-agent, one compaction agent');
    const main = readFileSync(SPOTTER);
    const dir = join(SPOTTER, '..');
    const parser = new IncrementalTraceParser();
    const half = Math.floor(main.length / 2);
    parser.push('ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl', main.subarray(0, half));
    parser.push(SUBAGENT, readFileSync(join(dir, SUBAGENT)));
    parser.push(COMPACT, readFileSync(join(dir, COMPACT)));
    parser.push('ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl', main.subarray(half));
    assert.deepEqual(comparable(parser.snapshot()!), comparable(whole));
  });

  it('saves its state as plain data that another process resumes from the same byte', async () => {
    const bytes = readFileSync(EDIT_LOOP);
    const whole = await parseTrace([{ key: 'f.jsonl', bytes }]);
    const parser = new IncrementalTraceParser();
    const cut = Math.floor(bytes.length * 0.6);
    parser.push('f.jsonl', bytes.subarray(0, cut));
    const saved = parser.saveState();
    assert.ok(saved, 'a Claude Code parse can be saved');
    // Through the structured-clone serializer the index uses: no prototypes, no functions survive it.
    const stored = deserialize(serialize(saved)) as SavedParse;
    const resumed = IncrementalTraceParser.resume(stored);
    assert.ok(resumed, 'and resumed');
    const from = resumed.offset('f.jsonl');
    assert.equal(from, parser.offset('f.jsonl'));
    resumed.push('f.jsonl', bytes.subarray(from));
    assert.deepEqual(comparable(resumed.snapshot()!), comparable(whole));
    // The original is untouched by the save and still reads on.
    parser.push('f.jsonl', bytes.subarray(cut));
    assert.deepEqual(comparable(parser.finish()), comparable(whole));
  });

  it('says a file with NUL bytes is not text, as parseTrace does', async () => {
    const bytes = new TextEncoder().encode('{"a":1}\n\u0000\u0001\n');
    const parser = new IncrementalTraceParser();
    parser.push('x.jsonl', bytes);
    assert.equal(parser.snapshot()!.problem?.kind, 'binary');
    assert.equal((await parseTrace([{ key: 'x.jsonl', bytes }])).problem?.kind, 'binary');
  });
});
