import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import type { TraceReport } from '../core/report/traceReport';
import type { WhatIfWorkload } from '../core/sim/whatIfWorkload';
import type { FormatId, SourceRef } from '../core/trace/model';
import type { SessionPage } from '../core/view/sessionList';
import type { CallTranscript } from '../core/view/transcript';
import type {
  SessionIntro,
  TraceHeader,
  TraceQueryName,
  TraceQueryParams,
  TraceQueryResult,
} from '../core/view/traceQueries';
import type { TraceProblems } from '../core/view/traceService';
import type { RpcRequest, RpcResponse } from './workerRpc';

// The messages between the extension host and the trace worker (src/node/traceWorker.ts): the
// worker reads and parses the file off the host's event loop, keeps the model, and
// answers what the inspector asks about it.

/**
 * A file of the trace: streamed from disk by the worker (a regular file only; `noFollow`
 * refuses a symbolic link swapped in since the listing, `expect` a different file), or
 * handed over as bytes (remote workspaces).
 */
export type WorkerFile =
  | { key: string; path: string; noFollow?: boolean; expect?: { ino: number; dev: number } }
  | { key: string; bytes: Uint8Array };

/** How to read the trace. */
export interface OpenParams {
  files: WorkerFile[];
  /** Size of the main file, for progress; null when unknown. */
  totalBytes: number | null;
  format: FormatId | null;
  fileName: string;
  analysis: Partial<AnalysisOptions>;
  /** Companions the host refused to read, and why: said on the trace (as the CLI says them). */
  notes?: string[];
  /** `agentTrace.prices` as the user wrote it (the worker builds the price book over the library's prices); null: no prices. */
  prices: unknown;
  /**
   * A file that may still grow (live tail): a last line without its newline is held until
   * the newline comes (`readMore`), not read half. Default false: read as the CLI reads.
   */
  live?: boolean;
}

/** Why a live trace cannot be read on from where its read stopped, and must be read from scratch. */
export type ReopenReason =
  /** The opened file is shorter than what was read of it (or a companion is). */
  | 'truncated'
  /** Another file (another inode) is at the opened file's path now: it was rotated or rewritten. */
  | 'replaced'
  /** The opened file is gone. */
  | 'deleted'
  /** The trace was read once, not followed (no reader state was kept). */
  | 'not-live'
  /** Reading had stopped (not text, or a JSON document read to its end). */
  | 'stopped';

/**
 * What `readMore` found: the trace with the new bytes (per file, where reading now
 * stands; `newBytes`, what this call read from disk), or why it must be opened again.
 */
export type MoreRead =
  | { kind: 'read'; opened: OpenedTrace; bytesRead: number[]; newBytes: number }
  | { kind: 'reopen'; reason: ReopenReason };

/** What the host learns once the file is read: enough for the page to paint the header and the first summary. */
export interface OpenedTrace {
  header: TraceHeader;
  sessions: SessionPage;
  intro: SessionIntro | null;
  /** Milliseconds the worker spent reading and parsing. */
  parseMs: number;
}

/**
 * What the worker answers after a trace is open: method → params and result. Every trace
 * query (TraceQueries) by its own name, answered by the worker's TraceService as asked;
 * then what only the host asks.
 */
export type TraceWorkerMethods = {
  [M in TraceQueryName]: { params: TraceQueryParams<M>; result: TraceQueryResult<M> };
} & TraceWorkerOwnMethods;

/** What the host asks the worker besides the trace queries. */
export interface TraceWorkerOwnMethods {
  header: { params: Record<string, never>; result: TraceHeader };
  sourceOf: { params: { sessionId: string; callIndex: number; toolId: string | null }; result: SourceRef | null };
  /** A call's transcript, its records read again from the trace's own files (each text clipped to `maxChars`); null: no such call. */
  callTranscript: { params: { sessionId: string; callIndex: number; maxChars: number }; result: CallTranscript | null };
  whatIfWorkload: { params: { sessionId: string; filePath: string; format: FormatId | null }; result: WhatIfWorkload };
  report: { params: Record<string, never>; result: TraceReport };
  problems: { params: Record<string, never>; result: TraceProblems };
  setAnalysisOptions: { params: { analysis: Partial<AnalysisOptions> }; result: null };
  /** New `agentTrace.prices` (the user's entries, as written): costs are priced again when next asked for, the file is not read again. */
  setPrices: { params: { prices: unknown }; result: null };
  /**
   * Live tail: reads only the bytes the trace's files gained since the last read (and any
   * new companion files, e.g. a sub-agent log that appeared), resuming the parse with its
   * reader state kept, and answers the trace as it now stands. An opened file that shrank,
   * was replaced by another at its path (rotation) or is gone: the answer says to open it again.
   */
  readMore: { params: { newFiles?: { key: string; path: string }[] }; result: MoreRead };
}

export type WorkerMethod = keyof TraceWorkerMethods;
/** A method only the host asks (not a trace query). */
export type WorkerOwnMethod = keyof TraceWorkerOwnMethods;

/** Host → worker: read the trace, then requests (WorkerRpc). */
export type ToWorker = { kind: 'open'; params: OpenParams } | RpcRequest<TraceWorkerMethods>;

/** Worker → host: how reading goes and how it ended, then answers (WorkerRpc). */
export type FromWorker =
  | { kind: 'progress'; bytesRead: number; totalBytes: number | null }
  | { kind: 'opened'; opened: OpenedTrace }
  | { kind: 'openFailed'; message: string; code: string | null; notRegular: boolean }
  | RpcResponse;
