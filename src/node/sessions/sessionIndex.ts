import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { isLive } from '../../core/sessions/sessionQuery';
import type { SessionRow } from '../../core/sessions/sessionQuery';
import type { CallRecord, IndexedSession, SessionRecord } from '../../core/sessions/sessionRecord';
import { isBusy, openDatabase } from './sqlite';
import type { Database, Statement } from './sqlite';

/**
 * The persistent index of local agent sessions: one SQLite file (node-sqlite3-wasm) in
 * the extension's global storage (or the CLI's cache folder). It keeps, per session
 * file, what it was when last read (size, mtime, where the read stopped, the saved
 * parse) and, per session and per call, the figures every view shows, plus a
 * full-text index of prompts, tool targets and errors.
 *
 * `SCHEMA_VERSION` changes whenever the tables or the meaning of a figure change: an
 * index of another version is set aside and rebuilt, never read.
 */
export const SCHEMA_VERSION = 3;

/** What the index remembers of one companion file (a sub-agent log). */
export interface CompanionState {
  key: string;
  size: number;
  mtimeMs: number;
}

/** What the index remembers of one session file. */
export interface StoredFile {
  id: number;
  path: string;
  agentId: string;
  size: number;
  mtimeMs: number;
  companions: CompanionState[];
  headHash: string | null;
  status: 'ok' | 'deleted' | 'problem';
  problem: string | null;
  /** The saved parse (see TraceParse.saveState), deflated; null when not kept. */
  state: Uint8Array | null;
  stateVersion: string | null;
  lastGrowthMs: number | null;
}

/** A file as just read: what to store. */
export interface FileUpdate {
  path: string;
  agentId: string;
  projectHint: string | null;
  size: number;
  mtimeMs: number;
  companions: CompanionState[];
  headHash: string | null;
  status: 'ok' | 'problem';
  problem: string | null;
  /** The saved parse; undefined keeps the one stored (a live parse saves now and then). */
  state: Uint8Array | null | undefined;
  stateVersion: string | null;
  lastGrowthMs: number | null;
  records: StoredSession[];
}

/**
 * A session as the index stores it: its values already in their stored form (JSON and
 * search text), so a parse thread can make them and the writer only binds strings.
 */
export interface StoredSession {
  key: string;
  role: SessionRecord['role'];
  cwd: string | null;
  /** The row's figures (SessionRecord without its search text), as JSON. */
  record: string;
  /** The calls, packed (CALL_FIELDS order). */
  calls: string;
  /** Prompts, tool targets and errors as one search document ('' when none). */
  search: string;
}

/** The stored form of a file's sessions (see StoredSession). */
export function storedSessions(records: readonly IndexedSession[]): StoredSession[] {
  return records.map(({ session: s, calls }) => {
    const { searchText, ...record } = s;
    // One document per session (rowid = session id): a search's words may come from its prompts, tool targets and errors alike.
    const search = [searchText.prompts, searchText.tools, searchText.errors].filter((t) => t !== '').join('\n');
    return {
      key: s.key,
      role: s.role,
      cwd: s.cwd ?? null,
      record: JSON.stringify(record),
      calls: packCalls(calls),
      search,
    };
  });
}

/** Why an index file was set aside when it was opened. */
export interface OpenNotice {
  kind: 'old-version' | 'corrupt';
  message: string;
}

/*
 * The layout follows node-sqlite3-wasm's costs (bench/sessionIndex.bench.ts): every value
 * read crosses from WebAssembly to JavaScript (~10 µs under load), and a column stored
 * after a large blob is reached through its overflow pages. So a session's figures are
 * one JSON value (its row in the view), a session's calls one JSON value (the comparison
 * reads them whole), a file's saved parse sits in its own table, and the columns SQL
 * itself looks at (paths, sizes, times, keys) stay columns.
 */
const SCHEMA = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  agent_id TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ms REAL NOT NULL,
  companions TEXT NOT NULL DEFAULT '[]',
  head_hash TEXT,
  status TEXT NOT NULL,
  last_growth_ms REAL,
  indexed_ms REAL NOT NULL,
  view TEXT NOT NULL
);
CREATE TABLE file_states(file_id INTEGER PRIMARY KEY, state BLOB NOT NULL, state_version TEXT NOT NULL);
CREATE TABLE sessions(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL,
  key TEXT NOT NULL,
  record TEXT NOT NULL,
  UNIQUE(file_id, key)
);
CREATE TABLE session_calls(session_id INTEGER PRIMARY KEY, calls TEXT NOT NULL);
CREATE VIRTUAL TABLE search USING fts5(text);
`;

/** What a file adds to each of its sessions' rows (stored as the file's `view`). */
interface FileView {
  path: string;
  agentId: string;
  project: string;
  mtimeMs: number;
  status: SessionRow['fileStatus'];
  problem: string | null;
  lastGrowthMs: number | null;
}

/** The order of a call's fields in its stored array (a 10,000-call session is one compact JSON value). */
const CALL_FIELDS = [
  'index',
  'startMs',
  'endMs',
  'input',
  'cached',
  'appended',
  'cacheWrite',
  'output',
  'costUsd',
  'toolCalls',
  'failedToolCalls',
  'miss',
  'inLoop',
  'afterCompaction',
] as const;

function packCalls(calls: readonly CallRecord[]): string {
  return JSON.stringify(calls.map((c) => CALL_FIELDS.map((f) => c[f])));
}

function unpackCalls(text: string): CallRecord[] {
  return (JSON.parse(text) as unknown[][]).map(
    (values) => Object.fromEntries(CALL_FIELDS.map((f, i) => [f, values[i]])) as unknown as CallRecord,
  );
}

type Row = Record<string, unknown>;

/**
 * A string to bind as TEXT through `CAST(? AS TEXT)`: a long one as its UTF-8 bytes. The
 * binding encodes a string into WebAssembly memory one character at a time in JavaScript
 * (a session's calls and search text are hundreds of kilobytes: a tenth of a cold index's
 * SQLite time); Buffer.from encodes natively, and SQLite's CAST reads a blob's bytes as
 * text, so the stored value is the same TEXT. Strings with a NUL (the binding's C string
 * ends there) or any UTF-16 surrogate (the binding and Buffer.from encode a lone one
 * differently) keep the binding's own path, so every stored value is what it was.
 */
const BYTES_FROM_CHARS = 256;
export function textParam(s: string): string | Uint8Array {
  return s.length >= BYTES_FROM_CHARS && !/[\0\uD800-\uDFFF]/.test(s) ? Buffer.from(s, 'utf8') : s;
}

/** The statements a file's write runs per session, prepared once per connection. */
interface WriteStatements {
  upsert: Statement;
  insertCalls: Statement;
  deleteSearch: Statement;
  insertSearch: Statement;
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A search query for FTS5: each word quoted (quotes doubled), all of them required, the last one a prefix. */
export function ftsQuery(query: string): string | null {
  const words = query
    .split(/\s+/)
    .map((w) => w.trim())
    .filter((w) => w !== '')
    .slice(0, 16);
  if (words.length === 0) return null;
  return words.map((w, i) => `"${w.replace(/"/g, '""')}"${i === words.length - 1 ? '*' : ''}`).join(' AND ');
}

/** Removes a lock directory left behind by a process that died inside a transaction (older than `staleMs`). */
export function clearStaleLock(path: string, staleMs = 30_000, nowMs = Date.now()): boolean {
  const lock = `${path}.lock`;
  try {
    const s = statSync(lock);
    if (nowMs - s.mtimeMs < staleMs) return false;
    rmSync(lock, { recursive: true, force: true });
    return true;
  } catch {
    return false;
  }
}

export class SessionIndex {
  private statements: WriteStatements | null = null;

  private constructor(
    private readonly db: Database,
    readonly path: string,
  ) {}

  /**
   * Opens the index at `path`, creating it when missing. An index of another schema
   * version, or one SQLite finds damaged, is moved aside (`.old`) and a new one made;
   * the notice says which, for the user.
   */
  static open(path: string): { index: SessionIndex; notice: OpenNotice | null } {
    if (path !== ':memory:') {
      mkdirSync(dirname(path), { recursive: true });
      clearStaleLock(path);
    }
    let notice: OpenNotice | null = null;
    let db: Database | null = null;
    try {
      db = openDatabase(path);
      // The checks as one read transaction: one file lock for all of them (see reading()).
      db.exec('BEGIN');
      const version = num(db.get('PRAGMA user_version')?.['user_version']) ?? 0;
      const tables = num(db.get("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table'")?.['n']) ?? 0;
      if (version !== SCHEMA_VERSION && (version !== 0 || tables > 0)) {
        notice = {
          kind: 'old-version',
          message: `The session index was made by another version (schema ${version}, this one reads ${SCHEMA_VERSION}); it is rebuilt from the session files.`,
        };
      } else if (tables > 0) {
        // Each table's first page read once: a damaged root page or virtual table shows here,
        // not in the middle of a view. (A full integrity check would read the whole file at
        // every start; damage deeper in is caught where a query meets it: see the worker.)
        for (const table of ['meta', 'files', 'file_states', 'sessions', 'session_calls', 'search'])
          db.get(`SELECT * FROM ${table} LIMIT 1`);
      }
      if (db.inTransaction) db.exec('COMMIT');
    } catch (e) {
      // Locked by another window is not damage: let the caller retry.
      if (isBusy(e)) {
        db?.close();
        throw e;
      }
      notice = {
        kind: 'corrupt',
        message: `The session index could not be read (${e instanceof Error ? e.message : String(e)}); it is rebuilt from the session files.`,
      };
    }
    if (notice) {
      try {
        db?.close();
      } catch {
        // a damaged file may not even close cleanly
      }
      db = null;
      SessionIndex.setAside(path);
    }
    db ??= openDatabase(path);
    const index = new SessionIndex(db, path);
    index.prepare();
    return { index, notice };
  }

  /** Moves a bad index out of the way (one `.old` copy kept for a bug report) with its journal. */
  static setAsideFile(path: string): void {
    SessionIndex.setAside(path);
  }

  private static setAside(path: string): void {
    if (path === ':memory:') return;
    for (const suffix of ['', '-journal']) {
      if (!existsSync(path + suffix)) continue;
      try {
        renameSync(path + suffix, `${path}.old${suffix}`);
      } catch {
        rmSync(path + suffix, { force: true });
      }
    }
    rmSync(`${path}.lock`, { recursive: true, force: true });
  }

  private prepare(): void {
    // A rollback journal: this VFS has no shared memory, so no WAL (docs/sessions.md). No fsync
    // (synchronous=OFF): the index is derived from the session files, a commit's two fsyncs cost
    // more than reading a live session's new line (bench/sessionIndex.bench.ts), and what an
    // OS crash could damage is found by the integrity check and rebuilt (the worker).
    this.db.exec(
      'PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF; PRAGMA cache_size=-16000; PRAGMA foreign_keys=OFF;',
    );
    const tables = num(this.db.get("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table'")?.['n']) ?? 0;
    if (tables === 0) {
      this.db.exec(
        `BEGIN; ${SCHEMA} PRAGMA user_version = ${SCHEMA_VERSION}; INSERT INTO meta VALUES ('generation', '0'); COMMIT;`,
      );
    }
  }

  /** SQLite's own integrity check of the whole file: 'ok', or what it found (the worker runs it when idle). */
  check(): string {
    return text(this.db.get('PRAGMA quick_check')?.['quick_check']) ?? 'no answer';
  }

  close(): void {
    if (this.db.isOpen) {
      this.finalizeStatements();
      this.db.close();
    }
  }

  private finalizeStatements(): void {
    const prepared = this.statements;
    this.statements = null;
    if (prepared) for (const s of Object.values(prepared)) if (!s.isFinalized) s.finalize();
  }

  private writeStatements(): WriteStatements {
    this.statements ??= {
      // RETURNING: read with all(), so the statement runs to its end and holds no transaction open.
      upsert: this.db.prepare(
        'INSERT INTO sessions (file_id, key, record) VALUES (?, ?, CAST(? AS TEXT)) ON CONFLICT(file_id, key) DO UPDATE SET record = excluded.record RETURNING id',
      ),
      insertCalls: this.db.prepare('INSERT OR REPLACE INTO session_calls VALUES (?, CAST(? AS TEXT))'),
      deleteSearch: this.db.prepare('DELETE FROM search WHERE rowid = ?'),
      insertSearch: this.db.prepare('INSERT INTO search (rowid, text) VALUES (?, CAST(? AS TEXT))'),
    };
    return this.statements;
  }

  /** The connection, for the busy-retry wrapper. */
  get database(): Database {
    return this.db;
  }

  begin(): void {
    this.db.exec('BEGIN IMMEDIATE');
  }

  /** Commits and bumps the generation other readers compare to see that something changed. */
  commit(): void {
    this.db.run("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'");
    this.db.exec('COMMIT');
  }

  rollback(): void {
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
  }

  /** A value kept beside the tables (outside a transaction it is its own write). */
  metaValue(key: string): string | null {
    const v = this.db.get('SELECT value FROM meta WHERE key = ?', [key])?.['value'];
    return typeof v === 'string' ? v : null;
  }

  setMetaValue(key: string, value: string): void {
    this.db.run('INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', [
      key,
      value,
    ]);
  }

  /** Bumped by every write: a reader that saw the same number has nothing new to read. */
  generation(): number {
    return Number(this.db.get("SELECT value FROM meta WHERE key = 'generation'")?.['value'] ?? 0);
  }

  private storedFile(r: Row): StoredFile {
    let companions: CompanionState[] = [];
    try {
      const parsed: unknown = JSON.parse(text(r['companions']) ?? '[]');
      if (Array.isArray(parsed)) companions = parsed as CompanionState[];
    } catch {
      companions = [];
    }
    const state = r['state'];
    return {
      id: num(r['id'])!,
      path: text(r['path'])!,
      agentId: text(r['agent_id'])!,
      size: num(r['size'])!,
      mtimeMs: num(r['mtime_ms'])!,
      companions,
      headHash: text(r['head_hash']),
      status: (text(r['status']) as StoredFile['status']) ?? 'ok',
      problem: null,
      state: state instanceof Uint8Array ? state : null,
      stateVersion: text(r['state_version']),
      lastGrowthMs: num(r['last_growth_ms']),
    };
  }

  /** What the index remembers of a file (with its saved parse), or null when it never read it. */
  file(path: string, withState = true): StoredFile | null {
    // A live session's saved parse is megabytes: not read when the parse in memory goes on (withState false).
    const r = withState
      ? this.db.get(
          'SELECT f.*, st.state, st.state_version FROM files f LEFT JOIN file_states st ON st.file_id = f.id WHERE f.path = ?',
          [path],
        )
      : this.db.get(
          'SELECT f.*, st.state_version FROM files f LEFT JOIN file_states st ON st.file_id = f.id WHERE f.path = ?',
          [path],
        );
    return r ? this.storedFile(r) : null;
  }

  /** Every file the index knows (without saved parses): for finding what changed or vanished. */
  files(): StoredFile[] {
    return this.reading(() =>
      this.db
        .all('SELECT id, path, agent_id, size, mtime_ms, companions, head_hash, status, last_growth_ms FROM files')
        .map((r) => this.storedFile(r)),
    );
  }

  /** The files that could not be read as a session, with why, by path. */
  problemFiles(): Array<{ path: string; problem: string }> {
    return this.reading(() =>
      this.db.all("SELECT path, view FROM files WHERE status = 'problem' ORDER BY path").map((r) => ({
        path: text(r['path'])!,
        problem: (JSON.parse(text(r['view']) ?? '{}') as FileView).problem ?? 'not read',
      })),
    );
  }

  /** Stores a file as just read, its sessions and calls replacing the old ones (call inside begin/commit). */
  writeFile(u: FileUpdate, nowMs = Date.now()): void {
    const main = u.records.find((r) => r.role === 'main') ?? u.records[0];
    const project = main?.cwd ?? u.projectHint ?? dirname(u.path);
    const view: FileView = {
      path: u.path,
      agentId: u.agentId,
      project,
      mtimeMs: u.mtimeMs,
      status: u.status,
      problem: u.problem,
      lastGrowthMs: u.lastGrowthMs,
    };
    const existing = this.db.get('SELECT id FROM files WHERE path = ?', [u.path]);
    const values = [
      u.agentId,
      u.size,
      u.mtimeMs,
      JSON.stringify(u.companions),
      u.headHash,
      u.status,
      u.lastGrowthMs,
      nowMs,
      JSON.stringify(view),
    ];
    let fileId: number;
    if (existing) {
      fileId = num(existing['id'])!;
      this.db.run(
        'UPDATE files SET agent_id = ?, size = ?, mtime_ms = ?, companions = ?, head_hash = ?, status = ?, last_growth_ms = ?, indexed_ms = ?, view = ? WHERE id = ?',
        [...values, fileId],
      );
    } else {
      fileId = num(
        this.db.run(
          'INSERT INTO files (agent_id, size, mtime_ms, companions, head_hash, status, last_growth_ms, indexed_ms, view, path) VALUES (?,?,?,?,?,?,?,?,?,?)',
          [...values, u.path],
        ).lastInsertRowid,
      )!;
    }
    if (u.state === null) this.db.run('DELETE FROM file_states WHERE file_id = ?', [fileId]);
    else if (u.state !== undefined)
      this.db.run('INSERT OR REPLACE INTO file_states VALUES (?, ?, ?)', [fileId, u.state, u.stateVersion ?? '']);
    const kept = new Set<number>();
    const { upsert, insertCalls, deleteSearch, insertSearch } = this.writeStatements();
    for (const s of u.records) {
      const sessionId = num(upsert.all([fileId, s.key, textParam(s.record)])[0]?.['id'])!;
      kept.add(sessionId);
      deleteSearch.run([sessionId]);
      insertCalls.run([sessionId, textParam(s.calls)]);
      if (s.search !== '') insertSearch.run([sessionId, textParam(s.search)]);
    }
    // Sessions the file no longer has (a rewritten or truncated file).
    for (const r of this.db.all('SELECT id FROM sessions WHERE file_id = ?', [fileId])) {
      const id = num(r['id'])!;
      if (!kept.has(id)) this.forgetSession(id);
    }
  }

  private forgetSession(sessionId: number): void {
    this.db.run('DELETE FROM session_calls WHERE session_id = ?', [sessionId]);
    this.db.run('DELETE FROM search WHERE rowid = ?', [sessionId]);
    this.db.run('DELETE FROM sessions WHERE id = ?', [sessionId]);
  }

  /** A file that is gone: its sessions stay listed, marked deleted, with the figures last read (call inside begin/commit). */
  markDeleted(fileId: number): void {
    const r = this.db.get('SELECT view FROM files WHERE id = ?', [fileId]);
    const view = r
      ? ({
          ...(JSON.parse(text(r['view']) ?? '{}') as FileView),
          status: 'deleted',
          lastGrowthMs: null,
        } satisfies FileView)
      : null;
    this.db.run("UPDATE files SET status = 'deleted', last_growth_ms = NULL, view = ? WHERE id = ?", [
      JSON.stringify(view),
      fileId,
    ]);
    this.db.run('DELETE FROM file_states WHERE file_id = ?', [fileId]);
  }

  /** Forgets a file and its sessions (call inside begin/commit). */
  forget(fileId: number): void {
    for (const r of this.db.all('SELECT id FROM sessions WHERE file_id = ?', [fileId]))
      this.forgetSession(num(r['id'])!);
    this.db.run('DELETE FROM file_states WHERE file_id = ?', [fileId]);
    this.db.run('DELETE FROM files WHERE id = ?', [fileId]);
  }

  /**
   * Runs reads as one read transaction: this VFS takes and drops its file lock (a
   * directory made and removed) per transaction, so one lock for all of them, not
   * one per statement, and one consistent view of the file.
   */
  private reading<T>(read: () => T): T {
    if (this.db.inTransaction) return read();
    this.db.exec('BEGIN');
    try {
      return read();
    } finally {
      if (this.db.inTransaction) this.db.exec('COMMIT');
    }
  }

  /** Every session the index knows, as rows for the views (the file's place and state joined in). */
  rows(nowMs = Date.now()): SessionRow[] {
    return this.reading(() => {
      const views = new Map<number, FileView>();
      for (const r of this.db.all('SELECT id, view FROM files'))
        views.set(num(r['id'])!, JSON.parse(text(r['view'])!) as FileView);
      return this.db.all('SELECT id, file_id, record FROM sessions').map((r) => this.sessionRow(r, views, nowMs));
    });
  }

  /** The rows of some sessions, by id (missing ids are left out). */
  rowsById(ids: readonly number[], nowMs = Date.now()): SessionRow[] {
    const wanted = new Set(ids);
    return this.rows(nowMs).filter((r) => wanted.has(r.id));
  }

  private sessionRow(r: Row, views: Map<number, FileView>, nowMs: number): SessionRow {
    const fileId = num(r['file_id'])!;
    const view = views.get(fileId)!;
    const record = JSON.parse(text(r['record'])!) as Omit<SessionRecord, 'searchText'>;
    // The last write: the file's own, or a sub-agent log's that grew later (lastGrowthMs is that log's modification time).
    const lastWriteMs = Math.max(view.lastGrowthMs ?? -Infinity, view.mtimeMs);
    return {
      ...record,
      searchText: { prompts: '', tools: '', errors: '' },
      id: num(r['id'])!,
      fileId,
      path: view.path,
      agentId: view.agentId,
      project: view.project,
      fileMtimeMs: view.mtimeMs,
      lastWriteMs,
      live: isLive({ fileStatus: view.status, lastWriteMs }, nowMs),
      fileStatus: view.status,
      problem: view.problem,
    };
  }

  /** A session's calls in order (what the comparison draws). */
  calls(sessionId: number): CallRecord[] {
    const r = this.db.get('SELECT calls FROM session_calls WHERE session_id = ?', [sessionId]);
    return r ? unpackCalls(text(r['calls'])!) : [];
  }

  /** Ids of the sessions whose prompts, tool targets or errors hold every word of `query` (the last as a prefix). */
  search(query: string): Set<number> {
    const match = ftsQuery(query);
    if (match === null) return new Set();
    const ids = new Set<number>();
    for (const r of this.db.all('SELECT rowid FROM search WHERE search MATCH ?', [match])) ids.add(num(r['rowid'])!);
    return ids;
  }
}
