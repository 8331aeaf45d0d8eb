import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { compareSessions } from '../../../../src/core/sessions/compareSessions';
import { groupSessions, matchesFilter, parseSince } from '../../../../src/core/sessions/sessionQuery';
import type { SessionRow } from '../../../../src/core/sessions/sessionQuery';
import { indexRecords } from '../../../../src/core/sessions/sessionRecord';
import type { CallRecord } from '../../../../src/core/sessions/sessionRecord';
import { buildSessionsReport, csvCell, distribution, reportCsv } from '../../../../src/core/sessions/sessionsReport';
import { EDIT_LOOP, fixtures, parseFile, REJECTIONS, SPOTTER } from '../../../support/helpers';

// Expected figures come from the independent references: test/reference/claude_code_totals.py on
// each Claude Code log and sub-agent log, test/reference/codex_deltas.py on the Codex rollout.
const CODEX = join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl');
const REF = {
  spotter: { calls: 149, input: 11746257, cached: 11560832, output: 31625 },
  subagent: { calls: 3, input: 50496, cached: 29274, output: 7 },
  compaction: { calls: 1, input: 139534, cached: 17842, output: 8 },
  editLoop: { calls: 41, input: 2069302, cached: 1768739, output: 24363 },
  rejections: { calls: 1, input: 25353, cached: 11515, output: 13 },
  codex: { calls: 9, input: 95819, cached: 79488, output: 1912 },
};

const calls = new Map<number, CallRecord[]>();

async function rowsOf(path: string, fileId: number, project: string, firstId: number): Promise<SessionRow[]> {
  const parsed = await parseFile(path);
  return indexRecords(parsed).map(({ session, calls: c }, i) => {
    calls.set(firstId + i, c);
    return {
      ...session,
      id: firstId + i,
      fileId,
      path,
      agentId: parsed.model.format!,
      project,
      fileMtimeMs: 0,
      lastWriteMs: 0,
      live: false,
      fileStatus: 'ok' as const,
      problem: null,
    };
  });
}

async function allRows(): Promise<SessionRow[]> {
  return [
    ...(await rowsOf(SPOTTER, 1, '/p/spotter', 10)),
    ...(await rowsOf(EDIT_LOOP, 2, 'C:\\Windows\\System32', 20)),
    ...(await rowsOf(REJECTIONS, 3, '/p/spotter', 30)),
    ...(await rowsOf(CODEX, 4, '/workspace/project', 40)),
  ];
}

describe('several sessions at once', () => {
  it('sums every session with its sub-agents, and the combined ratios are ratios of the sums', async () => {
    const report = buildSessionsReport(await allRows());
    const all = Object.values(REF);
    const sum = (k: 'calls' | 'input' | 'cached' | 'output'): number => all.reduce((n, r) => n + r[k], 0);
    assert.equal(report.sessions, 4);
    assert.equal(report.threads, 6);
    assert.equal(report.totals.calls, sum('calls'));
    assert.equal(report.totals.tokens.input, sum('input'));
    assert.equal(report.totals.tokens.cached, sum('cached'));
    assert.equal(report.combined.cacheHitRate, sum('cached') / sum('input'));
    assert.equal(report.combined.rawInputToOutput, sum('input') / sum('output'));
    // The spotter session's row holds its sub-agent and compaction agent.
    const spotter = report.rows.find((r) => r.path === SPOTTER)!;
    assert.equal(spotter.calls, REF.spotter.calls + REF.subagent.calls + REF.compaction.calls);
    assert.equal(spotter.subagents, 2);
    assert.equal(
      spotter.cacheHitRate,
      (REF.spotter.cached + REF.subagent.cached + REF.compaction.cached) /
        (REF.spotter.input + REF.subagent.input + REF.compaction.input),
    );
    // Nothing is priced yet: cost stays unknown, never $0.
    assert.equal(report.totals.costUsd, null);
    assert.equal(report.totals.unpricedCalls, sum('calls'));
  });

  it('spreads the per-session hit rates and places them against the published 84.6–99.5%', async () => {
    const report = buildSessionsReport(await allRows());
    const d = report.distributions.cacheHitRate;
    const spotter =
      (REF.spotter.cached + REF.subagent.cached + REF.compaction.cached) /
      (REF.spotter.input + REF.subagent.input + REF.compaction.input);
    const sorted = [
      REF.rejections.cached / REF.rejections.input,
      REF.codex.cached / REF.codex.input,
      REF.editLoop.cached / REF.editLoop.input,
      spotter,
    ].sort((a, b) => a - b);
    assert.deepEqual([d.count, d.min, d.max], [4, sorted[0], sorted[3]]);
    assert.equal(d.median, (sorted[1]! + sorted[2]!) / 2);
    // 45.4% and 82.96% are below the range, 85.5% and 97.2% within.
    assert.deepEqual([d.range!.below, d.range!.within, d.range!.above], [2, 2, 0]);
    assert.deepEqual(
      report.distributions.calls.histogram.reduce((n, b) => n + b.count, 0),
      4,
    );
  });

  it('histograms cover min to max in equal bins', () => {
    const d = distribution([1, 2, 3, 4, 10], null);
    assert.equal(d.histogram.length, 5);
    // Five bins of width 1.8 from 1: [1, 2.8) holds 1 and 2, [2.8, 4.6) holds 3 and 4, the last holds 10.
    assert.deepEqual(
      d.histogram.map((b) => b.count),
      [2, 2, 0, 0, 1],
    );
    assert.deepEqual([d.histogram[0]!.from, d.histogram[4]!.to], [1, 10]);
    assert.deepEqual(distribution([], null).histogram, []);
  });

  it('exports CSV a spreadsheet cannot run: formulas in trace text are quoted and prefixed', async () => {
    const rows = await allRows();
    rows[0]!.title = '=HYPERLINK("http://x","click")';
    const csv = reportCsv(buildSessionsReport(rows));
    const lines = csv.trimEnd().split('\n');
    assert.equal(lines.length, 5);
    assert.match(lines[0]!, /^path,agent,project,title,started,/);
    assert.ok(csv.includes(`"'=HYPERLINK(""http://x"",""click"")"`));
    assert.equal(csvCell('-2+3'), `"'-2+3"`);
    assert.equal(csvCell(null), '');
  });
});

describe('comparing two sessions', () => {
  it('gives figures with B − A and which side the change favours, and aligns the calls', async () => {
    const rows = await allRows();
    const loop = rows.find((r) => r.path === EDIT_LOOP)!;
    const codex = rows.find((r) => r.path === CODEX)!;
    const c = compareSessions(loop, calls.get(loop.id)!, codex, calls.get(codex.id)!);
    const f = (id: string) => c.figures.find((x) => x.id === id)!;
    assert.deepEqual([f('calls').a, f('calls').b, f('calls').delta], [41, 9, -32]);
    assert.equal(
      f('cacheHitRate').delta,
      REF.codex.cached / REF.codex.input - REF.editLoop.cached / REF.editLoop.input,
    );
    assert.equal(f('cacheHitRate').favours, 'a', 'the M-Claude session kept more of its cache');
    assert.equal(f('failedToolCalls').favours, 'b', '2 failed calls against 13');
    assert.equal(f('retryLoops').favours, 'b');
    assert.equal(f('cost').delta, null, 'unknown costs have no difference');
    assert.equal(c.calls.length, 41);
    assert.equal(c.calls[8]!.b?.index, 8);
    assert.equal(c.calls[9]!.b, null, 'past the shorter session, its side is empty');
    assert.equal(c.calls.filter((x) => x.a?.inLoop).length, loop.callsInLoops);
  });
});

describe('filters and grouping', () => {
  it('filters by agent, project, loops, hit rate and time; unknown figures never match a threshold', async () => {
    const rows = await allRows();
    const mains = rows.filter((r) => r.role === 'main');
    const keys = (f: Parameters<typeof matchesFilter>[1]): string[] =>
      mains
        .filter((r) => matchesFilter(r, f))
        .map((r) => r.agentId + ':' + r.calls)
        .sort();
    assert.deepEqual(keys({ agents: ['codex'] }), ['codex:9']);
    assert.deepEqual(keys({ projects: ['SPOTTER'] }), ['claude-code:1', 'claude-code:149']);
    assert.deepEqual(keys({ hasRetryLoops: true }), ['claude-code:149', 'claude-code:41']);
    assert.deepEqual(keys({ hitRateBelow: 0.85 }), ['claude-code:1', 'codex:9']);
    assert.deepEqual(keys({ costAboveUsd: 0 }), [], 'cost unknown is not above $0');
    assert.deepEqual(keys({ sinceMs: Date.parse('2026-03-01T00:00:00Z') }), ['codex:9']);
  });

  it('groups by project (latest first), then day, with sub-agents nested under their session', async () => {
    const groups = groupSessions(await allRows(), 'newest');
    assert.deepEqual(
      groups.map((g) => g.project),
      ['/workspace/project', '/p/spotter', 'C:\\Windows\\System32'],
    );
    const spotter = groups[1]!;
    assert.equal(spotter.sessionCount, 2);
    assert.equal(spotter.days.length, 2, 'the two spotter sessions ran on different days');
    const main = spotter.days[0]!.sessions[0]!;
    assert.equal(main.row.calls, 149);
    assert.deepEqual(main.children.map((c) => c.row.key).sort(), ['aac57f5', 'acompact-946d2b']);
  });

  it('reads --since as a duration back from now or a local date', () => {
    const now = Date.parse('2026-03-21T12:00:00Z');
    assert.equal(parseSince('7d', now), now - 7 * 86_400_000);
    assert.equal(parseSince('12h', now), now - 12 * 3_600_000);
    assert.equal(parseSince('30m', now), now - 30 * 60_000);
    assert.equal(parseSince('2w', now), now - 14 * 86_400_000);
    assert.equal(parseSince('2026-03-01', now), new Date(2026, 2, 1).getTime());
    assert.equal(parseSince('yesterday', now), null);
  });
});
