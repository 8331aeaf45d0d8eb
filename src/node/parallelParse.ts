import { Worker } from 'node:worker_threads';
import { LineReader } from '../core/text/lineReader';
import type { SourceLine } from '../core/text/lineReader';
import { formatById } from '../core/trace/formats';
import { isObject } from '../core/trace/json';
import { MAX_JSON_DEPTH } from '../core/trace/jsonStream';
import type { FormatId } from '../core/trace/model';
import { chunksOf, readTraceInto, TraceParse } from '../core/trace/parseTrace';
import type { ByteChunks, ParsedTrace, TraceFile } from '../core/trace/parseTrace';
import { checkRecord } from '../core/trace/recordChecks';
import type {
  ChunkLine,
  ChunkParams,
  ChunkResult,
  ParseChunkMethods,
  ParseChunkReply,
  ParseChunkRequest,
} from '../protocol/parseChunkProtocol';
import { WorkerRpc } from '../protocol/workerRpc';

/**
 * One big trace file parsed on several threads, to the same result as parseTrace.
 *
 * The reader's thread reads each file's head itself until the format is decided (detection,
 * documents, encodings and odd first lines stay as they are), then hands the rest out in
 * chunks cut at line ends. A parse thread splits its chunk into lines, JSON.parses and checks
 * each, and sends back the records slimmed by their format (FormatDefinition.slimRecord: the
 * parts its reader never reads left out, so the copy back is small), plus the bytes of any
 * line that is not a plain record (bad JSON, not text, too long, odd counts). The reader's
 * thread takes the chunks back in file order and gives each line to the same parser as one
 * thread would: records to the reader, other lines through the usual line handling. So the
 * reader sees the same records in the same order, and everything that depends on order
 * (calls written over several lines, tool results after their calls, retry loops,
 * diagnostics) is as on one thread (test/unit/node/parallelParse.test.ts). Companion files
 * (sub-agent logs) are read the same way after the opened file.
 */

/** Chunks handed to parse threads: big enough that a message costs little beside its parse, small enough to keep every thread busy. */
export const PARALLEL_CHUNK_BYTES = 4 * 2 ** 20;
/** Chunks waiting or being parsed, per thread: the next one is ready when a thread finishes, and memory stays bounded. */
const IN_FLIGHT_PER_THREAD = 2;

/** The work of a parse thread on one chunk (run in the thread by parseChunkWorker.ts). */
export function readChunk(m: ChunkParams): ChunkResult {
  const slim = formatById(m.format)?.slimRecord;
  if (!slim) throw new Error(`format ${m.format} cannot be read on parse threads`);
  const out: ChunkLine[] = [];
  let lines = 0;
  const leave = (line: SourceLine): void => {
    const r = copyOf(m.bytes, line.offset, line.offset + line.byteLength);
    out.push({ l: line.line, o: line.offset, b: line.byteLength, r });
  };
  const reader = new LineReader({
    longLineBytes: m.longLineBytes ?? undefined,
    onLongLine: () => null,
    onLine: (line) => {
      lines += 1;
      const text = line.text;
      if (text === null) return leave(line);
      if (text.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return leave(line);
      }
      if (!isObject(value)) return leave(line);
      const check = checkRecord(value, MAX_JSON_DEPTH);
      if (check.tooDeep || check.badCounts.length > 0) return leave(line);
      out.push({ l: line.line, o: line.offset, b: line.byteLength, v: slim(value) });
    },
  });
  // As a Buffer (the same bytes, not copied): the reader's searches for newlines and NULs are then
  // memchr, where a Uint8Array's indexOf (what a message delivers) took longer than the JSON.parse.
  reader.push(Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.length));
  reader.end();
  return { lines, out };
}

/** Parse threads, each given chunks in turn. */
class ChunkPool {
  private readonly threads: Array<{ worker: Worker; rpc: WorkerRpc<ParseChunkMethods> }> = [];
  private next = 0;

  constructor(
    script: string,
    readonly size: number,
  ) {
    for (let t = 0; t < size; t++) {
      const worker = new Worker(script);
      const rpc = new WorkerRpc<ParseChunkMethods>((request: ParseChunkRequest, transfer) =>
        worker.postMessage(request, transfer as ArrayBuffer[]),
      );
      worker.on('message', (reply: ParseChunkReply) => rpc.receive(reply));
      worker.on('error', (e) => rpc.stop(e));
      worker.on('exit', (code) => rpc.stop(new Error(`a parse thread stopped (exit code ${code})`)));
      this.threads.push({ worker, rpc });
    }
  }

  /** Parses a chunk on the next thread; its buffer moves there. */
  read(params: ChunkParams): Promise<ChunkResult> {
    const thread = this.threads[this.next++ % this.threads.length]!;
    return thread.rpc.request('chunk', params, [params.bytes.buffer]);
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }
}

/** Options of parseTraceParallel. */
export interface ParallelParseOptions {
  /** Parse threads to start (at least 1). */
  threads: number;
  /** The parse thread's script (dist/parseChunkWorker.js, beside the bundle that starts it). */
  workerScript: string;
  /** Skip detection and read as this format. */
  format?: FormatId;
  /** As ParseOptions.longLineBytes. */
  longLineBytes?: number;
  /** Size of the chunks handed out (default PARALLEL_CHUNK_BYTES; tests set it low to put chunk ends everywhere). */
  chunkBytes?: number;
  /** Told of each chunk handed to a parse thread: its file, first byte and length (the tests and the benchmark count them). */
  onChunk?: (file: number, offset: number, length: number) => void;
}

/** A copy with a buffer of its own (a Node Buffer's `slice` is a view, and sending a view's buffer would move all of it). */
function copyOf(bytes: Uint8Array, start = 0, end = bytes.length): Uint8Array {
  return new Uint8Array(bytes.subarray(start, end));
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const all = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

/**
 * Reads file `index` into the parse: its head here, the rest on the parse threads once the
 * parse can take it. True when reading stopped (the file is not text, or of no known format).
 */
async function readFile(
  parse: TraceParse,
  index: number,
  bytes: ByteChunks,
  pool: ChunkPool,
  options: ParallelParseOptions,
): Promise<boolean> {
  const chunkBytes = options.chunkBytes ?? PARALLEL_CHUNK_BYTES;
  let handedOff: { offset: number; line: number; format: FormatId } | null = null;
  let carry: Uint8Array[] = [];
  let carryBytes = 0;
  let nextOffset = 0;
  let nextLine = 0;
  const inFlight: Array<{ result: Promise<ChunkResult>; offset: number }> = [];
  const dispatch = (chunk: Uint8Array): void => {
    // Its length first: sending moves the buffer away.
    const length = chunk.length;
    options.onChunk?.(index, nextOffset, length);
    inFlight.push({
      result: pool.read({ bytes: chunk, format: handedOff!.format, longLineBytes: options.longLineBytes ?? null }),
      offset: nextOffset,
    });
    nextOffset += length;
  };
  // Chunks are taken back in file order, each line given to the parser where it sits.
  const takeBack = async (): Promise<void> => {
    const { result, offset } = inFlight.shift()!;
    const r = await result;
    for (const x of r.out) {
      const line: SourceLine = { line: nextLine + x.l, offset: offset + x.o, byteLength: x.b, text: null };
      if (x.v) parse.checkedLine(index, line, x.v);
      else parse.lineBytes(index, x.r!, line.offset, line.line);
    }
    nextLine += r.lines;
  };
  try {
    for await (const chunk of chunksOf(bytes)) {
      if (handedOff === null) {
        const end = chunk.lastIndexOf(0x0a) + 1;
        if (!parse.push(index, end === 0 ? chunk : chunk.subarray(0, end))) return true;
        if (end === 0) continue;
        const rest = chunk.subarray(end);
        handedOff = parse.handOff(index);
        if (handedOff === null) {
          if (rest.length > 0 && !parse.push(index, rest)) return true;
          continue;
        }
        nextOffset = handedOff.offset;
        nextLine = handedOff.line;
        if (rest.length > 0) carry = [copyOf(rest)];
        carryBytes = rest.length;
        continue;
      }
      // A copy: a source may reuse its chunk's buffer once we take the next one.
      carry.push(copyOf(chunk));
      carryBytes += chunk.length;
      if (carryBytes < chunkBytes) continue;
      const all = concat(carry, carryBytes);
      const end = all.lastIndexOf(0x0a) + 1;
      if (end === 0) continue; // one long line so far: it goes whole to one thread
      carry = end < all.length ? [copyOf(all, end)] : [];
      carryBytes = all.length - end;
      // A copy of its own: the chunk's buffer moves to the thread.
      dispatch(copyOf(all, 0, end));
      while (inFlight.length >= pool.size * IN_FLIGHT_PER_THREAD) await takeBack();
    }
    if (handedOff !== null && carryBytes > 0) dispatch(copyOf(concat(carry, carryBytes)));
    while (inFlight.length > 0) await takeBack();
  } catch (e) {
    // What was read before the failure is read, as on one thread; a half line is not.
    while (inFlight.length > 0) await takeBack().catch(() => undefined);
    throw e;
  }
  return false;
}

/**
 * Reads a trace like parseTrace (the opened file, then its companions), parsing the lines
 * of each file on `threads` parse threads once its format is decided: the same result,
 * sooner on a machine with idle cores. Formats without FormatDefinition.slimRecord, and a
 * file whose head the parse cannot hand off (a document, a weak match, UTF-16), are read
 * on this thread as by parseTrace.
 */
export async function parseTraceParallel(
  files: readonly TraceFile[],
  options: ParallelParseOptions,
): Promise<ParsedTrace> {
  const parse = new TraceParse(
    files.map((f) => f.key),
    { format: options.format, longLineBytes: options.longLineBytes },
  );
  const pool = new ChunkPool(options.workerScript, Math.max(1, options.threads));
  try {
    return await readTraceInto(parse, files, (fileIndex, bytes) => readFile(parse, fileIndex, bytes, pool, options));
  } finally {
    await pool.close();
  }
}
