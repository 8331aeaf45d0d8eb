import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { COMMIT_GRACE_MS, editedFiles } from '../../src/core/cost/costGroups';
import { createPriceBook } from '../../src/core/cost/priceBook';
import { compareSessions } from '../../src/core/sessions/compareSessions';
import { addRepository, addUnjoined, fileSpan } from '../../src/core/sessions/sessionCommits';
import type { CommitTable } from '../../src/core/sessions/sessionCommits';
import { commitsBetween } from '../../src/node/gitLog';
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
  const edited = new Map<string, string[]>();

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
      edited.set(
        path,
        parsed.model.sessions.flatMap((s) => editedFiles(s)),
      );
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

  it("the report's cost per commit: the spotter session joined to a real git history made from its own edits, the loop session in no repository", async () => {
    // The history of test/unit/cli/cost.test.ts, made the same way (committer times, UTC): E 13:00 main (before the
    // session), A 14:30 main (otel.ex, which it edited), C 14:40 main (README only), B 15:20 feature (.dialyzerignore,
    // which it wrote, within the hour after it), D 17:00 feature (more than an hour after). A and B share the
    // spotter session's $2.9056013 with its sub-agents (test/reference/cost_reference.mjs): $1.45 each. The loop
    // session's folder is in no repository: joined to none, $3.37 (3.36867825, the same reference).
    const repo = mkdtempSync(join(tmpdir(), 'agent-trace-page-git-'));
    const git = (date: string | null, ...args: string[]): void => {
      const env = {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@example.com',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@example.com',
        ...(date ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {}),
      };
      const r = spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8', env });
      assert.equal(r.status, 0, r.stderr);
    };
    const commit = (date: string, message: string, files: Record<string, string>): void => {
      for (const [f, t] of Object.entries(files)) {
        mkdirSync(dirname(join(repo, f)), { recursive: true });
        writeFileSync(join(repo, f), t);
      }
      git(null, 'add', '-A');
      git(date, 'commit', '-q', '-m', message);
    };
    const s0 = await (async () => {
      git(null, 'init', '-q', '-b', 'main');
      commit('2026-02-12T13:00:00Z', 'E before', { 'lib/spotter/telemetry/otel.ex': 'v0\n', 'README.md': 'r0\n' });
      commit('2026-02-12T14:30:00Z', 'A otel', { 'lib/spotter/telemetry/otel.ex': 'v1\n' });
      commit('2026-02-12T14:40:00Z', 'C readme', { 'README.md': 'r1\n' });
      git(null, 'checkout', '-q', '-b', 'feature');
      commit('2026-02-12T15:20:00Z', 'B dialyzer', { '.dialyzerignore': 'x\n', 'README.md': 'r2\n' });
      commit('2026-02-12T17:00:00Z', 'D late', { 'lib/spotter/telemetry/otel.ex': 'v2\n' });
      // The index prices its rows (the page test's own rows are unpriced): the same records, priced.
      const priced = async (path: string): Promise<SessionRow[]> =>
        indexRecords(await parseFile(path), {}, createPriceBook()).map(({ session }, i) => ({
          ...rows.find((r) => r.path === path)!,
          ...session,
          id: 900 + i,
        }));
      const spotterRows = await priced(SPOTTER);
      const loopRows = await priced(EDIT_LOOP);
      const spotter = fileSpan(SPOTTER, spotterRows, edited.get(SPOTTER)!)!;
      const loop = fileSpan(EDIT_LOOP, loopRows, edited.get(EDIT_LOOP)!)!;
      const table: CommitTable = {
        commits: [],
        unjoined: { sessions: 0, usd: null },
        noRepository: 1,
        graceMinutes: 60,
      };
      addRepository(
        table,
        [spotter],
        await commitsBetween(repo, spotter.startMs, spotter.endMs + COMMIT_GRACE_MS),
        COMMIT_GRACE_MS,
      );
      addUnjoined(table, [loop]);
      return table;
    })();
    const s = await openSessionsPage(
      browser,
      { kind: 'report', title: '2 sessions', report: buildSessionsReport(rows) },
      'dark',
    );
    try {
      await s.send({ type: 'commits', table: s0 });
      const body = s.page.locator('.commit-table tbody tr');
      await body.first().waitFor();
      const cells = await body.evaluateAll((trs) =>
        trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent)),
      );
      assert.deepEqual(
        cells.map((c) => [c[2], c[3], c[4], c[5]]),
        [
          ['main', 'A otel', '1', '$1.45'],
          ['feature', 'B dialyzer', '1', '$1.45'],
        ],
      );
      assert.ok(Math.abs(s0.commits[0]!.usd! - 2.9056013 / 2) < 1e-6, String(s0.commits[0]!.usd));
      assert.equal(
        await s.page.locator('.commit-unjoined').textContent(),
        '1 session joined to no commit: $3.37. 1 of them in no git repository here.',
      );
      // A new show (a live session grew) draws the report anew with the table still under it.
      await s.send({
        type: 'show',
        content: { kind: 'report', title: '2 sessions', report: buildSessionsReport(rows) },
      });
      await s.page.locator('.commit-table tbody tr').nth(1).waitFor();
      assert.equal(await s.page.locator('section[data-section="commits"]').count(), 1);
      await s.page.screenshot({ path: join(repoRoot, 'test-results/sessions-commit-table.png'), fullPage: true });
      assert.deepEqual(await s.cspViolations(), []);
    } finally {
      await s.close();
      rmSync(repo, { recursive: true, force: true });
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
