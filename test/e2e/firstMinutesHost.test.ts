import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FrameLocator, Locator, Page } from 'playwright-core';
import { addOtherAgents } from '../support/fakeHome.mjs';
import { startLiveSession } from '../support/liveSession.mjs';
import {
  findCommand,
  launchBrowser,
  openWorkbench,
  quickOpen,
  runCommand,
  acceptPickerUntil,
  startCodeServer,
  webview,
} from '../support/vscodeE2e.mjs';
import { createWorkspace, removeWorkspace, repoRoot } from '../support/workspace.mjs';

// A new user's first minutes, host side, in real VS Code (code-server 1.100 + Chromium) with the
// packaged extension: the Analyze notification says one scope per sentence; the Filter button works
// with a tree row focused; a session row's cost includes its sub-agents as its day's total does;
// "● live" only within two minutes of the last write; a Gemini CLI chat under its project's name;
// CodeLens and the inspector's session picker agree; the several-sessions page's export buttons stand
// apart; the "Report saved" toast opens and reveals; the walkthrough and the empty view's "Open
// sample". Figures: test/reference/canonical_scopes.py and cost_reference.mjs on the sample, the
// reader tests' hand counts on the fake home (test/support/fakeHome.mjs). Screenshots go to
// test-results/; the walkthrough's media (media/walkthrough/) are taken from here.

const VSIX = path.join(repoRoot, 'dist/agent-trace-inspector.vsix');
const EXTENSION_ID = 'agent-trace.agent-trace-inspector';
const shots = path.join(repoRoot, 'test-results');
const REJECTIONS = path.join(repoRoot, 'test/fixtures/claude-code/user-rejections.jsonl');

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

/** A copy of the user-rejections log (1 call, $0.1444475) as another session: its own id, project and first prompt. */
function rejectionsCopy(home: string, project: string, id: string, prompt: string): string {
  const file = path.join(home, `.claude/projects/-home-me-projects-${project}/${id}.jsonl`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const text = fs
    .readFileSync(REJECTIONS, 'utf8')
    .replaceAll('55604662-cf2a-4331-851a-ec234028f8ca', id)
    .replaceAll('"cwd":"/home/marco/projects/spotter"', `"cwd":"/home/me/projects/${project}"`)
    .replace(/"content":"mix phx\.server doesnt seem to start"/, `"content":${JSON.stringify(prompt)}`);
  fs.writeFileSync(file, text);
  return file;
}

/** Keys go to the workbench, not to a webview that took the focus. */
async function focusWorkbench(page: Page): Promise<void> {
  await page.keyboard.press('Escape');
  await page.locator('.part.sidebar .composite.title').first().click();
  await page.waitForFunction(() => document.activeElement !== null && document.activeElement.tagName !== 'IFRAME');
}

async function closeEditors(page: Page): Promise<void> {
  await focusWorkbench(page);
  await runCommand(page, 'View: Close All Editors');
  await page.locator('.editor-group-container .tab').first().waitFor({ state: 'detached' });
}

describe('the first minutes, host side, in real VS Code (code-server + Chromium)', () => {
  let cs: { url: string; dir: string; stop: () => Promise<void> };
  let browser: { page: Page; close: () => Promise<void> };
  let workspace: string;
  let home: string;
  let page: Page;
  const web = (): FrameLocator => webview(page, EXTENSION_ID);
  const sidebar = (): Locator => page.locator('.part.sidebar');
  const row = (text: string | RegExp): Locator => sidebar().locator('.monaco-list-row', { hasText: text });
  const toast = (text: string | RegExp): Locator =>
    page.locator('.notifications-toasts .notification-toast', { hasText: text });
  /** The inspector shows a trace (its figures are drawn); a screenshot says what was on screen when it does not. */
  const inspectorShown = async (what: string): Promise<void> => {
    try {
      await web().locator('[data-figure="llmCalls"]').first().waitFor({ timeout: 90_000 });
    } catch (e) {
      await shot(page, `e2e-first-failed-${what}.png`);
      throw e;
    }
  };
  /** A button of the Agent Sessions view's title bar (shown while the pointer is over it). */
  const titleAction = async (label: string): Promise<void> => {
    // The side bar holds two views (Agent Sessions, Plan Windows), so each view's buttons sit in its own
    // pane header, not in the side bar's title (VS Code merges them there only for a lone view).
    const header = sidebar().locator('.pane-header', { hasText: 'Agent Sessions' }).first();
    await header.hover();
    await header.locator(`.actions-container a.action-label[aria-label="${label}"]`).first().click();
  };
  /**
   * Every project folded: the project rows alone, all in view. Once in CI, day rows stayed 30 s after a press
   * that followed Clear Filters: likely the tree still redrawing (the command returns before VS Code asks for
   * the rows again), and projects that come back then come unfolded, as a new node does. So the button is
   * pressed again while day rows remain, as a user would.
   */
  const collapseAll = async (): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      await titleAction('Collapse All');
      try {
        await page.waitForFunction(
          () => !document.querySelector('.part.sidebar .monaco-list-row[aria-level="2"]'),
          null,
          {
            timeout: 5_000,
          },
        );
        if (attempt > 1) console.log(`Collapse All pressed ${attempt} times before the tree settled`);
        return;
      } catch (e) {
        if (attempt === 4) {
          await shot(page, 'e2e-first-failed-collapse-all.png');
          throw e;
        }
      }
    }
  };
  /** Unfolds a project (its row's text starts with `name`) and its days. */
  const expandProject = async (name: string): Promise<void> => {
    const p = sidebar()
      .locator('.monaco-list-row[aria-level="1"]', { hasText: new RegExp(`^${name}\\d+ sessions? · `) })
      .first();
    await p.waitFor({ timeout: 30_000 });
    if ((await p.getAttribute('aria-expanded')) === 'false') await p.click();
    await page.waitForFunction(() => document.querySelector('.part.sidebar .monaco-list-row[aria-level="2"]') !== null);
    for (const day of await sidebar().locator('.monaco-list-row[aria-level="2"][aria-expanded="false"]').all())
      await day.click();
  };

  before(async () => {
    if (!fs.existsSync(VSIX)) execFileSync('npm', ['run', 'package'], { cwd: repoRoot, stdio: 'inherit' });
    fs.mkdirSync(shots, { recursive: true });
    workspace = createWorkspace();
    home = path.join(workspace, 'home');
    // A Gemini CLI chat (in its project's hash folder, with Gemini CLI's registry), an OpenHands session, an AIPerf run.
    addOtherAgents(home);
    // A session that grows later while no one looks: indexed first as it is (written long ago).
    const unseen = rejectionsCopy(home, 'unseen', '5e55e55e-0000-4000-8000-0000000000a1', 'grew while unseen');
    fs.utimesSync(unseen, new Date('2026-01-05T09:00:00Z'), new Date('2026-01-05T09:00:00Z'));
    cs = await startCodeServer({ vsix: [VSIX] });
    browser = await launchBrowser();
    page = browser.page;
    // A loaded machine (these share two cores) can take more than the default 30 s to load the workbench.
    page.setDefaultNavigationTimeout(180_000);
    await openWorkbench(page, cs.url, workspace, 'Agent Trace: Refresh Agent Sessions');
    await runCommand(page, 'View: Show Agent Sessions');
    await row('Work on bead spotte').first().waitFor({ timeout: 90_000 });
  });

  after(async () => {
    await browser?.close();
    await cs?.stop();
    if (workspace) removeWorkspace(workspace);
  });

  it('Analyze Agent Session says the whole trace in one sentence and the main session in another, each named', async () => {
    await quickOpen(page, 'claude-code-sessions.trace.jsonl');
    await inspectorShown('analyze');
    await focusWorkbench(page);
    await runCommand(page, 'Agent Trace: Analyze Agent Session');
    const t = toast('Whole trace');
    await t.waitFor({ timeout: 30_000 });
    const text = ((await t.textContent()) ?? '').replace(/\s+/g, ' ');
    // test/reference/canonical_scopes.py and cost_reference.mjs: 3 sessions, 90 calls, 93.2978%, $5.1342127, 21 failed; loops by hand: 2.
    assert.match(
      text,
      /Whole trace, 3 sessions \(2 main, 1 sub-agent\): 90 LLM calls, cache hit rate 93\.3%, cost \$5\.13, 21 failed tool calls, 2 retry loops, 0 read errors\./,
    );
    // The first main session alone: 48 calls, 2 typed turns, 98.7147%, $0.9958422, 8 failed, 1 loop; then its 1-hour TTL what-if.
    assert.match(
      text,
      /The main session ae4a77f8 \(the first of 2\) alone: 48 LLM calls, 2 user turns, cache hit rate 98\.7%, cost \$0\.996, 8 failed tool calls, 1 retry loop\. With 1-hour caching this session would have cost \$1\.13 \(\+14%\)/,
    );
    await shot(page, 'e2e-first-analyze-scopes.png');
    await runCommand(page, 'Notifications: Clear All Notifications');
    await closeEditors(page);
  });

  it("CodeLens on the sample counts the sessions and calls the inspector's session picker lists: 3 and 90", async () => {
    await quickOpen(page, 'claude-code-sessions.trace.jsonl');
    const options = web().locator('#session-picker vscode-option');
    await inspectorShown('codelens');
    const labels = await options.allTextContents();
    assert.equal(labels.length, 3, labels.join(' | '));
    assert.equal(
      labels.reduce((n, l) => n + Number(/ · (\d+) calls?$/.exec(l.trim())![1]), 0),
      90,
      labels.join(' | '),
    );
    await focusWorkbench(page);
    await runCommand(page, 'Agent Trace: Show Trace Source');
    const lens = page.locator('.monaco-editor .codelens-decoration', { hasText: 'Agent Trace ·' });
    await lens.first().waitFor({ timeout: 30_000 });
    assert.match(
      (await lens.first().textContent()) ?? '',
      /Agent Trace · 3 sessions \(2 main, 1 sub-agent\) · 90 calls · \$5\.13 · cache hit 93\.3% · 21 failed tool calls · 2 retry loops/,
    );
    await shot(page, 'e2e-first-codelens-scope.png');
    await closeEditors(page);
  });

  it('the Filter button with a tree row focused opens the filter and keeps the search', async () => {
    await focusWorkbench(page);
    await runCommand(page, 'Agent Trace: Search Sessions…');
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible' });
    // An error of the M-Claude loop ("File has not been read yet").
    await input.fill('not been read');
    await page.keyboard.press('Enter');
    const message = sidebar().locator('.message', { hasText: 'Filtered: text "not been read"' });
    await message.waitFor({ timeout: 20_000 });
    // A row gets the focus (a project row: a click only unfolds it), then the title bar's Filter button.
    await collapseAll();
    await row(/^System32/)
      .first()
      .click();
    await page.waitForFunction(() => document.querySelector('.part.sidebar .monaco-list-row.focused') !== null);
    await titleAction('Filter Sessions…');
    await page
      .locator('.quick-input-widget', { hasText: 'Filter Agent Sessions' })
      .waitFor({ state: 'visible', timeout: 10_000 });
    assert.equal(await message.count(), 1, 'the search is still on');
    await shot(page, 'e2e-first-filter-button.png');
    await page.keyboard.press('Escape');
    await runCommand(page, 'Agent Trace: Clear Filters');
    await message.waitFor({ state: 'detached' });
  });

  it("a session row's cost includes its sub-agents and says so; its day's total is the same figure", async () => {
    await collapseAll();
    await expandProject('spotter-4te');
    await expandProject('System32');
    const spotter = row(/with 2 sub-agents/).first();
    await spotter.waitFor();
    const text = (await spotter.textContent()) ?? '';
    // $2.9056013 for the spotter session's 153 calls, its two sub-agents' included (cost_reference.mjs); 149 of them its own.
    assert.match(text, /\$2\.91 with 2 sub-agents · 149 calls · hit 98\.4% · 11 failed · 1 loop/);
    const day = row(/^2026-02-12 · /).first();
    assert.match((await day.textContent()) ?? '', /1 session · \$2\.91/);
    const width = await sidebar().evaluate((e) => e.getBoundingClientRect().width);
    const box = (await sidebar().boundingBox())!;
    await shot(page, `e2e-first-sessions-${Math.round(width)}px.png`, {
      x: box.x,
      y: box.y,
      width: Math.max(box.width, 300),
      height: Math.min(box.height, 560),
    });
    // The walkthrough's picture of the view, the sidebar dragged wider (its sash) so every figure shows.
    await page.mouse.move(box.x + box.width + 1, box.y + 300);
    await page.mouse.down();
    await page.mouse.move(box.x + 640, box.y + 300, { steps: 8 });
    await page.mouse.up();
    await page.waitForFunction(
      (w) => (document.querySelector('.part.sidebar')?.getBoundingClientRect().width ?? 0) > w + 100,
      box.width,
    );
    await shot(page, 'walkthrough-agent-sessions.png', { x: 0, y: 0, width: 1000, height: 420 });
  });

  it('a Gemini CLI chat is listed under its project\'s name (from Gemini CLI\'s registry), not "chats"', async () => {
    await collapseAll();
    await row(/^app\d/)
      .first()
      .waitFor({ timeout: 10_000 });
    assert.equal(await row(/^chats\d/).count(), 0);
    assert.match(
      (await row(/^app\d/)
        .first()
        .textContent()) ?? '',
      /^app1 session · \/app$/,
    );
  });

  it('"● live" only within two minutes of the last write: it goes when the window passes, and a file written minutes before it was seen is not live', async () => {
    // Grew while no one looked: appended now, but its last write was five minutes ago.
    const unseen = path.join(
      home,
      '.claude/projects/-home-me-projects-unseen/5e55e55e-0000-4000-8000-0000000000a1.jsonl',
    );
    fs.appendFileSync(unseen, '\n');
    const fiveAgo = new Date(Date.now() - 5 * 60_000);
    fs.utimesSync(unseen, fiveAgo, fiveAgo);
    // Written 95 s ago: live for 25 s more.
    const expiring = rejectionsCopy(home, 'expiring', '5e55e55e-0000-4000-8000-0000000000a2', 'expiring live check');
    const written = Date.now() - 95_000;
    fs.utimesSync(expiring, new Date(written), new Date(written));
    await focusWorkbench(page);
    await runCommand(page, 'Agent Trace: Refresh Agent Sessions');
    await row(/^expiring1 session/)
      .first()
      .waitFor({ timeout: 30_000 });
    await collapseAll();
    await expandProject('expiring');
    await expandProject('unseen');
    const live = row(/expiring live check.*● live/).first();
    await live.waitFor({ timeout: 20_000 });
    assert.equal(await row(/grew while unseen.*● live/).count(), 0, 'last written 5 minutes ago: not live');
    await row(/grew while unseen/)
      .first()
      .waitFor();
    await shot(page, 'e2e-first-live-before.png');
    // Nothing is written from here on: the marker goes when the two minutes pass.
    await row(/expiring live check/)
      .first()
      .waitFor();
    await page.waitForFunction(
      () =>
        !Array.from(document.querySelectorAll('.part.sidebar .monaco-list-row')).some((r) =>
          /expiring live check.*● live/.test(r.textContent ?? ''),
        ),
      null,
      { timeout: Math.max(5_000, written + 120_000 - Date.now() + 15_000) },
    );
    assert.ok(Date.now() >= written + 120_000, 'not before the window passed');
    await shot(page, 'e2e-first-live-after.png');
  });

  it('the several-sessions page shows Export CSV and Export JSON apart', async () => {
    await collapseAll();
    // The spotter project selected: a click selects (and unfolds) it.
    await row(/^spotter-4te/)
      .first()
      .click();
    await page.waitForFunction(
      () => document.querySelector('.part.sidebar .monaco-list-row.selected[aria-level="1"]') !== null,
    );
    await runCommand(page, 'Agent Trace: Analyze Sessions Together');
    const panel = web();
    await panel.locator('#app[data-ready="report"]').waitFor({ timeout: 60_000 });
    const csv = (await panel.locator('[data-export="csv"]').boundingBox())!;
    const json = (await panel.locator('[data-export="json"]').boundingBox())!;
    const gap = json.x - (csv.x + csv.width);
    assert.ok(gap >= 8 || json.y >= csv.y + csv.height, `the buttons are ${gap.toFixed(1)} px apart`);
    await shot(page, 'e2e-first-export-buttons.png');
    await closeEditors(page);
  });

  it('"Report saved" offers Open and Reveal; Reveal selects the report in the Explorer', async () => {
    // The bundled sample from the extension's folder (Quick Open would now open the workspace's copy as text, as it was last shown).
    await focusWorkbench(page);
    await runCommand(page, 'Agent Trace: Open Sample Trace');
    await inspectorShown('report');
    await shot(page, 'walkthrough-open-sample.png', { x: 0, y: 0, width: 1400, height: 900 });
    // The what-if, for the walkthrough's picture.
    await web().locator('.whatif-summary').click();
    await web().locator('.whatif[data-scenario-status="done"]').waitFor({ state: 'attached', timeout: 90_000 });
    // Its results (what the cache would serve, how long turns wait): the picture the step's text describes.
    await web()
      .locator('.whatif-results')
      .evaluate((e) => e.scrollIntoView({ block: 'start' }));
    await shot(page, 'walkthrough-what-if.png', { x: 0, y: 0, width: 1400, height: 900 });
    await focusWorkbench(page);
    // Offered in the workspace, not beside the sample in the extension's folder (gone at the next update).
    const target = path.join(workspace, 'claude-code-sessions.trace.report.html');
    fs.rmSync(target, { force: true });
    // The what-if's webview can take the focus as the picker opens, or before Enter reaches it: the step is then run again.
    await acceptPickerUntil(
      page,
      'Agent Trace: Export HTML Report',
      page.locator('.quick-input-widget .monaco-list-row', { hasText: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04' }).first(),
      (timeout: number) =>
        page.waitForFunction(
          () =>
            /report\.html$/.test(
              (document.querySelector('.quick-input-widget .quick-input-box input') as HTMLInputElement | null)
                ?.value ?? '',
            ),
          null,
          { timeout },
        ),
    );
    assert.ok(
      (await page.locator('.quick-input-widget .quick-input-box input').inputValue()).endsWith(target),
      'offered in the workspace',
    );
    await page.keyboard.press('Enter');
    const saved = toast('Report saved to claude-code-sessions.trace.report.html');
    await saved.waitFor({ timeout: 30_000 });
    assert.deepEqual(
      (await saved.locator('.monaco-button').allTextContents()).map((b) => b.trim()),
      ['Open', 'Reveal'],
    );
    // No hover over the tab in the picture.
    await page.mouse.move(700, 500);
    await shot(page, 'e2e-first-report-saved.png');
    await shot(page, 'walkthrough-report.png');
    await saved.locator('.monaco-button', { hasText: 'Reveal' }).click();
    await page
      .locator('.explorer-folders-view .monaco-list-row.selected', {
        hasText: 'claude-code-sessions.trace.report.html',
      })
      .waitFor({ timeout: 20_000 });
    await shot(page, 'e2e-first-report-revealed.png');
    assert.ok(fs.statSync(target).size > 100_000, 'the report was written');
    await runCommand(page, 'View: Show Agent Sessions');
    await closeEditors(page);
  });

  it('the walkthrough: four steps, each with its picture and a command link; "Open Sample Trace" opens the bundled sample', async () => {
    await focusWorkbench(page);
    await runCommand(page, 'Welcome: Open Walkthrough...');
    await page
      .locator('.quick-input-widget .monaco-list-row', { hasText: 'Get started with Agent Trace Inspector' })
      .first()
      .click();
    const guide = page.locator('.gettingStartedContainer');
    for (const step of ['Open the bundled sample', 'Open Agent Sessions', 'Try the what-if', 'Export a report'])
      await guide.getByText(step, { exact: true }).first().waitFor({ timeout: 20_000 });
    const image = guide.locator('.getting-started-media img').first();
    await image.waitFor({ timeout: 20_000 });
    await page.waitForFunction(
      () =>
        Array.from(document.querySelectorAll('.gettingStartedContainer .getting-started-media img')).some(
          (i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0,
        ),
      null,
      { timeout: 20_000 },
    );
    await shot(page, 'e2e-first-walkthrough.png');
    // The link's button, not the step (itself a button that contains the link's text) nor hidden copies of other slides.
    const openSample = guide
      .locator(':is(.monaco-button, .button-link):visible', { hasText: 'Open Sample Trace' })
      .first();
    await openSample.scrollIntoViewIfNeeded();
    await openSample.click();
    // From the extension's own folder: the sample ships in the .vsix.
    await inspectorShown('walkthrough');
    assert.equal((await web().locator('[data-figure="llmCalls"]').first().textContent())?.trim(), '48');
    const tab = page.locator('.tabs-container .tab.active');
    assert.match(
      (await tab.getAttribute('title')) ?? (await tab.getAttribute('aria-label')) ?? '',
      /extensions.*samples.claude-code-sessions\.trace\.jsonl|claude-code-sessions\.trace\.jsonl/,
    );
    await closeEditors(page);
  });

  it('with no sessions found, the view offers "Open Sample Trace"', async () => {
    await focusWorkbench(page);
    await runCommand(page, 'View: Show Agent Sessions');
    const settingsFile = path.join(workspace, '.vscode/settings.json');
    const original = fs.readFileSync(settingsFile, 'utf8');
    const empty = path.join(workspace, 'no-sessions');
    fs.mkdirSync(empty, { recursive: true });
    const settings = JSON.parse(original) as Record<string, string>;
    for (const key of Object.keys(settings)) if (key.startsWith('agentTrace.sessionRoots.')) settings[key] = empty;
    try {
      fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 1));
      const button = sidebar().locator('.welcome-view-content :is(a, .monaco-button)', {
        hasText: 'Open Sample Trace',
      });
      await button.first().waitFor({ timeout: 60_000 });
      await shot(page, 'e2e-first-empty-view.png');
      await button.first().click();
      await inspectorShown('empty');
    } finally {
      fs.writeFileSync(settingsFile, original);
    }
    await closeEditors(page);
  });

  it('Group Sessions… switches to today / yesterday / this week / older', async () => {
    // A session active today (the M-Claude log replayed now, test/support/liveSession.mjs).
    const source = path.join(workspace, 'today-source.jsonl');
    fs.writeFileSync(
      source,
      fs
        .readFileSync(path.join(repoRoot, 'test/fixtures/claude-code/edit-retry-loop.jsonl'), 'utf8')
        .replaceAll('e5821007-9ca0-4a36-afc0-94da583da0ea', '5e55e55e-0000-4000-8000-0000000000a3'),
    );
    startLiveSession(
      source,
      path.join(home, '.claude/projects/-home-me-projects-today/5e55e55e-0000-4000-8000-0000000000a3.jsonl'),
      1000,
      60_000,
    );
    await focusWorkbench(page);
    await runCommand(page, 'Agent Trace: Refresh Agent Sessions');
    await runCommand(page, 'Agent Trace: Group Sessions…');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'By recency' }).first().click();
    // Every session of the fake home is dated 2026-03-21 or earlier; the replayed one is today's.
    await row(/^Today/)
      .first()
      .waitFor({ timeout: 60_000 });
    await row(/^Older/)
      .first()
      .waitFor();
    assert.equal(await row(/^System32/).count(), 0, 'no project rows');
    await shot(page, 'e2e-first-grouped-by-recency.png');
    await findCommand(page, 'Agent Trace: Group Sessions…');
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'By project' }).first().click();
    await row(/^System32/)
      .first()
      .waitFor({ timeout: 30_000 });
  });
});
