import { parentPort } from 'node:worker_threads';
import type { ChunkResult, ParseChunkReply, ParseChunkRequest } from '../protocol/parseChunkProtocol';
import { respond } from '../protocol/workerRpc';
import { readChunk } from './parallelParse';

/**
 * A parse thread of one big trace file (see parseTraceParallel): splits the chunk it is
 * sent into lines, parses and checks each, and sends back the records slimmed by their
 * format, and the bytes of lines it leaves to the reader's thread (moved, not copied).
 */
const port = parentPort;
if (!port) throw new Error('parseChunkWorker.ts runs as a worker thread');
port.on('message', (m: ParseChunkRequest) => {
  respond(
    (reply: ParseChunkReply, transfer) => port.postMessage(reply, transfer as ArrayBuffer[]),
    m.id,
    () => readChunk(m.params),
    { transfer: (ok) => (ok as ChunkResult).out.flatMap((x) => (x.r ? [x.r.buffer as ArrayBuffer] : [])) },
  );
});
