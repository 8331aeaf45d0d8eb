import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { writeCanonical } from '../../../../../src/core/trace/canonical/canonicalFormat';
import type { LlmCall } from '../../../../../src/core/trace/model';
import { fixtures, needsShared, parseFile, parseText, sharedTrace } from '../../../../support/helpers';
import { assertRoundTrip } from '../../../../support/roundTrip';

// Expected figures: totals come from test/reference/mooncake_cache.py, which replays the rows
// against a dict of whole hash-id prefixes (not a set of single ids, as the reader does);
// single rows were read off the file by hand.

const HEAD300 = join(fixtures, 'mooncake/conversation_trace.head300.jsonl');
const FULL = sharedTrace('mooncake/conversation_trace.head3000.jsonl');

function call(calls: LlmCall[], line: number): LlmCall {
  const c = calls.find((x) => x.id === String(line));
  assert.ok(c, `no call for line ${line}`);
  return c;
}

describe("Mooncake reader on the FAST'25 conversation trace (first 300 rows)", async () => {
  const parsed = await parseFile(HEAD300);
  const session = parsed.model.sessions[0]!;

  it('is detected as Mooncake from its rows (hash_ids, lengths, timestamp, no chat_id)', () => {
    assert.equal(parsed.problem, null);
    assert.equal(parsed.model.format, 'mooncake');
    assert.equal(parsed.detection.evidence, '50 of the first 50 records look like Mooncake KV trace');
  });

  it('models the file as one session of 300 independent requests: no turns, tools, models or end times', () => {
    assert.equal(parsed.model.sessions.length, 1);
    assert.equal(session.id, 'requests');
    assert.equal(session.calls.length, 300);
    assert.deepEqual(session.turns, []);
    assert.equal(
      session.calls.filter((c) => c.turn !== null || c.toolCalls.length > 0 || c.model !== null || c.endMs !== null)
        .length,
      0,
    );
    assert.deepEqual(parsed.model.diagnostics, []);
    assert.ok(
      parsed.model.limitations.includes(
        'Cached tokens are what an infinite prefix cache would hit (computed from hash_ids), not measured.',
      ),
    );
    assert.ok(parsed.model.limitations.some((l) => l.startsWith('No sessions, turns or tools')));
  });

  it('row 1 by hand: nothing cached yet; 6,758 input tokens in 14 blocks', () => {
    const c = call(session.calls, 1);
    assert.deepEqual(c.tokens, {
      input: 6758,
      cached: 0,
      appended: 6758,
      cacheWrite: null,
      output: 500,
      reasoningOutput: null,
    });
    assert.deepEqual(c.blocks, { blockSizeTokens: 512, hashes: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13] });
    assert.equal(c.startMs, 0);
  });

  it('row 2 by hand: shares only block 0 (hash 0) with row 1, so 512 cached of 7,322', () => {
    const c = call(session.calls, 2);
    assert.deepEqual([c.tokens.input, c.tokens.cached, c.tokens.appended, c.tokens.output], [7322, 512, 6810, 490]);
  });

  it('partial last block: row 262 repeats row 41 (1,902 tokens = 3 full blocks + 366) and is fully cached, not 4 × 512', () => {
    assert.deepEqual(call(session.calls, 41).blocks!.hashes, call(session.calls, 262).blocks!.hashes);
    const c = call(session.calls, 262);
    assert.equal(c.blocks!.hashes.length, 4);
    assert.deepEqual([c.tokens.input, c.tokens.cached, c.tokens.appended], [1902, 1902, 0]);
    assert.ok(
      session.calls.every((x) => x.tokens.cached! <= x.tokens.input!),
      'cached ≤ input on every row',
    );
  });

  it('totals match the independent Python replay', () => {
    const s = summarizeSession(session);
    assert.deepEqual(s.tokens, { input: 4269971, cached: 345966, appended: 3924005, cacheWrite: null, output: 113079 });
  });

  it('pitfall 8 (units): integer ms stay ms, and every call keeps 512-token blocks', () => {
    assert.equal(call(session.calls, 262).startMs, 90000); // "timestamp": 90000 → 90 s into the trace
    assert.equal(session.calls[299]!.startMs, 102000);
    assert.ok(session.calls.every((c) => c.blocks?.blockSizeTokens === 512));
  });

  it('round trip: canonical output is valid and the block hashes survive', async () => {
    await assertRoundTrip(parsed);
    const reread = await parseText(writeCanonical(parsed.model, 'test'), 'x.trace.jsonl');
    assert.deepEqual(reread.model.sessions[0]!.calls[261]!.blocks, {
      blockSizeTokens: 512,
      hashes: call(session.calls, 262).blocks!.hashes,
    });
  });
});

describe('Mooncake reader on the shared 3,000-row sample', { skip: needsShared(FULL) }, () => {
  it('reads 3,000 requests with the Python totals and no diagnostics (every row has ceil(input/512) hashes)', async () => {
    const parsed = await parseFile(FULL!);
    assert.equal(parsed.model.format, 'mooncake');
    const session = parsed.model.sessions[0]!;
    assert.equal(session.calls.length, 3000);
    assert.deepEqual(parsed.model.diagnostics, []);
    assert.deepEqual(summarizeSession(session).tokens, {
      input: 40550180,
      cached: 12964863,
      appended: 27585317,
      cacheWrite: null,
      output: 1048832,
    });
    // 23 rows repeat an earlier prompt whose last block is partial: all fully cached.
    assert.equal(session.calls.filter((c) => c.tokens.appended === 0).length, 23);
    assert.equal(session.calls[2999]!.startMs, 987000);
  });
});

describe('Mooncake reader on hand-written rows', () => {
  it('warns when len(hash_ids) ≠ ceil(input_length/512), and still computes the cache from the hashes', async () => {
    const r = await parseText(
      '{"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [7, 8]}\n' +
        '{"timestamp": 5, "input_length": 1100, "output_length": 5, "hash_ids": [7, 8, 9, 10]}\n',
    );
    assert.equal(r.model.format, 'mooncake');
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[1, 'warning']],
    );
    assert.match(
      r.model.diagnostics[0]!.message,
      /^4 hash_ids for 1100 input tokens; 512-token blocks need ceil\(1100\/512\) = 3\./,
    );
    assert.deepEqual(r.model.sessions[0]!.calls[1]!.tokens.cached, 1024);
  });

  it('pitfall 10: a row without hash_ids has unknown cache figures, not 0; the next row is unaffected', async () => {
    const r = await parseText(
      '{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}\n' +
        '{"timestamp": 1, "input_length": 600, "output_length": 5}\n' +
        '{"timestamp": 2, "input_length": 600, "output_length": 5, "hash_ids": [1, 3]}\n',
    );
    const calls = r.model.sessions[0]!.calls;
    assert.deepEqual(calls[1]!.tokens, {
      input: 600,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: 5,
      reasoningOutput: null,
    });
    assert.equal(calls[1]!.blocks, null);
    assert.equal(calls[2]!.tokens.cached, 512);
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[1, 'warning']],
    );
  });

  it('pitfall 8: a fractional timestamp (seconds, Bailian style) is flagged once, not silently rescaled', async () => {
    const r = await parseText(
      '{"timestamp": 1.5, "input_length": 10, "output_length": 1, "hash_ids": [1]}\n' +
        '{"timestamp": 2.5, "input_length": 10, "output_length": 1, "hash_ids": [1]}\n',
      'x.jsonl',
      { format: 'mooncake' },
    );
    assert.deepEqual(
      r.model.sessions[0]!.calls.map((c) => c.startMs),
      [1.5, 2.5],
    );
    assert.equal(r.model.diagnostics.length, 1);
    assert.match(r.model.diagnostics[0]!.message, /whole milliseconds/);
  });

  it('a record that is no request is skipped with a warning; the rest loads', async () => {
    const r = await parseText(
      '{"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [1]}\n{"note": "cut here"}\n{"timestamp": 3, "input_length": 10, "output_length": 1, "hash_ids": [1]}\n',
    );
    assert.deepEqual(
      r.model.sessions[0]!.calls.map((c) => [c.id, c.tokens.cached]),
      [
        ['1', 0],
        ['3', 10],
      ],
    );
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[1, 'warning']],
    );
  });
});
