import { parentPort, workerData } from 'node:worker_threads';
import { createPriceBook } from '../../core/cost/priceBook';
import { respond } from '../../protocol/workerRpc';
import type { ExportWorkerData, ExportWorkerReply, ExportWorkerRequest } from './exportPool';
import { exportOne } from './exportRows';
import type { RedactionAnswer, RedactionRequest } from './exportRows';

/**
 * An export thread of `export --to parquet` (see ExportPool): exports one source at a time
 * (read, parse, rows, Parquet files) and asks the CLI's thread to redact its texts.
 */
const port = parentPort;
if (!port) throw new Error('exportWorker.ts runs as a worker thread');
const settings = workerData as ExportWorkerData;
const book = createPriceBook();
const post = (reply: ExportWorkerReply): void => port.postMessage(reply);

let nextRedaction = 1;
const redactions = new Map<number, { resolve: (a: RedactionAnswer) => void; reject: (e: Error) => void }>();

/**
 * One source parsed at a time (the pool queues the next one here): one parse's memory, not
 * two. A source whose rows wait for their redaction lets the next one start parsing: the
 * redactor is the CLI's thread's, busy with the sources before it.
 */
let queue: Promise<void> = Promise.resolve();

port.on('message', (m: ExportWorkerRequest) => {
  if (m.kind === 'redacted') {
    const waiting = redactions.get(m.id);
    redactions.delete(m.id);
    if ('error' in m) waiting?.reject(new Error(m.error));
    else waiting?.resolve(m.answer);
    return;
  }
  const { job, seq } = m.params;
  const redact = (request: RedactionRequest): Promise<RedactionAnswer> =>
    new Promise((resolve, reject) => {
      const id = nextRedaction++;
      redactions.set(id, { resolve, reject });
      post({ kind: 'redact', id, seq, request });
    });
  queue = queue.then(
    () =>
      new Promise<void>((release) => {
        const redactThenRelease = (request: RedactionRequest): Promise<RedactionAnswer> => {
          release();
          return redact(request);
        };
        void Promise.resolve(
          respond(post, m.id, () => exportOne(job, settings, book, settings.redact ? redactThenRelease : null)),
        ).finally(release);
      }),
  );
});
