import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { FrameLocator, Page } from 'playwright-core';
import {
  acceptPickerUntil,
  launchBrowser,
  openWorkbench,
  quickOpen,
  runCommand,
  startCodeServer,
  webview,
} from '../support/vscodeE2e.mjs';
import { createWorkspace, removeWorkspace, repoRoot } from '../support/workspace.mjs';

// The packaged extension in a real VS Code (code-server 1.100) driven by Debian's Chromium:
// install the .vsix, open traces the way a user does, read the numbers inside the webview,
// and keep screenshots in test-results/ for a person to look at.

const VSIX = path.join(repoRoot, 'dist/agent-trace-inspector.vsix');
const EXTENSION_ID = 'agent-trace.agent-trace-inspector';
const shots = path.join(repoRoot, 'test-results');

interface Session {
  page: Page;
  web: () => FrameLocator;
}

let currentPage: Page | null = null;

async function figure(web: FrameLocator, name: string): Promise<string> {
  const el = web.locator(`[data-figure="${name}"]`).first();
  try {
    await el.waitFor({ timeout: 20_000 });
  } catch (e) {
    // Keep what the user would have seen, for the CI log reader.
    await currentPage?.screenshot({ path: path.join(shots, `e2e-failure-${name}-${Date.now()}.png`) });
    throw e;
  }
  return (await el.textContent())?.trim() ?? '';
}

async function paintedPixels(web: FrameLocator, atLeast = 1000): Promise<number> {
  // The chart paints on an animation frame after its figures are shown: wait a little for it.
  let n = 0;
  for (let i = 0; i < 50 && n <= atLeast; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 100));
    n = await web
      .locator('canvas')
      .first()
      .evaluate((c: HTMLCanvasElement) => {
        const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
        let painted = 0;
        for (let j = 3; j < d.length; j += 4) if (d[j]) painted++;
        return painted;
      });
  }
  return n;
}

/** Every file named `name` under `dir`, at any depth. */
function filesNamed(dir: string, name: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? filesNamed(path.join(dir, e.name), name) : e.name === name ? [path.join(dir, e.name)] : [],
    );
}

/** How many times the extension read `fileName`, as its own log says (one "read in … s in the trace worker" line per read). */
function readsLogged(dataDir: string, fileName: string): number {
  const line = new RegExp(`\\[info\\] ${fileName.replace(/\./g, '\\.')}: read in [\\d.]+ s in the trace worker`, 'g');
  return filesNamed(path.join(dataDir, 'logs'), 'Agent Trace Inspector.log').reduce(
    (n, f) => n + (fs.readFileSync(f, 'utf8').match(line)?.length ?? 0),
    0,
  );
}

async function screenshot(page: Page, name: string): Promise<void> {
  await page.waitForTimeout(600); // notifications and chart animations settle
  await page.screenshot({ path: path.join(shots, name) });
}

describe('Agent Trace Inspector in real VS Code (code-server + Chromium)', () => {
  let cs: { url: string; dir: string; stop: () => Promise<void> };
  let browser: { page: Page; close: () => Promise<void> };
  let workspace: string;
  let s: Session;

  before(async () => {
    if (!fs.existsSync(VSIX)) execFileSync('npm', ['run', 'package'], { cwd: repoRoot, stdio: 'inherit' });
    fs.mkdirSync(shots, { recursive: true });
    workspace = createWorkspace();
    cs = await startCodeServer({ vsix: [VSIX] });
    browser = await launchBrowser();
    const page = browser.page;
    currentPage = page;
    await openWorkbench(page, cs.url, workspace, 'Agent Trace: Analyze Agent Session');
    // The visible webview: VS Code keeps hidden webviews' iframes in the page.
    s = { page, web: (): FrameLocator => webview(page, EXTENSION_ID) };
  });

  // Each test starts from an empty editor area, so one failure cannot leave a second webview behind.
  beforeEach(async () => {
    // Close any menu a failed test left open, then take focus out of a webview: keys pressed inside its iframe do not reach the workbench.
    await s.page.keyboard.press('Escape');
    await s.page.locator('.part.sidebar .composite.title').first().click();
    await runCommand(s.page, 'View: Close All Editors');
    await s.page.locator('.editor-group-container .tab').first().waitFor({ state: 'detached' });
    // A closed webview's iframe leaves the page a moment later; wait, so the next test finds only its own.
    await s.page.locator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).first().waitFor({ state: 'detached' });
  });

  after(async () => {
    await browser?.close();
    await cs?.stop();
    if (workspace) removeWorkspace(workspace);
  });

  it('opens the bundled sample in the inspector and shows its figures and chart', async () => {
    await quickOpen(s.page, 'claude-code-sessions.trace.jsonl');
    const web = s.web();
    // Calls 102–149 of the spotter session, summed independently in Python (samples/README.md).
    assert.equal(await figure(web, 'llmCalls'), '48');
    assert.equal(await figure(web, 'userTurns'), '2');
    assert.equal(await figure(web, 'cached'), '4,997,060');
    assert.equal(await figure(web, 'appended'), '65,062');
    assert.equal(await figure(web, 'output'), '9,782');
    assert.equal(await figure(web, 'cacheHitRate'), '98.7%');
    assert.equal(await figure(web, 'appendToOutputMedian'), '9.00×');
    assert.ok((await paintedPixels(web)) > 1000, 'the timeline canvas is painted');
    // Priced by the host: $0.9958422 for this session by test/reference/cost_reference.mjs. It ran with
    // 5-minute writes and no gap outlasted them, so 1-hour caching only re-prices its writes at 2/1.25 = 1.6×
    // (Haiku and Opus alike): $0.2255 of writes become $0.3608, $1.13 in all, +14%.
    assert.equal(await figure(web, 'costTotal'), '$0.996');
    assert.match(
      (await web.locator('[data-ttl-sentence]').textContent()) ?? '',
      /^With 1-hour caching this session would have cost \$1\.13 \(\+14%\); 0 calls re-wrote the cache after a gap longer than 5 min\.$/,
    );
    const tab = s.page.locator('.tabs-container .tab.active');
    assert.match((await tab.getAttribute('aria-label')) ?? '', /claude-code-sessions\.trace\.jsonl/);
    await screenshot(s.page, 'e2e-sample-inspector.png');
  });

  it('a price written into the workspace settings re-prices the open panel, and taking it out restores the list prices', async () => {
    await quickOpen(s.page, 'claude-code-sessions.trace.jsonl');
    const web = s.web();
    assert.equal(await figure(web, 'costTotal'), '$0.996');
    const settingsFile = path.join(workspace, '.vscode/settings.json');
    const original = fs.readFileSync(settingsFile, 'utf8');
    const costShown = async (expected: string): Promise<string> => {
      let shown = '';
      for (let i = 0; i < 200 && shown !== expected; i++) {
        shown = (await web.locator('[data-figure="costTotal"]').first().textContent())?.trim() ?? '';
        if (shown !== expected) await s.page.waitForTimeout(100);
      }
      return shown;
    };
    try {
      // Written on disk as a user editing .vscode/settings.json would: VS Code reads the file again and tells the extension.
      // (The workspace's file: code-server does not notice outside writes to its user settings file, not even for its own theme setting.)
      fs.writeFileSync(
        settingsFile,
        JSON.stringify(
          { ...JSON.parse(original), 'agentTrace.prices': [{ model: 'claude-*', multiplier: 0.5 }] },
          null,
          1,
        ),
      );
      // Every call of the session is a Claude model: half of $0.9958422 is $0.4979211.
      assert.equal(await costShown('$0.498'), '$0.498');
    } finally {
      fs.writeFileSync(settingsFile, original);
    }
    assert.equal(await costShown('$0.996'), '$0.996');
  });

  it('"Export HTML Report" writes a standalone report of the open trace beside it', async () => {
    await quickOpen(s.page, 'claude-code-sessions.trace.jsonl');
    assert.equal(await figure(s.web(), 'llmCalls'), '48');
    const target = path.join(workspace, 'claude-code-sessions.trace.report.html');
    fs.rmSync(target, { force: true });
    // The sample holds 3 sessions: every one is ticked; accept.
    const sessions = s.page.locator('.quick-input-widget .monaco-list-row:visible', {
      hasText: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04',
    });
    // code-server's save dialog is a quick input holding the default path, beside the trace.
    const saveDialogShown = (timeout: number) =>
      s.page.waitForFunction(
        () =>
          /report\.html$/.test(
            (document.querySelector('.quick-input-widget .quick-input-box input') as HTMLInputElement | null)?.value ??
              '',
          ),
        null,
        { timeout },
      );
    // The picker accepted with Enter, again if a webview took the focus and no save dialog followed.
    await acceptPickerUntil(s.page, 'Agent Trace: Export HTML Report', sessions.first(), saveDialogShown, {
      onGiveUp: () => screenshot(s.page, 'e2e-export-report-no-dialog.png'),
    });
    const input = s.page.locator('.quick-input-widget .quick-input-box input');
    assert.match(await input.inputValue(), /claude-code-sessions\.trace\.report\.html$/);
    await s.page.keyboard.press('Enter');
    await s.page
      .locator('.notifications-toasts .notification-toast', {
        hasText: 'Report saved to claude-code-sessions.trace.report.html',
      })
      .waitFor({ timeout: 30_000 });
    await screenshot(s.page, 'e2e-export-report.png');
    const html = fs.readFileSync(target, 'utf8');
    assert.match(
      html,
      /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;|default-src 'none'/,
    );
    assert.match(html, /<script type="application\/json" id="report-data">/);
    const data = JSON.parse(
      html.slice(html.indexOf('id="report-data">') + 17, html.indexOf('</script>', html.indexOf('id="report-data">'))),
    );
    assert.equal(data.traces[0].view.sessions.length, 3);
    assert.equal(data.traces[0].view.sessions[0].summary.llmCalls, 48);
    assert.notEqual(data.redaction, null, 'redacted by default');
  });

  it('reveals the selected call in a text editor beside the inspector (keyboard)', async () => {
    await quickOpen(s.page, 'claude-code-sessions.trace.jsonl');
    const web = s.web();
    await figure(web, 'llmCalls');
    const chart = web.locator('.chart-wrap').first();
    await chart.focus();
    await s.page.keyboard.press('End');
    await s.page.keyboard.press('Enter');
    // The text editor opens in a second group, on the sample file, with a line selected.
    const textTab = s.page
      .locator('.editor-group-container')
      .nth(1)
      .locator('.tab', { hasText: 'claude-code-sessions.trace.jsonl' });
    await textTab.waitFor({ timeout: 15_000 });
    await screenshot(s.page, 'e2e-reveal-source.png');
  });

  it('opens a Claude Code log through "Reopen Editor With…" and shows the same timeline', async () => {
    await quickOpen(s.page, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl');
    await s.page.locator('.tabs-container .tab.active', { hasText: 'ae4a77f8' }).waitFor();
    await runCommand(s.page, 'View: Reopen Editor With...');
    await s.page
      .locator('.quick-input-widget .monaco-list-row:visible', { hasText: 'Agent Trace Inspector' })
      .first()
      .click();
    const web = s.web();
    assert.equal(await figure(web, 'llmCalls'), '149');
    assert.equal(await figure(web, 'cacheHitRate'), '98.4%');
    await screenshot(s.page, 'e2e-claude-open-with.png');
  });

  it('navigates the timeline: zoom and pan by keyboard and mouse, jump to the next failure, search by error text selects the call, the brush follows', async () => {
    // The spotter log, 149 calls. Counted from the raw log (by message id, main thread only):
    // tool results with is_error fall in calls 22, 49, 74, 104, …; the one result whose text
    // says "permission denied" (log line 916) answers a tool call of call 74.
    await quickOpen(s.page, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl');
    // VS Code may open it in the inspector at once (it remembers an earlier "Reopen With"): the
    // tab is clicked first so the command palette's keys reach the workbench, not the webview.
    await s.page.locator('.tabs-container .tab.active', { hasText: 'ae4a77f8' }).click();
    await runCommand(s.page, 'View: Reopen Editor With...');
    await s.page
      .locator('.quick-input-widget .monaco-list-row:visible', { hasText: 'Agent Trace Inspector' })
      .first()
      .click();
    const web = s.web();
    assert.equal(await figure(web, 'llmCalls'), '149');
    const chart = web.locator('.chart-wrap');
    await web.locator('.chart-wrap[data-plot-area]').waitFor({ timeout: 20_000 });
    const view = async (): Promise<[number, number]> =>
      (await chart.getAttribute('data-view'))!.split(',').map(Number) as [number, number];
    const brush = async (): Promise<[number, number]> =>
      (await web.locator('.overview-wrap').getAttribute('data-brush'))!.split(',').map(Number) as [number, number];
    /** Waits until the view differs from `before`, and returns it. */
    const viewChanged = async (before: [number, number]): Promise<[number, number]> => {
      for (let i = 0; i < 50; i++) {
        const v = await view();
        if (v[0] !== before[0] || v[1] !== before[1]) return v;
        await s.page.waitForTimeout(100);
      }
      throw new Error(`the view stayed at ${before.join('–')}`);
    };
    const all = await view();
    assert.deepEqual(all, [0, 149]);
    const fullBrush = await brush();

    // Keyboard: + zooms in, Page Down pans a page right, 0 fits every call again.
    await chart.focus();
    await s.page.keyboard.press('+');
    const zoomed = await viewChanged(all);
    assert.ok(zoomed[1] - zoomed[0] < 149, `zoomed to ${zoomed.join('–')}`);
    const zoomedBrush = await brush();
    assert.ok(zoomedBrush[1] - zoomedBrush[0] < fullBrush[1] - fullBrush[0], 'the brush narrows with the zoom');
    await chart.focus();
    await s.page.keyboard.press('PageDown');
    const paged = await viewChanged(zoomed);
    assert.ok(paged[0] > zoomed[0], `paged from ${zoomed.join('–')} to ${paged.join('–')}`);
    assert.ok((await brush())[0] > zoomedBrush[0], 'the brush moved right with the page');
    await chart.focus();
    await s.page.keyboard.press('0');
    assert.deepEqual(await viewChanged(paged), [0, 149]);

    // Mouse: the wheel zooms around the pointer, a drag pans.
    const box = (await chart.locator('canvas').boundingBox())!;
    await s.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await s.page.mouse.wheel(0, -400);
    const wheeled = await viewChanged([0, 149]);
    assert.ok(wheeled[1] - wheeled[0] < 149, `the wheel zoomed to ${wheeled.join('–')}`);
    await s.page.mouse.down();
    await s.page.mouse.move(box.x + box.width / 2 - 200, box.y + box.height / 2, { steps: 8 });
    await s.page.mouse.up();
    const dragged = await viewChanged(wheeled);
    assert.ok(
      dragged[0] > wheeled[0],
      `dragging left moved the view right: ${wheeled.join('–')} → ${dragged.join('–')}`,
    );
    await screenshot(s.page, 'e2e-timeline-zoomed.png');

    // Jump: F selects the next failure, from the start: call 22, then 49; the live region says so.
    const live = web.locator('.timeline [aria-live="polite"]').first();
    await live.evaluate((el) => {
      const node = el as HTMLElement & { said?: string[] };
      node.said = [];
      new MutationObserver(() => node.said!.push(node.textContent ?? '')).observe(node, {
        childList: true,
        characterData: true,
        subtree: true,
      });
    });
    await chart.focus();
    await s.page.keyboard.press('0');
    await chart.focus();
    await s.page.keyboard.press('Home');
    await web.locator('.chart-wrap[data-selected-call="0"]').waitFor();
    await chart.focus();
    await s.page.keyboard.press('f');
    await web.locator('.chart-wrap[data-selected-call="22"]').waitFor({ timeout: 10_000 });
    await chart.focus();
    await s.page.keyboard.press('f');
    await web.locator('.chart-wrap[data-selected-call="49"]').waitFor({ timeout: 10_000 });
    // What the live region said (it says the view next, so its texts are recorded as they come).
    const said = (): Promise<string[]> => live.evaluate((el) => (el as HTMLElement & { said?: string[] }).said ?? []);
    for (let i = 0; i < 50 && !(await said()).some((t) => /Failed call 2 of 11\. Call 50 of 149/.test(t)); i++)
      await s.page.waitForTimeout(100);
    assert.ok(
      (await said()).some((t) => /Failed call 2 of 11\. Call 50 of 149/.test(t)),
      (await said()).join(' | '),
    );

    // Zoom in on the start, so call 75 is out of view.
    await chart.focus();
    await s.page.keyboard.press('Home');
    for (let i = 0; i < 3; i++) {
      await chart.focus();
      await s.page.keyboard.press('+');
    }
    await s.page.waitForFunction(() => true);
    const start = await view();
    const startBrush = await brush();
    // Search by error text: one call matches; opening it selects call 74 and brings it into view, the brush with it.
    const field = web.locator('#call-search input');
    await field.fill('permission denied');
    await field.press('Enter');
    await web.locator('.search-results[data-total="1"]').waitFor({ timeout: 15_000 });
    assert.equal(await web.locator('.search-results [data-hit="0"]').getAttribute('data-call'), '74');
    await web.locator('.search-results [data-hit="0"]').click();
    await web.locator('.chart-wrap[data-selected-call="74"]').waitFor({ timeout: 10_000 });
    assert.ok(start[1] < 74.5, `zoomed on the start first: ${start.join('–')}`);
    const [lo, hi] = await viewChanged(start);
    assert.ok(lo <= 74.5 && hi >= 74.5, `call 75 brought into view: ${lo}–${hi}`);
    assert.ok((await brush())[0] > startBrush[0], 'the brush followed to the right');
    const [areaLeft, areaRight] = (await web.locator('.overview-wrap').getAttribute('data-brush-area'))!
      .split(',')
      .map(Number) as [number, number];
    const [b0, b1] = await brush();
    const x74 = areaLeft + ((74 + 0.5) / 149) * (areaRight - areaLeft);
    assert.ok(b0 - 1 <= x74 && x74 <= b1 + 1, `the brush (${b0}–${b1}) covers call 75 at x=${x74.toFixed(0)}`);
    await web.locator('.details h3', { hasText: 'Call 75 of 149' }).waitFor({ timeout: 10_000 });
    await screenshot(s.page, 'e2e-timeline-search.png');
  });

  it('switching sessions and toggling Show cached do not read the file again; choosing a format does', async () => {
    const name = 'claude-code-sessions.trace.jsonl';
    const dataDir = path.join(cs.dir, 'data');
    const before = readsLogged(dataDir, name);
    await quickOpen(s.page, name);
    const web = s.web();
    assert.equal(await figure(web, 'llmCalls'), '48');
    const reads = async (n: number): Promise<void> => {
      for (let i = 0; i < 100 && readsLogged(dataDir, name) - before < n; i++) await s.page.waitForTimeout(100);
      assert.equal(readsLogged(dataDir, name) - before, n);
    };
    await reads(1);
    // The sample's three sessions: the spotter part (48 calls), its compaction agent, the M-Claude session (41 calls).
    await web.locator('#session-picker').click();
    await web.locator('#session-picker li.option', { hasText: 'e5821007' }).click();
    await web.locator('[data-figure="llmCalls"]', { hasText: /^41$/ }).waitFor();
    await web.locator('.chart-wrap canvas').first().waitFor();
    await web.locator('#session-picker').click();
    await web.locator('#session-picker li.option', { hasText: 'acompact' }).click();
    await web.locator('[data-figure="llmCalls"]', { hasText: /^1$/ }).waitFor();
    await web.locator('#session-picker').click();
    await web.locator('#session-picker li.option', { hasText: 'e5821007' }).click();
    await web.locator('[data-figure="llmCalls"]', { hasText: /^41$/ }).waitFor();
    // Show cached off and on: the legend follows.
    await web.locator('vscode-checkbox', { hasText: 'Show cached' }).click();
    await web.locator('.timeline-head > .legend.cached-hidden').waitFor();
    await web.locator('vscode-checkbox', { hasText: 'Show cached' }).click();
    await web.locator('.timeline-head > .legend.cached-hidden').waitFor({ state: 'detached' });
    // The log is written a moment after a read: give a read that should not have happened time to show.
    await s.page.waitForTimeout(1500);
    await reads(1);
    // The counter can move: choosing a format reads the file again.
    await web.locator('#format-picker').click();
    await web.locator('#format-picker li.option', { hasText: 'Claude Code session log' }).click();
    await reads(2);
  });

  it('reopens as text with "Show Trace Source" and goes back with "Open in Agent Trace Inspector"', async () => {
    await quickOpen(s.page, 'claude-code-sessions.trace.jsonl');
    assert.equal(await figure(s.web(), 'llmCalls'), '48');
    await runCommand(s.page, 'Agent Trace: Show Trace Source');
    await s.page.locator('.monaco-editor .view-lines').first().waitFor();
    assert.ok(
      await s.page.locator('.tabs-container .tab.active', { hasText: 'claude-code-sessions.trace.jsonl' }).isVisible(),
    );
    await runCommand(s.page, 'Agent Trace: Open in Agent Trace Inspector');
    assert.equal(await figure(s.web(), 'llmCalls'), '48');
  });

  it('opens a SWE-agent .traj through "Reopen Editor With…": totals only, said plainly', async () => {
    await quickOpen(s.page, 'pydicom__pydicom-1458.traj');
    await s.page.locator('.tabs-container .tab.active', { hasText: 'pydicom__pydicom-1458.traj' }).waitFor();
    await runCommand(s.page, 'View: Reopen Editor With...');
    await s.page
      .locator('.quick-input-widget .monaco-list-row:visible', { hasText: 'Agent Trace Inspector' })
      .first()
      .click();
    const web = s.web();
    // info.model_stats of the file: 12 api calls, 122,612 tokens sent.
    assert.equal(await figure(web, 'llmCalls'), '12');
    assert.equal(await figure(web, 'input'), '122,612');
    await web
      .getByText(/No per-call token counts in SWE-agent trajectories/)
      .first()
      .waitFor();
    await web
      .getByText(/^Totals only/)
      .first()
      .waitFor();
    await screenshot(s.page, 'e2e-swe-agent-open-with.png');
  });

  it('opens a Mooncake KV trace from the explorer context menu, and the format picker re-reads it', async () => {
    const row = s.page.locator('.explorer-folders-view .monaco-list-row[aria-label="formats"]');
    if ((await row.getAttribute('aria-expanded')) !== 'true') await row.click();
    await s.page
      .locator('.explorer-folders-view .monaco-list-row[aria-label="conversation_trace.head300.jsonl"]')
      .click({ button: 'right' });
    // Hover first, then click the item's own anchor. A click during the menu's fade-in can
    // still be lost on a busy machine (seen once in CI): the menu then stays open, so click again.
    const item = s.page.locator('.context-view .action-menu-item', { hasText: 'Open in Agent Trace Inspector' });
    const menu = s.page.locator('.context-view .monaco-menu');
    for (let attempt = 1; ; attempt++) {
      await item.hover();
      await item.click();
      try {
        await menu.waitFor({ state: 'detached', timeout: 5_000 });
        break;
      } catch (e) {
        if ((await menu.count()) === 0) break;
        if (attempt === 3) throw e;
      }
    }
    const web = s.web();
    // 300 rows, one call each (the file has no sessions).
    assert.equal(await figure(web, 'llmCalls'), '300');
    await web
      .getByText(/infinite prefix cache|ideal/i)
      .first()
      .waitFor();
    // Read it as Claude Code instead: nothing of that format is in it.
    await web.locator('#format-picker').click();
    await web.locator('#format-picker li.option', { hasText: 'Claude Code session log' }).click();
    await web.getByText(/No sessions found/).waitFor();
    await web.getByText(/Read as Claude Code session log, as you chose/).waitFor();
    await screenshot(s.page, 'e2e-format-override.png');
    await web.locator('#format-picker').click();
    await web.locator('#format-picker li.option', { hasText: 'Detect automatically' }).click();
    assert.equal(await figure(web, 'llmCalls'), '300');
  });

  it('shows a malformed line in the panel and in the Problems view, and loads the rest', async () => {
    await quickOpen(s.page, 'malformed-line.trace.jsonl');
    const web = s.web();
    assert.equal(await figure(web, 'llmCalls'), '3');
    await web
      .getByText(/not valid JSON/)
      .first()
      .waitFor();
    await s.page.keyboard.press('Control+Shift+M'); // View: Toggle Problems
    const problem = s.page.locator('.markers-panel .monaco-list-row', { hasText: 'not valid JSON' });
    await problem.first().waitFor();
    assert.match((await problem.first().textContent()) ?? '', /\[Ln 5/);
    await screenshot(s.page, 'e2e-malformed-problems.png');
    await s.page.keyboard.press('Control+Shift+M');
  });

  it('an empty file shows what was expected instead of a blank panel', async () => {
    await quickOpen(s.page, 'empty.trace.jsonl');
    await s
      .web()
      .getByText(/This file is empty/)
      .first()
      .waitFor();
    await screenshot(s.page, 'e2e-empty-file.png');
  });

  it('"Analyze Agent Session" from the command palette opens the inspector and reports', async () => {
    await quickOpen(s.page, 'claude-code-sessions.trace.jsonl');
    await figure(s.web(), 'llmCalls');
    await runCommand(s.page, 'Agent Trace: Analyze Agent Session');
    const toast = s.page.locator('.notifications-toasts .notification-toast', { hasText: '48 LLM calls' });
    await toast.waitFor();
    assert.match((await toast.textContent()) ?? '', /cache hit rate 98\.7%/);
    // The sample's cost by test/reference/cost_reference.mjs: $5.1342127, every call priced.
    assert.match((await toast.textContent()) ?? '', /cost \$5\.13,/);
    await screenshot(s.page, 'e2e-analyze-command.png');
  });
  it('shows CodeLens on a Claude Code log opened as text, lists its retry loop in Problems, and "Show in Timeline" selects the call', async () => {
    await quickOpen(s.page, 'edit-retry-loop.jsonl');
    await s.page.locator('.tabs-container .tab.active', { hasText: 'edit-retry-loop.jsonl' }).waitFor();
    // Counted by hand from the file: 41 distinct assistant message ids, 13 is_error results,
    // cache_read 1,768,739 of 2,069,302 input tokens = 85.5%; $3.36867825 by test/reference/cost_reference.mjs.
    const top = s.page.locator('.monaco-editor .codelens-decoration', {
      hasText: 'Agent Trace · 41 calls · $3.37 · cache hit 85.5% · 13 failed tool calls · 1 retry loop',
    });
    await top.waitFor({ timeout: 20_000 });
    assert.match((await top.textContent()) ?? '', /Open Inspector/);
    await screenshot(s.page, 'e2e-codelens-top.png');
    // Go to line 74, the 4th failing Edit/Write on sync_raw_logs.py (line 61 is the 1st: both in view).
    await s.page.keyboard.press('Control+G');
    await s.page.locator('.quick-input-widget .quick-input-box input').fill(':74');
    await s.page.keyboard.press('Enter');
    const fourth = s.page.locator('.monaco-editor .codelens-decoration', {
      hasText: '4th failed Write on sync_raw_logs.py',
    });
    await fourth.waitFor({ timeout: 20_000 });
    // Line 74's error is 96 characters (⌈96/4⌉ = 24 tokens), re-read by the 20 calls after the 21st of 41.
    // In dollars: the 22nd call writes it ($6.25/Mtok), 19 read it ($0.50/Mtok): 24 × 15.75 µ$ = $0.0004.
    assert.match((await fourth.textContent()) ?? '', /carries ≈24 tokens × 20 calls \(\$0\.0004\)/);
    await s.page
      .locator('.monaco-editor .codelens-decoration', { hasText: '1st failed Edit on sync_raw_logs.py' })
      .waitFor();
    await screenshot(s.page, 'e2e-codelens.png');

    await s.page.keyboard.press('Control+Shift+M'); // View: Toggle Problems
    const problem = s.page.locator('.markers-panel .monaco-list-row', {
      hasText: 'Retry loop: 4 failed Edit/Write on sync_raw_logs.py',
    });
    await problem.first().waitFor();
    assert.match((await problem.first().textContent()) ?? '', /gave up; ≈2\.1k tokens carried forward.*\[Ln 61/);
    await screenshot(s.page, 'e2e-codelens-problems.png');
    await s.page.keyboard.press('Control+Shift+M');

    await fourth.locator('a', { hasText: 'Show in Timeline' }).click();
    // The call that made the 4th attempt is the 21st: index 20.
    await s.web().locator('.chart-wrap[data-selected-call="20"]').waitFor({ timeout: 20_000 });
    assert.equal(await figure(s.web(), 'llmCalls'), '41');
    await screenshot(s.page, 'e2e-show-in-timeline.png');
  });

  it('opens the what-if panel on the sample, changes N, and shows the new numbers (screenshots before and after)', async () => {
    await quickOpen(s.page, 'claude-code-sessions.trace.jsonl');
    const web = s.web();
    assert.equal(await figure(web, 'llmCalls'), '48');
    await web.locator('.whatif-summary').click();
    // The default scenario (settings): 16 sessions on one H200 with Qwen3-32B; the simulator runs in a worker started from a blob: URL.
    const done = (n: number) =>
      web
        .locator(`.whatif[data-scenario-status="done"][data-replicas="${n}"]`)
        .waitFor({ state: 'attached', timeout: 60_000 });
    await done(16);
    await web
      .locator('.whatif-cliff-chart[data-knee]:not([data-knee=""])')
      .waitFor({ state: 'attached', timeout: 60_000 });
    const sentence = async (): Promise<string> => (await web.locator('.whatif-sentence').textContent())?.trim() ?? '';
    assert.match(
      await sentence(),
      /^16 sessions like this on one H200 with Qwen3-32B: hit rate falls from \d+% to \d+% and prefill becomes \d+% of LLM time/,
    );
    // The selects show the scenario (their label lives in their shadow root).
    assert.equal((await web.locator('#whatif-gpu .select-face .text').textContent())?.trim(), 'H200 141 GB');
    assert.equal((await web.locator('#whatif-policy .select-face .text').textContent())?.trim(), 'vLLM LRU');
    const before = await web.locator('[data-figure="whatIfSlowdown"]').textContent();
    assert.ok((await paintedPixels(web)) > 1000, 'the timeline is painted');
    // Bring the section to the top of the panel, as a person scrolling down to it would.
    await web.locator('.whatif').evaluate((e) => e.scrollIntoView({ block: 'start' }));
    await screenshot(s.page, 'e2e-whatif-before.png');
    await web.locator('#whatif-replicas input').fill('48');
    await done(48);
    assert.match(await sentence(), /^48 sessions like this on one H200 with Qwen3-32B/);
    assert.notEqual(await web.locator('[data-figure="whatIfSlowdown"]').textContent(), before, 'the figures follow N');
    assert.equal(await web.locator('.whatif-cliff-chart').getAttribute('data-current'), '48');
    await web.locator('.whatif').evaluate((e) => e.scrollIntoView({ block: 'start' }));
    await screenshot(s.page, 'e2e-whatif-after.png');
    // Bad input is refused at the field; nothing breaks.
    await web.locator('#whatif-replicas input').fill('0');
    await web.getByText('Sessions cannot be 0').waitFor();
    await web.locator('#whatif-replicas input').fill('48');
    await web.locator('[data-field-error="replicas"]').waitFor({ state: 'hidden' });

    // Step times from the person's own server: a calibration written by the CLI, picked in VS Code's open dialog.
    const cal = path.join(workspace, 'qwen.cal.json');
    execFileSync(
      process.execPath,
      [
        path.join(repoRoot, 'dist/cli.js'),
        'calibrate',
        path.join(repoRoot, 'test/fixtures/aiperf/qwen_concurrency1.profile_export.jsonl'),
        '-o',
        cal,
      ],
      { stdio: 'ignore' },
    );
    const slowdown48 = await web.locator('[data-figure="whatIfSlowdown"]').textContent();
    await web.locator('#whatif-calibration-load').click();
    const dialog = s.page.locator('.quick-input-widget .quick-input-box input');
    const dialogValue = () => dialog.evaluate((e) => (e as HTMLInputElement).value);
    // The dialog starts in the trace's folder: it shows that path, then lists the folder (on a loaded machine it can
    // write its path into the box again when the listing ends, over what was typed); the path is typed once it has.
    await s.page.waitForFunction(
      () =>
        ((document.querySelector('.quick-input-widget .quick-input-box input') as HTMLInputElement | null)?.value ??
          '') !== '' && document.querySelector('.quick-input-widget .quick-input-list .monaco-list-row') !== null,
      null,
      { timeout: 20_000 },
    );
    const calibrated = web.locator('[data-steps-note]', {
      hasText: 'From qwen.cal.json: 18.08 ms per step, 131.9 µs per prefilled token',
    });
    // The dialog lists the folder as the path is typed and may overwrite the typed path or let an Enter pressed during
    // that pass go by, as a person would see and type or press again; a dialog that closed without the note fails.
    for (let attempt = 1; ; attempt++) {
      await dialog.fill(cal);
      const typed = await s.page
        .waitForFunction(
          (want) =>
            (document.querySelector('.quick-input-widget .quick-input-box input') as HTMLInputElement | null)?.value ===
            want,
          cal,
          { timeout: 5_000 },
        )
        .then(
          () => true,
          () => false,
        );
      if (!typed) {
        const shown = JSON.stringify(await dialogValue());
        if (attempt === 3) assert.fail(`the open dialog shows ${shown}, not ${cal}`);
        console.log(`calibration dialog, try ${attempt}: it shows ${shown} after the path was typed; typed again`);
        continue;
      }
      await s.page.keyboard.press('Enter');
      try {
        await calibrated.waitFor({ timeout: 15_000 });
        break;
      } catch (error) {
        if (attempt === 3 || !(await dialog.isVisible())) throw error;
      }
    }
    await web.locator('.whatif-sentence', { hasText: '(step times from qwen.cal.json)' }).waitFor({ timeout: 60_000 });
    await done(48);
    assert.notEqual(
      await web.locator('[data-figure="whatIfSlowdown"]').textContent(),
      slowdown48,
      'the run uses the calibration',
    );
    await web.locator('[data-control="whatif-steps"]').evaluate((e) => e.scrollIntoView({ block: 'center' }));
    await screenshot(s.page, 'e2e-whatif-calibration.png');
    await web.locator('#whatif-calibration-drop').click();
    await web.locator('[data-steps-note]', { hasText: 'From the GPU and model presets' }).waitFor();
  });

  it('"Analyze Agent Session" with no editor open offers the local sessions and opens the chosen one', async () => {
    await runCommand(s.page, 'Agent Trace: Analyze Agent Session');
    // The fake ~/.claude of test/support/workspace.mjs: the M-Claude log, 41 calls, 13 failed tool results,
    // cache_read 1,768,739 of 2,069,302 input tokens = 85.5% (counted by hand from the file).
    const row = s.page.locator('.quick-input-widget .monaco-list-row', {
      hasText: '41 calls · $3.37 · cache hit 85.5% · 13 failed tool calls',
    });
    await row.waitFor({ timeout: 20_000 });
    await s.page
      .locator('.quick-input-widget .monaco-list-row', { hasText: '1 call · $0.144 · cache hit 45.4%' })
      .waitFor();
    await s.page.mouse.move(700, 700); // the pointer left on the input shows its placeholder as a hover over the title
    await screenshot(s.page, 'e2e-session-picker.png');
    await row.click();
    assert.equal(await figure(s.web(), 'llmCalls'), '41');
    await s.page.locator('.notifications-toasts .notification-toast', { hasText: '41 LLM calls' }).waitFor();
    await screenshot(s.page, 'e2e-session-picked.png');
  });
});
