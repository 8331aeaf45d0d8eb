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
 * thread would: records to the reader, other lines through the usual line handling. The
 * reader's thread parses chunks too, rather than wait, when every parse thread has its fill:
 * a chunk next in file order goes straight to the parser with its records whole, one that must
 * wait behind the threads' chunks is kept slimmed. So the
 * reader sees the same records in the same order, and everything that depends on order
 * (calls written over several lines, tool results after their calls, retry loops,
 * diagnostics) is as on one thread (test/unit/node/parallelParse.test.ts). Companion files
 * (sub-agent logs) are read the same way after the opened file.
 */

/**
 * Chunks handed out: small, so what a chunk's records leave in the young generation while it
 * waits its turn dies there (4 MiB chunks cost the 111 MB Claude Code log 1.63-1.67 s of CPU
 * in all threads, 1 MiB 1.54 s, 256 KiB 1.43-1.45 s), and big enough that a message costs
 * little beside its parse (docs/performance.md, issue 27, ninth session).
 */
export const PARALLEL_CHUNK_BYTES = 256 * 2 ** 10;
/** Chunks waiting or being parsed, per thread: the next one is ready when a thread finishes, and memory stays bounded. */
const IN_FLIGHT_PER_THREAD = 2;

/**
 * The work of a parse thread on one chunk (run in the thread by parseChunkWorker.ts, and on the
 * reader's thread for the chunks it parses itself): its lines that matter, each record slimmed
 * by its format or (`whole`) as read, each line given to `each` (by default kept in the result).
 */
export function readChunk(
  m: ChunkParams,
  records: 'slim' | 'whole' = 'slim',
  each?: (line: ChunkLine) => void,
): ChunkResult {
  const slimRecord = formatById(m.format)?.slimRecord;
  if (!slimRecord) throw new Error(`format ${m.format} cannot be read on parse threads`);
  const slim = records === 'slim' ? slimRecord : null;
  const out: ChunkLine[] = [];
  const keep = each ?? ((line: ChunkLine): number => out.push(line));
  let lines = 0;
  const leave = (line: SourceLine): void => {
    const r = copyOf(m.bytes, line.offset, line.offset + line.byteLength);
    keep({ l: line.line, o: line.offset, b: line.byteLength, r });
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
      keep({ l: line.line, o: line.offset, b: line.byteLength, v: slim ? slim(value) : value });
    },
  });
  // As a Buffer (the same bytes, not copied): the reader's searches for newlines and NULs are then
  // memchr, where a Uint8Array's indexOf (what a message delivers) took longer than the JSON.parse.
  reader.push(asBuffer(m.bytes));
  reader.end();
  return { lines, out };
}

/** Parse threads, each given chunks in turn. */
class ChunkPool {
  private readonly threads: Array<{ worker: Worker; rpc: WorkerRpc<ParseChunkMethods> }> = [];
  private next = 0;
  /** Chunks sent and not answered yet. */
  busy = 0;

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

  /** Whether a chunk sent now would wait for at most IN_FLIGHT_PER_THREAD - 1 others on its thread. */
  get hasRoom(): boolean {
    return this.busy < this.size * IN_FLIGHT_PER_THREAD;
  }

  /** Parses a chunk on the next thread; its buffer moves there. */
  read(params: ChunkParams): Promise<ChunkResult> {
    const thread = this.threads[this.next++ % this.threads.length]!;
    this.busy += 1;
    const done = (): void => {
      this.busy -= 1;
    };
    const result = thread.rpc.request('chunk', params, [params.bytes.buffer]);
    result.then(done, done);
    return result;
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }
}

/** Options of parseTraceParallel. */
export interface ParallelParseOptions {
  /** Parse threads to start beside the reader's own (which parses too when they have their fill); 0 for none. */
  threads: number;
  /** The parse thread's script (dist/parseChunkWorker.js, beside the bundle that starts it). */
  workerScript: string;
  /** Skip detection and read as this format. */
  format?: FormatId;
  /** As ParseOptions.longLineBytes. */
  longLineBytes?: number;
  /** Size of the chunks handed out (default PARALLEL_CHUNK_BYTES; tests set it low to put chunk ends everywhere). */
  chunkBytes?: number;
  /** Told of each chunk handed out: its file, first byte and length (the tests and the benchmark count them). */
  onChunk?: (file: number, offset: number, length: number) => void;
  /**
   * Where chunk `n` (of its file, from 0) is parsed: on a parse thread or on the reader's own
   * thread. By default on a parse thread when one has room, here otherwise (the tests choose).
   */
  where?: (n: number) => 'thread' | 'here';
}

/** A copy with a buffer of its own (a Node Buffer's `slice` is a view, and sending a view's buffer would move all of it). */
function copyOf(bytes: Uint8Array, start = 0, end = bytes.length): Uint8Array {
  const copy = new Uint8Array(end - start);
  copy.set(bytes.subarray(start, end));
  return copy;
}

/** Room for the piece read after a chunk's size is reached (a file stream's pieces are 64 KiB). */
const PIECE_ROOM = 64 * 2 ** 10;

/** The same bytes as a Buffer (not copied), whose searches are memchr. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** Chunks the reader's thread parses itself, at most, beyond those on the parse threads (they hold whole records). */
const OWN_AHEAD = 2;

/** A chunk handed out, in file order: its result once there, and where it starts. */
interface Handed {
  offset: number;
  result: ChunkResult | null;
  /** The parse thread's answer (null for a chunk parsed on this thread). */
  pending: Promise<ChunkResult> | null;
}

/**
 * Reads file `index` into the parse: its head here, the rest in chunks once the parse can
 * take it, each parsed on a parse thread when one has room and on this thread otherwise
 * (rather than wait), and all given to the parser in file order. True when reading stopped
 * (the file is not text, or of no known format).
 */
async function readFile(
  parse: TraceParse,
  index: number,
  bytes: ByteChunks,
  pool: ChunkPool | null,
  options: ParallelParseOptions,
): Promise<boolean> {
  const chunkBytes = Math.max(1, options.chunkBytes ?? PARALLEL_CHUNK_BYTES);
  const longLineBytes = options.longLineBytes ?? null;
  let handedOff: { offset: number; line: number; format: FormatId } | null = null;
  // The bytes not handed out yet: one buffer, filled by copying each piece read into it once.
  let held = new Uint8Array(0);
  let heldBytes = 0;
  let nextOffset = 0;
  let nextLine = 0;
  const handed: Handed[] = [];
  let count = 0;
  const hold = (piece: Uint8Array): void => {
    if (heldBytes + piece.length > held.length) {
      const grown = new Uint8Array(Math.max(chunkBytes + piece.length, 2 * (heldBytes + piece.length)));
      grown.set(held.subarray(0, heldBytes));
      held = grown;
    }
    held.set(piece, heldBytes);
    heldBytes += piece.length;
  };
  const handOut = (length: number): void => {
    // The chunk keeps the buffer (it may move to a parse thread); what follows it gets a new one.
    const chunk = held.subarray(0, length);
    const rest = heldBytes - length;
    const next = new Uint8Array(Math.max(chunkBytes + PIECE_ROOM, 2 * rest));
    next.set(held.subarray(length, heldBytes));
    held = next;
    heldBytes = rest;
    const thread = options.where?.(count++) ?? (pool !== null && pool.hasRoom ? 'thread' : 'here');
    options.onChunk?.(index, nextOffset, length);
    const params: ChunkParams = { bytes: chunk, format: handedOff!.format, longLineBytes };
    const offset = nextOffset;
    nextOffset += length;
    if (thread === 'thread' && pool !== null) {
      const entry: Handed = { offset, result: null, pending: pool.read(params) };
      entry.pending!.then(
        (r) => {
          entry.result = r;
        },
        () => undefined,
      );
      handed.push(entry);
    } else if (handed.length === 0) {
      // Next in file order: each line goes to the parser as it is read, its record whole (as on one thread).
      const line = nextLine;
      nextLine += readChunk(params, 'whole', (x) => give(x, offset, line)).lines;
    } else {
      // To wait behind chunks on the parse threads: slimmed, as theirs are (less to keep meanwhile).
      handed.push({ offset, result: readChunk(params, 'slim'), pending: null });
    }
  };
  const give = (x: ChunkLine, offset: number, line: number): void => {
    if (x.v) parse.checkedLine(index, { line: line + x.l, offset: offset + x.o, byteLength: x.b, text: null }, x.v);
    else parse.lineBytes(index, x.r!, offset + x.o, line + x.l);
  };
  // Chunks are taken back in file order, each line given to the parser where it sits.
  const takeBack = async (): Promise<void> => {
    const { pending, result, offset } = handed.shift()!;
    const r = result ?? (await pending!);
    for (const x of r.out) give(x, offset, nextLine);
    nextLine += r.lines;
  };
  const takeBackReady = async (): Promise<void> => {
    while (handed.length > 0 && handed[0]!.result !== null) await takeBack();
    // Memory stays bounded: past so many chunks ahead, wait for the oldest.
    const most = (pool?.size ?? 0) * IN_FLIGHT_PER_THREAD + OWN_AHEAD;
    while (handed.length > most) await takeBack();
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
        if (rest.length > 0) hold(rest);
        continue;
      }
      // A copy: a source may reuse its chunk's buffer once we take the next one.
      const before = heldBytes;
      hold(chunk);
      if (heldBytes < chunkBytes) continue;
      // The last line end so far: in the piece just added, else (only when the chunk's size was
      // just reached: past it, nothing held has one) in what was held before it.
      const inPiece = asBuffer(chunk).lastIndexOf(0x0a);
      const end =
        inPiece >= 0
          ? before + inPiece + 1
          : before < chunkBytes
            ? asBuffer(held.subarray(0, before)).lastIndexOf(0x0a) + 1
            : 0;
      if (end === 0) continue; // one long line so far: it goes whole to one thread
      await takeBackReady();
      handOut(end);
    }
    if (handedOff !== null && heldBytes > 0) {
      await takeBackReady();
      handOut(heldBytes);
    }
    while (handed.length > 0) await takeBack();
  } catch (e) {
    // What was read before the failure is read, as on one thread; a half line is not.
    while (handed.length > 0) await takeBack().catch(() => undefined);
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
  const pool = options.threads >= 1 ? new ChunkPool(options.workerScript, Math.floor(options.threads)) : null;
  try {
    return await readTraceInto(parse, files, (fileIndex, bytes) => readFile(parse, fileIndex, bytes, pool, options));
  } finally {
    await pool?.close();
  }
}
