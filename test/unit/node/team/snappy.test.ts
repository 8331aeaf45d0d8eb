import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { snappyCompress } from 'hyparquet-writer/src/snappy.js';
import { snappyUncompress } from 'hyparquet';
import { snappyCompressShared } from '../../../../src/node/team/snappy';

/** The library's compressor against ours: equal bytes, and the stream decompresses to the input. */
function same(input: Uint8Array, label: string): void {
  const ours = Buffer.from(snappyCompressShared(input));
  assert.deepEqual(ours, Buffer.from(snappyCompress(input)), label);
  const back = new Uint8Array(input.length);
  snappyUncompress(ours, back);
  assert.deepEqual(Buffer.from(back), Buffer.from(input), `${label}: round trip`);
}

const sample = readFileSync(join(__dirname, '../../../../samples/claude-code-sessions.trace.jsonl'));

describe('snappy: the export pages compressed into one reused buffer', () => {
  it('the bundled Claude Code sample in slices of every size class, byte for byte the library’s', () => {
    let compared = 0;
    // 0 and 1 byte, under and at the 15-byte margin, one literal tag (≤ 60), longer literals, the 2^14 hash table cap and past it.
    for (const size of [0, 1, 14, 15, 16, 59, 60, 61, 255, 256, 257, 4096, 16383, 16384, 70_000, 300_000]) {
      for (const start of [0, 12_345]) {
        same(sample.subarray(start, start + size), `${size} bytes from ${start}`);
        compared += 1;
      }
    }
    assert.equal(compared, 32);
  });

  it('long runs (copies of 64, 60 and the rest), far matches (offsets past 2,048 and past 65,535) and random bytes', () => {
    same(new Uint8Array(10_000).fill(7), 'one byte repeated');
    // 1,000 bytes, then 3,000 random, then the first 1,000 again: a copy with an offset past 2,048.
    let s = 12345;
    const random = (n: number) =>
      Uint8Array.from({ length: n }, () => {
        s = (s * 1103515245 + 12345) % 2 ** 31;
        return s >>> 16;
      });
    const head = random(1000);
    same(Buffer.concat([head, random(3000), head]), 'a match 4,000 bytes back');
    same(Buffer.concat([head, random(70_000), head]), 'a match past the 65,535-byte reach: a literal');
    // The reach's edge: a match exactly 65,535 bytes back is a copy, one 65,536 back is not.
    same(Buffer.concat([head, random(65_535 - 1000), head]), 'a match exactly 65,535 bytes back');
    same(Buffer.concat([head, random(65_536 - 1000), head]), 'a match 65,536 bytes back');
    same(random(50_000), 'random bytes');
    for (const run of [67, 68, 69, 124, 125, 128, 129])
      same(Buffer.concat([head, head.subarray(0, run), random(20)]), `a ${run}-byte copy`);
  });

  it('a small input after a large one: the shared buffer holds only the new stream', () => {
    same(sample.subarray(0, 200_000), 'large');
    same(sample.subarray(500, 530), 'small after large');
    same(new Uint8Array(0), 'empty after large');
  });
});
