import type { Workload } from '../../src/core/sim/workload';
import type {
  CompareJob,
  FromWorker,
  LaneName,
  ScenarioJob,
  SweepJob,
  ToWorker,
  WhatIfWorkerMethods,
  WorkerPost,
} from '../../src/protocol/whatIfWorkerProtocol';
import { RpcError, WorkerRpc } from '../../src/protocol/workerRpc';

/** A job without the ids the runner gives it. */
export type ScenarioRequest = Omit<ScenarioJob, 'type' | 'seq' | 'workloadId'>;
export type CompareRequest = Omit<CompareJob, 'type' | 'seq' | 'workloadId'>;
export type SweepRequest = Omit<SweepJob, 'type' | 'seq' | 'workloadId'>;

/** What the runner tells its owner: worker messages of current runs only, and failures to start. */
export interface RunnerCallbacks {
  message(m: FromWorker): void;
  /** The worker could not be started or died; the panel shows it. */
  failed(lane: LaneName, seq: number, error: string): void;
}

/** A worker and its requests. */
interface LaneWorker {
  worker: Worker;
  rpc: WorkerRpc<WhatIfWorkerMethods>;
}

/** A job as the runner posts it. */
type Job = ScenarioJob | CompareJob | SweepJob;

/** One worker and the job it is busy with. */
interface Lane {
  name: LaneName;
  worker: Promise<LaneWorker> | null;
  /** The seq it is working on, or null when idle. */
  busy: number | null;
  /** The seq the page wants; older messages are dropped. */
  current: number;
  loadedWorkload: number;
}

/**
 * Runs what-if jobs in three Web Workers: the scenario, the policy table, and the cliff
 * sweep, so neither a long sweep nor a slow policy (CPU offload on a long session) delays
 * the figures the controls change (and both CPU cores work). Owns the workers, the blob URL they start from, and the current
 * sequence number of each lane: a new job on a lane whose worker is still busy with an
 * older one terminates that worker (an engine run cannot be interrupted) and starts a
 * fresh one; messages of superseded jobs are dropped.
 *
 * The worker bundle is fetched and started from a `blob:` URL because the webview's own
 * files are cross-origin to the page (see webviewHtml.ts).
 */
export class WhatIfRunner {
  private script: Promise<string> | null = null;
  private seq = 0;
  private workloadId = 0;
  private workload: Workload | null = null;
  private readonly lanes: Record<LaneName, Lane> = {
    scenario: { name: 'scenario', worker: null, busy: null, current: -1, loadedWorkload: -1 },
    compare: { name: 'compare', worker: null, busy: null, current: -1, loadedWorkload: -1 },
    sweep: { name: 'sweep', worker: null, busy: null, current: -1, loadedWorkload: -1 },
  };
  private disposed = false;

  constructor(
    private readonly scriptUri: string,
    private readonly callbacks: RunnerCallbacks,
  ) {}

  /** The workload the next jobs run on. */
  setWorkload(workload: Workload): void {
    this.workload = workload;
    this.workloadId += 1;
  }

  /** Starts a scenario job (cancelling a stale one); returns its seq. */
  runScenario(request: ScenarioRequest): number {
    return this.start(this.lanes.scenario, (seq, workloadId) => ({ type: 'scenario', seq, workloadId, ...request }));
  }

  /** Starts a policy comparison (cancelling a stale one); returns its seq. */
  runCompare(request: CompareRequest): number {
    return this.start(this.lanes.compare, (seq, workloadId) => ({ type: 'compare', seq, workloadId, ...request }));
  }

  /** Starts a sweep job (cancelling a stale one); returns its seq. */
  runSweep(request: SweepRequest): number {
    return this.start(this.lanes.sweep, (seq, workloadId) => ({ type: 'sweep', seq, workloadId, ...request }));
  }

  /** Stops a lane's job, if any (the sweep of a panel that closed). */
  cancel(lane: LaneName): void {
    const l = this.lanes[lane];
    l.current = -1;
    if (l.busy !== null) this.kill(l);
  }

  /** Terminates both workers and releases the script. */
  dispose(): void {
    this.disposed = true;
    for (const l of Object.values(this.lanes)) this.kill(l);
    void this.script?.then((url) => URL.revokeObjectURL(url)).catch(() => undefined);
  }

  private start(lane: Lane, make: (seq: number, workloadId: number) => Job): number {
    const seq = ++this.seq;
    lane.current = seq;
    // Busy with a stale job: an engine run cannot be interrupted, so the worker goes.
    if (lane.busy !== null) this.kill(lane);
    lane.busy = seq;
    const workloadId = this.workloadId;
    const workload = this.workload;
    this.workerOf(lane).then(
      ({ rpc }) => {
        if (lane.current !== seq || this.disposed) return;
        // A worker that stopped rejects these too: the lane's failure was said (workerOf), so that is not said again.
        if (lane.loadedWorkload !== workloadId && workload) {
          rpc.request('load', { workloadId, workload }).catch(() => undefined);
          lane.loadedWorkload = workloadId;
        }
        const job = make(seq, workloadId);
        // The answer comes after every partial result the job posted: the job is over.
        rpc.request(job.type, job as never).then(
          ({ ms }) => this.receive(lane, { type: 'done', seq, job: lane.name, ms }),
          (e: unknown) => {
            if (e instanceof RpcError) this.receive(lane, { type: 'error', seq, job: lane.name, message: e.message });
          },
        );
      },
      (e: unknown) => {
        lane.busy = null;
        lane.worker = null;
        if (lane.current === seq)
          this.callbacks.failed(
            lane.name,
            seq,
            `the simulator could not start: ${e instanceof Error ? e.message : String(e)}`,
          );
      },
    );
    return seq;
  }

  private kill(lane: Lane): void {
    const w = lane.worker;
    lane.worker = null;
    lane.busy = null;
    lane.loadedWorkload = -1;
    void w
      ?.then(({ worker, rpc }) => {
        rpc.stop(new Error('the job was superseded'));
        worker.terminate();
      })
      .catch(() => undefined);
  }

  private workerOf(lane: Lane): Promise<LaneWorker> {
    if (!lane.worker) {
      lane.worker = this.blobUrl().then((url) => {
        const worker = new Worker(url, { name: `what-if ${lane.name}` });
        const rpc = new WorkerRpc<WhatIfWorkerMethods>((request: ToWorker) => worker.postMessage(request));
        worker.onmessage = (e: MessageEvent<WorkerPost>) => {
          if (!rpc.receive(e.data)) this.receive(lane, e.data as FromWorker);
        };
        worker.onerror = (e: ErrorEvent) => {
          e.preventDefault();
          const seq = lane.busy;
          this.kill(lane);
          if (seq !== null && seq === lane.current)
            this.callbacks.failed(lane.name, seq, `the simulator stopped: ${e.message || 'script error'}`);
        };
        return { worker, rpc };
      });
    }
    return lane.worker;
  }

  private receive(lane: Lane, m: FromWorker): void {
    if ((m.type === 'done' || m.type === 'error') && lane.busy === m.seq) lane.busy = null;
    if (m.seq !== lane.current) return;
    this.callbacks.message(m);
  }

  private blobUrl(): Promise<string> {
    this.script ??= fetch(this.scriptUri).then(async (response) => {
      if (!response.ok) throw new Error(`${response.status} ${response.statusText} fetching the worker script`);
      const text = await response.text();
      return URL.createObjectURL(new Blob([text], { type: 'text/javascript' }));
    });
    // A failed fetch is retried on the next job.
    this.script.catch(() => (this.script = null));
    return this.script;
  }
}
