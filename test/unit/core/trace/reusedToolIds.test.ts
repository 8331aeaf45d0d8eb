import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Session } from '../../../../src/core/trace/model';
import { reusedToolIds } from '../../../../src/core/trace/parseTrace';

// Sessions of calls holding only what reusedToolIds reads: each tool call's id and source.
function session(calls: Array<Array<[id: string, line: number, file?: number]>>): Session {
  return {
    calls: calls.map((tools) => ({
      toolCalls: tools.map(([id, line, file]) => ({ id, source: { file: file ?? 0, line } })),
    })),
  } as unknown as Session;
}

describe('reused tool-call ids', () => {
  it('warns at every later use, in call order, naming the first use', () => {
    // Lines (0-based): a@0, b@1, c@2 | a@3, d@4 | b@5, a@6 (file 1). By hand: a is reused at 3 and 6 (first 0),
    // b at 5 (first 1); c and d are used once.
    const d = reusedToolIds([
      session([
        [
          ['a', 0],
          ['b', 1],
          ['c', 2],
        ],
        [
          ['a', 3],
          ['d', 4],
        ],
        [
          ['b', 5],
          ['a', 6, 1],
        ],
      ]),
    ]);
    assert.deepEqual(
      d.map((x) => [x.file, x.line]),
      [
        [0, 3],
        [0, 5],
        [1, 6],
      ],
    );
    assert.match(d[0]!.message, /^Tool-call id "a" is used again \(first at line 1\): both/);
    assert.match(d[1]!.message, /^Tool-call id "b" is used again \(first at line 2\): both/);
    assert.match(d[2]!.message, /^Tool-call id "a" is used again \(first at line 1 of another file\): both/);
  });

  it('looks within a session only, and ids that differ only in case or by a prefix are different ids', () => {
    const d = reusedToolIds([session([[['x', 0]], [['X', 1]], [['xy', 2]]]), session([[['x', 3]], [['xy', 4]]])]);
    assert.deepEqual(d, []);
  });
});
