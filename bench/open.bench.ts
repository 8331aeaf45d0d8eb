// How fast a big trace opens in real VS Code (code-server 1.100, the packaged .vsix,
// driven by the system's Chromium), beside the CLI's `agent-trace analyze` on the same
// file in the same run. For each file:
//
//   CLI        node dist/cli.js analyze FILE: wall time and peak RSS (/usr/bin/time)
//   summary    from the click that opens the file to the session's figures on screen
//   timeline   … to the timeline drawn (the page says `data-painted="timeline"`)
//   host       the extension host's peak RSS while it opened the file (VmHWM from /proc:
//              the kernel's own high-water mark, trace worker included), and before it
//
// Files (written by scripts/makeBigTraces.ts from real samples): Claude Code logs of
// 10 MB, 100 MB, 1 GB and 2 GB (the spotter session repeated; 2 GB stays under the default
// agentTrace.maxFileSizeMB of 2048), the 1,000,000-call canonical trace and a Bailian trace
// of 50,000 conversations. Each file gets a fresh code-server, so one file's memory does not
// count against the next. Targets (issue 15): summary ≤ 1.5× and timeline ≤ 2× the CLI's
// time; the host ≤ 1 GB.
//
// Where the panel's time goes is printed too, from the extension's own log: `worker` is
// the trace worker's read and parse (the log's "read in … s"), `before` the time from the
// click to the worker's start (VS Code resolving the editor, activating the extension,
// starting the worker), `after` from the worker's answer to the summary on screen.
//
// Run: npm run package && npm run bench:open [kinds…]   (claude-10mb claude-100mb claude-1gb claude-2gb canonical-1m bailian-50k)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FrameLocator, Page } from 'playwright-core';
import { bailian, canonical, claude } from '../scripts/makeBigTraces';
import { launchBrowser, openWorkbench, startCodeServer, webview } from '../test/support/vscodeE2e.mjs';
import { repoRoot } from '../test/support/helpers';

const VSIX = join(repoRoot, 'dist/agent-trace-inspector.vsix');
const CLI = join(repoRoot, 'dist/cli.js');
const EXTENSION_ID = 'agent-trace.agent-trace-inspector';

interface Case {
  name: string;
  write(path: string): Promise<unknown>;
}

const CASES: Case[] = [
  { name: 'claude-10mb', write: (p) => claude({ mb: 10 }, p) },
  { name: 'claude-100mb', write: (p) => claude({ mb: 100 }, p) },
  { name: 'claude-1gb', write: (p) => claude({ mb: 1024 }, p) },
  // 2.1 GB (2,023 MiB), just under the default limit of 2,048 MiB, so it is read without
  // "Open anyway": a copy is 1.83 MB once its ids are made distinct, a little more than the source.
  { name: 'claude-2gb', write: (p) => claude({ copies: 1160 }, p) },
  { name: 'canonical-1m', write: (p) => canonical(1_000_000, p) },
  { name: 'bailian-50k', write: (p) => bailian(50_000, p) },
];

/** Every process id with its parent and command line. */
function processes(): { pid: number; ppid: number; cmd: string }[] {
  const out: { pid: number; ppid: number; cmd: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      out.push({ pid: Number(entry), ppid, cmd: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The extension host started by the code-server with this user-data folder. */
function extensionHostPid(dataDir: string): number | null {
  const all = processes();
  const server = all.filter((p) => p.cmd.includes(dataDir)).map((p) => p.pid);
  const descends = (pid: number): boolean => {
    const byPid = new Map(all.map((p) => [p.pid, p.ppid]));
    for (let p = byPid.get(pid); p !== undefined && p > 1; p = byPid.get(p)) if (server.includes(p)) return true;
    return false;
  };
  const host = all.find((p) => /extensionHost/.test(p.cmd) && descends(p.pid));
  return host?.pid ?? null;
}

/** VmRSS and VmHWM (peak) of a process, MiB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

function cli(path: string): { seconds: number; peakMiB: number; calls: number } {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %M', process.execPath, CLI, 'analyze', path, '--json'], {
    encoding: 'utf8',
    maxBuffer: 2 ** 30,
  });
  const last = r.stderr.trim().split('\n').pop() ?? '';
  const [seconds, kb] = last.split(' ').map(Number) as [number, number];
  const report = JSON.parse(r.stdout) as { sessions: { llmCalls: number }[] };
  return { seconds, peakMiB: kb / 1024, calls: report.sessions.reduce((n, s) => n + s.llmCalls, 0) };
}

/** Every file named `name` under `dir`, at any depth. */
function findFiles(dir: string, name: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findFiles(path, name));
    else if (entry.name === name) out.push(path);
  }
  return out;
}

/**
 * The trace worker's read as the extension logged it: when the worker answered (epoch ms,
 * from the log line's local time stamp) and how long it read and parsed. Null when not logged.
 */
function workerRead(dataDir: string, fileName: string): { answeredAtMs: number; parseS: number } | null {
  for (const log of findFiles(join(dataDir, 'logs'), 'Agent Trace Inspector.log')) {
    for (const line of readFileSync(log, 'utf8').split('\n')) {
      const m = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3}) \[info\] (.*): read in ([\d.]+) s in the trace worker/.exec(
        line,
      );
      if (m && m[3] === fileName) return { answeredAtMs: new Date(`${m[1]}T${m[2]}`).getTime(), parseS: Number(m[4]) };
    }
  }
  return null;
}

async function until(page: Page, check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await check().catch(() => false)) return performance.now();
    if (performance.now() - start > timeoutMs) throw new Error('timed out');
    await page.waitForTimeout(50);
  }
}

interface Opened {
  summaryS: number;
  timelineS: number;
  hostBeforeMiB: number;
  hostPeakMiB: number;
  calls: string;
  /** Click to the worker's start, the worker's read, the worker's answer to the summary on screen; null when the log did not say. */
  split: { beforeS: number; workerS: number; afterS: number } | null;
  /** When the host's memory peaked (s after the click, from 50 ms samples), its peak before the summary showed and its RSS then. */
  when: { peakS: number; peakBeforeSummaryMiB: number; atSummaryMiB: number };
}

async function openInVsCode(path: string, dir: string): Promise<Opened> {
  const cs = await startCodeServer({ vsix: [VSIX] });
  const browser = await launchBrowser();
  try {
    const page = browser.page;
    await openWorkbench(page, cs.url, dir, 'Agent Trace: Analyze Agent Session');
    // The extension host may start a moment after the workbench shows (seen on a first start): look again for a while.
    let host = extensionHostPid(join(cs.dir, 'data'));
    for (
      const started = performance.now();
      host === null && performance.now() - started < 60_000;
      host = extensionHostPid(join(cs.dir, 'data'))
    )
      await page.waitForTimeout(500);
    if (host === null) throw new Error('no extension host process found');
    const before = memory(host);
    const name = path.split('/').pop()!;
    let peak = before.rss;
    let peakAt = 0;
    const poll = setInterval(() => {
      try {
        const rss = memory(host).rss;
        if (rss > peak) {
          peak = rss;
          peakAt = performance.now();
        }
      } catch {
        // the host ended
      }
    }, 50);
    const web = (): FrameLocator => webview(page, EXTENSION_ID);
    // Quick Open, typed first: the clock starts at the click that opens the file.
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible' });
    await input.fill(name);
    const row = page.locator(`.quick-input-widget .monaco-list-row[aria-label^="${name}"]`).first();
    await row.waitFor({ state: 'visible' });
    const t0 = performance.now();
    const clickedAtMs = Date.now();
    await row.click();
    const tSummary = await until(
      page,
      async () =>
        (await web().locator('[data-figure="llmCalls"]').count()) > 0 &&
        (await web().locator('[data-figure="llmCalls"]').first().isVisible()),
      30 * 60_000,
    );
    const atSummary = memory(host).rss;
    const peakBeforeSummary = peak;
    const tTimeline = await until(
      page,
      async () => (await web().locator('#app[data-painted="timeline"]').count()) > 0,
      30 * 60_000,
    );
    clearInterval(poll);
    const calls = (await web().locator('[data-figure="llmCalls"]').first().textContent()) ?? '';
    const after = memory(host);
    const summaryS = (tSummary - t0) / 1000;
    // The log is written by the extension host a moment later at most.
    await page.waitForTimeout(1500);
    const read = workerRead(join(cs.dir, 'data'), name);
    const split =
      read === null
        ? null
        : {
            beforeS: (read.answeredAtMs - clickedAtMs) / 1000 - read.parseS,
            workerS: read.parseS,
            afterS: summaryS - (read.answeredAtMs - clickedAtMs) / 1000,
          };
    const when = { peakS: (peakAt - t0) / 1000, peakBeforeSummaryMiB: peakBeforeSummary, atSummaryMiB: atSummary };
    return {
      summaryS,
      timelineS: (tTimeline - t0) / 1000,
      hostBeforeMiB: before.rss,
      hostPeakMiB: Math.max(peak, after.peak),
      calls,
      split,
      when,
    };
  } finally {
    await browser.close();
    await cs.stop();
  }
}

async function main(): Promise<void> {
  if (!existsSync(VSIX) || !existsSync(CLI))
    execFileSync('npm', ['run', 'package'], { cwd: repoRoot, stdio: 'inherit' });
  const wanted = process.argv.slice(2);
  const cases = wanted.length > 0 ? CASES.filter((c) => wanted.includes(c.name)) : CASES;
  const dir = mkdtempSync(join(tmpdir(), 'agent-trace-bench-open-'));
  const rows: string[] = [];
  try {
    for (const c of cases) {
      const path = join(dir, `${c.name}.trace.jsonl`);
      await c.write(path);
      const mb = statSync(path).size / 2 ** 20;
      const load = loadavg()[0]!.toFixed(1);
      const base = cli(path);
      const vs = await openInVsCode(path, dir);
      const row =
        `${c.name.padEnd(13)} ${mb.toFixed(0).padStart(5)} MB ${base.calls.toLocaleString('en-US').padStart(9)} calls | CLI ${base.seconds.toFixed(1)} s, ${base.peakMiB.toFixed(0)} MiB | ` +
        `summary ${vs.summaryS.toFixed(1)} s (${(vs.summaryS / base.seconds).toFixed(2)}× CLI; target ≤ 1.5) | timeline ${vs.timelineS.toFixed(1)} s (${(vs.timelineS / base.seconds).toFixed(2)}× CLI; target ≤ 2) | ` +
        `host ${vs.hostBeforeMiB.toFixed(0)} → peak ${vs.hostPeakMiB.toFixed(0)} MiB (target ≤ 1024) at ${vs.when.peakS.toFixed(1)} s; ${vs.when.peakBeforeSummaryMiB.toFixed(0)} MiB at most before the summary, ${vs.when.atSummaryMiB.toFixed(0)} at it | ` +
        (vs.split
          ? `summary = before ${vs.split.beforeS.toFixed(1)} + worker ${vs.split.workerS.toFixed(1)} + after ${vs.split.afterS.toFixed(1)} s | `
          : '') +
        `load ${load} → ${loadavg()[0]!.toFixed(1)}`;
      rows.push(row);
      console.log(row);
      rmSync(path, { force: true });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `\nbench:open, code-server + Chromium, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${availableParallelism()} cores:`,
  );
  for (const r of rows) console.log(r);
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
