// The trace worker: reads and parses one trace off the extension host's event loop, then
// keeps the model and answers what the inspector asks about it (src/protocol/traceWorkerProtocol.ts).
// The host starts one per open trace document and terminates it to cancel or to close.
import { lstat, stat } from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import type { TransferListItem } from 'node:worker_threads';
import { createPriceBook } from '../core/cost/priceBook';
import type { PriceBook } from '../core/cost/costTypes';
import { readUserPrices } from '../core/cost/userPrices';
import { TraceParse } from '../core/trace/parseTrace';
import { TraceService } from '../core/view/traceService';
import { newContextCollector } from './contextCollect';
import type { SessionBody } from '../core/view/traceService';
import { callTranscript } from './transcriptRead';
import type {
  FromWorker,
  MoreRead,
  OpenedTrace,
  OpenParams,
  ToWorker,
  TraceWorkerMethods,
  WorkerOwnMethod,
} from '../protocol/traceWorkerProtocol';
import { askQuery } from '../core/view/traceQueries';
import type { TraceQueryParams } from '../core/view/traceQueries';
import { isTraceQuery } from '../protocol/traceQueryChecks';
import { respond } from '../protocol/workerRpc';
import { SESSION_PAGE_SIZE } from '../protocol/messages';
import { NotRegularFileError, regularFileChunks } from './traceFiles';
import type { WorkerFile } from '../protocol/traceWorkerProtocol';

/** Read buffer per stream, as the CLI reads. */
/** Progress is posted at most this often (bytes of the main file). */
const PROGRESS_BYTES = 8 * 2 ** 20;

const port = parentPort!;
let service: TraceService | null = null;
/** The open trace's incremental parse and where its files are, for `readMore`. */
let reading: { parse: TraceParse; files: (WorkerFile | null)[]; params: OpenParams } | null = null;
/** The open trace's files by index (a transcript reads its records again from them, and from nothing else). */
let traceFiles: (WorkerFile | null)[] = [];
/** Whether the open trace was opened live (to be followed with readMore). */
let openedLive = false;
type Request = Extract<ToWorker, { kind: 'request' }>;
/** Requests that arrived while the file was still being read. */
const waiting: Request[] = [];

function post(message: FromWorker, transfer: readonly unknown[] = []): void {
  port.postMessage(message, transfer as TransferListItem[]);
}

/** The price book over the library's prices and the user's `agentTrace.prices` (as written; unreadable entries are left out, as the host says). */
function priceBookOf(prices: unknown): PriceBook | null {
  if (prices === null) return null;
  return createPriceBook({ user: readUserPrices(prices ?? []), userLabel: 'agentTrace.prices' });
}

/**
 * Pushes bytes [from, end of file) of file `index` into the parse; progress for the
 * opened file. Only a regular file is read, the one the host listed (traceFiles), and
 * for a live trace only the file seen when it was first read (`expect`: a file put in
 * its place is not read on from the old one's offset). Answers the bytes it read.
 */
async function readInto(
  parse: TraceParse,
  index: number,
  file: Extract<WorkerFile, { path: string }>,
  from: number,
  totalBytes: number | null,
): Promise<number> {
  let read = from;
  let reported = from;
  const chunks = regularFileChunks(file.path, {
    noFollow: file.noFollow ?? false,
    ...(file.expect ? { expect: file.expect } : {}),
    start: from,
  });
  for await (const chunk of chunks) {
    read += chunk.length;
    if (index === 0 && read - reported >= PROGRESS_BYTES) {
      reported = read;
      post({ kind: 'progress', bytesRead: read, totalBytes });
    }
    if (!parse.push(index, chunk)) break;
  }
  if (index === 0) post({ kind: 'progress', bytesRead: read, totalBytes });
  return read - from;
}

/** The file as it is on disk now, by path: which file (inode) and its size; null when it is gone. */
async function onDisk(
  file: Extract<WorkerFile, { path: string }>,
): Promise<{ ino: number; dev: number; size: number } | null> {
  try {
    const s = await (file.noFollow ? lstat(file.path) : stat(file.path));
    return { ino: s.ino, dev: s.dev, size: s.size };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** A file to follow, pinned to the file it is now (its inode), so a later read notices a replacement. */
async function pinned(file: WorkerFile): Promise<WorkerFile> {
  if (!('path' in file) || file.expect) return file;
  const now = await onDisk(file);
  return now ? { ...file, expect: { ino: now.ino, dev: now.dev } } : file;
}

/** What the host needs first about the parse as it stands (a new service on its snapshot). */
function answerFor(parse: TraceParse, params: OpenParams, t0: number): OpenedTrace {
  const previous = service;
  service = new TraceService(parse.snapshot(), {
    fileName: params.fileName,
    formatChosen: params.format !== null,
    analysis: params.analysis,
    prices: priceBookOf(params.prices),
  });
  if (previous) {
    service.setAnalysisOptions(previous.analysisOptionsInUse);
    service.setPrices(previous.pricesInUse);
  }
  const header = service.header();
  return {
    header,
    sessions: service.sessionList({ query: '', offset: 0, limit: SESSION_PAGE_SIZE }),
    intro: header.defaultSessionId === null ? null : service.sessionIntro({ sessionId: header.defaultSessionId }),
    parseMs: performance.now() - t0,
  };
}

async function open(params: OpenParams): Promise<void> {
  const t0 = performance.now();
  const parse = new TraceParse(
    params.files.map((f) => f.key),
    params.format ? { format: params.format } : {},
  );
  const files: (WorkerFile | null)[] = [...params.files];
  for (let i = 0; i < params.files.length && !parse.stopped; i++) {
    let f = params.files[i]!;
    // Companions of a file whose format has none (only Claude Code's has) are not even opened.
    if (i > 0 && !parse.acceptsCompanions()) break;
    try {
      // A live trace is followed in the files read now: each is pinned to its inode before its first byte is read.
      if (params.live) files[i] = f = await pinned(f);
      if ('bytes' in f) parse.push(i, f.bytes);
      else await readInto(parse, i, f, 0, i === 0 ? params.totalBytes : null);
    } catch (e) {
      // The opened file must be readable; a companion that is not (gone, swapped for a link) is said and left out.
      if (i === 0) throw e;
      parse.unreadable(i, e);
      files[i] = null;
      continue;
    }
    // A live file keeps a half-written last line for the next read.
    if (!params.live) parse.endFile(i);
  }
  parse.notes(params.notes ?? []);
  // Only a live trace keeps its parse (the readers' state) for readMore; otherwise the model is all that stays.
  reading = params.live ? { parse, files, params } : null;
  traceFiles = files;
  openedLive = params.live ?? false;
  post({ kind: 'opened', opened: answerFor(parse, params, t0) });
}

/**
 * Live tail: the bytes each file gained since the last read, and new companion files.
 * The opened file gone, replaced (another inode at its path: a rotation) or shorter than
 * what was read (truncated) cannot be read on: the answer says to read it from scratch.
 */
async function readMore(newFiles: { key: string; path: string }[]): Promise<MoreRead> {
  // A trace read once keeps no parse to resume: it is read again.
  if (!reading) return { kind: 'reopen', reason: service && !openedLive ? 'not-live' : 'stopped' };
  const { parse, files, params } = reading;
  if (!params.live) return { kind: 'reopen', reason: 'not-live' };
  if (parse.stopped) return { kind: 'reopen', reason: 'stopped' };
  const t0 = performance.now();
  for (const f of newFiles) files[parse.addFile(f.key)] = await pinned({ key: f.key, path: f.path, noFollow: true });
  traceFiles = files;
  let newBytes = 0;
  for (let i = 0; i < files.length; i++) {
    const f = files[i];
    if (!f || !('path' in f) || (i > 0 && !parse.acceptsCompanions())) continue;
    const now = await onDisk(f);
    const from = parse.bytesRead(i);
    if (i === 0) {
      if (now === null) return { kind: 'reopen', reason: 'deleted' };
      if (f.expect && (now.ino !== f.expect.ino || now.dev !== f.expect.dev))
        return { kind: 'reopen', reason: 'replaced' };
    }
    // A companion that went or was replaced keeps what was read of it; one that shrank is a rewrite of the trace.
    if (now === null || (f.expect && (now.ino !== f.expect.ino || now.dev !== f.expect.dev))) continue;
    if (now.size < from) return { kind: 'reopen', reason: 'truncated' };
    if (now.size > from) newBytes += await readInto(parse, i, f, from, i === 0 ? now.size : null);
  }
  return {
    kind: 'read',
    opened: answerFor(parse, params, t0),
    bytesRead: files.map((_, i) => parse.bytesRead(i)),
    newBytes,
  };
}

/** The typed arrays of an answer, moved to the host rather than copied. */
function transferables(value: unknown): TransferListItem[] {
  if (value instanceof Int32Array) return [value.buffer as ArrayBuffer];
  const body = value as SessionBody | null;
  if (body && typeof body === 'object' && 'columns' in body) {
    const { cost, ...tokens } = body.columns;
    return [...Object.values(tokens), ...(cost ? Object.values(cost) : [])].map(
      (c: ArrayBufferView) => c.buffer as ArrayBuffer,
    );
  }
  return [];
}

type OwnHandlers = {
  [M in WorkerOwnMethod]: (s: TraceService, p: TraceWorkerMethods[M]['params']) => TraceWorkerMethods[M]['result'];
};

/** What the host asks besides the trace queries (those go to the service by their names: askQuery). */
const ownHandlers: OwnHandlers = {
  header: (s) => s.header(),
  sourceOf: (s, p) => s.sourceOf(p.sessionId, p.callIndex, p.toolId),
  // Answered asynchronously (it reads files); see `answer`.
  callTranscript: () => {
    throw new Error('callTranscript is asynchronous');
  },
  whatIfWorkload: (s, p) => s.whatIfWorkload(p.sessionId, p.filePath, p.format),
  report: (s) => s.report(),
  problems: (s) => s.problems(),
  setAnalysisOptions: (s, p) => {
    s.setAnalysisOptions(p.analysis);
    return null;
  },
  setPrices: (s, p) => {
    s.setPrices(priceBookOf(p.prices));
    return null;
  },
  // Answered asynchronously (it reads files); see `answer`.
  readMore: () => {
    throw new Error('readMore is asynchronous');
  },
};

/** The context anatomy's source being collected, and for which service (a read again makes a new one). */
let contextLoad: { service: TraceService; done: Promise<void> } | null = null;

/**
 * Gives the service what its context anatomy is built from, once, when the page first asks:
 * the tokenizer (its ranks take seconds to load, so never at open) and, for a Claude Code or Codex log,
 * the text of every message, collected by reading the trace's own files again beside a parse
 * (the open parse keeps no text). Bytes past what the service's parse read are not read.
 */
function ensureContext(s: TraceService): Promise<void> {
  if (s.hasContextSource) return Promise.resolve();
  if (contextLoad?.service === s) return contextLoad.done;
  const done = (async (): Promise<void> => {
    const { collector, tokenizer, notes } = await newContextCollector();
    const model = s.model;
    let content = null;
    if (model.format === 'claude-code' || model.format === 'codex') {
      const parse = new TraceParse(model.files, { format: model.format, recordTap: (r) => collector.record(r) });
      const files = traceFiles;
      for (let i = 0; i < files.length && i < model.files.length; i++) {
        const f = files[i];
        if (!f) continue;
        const limit = reading ? reading.parse.bytesRead(i) : Number.POSITIVE_INFINITY;
        if ('bytes' in f) parse.push(i, f.bytes.subarray(0, Math.min(f.bytes.length, limit)));
        else {
          let read = 0;
          for await (const chunk of regularFileChunks(f.path, {
            noFollow: f.noFollow ?? false,
            ...(f.expect ? { expect: f.expect } : {}),
            start: 0,
          })) {
            const piece = read + chunk.length > limit ? chunk.subarray(0, Math.max(0, limit - read)) : chunk;
            read += piece.length;
            if (!parse.push(i, piece) || read >= limit) break;
          }
        }
        parse.endFile(i);
      }
      content = collector.contentFor(model.format);
    }
    if (service === s)
      s.setContextSource({
        content,
        tokenizer,
        notes: notes(),
      });
  })();
  contextLoad = { service: s, done };
  // A failed read is said to the page (the request's error) and tried again on the next ask.
  done.catch(() => {
    if (contextLoad?.done === done) contextLoad = null;
  });
  return done;
}

/** Requests are answered one at a time, in order: a `readMore` in flight holds the ones after it. */
let busy: Promise<void> = Promise.resolve();

function answer(m: Request): void {
  if (!service) {
    waiting.push(m);
    return;
  }
  if (m.method === 'readMore') {
    const p = m.params as TraceWorkerMethods['readMore']['params'];
    busy = busy.then(() => respond(post, m.id, () => readMore(p.newFiles ?? [])));
    return;
  }
  if (m.method === 'sessionContext') {
    // Collected once, off the host and the page; other requests are answered between its chunks.
    void busy.then(() =>
      respond(post, m.id, () =>
        ensureContext(service!).then(() =>
          askQuery(service!, 'sessionContext', m.params as TraceQueryParams<'sessionContext'>),
        ),
      ),
    );
    return;
  }
  if (m.method === 'callTranscript') {
    const p = m.params as TraceWorkerMethods['callTranscript']['params'];
    void busy.then(() => respond(post, m.id, () => callTranscript(service!, traceFiles, p)));
    return;
  }
  void busy.then(() => answerNow(m));
}

function answerNow(m: Request): void {
  const s = service;
  if (!s) return;
  respond(
    post,
    m.id,
    () => {
      if (isTraceQuery(m.method)) return askQuery(s, m.method, m.params as TraceQueryParams<typeof m.method>);
      if (!Object.hasOwn(ownHandlers, m.method)) throw new Error(`unknown method ${String(m.method)}`);
      return (ownHandlers[m.method as WorkerOwnMethod] as (s: TraceService, p: unknown) => unknown)(s, m.params);
    },
    { transfer: transferables },
  );
}

port.on('message', (m: ToWorker) => {
  if (m.kind === 'open') {
    open(m.params).then(
      () => {
        for (const w of waiting.splice(0)) answer(w);
      },
      (e: unknown) =>
        post({
          kind: 'openFailed',
          message: e instanceof Error ? e.message : String(e),
          code: (e as NodeJS.ErrnoException | null)?.code ?? null,
          notRegular: e instanceof NotRegularFileError,
        }),
    );
    return;
  }
  answer(m);
});
