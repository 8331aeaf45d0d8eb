import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { FrameLocator, Page } from 'playwright-core';
import {
  launchBrowser,
  openWorkbench,
  quickOpen,
  runCommand,
  startCodeServer,
  webview,
} from '../support/vscodeE2e.mjs';
import { COMMAND_LINK_FILE, createWorkspace, removeWorkspace, repoRoot } from '../support/workspace.mjs';

// Hostile traces in real VS Code (code-server + Chromium), as a user meets them: open the
// files, run Analyze Agent Session, look at the CodeLens, the notifications and the
// Problems view, and click every link they show. The files' links point at commands whose
// effect can be seen: one opens an untitled editor, one types `touch /tmp/agent-trace-pwned`
// into the open terminal. Then a page inside the inspector's webview posts crafted messages,
// as script in a compromised page would, and nothing outside the trace may open.

const VSIX = path.join(repoRoot, 'dist/agent-trace-inspector.vsix');
const EXTENSION_ID = 'agent-trace.agent-trace-inspector';
const shots = path.join(repoRoot, 'test-results');
const PWNED = '/tmp/agent-trace-pwned';

describe('Hostile traces in real VS Code: no link runs a command, no message opens a file outside the trace', () => {
  let cs: { url: string; stop: () => Promise<void> };
  let browser: { page: Page; close: () => Promise<void> };
  let workspace: string;
  let page: Page;
  const web = (): FrameLocator => webview(page, EXTENSION_ID);

  /** Nothing a hostile link could have done happened: no untitled editor, no command typed into the terminal. */
  async function assertNothingRan(after: string): Promise<void> {
    await page.waitForTimeout(400);
    const untitled = await page.locator('.tabs-container .tab[aria-label^="Untitled-"]').count();
    assert.equal(untitled, 0, `an untitled editor opened after ${after}`);
    assert.equal(fs.existsSync(PWNED), false, `a command was typed into the terminal after ${after}`);
  }

  /** Clicks every link in `scope` (re-found each time: a click can redraw the list) and checks nothing ran. Returns the links' texts. */
  async function clickEveryLink(scope: string, what: string): Promise<string[]> {
    const texts: string[] = [];
    const count = await page.locator(`${scope} a`).count();
    for (let i = 0; i < count; i++) {
      const link = page.locator(`${scope} a`).nth(i);
      if (!(await link.isVisible().catch(() => false))) continue;
      texts.push(((await link.textContent()) ?? '').trim());
      await link.click({ timeout: 5_000 }).catch(() => undefined);
      await assertNothingRan(`clicking "${texts[texts.length - 1]}" in ${what}`);
      await page.keyboard.press('Escape');
    }
    return texts;
  }

  /**
   * Posts messages to the extension exactly as the page's acquireVsCodeApi().postMessage
   * does: through the webview's host frame, whose __vscode_post_message__ the page's API
   * calls (VS Code hides window.parent from the page once it has loaded, so the messages
   * are handed to that function in the host frame itself).
   */
  async function postFromWebview(messages: unknown[]): Promise<void> {
    const outer = await page
      .locator(`iframe.webview.ready[src*="extensionId=${EXTENSION_ID}"]:visible`)
      .last()
      .elementHandle();
    const frame = await outer!.contentFrame();
    await frame!.evaluate((list) => {
      const post = (window as unknown as Record<string, (channel: string, data: unknown) => void>)[
        '__vscode_post_message__'
      ]!;
      for (const message of list) post('onmessage', { message });
    }, messages);
  }

  before(async () => {
    if (!fs.existsSync(VSIX)) execFileSync('npm', ['run', 'package'], { cwd: repoRoot, stdio: 'inherit' });
    fs.mkdirSync(shots, { recursive: true });
    fs.rmSync(PWNED, { force: true });
    workspace = createWorkspace();
    cs = await startCodeServer({ vsix: [VSIX] });
    browser = await launchBrowser();
    page = browser.page;
    await openWorkbench(page, cs.url, workspace, 'Agent Trace: Analyze Agent Session');
    // A terminal for the sendSequence link to type into, were it ever run.
    await runCommand(page, 'Terminal: Create New Terminal');
    await page.locator('.terminal-wrapper .xterm').first().waitFor({ timeout: 30_000 });
  });

  beforeEach(async () => {
    await page.keyboard.press('Escape');
    await runCommand(page, 'Notifications: Clear All Notifications');
    await runCommand(page, 'View: Close All Editors');
  });

  after(async () => {
    await browser?.close();
    await cs?.stop();
    if (workspace) removeWorkspace(workspace);
  });

  it('a file named like a command link, whose keys are command links: the notification shows them as text; clicking every link runs nothing', async () => {
    await quickOpen(page, '[Click to repair this trace]');
    await page.locator('.tabs-container .tab.active', { hasText: 'Click to repair' }).waitFor();
    await runCommand(page, 'Agent Trace: Analyze Agent Session');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Not a trace format' });
    await toast.waitFor({ timeout: 20_000 });
    const text = (await toast.textContent()) ?? '';
    // The name and the keys are there, as text (the zero-width space that breaks each link is invisible).
    assert.ok(text.replace(/\u200b/g, '').includes(COMMAND_LINK_FILE), text);
    assert.ok(
      text.replace(/\u200b/g, '').includes('[Fix permissions](command:workbench.action.terminal.sendSequence'),
      text,
    );
    assert.equal(
      await toast.locator('a[href^="command:"], a[data-href^="command:"]').count(),
      0,
      'no command link in the notification',
    );
    await page.screenshot({ path: path.join(shots, 'e2e-hostile-notification.png') });
    await clickEveryLink('.notifications-toasts', 'the notification');
    await assertNothingRan('the notification');
  });

  it("the payload log as text: CodeLens shows the trace's $(icons) and links as text; clicking every lens and every Problems entry runs nothing hostile", async () => {
    await quickOpen(page, 'payloads.jsonl');
    await page.locator('.tabs-container .tab.active', { hasText: 'payloads.jsonl' }).waitFor();
    const top = page.locator('.monaco-editor .codelens-decoration', {
      hasText:
        'Agent Trace · 41 calls · cost unknown (41 calls unpriced) · cache hit 85.5% · 13 failed tool calls · 1 retry loop',
    });
    await top.waitFor({ timeout: 30_000 });
    // Go to the first failing Bash call (line 11 of the log, 12 with the added prompt): its lens names the poisoned tool.
    await page.keyboard.press('Control+G');
    await page.locator('.quick-input-widget .quick-input-box input').fill(':12');
    await page.keyboard.press('Enter');
    const bash = page.locator('.monaco-editor .codelens-decoration', { hasText: 'failed Bash' }).first();
    await bash.waitFor({ timeout: 20_000 });
    const lensText = ((await bash.textContent()) ?? '').replace(/\u200b/g, '');
    assert.ok(lensText.includes('Bash $(check) $(pass-filled) [Click to repair'), lensText);
    // The trace's $(check) is not drawn as an icon; only the extension's own $(error) is.
    assert.equal(await bash.locator('.codicon-check, .codicon-pass-filled').count(), 0);
    assert.ok((await bash.locator('.codicon-error').count()) >= 1);
    await page.screenshot({ path: path.join(shots, 'e2e-hostile-codelens.png') });
    const lensLinks = await clickEveryLink('.monaco-editor .codelens-decoration', 'the CodeLens');
    // Links in a lens are the extension's own: Show in Timeline, Open Inspector, the summary.
    for (const t of lensLinks)
      assert.match(
        t,
        /^(Show in Timeline|Open Inspector|Agent Trace · .*)$/,
        `a link that is not the extension's own: ${t}`,
      );
    await runCommand(page, 'View: Close All Editors');
    await quickOpen(page, 'payloads.jsonl');
    await page.keyboard.press('Control+Shift+M');
    const problem = page.locator('.markers-panel .monaco-list-row', { hasText: 'Retry loop: 4 failed Edit/Write' });
    await problem.first().waitFor({ timeout: 20_000 });
    assert.ok(
      ((await problem.first().textContent()) ?? '')
        .replace(/\u200b/g, '')
        .includes('[Click to repair this trace](command:'),
    );
    await clickEveryLink('.markers-panel', 'the Problems view');
    await page.keyboard.press('Control+Shift+M');
    await runCommand(page, 'Agent Trace: Analyze Agent Session');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: '41 LLM calls' });
    await toast.waitFor({ timeout: 20_000 });
    await clickEveryLink('.notifications-toasts', 'the Analyze notification');
    await assertNothingRan('the payload log');
  });

  it("a webview that posts crafted messages: path traversal with / and \\, absolute paths, wrong types, huge numbers, unknown types; only the trace's own file opens", async () => {
    await quickOpen(page, 'claude-code-sessions.trace.jsonl');
    await web().locator('[data-figure="llmCalls"]').first().waitFor({ timeout: 30_000 });
    const secret = path.basename(`${workspace}-secret.txt`);
    const crafted: unknown[] = [
      { type: 'source/revealLine', file: '../../../../etc/passwd', line: 0 },
      { type: 'source/revealLine', file: '..\\..\\..\\..\\etc\\passwd', line: 0 },
      { type: 'source/revealLine', file: '/etc/shadow', line: 0 },
      { type: 'source/revealLine', file: 'C:\\Windows\\win.ini', line: 0 },
      { type: 'source/revealLine', file: `../${secret}`, line: 0 },
      { type: 'source/revealLine', file: 99, line: 0 },
      { type: 'source/revealLine', file: 1e308, line: 0 },
      { type: 'source/revealLine', file: 0, line: 'x' },
      { type: 'source/reveal', ref: { sessionId: 42, callIndex: 1e308 }, toolId: null },
      { type: 'format/choose', format: '../../etc/passwd' },
      { type: 'clipboard/write', text: 'rm -rf ~' },
      // The simulate command, with a shell command after it; with an absurd fleet; on another file.
      {
        type: 'clipboard/write',
        text: `agent-trace simulate ${path.join(workspace, 'claude-code-sessions.trace.jsonl')} --json; touch /tmp/agent-trace-pwned`,
      },
      {
        type: 'clipboard/write',
        text: `agent-trace simulate ${path.join(workspace, 'claude-code-sessions.trace.jsonl')} --gpus 1000000 --router kv-aware`,
      },
      { type: 'clipboard/write', text: 'agent-trace simulate /etc/passwd --emit-workload /tmp/agent-trace-pwned' },
      { type: 'whatif/export', fileName: '../../../etc/cron.d/x', json: 'not json' },
      { type: 'whatif/export', fileName: '../../.bashrc.json', json: '{}' },
      { type: 'workbench/runCommand', command: 'workbench.action.files.newUntitledFile' },
      { type: '__proto__' },
      { notAType: true },
      { type: 'callDetail', id: 1.5, params: { sessionId: 's', callIndex: 0 } },
      { type: 'callDetail', id: 7, params: { sessionId: 5, callIndex: -1 } },
      { type: 'files/read', id: 8, params: { path: '/etc/passwd' } },
      { type: 'log/error', message: 'x'.repeat(200_000) },
      { type: 'load/retry', ignoreSizeLimit: 'yes' },
      // The page's own requests with crafted params: refused by the host (answered as failed requests), no file read.
      { type: 'sessionBody', id: 9, params: { sessionId: { path: '/etc/passwd' } } },
      { type: 'callRows', id: 10, params: { sessionId: 's', from: 0, count: 1e9 } },
      { type: 'toolRows', id: 11, params: { sessionId: '../../etc/passwd', from: -1, count: 10 } },
      { type: 'search', id: 12, params: { query: { $regex: '.*' }, sessionId: null } },
      { type: 'sessionList', id: 13, params: { query: '', offset: 0, limit: 1e9 } },
      { type: 'callsUsingTool', id: 14, params: { sessionId: 's', tool: ['Bash'] } },
    ];
    const tabsBefore = await page.locator('.tabs-container .tab').count();
    await postFromWebview(crafted);
    // The host answers each one it refuses or cannot carry out, and the panel says so (the
    // latest on top) while it keeps showing the trace: 23 of the 30; callDetail with a
    // proper id and the six crafted page requests are requests, answered as failed requests instead.
    await web().locator('.error-banner[data-host-errors="23"]').waitFor({ timeout: 20_000 });
    assert.match((await web().locator('.error-banner').textContent()) ?? '', /^The extension could not do that: /);
    assert.equal(await web().locator('[data-figure="llmCalls"]').first().textContent(), '48');
    await page.waitForTimeout(1000);
    const labels = await page
      .locator('.tabs-container .tab')
      .evaluateAll((tabs) => tabs.map((t) => t.getAttribute('aria-label') ?? ''));
    assert.equal(labels.length, tabsBefore, `tabs now: ${labels.join(' | ')}`);
    for (const l of labels) assert.doesNotMatch(l, /passwd|shadow|win\.ini|secret|cron|Untitled/);
    await page.screenshot({ path: path.join(shots, 'e2e-hostile-crafted-messages.png') });
    // The same path, with a message the host accepts, does open a line: of the trace itself.
    await postFromWebview([{ type: 'source/revealLine', file: 0, line: 3 }]);
    await page
      .locator('.editor-group-container')
      .nth(1)
      .locator('.tab', { hasText: 'claude-code-sessions.trace.jsonl' })
      .waitFor({ timeout: 20_000 });
    await assertNothingRan('the crafted messages');
  });
});
