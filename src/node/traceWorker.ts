// The trace worker: reads and parses one trace off the extension host's event loop, then
// keeps the model and answers what the inspector asks about it (traceWorkerProtocol.ts).
// The host starts one per open trace document and terminates it to cancel or to close.
import { createReadStream } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { TransferListItem } from 'node:worker_threads';
import { parseTrace } from '../core/trace/parseTrace';
import type { TraceFile } from '../core/trace/parseTrace';
import { TraceService } from '../core/view/traceService';
import type { SessionBody } from '../core/view/traceService';
import type { FromWorker, OpenParams, ToWorker, TraceWorkerMethods, WorkerMethod } from './traceWorkerProtocol';
import { SESSION_PAGE_SIZE } from '../protocol/messages';

/** Read buffer per stream, as the CLI reads. */
const CHUNK_BYTES = 256 * 1024;
/** Progress is posted at most this often (bytes of the main file). */
const PROGRESS_BYTES = 8 * 2 ** 20;

const port = parentPort!;
let service: TraceService | null = null;
/** Requests that arrived while the file was still being read. */
const waiting: Extract<ToWorker, { kind: 'request' }>[] = [];

function post(message: FromWorker, transfer: TransferListItem[] = []): void {
  port.postMessage(message, transfer);
}

async function* counted(path: string, totalBytes: number | null): AsyncGenerator<Uint8Array> {
  let read = 0;
  let reported = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Uint8Array>) {
    read += chunk.length;
    if (read - reported >= PROGRESS_BYTES) {
      reported = read;
      post({ kind: 'progress', bytesRead: read, totalBytes });
    }
    yield chunk;
  }
  post({ kind: 'progress', bytesRead: read, totalBytes });
}

async function open(params: OpenParams): Promise<void> {
  const t0 = performance.now();
  const files: TraceFile[] = params.files.map((f, i) => ({
    key: f.key,
    bytes: 'bytes' in f ? f.bytes : i === 0 ? counted(f.path, params.totalBytes) : (createReadStream(f.path, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Uint8Array>),
  }));
  const parsed = await parseTrace(files, params.format ? { format: params.format } : {});
  service = new TraceService(parsed, { fileName: params.fileName, formatChosen: params.format !== null, analysis: params.analysis });
  const header = service.header();
  post({
    kind: 'opened',
    opened: {
      header,
      sessions: service.sessionList('', 0, SESSION_PAGE_SIZE),
      intro: header.defaultSessionId === null ? null : service.intro(header.defaultSessionId),
      parseMs: performance.now() - t0,
    },
  });
}

/** The typed arrays of an answer, moved to the host rather than copied. */
function transferables(value: unknown): TransferListItem[] {
  if (value instanceof Int32Array) return [value.buffer as ArrayBuffer];
  const body = value as SessionBody | null;
  if (body && typeof body === 'object' && 'columns' in body) return Object.values(body.columns).map((c: ArrayBufferView) => c.buffer as ArrayBuffer);
  return [];
}

type Handler = { [M in WorkerMethod]: (s: TraceService, p: TraceWorkerMethods[M]['params']) => TraceWorkerMethods[M]['result'] };

const handlers: Handler = {
  header: (s) => s.header(),
  sessionList: (s, p) => s.sessionList(p.query, p.offset, p.limit),
  intro: (s, p) => s.intro(p.sessionId),
  body: (s, p) => s.body(p.sessionId),
  callRows: (s, p) => s.callRows(p.sessionId, p.from, p.count),
  toolRows: (s, p) => s.toolRows(p.sessionId, p.from, p.count),
  search: (s, p) => s.search(p.query, p.sessionId),
  callsUsingTool: (s, p) => s.callsUsingTool(p.sessionId, p.tool),
  callDetail: (s, p) => s.callDetail(p.sessionId, p.callIndex),
  sourceOf: (s, p) => s.sourceOf(p.sessionId, p.callIndex, p.toolId),
  whatIfWorkload: (s, p) => s.whatIfWorkload(p.sessionId, p.filePath, p.format),
  report: (s) => s.report(),
  problems: (s) => s.problems(),
  setAnalysisOptions: (s, p) => {
    s.setAnalysisOptions(p.analysis);
    return null;
  },
};

function answer(m: Extract<ToWorker, { kind: 'request' }>): void {
  if (!service) {
    waiting.push(m);
    return;
  }
  try {
    const handler = handlers[m.method] as (s: TraceService, p: unknown) => unknown;
    if (!handler) throw new Error(`unknown method ${String(m.method)}`);
    const ok = handler(service, m.params);
    post({ kind: 'response', id: m.id, ok }, transferables(ok));
  } catch (e) {
    post({ kind: 'response', id: m.id, err: e instanceof Error ? e.message : String(e) });
  }
}

port.on('message', (m: ToWorker) => {
  if (m.kind === 'open') {
    open(m.params).then(
      () => {
        for (const w of waiting.splice(0)) answer(w);
      },
      (e: unknown) => post({ kind: 'openFailed', message: e instanceof Error ? e.message : String(e) }),
    );
    return;
  }
  answer(m);
});
