import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { buildReportTrace } from '../../src/core/share/reportDocument';
import type { ParsedTrace } from '../../src/core/trace/parseTrace';
import { readReportAssets, reportHtml } from '../../src/node/htmlReport';
import { parseFile, repoRoot, SPOTTER } from '../support/helpers';
import { inspectorSuite, launchChromium, results } from '../support/inspectorHarness';
import { DARK_MODERN, LIGHT_MODERN } from '../support/themes';
import type { TestTheme } from '../support/themes';

// The stylesheets applied, read back from the browser as computed styles: the page's font,
// the legend's colours and the pickers' colours in the light and the dark theme, in the
// standalone HTML report (media/report.css sets the theme variables a browser lacks) and
// in the inspector (VS Code sets them). Expected colours are the theme variables of
// test/support/themes.ts (VS Code's own Light Modern and Dark Modern values), written out
// as the browser reports them; an unstyled page reads the browser's defaults instead
// (a serif font, transparent swatches, @vscode-elements' built-in dark pickers).

/** `#rrggbb` as getComputedStyle writes it. */
function rgb(hex: string): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
}

/** What the checks expect of a theme, from its variables. */
function expected(theme: TestTheme): {
  font: string;
  cached: string;
  appended: string;
  output: string;
  pickerBackground: string;
  pickerForeground: string;
  badge: string;
} {
  const v = theme.variables;
  return {
    font: v['--vscode-font-family']!,
    cached: rgb(v['--vscode-charts-blue']!),
    appended: rgb(v['--vscode-charts-orange']!),
    output: rgb(v['--vscode-charts-green']!),
    pickerBackground: rgb(v['--vscode-settings-dropdownBackground']!),
    pickerForeground: rgb(v['--vscode-settings-dropdownForeground']!),
    badge: rgb(v['--vscode-charts-green']!),
  };
}

/**
 * The computed styles the checks read, in the page. A string, not a function: tsx would
 * wrap a function's inner closures in helpers that do not exist in the page.
 */
const READ_STYLES = `(() => {
  const css = (selector, property, pseudo) => {
    const node = document.querySelector(selector);
    return node ? getComputedStyle(node, pseudo ?? null).getPropertyValue(property) : 'missing ' + selector;
  };
  const face = document.querySelector('#session-picker')?.shadowRoot?.querySelector('.select-face');
  return {
    font: css('body', 'font-family'),
    cached: css('.legend .swatch-cached', 'background-color'),
    appended: css('.legend .swatch-appended', 'background-color'),
    output: css('.legend .swatch-output', 'background-color'),
    unpricedMark: css('.legend .swatch-unpriced', 'content', '::after'),
    pickerBackground: face ? getComputedStyle(face).backgroundColor : 'missing picker face',
    pickerForeground: face ? getComputedStyle(face).color : 'missing picker face',
    badge: css('.live-badge', 'background-color'),
    resetNoteBorder: css('.reset-note', 'border-left-style'),
  };
})()`;

async function styles(page: Page): Promise<Record<string, string>> {
  return page.evaluate(READ_STYLES) as Promise<Record<string, string>>;
}

function assertStyled(seen: Record<string, string>, theme: TestTheme, where: string): void {
  const want = expected(theme);
  // The browser drops the quotes a family name does not need ("Ubuntu" → Ubuntu).
  const unquoted = (family: string | undefined): string => (family ?? '').replace(/"/g, '');
  assert.equal(
    unquoted(seen['font']),
    unquoted(want.font),
    `${where}: the page's font is VS Code's, not the browser's default`,
  );
  assert.equal(seen['cached'], want.cached, `${where}: the cached swatch`);
  assert.equal(seen['appended'], want.appended, `${where}: the appended swatch`);
  assert.equal(seen['output'], want.output, `${where}: the output swatch`);
  assert.equal(seen['unpricedMark'], '"?"', `${where}: the unpriced swatch's "?" (the rule that was left open)`);
  assert.equal(seen['pickerBackground'], want.pickerBackground, `${where}: the session picker's background`);
  assert.equal(seen['pickerForeground'], want.pickerForeground, `${where}: the session picker's text`);
  assert.equal(seen['badge'], want.badge, `${where}: the live badge (a rule after the unclosed one)`);
  assert.equal(seen['resetNoteBorder'], 'solid', `${where}: the reset note (a rule after the unclosed one)`);
}

describe('the stylesheets, read back as computed styles in Chromium', () => {
  const suite = inspectorSuite(['dist/webview.js', 'dist/report.js']);
  let browser: Browser;
  let spotter: ParsedTrace;
  let reportFile: string;

  before(async () => {
    browser = await launchChromium();
    spotter = await parseFile(SPOTTER);
    reportFile = join(mkdtempSync(join(tmpdir(), 'styles-')), 'report.html');
    const doc = {
      schema: 1 as const,
      title: 'Styles',
      generatedAt: '2026-12-01T00:00:00.000Z',
      generator: 'agent-trace test',
      traces: [buildReportTrace(spotter, 'spotter.jsonl')],
      redaction: null,
    };
    writeFileSync(reportFile, reportHtml(doc, await readReportAssets(repoRoot)));
  });
  after(async () => {
    await browser?.close();
  });

  for (const [scheme, theme] of [
    ['light', LIGHT_MODERN],
    ['dark', DARK_MODERN],
  ] as const) {
    it(`the HTML report in a browser set to ${scheme}: VS Code's font, the legend's colours, themed pickers and page`, async () => {
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, colorScheme: scheme });
      try {
        const page = await context.newPage();
        await page.goto(`file://${reportFile}`);
        await page.waitForSelector('body[data-ready="true"]');
        await page.waitForSelector('.chart-wrap[data-bar-count="149"]');
        assertStyled(await styles(page), theme, `report (${scheme})`);
        assert.equal(
          await page.evaluate(() => getComputedStyle(document.body).backgroundColor),
          rgb(theme.variables['--vscode-editor-background']!),
          'the page background follows the scheme',
        );
        await page.screenshot({ path: join(results, `styles-report-${scheme}.png`) });
      } finally {
        await context.close();
      }
    });

    it(`the inspector in ${scheme === 'light' ? 'Light' : 'Dark'} Modern: VS Code's font, the legend's colours, themed pickers, the live badge and reset note styled`, async () => {
      const p = await suite.open({ trace: spotter, fileName: 'spotter.jsonl', theme: scheme });
      await p.page.waitForSelector('.chart-wrap[data-bar-count="149"]');
      assertStyled(await styles(p.page), theme, `inspector (${scheme})`);
    });
  }
});
