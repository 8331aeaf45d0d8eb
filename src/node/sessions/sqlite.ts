import type * as Sqlite from 'node-sqlite3-wasm';
import type { Database as DatabaseType, Statement as StatementType } from 'node-sqlite3-wasm';

/**
 * node-sqlite3-wasm, loaded when first needed: its 1.3 MB WebAssembly module compiles
 * synchronously (~70 ms), which the extension's activation should not pay.
 *
 * Why this binding (docs/sessions.md): SQLite compiled to WebAssembly with a
 * file system layer over Node's `fs`, so the same bundle runs in VS Code's extension
 * host on Linux, macOS and Windows with nothing to build or download; it writes pages
 * in place (not a whole-file export) and has FTS5. Its limits shape the index
 * (docs/sessions.md): no WAL (a rollback journal instead), a lock directory that
 * excludes readers too and stays behind after a crash, and a busy handler that would
 * spin: never set `busy_timeout`, retry asynchronously instead (withBusyRetry).
 */
export type Database = DatabaseType;
export type Statement = StatementType;

let module: typeof Sqlite | null = null;

/** Opens (or creates) a database file. */
export function openDatabase(path: string): Database {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded lazily on purpose (see above)
  module ??= require('node-sqlite3-wasm') as typeof Sqlite;
  return new module.Database(path);
}

/** SQLite's "database is locked": another window holds the file for a moment. */
export function isBusy(error: unknown): boolean {
  return /database is locked|SQLITE_BUSY|database table is locked/i.test(
    error instanceof Error ? error.message : String(error),
  );
}

/** SQLite's answers for a file that is not (or no longer) a good database. */
export function isCorrupt(error: unknown): boolean {
  return /malformed|not a database|SQLITE_CORRUPT|SQLITE_NOTADB|file is encrypted|disk image|vtable constructor failed|no such table/i.test(
    error instanceof Error ? error.message : String(error),
  );
}

/**
 * Runs `op`, and when another connection holds the lock, tries again after a short
 * random pause for up to `budgetMs` (never SQLite's own busy wait: it would spin the
 * extension host). A transaction left open by the failure is rolled back first.
 */
export async function withBusyRetry<T>(db: Database, op: () => T, budgetMs = 4000): Promise<T> {
  const start = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return op();
    } catch (e) {
      if (db.isOpen && db.inTransaction) {
        try {
          db.exec('ROLLBACK');
        } catch {
          // already rolled back
        }
      }
      if (!isBusy(e) || Date.now() - start > budgetMs) throw e;
      await new Promise((r) => setTimeout(r, 2 + Math.random() * 8 * Math.min(attempt, 6)));
    }
  }
}
