import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ByteWriter } from 'hyparquet-writer';
import { serializeTCompactProtocol } from 'hyparquet-writer/src/thrift.js';
import { CompactWriter, writeValue } from '../../../../src/node/team/parquetThrift';

/** The library's bytes for a `field_N` object. */
function library(value: Record<string, unknown>): Buffer {
  const w = new ByteWriter();
  serializeTCompactProtocol(w, value as never);
  return Buffer.from(w.getBytes());
}

/** Ours. */
function ours(value: Record<string, unknown>): Buffer {
  const w = new CompactWriter();
  writeValue(w, 12, value);
  return Buffer.from(w.done());
}

describe('parquetThrift: the compact protocol, as the library writes it', () => {
  it('a struct by hand: i32 5 is zigzag 10 (0x0a) after the header 0x15; "ab" is 0x18 0x02 a b; then STOP', () => {
    // Field 1, type I32 (5): delta 1 → 0x15; 5 zigzag → 10. Field 2, BINARY (8): 0x18, length 2, 'a' 'b'. STOP 0.
    assert.deepEqual([...ours({ field_1: 5, field_2: 'ab' })], [0x15, 0x0a, 0x18, 0x02, 0x61, 0x62, 0x00]);
  });

  it('every kind of value the footer holds, byte for byte the library’s', () => {
    const cases: Array<Record<string, unknown>> = [
      { field_1: 0, field_2: -1, field_3: 2 ** 31 - 1, field_4: -(2 ** 31) },
      // I64 on both paths: small, at 2^52 and past it, negative, the extremes.
      {
        field_1: 0n,
        field_2: 127n,
        field_3: 2n ** 52n - 1n,
        field_4: 2n ** 52n,
        field_5: -5n,
        field_6: 2n ** 63n - 1n,
        field_7: -(2n ** 63n),
      },
      { field_1: true, field_2: false, field_3: 1.5, field_4: -0, field_5: Number.NaN },
      { field_1: 'é\u{1F600}', field_2: new Uint8Array([0, 255, 7]), field_3: '' },
      // Lists: short and long (> 14 elements), of ints widened to doubles, of booleans, of structs, empty.
      {
        field_1: [1, 2, 3],
        field_2: Array.from({ length: 20 }, (_, i) => i * 1000),
        field_3: [1, 2.5],
        field_4: [true, false, true],
        field_5: [{ field_1: {} }, { field_1: {} }],
        field_6: [],
        field_7: ['x', 'yz'],
      },
      // Field ids more than 15 apart take the long header; undefined fields are left out.
      { field_1: 1, field_17: 2, field_40: { field_3: undefined, field_9: 3n } },
    ];
    for (const value of cases)
      assert.deepEqual(
        ours(value),
        library(value),
        JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)),
      );
  });
});
