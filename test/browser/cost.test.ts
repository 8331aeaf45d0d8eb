import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createPriceBook } from '../../src/core/cost/priceBook';
import { TraceService } from '../../src/core/view/traceService';
import { fixtures, parseFile, SPOTTER } from '../support/helpers';
import { assertClean, barPoint, inspectorSuite, plotArea, results } from '../support/inspectorHarness';
import type { InspectorPage, OpenOptions } from '../support/inspectorHarness';

// Cost in the inspector, in real Chromium. The expected dollars are the hand-worked ones of
// test/unit/core/cost/handWorkedPricing.test.ts (the seven-call priced session: $0.32811775,
// one call without a price) and handWorkedTtl.test.ts (the gapped timeline: $0.069025 as
// logged, $0.0632 with 1-hour caching, 3 calls re-writing after gaps over 5 minutes).

const PRICED = join(fixtures, 'canonical/priced-session.trace.jsonl');
const TIMELINE = join(fixtures, 'canonical/ttl-timeline.trace.jsonl');

/** The page of a trace served as the trace worker serves it, with the library's prices (or none). */
async function view(path: string, priced = true): Promise<Pick<OpenOptions, 'trace' | 'fileName' | 'prices'>> {
  return { trace: await parseFile(path), fileName: path.split('/').pop()!, prices: priced ? createPriceBook() : null };
}

/** Switches the bars to dollars. */
async function costView(p: InspectorPage): Promise<void> {
  await p.page.click('#bar-view-picker');
  await p.page.locator('#bar-view-picker li.option', { hasText: 'Cost ($)' }).click();
  await p.page.waitForSelector('.chart-wrap[data-bar-view="cost"]');
}

/**
 * How much of the stub's box above the axis under call `index` is one colour: 1 when
 * nothing is drawn there (an unpriced call without a mark is an empty gap), well under 1
 * when the hatched "?" stub is.
 */
async function stubUniformity(p: InspectorPage, index: number): Promise<number> {
  const a = await plotArea(p);
  const x = a.left + ((index + 0.5) * (a.right - a.left)) / a.count;
  return p.page.$eval(
    '.chart-wrap canvas',
    (canvas, { x, bottom }) => {
      const c = canvas as HTMLCanvasElement;
      const scale = c.width / c.clientWidth;
      const data = c
        .getContext('2d')!
        .getImageData(
          Math.round((x - 3) * scale),
          Math.round((bottom - 12) * scale),
          Math.round(6 * scale),
          Math.round(9 * scale),
        ).data;
      const counts = new Map<string, number>();
      for (let i = 0; i < data.length; i += 4) {
        const key = `${data[i]},${data[i + 1]},${data[i + 2]}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return Math.max(...counts.values()) / (data.length / 4);
    },
    { x, bottom: a.bottom },
  );
}

async function tooltipOf(p: InspectorPage, index: number): Promise<string> {
  const at = await barPoint(p, index, { down: 0.95 });
  await p.page.mouse.move(at.x, at.y);
  await p.page.waitForSelector(`.chart-wrap[data-tooltip-call="${index}"]`);
  return (await p.page.getAttribute('.chart-wrap', 'data-tooltip'))!.replace(/\s+/g, ' ');
}

describe('cost in the inspector (Chromium)', () => {
  const suite = inspectorSuite(['dist/webview.js', 'dist/webview.css']);

  it('the summary gives the total, each kind and each model; the unknown model stays unknown', async () => {
    const p = await suite.open(await view(PRICED));
    assert.equal(await p.figure('costTotal'), '$0.328 + 1 unpriced');
    assert.equal(await p.figure('costCacheRead'), '$0.056');
    assert.equal(await p.figure('costCacheWrite5m'), '$0.117');
    assert.equal(await p.figure('costCacheWrite1h'), '$0.138');
    assert.equal(await p.figure('costOutput'), '$0.017');
    assert.equal(await p.figure('costModel0'), '$0.278');
    const glm = p.page.locator('.figure', { has: p.page.locator('dt', { hasText: 'glm-4.6' }) });
    assert.equal((await glm.locator('dd').textContent())?.trim(), 'unknown');
    // The diagnostic naming the model is listed with the file's others.
    assert.match(
      (await p.page.textContent('.diagnostics')) ?? '',
      /Cost unknown for 1 call: no price for model "glm-4\.6"/,
    );
    await assertClean(p);
  });

  it('the tooltip says what the call cost; the cost view draws dollars and says so', async () => {
    const p = await suite.open(await view(PRICED));
    // Call 1: 3×5 + 17,842×0.5 + 8,165×6.25 + 209×25 µ$ = $0.065 (uncached $0.000015, read $0.0089, write $0.051, output $0.0052).
    assert.match(
      await tooltipOf(p, 0),
      /Cost: \$0\.065 \(uncached \$0\.000015, read \$0\.0089, write 5 min \$0\.051, output \$0\.0052\)/,
    );
    assert.match(await tooltipOf(p, 5), /Cost: unknown \(no price for model "glm-4\.6"\)/);
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-bar-view'), 'tokens');
    await p.page.click('#bar-view-picker');
    await p.page.locator('#bar-view-picker li.option', { hasText: 'Cost ($)' }).click();
    await p.page.waitForSelector('.chart-wrap[data-bar-view="cost"]');
    assert.equal(await p.page.getAttribute('.legend', 'data-bar-view'), 'cost');
    // The glm-4.6 call (call 6) has no price: the one call marked unknown, not drawn as $0.
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-unpriced-calls'), '1');
    assert.match(
      (await p.page.textContent('.legend')) ?? '',
      /cache read \$.*appended \$ \(writes \+ uncached\).*output \$/,
    );
    assert.equal(((await p.state()) as { barView?: string }).barView, 'cost');
    await p.page.locator('.timeline').screenshot({ path: join(results, 'cost-bars.png') });
    await assertClean(p);
  });

  it('the cost view marks the call without a price with a hatched "?" on the axis, says whose model in its tooltip, and counts it', async () => {
    const p = await suite.open(await view(PRICED));
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-unpriced-glyphs'), '0');
    await costView(p);
    // Call 6 (glm-4.6, see the fixture's README) is the one without a price; the six others are priced.
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-unpriced-calls'), '1');
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-unpriced-glyphs'), '1');
    assert.ok((await stubUniformity(p, 5)) < 0.8, 'the stub is drawn under call 6');
    assert.match(await tooltipOf(p, 5), /Cost: unknown \(no price for model "glm-4\.6"\)/);
    // The legend explains the mark, in the cost view only; the summary counts the call apart from the dollars.
    assert.equal(await p.page.isVisible('[data-legend="unpriced"]'), true);
    assert.match((await p.page.textContent('[data-legend="unpriced"]')) ?? '', /no price/);
    assert.equal(await p.figure('costTotal'), '$0.328 + 1 unpriced');
    await p.page.locator('.timeline').screenshot({ path: join(results, 'cost-unpriced.png') });
    await assertClean(p);
  });

  it('a real OpenHands run on a model the price list lacks: every call marked, none drawn as $0', async () => {
    const path = join(fixtures, 'openhands/multi_swe_bench-output.head2.jsonl');
    // The run's model, as its raw records name it: the price library has no price for it.
    assert.match(readFileSync(path, 'utf8'), /"model":"meta-llama\/llama-4-maverick"/);
    const p = await suite.open(await view(path));
    const calls = Number((await p.figure('llmCalls')).replace(/,/g, ''));
    assert.ok(calls > 1);
    assert.match(await p.figure('costTotal'), new RegExp(` \\+ ${calls} unpriced$`));
    await costView(p);
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-unpriced-calls'), String(calls));
    assert.ok(Number(await p.page.getAttribute('.chart-wrap', 'data-unpriced-glyphs')) >= 1);
    assert.ok((await stubUniformity(p, 0)) < 0.8, 'the first call has its stub');
    assert.match((await p.page.textContent('.diagnostics')) ?? '', /no price for model "meta-llama\/llama-4-maverick"/);
    await assertClean(p);
  });

  it('without prices the cost view is not offered', async () => {
    const p = await suite.open(await view(PRICED, false));
    assert.equal(await p.page.isVisible('.bar-view-control'), false);
    assert.equal(await p.page.locator('[data-figure="costTotal"]').count(), 0);
    await assertClean(p);
  });

  it('the TTL what-if: the sentence, 5 minutes as logged, 1 hour, and a TTL the user types', async () => {
    const p = await suite.open(await view(TIMELINE));
    assert.equal(
      (await p.page.textContent('[data-ttl-sentence]'))?.trim(),
      'With 1-hour caching this session would have cost $0.063 (−8%); 3 calls re-wrote the cache after a gap longer than 5 min.',
    );
    const cells = async (key: string) =>
      p.page.$$eval(`[data-ttl-row="${key}"] td`, (tds) => tds.map((td) => (td.textContent ?? '').trim()));
    const five = await cells('5m');
    assert.deepEqual([five[1], five[2]], ['$0.069', 'as logged']);
    assert.match(five[3]!, /^3 calls: 345$/);
    const hour = await cells('1h');
    assert.deepEqual([hour[1], hour[2]], ['$0.063', '−8%']);
    // The default extra TTL, 30 minutes at the 1-hour price: the 40- and 90-minute gaps still
    // expire. 20,500 + 3,500 + 3,600 + (13,000×2 + 500) + 28,500 + 3,400 = 86,000 µ$, +25%.
    // The typed TTL's row is the worker's answer (cost/customTtl): it comes a moment after the others.
    await p.page.waitForSelector('[data-ttl-row="custom"]');
    const thirty = await cells('custom');
    assert.deepEqual([thirty[1], thirty[2]], ['$0.086', '+25%']);
    // 90 seconds: call 2's 2-minute gap now outlasts it too: $0.080525, +17%, four calls.
    await p.page.fill('#cost-ttl-minutes input', '1.5');
    await p.page.waitForFunction(() =>
      document.querySelector('[data-ttl-row="custom"] th')?.textContent?.startsWith('1 min 30 s'),
    );
    const custom = await cells('custom');
    assert.deepEqual([custom[0], custom[1], custom[2]], ['5-minute write price', '$0.081', '+17%']);
    assert.match(custom[3]!, /^4 calls: 2345$/);
    assert.deepEqual(((await p.state()) as { costTtl?: unknown }).costTtl, { minutes: 1.5, writeMultiple: null });
    // A value the replay cannot use is refused at the field; the last row stays.
    await p.page.fill('#cost-ttl-minutes input', 'abc');
    await p.page.waitForSelector('[data-field-error="ttl"]:not([hidden])');
    assert.equal((await p.page.textContent('[data-field-error="ttl"]'))?.trim(), 'Type a number of minutes.');
    assert.deepEqual((await cells('custom')).slice(1, 3), ['$0.081', '+17%']);
    // An expired call's number selects it on the timeline.
    await p.page.locator('[data-ttl-row="5m"] button[data-call="3"]').click();
    await p.page.waitForSelector('.chart-wrap[data-selected-call="3"]');
    await p.page.locator('.cost.panel').screenshot({ path: join(results, 'cost-ttl.png') });
    await assertClean(p);
  });

  it('beside TraceLab’s figures, computed their way', async () => {
    const p = await suite.open(await view(TIMELINE));
    const row = await p.page.$$eval('[data-ideal-row="1 min"] td', (tds) =>
      tds.map((td) => (td.textContent ?? '').trim()),
    );
    // 14,100 / 64,500 = 21.9% against their 85.4%; (4,000 + 46,400) / 4,000 = 12.6× against 18.9×.
    assert.deepEqual(row, ['21.9%', '85.4%', '12.6×', '18.9×']);
    const five = await p.page.$$eval('[data-ideal-row="5 min"] td', (tds) =>
      tds.map((td) => (td.textContent ?? '').trim()),
    );
    assert.deepEqual(five, ['37.5%', '≈94.0%', '10.1×', '7.4×']);
    assert.match(
      (await p.page.textContent('[data-ideal-summary]')) ?? '',
      /served 37\.2% of its prompts \(93\.8% with no TTL\).*10\.1× the genuinely new tokens.*2 min idle TTL/,
    );
    await assertClean(p);
  });

  it('on a real session: the M-Claude log at its logged cost, and what 1-hour caching would have changed (the picture in the cost guide)', async () => {
    const p = await suite.open(await view(join(fixtures, 'claude-code/edit-retry-loop.jsonl')));
    // $3.36867825 by test/reference/cost_reference.mjs, the independent second pricing program.
    const five = await p.page.$$eval('[data-ttl-row="5m"] td', (tds) => tds.map((td) => (td.textContent ?? '').trim()));
    assert.deepEqual([five[1], five[2]], ['$3.37', 'as logged']);
    // Its cache writes are all 5-minute writes, so the other provider TTL is the hour.
    assert.match(
      (await p.page.textContent('[data-ttl-sentence]')) ?? '',
      /^With 1-hour caching this session would have cost \$\d\.\d\d \(−\d+%\)/,
    );
    await p.page.locator('.cost.panel').screenshot({ path: join(results, 'cost-real-session.png') });
    await assertClean(p);
  });

  it('the retry-loop table prices its loops', async () => {
    const options = await view(SPOTTER);
    const service = new TraceService(options.trace, {
      fileName: options.fileName,
      formatChosen: false,
      analysis: {},
      prices: options.prices ?? null,
    });
    const loop = service.sessionBody({ sessionId: service.header().defaultSessionId! })!.analysis.loops[0]!;
    const p = await suite.open({ ...options, service });
    // The main thread with its Task sub-agent and compaction agent: $2.9056013 by test/reference/cost_reference.mjs.
    assert.equal(await p.figure('costWholeTrace'), '$2.91');
    const wasted = (await p.page.textContent('[data-loop="0"] [data-col="wastedUsd"]'))?.trim();
    assert.match(wasted!, /^\$0\.0\d\d$/);
    assert.ok(loop.wastedUsd! > 0 && loop.carriedForwardUsd! > 0);
    assert.match((await p.page.textContent('[data-loop="0"] [data-col="carriedForwardUsd"]'))!.trim(), /^\$0\.0\d\d$/);
    await assertClean(p);
  });
});
