import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { compareSessions } from '../../src/core/sessions/compareSessions';
import type { SessionRow } from '../../src/core/sessions/sessionQuery';
import { indexRecords } from '../../src/core/sessions/sessionRecord';
import type { CallRecord } from '../../src/core/sessions/sessionRecord';
import { buildSessionsReport } from '../../src/core/sessions/sessionsReport';
import { EDIT_LOOP, parseFile, repoRoot, SPOTTER } from '../support/helpers';
import { launchChromium } from '../support/inspectorHarness';
import { openSessionsPage } from '../support/sessionsPageHarness';

// The Agent Sessions panels' page in Chromium, on the page the extension builds
// (buildSessionsPageHtml) and over the typed Channel: what it posts for the user's clicks,
// and what it shows when the host refuses or fails one of them.

describe("the Agent Sessions panels' page: its messages over the Channel", () => {
  let browser: Browser;
  let rows: SessionRow[];
  const calls = new Map<number, CallRecord[]>();

  before(async () => {
    assert.ok(
      existsSync(join(repoRoot, 'dist/sessionsView.js')),
      'run `npm run build` first: dist/sessionsView.js is missing',
    );
    browser = await launchChromium();
    rows = [];
    for (const [path, fileId] of [
      [SPOTTER, 1],
      [EDIT_LOOP, 2],
    ] as const) {
      const parsed = await parseFile(path);
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

  it('the report: ready first, then a click on a row asks to open that session and Export asks for CSV; nothing else is posted', async () => {
    const s = await openSessionsPage(
      browser,
      { kind: 'report', title: '2 sessions', report: buildSessionsReport(rows) },
      'dark',
    );
    try {
      // One row per session, its sub-agents counted in it: the spotter session and the loop session.
      assert.equal(await s.page.locator('.sessions-table tbody tr').count(), 2);
      const loop = rows.find((r) => r.path === EDIT_LOOP)!;
      await s.page.locator(`tr[data-session-id="${loop.id}"]`).click();
      await s.page.locator('[data-export="csv"]').click();
      await waitUntil(() => s.posted.length >= 3);
      assert.deepEqual(s.posted, [
        { type: 'ready' },
        { type: 'open', sessionId: loop.id },
        { type: 'export', format: 'csv' },
      ]);
      // The page the extension builds for it (no worker: no connect-src, no worker-src) blocks nothing it needs.
      assert.deepEqual(await s.cspViolations(), []);
    } finally {
      await s.close();
    }
  });

  it('a host/error is said above the content, counted, and the content stays; a new show keeps it said', async () => {
    const a = rows.find((r) => r.path === EDIT_LOOP)!;
    const b = rows.find((r) => r.path === SPOTTER && r.parentKey === null)!;
    const content = { kind: 'compare' as const, comparison: compareSessions(a, calls.get(a.id)!, b, calls.get(b.id)!) };
    const s = await openSessionsPage(browser, content, 'light');
    try {
      assert.equal(await s.page.locator('.error-banner').count(), 0);
      await s.send({
        type: 'host/error',
        message: 'refused a request from the panel: open.sessionId 7 is not a session this panel shows',
      });
      await s.page.waitForSelector('.error-banner[data-host-errors="1"]');
      assert.equal(
        await s.page.locator('.error-banner').textContent(),
        'The extension could not do that: refused a request from the panel: open.sessionId 7 is not a session this panel shows',
      );
      // The comparison is still there: 41 calls of the loop session against the spotter's.
      assert.ok((await s.page.locator('.compare-table tbody tr').count()) > 0);
      await s.send({ type: 'show', content });
      await s.send({ type: 'host/error', message: '<b>not bold</b>' });
      await s.page.waitForSelector('.error-banner[data-host-errors="2"]');
      // Text, never HTML, and still one banner at the top of the page.
      assert.equal(await s.page.locator('.error-banner b').count(), 0);
      assert.equal(await s.page.locator('.error-banner').count(), 1);
      assert.equal(await s.page.locator('#app > :first-child').getAttribute('class'), 'error-banner');
      // Something that is no message of the protocol is not drawn: the page says so to the host instead.
      await s.page.evaluate(() => window.postMessage({ notAType: true }, '*'));
      await waitUntil(() => s.posted.some((m) => (m as { type?: string }).type === 'log/error'));
      assert.deepEqual(s.posted.at(-1), {
        type: 'log/error',
        message: 'channel: ignored a message without a string "type"',
      });
    } finally {
      await s.close();
    }
  });
});

async function waitUntil(probe: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!probe()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
