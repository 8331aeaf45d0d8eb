// Speed of the what-if panel's simulator, measured where it runs: the built worker
// bundle (dist/whatIfWorker.js) in real headless Chromium, started from a blob: URL as
// the webview starts it. Targets: re-running a scenario under 200 ms, a full
// cliff sweep under 1 s. This machine is noisy, so every figure is the median of several
// runs and is printed beside a baseline measured in the same run: the same work done by
// the fast engine in Node, in this process.
//
//   scenario  post a scenario job to a worker that was just sent the workload (nothing
//             cached: what any control change that is not N costs) → its result; also
//             printed: the same in a brand-new worker (cold JIT, the panel's first run)
//   sweep     post the cliff sweep (N = 1, 2, 3, 4, 6, … run in order, stopping two
//             points past the cliff) → the cliff; the other policies' lines come after
//
// Run: npm run build && npm run bench:whatif [runs]   (default 5 runs per figure)
// The longest real sample (codex/rtchess-exported-session.jsonl of the shared traces, 315
// calls) is not redistributable: it is read only here, and skipped when absent.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { engineByName } from '../src/core/sim/engines/engineTable';
import { runScenario } from '../src/core/sim/scenario';
import type { ScenarioOptions } from '../src/core/sim/scenario';
import { runSweep } from '../src/core/sim/sweep';
import type { Workload } from '../src/core/sim/workload';
import { buildWhatIfWorkload } from '../src/core/sim/whatIfWorkload';
import { parseFile, repoRoot, sharedTrace } from '../test/support/helpers';
import { launchChromium } from '../test/support/inspectorHarness';
import { POLICY_CHOICES } from '../src/core/sim/policies';
import { defaultScenario, POINTS_AFTER_CLIFF, resolveScenario, REPLICA_SWEEP } from '../webview/whatIf/whatIfModel';
import type { PolicyId } from '../src/core/sim/policies';
import type { CompareJob, PolicySpec, ScenarioJob, SweepJob } from '../src/protocol/whatIfWorkerProtocol';

/** A job as the panel's runner asks it (its method is its type). */
type Job = ScenarioJob | CompareJob | SweepJob;

const FAST = engineByName('fast');

const RUNS = Math.max(1, Number(process.argv[2] ?? 5));
const SCENARIO_TARGET_MS = 200;
const SWEEP_TARGET_MS = 1000;
/** The policy table is informational here; CPU offload can take minutes on long sessions. */
const COMPARE_LIMIT_MS = 60_000;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * Page-side helpers, as a string: functions handed to page.evaluate would be compiled
 * by tsx with helpers that do not exist in the page. `whatIfJob` starts a fresh worker
 * from the bundle's blob URL, sends the workload, posts one job and resolves with the
 * page-side time of every message until `until` arrives (or the time limit passes).
 */
const PAGE_SCRIPT = `
window.whatIfBlob = fetch('/dist/whatIfWorker.js').then((r) => r.text()).then((t) => URL.createObjectURL(new Blob([t], { type: 'text/javascript' })));
window.whatIfJob = async (workload, job, until, limitMs, fresh) => {
  // Warm: the panel's worker lives on between runs (a new workload resets its caches); fresh: a new worker, cold JIT,
  // used once and dropped (it must not replace the warm one, or the next "warm" run would start cold).
  if (!fresh && !window.warmWorker) window.warmWorker = new Worker(await window.whatIfBlob);
  const worker = fresh ? new Worker(await window.whatIfBlob) : window.warmWorker;
  const seen = [];
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve({ seen, timedOut: true }), limitMs);
      worker.onerror = (e) => { clearTimeout(timer); reject(new Error(e.message)); };
      // WorkerRpc's requests (src/protocol/workerRpc.ts): the job's answer says it is done, as the panel's runner reads it.
      worker.postMessage({ kind: 'request', id: 1, method: 'load', params: { workloadId: 1, workload } });
      const t0 = performance.now();
      worker.onmessage = (e) => {
        const d = e.data;
        if (d.kind === 'response' && d.id !== 2) return;
        const m = d.kind !== 'response' ? d : 'err' in d ? { type: 'error', message: d.err } : { type: 'done', ms: d.ok.ms };
        seen.push({ type: m.type, at: performance.now() - t0, ms: m.ms, policy: m.policy, line: m.line, value: m.value, run: m.run, message: m.message, error: m.error });
        if (m.type === 'error') { clearTimeout(timer); reject(new Error(m.message)); }
        if (m.type === until) { clearTimeout(timer); resolve({ seen, timedOut: false }); }
      };
      worker.postMessage({ kind: 'request', id: 2, method: job.type, params: job });
    });
  } finally {
    if (fresh) worker.terminate();
  }
};`;

interface Seen {
  type: string;
  at: number;
  ms?: number;
  policy?: PolicyId;
  line?: PolicyId | null;
  value?: number;
  run?: number[];
}

async function job(
  page: Page,
  workload: Workload,
  message: Job,
  until: string,
  limitMs = 600_000,
  fresh = false,
): Promise<{ seen: Seen[]; timedOut: boolean }> {
  const r = await page.evaluate<{ seen: Seen[]; timedOut: boolean }>(
    `window.whatIfJob(${JSON.stringify(workload)}, ${JSON.stringify(message)}, ${JSON.stringify(until)}, ${limitMs}, ${fresh})`,
  );
  // A job cut off by the limit may still be running: the next one needs a worker of its own.
  if (r.timedOut) await page.evaluate('window.warmWorker && window.warmWorker.terminate(); window.warmWorker = null;');
  return r;
}

function line(label: string, ms: number, baselineMs: number, targetMs: number): string {
  const verdict = ms <= targetMs ? 'meets' : 'misses';
  return `${label.padEnd(44)} ${ms.toFixed(0).padStart(6)} ms   node ${baselineMs.toFixed(0).padStart(6)} ms   ×${(ms / baselineMs).toFixed(2)} of node   ${(ms / targetMs).toFixed(2)} of the ${targetMs} ms target (${verdict})`;
}

async function benchTrace(page: Page, name: string, file: string): Promise<void> {
  const parsed = await parseFile(file);
  const session = parsed.model.sessions.reduce((a, b) => (b.calls.length > a.calls.length ? b : a));
  const { workload, sessionId } = buildWhatIfWorkload(parsed.model, session.id, file, null);
  const scenario = defaultScenario();
  const r = resolveScenario(scenario);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const spec: ScenarioOptions = { params: r.scenario.params, replicas: r.scenario.replicas, session: sessionId };
  const options = { params: spec.params, replicas: spec.replicas!, session: sessionId! };
  const calls = workload.kind === 'sessions' ? workload.sessions[0]!.calls.length : 0;
  console.log(
    `\n${name}: ${calls} calls; scenario: ${spec.replicas!.replicas} sessions ${spec.replicas!.staggerS} s apart, Qwen3-32B on one H200, vLLM LRU`,
  );

  // The scenario: page-side time to its result, the workload sent anew each time (nothing cached).
  const scenarioJob: Job = { type: 'scenario', seq: 1, workloadId: 1, spec, alone: true };
  const worker: number[] = [];
  const inWorker: number[] = [];
  const cold: number[] = [];
  await job(page, workload, scenarioJob, 'done'); // the worker's first run: JIT warm-up, as in the panel's first run
  for (let i = 0; i < RUNS; i++) {
    const { seen } = await job(page, workload, scenarioJob, 'done');
    worker.push(seen.find((m) => m.type === 'scenario/result')!.at);
    inWorker.push(seen.find((m) => m.type === 'scenario/result')!.ms!);
    cold.push(
      (await job(page, workload, scenarioJob, 'scenario/result', 600_000, true)).seen.find(
        (m) => m.type === 'scenario/result',
      )!.at,
    );
  }
  const node: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    runScenario(FAST, workload, options);
    node.push(performance.now() - t0);
  }
  console.log(line('scenario (post → result)', median(worker), median(node), SCENARIO_TARGET_MS));
  console.log(
    `${''.padEnd(44)} (the engine in the worker: ${median(inWorker).toFixed(0)} ms; in a fresh worker, cold JIT: ${median(cold).toFixed(0)} ms)`,
  );

  // The cliff sweep: post → cliff (the main line complete), fresh worker each time.
  const sweepJob: Job = {
    type: 'sweep',
    seq: 2,
    workloadId: 1,
    axis: 'replicas',
    values: [...REPLICA_SWEEP],
    base: spec,
    threshold: 0.1,
    pointsAfterCliff: POINTS_AFTER_CLIFF,
    budgetMs: 20_000,
    lines: [],
  };
  const sweeps: number[] = [];
  let run: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const { seen } = await job(page, workload, sweepJob, 'sweep/cliff');
    const cliff = seen.find((m) => m.type === 'sweep/cliff')!;
    sweeps.push(cliff.at);
    run = cliff.run ?? [];
  }
  const nodeSweep: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    runSweep(FAST, workload, options, 'replicas', run);
    nodeSweep.push(performance.now() - t0);
  }
  const skipped = REPLICA_SWEEP.filter((v) => !run.includes(v));
  console.log(
    line(
      `cliff sweep (N = ${run[0]}…${run[run.length - 1]}, ${run.length} points)`,
      median(sweeps),
      median(nodeSweep),
      SWEEP_TARGET_MS,
    ),
  );
  console.log(`${''.padEnd(44)} (skipped past the cliff: ${skipped.length > 0 ? skipped.join(', ') : 'none'})`);

  // Informational: the other policies, as the table and the chart's lines run them (once each).
  const others: PolicySpec[] = POLICY_CHOICES.filter((c) => c.id !== scenario.policy).flatMap((c) => {
    const x = resolveScenario(scenario, { policy: c.id });
    return x.ok ? [{ policy: c.id, spec: { ...spec, params: x.scenario.params } }] : [];
  });
  const compare = await job(
    page,
    workload,
    { type: 'compare', seq: 3, workloadId: 1, policies: others },
    'done',
    COMPARE_LIMIT_MS,
  );
  const rows = others.map((o) => {
    const m = compare.seen.find((s) => s.type === 'scenario/policy' && s.policy === o.policy);
    return `${o.policy} ${m ? `${(m.ms ?? 0).toFixed(0)} ms${m.type === 'scenario/policy' && (m as { error?: string }).error ? ' (error)' : ''}` : `> ${COMPARE_LIMIT_MS / 1000} s (not finished)`}`;
  });
  console.log(`policy table at N = ${spec.replicas!.replicas} (one run each): ${rows.join(', ')}`);
  const withLines = await job(page, workload, { ...sweepJob, seq: 4, lines: others }, 'done', COMPARE_LIMIT_MS);
  const last = withLines.seen[withLines.seen.length - 1];
  console.log(
    `sweep with every policy's line (one run): ${withLines.timedOut ? `not finished after ${COMPARE_LIMIT_MS / 1000} s` : `${((last?.at ?? 0) / 1000).toFixed(1)} s`} (progress posted after each of ${withLines.seen.filter((m) => m.type === 'sweep/point').length} points)`,
  );
}

async function main(): Promise<void> {
  const bundle = join(repoRoot, 'dist/whatIfWorker.js');
  const script = await readFile(bundle, 'utf8').catch(() => null);
  if (script === null) throw new Error('dist/whatIfWorker.js is missing: run `npm run build` first');
  const server = createServer((req, res) => {
    if (req.url === '/dist/whatIfWorker.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      return;
    }
    // The webview's CSP for workers: fetched from the page's origin, started from blob:.
    res.writeHead(200, {
      'content-type': 'text/html',
      'content-security-policy': "default-src 'none'; script-src 'unsafe-inline'; connect-src 'self'; worker-src blob:",
    });
    res.end(`<!DOCTYPE html><html><body><script>${PAGE_SCRIPT}</script></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    console.log(
      `What-if simulator in ${browser.version()} (headless), median of ${RUNS} runs; baseline: the fast engine in Node ${process.version}, this process`,
    );
    await benchTrace(
      page,
      'bundled sample (samples/claude-code-sessions.trace.jsonl, main session)',
      join(repoRoot, 'samples/claude-code-sessions.trace.jsonl'),
    );
    const longest = sharedTrace('codex/rtchess-exported-session.jsonl');
    if (longest)
      await benchTrace(page, 'longest real sample (shared traces: codex/rtchess-exported-session.jsonl)', longest);
    else
      console.log(
        '\nlongest real sample: skipped (shared traces: codex/rtchess-exported-session.jsonl is not on this machine)',
      );
  } finally {
    await browser.close();
    server.close();
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
