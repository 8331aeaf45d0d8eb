import { Worker } from 'node:worker_threads';
import type { WorkerOptions } from 'node:worker_threads';
import type { IndexEvent, IndexMethod, IndexMethods, WorkerMessage } from './indexProtocol';

/**
 * The extension host's end of the index worker: requests as promises, events as a
 * callback. Node-only (no vscode), so the unit tests and the benchmark drive the same
 * worker the extension does.
 */
export class SessionIndexClient {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private exited: Error | null = null;

  constructor(
    script: string,
    private readonly onEvent: (event: IndexEvent) => void,
    options: WorkerOptions = {},
  ) {
    // A pathological log must end the worker, not the extension host (its heap counts in the host's).
    this.worker = new Worker(script, { resourceLimits: { maxOldGenerationSizeMb: 1024 }, ...options });
    this.worker.on('message', (m: WorkerMessage) => this.receive(m));
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', (code) => this.fail(new Error(`the session index worker stopped (exit code ${code})`)));
  }

  private receive(m: WorkerMessage): void {
    if ('event' in m) {
      this.onEvent(m);
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if ('err' in m) p.reject(new Error(m.err));
    else p.resolve(m.ok);
  }

  private fail(error: Error): void {
    this.exited ??= error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  /** True once the worker stopped (crashed, or out of memory): start a new client. */
  get stopped(): boolean {
    return this.exited !== null;
  }

  request<M extends IndexMethod>(method: M, params: IndexMethods[M]['params']): Promise<IndexMethods[M]['result']> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, method, params });
    });
  }

  /** Stops a running sync after the file it is reading (what it read so far stays indexed). */
  cancelSync(): void {
    if (!this.exited) this.worker.postMessage({ method: 'cancel' });
  }

  async dispose(): Promise<void> {
    try {
      // The worker releases its writer lease on close; a loaded machine may take a few seconds to get there.
      if (!this.exited) await Promise.race([this.request('close', {}), new Promise((r) => setTimeout(r, 10_000))]);
    } catch {
      // closing anyway
    }
    await this.worker.terminate();
  }
}
