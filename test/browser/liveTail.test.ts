import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, it } from 'node:test';
import { TraceParse } from '../../src/core/trace/parseTrace';
import { TraceService } from '../../src/core/view/traceService';
import { SESSION_PAGE_SIZE } from '../../src/protocol/messages';
import { SPOTTER } from '../support/helpers';
import { assertClean, barPoint, inspectorSuite } from '../support/inspectorHarness';
import type { InspectorPage } from '../support/inspectorHarness';

/** The stored state without the view (zoom window, scroll), which is kept a moment after it settles (test/browser/firstMinutes.test.ts). */
function withoutView(state: unknown): Record<string, unknown> {
  const copy = { ...(state as Record<string, unknown>) };
  delete copy['view'];
  delete copy['scrollY'];
  return copy;
}

// The inspector following a file an agent is still writing, in real Chromium: the spotter log
// (149 calls in its main session, counted by the reader tests) is read in pieces with the same
// incremental TraceParse the trace worker keeps, and the page is told of each append as the
// host tells it (`trace/didChange` with `appended`). What the user set up (zoom window,
// selected call, page scroll, the calls table's scroll) must survive the new calls.

const FILE = basename(SPOTTER);
const MAIN_ID = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04';

/** The spotter log cut after the line that ends past `share` of its bytes (the whole file at 1). */
function cutAt(bytes: Buffer, share: number): number {
  return share >= 1 ? bytes.length : bytes.indexOf(0x0a, Math.floor(bytes.length * share)) + 1;
}

function serviceOf(parse: TraceParse): TraceService {
  return new TraceService(parse.snapshot(), { fileName: FILE, formatChosen: false, analysis: {}, prices: null });
}

/** Pushes bytes [from, to) into the parse, gives the page the grown trace as the host does after readMore. */
async function append(
  p: InspectorPage,
  parse: TraceParse,
  bytes: Buffer,
  from: number,
  to: number,
): Promise<TraceService> {
  parse.push(0, bytes.subarray(from, to));
  const service = serviceOf(parse);
  p.setService(service);
  await p.send({
    type: 'trace/didChange',
    header: service.header(),
    sessions: service.sessionList({ query: '', offset: 0, limit: SESSION_PAGE_SIZE }),
    appended: { newBytes: to - from },
    live: { grewMsAgo: 0 },
  });
  return service;
}

const windowOf = async (p: InspectorPage): Promise<[number, number]> =>
  (await p.page.getAttribute('.chart-wrap', 'data-window'))!.split(',').map(Number) as [number, number];
/** Waits until the chart's `attr` is `value`; a timeout says what it was. */
async function chartAttr(p: InspectorPage, attr: string, value: string): Promise<void> {
  await p.page
    .waitForFunction(([a, v]) => document.querySelector('.chart-wrap')?.getAttribute(a!) === v, [attr, value], {
      timeout: 10_000,
    })
    .catch(async () => {
      throw new Error(`${attr} never became ${value}: it is ${await p.page.getAttribute('.chart-wrap', attr)}`);
    });
}

const barCount = async (p: InspectorPage): Promise<number> =>
  Number(await p.page.getAttribute('.chart-wrap', 'data-bar-count'));

describe('inspector webview following a growing file (Chromium)', () => {
  const suite = inspectorSuite(['dist/webview.js']);

  it('appended calls extend the timeline and the figures; the zoom window, the selection and the scrolls stay', async () => {
    const bytes = readFileSync(SPOTTER);
    const parse = new TraceParse([FILE]);
    const first = cutAt(bytes, 0.4);
    parse.push(0, bytes.subarray(0, first));
    const start = serviceOf(parse);
    const p = await suite.open({
      trace: parse.snapshot(),
      fileName: FILE,
      service: start,
      viewport: { width: 1300, height: 700 },
    });
    const before = await barCount(p);
    assert.ok(before > 20 && before < 149, `${before} calls in the first 40% of the log`);
    assert.equal(await p.figure('llmCalls'), String(before));

    // The user selects a call a third of the way in and zooms in on it.
    const picked = Math.floor(before / 3);
    await p.page.locator('.chart-wrap').scrollIntoViewIfNeeded();
    const at = await barPoint(p, picked);
    await p.page.mouse.click(at.x, at.y);
    await chartAttr(p, 'data-selected-call', String(picked));
    await p.page.locator('.chart-wrap').focus();
    for (let i = 0; i < 3; i++) await p.page.keyboard.press('+');
    const zoomed = await windowOf(p);
    assert.ok(
      zoomed[1] - zoomed[0] < before / 2 && zoomed[1] < before,
      `zoomed in, away from the end: ${zoomed.join('–')}`,
    );
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), String(picked));
    await p.page.waitForSelector('.details h3');
    // …opens the calls table, scrolls it, and scrolls the page down to the details.
    await p.page.locator('details.calls-panel > summary').click();
    const table = p.page.locator('.calls-panel .virtual-scroll');
    await table.waitFor();
    await table.evaluate((e) => (e.scrollTop = 240));
    const tableScroll = await table.evaluate((e) => e.scrollTop);
    await p.page.evaluate(() => window.scrollTo(0, 400));
    const pageScroll = await p.page.evaluate(() => window.scrollY);
    assert.ok(pageScroll > 0 && tableScroll > 0, `scrolled: page ${pageScroll}, table ${tableScroll}`);
    const rowsAsked = p.requests.get('callRows') ?? 0;
    // What is at the top of the view: the first section of the session still on screen. The figures above it may
    // change height with the new calls, so the page's scroll offset may change; what the user looks at must not move.
    const topSection = await p.page.evaluate(() =>
      Array.from(document.querySelectorAll('.session-body > *')).findIndex((e) => e.getBoundingClientRect().bottom > 0),
    );
    const sectionTop = (): Promise<number> =>
      p.page.evaluate(
        (i) => Math.round(document.querySelectorAll('.session-body > *')[i]!.getBoundingClientRect().top),
        topSection,
      );
    const sectionTopBefore = await sectionTop();

    // The agent writes the rest of the session.
    const grown = await append(p, parse, bytes, first, bytes.length);
    await chartAttr(p, 'data-bar-count', '149');
    await p.page.waitForSelector('#app[aria-busy="false"]', { state: 'attached' });
    // The figures are the whole log's (the inspector tests check the same figures on a one-shot read).
    assert.equal(await p.figure('llmCalls'), '149');
    assert.equal(await p.figure('cacheHitRate'), '98.4%');
    assert.match(
      (await p.page.textContent('.live-text')) ?? '',
      new RegExp(`^${grown.header().callCount - start.header().callCount} new calls at `),
    );
    assert.equal(await p.page.isVisible('[data-live]'), true);
    assert.equal((await p.page.textContent('[data-live]'))?.trim(), '● live');
    // What the user set up is where it was.
    assert.deepEqual(await windowOf(p), zoomed);
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), String(picked));
    assert.match((await p.page.textContent('.details h3')) ?? '', new RegExp(`Call ${picked + 1} of 149`));
    assert.equal(await sectionTop(), sectionTopBefore, 'what was at the top of the view stays where it was on screen');
    assert.ok((await p.page.evaluate(() => window.scrollY)) > 0, 'the page was not scrolled back to the top');
    assert.equal(await table.evaluate((e) => e.scrollTop), tableScroll);
    const state = withoutView(await p.state());
    assert.deepEqual(state, { sessionId: MAIN_ID, callIndex: picked, showCached: true, barView: 'tokens' });
    assert.ok((p.requests.get('callRows') ?? 0) >= rowsAsked);
    await assertClean(p);
  });

  it('a timeline showing all calls follows the new end; a zoom on the end keeps its span at the new end', async () => {
    const bytes = readFileSync(SPOTTER);
    const parse = new TraceParse([FILE]);
    const cuts = [cutAt(bytes, 0.3), cutAt(bytes, 0.6), bytes.length];
    parse.push(0, bytes.subarray(0, cuts[0]));
    const p = await suite.open({ trace: parse.snapshot(), fileName: FILE, service: serviceOf(parse) });
    const first = await barCount(p);
    assert.deepEqual(await windowOf(p), [0, first], 'opened on all calls');

    await append(p, parse, bytes, cuts[0]!, cuts[1]!);
    await p.page.waitForFunction(
      (n) => Number(document.querySelector('.chart-wrap')?.getAttribute('data-bar-count')) > n,
      first,
    );
    const second = await barCount(p);
    await chartAttr(p, 'data-window', `0.000,${second}.000`);
    assert.match((await p.page.textContent('.view-text')) ?? '', new RegExp(`^All ${second} calls$`));

    // Zoomed on the end (End selects the last call; zoom in around it): the window moves by the calls added, its span kept.
    await p.page.locator('.chart-wrap').focus();
    await p.page.keyboard.press('End');
    for (let i = 0; i < 3; i++) await p.page.keyboard.press('+');
    const [lo, hi] = await windowOf(p);
    assert.ok(hi > second - 1 && lo > 0, `zoomed on the end: ${lo}–${hi}`);
    await append(p, parse, bytes, cuts[1]!, cuts[2]!);
    await chartAttr(p, 'data-bar-count', '149');
    const moved = 149 - second;
    await chartAttr(p, 'data-window', `${(lo + moved).toFixed(3)},${(hi + moved).toFixed(3)}`);
    // The selection stays on the call it was (the old last one), not on the new last call.
    assert.equal(await p.page.getAttribute('.chart-wrap', 'data-selected-call'), String(second - 1));
    await assertClean(p);
  });

  it('a truncated file: the figures go at once and the panel says why; the re-read shows the new content', async () => {
    const bytes = readFileSync(SPOTTER);
    const parse = new TraceParse([FILE]);
    parse.push(0, bytes);
    const p = await suite.open({ trace: parse.snapshot(), fileName: FILE, service: serviceOf(parse) });
    assert.equal(await p.figure('llmCalls'), '149');
    await p.send({
      type: 'trace/reset',
      reason: 'truncated',
      message: `${FILE} was truncated (it is now shorter than what had been read): the figures shown were of the old content, so it is read again from the start.`,
    });
    await p.page.waitForSelector('[data-reset="truncated"]');
    // No figure of the old content is left on screen.
    assert.equal(await p.page.locator('[data-figure]:visible').count(), 0);
    assert.equal(await p.page.isVisible('.header'), false);
    assert.match((await p.page.textContent('[data-reset]')) ?? '', /was truncated/);
    // The host read it again: a shorter log.
    const again = new TraceParse([FILE]);
    again.push(0, bytes.subarray(0, cutAt(bytes, 0.3)));
    const service = serviceOf(again);
    p.setService(service);
    await p.send({
      type: 'trace/didChange',
      header: service.header(),
      sessions: service.sessionList({ query: '', offset: 0, limit: SESSION_PAGE_SIZE }),
      live: { grewMsAgo: 0 },
    });
    await p.page.waitForFunction(() => document.querySelector('[data-figure="llmCalls"]')?.checkVisibility() === true);
    const calls = Number(await p.figure('llmCalls'));
    assert.ok(calls < 149 && calls === service.header().callCount, `${calls} calls after the re-read`);
    await assertClean(p);
  });
});
