import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SessionRow } from '../../core/sessions/sessionQuery';
import type { CallRecord, IndexedSession } from '../../core/sessions/sessionRecord';
import type { MissCause } from '../../core/analysis/cacheMisses';
import { isBusy, openDatabase } from './sqlite';
import type { Database } from './sqlite';

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
export const SCHEMA_VERSION = 1;

/** A session counts as live while its file grew within this long. */
export const LIVE_WINDOW_MS = 2 * 60_000;

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
  /** The saved parse (see IncrementalTraceParser.saveState), deflated; null when not kept. */
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
  records: IndexedSession[];
}

/** Why an index file was set aside when it was opened. */
export interface OpenNotice {
  kind: 'old-version' | 'corrupt';
  message: string;
}

const SCHEMA = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  agent_id TEXT NOT NULL,
  project TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ms REAL NOT NULL,
  companions TEXT NOT NULL DEFAULT '[]',
  head_hash TEXT,
  status TEXT NOT NULL,
  problem TEXT,
  state BLOB,
  state_version TEXT,
  last_growth_ms REAL,
  indexed_ms REAL NOT NULL
);
CREATE TABLE sessions(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL,
  key TEXT NOT NULL,
  parent_key TEXT,
  role TEXT NOT NULL,
  agent TEXT,
  model TEXT,
  cwd TEXT,
  title TEXT,
  start_ms REAL,
  end_ms REAL,
  calls INTEGER NOT NULL,
  user_turns INTEGER NOT NULL,
  input INTEGER, cached INTEGER, appended INTEGER, cache_write INTEGER, output INTEGER,
  hit_rate REAL, raw_io REAL, a2o_mean REAL, a2o_aggregate REAL,
  cost_usd REAL, unpriced_calls INTEGER NOT NULL,
  tool_calls INTEGER NOT NULL, failed_tools INTEGER NOT NULL,
  loops INTEGER NOT NULL, calls_in_loops INTEGER NOT NULL, misses INTEGER NOT NULL, compactions INTEGER NOT NULL,
  last_start_ms REAL, last_end_ms REAL, last_input INTEGER, last_output INTEGER, last_model TEXT,
  ttl_ms REAL NOT NULL, ttl_basis TEXT NOT NULL,
  UNIQUE(file_id, key)
);
CREATE INDEX sessions_by_file ON sessions(file_id);
CREATE TABLE calls(
  session_id INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  start_ms REAL, end_ms REAL,
  input INTEGER, cached INTEGER, appended INTEGER, cache_write INTEGER, output INTEGER,
  cost_usd REAL, tools INTEGER NOT NULL, failed INTEGER NOT NULL,
  miss TEXT, in_loop INTEGER NOT NULL, after_compaction INTEGER NOT NULL,
  PRIMARY KEY(session_id, idx)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE search USING fts5(text);
`;


type Row = Record<string, unknown>;

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
      const version = num(db.get('PRAGMA user_version')?.['user_version']) ?? 0;
      const tables = num(db.get("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table'")?.['n']) ?? 0;
      if (version !== SCHEMA_VERSION && (version !== 0 || tables > 0)) {
        notice = { kind: 'old-version', message: `The session index was made by another version (schema ${version}, this one reads ${SCHEMA_VERSION}); it is rebuilt from the session files.` };
      } else if (tables > 0) {
        const check = text(db.get('PRAGMA quick_check')?.['quick_check']);
        // Every table read once: a damaged page or virtual table shows here, not in the middle of a view.
        if (check === 'ok') for (const table of ['meta', 'files', 'sessions', 'calls', 'search']) db.get(`SELECT COUNT(*) AS n FROM ${table}`);
        if (check !== 'ok') notice = { kind: 'corrupt', message: `The session index is damaged (${check ?? 'no answer'}); it is rebuilt from the session files.` };
      }
    } catch (e) {
      // Locked by another window is not damage: let the caller retry.
      if (isBusy(e)) {
        db?.close();
        throw e;
      }
      notice = { kind: 'corrupt', message: `The session index could not be read (${e instanceof Error ? e.message : String(e)}); it is rebuilt from the session files.` };
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
    // A rollback journal: this VFS has no shared memory, so no WAL (docs/sessions.md).
    this.db.exec('PRAGMA journal_mode=DELETE; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16000; PRAGMA foreign_keys=OFF;');
    const tables = num(this.db.get("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table'")?.['n']) ?? 0;
    if (tables === 0) {
      this.db.exec(`BEGIN; ${SCHEMA} PRAGMA user_version = ${SCHEMA_VERSION}; INSERT INTO meta VALUES ('generation', '0'); COMMIT;`);
    }
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
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
      problem: text(r['problem']),
      state: state instanceof Uint8Array ? state : null,
      stateVersion: text(r['state_version']),
      lastGrowthMs: num(r['last_growth_ms']),
    };
  }

  /** What the index remembers of a file (with its saved parse), or null when it never read it. */
  file(path: string): StoredFile | null {
    const r = this.db.get('SELECT * FROM files WHERE path = ?', [path]);
    return r ? this.storedFile(r) : null;
  }

  /** Every file the index knows (without saved parses): for finding what changed or vanished. */
  files(): StoredFile[] {
    return this.db
      .all('SELECT id, path, agent_id, size, mtime_ms, companions, head_hash, status, problem, NULL AS state, state_version, last_growth_ms FROM files')
      .map((r) => this.storedFile(r));
  }

  /** Stores a file as just read, its sessions and calls replacing the old ones (call inside begin/commit). */
  writeFile(u: FileUpdate, nowMs = Date.now()): void {
    const main = u.records.find((r) => r.session.role === 'main') ?? u.records[0];
    const project = main?.session.cwd ?? u.projectHint ?? dirname(u.path);
    const existing = this.db.get('SELECT id FROM files WHERE path = ?', [u.path]);
    let fileId: number;
    const values = [u.agentId, project, u.size, u.mtimeMs, JSON.stringify(u.companions), u.headHash, u.status, u.problem, u.state ?? null, u.stateVersion, u.lastGrowthMs, nowMs];
    if (existing) {
      fileId = num(existing['id'])!;
      if (u.state === undefined) {
        this.db.run('UPDATE files SET agent_id = ?, project = ?, size = ?, mtime_ms = ?, companions = ?, head_hash = ?, status = ?, problem = ?, last_growth_ms = ?, indexed_ms = ? WHERE id = ?', [
          ...values.slice(0, 8),
          u.lastGrowthMs,
          nowMs,
          fileId,
        ]);
      } else {
        this.db.run(
          'UPDATE files SET agent_id = ?, project = ?, size = ?, mtime_ms = ?, companions = ?, head_hash = ?, status = ?, problem = ?, state = ?, state_version = ?, last_growth_ms = ?, indexed_ms = ? WHERE id = ?',
          [...values, fileId],
        );
      }
    } else {
      fileId = num(this.db.run('INSERT INTO files (agent_id, project, size, mtime_ms, companions, head_hash, status, problem, state, state_version, last_growth_ms, indexed_ms, path) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)', [...values, u.path]).lastInsertRowid)!;
    }
    const kept = new Set<number>();
    const upsert = this.db.prepare(`INSERT INTO sessions (file_id, key, parent_key, role, agent, model, cwd, title, start_ms, end_ms, calls, user_turns,
        input, cached, appended, cache_write, output, hit_rate, raw_io, a2o_mean, a2o_aggregate, cost_usd, unpriced_calls,
        tool_calls, failed_tools, loops, calls_in_loops, misses, compactions, last_start_ms, last_end_ms, last_input, last_output, last_model, ttl_ms, ttl_basis)
      VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
      ON CONFLICT(file_id, key) DO UPDATE SET parent_key = excluded.parent_key, role = excluded.role, agent = excluded.agent, model = excluded.model,
        cwd = excluded.cwd, title = excluded.title, start_ms = excluded.start_ms, end_ms = excluded.end_ms, calls = excluded.calls,
        user_turns = excluded.user_turns, input = excluded.input, cached = excluded.cached, appended = excluded.appended,
        cache_write = excluded.cache_write, output = excluded.output, hit_rate = excluded.hit_rate, raw_io = excluded.raw_io,
        a2o_mean = excluded.a2o_mean, a2o_aggregate = excluded.a2o_aggregate, cost_usd = excluded.cost_usd, unpriced_calls = excluded.unpriced_calls,
        tool_calls = excluded.tool_calls, failed_tools = excluded.failed_tools, loops = excluded.loops, calls_in_loops = excluded.calls_in_loops,
        misses = excluded.misses, compactions = excluded.compactions, last_start_ms = excluded.last_start_ms, last_end_ms = excluded.last_end_ms,
        last_input = excluded.last_input, last_output = excluded.last_output, last_model = excluded.last_model, ttl_ms = excluded.ttl_ms, ttl_basis = excluded.ttl_basis
      RETURNING id`);
    const insertCall = this.db.prepare('INSERT INTO calls VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)');
    const insertSearch = this.db.prepare('INSERT INTO search (rowid, text) VALUES (?, ?)');
    try {
      for (const { session: s, calls } of u.records) {
        const r = upsert.get([
          fileId, s.key, s.parentKey, s.role, s.agent, s.model, s.cwd, s.title, s.startMs, s.endMs, s.calls, s.userTurns,
          s.tokens.input, s.tokens.cached, s.tokens.appended, s.tokens.cacheWrite, s.tokens.output,
          s.cacheHitRate, s.rawInputToOutput, s.appendToOutputMean, s.appendToOutputAggregate, s.costUsd, s.unpricedCalls,
          s.toolCalls, s.failedToolCalls, s.retryLoops, s.callsInLoops, s.cacheMisses, s.compactions,
          s.lastCall?.startMs ?? null, s.lastCall?.endMs ?? null, s.lastCall?.input ?? null, s.lastCall?.output ?? null, s.lastCall?.model ?? null,
          s.cacheTtlMs, s.cacheTtlBasis,
        ]);
        const sessionId = num(r?.['id'])!;
        kept.add(sessionId);
        this.clearSessionDetail(sessionId);
        for (const c of calls) {
          insertCall.run([sessionId, c.index, c.startMs, c.endMs, c.input, c.cached, c.appended, c.cacheWrite, c.output, c.costUsd, c.toolCalls, c.failedToolCalls, c.miss, c.inLoop ? 1 : 0, c.afterCompaction ? 1 : 0]);
        }
        // One document per session (rowid = session id): a search's words may come from its prompts, tool targets and errors alike.
        const searchable = [s.searchText.prompts, s.searchText.tools, s.searchText.errors].filter((t) => t !== '').join('\n');
        if (searchable !== '') insertSearch.run([sessionId, searchable]);
      }
    } finally {
      upsert.finalize();
      insertCall.finalize();
      insertSearch.finalize();
    }
    // Sessions the file no longer has (a rewritten or truncated file).
    for (const r of this.db.all('SELECT id FROM sessions WHERE file_id = ?', [fileId])) {
      const id = num(r['id'])!;
      if (kept.has(id)) continue;
      this.clearSessionDetail(id);
      this.db.run('DELETE FROM sessions WHERE id = ?', [id]);
    }
  }

  private clearSessionDetail(sessionId: number): void {
    this.db.run('DELETE FROM calls WHERE session_id = ?', [sessionId]);
    this.db.run('DELETE FROM search WHERE rowid = ?', [sessionId]);
  }

  /** A file that is gone: its sessions stay listed, marked deleted, with the figures last read (call inside begin/commit). */
  markDeleted(fileId: number): void {
    this.db.run("UPDATE files SET status = 'deleted', state = NULL, last_growth_ms = NULL WHERE id = ?", [fileId]);
  }

  /** Forgets a file and its sessions (call inside begin/commit). */
  forget(fileId: number): void {
    for (const r of this.db.all('SELECT id FROM sessions WHERE file_id = ?', [fileId])) this.clearSessionDetail(num(r['id'])!);
    this.db.run('DELETE FROM sessions WHERE file_id = ?', [fileId]);
    this.db.run('DELETE FROM files WHERE id = ?', [fileId]);
  }

  /** Every session the index knows, as rows for the views (the file's figures joined in). */
  rows(nowMs = Date.now()): SessionRow[] {
    const stmt = this.db.prepare(`SELECT s.*, f.path, f.agent_id, f.project, f.mtime_ms, f.status, f.problem, f.last_growth_ms
      FROM sessions s JOIN files f ON f.id = s.file_id`);
    const rows: SessionRow[] = [];
    try {
      for (const r of stmt.iterate()) rows.push(this.sessionRow(r as Row, nowMs));
    } finally {
      stmt.finalize();
    }
    return rows;
  }

  /** The rows of some sessions, by id (missing ids are left out). */
  rowsById(ids: readonly number[], nowMs = Date.now()): SessionRow[] {
    if (ids.length === 0) return [];
    const out: SessionRow[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const part = ids.slice(i, i + 500);
      const found = this.db.all(
        `SELECT s.*, f.path, f.agent_id, f.project, f.mtime_ms, f.status, f.problem, f.last_growth_ms FROM sessions s JOIN files f ON f.id = s.file_id WHERE s.id IN (${part.map(() => '?').join(',')})`,
        part,
      );
      for (const r of found) out.push(this.sessionRow(r, nowMs));
    }
    return out;
  }

  private sessionRow(r: Row, nowMs: number): SessionRow {
    const lastGrowth = num(r['last_growth_ms']);
    const status = (text(r['status']) as SessionRow['fileStatus']) ?? 'ok';
    const lastStart = num(r['last_start_ms']);
    const lastEnd = num(r['last_end_ms']);
    return {
      id: num(r['id'])!,
      fileId: num(r['file_id'])!,
      path: text(r['path'])!,
      agentId: text(r['agent_id'])!,
      project: text(r['project'])!,
      fileMtimeMs: num(r['mtime_ms'])!,
      live: status === 'ok' && lastGrowth !== null && nowMs - lastGrowth < LIVE_WINDOW_MS,
      fileStatus: status,
      problem: text(r['problem']),
      key: text(r['key'])!,
      parentKey: text(r['parent_key']),
      role: text(r['role']) as SessionRow['role'],
      agent: text(r['agent']),
      model: text(r['model']),
      cwd: text(r['cwd']),
      title: text(r['title']),
      startMs: num(r['start_ms']),
      endMs: num(r['end_ms']),
      calls: num(r['calls'])!,
      userTurns: num(r['user_turns'])!,
      tokens: { input: num(r['input']), cached: num(r['cached']), appended: num(r['appended']), cacheWrite: num(r['cache_write']), output: num(r['output']) },
      cacheHitRate: num(r['hit_rate']),
      rawInputToOutput: num(r['raw_io']),
      appendToOutputMean: num(r['a2o_mean']),
      appendToOutputAggregate: num(r['a2o_aggregate']),
      costUsd: num(r['cost_usd']),
      unpricedCalls: num(r['unpriced_calls'])!,
      toolCalls: num(r['tool_calls'])!,
      failedToolCalls: num(r['failed_tools'])!,
      retryLoops: num(r['loops'])!,
      callsInLoops: num(r['calls_in_loops'])!,
      cacheMisses: num(r['misses'])!,
      compactions: num(r['compactions'])!,
      lastCall:
        lastStart === null && lastEnd === null && num(r['last_input']) === null
          ? null
          : { startMs: lastStart, endMs: lastEnd, input: num(r['last_input']), output: num(r['last_output']), model: text(r['last_model']) },
      cacheTtlMs: num(r['ttl_ms'])!,
      cacheTtlBasis: text(r['ttl_basis']) as SessionRow['cacheTtlBasis'],
      searchText: { prompts: '', tools: '', errors: '' },
    };
  }

  /** A session's calls in order (what the comparison draws). */
  calls(sessionId: number): CallRecord[] {
    return this.db.all('SELECT * FROM calls WHERE session_id = ? ORDER BY idx', [sessionId]).map((r) => ({
      index: num(r['idx'])!,
      startMs: num(r['start_ms']),
      endMs: num(r['end_ms']),
      input: num(r['input']),
      cached: num(r['cached']),
      appended: num(r['appended']),
      cacheWrite: num(r['cache_write']),
      output: num(r['output']),
      costUsd: num(r['cost_usd']),
      toolCalls: num(r['tools'])!,
      failedToolCalls: num(r['failed'])!,
      miss: text(r['miss']) as MissCause | null,
      inLoop: num(r['in_loop']) === 1,
      afterCompaction: num(r['after_compaction']) === 1,
    }));
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
