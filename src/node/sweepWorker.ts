// One thread of runSweepOnThreads: runs the sweep points it is handed, one message each.
import { parentPort, workerData } from 'node:worker_threads';
import { engineByName } from '../core/sim/engines/engineTable';
import { ParamError } from '../core/sim/params';
import { runScenario } from '../core/sim/scenario';
import type { SweepWorkerData, SweepWorkerReply } from './parallelSweep';

const { engine, workload, scenarios } = workerData as SweepWorkerData;
const run = engineByName(engine);
// Running alone is the same for every point: each thread works it out once.
const alone = new Map<string, Array<number | null>>();

parentPort!.on('message', (index: number) => {
  let reply: SweepWorkerReply;
  try {
    reply = { index, result: runScenario(run, workload, scenarios[index]!.options, alone) };
  } catch (e) {
    reply = { index, error: { paramError: e instanceof ParamError, message: e instanceof Error ? e.message : String(e) } };
  }
  parentPort!.postMessage(reply);
});
