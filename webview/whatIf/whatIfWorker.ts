import { enginesByPolicy, FAST_ENGINES } from '../../src/core/sim/engines/engineTable';
import { MemoEngine, WhatIfSim } from './whatIfSim';
import type { FromWorker, ToWorker } from './whatIfWorkerProtocol';

/**
 * The what-if simulator's Web Worker: runs the pure sim core (the fast engine, as
 * `agent-trace simulate` does) off the page's thread, so the panel never freezes. Owns
 * the simulator of the workload it was last sent; one job at a time, in order. The
 * page cancels a stale job by terminating the worker (an engine run cannot be
 * interrupted), so the worker never checks for cancellation itself.
 */

interface WorkerScope {
  postMessage(message: FromWorker): void;
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
}

const scope = self as unknown as WorkerScope;
const post = (m: FromWorker): void => scope.postMessage(m);

let workloadId = -1;
let sim: WhatIfSim | null = null;

scope.onmessage = (event) => {
  const m = event.data;
  if (m.type === 'load') {
    workloadId = m.workloadId;
    sim = new WhatIfSim(m.workload, new MemoEngine(enginesByPolicy(FAST_ENGINES)), post);
    return;
  }
  const t0 = performance.now();
  try {
    if (m.workloadId !== workloadId || !sim) throw new Error('the simulator has not received this workload');
    if (m.type === 'scenario') sim.scenario(m);
    else if (m.type === 'compare') sim.compare(m);
    else sim.sweep(m);
    post({ type: 'done', seq: m.seq, job: m.type, ms: performance.now() - t0 });
  } catch (e) {
    post({ type: 'error', seq: m.seq, job: m.type, message: e instanceof Error ? e.message : String(e) });
  }
};
