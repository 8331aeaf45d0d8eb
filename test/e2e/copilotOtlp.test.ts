import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { addCopilotAndOtlp } from '../support/fakeHome.mjs';
import { launchBrowser, openWorkbench, runCommand, startCodeServer, webview } from '../support/vscodeE2e.mjs';
import { createWorkspace, repoRoot } from '../support/workspace.mjs';

// VS Code's own agent and an OpenTelemetry file in real VS Code (code-server + Chromium), the
// packaged extension: a fake home (test/support/fakeHome.mjs, addCopilotAndOtlp) with a real
// Copilot Chat session in a workspace's chat store and VS Code's Agent Debug Logs export in
// ~/.copilot/otel, both listed in Agent Sessions and opened in the inspector from there.
// Screenshots go to test-results/.

const VSIX = path.join(repoRoot, 'dist/agent-trace-inspector.vsix');
const EXTENSION_ID = 'agent-trace.agent-trace-inspector';
const shots = path.join(repoRoot, 'test-results');

async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate(() =>
    document.fonts.ready.then(
      () => new Promise<void>((done) => requestAnimationFrame(() => requestAnimationFrame(() => done()))),
    ),
  );
  await page.screenshot({ path: path.join(shots, name) });
}

describe('VS Code Copilot Chat and OpenTelemetry sessions in real VS Code (code-server + Chromium)', () => {
  let cs: { url: string; stop: () => Promise<void> };
  let browser: { page: Page; close: () => Promise<void> };
  let workspace: string;
  let page: Page;

  before(async () => {
    if (!fs.existsSync(VSIX)) execFileSync('npm', ['run', 'package'], { cwd: repoRoot, stdio: 'inherit' });
    fs.mkdirSync(shots, { recursive: true });
    workspace = createWorkspace();
    // The workspace's settings point agentTrace.sessionRoots.vscodeCopilot and .openTelemetry at this home.
    addCopilotAndOtlp(path.join(workspace, 'home'));
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

  it('Agent Sessions lists the Copilot chat under its workspace folder and the OpenTelemetry conversation', async () => {
    await runCommand(page, 'View: Show Agent Sessions');
    const sidebar = page.locator('.part.sidebar');
    // The chat: its first prompt, 8 calls (test/reference/vscode_chat.py), under the folder workspace.json names.
    await sidebar.locator('.monaco-list-row', { hasText: 'tfplan2md' }).first().waitFor({ timeout: 90_000 });
    // Row labels are clipped to leave the figures room: the whole title is in the row's accessible name.
    const chat = sidebar.locator('.monaco-list-row[aria-label^="Follow instructions in [tp.prompt.md]"]');
    await chat.waitFor({ timeout: 60_000 });
    assert.match((await chat.textContent()) ?? '', / · 8 calls · /);
    // The Agent Debug Logs export: two requests of one conversation, 4 calls (hand count in agentTelemetry.test.ts).
    const otlp = sidebar.locator('.monaco-list-row[aria-label^="Add a --verbose flag to the CLI"]');
    await otlp.waitFor({ timeout: 60_000 });
    assert.match((await otlp.textContent()) ?? '', / · 4 calls · hit 90\.4% · /);
    await shot(page, 'e2e-copilot-otlp-sessions.png');
  });

  it('a click opens the chat in the inspector: its calls and turns drawn', async () => {
    await page.locator('.part.sidebar .monaco-list-row[aria-label^="Follow instructions in [tp.prompt.md]"]').click();
    const inspector = webview(page, EXTENSION_ID);
    await inspector.locator('.chart-wrap[data-bar-count="8"]').waitFor({ timeout: 90_000 });
    assert.equal((await inspector.locator('[data-figure="llmCalls"]').textContent())?.trim(), '8');
    await shot(page, 'e2e-copilot-chat-inspector.png');
  });

  it("and the OpenTelemetry file: the conversation's 4 calls", async () => {
    await page.locator('.part.sidebar .title').first().click();
    await page.locator('.part.sidebar .monaco-list-row[aria-label^="Add a --verbose flag to the CLI"]').click();
    const inspector = webview(page, EXTENSION_ID);
    await inspector.locator('.chart-wrap[data-bar-count="4"]').waitFor({ timeout: 90_000 });
    assert.equal((await inspector.locator('[data-figure="llmCalls"]').textContent())?.trim(), '4');
    await shot(page, 'e2e-otlp-inspector.png');
  });
});
