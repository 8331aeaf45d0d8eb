/**
 * Snappy compression of the Parquet export's pages into one reused output buffer, byte for
 * byte what hyparquet-writer's `snappyCompress` writes (the reference compressor's greedy
 * matcher: a hash table of 4-byte runs, a skip that grows while nothing matches, copies of
 * at most 64 bytes; format: https://github.com/google/snappy/blob/main/format_description.txt).
 *
 * Why not the library's: the export compresses about 200,000 pages, most of a few hundred
 * bytes, and the library makes a new growable writer for each (an ArrayBuffer and a DataView),
 * writes every tag byte through it, and makes a view of the input for every literal. Here the
 * output is one Uint8Array that grows as needed and is written to by index. The unit test
 * (test/unit/node/team/snappy.test.ts) compares the two on the bundled sample trace's bytes
 * and at the format's edges (literal lengths, long runs, the 65,535-byte reach).
 */

/** Largest hash table: 2^14 entries, as the reference and the library use. */
const MAX_HASH_TABLE_BITS = 14;
/** Farthest back a copy may reach (2-byte offsets). */
const MAX_OFFSET = 0xffff;
/** Bytes at the end of the input never started from in the matcher (the reference's input margin). */
const INPUT_MARGIN = 15;
/** One hash table per size, cleared before each use. */
const hashTables: Array<Uint32Array | undefined> = [];

let out = new Uint8Array(1 << 16);

/** Room for `n` more bytes after `at`. */
function room(at: number, n: number): void {
  if (at + n <= out.length) return;
  const bigger = new Uint8Array(Math.max(out.length * 2, at + n));
  bigger.set(out.subarray(0, at));
  out = bigger;
}

function hash(key: number, shift: number): number {
  return Math.imul(key, 0x1e35a7bd) >>> shift;
}

/** The 4 bytes at `at`, little-endian, as an int32 (an index past the end reads as 0, as the library's does). */
function load32(input: Uint8Array, at: number): number {
  return input[at]! | (input[at + 1]! << 8) | (input[at + 2]! << 16) | (input[at + 3]! << 24);
}

function equal32(input: Uint8Array, a: number, b: number): boolean {
  return (
    input[a] === input[b] &&
    input[a + 1] === input[b + 1] &&
    input[a + 2] === input[b + 2] &&
    input[a + 3] === input[b + 3]
  );
}

function literal(o: number, input: Uint8Array, from: number, length: number): number {
  room(o, 5 + length);
  if (length <= 60) out[o++] = (length - 1) << 2;
  else {
    const value = length - 1;
    const bytes = value < 0x100 ? 1 : value < 0x10000 ? 2 : value < 0x1000000 ? 3 : 4;
    out[o++] = (59 + bytes) << 2;
    for (let i = 0; i < bytes; i++) out[o++] = (value >>> (i * 8)) & 0xff;
  }
  if (length < 32) for (let i = 0; i < length; i++) out[o++] = input[from + i]!;
  else {
    out.set(input.subarray(from, from + length), o);
    o += length;
  }
  return o;
}

/** One copy of 4 to 64 bytes: two bytes when short and near, else three. */
function copyUpTo64(o: number, offset: number, length: number): number {
  if (length < 12 && offset < 2048) {
    out[o++] = (1 + ((length - 4) << 2) + ((offset >>> 8) << 5)) & 0xff;
    out[o++] = offset & 0xff;
  } else {
    out[o++] = (2 + ((length - 1) << 2)) & 0xff;
    out[o++] = offset & 0xff;
    out[o++] = (offset >>> 8) & 0xff;
  }
  return o;
}

function copy(o: number, offset: number, length: number): number {
  room(o, 3 * Math.ceil(length / 60) + 3);
  while (length >= 68) {
    o = copyUpTo64(o, offset, 64);
    length -= 64;
  }
  if (length > 64) {
    o = copyUpTo64(o, offset, 60);
    length -= 60;
  }
  return copyUpTo64(o, offset, length);
}

/**
 * The Snappy stream of `input` (its uncompressed length as a varint, then literals and
 * copies), as a view of the shared output: valid until the next call.
 */
export function snappyCompressShared(input: Uint8Array): Uint8Array {
  const size = input.length;
  let o = 0;
  room(0, 5);
  for (let v = size; ; v >>>= 7) {
    if ((v & ~0x7f) === 0) {
      out[o++] = v;
      break;
    }
    out[o++] = (v & 0x7f) | 0x80;
  }
  let bits = 1;
  while (1 << bits <= size && bits <= MAX_HASH_TABLE_BITS) bits++;
  bits--;
  const shift = 32 - bits;
  const table = (hashTables[bits] ??= new Uint32Array(1 << bits));
  table.fill(0);
  let nextEmit = 0;
  if (size >= INPUT_MARGIN) {
    const ipLimit = size - INPUT_MARGIN;
    let ip = 1;
    let nextHash = hash(load32(input, ip), shift);
    search: for (;;) {
      // Look for a match, skipping further ahead the longer none is found.
      let skip = 32;
      let nextIp = ip;
      let candidate: number;
      do {
        ip = nextIp;
        const h = nextHash;
        nextIp = ip + (skip >>> 5);
        skip++;
        if (ip > ipLimit) break search;
        nextHash = hash(load32(input, nextIp), shift);
        candidate = table[h]!;
        table[h] = ip;
      } while (ip - candidate > MAX_OFFSET || !equal32(input, ip, candidate));
      o = literal(o, input, nextEmit, ip - nextEmit);
      // Copies for as long as the next 4 bytes match again.
      do {
        const base = ip;
        let matched = 4;
        while (ip + matched < size && input[ip + matched] === input[candidate + matched]) matched++;
        ip += matched;
        o = copy(o, base - candidate, matched);
        nextEmit = ip;
        if (ip >= ipLimit) break search;
        table[hash(load32(input, ip - 1), shift)] = ip - 1;
        const h = hash(load32(input, ip), shift);
        candidate = table[h]!;
        table[h] = ip;
      } while (ip - candidate <= MAX_OFFSET && equal32(input, ip, candidate));
      ip++;
      nextHash = hash(load32(input, ip), shift);
    }
  }
  if (nextEmit < size) o = literal(o, input, nextEmit, size - nextEmit);
  return out.subarray(0, o);
}
