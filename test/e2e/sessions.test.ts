import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FrameLocator, Locator, Page } from 'playwright-core';
import { startLiveSession } from '../support/liveSession.mjs';
import { launchBrowser, openWorkbench, runCommand, startCodeServer, webview } from '../support/vscodeE2e.mjs';
import { createWorkspace, repoRoot } from '../support/workspace.mjs';

// Agent Sessions in real VS Code (code-server + Chromium), the packaged extension: the view over a
// fake home of real sessions, a live session (a real Claude Code log replayed now, see
// test/support/liveSession.mjs) growing while the view and the status bar show it, and the
// comparison panel. Screenshots go to test-results/ (the guides', in media/, come from here).
// The inspector follows the live session too: its new calls appear in the open panel, read from the
// bytes the file gained.

const VSIX = path.join(repoRoot, 'dist/agent-trace-inspector.vsix');
const EXTENSION_ID = 'agent-trace.agent-trace-inspector';
const shots = path.join(repoRoot, 'test-results');
const LIVE_ID = '5e55e55e-0000-4000-8000-000000000003';

async function shot(
  page: Page,
  name: string,
  clip?: { x: number; y: number; width: number; height: number },
): Promise<void> {
  // What is on screen is painted: fonts loaded, then two frames (not a fixed pause).
  await page.evaluate(() =>
    document.fonts.ready.then(
      () => new Promise<void>((done) => requestAnimationFrame(() => requestAnimationFrame(() => done()))),
    ),
  );
  await page.screenshot({ path: path.join(shots, name), ...(clip ? { clip } : {}) });
}

/** The colour kind VS Code gives the live session's status bar item (`warning-kind`, `error-kind`), or null. */
async function statusBarKind(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const item = Array.from(document.querySelectorAll('.statusbar-item')).find((e) =>
      /cache \d+:\d\d/.test(e.textContent ?? ''),
    );
    if (!item) throw new Error('no status bar item of the live session');
    return ['error-kind', 'warning-kind'].find((k) => item.classList.contains(k)) ?? null;
  });
}

/**
 * The M-Claude log's own row. The live session is a copy of that log: once it has all its
 * lines its row shows the same figures and, two minutes after its last append, no longer
 * "● live" either, so neither its text nor DOM order (a tree re-uses its rows out of order as
 * it redraws) tells the two apart. Its place does: the row right under its day, 2026-01-01.
 */
async function mClaudeRow(page: Page): Promise<Locator> {
  const rows = page.locator('.part.sidebar .monaco-list-row');
  const day = Number(await rows.filter({ hasText: '2026-01-01' }).getAttribute('data-index'));
  return rows
    .and(page.locator(`[data-index="${day + 1}"]`))
    .filter({ hasText: /\$3\.37 · 41 calls · hit 85\.5% · 13 failed/ });
}

/**
 * Selects the M-Claude log and the spotter session in the tree. A click opens the session in
 * the inspector, whose page takes the keyboard focus when it has loaded: so it is waited for
 * (its figures drawn) before anything else, the tree is then seen to hold both sessions, and
 * the focus is given back to the workbench and seen there (keys sent into a webview never
 * reach the command palette).
 */
async function selectTwoSessions(page: Page): Promise<void> {
  const sidebar = page.locator('.part.sidebar');
  await (await mClaudeRow(page)).click();
  await webview(page, EXTENSION_ID).locator('[data-figure]').first().waitFor({ timeout: 60_000 });
  await sidebar.locator('.monaco-list-row', { hasText: 'Work on bead spotte' }).click({ modifiers: ['Control'] });
  await page.waitForFunction(
    () => document.querySelectorAll('.part.sidebar .monaco-list-row[aria-selected="true"]').length === 2,
  );
  await sidebar.locator('.title .title-label').first().click();
  await page.waitForFunction(() => document.activeElement !== null && document.activeElement.tagName !== 'IFRAME');
}

/**
 * The page of the panel just opened, once it shows `kind` (its data-ready). Waits on states, in
 * order, and says which one never came: the panel's tab active, its webview loaded, its page drawn.
 */
async function panelShowing(page: Page, title: string, kind: 'compare' | 'report'): Promise<FrameLocator> {
  const stages: Array<[string, () => Promise<unknown>]> = [
    [
      `the "${title}" tab is active`,
      () => page.locator('.editor-group-container .tab.active', { hasText: title }).waitFor({ timeout: 60_000 }),
    ],
    [
      'its webview is loaded',
      () =>
        page
          .locator(`iframe.webview.ready[src*="extensionId=${EXTENSION_ID}"]:visible`)
          .last()
          .waitFor({ timeout: 60_000 }),
    ],
    [
      `its page shows the ${kind}`,
      () => webview(page, EXTENSION_ID).locator(`#app[data-ready="${kind}"]`).waitFor({ timeout: 60_000 }),
    ],
  ];
  for (const [stage, wait] of stages) {
    await wait().catch(async (e: unknown) => {
      await shot(page, `e2e-${kind}-failed.png`);
      throw new Error(
        `${stage}: never came (screenshot test-results/e2e-${kind}-failed.png). ${e instanceof Error ? e.message : String(e)}`,
      );
    });
  }
  return webview(page, EXTENSION_ID);
}

describe('Agent Sessions in real VS Code (code-server + Chromium)', () => {
  let cs: { url: string; stop: () => Promise<void> };
  let browser: { page: Page; close: () => Promise<void> };
  let workspace: string;
  let page: Page;
  let liveFile: string;
  let live: ReturnType<typeof startLiveSession>;

  before(async () => {
    if (!fs.existsSync(VSIX)) execFileSync('npm', ['run', 'package'], { cwd: repoRoot, stdio: 'inherit' });
    fs.mkdirSync(shots, { recursive: true });
    workspace = createWorkspace();
    // A running Claude Code session: 60 of the M-Claude log's 120 lines, the last written 20 s ago,
    // with its session id made its own so it is not taken for the M-Claude log itself.
    liveFile = path.join(workspace, `home/.claude/projects/-home-me-projects-live-demo/${LIVE_ID}.jsonl`);
    const source = path.join(workspace, 'live-source.jsonl');
    fs.writeFileSync(
      source,
      fs
        .readFileSync(path.join(repoRoot, 'test/fixtures/claude-code/edit-retry-loop.jsonl'), 'utf8')
        .replace(/e5821007-9ca0-4a36-afc0-94da583da0ea/g, LIVE_ID)
        .replace(/"cwd":"C:\\\\Windows\\\\System32"/g, '"cwd":"/home/me/projects/live-demo"'),
    );
    live = startLiveSession(source, liveFile, 60, 20_000);
    // A $2 session budget: the first 60 lines (15 calls) are under 80% of it, the whole log ($3.36867825,
    // test/reference/cost_reference.mjs) is over it, so the live test's append crosses it once.
    const settingsFile = path.join(workspace, '.vscode/settings.json');
    fs.writeFileSync(
      settingsFile,
      JSON.stringify(
        { ...JSON.parse(fs.readFileSync(settingsFile, 'utf8')), 'agentTrace.budget.perSessionUsd': 2 },
        null,
        1,
      ),
    );
    cs = await startCodeServer({ vsix: [VSIX] });
    browser = await launchBrowser();
    page = browser.page;
    await openWorkbench(page, cs.url, workspace, 'Agent Trace: Refresh Agent Sessions');
  });

  after(async () => {
    await browser?.close();
    await cs?.stop();
    if (workspace) fs.rmSync(workspace, { recursive: true, force: true });
  });

  it("lists the sessions by project and day, and the status bar counts down the live session's cache", async () => {
    await runCommand(page, 'View: Show Agent Sessions');
    const sidebar = page.locator('.part.sidebar');
    // The live session's project is the most recent; the spotter session and the M-Claude log are there too.
    await sidebar.locator('.monaco-list-row', { hasText: 'live-demo' }).first().waitFor({ timeout: 60_000 });
    await sidebar.locator('.monaco-list-row', { hasText: 'Work on bead spotte' }).waitFor();
    const loopRow = sidebar.locator('.monaco-list-row', { hasText: '41 calls · hit 85.5%' });
    await loopRow.waitFor();
    assert.match((await loopRow.textContent()) ?? '', /13 failed · 1 loop/);
    const item = page.locator('.statusbar-item', { hasText: /ctx .* · hit .* · cache \d+:\d\d/ });
    await item.waitFor({ timeout: 30_000 });
    const first = (await item.textContent())?.trim() ?? '';
    // The last call of the first 60 lines used 40,509 tokens of Claude Opus 4.5's 200,000-token window: 20%.
    // Its cache was written 20 s before code-server started: what is left of the 5 minutes depends on how long the
    // workbench took to come up (about 4:30 on an idle machine, under 3:00 on a loaded one).
    assert.match(first, /ctx 20% · hit \d+\.\d% · \$\d+\.\d\d · cache [0-4]:\d\d/);
    // The countdown runs.
    await page.waitForFunction(
      (before) =>
        Array.from(document.querySelectorAll('.statusbar-item')).some(
          (e) => /cache \d+:\d\d/.test(e.textContent ?? '') && e.textContent?.trim() !== before,
        ),
      first,
      { timeout: 10_000 },
    );
    await shot(page, 'e2e-sessions-view.png');
    // The Plan Windows view, folded under Agent Sessions in the same side bar: unfolded, it shows
    // Claude's plan (the live session's calls are minutes old, inside an open 5-hour window).
    const windowsHeader = sidebar.locator('.pane-header', { hasText: 'Plan Windows' });
    await windowsHeader.waitFor();
    assert.equal(await windowsHeader.getAttribute('aria-expanded'), 'false');
    await windowsHeader.click();
    const planRow = sidebar.locator('.monaco-list-row', { hasText: 'Claude (Claude Code)' }).first();
    await planRow.waitFor({ timeout: 30_000 });
    assert.match((await planRow.textContent()) ?? '', /5h /);
    await shot(page, 'e2e-plan-windows-view.png');
    await windowsHeader.click();
    await planRow.waitFor({ state: 'detached', timeout: 10_000 });
    await item.hover();
    await page
      .locator('.monaco-hover, .workbench-hover', { hasText: 'Prompt cache' })
      .first()
      .waitFor({ timeout: 10_000 });
    const size = page.viewportSize()!;
    await shot(page, 'e2e-status-bar.png', { x: size.width - 760, y: size.height - 330, width: 760, height: 330 });
    await page.mouse.move(300, 300);
  });

  it('a live session grows while the inspector, the view and the status bar show it: the new calls appear in all three, "live" shown, the countdown starts again and runs', async () => {
    const sidebar = page.locator('.part.sidebar');
    const liveRow = sidebar.locator('.monaco-list-row', { hasText: '● live' }).first();
    await liveRow.waitFor({ timeout: 30_000 });
    const rowBefore = (await liveRow.textContent()) ?? '';
    const before = Number(/(\d+) calls/.exec(rowBefore)?.[1]);
    assert.ok(before > 0 && before < 41, `${before} calls in the first 60 lines: ${rowBefore}`);
    // The live session open in the inspector (a click on its row): the same calls, and "live" (its last line is 20 s old).
    await liveRow.click();
    const inspector = webview(page, EXTENSION_ID);
    await inspector.locator(`.chart-wrap[data-bar-count="${before}"]`).waitFor({ timeout: 60_000 });
    assert.equal((await inspector.locator('[data-figure="llmCalls"]').textContent())?.trim(), String(before));
    await inspector.locator('[data-live]:visible', { hasText: 'live' }).waitFor({ timeout: 10_000 });
    // Keys must reach the workbench, not the inspector's page, from here on.
    await sidebar.locator('.title .title-label').first().click();
    await page.waitForFunction(() => document.activeElement !== null && document.activeElement.tagName !== 'IFRAME');
    const status = page.locator('.statusbar-item', { hasText: /cache \d+:\d\d/ }).first();
    const statusBefore = (await status.textContent())?.trim() ?? '';
    // Under its budget: the item has no warning or error colour, and no budget notification is up.
    const budgetToast = page.locator('.notifications-toasts .notification-toast', {
      hasText: 'against a budget of $2.00',
    });
    assert.equal(await statusBarKind(page), null, 'under the budget: no colour');
    assert.equal(await budgetToast.count(), 0);
    // The agent writes the rest of its session, now.
    live.append(live.total - live.written);
    // The M-Claude log has 41 calls in all at 85.5% (test/reference/claude_code_totals.py); the row keeps "live".
    await sidebar
      .locator('.monaco-list-row', { hasText: /41 calls · hit 85\.5%.*● live/ })
      .first()
      .waitFor({ timeout: 30_000 });
    // The inspector appended them: 41 bars, the summary's figures, and how many came.
    await inspector.locator('.chart-wrap[data-bar-count="41"]').waitFor({ timeout: 30_000 });
    assert.equal((await inspector.locator('[data-figure="llmCalls"]').textContent())?.trim(), '41');
    assert.equal((await inspector.locator('[data-figure="cacheHitRate"]').textContent())?.trim(), '85.5%');
    assert.equal(await inspector.locator('.live-text').getAttribute('data-added'), String(41 - before));
    assert.equal(await inspector.locator('[data-reset]:visible').count(), 0, 'an append is not read as a rewrite');
    // The status bar's figures follow, and the last request is recent: the countdown starts again, with more time left than before.
    await page
      .locator('.statusbar-item', { hasText: /hit 85\.5% · \$\d+\.\d\d · cache \d+:\d\d/ })
      .waitFor({ timeout: 30_000 });
    const statusAfter = (await status.textContent())?.trim() ?? '';
    const secondsLeft = (text: string): number => {
      const m = /cache (\d+):(\d\d)/.exec(text);
      assert.ok(m, text);
      return Number(m[1]) * 60 + Number(m[2]);
    };
    assert.ok(secondsLeft(statusAfter) > secondsLeft(statusBefore), `${statusBefore} → ${statusAfter}`);
    // …and keeps running: the next reading shows less time left.
    await page.waitForFunction(
      (shown) =>
        Array.from(document.querySelectorAll('.statusbar-item')).some(
          (e) => /cache \d+:\d\d/.test(e.textContent ?? '') && e.textContent?.trim() !== shown,
        ),
      statusAfter,
      { timeout: 10_000 },
    );
    const statusLater = (await status.textContent())?.trim() ?? '';
    assert.ok(secondsLeft(statusLater) < secondsLeft(statusAfter), `${statusAfter} → ${statusLater}`);
    // The session crossed its $2 budget: the item turns to the theme's error colour and one notification says by how much
    // ($3.36867825 − $2 = $1.36867825, 68% over).
    await page.waitForFunction(
      () =>
        Array.from(document.querySelectorAll('.statusbar-item')).some(
          (e) => /cache \d+:\d\d/.test(e.textContent ?? '') && e.classList.contains('error-kind'),
        ),
      undefined,
      { timeout: 30_000 },
    );
    assert.equal(await statusBarKind(page), 'error-kind');
    await budgetToast.first().waitFor({ timeout: 30_000 });
    assert.match(
      (await budgetToast.first().textContent()) ?? '',
      /this session cost \$3\.37 against a budget of \$2\.00: over by \$1\.37 \(68%\)/,
    );
    await shot(page, 'e2e-live-session.png');
    // Read again (a refresh): still over, and still one notification.
    await runCommand(page, 'Agent Trace: Refresh Agent Sessions');
    await page
      .locator('.part.sidebar .monaco-list-row', { hasText: /41 calls · hit 85\.5%.*● live/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await page.waitForTimeout(2_000);
    assert.equal(await budgetToast.count(), 1, 'one notification per crossing');
    assert.equal(await statusBarKind(page), 'error-kind');
    await runCommand(page, 'Notifications: Clear All Notifications');
    await budgetToast.first().waitFor({ state: 'detached' });
    // The next step starts from no open editor.
    await sidebar.locator('.title .title-label').first().click();
    await runCommand(page, 'View: Close All Editors');
    await page.locator('.editor-group-container .tab').first().waitFor({ state: 'detached' });
  });

  it('compares two sessions side by side and shows several sessions at once', async () => {
    const sidebar = page.locator('.part.sidebar');
    await selectTwoSessions(page);
    await runCommand(page, 'Agent Trace: Compare Sessions');
    const panel = await panelShowing(page, 'Compare sessions', 'compare');
    const cells = await panel.locator('[data-compared="calls"] td').allTextContents();
    assert.deepEqual(cells.slice(1), ['41', '149', '+108 (+263%)']);
    assert.equal(await panel.locator('.compare-chart canvas').count(), 2);
    await shot(page, 'e2e-compare.png');
    // Keys typed while the panel's page has focus stay in it: give the focus back to the workbench first.
    await sidebar.locator('.title .title-label').first().click();
    await runCommand(page, 'View: Close All Editors');
    await page.locator('.editor-group-container .tab').first().waitFor({ state: 'detached' });
    // The same two sessions, selected again, in one report.
    await selectTwoSessions(page);
    await runCommand(page, 'Agent Trace: Analyze Sessions Together');
    const report = await panelShowing(page, '2 sessions', 'report');
    assert.equal(await report.locator('[data-figure="sessions"]').textContent(), '2');
    await shot(page, 'e2e-sessions-report.png');
  });
});
