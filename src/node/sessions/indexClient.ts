import { Worker } from 'node:worker_threads';
import type { WorkerOptions } from 'node:worker_threads';
import type {
  IndexEvent,
  IndexMethod,
  IndexMethods,
  IndexRequest,
  WorkerMessage,
} from '../../protocol/indexWorkerProtocol';
import { WorkerRpc } from '../../protocol/workerRpc';

/**
 * The extension host's end of the index worker: requests as promises, events as a
 * callback. Node-only (no vscode), so the unit tests and the benchmark drive the same
 * worker the extension does.
 */
export class SessionIndexClient {
  private readonly worker: Worker;
  private readonly rpc: WorkerRpc<IndexMethods>;

  constructor(
    script: string,
    private readonly onEvent: (event: IndexEvent) => void,
    options: WorkerOptions = {},
  ) {
    // A pathological log must end the worker, not the extension host (its heap counts in the host's).
    this.worker = new Worker(script, { resourceLimits: { maxOldGenerationSizeMb: 1024 }, ...options });
    this.rpc = new WorkerRpc((request) => this.post(request));
    this.worker.on('message', (m: WorkerMessage) => this.receive(m));
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', (code) => this.fail(new Error(`the session index worker stopped (exit code ${code})`)));
  }

  private post(message: IndexRequest): void {
    this.worker.postMessage(message);
  }

  private receive(m: WorkerMessage): void {
    if (this.rpc.receive(m)) return;
    if ('event' in m) this.onEvent(m);
  }

  private fail(error: Error): void {
    this.rpc.stop(error);
  }

  /** True once the worker stopped (crashed, or out of memory): start a new client. */
  get stopped(): boolean {
    return this.rpc.stopped !== null;
  }

  request<M extends IndexMethod>(method: M, params: IndexMethods[M]['params']): Promise<IndexMethods[M]['result']> {
    return this.rpc.request(method, params);
  }

  /** Stops a running sync after the file it is reading (what it read so far stays indexed). */
  cancelSync(): void {
    if (!this.rpc.stopped) this.post({ kind: 'cancel' });
  }

  async dispose(): Promise<void> {
    let wait: ReturnType<typeof setTimeout> | undefined;
    try {
      // The worker releases its writer lease on close; a loaded machine may take a few seconds to get there.
      if (!this.rpc.stopped)
        await Promise.race([this.request('close', {}), new Promise((r) => (wait = setTimeout(r, 10_000)))]);
    } catch {
      // closing anyway
    } finally {
      // Cleared once the worker has answered: a pending timer would keep a process that is done alive for 10 s.
      clearTimeout(wait);
    }
    await this.worker.terminate();
  }
}
