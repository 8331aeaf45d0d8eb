import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ClaudeCodeContentCollector } from '../../src/core/context/claudeCodeContent';
import { CHAR_ESTIMATE } from '../../src/core/context/tokenCounter';
import { O200K } from '../../src/node/contextTokenizer';
import { createPriceBook } from '../../src/core/cost/priceBook';
import { TraceService } from '../../src/core/view/traceService';
import { fixtures, parseFile, parseText, repoRoot, SPOTTER } from '../support/helpers';
import { assertClean, inspectorSuite, launchChromium, results } from '../support/inspectorHarness';
import { buildReportTrace } from '../../src/core/share/reportDocument';
import type { ReportDocument } from '../../src/core/share/reportDocument';
import { readReportAssets, redactReport, reportHtml } from '../../src/node/htmlReport';
import { createRedactor } from '../../src/node/secretlintDetector';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { InspectorPage } from '../support/inspectorHarness';

// The context panel in real Chromium, on the hand-worked Claude Code excerpt
// (test/fixtures/claude-code/context-excerpt.jsonl: six calls of a real session around a
// /compact, the fifth made to miss the cache). The service counts text as ceil(length / 4)
// (CHAR_ESTIMATE), so the expected stacks are those of the independent Python program
// test/reference/context_anatomy.py, which reads the raw log on its own; call 1 is checked by
// hand as well: its logged input 3 + 17,842 + 8,165 = 26,010 is the unlogged base plus the
// typed prompt, and nothing else.

const EXCERPT = join(fixtures, 'claude-code/context-excerpt.jsonl');

interface Reference {
  calls: Array<{ loggedInput: number; byKind: Record<string, number> }>;
}

function python(): Reference | null {
  try {
    return JSON.parse(
      execFileSync('python3', [join(repoRoot, 'test/reference/context_anatomy.py'), EXCERPT], { encoding: 'utf8' }),
    ) as Reference;
  } catch {
    return null;
  }
}

/** The excerpt served as the trace worker serves it once it collected the log's text (a character count instead of the tokenizer). */
async function excerptService(): Promise<TraceService> {
  const collector = new ClaudeCodeContentCollector();
  const trace = await parseFile(EXCERPT, { recordTap: (r) => collector.record(r) });
  return new TraceService(trace, {
    fileName: 'context-excerpt.jsonl',
    formatChosen: false,
    analysis: {},
    prices: createPriceBook(),
    context: { content: collector.result(), tokenizer: () => CHAR_ESTIMATE, notes: [] },
  });
}

/** The drawn stacks: for each bar, each kind's segment height in tokens (from its pixels and the y axis), and whether the segments touch. */
async function drawnStacks(p: InspectorPage): Promise<Array<Record<string, number>>> {
  await p.page.waitForSelector('#context-chart[data-stacks]');
  const [px0, pxTop, top] = ((await p.page.getAttribute('#context-chart', 'data-y-scale')) ?? '')
    .split(',')
    .map(Number) as [number, number, number];
  const perPixel = top / (px0 - pxTop);
  const stacks = ((await p.page.getAttribute('#context-chart', 'data-stacks')) ?? '').split('|');
  return stacks.map((bar) => {
    const out: Record<string, number> = {};
    // chart.js lifts the lowest bar off the zero line by half its grid line (so the axis stays visible).
    let below = px0;
    let slack = 1;
    for (const segment of bar.split(' ')) {
      const [kind, y, base] = segment.split(':') as [string, string, string];
      // Stacked: each segment starts where the one under it ends.
      assert.ok(Math.abs(Number(base) - below) <= slack, `${kind} sits on the segment below it (${base} vs ${below})`);
      slack = 0.01;
      below = Number(y);
      out[kind] = (Number(base) - Number(y)) * perPixel;
    }
    return out;
  });
}

describe('the context panel (Chromium)', () => {
  const suite = inspectorSuite(['dist/webview.js', 'dist/webview.css']);

  it('stacks each call of a real session by source, the heights the independent count gives', async (t) => {
    const reference = python();
    if (!reference) {
      t.skip('python3 is not available: the reference counts cannot be made');
      return;
    }
    const service = await excerptService();
    const p = await suite.open({
      trace: service.parsed,
      service,
      fileName: 'context-excerpt.jsonl',
      viewport: { width: 1400, height: 1100 },
    });
    const stacks = await drawnStacks(p);
    assert.equal(stacks.length, 6, 'one bar per call');
    assert.equal(await p.page.getAttribute('#context-chart', 'data-binned'), 'false');
    // Tolerance: a pixel of the y axis in tokens (the axis tops out near 50k over ~200 px).
    const [px0, pxTop, top] = ((await p.page.getAttribute('#context-chart', 'data-y-scale')) ?? '')
      .split(',')
      .map(Number) as [number, number, number];
    const pixel = top / (px0 - pxTop);
    reference.calls.forEach((call, i) => {
      const drawn = stacks[i]!;
      assert.deepEqual(
        Object.keys(drawn).sort(),
        Object.keys(call.byKind)
          .filter((k) => call.byKind[k]! > 0)
          .sort(),
        `call ${i + 1}'s kinds`,
      );
      for (const [kind, tokens] of Object.entries(call.byKind))
        assert.ok(
          Math.abs(drawn[kind]! - tokens) < pixel,
          `call ${i + 1} ${kind}: drawn ${drawn[kind]}, counted ${tokens}`,
        );
    });
    // By hand: call 1 is the base and the typed prompt, 26,010 tokens together; call 4 (after the /compact) holds no tool result.
    const first = stacks[0]!;
    assert.deepEqual(Object.keys(first).sort(), ['system', 'userText']);
    assert.ok(Math.abs(first['system']! + first['userText']! - 26_010) < pixel);
    assert.equal(stacks[3]!['toolResult'], undefined);
    // The estimates are said: the base and what the compaction restored.
    assert.match(
      (await p.page.textContent('.context-estimates')) ?? '',
      /Estimated, not counted from logged text: system prompt and tools, restored after compaction/,
    );
    assert.match((await p.page.textContent('.context-legend')) ?? '', /system prompt and tools \(est\.\)/);
    await assertClean(p);
  });

  it('shares the timeline’s selection and window, and shows the selected call’s anatomy', async (t) => {
    const reference = python();
    if (!reference) {
      t.skip('python3 is not available: the reference counts cannot be made');
      return;
    }
    const service = await excerptService();
    const p = await suite.open({
      trace: service.parsed,
      service,
      fileName: 'context-excerpt.jsonl',
      viewport: { width: 1400, height: 1100 },
    });
    await p.page.waitForSelector('#context-chart[data-stacks]');
    // Click call 5's bar: the page selects it (the timeline's selection), its anatomy shows beside the details.
    const area = ((await p.page.getAttribute('#context-chart', 'data-plot-area')) ?? '').split(',').map(Number) as [
      number,
      number,
      number,
      number,
    ];
    const box = (await p.page.locator('#context-chart canvas').boundingBox())!;
    const x = box.x + area[0] + ((4 + 0.5) * (area[2] - area[0])) / 6;
    await p.page.mouse.click(x, box.y + area[3] - 10);
    await p.page.waitForSelector('#context-chart[data-selected="4"]');
    assert.equal(((await p.state()) as { callIndex?: number }).callIndex, 4, 'the page’s selection is call 5');
    const rows = await p.page.$$eval('.context-call-table tbody tr', (trs) =>
      trs.map((tr) => [(tr as HTMLElement).dataset['kind'], Number((tr as HTMLElement).dataset['tokens'])]),
    );
    assert.deepEqual(Object.fromEntries(rows), reference.calls[4]!.byKind);
    // Call 5 logged 46,012 tokens of input; the parts, counted, come to 45,939 (the reference's sum).
    assert.match(
      (await p.page.textContent('[data-context-figure="call-total"]')) ?? '',
      /parts 45,939 tokens · logged input 46,012 \(−0\.2%\)/,
    );
    // The contributors name the base as an estimate, and the suggestions say how their figure was made.
    assert.match(
      (await p.page.textContent('.context-contributors-table')) ?? '',
      /system prompt and tool definitions \(not logged\) \(estimated\)/,
    );
    await p.page.locator('.context-composition').screenshot({ path: join(results, 'context-composition.png') });
    await p.page.locator('.lower').screenshot({ path: join(results, 'context-call-anatomy.png') });
    await p.page.locator('.context-contributors').screenshot({ path: join(results, 'context-contributors.png') });
    await assertClean(p);
  });

  it('on a long session, asks for the anatomy only once the panel is scrolled into view', async () => {
    // Seven copies of the spotter session, each with its own message ids: one session of
    // 7 × 149 = 1,043 calls, past LAZY_CONTEXT_CALLS (1,000).
    const source = readFileSync(SPOTTER, 'utf8');
    const text = Array.from({ length: 7 }, (_, i) => source.replaceAll('"id":"msg_', `"id":"msg_${i}_`)).join('');
    const collector = new ClaudeCodeContentCollector();
    const trace = await parseText(text, 'spotter-x7.jsonl', { recordTap: (r) => collector.record(r) });
    const service = new TraceService(trace, {
      fileName: 'spotter-x7.jsonl',
      formatChosen: false,
      analysis: {},
      prices: createPriceBook(),
      context: { content: collector.result(), tokenizer: () => CHAR_ESTIMATE, notes: [] },
    });
    assert.equal(service.sessionBody({ sessionId: service.header().defaultSessionId! })!.columns.flags.length, 1043);
    // A short window: the composition sits below the timeline, out of view.
    const p = await suite.open({
      trace,
      service,
      fileName: 'spotter-x7.jsonl',
      viewport: { width: 1200, height: 260 },
    });
    await p.page.waitForSelector('.context-count-now:not([hidden])');
    assert.match((await p.page.textContent('.context-status')) ?? '', /counted when this section is in view/);
    const box = (await p.page.locator('.context-composition').boundingBox())!;
    assert.ok(box.y >= 260, `the composition starts below the window (${box.y})`);
    // Give a request every chance to go out: none does while the panel is out of view.
    await p.page.waitForTimeout(500);
    assert.equal(p.requests.get('sessionContext') ?? 0, 0);
    await p.page.locator('.context-composition h2').scrollIntoViewIfNeeded();
    await p.page.waitForSelector('#context-chart[data-calls]', { timeout: 60_000 });
    assert.equal(p.requests.get('sessionContext'), 1);
    await assertClean(p);
  });

  it('zooms and pans with the timeline, both ways, on the whole real session', async () => {
    const collector = new ClaudeCodeContentCollector();
    const trace = await parseFile(SPOTTER, { recordTap: (r) => collector.record(r) });
    // Counted with o200k_base, without the Claude stand-in's line-number rule: this test measures no count; it draws the README's screenshot.
    const service = new TraceService(trace, {
      fileName: 'spotter.jsonl',
      formatChosen: false,
      analysis: {},
      prices: createPriceBook(),
      context: { content: collector.result(), tokenizer: () => O200K, notes: [] },
    });
    const p = await suite.open({ trace, service, fileName: 'spotter.jsonl', viewport: { width: 1400, height: 1100 } });
    const calls = service.sessionBody({ sessionId: service.header().defaultSessionId! })!.columns.flags.length;
    await p.page.waitForSelector(`#context-chart[data-calls="0,${calls}"]`);
    await p.page.locator('.context-composition').screenshot({ path: join(results, 'context-composition-spotter.png') });
    const windowOf = async (): Promise<[number, number]> =>
      ((await p.page.getAttribute('.chart-wrap', 'data-window')) ?? '').split(',').map(Number) as [number, number];
    const chartCalls = async (): Promise<string> => (await p.page.getAttribute('#context-chart', 'data-calls')) ?? '';
    // The timeline zooms in (its + key): the composition shows the same calls.
    await p.page.focus('#timeline-chart');
    await p.page.keyboard.press('+');
    await p.page.waitForFunction(
      (all) => document.querySelector<HTMLElement>('#context-chart')?.dataset['calls'] !== all,
      `0,${calls}`,
    );
    let w = await windowOf();
    assert.ok(w[1] - w[0] < calls, 'the timeline zoomed in');
    assert.equal(await chartCalls(), `${Math.floor(w[0])},${Math.ceil(w[1])}`);
    // The wheel over the composition zooms in further: the timeline follows it.
    const box = (await p.page.locator('#context-chart canvas').boundingBox())!;
    await p.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const before = w[1] - w[0];
    await p.page.mouse.wheel(0, -400);
    await p.page.waitForFunction((span) => {
      const [lo, hi] = (document.querySelector<HTMLElement>('.chart-wrap')?.dataset['window'] ?? '0,0')
        .split(',')
        .map(Number);
      return hi! - lo! < span - 1;
    }, before);
    w = await windowOf();
    assert.equal(await chartCalls(), `${Math.floor(w[0])},${Math.ceil(w[1])}`);
    // A drag on the composition pans both to later calls.
    await p.page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2);
    await p.page.mouse.down();
    await p.page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2, { steps: 5 });
    await p.page.mouse.up();
    const panned = await windowOf();
    assert.ok(panned[0] > w[0], `panned right: ${w.join(',')} → ${panned.join(',')}`);
    assert.equal(await chartCalls(), `${Math.floor(panned[0])},${Math.ceil(panned[1])}`);
    await assertClean(p);
  });

  it('is in the HTML report: the same stacks from the embedded anatomy, its commands redacted as everywhere in the report', async (t) => {
    const reference = python();
    if (!reference) {
      t.skip('python3 is not available: the reference counts cannot be made');
      return;
    }
    // A GitHub token in a command: redaction must reach the context panel's labels too.
    const token = `ghp_${'A1b2C3d4E5'.repeat(3)}xYz789`;
    const base = { sessionId: 's1', timestamp: '2026-01-01T00:00:00.000Z' };
    const usage = (input: number): object => ({
      input_tokens: 10,
      cache_read_input_tokens: input - 10,
      cache_creation_input_tokens: 0,
      output_tokens: 5,
    });
    const secretLog = [
      { ...base, uuid: 'u0', parentUuid: null, type: 'user', message: { role: 'user', content: 'list the repos' } },
      {
        ...base,
        uuid: 'u1',
        parentUuid: 'u0',
        type: 'assistant',
        message: {
          id: 'm1',
          model: 'claude-sonnet-4-5',
          role: 'assistant',
          content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: `GH_TOKEN=${token} gh repo list` } }],
          usage: usage(1000),
        },
      },
      {
        ...base,
        uuid: 'u2',
        parentUuid: 'u1',
        type: 'user',
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'repo-a\nrepo-b' }] },
      },
      {
        ...base,
        uuid: 'u3',
        parentUuid: 'u2',
        type: 'assistant',
        message: {
          id: 'm2',
          model: 'claude-sonnet-4-5',
          role: 'assistant',
          content: [{ type: 'text', text: 'Two repos.' }],
          usage: usage(1100),
        },
      },
    ]
      .map((l) => JSON.stringify(l))
      .join('\n');
    const collector = new ClaudeCodeContentCollector();
    const excerpt = await parseFile(EXCERPT, { recordTap: (r) => collector.record(r) });
    const secretCollector = new ClaudeCodeContentCollector();
    const secret = await parseText(secretLog, 'secret.jsonl', { recordTap: (r) => secretCollector.record(r) });
    const prices = createPriceBook();
    const doc: ReportDocument = {
      schema: 1,
      title: 'Context report test',
      generatedAt: '2026-12-02T00:00:00.000Z',
      generator: 'agent-trace test',
      traces: [
        buildReportTrace(excerpt, 'context-excerpt.jsonl', {
          prices,
          context: { content: collector.result(), tokenizer: () => CHAR_ESTIMATE, notes: [] },
        }),
        buildReportTrace(secret, 'secret.jsonl', {
          prices,
          context: { content: secretCollector.result(), tokenizer: () => CHAR_ESTIMATE, notes: [] },
        }),
      ],
      redaction: null,
    };
    const dir = mkdtempSync(join(tmpdir(), 'context-report-'));
    const file = join(dir, 'report.html');
    writeFileSync(file, reportHtml(await redactReport(doc, createRedactor()), await readReportAssets(repoRoot)));
    const html = readFileSync(file, 'utf8');
    assert.ok(!html.includes(token), 'the token is nowhere in the report');
    const browser = await launchChromium();
    try {
      const page = await (
        await browser.newContext({ viewport: { width: 1400, height: 1100 }, deviceScaleFactor: 1 })
      ).newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      await page.goto(`file://${file}`);
      await page.waitForSelector('#context-chart[data-stacks]');
      const [px0, pxTop, top] = ((await page.getAttribute('#context-chart', 'data-y-scale')) ?? '')
        .split(',')
        .map(Number) as [number, number, number];
      const pixel = top / (px0 - pxTop);
      const bars = ((await page.getAttribute('#context-chart', 'data-stacks')) ?? '').split('|');
      assert.equal(bars.length, 6);
      // Call 6 stacked to its total by the independent count (all its kinds together).
      const heights = bars[5]!.split(' ').map((seg) => {
        const [, y, b] = seg.split(':');
        return Number(b) - Number(y);
      });
      const total = Object.values(reference.calls[5]!.byKind).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(heights.reduce((a, b) => a + b, 0) * pixel - total) < 2 * pixel, `call 6 stacks to ${total}`);
      // The second trace: its command is in the contributors, redacted.
      await page.selectOption('#report-trace', '1');
      await page.waitForSelector('#context-chart[data-calls="0,2"]');
      const contributors = (await page.textContent('.context-contributors-table')) ?? '';
      // The label is the command's first 59 characters: the redaction marker stands where the token was.
      assert.match(contributors, /output of GH_TOKEN=\[REDACTED:github#1\] gh repo l…/);
      // The command shows as code, not between literal backticks.
      assert.ok(
        (await page.locator('.context-contributors-table code').allTextContents()).includes(
          'GH_TOKEN=[REDACTED:github#1] gh repo l…',
        ),
      );
      assert.ok(!contributors.includes('`'));
      assert.ok(!contributors.includes(token));
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  });
});
