// A fleet against one GPU, in the same run: 64 copies of the longest real session on one
// GPU, then on 8 GPUs behind each router, with what the fleet does to the hit rate, the
// prefill share and the makespan, and how long each simulation took (wall clock, and as a
// ratio to the one-GPU run measured here). Then the capacity planner on the KV-aware router.
//   node scripts/runBench.mjs fleet [--quick]
// Workload: the longest real session available (the Codex rollout in the shared traces,
// 315 calls, else the 149-call Claude Code session), copies 10 s apart, on the CLI's
// `--gpu h200 --model qwen3-32b` (a 255,008-token cache per GPU, H200 step costs).
import { existsSync } from 'node:fs';
import { engineByName } from '../src/core/sim/engines/engineTable';
import { ROUTER_NAMES } from '../src/core/sim/fleet/routers';
import type { RouterName } from '../src/core/sim/fleet/routers';
import { capacityFor, DEFAULT_PARAMS, GPU_PRESETS, MODEL_PRESETS } from '../src/core/sim/params';
import type { EngineParams } from '../src/core/sim/params';
import { runScenario } from '../src/core/sim/scenario';
import type { ScenarioResult } from '../src/core/sim/scenario';
import { DEFAULT_REPLICAS } from '../src/core/sim/simRequests';
import { runSweep } from '../src/core/sim/sweep';
import { workloadFromSession } from '../src/core/sim/workload';
import { parseTrace } from '../src/core/trace/parseTrace';
import { readTraceFiles } from '../src/node/traceFiles';
import { sharedTrace, SPOTTER } from '../test/support/helpers';

const quick = process.argv.includes('--quick');
const REPLICAS = quick ? 16 : 64;
const GPUS = quick ? 4 : 8;

const h200 = GPU_PRESETS.find((g) => g.id === 'h200')!;
const qwen = MODEL_PRESETS.find((m) => m.id === 'qwen3-32b')!;
const params: EngineParams = {
  ...DEFAULT_PARAMS,
  capacityTokens: capacityFor(h200, qwen)!,
  kvBytesPerToken: qwen.kvBytesPerToken,
  prefillUsPerToken: qwen.prefillUsPerToken,
  ...qwen.timing['h200']!,
};

const pct = (v: number | null): string => (v === null ? '?' : `${(v * 100).toFixed(1)}%`);
const fixed = (v: number, d = 2): string => v.toFixed(d);

function row(label: string, r: ScenarioResult, ms: number, base: { r: ScenarioResult; ms: number } | null): string {
  const cells = [
    label.padEnd(26),
    pct(r.admissionHitRate).padStart(7),
    pct(r.idealHitRate).padStart(7),
    pct(r.prefillShare).padStart(8),
    String(r.preemptions).padStart(6),
    `${fixed(r.makespanS / 60, 1)} min`.padStart(10),
    `${fixed(r.slowdown.mean ?? NaN)}×`.padStart(7),
    `${fixed(ms / 1000, 1)} s`.padStart(8),
  ];
  if (base) cells.push(`makespan ×${fixed(r.makespanS / base.r.makespanS)}`, `sim time ×${fixed(ms / base.ms)}`);
  if (r.perGpu) {
    const busy = r.perGpu.map((g) => g.utilization ?? 0);
    cells.push(`GPU busy ${pct(Math.min(...busy))}–${pct(Math.max(...busy))}`);
  }
  return cells.join('  ');
}

async function main(): Promise<void> {
  const path = [sharedTrace('codex/rtchess-exported-session.jsonl'), SPOTTER].find(
    (p): p is string => p !== null && existsSync(p),
  )!;
  const parsed = await parseTrace(await readTraceFiles(path));
  const session = parsed.model.sessions.find((s) => s.role === 'main')!;
  const workload = workloadFromSession(session).workload;
  const replicas = { ...DEFAULT_REPLICAS, replicas: REPLICAS, staggerS: 10 };
  const engine = engineByName('fast');
  console.log(
    `${path.split('/').pop()}: ${workload.sessions[0]!.calls.length} calls × ${REPLICAS} copies 10 s apart, Qwen3-32B on H200 (${params.capacityTokens} tokens of KV per GPU)`,
  );
  console.log(
    `${'run'.padEnd(26)}  ${'hit'.padStart(7)}  ${'ideal'.padStart(7)}  ${'prefill'.padStart(8)}  ${'preem'.padStart(6)}  ${'makespan'.padStart(10)}  ${'slow'.padStart(7)}  ${'wall'.padStart(8)}`,
  );
  const t0 = performance.now();
  const one = runScenario(engine, workload, { params, replicas });
  const base = { r: one, ms: performance.now() - t0 };
  console.log(row(`1 GPU`, one, base.ms, null));
  for (const router of ROUTER_NAMES as readonly RouterName[]) {
    const t = performance.now();
    const r = runScenario(engine, workload, { params: { ...params, fleet: { gpus: GPUS, router } }, replicas });
    console.log(row(`${GPUS} GPUs, ${router}`, r, performance.now() - t, base));
  }
  const t = performance.now();
  const sweep = runSweep(
    engine,
    workload,
    { params: { ...params, fleet: { gpus: 1, router: 'kv-aware' } }, replicas },
    'gpus',
    quick ? [1, 4] : [1, 8, 16],
    { hitRateDropThreshold: 0.1 },
  );
  console.log(
    `planner (kv-aware, ${sweep.plan!.tried.length} GPU counts run, ${fixed((performance.now() - t) / 1000, 1)} s): ${sweep.plan!.summary}`,
  );
}

void main();
