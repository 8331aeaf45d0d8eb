import type { ColumnChunk, KeyValue, RowGroup, SchemaElement, Statistics } from 'hyparquet';
import { logicalType } from 'hyparquet-writer/src/metadata.js';
import { unconvertMinMax } from 'hyparquet-writer/src/unconvert.js';

/**
 * The footer of a team table's Parquet file (its FileMetaData in Thrift's compact protocol):
 * the bytes hyparquet-writer's `writeMetadata` writes for the same row groups, without its
 * general path. That path builds a `field_N` object for every struct of the footer, then
 * takes each field's number out of its name with a regular expression, guesses each value's
 * Thrift type and makes a new TextEncoder for every string: per column chunk of every file,
 * and an export of 1,000 sessions writes about 130,000 chunks, most of them small (a file per
 * source, table and partition). Here the parts every file of a table shares (its schema,
 * key-value metadata, column orders, each column's name) are encoded once, and each chunk's
 * figures, each page's header and each chunk's statistics are written straight as varints and
 * bytes. A text statistic longer than 16 bytes alone still goes through the library's
 * conversion (`unconvertMinMax`, which truncates it as the library does).
 *
 * The unit tests compare whole files with the library's, footers and page headers included
 * (parquetColumns.test.ts), and the compact protocol value by value (parquetThrift.test.ts).
 */

// Thrift compact protocol types (thrift.js).
const STOP = 0;
const TRUE = 1;
const FALSE = 2;
const BYTE = 3;
const I32 = 5;
const I64 = 6;
const DOUBLE = 7;
const BINARY = 8;
const LIST = 9;
const STRUCT = 12;

// The enums of the Parquet format's Thrift definition (parquet.thrift), in their numbering: a
// value is written as its place in the list.
const PARQUET_TYPES = ['BOOLEAN', 'INT32', 'INT64', 'INT96', 'FLOAT', 'DOUBLE', 'BYTE_ARRAY', 'FIXED_LEN_BYTE_ARRAY'];
const ENCODINGS = [
  'PLAIN',
  'GROUP_VAR_INT',
  'PLAIN_DICTIONARY',
  'RLE',
  'BIT_PACKED',
  'DELTA_BINARY_PACKED',
  'DELTA_LENGTH_BYTE_ARRAY',
  'DELTA_BYTE_ARRAY',
  'RLE_DICTIONARY',
  'BYTE_STREAM_SPLIT',
];
const REPETITION_TYPES = ['REQUIRED', 'OPTIONAL', 'REPEATED'];
const CONVERTED_TYPES = [
  'UTF8',
  'MAP',
  'MAP_KEY_VALUE',
  'LIST',
  'ENUM',
  'DECIMAL',
  'DATE',
  'TIME_MILLIS',
  'TIME_MICROS',
  'TIMESTAMP_MILLIS',
  'TIMESTAMP_MICROS',
  'UINT_8',
  'UINT_16',
  'UINT_32',
  'UINT_64',
  'INT_8',
  'INT_16',
  'INT_32',
  'INT_64',
  'JSON',
  'BSON',
  'INTERVAL',
];
const CODECS = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'LZO', 'BROTLI', 'LZ4', 'ZSTD', 'LZ4_RAW'];
const PAGE_TYPES = ['DATA_PAGE', 'INDEX_PAGE', 'DICTIONARY_PAGE', 'DATA_PAGE_V2'];

/** An enum value's number; an unknown name is a bug here, not a value to write as -1. */
function numberOf(names: readonly string[], name: string): number {
  const at = names.indexOf(name);
  if (at < 0) throw new Error(`not a Parquet enum value: ${name}`);
  return at;
}

const encoder = new TextEncoder();

/** A growing byte buffer with the compact protocol's primitives. */
export class CompactWriter {
  bytes = new Uint8Array(4096);
  length = 0;
  private view = new DataView(this.bytes.buffer);

  private ensure(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }

  byte(b: number): void {
    this.ensure(1);
    this.bytes[this.length++] = b;
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** An unsigned varint of a 32-bit value (the library's appendVarInt). */
  varint32(value: number): void {
    this.ensure(5);
    let v = value;
    while ((v & ~0x7f) !== 0) {
      this.bytes[this.length++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.bytes[this.length++] = v;
  }

  /** An I32 as the library writes it: zigzag, then varint. */
  i32(value: number): void {
    this.varint32((value << 1) ^ (value >> 31));
  }

  /** An I64 as the library writes it (zigzag of a BigInt, then varint); without BigInt arithmetic below 2^52. */
  i64(value: bigint | number): void {
    const n = typeof value === 'bigint' ? Number(value) : value;
    if (n >= 0 && n < 2 ** 52 && (typeof value !== 'bigint' || BigInt(n) === value)) {
      let z = n * 2;
      this.ensure(10);
      while (z >= 0x80) {
        this.bytes[this.length++] = (z % 0x80) | 0x80;
        z = Math.floor(z / 0x80);
      }
      this.bytes[this.length++] = z;
      return;
    }
    const big = BigInt(value);
    let z = (big << 1n) ^ (big >> 63n);
    while ((z & ~0x7fn) !== 0n) {
      this.byte(Number((z & 0x7fn) | 0x80n));
      z >>= 7n;
    }
    this.byte(Number(z));
  }

  double(value: number): void {
    this.ensure(8);
    this.view.setFloat64(this.length, value, true);
    this.length += 8;
  }

  binary(bytes: Uint8Array): void {
    this.varint32(bytes.length);
    this.raw(bytes);
  }

  /** A number as BINARY: 4 bytes of an INT32, or 8 of a DOUBLE or of an INT64 below 2^53 in magnitude; little-endian, as a DataView writes them. */
  numberBinary(type: 'INT32' | 'INT64' | 'DOUBLE', value: number): void {
    const size = type === 'INT32' ? 4 : 8;
    this.ensure(1 + size);
    this.bytes[this.length++] = size; // the length's varint: one byte
    if (type === 'DOUBLE') this.view.setFloat64(this.length, value, true);
    else if (type === 'INT32') this.view.setInt32(this.length, value, true);
    else {
      // Two's complement in two halves, exact below 2^53 (parquetColumns.ts writeInt64s).
      const high = Math.floor(value / 4294967296);
      this.view.setUint32(this.length, value - high * 4294967296, true);
      this.view.setInt32(this.length + 4, high, true);
    }
    this.length += size;
  }

  /**
   * A text of at most `max` (< 128) UTF-8 bytes as BINARY, as `binary(TextEncoder.encode(text))`
   * writes it; false, with nothing written, for a longer one.
   */
  shortText(text: string, max: number): boolean {
    // Each UTF-16 unit is at least one byte.
    if (text.length > max) return false;
    this.ensure(1 + 3 * text.length);
    const at = this.length + 1;
    let ascii = true;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) {
        ascii = false;
        break;
      }
      this.bytes[at + i] = c;
    }
    const written = ascii ? text.length : encoder.encodeInto(text, this.bytes.subarray(at)).written;
    if (written > max) return false;
    this.bytes[this.length] = written; // the length's varint: one byte (max < 128)
    this.length = at + written;
    return true;
  }

  /** A field's header, given the previous field's id; returns this one's. */
  field(last: number, id: number, type: number): number {
    const delta = id - last;
    if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
    else {
      this.byte(type);
      this.i32(id);
    }
    return id;
  }

  listHeader(size: number, elementType: number): void {
    if (size > 14) {
      this.byte((15 << 4) | elementType);
      this.varint32(size);
    } else this.byte((size << 4) | elementType);
  }

  /** What was written. */
  done(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }
}

/** A `field_N` object's values, typed as the library types them (thrift.js getCompactTypeForValue). */
function typeOf(value: unknown): number {
  if (value === true) return TRUE;
  if (value === false) return FALSE;
  if (Number.isInteger(value)) return I32;
  if (typeof value === 'number') return DOUBLE;
  if (typeof value === 'bigint') return I64;
  if (typeof value === 'string' || value instanceof Uint8Array) return BINARY;
  if (Array.isArray(value)) return LIST;
  if (value && typeof value === 'object') return STRUCT;
  throw new Error(`no Thrift compact type for ${String(value)}`);
}

/** A list's element type, as the library infers it (getCompactTypeForList). */
function listTypeOf(list: readonly unknown[]): number {
  let elementType = 0;
  for (const v of list) {
    let t = typeOf(v);
    if (t === TRUE) t = FALSE;
    if (!elementType) elementType = t;
    if (elementType === DOUBLE && t === I32) t = DOUBLE;
    if (elementType === I32 && t === DOUBLE) elementType = DOUBLE;
    if (t !== elementType) throw new Error(`mixed Thrift list element types (${t}, ${elementType})`);
  }
  // The library's `elemType ?? BYTE` never applies (its start is 0, not null): an empty list's type is 0.
  return elementType;
}

const fieldIds = new Map<string, number>();

function fieldId(key: string): number {
  let id = fieldIds.get(key);
  if (id === undefined) {
    id = /^field_\d+$/.test(key) ? Number(key.slice(6)) : Number.NaN;
    if (Number.isNaN(id)) throw new Error(`Thrift field name ${key}: expected field_<number>`);
    fieldIds.set(key, id);
  }
  return id;
}

/** Any value of a `field_N` object, as the library's writeElement writes it. */
export function writeValue(w: CompactWriter, type: number, value: unknown): void {
  switch (type) {
    case TRUE:
    case FALSE:
      return;
    case BYTE:
      return w.byte(value as number);
    case I32:
      return w.i32(value as number);
    case I64:
      return w.i64(value as bigint);
    case DOUBLE:
      return w.double(value as number);
    case BINARY:
      return w.binary(typeof value === 'string' ? encoder.encode(value) : (value as Uint8Array));
    case LIST: {
      const list = value as unknown[];
      const elementType = listTypeOf(list);
      w.listHeader(list.length, elementType);
      if (elementType === FALSE) for (const v of list) w.byte(v ? 1 : 0);
      else for (const v of list) writeValue(w, elementType, v);
      return;
    }
    case STRUCT: {
      let last = 0;
      const struct = value as Record<string, unknown>;
      for (const key in struct) {
        const v = struct[key];
        if (v === undefined) continue;
        last = w.field(last, fieldId(key), typeOf(v));
        writeValue(w, typeOf(v), v);
      }
      return w.byte(STOP);
    }
    default:
      throw new Error(`Thrift compact type ${type}`);
  }
}

/** What every file of one table shares in its footer, encoded once. */
interface TableFooter {
  /** FileMetaData's field 2 (the schema), header included, after field 1. */
  schema: Uint8Array;
  /** Each leaf column's `path_in_schema` list (one name). */
  paths: Uint8Array[];
  /** The leaf elements, for the statistics' conversion. */
  leaves: SchemaElement[];
  /** Fields 5 (key-value metadata), 6 (created_by) and 7 (column orders), after field 4, and STOP. */
  tail: Uint8Array;
}

/** Per schema (each table's is made once: teamSchema), its footers' shared parts by generator and key-value metadata. */
const footers = new WeakMap<SchemaElement[], Map<string, TableFooter>>();

function tableFooter(schema: SchemaElement[], kvMetadata: KeyValue[], generator: string): TableFooter {
  let bySettings = footers.get(schema);
  if (!bySettings) footers.set(schema, (bySettings = new Map()));
  // Each part with its length: no two lists of parts make the same key.
  let key = `${generator.length}:${generator}`;
  for (const kv of kvMetadata)
    key += `${kv.key.length}:${kv.key}${kv.value === undefined ? '-' : `${kv.value.length}:${kv.value}`}`;
  let footer = bySettings.get(key);
  if (footer) return footer;
  const w = new CompactWriter();
  w.field(1, 2, LIST);
  writeValue(
    w,
    LIST,
    schema.map((element) => ({
      field_1: element.type && numberOf(PARQUET_TYPES, element.type),
      field_2: element.type_length,
      field_3: element.repetition_type && numberOf(REPETITION_TYPES, element.repetition_type),
      field_4: element.name,
      field_5: element.num_children,
      field_6: element.converted_type && numberOf(CONVERTED_TYPES, element.converted_type),
      field_7: element.scale,
      field_8: element.precision,
      field_9: element.field_id,
      field_10: logicalType(element.logical_type),
    })),
  );
  const schemaBytes = w.done().slice();
  const leaves = schema.filter((e) => e.type);
  const paths = leaves.map((e) => {
    const p = new CompactWriter();
    writeValue(p, LIST, [e.name]);
    return p.done().slice();
  });
  const t = new CompactWriter();
  t.field(4, 5, LIST);
  writeValue(
    t,
    LIST,
    kvMetadata.map((kv) => ({ field_1: kv.key, field_2: kv.value })),
  );
  t.field(5, 6, BINARY);
  t.binary(encoder.encode(generator));
  t.field(6, 7, LIST);
  writeValue(
    t,
    LIST,
    leaves.map(() => ({ field_1: {} })),
  );
  t.byte(STOP);
  footer = { schema: schemaBytes, paths, leaves, tail: t.done().slice() };
  bySettings.set(key, footer);
  return footer;
}

function columnChunk(w: CompactWriter, chunk: ColumnChunk, path: Uint8Array, leaf: SchemaElement): void {
  const m = chunk.meta_data!;
  // ColumnChunk: field 2 (file_offset), field 3 (meta_data).
  w.field(0, 2, I64);
  w.i64(chunk.file_offset);
  w.field(2, 3, STRUCT);
  w.field(0, 1, I32);
  w.i32(numberOf(PARQUET_TYPES, m.type));
  w.field(1, 2, LIST);
  w.listHeader(m.encodings.length, I32);
  for (const e of m.encodings) w.i32(numberOf(ENCODINGS, e));
  w.field(2, 3, LIST);
  w.raw(path);
  w.field(3, 4, I32);
  w.i32(numberOf(CODECS, m.codec));
  w.field(4, 5, I64);
  w.i64(m.num_values);
  w.field(5, 6, I64);
  w.i64(m.total_uncompressed_size);
  w.field(6, 7, I64);
  w.i64(m.total_compressed_size);
  let last = w.field(7, 9, I64);
  w.i64(m.data_page_offset);
  if (m.dictionary_page_offset !== undefined) {
    last = w.field(last, 11, I64);
    w.i64(m.dictionary_page_offset);
  }
  if (m.statistics) {
    last = w.field(last, 12, STRUCT);
    writeStatistics(w, m.statistics, leaf);
  }
  if (m.encoding_stats) {
    w.field(last, 13, LIST);
    w.listHeader(m.encoding_stats.length, STRUCT);
    for (const es of m.encoding_stats) {
      w.field(0, 1, I32);
      w.i32(numberOf(PAGE_TYPES, es.page_type));
      w.field(1, 2, I32);
      w.i32(numberOf(ENCODINGS, es.encoding));
      w.field(2, 3, I32);
      w.i32(es.count);
      w.byte(STOP);
    }
  }
  w.byte(STOP); // meta_data
  w.byte(STOP); // ColumnChunk
}

/** hyparquet-writer's bound on a text statistic's bytes (unconvert.js STATS_TRUNCATE_LENGTH). */
const STATISTIC_BYTES = 16;

/**
 * A min or max, BINARY as the footer holds it (its length, then its bytes), written as the
 * library's `unconvertMinMax` gives it for the team tables' cells (texts; integers, times and
 * doubles as numbers; booleans), straight into the footer; returns whether it is the value
 * itself (false: a text truncated to STATISTIC_BYTES), as `minMaxIsExact` says it.
 */
function writeStatistic(w: CompactWriter, value: unknown, leaf: SchemaElement, isMax: boolean): boolean {
  if (typeof value === 'string' && leaf.type === 'BYTE_ARRAY') {
    if (w.shortText(value, STATISTIC_BYTES)) return true;
    // Truncated by the library's own rule; a max it cannot round up within the bound stays whole (and exact).
    const cut = unconvertMinMax(value, leaf, isMax)!;
    w.binary(cut);
    return cut.length > STATISTIC_BYTES;
  }
  if (typeof value === 'number' && (leaf.type === 'DOUBLE' || leaf.type === 'INT32')) w.numberBinary(leaf.type, value);
  // INT64 and times: integers below 2^53 in magnitude, as columnCells checked.
  else if (typeof value === 'number' && leaf.type === 'INT64' && Number.isSafeInteger(value))
    w.numberBinary('INT64', value);
  else w.binary(unconvertMinMax(value as never, leaf, isMax)!);
  return true;
}

/**
 * A chunk's Statistics struct as the library writes `unconvertStatistics` of it (fields 3,
 * 5 to 9; the team writer sets no `min`, `max` or `distinct_count`), without its `field_N`
 * object and generic Thrift path: once per column chunk of every file.
 */
function writeStatistics(w: CompactWriter, stats: Statistics & { nan_count?: bigint }, leaf: SchemaElement): void {
  let last = 0;
  if (stats.null_count !== undefined) {
    last = w.field(last, 3, I64);
    w.i64(stats.null_count);
  }
  let maxExact = true;
  let minExact = true;
  if (stats.max_value !== undefined && stats.max_value !== null) {
    last = w.field(last, 5, BINARY);
    maxExact = writeStatistic(w, stats.max_value, leaf, true);
  }
  if (stats.min_value !== undefined && stats.min_value !== null) {
    last = w.field(last, 6, BINARY);
    minExact = writeStatistic(w, stats.min_value, leaf, false);
  }
  if (!maxExact) last = w.field(last, 7, FALSE);
  if (!minExact) last = w.field(last, 8, FALSE);
  if (stats.nan_count !== undefined) {
    w.field(last, 9, I64);
    w.i64(stats.nan_count);
  }
  w.byte(STOP);
}

/**
 * The footer's bytes (FileMetaData, version 2) for row groups whose chunks carry what the
 * team tables' writer gives them (parquetColumns.ts writeChunk): the same bytes as the
 * library's writeMetadata, without the length and magic that follow it.
 */
export function footerBytes(
  schema: SchemaElement[],
  rowGroups: RowGroup[],
  numRows: number,
  kvMetadata: KeyValue[],
  generator: string,
): Uint8Array {
  const shared = tableFooter(schema, kvMetadata, generator);
  const w = new CompactWriter();
  w.field(0, 1, I32);
  w.i32(2);
  w.raw(shared.schema);
  w.field(2, 3, I64);
  w.i64(numRows);
  w.field(3, 4, LIST);
  w.listHeader(rowGroups.length, STRUCT);
  for (const group of rowGroups) {
    w.field(0, 1, LIST);
    w.listHeader(group.columns.length, STRUCT);
    group.columns.forEach((chunk, j) => columnChunk(w, chunk, shared.paths[j]!, shared.leaves[j]!));
    w.field(1, 2, I64);
    w.i64(group.total_byte_size);
    w.field(2, 3, I64);
    w.i64(group.num_rows);
    w.field(3, 6, I64);
    w.i64(group.total_compressed_size!);
    w.byte(STOP);
  }
  w.raw(shared.tail);
  return w.done();
}

/** One writer for page headers, emptied for each (a header is written out before the next is made). */
const headers = new CompactWriter();

/** A page's header (PageHeader) as the library's writePageHeader writes it: a dictionary page's (PLAIN values) or a data page v2's (compressed). */
export function pageHeaderBytes(
  page:
    | { type: 'DICTIONARY_PAGE'; values: number }
    | {
        type: 'DATA_PAGE_V2';
        values: number;
        nulls: number;
        rows: number;
        encoding: string;
        definitionBytes: number;
      },
  uncompressedSize: number,
  compressedSize: number,
): Uint8Array {
  const w = headers;
  w.length = 0;
  w.field(0, 1, I32);
  w.i32(numberOf(PAGE_TYPES, page.type));
  w.field(1, 2, I32);
  w.i32(uncompressedSize);
  w.field(2, 3, I32);
  w.i32(compressedSize);
  if (page.type === 'DICTIONARY_PAGE') {
    w.field(3, 7, STRUCT);
    w.field(0, 1, I32);
    w.i32(page.values);
    w.field(1, 2, I32);
    w.i32(numberOf(ENCODINGS, 'PLAIN'));
  } else {
    w.field(3, 8, STRUCT);
    w.field(0, 1, I32);
    w.i32(page.values);
    w.field(1, 2, I32);
    w.i32(page.nulls);
    w.field(2, 3, I32);
    w.i32(page.rows);
    w.field(3, 4, I32);
    w.i32(numberOf(ENCODINGS, page.encoding));
    w.field(4, 5, I32);
    w.i32(page.definitionBytes);
    w.field(5, 6, I32);
    w.i32(0); // no repetition levels: the team tables are flat
  }
  w.byte(STOP);
  w.byte(STOP);
  return w.done();
}
