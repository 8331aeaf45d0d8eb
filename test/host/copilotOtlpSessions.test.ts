import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TraceReport } from '../../src/core/report/traceReport';
import type { AgentTraceApi } from '../../src/extension/main';
import type { SessionItem } from '../../src/extension/sessionPicker';
import { waitFor as pollFor } from './waitFor';

// VS Code's own agent and an OpenTelemetry file in the Agent Sessions view and in Analyze Agent
// Session, inside the real extension host: a fake home laid out as test/support/fakeHome.mjs's
// addCopilotAndOtlp does (restated here: this suite is bundled as CommonJS, where that module's
// import.meta is empty) holds a real Copilot Chat session in a workspace's chat store
// (workspaceStorage/<hash>/chatSessions/, named by its workspace.json) and VS Code's Agent Debug
// Logs export in ~/.copilot/otel; the settings point the two session folders there for this suite.
// Figures: test/reference/vscode_chat.py (8 calls, 2 requests, 6 tools for the chat) and the hand
// counts of test/unit/core/trace/otlp/agentTelemetry.test.ts (4 calls in 2 turns, a sub-agent of 1).

const waitFor = <T>(what: string, probe: () => T | undefined | null | false, timeoutMs = 60_000): Promise<T> =>
  pollFor(what, probe, timeoutMs);
const KEYS = ['vscodeCopilot', 'openTelemetry'] as const;

suite('VS Code Copilot Chat and OpenTelemetry sessions in the real extension host', () => {
  let api: AgentTraceApi;
  const saved: Record<string, unknown> = {};
  const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('agentTrace.sessionRoots');

  suiteSetup(async function () {
    // The first index of a fresh worker, and a second read after the settings change: more than
    // mocha's 30 s on a loaded machine.
    this.timeout(120_000);
    api = (await vscode.extensions.getExtension('agent-trace.agent-trace-inspector')!.activate()) as AgentTraceApi;
    const home = path.join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, 'home-copilot');
    const fixtures = path.join(__dirname, '../../test/fixtures');
    const storage = path.join(home, '.config/Code/User/workspaceStorage/9f2c41d7e0b3a5c6f1e2d3c4b5a69788');
    fs.mkdirSync(path.join(storage, 'chatSessions'), { recursive: true });
    fs.copyFileSync(
      path.join(fixtures, 'vscode-copilot/tfplan2md-043-task-planner.chat.json'),
      path.join(storage, 'chatSessions/badbd1d2-1f0b-4626-a215-56ee404562fe.json'),
    );
    fs.writeFileSync(
      path.join(storage, 'workspace.json'),
      JSON.stringify({ folder: 'file:///home/oocx/src/tfplan2md' }),
    );
    fs.mkdirSync(path.join(home, '.copilot/otel'), { recursive: true });
    fs.copyFileSync(
      path.join(fixtures, 'otlp/copilot-chat-debug-log.json'),
      path.join(home, '.copilot/otel/copilot-chat-debug-log.json'),
    );
    for (const k of KEYS) saved[k] = config().inspect(k)?.workspaceValue;
    await config().update('vscodeCopilot', path.join(home, '.config/Code/User'), vscode.ConfigurationTarget.Workspace);
    await config().update('openTelemetry', path.join(home, '.copilot/otel'), vscode.ConfigurationTarget.Workspace);
    await vscode.commands.executeCommand('agentTrace.sessions.focus');
    await waitFor('the Copilot and OpenTelemetry rows', () => {
      const rows = api.sessions.service.current();
      return (
        rows.some((r) => r.agentId === 'vscode-copilot') &&
        rows.some((r) => r.agentId === 'opentelemetry' && r.role === 'main')
      );
    });
  });

  suiteTeardown(async () => {
    for (const k of KEYS) await config().update(k, saved[k], vscode.ConfigurationTarget.Workspace);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('Agent Sessions lists the chat under its workspace folder, with the figures the reader gives', () => {
    const chat = api.sessions.service.current().find((r) => r.agentId === 'vscode-copilot')!;
    assert.equal(chat.key, 'badbd1d2-1f0b-4626-a215-56ee404562fe');
    assert.equal(chat.project, 'tfplan2md');
    assert.deepEqual([chat.calls, chat.userTurns, chat.toolCalls, chat.failedToolCalls], [8, 2, 6, 0]);
    const node = api.sessions.tree.nodeOf(chat.id);
    assert.ok(node, 'a tree node for the chat');
    const item = api.sessions.tree.getTreeItem(node);
    // The label is clipped short so the figures show at the default sidebar width; the tooltip's first line has the whole title.
    assert.match(String(item.label), /^Follow instructions…$/);
    assert.match(String(item.tooltip).split('\n')[0]!, /^Follow instructions in \[tp\.prompt\.md\]/);
    assert.match(String(item.description), / · 8 calls · /);
  });

  test('and the OpenTelemetry export as one conversation with its sub-agent nested', () => {
    const rows = api.sessions.service.current().filter((r) => r.agentId === 'opentelemetry');
    const main = rows.find((r) => r.role === 'main')!;
    assert.equal(main.key, '6d1f0c3e-2b7a-4b8e-9d7c-0a1b2c3d4e5f');
    assert.deepEqual([main.calls, main.userTurns, main.toolCalls, main.failedToolCalls], [4, 2, 3, 1]);
    const sub = rows.find((r) => r.role === 'subagent')!;
    assert.deepEqual([sub.parentKey, sub.calls], [main.key, 1]);
  });

  test('Analyze Agent Session lists both and opens the chat in the inspector', async () => {
    let items: readonly SessionItem[] = [];
    const report = (await vscode.commands.executeCommand('agentTrace.analyzeSession', {
      pick: (list: readonly SessionItem[]) => {
        items = list;
        return list.find((i) => (i.description ?? '').startsWith('VS Code Copilot'));
      },
    })) as TraceReport | undefined;
    assert.ok(
      items.some((i) => /^OpenTelemetry · /.test(i.description ?? '')),
      items.map((i) => i.description).join(' | '),
    );
    const chat = items.find((i) => (i.description ?? '').startsWith('VS Code Copilot'))!;
    assert.equal(chat.label, 'tfplan2md');
    assert.match(chat.detail ?? '', /^8 calls · /);
    assert.ok(report, 'the command returns the report');
    assert.equal(report.format, 'vscode-copilot');
    assert.equal(report.sessions[0]!.llmCalls, 8);
  });
});
