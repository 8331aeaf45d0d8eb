import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { TraceReport } from '../../src/core/analysis/traceReport';

// Runs inside the real extension host (code-server here, @vscode/test-electron elsewhere),
// against the workspace made by test/e2e/workspace.mjs.

const root = (): vscode.Uri => vscode.workspace.workspaceFolders![0]!.uri;
const file = (rel: string): vscode.Uri => vscode.Uri.joinPath(root(), ...rel.split('/'));
const SAMPLE = 'claude-code-sessions.trace.jsonl';
const CLAUDE = 'claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl';

async function waitFor<T>(what: string, probe: () => T | undefined | null | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function activeTabInput(): unknown {
  return vscode.window.tabGroups.activeTabGroup.activeTab?.input;
}

suite('Agent Trace Inspector in the real extension host', () => {
  suiteSetup(async () => {
    console.log(`  ${vscode.env.appName} ${vscode.version}, uiKind=${vscode.env.uiKind}`);
    // Contributions imply activation (activationEvents is empty); activate explicitly so
    // the first test does not race the lazy activation.
    await vscode.extensions.getExtension('agent-trace.agent-trace-inspector')!.activate();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('contributes its commands in the Agent Trace category', async () => {
    const all = await vscode.commands.getCommands(true);
    for (const id of ['agentTrace.analyzeSession', 'agentTrace.openInInspector', 'agentTrace.showSource']) {
      assert.ok(all.includes(id), `${id} is not registered`);
    }
  });

  test('*.trace.jsonl opens in the inspector by default', async () => {
    await vscode.commands.executeCommand('vscode.open', file(SAMPLE));
    const input = await waitFor('a custom editor tab', () => {
      const i = activeTabInput();
      return i instanceof vscode.TabInputCustom ? i : null;
    });
    assert.equal(input.viewType, 'agentTrace.inspector');
    assert.equal(input.uri.toString(), file(SAMPLE).toString());
  });

  test('a Claude Code .jsonl opens as text by default and in the inspector through Open With', async () => {
    await vscode.commands.executeCommand('vscode.open', file(CLAUDE));
    await waitFor('a text tab', () => activeTabInput() instanceof vscode.TabInputText);
    await vscode.commands.executeCommand('vscode.openWith', file(CLAUDE), 'agentTrace.inspectorAny');
    const input = await waitFor('the inspector tab', () => {
      const i = activeTabInput();
      return i instanceof vscode.TabInputCustom ? i : null;
    });
    assert.equal(input.viewType, 'agentTrace.inspectorAny');
  });

  test('Show Trace Source reopens the inspector as text, and Open in Inspector goes back', async () => {
    await vscode.commands.executeCommand('vscode.open', file(SAMPLE));
    await waitFor('the inspector', () => activeTabInput() instanceof vscode.TabInputCustom);
    await vscode.commands.executeCommand('agentTrace.showSource');
    const text = await waitFor('a text tab', () => {
      const i = activeTabInput();
      return i instanceof vscode.TabInputText ? i : null;
    });
    assert.equal(text.uri.toString(), file(SAMPLE).toString());
    await vscode.commands.executeCommand('agentTrace.openInInspector');
    const custom = await waitFor('the inspector again', () => {
      const i = activeTabInput();
      return i instanceof vscode.TabInputCustom ? i : null;
    });
    assert.equal(custom.viewType, 'agentTrace.inspector');
  });

  test('Analyze Agent Session returns the same report as the CLI for the bundled sample', async () => {
    const report = (await vscode.commands.executeCommand('agentTrace.analyzeSession', file(SAMPLE))) as TraceReport;
    assert.equal(report.format, 'agent-trace');
    // Calls 102–149 of the spotter session, summed independently with Python (see samples/README.md).
    const main = report.sessions[0]!;
    assert.equal(main.llmCalls, 48);
    assert.deepEqual(main.tokens, { input: 5062122, cached: 4997060, appended: 65062, cacheWrite: 65000, output: 9782 });
    assert.deepEqual(report.sessions.map((s) => [s.role, s.llmCalls]), [
      ['main', 48],
      ['compaction', 1],
      ['main', 41],
    ]);
    await waitFor('the inspector', () => activeTabInput() instanceof vscode.TabInputCustom);
  });

  test('a malformed line shows in the Problems view with its line number, and the rest still loads', async () => {
    const uri = file('bad-input/malformed-line.trace.jsonl');
    await vscode.commands.executeCommand('vscode.open', uri);
    const diagnostics = await waitFor('diagnostics', () => {
      const d = vscode.languages.getDiagnostics(uri);
      return d.length > 0 ? d : null;
    });
    assert.equal(diagnostics.length, 1);
    assert.equal(diagnostics[0]!.severity, vscode.DiagnosticSeverity.Error);
    assert.equal(diagnostics[0]!.range.start.line, 4); // file line 5
    assert.match(diagnostics[0]!.message, /not valid JSON/);
    const report = (await vscode.commands.executeCommand('agentTrace.analyzeSession', uri)) as TraceReport;
    // llm_call records on lines 4, 7 and 9 survive; the one on line 5 is the broken line.
    assert.equal(report.sessions[0]!.llmCalls, 3);
  });

  test('an empty file and a binary file get a clear problem, not an exception', async () => {
    for (const [name, pattern] of [
      ['bad-input/empty.trace.jsonl', /empty/],
      ['bad-input/binary.trace.jsonl', /not text/],
    ] as const) {
      const uri = file(name);
      await vscode.commands.executeCommand('vscode.open', uri);
      const d = await waitFor(`a problem for ${name}`, () => {
        const list = vscode.languages.getDiagnostics(uri);
        return list.length > 0 ? list : null;
      });
      assert.match(d[0]!.message, pattern);
      const input = activeTabInput();
      assert.ok(input instanceof vscode.TabInputCustom, `${name} should still open in the inspector`);
    }
  });

  test('closing the inspector clears its problems', async () => {
    const uri = file('bad-input/malformed-line.trace.jsonl');
    await vscode.commands.executeCommand('vscode.open', uri);
    await waitFor('diagnostics', () => vscode.languages.getDiagnostics(uri).length > 0);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await waitFor('no diagnostics', () => vscode.languages.getDiagnostics(uri).length === 0);
  });
});
