import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { SessionComparison } from '../../src/core/sessions/compareSessions';
import type { ProjectGroup, SessionNode } from '../../src/core/sessions/sessionQuery';
import type { SessionsReport } from '../../src/core/sessions/sessionsReport';
import type { AgentTraceApi } from '../../src/extension/main';
import type { SessionsTreeNode } from '../../src/extension/sessions/sessionsTree';
import { payloadClaudeLog } from '../support/hostileCorpus';
import { startLiveSession } from '../support/liveSession.mjs';
import { assertInert } from './inert';
import { waitFor as pollFor } from './waitFor';

// The Agent Sessions view, its commands and the status bar inside the real extension host,
// over the fake home of test/support/fakeHome.mjs (real Claude Code and Codex sessions; the
// workspace settings point agentTrace.sessionRoots at it). The figures are the reader tests'
// independent ones: spotter 149 calls at 98.4% with 11 failed tool calls and 1 retry loop
// (test/reference/claude_code_totals.py), M-Claude 41 calls at 85.5%, 13 failed, 1 loop, Codex
// 9 calls at 83.0% (test/reference/codex_deltas.py).

const root = (): string => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
const home = (): string => path.join(root(), 'home');

/** The shared poll, with the longer wait a first index of the fake home needs. */
const waitFor = <T>(what: string, probe: () => T | undefined | null | false, timeoutMs = 30_000): Promise<T> =>
  pollFor(what, probe, timeoutMs);

let api: AgentTraceApi;

function sessionsOf(groups: ProjectGroup[]): SessionNode[] {
  return groups.flatMap((g) => g.days.flatMap((d) => d.sessions));
}

function nodeFor(key: string): SessionsTreeNode {
  const node = api.sessions.tree.nodeOf(api.sessions.service.current().find((r) => r.key === key)!.id);
  assert.ok(node, `a tree node for ${key}`);
  return node;
}

function item(node: SessionsTreeNode): vscode.TreeItem {
  return api.sessions.tree.getTreeItem(node);
}

suite('Agent Sessions in the real extension host', () => {
  suiteSetup(async () => {
    api = (await vscode.extensions.getExtension('agent-trace.agent-trace-inspector')!.activate()) as AgentTraceApi;
    await vscode.commands.executeCommand('agentTrace.sessions.focus');
    await waitFor('the first index', () => api.sessions.service.ready && api.sessions.service.current().length >= 6);
  });
  teardown(async () => {
    await vscode.commands.executeCommand('agentTrace.sessions.clearFilters');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('the tree: projects by latest activity, then days, sessions with their figures, sub-agents nested', () => {
    const tree = api.sessions.tree;
    const projects = tree.getChildren();
    assert.deepEqual(
      projects.map((p) => item(p).label),
      ['project', 'spotter-4te', 'spotter', 'System32'],
    );
    const spotterProject = projects[1]!;
    const days = tree.getChildren(spotterProject);
    assert.equal(days.length, 1);
    assert.match(String(item(days[0]!).label), /^2026-02-12 · /);
    const [spotter] = tree.getChildren(days[0]);
    const row = item(spotter!);
    // The first prompt typed, clipped short enough to leave the figures room at the default 300 px sidebar.
    assert.match(String(row.label), /^Work on bead spotte…$/);
    assert.ok(String(row.label).length <= 20);
    // Its cost with its two sub-agents, $2.9056013 for the 153 calls by test/reference/cost_reference.mjs, first, and saying so;
    // then 149 calls at 98.4%, 11 failed, 1 loop (claude_code_totals.py, claude_retry_loops.py); 14:11–14:52 is 41 min.
    assert.match(
      String(row.description),
      /^\$2\.91 with 2 sub-agents · 149 calls · hit 98\.4% · 11 failed · 1 loop · \d\d:\d\d · 41 min$/,
    );
    assert.match(String(row.tooltip), /^Work on bead spotter-4te/);
    assert.match(String(row.tooltip), /Tokens: input 11\.7M, cached 11\.6M, appended 185\.4k, output 31\.6k/);
    assert.equal(row.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
    const subs = tree.getChildren(spotter).map((n) => item(n));
    // Sub-agents are titled by the prompt they were given: the label clipped (the figures need the room), the tooltip's first line whole.
    const titles = subs.map((s) => String(s.tooltip).split('\n')[0]!).sort();
    assert.match(titles[0]!, /^compaction agent: Your task is to create a detailed summary of the conversation/);
    assert.match(titles[1]!, /^sub-agent: Search hex\.pm for the latest versions of these Elixir packages/);
    for (const s of subs)
      assert.ok(
        String(s.label).length <= 20 && titles.some((t) => t.startsWith(String(s.label).replace(/…$/, ''))),
        String(s.label),
      );
    assert.match(
      String(subs.find((s) => String(s.label).startsWith('sub-agent'))!.description),
      / · 3 calls · hit 58\.0% · /,
    );
    const loop = item(nodeFor('e5821007-9ca0-4a36-afc0-94da583da0ea'));
    // $3.36867825 by test/reference/cost_reference.mjs (its own price matching over the raw log).
    assert.match(String(loop.description), /^\$3\.37 · 41 calls · hit 85\.5% · 13 failed · 1 loop · /);
    assert.equal(loop.command?.command, 'agentTrace.sessions.open');
  });

  test('filters by agent, retry loops, hit rate and text; the view says what it filters', async () => {
    const keys = (groups: ProjectGroup[]): string[] =>
      sessionsOf(groups)
        .map((n) => n.row.key)
        .sort();
    assert.deepEqual(
      keys(
        (await vscode.commands.executeCommand('agentTrace.sessions.filter', { agents: ['codex'] })) as ProjectGroup[],
      ),
      ['01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73'],
    );
    assert.match(api.sessions.tree.view!.message ?? '', /^Filtered: agent codex$/);
    assert.equal(api.sessions.tree.view!.description, '1 of 4');
    assert.deepEqual(
      keys(
        (await vscode.commands.executeCommand('agentTrace.sessions.filter', { hasRetryLoops: true })) as ProjectGroup[],
      ),
      ['ae4a77f8-aedd-4bc1-888f-c94edc91af04', 'e5821007-9ca0-4a36-afc0-94da583da0ea'],
    );
    assert.deepEqual(
      keys(
        (await vscode.commands.executeCommand('agentTrace.sessions.filter', { hitRateBelow: 0.85 })) as ProjectGroup[],
      ),
      ['01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73', '55604662-cf2a-4331-851a-ec234028f8ca'],
    );
    await vscode.commands.executeCommand('agentTrace.sessions.clearFilters');
    // Text in an error of the M-Claude loop ("File has not been read yet").
    assert.deepEqual(
      keys((await vscode.commands.executeCommand('agentTrace.sessions.search', 'not been read')) as ProjectGroup[]),
      ['e5821007-9ca0-4a36-afc0-94da583da0ea'],
    );
    assert.deepEqual(
      keys((await vscode.commands.executeCommand('agentTrace.sessions.sort', 'calls')) as ProjectGroup[]),
      ['e5821007-9ca0-4a36-afc0-94da583da0ea'],
    );
  });

  test('compare two sessions: figures with deltas, calls aligned, in a panel', async () => {
    const a = nodeFor('e5821007-9ca0-4a36-afc0-94da583da0ea');
    const b = nodeFor('01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73');
    const c = (await vscode.commands.executeCommand('agentTrace.sessions.compare', a, [a, b])) as SessionComparison;
    const f = (id: string) => c.figures.find((x) => x.id === id)!;
    assert.deepEqual([f('calls').a, f('calls').b, f('calls').delta], [41, 9, -32]);
    assert.deepEqual([f('failedToolCalls').a, f('failedToolCalls').b, f('failedToolCalls').favours], [13, 2, 'b']);
    assert.equal(f('cacheHitRate').favours, 'a');
    // Costs by test/reference/cost_reference.mjs: M-Claude $3.36867825, the Codex rollout $0.0893795.
    assert.ok(
      Math.abs(f('cost').a! - 3.36867825) < 1e-6 && Math.abs(f('cost').b! - 0.0893795) < 1e-6,
      JSON.stringify(f('cost')),
    );
    assert.equal(f('cost').favours, 'b');
    assert.equal(c.calls.length, 41);
    await waitFor(
      'the compare panel',
      () => vscode.window.tabGroups.activeTabGroup.activeTab?.label === 'Compare sessions',
    );
  });

  test("several sessions at once: a project's sessions in one report", async () => {
    const projects = api.sessions.tree.getChildren();
    const report = (await vscode.commands.executeCommand('agentTrace.sessions.report', projects[1], [
      projects[1],
    ])) as SessionsReport;
    // The spotter session with its sub-agent (3 calls) and compaction agent (1 call).
    assert.deepEqual([report.sessions, report.threads, report.totals.calls], [1, 3, 153]);
    assert.equal(report.totals.tokens.input, 11746257 + 50496 + 139534);
    // $2.9056013 for the 153 calls by test/reference/cost_reference.mjs.
    assert.ok(Math.abs(report.totals.costUsd! - 2.9056013) < 1e-6, String(report.totals.costUsd));
    // Its cost per commit: the log's folder (/home/USER/projects/…, another machine's) is in no repository
    // here, so the session, with its $2.9056013, is joined to no commit, and the table says why.
    const table = await waitFor('the cost per commit', () => api.sessions.panels.commitTables().at(-1));
    assert.deepEqual([table.commits.length, table.noRepository, table.unjoined.sessions], [0, 1, 1]);
    assert.ok(Math.abs(table.unjoined.usd! - 2.9056013) < 1e-6, String(table.unjoined.usd));
    // Its context anatomy, counted in the index worker: the session, its sub-agent and its compaction run, 153
    // calls, and the input dollars `agent-trace context --json` gives the same log ($2.7122513: output is no part).
    const context = await waitFor('the context anatomy', () => api.sessions.panels.contexts().at(-1), 60_000);
    assert.ok(!('failed' in context), JSON.stringify(context));
    assert.deepEqual([context.across.sessions, context.across.mainSessions, context.across.calls], [3, 1, 153]);
    assert.ok(Math.abs(context.across.inputUsd! - 2.7122513) < 1e-6, String(context.across.inputUsd));
    assert.deepEqual(context.skipped, []);
    const all = (await vscode.commands.executeCommand('agentTrace.sessions.report', undefined, [])) as SessionsReport;
    assert.deepEqual([all.sessions, all.totals.calls], [4, 204]);
  });

  test("a panel's page that posts crafted messages: each is refused and logged, none acted on; the page's own open still works", async () => {
    const projects = api.sessions.tree.getChildren();
    await vscode.commands.executeCommand('agentTrace.sessions.report', projects[1], [projects[1]]);
    await waitFor('the report panel', () =>
      /: 1 session$/.test(vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? ''),
    );
    const panels = api.sessions.panels;
    const tabs = (): string[] => vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => t.label));
    const tabsBefore = tabs();
    const refusedBefore = panels.refusals.length;
    // A real session of the index that this panel does not show (the M-Claude loop is in another project).
    const outside = api.sessions.service.current().find((r) => r.key === 'e5821007-9ca0-4a36-afc0-94da583da0ea')!;
    const crafted: unknown[] = [
      { type: 'open', sessionId: outside.id },
      { type: 'open', sessionId: String(outside.id) },
      { type: 'open', path: outside.path },
      { type: 'open', sessionId: -1 },
      { type: 'open', sessionId: 2 ** 60 },
      { type: 'export', format: '../../../etc/passwd' },
      { type: 'source/revealLine', file: 0, line: 1 },
      { type: 'workbench/runCommand', command: 'workbench.action.files.newUntitledFile' },
      { type: '__proto__' },
      { notAType: true },
      null,
      // A request: the page may send none, so nothing answers it but a refusal.
      { type: 'open', id: 3, params: { sessionId: outside.id } },
      { type: 'log/error', message: 'x'.repeat(200_000) },
    ];
    for (const m of crafted) panels.receiveFromNewestPage(m);
    const refusals = await waitFor(
      'every crafted message refused',
      () => (panels.refusals.length - refusedBefore >= crafted.length ? panels.refusals.slice(refusedBefore) : null),
      10_000,
    );
    assert.equal(refusals.length, crafted.length, refusals.join('\n'));
    assert.equal(refusals[0], `open.sessionId ${outside.id} is not a session this panel shows`);
    assert.ok(
      refusals.some((r) => /^no handler for request "open"$/.test(r)),
      refusals.join('\n'),
    );
    assert.ok(
      refusals.some((r) => /^ignored a message without a string "type"$/.test(r)),
      refusals.join('\n'),
    );
    // Nothing was acted on: no inspector on the outside session, no untitled editor, no save dialog left waiting.
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(tabs(), tabsBefore);
    // The same path with a message the host accepts does open a session: one this panel shows.
    const own = api.sessions.tree.rowsUnder([projects[1]!]).find((r) => r.role === 'main')!;
    panels.receiveFromNewestPage({ type: 'open', sessionId: own.id });
    await waitFor("the panel's own session in the inspector", () => tabs().includes(path.basename(own.path)));
    assert.equal(panels.refusals.length - refusedBefore, crafted.length);
  });

  test('trace text in a title shows as plain text: no icon, no link, no bidi reordering', async () => {
    const source = fs.readFileSync(
      path.join(home(), '.claude/projects/-home-marco-projects-spotter/55604662-cf2a-4331-851a-ec234028f8ca.jsonl'),
      'utf8',
    );
    // The real log with its first prompt replaced by a hostile one.
    const hostile = '$(check) [Run me](command:workbench.action.terminal.sendSequence) \u202eevil';
    const lines = source
      .split('\n')
      .map((l) =>
        l.includes('"mix phx.server')
          ? l.replace(/"content":"mix phx\.server[^"]*"/, `"content":${JSON.stringify(hostile)}`)
          : l,
      );
    const file = path.join(home(), '.claude/projects/-tmp-hostile/0badc0de-0000-4000-8000-000000000001.jsonl');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      lines.join('\n').replace(/55604662-cf2a-4331-851a-ec234028f8ca/g, '0badc0de-0000-4000-8000-000000000001'),
    );
    await vscode.commands.executeCommand('agentTrace.sessions.refresh');
    const node = await waitFor('the hostile session', () => {
      const row = api.sessions.service.current().find((r) => r.key === '0badc0de-0000-4000-8000-000000000001');
      return row ? api.sessions.tree.nodeOf(row.id) : undefined;
    });
    const label = String(item(node).label);
    assert.ok(!label.includes('$(') && !label.includes(']('), label);
    // The label is clipped short (the figures need the room); the tooltip's first line has the whole title, as plain.
    const title = String(item(node).tooltip).split('\n')[0]!;
    assert.ok(label.includes('$\u200b(check)'), label);
    assert.ok(title.includes('$\u200b(check)') && title.includes(']\u200b(command:'), title);
    assert.ok(title.includes('\\u202eevil') && !title.includes('\u202e'), title);
    assert.ok(!String(item(node).tooltip).includes('\u202e'));
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    await vscode.commands.executeCommand('agentTrace.sessions.refresh');
  });

  test('the status bar follows a live session: context, hit rate, cost, and the cache countdown', async () => {
    const file = path.join(home(), '.claude/projects/-tmp-live-demo/5e55e55e-0000-4000-8000-000000000002.jsonl');
    const live = startLiveSession(path.join(root(), 'claude/edit-retry-loop.jsonl'), file, 60);
    await vscode.commands.executeCommand('agentTrace.sessions.refresh');
    const first = await waitFor('the status bar on the live session', () =>
      api.sessions.statusBar.current?.path === file ? api.sessions.statusBar.text : null,
    );
    // The last call of the first 60 lines used 40,509 tokens of Claude Opus 4.5's 200,000-token window: 20%.
    assert.match(first, /^\$\(pulse\) ctx 20% · hit \d+\.\d% · \$\d+\.\d\d · cache 4:\d\d$/);
    const before = api.sessions.statusBar.current!.calls;
    live.append(live.total - live.written);
    await waitFor('the new calls', () => (api.sessions.statusBar.current?.calls ?? 0) > before, 15_000);
    assert.equal(api.sessions.statusBar.current!.calls, 41);
    assert.equal(api.sessions.service.current().find((r) => r.path === file)?.live, true);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  test('a live session crossing its budget turns the status bar red and raises one notification', async () => {
    // The M-Claude log again: its first 60 lines are 15 calls, well under $2; the whole log costs
    // $3.36867825 (test/reference/cost_reference.mjs), so appending the rest crosses a $2 budget once:
    // over by $1.36867825, 68%.
    const config = vscode.workspace.getConfiguration('agentTrace.budget');
    await config.update('perSessionUsd', 2, vscode.ConfigurationTarget.Global);
    try {
      const file = path.join(home(), '.claude/projects/-tmp-budget-demo/5e55e55e-0000-4000-8000-000000000003.jsonl');
      const live = startLiveSession(path.join(root(), 'claude/edit-retry-loop.jsonl'), file, 60);
      await vscode.commands.executeCommand('agentTrace.sessions.refresh');
      await waitFor('the status bar on the live session', () => api.sessions.statusBar.current?.path === file);
      const noticesBefore = api.sessions.statusBar.budgetNotices.length;
      assert.equal(api.sessions.statusBar.budgetState, 'ok');
      live.append(live.total - live.written);
      await waitFor('the budget crossed', () => api.sessions.statusBar.budgetState === 'over', 15_000);
      assert.equal(api.sessions.statusBar.current!.calls, 41);
      // Read again (a refresh, a later change): still one notification.
      await vscode.commands.executeCommand('agentTrace.sessions.refresh');
      await new Promise((r) => setTimeout(r, 1500));
      const notices = api.sessions.statusBar.budgetNotices.slice(noticesBefore);
      assert.deepEqual(notices, [
        'Agent Trace: this session cost $3.37 against a budget of $2.00: over by $1.37 (68%).',
      ]);
      assert.match(api.sessions.statusBar.tooltip!, /Session budget: \$3\.37 of \$2\.00 \(with sub-agents\)\./);
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    } finally {
      await config.update('perSessionUsd', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  test("a live session's plan windows: the Plan Windows view and the status bar count its calls against the limit set", async () => {
    // The whole M-Claude log replayed now: 41 calls, 2,069,302 input tokens (cached included) and 24,363 output
    // (test/reference/claude_code_totals.py), $3.36867825 (test/reference/cost_reference.mjs); against a $40 limit, 8.4%.
    const config = vscode.workspace.getConfiguration('agentTrace.windows.claude');
    await config.update('limit5h', '$40', vscode.ConfigurationTarget.Global);
    const file = path.join(home(), '.claude/projects/-tmp-windows-demo/5e55e55e-0000-4000-8000-000000000004.jsonl');
    try {
      startLiveSession(path.join(root(), 'claude/edit-retry-loop.jsonl'), file, 100_000);
      await vscode.commands.executeCommand('agentTrace.sessions.refresh');
      await waitFor('the status bar on the live session', () => api.sessions.statusBar.current?.path === file);
      const key = api.sessions.statusBar.current!.key;
      const share = await waitFor('the session in an open 5-hour window', () =>
        api.sessions.windows.plans
          .find((p) => p.family === 'claude')
          ?.windows.find((w) => w.kind === '5h' && w.active)
          ?.sessions.find((s) => s.session === key),
      );
      assert.equal(share.calls, 41);
      assert.equal(share.tokens, 2_069_302 + 24_363);
      assert.ok(Math.abs(share.usd! - 3.36867825) < 1e-9, String(share.usd));
      // Alone in its window (the fake home's other sessions are months old), so the window is this session's: 8.4% of $40.
      const open = api.sessions.windows.plans
        .find((p) => p.family === 'claude')!
        .windows.find((w) => w.kind === '5h' && w.active)!;
      assert.equal(open.sessions.length, 1);
      await waitFor('the share in the status bar', () => api.sessions.statusBar.text?.endsWith(' · 5h 8.4%'));
      assert.match(
        api.sessions.statusBar.tooltip!,
        /Claude \(Claude Code\), 5-hour window .* \(open, resets in \d+ h \d\d min\)\nUsed: 2\.09M tokens, \$3\.37 at list price in 41 calls\./,
      );
      assert.match(api.sessions.statusBar.tooltip!, /Limit of \$40\.00: 8\.4%/);
      // The view: the plan, its open windows first, the session under the 5-hour one.
      const tree = api.sessions.windowsTree;
      const plans = tree.getChildren();
      const claude = plans.find((n) => n.kind === 'plan' && n.plan.family === 'claude')!;
      assert.match(String(tree.getTreeItem(claude).description), /^5h 8\.4% · week 2\.09M tokens · resets in /);
      const first = tree.getChildren(claude)[0]!;
      assert.equal(first.kind === 'window' ? first.window.kind : first.kind, '5h');
      assert.match(
        String(tree.getTreeItem(first).description),
        /^2\.09M tokens · \$3\.37 · 41 calls · 8\.4% · resets in \d+ h \d\d min$/,
      );
      const sessions = tree.getChildren(first);
      assert.equal(sessions.length, 1);
      assert.equal(String(tree.getTreeItem(sessions[0]!).description), '100.0% of tokens · $3.37 · 41 calls');
      // A limit it cannot read is said in the view, not thrown.
      await config.update('limit5h', '40 bananas', vscode.ConfigurationTarget.Global);
      await waitFor('the problem shown', () => tree.getChildren().find((n) => n.kind === 'problem'));
      assert.equal(
        tree.getTreeItem(tree.getChildren()[0]!).label,
        'agentTrace.windows.claude.limit5h: "40 bananas" is neither tokens (2M, 500k) nor dollars ($40)',
      );
    } finally {
      await config.update('limit5h', undefined, vscode.ConfigurationTarget.Global);
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });

  test("Codex's own rate_limits beside its windows: the Plan Windows view and the status bar show the server's share and the limit it implies", async () => {
    // The edgerunner rollout (a real Codex 0.144 log) replayed so its last report is a minute old: every
    // "timestamp" and every "resets_at" moved by the same amount, nothing else changed. By hand from its
    // last report (test/unit/cli/windows.test.ts): 29% of the 5-hour window, 38 calls and 8,509,717
    // tokens of ours in it, so a limit of 8,509,717 ÷ 29% = 29,343,852 tokens (28.4M–30.4M for a whole percent).
    const source = fs.readFileSync(path.join(root(), 'codex/edgerunner-code-mode-0.144.1.head558.jsonl'), 'utf8');
    const times = [...source.matchAll(/"timestamp":"([^"]+)"/g)].map((m) => Date.parse(m[1]!));
    const shiftMs = Math.round((Date.now() - 60_000 - Math.max(...times)) / 1000) * 1000;
    const replayed = source
      .replace(
        /"timestamp":"([^"]+)"/g,
        (_m, t: string) => `"timestamp":"${new Date(Date.parse(t) + shiftMs).toISOString()}"`,
      )
      .replace(/"resets_at":(\d+)/g, (_m, s: string) => `"resets_at":${Number(s) + shiftMs / 1000}`);
    const day = new Date().toISOString().slice(0, 10).split('-');
    const file = path.join(
      home(),
      `.codex/sessions/${day.join('/')}/rollout-${day.join('-')}T00-00-00-019f4ce9-5831-7e71-ab0a-24a9d7358aab.jsonl`,
    );
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, replayed);
    try {
      await vscode.commands.executeCommand('agentTrace.sessions.refresh');
      const five = await waitFor("Codex's 5-hour figure", () =>
        api.sessions.windows.server.get('codex')?.find((c) => c.server.kind === '5h'),
      );
      assert.equal(five.server.usedPercent, 29);
      assert.equal(five.planType, 'plus');
      assert.deepEqual([five.calls, five.tokens], [38, 8_509_717]);
      assert.equal(Math.round(five.impliedTokens!.value), 29_343_852);
      // Its dollars are the index's prices at the replayed (today's) dates, so only their ratio is fixed: ÷ 29%.
      assert.ok(Math.abs(five.impliedUsd!.value - five.usd! / 0.29) < 1e-9);
      // The view: Codex's open 5-hour window says the server's share, its tooltip the implied limit.
      const tree = api.sessions.windowsTree;
      const plan = tree.getChildren().find((n) => n.kind === 'plan' && n.plan.family === 'codex')!;
      const window = tree
        .getChildren(plan)
        .find((n) => n.kind === 'window' && n.window.kind === '5h' && n.window.active)!;
      const it = tree.getTreeItem(window);
      assert.match(String(it.description), / · Codex: 29\.0% used$/);
      assert.match(
        String(it.tooltip),
        /Codex's own figure \(plus plan, .*\): 5-hour window 29\.0% used, resets \d\d:\d\d; ours resets 1 h 56 min earlier\.\nOur logs in its window up to then: 8\.51M tokens, \$\d+\.\d\d in 38 calls: a limit of ~29\.3M tokens \(28\.4M tokens–30\.4M tokens: the percent is whole\), ~\$\d+\.\d\d/,
      );
      // The status bar, on this (the newest) session: the same lines in its tooltip.
      await waitFor('the status bar on the Codex session', () => api.sessions.statusBar.current?.path === file);
      await waitFor('the server figure in the status bar tooltip', () =>
        api.sessions.statusBar.tooltip?.includes("Codex's own figure (plus plan"),
      );
      assert.match(api.sessions.statusBar.tooltip!, /a limit of ~29\.3M tokens/);
    } finally {
      fs.rmSync(file, { force: true });
      await vscode.commands.executeCommand('agentTrace.sessions.refresh');
    }
  });

  test('the hostile corpus: every label, description and tooltip of the tree, the status bar and the panel titles stay inert', async () => {
    // The M-Claude log with a payload in every field (test/support/hostileCorpus.ts: the cwd, the model, tool names,
    // error text, the prompt, a 100,000-character title), replayed as a live session in a project folder named like a command link.
    const source = path.join(root(), 'hostile-session.jsonl');
    fs.writeFileSync(source, payloadClaudeLog());
    const file = path.join(
      home(),
      '.claude/projects/-home-[Open](command:workbench.action.files.newUntitledFile)-$(check)/5e55e55e-0bad-4000-8000-000000000003.jsonl',
    );
    startLiveSession(source, file, 100_000);
    await vscode.commands.executeCommand('agentTrace.sessions.refresh');
    const row = await waitFor('the hostile session', () =>
      api.sessions.service.current().find((r) => r.path === file && r.role === 'main'),
    );
    assert.equal(row.calls, 41, 'the payloads leave the structure as it was');
    const tree = api.sessions.tree;
    let seen = 0;
    const walk = (nodes: SessionsTreeNode[]): void => {
      for (const n of nodes) {
        const it = item(n);
        const where = `tree item ${String(it.label).slice(0, 40)}`;
        assertInert(String(it.label), `${where} label`, 200);
        assertInert(String(it.description ?? ''), `${where} description`, 400);
        assertInert(typeof it.tooltip === 'string' ? it.tooltip : (it.tooltip?.value ?? ''), `${where} tooltip`, 3000);
        seen += 1;
        walk(tree.getChildren(n));
      }
    };
    walk(tree.getChildren());
    assert.ok(seen >= 10, `${seen} tree items`);
    assertInert(tree.view!.message ?? '', 'the view message');
    // The Plan Windows view names the session under its window: plain too.
    const windows = api.sessions.windowsTree;
    const key = row.key;
    await waitFor('the hostile session in a plan window', () => api.sessions.windows.rowsByKey.get(key));
    let windowItems = 0;
    const walkWindows = (nodes: ReturnType<typeof windows.getChildren>): void => {
      for (const n of nodes) {
        const it = windows.getTreeItem(n);
        const where = `plan windows item ${String(it.label).slice(0, 40)}`;
        assertInert(String(it.label), `${where} label`, 200);
        assertInert(String(it.description ?? ''), `${where} description`, 400);
        assertInert(typeof it.tooltip === 'string' ? it.tooltip : (it.tooltip?.value ?? ''), `${where} tooltip`, 3000);
        windowItems += 1;
        walkWindows(windows.getChildren(n));
      }
    };
    walkWindows(windows.getChildren());
    assert.ok(windowItems >= 4, `${windowItems} plan windows items: the plan, its two windows, the session`);
    // The status bar follows it (the most recently active session): its own $(pulse) first, nothing from the trace acts.
    await waitFor('the status bar on the hostile session', () => api.sessions.statusBar.current?.path === file);
    assertInert(api.sessions.statusBar.text!, 'status bar text', 120);
    assertInert(api.sessions.statusBar.tooltip!, 'status bar tooltip', 3000);
    // Its project's several-sessions panel and a comparison: the tab titles are plain too.
    const project = tree
      .getChildren()
      .find((p) =>
        tree
          .getChildren(p)
          .some((d) => tree.getChildren(d).some((s) => s.kind === 'session' && s.node.row.id === row.id)),
      )!;
    await vscode.commands.executeCommand('agentTrace.sessions.report', project, [project]);
    const reportTab = await waitFor('the report panel', () => vscode.window.tabGroups.activeTabGroup.activeTab?.label);
    assertInert(reportTab, 'report tab title', 200);
    assert.match(reportTab, /: 1 session$/);
    const other = nodeFor('01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73');
    const mine = tree.nodeOf(row.id)!;
    const c = (await vscode.commands.executeCommand('agentTrace.sessions.compare', mine, [
      mine,
      other,
    ])) as SessionComparison;
    assert.equal(c.calls.length, 41);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    fs.rmSync(source, { force: true });
    await vscode.commands.executeCommand('agentTrace.sessions.refresh');
  });

  test('a sync tells its listeners once when sessions changed, and not at all when nothing did', async () => {
    const service = api.sessions.service;
    // Settle first: the previous test's files are gone, their watchers closed.
    await service.sync(false);
    await service.sync(false);
    let fired = 0;
    const listener = service.onDidChange(() => (fired += 1));
    try {
      await service.sync(false);
      assert.equal(fired, 0, 'nothing changed on disk: no event');
      // A new session appears (a real log under a new session id).
      const id = '5e55e55e-0000-4000-8000-000000000004';
      const file = path.join(home(), '.claude/projects/-tmp-once/', `${id}.jsonl`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(
        file,
        fs
          .readFileSync(path.join(root(), 'claude/edit-retry-loop.jsonl'), 'utf8')
          .replaceAll('e5821007-9ca0-4a36-afc0-94da583da0ea', id),
      );
      await service.sync(false);
      assert.equal(fired, 1, 'one sync that read a new session: one event');
      assert.ok(
        service.current().some((r) => r.key === id),
        'the new session is in the rows when the event fires',
      );
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    } finally {
      listener.dispose();
    }
  });
});
