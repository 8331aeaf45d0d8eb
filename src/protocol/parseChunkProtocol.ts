import type { JsonObject } from '../core/trace/json';
import type { FormatId } from '../core/trace/model';
import type { RpcRequest, RpcResponse } from './workerRpc';

// Messages between parseTraceParallel (src/node/parallelParse.ts) and its parse threads
// (src/node/parseChunkWorker.ts): each thread is asked for one chunk of whole lines at a
// time (WorkerRpc) and answers with the chunk's records, slimmed by their format, and the
// bytes of the lines it leaves to the reader's thread.

/** One chunk of a file: whole lines, the format that reads them, and the parse's long-line limit. */
export interface ChunkParams {
  bytes: Uint8Array;
  format: FormatId;
  longLineBytes: number | null;
}

/**
 * One line of a chunk, numbered (`l`) and placed (`o`, bytes from the chunk's start; `b`
 * its length) within the chunk: its checked and slimmed record (`v`), or its bytes (`r`) to
 * be read on the reader's thread.
 */
export interface ChunkLine {
  l: number;
  o: number;
  b: number;
  v?: JsonObject;
  r?: Uint8Array;
}

/** A chunk's lines that matter, and how many lines it held. */
export interface ChunkResult {
  lines: number;
  out: ChunkLine[];
}

/** What a parse thread answers. */
export interface ParseChunkMethods {
  chunk: { params: ChunkParams; result: ChunkResult };
}

/** Reader's thread → parse thread. */
export type ParseChunkRequest = RpcRequest<ParseChunkMethods>;
/** Parse thread → reader's thread. */
export type ParseChunkReply = RpcResponse;
