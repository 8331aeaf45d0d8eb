import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { buildCallDetail } from '../../src/core/view/traceView';
import { SESSION_PAGE_SIZE } from '../../src/protocol/messages';
import { parseTrace } from '../../src/core/trace/parseTrace';
import type { ParsedTrace } from '../../src/core/trace/parseTrace';
import type { WebviewMessage } from '../../src/protocol/messages';
import { parseFile, parseText, repoRoot, SPOTTER } from '../support/helpers';
import { assertClean, barPoint, inspectorSuite, plotArea, results, THEMES } from '../support/inspectorHarness';
import type { InspectorPage, OpenOptions } from '../support/inspectorHarness';

/** The stored state without the view (zoom window, scroll), which is kept a moment after it settles (test/browser/firstMinutes.test.ts). */
function withoutView(state: unknown): Record<string, unknown> {
  const copy = { ...(state as Record<string, unknown>) };
  delete copy['view'];
  delete copy['scrollY'];
  return copy;
}

// Expected figures are independent of the code under test: totals and ratios come from
// test/reference/claude_code_totals.py, counts from reading the fixture by hand (see
// test/unit/core/trace/claudeCode/claudeCodeReader.test.ts).

const MAIN_ID = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04';

const claudeLine = (id: string, usage: object, line = 0): string =>
  JSON.stringify({
    sessionId: 's1',
    uuid: `u${line}`,
    parentUuid: null,
    timestamp: '2026-01-01T00:00:00.000Z',
    type: 'assistant',
    message: { id, model: 'claude-test', role: 'assistant', content: [{ type: 'text', text: 'hi' }], usage },
  });

function reveal(m: WebviewMessage): m is Extract<WebviewMessage, { type: 'source/reveal' }> {
  return m.type === 'source/reveal';
}

describe('inspector webview in Chromium', () => {
  const suite = inspectorSuite(['dist/webview.js']);
  let parsed: ParsedTrace;

  before(async () => {
    parsed = await parseFile(SPOTTER);
  });

  function inspector(options: Partial<OpenOptions> = {}): Promise<InspectorPage> {
    return suite.open({ trace: parsed, fileName: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl', ...options });
  }

  /** What the host sends after the file changed on disk: the header and the first sessions again. */
  function didChange(p: InspectorPage): object {
    return {
      type: 'trace/didChange',
      header: p.header,
      sessions: p.service.sessionList({ query: '', offset: 0, limit: SESSION_PAGE_SIZE }),
    };
  }

  async function paintedPixels(p: InspectorPage): Promise<number> {
    return p.page.evaluate(() => {
      const canvas = document.querySelector('.chart-wrap canvas') as HTMLCanvasElement;
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
      return n;
    });
  }

  it('posts ready first and shows the main session figures from the independent reference', async () => {
    const p = await inspector();
    assert.equal(p.posted[0]?.type, 'ready');
    const expected: Record<string, string> = {
      llmCalls: '149',
      userTurns: '2',
      input: '11,746,257',
      cached: '11,560,832',
      appended: '185,425',
      output: '31,625',
      cacheWrite: '185,255',
      cacheHitRate: '98.4%',
      rawInputToOutput: '371×',
      appendToOutputMedian: '5.60×',
      appendToOutputAggregate: '5.86×',
    };
    for (const [name, value] of Object.entries(expected)) assert.equal(await p.figure(name), value, name);
    // Mean of per-call appended/output (196.94) is dominated by calls logged with output ≤ 1.
    assert.equal(await p.figure('appendToOutputMean'), '197×');
    assert.match((await p.page.textContent('.file-name')) ?? '', /ae4a77f8-aedd-4bc1-888f-c94edc91af04\.jsonl/);
    assert.match((await p.page.textContent('.badge')) ?? '', /Claude Code session log/);
    assert.match((await p.page.textContent('.evidence')) ?? '', /look like Claude Code session log/);
    await assertClean(p);
  });

  it('paints 149 bars, a compaction marker and the sub-agent marker; screenshot in Dark Modern', async () => {
    const p = await inspector();
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-bar-count'), '149');
    assert.ok((await paintedPixels(p)) > 1000, 'the canvas has painted pixels');
    const compaction = p.page.locator('[data-marker="compaction"]');
    assert.equal(await compaction.count(), 1);
    assert.match(
      (await compaction.textContent()) ?? '',
      /Compaction before call 139 \(manual, 142,431 tokens before\)/,
    );
    assert.match(
      (await p.page.textContent('[data-marker="subagent"]')) ?? '',
      /Sub-agent aac57f5 started by call 5 \(3 calls\)/,
    );
    // 11 failed tool calls fall in 11 distinct calls, each marked.
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-failed-calls'), '11');
    // Hover a failing call so the screenshot shows a tooltip.
    const failingCall = parsed.model.sessions[0]!.calls.findIndex((c) =>
      c.toolCalls.some((t) => t.isError === true && t.name === 'Edit'),
    );
    const at = await barPoint(p, failingCall);
    await p.page.mouse.move(at.x, at.y);
    await p.page.screenshot({ path: join(results, 'webview-timeline.png'), fullPage: true });
    await assertClean(p);
  });

  it('clicking a bar selects that call and loads its details, without opening the source; "Show source" opens it', async () => {
    const p = await inspector();
    const since = p.posted.length;
    const at = await barPoint(p, 100);
    await p.page.mouse.click(at.x, at.y);
    await p.page.waitForSelector('.chart-wrap[data-selected-call="100"]');
    await p.page.waitForSelector('.details .tools, .details h4');
    assert.match((await p.page.textContent('.details h3')) ?? '', /Call 101 of 149/);
    // The details loaded through the channel; the source was not asked for (it would open a text editor beside the inspector).
    await p.waitForPosted((m) => m.type === 'callDetail', since);
    assert.deepEqual(p.posted.slice(since).filter(reveal), [], 'a plain click opens no source');
    const state = withoutView(await p.state());
    assert.deepEqual(state, { sessionId: MAIN_ID, callIndex: 100, showCached: true, barView: 'tokens' });
    await p.page.click('.details [data-action="reveal-call"]');
    const m = await p.waitForPosted(reveal, since);
    assert.ok(reveal(m));
    assert.deepEqual(m.ref, { sessionId: MAIN_ID, callIndex: 100 });
    assert.equal(m.toolId, null);
    await assertClean(p);
  });

  it('the first Tab stop skips to the timeline: one Tab and Enter put the focus on the chart', async () => {
    const p = await inspector();
    await p.page.keyboard.press('Tab');
    assert.equal(await p.page.evaluate(() => document.activeElement?.textContent), 'Skip to the timeline');
    assert.ok(await p.page.isVisible('.skip-link'), 'the skip link shows while it has the focus');
    await p.page.keyboard.press('Enter');
    assert.equal(await p.page.evaluate(() => document.activeElement?.id), 'timeline-chart');
    await p.page.keyboard.press('Tab');
    await p.page.keyboard.press('Shift+Tab');
    assert.equal(await p.page.evaluate(() => document.activeElement?.id), 'timeline-chart');
    await assertClean(p);
  });

  it('is keyboard driven: Tab reaches the chart, arrows select, Enter reveals, the selection is announced', async () => {
    const p = await inspector();
    let reached = false;
    for (let i = 0; i < 60 && !reached; i++) {
      await p.page.keyboard.press('Tab');
      reached = await p.page.evaluate(() => document.activeElement?.classList.contains('chart-wrap') ?? false);
    }
    assert.ok(reached, 'Tab reaches the chart');
    assert.match((await p.page.getAttribute('.chart-wrap', 'aria-label')) ?? '', /arrows select a call/);
    await p.page.keyboard.press('ArrowRight');
    await p.page.keyboard.press('ArrowRight');
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), '1');
    const since = p.posted.length;
    await p.page.keyboard.press('Enter');
    const m = await p.waitForPosted(reveal, since);
    assert.ok(reveal(m));
    assert.deepEqual(m.ref, { sessionId: MAIN_ID, callIndex: 1 });
    assert.match(
      (await p.page.textContent('[aria-live="polite"]')) ?? '',
      /^Call 2 of 149: input 27,539, cached 26,007, appended 1,532, output 8/,
    );
    await p.page.keyboard.press('End');
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), '148');
    await p.page.keyboard.press('Home');
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), '0');
    // Details of call 1 arrive through the channel: its first tool is a Bash with a "Show source" link.
    await p.page.waitForSelector('.details .tool');
    const sinceTool = p.posted.length;
    await p.page.click('.details .tool [data-action="reveal-tool"]');
    const toolReveal = await p.waitForPosted(reveal, sinceTool);
    assert.ok(reveal(toolReveal) && toolReveal.toolId !== null && toolReveal.ref.callIndex === 0);
    await assertClean(p);
  });

  it('shows a failed tool with its error text and exit code', async () => {
    // The third failed tool (line 916) is a Bash run with "Exit code 1".
    const calls = parsed.model.sessions[0]!.calls;
    const index = calls.findIndex((c) => c.toolCalls.some((t) => t.isError === true && t.exitCode === 1));
    const p = await inspector({ select: { sessionId: MAIN_ID, callIndex: index } });
    await p.page.waitForSelector('.details .tool-failed');
    const failed = p.page.locator('.details .tool-failed', { hasText: 'exit 1' }).first();
    assert.match((await failed.locator('.tool-meta').textContent()) ?? '', /^failed · exit 1/);
    assert.match((await failed.locator('.tool-error').textContent()) ?? '', /permission denied/);
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), String(index));
    await assertClean(p);
  });

  it('shows a visible message when call/details fails', async () => {
    const p = await inspector({
      details: () => new Error('host is busy'),
      select: { sessionId: MAIN_ID, callIndex: 3 },
    });
    await p.page.waitForSelector('.details .inline-error');
    assert.match((await p.page.textContent('.details .inline-error')) ?? '', /host is busy/);
    assert.deepEqual(p.pageErrors, []);
  });

  it('switching to sub-agent aac57f5 in the picker shows its 3 calls', async () => {
    const p = await inspector();
    await p.page.click('#session-picker');
    await p.page.locator('#session-picker li.option', { hasText: 'aac57f5' }).click();
    await p.page.waitForFunction(() => document.querySelector('[data-figure="llmCalls"]')?.textContent === '3');
    // The chart is redrawn once its filter is applied (TimelinePanel.applyFilter, asynchronous), after the figures: it may still show the main session's 149 bars.
    await p.page.waitForSelector('.chart-wrap[data-bar-count="3"]');
    assert.equal(await p.figure('input'), '50,496');
    assert.equal(await p.figure('cached'), '29,274');
    await p.page.screenshot({ path: join(results, 'webview-subagent.png') });
    const options = await p.page.locator('#session-picker vscode-option').allTextContents();
    assert.deepEqual(options, [
      'main session ae4a77f8 · 149 calls',
      '└ sub-agent aac57f5 · 3 calls',
      '└ compaction agent acompact-946d2b · 1 call',
    ]);
    assert.equal(((await p.state()) as { sessionId: string }).sessionId, 'aac57f5');
    await assertClean(p);
  });

  it('paints each bar as tall as its tokens and its parts in proportion (the plot is one pixel buffer)', async () => {
    // Cached tokens hidden: each bar is appended (bottom) + output (top). Heights are read off
    // the canvas in the bar's middle column, from the plot's bottom up to the first unpainted
    // pixel; the context line (it crosses bars) covers up to 3 px of a part, or adds them on top.
    const p = await inspector({ state: { sessionId: MAIN_ID, showCached: false } });
    await p.page.waitForSelector('.chart-wrap[data-show-cached="false"][data-plot-area]');
    const a = await plotArea(p);
    const calls = parsed.model.sessions[0]!.calls;
    const stack = (i: number): number => (calls[i]!.tokens.appended ?? 0) + (calls[i]!.tokens.output ?? 0);
    const tallest = calls.reduce((best, _, i) => (stack(i) > stack(best) ? i : best), 0);
    // The second tallest (call 139 after the compaction: 23,815 appended + 298 output, against call 6's 39,416 + 114).
    const other = calls.reduce((best, _, i) => (i !== tallest && (best < 0 || stack(i) > stack(best)) ? i : best), -1);
    assert.deepEqual([tallest, other], [5, 138]);
    const column = (i: number): Promise<{ height: number; bottomColour: number; bottomRun: number }> =>
      p.page.evaluate(
        ({ x, top, bottom }) => {
          const c = document.querySelector('.chart-wrap canvas') as HTMLCanvasElement;
          const d = new Uint32Array(c.getContext('2d')!.getImageData(Math.floor(x), 0, 1, c.height).data.buffer);
          let y = Math.ceil(bottom) - 1;
          const bottomColour = d[y]!;
          let bottomRun = 0;
          while (y >= top && d[y] === bottomColour) {
            bottomRun += 1;
            y--;
          }
          let height = bottomRun;
          while (y >= top && d[y]! >>> 24 !== 0) {
            // The context line crosses bars: count the bottom colour above it too.
            if (d[y] === bottomColour) bottomRun += 1;
            height += 1;
            y--;
          }
          return { height, bottomColour, bottomRun };
        },
        // 2 px right of the middle: the context line's points are the bars' middles, and it drops steeply at call 139.
        { x: a.left + ((i + 0.5) * (a.right - a.left)) / a.count + 2, top: a.top, bottom: a.bottom },
      );
    const big = await column(tallest);
    const small = await column(other);
    // The tallest bar reaches at least half the plot (the axis maximum is the next round number above it).
    assert.ok(big.height > (a.bottom - a.top) / 2, `tallest bar ${big.height} px`);
    const expectedSmall = (big.height * stack(other)) / stack(tallest);
    assert.ok(
      Math.abs(small.height - expectedSmall) <= 4,
      `call ${other + 1}: ${small.height} px, expected ${expectedSmall.toFixed(1)}`,
    );
    // Its bottom part is the appended tokens, in the appended colour of every bar.
    const expectedAppended = (big.height * (calls[other]!.tokens.appended ?? 0)) / stack(tallest);
    assert.ok(
      Math.abs(small.bottomRun - expectedAppended) <= 4,
      `appended ${small.bottomRun} px, expected ${expectedAppended.toFixed(1)}`,
    );
    assert.equal(small.bottomColour, big.bottomColour);
    await assertClean(p);
  });

  it('restores UI intent from the webview state: session, call and the show-cached toggle', async () => {
    const p = await inspector({ state: { sessionId: 'aac57f5', callIndex: 2, showCached: false } });
    assert.equal(await p.figure('llmCalls'), '3');
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), '2');
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-show-cached'), 'false');
    assert.equal(
      await p.page.evaluate(
        () => (document.querySelector('vscode-checkbox') as HTMLElement & { checked: boolean }).checked,
      ),
      false,
    );
    assert.equal(
      await p.page.evaluate(() => (document.querySelector('#session-picker') as HTMLElement & { value: string }).value),
      'aac57f5',
    );
    await assertClean(p);
  });

  it('"Show cached" off rescales the bars to appended + output', async () => {
    const p = await inspector();
    await p.page.click('vscode-checkbox');
    await p.page.waitForSelector('.chart-wrap[data-show-cached="false"]');
    assert.ok((await paintedPixels(p)) > 1000);
    assert.equal(((await p.state()) as { showCached: boolean }).showCached, false);
    await assertClean(p);
  });

  it('call/select from the host selects and reveals a call; trace/didChange keeps the selection', async () => {
    const p = await inspector();
    await p.send({ type: 'call/select', ref: { sessionId: MAIN_ID, callIndex: 42 } });
    await p.page.waitForSelector('.chart-wrap[data-selected-call="42"]');
    await p.send(didChange(p));
    await p.page.waitForSelector('.chart-wrap[data-selected-call="42"]');
    assert.equal(await p.figure('llmCalls'), '149');
    await assertClean(p);
  });

  it('shows load progress in MB instead of a blank panel', async () => {
    const p = await inspector();
    await p.send({ type: 'load/progress', bytesRead: 5 * 1024 * 1024, totalBytes: 20 * 1024 * 1024 });
    assert.match((await p.page.textContent('.loading-block')) ?? '', /5\.0 MB of 20\.0 MB \(25%\)/);
    await p.send(didChange(p));
    await p.page.waitForSelector('.loading-block', { state: 'hidden' });
    await assertClean(p);
  });

  it('an empty file shows the problem prominently', async () => {
    const empty = await parseTrace([{ key: 'empty.jsonl', bytes: new Uint8Array() }]);
    const p = await inspector({ trace: empty, fileName: 'empty.jsonl' });
    const problem = p.page.locator('.problem[role="alert"]');
    assert.ok(await problem.isVisible());
    assert.match((await problem.textContent()) ?? '', /empty/);
    assert.ok(await p.page.locator('.session-body').isHidden());
    await p.page.screenshot({ path: join(results, 'webview-problem.png') });
    await assertClean(p);
  });

  it('says so when a session has no LLM calls, and keyboard keys on it do nothing harmful', async () => {
    const line = JSON.stringify({
      sessionId: 's1',
      uuid: 'u',
      parentUuid: null,
      timestamp: '2026-01-01T00:00:00.000Z',
      type: 'user',
      message: { role: 'user', content: 'hello' },
    });
    const p = await inspector({
      trace: await parseText(line + '\n', 'prompt-only.jsonl'),
      fileName: 'prompt-only.jsonl',
    });
    assert.ok(await p.page.locator('.empty-note', { hasText: 'This session has no LLM calls.' }).isVisible());
    assert.equal(await p.figure('llmCalls'), '0');
    assert.equal(await p.figure('userTurns'), '1');
    assert.equal(await p.figure('input'), 'unknown');
    await assertClean(p);
  });

  it('renders hostile trace text as text, never as markup', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1">';
    const p = await inspector({
      header: (h) => ({
        ...h,
        fileName: `${hostile}.jsonl`,
        diagnostics: [
          { file: hostile, fileIndex: 0, line: 3, severity: 'error', message: `<script>window.__pwned=1</script>` },
        ],
      }),
      details: (ref) => ({ ...buildCallDetail(parsed.model, ref.sessionId, ref.callIndex)!, turnPreview: hostile }),
      select: { sessionId: MAIN_ID, callIndex: 0 },
    });
    await p.page.waitForSelector('.details .prompt');
    assert.equal(await p.page.textContent('.file-name'), `${hostile}.jsonl`);
    assert.equal(await p.page.textContent('.details .prompt'), hostile);
    assert.match((await p.page.textContent('.diagnostic')) ?? '', /<script>/);
    assert.equal(await p.page.locator('#app img, #app script').count(), 0);
    assert.equal(await p.page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    await assertClean(p);
  });

  it('shows bidi overrides and control characters in trace text as escapes, and says when the host refused a request', async () => {
    const p = await inspector({
      header: (h) => ({
        ...h,
        fileName: `evil\u202egnp.exe.jsonl`,
        diagnostics: [
          { file: 'x', fileIndex: 0, line: 2, severity: 'error', message: 'bell \u0007 and \u2066isolate\u2069' },
        ],
      }),
    });
    assert.equal(await p.page.textContent('.file-name'), 'evil\\u202egnp.exe.jsonl');
    assert.match((await p.page.textContent('.diagnostic .message')) ?? '', /^bell \\x07 and \\u2066isolate\\u2069$/);
    // A diagnostic's line is revealed by the file's index, never by a path.
    const before = p.posted.length;
    await p.page.click('.diagnostic');
    assert.deepEqual(await p.waitForPosted((m) => m.type === 'source/revealLine', before), {
      type: 'source/revealLine',
      file: 0,
      line: 2,
    });
    await p.send({ type: 'host/error', message: 'refused a request from the panel: file is not a whole number' });
    await p.page.waitForSelector('.error-banner[data-host-errors="1"]');
    assert.equal(
      await p.page.textContent('.error-banner'),
      'The extension could not do that: refused a request from the panel: file is not a whole number',
    );
    assert.equal(await p.figure('llmCalls'), '149', 'the trace stays on screen');
    await assertClean(p);
  });

  it('renders missing figures as "unknown", never 0', async () => {
    const noCache = await parseText(claudeLine('a', { input_tokens: 10, output_tokens: 5 }) + '\n', 'no-cache.jsonl');
    const p = await inspector({ trace: noCache, fileName: 'no-cache.jsonl' });
    for (const name of ['cached', 'input', 'cacheWrite', 'cacheHitRate', 'rawInputToOutput'])
      assert.equal(await p.figure(name), 'unknown', name);
    assert.equal(await p.figure('appended'), '10');
    assert.equal(await p.figure('output'), '5');
    await assertClean(p);
  });

  it('says what the format cannot give, and the format picker asks the host to read the file again', async () => {
    const p = await inspector();
    // The Claude Code definition declares one limitation (no server-side timing).
    const notes = await p.page.locator('.limitations li').allTextContents();
    assert.deepEqual(notes, [
      'No server-side timing: call durations are measured by the client and include queueing, prefill, decode and network time.',
    ]);
    const options = await p.page.locator('#format-picker vscode-option').allTextContents();
    assert.equal(options[0], 'Detect automatically (Claude Code session log)');
    assert.ok(options.includes('Agent Trace (canonical)'));
    const since = p.posted.length;
    await p.page.click('#format-picker');
    await p.page.locator('#format-picker li.option', { hasText: 'Agent Trace (canonical)' }).click();
    const chosen = await p.waitForPosted((m) => m.type === 'format/choose', since);
    assert.deepEqual(chosen, { type: 'format/choose', format: 'agent-trace' });
    await assertClean(p);
  });

  it('a SWE-agent trajectory: totals only, said plainly, with failed tool calls still marked', async () => {
    const traj = await parseFile(join(repoRoot, 'test/fixtures/swe-agent/pydicom__pydicom-1458.traj'));
    const p = await inspector({ trace: traj, fileName: 'pydicom__pydicom-1458.traj' });
    // info.model_stats of the file: 122,612 tokens sent, 1,369 received, 12 api calls; 4 failed steps (reader test).
    assert.equal(await p.figure('llmCalls'), '12');
    assert.equal(await p.figure('input'), '122,612');
    assert.equal(await p.figure('cached'), 'unknown');
    assert.match((await p.page.textContent('.tokens-note')) ?? '', /^Totals only/);
    assert.match(
      (await p.page.locator('.limitations li').first().textContent()) ?? '',
      /No per-call token counts in SWE-agent trajectories/,
    );
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-bar-count'), '12');
    await p.page.screenshot({ path: join(results, 'webview-swe-agent.png') });
    await assertClean(p);
  });

  it('lists a malformed line with its 1-based line number and reveals it 0-based', async () => {
    const text = [
      claudeLine('a', { input_tokens: 1, cache_read_input_tokens: 2, output_tokens: 3 }, 0),
      '{"broken": ',
      claudeLine('b', { input_tokens: 1, cache_read_input_tokens: 2, output_tokens: 3 }, 2),
    ].join('\n');
    const broken = await parseText(text, 'broken.jsonl');
    const p = await inspector({ trace: broken, fileName: 'broken.jsonl' });
    const row = p.page.locator('.diagnostic').first();
    assert.match((await row.textContent()) ?? '', /broken\.jsonl:2.*not valid JSON/);
    const since = p.posted.length;
    await row.click();
    const m = await p.waitForPosted((x) => x.type === 'source/revealLine', since);
    assert.deepEqual(m, { type: 'source/revealLine', file: 0, line: 1 });
    await assertClean(p);
  });

  it('summarises skipped records compactly', async () => {
    const p = await inspector();
    assert.match(
      (await p.page.textContent('[data-skipped]')) ?? '',
      /^Skipped 1,140 progress, 20 file-history-snapshot/,
    );
  });

  it('re-reads chart colours when the theme changes to high contrast', async () => {
    const p = await inspector();
    const before = JSON.parse((await p.page.getAttribute('.chart-wrap', 'data-palette'))!) as Record<string, unknown>;
    assert.equal(before['cached'], '#3794ff');
    assert.equal(before['highContrast'], false);
    await p.page.evaluate(
      (vars) => {
        for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(k, v);
        document.body.className = 'vscode-high-contrast';
      },
      { ...THEMES['high-contrast'].variables, '--vscode-charts-blue': '#00ffff' },
    );
    await p.page.waitForFunction(
      () => JSON.parse(document.querySelector('.chart-wrap')!.getAttribute('data-palette')!).highContrast === true,
    );
    const after = JSON.parse((await p.page.getAttribute('.chart-wrap', 'data-palette'))!) as Record<string, unknown>;
    assert.equal(after['cached'], '#00ffff');
    assert.equal(after['barBorder'], '#6fc3df');
    assert.notEqual(after['failed'], before['failed']);
    await assertClean(p);
  });

  it('screenshots: Light Modern, High Contrast and a narrow panel', async () => {
    const failingEdit = parsed.model.sessions[0]!.calls.findIndex((c) =>
      c.toolCalls.some((t) => t.isError === true && t.name === 'Edit'),
    );
    const select = { sessionId: MAIN_ID, callIndex: failingEdit };
    const light = await inspector({ theme: 'light', select });
    await light.page.waitForSelector('.details .tools');
    await light.page.screenshot({ path: join(results, 'webview-light.png'), fullPage: true });
    await assertClean(light);
    const hc = await inspector({ theme: 'high-contrast', select });
    await hc.page.waitForSelector('.details .tools');
    await hc.page.screenshot({ path: join(results, 'webview-high-contrast.png'), fullPage: true });
    await assertClean(hc);
    const narrow = await inspector({ viewport: { width: 600, height: 900 }, select });
    await narrow.page.waitForSelector('.details .tools');
    assert.ok((await paintedPixels(narrow)) > 1000);
    const overflow = await narrow.page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.ok(overflow <= 0, `no horizontal scrolling at 600px (overflow ${overflow}px)`);
    await narrow.page.screenshot({ path: join(results, 'webview-narrow.png'), fullPage: true });
    await assertClean(narrow);
  });
});
