import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startLiveSession } from '../support/liveSession.mjs';
import { launchBrowser, openWorkbench, runCommand, startCodeServer, webview } from '../support/vscodeE2e.mjs';
import { createWorkspace, repoRoot } from '../support/workspace.mjs';

// Agent Sessions in real VS Code (code-server + Chromium), the packaged extension: the view over a
// fake home of real sessions, a live session (a real Claude Code log replayed now, see
// test/support/liveSession.mjs) growing while the view and the status bar show it, and the
// comparison panel. Screenshots go to test-results/ (the README's, in media/, come from here).
// The inspector's own live append (new calls in an open inspector) is not part of this suite.

const VSIX = path.join(repoRoot, 'dist/agent-trace-inspector.vsix');
const EXTENSION_ID = 'agent-trace.agent-trace-inspector';
const shots = path.join(repoRoot, 'test-results');
const LIVE_ID = '5e55e55e-0000-4000-8000-000000000003';

async function shot(page: Page, name: string, clip?: { x: number; y: number; width: number; height: number }): Promise<void> {
  await page.waitForTimeout(500);
  await page.screenshot({ path: path.join(shots, name), ...(clip ? { clip } : {}) });
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
    fs.writeFileSync(source, fs.readFileSync(path.join(repoRoot, 'test/fixtures/claude-code/edit-retry-loop.jsonl'), 'utf8').replace(/e5821007-9ca0-4a36-afc0-94da583da0ea/g, LIVE_ID).replace(/"cwd":"C:\\\\Windows\\\\System32"/g, '"cwd":"/home/me/projects/live-demo"'));
    live = startLiveSession(source, liveFile, 60, 20_000);
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

  it('lists the sessions by project and day, and the status bar counts down the live session\'s cache', async () => {
    await runCommand(page, 'View: Show Agent Sessions');
    const sidebar = page.locator('.part.sidebar');
    // The live session's project is the most recent; the spotter session and the M-Claude log are there too.
    await sidebar.locator('.monaco-list-row', { hasText: 'live-demo' }).first().waitFor({ timeout: 60_000 });
    await sidebar.locator('.monaco-list-row', { hasText: 'Work on bead spotter-4te' }).waitFor();
    const loopRow = sidebar.locator('.monaco-list-row', { hasText: '41 calls · hit 85.5%' });
    await loopRow.waitFor();
    assert.match((await loopRow.textContent()) ?? '', /13 failed · 1 loop/);
    const item = page.locator('.statusbar-item', { hasText: /ctx .* · hit .* · cache \d+:\d\d/ });
    await item.waitFor({ timeout: 30_000 });
    const first = (await item.textContent())?.trim() ?? '';
    // The last call of the first 60 lines used 40,509 tokens of Claude Opus 4.5's 200,000-token window: 20%.
    assert.match(first, /ctx 20% · hit \d+\.\d% · \$\d+\.\d\d · cache [34]:\d\d/);
    // The countdown runs.
    await page.waitForFunction((before) => Array.from(document.querySelectorAll('.statusbar-item')).some((e) => /cache \d+:\d\d/.test(e.textContent ?? '') && e.textContent?.trim() !== before), first, { timeout: 10_000 });
    await shot(page, 'e2e-sessions-view.png');
    await item.hover();
    await page.locator('.monaco-hover, .workbench-hover', { hasText: 'Prompt cache' }).first().waitFor({ timeout: 10_000 });
    const size = page.viewportSize()!;
    await shot(page, 'e2e-status-bar.png', { x: size.width - 760, y: size.height - 330, width: 760, height: 330 });
    await page.mouse.move(300, 300);
  });

  it('a live session grows while the view and the status bar show it: the new calls appear, "live" shown, the countdown starts again', async () => {
    const sidebar = page.locator('.part.sidebar');
    const liveRow = sidebar.locator('.monaco-list-row', { hasText: '● live' }).first();
    await liveRow.waitFor({ timeout: 30_000 });
    const rowBefore = (await liveRow.textContent()) ?? '';
    const before = Number(/(\d+) calls/.exec(rowBefore)?.[1]);
    assert.ok(before > 0 && before < 41, `${before} calls in the first 60 lines: ${rowBefore}`);
    const status = page.locator('.statusbar-item', { hasText: /cache \d+:\d\d/ }).first();
    const statusBefore = (await status.textContent())?.trim() ?? '';
    // The agent writes the rest of its session, now.
    live.append(live.total - live.written);
    // The M-Claude log has 41 calls in all at 85.5% (test/reference/claude_code_totals.py); the row keeps "live".
    await sidebar.locator('.monaco-list-row', { hasText: /41 calls · hit 85\.5%.*● live/ }).first().waitFor({ timeout: 30_000 });
    // The status bar's figures follow, and the last request is recent: the countdown starts again, with more time left than before.
    await page.locator('.statusbar-item', { hasText: /hit 85\.5% · \$\d+\.\d\d · cache \d+:\d\d/ }).waitFor({ timeout: 30_000 });
    const statusAfter = (await status.textContent())?.trim() ?? '';
    const secondsLeft = (text: string): number => {
      const m = /cache (\d+):(\d\d)/.exec(text);
      assert.ok(m, text);
      return Number(m[1]) * 60 + Number(m[2]);
    };
    assert.ok(secondsLeft(statusAfter) > secondsLeft(statusBefore), `${statusBefore} → ${statusAfter}`);
    // …and keeps running.
    await page.waitForFunction((shown) => Array.from(document.querySelectorAll('.statusbar-item')).some((e) => /cache \d+:\d\d/.test(e.textContent ?? '') && e.textContent?.trim() !== shown), statusAfter, { timeout: 10_000 });
    await shot(page, 'e2e-live-session.png');
  });

  it('compares two sessions side by side and shows several sessions at once', async () => {
    const sidebar = page.locator('.part.sidebar');
    await sidebar.locator('.monaco-list-row', { hasText: /41 calls · hit 85\.5% · \$3\.37 · 13 failed/ }).last().click();
    await sidebar.locator('.monaco-list-row', { hasText: 'Work on bead spotter-4te' }).click({ modifiers: ['Control'] });
    // A click opens the session; its editor may take the focus (and the keys): give it back to the workbench.
    await sidebar.locator('.title').first().click();
    await runCommand(page, 'Agent Trace: Compare Sessions');
    const panel = webview(page, EXTENSION_ID);
    // The panel's page (chart.js and its data) can take a while on a loaded machine.
    await panel.locator('[data-compared="calls"]').waitFor({ timeout: 90_000 }).catch(async (e: unknown) => {
      await shot(page, 'e2e-compare-failed.png');
      throw e;
    });
    const cells = await panel.locator('[data-compared="calls"] td').allTextContents();
    assert.deepEqual(cells.slice(1), ['41', '149', '+108 (+263%)']);
    assert.equal(await panel.locator('.compare-chart canvas').count(), 2);
    await shot(page, 'e2e-compare.png');
    // Keys typed while the panel's page has focus stay in it: give the focus back to the workbench first.
    await sidebar.locator('.title').first().click();
    await runCommand(page, 'View: Close All Editors');
    // The same two sessions, selected again, in one report.
    await sidebar.locator('.monaco-list-row', { hasText: /41 calls · hit 85\.5% · \$3\.37 · 13 failed/ }).last().click();
    await sidebar.locator('.monaco-list-row', { hasText: 'Work on bead spotter-4te' }).click({ modifiers: ['Control'] });
    await sidebar.locator('.title').first().click();
    await runCommand(page, 'Agent Trace: Analyze Sessions Together');
    const report = webview(page, EXTENSION_ID);
    await report.locator('[data-figure="sessions"]').waitFor({ timeout: 90_000 });
    assert.equal(await report.locator('[data-figure="sessions"]').textContent(), '2');
    await shot(page, 'e2e-sessions-report.png');
  });
});
