/* global document, HTMLIFrameElement -- page.evaluate bodies run in the page */
// Functions to test a VS Code extension in real VS Code (code-server) driven by the system's Chromium (chromium.mjs).
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from './chromium.mjs';

const home = process.env.VSCODE_E2E_HOME ?? path.join(os.homedir(), '.cache', 'vscode-e2e');
export const CODE_SERVER = process.env.CODE_SERVER ?? path.join(home, 'code-server/node_modules/.bin/code-server');

const SETTINGS = {
  'workbench.startupEditor': 'none',                 // no Welcome tab
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.tips.enabled': false,
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'git.enabled': false,
  'chat.disableAIFeatures': true,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

const freePort = () => new Promise((res, rej) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => res(port)); });
  s.on('error', rej);
});

// Start an isolated code-server (fresh user data + extensions dirs), optionally with .vsix files installed.
/** @param {{ vsix?: string[], settings?: Record<string, unknown>, env?: Record<string, string> }} [options] */
export async function startCodeServer({ vsix = [], settings = {}, env = {} } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vscode-e2e-'));
  const common = ['--config', path.join(dir, 'config.yaml'), '--user-data-dir', path.join(dir, 'data'),
    '--extensions-dir', path.join(dir, 'extensions')];
  fs.writeFileSync(path.join(dir, 'config.yaml'), 'auth: none\n');   // never read ~/.config/code-server
  fs.mkdirSync(path.join(dir, 'data/User'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'data/User/settings.json'), JSON.stringify({ ...SETTINGS, ...settings }, null, 1));
  for (const f of vsix) execFileSync(CODE_SERVER, [...common, '--install-extension', path.resolve(f)], { stdio: 'inherit' });
  const port = await freePort();
  const log = fs.openSync(path.join(dir, 'code-server.log'), 'w');
  const proc = spawn(CODE_SERVER, [...common, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`,
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--ignore-last-opened'],
    { stdio: ['ignore', log, log], detached: true, env: { ...process.env, ...env } });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try { if ((await fetch(`${url}/healthz`)).ok) break; } catch { /* not listening yet */ }
    if (proc.exitCode !== null || i > 600) throw new Error('code-server did not start:\n' + fs.readFileSync(path.join(dir, 'code-server.log'), 'utf8'));
    await new Promise((r) => setTimeout(r, 100));
  }
  const stop = async () => {
    try { process.kill(-proc.pid, 'SIGTERM'); } catch { /* already gone */ }   // our own process group only
    for (let i = 0; i < 50 && proc.exitCode === null && proc.signalCode === null; i++) await new Promise((r) => setTimeout(r, 100));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { url, port, dir, stop };
}

export async function launchBrowser() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'chromium-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(), headless: true, viewport: { width: 1400, height: 900 },
    args: CHROMIUM_ARGS,
  });
  const page = context.pages()[0] ?? await context.newPage();
  const close = async () => {
    await page.goto('about:blank').catch(() => {});  // graceful disconnect: server ends the extension host now
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { context, page, close };
}

// Load the workbench on a folder and wait until `readyCommand` (one of your extension's commands,
// as "Category: Title") is in the palette, i.e. your contributions (custom editors...) are registered.
export async function openWorkbench(page, url, folder, readyCommand) {
  await page.goto(`${url}/?folder=${encodeURIComponent(path.resolve(folder))}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  if (readyCommand) { await findCommand(page, readyCommand, 60_000); await page.keyboard.press('Escape'); }
}

// Command palette row for `label` (exact aria-label "Category: Title", or "Category: Title, <keys>").
// The palette lists the commands known when it opened, so it is reopened until the row shows up.
export async function findCommand(page, label, timeout = 15_000) {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  const row = page.locator(`.quick-input-widget .monaco-list-row:is([aria-label="${label}"], [aria-label^="${label}, "])`);
  const deadline = Date.now() + timeout;
  for (;;) {
    // A webview that finishes loading late (the inspector) may take the keyboard focus: F1 then
    // goes into its iframe, or the palette closes as it opens. Focus is taken back to the
    // workbench's own document and the whole attempt repeated until the row shows.
    try {
      await page.evaluate(() => { if (document.activeElement instanceof HTMLIFrameElement) document.activeElement.blur(); });
      await page.keyboard.press('F1');
      await input.waitFor({ state: 'visible', timeout: 3000 });
      await input.fill('>' + label, { timeout: 3000 });
      await row.waitFor({ state: 'visible', timeout: 1000 });
      return row;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await page.keyboard.press('Escape');
    }
  }
}
export async function runCommand(page, label) { await (await findCommand(page, label)).click(); }

// Run a command that opens a picker and wait until `row` (a locator inside the quick input)
// is visible. A webview finishing its load can take the focus and close the picker as it opens
// (leaving its rows in the page, hidden), so the command is run again until the row is shown.
export async function runCommandForPicker(page, label, row, timeout = 30_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      await runCommand(page, label);
      await row.waitFor({ state: 'visible', timeout: 5000 });
      return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await page.keyboard.press('Escape');
    }
  }
}

// Run a command whose picker is accepted with Enter, until `next` (a function waiting, with a
// timeout, for what the acceptance opens) resolves. A webview finishing its load can also take
// the focus between the picker showing and the key (a CI run once saw no save dialog for 20 s;
// it passed when run again): then the whole step is repeated, up to `tries` times, and the
// number of tries said. `onGiveUp` runs before the last failure is thrown (a screenshot).
/**
 * @param {import('playwright-core').Page} page
 * @param {string} label
 * @param {import('playwright-core').Locator} row
 * @param {(timeout: number) => Promise<unknown>} next
 * @param {{ tries?: number, onGiveUp?: () => Promise<unknown> }} [options]
 */
export async function acceptPickerUntil(page, label, row, next, { tries = 3, onGiveUp } = {}) {
  for (let attempt = 1; ; attempt++) {
    await runCommandForPicker(page, label, row);
    await page.keyboard.press('Enter');
    try {
      await next(10_000);
      if (attempt > 1) console.log(`${label}: accepted on try ${attempt}`);
      return;
    } catch (e) {
      if (attempt === tries) {
        await onGiveUp?.();
        throw e;
      }
      await page.keyboard.press('Escape');
    }
  }
}

// Quick Open (Ctrl+P) a file and click its own row: Enter would take the first fuzzy match,
// which can be a recently opened file whose path happens to contain the same letters. Like
// findCommand, each attempt is repeated whole: a webview that finishes loading late may take
// the keyboard focus (Ctrl+P then goes into its iframe) or close the picker as it opens.
export async function quickOpen(page, name, timeout = 15_000) {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  const row = page.locator(`.quick-input-widget .monaco-list-row[aria-label^="${name}"]`).first();
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      await page.evaluate(() => { if (document.activeElement instanceof HTMLIFrameElement) document.activeElement.blur(); });
      await page.keyboard.press('Control+P');
      await input.waitFor({ state: 'visible', timeout: 3000 });
      await input.fill(name, { timeout: 3000 });
      await row.click({ timeout: 3000 });
      return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await page.keyboard.press('Escape');
    }
  }
}

// The document inside the visible webview of an extension: outer <iframe class="webview ready"
// src="...&extensionId=pub.name..."> (an overlay under .monaco-workbench, not inside the editor)
// -> inner <iframe id="active-frame">. VS Code keeps hidden webviews' iframes in the page, so
// only a visible one counts, and the last of those is the newest.
export function webview(page, extensionId) {
  return page.locator(`iframe.webview.ready[src*="extensionId=${extensionId}"]:visible`).last().contentFrame()
    .locator('iframe#active-frame').contentFrame();
}

// Run a mocha (or any) suite in code-server's Node extension host, like @vscode/test-electron:
// `extensionTestsPath` exports run(): Promise<void>. Returns the exit code (0 = passed).
export async function runExtensionTests({ url, extensionDevelopmentPath, extensionTestsPath, folder, timeout = Number(process.env.AGENT_TRACE_HOST_TIMEOUT_MS) || 600_000 }) {
  const authority = new URL(url).host;                       // the remote authority is host:port
  const remote = (p) => `vscode-remote://${authority}${path.resolve(p)}`;
  const payload = JSON.stringify([['extensionDevelopmentPath', remote(extensionDevelopmentPath)],
    ['extensionTestsPath', remote(extensionTestsPath)]]);
  const { page, close } = await launchBrowser();
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => { console.error('timed out waiting for the test run to end'); resolve(124); }, timeout);
      const start = async () => {
        await page.exposeFunction('codeAutomationLog', (type, args) => (console[type] ?? console.log)(...args));
        await page.exposeFunction('codeAutomationExit', (code) => { clearTimeout(timer); resolve(code); });
        await page.goto(`${url}/?folder=${encodeURIComponent(path.resolve(folder))}&payload=${encodeURIComponent(payload)}`);
      };
      start().catch((e) => { clearTimeout(timer); reject(e); });
    });
  } finally { await close(); }
}
