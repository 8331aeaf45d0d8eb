import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { codexFormat } from '../../../../../src/core/trace/codex/definition';
import { parseTrace } from '../../../../../src/core/trace/parseTrace';
import type { Session, ToolCall } from '../../../../../src/core/trace/model';
import { chunked, fixtures, needsShared, parseFile, parseText, sharedTrace } from '../../../../support/helpers';
import { assertRoundTrip } from '../../../../support/roundTrip';

// Expected figures: call counts and token totals come from test/reference/codex_deltas.py, which
// differences the cumulative total_token_usage instead of reading last_token_usage (run it on both
// files). Single calls, lines, turns and tool results were read off the files by hand or with grep;
// line numbers in comments are 1-based file lines, `source.line` is 0-based.

/** Codex CLI 0.60.1, no licence: read from the shared traces, never copied into the repo. */
const RTCHESS = sharedTrace('codex/rtchess-exported-session.jsonl');
/** Codex CLI 0.114.0, TraceLab's published excerpt (Apache-2.0 / CC BY 4.0, see test/fixtures/README.md). */
const TRACELAB = join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl');

const ms = (iso: string): number => Date.parse(iso);
const line = (t: { source: { line: number } }): number => t.source.line + 1;
const tools = (s: Session): ToolCall[] => s.calls.flatMap((c) => c.toolCalls);

describe('Codex reader on the rtchess rollout (0.60.1)', { skip: needsShared(RTCHESS) }, async () => {
  const parsed = RTCHESS === null ? null : await parseFile(RTCHESS);
  const main = (): Session => parsed!.model.sessions[0]!;

  it('detects the rollout and reads one main session from session_meta', () => {
    assert.equal(parsed!.problem, null);
    assert.equal(parsed!.model.format, 'codex');
    assert.equal(parsed!.model.sessions.length, 1);
    const s = main();
    assert.deepEqual([s.id, s.role, s.parentId, s.agent, s.cwd, s.model], [
      '019aad50-a7e6-7422-b7a8-0b384290624f',
      'main',
      null,
      { name: 'codex', version: '0.60.1' },
      '/Users/pinouchon/code/rtchess',
      'gpt-5.1-codex-max',
    ]);
  });

  it('§12.2 duplicate token_count: 315 calls from 630 usage reports, one info:null report', () => {
    // grep -c '"type":"token_count"' → 631; one has "info":null (line 7); the other 630 are pairs.
    assert.equal(main().calls.length, 315);
    assert.equal(parsed!.model.skippedRecords['event_msg:token_count (repeated)'], 315);
    assert.equal(parsed!.model.skippedRecords['event_msg:token_count (no usage)'], 1);
  });

  it('maps the first two calls by hand from the raw lines', () => {
    // Line 9: token_count, last_token_usage {input 3559, cached 3072, output 31, reasoning 0};
    // line 14 repeats it. Lines 10–12: reasoning, shell_command "ls", its output. Line 16: the
    // next report {3648, 3072, 33, 0} (total 7271 = 3590 + 3681); lines 17–19: "ls -la".
    // The request started at the turn_context before the report (lines 5 and 13).
    const [a, b] = main().calls;
    assert.deepEqual([a!.id, line(a!), a!.index, a!.turn, a!.model], ['019aad50-a7e6-7422-b7a8-0b384290624f#1', 9, 0, 0, 'gpt-5.1-codex-max']);
    assert.deepEqual(a!.tokens, { input: 3559, cached: 3072, appended: 487, cacheWrite: null, output: 31, reasoningOutput: 0 });
    assert.deepEqual([a!.startMs, a!.endMs], [ms('2025-11-22T20:48:36.903Z'), ms('2025-11-22T20:48:46.593Z')]);
    assert.deepEqual(a!.toolCalls.map((t) => [t.id, t.name, t.command, line(t), t.resultSource!.line + 1, t.isError, t.exitCode]), [
      ['call_KLyTWxCoVwf4p9s4u1x5YS1b', 'shell_command', 'ls', 11, 12, false, 0],
    ]);
    assert.deepEqual([line(b!), b!.startMs, b!.endMs], [16, ms('2025-11-22T20:48:46.594Z'), ms('2025-11-22T20:48:48.947Z')]);
    assert.deepEqual(b!.tokens, { input: 3648, cached: 3072, appended: 576, cacheWrite: null, output: 33, reasoningOutput: 0 });
    assert.deepEqual(b!.toolCalls.map((t) => [t.command, line(t)]), [['ls -la', 18]]);
  });

  it('gives 0.60 response items to the report before them (the usage is logged first)', () => {
    // Line 59 reports output 11,484 (reasoning 1,728); the apply_patch on line 61 that creates
    // app.js (~29k characters) follows it. The report after it (line 67) has output 5,104.
    const call = main().calls.find((c) => c.toolCalls.some((t) => line(t) === 61))!;
    assert.equal(line(call), 59);
    assert.deepEqual([call.tokens.output, call.tokens.reasoningOutput], [11484, 1728]);
    assert.equal(call.toolCalls[0]!.targetFile, '/Users/pinouchon/code/rtchess/app.js'); // "*** Add File: app.js" + cwd
  });

  it('§12.3 inclusive input: appended = input − cached, no cache-write figure', () => {
    for (const c of main().calls) {
      assert.equal(c.tokens.appended, c.tokens.input! - c.tokens.cached!);
      assert.equal(c.tokens.cacheWrite, null);
    }
  });

  it('totals equal the differences of total_token_usage (test/reference/codex_deltas.py)', () => {
    const s = summarizeSession(main());
    assert.deepEqual(s.tokens, { input: 25316203, cached: 24232960, appended: 1083243, cacheWrite: null, output: 173044 });
    assert.equal(main().calls.reduce((n, c) => n + c.tokens.reasoningOutput!, 0), 78592);
    assert.ok(Math.abs(s.cacheHitRate! - 0.9572114744063318) < 1e-12);
    assert.ok(Math.abs(s.rawInputToOutput! - 146.29922447470008) < 1e-9);
    assert.ok(Math.abs(s.appendToOutput.mean! - 26.823739945332523) < 1e-9);
    assert.ok(Math.abs(s.appendToOutput.median! - 3.954314720812183) < 1e-12);
    assert.ok(Math.abs(s.appendToOutput.aggregate! - 6.259928110769515) < 1e-12);
    // The script finds no report whose last_token_usage differs from its difference; nor does the reader.
    assert.equal(parsed!.model.diagnostics.filter((d) => /differs from the change/.test(d.message)).length, 0);
  });

  it('finds the 8 failed apply_patch calls and the 8 shell commands that exited 1', () => {
    // grep -n 'apply_patch verification failed' → result lines 238 677 847 862 1439 1512 1859 1992,
    // each right after its custom_tool_call; grep -n 'Exit code: [1-9]' → 168 264 750 1444 1575
    // 1720 1732 1834. The patch targets are the paths in "Failed to find expected lines in <path>:".
    const failed = tools(main()).filter((t) => t.isError === true);
    const root = '/Users/pinouchon/code/rtchess/';
    assert.deepEqual(
      failed.filter((t) => t.name === 'apply_patch').map((t) => [line(t), t.resultSource!.line + 1, t.targetFile, t.exitCode]),
      [
        [237, 238, `${root}app.js`, null],
        [676, 677, `${root}app.js`, null],
        [846, 847, `${root}app.js`, null],
        [861, 862, `${root}app.js`, null],
        [1438, 1439, `${root}ui.js`, null],
        [1511, 1512, `${root}README.md`, null],
        [1858, 1859, `${root}export_development_history.py`, null],
        [1991, 1992, `${root}export_development_history.py`, null],
      ],
    );
    assert.deepEqual(
      failed.filter((t) => t.name === 'shell_command').map((t) => [t.resultSource!.line + 1, t.exitCode]),
      [168, 264, 750, 1444, 1575, 1720, 1732, 1834].map((n) => [n, 1]),
    );
    assert.equal(failed.length, 16);
    assert.match(failed[1]!.errorText!, /^apply_patch verification failed: Failed to find expected lines in \/Users\/pinouchon\/code\/rtchess\/app\.js:\nfunction renderBoard\(\) \{/);
    // Line 1834: the command output after "Output:" is the error text.
    assert.equal(failed.find((t) => t.resultSource!.line + 1 === 1834)!.errorText, 'head: exported-session.jsonl: No such file or directory');
    // Line 1574 runs apply_patch through the shell with a heredoc: its target is in the patch.
    assert.equal(failed.find((t) => line(t) === 1574)!.targetFile, `${root}index.js`);
  });

  it('pairs all 266 tool calls; durations come from "Wall time" and apply_patch metadata', () => {
    const all = tools(main());
    assert.equal(all.length, 266); // 159 custom_tool_call + 107 function_call
    assert.equal(all.filter((t) => t.resultSource === null || t.isError === null).length, 0);
    // Line 26: "Wall time: 0.1 seconds"; line 48: "duration_seconds":0.0 for the first apply_patch.
    const byLine = (n: number): ToolCall => all.find((t) => line(t) === n)!;
    assert.deepEqual([byLine(25).command, byLine(25).durationMs], ['git status -sb', 100]);
    assert.deepEqual([byLine(47).name, byLine(47).durationMs, byLine(47).exitCode, byLine(47).targetFile], ['apply_patch', 0, 0, '/Users/pinouchon/code/rtchess/index.html']);
  });

  it('counts 50 typed prompts, not the environment context, and notes the interrupted turn', () => {
    const turns = main().turns;
    assert.equal(turns.length, 50);
    // Line 2 is <environment_context>; line 3 the first prompt (its event copy is line 4).
    assert.deepEqual([line(turns[0]!), turns[0]!.preview.slice(0, 30)], [3, 'I want to make a chess variant']);
    assert.equal(parsed!.model.skippedRecords['response_item:message (injected context)'], 1);
    // The prompt on line 1253 was interrupted (turn_aborted, line 1258) and sent again on line 1259.
    assert.deepEqual(turns.filter((t) => t.preview.startsWith("Now let's go forward")).map(line), [1253, 1259]);
    const note = parsed!.model.diagnostics.find((d) => /interrupted/.test(d.message));
    assert.equal(note!.line + 1, 1258);
    assert.deepEqual([main().calls[0]!.turn, main().calls[314]!.turn], [0, 49]);
  });

  it('§12.7 skips UI copies and snapshots without failing', () => {
    const skipped = parsed!.model.skippedRecords;
    assert.deepEqual(
      [skipped['response_item:ghost_snapshot'], skipped['event_msg:agent_reasoning'], skipped['event_msg:agent_message']],
      [50, 137, 48],
    );
    assert.deepEqual(parsed!.model.diagnostics.map((d) => d.severity), ['info']);
  });

  it('§12.9 cut file: the last report (line 2000) is a call whose items were cut off', () => {
    const last = main().calls[314]!;
    assert.deepEqual([line(last), last.tokens.input, last.tokens.cached, last.toolCalls.length], [2000, 141451, 140672, 0]);
    assert.equal(main().calls.filter((c) => c.tokens.input === null).length, 0);
  });

  it('gives the same calls whatever the chunk size', async () => {
    const small = await parseTrace([chunked(RTCHESS!, 4093)]);
    assert.deepEqual(
      small.model.sessions[0]!.calls.map((c) => [c.tokens, c.source.offset, c.toolCalls.length]),
      main().calls.map((c) => [c.tokens, c.source.offset, c.toolCalls.length]),
    );
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed!);
  });
});

describe('Codex reader on the TraceLab excerpt (0.114.0)', async () => {
  const parsed = await parseFile(TRACELAB);
  const main = parsed.model.sessions[0]!;
  const all = tools(main);
  const byLine = (n: number): ToolCall => all.find((t) => line(t) === n)!;

  it('detects the rollout and reads session_meta', () => {
    assert.equal(parsed.problem, null);
    assert.equal(parsed.model.format, 'codex');
    assert.deepEqual([main.id, main.agent, main.cwd, main.model], ['01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73', { name: 'codex', version: '0.114.0' }, '/workspace/project', 'gpt-5.4']);
  });

  it('reads 9 calls with the totals of the delta method', () => {
    assert.equal(main.calls.length, 9);
    const s = summarizeSession(main);
    assert.deepEqual(s.tokens, { input: 95819, cached: 79488, appended: 16331, cacheWrite: null, output: 1912 });
    assert.equal(main.calls.reduce((n, c) => n + c.tokens.reasoningOutput!, 0), 581);
    assert.ok(Math.abs(s.cacheHitRate! - 0.8295640739310575) < 1e-12);
    assert.ok(Math.abs(s.appendToOutput.median! - 4.870967741935484) < 1e-12);
  });

  it('gives 0.114 response items to the report after them (items stream in, usage comes last)', () => {
    // Lines 9–14: reasoning, an assistant message, three exec_command calls; line 15: the report
    // {input 9324, cached 6912, output 444, reasoning 199}; the outputs follow on lines 16–18.
    // The call's first line is its first item; it started at the prompt (line 7).
    const [a, b] = main.calls;
    assert.deepEqual([line(a!), a!.startMs, a!.endMs], [9, ms('2026-03-21T10:05:59.328Z'), ms('2026-03-21T10:06:05.542Z')]);
    assert.deepEqual(a!.tokens, { input: 9324, cached: 6912, appended: 2412, cacheWrite: null, output: 444, reasoningOutput: 199 });
    assert.deepEqual(a!.toolCalls.map((t) => [t.name, line(t), t.command]), [
      ['exec_command', 12, 'pwd'],
      ['exec_command', 13, "rg --files -g 'AGENTS.md' -g 'agents.md' -g 'Agents.md'"],
      ['exec_command', 14, 'find .. -name AGENTS.md -o -name agents.md -o -name Agents.md'],
    ]);
    // Lines 19–22 (write_stdin), report on line 23; it started at the last output (line 18).
    assert.deepEqual([line(b!), b!.startMs, b!.endMs, b!.tokens.output], [19, ms('2026-03-21T10:06:06.704Z'), ms('2026-03-21T10:06:08.390Z'), 94]);
    assert.deepEqual(main.calls.map((c) => c.toolCalls.length), [3, 1, 1, 2, 0, 2, 0, 1, 0]);
  });

  it('reads both 0.114 output shapes, a running process and a plain failure', () => {
    // Line 16: "Process exited with code 0"; 17: code 1 (rg found nothing); 18 and 24:
    // "Process running with session ID 74219" (no result yet); 28: "write_stdin failed: …".
    assert.deepEqual([byLine(12).isError, byLine(12).exitCode], [false, 0]);
    assert.deepEqual([byLine(13).isError, byLine(13).exitCode, byLine(13).resultSource!.line + 1], [true, 1, 17]);
    assert.deepEqual([byLine(14).isError, byLine(14).exitCode, byLine(14).durationMs], [null, null, 1002]); // Wall time: 1.0016 seconds
    assert.deepEqual([byLine(22).name, byLine(22).isError, byLine(22).command, byLine(22).durationMs], ['write_stdin', null, null, 5001]);
    const stdin = byLine(26);
    assert.deepEqual([stdin.isError, stdin.exitCode, stdin.resultSource!.line + 1], [true, null, 28]);
    assert.equal(stdin.errorText, 'write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true to keep stdin open');
    assert.equal(all.filter((t) => t.isError === true).length, 2);
  });

  it('counts three typed prompts, not the AGENTS.md block or developer messages', () => {
    // Line 3 is "# AGENTS.md instructions for …" (role user); lines 2 and 5 are developer messages.
    assert.deepEqual(main.turns.map((t) => [line(t), t.preview]), [
      [7, '│ Public status panel omitted │ ╰────────────────────────────╯ why still show agents.md none'],
      [44, "'/workspace/project/AGENT.md'"],
      [61, 'rename'],
    ]);
    assert.deepEqual(main.calls.map((c) => c.turn), [0, 0, 0, 0, 0, 1, 1, 2, 2]);
    assert.equal(parsed.model.skippedRecords['response_item:message (developer)'], 2);
    assert.deepEqual(parsed.model.diagnostics, []);
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('Codex reader: edge cases from docs/design/formats.md §12', () => {
  const at = (s: number): string => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000Z`;
  const rec = (s: number, type: string, payload: object): string => JSON.stringify({ timestamp: at(s), type, payload });
  const meta = (extra: object = {}): string => rec(0, 'session_meta', { id: 's1', cwd: '/repo', cli_version: '0.114.0', ...extra });
  const ctx = (s: number): string => rec(s, 'turn_context', { cwd: '/repo', model: 'gpt-5.4' });
  const user = (s: number, text: string): string => rec(s, 'response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
  const usage = (s: number, total: number[], last: number[] = total): string => {
    const u = ([i, c, o, r]: number[]) => ({ input_tokens: i, cached_input_tokens: c, output_tokens: o, reasoning_output_tokens: r, total_tokens: i! + o! });
    return rec(s, 'event_msg', { type: 'token_count', info: { total_token_usage: u(total), last_token_usage: u(last), model_context_window: 258400 }, rate_limits: null });
  };
  const fn = (s: number, id: string, name: string, args: string): string => rec(s, 'response_item', { type: 'function_call', name, arguments: args, call_id: id });
  const out = (s: number, id: string, output: unknown): string => rec(s, 'response_item', { type: 'function_call_output', call_id: id, output });
  const read = async (...lines: string[]) => (await parseText(lines.join('\n') + '\n', 'rollout.jsonl')).model;

  it('§12.10 info:null is no usage: no call, not a call with zero tokens', async () => {
    const model = await read(meta(), user(1, 'hi'), rec(2, 'event_msg', { type: 'token_count', info: null, rate_limits: null }));
    assert.equal(model.sessions[0]!.calls.length, 0);
    assert.equal(model.skippedRecords['event_msg:token_count (no usage)'], 1);
  });

  it('§12.7 unknown record and payload types are counted and skipped; a line without payload is a warning', async () => {
    const model = await read(meta(), rec(1, 'something_new', { x: 1 }), rec(1, 'event_msg', { type: 'exec_command_begin' }), JSON.stringify({ timestamp: at(1), type: 'response_item' }), user(2, 'go'), usage(3, [10, 4, 2, 0]));
    assert.equal(model.sessions[0]!.calls.length, 1);
    assert.equal(model.skippedRecords['unknown:something_new'], 1);
    assert.equal(model.skippedRecords['event_msg:exec_command_begin'], 1);
    assert.deepEqual(model.diagnostics.map((d) => [d.line + 1, d.severity]), [[4, 'warning']]);
  });

  it('arguments that are not JSON leave the command unknown and the rest loads', async () => {
    const model = await read(meta(), user(1, 'go'), fn(2, 'c1', 'shell_command', '{"command": "ls'), usage(3, [10, 0, 2, 0]), out(4, 'c1', 'Exit code: 0\nWall time: 0 seconds\nOutput:\n'));
    const t = model.sessions[0]!.calls[0]!.toolCalls[0]!;
    assert.deepEqual([t.name, t.command, t.isError], ['shell_command', null, false]);
    assert.match(model.diagnostics[0]!.message, /not a JSON object/);
  });

  it('a response interrupted before its report is kept as a call with unknown tokens', async () => {
    const model = await read(meta(), ctx(1), user(1, 'go'), fn(2, 'c1', 'exec_command', '{"cmd":"sleep 100"}'), rec(3, 'event_msg', { type: 'turn_aborted', reason: 'interrupted' }));
    const [call] = model.sessions[0]!.calls;
    assert.deepEqual(call!.tokens, { input: null, cached: null, appended: null, cacheWrite: null, output: null, reasoningOutput: null });
    assert.deepEqual([call!.toolCalls[0]!.command, call!.toolCalls[0]!.isError], ['sleep 100', null]);
    assert.ok(model.diagnostics.some((d) => /no usage report/.test(d.message)));
    assert.equal(summarizeSession(model.sessions[0]!).cacheHitRate, null);
  });

  it('reports a last_token_usage that disagrees with the change in the totals', async () => {
    const model = await read(meta(), user(1, 'go'), usage(2, [10, 4, 2, 0]), user(3, 'again'), usage(4, [30, 10, 5, 0], [25, 6, 3, 0]));
    assert.deepEqual(model.sessions[0]!.calls.map((c) => c.tokens.input), [10, 25]);
    assert.match(model.diagnostics.find((d) => d.line === 4)!.message, /^1 usage reports give a last_token_usage that differs/);
  });

  it('a compacted line becomes a compaction before the next call; context_compacted does not repeat it', async () => {
    const model = await read(meta(), user(1, 'go'), usage(2, [10, 4, 2, 0]), rec(3, 'compacted', { message: 'summary' }), rec(3, 'event_msg', { type: 'context_compacted' }), usage(4, [20, 4, 4, 0]));
    assert.deepEqual(model.sessions[0]!.compactions.map((c) => [c.beforeCall, c.trigger, c.preTokens, c.source.line + 1]), [[1, null, null, 4]]);
  });

  it('patch targets: the header path joined to the cwd, replaced by the path a failure names', async () => {
    const patch = (file: string) => `*** Begin Patch\n*** Update File: ${file}\n@@\n-a\n+b\n*** End Patch`;
    const model = await read(
      meta(),
      user(1, 'go'),
      usage(2, [10, 0, 2, 0]),
      rec(2, 'response_item', { type: 'custom_tool_call', status: 'completed', call_id: 'p1', name: 'apply_patch', input: patch('src/a.ts') }),
      rec(2, 'response_item', { type: 'custom_tool_call_output', call_id: 'p1', output: '{"output":"Success. Updated the following files:\\nM src/a.ts\\n","metadata":{"exit_code":0,"duration_seconds":0.2}}' }),
      rec(3, 'response_item', { type: 'custom_tool_call', status: 'completed', call_id: 'p2', name: 'apply_patch', input: patch('./b.ts') + '\n' + patch('c.ts') }),
      rec(3, 'response_item', { type: 'custom_tool_call_output', call_id: 'p2', output: 'apply_patch verification failed: Failed to find expected lines in /repo/c.ts:\n-a' }),
    );
    assert.deepEqual(model.sessions[0]!.calls[0]!.toolCalls.map((t) => [t.targetFile, t.isError, t.exitCode, t.durationMs]), [
      ['/repo/src/a.ts', false, 0, 200],
      ['/repo/c.ts', true, null, 0],
    ]);
  });

  it('a sub-agent rollout names its parent thread', async () => {
    const model = await read(meta({ source: { subagent: { thread_spawn: { parent_thread_id: 'p0', depth: 1 } } } }), user(1, 'go'), usage(2, [10, 0, 2, 0]));
    assert.deepEqual([model.sessions[0]!.role, model.sessions[0]!.parentId], ['subagent', 'p0']);
  });

  it('a task that reaches the model without a typed prompt still starts a turn', async () => {
    const model = await read(meta(), rec(1, 'event_msg', { type: 'task_started', turn_id: 't1' }), ctx(1), rec(2, 'response_item', { type: 'reasoning', summary: [] }), usage(3, [10, 0, 2, 2]));
    assert.deepEqual(model.sessions[0]!.turns.map((t) => [t.preview, t.source.line + 1]), [['(task started without a typed prompt)', 2]]);
    assert.equal(model.sessions[0]!.calls[0]!.turn, 0);
  });

  it('without session_meta the session still loads, with a warning', async () => {
    const model = await read(user(1, 'go'), usage(2, [10, 0, 2, 0]));
    assert.equal(model.sessions[0]!.id, 'codex-session');
    assert.equal(model.sessions[0]!.calls.length, 1);
    assert.ok(model.diagnostics.some((d) => d.severity === 'warning' && /No session_meta/.test(d.message)));
  });

  it('detection: rollout envelopes vote for Codex; `codex exec --json` lines and Claude lines do not', () => {
    assert.equal(codexFormat.matchesRecord!({ timestamp: at(0), type: 'event_msg', payload: { type: 'token_count', info: null } }), true);
    assert.equal(codexFormat.matchesRecord!({ type: 'thread.started', thread_id: 'x' }), false);
    assert.equal(codexFormat.matchesRecord!({ type: 'user', sessionId: 's', uuid: 'u', timestamp: at(0), message: {} }), false);
  });
});
