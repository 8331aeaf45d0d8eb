// Frame times of the inspector's timeline while it is zoomed and panned, measured where
// it runs: the built page (dist/webview.js) in real headless Chromium, fed by the same
// TraceService the extension's trace worker holds. Sessions of 10,000, 100,000 and
// 1,000,000 calls are written by scripts/makeBigTraces.ts from the real spotter session
// (its calls repeated, failures and compactions included).
//
// Each session runs 80 steps, one per animation frame, through the page's own input
// handlers: 20 wheel zooms in at 40 % of the plot, 20 drag moves (pointer events), 10
// pages right with Shift+→, 10 pages left, 20 wheel zooms out.
//
// What a "frame time" is here. The interval from one requestAnimationFrame to the next
// cannot go below the display's 16.7 ms (headless Chromium runs a 60 Hz frame clock, and
// --disable-frame-rate-limit / --disable-gpu-vsync do not lift it there), so an interval of
// 16.7 ms says "made the frame", 33.4 "missed one", and nothing finer. So the benchmark
// measures each step's FRAME COST: the input handlers' time, plus the time from the start of
// the frame's animation-frame callbacks to the first task after that frame, a message
// posted from the first callback. That task runs once the main thread has done all the
// frame's work: the timeline's render, style, layout, paint and the commit, in which
// Chromium rasterises the canvas's drawing (software here: no GPU). The targets (issue 15:
// median ≤ 16 ms, p95 ≤ 33 ms) are checked against it. The Long Animation Frames API
// reports only frames over 50 ms, and Event Timing only trusted input over 16 ms, so
// neither gives a median. The rAF interval is printed beside it, with an idle frame's
// interval and cost as the same-run baseline, the timeline's own render time
// (`data-render-ms`), and the CPU time all of Chromium's processes used per step (from
// /proc): this machine is shared and often loaded, which stretches wall times.
//
// `--profile` also prints the traced main-thread tasks and the page's hottest functions.
// Run: npm run build && npm run bench:timeline [sizes…]   (default 10000 100000 1000000)
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTrace } from '../src/core/trace/parseTrace';
import { TraceService } from '../src/core/view/traceService';
import { readTraceFiles } from '../src/node/traceFiles';
import { canonical } from '../scripts/makeBigTraces';
import { launchChromium, openInspector, startPageServer } from '../test/support/inspectorHarness';

/** CPU time (user + system, ms) of every process descended from this one: Chromium's browser, renderer and GPU processes. */
function childCpuMs(): number {
  const parents = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces) start after the last ')'.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(rest[1]));
      ticks.set(Number(entry), Number(rest[11]) + Number(rest[12]));
    } catch {
      // The process ended while we looked.
    }
  }
  let total = 0;
  for (const [pid, t] of ticks) {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) {
      if (p === process.pid) {
        total += t;
        break;
      }
    }
  }
  // Kernel clock ticks; 100 per second on Linux.
  return total * 10;
}

const ARGS = process.argv.slice(2);
const SIZES = ARGS.map(Number).filter((n) => n > 0);
const PROFILE = ARGS.includes('--profile');
const sizes = SIZES.length > 0 ? SIZES : [10_000, 100_000, 1_000_000];

/** Runs in the page (a string: functions handed to page.evaluate would carry bundler helpers the page lacks). */
const PAGE_SCRIPT = `
window.benchTimeline = async () => {
  const wrap = document.querySelector('.chart-wrap');
  const canvas = wrap.querySelector('canvas');
  const stat = (a) => { const s = [...a].sort((x, y) => x - y); return { median: s[s.length >> 1], p95: s[Math.floor(s.length * 0.95)], max: s[s.length - 1] }; };
  // A frame's cost: from the start of its animation-frame callbacks to the first task after
  // it (a message posted from the first callback), which runs once the frame's render, style,
  // layout, paint and commit (where Chromium rasterises the canvas) are done. Registered
  // before a step's handlers ask for their frame, so it brackets the timeline's render too.
  const channel = new MessageChannel();
  const nextFrame = () => new Promise((resolve) => {
    requestAnimationFrame((stamp) => {
      const t0 = performance.now();
      channel.port1.onmessage = () => resolve({ stamp, cost: performance.now() - t0 });
      channel.port2.postMessage(0);
    });
  });
  // Baseline: idle frames.
  const idle = [];
  const idleCost = [];
  let last = (await nextFrame()).stamp;
  for (let i = 0; i < 40; i++) { const f = await nextFrame(); idle.push(f.stamp - last); idleCost.push(f.cost); last = f.stamp; }
  const box = canvas.getBoundingClientRect();
  const x = box.left + box.width * 0.4;
  const y = box.top + box.height / 2;
  const wheel = (deltaY) => canvas.dispatchEvent(new WheelEvent('wheel', { clientX: x, clientY: y, deltaY, bubbles: true, cancelable: true }));
  const pointer = (type, px) => canvas.dispatchEvent(new PointerEvent(type, { clientX: px, clientY: y, pointerId: 7, button: 0, buttons: type === 'pointerup' ? 0 : 1, bubbles: true, cancelable: true }));
  const key = (k) => wrap.dispatchEvent(new KeyboardEvent('keydown', { key: k, shiftKey: true, bubbles: true, cancelable: true }));
  const steps = [];
  for (let i = 0; i < 20; i++) steps.push(() => wheel(-100));
  steps.push(() => pointer('pointerdown', x));
  for (let i = 1; i <= 19; i++) steps.push(() => pointer('pointermove', x - i * 25));
  steps.push(() => pointer('pointerup', x - 19 * 25));
  for (let i = 0; i < 10; i++) steps.push(() => key('ArrowRight'));
  for (let i = 0; i < 10; i++) steps.push(() => key('ArrowLeft'));
  for (let i = 0; i < 19; i++) steps.push(() => wheel(100));
  const frames = [];
  const costs = [];
  const work = [];
  const input = [];
  last = (await nextFrame()).stamp;
  for (const step of steps) {
    const frame = nextFrame();
    const t = performance.now();
    step();
    const handlers = performance.now() - t;
    input.push(handlers);
    const f = await frame;
    frames.push(f.stamp - last);
    costs.push(handlers + f.cost);
    last = f.stamp;
    work.push(Number(wrap.dataset.renderMs));
  }
  return { idle: stat(idle), idleCost: stat(idleCost), frames: stat(frames), costs: stat(costs), work: stat(work), input: stat(input), steps: steps.length, bins: wrap.dataset.bins, view: wrap.dataset.view };
};`;

/** The parts of a CDP CPU profile this reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** `--profile`: the page's main thread during the steps, top functions by self time, ms per step. */
function printProfile(profile: CpuProfile, steps: number): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const f = byId.get(profile.samples[i]!)!.callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop() ?? ''}:${f.lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 25);
  for (const [name, ms] of top) console.log(`  ${(ms / steps).toFixed(2).padStart(7)} ms/step  ${name}`);
}

/** A Chromium trace event (complete events only are summed). */
interface TraceEvent {
  name: string;
  ph: string;
  dur?: number;
  /** Thread (CPU) time, when traced. */
  tdur?: number;
  pid: number;
  tid: number;
  args?: { name?: string };
}

/** `--profile`: time per step of each traced task, per process and thread, top by total (nested events overlap). */
function printTrace(trace: { traceEvents: TraceEvent[] }, steps: number): void {
  const threads = new Map<string, string>();
  for (const e of trace.traceEvents)
    if (e.ph === 'M' && e.name === 'thread_name') threads.set(`${e.pid}:${e.tid}`, e.args?.name ?? '');
  const sums = new Map<string, { wall: number; cpu: number }>();
  for (const e of trace.traceEvents) {
    if (e.ph !== 'X' || !e.dur) continue;
    const key = `${threads.get(`${e.pid}:${e.tid}`) ?? e.tid} ${e.name}`;
    const sum = sums.get(key) ?? { wall: 0, cpu: 0 };
    sum.wall += e.dur / 1000;
    sum.cpu += (e.tdur ?? 0) / 1000;
    sums.set(key, sum);
  }
  console.log('  wall ms/step, CPU ms/step, thread and task:');
  for (const [name, t] of [...sums].sort((a, b) => b[1].wall - a[1].wall).slice(0, 30))
    console.log(`  ${(t.wall / steps).toFixed(2).padStart(7)} ${(t.cpu / steps).toFixed(2).padStart(7)}  ${name}`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-trace-bench-timeline-'));
  const server = await startPageServer();
  const browser = await launchChromium();
  const rows: string[] = [];
  try {
    for (const n of sizes) {
      const path = join(dir, `canonical-${n}.trace.jsonl`);
      await canonical(n, path);
      const parsed = await parseTrace(await readTraceFiles(path));
      const service = new TraceService(parsed, {
        fileName: `canonical-${n}.trace.jsonl`,
        formatChosen: false,
        analysis: {},
      });
      // Analysed once here, so the page's first draw measures the page, not the analysis.
      service.sessionBody({ sessionId: service.header().defaultSessionId! });
      const t0 = performance.now();
      const p = await openInspector(browser, server.origin, {
        trace: parsed,
        service,
        fileName: `canonical-${n}.trace.jsonl`,
        viewport: { width: 1400, height: 900 },
        drawTimeoutMs: 20 * 60_000,
      });
      const drawMs = performance.now() - t0;
      await p.page.evaluate(PAGE_SCRIPT);
      const cdp = PROFILE ? await p.page.context().newCDPSession(p.page) : null;
      if (cdp) {
        await cdp.send('Profiler.enable');
        await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
        await cdp.send('Profiler.start');
      }
      if (PROFILE)
        await browser.startTracing(p.page, {
          categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8', 'blink', 'cc', 'gpu', 'viz'],
        });
      const cpu0 = childCpuMs();
      const r = (await p.page.evaluate('window.benchTimeline()')) as {
        idle: { median: number; p95: number };
        idleCost: { median: number; p95: number };
        frames: { median: number; p95: number; max: number };
        costs: { median: number; p95: number; max: number };
        work: { median: number; p95: number; max: number };
        input: { median: number; p95: number; max: number };
        steps: number;
      };
      // The run also holds 40 idle frames, which cost next to nothing.
      const cpuPerStep = (childCpuMs() - cpu0) / r.steps;
      if (PROFILE)
        printTrace(
          JSON.parse((await browser.stopTracing()).toString('utf8')) as { traceEvents: TraceEvent[] },
          r.steps,
        );
      if (cdp) printProfile(((await cdp.send('Profiler.stop')) as { profile: CpuProfile }).profile, r.steps);
      const heap = (await p.page.evaluate('performance.memory ? performance.memory.usedJSHeapSize : 0')) as number;
      if (p.pageErrors.length > 0) throw new Error(`page errors: ${p.pageErrors.join('; ')}`);
      await p.close();
      const ok = r.costs.median <= 16 && r.costs.p95 <= 33;
      rows.push(
        `${n.toLocaleString('en-US').padStart(9)} calls | frame cost median ${r.costs.median.toFixed(1)} ms, p95 ${r.costs.p95.toFixed(1)} ms, max ${r.costs.max.toFixed(1)} ms (idle frame ${r.idleCost.median.toFixed(1)} ms) | ` +
          `rAF interval median ${r.frames.median.toFixed(1)} ms, p95 ${r.frames.p95.toFixed(1)} ms (idle ${r.idle.median.toFixed(1)} ms) | render median ${r.work.median.toFixed(1)} ms, p95 ${r.work.p95.toFixed(1)} ms | input handlers median ${r.input.median.toFixed(1)} ms, p95 ${r.input.p95.toFixed(1)} ms | Chromium CPU ${cpuPerStep.toFixed(1)} ms per step | ` +
          `first draw ${(drawMs / 1000).toFixed(1)} s (page + its requests, analysis done before) | JS heap ${(heap / 2 ** 20).toFixed(0)} MB | load ${loadavg()[0]!.toFixed(1)} | ${ok ? 'meets' : 'misses'} frame cost median ≤ 16 ms, p95 ≤ 33 ms`,
      );
      console.log(rows[rows.length - 1]);
    }
  } finally {
    await browser.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `\nbench:timeline, Chromium, 1400×900 page, 80 zoom/pan steps per session; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${availableParallelism()} cores:`,
  );
  for (const r of rows) console.log(r);
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
