import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TraceReport } from '../../src/core/report/traceReport';
import type { AgentTraceApi } from '../../src/extension/main';
import type { SessionItem } from '../../src/extension/sessionPicker';
import { deepText, PAYLOADS } from '../support/hostileCorpus';
import { assertInert } from './inert';
import { waitFor } from './waitFor';

// The hostile corpus in the real extension host (the workspace of test/support/workspace.mjs
// copies test/fixtures/hostile and adds what cannot be committed). Every string VS Code
// shows for it is checked against the patterns VS Code itself acts on: `[text](command:…)`
// links (base/common/linkedText.ts, used by notifications) and `$(icon)` (iconLabels.ts,
// used by CodeLens, quick picks and the status bar); and no promise may be left rejected.

const root = (): vscode.Uri => vscode.workspace.workspaceFolders![0]!.uri;
const file = (rel: string): vscode.Uri => vscode.Uri.joinPath(root(), ...rel.split('/'));

async function setSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration('agentTrace').update(key, value, vscode.ConfigurationTarget.Workspace);
}

const rejections: unknown[] = [];
// VS Code's own JSON language client rejects when its server overflows its stack on the deepest
// hostile .json opened as text (json/validate): a rejection of that built-in extension, not ours.
const isBuiltInJsonClient = (reason: unknown): boolean =>
  /[\\/]extensions[\\/]json-language-features[\\/]/.test(String((reason as { stack?: unknown } | null)?.stack ?? ''));
const onRejection = (reason: unknown): void => {
  if (!isBuiltInJsonClient(reason)) rejections.push(reason);
};

suite('Hostile traces in the real extension host', () => {
  suiteSetup(async () => {
    process.on('unhandledRejection', onRejection);
    await vscode.extensions.getExtension('agent-trace.agent-trace-inspector')!.activate();
  });
  suiteTeardown(() => {
    process.off('unhandledRejection', onRejection);
  });
  teardown(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // The extension host reports a rejection not handled within a second: give it the second.
    await new Promise((r) => setTimeout(r, 1200));
    assert.deepEqual(rejections.map(String), [], 'no unhandled rejection in the extension host');
  });

  test('every hostile file opens in the inspector and as text; every Problems message and CodeLens is inert', async () => {
    const names = readdirSync(file('hostile').fsPath).filter(
      (n) => /\.(jsonl|json)$/.test(n) && n !== 'over-the-limit.jsonl',
    );
    assert.ok(names.length >= 24, `${names.length} files`);
    for (const name of names) {
      const uri = file(`hostile/${name}`);
      await vscode.commands.executeCommand('vscode.openWith', uri, 'agentTrace.inspectorAny');
      try {
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
      } catch {
        // VS Code will not open a file it takes for binary as text: the inspector above still read it.
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        continue;
      }
      const lenses =
        (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? [];
      for (const lens of lenses) {
        assertInert(lens.command?.title ?? '', `${name} CodeLens title`, 400);
        assertInert(lens.command?.tooltip ?? '', `${name} CodeLens tooltip`, 2000);
      }
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }
    const all = vscode.languages.getDiagnostics();
    for (const [uri, list] of all) {
      // Problems are only ever on files of the workspace (no /etc/passwd, no file beside it).
      assert.ok(uri.fsPath.startsWith(root().fsPath), `a problem on ${uri.fsPath}`);
      for (const d of list) {
        assertInert(d.message, `Problems on ${uri.path.split('/').pop()}`);
        for (const r of d.relatedInformation ?? []) assertInert(r.message, 'related information');
      }
    }
  });

  test("the payload log: CodeLens titles keep the extension's own icons and show the trace's $(…) and links as text", async () => {
    const uri = file('hostile/payloads.jsonl');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    const lenses =
      (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? [];
    const titles = lenses.map((l) => l.command?.title ?? '');
    // The payload log's model is a payload too, so no price is known for any of its 41 calls.
    assert.ok(
      titles.some((t) =>
        /^\$\(pulse\) Agent Trace · 41 calls · cost unknown \(41 calls unpriced\) · cache hit 85\.5% · 13 failed tool calls · 1 retry loop$/.test(
          t,
        ),
      ),
      titles.join(' | '),
    );
    const failed = titles.filter((t) => t.startsWith('$(error)'));
    assert.equal(failed.length, 13);
    // A failing "Bash $(check)…" call: the trace's icon is shown as text (broken by a zero-width space), the link too.
    const bash = failed.find((t) => t.includes('Bash'))!;
    assert.ok(bash.replace(/\u200b/g, '').includes(`Bash ${PAYLOADS.codicon}`), bash);
    assertInert(bash, 'the Bash lens');
    for (const t of titles) assertInert(t, 'a lens', 400);
    const problems = await waitFor('the retry-loop warning', () =>
      vscode.languages.getDiagnostics(uri).find((d) => d.code === 'retry-loop'),
    );
    assert.match(problems.message, /^Retry loop: 4 failed Edit\/Write on /);
    assertInert(problems.message, 'the retry-loop warning');
  });

  test('a file named like a command link, with command-link keys: Analyze Agent Session reports it as unreadable, in plain text', async () => {
    const uri = file('hostile/[Click to repair this trace](command:workbench.action.files.newUntitledFile).jsonl');
    assert.ok(existsSync(uri.fsPath));
    const report = (await vscode.commands.executeCommand('agentTrace.analyzeSession', uri)) as TraceReport;
    assert.match(report.problem ?? '', /Not a trace format Agent Trace Inspector knows/);
    const untitled = vscode.workspace.textDocuments.filter((d) => d.uri.scheme === 'untitled');
    assert.equal(untitled.length, 0, 'no command from the file ran');
    const problem = await waitFor('the file problem', () => vscode.languages.getDiagnostics(uri)[0]);
    assertInert(problem.message, 'the unknown-format problem');
  });

  test('companions that are a folder, a FIFO and a link out of the workspace: said on the session, never read, nothing hangs', async () => {
    const uri = file('hostile/companions/session.jsonl');
    await vscode.commands.executeCommand('vscode.openWith', uri, 'agentTrace.inspectorAny');
    const messages = await waitFor('the refusals', () => {
      const d = vscode.languages.getDiagnostics(uri).map((x) => x.message);
      return d.some((m) => /FIFO/.test(m)) ? d : null;
    });
    const text = messages.join('\n');
    assert.match(text, /agent-dir\.jsonl is a folder, not a file; not read/);
    assert.match(text, /agent-fifo\.jsonl is a named pipe \(FIFO\), not a file; not read/);
    assert.match(text, /agent-outside\.jsonl is a link to a file outside the trace's folder; not read/);
    assert.doesNotMatch(text, /SECRET BESIDE THE WORKSPACE/);
    for (const [u] of vscode.languages.getDiagnostics())
      assert.ok(!/secret|subagents\/agent-(dir|fifo|outside)/.test(u.path), u.path);
  });

  test('agentTrace.maxFileSizeMB: "abc" and 0 mean the default; the message gives size and limit, in the inspector and in the text view', async () => {
    const over = file('hostile/over-the-limit.jsonl');
    await vscode.commands.executeCommand('vscode.openWith', over, 'agentTrace.inspectorAny');
    const d = await waitFor('the size problem', () => vscode.languages.getDiagnostics(over)[0]);
    assert.equal(
      d.message,
      'over-the-limit.jsonl is 2,049 MB, larger than the 2,048 MB limit (agentTrace.maxFileSizeMB): not read. Raise the setting to read it.',
    );
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const small = file('hostile/truncated.jsonl');
    try {
      for (const value of ['abc', 0, -5]) {
        await setSetting('maxFileSizeMB', value);
        const report = (await vscode.commands.executeCommand('agentTrace.analyzeSession', small)) as TraceReport;
        assert.equal(report.problem, null, `maxFileSizeMB ${JSON.stringify(value)} falls back to the default`);
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      }
      // 0.01 MB (10 KiB) is below the 15.6 KiB of truncated.jsonl: the text view says so, with a lens and a problem.
      await setSetting('maxFileSizeMB', 0.01);
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(small), { preview: false });
      const info = await waitFor('the text-view notice', () =>
        vscode.languages.getDiagnostics(small).find((x) => x.severity === vscode.DiagnosticSeverity.Information),
      );
      // 15,937 bytes = 15.6 KB; 0.01 MB = 10,486 bytes = 10.2 KB.
      assert.match(
        info.message,
        /^truncated\.jsonl is 15\.6 KB, larger than the 10\.2 KB limit \(agentTrace\.maxFileSizeMB\): not read\./,
      );
      const lenses =
        (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', small)) ?? [];
      assert.ok(
        lenses.some((l) =>
          /^\$\(warning\) Agent Trace · truncated\.jsonl is .* larger than the .* limit/.test(l.command?.title ?? ''),
        ),
        lenses.map((l) => l.command?.title).join(' | '),
      );
    } finally {
      await setSetting('maxFileSizeMB', undefined);
    }
  });

  test('a trace deleted while open: the inspector says it is gone (no stale figures), Show Trace Source says so instead of failing', async () => {
    const uri = file('hostile/to-delete.jsonl');
    copyFileSync(file('hostile/crlf.jsonl').fsPath, uri.fsPath);
    await vscode.commands.executeCommand('vscode.openWith', uri, 'agentTrace.inspectorAny');
    await new Promise((r) => setTimeout(r, 1500));
    rmSync(uri.fsPath);
    const gone = await waitFor('the "gone" problem', () =>
      vscode.languages.getDiagnostics(uri).find((d) => /deleted or renamed/.test(d.message)),
    );
    assert.match(
      gone.message,
      /^to-delete\.jsonl is gone: it was deleted or renamed after it was opened, so its figures are no longer shown/,
    );
    const before = vscode.window.tabGroups.all.flatMap((g) => g.tabs).length;
    await vscode.commands.executeCommand('agentTrace.showSource', uri);
    assert.equal(
      vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputText).length,
      0,
      'no text editor on a file that is gone',
    );
    assert.equal(vscode.window.tabGroups.all.flatMap((g) => g.tabs).length, before);
  });

  test('the session picker shows a hostile project and file name as text', async () => {
    const hostileRoot = file('sessions-hostile/claude/projects').fsPath;
    // The workspace points the roots at the fake home: put that back after, not the machine's ~/.claude.
    const roots = vscode.workspace.getConfiguration('agentTrace.sessionRoots');
    const before = roots.inspect<string>('claudeCode')?.workspaceValue;
    await roots.update('claudeCode', hostileRoot, vscode.ConfigurationTarget.Workspace);
    try {
      let rows: readonly SessionItem[] = [];
      await vscode.commands.executeCommand('agentTrace.analyzeSession', {
        pick: (items: readonly SessionItem[]) => {
          rows = items;
          return undefined;
        },
      });
      const row = rows.find((r) => r.session !== null)!;
      assert.ok(row, rows.map((r) => r.label).join(' | '));
      for (const text of [row.label, row.description ?? '', row.detail ?? ''])
        assertInert(text, 'a session picker row', 400);
      // The cwd read from the log carries the payloads: shown, as text.
      assert.ok((row.description ?? '').replace(/\u200b/g, '').includes(PAYLOADS.link));
    } finally {
      await roots.update('claudeCode', before, vscode.ConfigurationTarget.Workspace);
    }
  });
  test('Export HTML Report and Compare With Replay Results on hostile input: answered, nothing runs, no rejection left', async () => {
    // The payload trace (session ids with command links and bidi): the report is written, its data block intact.
    const payloads = file('hostile/payloads.trace.jsonl');
    const target = file('hostile/payloads.report.html');
    const written = (await vscode.commands.executeCommand('agentTrace.exportHtmlReport', payloads, { target })) as
      | vscode.Uri
      | undefined;
    assert.equal(written?.fsPath, target.fsPath);
    const html = readFileSync(target.fsPath, 'utf8');
    assert.equal(html.match(/<script\b/g)?.length, 2, 'the data block and the page: no script from the trace');
    const data = JSON.parse(
      html.slice(
        html.indexOf('>', html.indexOf('id="report-data"')) + 1,
        html.indexOf('</script>', html.indexOf('id="report-data"')),
      ),
    ) as { traces: Array<{ view: { sessions: Array<{ summary: { id: string } }> } }> };
    assert.ok(
      data.traces[0]!.view.sessions.some((x) => x.summary.id === `main ${PAYLOADS.link}`),
      'the session id kept as text',
    );
    // A file named like a command link that is no trace: refused (a notification in plain text), no command ran.
    const linkName = file('hostile/[Click to repair this trace](command:workbench.action.files.newUntitledFile).jsonl');
    assert.equal(
      await vscode.commands.executeCommand('agentTrace.exportHtmlReport', linkName, {
        target: file('hostile/never.html'),
      }),
      undefined,
    );
    assert.ok(!existsSync(file('hostile/never.html').fsPath));
    // Replay results that are broken, nested 100,000 deep, or a folder: each refused with a message, never thrown.
    const broken = file('hostile/results-broken.jsonl');
    writeFileSync(broken.fsPath, '{"metadata": {"x_request_id": "a"},\n');
    const deep = file('hostile/results-deep.jsonl');
    writeFileSync(deep.fsPath, `{"metadata": {"x_request_id": "a"}, "metrics": ${deepText(100_000)}}\n`);
    for (const results of [broken, deep, file('hostile/companions'), file('hostile/no-such-results.jsonl')]) {
      assert.equal(
        await vscode.commands.executeCommand('agentTrace.compareWithResults', payloads, { results }),
        undefined,
        results.path,
      );
    }
    const untitled = vscode.workspace.textDocuments.filter((d) => d.uri.scheme === 'untitled');
    assert.equal(untitled.length, 0, 'no command from the files ran, and no comparison opened');
  });

  test('Agent Sessions: a file of no known format is said once in the view, a rollout named with a newline is listed', async () => {
    const api = (await vscode.extensions
      .getExtension('agent-trace.agent-trace-inspector')!
      .activate()) as AgentTraceApi;
    await vscode.commands.executeCommand('agentTrace.sessions.focus');
    const service = api.sessions.service;
    await waitFor('the first index', () => service.ready, 60_000);
    const home = path.join(root().fsPath, 'home');
    // 3,000 records of 1 KB no format claims (detection once took minutes on such a file, and the view stayed empty).
    const junk = path.join(home, '.claude/projects/-tmp-junk/33333333-0000-4000-8000-000000000003.jsonl');
    mkdirSync(path.dirname(junk), { recursive: true });
    writeFileSync(junk, `{"a":"${'x'.repeat(1000)}"}\n`.repeat(3000));
    const codexDir = path.join(home, '.codex/sessions/2026/03/21');
    const original = readdirSync(codexDir).find((n) => n.startsWith('rollout-'))!;
    const rollout = path.join(home, '.codex/sessions/2026/03/22/rollout-2026-03-22T10-00-00-new\nline.jsonl');
    mkdirSync(path.dirname(rollout), { recursive: true });
    copyFileSync(path.join(codexDir, original), rollout);
    try {
      await service.sync(false);
      assert.ok(
        service.current().some((r) => r.path === rollout),
        'the rollout whose name holds a newline is listed',
      );
      assert.ok(service.unread, 'what was not read is kept for the view');
      assert.equal(service.unread.count, 1);
      assert.ok(service.unread.note.includes(junk), service.unread.note);
      const message = api.sessions.tree.view?.message ?? '';
      assert.equal(message, "1 entry under the agents' folders could not be read: see Output ▸ Agent Trace Inspector.");
      assertInert(message, 'the view message', 200);
      // A rescan that finds the same says nothing new; the note stays.
      await service.sync(false);
      assert.equal(service.unread?.count, 1);
    } finally {
      rmSync(path.dirname(junk), { recursive: true, force: true });
      rmSync(path.dirname(rollout), { recursive: true, force: true });
      await service.sync(false);
    }
    assert.equal(service.unread, null, 'gone once the file is');
    assert.equal(api.sessions.tree.view?.message, undefined);
  });
});
