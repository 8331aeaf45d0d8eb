import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LineReader } from '../../../../src/core/text/lineReader';
import type { SourceLine } from '../../../../src/core/text/lineReader';

const enc = new TextEncoder();

function readAll(chunks: Uint8Array[]): SourceLine[] {
  const r = new LineReader();
  const out: SourceLine[] = [];
  for (const c of chunks) out.push(...r.push(c));
  out.push(...r.end());
  return out;
}

describe('LineReader', () => {
  it('splits LF and CRLF lines and keeps 0-based numbers and byte offsets', () => {
    // "ab\r\n" is 4 bytes, "" + "\n" is 1 byte, so "cd" starts at byte 5.
    const lines = readAll([enc.encode('ab\r\n\ncd')]);
    assert.deepEqual(
      lines.map((l) => [l.line, l.offset, l.byteLength, l.text]),
      [
        [0, 0, 2, 'ab'],
        [1, 4, 0, ''],
        [2, 5, 2, 'cd'],
      ],
    );
  });

  it('drops a UTF-8 BOM but counts its 3 bytes in offsets', () => {
    const lines = readAll([new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode('{"a":1}\nx\n')])]);
    assert.equal(lines[0]!.text, '{"a":1}');
    assert.equal(lines[0]!.offset, 3);
    assert.equal(lines[1]!.offset, 3 + 8);
  });

  it('joins a line split across many chunks, including inside a multi-byte character', () => {
    const text = 'é'.repeat(5) + '€\n' + 'next';
    const bytes = enc.encode(text);
    const oneByteChunks = [...bytes].map((b) => new Uint8Array([b]));
    const lines = readAll(oneByteChunks);
    assert.deepEqual(lines.map((l) => l.text), ['ééééé€', 'next']);
    // 5 × 2 bytes + 3 bytes for € + 1 newline = 14.
    assert.equal(lines[1]!.offset, 14);
  });

  it('reads a very long line (8 MiB) pushed in 64 KiB chunks in one piece', () => {
    const long = 'x'.repeat(8 * 1024 * 1024);
    const bytes = enc.encode(`a\n${long}\nb`);
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += 65536) chunks.push(bytes.subarray(at, at + 65536));
    const lines = readAll(chunks);
    assert.equal(lines.length, 3);
    assert.equal(lines[1]!.text!.length, long.length);
    assert.equal(lines[2]!.offset, 2 + long.length + 1);
  });

  it('marks invalid UTF-8 lines as null text instead of guessing', () => {
    const lines = readAll([new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a, 0x61])]);
    assert.equal(lines[0]!.text, null);
    assert.equal(lines[1]!.text, 'a');
  });

  it('notices NUL bytes (binary files)', () => {
    const r = new LineReader();
    r.push(new Uint8Array([1, 2, 0, 3]));
    assert.equal(r.containsNul, true);
  });

  it('does not depend on the caller keeping its chunk buffer', () => {
    const r = new LineReader();
    const buf = enc.encode('abc');
    r.push(buf);
    buf.fill(0x7a); // the caller reuses its buffer
    const lines = [...r.push(enc.encode('d\n')), ...r.end()];
    assert.equal(lines[0]!.text, 'abcd');
  });
});
