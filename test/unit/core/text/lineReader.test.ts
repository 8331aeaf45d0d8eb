import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LineReader } from '../../../../src/core/text/lineReader';
import type { LineReaderOptions, SourceLine } from '../../../../src/core/text/lineReader';

const enc = new TextEncoder();

function readAll(chunks: Uint8Array[]): SourceLine[] {
  const r = new LineReader();
  const out: SourceLine[] = [];
  for (const c of chunks) out.push(...r.push(c));
  out.push(...r.end());
  return out;
}

function readAllWith(options: LineReaderOptions, chunks: Uint8Array[]): SourceLine[] {
  const r = new LineReader(options);
  const out: SourceLine[] = [];
  for (const c of chunks) out.push(...r.push(c));
  out.push(...r.end());
  return out;
}

describe('LineReader', () => {
  it('keeps a partial line when the caller reuses its Buffer for the next chunk', () => {
    // A Node Buffer's slice() is a view, not a copy: the partial "ab" must survive the
    // buffer being overwritten with the next chunk's bytes.
    const buffer = Buffer.alloc(4);
    const r = new LineReader();
    buffer.write('x\nab');
    const first = r.push(buffer.subarray(0, 4));
    buffer.write('c\nzz');
    const second = r.push(buffer.subarray(0, 2));
    assert.deepEqual(
      [...first, ...second, ...r.end()].map((l) => l.text),
      ['x', 'abc'],
    );
  });

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
    assert.deepEqual(
      lines.map((l) => l.text),
      ['ééééé€', 'next'],
    );
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
    assert.equal(lines[0]!.notText, 'utf8');
    assert.equal(lines[1]!.text, 'a');
  });

  it('notices NUL bytes, and marks the one line that holds them (not the file)', () => {
    const r = new LineReader();
    r.push(new Uint8Array([1, 2, 0, 3]));
    assert.equal(r.containsNul, true);
    const lines = readAll([enc.encode('{"a":1}\n{"b"'), new Uint8Array([0]), enc.encode(':2}\n{"c":3}\n')]);
    assert.deepEqual(
      lines.map((l) => [l.text, l.notText ?? null]),
      [
        ['{"a":1}', null],
        [null, 'nul'],
        ['{"c":3}', null],
      ],
    );
  });

  it('decodes UTF-16 with a byte-order mark (either order), a code unit split across chunks too', () => {
    const text = '{"é":"€𝄞"}\r\nnext\n';
    for (const bigEndian of [false, true]) {
      const body = Buffer.from(text, 'utf16le');
      if (bigEndian) body.swap16();
      const bytes = Buffer.concat([Buffer.from(bigEndian ? [0xfe, 0xff] : [0xff, 0xfe]), body]);
      const r = new LineReader();
      const lines = [
        ...r.push(bytes.subarray(0, 5)),
        ...r.push(bytes.subarray(5, 12)),
        ...r.push(bytes.subarray(12)),
        ...r.end(),
      ];
      assert.deepEqual(
        lines.map((l) => l.text),
        ['{"é":"€𝄞"}', 'next'],
      );
      assert.equal(r.encoding, bigEndian ? 'utf-16be' : 'utf-16le');
    }
    const noBom = new LineReader();
    noBom.push(Buffer.from('{"a":1}\n', 'utf16le'));
    assert.equal(noBom.looksLikeUtf16WithoutBom, true);
    const ascii = new LineReader();
    ascii.push(enc.encode('{"a":1}\n'));
    assert.equal(ascii.looksLikeUtf16WithoutBom, false);
  });

  it('streams a line past the limit to its consumer in pieces, never whole, with its true length', () => {
    const long = '[' + '1,'.repeat(5000) + '1]';
    const pieces: string[] = [];
    const r = new LineReader({
      longLineBytes: 100,
      onLongLine: (line, offset) => {
        assert.deepEqual([line, offset], [1, 6]);
        return { write: (t) => (pieces.push(t), true) };
      },
    });
    const bytes = enc.encode(`short\n${long}\r\nafter\n`);
    const lines: SourceLine[] = [];
    for (let at = 0; at < bytes.length; at += 64) lines.push(...r.push(bytes.subarray(at, at + 64)));
    lines.push(...r.end());
    assert.deepEqual(
      lines.map((l) => [l.line, l.text, l.notText ?? null, l.byteLength]),
      [
        [0, 'short', null, 5],
        [1, null, 'long', long.length],
        [2, 'after', null, 5],
      ],
    );
    // The CR before the newline is whitespace to the consumer, not part of the line's length.
    assert.equal(pieces.join('').replace(/\r$/, ''), long);
    assert.ok(pieces.length > 10);
    assert.equal(lines[2]!.offset, 6 + long.length + 2);
  });

  it('a long line with no consumer, or one that stops, is skipped to its end; invalid UTF-8 in it is said', () => {
    const lines = readAllWith({ longLineBytes: 10 }, [enc.encode('x'.repeat(1000) + '\nok\n')]);
    assert.deepEqual(
      lines.map((l) => [l.text, l.notText ?? null]),
      [
        [null, 'long'],
        ['ok', null],
      ],
    );
    let writes = 0;
    const stopped = readAllWith({ longLineBytes: 10, onLongLine: () => ({ write: () => (writes++, false) }) }, [
      enc.encode('y'.repeat(100)),
      enc.encode('y'.repeat(100)),
      enc.encode('\nok\n'),
    ]);
    assert.equal(writes, 1);
    assert.deepEqual(
      stopped.map((l) => l.notText ?? l.text),
      ['long', 'ok'],
    );
    const bad = readAllWith({ longLineBytes: 10, onLongLine: () => ({ write: () => true }) }, [
      new Uint8Array([...enc.encode('z'.repeat(50)), 0xff, 0x0a]),
    ]);
    assert.equal(bad[0]!.notText, 'utf8');
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
