import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { TraceReport } from '../../src/core/report/traceReport';
import type { SessionItem } from '../../src/extension/sessionPicker';
import type { AgentTraceApi } from '../../src/extension/main';
import { isLoadFailure } from '../../src/extension/traceDocument';
import { writeCanonical } from '../../src/core/trace/canonical/canonicalFormat';
import { parseTrace } from '../../src/core/trace/parseTrace';
import { readTraceFiles } from '../../src/node/traceFiles';
import { waitFor } from './waitFor';

// Runs inside the real extension host (code-server here, @vscode/test-electron elsewhere),
// against the workspace made by test/support/workspace.mjs.

const root = (): vscode.Uri => vscode.workspace.workspaceFolders![0]!.uri;
const file = (rel: string): vscode.Uri => vscode.Uri.joinPath(root(), ...rel.split('/'));
const SAMPLE = 'claude-code-sessions.trace.jsonl';
const CLAUDE = 'claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl';
/** The M-Claude log (test/fixtures/claude-code/edit-retry-loop.jsonl): 41 calls, a 4-attempt Edit/Write loop. */
const M_CLAUDE = 'claude/edit-retry-loop.jsonl';

async function waitForAsync(what: string, probe: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function activeTabInput(): unknown {
  return vscode.window.tabGroups.activeTabGroup.activeTab?.input;
}

/** The CodeLens of a file, as VS Code's own command returns them (the document must be loaded). */
async function codeLenses(uri: vscode.Uri): Promise<vscode.CodeLens[]> {
  await vscode.workspace.openTextDocument(uri);
  return (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? [];
}

/** Lens titles on a 0-based line. */
function titlesOn(lenses: vscode.CodeLens[], line: number): string[] {
  return lenses.filter((l) => l.range.start.line === line).map((l) => l.command?.title ?? '');
}

/** Opens a file as text in an editor tab (the Problems of text views follow tabs). */
async function showText(uri: vscode.Uri): Promise<void> {
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
  await waitFor('a text tab', () => activeTabInput() instanceof vscode.TabInputText);
}

function warnings(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.severity === vscode.DiagnosticSeverity.Warning);
}

async function setSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration('agentTrace').update(key, value, vscode.ConfigurationTarget.Workspace);
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

  test('registers exactly the commands package.json contributes', async () => {
    // The contributions are written by hand, the registrations come from createCommands: they must not drift.
    const manifest = vscode.extensions.getExtension('agent-trace.agent-trace-inspector')!.packageJSON as {
      contributes: { commands: Array<{ command: string }>; views: Record<string, Array<{ id: string }>> };
    };
    const contributed = manifest.contributes.commands.map((c) => c.command).sort();
    // VS Code's workbench (not this extension) registers, for each contributed view, commands named
    // after the view's id: `<id>.focus` and `<id>.open` (ViewsService), `<id>.resetViewLocation`,
    // `<id>.toggleVisibility` and `<id>.removeView` (ViewDescriptorService).
    const viewIds = Object.values(manifest.contributes.views).flatMap((views) => views.map((v) => v.id));
    assert.deepEqual(viewIds.sort(), ['agentTrace.sessions', 'agentTrace.windows']);
    const viewCommands = new Set(
      viewIds.flatMap((id) =>
        ['focus', 'open', 'removeView', 'resetViewLocation', 'toggleVisibility'].map((c) => `${id}.${c}`),
      ),
    );
    // `agentTrace.sessions.open` is both VS Code's (open the view) and ours (open a session): ours counts.
    for (const c of contributed) viewCommands.delete(c);
    const registered = (await vscode.commands.getCommands(true))
      .filter((id) => id.startsWith('agentTrace.') && !viewCommands.has(id))
      .sort();
    assert.deepEqual(registered, contributed);
    assert.deepEqual(
      contributed.filter((c) => !c.startsWith('agentTrace.sessions.')),
      [
        'agentTrace.analyzeSession',
        'agentTrace.compareWithResults',
        'agentTrace.exportHtmlReport',
        'agentTrace.openInInspector',
        'agentTrace.openSample',
        'agentTrace.showInTimeline',
        'agentTrace.showSource',
      ],
    );
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
    assert.deepEqual(main.tokens, {
      input: 5062122,
      cached: 4997060,
      appended: 65062,
      cacheWrite: 65000,
      output: 9782,
    });
    assert.deepEqual(
      report.sessions.map((s) => [s.role, s.llmCalls]),
      [
        ['main', 48],
        ['compaction', 1],
        ['main', 41],
      ],
    );
    // The whole sample priced: $5.1342127 by test/reference/cost_reference.mjs.
    assert.ok(Math.abs(report.cost!.totalUsd! - 5.1342127) < 1e-9, String(report.cost?.totalUsd));
    assert.equal(report.cost!.unpricedCalls, 0);
    assert.match(
      report.sessions[2]!.cacheTtl!.sentence!,
      /^With 1-hour caching this session would have cost \$2\.43 \(−28%\); 4 calls re-wrote the cache after a gap longer than 5 min\.$/,
    );
    await waitFor('the inspector', () => activeTabInput() instanceof vscode.TabInputCustom);
  });

  test('agentTrace.prices re-prices the lenses: a 50% discount on claude-opus-4-5 halves $3.37; a bad entry is left out', async () => {
    const uri = file(M_CLAUDE);
    await showText(uri);
    const summary = async (): Promise<string> =>
      titlesOn(await codeLenses(uri), 0).find((t) => t.startsWith('$(pulse)')) ?? '';
    await waitForAsync('the priced lens', async () => / · \$3\.37 · /.test(await summary()));
    try {
      await setSetting('prices', [
        { model: 'claude-opus-4-5*', multiplier: 0.5 },
        { model: 'x', input: 'cheap' },
      ]);
      // 3.36867825 × 0.5 = 1.684339.
      await waitForAsync('the discounted lens', async () => / · \$1\.68 · /.test(await summary()));
      await setSetting('prices', [
        { model: 'claude-opus-4-5*', input: 1, output: 1 },
        { model: 'claude-*', multiplier: 2 },
      ]);
      // The first matching entry wins: $1/Mtok for every token (reads and writes default to the input price):
      // 2,069,302 prompt + 24,363 output tokens = $2.093665.
      await waitForAsync('the flat-priced lens', async () => / · \$2\.09 · /.test(await summary()));
    } finally {
      await setSetting('prices', undefined);
    }
    await waitForAsync('list prices again', async () => / · \$3\.37 · /.test(await summary()));
  });

  test('a growing log open in the inspector is read on from where it stopped: each update reads the appended bytes only, no second load; a truncation reads it again', async () => {
    const api = (await vscode.extensions
      .getExtension('agent-trace.agent-trace-inspector')!
      .activate()) as AgentTraceApi;
    // The M-Claude log (41 calls in all, test/reference/claude_code_totals.py) written in three parts, as a running agent writes it.
    const lines = readFileSync(file(M_CLAUDE).fsPath, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => `${l}\n`);
    const uri = file('claude/growing-live.jsonl');
    writeFileSync(uri.fsPath, lines.slice(0, 40).join(''));
    try {
      await vscode.commands.executeCommand('vscode.openWith', uri, 'agentTrace.inspectorAny');
      const doc = await waitFor('the inspector document', () => api.inspector.documentFor(uri));
      const first = await doc.result;
      assert.ok(!isLoadFailure(first) && first.header.callCount < 41, 'the first 40 lines hold part of the calls');
      const appends = [lines.slice(40, 80).join(''), lines.slice(80).join('')];
      for (const [k, text] of appends.entries()) {
        appendFileSync(uri.fsPath, text);
        await waitFor(`update ${k + 1}`, () => doc.growthBytes.length === k + 1);
        // What was read is what was appended: the file is not read again.
        assert.equal(doc.growthBytes[k], Buffer.byteLength(text));
      }
      assert.equal(doc.loads, 1, 'one load: the appends were read on, not reloaded');
      const grown = await doc.result;
      assert.ok(!isLoadFailure(grown));
      assert.equal(grown.header.callCount, 41);
      // Truncated: shorter than what was read, so it is read again from scratch (a second load).
      writeFileSync(uri.fsPath, lines.slice(0, 40).join(''));
      await waitFor('the re-read', () => doc.loads === 2);
      const again = await doc.result;
      assert.ok(!isLoadFailure(again));
      assert.equal(again.header.callCount, first.header.callCount);
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      rmSync(uri.fsPath, { force: true });
    }
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
  test('CodeLens on the M-Claude log: a summary on line 1 and the 4-attempt Edit/Write loop on lines 61, 65, 70, 74', async () => {
    const lenses = await codeLenses(file(M_CLAUDE));
    // Counted by hand from the file: 41 distinct assistant message ids (LLM calls); 13
    // tool_result blocks with is_error; cache_read 1,768,739 of 2,069,302 input tokens
    // (input + cache_creation + cache_read of each message's first line) = 85.5%. Cost:
    // $3.36867825 by test/reference/cost_reference.mjs (claude-opus-4-5 list prices).
    const top = titlesOn(lenses, 0);
    assert.ok(
      top.some((t) =>
        /Agent Trace · 41 calls · \$3\.37 · cache hit 85\.5% · 13 failed tool calls · 1 retry loop$/.test(t),
      ),
      top.join(' | '),
    );
    assert.ok(top.includes('Open Inspector'));
    // The is_error results, 1-based: 11, 29, 30, 61, 65, 70, 74, 77, 86, 100, 110, 112, 114.
    const failureLines = [11, 29, 30, 61, 65, 70, 74, 77, 86, 100, 110, 112, 114];
    const lensLines = [
      ...new Set(lenses.filter((l) => l.command?.title === 'Show in Timeline').map((l) => l.range.start.line + 1)),
    ].sort((a, b) => a - b);
    assert.deepEqual(lensLines, failureLines);
    // The Edit (lines 60, 64) and Write (69, 73) calls on sync_raw_logs.py, each failing on the next line.
    const expected: Array<[number, RegExp]> = [
      [61, /^\$\(error\) 1st failed Edit on sync_raw_logs\.py: File has been unexpectedly modified/],
      [65, /^\$\(error\) 2nd failed Edit on sync_raw_logs\.py: File has been unexpectedly modified/],
      [70, /^\$\(error\) 3rd failed Write on sync_raw_logs\.py: File has not been read yet/],
      [74, /^\$\(error\) 4th failed Write on sync_raw_logs\.py: File has not been read yet/],
    ];
    for (const [line, pattern] of expected) {
      const titles = titlesOn(lenses, line - 1);
      assert.ok(
        titles.some((t) => pattern.test(t)),
        `line ${line}: ${titles.join(' | ')}`,
      );
      assert.ok(titles.includes('Show in Timeline'), `line ${line} has no "Show in Timeline"`);
    }
    // Line 74's error is 96 characters (⌈96/4⌉ = 24 tokens); its call is the 21st of 41, so 20 later calls re-read it:
    // the 22nd writes it to the cache ($6.25/Mtok, its whole append is a 5-minute write), 19 read it ($0.50/Mtok):
    // 24 × (6.25 + 19 × 0.5) µ$ = $0.000378.
    assert.ok(
      titlesOn(lenses, 73).some((t) => t.endsWith('carries ≈24 tokens × 20 calls ($0.0004)')),
      titlesOn(lenses, 73).join(' | '),
    );
  });

  test('Problems: one Warning for the M-Claude retry loop on line 61, the later attempts related (65, 70, 74)', async () => {
    const uri = file(M_CLAUDE);
    await showText(uri);
    const [warning, ...others] = await waitFor('the retry-loop warning', () => {
      const w = warnings(uri);
      return w.length > 0 ? w : null;
    });
    assert.equal(others.length, 0);
    assert.equal(warning!.range.start.line, 60);
    // Carried forward: 21 tokens × 26 + 21 × 24 + 24 × 22 + 24 × 20 later calls = 2,058 ≈ 2.1k.
    assert.equal(
      warning!.message,
      'Retry loop: 4 failed Edit/Write on sync_raw_logs.py, gave up; ≈2.1k tokens carried forward',
    );
    assert.deepEqual(
      warning!.relatedInformation?.map((r) => [r.location.uri.toString(), r.location.range.start.line + 1]),
      [65, 70, 74].map((line) => [uri.toString(), line]),
    );
    assert.equal(
      vscode.languages.getDiagnostics(uri).filter((d) => d.severity === vscode.DiagnosticSeverity.Error).length,
      0,
    );
  });

  test('Problems: a retry loop of 160 attempts lists its first 100 later attempts and counts the other 59', async () => {
    // The M-Claude loop's four failing calls (lines 61, 65, 70, 74), written 40 times over as
    // one canonical trace: one loop of 4 × 40 = 160 attempts on the same file, 159 later ones.
    const parsed = await parseTrace(await readTraceFiles(file(M_CLAUDE).fsPath));
    const session = parsed.model.sessions.find((s) => s.role === 'main')!;
    const loopCalls = session.calls.filter((c) =>
      c.toolCalls.some((t) => t.isError === true && t.targetFile?.endsWith('sync_raw_logs.py')),
    );
    assert.equal(loopCalls.length, 4);
    const calls = Array.from({ length: 40 }, (_, copy) =>
      loopCalls.map((c) => ({
        ...c,
        id: `${c.id}_${copy}`,
        turn: null,
        toolCalls: c.toolCalls.filter((t) => t.isError === true).map((t) => ({ ...t, id: `${t.id}_${copy}` })),
      })),
    )
      .flat()
      .map((c, index) => ({ ...c, index }));
    const uri = file('claude/long-loop.trace.jsonl');
    writeFileSync(
      uri.fsPath,
      writeCanonical(
        {
          ...parsed.model,
          format: 'claude-code',
          files: ['long-loop.trace.jsonl'],
          sessions: [{ ...session, calls, turns: [], compactions: [] }],
        },
        'host test',
      ),
    );
    try {
      await showText(uri);
      const [warning] = await waitFor('the retry-loop warning', () => {
        const w = warnings(uri);
        return w.length > 0 ? w : null;
      });
      assert.match(warning!.message, /^Retry loop: 160 failed /);
      const related = warning!.relatedInformation ?? [];
      assert.equal(related.length, 101);
      assert.match(related[99]!.message, /^101st attempt/);
      assert.match(related[100]!.message, /^59 more attempts from here on/);
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      rmSync(uri.fsPath, { force: true });
    }
  });

  test('text view and inspector on one file list its problems once; they go when the last view closes', async () => {
    const uri = file(M_CLAUDE);
    await showText(uri);
    await waitFor('the warning', () => warnings(uri).length === 1);
    await vscode.commands.executeCommand('vscode.openWith', uri, 'agentTrace.inspectorAny', vscode.ViewColumn.Beside);
    await waitFor('the inspector', () => activeTabInput() instanceof vscode.TabInputCustom);
    await new Promise((r) => setTimeout(r, 500)); // let the inspector's own parse publish
    assert.equal(warnings(uri).length, 1);
    // Close the text tab: the inspector keeps the problem listed.
    const textTab = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .find((t) => t.input instanceof vscode.TabInputText);
    await vscode.window.tabGroups.close(textTab!);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(warnings(uri).length, 1);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await waitFor('no diagnostics', () => vscode.languages.getDiagnostics(uri).length === 0);
  });

  test('"Show in Timeline" opens the inspector on the file', async () => {
    const uri = file(M_CLAUDE);
    await showText(uri);
    const lens = (await codeLenses(uri)).find(
      (l) => l.range.start.line === 73 && l.command?.command === 'agentTrace.showInTimeline',
    );
    assert.ok(lens, 'no Show in Timeline lens on line 74');
    await vscode.commands.executeCommand(lens.command!.command, ...(lens.command!.arguments ?? []));
    const input = await waitFor('the inspector tab', () => {
      const i = activeTabInput();
      return i instanceof vscode.TabInputCustom ? i : null;
    });
    assert.equal(input.viewType, 'agentTrace.inspectorAny');
    assert.equal(input.uri.toString(), uri.toString());
    // The selected call: the 21st (index 20) of the main session.
    assert.deepEqual(lens.command!.arguments![1], { sessionId: 'e5821007-9ca0-4a36-afc0-94da583da0ea', callIndex: 20 });
    // Again, with the inspector open: it is revealed and selects, no second inspector opens.
    const line61 = (await codeLenses(uri)).find(
      (l) => l.range.start.line === 60 && l.command?.command === 'agentTrace.showInTimeline',
    )!;
    await vscode.commands.executeCommand(line61.command!.command, ...(line61.command!.arguments ?? []));
    const inspectors = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputCustom);
    assert.equal(inspectors.length, 1);
  });

  test('the spotter log: Bash `git add && git commit` fails 7 times from line 1209', async () => {
    const uri = file(CLAUDE);
    const lenses = await codeLenses(uri);
    // `git add -A && git commit …` results with is_error, 1-based: 1209, 1343, 1366, 1389, 1419, 1447, 1463
    // (line 661's earlier failure was followed by a successful commit, so it starts nothing).
    const lines = [1209, 1343, 1366, 1389, 1419, 1447, 1463];
    lines.forEach((line, i) => {
      const titles = titlesOn(lenses, line - 1);
      const ord = ['1st', '2nd', '3rd', '4th', '5th', '6th', '7th'][i]!;
      assert.ok(
        titles.some((t) => t.startsWith(`$(error) ${ord} failed Bash \`git add && git commit\``)),
        `line ${line}: ${titles.join(' | ')}`,
      );
    });
    await showText(uri);
    const w = await waitFor('the loop warning', () => {
      const list = warnings(uri);
      return list.length > 0 ? list : null;
    });
    assert.equal(w.length, 1);
    assert.equal(w[0]!.range.start.line, 1208);
    assert.match(w[0]!.message, /^Retry loop: 7 failed Bash `git add && git commit`, gave up/);
    assert.deepEqual(
      w[0]!.relatedInformation?.map((r) => r.location.range.start.line + 1),
      lines.slice(1),
    );
  });

  test('settings: a higher minLoopAttempts drops the 4-attempt loop; codeLens.enabled false removes the lenses', async () => {
    const uri = file(M_CLAUDE);
    await showText(uri);
    await waitFor('the warning', () => warnings(uri).length === 1);
    try {
      await setSetting('analysis.minLoopAttempts', 5);
      await waitFor('no warning', () => warnings(uri).length === 0);
      const top = titlesOn(await codeLenses(uri), 0);
      assert.ok(
        top.some((t) => t.includes('· 0 retry loops')),
        top.join(' | '),
      );
      await setSetting('codeLens.enabled', false);
      assert.equal((await codeLenses(uri)).length, 0);
    } finally {
      await setSetting('analysis.minLoopAttempts', undefined);
      await setSetting('codeLens.enabled', undefined);
    }
    await waitFor('the warning again', () => warnings(uri).length === 1);
  });

  test('collateral failures get a lens that says so', async () => {
    // user-rejections.jsonl: the user refused the Bash (line 8) and Glob (line 10) calls; the
    // refusals are the is_error results on lines 11 and 12.
    const lenses = await codeLenses(
      file('home/.claude/projects/-home-marco-projects-spotter/55604662-cf2a-4331-851a-ec234028f8ca.jsonl'),
    );
    for (const [line, tool] of [
      [11, 'Bash'],
      [12, 'Glob'],
    ] as const) {
      const titles = titlesOn(lenses, line - 1);
      assert.ok(
        titles.some(
          (t) =>
            t.startsWith(`$(circle-slash) ${tool}`) &&
            t.endsWith('rejected or interrupted by the user (collateral, not a retry)'),
        ),
        `line ${line}: ${titles.join(' | ')}`,
      );
    }
  });

  test('a JSON file that is not a trace gets no lenses and no problems', async () => {
    const uri = file('.vscode/settings.json');
    await showText(uri);
    assert.equal((await codeLenses(uri)).length, 0);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(vscode.languages.getDiagnostics(uri).length, 0);
  });

  test('Analyze Agent Session with no trace open lists the local sessions, newest first, and analyses the chosen one', async () => {
    let rows: readonly SessionItem[] = [];
    const report = (await vscode.commands.executeCommand('agentTrace.analyzeSession', {
      pick: (items: readonly SessionItem[]) => {
        rows = items;
        return items.find((i) => i.label === 'System32');
      },
    })) as TraceReport | undefined;
    // The fake home of test/support/fakeHome.mjs: a Codex rollout (2026-03-21), the spotter session
    // (2026-02-12), the M-Claude log (2026-01-02, cwd C:\Windows\System32), the user-rejections log
    // (2026-01-01, cwd /home/marco/projects/spotter); the agent-*.jsonl beside it is a sub-agent log, not listed.
    assert.deepEqual(
      rows.map((r) => r.label),
      ['project', 'spotter-4te', 'System32', 'spotter', '$(folder-opened) Open a trace file…'],
    );
    assert.match(rows[0]!.description ?? '', /^Codex · 2026-03-2\d \d\d:\d\d · \/workspace\/project$/);
    assert.match(rows[2]!.description ?? '', /^Claude Code · 2026-01-0\d \d\d:\d\d · C:\\Windows\\System32$/);
    // Hand counts as in the CodeLens test: 41 calls, $3.37, 85.5%, 13 failed.
    assert.match(
      rows[2]!.detail ?? '',
      /^41 calls · \$3\.37 · cache hit 85\.5% · 13 failed tool calls · e5821007-9ca0-4a36-afc0-94da583da0ea\.jsonl$/,
    );
    // user-rejections.jsonl: one message id; cache_read 11,515 of 25,353 = 45.4%; the user rejected 2 tool calls;
    // priced by hand in test/unit/core/cost/handWorkedPricing.test.ts (call 7): $0.1444475.
    assert.match(rows[3]!.detail ?? '', /^1 call · \$0\.144 · cache hit 45\.4% · 2 failed tool calls/);
    assert.ok(report, 'the command returns the report');
    assert.equal(report.format, 'claude-code');
    assert.equal(report.sessions[0]!.llmCalls, 41);
    const input = await waitFor('the inspector', () => {
      const i = activeTabInput();
      return i instanceof vscode.TabInputCustom ? i : null;
    });
    assert.match(input.uri.path, /e5821007-9ca0-4a36-afc0-94da583da0ea\.jsonl$/);
  });

  test('Export HTML Report writes a redacted standalone report of the trace, the sessions chosen with their sub-agents', async () => {
    const target = vscode.Uri.file(`${tmpdir()}/agent-trace-host-report-${Date.now()}.html`);
    const written = (await vscode.commands.executeCommand('agentTrace.exportHtmlReport', file(CLAUDE), {
      target,
      sessions: ['ae4a77f8-aedd-4bc1-888f-c94edc91af04'],
    })) as vscode.Uri;
    assert.equal(written.fsPath, target.fsPath);
    const html = readFileSync(target.fsPath, 'utf8');
    rmSync(target.fsPath);
    const data = JSON.parse(
      html.slice(html.indexOf('id="report-data">') + 17, html.indexOf('</script>', html.indexOf('id="report-data">'))),
    );
    // The main session and its two sub-agents (test/fixtures/claude-code/…/subagents).
    assert.deepEqual(
      data.traces[0].view.sessions.map((s: { summary: { llmCalls: number } }) => s.summary.llmCalls),
      [149, 3, 1],
    );
    assert.notEqual(data.redaction, null);
    assert.equal(data.traces[0].details[0].length, 149);
  });

  test('Compare With Replay Results joins AIPerf records to the export of the trace and predicts the same calls', async () => {
    // Real AIPerf records (test/fixtures/aiperf), relabelled to the first exported session's turns.
    const raw = readFileSync(`${__dirname}/../../test/fixtures/aiperf/qwen_concurrency1.profile_export.jsonl`, 'utf8')
      .trim()
      .split('\n');
    const results = vscode.Uri.file(`${tmpdir()}/agent-trace-host-profile-${Date.now()}.jsonl`);
    writeFileSync(
      results.fsPath,
      raw
        .map((l, i) => {
          const r = JSON.parse(l);
          r.metadata.conversation_id = 'e5821007-9ca0-4a36-afc0-94da583da0ea';
          r.metadata.turn_index = i;
          return JSON.stringify(r);
        })
        .join('\n'),
    );
    let c: { matched: number; join: string; predicted: { hitRate: number } | null };
    try {
      c = (await vscode.commands.executeCommand('agentTrace.compareWithResults', file(SAMPLE), {
        results,
      })) as typeof c;
    } finally {
      rmSync(results.fsPath, { force: true });
    }
    assert.equal(c.join, 'conversation-turn');
    assert.equal(c.matched, 10);
    assert.ok(c.predicted && c.predicted.hitRate > 0);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
