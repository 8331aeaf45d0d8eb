import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { SessionsContext } from '../../src/core/context/contextAcrossSessions';
import { createPriceBook } from '../../src/core/cost/priceBook';
import type { SessionRow } from '../../src/core/sessions/sessionQuery';
import { indexRecords } from '../../src/core/sessions/sessionRecord';
import { buildSessionsReport } from '../../src/core/sessions/sessionsReport';
import { contextOfSessions } from '../../src/node/sessions/contextOfSessions';
import { EDIT_LOOP, fixtures, parseFile, repoRoot, SPOTTER } from '../support/helpers';
import { launchChromium } from '../support/inspectorHarness';
import { openSessionsPage } from '../support/sessionsPageHarness';

// The Agent Sessions report's "What fills the context" section in Chromium, on three real logs
// (the spotter session with its two sub-agents and its /compact run, the edit-retry loop, and a
// Codex session read as text). What the page shows is checked against figures computed another
// way: `agent-trace context FILE --json` run on each file by itself (the CLI's own process and
// report), its totals added up here by hand.

const CODEX = join(fixtures, 'codex/edgerunner-code-mode-0.144.1.head558.jsonl');
const FILES = [SPOTTER, EDIT_LOOP, CODEX];

interface CliTotal {
  name: string;
  tokens: number;
  usd: number | null;
  parts: number;
}
interface CliJson {
  sessions: Array<{ id: string; role: string; calls: Array<{ byKind: Record<string, number> }> }>;
  totals: {
    calls: number;
    inputUsd: number | null;
    byKind: Record<string, { tokens: number; usd: number | null }>;
    byTool: CliTotal[];
    byFile: CliTotal[];
  };
}

function cliContext(file: string): CliJson {
  const r = spawnSync(process.execPath, [join(repoRoot, 'dist/cli.js'), 'context', file, '--json'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as CliJson;
}

/** "1,234" → 1234, "$0.338" → 0.338. */
function num(text: string | null): number {
  return Number((text ?? '').replace(/[$,]/g, ''));
}

async function cells(page: Page, group: string, name: string): Promise<string[]> {
  const row = page.locator(`[data-group="${group}"] tr`).filter({ has: page.locator('td', { hasText: name }) });
  assert.equal(await row.count(), 1, `one ${group} row named ${name}`);
  return row.locator('td').allTextContents();
}

describe('the Agent Sessions report: what fills the context over its sessions', () => {
  let browser: Browser;
  let rows: SessionRow[];
  let cli: CliJson[];
  let context: SessionsContext;

  before(async () => {
    assert.ok(existsSync(join(repoRoot, 'dist/sessionsView.js')), 'run `npm run build` first');
    assert.ok(existsSync(join(repoRoot, 'dist/cli.js')), 'run `npm run build` first');
    browser = await launchChromium();
    rows = [];
    for (const [i, path] of FILES.entries()) {
      const parsed = await parseFile(path);
      indexRecords(parsed).forEach(({ session }, j) =>
        rows.push({
          ...session,
          id: (i + 1) * 10 + j,
          fileId: i + 1,
          path,
          agentId: parsed.model.format!,
          project: '/p/demo',
          fileMtimeMs: 0,
          lastWriteMs: 0,
          live: false,
          fileStatus: 'ok' as const,
          problem: null,
        }),
      );
    }
    cli = FILES.map(cliContext);
    // What the index worker computes for the panel, from the rows the panel shows (every session of the three files).
    context = await contextOfSessions(
      FILES.map((path) => ({ path, sessionKeys: rows.filter((r) => r.path === path).map((r) => r.key) })),
      createPriceBook(),
      Number.POSITIVE_INFINITY,
    );
  });
  after(async () => {
    await browser?.close();
  });

  it('says it is counting, then shows the totals by tool and file and the base, each equal to the CLI reports added up', async () => {
    const s = await openSessionsPage(
      browser,
      { kind: 'report', title: '3 sessions', report: buildSessionsReport(rows) },
      'dark',
    );
    try {
      await s.page.waitForSelector('section[data-section="context"][data-state="counting"]');
      await s.send({ type: 'context', context });
      await s.page.waitForSelector('section[data-section="context"][data-state="ready"]');
      const page = s.page;

      // Sessions and calls: 3 main sessions (spotter, loop, Codex), the spotter's 2 sub-agent / compaction runs apart.
      const sessions = cli.flatMap((c) => c.sessions);
      assert.equal(sessions.filter((x) => x.role === 'main').length, 3);
      const calls = cli.reduce((a, c) => a + c.totals.calls, 0);
      const summary = (await page.locator('.context-across-summary').textContent()) ?? '';
      assert.match(
        summary,
        new RegExp(
          `^3 sessions and ${sessions.length - 3} sub-agent or compaction runs, ${calls.toLocaleString('en-US')} calls, input \\$`,
        ),
      );
      const inputUsd = cli.reduce((a, c) => a + (c.totals.inputUsd ?? 0), 0);
      assert.ok(Math.abs(num(summary.match(/input (\$[\d,]+(?:\.\d+)?)/)![1]!) - inputUsd) < 0.01, summary);

      // Read: in all three? The CLI reports say which files use it; tokens, parts and dollars are their sums.
      for (const tool of ['Read', 'Bash']) {
        const per = cli.map((c) => c.totals.byTool.find((t) => t.name === tool));
        const present = per.filter((t): t is CliTotal => t !== undefined);
        assert.ok(present.length >= 2, `${tool} is used in at least two of the logs`);
        const shown = await cells(page, 'tool', tool);
        assert.equal(num(shown[1]!), Math.round(present.reduce((a, t) => a + t.tokens, 0)), `${tool} tokens`);
        assert.equal(
          num(shown[2]!),
          present.reduce((a, t) => a + t.parts, 0),
          `${tool} parts`,
        );
        // Sessions holding a part of the tool: at least one per log that uses it.
        assert.ok(num(shown[3]!) >= present.length, `${tool} sessions`);
        const usd = present.reduce((a, t) => a + (t.usd ?? 0), 0);
        assert.ok(Math.abs(num(shown[4]!) - usd) <= 0.005 * Math.max(1, usd), `${tool} $ ${shown[4]} vs ${usd}`);
      }

      // The dearest file: the same file's totals in every CLI report that names it, summed.
      const firstFile = (await page.locator('[data-group="file"] tbody tr').first().getAttribute('data-name'))!;
      const fileTotals = cli.flatMap((c) => c.totals.byFile.filter((f) => f.name === firstFile));
      assert.ok(fileTotals.length >= 1);
      const fileUsd = fileTotals.reduce((a, f) => a + (f.usd ?? 0), 0);
      for (const c of cli)
        for (const f of c.totals.byFile) assert.ok((f.usd ?? 0) <= fileUsd + 1e-9, `${f.name} is not dearer`);
      const fileCells = await cells(page, 'file', firstFile);
      assert.equal(
        num(fileCells[1]!),
        fileTotals.reduce((a, f) => a + f.tokens, 0),
      );

      // The base: the median of each session's first-call system tokens, and Σ of the reports' system dollars.
      const bases = sessions.map((x) => x.calls[0]?.byKind['system'] ?? 0).filter((t) => t > 0);
      bases.sort((a, b) => a - b);
      const mid =
        bases.length % 2
          ? bases[(bases.length - 1) / 2]!
          : (bases[bases.length / 2 - 1]! + bases[bases.length / 2]!) / 2;
      const baseText = (await page.locator('.context-base').textContent()) ?? '';
      assert.equal(num(baseText.match(/~([\d,]+) tokens/)![1]!), Math.round(mid), baseText);
      assert.ok(baseText.includes(`median over ${bases.length} sessions`), baseText);
      const baseUsd = cli.reduce((a, c) => a + (c.totals.byKind['system']?.usd ?? 0), 0);
      assert.ok(Math.abs(num(baseText.match(/(\$[\d,]+(?:\.\d+)?) carried/)![1]!) - baseUsd) < 0.01, baseText);

      // Its suggestion says the same dollars over these 3 sessions, with how it was computed under it.
      const first = page.locator('.context-suggestions li').filter({ hasText: 'System prompt' });
      const sentence = (await first.locator('span').textContent()) ?? '';
      assert.match(sentence, /over these 3 sessions \(\d+% of their input dollars\)/);
      assert.ok(Math.abs(num(sentence.match(/tokens in every call, (\$[\d,]+(?:\.\d+)?) over/)![1]!) - baseUsd) < 0.01);
      assert.match((await first.locator('div').textContent()) ?? '', /^how: estimated per session/);
      // No log of the three calls an MCP tool: the table says so rather than showing an empty one.
      assert.equal(await page.locator('[data-group="mcp"] table').count(), 0);
      assert.deepEqual(await s.cspViolations(), []);
      await page.screenshot({ path: join(repoRoot, 'test-results/sessions-context.png'), fullPage: true });
    } finally {
      await s.close();
    }
  });

  it('draws tool, server, file and suggestion text as text, and says a failure without losing the report', async () => {
    const s = await openSessionsPage(
      browser,
      { kind: 'report', title: '3 sessions', report: buildSessionsReport(rows) },
      'light',
    );
    try {
      const evil = '<img src=x onerror="window.__pwned=1">';
      const hostile: SessionsContext = {
        ...context,
        across: {
          ...context.across,
          byMcpServer: [{ name: evil, tokens: 1200, usd: 0.5, parts: 3, sessions: 2 }],
          byFile: [{ name: `src/${evil}.ts`, tokens: 10, usd: 0.01, parts: 1, sessions: 1 }],
          suggestions: [
            { text: `MCP server \`${evil}\`: <b>bold</b>`, usd: 0.5, how: '<script>window.__pwned=2</script>' },
          ],
        },
        skipped: [{ file: `${evil}.jsonl`, why: '<i>no</i>' }],
      };
      await s.send({ type: 'context', context: hostile });
      await s.page.waitForSelector('section[data-section="context"][data-state="ready"]');
      const section = s.page.locator('section[data-section="context"]');
      assert.equal(await section.locator('img, b, i, script').count(), 0);
      assert.equal(await s.page.locator('[data-group="mcp"] tbody td').first().textContent(), evil);
      assert.ok(((await section.locator('.context-suggestions').textContent()) ?? '').includes('<b>bold</b>'));
      // The backticked name shows as code, as text.
      assert.equal(await section.locator('.context-suggestions code').first().textContent(), evil);
      assert.equal(await s.page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
      await s.send({ type: 'context/failed', message: 'the index worker stopped <u>x</u>' });
      await s.page.waitForSelector('section[data-section="context"][data-state="failed"]');
      assert.equal(
        await s.page.locator('.context-failed').textContent(),
        'Could not count it: the index worker stopped <u>x</u>',
      );
      // The report itself is still there, and there is one context section.
      assert.ok((await s.page.locator('.sessions-table tbody tr').count()) >= 3);
      assert.equal(await s.page.locator('section[data-section="context"]').count(), 1);
      assert.deepEqual(await s.cspViolations(), []);
    } finally {
      await s.close();
    }
  });
});
