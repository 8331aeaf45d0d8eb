import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import type { CustomTtl, TtlReplay } from '../core/cost/cacheTtlWhatIf';
import type { TraceReport } from '../core/report/traceReport';
import type { WhatIfWorkload } from '../core/sim/whatIfWorkload';
import type { FormatId, SourceRef } from '../core/trace/model';
import type { SessionPage } from '../core/view/sessionList';
import type { CallDetail, CallRow } from '../core/view/traceView';
import type { CallTranscript } from '../core/view/transcript';
import type { SearchResult, SessionBody, SessionIntro, ToolCallRow, TraceHeader, TraceProblems } from '../core/view/traceService';

// The messages between the extension host and the trace worker (traceWorker.ts): the
// worker reads and parses the file off the host's event loop, keeps the model, and
// answers what the inspector asks about it.

/**
 * A file of the trace: streamed from disk by the worker (a regular file only; `noFollow`
 * refuses a symbolic link swapped in since the listing, `expect` a different file), or
 * handed over as bytes (remote workspaces).
 */
export type WorkerFile = { key: string; path: string; noFollow?: boolean; expect?: { ino: number; dev: number } } | { key: string; bytes: Uint8Array };

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

/** What the worker answers after a trace is open: method → params and result. */
export interface TraceWorkerMethods {
  header: { params: Record<string, never>; result: TraceHeader };
  sessionList: { params: { query: string; offset: number; limit: number }; result: SessionPage };
  intro: { params: { sessionId: string }; result: SessionIntro | null };
  body: { params: { sessionId: string }; result: SessionBody | null };
  callRows: { params: { sessionId: string; from: number; count: number }; result: CallRow[] };
  toolRows: { params: { sessionId: string; from: number; count: number }; result: ToolCallRow[] };
  search: { params: { query: string; sessionId: string | null }; result: SearchResult };
  callsUsingTool: { params: { sessionId: string; tool: string }; result: Int32Array };
  callDetail: { params: { sessionId: string; callIndex: number }; result: CallDetail | null };
  sourceOf: { params: { sessionId: string; callIndex: number; toolId: string | null }; result: SourceRef | null };
  /** A call's transcript, its records read again from the trace's own files (each text clipped to `maxChars`); null: no such call. */
  callTranscript: { params: { sessionId: string; callIndex: number; maxChars: number }; result: CallTranscript | null };
  whatIfWorkload: { params: { sessionId: string; filePath: string; format: FormatId | null }; result: WhatIfWorkload };
  report: { params: Record<string, never>; result: TraceReport };
  problems: { params: Record<string, never>; result: TraceProblems };
  customTtl: { params: { sessionId: string; custom: CustomTtl }; result: TtlReplay | null };
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

/** Host → worker. */
export type ToWorker = { kind: 'open'; params: OpenParams } | { kind: 'request'; id: number; method: WorkerMethod; params: unknown };

/** Worker → host. */
export type FromWorker =
  | { kind: 'progress'; bytesRead: number; totalBytes: number | null }
  | { kind: 'opened'; opened: OpenedTrace }
  | { kind: 'openFailed'; message: string; code: string | null; notRegular: boolean }
  | { kind: 'response'; id: number; ok: unknown }
  | { kind: 'response'; id: number; err: string };
