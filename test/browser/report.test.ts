import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { runFast } from '../../src/core/sim/engines/fastEngine';
import { DEFAULT_PARAMS } from '../../src/core/sim/params';
import { runScenario } from '../../src/core/sim/scenario';
import { runSweep } from '../../src/core/sim/sweep';
import { workloadFromSession } from '../../src/core/sim/workload';
import { buildReportTrace } from '../../src/core/share/reportDocument';
import type { ReportDocument } from '../../src/core/share/reportDocument';
import { parseWhatIfDocument } from '../../src/core/share/whatIfDocument';
import type { ParsedTrace } from '../../src/core/trace/parseTrace';
import { readReportAssets, redactReport, reportHtml } from '../../src/node/htmlReport';
import { createRedactor } from '../../src/node/secretlintDetector';
import { parseFile, parseText, repoRoot, SPOTTER } from '../support/helpers';
import { inspectorSuite, launchChromium, results } from '../support/inspectorHarness';

// The standalone HTML report opened from disk (file://) in Chromium: no request but the
// file itself, no console error, no CSP violation, charts drawn, figures equal to the
// inspector's (the same view opened in the inspector page beside it), hostile trace text
// shown as text. Expected figures of the main session: test/reference/claude_code_totals.py
// (see test/browser/inspector.test.ts).

const HOSTILE = '</script><script>alert(1)</script><img src=x onerror=alert(2)><!-- \u2028 & "quoted"';

/** A Claude Code session of one call whose tool failed with hostile text, and whose prompt and file name are hostile. */
function hostileTrace(): string {
  const base = { sessionId: 's1', parentUuid: null, timestamp: '2026-01-01T00:00:00.000Z' };
  return [
    { ...base, uuid: 'u0', type: 'user', message: { role: 'user', content: `fix it ${HOSTILE}` } },
    {
      ...base,
      uuid: 'u1',
      type: 'assistant',
      message: {
        id: 'm1',
        model: 'claude-test',
        role: 'assistant',
        content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: `echo '${HOSTILE}'` } }],
        usage: { input_tokens: 10, cache_read_input_tokens: 90, cache_creation_input_tokens: 0, output_tokens: 5 },
      },
    },
    {
      ...base,
      uuid: 'u2',
      type: 'user',
      message: {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 't1', is_error: true, content: `Exit code 1\n${HOSTILE}` }],
      },
    },
  ]
    .map((l) => JSON.stringify(l))
    .join('\n');
}

interface OpenedReport {
  page: Page;
  consoleErrors: string[];
  pageErrors: string[];
  requests: string[];
  dialogs: string[];
}

async function openReport(browser: Browser, file: string): Promise<OpenedReport> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const opened: OpenedReport = { page, consoleErrors: [], pageErrors: [], requests: [], dialogs: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') opened.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => opened.pageErrors.push(e.message));
  page.on('request', (r) => opened.requests.push(r.url()));
  page.on('dialog', (d) => {
    opened.dialogs.push(d.message());
    void d.dismiss();
  });
  // CSP violations surface as console errors (the test fails on any).
  await page.addInitScript(
    "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI))",
  );
  await page.goto(`file://${file}`);
  return opened;
}

async function painted(page: Page, selector: string): Promise<number> {
  return page
    .locator(`${selector} canvas`)
    .first()
    .evaluate((c: HTMLCanvasElement) => {
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
      return n;
    });
}

async function figures(page: Page, scope: string): Promise<Record<string, string>> {
  return page.evaluate(
    (s) =>
      Object.fromEntries(
        Array.from(document.querySelectorAll<HTMLElement>(`${s} [data-figure]`)).map((e) => [
          e.dataset['figure']!,
          (e.textContent ?? '').trim(),
        ]),
      ),
    scope,
  );
}

function clean(r: OpenedReport, file: string): void {
  assert.deepEqual(r.consoleErrors, [], 'no console error (CSP violations included)');
  assert.deepEqual(r.pageErrors, [], 'no page error');
  assert.deepEqual(r.dialogs, [], 'no script ran from trace text');
  assert.deepEqual(r.requests, [`file://${file}`], 'no request but the file itself');
}

describe('standalone HTML report in Chromium', () => {
  // The inspector page, for the same view side by side.
  const suite = inspectorSuite(['dist/report.js', 'dist/webview.js']);
  let browser: Browser;
  let dir: string;
  let spotter: ParsedTrace;
  let reportFile: string;
  let doc: ReportDocument;

  before(async () => {
    browser = await launchChromium();
    dir = mkdtempSync(join(tmpdir(), 'report-'));
    spotter = await parseFile(SPOTTER);
    const hostile = await parseText(hostileTrace(), 'hostile.jsonl');
    // The what-if the panel would hand over: 8 copies of the main session, and a sweep over N.
    const main = spotter.model.sessions[0]!;
    const { workload } = workloadFromSession(main);
    const replicas = { replicas: 8, staggerS: 10, staggerMode: 'fixed' as const, seed: 1, toolWaitScale: 1 };
    const scenario = runScenario(runFast, workload, { params: DEFAULT_PARAMS, replicas });
    const alone = runScenario(runFast, workload, { params: DEFAULT_PARAMS, replicas: { ...replicas, replicas: 1 } });
    const sweep = runSweep(runFast, workload, { params: DEFAULT_PARAMS, replicas }, 'replicas', [1, 2, 4, 8]);
    const point = (r: typeof scenario): object => ({ ...r, calls: undefined, sessions: undefined });
    const whatIf = parseWhatIfDocument(
      JSON.parse(
        JSON.stringify({
          command: 'agent-trace simulate … --replicas 8',
          sentence: '8 sessions like this on one H100 with Qwen3-32B.',
          input: {
            file: SPOTTER,
            session: main.id,
            workloadKind: 'sessions',
            notes: [],
            gpu: 'h100',
            model: 'qwen3-32b',
            replicas,
            params: DEFAULT_PARAMS,
          },
          scenario,
          alone: point(alone),
          callIndexes: main.calls.flatMap((c, i) => (c.tokens.input !== null && c.tokens.output !== null ? [i] : [])),
          policies: [{ policy: 'vllm-lru', result: point(scenario) }],
          sweep: {
            axis: 'replicas',
            points: sweep.points.map((p) => ({ value: p.value, result: point(p.result) })),
            lines: {},
            cliff: sweep.cliff,
            skipped: [],
            stoppedBy: null,
          },
        }),
      ),
    );
    doc = {
      schema: 1,
      title: 'Report test',
      generatedAt: '2026-11-30T00:00:00.000Z',
      generator: 'agent-trace test',
      traces: [
        buildReportTrace(spotter, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl', { whatIf }),
        buildReportTrace(hostile, `${HOSTILE}.jsonl`),
      ],
      redaction: null,
    };
    reportFile = join(dir, 'report.html');
    writeFileSync(reportFile, reportHtml(await redactReport(doc, createRedactor()), await readReportAssets(repoRoot)));
  });
  after(async () => {
    await browser?.close();
  });

  it('opens offline: no request, no console error, no CSP violation; the timeline and the what-if charts are drawn', async () => {
    const r = await openReport(browser, reportFile);
    await r.page.waitForSelector('body[data-ready="true"]');
    await r.page.waitForSelector('.chart-wrap[data-bar-count="149"]');
    assert.ok((await painted(r.page, '.chart-wrap')) > 20_000, 'the timeline is painted');
    assert.ok(
      (await painted(r.page, '.report-whatif .whatif-bars-chart')) > 5_000,
      'the per-call what-if bars are painted',
    );
    assert.ok((await painted(r.page, '.report-whatif .whatif-cliff-chart')) > 5_000, 'the cliff chart is painted');
    assert.equal(await r.page.getAttribute('.report-whatif .whatif-cliff-chart', 'data-points'), '1,2,4,8');
    await r.page.screenshot({ path: join(results, 'report-full.png'), fullPage: true });
    clean(r, reportFile);
    await r.page.context().close();
  });

  it("shows the inspector's figures: every summary and what-if figure equal to the inspector page's, and the reference totals", async () => {
    const r = await openReport(browser, reportFile);
    await r.page.waitForSelector('.chart-wrap[data-bar-count="149"]');
    const report = await figures(r.page, '#app');
    // The inspector as VS Code shows it: its page asking the trace worker's service (the report's page asks the embedded view instead).
    const inspector = await suite.open({ trace: spotter, fileName: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl' });
    const live = await figures(inspector.page, '#app');
    assert.ok(Object.keys(live).length >= 10);
    assert.deepEqual(report, live);
    // The independent reference (test/reference/claude_code_totals.py).
    assert.equal(report['llmCalls'], '149');
    assert.equal(report['input'], '11,746,257');
    assert.equal(report['cached'], '11,560,832');
    assert.equal(report['cacheHitRate'], '98.4%');
    // The what-if figures are the scenario's, formatted by the panel's own code.
    const whatIf = await figures(r.page, '.report-whatif');
    assert.equal(whatIf['whatIfHitRate'], `${(doc.traces[0]!.whatIf!.scenario.admissionHitRate! * 100).toFixed(1)}%`);
    clean(r, reportFile);
    await r.page.context().close();
  });

  it('hovers, zooms and selects: a tooltip for the call under the pointer, + and − zoom, details from the embedded data', async () => {
    const r = await openReport(browser, reportFile);
    await r.page.waitForSelector('.chart-wrap[data-bar-count="149"]');
    await r.page.locator('.chart-wrap').scrollIntoViewIfNeeded();
    await r.page.waitForSelector('.chart-wrap[data-plot-area]');
    const box = (await r.page.locator('.chart-wrap canvas').boundingBox())!;
    const [left, top, right, bottom] = (await r.page.getAttribute('.chart-wrap', 'data-plot-area'))!
      .split(',')
      .map(Number) as [number, number, number, number];
    // Hover the 100th call.
    await r.page.mouse.move(box.x + left + ((99 + 0.5) * (right - left)) / 149, box.y + top + (bottom - top) * 0.9);
    await r.page.waitForSelector('.chart-wrap[data-tooltip-call="99"]');
    // Zoom in from the keyboard around the selected call (the timeline's own painter), then fit all again.
    const view = async (): Promise<[number, number]> =>
      (await r.page.getAttribute('.chart-wrap', 'data-view'))!.split(',').map(Number) as [number, number];
    await r.page.focus('.chart-wrap');
    await r.page.keyboard.press('End');
    await r.page.keyboard.press('+');
    await r.page.waitForFunction(
      () => document.querySelector('.chart-wrap')?.getAttribute('data-view') !== '0.000,149.000',
    );
    const [lo, hi] = await view();
    assert.ok(
      hi - lo < 149 && lo <= 148.5 && hi >= 148.5,
      `zoomed to ${lo}–${hi}, the last call (centred on 148.5) in view`,
    );
    await r.page.keyboard.press('0');
    await r.page.waitForFunction(
      () => document.querySelector('.chart-wrap')?.getAttribute('data-view') === '0.000,149.000',
    );
    // The selected call's details come from the report itself.
    await r.page.waitForSelector('.details [data-tool-id], .details .tool-list, .details li');
    clean(r, reportFile);
    await r.page.context().close();
  });

  it('shows hostile trace text as text: no script, no element from it, the characters intact', async () => {
    const r = await openReport(browser, reportFile);
    await r.page.waitForSelector('body[data-ready="true"]');
    await r.page.selectOption('#report-trace', '1');
    await r.page.waitForSelector('.chart-wrap[data-bar-count="1"]');
    await r.page.focus('.chart-wrap');
    await r.page.keyboard.press('Home');
    await r.page.waitForFunction(
      (t) => document.querySelector('.details')?.textContent?.includes(t) ?? false,
      HOSTILE.slice(0, 40),
    );
    assert.equal(await r.page.locator('img').count(), 0, 'no <img> from the trace');
    assert.equal(await r.page.locator('script').count(), 2, 'only the data block and the page script');
    assert.ok(((await r.page.textContent('.file-name')) ?? '').includes('</script><script>alert(1)</script>'));
    assert.ok(((await r.page.textContent('.report-overview')) ?? '').includes('<img src=x onerror=alert(2)>'));
    await r.page.screenshot({ path: join(results, 'report-hostile.png') });
    clean(r, reportFile);
    await r.page.context().close();
  });

  it('refuses to run code that is not exactly the hashed script (a control: one byte changed)', async () => {
    const tampered = join(dir, 'tampered.html');
    const html = readFileSync(reportFile, 'utf8');
    const at = html.lastIndexOf('<script>') + '<script>'.length;
    writeFileSync(tampered, html.slice(0, at) + ';' + html.slice(at));
    const r = await openReport(browser, tampered);
    await r.page.waitForTimeout(500);
    assert.equal(await r.page.getAttribute('body', 'data-ready'), null, 'the page script was blocked');
    assert.ok(
      r.consoleErrors.some((e) => /CSP violation: script-src/.test(e)),
      'the browser reports the blocked script',
    );
    await r.page.context().close();
  });

  it('escapes the data block: trace text cannot end the element, and the file holds the CSP and no external reference', () => {
    const html = readFileSync(reportFile, 'utf8');
    const data = html.slice(
      html.indexOf('<script type="application/json"'),
      html.indexOf('</script>', html.indexOf('<script type="application/json"')),
    );
    assert.ok(!/<\/?script/i.test(data.slice(data.indexOf('>') + 1)));
    assert.ok(data.includes('\\u003c/script\\u003e\\u003cscript\\u003ealert(1)'));
    assert.match(
      html,
      /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;|<meta http-equiv="Content-Security-Policy" content="default-src 'none'/,
    );
    assert.ok(!/\b(?:src|href)\s*=\s*["']?(?:https?:|\/\/)/i.test(html.replace(data, '')), 'no external src or href');
  });
});
