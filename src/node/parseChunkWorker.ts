import { parentPort } from 'node:worker_threads';
import { readChunk } from './parallelParse';
import type { ChunkRequest } from './parallelParse';

/**
 * A parse thread of one big trace file (see parseTraceParallel): splits the chunk it is
 * sent into lines, parses and checks each, and sends back the records slimmed by their
 * format, and the bytes of lines it leaves to the reader's thread.
 */
const port = parentPort;
if (!port) throw new Error('parseChunkWorker.ts runs as a worker thread');
port.on('message', (m: ChunkRequest) => {
  const result = readChunk(m);
  port.postMessage(result, result.transfer as ArrayBuffer[]);
});
