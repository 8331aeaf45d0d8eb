import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import type { SessionsContext } from '../core/context/contextAcrossSessions';
import type { SessionRow } from '../core/sessions/sessionQuery';
import type { CallRecord } from '../core/sessions/sessionRecord';
import type { RpcRequest, RpcResponse } from './workerRpc';

/**
 * Messages between the extension host (SessionIndexClient, src/node/sessions/indexClient.ts)
 * and the index worker (src/node/sessions/indexWorker.ts: a worker thread that owns the
 * index file, the indexer and the watchers of live session files, so reading gigabytes of
 * logs never blocks the extension host's event loop).
 */

/** What reading one file did. */
export type FileOutcome =
  | { kind: 'unchanged' }
  | { kind: 'new' | 'appended'; bytesRead: number }
  /** Read again from the start: why (truncated, rotated, no saved parse to resume). */
  | { kind: 'reread'; bytesRead: number; reason: string }
  | { kind: 'deleted' }
  | { kind: 'problem'; message: string };

export interface SyncProgress {
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
}

export interface SyncResult {
  files: number;
  counts: Record<FileOutcome['kind'], number>;
  bytesRead: number;
  cancelled: boolean;
  /** Files read again from the start and why ("x.jsonl: it shrank"), for the log. */
  rereads: string[];
  /** Sessions that exist but cannot be listed (OpenCode's database), in words. */
  notes: string[];
  /** Folders and files under the agents' folders that could not be looked at (permission denied, a loop of links). */
  unlisted: string[];
  /** Session files in the index that could not be read as a session (unreadable, not a trace), and why: every one, not only this sync's. */
  unread: Array<{ path: string; problem: string }>;
}

export interface IndexWorkerConfig {
  /** The index file (in the extension's global storage). */
  dbPath: string;
  /** Each agent's folder (ids from the registry). */
  roots: Array<{ agentId: string; root: string }>;
  analysis: Partial<AnalysisOptions>;
  /** The user's own prices (`agentTrace.prices`, as set); the list prices apply to the rest. */
  prices: unknown;
  maxFileBytes: number;
  /** The extension's version: saved parses of another build are not resumed. */
  stateVersion: string;
}

/** Method → params and result. */
export interface IndexMethods {
  configure: { params: IndexWorkerConfig; result: { notice: string | null } };
  /** Reads what changed in the agents' folders; `readOnly` when another window holds the writer lease. */
  sync: { params: Record<string, never>; result: (SyncResult & { readOnly: false }) | { readOnly: true } };
  generation: { params: Record<string, never>; result: number };
  rows: { params: Record<string, never>; result: { generation: number; rows: SessionRow[] } };
  calls: { params: { sessionId: number }; result: CallRecord[] };
  search: { params: { text: string }; result: number[] };
  /** Reads one file now (the inspector or the status bar is showing it). */
  refresh: { params: { path: string }; result: FileOutcome };
  /** The context anatomy of these sessions, summed by tool, MCP server and file (the several-sessions view; docs/guide/context.md). */
  context: { params: { files: Array<{ path: string; sessionKeys: string[] }> }; result: SessionsContext };
  /** Files to watch closely besides the ones that changed lately (an open inspector's). */
  watch: { params: { paths: string[] }; result: null };
  close: { params: Record<string, never>; result: null };
}

export type IndexMethod = keyof IndexMethods;

/** Host → worker: a request (WorkerRpc), or stop the running sync after its current file. */
export type IndexRequest = RpcRequest<IndexMethods> | { kind: 'cancel' };

export type IndexEvent =
  | ({ event: 'progress' } & SyncProgress)
  /** A sync wrote a batch of files to the index (a first index shows its rows as they come). */
  | { event: 'written' }
  /** Sessions changed on disk and were read again (live files). */
  | {
      event: 'changed';
      generation: number;
      paths: string[];
      outcomes: Array<{ path: string; kind: FileOutcome['kind']; reason: string | null }>;
    }
  /** Something the user should hear about: an index rebuilt, a file re-read from the start. */
  | { event: 'notice'; message: string }
  | { event: 'log'; level: 'info' | 'warn' | 'error'; message: string };

/** Worker → host: an answer (WorkerRpc) or an event. */
export type WorkerMessage = RpcResponse | IndexEvent;
