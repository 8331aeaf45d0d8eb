import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClaudeCodeContentCollector, jsonChars } from '../../../../src/core/context/claudeCodeContent';
import { predictiveCalibration } from '../../../../src/core/context/contextAnatomy';
import { coveredCalls } from '../../../../src/core/context/contextReport';
import { BudgetedCounter, lineNumberPrefixes, median } from '../../../../src/core/context/tokenCounter';
import type { TokenCounter } from '../../../../src/core/context/tokenCounter';
import type { TraceRecord } from '../../../../src/core/trace/recordReader';
import { CLAUDE_STANDIN, O200K, tokenCounterFor } from '../../../../src/node/contextTokenizer';

// Counting helpers of the context anatomy, checked on values worked out by hand.

/** Half a token per character, rounded up: easy to count by hand. */
const HALF: TokenCounter = { name: 'chars ÷ 2', count: (t) => Math.ceil(t.length / 2) };

function record(line: number, value: Record<string, unknown>): TraceRecord {
  return { value, source: { file: 0, line, offset: 0 }, line: null } as unknown as TraceRecord;
}

describe('length of a JSON without building it', () => {
  it('counts keys, quotes, colons, commas and brackets as JSON.stringify writes them', () => {
    // {"a":1,"bb":[true,null,"x"]}: { "a" : 1 , "bb" : [ true , null , "x" ] } = 28 characters.
    assert.equal(jsonChars({ a: 1, bb: [true, null, 'x'] }), 28);
    assert.equal(jsonChars({}), 2);
    assert.equal(jsonChars([]), 2);
    // Without escapes the two methods agree.
    const input = { file_path: '/src/a.ts', old_string: 'let a = 1;', new_string: 'const a = 1;', replace_all: false };
    assert.equal(jsonChars(input), JSON.stringify(input).length);
  });

  it('leaves escapes out: a newline is one character, not the two of \\n', () => {
    // {"command":"ls -la\n"}: 1 + 9 + 1 + (1 + 7 + 1) + 1 = 21; JSON.stringify writes 22.
    assert.equal(jsonChars({ command: 'ls -la\n' }), 21);
    assert.equal(JSON.stringify({ command: 'ls -la\n' }).length, 22);
  });
});

describe('budgeted counter', () => {
  it('counts exactly until the budget is spent, then from the length at the ratio measured', () => {
    const c = new BudgetedCounter(HALF, 10);
    assert.equal(c.lengthOnly, false);
    assert.equal(c.count('abcdefghij'), 5); // 10 characters, 5 tokens: the budget is spent
    assert.equal(c.lengthOnly, true);
    assert.equal(c.countLength(7), 4); // 7 × 5 / 10 = 3.5, rounded
    assert.equal(c.count('abc'), 2); // 3 × 0.5 = 1.5, rounded; HALF itself would say 2 as well
    assert.equal(c.count('abcdefghijklmnopqrst'), 10);
    assert.equal(c.estimatedChars, 7 + 3 + 20);
  });

  it('counts a tool call past the budget from its JSON length, unescaped', () => {
    const collector = new ClaudeCodeContentCollector(new BudgetedCounter(HALF, 10));
    const base = { sessionId: 's1', uuid: 'u', parentUuid: null };
    collector.record(record(0, { ...base, type: 'user', message: { role: 'user', content: 'abcdefghij' } }));
    collector.record(
      record(1, {
        ...base,
        type: 'assistant',
        message: {
          id: 'msg_1',
          role: 'assistant',
          usage: { input_tokens: 10, output_tokens: 5 },
          content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls -la\n' } }],
        },
      }),
    );
    const content = collector.result();
    const key = content.keyOfCall(0, 1);
    assert.ok(key !== undefined);
    assert.equal(content.keyOfCall(0, 0), undefined);
    const pieces = content.pieces.get(key)!;
    assert.deepEqual(
      pieces.map((p) => [p.kind, p.tokens]),
      [
        ['userText', 5],
        // "Bash " + 21 characters = 26 at 5 tokens per 10: 13 (the escaped 27 would give 14).
        ['toolUse', 13],
      ],
    );
    assert.equal(pieces[1]!.tool, 'Bash');
    assert.equal(pieces[1]!.command, 'ls -la\n');
  });
});

describe('the Claude stand-in', () => {
  it('finds the line-number prefixes of a file read', () => {
    // Lines 1, 2 and 4 start with padding, a number and →; "x → y" does not.
    assert.equal(lineNumberPrefixes('     1→a\n     2→b\nx → y\n    10→'), 3);
    assert.equal(lineNumberPrefixes('no arrows here'), 0);
    assert.equal(lineNumberPrefixes('→ 1→'), 0);
  });

  it('counts one token less per prefix than o200k_base, and only for Claude models', () => {
    const read = '     1→defmodule Spotter do\n     2→  use Mix.Project\n     3→end\n';
    assert.equal(CLAUDE_STANDIN.count(read), O200K.count(read) - 3);
    assert.equal(CLAUDE_STANDIN.count('plain text'), O200K.count('plain text'));
    assert.equal(tokenCounterFor('claude-haiku-4-5-20251001'), CLAUDE_STANDIN);
    assert.equal(tokenCounterFor('gpt-5.4'), O200K);
    assert.equal(tokenCounterFor(null), O200K);
  });
});

describe('calibration predicted from earlier calls only', () => {
  it('predicts each call from the calls before it, never from itself', () => {
    // Three calls logged twice what was counted, then one logged three times. Learnt from the
    // first three, the factor is 2: the fourth is predicted 200 against 300 logged, 1/3 off
    // (the raw count, 100, is 2/3 off). A fit that saw the fourth call would do better on it.
    const rows = [
      { raw: 100, pieces: 1, logged: 200 },
      { raw: 100, pieces: 1, logged: 200 },
      { raw: 100, pieces: 1, logged: 200 },
      { raw: 100, pieces: 1, logged: 300 },
    ];
    const p = predictiveCalibration(rows);
    assert.equal(p.comparedCalls, 1);
    assert.ok(Math.abs(p.medianAbsError! - 1 / 3) < 1e-12);
    assert.ok(Math.abs(p.medianAbsErrorRaw! - 2 / 3) < 1e-12);
  });

  it('is exact once the earlier calls show the ratio, and says nothing with three calls or fewer', () => {
    const rows = [10, 20, 30, 40, 50, 60].map((raw) => ({ raw, pieces: 2, logged: 1.5 * raw }));
    const p = predictiveCalibration(rows);
    assert.equal(p.comparedCalls, 3);
    assert.ok(p.medianAbsError! < 1e-12);
    assert.ok(Math.abs(p.medianAbsErrorRaw! - 1 / 3) < 1e-12); // |raw − 1.5 raw| ÷ 1.5 raw
    assert.deepEqual(predictiveCalibration(rows.slice(0, 3)), {
      comparedCalls: 0,
      medianAbsError: null,
      medianAbsErrorRaw: null,
    });
  });
});

describe('calls a contributor covers', () => {
  it('counts the union of its parts’ [first, last] calls, in any order', () => {
    // [0,3] ∪ [2,6] ∪ [5,9] = calls 0…9: 10. Given out of order, the same.
    assert.equal(coveredCalls([0, 3, 2, 6, 5, 9]), 10);
    assert.equal(coveredCalls([5, 9, 0, 3, 2, 6]), 10);
    // [0,3] and [5,6] leave call 4 out: 4 + 2; a range inside another adds nothing.
    assert.equal(coveredCalls([0, 3, 5, 6, 5, 5]), 6);
    assert.equal(coveredCalls([]), 0);
  });
});

describe('median by selection', () => {
  it('gives the middle value, or the mean of the two middle ones', () => {
    assert.equal(median([]), null);
    assert.equal(median([7]), 7);
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(median([5, 5, 5, 1]), 5);
    assert.equal(median([0.3, 0.1, 0.2, 0.1, 0.3, 0.1]), 0.15000000000000002); // (0.1 + 0.2) / 2
  });

  it('agrees with sorting on many lists, ties and odd and even lengths included', () => {
    let seed = 12345;
    const next = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let t = 0; t < 300; t++) {
      const n = 1 + Math.floor(next() * 60);
      const values = Array.from({ length: n }, () => (t % 3 === 0 ? Math.floor(next() * 5) : next()));
      const s = [...values].sort((a, b) => a - b);
      const expected = n % 2 === 1 ? s[n >> 1]! : (s[(n >> 1) - 1]! + s[n >> 1]!) / 2;
      assert.equal(median(values), expected, `list ${t}: ${values.join(',')}`);
    }
  });
});
