// The simulator's speed: both engines on the same 64-replica sweep of the longest
// real session, printed as simulated calls per second and the fast/reference ratio,
// measured in the same run; then the fast engine on the target and on the sweeps
// the what-if panel runs.
//   node scripts/runBench.mjs sim [--quick]
// Workload: the longest real session available (the Codex rollout in the shared traces,
// found by sharedTrace in test/support/helpers.ts, 315 calls, else the bundled 149-call
// Claude Code session), extended to 800 calls by replaying its calls again (same
// prompts, tool waits and prefix growth pattern).
// Target (docs/performance.md, "The simulator"): a 32-point sweep of 64 replicas of an 800-call session in under 1 s.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { runFast } from '../src/core/sim/engines/fastEngine';
import { DEFAULT_PARAMS } from '../src/core/sim/params';
import { runReference } from '../src/core/sim/engines/referenceEngine';
import { DEFAULT_REPLICAS } from '../src/core/sim/simRequests';
import { runScenario } from '../src/core/sim/scenario';
import { DEFAULT_CLIFF, pastCliff, runSweep } from '../src/core/sim/sweep';
import { POINTS_AFTER_CLIFF, REPLICA_SWEEP } from '../webview/whatIf/whatIfModel';
import { workloadFromSession } from '../src/core/sim/workload';
import type { AgentWorkload } from '../src/core/sim/workload';
import type { Engine } from '../src/core/sim/engines/engineTypes';
import { parseTrace } from '../src/core/trace/parseTrace';
import { runSweepOnThreads } from '../src/node/parallelSweep';
import { readTraceFiles } from '../src/node/traceFiles';
import { repoRoot, sharedTrace, SPOTTER } from '../test/support/helpers';

const quick = process.argv.includes('--quick');

/** Real sessions, longest first. */
const SESSIONS = [
  sharedTrace('codex/rtchess-exported-session.jsonl'),
  SPOTTER,
  join(repoRoot, 'samples/claude-code-sessions.trace.jsonl'),
].filter((p): p is string => p !== null);

async function mainSession(path: string): Promise<{ name: string; workload: AgentWorkload }> {
  const parsed = await parseTrace(await readTraceFiles(path));
  const session = parsed.model.sessions.find((s) => s.role === 'main')!;
  return {
    name: `${path.split('/').pop()} (${session.calls.length} calls)`,
    workload: workloadFromSession(session).workload,
  };
}

async function longestSession(): Promise<{ name: string; workload: AgentWorkload }> {
  return mainSession(SESSIONS.find((p) => existsSync(p))!);
}

/** The first `n` calls of the session. */
function firstCalls(w: AgentWorkload, n: number): AgentWorkload {
  return { ...w, sessions: [{ ...w.sessions[0]!, calls: w.sessions[0]!.calls.slice(0, n) }] };
}

/** The same session replayed until it has `n` calls: each repeat continues the context where the last ended. */
function extend(w: AgentWorkload, n: number): AgentWorkload {
  const base = w.sessions[0]!.calls;
  const calls = [];
  for (let i = 0; i < n; i++) {
    const c = base[i % base.length]!;
    calls.push(i >= base.length && i % base.length === 0 ? { ...c, prefixTokens: 0 } : c);
  }
  return { ...w, sessions: [{ ...w.sessions[0]!, calls }] };
}

function time<T>(f: () => T): { value: T; ms: number } {
  global.gc?.();
  const t0 = performance.now();
  const value = f();
  return { value, ms: performance.now() - t0 };
}

function callsOf(w: AgentWorkload, replicas: number): number {
  return w.sessions.reduce((n, s) => n + s.calls.length, 0) * replicas;
}

async function main(): Promise<void> {
  const { name, workload } = await longestSession();
  const params = DEFAULT_PARAMS;
  console.log(
    `workload: ${name}; ${params.capacityTokens.toLocaleString()}-token cache (Qwen3-32B on an H200), vLLM LRU`,
  );

  // 1. Both engines on the same 64-replica sweep (a slice of the session: the reference engine walks every block).
  const slice = firstCalls(workload, quick ? 10 : 20);
  const refPoints = quick ? [8, 16] : [16, 64];
  const sweepWith = (engine: Engine) =>
    runSweep(engine, slice, { params, replicas: { ...DEFAULT_REPLICAS, staggerS: 10 } }, 'replicas', refPoints);
  const ref = time(() => sweepWith(runReference));
  const fast = time(() => sweepWith(runFast));
  const same = JSON.stringify(ref.value) === JSON.stringify(fast.value);
  const calls = refPoints.reduce((n, r) => n + callsOf(slice, r), 0);
  console.log(
    `\nboth engines, sweep over ${refPoints.join(', ')} replicas of the first ${slice.sessions[0]!.calls.length} calls (${calls} calls):`,
  );
  console.log(`  reference ${ref.ms.toFixed(0)} ms = ${(calls / (ref.ms / 1000)).toFixed(0)} calls/s`);
  console.log(`  fast      ${fast.ms.toFixed(0)} ms = ${(calls / (fast.ms / 1000)).toFixed(0)} calls/s`);
  console.log(`  fast/reference speed ratio: ${(ref.ms / fast.ms).toFixed(1)}×; identical outcome: ${same}`);

  // 2. The target: a 32-point sweep of 64 replicas of an 800-call session (fast engine).
  const long = extend(workload, quick ? 200 : 800);
  const points = quick ? [8, 16, 32, 64] : Array.from({ length: 32 }, (_, i) => 2 * (i + 1));
  const sweep = time(() =>
    runSweep(runFast, long, { params, replicas: { ...DEFAULT_REPLICAS, staggerS: 10 } }, 'replicas', points),
  );
  const sweepCalls = points.reduce((n, r) => n + callsOf(long, r), 0);
  console.log(
    `\nsweep over ${points.length} replica counts up to ${points[points.length - 1]} of a ${long.sessions[0]!.calls.length}-call session (${sweepCalls.toLocaleString()} calls), fast engine:`,
  );
  console.log(
    `  ${sweep.ms.toFixed(0)} ms = ${(sweepCalls / (sweep.ms / 1000)).toFixed(0)} calls/s; target 1,000 ms → ${(sweep.ms / 1000).toFixed(2)}× the target`,
  );
  console.log(`  cliff: ${sweep.value.cliff.summary}`);
  // The same sweep on worker threads, as `agent-trace simulate --sweep` runs it: the points shared out over the cores.
  const threads = availableParallelism();
  const t0 = performance.now();
  const threaded = await runSweepOnThreads(
    'fast',
    long,
    { params, replicas: { ...DEFAULT_REPLICAS, staggerS: 10 } },
    'replicas',
    points,
    undefined,
    { threads, workerScript: join(__dirname, 'sweepWorker.js') },
  );
  const threadedMs = performance.now() - t0;
  console.log(
    `  on ${threads} worker threads: ${threadedMs.toFixed(0)} ms (${(sweep.ms / threadedMs).toFixed(2)}× the speed of one thread; ${(threadedMs / 1000).toFixed(2)}× the target); identical outcome: ${JSON.stringify(threaded) === JSON.stringify(sweep.value)}`,
  );
  // The what-if panel's cliff search on the same session: its replica points in order up to 64, stopping POINTS_AFTER_CLIFF past the cliff.
  const search = time(() => {
    const run: number[] = [];
    let stop = Infinity;
    for (const [i, n] of REPLICA_SWEEP.filter((v) => v <= 64).entries()) {
      if (i > stop) break;
      run.push(n);
      const r = runScenario(runFast, long, { params, replicas: { ...DEFAULT_REPLICAS, replicas: n, staggerS: 10 } });
      if (stop === Infinity && pastCliff(r, DEFAULT_CLIFF)) stop = i + POINTS_AFTER_CLIFF;
    }
    return run;
  });
  console.log(
    `  the what-if panel's cliff search (replicas ${search.value.join(', ')}, stopping ${POINTS_AFTER_CLIFF} points past the cliff): ${search.ms.toFixed(0)} ms`,
  );

  // 3. What the what-if panel runs: the same 32-point sweep on each real session as recorded.
  const panelPoints = quick ? [2, 8, 32] : Array.from({ length: 32 }, (_, i) => 2 * (i + 1));
  const shown =
    panelPoints.length > 4
      ? `${panelPoints.slice(0, 3).join(', ')}, …, ${panelPoints[panelPoints.length - 1]}`
      : panelPoints.join(', ');
  console.log(`\n${panelPoints.length}-point sweeps (${shown} replicas) of real sessions as recorded, fast engine:`);
  for (const path of SESSIONS) {
    if (!existsSync(path)) continue;
    const real = await mainSession(path);
    const run = time(() =>
      runSweep(
        runFast,
        real.workload,
        { params, replicas: { ...DEFAULT_REPLICAS, staggerS: 10 } },
        'replicas',
        panelPoints,
      ),
    );
    const n = panelPoints.reduce((k, r) => k + callsOf(real.workload, r), 0);
    console.log(
      `  ${real.name}: ${run.ms.toFixed(0)} ms for ${n.toLocaleString()} calls = ${(n / (run.ms / 1000)).toFixed(0)} calls/s (${(run.ms / 1000).toFixed(2)}× the 1 s target); cliff at ${run.value.cliff.at ?? 'none'}`,
    );
  }
}

void main();
