import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { TeamColumns } from '../../../../src/core/team/teamColumns';
import { CALLS_TABLE, SESSIONS_TABLE, TOOL_CALLS_TABLE } from '../../../../src/core/team/teamSchema';
import type { TeamCell, TeamColumn, TeamTable } from '../../../../src/core/team/teamSchema';
import {
  chooseDictionary,
  columnCells,
  compareUtf8,
  statisticsOf,
  tableParquetColumns,
} from '../../../../src/node/team/parquetColumns';
import { tableParquet, tableParquetLibrary } from '../../../../src/node/team/parquetWrite';

/** A row as the tests write it: its partition and its cells by name. */
interface TestRow {
  agent: string;
  date: string | null;
  session: number;
  cells: Record<string, TeamCell>;
}
/** The rows as the export holds them: one table of columns. */
function tableOf(table: TeamTable, rows: readonly TestRow[]): TeamColumns {
  const out = new TeamColumns(table);
  for (const r of rows) out.appendByName(r.agent, r.date, r.session, r.cells);
  return out;
}
const col = (type: TeamColumn['type']): TeamColumn => ({ name: 'x', type });
/** The key-value metadata the export writes in every file (parquetWrite.ts). */
const kv = (table: TeamTable) => [
  { key: 'agent_trace.schema_version', value: '1' },
  { key: 'agent_trace.table', value: table.name },
];

/** A tiny deterministic generator (the rows below are the same on every run). */
function generator(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

/** Rows for every column of `table`: repeated and distinct texts, integers, fractions, times, flags, nulls. */
function rowsFor(table: TeamTable, n: number, seed: number): TestRow[] {
  const r = generator(seed);
  // A lone surrogate too: the file holds it as U+FFFD, as the library's TextEncoder writes it.
  const words = [
    'ls',
    'npm test',
    'git status',
    'é',
    '\u{1F600} grin',
    '\uffff',
    'cat /home/me/a.ts',
    'half \ud800 pair',
  ];
  return Array.from({ length: n }, (_, i) => {
    const cells: Record<string, TeamCell> = {};
    for (const c of table.columns) {
      const x = r();
      if (x < 0.15) cells[c.name] = null;
      else if (c.type === 'STRING')
        cells[c.name] = x < 0.6 ? words[Math.floor(r() * words.length)]! : `id-${i}-${Math.floor(r() * 1e6)}`;
      else if (c.type === 'INT64' || c.type === 'INT32')
        cells[c.name] = x < 0.5 ? Math.floor(r() * 4) : Math.floor(r() * 1e6) + (x < 0.7 ? 0.5 : 0);
      else if (c.type === 'DOUBLE') cells[c.name] = x < 0.3 ? 0 : x < 0.4 ? -0 : r() * 10 - 5;
      else if (c.type === 'TIMESTAMP') cells[c.name] = 1_760_000_000_000 + Math.floor(r() * 1e9) + (x < 0.5 ? 0.7 : 0);
      else cells[c.name] = x < 0.6;
    }
    return { agent: 'a', date: null, session: 0, cells };
  });
}

describe('parquetColumns: the dictionary choice, by hand', () => {
  it('ten equal texts: one entry, indexes of no bits (plain 10 × (3 + 4) = 70 bytes, dictionary 7)', () => {
    const d = chooseDictionary(Array(10).fill('abc'), 0, 10, 'STRING');
    assert.deepEqual(d?.dictionary, ['abc']);
    assert.deepEqual(d?.indexes, Array(10).fill(0));
  });

  it('four distinct texts: every byte distinct (100% > 90%), plain', () => {
    assert.equal(chooseDictionary(['a', 'b', 'c', 'd'], 0, 4, 'STRING'), null);
  });

  it('5, 5, 5, 7, null, 5: plain 40 bytes against 2 × (16 + 1) = 34, dictionary [5, 7] with a hole for the null', () => {
    const d = chooseDictionary([5, 5, 5, 7, null, 5], 0, 6, 'INT64');
    assert.deepEqual(d?.dictionary, [5, 7]);
    assert.equal(d?.indexes.length, 6);
    assert.deepEqual(
      [0, 1, 2, 3, 5].map((i) => d?.indexes[i]),
      [0, 0, 0, 1, 0],
    );
    assert.equal(4 in d!.indexes, false);
  });

  it('1, 2, 1, 2: half distinct, but 2 × (16 + 1) = 34 > 32 plain bytes, so plain', () => {
    assert.equal(chooseDictionary([1, 2, 1, 2], 0, 4, 'INT64'), null);
  });

  it('booleans and all-null chunks are plain', () => {
    assert.equal(chooseDictionary([true, true, true], 0, 3, 'BOOLEAN'), null);
    assert.equal(chooseDictionary([null, null], 0, 2, 'STRING'), null);
  });

  it('a chunk of more than 1,000 values is sampled: x, y, z over 2,000 rows make a three-entry dictionary', () => {
    const values = Array.from({ length: 2000 }, (_, i) => ['x', 'y', 'z'][i % 3]!);
    assert.deepEqual(chooseDictionary(values, 0, 2000, 'STRING')?.dictionary, ['x', 'y', 'z']);
  });
});

describe('parquetColumns: cells and statistics, by hand', () => {
  it('INT64 rounds (2.5 → 3, -2.5 → -2), TIMESTAMP truncates to whole ms as a Date does (1.9 → 1, -1.9 → -1)', () => {
    assert.deepEqual(columnCells(col('INT64'), [2.5, -2.5, null]), [3, -2, null]);
    assert.deepEqual(columnCells(col('TIMESTAMP'), [1.9, -1.9]), [1, -1]);
    assert.deepEqual(columnCells(col('INT32'), [7.4]), [7]);
  });

  it('what it does not reproduce goes to the library: 2^60, a time past year 275760, NaN, a number in a text column', () => {
    assert.equal(columnCells(col('INT64'), [2 ** 60]), null);
    assert.equal(columnCells(col('INT32'), [2 ** 31]), null);
    assert.equal(columnCells(col('TIMESTAMP'), [9e15]), null);
    assert.equal(columnCells(col('DOUBLE'), [Number.NaN]), null);
    assert.equal(columnCells(col('STRING'), [5]), null);
  });

  it('texts compare in UTF-8 byte order: U+FFFF (EF BF BF) before U+10000 (F0 90 80 80), unlike UTF-16 order', () => {
    assert.ok(compareUtf8('\uffff', '\u{10000}') < 0);
    assert.ok('\u{10000}' < '\uffff');
    const s = statisticsOf(['\u{10000}', 'b', '\uffff', null, 'a'], 0, 5, 'STRING');
    assert.deepEqual(s, { min_value: 'a', max_value: '\u{10000}' });
  });

  it('zero as Parquet wants it: min -0, max +0', () => {
    const s = statisticsOf([0, 3, -0], 0, 3, 'DOUBLE');
    assert.ok(Object.is(s.min_value, -0));
    assert.equal(s.max_value, 3);
    const z = statisticsOf([-0, 0], 0, 2, 'DOUBLE');
    assert.ok(Object.is(z.min_value, -0) && Object.is(z.max_value, 0));
  });
});

describe('parquetColumns: the files', () => {
  it('a file read back holds the cells written (hand-written rows)', async () => {
    const rows: TestRow[] = [
      {
        agent: 'a',
        date: null,
        session: 0,
        cells: { command: 'ls', call_index: 2, start_time: 1000.9, is_error: true },
      },
      {
        agent: 'a',
        date: null,
        session: 0,
        cells: { command: 'ls', call_index: 2.5, start_time: null, is_error: false },
      },
      { agent: 'a', date: null, session: 0, cells: { command: null, call_index: null, start_time: 5, is_error: null } },
    ];
    const bytes = tableParquetColumns(TOOL_CALLS_TABLE, tableOf(TOOL_CALLS_TABLE, rows), kv(TOOL_CALLS_TABLE), 'test')!;
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    const read = await parquetReadObjects({
      file,
      columns: ['command', 'call_index', 'start_time', 'is_error'],
    });
    assert.deepEqual(
      read.map((r) => [
        r['command'],
        r['call_index'],
        (r['start_time'] as Date | null)?.getTime() ?? null,
        r['is_error'],
      ]),
      [
        ['ls', 2, 1000, true],
        ['ls', 3, null, false],
        [null, null, 5, null],
      ],
    );
    const meta = parquetMetadata(file);
    assert.equal(meta.num_rows, 3n);
    assert.equal(meta.created_by, 'test');
    const command = meta.row_groups[0]!.columns.find((c) => c.meta_data?.path_in_schema[0] === 'command')!.meta_data!;
    // Two 'ls' and a null: plain 2 × (2 + 4) = 12 bytes, dictionary 6 + 0 bits: a dictionary.
    assert.deepEqual(command.encodings, ['PLAIN', 'RLE_DICTIONARY']);
    assert.equal(command.statistics?.null_count, 1n);
  });

  it('byte for byte the file hyparquet-writer writes, for every team table, one and two row groups', () => {
    let compared = 0;
    for (const table of [CALLS_TABLE, TOOL_CALLS_TABLE, SESSIONS_TABLE])
      for (const [n, seed] of [
        [1, 1],
        // 12 rows: dictionaries found without a Map (16 rows or fewer), with repeats, +0 and -0 among them.
        [12, 6],
        [17, 2],
        [300, 3],
        [1000, 4],
        [2500, 5],
      ] as const) {
        const rows = tableOf(table, rowsFor(table, n, seed));
        const ours = tableParquetColumns(table, rows, kv(table), 'test');
        assert.ok(ours, `${table.name} × ${n} written column by column`);
        const theirs = Buffer.from(tableParquetLibrary(table, rows, 'test'));
        assert.deepEqual(Buffer.from(ours), theirs);
        assert.deepEqual(Buffer.from(tableParquet(table, rows, 'test')), theirs);
        compared += 1;
      }
    assert.equal(compared, 18);
  });

  it('text statistics past 16 bytes truncated as the library truncates them, the file byte for byte its own', async () => {
    // Each text alone in its column, so it is both the chunk's min and its max: the min is cut at a
    // character boundary, the max rounded up in its last character that can be (U+D7FF goes to U+E000,
    // U+10FFFF cannot and is dropped); a max that cannot be rounded within 16 bytes stays whole.
    const texts = [
      'exactly sixteen!', // 16 bytes: kept, exact
      'seventeen bytes!!', // 17: cut to 16
      `${'a'.repeat(15)}é tail`, // é's two bytes straddle byte 16
      `${'a'.repeat(14)}\u{1F600} grin`, // an emoji's four bytes straddle it
      `${'a'.repeat(12)}\ud7ff\ud7ff tail`, // U+D7FF's successor is U+E000
      '\u{10FFFF}'.repeat(5), // no character to round up within 16 bytes: the max stays whole
      `ab${'\u{10FFFF}'.repeat(4)}`, // rounded up in the b
      `${'é'.repeat(9)}`, // 18 bytes of two-byte characters
      `half \ud800 pair and more text`, // a lone surrogate (U+FFFD, three bytes) before the cut
    ];
    const column = CALLS_TABLE.columns.find((c) => c.name === 'gen_ai.request.model')!;
    const table: TeamTable = { ...CALLS_TABLE, columns: [column] };
    for (const text of texts) {
      const rows = tableOf(table, [{ agent: 'a', date: null, session: 0, cells: { [column.name]: text } }]);
      const ours = tableParquetColumns(table, rows, kv(table), 'test');
      assert.ok(ours);
      assert.deepEqual(Buffer.from(ours), Buffer.from(tableParquetLibrary(table, rows, 'test')), JSON.stringify(text));
    }
    // By hand, for one: the 17-byte text's min is its first 16 bytes, its max those with the last one
    // raised ('!' + 1 = '"'), and neither is exact.
    const rows = tableOf(table, [{ agent: 'a', date: null, session: 0, cells: { [column.name]: texts[1]! } }]);
    const stats = parquetMetadata(tableParquetColumns(table, rows, kv(table), 'test')!.slice().buffer).row_groups[0]!
      .columns[0]!.meta_data!.statistics!;
    assert.equal(stats.min_value, 'seventeen bytes!');
    assert.equal(stats.max_value, 'seventeen bytes"');
    assert.equal(stats.is_min_value_exact, false);
    assert.equal(stats.is_max_value_exact, false);
  });

  it('integers written as 8 bytes without BigInts, as the library writes them: negative, past 2^32, ±(2^53 − 1), times before 1970', () => {
    // Each value at both ends of the two 32-bit halves: -1 is all ones, -2^32 has a low half of 0, 2^32 - 1 a high half of 0.
    const edges = [
      -1,
      0,
      -0,
      1,
      2 ** 31,
      -(2 ** 31),
      2 ** 32 - 1,
      2 ** 32,
      -(2 ** 32),
      -(2 ** 32) - 1,
      2 ** 53 - 1,
      -(2 ** 53 - 1),
    ];
    for (const table of [CALLS_TABLE, TOOL_CALLS_TABLE]) {
      // Plain (all distinct) and dictionary (few distinct over many rows) pages both.
      for (const n of [edges.length, 40 * edges.length]) {
        const rows = rowsFor(table, n, 7).map((r, i) => {
          const cells = { ...r.cells };
          for (const c of table.columns)
            if (c.type === 'INT64') cells[c.name] = edges[i % edges.length]!;
            else if (c.type === 'TIMESTAMP') cells[c.name] = i % 3 === 0 ? -86_400_000 * (i + 1) - 0.5 : cells[c.name]!;
          return { ...r, cells };
        });
        const columns = tableOf(table, rows);
        const ours = tableParquetColumns(table, columns, kv(table), 'test');
        assert.ok(ours, `${table.name} × ${n} written column by column`);
        assert.deepEqual(Buffer.from(ours), Buffer.from(tableParquetLibrary(table, columns, 'test')));
      }
    }
  });

  it('a text column filling more than a page is left to the library, and the file is still the library’s', () => {
    const rows = tableOf(
      TOOL_CALLS_TABLE,
      rowsFor(TOOL_CALLS_TABLE, 3, 9).map((r, i) => ({
        ...r,
        cells: { ...r.cells, error_text: `${i}${'x'.repeat(600_000)}` },
      })),
    );
    assert.equal(tableParquetColumns(TOOL_CALLS_TABLE, rows, kv(TOOL_CALLS_TABLE), 'test'), null);
    assert.deepEqual(
      Buffer.from(tableParquet(TOOL_CALLS_TABLE, rows, 'test')),
      Buffer.from(tableParquetLibrary(TOOL_CALLS_TABLE, rows, 'test')),
    );
  });
});
