import AxeBuilder from '@axe-core/playwright';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { compareSessions } from '../../src/core/sessions/compareSessions';
import type { SessionRow } from '../../src/core/sessions/sessionQuery';
import { indexRecords } from '../../src/core/sessions/sessionRecord';
import type { CallRecord } from '../../src/core/sessions/sessionRecord';
import { buildSessionsReport } from '../../src/core/sessions/sessionsReport';
import { buildReportTrace } from '../../src/core/share/reportDocument';
import type { ParsedTrace } from '../../src/core/trace/parseTrace';
import { readReportAssets, reportHtml } from '../../src/node/htmlReport';
import { EDIT_LOOP, parseFile, repoRoot, SPOTTER } from '../support/helpers';
import { inspectorSuite, launchChromium, results } from '../support/inspectorHarness';
import type { ThemeName } from '../support/inspectorHarness';
import { openSessionsPage } from '../support/sessionsPageHarness';

// axe-core (Deque's rules engine, through @axe-core/playwright) over the four pages a user
// reads: the inspector, the several-sessions page, the comparison of two sessions and the
// standalone HTML report, each in the light, the dark and a high-contrast theme (the
// report, outside VS Code, follows the browser: light, dark, and forced colours). No
// violation of impact "serious" or "critical" may remain (WCAG 2.x A and AA rules and
// axe's best practices); the others are printed for a person to read.

const THEME_NAMES: readonly ThemeName[] = ['light', 'dark', 'high-contrast'];

interface Found {
  id: string;
  impact: string | null | undefined;
  help: string;
  targets: string[];
}

/** axe's violations on the page as it is now, the serious and critical ones apart. */
async function audit(page: Page, label: string): Promise<{ blocking: Found[]; other: Found[] }> {
  const result = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'])
    .analyze();
  const found: Found[] = result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
  }));
  const blocking = found.filter((f) => f.impact === 'serious' || f.impact === 'critical');
  const other = found.filter((f) => !blocking.includes(f));
  if (other.length > 0)
    console.log(
      `${label}: minor/moderate: ${other.map((f) => `${f.id} (${f.impact}) ${f.targets.join(', ')}`).join('; ')}`,
    );
  return { blocking, other };
}

function assertNoBlocking(found: { blocking: Found[] }, label: string): void {
  assert.deepEqual(
    found.blocking.map((f) => `${f.id} (${f.impact}): ${f.help} at ${f.targets.join(', ')}`),
    [],
    `${label}: no serious or critical accessibility violation`,
  );
}

describe('accessibility (axe-core) of the four pages in three themes', () => {
  const suite = inspectorSuite(['dist/webview.js', 'dist/report.js', 'dist/sessionsView.js']);
  let browser: Browser;
  let spotter: ParsedTrace;
  let reportFile: string;
  let rows: SessionRow[];
  const calls = new Map<number, CallRecord[]>();

  before(async () => {
    browser = await launchChromium();
    spotter = await parseFile(SPOTTER);
    reportFile = join(mkdtempSync(join(tmpdir(), 'a11y-')), 'report.html');
    const doc = {
      schema: 1 as const,
      title: 'Accessibility',
      generatedAt: '2026-12-01T00:00:00.000Z',
      generator: 'agent-trace test',
      traces: [buildReportTrace(spotter, 'spotter.jsonl')],
      redaction: null,
    };
    writeFileSync(reportFile, reportHtml(doc, await readReportAssets(repoRoot)));
    rows = [];
    for (const [path, fileId] of [
      [SPOTTER, 1],
      [EDIT_LOOP, 2],
    ] as const) {
      const parsed = path === SPOTTER ? spotter : await parseFile(path);
      indexRecords(parsed).forEach(({ session, calls: c }, i) => {
        const id = fileId * 10 + i;
        calls.set(id, c);
        rows.push({
          ...session,
          id,
          fileId,
          path,
          agentId: parsed.model.format!,
          project: '/p/demo',
          fileMtimeMs: 0,
          lastWriteMs: 0,
          live: false,
          fileStatus: 'ok' as const,
          problem: null,
        });
      });
    }
  });
  after(async () => {
    await browser?.close();
  });

  for (const theme of THEME_NAMES) {
    it(`the inspector in the ${theme} theme`, async () => {
      const p = await suite.open({ trace: spotter, fileName: 'spotter.jsonl', theme });
      await p.page.waitForSelector('.chart-wrap[data-bar-count="149"]');
      // A call selected: its details are on the page too.
      await p.page.focus('.chart-wrap');
      await p.page.keyboard.press('End');
      await p.page.waitForSelector('.details h3');
      assertNoBlocking(await audit(p.page, `inspector (${theme})`), `inspector (${theme})`);
    });

    it(`the several-sessions page in the ${theme} theme`, async () => {
      const s = await openSessionsPage(
        browser,
        { kind: 'report', title: '2 sessions', report: buildSessionsReport(rows) },
        theme,
      );
      try {
        assertNoBlocking(await audit(s.page, `sessions (${theme})`), `sessions (${theme})`);
        if (theme === 'dark') await s.page.screenshot({ path: join(results, 'a11y-sessions-dark.png') });
      } finally {
        await s.close();
      }
    });

    it(`the comparison of two sessions in the ${theme} theme`, async () => {
      const a = rows.find((r) => r.path === EDIT_LOOP)!;
      const b = rows.find((r) => r.path === SPOTTER && r.parentKey === null)!;
      const s = await openSessionsPage(
        browser,
        { kind: 'compare', comparison: compareSessions(a, calls.get(a.id)!, b, calls.get(b.id)!) },
        theme,
      );
      try {
        assertNoBlocking(await audit(s.page, `compare (${theme})`), `compare (${theme})`);
      } finally {
        await s.close();
      }
    });
  }

  for (const scheme of ['light', 'dark', 'forced-colors'] as const) {
    it(`the HTML report in a browser set to ${scheme}`, async () => {
      const context = await browser.newContext({
        viewport: { width: 1400, height: 900 },
        colorScheme: scheme === 'forced-colors' ? 'dark' : scheme,
        forcedColors: scheme === 'forced-colors' ? 'active' : 'none',
      });
      try {
        const page = await context.newPage();
        await page.goto(`file://${reportFile}`);
        await page.waitForSelector('.chart-wrap[data-bar-count="149"]');
        assertNoBlocking(await audit(page, `report (${scheme})`), `report (${scheme})`);
      } finally {
        await context.close();
      }
    });
  }
});
