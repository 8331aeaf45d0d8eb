import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { NAMED_QUERIES } from '../../src/core/team/namedQueries';
import { ensureBuilt, repoRoot } from '../support/helpers';
import { launchChromium, results } from '../support/inspectorHarness';
import { TEAM_SAMPLES } from '../support/teamSamples';

// agent-trace team-report over a Parquet folder exported from the real samples, opened from
// disk in Chromium: the totals it shows equal the sums of analyze --json over the same
// traces (an independent path: the analyses on the parsed traces, no Parquet, no DuckDB),
// every named query has its section, and a hostile user name is shown as text under the
// report's strict CSP (no script runs, nothing is fetched).

const cli = join(repoRoot, 'dist/cli.js');
const HOSTILE_USER = '</script><img src=x onerror=alert(1)><!-- & "quoted"';

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Analyzed {
  sessions: Array<{ llmCalls: number; toolCalls: { total: number }; cost: { totalUsd: number | null } }>;
}

describe('agent-trace team-report in Chromium', () => {
  let browser: Browser;
  let dir: string;

  before(async () => {
    ensureBuilt(cli);
    browser = await launchChromium();
    dir = mkdtempSync(join(tmpdir(), 'team-report-'));
  });
  after(async () => {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('renders the totals, the sessions and every named query from an export of the real samples; totals equal analyze --json sums', async () => {
    const out = join(dir, 'export');
    const x = run(
      'export',
      '--to',
      'parquet',
      '-o',
      out,
      '--plain-names',
      '--user',
      HOSTILE_USER,
      '--machine',
      'ci',
      ...TEAM_SAMPLES,
    );
    assert.equal(x.code, 0, x.stderr);
    const file = join(dir, 'team.html');
    const r = run('team-report', out, '-o', file);
    assert.equal(r.code, 0, r.stderr);

    // The expected figures: analyze --json on each sample, summed by hand here.
    let sessions = 0;
    let calls = 0;
    let tools = 0;
    let usd = 0;
    for (const sample of TEAM_SAMPLES) {
      const a = JSON.parse(run('analyze', sample, '--json').stdout) as Analyzed;
      sessions += a.sessions.length;
      for (const s of a.sessions) {
        calls += s.llmCalls;
        tools += s.toolCalls.total;
        usd += s.cost.totalUsd ?? 0;
      }
    }
    assert.match(
      r.stderr,
      new RegExp(`: ${sessions} sessions, ${calls} LLM calls, ${NAMED_QUERIES.length} named queries`),
    );

    const html = readFileSync(file, 'utf8');
    assert.ok(!html.includes(HOSTILE_USER), 'the user name is never written into the HTML as it is');
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    const pageErrors: string[] = [];
    const requests: string[] = [];
    const dialogs: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('request', (q) => requests.push(q.url()));
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.addInitScript(
      "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI))",
    );
    await page.goto(`file://${file}`);
    await page.waitForFunction(() => document.body.dataset['ready'] !== undefined);
    assert.equal(await page.evaluate(() => document.body.dataset['ready']), 'true');

    const totals = await page.evaluate(() =>
      Object.fromEntries(
        Array.from(document.querySelectorAll<HTMLElement>('[data-total]')).map((e) => [
          e.dataset['total']!,
          Number(e.dataset['value']),
        ]),
      ),
    );
    assert.equal(totals['sessions'], sessions, 'sessions');
    assert.equal(totals['llm_calls'], calls, 'LLM calls');
    assert.equal(totals['tool_calls'], tools, 'tool calls');
    assert.ok(Math.abs(totals['cost_usd']! - usd) <= 1e-9 * usd, `cost ${totals['cost_usd']} ≠ ${usd}`);

    // The several-sessions view: every session (fewer than the 500 it lists), their calls summing to the total.
    const listed = await page.evaluate(() =>
      Array.from(document.querySelectorAll<HTMLElement>('.team-sessions tbody tr')).map((tr) => ({
        user: tr.querySelector<HTMLElement>('[data-column="user"]')!.textContent,
        calls: Number(tr.querySelector<HTMLElement>('[data-column="llm_calls"]')!.dataset['value']),
      })),
    );
    assert.equal(listed.length, sessions);
    assert.equal(
      listed.reduce((n, s) => n + s.calls, 0),
      calls,
    );
    assert.ok(
      listed.every((s) => s.user === HOSTILE_USER),
      'the hostile user name shows as text',
    );
    assert.equal(await page.locator('img').count(), 0, 'no element from trace text');

    const sections = await page.evaluate(() =>
      Array.from(document.querySelectorAll<HTMLElement>('[data-query]')).map((s) => s.dataset['query']),
    );
    assert.deepEqual(
      sections,
      NAMED_QUERIES.map((q) => q.name),
    );
    // One named query's figure against the same analyze sums: cost-by-day's calls add up to every LLM call.
    const byDay = await page.evaluate(() =>
      Array.from(document.querySelectorAll<HTMLElement>('[data-query="cost-by-day"] [data-column="calls"]')).map((c) =>
        Number(c.dataset['value']),
      ),
    );
    assert.equal(
      byDay.reduce((n, v) => n + v, 0),
      calls,
    );

    await page.screenshot({ path: join(results, 'team-report.png'), fullPage: false });
    assert.deepEqual(consoleErrors, [], 'no console error (CSP violations included)');
    assert.deepEqual(pageErrors, [], 'no page error');
    assert.deepEqual(dialogs, [], 'no script ran from trace text');
    assert.deepEqual(requests, [`file://${file}`], 'no request but the file itself');
    await context.close();
  });
});
