import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { engineByName } from '../../../src/core/sim/engines/engineTable';
import { DEFAULT_PARAMS, ParamError } from '../../../src/core/sim/params';
import { runSweep } from '../../../src/core/sim/sweep';
import { workloadFromSession } from '../../../src/core/sim/workload';
import type { AgentWorkload } from '../../../src/core/sim/workload';
import { autoThreads, runSweepOnThreads } from '../../../src/node/parallelSweep';
import { ensureBuilt, parseFile, repoRoot, SPOTTER } from '../../support/helpers';

const FAST = engineByName('fast');

// Worker threads run the bundled worker (as the CLI does): tsx's loader does not reach them.
const workerScript = join(repoRoot, 'dist/sweepWorker.js');
const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');

async function mainWorkload(path: string): Promise<AgentWorkload> {
  const parsed = await parseFile(path);
  return workloadFromSession(parsed.model.sessions.find((s) => s.role === 'main')!).workload;
}

describe('sweeps on worker threads (src/node/parallelSweep)', () => {
  before(() => ensureBuilt(workerScript));

  it('gives runSweep’s points and cliff exactly, for replicas and for capacity', async () => {
    const spotter = await mainWorkload(SPOTTER);
    const base = {
      params: DEFAULT_PARAMS,
      replicas: { replicas: 1, staggerS: 10, staggerMode: 'fixed' as const, seed: 1, toolWaitScale: 1 },
    };
    const values = [1, 2, 3, 4, 6, 8];
    const seen: Array<[number, number]> = [];
    const threaded = await runSweepOnThreads('fast', spotter, base, 'replicas', values, undefined, {
      threads: 3,
      workerScript,
      onPoint: (done, total) => seen.push([done, total]),
    });
    assert.deepEqual(threaded, runSweep(FAST, spotter, base, 'replicas', values));
    assert.deepEqual(
      seen,
      values.map((_, i) => [i + 1, values.length]),
      'progress counts every point once',
    );
    assert.notEqual(threaded.cliff.at, null, 'a sweep that reaches the cliff, so the cliff is compared too');

    const sample = await mainWorkload(SAMPLE);
    const capacities = [131_072, 65_536, 32_768];
    const byCapacity = { params: DEFAULT_PARAMS, replicas: { ...base.replicas, replicas: 2 } };
    assert.deepEqual(
      await runSweepOnThreads('reference', sample, byCapacity, 'capacity', capacities, undefined, {
        threads: 2,
        workerScript,
      }),
      runSweep(FAST, sample, byCapacity, 'capacity', capacities),
    );
  });

  it('a point the engine refuses comes back as a ParamError; a worker that cannot start is an error, not a hang', async () => {
    const sample = await mainWorkload(SAMPLE);
    await assert.rejects(
      runSweepOnThreads('fast', sample, { params: DEFAULT_PARAMS }, 'capacity', [8, 65_536], undefined, {
        threads: 2,
        workerScript,
      }),
      (e: unknown) =>
        e instanceof ParamError && /capacityTokens must be at least one block \(16 tokens\), got 8/.test(e.message),
    );
    await assert.rejects(
      runSweepOnThreads('fast', sample, { params: DEFAULT_PARAMS }, 'replicas', [1, 2], undefined, {
        threads: 2,
        workerScript: join(repoRoot, 'dist/no-such-worker.js'),
      }),
    );
  });

  it('starts threads only for a sweep big enough to gain from them', async () => {
    const sample = await mainWorkload(SAMPLE);
    assert.equal(sample.sessions[0]!.calls.length, 48);
    // 48 calls × (1 + 2 + 4 + 8) replicas = 720 simulated calls: in-process.
    assert.equal(autoThreads(sample, { params: DEFAULT_PARAMS }, 'replicas', [1, 2, 4, 8]), 1);
    // 48 × (1000 + 1083) = 99,984 calls, just under: in-process; 48 × (1000 + 1084) = 100,032: a thread per point, as far as the cores go.
    assert.equal(autoThreads(sample, { params: DEFAULT_PARAMS }, 'replicas', [1000, 1083]), 1);
    assert.equal(
      autoThreads(sample, { params: DEFAULT_PARAMS }, 'replicas', [1000, 1084]),
      Math.min(availableParallelism(), 2),
    );
    // A repeated value is one point: 48 × (1000 + 1083) again.
    assert.equal(autoThreads(sample, { params: DEFAULT_PARAMS }, 'replicas', [1000, 1083, 1083]), 1);
    // A capacity sweep runs the replica count at every point: 48 × 500 × 5 = 120,000; with 1 replica, 240.
    const many = {
      params: DEFAULT_PARAMS,
      replicas: { replicas: 500, staggerS: 0, staggerMode: 'fixed' as const, seed: 1, toolWaitScale: 1 },
    };
    assert.equal(autoThreads(sample, many, 'capacity', [1e5, 2e5, 3e5, 4e5, 5e5]), Math.min(availableParallelism(), 5));
    assert.equal(autoThreads(sample, { params: DEFAULT_PARAMS }, 'capacity', [1e5, 2e5, 3e5, 4e5, 5e5]), 1);
  });
});
