import assert from 'node:assert/strict';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { ParsedTrace } from '../../src/core/trace/parseTrace';
import { parseFile, SPOTTER } from '../support/helpers';
import { assertClean, inspectorSuite, plotArea, results } from '../support/inspectorHarness';
import type { InspectorPage } from '../support/inspectorHarness';

// What broke in a new user's first minutes with the inspector page: the overview strip
// after a layout change, the page's state across a rebuild, the call's transcript.

/** The overview strip as drawn: its canvas's pixel width and CSS width, and the brush area's ends, in CSS pixels. */
async function overview(p: InspectorPage): Promise<{ pixels: number; css: number; area: [number, number]; plot: [number, number] }> {
  const area = (await p.page.getAttribute('.overview-wrap', 'data-brush-area'))!.split(',').map(Number) as [number, number];
  const { pixels, css, offset } = await p.page.evaluate(() => {
    const strip = document.querySelector('.overview') as HTMLCanvasElement;
    const chart = document.querySelector('.chart-wrap canvas') as HTMLCanvasElement;
    return { pixels: strip.width / (window.devicePixelRatio || 1), css: strip.clientWidth, offset: chart.getBoundingClientRect().left - strip.getBoundingClientRect().left };
  });
  const a = await plotArea(p);
  return { pixels, css, area, plot: [Math.round(offset + a.left), Math.round(offset + a.right)] };
}

/** Waits until the overview strip is drawn at its own width and lines up with the plot (or says how it stands). */
async function stripFollows(p: InspectorPage, what: string): Promise<void> {
  let last: Awaited<ReturnType<typeof overview>> | null = null;
  for (let i = 0; i < 40; i++) {
    last = await overview(p);
    if (Math.abs(last.pixels - last.css) <= 1 && Math.abs(last.area[0] - last.plot[0]) <= 1 && Math.abs(last.area[1] - last.plot[1]) <= 1) return;
    await p.page.waitForTimeout(50);
  }
  assert.fail(`${what}: the overview strip is ${last!.pixels} px drawn for ${last!.css} px shown, its brush area ${last!.area.join('–')} against the plot's ${last!.plot.join('–')}`);
}

describe('the inspector page in a new user\'s first minutes', () => {
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
});
