// The inspector guide's screenshot of a long session's timeline: the real spotter session (149
// calls) written 61 times as one Claude Code log (scripts/makeBigTraces.ts: the same
// session id, fresh message and tool ids per copy), so one main session of 9,089 calls,
// about 107 MB, like the 111 MB log of issue 15. Drawn by the built page (dist/webview.js)
// in headless Chromium, dark theme, fed by the trace worker's TraceService.
//
// Run: npm run build && npx tsx bench/screenshotLongSession.ts [out.png]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTrace } from '../src/core/trace/parseTrace';
import { readTraceFiles } from '../src/node/traceFiles';
import { launchChromium, openInspector, startPageServer } from '../test/support/inspectorHarness';
import { claude } from '../scripts/makeBigTraces';

async function main(): Promise<void> {
  const out = process.argv[2] ?? 'media/screenshot-timeline-9089.png';
  const dir = mkdtempSync(join(tmpdir(), 'agent-trace-long-'));
  const path = join(dir, 'long-session.jsonl');
  const server = await startPageServer();
  const browser = await launchChromium();
  try {
    await claude({ copies: 61 }, path);
    const parsed = await parseTrace(await readTraceFiles(path));
    const p = await openInspector(browser, server.origin, {
      trace: parsed,
      fileName: 'long-session.jsonl (the spotter session ×61)',
      theme: 'dark',
      viewport: { width: 1400, height: 1000 },
      drawTimeoutMs: 10 * 60_000,
    });
    await p.page.locator('.chart-wrap').scrollIntoViewIfNeeded();
    await p.page.waitForSelector('.chart-wrap[data-plot-area]');
    await p.page.locator('.timeline').screenshot({ path: out });
    console.log(`${out}: ${await p.page.getAttribute('.chart-wrap', 'data-bar-count')} calls`);
    await p.close();
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
