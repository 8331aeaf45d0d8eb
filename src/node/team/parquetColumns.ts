import { ByteWriter, schemaFromColumnData } from 'hyparquet-writer';
import type { ColumnSource } from 'hyparquet-writer';
import { writeRleBitPackedHybrid } from 'hyparquet-writer/src/encoding.js';
import { writePlain } from 'hyparquet-writer/src/plain.js';
import type { ColumnChunk, DecodedArray, Encoding, KeyValue, RowGroup, SchemaElement } from 'hyparquet';
import type { TeamColumn, TeamTable } from '../../core/team/teamSchema';
import { footerBytes, pageHeaderBytes } from './parquetThrift';
import { snappyCompressShared } from './snappy';
import type { TeamColumns } from '../../core/team/teamColumns';

/**
 * The team tables' Parquet file, column by column, written with hyparquet-writer's own
 * encodings (PLAIN, RLE / bit-packing), Snappy and statistics conversion, but without its
 * general-purpose front, and with the pages' headers and the footer written here
 * (parquetThrift.ts) and the texts encoded straight into their pages: the file is
 * byte for byte the one `parquetWriteBuffer` writes for the same cells (the same row groups
 * of 1,000 then 100,000 rows, the same choice of dictionary or plain encoding, the same
 * statistics), for the flat, nullable columns of the team schema only.
 *
 * What it saves is per cell: the library is handed every INT64 as a BigInt and every
 * TIMESTAMP as a Date, then converts each again, samples and dictionary-encodes through
 * generic Maps, compares every value for the statistics through a generic comparison and
 * checks every INT64 against its range in BigInt arithmetic. Here each column is read out of
 * the rows once, as plain numbers and strings; integers are keyed as numbers (exact below
 * 2^53, checked) and written as 8 bytes without becoming BigInts; the statistics of a
 * dictionary column are taken over its distinct values. Per file and per chunk, the footer's
 * shared parts are encoded once per table, the page writers reused and the pages compressed
 * into one reused buffer (snappy.ts): the export writes thousands of small files
 * (docs/performance.md, "Issue 30, fourteenth and fifteenth sessions").
 *
 * Anything this path does not reproduce exactly returns null, and the caller writes the file
 * with the library: a cell of an unexpected type, an integer beyond 2^53, a non-finite
 * number, an INT32 beyond its range, or a column whose plain text would fill more than one page.
 *
 * It follows hyparquet-writer 0.17's choices and uses modules it exports under `src/`: the
 * unit test (test/unit/node/team/parquetColumns.test.ts) compares its files with the
 * library's, so an upgrade that changes either shows there.
 */

/** hyparquet-writer's defaults, which the export uses (write.js, parquet-writer.js). */
const PAGE_SIZE = 1048576;
const FIRST_GROUP = 1000;
const LATER_GROUPS = 100000;
const MAGIC = 0x31524150; // PAR1
/** The library's sample rejection ratio for dictionaries (dictionary.js). */
const SAMPLE_REJECTION_RATIO = 0.9;
/** Chunks of at most this many rows find their dictionary's entries without a Map (chooseDictionary). */
const SMALL_CHUNK = 16;
/** The largest time value a Date holds (ECMAScript TimeClip). */
const MAX_TIME = 8.64e15;

/** Thrown when a column cannot be written here exactly as the library would: the caller falls back. */
class NotHere extends Error {}

type Cell = string | number | boolean | null;

const schemas = new WeakMap<TeamTable, SchemaElement[]>();

/** The table's schema as the library builds it from the same column declarations. */
export function teamSchema(table: TeamTable): SchemaElement[] {
  let schema = schemas.get(table);
  if (!schema) {
    schema = schemaFromColumnData({
      columnData: table.columns.map(
        (c): ColumnSource => ({ name: c.name, type: c.type as ColumnSource['type'], nullable: true, data: [] }),
      ),
    });
    schemas.set(table, schema);
  }
  return schema;
}

/**
 * A column's cells as the file holds them: strings, integers as numbers (INT64 rounded,
 * TIMESTAMP truncated to whole milliseconds, as `BigInt(Math.round(v))` and `new Date(v)`
 * made them; INT32 rounded), doubles, booleans; null for a missing cell. Null when a cell is not what this
 * path reproduces exactly.
 */
export function columnCells(column: TeamColumn, cells: readonly Cell[]): Cell[] | null {
  const n = cells.length;
  const out: Cell[] = new Array<Cell>(n);
  switch (column.type) {
    case 'STRING':
      for (let i = 0; i < n; i++) {
        const v = cells[i] ?? null;
        if (v !== null && typeof v !== 'string') return null;
        out[i] = v;
      }
      return out;
    case 'INT64':
      for (let i = 0; i < n; i++) {
        const v = cells[i] ?? null;
        if (v === null) {
          out[i] = null;
          continue;
        }
        if (typeof v !== 'number') return null;
        const r = Math.round(v);
        if (!Number.isSafeInteger(r)) return null;
        out[i] = r;
      }
      return out;
    case 'INT32':
      for (let i = 0; i < n; i++) {
        const v = cells[i] ?? null;
        if (v === null) {
          out[i] = null;
          continue;
        }
        if (typeof v !== 'number') return null;
        const r = Math.round(v);
        if (!(r >= -2147483648 && r <= 2147483647)) return null;
        out[i] = r;
      }
      return out;
    case 'TIMESTAMP':
      for (let i = 0; i < n; i++) {
        const v = cells[i] ?? null;
        if (v === null) {
          out[i] = null;
          continue;
        }
        if (typeof v !== 'number' || !(Math.abs(v) <= MAX_TIME)) return null;
        out[i] = Math.trunc(v) + 0; // + 0: -0 is 0, as BigInt makes it
      }
      return out;
    case 'DOUBLE':
      for (let i = 0; i < n; i++) {
        const v = cells[i] ?? null;
        if (v !== null && (typeof v !== 'number' || Number.isNaN(v))) return null;
        out[i] = v;
      }
      return out;
    case 'BOOLEAN':
      for (let i = 0; i < n; i++) {
        const v = cells[i] ?? null;
        if (v !== null && typeof v !== 'boolean') return null;
        out[i] = v;
      }
      return out;
    default:
      return null;
  }
}

/** Strings in UTF-8 byte order (code point order), as the library's statistics compare them (column.js). */
export function compareUtf8(left: string, right: string): number {
  if (left === right) return 0;
  const length = Math.min(left.length, right.length);
  let i = 0;
  while (i < length && left.charCodeAt(i) === right.charCodeAt(i)) i++;
  if (i > 0) {
    const prev = left.charCodeAt(i - 1);
    if (prev >= 0xd800 && prev <= 0xdbff) i--;
  }
  while (i < left.length && i < right.length) {
    const a = codePoint(left, i);
    const b = codePoint(right, i);
    if (a !== b) return a - b;
    i += a > 0xffff ? 2 : 1;
  }
  return left.length - right.length;
}

function codePoint(s: string, i: number): number {
  const code = s.codePointAt(i) ?? 0xfffd;
  return code >= 0xd800 && code <= 0xdfff ? 0xfffd : code;
}

function compare(a: Cell, b: Cell): number {
  if (typeof a === 'string' && typeof b === 'string') return compareUtf8(a, b);
  if (a! < b!) return -1;
  if (a! > b!) return 1;
  return 0;
}

/** The value's size as the library estimates it for its dictionary choice (dictionary.js estimateValueSize). */
function sizeOf(value: Cell, type: TeamColumn['type']): number {
  if (value === null) return 0;
  return type === 'STRING' ? (value as string).length : type === 'INT32' ? 4 : 8;
}

/**
 * The library's choice of dictionary (dictionary.js useDictionary, not forced, no size cap):
 * a sample of up to 1,000 values spread over the chunk rejects a column whose distinct
 * bytes pass 90% of its bytes; otherwise the dictionary is kept when it and its bit-packed
 * indexes take at most half the plain bytes. Returns the distinct values in order of first
 * occurrence and each cell's index (a hole for a null), or null for plain encoding.
 */
export function chooseDictionary(
  values: readonly Cell[],
  start: number,
  end: number,
  type: TeamColumn['type'],
): { dictionary: Cell[]; indexes: number[] } | null {
  if (type === 'BOOLEAN') return null;
  const n = end - start;
  const prefix = type === 'STRING' ? 4 : 0;
  const sampleSize = Math.min(n, 1000);
  // A chunk of at most 1,000 values is sampled whole, in order: its sample's sums are the
  // dictionary pass's own (sizes of all values, and of each distinct one once), taken below.
  if (sampleSize < n) {
    const sampleSizes = new Map<Cell, number>();
    let sampleDictionarySize = 0;
    let sampleTotalSize = 0;
    for (let i = 0; i < sampleSize; i++) {
      const value = values[start + (sampleSize === 1 ? 0 : Math.floor((i * (n - 1)) / (sampleSize - 1)))]!;
      let size = sampleSizes.get(value);
      if (size === undefined) {
        size = sizeOf(value, type) + (value === null ? 0 : prefix);
        sampleSizes.set(value, size);
        sampleDictionarySize += size;
      }
      sampleTotalSize += size;
    }
    if (!sampleTotalSize || sampleDictionarySize / sampleTotalSize > SAMPLE_REJECTION_RATIO) return null;
  }
  const dictionary: Cell[] = [];
  const indexes = new Array<number>(n);
  // A chunk of a few rows (a sessions file holds one or two) looks its values up in the
  // dictionary itself: no Map made for it. `===` is the Map's SameValueZero here: no cell is NaN (columnCells).
  const index = n > SMALL_CHUNK ? new Map<Cell, number>() : null;
  let dictSize = 0;
  let totalSize = 0;
  let nonNull = 0;
  for (let i = 0; i < n; i++) {
    const value = values[start + i]!;
    if (value === null) continue;
    nonNull++;
    const size = sizeOf(value, type);
    totalSize += size;
    let at = index ? index.get(value) : undefined;
    if (!index) for (let d = 0; d < dictionary.length && at === undefined; d++) if (dictionary[d] === value) at = d;
    if (at === undefined) {
      dictSize += size;
      at = dictionary.length;
      dictionary.push(value);
      index?.set(value, at);
    }
    indexes[i] = at;
  }
  const plainSize = totalSize + nonNull * prefix;
  const dictionaryValueSize = dictSize + dictionary.length * prefix;
  if (sampleSize === n && (!plainSize || dictionaryValueSize / plainSize > SAMPLE_REJECTION_RATIO)) return null;
  const bitWidth = Math.ceil(Math.log2(dictionary.length));
  const indexSize = Math.ceil((nonNull * bitWidth) / 8);
  if (2 * (dictionaryValueSize + indexSize) > plainSize) return null;
  return { dictionary, indexes };
}

/** Min, max and counts as the library's statistics hold them (column.js getStatistics). */
export function statisticsOf(
  values: readonly Cell[],
  from: number,
  to: number,
  type: TeamColumn['type'],
): { min_value: Cell | undefined; max_value: Cell | undefined } {
  let min: Cell | undefined = undefined;
  let max: Cell | undefined = undefined;
  for (let i = from; i < to; i++) {
    const value = values[i]!;
    if (value === null) continue;
    if (min === undefined || compare(value, min) < 0) min = value;
    if (max === undefined || compare(value, max) > 0) max = value;
  }
  if (type !== 'STRING' && type !== 'BOOLEAN') {
    // Signed zero as the library leaves it: min -0, max +0.
    if (min === 0) min = -0;
    if (max === 0) max = 0;
  }
  return { min_value: min, max_value: max };
}

/**
 * INT64 values (integers below 2^53 in magnitude, as columnCells checked) as PLAIN writes them:
 * 8 bytes each, little-endian two's complement, without making each a BigInt as the
 * library's writePlain takes them.
 */
function writeInt64s(page: ByteWriter, values: readonly number[]): void {
  page.ensure(8 * values.length);
  const view = page.view;
  let at = page.index;
  for (const v of values) {
    // Exact: dividing by a power of two, and both halves, are exact for integers below 2^53.
    const high = Math.floor(v / 4294967296);
    view.setUint32(at, v - high * 4294967296, true);
    view.setInt32(at + 4, high, true);
    at += 8;
  }
  page.offset += at - page.index;
  page.index = at;
}

/** Non-text values as PLAIN writes them: INT64 here, the rest by the library. */
function writePlainValues(page: ByteWriter, values: DecodedArray, element: SchemaElement): void {
  if (element.type === 'INT64') writeInt64s(page, values as number[]);
  else writePlain(page, values, element.type!, element.type_length);
}

/**
 * Scratch writers for a page's levels and values, emptied for each page: each page's bytes
 * are copied out (compressed, or appended to the file) before the next page is written. The
 * library makes three new ones per page.
 */
const levelScratch = new ByteWriter();
const valueScratch = new ByteWriter();
const booleanScratch = new ByteWriter();

function emptied(w: ByteWriter): ByteWriter {
  w.offset = 0;
  w.index = 0;
  return w;
}

/** A Buffer over the scratch writer's memory (its buffer is replaced as it grows). */
let textView: { of: ArrayBuffer; buffer: Buffer } | null = null;

/**
 * Texts as PLAIN BYTE_ARRAY values (each its UTF-8 length, 4 bytes little-endian, then its
 * bytes), encoded straight into the page: the library's writePlain takes each as a new
 * Uint8Array (TextEncoder.encode), one allocation per cell. Buffer's UTF-8 writes a lone
 * surrogate as U+FFFD, as TextEncoder does. Returns the texts' bytes, without their lengths.
 */
function writeTexts(page: ByteWriter, texts: readonly string[]): number {
  let bytes = 0;
  for (const text of texts) {
    // At most 3 bytes per UTF-16 unit (a surrogate pair's 4 bytes are 2 per unit).
    page.ensure(4 + 3 * text.length);
    if (textView?.of !== page.buffer) textView = { of: page.buffer, buffer: Buffer.from(page.buffer) };
    const written = textView.buffer.write(text, page.index + 4);
    page.view.setUint32(page.index, written, true);
    page.index += 4 + written;
    page.offset += 4 + written;
    bytes += written;
  }
  return bytes;
}

/** A dictionary page (PLAIN values, Snappy) as the library's writeDictionaryPage writes it; its uncompressed size with its header. */
function dictionaryPage(writer: ByteWriter, element: SchemaElement, dictionary: DecodedArray): number {
  const page = emptied(valueScratch);
  if (element.type === 'BYTE_ARRAY') writeTexts(page, dictionary as string[]);
  else writePlainValues(page, dictionary, element);
  const bytes = page.getBytes();
  const compressed = snappyCompressShared(bytes);
  const header = pageHeaderBytes(
    { type: 'DICTIONARY_PAGE', values: dictionary.length },
    bytes.byteLength,
    compressed.byteLength,
  );
  writer.appendBytes(header);
  writer.appendBytes(compressed);
  return header.length + bytes.byteLength;
}

/**
 * A data page v2 of a flat, nullable column (definition levels of one bit, no repetition
 * levels; Snappy) as the library's writeDataPageV2 writes it; its uncompressed size with its header.
 */
function dataPageV2(
  writer: ByteWriter,
  element: SchemaElement,
  encoding: Encoding,
  values: DecodedArray,
  definitionLevels: Uint8Array,
  nulls: number,
): number {
  const levels = emptied(levelScratch);
  const definitionBytes = writeRleBitPackedHybrid(levels, definitionLevels as unknown as number[], 1);
  const nonNull = nulls ? (values as unknown[]).filter((v) => v !== null && v !== undefined) : values;
  const page = emptied(valueScratch);
  if (encoding === 'PLAIN' && element.type === 'BYTE_ARRAY') {
    // One page unless the text reaches the page size (column.js getPageBoundaries): more is the library's to write.
    if (writeTexts(page, nonNull as string[]) >= PAGE_SIZE && definitionLevels.length > 1) throw new NotHere();
  } else if (encoding === 'PLAIN') writePlainValues(page, nonNull as DecodedArray, element);
  else if (encoding === 'RLE') {
    const rle = emptied(booleanScratch);
    writeRleBitPackedHybrid(rle, nonNull as DecodedArray, 1);
    page.appendUint32(rle.offset);
    page.appendBytes(rle.getBytes());
  } else {
    let max = 0;
    for (const v of nonNull as number[]) if (v > max) max = v;
    const bitWidth = Math.ceil(Math.log2(max + 1));
    page.appendUint8(bitWidth);
    writeRleBitPackedHybrid(page, nonNull as DecodedArray, bitWidth);
  }
  const compressed = snappyCompressShared(page.getBytes());
  const header = pageHeaderBytes(
    { type: 'DATA_PAGE_V2', values: definitionLevels.length, nulls, rows: values.length, encoding, definitionBytes },
    levels.offset + page.offset,
    levels.offset + compressed.length,
  );
  writer.appendBytes(header);
  writer.appendBytes(levels.getBytes());
  writer.appendBytes(compressed);
  return header.length + levels.offset + page.offset;
}

function writeChunk(
  writer: ByteWriter,
  column: TeamColumn,
  element: SchemaElement,
  values: readonly Cell[],
  start: number,
  end: number,
): ColumnChunk {
  const n = end - start;
  const type = column.type;
  const offsetStart = writer.offset;
  let uncompressedSize = 0;
  const encodings: Encoding[] = [];
  const definitionLevels = new Uint8Array(n);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    if (values[start + i] === null) nulls++;
    else definitionLevels[i] = 1;
  }
  const chosen = chooseDictionary(values, start, end, type);
  // The statistics of a dictionary column over its distinct values: the same min and max.
  const statistics = chosen
    ? statisticsOf(chosen.dictionary, 0, chosen.dictionary.length, type)
    : statisticsOf(values, start, end, type);
  let dictionary_page_offset: bigint | undefined;
  let encoding: Encoding;
  let writeValues: DecodedArray;
  if (chosen) {
    writeValues = chosen.indexes;
    encoding = 'RLE_DICTIONARY';
    dictionary_page_offset = BigInt(writer.offset);
    uncompressedSize += dictionaryPage(writer, element, chosen.dictionary as DecodedArray);
    encodings.push('PLAIN');
  } else {
    // Texts stay strings and integers numbers: the page writer encodes each straight into the page (writeTexts, writeInt64s).
    writeValues = values.slice(start, end) as DecodedArray;
    encoding = type === 'BOOLEAN' && n > 16 ? 'RLE' : 'PLAIN';
  }
  encodings.push(encoding);
  const data_page_offset = BigInt(writer.offset);
  uncompressedSize += dataPageV2(writer, element, encoding, writeValues, definitionLevels, nulls);
  const encoding_stats = [
    ...(dictionary_page_offset !== undefined
      ? [{ page_type: 'DICTIONARY_PAGE' as const, encoding: 'PLAIN' as const, count: 1 }]
      : []),
    { page_type: 'DATA_PAGE_V2' as const, encoding, count: 1 },
  ];
  return {
    meta_data: {
      type: element.type!,
      encodings,
      path_in_schema: [column.name],
      codec: 'SNAPPY',
      num_values: BigInt(n),
      total_compressed_size: BigInt(writer.offset - offsetStart),
      total_uncompressed_size: BigInt(uncompressedSize),
      data_page_offset,
      dictionary_page_offset,
      statistics: {
        min_value: statistics.min_value as never,
        max_value: statistics.max_value as never,
        null_count: BigInt(nulls),
        ...(type === 'DOUBLE' ? { nan_count: 0n } : {}),
      },
      encoding_stats,
    },
    file_offset: BigInt(offsetStart),
  } as ColumnChunk;
}

/**
 * One table's rows as a Parquet file's bytes, equal to hyparquet-writer's for the same cells
 * (see above), or null when the library must write it.
 */
export function tableParquetColumns(
  table: TeamTable,
  rows: TeamColumns,
  kvMetadata: KeyValue[],
  generator: string,
): Uint8Array | null {
  const schema = teamSchema(table);
  const cells: Cell[][] = [];
  for (let j = 0; j < table.columns.length; j++) {
    const c = columnCells(table.columns[j]!, rows.cells[j]!);
    if (!c) return null;
    cells.push(c);
  }
  const writer = new ByteWriter();
  writer.appendUint32(MAGIC);
  const row_groups: RowGroup[] = [];
  try {
    for (let start = 0, g = 0; start < rows.length; g++) {
      const end = Math.min(rows.length, start + (g === 0 ? FIRST_GROUP : LATER_GROUPS));
      const groupStart = writer.offset;
      const columns = table.columns.map((column, j) =>
        writeChunk(writer, column, schema[j + 1]!, cells[j]!, start, end),
      );
      let total_byte_size = 0n;
      for (const c of columns) total_byte_size += c.meta_data?.total_uncompressed_size ?? 0n;
      row_groups.push({
        columns,
        total_byte_size,
        num_rows: BigInt(end - start),
        total_compressed_size: BigInt(writer.offset - groupStart),
      });
      start = end;
    }
  } catch (e) {
    if (e instanceof NotHere) return null;
    throw e;
  }
  const footer = footerBytes(schema, row_groups, rows.length, kvMetadata, generator);
  writer.appendBytes(footer);
  writer.appendUint32(footer.length);
  writer.appendUint32(MAGIC);
  return new Uint8Array(writer.getBuffer());
}
