// One thread of runSweepOnThreads: runs the sweep points it is asked for, one request each.
import { parentPort, workerData } from 'node:worker_threads';
import { engineByName } from '../core/sim/engines/engineTable';
import { ParamError } from '../core/sim/params';
import { runScenario } from '../core/sim/scenario';
import { SWEEP_PARAM_ERROR } from '../protocol/sweepWorkerProtocol';
import type { SweepWorkerData, SweepWorkerReply, SweepWorkerRequest } from '../protocol/sweepWorkerProtocol';
import { respond } from '../protocol/workerRpc';

const { engine, workload, scenarios } = workerData as SweepWorkerData;
const run = engineByName(engine);
// Running alone is the same for every point: each thread works it out once.
const alone = new Map<string, Array<number | null>>();

parentPort!.on('message', (m: SweepWorkerRequest) => {
  respond(
    (reply: SweepWorkerReply) => parentPort!.postMessage(reply),
    m.id,
    () => runScenario(run, workload, scenarios[m.params.index]!.options, alone),
    { codeOf: (e) => (e instanceof ParamError ? SWEEP_PARAM_ERROR : null) },
  );
});
