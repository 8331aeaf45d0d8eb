import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { PeriodGroup, ProjectGroup } from '../../src/core/sessions/sessionQuery';
import type { AgentTraceApi } from '../../src/extension/main';
import type { SessionsTreeNode } from '../../src/extension/sessions/sessionsTree';
import { waitFor } from './waitFor';

// The host side of a new user's first minutes, inside the real extension host, over the
// workspace of test/support/workspace.mjs (the bundled sample, the M-Claude log, the fake home
// of real sessions). Figures: test/reference/canonical_scopes.py and cost_reference.mjs on the
// sample; cost_reference.mjs on the fake home's logs ($2.9056013 for the spotter session's 153
// calls, $3.36867825 for the M-Claude log, $0.1444475 for user-rejections, $0.0893795 for Codex).

const root = (): vscode.Uri => vscode.workspace.workspaceFolders![0]!.uri;
const file = (rel: string): vscode.Uri => vscode.Uri.joinPath(root(), ...rel.split('/'));

let api: AgentTraceApi;
const tree = (): AgentTraceApi['sessions']['tree'] => api.sessions.tree;
const item = (n: SessionsTreeNode): vscode.TreeItem => tree().getTreeItem(n);

async function setSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration('agentTrace').update(key, value, vscode.ConfigurationTarget.Workspace);
}

suite('The first minutes: host side', () => {
  suiteSetup(async () => {
    api = (await vscode.extensions.getExtension('agent-trace.agent-trace-inspector')!.activate()) as AgentTraceApi;
    await vscode.commands.executeCommand('agentTrace.sessions.focus');
    await waitFor(
      'the first index',
      () => api.sessions.service.ready && api.sessions.service.current().length >= 6,
      60_000,
    );
  });
  teardown(async () => {
    await vscode.commands.executeCommand('agentTrace.sessions.clearFilters');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test("every day's total equals the sum of the costs its rows show (each with its sub-agents)", () => {
    const costOf = (text: string): number => Number(/^\$(\d+\.\d\d)/.exec(text)?.[1] ?? NaN);
    let days = 0;
    for (const project of tree().getChildren()) {
      for (const day of tree().getChildren(project)) {
        const total = /· \$(\d+\.\d\d)$/.exec(String(item(day).description))?.[1];
        const rows = tree()
          .getChildren(day)
          .map((s) => costOf(String(item(s).description)));
        if (total === undefined || rows.some(Number.isNaN)) continue;
        days += 1;
        // Rounded to cents on both sides: within a cent per row.
        assert.ok(
          Math.abs(Number(total) - rows.reduce((a, b) => a + b, 0)) <= 0.01 * rows.length,
          `${String(item(day).label)}: ${total} vs ${rows.join(' + ')}`,
        );
      }
    }
    assert.ok(days >= 4, `${days} days with costs`);
  });

  test('the Filter command given a tree node (what a title-bar button gets) opens the filter; the search stays', async () => {
    await vscode.commands.executeCommand('agentTrace.sessions.search', 'not been read');
    assert.equal(tree().currentFilter.text, 'not been read');
    const node = tree().getChildren()[0]!;
    // The command waits on its quick pick: not awaited, then the pick is closed.
    const running = vscode.commands.executeCommand('agentTrace.sessions.filter', node);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(tree().currentFilter.text, 'not been read', 'a node is not a filter');
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    await running;
    assert.equal(tree().currentFilter.text, 'not been read');
    assert.match(tree().view!.message ?? '', /^Filtered: text "not been read"$/);
    // A plain object with a filter's fields still sets the filter (keybindings, tests, other extensions).
    await vscode.commands.executeCommand('agentTrace.sessions.filter', { agents: ['codex'] });
    assert.deepEqual(tree().currentFilter, { agents: ['codex'] });
  });

  test('grouped by recency: periods at the top, sessions under them with their sub-agents; back by project', async () => {
    await vscode.commands.executeCommand('agentTrace.sessions.groupBy', 'recency');
    try {
      const periods = tree().getChildren();
      assert.ok(periods.length > 0 && periods.every((p) => p.kind === 'period'), periods.map((p) => p.kind).join());
      const older = periods.find((p) => p.kind === 'period' && p.group.period === 'older')!;
      assert.equal(item(older).label, 'Older');
      // The fake home's four sessions are from 2026-01 to 2026-03: older than a week whatever day the test runs.
      const keys = (older as { group: PeriodGroup }).group.sessions.map((n) => n.row.key);
      for (const k of [
        'ae4a77f8-aedd-4bc1-888f-c94edc91af04',
        'e5821007-9ca0-4a36-afc0-94da583da0ea',
        '55604662-cf2a-4331-851a-ec234028f8ca',
        '01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73',
      ])
        assert.ok(keys.includes(k), k);
      const spotter = tree()
        .getChildren(older)
        .find((n) => n.kind === 'session' && n.node.row.key === 'ae4a77f8-aedd-4bc1-888f-c94edc91af04')!;
      assert.equal(tree().getChildren(spotter).length, 2, 'its two sub-agents under it');
      // The flat rows name their project and the day.
      assert.match(
        String(item(spotter).description),
        /^\$2\.91 with 2 sub-agents · 149 calls · .* · 2026-02-12 \d\d:\d\d · 41 min · spotter-4te$/,
      );
      assert.deepEqual(tree().getParent(tree().getChildren(spotter)[0]!), spotter);
      assert.equal(tree().getParent(spotter)?.kind, 'period');
      assert.equal(
        vscode.workspace.getConfiguration('agentTrace').get('sessions.groupBy'),
        'recency',
        'the choice is kept',
      );
    } finally {
      await vscode.commands.executeCommand('agentTrace.sessions.groupBy', 'project');
      await vscode.workspace
        .getConfiguration('agentTrace')
        .update('sessions.groupBy', undefined, vscode.ConfigurationTarget.Global);
    }
    assert.ok(
      tree()
        .getChildren()
        .every((p) => p.kind === 'project'),
    );
    assert.ok((tree().currentGroups() as ProjectGroup[]).length >= 4);
  });

  test('agentTrace.problems.retryLoops off takes the retry loops out of the Problems view; on brings them back', async () => {
    const uri = file('claude/edit-retry-loop.jsonl');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
    const loops = (): vscode.Diagnostic[] =>
      vscode.languages.getDiagnostics(uri).filter((d) => d.code === 'retry-loop');
    // The M-Claude log's one loop: four failing Edit/Write calls on one file.
    await waitFor('the retry-loop warning', () => loops().length === 1);
    try {
      await setSetting('problems.retryLoops', false);
      await waitFor('no retry-loop warning', () => loops().length === 0);
    } finally {
      await setSetting('problems.retryLoops', undefined);
    }
    await waitFor('the warning back', () => loops().length === 1);
  });

  test('Open Sample Trace opens the sample from the extension\'s own folder in the inspector, not "live" however new its file', async () => {
    // Installing the extension writes the sample with the time of the install: as if an agent had just written it.
    const sample = vscode.Uri.joinPath(
      vscode.extensions.getExtension('agent-trace.agent-trace-inspector')!.extensionUri,
      'samples',
      'claude-code-sessions.trace.jsonl',
    );
    const now = new Date();
    fs.utimesSync(sample.fsPath, now, now);
    const uri = (await vscode.commands.executeCommand('agentTrace.openSample')) as vscode.Uri;
    assert.ok(
      uri.fsPath.startsWith(vscode.extensions.getExtension('agent-trace.agent-trace-inspector')!.extensionUri.fsPath),
      uri.fsPath,
    );
    const input = await waitFor('the inspector', () => {
      const i = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
      return i instanceof vscode.TabInputCustom ? i : null;
    });
    assert.equal(input.uri.toString(), uri.toString());
    const doc = await waitFor('its document', () => api.inspector.documentFor(uri));
    const result = await doc.result;
    assert.ok('header' in result, 'read');
    // Two main sessions in a file with a name of its own: the heading keeps the file's name.
    assert.equal(result.header.title, null);
    assert.equal(result.header.sessionCount, 3);
    assert.equal(doc.lastGrowthMs, null, 'no "live" badge on the shipped sample');
  });

  test("a file named by its UUID is headed (and, from VS Code 1.106, tabbed) by its session's title", async () => {
    const uri = file('claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl');
    await vscode.commands.executeCommand('vscode.openWith', uri, 'agentTrace.inspectorAny');
    const doc = await waitFor('its document', () => api.inspector.documentFor(uri));
    const result = await doc.result;
    assert.ok('header' in result, 'read');
    // Its first typed prompt (test/reference/claude_sessions.py lists the typed prompts).
    assert.match(
      result.header.title ?? '',
      /^Work on bead spotter-4te\. Run bd show spotter-4te to see the issue details/,
    );
  });
});
