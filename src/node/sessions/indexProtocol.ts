import type { AnalysisOptions } from '../../core/analysis/sessionAnalysis';
import type { SessionRow } from '../../core/sessions/sessionQuery';
import type { CallRecord } from '../../core/sessions/sessionRecord';
import type { FileOutcome, SyncProgress, SyncResult } from './sessionIndexer';

/**
 * Messages between the extension host and the index worker (a worker thread that
 * owns the index file, the indexer and the watchers of live session files, so reading
 * gigabytes of logs never blocks the extension host's event loop).
 */

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
  /** Files to watch closely besides the ones that changed lately (an open inspector's). */
  watch: { params: { paths: string[] }; result: null };
  close: { params: Record<string, never>; result: null };
}

export type IndexMethod = keyof IndexMethods;

export type IndexRequest = { [M in IndexMethod]: { id: number; method: M; params: IndexMethods[M]['params'] } }[IndexMethod] | { method: 'cancel' };

export type IndexReply = { id: number; ok: unknown } | { id: number; err: string };

export type IndexEvent =
  | ({ event: 'progress' } & SyncProgress)
  /** A sync wrote a batch of files to the index (a first index shows its rows as they come). */
  | { event: 'written' }
  /** Sessions changed on disk and were read again (live files). */
  | { event: 'changed'; generation: number; paths: string[]; outcomes: Array<{ path: string; kind: FileOutcome['kind']; reason: string | null }> }
  /** Something the user should hear about: an index rebuilt, a file re-read from the start. */
  | { event: 'notice'; message: string }
  | { event: 'log'; level: 'info' | 'warn' | 'error'; message: string };

export type WorkerMessage = IndexReply | IndexEvent;
