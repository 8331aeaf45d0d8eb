import type { EngineName } from '../core/sim/engines/engineTypes';
import type { ScenarioOptions, ScenarioResult } from '../core/sim/scenario';
import type { Workload } from '../core/sim/workload';
import type { RpcRequest, RpcResponse } from './workerRpc';

// Messages between the CLI's sweep (runSweepOnThreads, src/node/parallelSweep.ts) and its
// threads (src/node/sweepWorker.ts): each thread is started with the whole sweep and is
// asked for one point at a time (WorkerRpc); a point's ParamError comes back with the code
// SWEEP_PARAM_ERROR, so the sweep raises it as a ParamError again.

/** What every worker of one sweep is started with. */
export interface SweepWorkerData {
  engine: EngineName;
  workload: Workload;
  scenarios: Array<{ value: number; options: ScenarioOptions }>;
}

/** What a sweep thread answers: the result of the point at `index` (into `scenarios`). */
export interface SweepWorkerMethods {
  point: { params: { index: number }; result: ScenarioResult };
}

/** The error code of a point the engine refused for its parameters (a ParamError). */
export const SWEEP_PARAM_ERROR = 'param';

/** Sweep → worker. */
export type SweepWorkerRequest = RpcRequest<SweepWorkerMethods>;
/** Worker → sweep. */
export type SweepWorkerReply = RpcResponse;
