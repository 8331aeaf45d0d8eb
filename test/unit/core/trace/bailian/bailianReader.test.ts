import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import type { Session } from '../../../../../src/core/trace/model';
import { fixtures, parseFile, parseText } from '../../../../support/helpers';
import { assertRoundTrip } from '../../../../support/roundTrip';

// Expected figures: cached/appended per request were worked out by hand from the hash_ids
// (notes below) and agree with test/reference/bailian_lcp.py, which rebuilds the chains and
// the longest common prefixes with plain Python.

const SAMPLE = join(fixtures, 'bailian/qwen_traceA_lite.rows01-14.jsonl');
const LINES = readFileSync(SAMPLE, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '');

function byId(sessions: Session[], id: string): Session {
  const s = sessions.find((x) => x.id === id);
  assert.ok(s, `session ${id} not found among ${sessions.map((x) => x.id).join(', ')}`);
  return s;
}

describe('Bailian reader on 14 rows of qwen_traceA', async () => {
  const parsed = await parseFile(SAMPLE);
  const sessions = parsed.model.sessions;

  it('is detected as Bailian (chat_id + parent_chat_id + hash_ids), not Mooncake', () => {
    assert.equal(parsed.problem, null);
    assert.equal(parsed.model.format, 'bailian');
    assert.equal(parsed.detection.evidence, '14 of the first 14 records look like Alibaba Bailian (Qwen) KV trace');
  });

  it('rebuilds 4 conversations by following parent_chat_id to the root (1 + 3 + 9 + 1 requests)', () => {
    assert.deepEqual(
      sessions.map((s) => [s.id, s.calls.map((c) => c.id)]),
      [
        ['1049', ['1049']],
        ['2219', ['2219', '2577', '2873']],
        ['3253', ['3253', '3393', '3456', '3549', '3864', '3902', '3961', '4219', '4286']],
        ['5279', ['5279']],
      ],
    );
    assert.deepEqual(parsed.model.diagnostics, []);
  });

  it('cached = longest common prefix with the parent × 16, per request', () => {
    // By hand: 2577 shares 1089,1090,1091,147931,147932 with 2219 → 5 × 16 = 80 of 123.
    // 2873 shares 7 blocks with 2577 → 112 of 233. 3393 shares 4 with 3253 → 64 of 569.
    // 3456 shares 35 with 3393 (then 216288 ≠ 206170) → 560 of 590, and so on down the chain.
    assert.deepEqual(
      sessions.flatMap((s) =>
        s.calls.map((c) => [c.id, c.tokens.input, c.tokens.cached, c.tokens.appended, c.tokens.output]),
      ),
      [
        ['1049', 70, 0, 70, 315],
        ['2219', 87, 0, 87, 19],
        ['2577', 123, 80, 43, 81],
        ['2873', 233, 112, 121, 72],
        ['3253', 73, 0, 73, 477],
        ['3393', 569, 64, 505, 8],
        ['3456', 590, 560, 30, 6],
        ['3549', 616, 576, 40, 7],
        ['3864', 642, 608, 34, 8],
        ['3902', 663, 640, 23, 6],
        ['3961', 688, 656, 32, 8],
        ['4219', 719, 688, 31, 8],
        ['4286', 752, 704, 48, 7],
        ['5279', 5172, 0, 5172, 538],
      ],
    );
  });

  it("the parent's last partial block is not a hit; a parent ending on a block boundary is fully hit", () => {
    // 2219 has 87 tokens = 5 full blocks + 7: its 6th block 147933 became 168875 in 2577.
    const chain = byId(sessions, '2219').calls;
    assert.equal(chain[0]!.blocks!.hashes[5], 147933);
    assert.equal(chain[1]!.blocks!.hashes[5], 168875);
    assert.equal(chain[1]!.tokens.cached, 80);
    // 3961 has 688 tokens = exactly 43 blocks, so 4219 re-uses all of them: cached 688.
    const long = byId(sessions, '3253').calls;
    assert.deepEqual([long[6]!.id, long[6]!.tokens.input, long[6]!.blocks!.hashes.length], ['3961', 688, 43]);
    assert.equal(long[7]!.tokens.cached, 688);
  });

  it('totals per conversation and for the file agree with the Python reference', () => {
    assert.deepEqual(summarizeSession(byId(sessions, '2219')).tokens, {
      input: 443,
      cached: 192,
      appended: 251,
      cacheWrite: null,
      output: 172,
    });
    assert.deepEqual(summarizeSession(byId(sessions, '3253')).tokens, {
      input: 5312,
      cached: 4496,
      appended: 816,
      cacheWrite: null,
      output: 535,
    });
    const all = sessions.flatMap((s) => s.calls);
    const sum = (k: 'input' | 'cached' | 'appended' | 'output'): number => all.reduce((a, c) => a + c.tokens[k]!, 0);
    assert.deepEqual([sum('input'), sum('cached'), sum('appended'), sum('output')], [10997, 4688, 6309, 1560]);
  });

  it("one user turn per request, labelled with the trace's turn depth and type", () => {
    const s = byId(sessions, '3253');
    assert.equal(s.turns.length, 9);
    assert.deepEqual(
      s.calls.map((c) => c.turn),
      [0, 1, 2, 3, 4, 5, 6, 7, 8],
    );
    assert.equal(s.turns[1]!.preview, 'turn 2 · text');
    assert.equal(byId(sessions, '5279').turns[0]!.preview, 'turn 1 · search');
  });

  it("pitfall 8 (units): float seconds become ms, and blocks are 16 tokens (not Mooncake's 512)", () => {
    assert.equal(byId(sessions, '1049').calls[0]!.startMs, 322612); // 322.612 s
    assert.equal(byId(sessions, '3253').calls[8]!.startMs, 1075484); // 1075.484 s
    assert.equal(byId(sessions, '3253').turns[8]!.startMs, 1075484);
    const all = sessions.flatMap((s) => s.calls);
    assert.ok(
      all.every((c) => c.blocks!.blockSizeTokens === 16 && c.blocks!.hashes.length === Math.ceil(c.tokens.input! / 16)),
    );
    assert.ok(all.every((c) => c.endMs === null));
  });

  it('round trip: canonical output is valid and the block hashes survive', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('Bailian reader: slices, branches and bad rows', () => {
  it('pitfall 9: a child whose parent row is missing starts its own session, with unknown (not 0) cached tokens', async () => {
    // Drop row 2 (chat 2219): chat 2577 now dangles; 2873 still follows 2577.
    const text = LINES.filter((_, i) => i !== 1).join('\n') + '\n';
    const r = await parseText(text);
    assert.equal(r.model.format, 'bailian');
    const s = byId(r.model.sessions, '2577');
    assert.deepEqual(
      s.calls.map((c) => c.id),
      ['2577', '2873'],
    );
    assert.deepEqual(s.calls[0]!.tokens, {
      input: 123,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: 81,
      reasoningOutput: null,
    });
    assert.equal(s.calls[1]!.tokens.cached, 112);
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[1, 'info']],
    );
    assert.match(r.model.diagnostics[0]!.message, /^chat 2577 follows chat 2219, which is not in this file/);
    await assertRoundTrip(r);
  });

  it('a parent with two follow-ups: both stay in its session, each compared with the parent, and the branch is noted', async () => {
    const r = await parseText(
      [
        '{"chat_id": 1, "parent_chat_id": -1, "timestamp": 1.0, "input_length": 40, "output_length": 9, "type": "text", "turn": 1, "hash_ids": [11, 12, 13]}',
        '{"chat_id": 2, "parent_chat_id": 1, "timestamp": 2.5, "input_length": 60, "output_length": 9, "type": "text", "turn": 2, "hash_ids": [11, 12, 21, 22]}',
        '{"chat_id": 3, "parent_chat_id": 1, "timestamp": 3.25, "input_length": 70, "output_length": 9, "type": "text", "turn": 2, "hash_ids": [11, 31, 32, 33, 34]}',
        '{"chat_id": 4, "parent_chat_id": 2, "timestamp": 4.0, "input_length": 80, "output_length": 9, "type": "text", "turn": 3, "hash_ids": [11, 12, 21, 22, 41]}',
      ].join('\n'),
    );
    // 2 shares 11,12 with 1 (32); 3 shares only 11 (16); 4 shares all 4 blocks of 2 (64).
    assert.deepEqual(
      r.model.sessions.map((s) => [s.id, s.calls.map((c) => [c.id, c.tokens.cached])]),
      [
        [
          '1',
          [
            ['1', 0],
            ['2', 32],
            ['3', 16],
            ['4', 64],
          ],
        ],
      ],
    );
    assert.deepEqual(
      r.model.sessions[0]!.calls.map((c) => c.startMs),
      [1000, 2500, 3250, 4000],
    );
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[0, 'info']],
    );
    assert.match(r.model.diagnostics[0]!.message, /^chat 1 has 2 follow-ups \(chats 2, 3\)/);
    await assertRoundTrip(r);
  });

  it('warns when len(hash_ids) ≠ ceil(input_length/16); missing hash_ids leave cached unknown', async () => {
    const r = await parseText(
      [
        '{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 40, "output_length": 9, "type": "text", "turn": 1, "hash_ids": [11, 12]}',
        '{"chat_id": 2, "parent_chat_id": 1, "timestamp": 1, "input_length": 50, "output_length": 9, "type": "text", "turn": 2, "hash_ids": null}',
      ].join('\n'),
      'x.jsonl',
      { format: 'bailian' },
    );
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [
        [0, 'warning'],
        [1, 'warning'],
      ],
    );
    assert.match(
      r.model.diagnostics[0]!.message,
      /2 hash_ids for 40 input tokens; 16-token blocks need ceil\(40\/16\) = 3/,
    );
    const calls = r.model.sessions[0]!.calls;
    assert.deepEqual([calls[1]!.tokens.input, calls[1]!.tokens.cached, calls[1]!.blocks], [50, null, null]);
  });

  it('a row without chat_id, and a repeated chat_id, are skipped with warnings', async () => {
    const r = await parseText(
      [
        '{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 16, "output_length": 1, "type": "text", "turn": 1, "hash_ids": [5]}',
        '{"parent_chat_id": -1, "timestamp": 0, "input_length": 16, "output_length": 1, "hash_ids": [5]}',
        '{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0, "input_length": 16, "output_length": 1, "type": "text", "turn": 1, "hash_ids": [5]}',
      ].join('\n'),
      'x.jsonl',
      { format: 'bailian' },
    );
    assert.deepEqual(
      r.model.sessions.map((s) => s.calls.length),
      [1],
    );
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [
        [1, 'warning'],
        [2, 'warning'],
      ],
    );
  });
});
