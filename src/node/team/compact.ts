import type * as DuckDb from '@duckdb/node-api';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { TEAM_TABLES } from '../../core/team/teamSchema';

/**
 * Compaction of an export folder (docs/guide/team.md, "Compaction"). The export writes one
 * small file per source trace and partition, so incremental exports touch only what
 * changed; a query's time follows the number of files it opens (measured by bench:team:
 * 43 s over 3,977 files against 2.7 s over 218 for the same 10 M calls). Compaction moves
 * every such file's rows into a few large files under `DIR/compacted/<table>/`, sorted by
 * date, agent and machine so row-group statistics skip what a filter excludes. Each
 * compacted row keeps the key of the source trace it came from (`export_source`): a trace
 * exported again after compaction supersedes its compacted rows, which the next compaction
 * drops (and which the export compacts away at once, so no query ever counts them twice).
 */

/** The compacted tier, beside the tables: `DIR/compacted/<table>/compacted-<run>-<n>.parquet`. */
export const COMPACTED = 'compacted';

/**
 * The most a compacted file holds before DuckDB starts another. Files of this size keep a
 * query's file count low (10 M calls fit in about 4) while an engine that splits work by
 * file (Spark, Trino) still gets several.
 */
export const COMPACTED_FILE_BYTES = 128 * 2 ** 20;

/** Rows per row group: DuckDB's default, the unit of its parallel scan and of min/max skipping. */
export const COMPACTED_ROW_GROUP = 122_880;

/** The source key an export file's name carries (`part-<key>.parquet`), or null for a file not written by the export. */
export function sourceKeyOfFile(name: string): string | null {
  return /(?:^|[\\/])part-([0-9a-f]{16})\.parquet$/.exec(name)?.[1] ?? null;
}

/** DuckDB's Node package, loaded on first use: a native module the CLI carries and the extension does not. */
export async function loadDuckDb(): Promise<typeof DuckDb> {
  try {
    return await import('@duckdb/node-api');
  } catch (e) {
    throw new Error(
      `this command needs DuckDB's Node package (@duckdb/node-api), which could not be loaded on this platform: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

/** Every `.parquet` file under `folder` (relative to it, `/`-separated), none when it does not exist. */
export async function parquetFilesUnder(folder: string): Promise<string[]> {
  if (!existsSync(folder)) return [];
  const names = (await readdir(folder, { recursive: true })) as string[];
  return names.filter((n) => n.endsWith('.parquet')).map((n) => n.split(sep).join('/'));
}

function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

function sqlList(paths: readonly string[]): string {
  return `[${paths.map(sqlString).join(', ')}]`;
}

/** What one compaction did. */
export interface Compaction {
  /** Per table: files read (export files and earlier compacted ones), files written, rows written. */
  tables: Array<{ name: string; filesRead: number; filesWritten: number; rows: number; bytes: number }>;
  /** Source keys whose earlier compacted rows were dropped for their newer export files. */
  superseded: number;
  /** The export files moved into the compacted tier (relative to the folder), now deleted. */
  removed: string[];
}

/**
 * Compacts `dir` in place: for each table, the export files and the earlier compacted files
 * become a new generation of compacted files; a source key with export files drops its
 * earlier compacted rows. The new files are written under fresh names before the old ones
 * are deleted, so a crash leaves the old generation readable (a reader in the moment between
 * the two may count a row twice; compaction is for a folder one process writes).
 */
export async function compactExport(dir: string): Promise<Compaction> {
  const { DuckDBInstance } = await loadDuckDb();
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const result: Compaction = { tables: [], superseded: 0, removed: [] };
  try {
    await connection.run('SET preserve_insertion_order = false');
    const raw = new Map<string, string[]>();
    const superseded = new Set<string>();
    for (const table of TEAM_TABLES) {
      const files = (await parquetFilesUnder(join(dir, table.name))).map((f) => join(dir, table.name, f));
      raw.set(table.name, files);
      for (const f of files) {
        const key = sourceKeyOfFile(f);
        if (key) superseded.add(key);
      }
    }
    const run = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
    const gone: string[] = [];
    for (const table of TEAM_TABLES) {
      const rawFiles = raw.get(table.name)!;
      const folder = join(dir, COMPACTED, table.name);
      const old = (await parquetFilesUnder(folder)).map((f) => join(folder, f));
      if (rawFiles.length === 0) {
        result.tables.push({ name: table.name, filesRead: 0, filesWritten: 0, rows: 0, bytes: 0 });
        continue;
      }
      const parts: string[] = [
        `SELECT * EXCLUDE (filename), regexp_extract(filename, 'part-([0-9a-f]{16})\\.parquet$', 1) AS export_source
         FROM read_parquet(${sqlList(rawFiles)}, hive_partitioning = true, union_by_name = true, filename = true,
           hive_types = {'agent': VARCHAR, 'date': DATE, 'machine': VARCHAR})`,
      ];
      if (old.length > 0) {
        const keys = [...superseded];
        parts.push(
          `SELECT * FROM read_parquet(${sqlList(old)}, union_by_name = true)` +
            (keys.length > 0 ? ` WHERE export_source NOT IN (${keys.map(sqlString).join(', ')})` : ''),
        );
      }
      await mkdir(folder, { recursive: true });
      const target = join(folder, `.tmp-${run}`);
      // A row read from a file DuckDB did not name part-<key> (copied in by hand) has an empty key: it is kept, never superseded.
      const reader = await connection.runAndReadAll(
        `COPY (SELECT * REPLACE (nullif(export_source, '') AS export_source) FROM (${parts.join(' UNION ALL BY NAME ')}) ORDER BY date, agent, machine)
         TO ${sqlString(target)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${COMPACTED_ROW_GROUP},
           FILE_SIZE_BYTES ${COMPACTED_FILE_BYTES}, PER_THREAD_OUTPUT false, FILENAME_PATTERN 'compacted-${run}-{i}')`,
      );
      const rows = Number(reader.getRows()[0]?.[0] ?? 0);
      // DuckDB writes a folder of files when FILE_SIZE_BYTES may split them: move each into place.
      const written = (await parquetFilesUnder(target)).sort();
      let bytes = 0;
      for (const f of written) {
        const place = join(folder, f.split('/').pop()!);
        await rename(join(target, f), place);
        bytes += (await stat(place)).size;
      }
      await rm(target, { recursive: true, force: true });
      for (const f of old) await rm(f, { force: true });
      gone.push(...rawFiles);
      result.tables.push({
        name: table.name,
        filesRead: rawFiles.length + old.length,
        filesWritten: written.length,
        rows,
        bytes,
      });
    }
    for (const f of gone) await rm(f, { force: true });
    await removeEmptyFolders(dir);
    result.removed = gone.map((f) => relative(dir, f).split(sep).join('/'));
    result.superseded = superseded.size;
    return result;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Removes the partition folders compaction emptied (a table's own folder stays). */
async function removeEmptyFolders(dir: string): Promise<void> {
  const prune = async (folder: string, keep: boolean): Promise<boolean> => {
    let empty = true;
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!(await prune(join(folder, entry.name), false))) empty = false;
      } else empty = false;
    }
    if (empty && !keep) await rm(folder, { recursive: true, force: true });
    return empty;
  };
  for (const table of TEAM_TABLES) if (existsSync(join(dir, table.name))) await prune(join(dir, table.name), true);
}
