import { NotRegularFileError } from './traceFiles';
import { Worker } from 'node:worker_threads';
import type { TransferListItem } from 'node:worker_threads';
import { READER_YOUNG_GENERATION_MB } from './youngGeneration';
import type {
  FromWorker,
  OpenedTrace,
  OpenParams,
  ToWorker,
  TraceWorkerMethods,
  WorkerMethod,
} from '../protocol/traceWorkerProtocol';
import { WorkerRpc } from '../protocol/workerRpc';

/**
 * Heap the worker may use before it is stopped (it shares the extension host's process, so
 * this guards the host, which should stay under 1 GB). V8 also sizes its collections by it:
 * with 1,536 MB the worker let garbage pile up to ~150 MB higher before collecting it on a
 * million-call trace whose model holds ~450 MB; a million calls need ~500 MB at the most.
 */
export const WORKER_HEAP_MB = 1024;

/** Raised when reading was cancelled (the worker was stopped on purpose). */
export class TraceCancelledError extends Error {}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/**
 * One trace worker, seen from the host: `open` reads the file in the worker (progress
 * comes back as it goes), then `request` asks about it. `cancel` stops the worker at
 * once, freeing its memory; every pending promise rejects. Owns the worker thread.
 */
export class TraceWorkerClient {
  private readonly worker: Worker;
  private readonly rpc: WorkerRpc<TraceWorkerMethods>;
  private opening: Pending | null = null;
  private stopped: Error | null = null;
  private onProgress: ((bytesRead: number, totalBytes: number | null) => void) | null = null;

  constructor(workerScript: string, heapMb = WORKER_HEAP_MB, youngMb: number | null = READER_YOUNG_GENERATION_MB) {
    this.worker = new Worker(workerScript, {
      resourceLimits: {
        maxOldGenerationSizeMb: heapMb,
        ...(youngMb !== null ? { maxYoungGenerationSizeMb: youngMb } : {}),
      },
    });
    this.rpc = new WorkerRpc((request) => this.post(request));
    this.worker.on('message', (m: FromWorker) => this.receive(m));
    this.worker.on('error', (e: Error & { code?: string }) => {
      const message =
        e.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `the trace needs more than the ${heapMb} MB of memory the inspector allows itself`
          : e.message;
      this.fail(new Error(message));
    });
    this.worker.on('exit', (code) => {
      if (!this.stopped) this.fail(new Error(`the trace reader stopped (exit code ${code})`));
    });
  }

  /** Reads the trace; resolves with what the page needs first, rejects with why it could not. */
  open(params: OpenParams, onProgress: (bytesRead: number, totalBytes: number | null) => void): Promise<OpenedTrace> {
    if (this.stopped) return Promise.reject(this.stopped);
    this.onProgress = onProgress;
    // Bytes move to the worker rather than being copied; a view over a shared or pooled buffer is copied first.
    const files = params.files.map((f) =>
      'bytes' in f && (f.bytes.byteOffset !== 0 || f.bytes.byteLength !== f.bytes.buffer.byteLength)
        ? { key: f.key, bytes: f.bytes.slice() }
        : f,
    );
    const transfer: TransferListItem[] = files.flatMap((f) =>
      'bytes' in f && f.bytes.buffer instanceof ArrayBuffer ? [f.bytes.buffer] : [],
    );
    return new Promise<OpenedTrace>((resolve, reject) => {
      this.opening = { resolve: resolve as (v: unknown) => void, reject };
      this.post({ kind: 'open', params: { ...params, files } }, transfer);
    });
  }

  /** Asks the worker about the open trace. */
  request<M extends WorkerMethod>(
    method: M,
    params: TraceWorkerMethods[M]['params'],
  ): Promise<TraceWorkerMethods[M]['result']> {
    if (this.stopped) return Promise.reject(this.stopped);
    return this.rpc.request(method, params);
  }

  /** Stops the worker now: reading ends, memory is freed, pending answers reject with `reason`. */
  cancel(reason: Error = new TraceCancelledError('reading was cancelled')): void {
    if (this.stopped) return;
    this.fail(reason);
    void this.worker.terminate();
  }

  dispose(): void {
    this.cancel(new TraceCancelledError('the trace was closed'));
  }

  get isStopped(): boolean {
    return this.stopped !== null;
  }

  private post(message: ToWorker, transfer: TransferListItem[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  private fail(error: Error): void {
    if (this.stopped) return;
    this.stopped = error;
    this.opening?.reject(error);
    this.opening = null;
    this.rpc.stop(error);
    void this.worker.terminate();
  }

  private receive(m: FromWorker): void {
    if (this.rpc.receive(m)) return;
    switch (m.kind) {
      case 'progress':
        this.onProgress?.(m.bytesRead, m.totalBytes);
        return;
      case 'opened':
        this.opening?.resolve(m.opened);
        this.opening = null;
        return;
      case 'openFailed':
        this.opening?.reject(
          m.notRegular
            ? new NotRegularFileError(m.message)
            : Object.assign(new Error(m.message), m.code ? { code: m.code } : {}),
        );
        this.opening = null;
        return;
    }
  }
}
