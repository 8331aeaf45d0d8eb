import { enginesByPolicy, FAST_ENGINES } from '../../src/core/sim/engines/engineTable';
import { MemoEngine, WhatIfSim } from './whatIfSim';
import type { JobDone, ToWorker, WorkerPost } from '../../src/protocol/whatIfWorkerProtocol';
import { respond } from '../../src/protocol/workerRpc';

/**
 * The what-if simulator's Web Worker: runs the pure sim core (the fast engine, as
 * `agent-trace simulate` does) off the page's thread, so the panel never freezes. Owns
 * the simulator of the workload it was last sent; one job at a time, in order. The
 * page cancels a stale job by terminating the worker (an engine run cannot be
 * interrupted), so the worker never checks for cancellation itself.
 */

interface WorkerScope {
  postMessage(message: WorkerPost): void;
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
}

const scope = self as unknown as WorkerScope;
const post = (m: WorkerPost): void => scope.postMessage(m);

let workloadId = -1;
let sim: WhatIfSim | null = null;

/** Runs one request: a workload to keep, or a job whose partial results are posted as they come; its answer says it is over. */
function run(m: ToWorker): JobDone | null {
  if (m.method === 'load') {
    workloadId = m.params.workloadId;
    sim = new WhatIfSim(m.params.workload, new MemoEngine(enginesByPolicy(FAST_ENGINES)), post);
    return null;
  }
  const t0 = performance.now();
  if (m.params.workloadId !== workloadId || !sim) throw new Error('the simulator has not received this workload');
  if (m.method === 'scenario') sim.scenario(m.params);
  else if (m.method === 'compare') sim.compare(m.params);
  else sim.sweep(m.params);
  return { ms: performance.now() - t0 };
}

scope.onmessage = (event) => {
  const m = event.data;
  respond(post, m.id, () => run(m));
};
