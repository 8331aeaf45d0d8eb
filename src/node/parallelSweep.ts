import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { engineByName } from '../core/sim/engines/engineTable';
import type { EngineName } from '../core/sim/engines/engineTypes';
import { ParamError } from '../core/sim/params';
import type { ScenarioOptions, ScenarioResult } from '../core/sim/scenario';
import { runScenario } from '../core/sim/scenario';
import {
  DEFAULT_CLIFF,
  DEFAULT_TARGET_HIT_RATE,
  findCliff,
  planGpus,
  runSweep,
  sweepScenarios,
} from '../core/sim/sweep';
import type { CliffOptions, SweepAxis, SweepPoint, SweepResult } from '../core/sim/sweep';
import type { Workload } from '../core/sim/workload';
import { SWEEP_PARAM_ERROR } from '../protocol/sweepWorkerProtocol';
import type {
  SweepWorkerData,
  SweepWorkerMethods,
  SweepWorkerReply,
  SweepWorkerRequest,
} from '../protocol/sweepWorkerProtocol';
import { RpcError, WorkerRpc } from '../protocol/workerRpc';

export interface ThreadedSweepOptions {
  /** Points run at once; 1 runs them in this thread, one after another. */
  threads: number;
  /** The worker script: the bundled src/node/sweepWorker.ts (dist/sweepWorker.js). */
  workerScript: string;
  onPoint?: (done: number, total: number) => void;
}

/**
 * Simulated calls below which starting threads costs more than it saves. Measured on this
 * repository's 2-core machine: a sweep of 24,000–40,000 calls ran 25–40% slower on two
 * threads (worker start-up, and two engine runs at once each slow down), one of 111,000
 * 10% faster, the 845,000-call benchmark sweep 1.4× faster.
 */
const THREADS_WORTH_IT_CALLS = 100_000;

/**
 * Threads for a sweep when the user did not say: one per core, but none for a sweep so
 * small that starting workers (tens of ms each, and a copy of the workload) would
 * outweigh it.
 */
export function autoThreads(
  workload: Workload,
  base: ScenarioOptions,
  axis: SweepAxis,
  values: readonly number[],
): number {
  const points = new Set(values).size;
  let calls: number;
  if (workload.kind === 'requests') calls = workload.requests.length * points;
  else {
    const perReplica = workload.sessions.reduce((n, s) => n + s.calls.length, 0);
    // Over GPUs every point runs all the replicas (on more GPUs): it costs like a capacity point.
    const replicas =
      axis === 'replicas' ? [...new Set(values)].reduce((n, v) => n + v, 0) : (base.replicas?.replicas ?? 1) * points;
    calls = perReplica * replicas;
  }
  return calls < THREADS_WORTH_IT_CALLS ? 1 : Math.max(1, Math.min(availableParallelism(), points));
}

/**
 * runSweep with the points spread over worker threads: the same points, the same results
 * (each point is one deterministic run, whichever thread runs it), the same cliff.
 * Points are handed out one at a time, the costliest first (the most replicas; a
 * capacity sweep's points cost about the same), so a thread that drew a cheap point
 * takes the next. A point's ParamError comes back as a ParamError.
 */
export async function runSweepOnThreads(
  engine: EngineName,
  workload: Workload,
  base: ScenarioOptions,
  axis: SweepAxis,
  values: readonly number[],
  cliffOptions: CliffOptions = DEFAULT_CLIFF,
  options: ThreadedSweepOptions,
): Promise<SweepResult> {
  // A sweep runs each distinct value once (sweepScenarios); in this thread runSweep builds the scenarios itself.
  const threads = Math.min(options.threads, new Set(values).size);
  if (threads <= 1) return runSweep(engineByName(engine), workload, base, axis, values, cliffOptions, options.onPoint);
  const scenarios = sweepScenarios(base, axis, values);
  const order = scenarios.map((_, i) => i);
  if (axis === 'replicas') order.reverse();
  const results: Array<ScenarioResult | undefined> = new Array(scenarios.length);
  const data: SweepWorkerData = { engine, workload, scenarios };
  const workers: Worker[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      let next = 0;
      let done = 0;
      const give = (rpc: WorkerRpc<SweepWorkerMethods>): void => {
        if (next >= order.length) return;
        const index = order[next++]!;
        rpc.request('point', { index }).then(
          (result) => {
            results[index] = result;
            done++;
            options.onPoint?.(done, scenarios.length);
            if (done === scenarios.length) resolve();
            else give(rpc);
          },
          (e: Error) => reject(e instanceof RpcError && e.code === SWEEP_PARAM_ERROR ? new ParamError(e.message) : e),
        );
      };
      for (let t = 0; t < threads; t++) {
        const w = new Worker(options.workerScript, { workerData: data });
        workers.push(w);
        const rpc = new WorkerRpc<SweepWorkerMethods>((request: SweepWorkerRequest) => w.postMessage(request));
        w.on('message', (reply: SweepWorkerReply) => rpc.receive(reply));
        w.on('error', (e) => {
          rpc.stop(e);
          reject(e);
        });
        w.on('exit', (code) => {
          const error = new Error(
            `a sweep worker stopped (exit code ${code}) with ${scenarios.length - done} points left`,
          );
          rpc.stop(error);
          if (done < scenarios.length) reject(error);
        });
        give(rpc);
      }
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  const points: SweepPoint[] = scenarios.map(({ value }, i) => ({ value, result: results[i]! }));
  const cliff = findCliff(axis, points, workload, cliffOptions);
  if (axis !== 'gpus') return { axis, points, cliff };
  // The planner's search runs its few extra points here, one after another.
  const run = engineByName(engine);
  return {
    axis,
    points,
    cliff,
    plan: planGpus(points, base, cliffOptions.targetHitRate ?? DEFAULT_TARGET_HIT_RATE, (o) =>
      runScenario(run, workload, o),
    ),
  };
}
