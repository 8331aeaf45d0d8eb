import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import {
  compareRows,
  groupByPeriod,
  groupSessions,
  isLive,
  LIVE_WINDOW_MS,
  matchesFilter,
  nextLiveExpiry,
  periodOf,
  threadCosts,
} from '../../../../src/core/sessions/sessionQuery';
import type { SessionRow } from '../../../../src/core/sessions/sessionQuery';
import { indexRecords } from '../../../../src/core/sessions/sessionRecord';
import {
  projectLabel,
  sessionFigures,
  sessionLabel,
  sessionTooltip,
  TREE_LABEL_MAX,
} from '../../../../src/core/sessions/sessionText';
import { EDIT_LOOP, fixtures, parseFile, repoRoot, SPOTTER } from '../../../support/helpers';

// The Agent Sessions tree's figures on real sessions. Costs come from test/reference/cost_reference.mjs
// (its own price matching over the raw logs), run again here on each file: the spotter log read with
// its two sub-agent logs, and each sub-agent log alone.

const SUBAGENTS = join(fixtures, 'claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents');
const reference = (files: string[]): Array<{ file: string; calls: number; totalUsd: number }> =>
  JSON.parse(
    execFileSync(process.execPath, [join(repoRoot, 'test/reference/cost_reference.mjs'), ...files], {
      cwd: repoRoot,
      encoding: 'utf8',
    }),
  ) as Array<{ file: string; calls: number; totalUsd: number }>;

async function rowsOf(
  path: string,
  fileId: number,
  project: string,
  firstId: number,
  whenMs = 0,
): Promise<SessionRow[]> {
  const parsed = await parseFile(path);
  return indexRecords(parsed, {}, createPriceBook()).map(({ session }, i) => ({
    ...session,
    id: firstId + i,
    fileId,
    path,
    agentId: 'claude-code',
    project,
    fileMtimeMs: whenMs,
    lastWriteMs: whenMs,
    live: false,
    fileStatus: 'ok' as const,
    problem: null,
  }));
}

const near = (actual: number | null, expected: number, what: string): void =>
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`);

describe("a session row's cost includes its sub-agents, and says so", async () => {
  const [whole, task, compaction] = reference([
    SPOTTER,
    join(SUBAGENTS, 'agent-aac57f5.jsonl'),
    join(SUBAGENTS, 'agent-acompact-946d2b.jsonl'),
  ]);
  const spotter = await rowsOf(SPOTTER, 1, '/home/USER/projects/spotter-worktrees/spotter-4te', 10);
  const loop = await rowsOf(EDIT_LOOP, 2, 'C:\\Windows\\System32', 20);
  const main = spotter.find((r) => r.role === 'main')!;

  it("the main row's thread cost is the whole log's (153 calls), its own cost the log less its two sub-agents", () => {
    assert.equal(whole!.calls, 153);
    const costs = threadCosts([...spotter, ...loop]);
    const t = costs.get(main.id)!;
    near(t.usd, whole!.totalUsd, 'with sub-agents');
    near(t.ownUsd, whole!.totalUsd - task!.totalUsd - compaction!.totalUsd, 'own');
    assert.equal(t.subAgents, 2);
    // A row without sub-agents: its own cost, the M-Claude log's.
    assert.equal(costs.get(loop[0]!.id)!.subAgents, 0);
    near(costs.get(loop[0]!.id)!.usd, reference([EDIT_LOOP])[0]!.totalUsd, 'M-Claude');
  });

  it("the day's total is the sum of the rows it shows", () => {
    const groups = groupSessions([...spotter], 'newest');
    const day = groups[0]!.days[0]!;
    assert.equal(day.sessions.length, 1);
    near(day.sessions[0]!.cost.usd, whole!.totalUsd, 'the one row of the day');
  });

  it('the description leads with the cost and says it includes the sub-agents; the tooltip gives both', () => {
    const node = groupSessions(spotter, 'newest')[0]!.days[0]!.sessions[0]!;
    const text = sessionFigures(main, { cost: node.cost, nowMs: 0 });
    // $2.9056013 → "$2.91"; 149 calls at 98.4% and 11 failed, 1 loop: test/reference/claude_code_totals.py and claude_retry_loops.py.
    assert.match(text, /^\$2\.91 with 2 sub-agents · 149 calls · hit 98\.4% · 11 failed · 1 loop · /);
    const tip = sessionTooltip(main, { cost: node.cost, nowMs: 0 });
    assert.match(tip, /^Cost with its 2 sub-agents: \$2\.91; its own calls: \$2\.05$/m);
    assert.match(
      sessionFigures(loop[0]!, { cost: threadCosts(loop).get(loop[0]!.id)!, nowMs: 0 }),
      /^\$3\.37 · 41 calls · hit 85\.5% · 13 failed · 1 loop · /,
    );
  });

  it('sorting by cost and filtering by cost use the cost with sub-agents', () => {
    // Hand-made: A costs $1 itself and its sub-agent $3 ($4 in all); B costs $2. By own cost B leads, by the rows' cost A.
    const base = loop[0]!;
    const a: SessionRow = { ...base, id: 1, fileId: 1, key: 'a', parentKey: null, role: 'main', costUsd: 1 };
    const aSub: SessionRow = { ...base, id: 2, fileId: 1, key: 'a-sub', parentKey: 'a', role: 'subagent', costUsd: 3 };
    const b: SessionRow = { ...base, id: 3, fileId: 2, key: 'b', parentKey: null, role: 'main', costUsd: 2 };
    const order = groupSessions([b, a, aSub], 'cost')[0]!.days[0]!.sessions.map((n) => n.row.key);
    assert.deepEqual(order, ['a', 'b']);
    assert.deepEqual(
      [b, a].sort(compareRows('cost')).map((r) => r.key),
      ['b', 'a'],
      'own cost alone would put B first',
    );
    const costs = threadCosts([a, aSub, b]);
    assert.equal(matchesFilter(a, { costAboveUsd: 3 }, costs.get(a.id)!.usd), true);
    assert.equal(matchesFilter(b, { costAboveUsd: 3 }, costs.get(b.id)!.usd), false);
  });
});

describe('live: written in the last two minutes, at the moment of asking', () => {
  const row = { fileStatus: 'ok' as const, lastWriteMs: 1_000_000 };
  it('is live until the window passes, whatever was read since', () => {
    assert.equal(isLive(row, 1_000_000 + LIVE_WINDOW_MS - 1), true);
    assert.equal(isLive(row, 1_000_000 + LIVE_WINDOW_MS), false);
    assert.equal(isLive({ ...row, fileStatus: 'deleted' }, 1_000_000), false);
  });
  it("the next expiry is the earliest live row's", () => {
    assert.equal(
      nextLiveExpiry(
        [row, { fileStatus: 'ok', lastWriteMs: 1_030_000 }, { fileStatus: 'ok', lastWriteMs: 0 }],
        1_060_000,
      ),
      1_000_000 + LIVE_WINDOW_MS,
    );
    assert.equal(nextLiveExpiry([row], 1_000_000 + LIVE_WINDOW_MS), null);
  });
});

describe('the flat grouping: today, yesterday, this week, older', () => {
  // Local times, so the periods hold in any time zone.
  const now = new Date(2026, 11, 1, 10, 0).getTime();
  it('periods by local day', () => {
    assert.equal(periodOf(new Date(2026, 11, 1, 0, 5).getTime(), now), 'today');
    assert.equal(periodOf(new Date(2026, 10, 30, 23, 59).getTime(), now), 'yesterday');
    assert.equal(periodOf(new Date(2026, 10, 25, 12, 0).getTime(), now), 'week');
    assert.equal(periodOf(new Date(2026, 10, 24, 12, 0).getTime(), now), 'older');
    assert.equal(periodOf(now + 3_600_000, now), 'today');
  });
  it('sessions land by when they were last active, sub-agents under their session, empty periods left out', async () => {
    const spotter = await rowsOf(SPOTTER, 1, '/p/spotter', 10);
    const loop = await rowsOf(EDIT_LOOP, 2, 'C:\\Windows\\System32', 20);
    // The logs' own dates are 2026-02 and 2026-01: both older than a week before 2026-12-01.
    const periods = groupByPeriod([...spotter, ...loop], 'newest', now);
    assert.deepEqual(
      periods.map((p) => p.period),
      ['older'],
    );
    assert.deepEqual(
      periods[0]!.sessions.map((n) => [n.row.key, n.children.length]),
      [
        ['ae4a77f8-aedd-4bc1-888f-c94edc91af04', 2],
        ['e5821007-9ca0-4a36-afc0-94da583da0ea', 0],
      ],
    );
    // Seen from the spotter session's last day, it is today and the M-Claude log (2026-01-01) older.
    const periods2 = groupByPeriod([...spotter, ...loop], 'newest', spotter[0]!.endMs!);
    assert.deepEqual(
      periods2.map((p) => [p.period, p.sessions.length]),
      [
        ['today', 1],
        ['older', 1],
      ],
    );
  });
});

describe('labels', async () => {
  const loop = await rowsOf(EDIT_LOOP, 2, 'C:\\Windows\\System32', 20);
  it("a row whose log has no title says what it is and when, never the file's UUID", () => {
    const untitled: SessionRow = {
      ...loop[0]!,
      title: null,
      path: '/home/me/.claude/projects/x/e5821007-9ca0-4a36-afc0-94da583da0ea.jsonl',
      startMs: new Date(2026, 0, 1, 22, 32).getTime(),
    };
    assert.equal(sessionLabel(untitled), 'Session of 2026-01-01 22:32');
    assert.equal(sessionLabel({ ...untitled, path: '/tmp/my-notes.jsonl' }), 'my-notes.jsonl');
  });
  it('tree labels are short enough to leave the figures room; a hash-named project shows its first digits', () => {
    const long: SessionRow = { ...loop[0]!, title: 'x'.repeat(200) };
    assert.equal(sessionLabel(long, TREE_LABEL_MAX).length, TREE_LABEL_MAX);
    assert.equal(
      projectLabel('/home/me/.gemini/tmp/f53b52ad6d21cceb72dfa78fb67614fe14f110c58e68412b01508d6a485501c3'),
      'project f53b52ad…',
    );
    assert.equal(projectLabel('/app'), 'app');
  });
});
