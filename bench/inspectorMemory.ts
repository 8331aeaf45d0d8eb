// What keeping a hidden inspector alive would cost (VS Code's `retainContextWhenHidden`):
// the page's own memory while it shows a trace, measured where it runs (the built page in
// headless Chromium, fed by the trace worker's TraceService), for the bundled sample and
// for canonical sessions of 100,000 and 1,000,000 calls (scripts/makeBigTraces.ts). A
// retained webview keeps all of it, per open inspector tab, for as long as the tab is
// open in the background; VS Code's own renderer process for the webview comes on top.
//
// Printed: the JS heap in use and the array buffers and DOM outside it (CDP
// Runtime.getHeapUsage, after a collection) and the
// resident memory of the page's renderer process (/proc), with the load average.
// Run: npm run build && npx tsx bench/inspectorMemory.ts [calls…]   (default 100000 1000000)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTrace } from '../src/core/trace/parseTrace';
import { TraceService } from '../src/core/view/traceService';
import { readTraceFiles } from '../src/node/traceFiles';
import { canonical } from '../scripts/makeBigTraces';
import { launchChromium, openInspector, startPageServer } from '../test/support/inspectorHarness';

const MB = 2 ** 20;

/** Resident memory of a process, in MiB (Linux /proc). */
function rssMb(pid: number): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) / 1024 : null;
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const sizes = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => n > 0);
  const dir = mkdtempSync(join(tmpdir(), 'inspector-memory-'));
  const server = await startPageServer();
  const browser = await launchChromium();
  try {
    const cases: Array<[string, string]> = [
      ['the bundled sample (3 sessions, 90 calls)', join(__dirname, '../samples/claude-code-sessions.trace.jsonl')],
    ];
    for (const n of sizes.length > 0 ? sizes : [100_000, 1_000_000]) {
      const path = join(dir, `canonical-${n}.trace.jsonl`);
      await canonical(n, path);
      cases.push([`a canonical session of ${n.toLocaleString('en')} calls`, path]);
    }
    for (const [what, path] of cases) {
      const parsed = await parseTrace(await readTraceFiles(path));
      const service = new TraceService(parsed, {
        fileName: 'trace.jsonl',
        formatChosen: false,
        analysis: {},
        prices: null,
      });
      const p = await openInspector(browser, server.origin, {
        trace: parsed,
        fileName: 'trace.jsonl',
        service,
        drawTimeoutMs: 10 * 60_000,
      });
      await p.page.waitForSelector('.chart-wrap[data-plot-area]', { timeout: 10 * 60_000 });
      const cdp = await p.page.context().newCDPSession(p.page);
      await cdp.send('HeapProfiler.collectGarbage');
      // The JS heap, and the typed arrays' backing stores (the timeline's columns) outside it.
      const usage = (await cdp.send('Runtime.getHeapUsage')) as {
        usedSize: number;
        backingStorageSize?: number;
        embedderHeapUsedSize?: number;
      };
      const heap = usage.usedSize;
      const outside = (usage.backingStorageSize ?? 0) + (usage.embedderHeapUsedSize ?? 0);
      const { processInfo } = (await (await browser.newBrowserCDPSession()).send('SystemInfo.getProcessInfo')) as {
        processInfo: { type: string; id: number }[];
      };
      const renderers = processInfo.filter((x) => x.type === 'renderer').map((x) => rssMb(x.id) ?? 0);
      console.log(
        `${what}: JS heap ${(heap / MB).toFixed(1)} MiB, array buffers and DOM ${(outside / MB).toFixed(1)} MiB; renderer processes' RSS ${renderers.map((r) => r.toFixed(0)).join(' + ')} MiB (load ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')})`,
      );
      await p.close();
    }
  } finally {
    await browser.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
