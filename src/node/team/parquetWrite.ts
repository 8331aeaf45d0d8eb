import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { ColumnSource } from 'hyparquet-writer';
import { TEAM_SCHEMA_KEY, TEAM_SCHEMA_VERSION, TEAM_TABLES } from '../../core/team/teamSchema';
import type { TeamCell, TeamColumn, TeamTable } from '../../core/team/teamSchema';
import type { TeamRows } from '../../core/team/teamRows';
import type { TeamColumns } from '../../core/team/teamColumns';
import type { KeyValue } from 'hyparquet';
import { tableParquetColumns } from './parquetColumns';

/**
 * Writes the team tables as Parquet (docs/reference/parquet.md) with hyparquet-writer:
 * pure JavaScript, one small dependency, no native binary, so the same code could run in
 * the extension host. One file per source trace and partition, named by a hash of the
 * source's path: exporting a trace again replaces its files instead of adding copies.
 */

/** Hive's name for a partition whose value is null (DuckDB, Spark and Trino read it as NULL). */
export const NULL_PARTITION = '__HIVE_DEFAULT_PARTITION__';

/** A short, stable hash: 16 hex digits of SHA-256 over the salt and the text. */
export function shortHash(text: string, salt = ''): string {
  return createHash('sha256').update(salt).update('\u0000').update(text).digest('hex').slice(0, 16);
}

/** `digits` hex digits of SHA-256 over the text: the OTLP export's trace and span ids. */
export function longHash(text: string, digits: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, digits);
}

function columnData(column: TeamColumn, cells: readonly TeamCell[]): ColumnSource {
  // One pass and one array per column (the cells converted as they are read): this runs for every cell it writes.
  const name = column.name;
  const data: unknown[] = new Array(cells.length);
  for (let i = 0; i < cells.length; i++) {
    const v = cells[i] ?? null;
    data[i] =
      v === null
        ? null
        : column.type === 'INT64'
          ? BigInt(Math.round(v as number))
          : column.type === 'INT32'
            ? Math.round(v as number)
            : column.type === 'TIMESTAMP'
              ? new Date(v as number)
              : v;
  }
  return { name, type: column.type, nullable: true, data: data as ColumnSource['data'] };
}

/** One table's rows as a Parquet file's bytes, written by hyparquet-writer's own front (`parquetWriteBuffer`). */
export function tableParquetLibrary(table: TeamTable, rows: TeamColumns, generator: string): Uint8Array {
  const buffer = parquetWriteBuffer({
    columnData: table.columns.map((c, j) => columnData(c, rows.cells[j]!)),
    kvMetadata: kvMetadata(table),
    createdBy: generator,
  });
  return new Uint8Array(buffer);
}

function kvMetadata(table: TeamTable): KeyValue[] {
  return [
    { key: TEAM_SCHEMA_KEY, value: String(TEAM_SCHEMA_VERSION) },
    { key: 'agent_trace.table', value: table.name },
  ];
}

/**
 * One table's rows as a Parquet file's bytes: column by column (parquetColumns.ts), the same
 * bytes the library writes, or by the library when a cell is not one that path reproduces.
 */
export function tableParquet(table: TeamTable, rows: TeamColumns, generator: string): Uint8Array {
  return tableParquetColumns(table, rows, kvMetadata(table), generator) ?? tableParquetLibrary(table, rows, generator);
}

/** Folders this thread has made (writeTeamParquet): a `mkdir -p` of each once, not once per file. */
const made = new Set<string>();

/** What one export wrote. */
export interface WrittenFiles {
  files: string[];
  rows: Record<TeamTable['name'], number>;
  bytes: number;
}

/**
 * Writes the rows of one source trace under `dir`: `<table>/agent=…/date=…/machine=…/part-<source>.parquet`.
 * Each file is written beside its place and renamed into it, so a reader never sees half a file.
 * Blocking calls: this runs on an export thread with nothing else to do meanwhile, and each
 * asynchronous call is a hop through libuv's pool whose thread must wait for a core the parse
 * threads hold (docs/performance.md, "Issue 30, thirteenth session").
 */
export function writeTeamParquet(
  dir: string,
  rows: TeamRows,
  machine: string,
  sourceKey: string,
  generator: string,
): WrittenFiles {
  const written: WrittenFiles = {
    files: [],
    rows: { calls: 0, tool_calls: 0, sessions: 0, context_parts: 0 },
    bytes: 0,
  };
  for (const table of TEAM_TABLES) {
    const all = rows[table.name];
    // Each partition's rows, by position; a trace whose rows share one partition (most do) is written as it is.
    const groups = new Map<string, number[]>();
    for (let i = 0; i < all.length; i++) {
      const key = `agent=${all.agent[i]}/date=${all.date[i] ?? NULL_PARTITION}/machine=${machine}`;
      const list = groups.get(key);
      if (list) list.push(i);
      else groups.set(key, [i]);
    }
    for (const [key, list] of groups) {
      const folder = join(dir, table.name, ...key.split('/'));
      const path = join(folder, `part-${sourceKey}.parquet`);
      const bytes = tableParquet(table, groups.size === 1 ? all : all.select(list), generator);
      // Each partition's folder made once per thread (an export writes thousands of files into a few hundred
      // folders), and again if it has gone since (a compaction removes the folders it emptied).
      if (!made.has(folder)) {
        mkdirSync(folder, { recursive: true });
        made.add(folder);
      }
      try {
        writeFileSync(`${path}.tmp`, bytes);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        mkdirSync(folder, { recursive: true });
        writeFileSync(`${path}.tmp`, bytes);
      }
      renameSync(`${path}.tmp`, path);
      written.files.push(path);
      written.rows[table.name] += list.length;
      written.bytes += bytes.length;
    }
  }
  return written;
}
