import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Redactor } from '../../core/redact/redactor';
import { WorkerRpc } from '../../protocol/workerRpc';
import { EXPORT_YOUNG_GENERATION_MB } from '../youngGeneration';
import type { RpcRequest, RpcResponse } from '../../protocol/workerRpc';
import { answerRedaction } from './exportRows';
import type { ExportJob, ExportOutcome, ExportSettings, RedactionAnswer, RedactionRequest } from './exportRows';

/**
 * Parse threads for `export --to parquet` (dist/teamExportWorker.js), as the session index
 * has for a cold index (src/node/sessions/parsePool.ts). Each thread reads, parses, builds
 * the rows of and writes the Parquet files of one source at a time; the one thing it asks
 * the CLI's thread for is the redaction of its trace's distinct texts, because the export
 * has one redactor (its placeholders number a secret alike in every trace, and an id learnt
 * in one trace is left as an id in the next). Those requests are answered strictly in the
 * order of the sources, whichever thread is first, so the files are those one thread
 * writes, byte for byte (test/unit/cli/team.test.ts).
 */

/** What every export thread is started with: the settings, and whether its texts are redacted (false: --no-redact). */
export type ExportWorkerData = ExportSettings & { redact: boolean };

/** What a thread answers (WorkerRpc): one source exported. */
export interface ExportWorkerMethods {
  /** `seq`: the job's place in the export's order, which its redaction request names. */
  export: { params: { job: ExportJob; seq: number }; result: ExportOutcome };
}
/** CLI → thread: a job, or the answer to a redaction the thread asked for. */
export type ExportWorkerRequest =
  | RpcRequest<ExportWorkerMethods>
  | { kind: 'redacted'; id: number; answer: RedactionAnswer }
  | { kind: 'redacted'; id: number; error: string };
/** Thread → CLI: a job's answer, or a trace's texts to redact (`seq`: the job's). */
export type ExportWorkerReply = RpcResponse | { kind: 'redact'; id: number; seq: number; request: RedactionRequest };

/** `AGENT_TRACE_EXPORT_THREADS=N` sets the number of threads (0: the CLI's own thread only). */
export const EXPORT_THREADS_VARIABLE = 'AGENT_TRACE_EXPORT_THREADS';

/**
 * Threads for an export of `sources` traces: one per core (at most 4) from two traces on; two
 * when the machine is already saturated. (The session index parses in its own thread then: it
 * runs beside the editor. The export is a job of its own, whose threads each carry about 2.6×
 * a plain parse's work (parse, rows, Parquet); with one thread it took 0.89–1.87× the
 * one-thread cold index at load 6–8, bench:team.)
 */
export function exportThreadsFor(
  sources: number,
  env: NodeJS.ProcessEnv = process.env,
  cores = availableParallelism(),
  loadAverage = loadavg()[0] ?? 0,
): number {
  const set = env[EXPORT_THREADS_VARIABLE];
  if (set !== undefined && /^\d+$/.test(set.trim())) return Math.min(16, Number(set.trim()));
  if (sources < 2 || cores < 2) return 0;
  if (loadAverage >= cores) return Math.min(2, sources);
  return Math.min(4, cores, sources);
}

/**
 * Which thread takes the next source: the one with the fewest sources not yet at their
 * redaction (queued or being parsed), then the fewest in flight. A thread whose sources all
 * wait for their redaction, behind a large source the other thread is still parsing, has
 * nothing to do: counting sources in flight would queue the next one behind that large one
 * instead, and leave this thread idle (docs/performance.md, "Issue 30, thirteenth session").
 */
export function threadForNextJob(threads: ReadonlyArray<{ unparsed: number; inFlight: number }>): number {
  let best = 0;
  for (let t = 1; t < threads.length; t++) {
    const a = threads[t]!;
    const b = threads[best]!;
    if (a.unparsed < b.unparsed || (a.unparsed === b.unparsed && a.inFlight < b.inFlight)) best = t;
  }
  return best;
}

interface ExportThread {
  worker: Worker;
  rpc: WorkerRpc<ExportWorkerMethods>;
  inFlight: number;
  /** Its jobs not yet at their redaction (queued or being parsed): the work it has before it can wait. */
  unparsed: number;
}

export class ExportPool {
  private readonly threads: ExportThread[] = [];
  /** Per job (by its seq): the gate its redaction waits for, and how its own opens (once it is redacted or done). */
  private readonly turns = new Map<number, { previous: Promise<void>; open: () => void; parsed: () => void }>();
  private seq = 0;
  /** The gate of the last job handed out: the next job's redaction waits for it. */
  private last: Promise<void> = Promise.resolve();

  constructor(script: string, size: number, settings: ExportSettings, redactor: Redactor | null) {
    for (let t = 0; t < size; t++) {
      const worker = new Worker(script, {
        workerData: { ...settings, redact: redactor !== null } satisfies ExportWorkerData,
        resourceLimits: { maxYoungGenerationSizeMb: EXPORT_YOUNG_GENERATION_MB },
      });
      const thread: ExportThread = {
        worker,
        rpc: new WorkerRpc<ExportWorkerMethods>((request) => worker.postMessage(request satisfies ExportWorkerRequest)),
        inFlight: 0,
        unparsed: 0,
      };
      worker.on('message', (m: ExportWorkerReply) => {
        if (thread.rpc.receive(m)) return;
        if (m.kind !== 'redact') return;
        const turn = this.turns.get(m.seq);
        turn?.parsed();
        const reply = (r: ExportWorkerRequest): void => worker.postMessage(r);
        void (turn?.previous ?? Promise.resolve())
          .then(() => {
            if (!redactor) throw new Error('redaction is off');
            return answerRedaction(m.request, redactor);
          })
          .then(
            (answer) => reply({ kind: 'redacted', id: m.id, answer }),
            (e: unknown) => reply({ kind: 'redacted', id: m.id, error: e instanceof Error ? e.message : String(e) }),
          )
          .finally(() => turn?.open());
      });
      worker.on('error', (e) => thread.rpc.stop(e));
      worker.on('exit', (code) => thread.rpc.stop(new Error(`an export thread stopped (exit code ${code})`)));
      this.threads.push(thread);
    }
  }

  /**
   * Exports one source on the least busy thread. Call in the sources' order: that order is
   * the redactor's. A thread that stopped (out of memory on one trace) answers "not read".
   */
  run(job: ExportJob): Promise<ExportOutcome> {
    const thread = this.threads[threadForNextJob(this.threads)]!;
    const previous = this.last;
    let resolve!: () => void;
    const own = new Promise<void>((r) => (resolve = r));
    // Opened only after the one before it: a job that ends unredacted never lets a later one overtake an earlier.
    let opened = false;
    const open = (): void => {
      if (opened) return;
      opened = true;
      void previous.then(resolve);
    };
    this.last = own;
    thread.inFlight += 1;
    thread.unparsed += 1;
    let parsing = true;
    const parsed = (): void => {
      if (!parsing) return;
      parsing = false;
      thread.unparsed -= 1;
    };
    const seq = this.seq++;
    this.turns.set(seq, { previous, open, parsed });
    const done = (): void => {
      parsed();
      thread.inFlight -= 1;
      this.turns.delete(seq);
      open();
    };
    return thread.rpc.request('export', { job, seq }).then(
      (outcome) => {
        done();
        return outcome;
      },
      (e: unknown): ExportOutcome => {
        done();
        return { kind: 'notRead', message: e instanceof Error ? e.message : String(e) };
      },
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map(({ worker }) => worker.terminate()));
  }
}
