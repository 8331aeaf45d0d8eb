import { parentPort, workerData } from 'node:worker_threads';
import type { ParseWorkerData, ParseWorkerReply, ParseWorkerRequest } from './parsePool';
import { indexPriceBook } from './parsePool';
import { readFresh } from './sessionIndexer';

/**
 * A parse thread of the session index (see ParsePool): reads session files from their
 * start and sends back their stored figures; it never opens the index.
 */
const port = parentPort;
if (!port) throw new Error('indexParseWorker.ts runs as a worker thread');
const data = workerData as ParseWorkerData;
const prices = indexPriceBook(data.userPrices);

/** One file at a time (the pool queues the next one here): one parse's memory, not two. */
let queue: Promise<void> = Promise.resolve();

port.on('message', (m: ParseWorkerRequest) => {
  queue = queue.then(() =>
    readFresh(m.job, data.analysis, prices).then(
      (result) => {
        // The saved parse is moved, not copied: into a buffer of its own first (zlib's output may share one).
        if ('state' in result && result.state) result.state = new Uint8Array(result.state);
        port.postMessage({ id: m.id, result } satisfies ParseWorkerReply, 'state' in result && result.state ? [result.state.buffer as ArrayBuffer] : []);
      },
      (e: unknown) => port.postMessage({ id: m.id, result: { readError: e instanceof Error ? e.message : String(e) } } satisfies ParseWorkerReply),
    ),
  );
});
