import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { FrameLocator, Page } from 'playwright-core';
import {
  findCommand,
  launchBrowser,
  openWorkbench,
  quickOpen,
  runCommand,
  runCommandForPicker,
  startCodeServer,
  webview,
} from '../support/vscodeE2e.mjs';
import { createWorkspace, removeWorkspace, repoRoot } from '../support/workspace.mjs';

// What broke on the inspector page in a new user's first minutes, in a real VS Code
// (code-server) with the packaged extension: the stylesheet (the HTML report unstyled, the
// live badge too), the page's state lost when its tab went to the background (and Show in
// Timeline from a CodeLens then staying on the old call), and the overview strip's width
// after a layout change. Screenshots go to test-results/ for a person to look at.

const VSIX = path.join(repoRoot, 'dist/agent-trace-inspector.vsix');
const EXTENSION_ID = 'agent-trace.agent-trace-inspector';
const shots = path.join(repoRoot, 'test-results');
const SAMPLE = 'claude-code-sessions.trace.jsonl';

async function screenshot(page: Page, name: string): Promise<void> {
  await page.waitForTimeout(600);
  await page.screenshot({ path: path.join(shots, name) });
}

/** The overview strip against the plot: its canvas's drawn and shown widths, its brush area and the plot's ends (CSS pixels). */
async function strip(web: FrameLocator): Promise<{ pixels: number; css: number; area: number[]; plot: number[] }> {
  return web.locator('.overview-wrap').evaluate((wrap) => {
    const canvas = wrap.querySelector('canvas.overview') as HTMLCanvasElement;
    const chartWrap = document.querySelector('.chart-wrap') as HTMLElement;
    const chart = chartWrap.querySelector('canvas') as HTMLCanvasElement;
    const offset = chart.getBoundingClientRect().left - canvas.getBoundingClientRect().left;
    const [left, , right] = (chartWrap.dataset['plotArea'] ?? '0,0,0,0').split(',').map(Number) as [
      number,
      number,
      number,
    ];
    return {
      pixels: canvas.width / (window.devicePixelRatio || 1),
      css: canvas.clientWidth,
      area: (wrap.dataset['brushArea'] ?? '').split(',').map(Number),
      plot: [Math.round(offset + left), Math.round(offset + right)],
    };
  });
}

/** Waits until the strip is drawn at its shown width and lines up with the plot, or fails saying how it stands. */
async function stripFollows(page: Page, web: FrameLocator, what: string): Promise<{ css: number }> {
  let last = await strip(web);
  for (let i = 0; i < 60; i++) {
    if (
      Math.abs(last.pixels - last.css) <= 1 &&
      Math.abs(last.area[0]! - last.plot[0]!) <= 1 &&
      Math.abs(last.area[1]! - last.plot[1]!) <= 1
    )
      return last;
    await page.waitForTimeout(100);
    last = await strip(web);
  }
  assert.fail(
    `${what}: the overview strip is drawn ${last.pixels} px wide for ${last.css} px shown, its brush area ${last.area.join('–')} against the plot's ${last.plot.join('–')}`,
  );
}

/** Waits for the inspector's chart; on a timeout says what the workbench and the webview showed instead (and keeps a screenshot). */
async function chartShown(page: Page, web: FrameLocator, what: string): Promise<void> {
  try {
    await web.locator('.chart-wrap[data-plot-area]').waitFor({ timeout: 30_000 });
  } catch (e) {
    await page.screenshot({ path: path.join(shots, `e2e-no-chart-${what}.png`) }).catch(() => undefined);
    const frames = await page
      .locator('iframe.webview')
      .evaluateAll((fs) =>
        fs.map(
          (f) =>
            `${(f as HTMLIFrameElement).className} visible=${(f as HTMLElement).offsetParent !== null || getComputedStyle(f).visibility !== 'hidden'}`,
        ),
      )
      .catch(() => []);
    const shown = await web
      .locator('body')
      .innerText({ timeout: 2000 })
      .catch((err: unknown) => `(no webview body: ${String(err).slice(0, 200)})`);
    const tabs = await page
      .locator('.tabs-container .tab')
      .allInnerTexts()
      .catch(() => []);
    assert.fail(
      `${what}: no chart after 30 s (${String(e).split('\n')[0]}). Tabs: ${JSON.stringify(tabs)}. Webview frames: ${JSON.stringify(frames)}. The webview shows: ${shown.slice(0, 600)}`,
    );
  }
}

/** The report's computed styles (a string: tsx would wrap a function's inner closures in helpers the page lacks). */
const READ_REPORT_STYLES = `(() => {
  const root = getComputedStyle(document.documentElement);
  const css = (selector, property) => {
    const node = document.querySelector(selector);
    return node ? getComputedStyle(node).getPropertyValue(property) : 'missing ' + selector;
  };
  const face = document.querySelector('#session-picker')?.shadowRoot?.querySelector('.select-face');
  return {
    font: css('body', 'font-family'),
    themeFont: root.getPropertyValue('--vscode-font-family').trim(),
    cached: css('.legend .swatch-cached', 'background-color'),
    picker: face ? getComputedStyle(face).backgroundColor : 'missing picker',
    page: getComputedStyle(document.body).backgroundColor,
  };
})()`;

describe("the inspector page in a new user's first minutes, in real VS Code (code-server + Chromium)", () => {
  let cs: { url: string; dir: string; stop: () => Promise<void> };
  let browser: { page: Page; close: () => Promise<void> };
  let workspace: string;
  let page: Page;
  const web = (): FrameLocator => webview(page, EXTENSION_ID);

  before(async () => {
    if (!fs.existsSync(VSIX)) execFileSync('npm', ['run', 'package'], { cwd: repoRoot, stdio: 'inherit' });
    fs.mkdirSync(shots, { recursive: true });
    workspace = createWorkspace();
    cs = await startCodeServer({ vsix: [VSIX] });
    browser = await launchBrowser();
    page = browser.page;
    await openWorkbench(page, cs.url, workspace, 'Agent Trace: Analyze Agent Session');
  });

  beforeEach(async () => {
    await page.keyboard.press('Escape');
    await page.locator('.part.sidebar .composite.title').first().click();
    await runCommand(page, 'View: Close All Editors');
    await page.locator('.editor-group-container .tab').first().waitFor({ state: 'detached' });
    await page.locator(`iframe.webview[src*="extensionId=${EXTENSION_ID}"]`).first().waitFor({ state: 'detached' });
    if ((await page.locator('.editor-group-container').count()) > 1)
      await runCommand(page, 'View: Single Column Editor Layout');
  });

  after(async () => {
    await browser?.close();
    await cs?.stop();
    if (workspace) removeWorkspace(workspace);
  });

  it("the stylesheet applies: the exported HTML report in VS Code's font with its legend colours, the inspector's live badge styled", async () => {
    await quickOpen(page, SAMPLE);
    await web().locator('[data-figure="llmCalls"]').first().waitFor({ timeout: 30_000 });
    // The badge is shown while the file grew in the last 2 minutes; hidden or not, its rule gives it its colour.
    const badge = web().locator('.live-badge');
    await badge.waitFor({ state: 'attached', timeout: 20_000 });
    // Its own rule (after the one that was left open) paints it the theme's "passed" green; without it, the plain badge grey.
    const badgeStyle = await badge.evaluate((e) => {
      const probe = document.createElement('span');
      probe.style.background =
        'var(--vscode-testing-iconPassed, var(--vscode-charts-green, var(--vscode-badge-background)))';
      document.body.appendChild(probe);
      const want = getComputedStyle(probe).backgroundColor;
      probe.remove();
      return { background: getComputedStyle(e).backgroundColor, want };
    });
    assert.equal(
      badgeStyle.background,
      badgeStyle.want,
      'the live badge has its own colour (its rule came after the unclosed one)',
    );
    await screenshot(page, 'e2e-first-screen.png');

    const target = path.join(workspace, 'claude-code-sessions.trace.report.html');
    fs.rmSync(target, { force: true });
    await runCommandForPicker(
      page,
      'Agent Trace: Export HTML Report',
      page
        .locator('.quick-input-widget .monaco-list-row:visible', { hasText: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04' })
        .first(),
    );
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () =>
        /report\.html$/.test(
          (document.querySelector('.quick-input-widget .quick-input-box input') as HTMLInputElement | null)?.value ??
            '',
        ),
      null,
      { timeout: 20_000 },
    );
    await page.keyboard.press('Enter');
    for (let i = 0; i < 300 && !fs.existsSync(target); i++) await page.waitForTimeout(100);
    assert.ok(fs.existsSync(target), 'the report was written');

    // The report as a reader opens it: from disk, in the browser, in both colour schemes. In a browser
    // context of its own: a page opened beside the workbench's in its context left the next webview
    // code-server built blank (seen: the inspector reopened after this test showed no page at all).
    const readerContext = await page.context().browser()!.newContext();
    for (const scheme of ['light', 'dark'] as const) {
      const reader = await readerContext.newPage();
      try {
        await reader.emulateMedia({ colorScheme: scheme });
        await reader.goto(`file://${target}`);
        await reader.waitForSelector('.chart-wrap[data-bar-count]', { timeout: 30_000 });
        const seen = (await reader.evaluate(READ_REPORT_STYLES)) as Record<string, string>;
        assert.ok(seen['themeFont'] !== '', `report (${scheme}): the theme variables are set`);
        assert.equal(
          seen['font']!.replace(/"/g, ''),
          seen['themeFont']!.replace(/"/g, ''),
          `report (${scheme}): VS Code's font, not the browser's default`,
        );
        assert.notEqual(
          seen['cached'],
          'rgba(0, 0, 0, 0)',
          `report (${scheme}): the legend's cached swatch has its colour`,
        );
        assert.equal(
          seen['picker'] === 'rgb(255, 255, 255)',
          scheme === 'light',
          `report (${scheme}): the session picker follows the scheme (${seen['picker']})`,
        );
        assert.equal(
          seen['page'] === 'rgb(255, 255, 255)',
          scheme === 'light',
          `report (${scheme}): the page follows the scheme (${seen['page']})`,
        );
        await reader.screenshot({ path: path.join(shots, `e2e-report-${scheme}.png`) });
      } finally {
        await reader.close();
      }
    }
    await readerContext.close();
  });

  it('leaving the inspector tab and coming back keeps its zoom, selection and scroll; Show in Timeline from a CodeLens reaches it in a background tab', async () => {
    await quickOpen(page, SAMPLE);
    await chartShown(page, web(), 'tab-state');
    const chart = web().locator('.chart-wrap');
    await chart.focus();
    await page.keyboard.press('End');
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    await web().locator('.chart-wrap[data-selected-call="47"]').waitFor();
    await web()
      .locator('html')
      .evaluate(() => window.scrollTo(0, 240));
    const view = (await chart.getAttribute('data-view'))!;
    assert.notEqual(view, '0.000,48.000', 'zoomed in');
    // The view settles into the webview state a moment after the last change.
    await page.waitForTimeout(800);

    // Another editor in front: the inspector's page goes; then its tab again.
    await quickOpen(page, 'settings.json');
    await page.locator('.tabs-container .tab.active', { hasText: 'settings.json' }).waitFor();
    const started = Date.now();
    await page.locator('.tabs-container .tab', { hasText: SAMPLE }).click();
    await web().locator(`.chart-wrap[data-view="${view}"]`).waitFor({ timeout: 30_000 });
    const backMs = Date.now() - started;
    assert.equal(await web().locator('.chart-wrap').getAttribute('data-selected-call'), '47');
    await web().locator('.details h3', { hasText: 'Call 48 of 48' }).waitFor();
    assert.equal(
      await web()
        .locator('html')
        .evaluate(() => Math.round(window.scrollY)),
      240,
      'the page is scrolled where it was',
    );
    console.log(
      `back to the inspector tab: its view restored ${backMs} ms after the click (load ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`,
    );
    await screenshot(page, 'e2e-tab-restored.png');

    // The M-Claude log as text in one group, its inspector in a second group behind another editor.
    await runCommand(page, 'View: Close All Editors');
    await quickOpen(page, 'edit-retry-loop.jsonl');
    await page.locator('.tabs-container .tab.active', { hasText: 'edit-retry-loop.jsonl' }).waitFor();
    // A busy machine can take a while to list the palette's commands.
    await (await findCommand(page, 'View: Split Editor Right', 60_000)).click();
    await page
      .locator('.editor-group-container')
      .nth(1)
      .locator('.tab.active', { hasText: 'edit-retry-loop.jsonl' })
      .waitFor();
    await (await findCommand(page, 'Agent Trace: Open in Agent Trace Inspector', 60_000)).click();
    await web().locator('[data-figure="llmCalls"]', { hasText: /^41$/ }).first().waitFor({ timeout: 30_000 });
    await web().locator('.chart-wrap').focus();
    await page.keyboard.press('Home');
    await web().locator('.chart-wrap[data-selected-call="0"]').waitFor();
    await page.waitForTimeout(800);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await quickOpen(page, 'settings.json');
    await page.locator('.editor-group-container').nth(1).locator('.tab.active', { hasText: 'settings.json' }).waitFor();

    // Back in the text: the 4th failed Write (line 74) and its CodeLens.
    const goToLine74 = async (): Promise<void> => {
      await page.locator('.editor-group-container').nth(0).locator('.monaco-editor .view-lines').first().click();
      await page.keyboard.press('Control+G');
      await page.locator('.quick-input-widget .quick-input-box input').fill(':74');
      await page.keyboard.press('Enter');
    };
    await goToLine74();
    const lens = page.locator('.monaco-editor .codelens-decoration', {
      hasText: '4th failed Write on sync_raw_logs.py',
    });
    // Once in a CI run (not reproduced in the runs before or after) the lens was rendered but
    // stayed hidden after the jump: go to the line once more before calling it missing.
    await lens.waitFor({ timeout: 10_000 }).catch(async () => {
      await page.screenshot({ path: path.join(shots, 'e2e-lens-hidden-after-go-to-line.png') });
      await goToLine74();
      await lens.waitFor({ timeout: 20_000 });
    });
    await lens.locator('a', { hasText: 'Show in Timeline' }).click();
    // The call of the 4th attempt is the 21st (index 20): selected in the inspector brought to the front, not the old call.
    await web()
      .locator('.chart-wrap[data-selected-call="20"]')
      .waitFor({ timeout: 30_000 })
      .catch(async (e: unknown) => {
        await page.screenshot({ path: path.join(shots, 'e2e-failure-show-in-timeline-background.png') });
        throw e;
      });
    await web().locator('.details h3', { hasText: 'Call 21 of 41' }).waitFor();
    await screenshot(page, 'e2e-show-in-timeline-background.png');
  });

  it('the overview strip follows a layout change: the sidebar closed and opened, the editor split', async () => {
    await quickOpen(page, SAMPLE);
    await chartShown(page, web(), 'overview-resize');
    const first = await stripFollows(page, web(), 'opened');
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await runCommand(page, 'View: Toggle Primary Side Bar Visibility');
    const wider = await stripFollows(page, web(), 'the sidebar closed');
    assert.ok(wider.css > first.css + 100, `the strip widened with the editor (${first.css} → ${wider.css} px)`);
    await screenshot(page, 'e2e-overview-sidebar-closed.png');
    await runCommand(page, 'View: Toggle Primary Side Bar Visibility');
    await stripFollows(page, web(), 'the sidebar opened again');
    // A busy machine can take a while to list the palette's commands.
    await (await findCommand(page, 'View: Split Editor Right', 60_000)).click();
    await page.locator('.editor-group-container').nth(1).waitFor();
    const narrow = await stripFollows(page, web(), 'the editor split');
    assert.ok(narrow.css < first.css - 100, `the strip narrowed with the split (${first.css} → ${narrow.css} px)`);
    await screenshot(page, 'e2e-overview-split.png');
  });
});
