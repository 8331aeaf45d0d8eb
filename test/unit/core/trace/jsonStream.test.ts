import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  MAX_JSON_DEPTH,
  MAX_STRING_CHARS,
  parseJsonStreaming,
  StreamingJsonParser,
} from '../../../../src/core/trace/jsonStream';
import { deepText } from '../../../support/hostileCorpus';

// The streaming parser is checked against V8's own JSON.parse, an independent
// implementation: the same value for every valid text, however it is cut into pieces,
// and an error wherever JSON.parse throws.

function streamed(pieces: readonly string[], maxDepth = MAX_JSON_DEPTH) {
  const p = new StreamingJsonParser(maxDepth);
  for (const piece of pieces) p.write(piece);
  return p.end();
}

/** Cuts `text` at the given (sorted, deduplicated) positions. */
function cut(text: string, at: readonly number[]): string[] {
  const points = [...new Set(at.map((n) => n % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const p of points) {
    out.push(text.slice(from, p));
    from = p;
  }
  out.push(text.slice(from));
  return out;
}

describe('StreamingJsonParser', () => {
  it('gives the value JSON.parse gives, for any JSON cut anywhere (property)', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 6 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 12 }),
        (value, pretty, cuts) => {
          const text = JSON.stringify(value, null, pretty ? 2 : undefined);
          const r = streamed(cut(text, cuts));
          assert.equal(r.error, null);
          assert.deepEqual(r.value, JSON.parse(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('agrees with JSON.parse on strings full of escapes, surrogates and unicode, cut inside escapes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), fc.array(fc.nat(), { maxLength: 20 }), (s, cuts) => {
        const text = JSON.stringify({ s, k: [s, s] });
        assert.deepEqual(streamed(cut(text, cuts)).value, JSON.parse(text));
      }),
      { numRuns: 300 },
    );
    assert.equal(
      parseJsonStreaming('"\\ud800\\u00e9\\/\\b\\f\\n\\r\\t"').value,
      JSON.parse('"\\ud800\\u00e9\\/\\b\\f\\n\\r\\t"'),
    );
  });

  it('refuses what JSON.parse refuses, with a reason and where', () => {
    const bad = [
      '{"a":1',
      '[1,]',
      '{"a" 1}',
      '[tru]',
      '[1] x',
      '"a\u0001"',
      '{a:1}',
      '01',
      '[1 2]',
      '{"a":1,}',
      '"\\x41"',
      '"\\u12G4"',
      '-',
      '1.',
      '.5',
      '+1',
      'nul',
      '[',
      '{"a":[}',
    ];
    for (const text of bad) {
      assert.throws(() => JSON.parse(text), SyntaxError, text);
      const r = parseJsonStreaming(text);
      assert.ok(r.error, `${text} should fail`);
      assert.ok(r.error.message.length > 5, text);
    }
    assert.deepEqual(parseJsonStreaming('{"a":\n  [1, 2, x]}').error?.message, 'expected a value, found "x"');
  });

  it('keeps own "__proto__" keys and last-wins duplicates exactly as JSON.parse does', () => {
    const text = '{"__proto__": {"polluted": true}, "a": 1, "a": 2, "constructor": {"prototype": 1}}';
    const r = parseJsonStreaming(text).value as Record<string, unknown>;
    assert.deepEqual(r, JSON.parse(text));
    assert.equal(Object.getPrototypeOf(r), Object.prototype);
    assert.deepEqual(Object.keys(r), ['__proto__', 'a', 'constructor']);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  it('leaves out values nested past the limit, reports where, and reads on (100,000 levels, no stack)', () => {
    const text = `{"before": 1, "deep": ${deepText(100_000)}, "after": [2, {"x": "]"}]}`;
    const r = parseJsonStreaming(text, 10);
    assert.equal(r.error, null);
    assert.equal(r.prunedCount, 1);
    const v = r.value as { before: number; deep: unknown; after: unknown };
    assert.equal(v.before, 1);
    assert.deepEqual(v.after, [2, { x: ']' }]);
    // Nine arrays kept (with the object, ten levels), the tenth left out as null.
    let d: unknown = v.deep;
    let levels = 0;
    while (Array.isArray(d)) {
      levels += 1;
      d = d[0];
    }
    assert.equal(levels, 9);
    assert.equal(d, null);
    // Brackets inside strings of the skipped part do not confuse the skip.
    assert.deepEqual(parseJsonStreaming('[[["]]]", {"a": "[["}]], 5]', 2).value, [[null], 5]);
  });

  it('keeps a truncated document up to its cut, and says it was cut', () => {
    const r = parseJsonStreaming('{"trajectory": [{"a": 1}, {"b": [2, 3');
    assert.match(r.error!.message, /ends before its value is complete/);
    assert.deepEqual(r.value, { trajectory: [{ a: 1 }, { b: [2, 3] }] });
  });

  it('records where each object and array starts, by line and offset', () => {
    const p = new StreamingJsonParser();
    const lines = ['{', '  "a": [', '    {"b": 1}', '  ]', '}'];
    let offset = 0;
    lines.forEach((line, i) => {
      p.startLine(i, offset);
      p.write(line);
      p.write('\n');
      offset += line.length + 1;
    });
    const v = p.end().value as { a: Array<object> };
    assert.deepEqual(p.positionOf(v), { line: 0, offset: 0 });
    assert.deepEqual(p.positionOf(v.a), { line: 1, offset: 2 + 7 });
    assert.deepEqual(p.positionOf(v.a[0]!), { line: 2, offset: 2 + 9 + 4 });
  });

  it('a string longer than JavaScript can hold is refused with that reason and the limit, where it starts to overflow', () => {
    const p = new StreamingJsonParser(MAX_JSON_DEPTH, 1000);
    p.startLine(7, 0);
    p.write('{"observation": "');
    for (let i = 0; i < 5; i++) p.write('x'.repeat(300));
    const r = p.end();
    assert.equal(r.error?.message, 'a string longer than 1,000 characters, the most JavaScript can hold');
    assert.equal(r.error?.at.line, 7);
    assert.equal(MAX_STRING_CHARS, 2 ** 29 - 24, "V8's limit on 64-bit machines");
  });
});
