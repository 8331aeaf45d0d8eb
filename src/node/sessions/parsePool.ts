import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { AnalysisOptions } from '../../core/analysis/sessionAnalysis';
import type { PriceBook } from '../../core/cost/costTypes';
import { createPriceBook } from '../../core/cost/priceBook';
import { readUserPrices } from '../../core/cost/userPrices';
import { READ_CANCELLED } from './sessionIndexer';
import type { FreshJob, FreshReader, FreshResult } from './sessionIndexer';
import { WorkerRpc } from '../../protocol/workerRpc';
import type { RpcRequest, RpcResponse } from '../../protocol/workerRpc';

/**
 * Parse threads for a cold index: files read from their start (FreshJob) are parsed and
 * their figures computed on worker threads (dist/indexParseWorker.js), while the index
 * worker that started them stays the only writer of the SQLite file. Parsing is most of
 * a cold index's cost (bench/sessionIndex.bench.ts), so a machine with two cores indexes
 * about twice as fast. The figures are the same as one thread's: each file is one
 * deterministic readFresh, whichever thread runs it (test/unit/node/sessions).
 */

/** What every parse thread is started with: the settings the figures depend on. */
export interface ParseWorkerData {
  analysis: Partial<AnalysisOptions>;
  /** The user's own prices (`agentTrace.prices`, as set). */
  userPrices: unknown;
}

/** What a parse thread answers (WorkerRpc): one file read from its start. Its types are the index's own (src/node/sessions), so the protocol stays here. */
export interface ParseWorkerMethods {
  read: { params: FreshJob; result: FreshResult };
}
/** Pool → thread. */
export type ParseWorkerRequest = RpcRequest<ParseWorkerMethods>;
/** Thread → pool. */
export type ParseWorkerReply = RpcResponse;

/** The price book the index computes costs with: the user's prices over the list prices. */
export function indexPriceBook(userPrices: unknown): PriceBook {
  const user = readUserPrices(userPrices ?? []);
  return createPriceBook(user.entries.length > 0 ? { user, userLabel: 'agentTrace.prices' } : {});
}

/** New files worth starting threads for: fewer, or fewer bytes, are read sooner in the writer's thread than a thread starts (~100 ms). */
const POOL_MIN_FILES = 4;
const POOL_MIN_BYTES = 32 * 2 ** 20;

/**
 * Parse threads for a sync bringing these new files: one per core (at most 4), or none when
 * starting them would cost more than it saves (few or small files) or the machine is already
 * saturated. On this repository's shared 2-core machine at load average 15, two threads made a
 * cold index 11–22% slower than one (each thread's own JIT warm-up and heap, and no idle core to
 * run on), so a saturated machine indexes in the index worker's own thread, as before. Below
 * saturation every core is used: the load average trails by a minute and counts the work just
 * done (VS Code starting, the index's own first pass), and on the same machine idle a cold index
 * of 5 GB took 81 s with one parse thread (the load average said one core was busy) and 48.6 s
 * with two (bench:sessions, parse alone 47.9 s). (Windows reports no load average: every core counts as idle.)
 */
export function parseThreadsFor(
  newFiles: ReadonlyArray<{ sizeBytes: number }>,
  cores = availableParallelism(),
  loadAverage = loadavg()[0] ?? 0,
): number {
  const bytes = newFiles.reduce((n, f) => n + f.sizeBytes, 0);
  if (newFiles.length < POOL_MIN_FILES || bytes < POOL_MIN_BYTES) return 0;
  if (cores < 2 || loadAverage >= cores) return 0;
  return Math.min(4, cores, newFiles.length);
}

export class ReadCancelled extends Error {
  constructor() {
    super('the sync was cancelled');
    this.name = READ_CANCELLED;
  }
}

/** One parse thread and the reads it has in flight. */
interface ParseThread {
  worker: Worker;
  rpc: WorkerRpc<ParseWorkerMethods>;
  inFlight: number;
}

export class ParsePool implements FreshReader {
  readonly concurrency: number;
  private readonly workers: ParseThread[] = [];
  private closed = false;

  constructor(script: string, threads: number, data: ParseWorkerData) {
    // Two jobs queued per thread: a thread never waits on the writer to hand it the next file.
    this.concurrency = threads * 2;
    for (let t = 0; t < threads; t++) {
      // As the index worker: a pathological log ends its thread, not the extension host.
      const w = new Worker(script, { workerData: data, resourceLimits: { maxOldGenerationSizeMb: 1024 } });
      w.unref();
      const rpc = new WorkerRpc<ParseWorkerMethods>((request: ParseWorkerRequest) => w.postMessage(request));
      w.on('message', (reply: ParseWorkerReply) => rpc.receive(reply));
      w.on('error', (e) => rpc.stop(e));
      w.on('exit', (code) => rpc.stop(new Error(`a parse thread stopped (exit code ${code})`)));
      this.workers.push({ worker: w, rpc, inFlight: 0 });
    }
  }

  /** The thread with the fewest jobs (each file's cost differs, so two queued per thread balance well). */
  private leastBusy(): ParseThread {
    return [...this.workers].sort((a, b) => a.inFlight - b.inFlight)[0]!;
  }

  read(job: FreshJob): Promise<FreshResult> {
    if (this.closed) return Promise.reject(new Error('the parse threads were closed'));
    const thread = this.leastBusy();
    thread.inFlight += 1;
    const done = (): void => {
      thread.inFlight -= 1;
    };
    const answer = thread.rpc.request('read', job);
    answer.then(done, done);
    return answer;
  }

  /** Drops every read in flight at once (a cancelled cold index stops now, not after the files being parsed). */
  cancel(): void {
    this.closed = true;
    for (const { worker, rpc } of this.workers) {
      rpc.stop(new ReadCancelled());
      void worker.terminate();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map(({ worker }) => worker.terminate()));
  }
}
