import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { ParsedTrace } from '../../src/core/trace/parseTrace';
import { createPriceBook } from '../../src/core/cost/priceBook';
import { listCompanions } from '../../src/node/traceFiles';
import { fixtures, parseFile, SPOTTER } from '../support/helpers';
import { assertClean, inspectorSuite, plotArea, results } from '../support/inspectorHarness';
import type { InspectorPage } from '../support/inspectorHarness';

// What broke in a new user's first minutes with the inspector page: the overview strip
// after a layout change, the page's state across a rebuild, the call's transcript.

/** The overview strip as drawn: its canvas's pixel width and CSS width, and the brush area's ends, in CSS pixels. */
async function overview(
  p: InspectorPage,
): Promise<{ pixels: number; css: number; area: [number, number]; plot: [number, number] }> {
  const area = (await p.page.getAttribute('.overview-wrap', 'data-brush-area'))!.split(',').map(Number) as [
    number,
    number,
  ];
  const { pixels, css, offset } = await p.page.evaluate(() => {
    const strip = document.querySelector('.overview') as HTMLCanvasElement;
    const chart = document.querySelector('.chart-wrap canvas') as HTMLCanvasElement;
    return {
      pixels: strip.width / (window.devicePixelRatio || 1),
      css: strip.clientWidth,
      offset: chart.getBoundingClientRect().left - strip.getBoundingClientRect().left,
    };
  });
  const a = await plotArea(p);
  return { pixels, css, area, plot: [Math.round(offset + a.left), Math.round(offset + a.right)] };
}

/** Waits until the overview strip is drawn at its own width and lines up with the plot (or says how it stands). */
async function stripFollows(p: InspectorPage, what: string): Promise<void> {
  let last: Awaited<ReturnType<typeof overview>> | null = null;
  for (let i = 0; i < 40; i++) {
    last = await overview(p);
    if (
      Math.abs(last.pixels - last.css) <= 1 &&
      Math.abs(last.area[0] - last.plot[0]) <= 1 &&
      Math.abs(last.area[1] - last.plot[1]) <= 1
    )
      return;
    await p.page.waitForTimeout(50);
  }
  assert.fail(
    `${what}: the overview strip is ${last!.pixels} px drawn for ${last!.css} px shown, its brush area ${last!.area.join('–')} against the plot's ${last!.plot.join('–')}`,
  );
}

describe("the inspector page in a new user's first minutes", () => {
  const suite = inspectorSuite(['dist/webview.js']);
  let parsed: ParsedTrace;

  before(async () => {
    parsed = await parseFile(SPOTTER);
  });

  it('the overview strip follows every layout change: a narrower editor, a wider one, a split beside it', async () => {
    const p = await suite.open({ trace: parsed, fileName: 'spotter.jsonl', viewport: { width: 1400, height: 900 } });
    await p.page.waitForSelector('.chart-wrap[data-plot-area]');
    await stripFollows(p, 'at 1400 px');
    // The editor narrows (a split, the sidebar opened): the page's width changes, nothing else.
    await p.page.setViewportSize({ width: 760, height: 900 });
    await stripFollows(p, 'narrowed to 760 px');
    await p.page.setViewportSize({ width: 1200, height: 900 });
    await stripFollows(p, 'widened to 1200 px');
    // Only the plot's box changes (the page keeps its width): a panel beside it takes room.
    await p.page.evaluate(() => {
      (document.querySelector('.timeline') as HTMLElement).style.marginRight = '300px';
    });
    await stripFollows(p, 'the timeline narrowed by 300 px in a page of the same width');
    await p.page.screenshot({ path: join(results, 'first-minutes-overview-narrowed.png') });
    await assertClean(p);
  });

  it('the cost view has no "context size" axis (its line is tokens, not drawn there); the tokens view keeps it', async () => {
    const priced = join(fixtures, 'canonical/priced-session.trace.jsonl');
    const p = await suite.open({
      trace: await parseFile(priced),
      fileName: 'priced-session.trace.jsonl',
      prices: createPriceBook(),
    });
    await p.page.waitForSelector('.chart-wrap[data-context-axis="shown"]');
    await p.page.click('#bar-view-picker');
    await p.page.locator('#bar-view-picker li.option', { hasText: 'Cost ($)' }).click();
    await p.page.waitForSelector('.chart-wrap[data-bar-view="cost"][data-context-axis="hidden"]');
    // The plot takes the room the axis had: its right edge moves right.
    const costRight = (await plotArea(p)).right;
    await p.page.click('#bar-view-picker');
    await p.page.locator('#bar-view-picker li.option', { hasText: 'Tokens' }).click();
    await p.page.waitForSelector('.chart-wrap[data-bar-view="tokens"][data-context-axis="shown"]');
    assert.ok((await plotArea(p)).right < costRight, 'the tokens view gives room back to its context axis');
    await assertClean(p);
  });

  it("a call's transcript in its details: read on demand, text only, clipped with Show more", async () => {
    const listing = await listCompanions(SPOTTER);
    const files = [
      { key: 'spotter.jsonl', path: SPOTTER },
      ...listing.files.map((c) => ({ key: c.rel, path: c.path })),
    ];
    const p = await suite.open({ trace: parsed, fileName: 'spotter.jsonl', files });
    await p.page.waitForSelector('.chart-wrap[data-plot-area]');
    await p.page.focus('.chart-wrap');
    await p.page.keyboard.press('Home');
    await p.page.waitForSelector('.details [data-transcript="closed"]');
    assert.equal(p.requests.get('callTranscript') ?? 0, 0, 'nothing read before it is asked for');
    await p.page.click('.details [data-action="toggle-transcript"]');
    await p.page.waitForSelector('.details [data-transcript="loaded"] .transcript-entry');
    // Call 1 of the spotter log (test/reference/claude_transcript.py): the typed prompt, two Bash calls, their two results.
    const kinds = await p.page.$$eval('.transcript-entry', (els) =>
      els.map((e) => (e as HTMLElement).dataset['entry']),
    );
    assert.deepEqual(kinds, ['prompt', 'thinking', 'tool-call', 'tool-call', 'tool-result', 'tool-result']);
    assert.match(
      (await p.page.textContent('.entry-prompt .entry-text')) ?? '',
      /^Work on bead spotter-4te\. Run bd show spotter-4te/,
    );
    // The first result (the description) is longer than 2,000 characters: clipped, with Show more.
    const more = p.page.locator('[data-action="transcript-more"]').first();
    assert.match((await more.textContent()) ?? '', /^Show more \(2,000 of [\d,]+ characters shown\)$/);
    const before = ((await p.page.locator('.entry-tool-result .entry-text').first().textContent()) ?? '').length;
    await more.click();
    await p.page.waitForFunction(
      (n) => (document.querySelector('.entry-tool-result .entry-text')?.textContent ?? '').length > n,
      before,
    );
    assert.match(
      (await p.page.locator('.entry-tool-result .entry-text').first().textContent()) ?? '',
      /spotter-4te\.6: Add OTEL regression tests/,
    );
    // Open, it follows the selection: the next call's transcript is read when it is selected.
    await p.page.focus('.chart-wrap');
    await p.page.keyboard.press('ArrowRight');
    await p.page.waitForSelector('.details h3:has-text("Call 2 of 149")');
    await p.page.waitForSelector('.details [data-transcript="loaded"] .entry-tool-call');
    assert.deepEqual(((await p.state()) as { transcriptOpen?: boolean }).transcriptOpen, true);
    await p.page.locator('.details').screenshot({ path: join(results, 'first-minutes-transcript.png') });
    await assertClean(p);
  });

  it('a rebuilt page (its tab hidden and shown again) comes back with its zoom, filter, selection and scroll; a call the host asks for wins', async () => {
    const p = await suite.open({ trace: parsed, fileName: 'spotter.jsonl', viewport: { width: 1400, height: 700 } });
    await p.page.waitForSelector('.chart-wrap[data-plot-area]');
    // Failed calls only, zoomed twice around the last one, selected; the page scrolled down a little.
    await p.page.click('#timeline-filter');
    await p.page.click('#timeline-filter li.option:has-text("Calls with failed tools")');
    await p.page.waitForSelector('.chart-wrap[data-filter="failed"]');
    await p.page.focus('.chart-wrap');
    await p.page.keyboard.press('End');
    await p.page.keyboard.press('+');
    await p.page.keyboard.press('+');
    await p.page.evaluate(() => window.scrollTo(0, 260));
    const view = (await p.page.getAttribute('.chart-wrap', 'data-view'))!;
    const selected = (await p.page.getAttribute('.chart-wrap', 'data-selected-call'))!;
    assert.notEqual(view.split(',')[0], '0.000', 'zoomed in');
    // The state settles a moment after the last change.
    await p.page.waitForFunction(
      () => ((window as unknown as { __hostState: () => { scrollY?: number } }).__hostState()?.scrollY ?? 0) > 0,
    );
    const state = await p.state();
    const stored = (state as { view: { sessionId: string; filter: string; lo: number; hi: number } }).view;
    assert.deepEqual(
      [stored.sessionId, stored.filter, `${stored.lo.toFixed(3)},${stored.hi.toFixed(3)}`],
      ['ae4a77f8-aedd-4bc1-888f-c94edc91af04', 'failed', view],
    );

    // VS Code rebuilds the page from nothing but this state.
    const again = await suite.open({
      trace: parsed,
      fileName: 'spotter.jsonl',
      viewport: { width: 1400, height: 700 },
      state,
    });
    await again.page.waitForSelector(`.chart-wrap[data-view="${view}"]`);
    assert.equal(await again.page.getAttribute('.chart-wrap', 'data-filter'), 'failed');
    assert.equal(await again.page.getAttribute('.chart-wrap', 'data-selected-call'), selected);
    await again.page.waitForFunction(() => Math.round(window.scrollY) === 260);
    await again.page.waitForSelector(`.details h3:has-text("Call ${Number(selected) + 1} of 149")`);
    await assertClean(again);

    // Show in Timeline while the tab was hidden: the host sends the call with the rebuilt page's init, and it wins over the stored one.
    const asked = await suite.open({
      trace: parsed,
      fileName: 'spotter.jsonl',
      viewport: { width: 1400, height: 700 },
      state,
      select: { sessionId: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04', callIndex: 20 },
    });
    await asked.page.waitForSelector('.chart-wrap[data-selected-call="20"]');
    await asked.page.waitForSelector('.details h3:has-text("Call 21 of 149")');
    await assertClean(asked);
  });
});
