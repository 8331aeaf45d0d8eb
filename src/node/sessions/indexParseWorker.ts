import { parentPort, workerData } from 'node:worker_threads';
import type { ParseWorkerData, ParseWorkerReply, ParseWorkerRequest } from './parsePool';
import { indexPriceBook } from './parsePool';
import { readFresh } from './sessionIndexer';
import type { FreshResult } from './sessionIndexer';
import { respond } from '../../protocol/workerRpc';

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
  const post = (reply: ParseWorkerReply, transfer: readonly unknown[]): void =>
    port.postMessage(reply, transfer as ArrayBuffer[]);
  queue = queue.then(() =>
    respond(
      post,
      m.id,
      () =>
        readFresh(m.params, data.analysis, prices).then(
          (result): FreshResult => {
            // The saved parse is moved, not copied: into a buffer of its own first (zlib's output may share one).
            if ('state' in result && result.state) result.state = new Uint8Array(result.state);
            return result;
          },
          (e: unknown): FreshResult => ({ readError: e instanceof Error ? e.message : String(e) }),
        ),
      {
        transfer: (result) => {
          const r = result as FreshResult;
          return 'state' in r && r.state ? [r.state.buffer as ArrayBuffer] : [];
        },
      },
    ),
  );
});
