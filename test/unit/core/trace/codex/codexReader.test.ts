import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { findRetryLoops } from '../../../../../src/core/analysis/retryLoops';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { toolIntent, toolTarget } from '../../../../../src/core/analysis/toolTaxonomy';
import { codexFormat } from '../../../../../src/core/trace/codex/definition';
import { parseTrace, TraceParse } from '../../../../../src/core/trace/parseTrace';
import type { Session, ToolCall } from '../../../../../src/core/trace/model';
import {
  chunked,
  fixtures,
  LOCAL_ONLY,
  localSample,
  needsShared,
  parseFile,
  parseText,
  sharedTrace,
} from '../../../../support/helpers';
import { assertRoundTrip } from '../../../../support/roundTrip';

// Expected figures: call counts and token totals come from test/reference/codex_deltas.py, which
// differences the cumulative total_token_usage instead of reading last_token_usage (run it on both
// files). Single calls, lines, turns and tool results were read off the files by hand or with grep;
// line numbers in comments are 1-based file lines, `source.line` is 0-based.

/** Codex CLI 0.60.1, no licence: read from the shared traces, never copied into the repo. */
const RTCHESS = sharedTrace('codex/rtchess-exported-session.jsonl');
/** Codex CLI 0.114.0, TraceLab's published excerpt (Apache-2.0 / CC BY 4.0, see test/fixtures/README.md). */
const TRACELAB = join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl');
/** Codex CLI 0.144.1 in code mode, AkashJana18/edgerunner (Apache-2.0), first 558 lines (see test/fixtures/README.md). */
const EDGERUNNER = join(fixtures, 'codex/edgerunner-code-mode-0.144.1.head558.jsonl');
/** Real rollouts found without a licence (test/fixtures/README.md): read only from $AGENT_TRACE_LOCAL_SAMPLES. */
const GILDORE = localSample('codex/inspi-writer001+gildore-arena-codex-session.jsonl');
const VALDYUM = localSample('codex/mesayanroy+Valdyum-Labs-codex-session.jsonl');
const RAVE_ERA = localSample('codex/Krosss0001+rave-era-project-codex-session.jsonl');

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
    assert.deepEqual(
      [s.id, s.role, s.parentId, s.agent, s.cwd, s.model],
      [
        '019aad50-a7e6-7422-b7a8-0b384290624f',
        'main',
        null,
        { name: 'codex', version: '0.60.1' },
        '/Users/pinouchon/code/rtchess',
        'gpt-5.1-codex-max',
      ],
    );
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
    assert.deepEqual(
      [a!.id, line(a!), a!.index, a!.turn, a!.model],
      ['019aad50-a7e6-7422-b7a8-0b384290624f#1', 9, 0, 0, 'gpt-5.1-codex-max'],
    );
    assert.deepEqual(a!.tokens, {
      input: 3559,
      cached: 3072,
      appended: 487,
      cacheWrite: null,
      output: 31,
      reasoningOutput: 0,
    });
    assert.deepEqual([a!.startMs, a!.endMs], [ms('2025-11-22T20:48:36.903Z'), ms('2025-11-22T20:48:46.593Z')]);
    assert.deepEqual(
      a!.toolCalls.map((t) => [t.id, t.name, t.command, line(t), t.resultSource!.line + 1, t.isError, t.exitCode]),
      [['call_KLyTWxCoVwf4p9s4u1x5YS1b', 'shell_command', 'ls', 11, 12, false, 0]],
    );
    assert.deepEqual(
      [line(b!), b!.startMs, b!.endMs],
      [16, ms('2025-11-22T20:48:46.594Z'), ms('2025-11-22T20:48:48.947Z')],
    );
    assert.deepEqual(b!.tokens, {
      input: 3648,
      cached: 3072,
      appended: 576,
      cacheWrite: null,
      output: 33,
      reasoningOutput: 0,
    });
    assert.deepEqual(
      b!.toolCalls.map((t) => [t.command, line(t)]),
      [['ls -la', 18]],
    );
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
    assert.deepEqual(s.tokens, {
      input: 25316203,
      cached: 24232960,
      appended: 1083243,
      cacheWrite: null,
      output: 173044,
    });
    assert.equal(
      main().calls.reduce((n, c) => n + c.tokens.reasoningOutput!, 0),
      78592,
    );
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
      failed
        .filter((t) => t.name === 'apply_patch')
        .map((t) => [line(t), t.resultSource!.line + 1, t.targetFile, t.exitCode]),
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
    assert.match(
      failed[1]!.errorText!,
      /^apply_patch verification failed: Failed to find expected lines in \/Users\/pinouchon\/code\/rtchess\/app\.js:\nfunction renderBoard\(\) \{/,
    );
    // Line 1834: the command output after "Output:" is the error text.
    assert.equal(
      failed.find((t) => t.resultSource!.line + 1 === 1834)!.errorText,
      'head: exported-session.jsonl: No such file or directory',
    );
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
    assert.deepEqual(
      [byLine(47).name, byLine(47).durationMs, byLine(47).exitCode, byLine(47).targetFile],
      ['apply_patch', 0, 0, '/Users/pinouchon/code/rtchess/index.html'],
    );
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
      [
        skipped['response_item:ghost_snapshot'],
        skipped['event_msg:agent_reasoning'],
        skipped['event_msg:agent_message'],
      ],
      [50, 137, 48],
    );
    assert.deepEqual(
      parsed!.model.diagnostics.map((d) => d.severity),
      ['info'],
    );
  });

  it('§12.9 cut file: the last report (line 2000) is a call whose items were cut off', () => {
    const last = main().calls[314]!;
    assert.deepEqual(
      [line(last), last.tokens.input, last.tokens.cached, last.toolCalls.length],
      [2000, 141451, 140672, 0],
    );
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
    assert.deepEqual(
      [main.id, main.agent, main.cwd, main.model],
      ['01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73', { name: 'codex', version: '0.114.0' }, '/workspace/project', 'gpt-5.4'],
    );
  });

  it('reads 9 calls with the totals of the delta method', () => {
    assert.equal(main.calls.length, 9);
    const s = summarizeSession(main);
    assert.deepEqual(s.tokens, { input: 95819, cached: 79488, appended: 16331, cacheWrite: null, output: 1912 });
    assert.equal(
      main.calls.reduce((n, c) => n + c.tokens.reasoningOutput!, 0),
      581,
    );
    assert.ok(Math.abs(s.cacheHitRate! - 0.8295640739310575) < 1e-12);
    assert.ok(Math.abs(s.appendToOutput.median! - 4.870967741935484) < 1e-12);
  });

  it('gives 0.114 response items to the report after them (items stream in, usage comes last)', () => {
    // Lines 9–14: reasoning, an assistant message, three exec_command calls; line 15: the report
    // {input 9324, cached 6912, output 444, reasoning 199}; the outputs follow on lines 16–18.
    // The call's first line is its first item; it started at the prompt (line 7).
    const [a, b] = main.calls;
    assert.deepEqual(
      [line(a!), a!.startMs, a!.endMs],
      [9, ms('2026-03-21T10:05:59.328Z'), ms('2026-03-21T10:06:05.542Z')],
    );
    assert.deepEqual(a!.tokens, {
      input: 9324,
      cached: 6912,
      appended: 2412,
      cacheWrite: null,
      output: 444,
      reasoningOutput: 199,
    });
    assert.deepEqual(
      a!.toolCalls.map((t) => [t.name, line(t), t.command]),
      [
        ['exec_command', 12, 'pwd'],
        ['exec_command', 13, "rg --files -g 'AGENTS.md' -g 'agents.md' -g 'Agents.md'"],
        ['exec_command', 14, 'find .. -name AGENTS.md -o -name agents.md -o -name Agents.md'],
      ],
    );
    // Lines 19–22 (write_stdin), report on line 23; it started at the last output (line 18).
    assert.deepEqual(
      [line(b!), b!.startMs, b!.endMs, b!.tokens.output],
      [19, ms('2026-03-21T10:06:06.704Z'), ms('2026-03-21T10:06:08.390Z'), 94],
    );
    assert.deepEqual(
      main.calls.map((c) => c.toolCalls.length),
      [3, 1, 1, 2, 0, 2, 0, 1, 0],
    );
  });

  it('reads both 0.114 output shapes, a running process and a plain failure', () => {
    // Line 16: "Process exited with code 0"; 17: code 1 (rg found nothing); 18 and 24:
    // "Process running with session ID 74219" (no result yet); 28: "write_stdin failed: …".
    assert.deepEqual([byLine(12).isError, byLine(12).exitCode], [false, 0]);
    assert.deepEqual([byLine(13).isError, byLine(13).exitCode, byLine(13).resultSource!.line + 1], [true, 1, 17]);
    assert.deepEqual([byLine(14).isError, byLine(14).exitCode, byLine(14).durationMs], [null, null, 1002]); // Wall time: 1.0016 seconds
    assert.deepEqual(
      [byLine(22).name, byLine(22).isError, byLine(22).command, byLine(22).durationMs],
      ['write_stdin', null, null, 5001],
    );
    const stdin = byLine(26);
    assert.deepEqual([stdin.isError, stdin.exitCode, stdin.resultSource!.line + 1], [true, null, 28]);
    assert.equal(
      stdin.errorText,
      'write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true to keep stdin open',
    );
    assert.equal(all.filter((t) => t.isError === true).length, 2);
  });

  it('counts three typed prompts, not the AGENTS.md block or developer messages', () => {
    // Line 3 is "# AGENTS.md instructions for …" (role user); lines 2 and 5 are developer messages.
    assert.deepEqual(
      main.turns.map((t) => [line(t), t.preview]),
      [
        [7, '│ Public status panel omitted │ ╰────────────────────────────╯ why still show agents.md none'],
        [44, "'/workspace/project/AGENT.md'"],
        [61, 'rename'],
      ],
    );
    assert.deepEqual(
      main.calls.map((c) => c.turn),
      [0, 0, 0, 0, 0, 1, 1, 2, 2],
    );
    assert.equal(parsed.model.skippedRecords['response_item:message (developer)'], 2);
    assert.deepEqual(parsed.model.diagnostics, []);
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('Codex reader on a real code-mode rollout (0.144.1, edgerunner)', async () => {
  // Expected figures: test/reference/codex_code_mode.py (tool calls, failures, cells, prompts) and
  // test/reference/codex_deltas.py (calls and tokens), both run on this file; the rest read off the
  // lines named in the comments.
  const parsed = await parseFile(EDGERUNNER);
  const main = parsed.model.sessions[0]!;
  const all = tools(main);
  const byLine = (n: number): ToolCall => all.find((t) => line(t) === n)!;
  const root = '/Users/akash/Desktop/new/';

  it('detects the rollout, certain, and reads session_meta', () => {
    assert.equal(parsed.problem, null);
    assert.equal(parsed.model.format, 'codex');
    assert.deepEqual(
      [main.id, main.agent, main.cwd, main.model],
      [
        '019f4ce9-5831-7e71-ab0a-24a9d7358aab',
        { name: 'codex', version: '0.144.1' },
        '/Users/akash/Desktop/new',
        'gpt-5.6-sol',
      ],
    );
    // world_state (lines 7, 503) is a 0.144 record type: counted, not unknown.
    assert.equal(parsed.model.skippedRecords['world_state'], 2);
    assert.equal(parsed.model.skippedRecords['unknown:world_state'], undefined);
  });

  it('reads 110 calls with the totals of the delta method', () => {
    assert.equal(main.calls.length, 110);
    const s = summarizeSession(main);
    assert.deepEqual(s.tokens, {
      input: 18901212,
      cached: 17963520,
      appended: 937692,
      cacheWrite: null,
      output: 73136,
    });
    assert.equal(
      main.calls.reduce((n, c) => n + c.tokens.reasoningOutput!, 0),
      13562,
    );
    // Line 16: the first report {22727, 11008, 299, 101}; the exec on line 14 is its only tool.
    assert.deepEqual(main.calls[0]!.tokens, {
      input: 22727,
      cached: 11008,
      appended: 11719,
      cacheWrite: null,
      output: 299,
      reasoningOutput: 101,
    });
    assert.deepEqual(main.calls[0]!.toolCalls.map(line), [14]);
  });

  it('reads every tool of code mode: 94 exec scripts, 11 waits, 4 request_user_input', () => {
    const byName = new Map<string, number>();
    for (const t of all) byName.set(t.name, (byName.get(t.name) ?? 0) + 1);
    assert.deepEqual([...byName].sort(), [
      ['exec', 94],
      ['request_user_input', 4],
      ['wait', 11],
    ]);
    // Every call has its output in this cut (the reference finds none without one).
    assert.equal(all.filter((t) => t.resultSource === null).length, 0);
  });

  it('an exec script is the command it runs; a wait continues its cell with the same command', () => {
    // Line 14: tools.exec_command({"cmd":"pwd && printf …"}); line 15: "Script running with cell ID 1";
    // line 18: wait {"cell_id":"1"}, answered "Script completed / Wall time 0.0 seconds" on line 19.
    const exec = byLine(14);
    assert.match(exec.command!, /^pwd && printf '\\n-- files --\\n' && rg --files -g 'AGENTS\.md'/);
    assert.deepEqual([exec.isError, exec.resultSource!.line + 1, exec.durationMs], [null, 15, 10100]);
    const wait = byLine(18);
    assert.deepEqual(
      [wait.command, wait.isError, wait.resultSource!.line + 1, wait.durationMs],
      [exec.command, false, 19, 0],
    );
    // Classed by what the script runs: line 22 reads (`sed -n '1,260p' …/SKILL.md`), line 192 builds (`cargo check --workspace`).
    assert.deepEqual(
      [toolIntent(byLine(22)), byLine(22).command],
      ['explore', "sed -n '1,260p' /Users/akash/.codex/skills/find-next-crypto-idea/SKILL.md"],
    );
    assert.deepEqual([toolIntent(byLine(192)), byLine(192).command], ['execute', 'cargo check --workspace']);
    // The reference pairs all 11 waits with the exec that left their cell running.
    for (const [waitLine, execLine] of [
      [18, 14],
      [132, 128],
      [188, 184],
      [196, 192],
      [238, 234],
      [304, 300],
      [312, 308],
      [377, 373],
      [406, 402],
      [456, 452],
      [468, 464],
    ] as const) {
      assert.equal(byLine(waitLine).command, byLine(execLine).command, `wait on line ${waitLine}`);
    }
  });

  it('finds the 7 failures the reference finds, 5 of them apply_patch failures inside exec', () => {
    const failed = all.filter((t) => t.isError === true);
    assert.deepEqual(
      failed.map((t) => [line(t), t.resultSource!.line + 1, t.name]),
      [
        [140, 141, 'request_user_input'],
        [160, 161, 'exec'],
        [202, 203, 'exec'],
        [264, 265, 'exec'],
        [282, 283, 'exec'],
        [495, 496, 'exec'],
        [551, 552, 'exec'],
      ],
    );
    // The files: the path "Failed to find expected lines in <path>:" names (lines 203, 265, 283, 552),
    // or, for line 161's "invalid hunk", the first file of the script's patch literal
    // (`const patch = "*** Begin Patch\n*** Update File: Cargo.toml…"; tools.apply_patch(patch)`).
    assert.deepEqual(
      [160, 202, 264, 282, 551].map((n) => byLine(n).targetFile),
      [
        `${root}Cargo.toml`,
        `${root}crates/edgerunner-core/src/replay.rs`,
        `${root}crates/edgerunner-adapters/src/pascal.rs`,
        `${root}crates/edgerunner-core/src/engine.rs`,
        `${root}crates/edgerunner-service/src/server.rs`,
      ],
    );
    assert.match(
      byLine(202).errorText!,
      /^script failed\nScript error:\napply_patch verification failed: Failed to find expected lines in \/Users\/akash\/Desktop\/new\/crates\/edgerunner-core\/src\/replay\.rs:/,
    );
    assert.deepEqual(toolTarget(byLine(202)), {
      family: 'file-edit',
      kind: 'file',
      key: `${root}crates/edgerunner-core/src/replay.rs`,
    });
    // Line 496: the user stopped the script (turn_aborted on line 499): a failure, never a retry attempt.
    assert.equal(byLine(495).errorText, 'aborted by user after 77.1s');
    assert.equal(byLine(495).command, 'node scripts/visual-check.mjs');
    // Line 141: Codex refused the tool in Default mode.
    assert.equal(byLine(140).errorText, 'request_user_input is unavailable in Default mode');
    assert.deepEqual(findRetryLoops(main).loops, []);
  });

  it('a web search or a patch a script ran is part of that exec call, not a call of its own', () => {
    // 13 web_search_end (exec-… ids, lines 31–548) and 21 patch_apply_end events, all inside running scripts.
    assert.equal(parsed.model.skippedRecords['event_msg:web_search_end (inside exec)'], 13);
    assert.equal(all.filter((t) => t.name === 'web_search').length, 0);
    assert.equal(parsed.model.skippedRecords['event_msg:patch_apply_end'], undefined);
    assert.equal(parsed.model.skippedRecords['event_msg:item_completed (file-change, no script)'], undefined);
    // Line 490 adds web/scripts/visual-check.mjs (its patch_apply_end on line 491 lists it).
    assert.equal(byLine(490).targetFile, `${root}web/scripts/visual-check.mjs`);
  });

  it('counts three typed prompts and notes the interruption', () => {
    // Each prompt is the user item one line before its user_message event (the reference's 10, 124, 506).
    assert.deepEqual(main.turns.map(line), [9, 123, 505]);
    assert.match(
      main.turns[0]!.preview,
      /^https:\/\/superteam\.fun\/earn\/listing\/trading-tools-and-agents for this hackathon i want/,
    );
    assert.deepEqual(
      main.turns.slice(1).map((t) => t.preview),
      ['Implement the plan.', 'focus on the backend frontend i will handle'],
    );
    assert.deepEqual(
      parsed.model.diagnostics.map((d) => [d.line + 1, d.severity]),
      [[499, 'info']],
    );
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('Codex reader on a 0.144.5 code-mode rollout (gildore-arena, local only)', {
  skip: GILDORE === null && LOCAL_ONLY,
}, async () => {
  // Figures: test/reference/codex_code_mode.py and codex_deltas.py on the file.
  const parsed = GILDORE === null ? null : await parseFile(GILDORE);
  const main = (): Session => parsed!.model.sessions[0]!;

  it('reads the calls, the exec scripts and the search one of them ran', () => {
    assert.deepEqual(main().agent, { name: 'codex', version: '0.144.5' });
    // 9 usage reports, and one response (lines 68–71) the file ends before its report.
    assert.equal(main().calls.length, 10);
    assert.deepEqual(summarizeSession(main()).tokens, {
      input: 418442,
      cached: 362752,
      appended: 55690,
      cacheWrite: null,
      output: 3434,
    });
    assert.deepEqual(
      tools(main())
        .map((t) => t.name)
        .sort(),
      ['exec', 'exec', 'exec', 'exec', 'exec', 'exec', 'exec', 'request_user_input'],
    );
    assert.equal(parsed!.model.skippedRecords['event_msg:web_search_end (inside exec)'], 1);
    assert.equal(tools(main()).filter((t) => t.isError === true).length, 0);
    assert.deepEqual(
      main().turns.map((t) => line(t) + 1),
      [10, 55, 67],
    ); // the user_message lines; each turn starts at its item one line before
  });
});

describe('Codex reader on a 0.128 rollout with built-in web searches (Valdyum-Labs, local only)', {
  skip: VALDYUM === null && LOCAL_ONLY,
}, async () => {
  // Figures: test/reference/codex_code_mode.py and codex_deltas.py on the file.
  const parsed = VALDYUM === null ? null : await parseFile(VALDYUM);
  const main = (): Session => parsed!.model.sessions[0]!;

  it('web_search_end and the id-less web_search_call after it are one search', () => {
    // Lines 43/44 and 46/47: the event (id ws_…) comes first, the item after it has no id.
    const searches = tools(main()).filter((t) => t.name === 'web_search');
    assert.deepEqual(
      searches.map((t) => [line(t), t.isError]),
      [
        [43, false],
        [46, false],
      ],
    );
    assert.equal(parsed!.model.skippedRecords['response_item:web_search_call (reported by web_search_end)'], 2);
    assert.equal(tools(main()).length, 37); // 35 shell_command + 2 searches
  });

  it('finds the 8 failures: six exit codes 1 and two Windows sandbox errors', () => {
    assert.equal(main().calls.length, 6);
    assert.deepEqual(summarizeSession(main()).tokens, {
      input: 291563,
      cached: 229120,
      appended: 62443,
      cacheWrite: null,
      output: 6247,
    });
    const failed = tools(main()).filter((t) => t.isError === true);
    assert.deepEqual(
      failed.map((t) => [line(t), t.resultSource!.line + 1, t.exitCode]),
      [
        [13, 19, 1],
        [14, 22, null],
        [15, 24, 1],
        [16, 25, null],
        [29, 38, 1],
        [80, 97, 1],
        [85, 102, 1],
        [107, 115, 1],
      ],
    );
    assert.match(
      failed[1]!.errorText!,
      /^execution error: Io\(Custom \{ kind: Other, error: "windows sandbox: CreateProcessWithLogonW failed: 1056/,
    );
  });
});

describe('Codex reader on a 0.125 rollout copied while its last turn ran (rave-era-project, local only)', {
  skip: RAVE_ERA === null && LOCAL_ONLY,
}, async () => {
  // The file ends with four exec_command_end events (lines 626-629) and no function_call_output
  // after them; one of those commands (`git log --oneline -20`, line 628) exited 1.
  // Figures: test/reference/codex_exec_end.py on the file ("failed_by_output 7 failed_by_end 1").
  const parsed = RAVE_ERA === null ? null : await parseFile(RAVE_ERA);
  const main = (): Session => parsed!.model.sessions[0]!;

  it('a command whose failure only exec_command_end reports is failed: 8 failed calls, not 7', () => {
    assert.equal(summarizeSession(main()).failedToolCalls, 8);
    const gitLog = tools(main())
      .filter((t) => t.command?.includes('git log --oneline -20'))
      .at(-1)!;
    assert.deepEqual([gitLog.isError, gitLog.exitCode, gitLog.resultSource!.line + 1], [true, 1, 628]);
    assert.match(gitLog.errorText!, /^fatal: your current branch 'master' does not have any commits yet/);
  });

  it('the three that ended with exit code 0 succeeded; the call with neither output nor end has no outcome', () => {
    const ended = tools(main())
      .filter((t) => t.resultSource !== null && t.resultSource.line + 1 >= 626)
      .sort((a, b) => a.resultSource!.line - b.resultSource!.line);
    assert.deepEqual(
      ended.map((t) => [t.resultSource!.line + 1, t.isError, t.exitCode]),
      [
        [626, false, 0],
        [627, false, 0],
        [628, true, 1],
        [629, false, 0],
      ],
    );
    assert.equal(tools(main()).filter((t) => t.isError === null).length, 1);
    assert.ok(
      parsed!.model.diagnostics.some(
        (d) => d.line === 626 && /4 commands have no output record \(the file ends first\)/.test(d.message),
      ),
    );
  });

  it('the outcome is settled on copies: a live read snapshots the same file twice and gets the same answer', () => {
    // A rollout still being written is read incrementally; each snapshot must leave the reader's calls untouched.
    const parse = new TraceParse([RAVE_ERA!]);
    parse.push(0, readFileSync(RAVE_ERA!));
    parse.endFile(0);
    const first = parse.snapshot().model.sessions[0]!;
    const second = parse.snapshot().model.sessions[0]!;
    assert.equal(summarizeSession(first).failedToolCalls, 8);
    assert.equal(summarizeSession(second).failedToolCalls, 8);
  });
});

describe('Codex reader: 0.15x code-mode shapes (built from the records of a real 0.152 rollout, see docs/design/formats.md §2)', () => {
  // The shapes below are those of tenequm/pond's 0.152.0 rollout fixture (Apache-2.0), read through
  // the code index; the file itself could not be fetched, so these records are written here in its
  // shape (ids and texts shortened), not copied.
  const at = (s: number): string => `2026-09-01T18:51:${String(s).padStart(2, '0')}.000Z`;
  let ordinal = 0;
  const rec = (s: number, type: string, payload: object): string =>
    JSON.stringify({ timestamp: at(s), ordinal: ordinal++, type, payload });
  const usage = (s: number, total: number[], last: number[]): string => {
    const u = ([i, c, o, r]: number[]) => ({
      input_tokens: i,
      cached_input_tokens: c,
      cache_write_input_tokens: 0,
      output_tokens: o,
      reasoning_output_tokens: r,
      total_tokens: i! + o!,
    });
    return rec(s, 'event_msg', {
      type: 'token_count',
      info: { total_token_usage: u(total), last_token_usage: u(last), model_context_window: 258400 },
    });
  };
  const exec = (s: number, id: string, input: string): string =>
    rec(s, 'response_item', { type: 'custom_tool_call', status: 'completed', call_id: id, name: 'exec', input });
  const out = (s: number, id: string, head: string, ...items: string[]): string =>
    rec(s, 'response_item', {
      type: 'custom_tool_call_output',
      call_id: id,
      output: [
        { type: 'input_text', text: `${head}\nWall time 0.1 seconds\nOutput:\n` },
        ...items.map((text) => ({ type: 'input_text', text })),
      ],
    });
  const command = (s: number, cmd: string, exit: number): string =>
    rec(s, 'event_msg', {
      type: 'item_completed',
      item: {
        type: 'CommandExecution',
        id: `exec-${s}`,
        command: ['/bin/zsh', '-lc', cmd],
        status: exit === 0 ? 'completed' : 'failed',
        exit_code: exit,
      },
    });
  const printed = (exit: number): string =>
    JSON.stringify({
      chunk_id: 'c',
      wall_time_seconds: 0.0000037,
      exit_code: exit,
      original_token_count: 0,
      output: '',
    });
  const prompt = 'Run `echo a`, `false`, `echo b` in one exec script.';
  const lines = (): string[] => {
    ordinal = 0;
    return [
      rec(0, 'session_meta', {
        id: 's152',
        cwd: '/tmp/repo',
        originator: 'codex_exec',
        cli_version: '0.152.0',
        history_mode: 'paginated',
      }),
      rec(0, 'event_msg', { type: 'task_started', turn_id: 't1' }),
      rec(1, 'response_item', {
        type: 'message',
        role: 'user',
        content: [
          {
            type: 'input_text',
            text: '<recommended_plugins>\n- GitHub (github@openai-curated-remote)\n</recommended_plugins>',
          },
          { type: 'input_text', text: '<environment_context>\n  <cwd>/tmp/repo</cwd>\n</environment_context>' },
        ],
      }),
      rec(1, 'world_state', { full: true, state: {} }),
      rec(1, 'turn_context', { turn_id: 't1', cwd: '/tmp/repo', model: 'gpt-5.6-sol' }),
      rec(1, 'response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: prompt }] }),
      rec(1, 'event_msg', {
        type: 'item_completed',
        item: { type: 'UserMessage', id: 'u1', content: [{ type: 'text', text: prompt, text_elements: [] }] },
      }),
      exec(
        2,
        'c1',
        'const r1 = await tools.exec_command({cmd:"echo a","workdir":"/tmp/repo"});\ntext(r1);\nconst r2 = await tools.exec_command({cmd:"false","workdir":"/tmp/repo"});\ntext(r2);\nconst r3 = await tools.exec_command({cmd:"echo b","workdir":"/tmp/repo"});\ntext(r3);\n',
      ),
      command(3, 'echo a', 0),
      command(4, 'false', 1),
      command(5, 'echo b', 0),
      out(6, 'c1', 'Script completed', printed(0), printed(1), printed(0)),
      usage(6, [15237, 14080, 161, 15], [15237, 14080, 161, 15]),
      exec(7, 'c2', 'const r = await tools.exec_command({cmd:"cat missing.txt"});\ntext(r);\n'),
      command(8, 'cat missing.txt', 1),
      out(9, 'c2', 'Script completed with cell ID 2', printed(1)),
      exec(
        10,
        'c3',
        'const patch = "*** Begin Patch\\n*** Update File: /tmp/repo/notes.md\\n@@\\n hello\\n+second line\\n*** End Patch";\ntext(await tools.apply_patch(patch));\n',
      ),
      rec(11, 'event_msg', {
        type: 'item_completed',
        item: {
          type: 'FileChange',
          id: 'exec-11',
          changes: { '/tmp/repo/notes.md': { type: 'update' } },
          status: 'completed',
        },
      }),
      out(12, 'c3', 'Script completed', '{}'),
      exec(13, 'c4', 'await tools.exec_command({cmd:"sleep 600"});'),
      out(14, 'c4', 'Script terminated with cell ID 4'),
      usage(14, [30458, 28160, 220, 15], [15221, 14080, 59, 0]),
    ];
  };
  const read = async () => (await parseText(lines().join('\n') + '\n', 'rollout.jsonl')).model;

  it('a nested command that exits non-zero fails its exec call, named by the command inside the shell argv', async () => {
    const [first, second, patch, terminated] = tools((await read()).sessions[0]!);
    assert.deepEqual([first!.isError, first!.exitCode, first!.command], [true, 1, 'false']);
    assert.match(first!.errorText!, /^`false` exited with code 1\n/);
    assert.deepEqual([second!.isError, second!.exitCode, second!.command], [true, 1, 'cat missing.txt']);
    assert.deepEqual([patch!.isError, patch!.targetFile], [false, '/tmp/repo/notes.md']);
    assert.deepEqual([terminated!.isError, terminated!.command], [true, 'sleep 600']);
    assert.match(terminated!.errorText!, /^script terminated/);
  });

  it('cache_write_input_tokens: 0 is a value', async () => {
    const calls = (await read()).sessions[0]!.calls;
    assert.deepEqual(
      calls.map((c) => c.tokens.cacheWrite),
      [0, 0],
    );
    assert.deepEqual(calls[0]!.tokens, {
      input: 15237,
      cached: 14080,
      appended: 1157,
      cacheWrite: 0,
      output: 161,
      reasoningOutput: 15,
    });
  });

  it('with no user_message events, the UserMessage item marks the typed prompt; plugin lists are not prompts', async () => {
    const model = await read();
    assert.deepEqual(
      model.sessions[0]!.turns.map((t) => [t.preview, t.source.line + 1]),
      [[prompt, 6]],
    );
    assert.equal(model.skippedRecords['response_item:message (injected context)'], 1);
    assert.equal(model.skippedRecords['world_state'], 1);
  });
});

describe('Codex reader: edge cases from docs/design/formats.md §12', () => {
  const at = (s: number): string => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000Z`;
  const rec = (s: number, type: string, payload: object): string => JSON.stringify({ timestamp: at(s), type, payload });
  const meta = (extra: object = {}): string =>
    rec(0, 'session_meta', { id: 's1', cwd: '/repo', cli_version: '0.114.0', ...extra });
  const ctx = (s: number): string => rec(s, 'turn_context', { cwd: '/repo', model: 'gpt-5.4' });
  const user = (s: number, text: string): string =>
    rec(s, 'response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
  const usage = (s: number, total: number[], last: number[] = total): string => {
    const u = ([i, c, o, r]: number[]) => ({
      input_tokens: i,
      cached_input_tokens: c,
      output_tokens: o,
      reasoning_output_tokens: r,
      total_tokens: i! + o!,
    });
    return rec(s, 'event_msg', {
      type: 'token_count',
      info: { total_token_usage: u(total), last_token_usage: u(last), model_context_window: 258400 },
      rate_limits: null,
    });
  };
  const fn = (s: number, id: string, name: string, args: string): string =>
    rec(s, 'response_item', { type: 'function_call', name, arguments: args, call_id: id });
  const out = (s: number, id: string, output: unknown): string =>
    rec(s, 'response_item', { type: 'function_call_output', call_id: id, output });
  const read = async (...lines: string[]) => (await parseText(lines.join('\n') + '\n', 'rollout.jsonl')).model;

  it('§12.10 info:null is no usage: no call, not a call with zero tokens', async () => {
    const model = await read(
      meta(),
      user(1, 'hi'),
      rec(2, 'event_msg', { type: 'token_count', info: null, rate_limits: null }),
    );
    assert.equal(model.sessions[0]!.calls.length, 0);
    assert.equal(model.skippedRecords['event_msg:token_count (no usage)'], 1);
  });

  it('§12.7 unknown record and payload types are counted and skipped; a line without payload is a warning', async () => {
    const model = await read(
      meta(),
      rec(1, 'something_new', { x: 1 }),
      rec(1, 'event_msg', { type: 'exec_command_begin' }),
      JSON.stringify({ timestamp: at(1), type: 'response_item' }),
      user(2, 'go'),
      usage(3, [10, 4, 2, 0]),
    );
    assert.equal(model.sessions[0]!.calls.length, 1);
    assert.equal(model.skippedRecords['unknown:something_new'], 1);
    assert.equal(model.skippedRecords['event_msg:exec_command_begin'], 1);
    assert.deepEqual(
      model.diagnostics.map((d) => [d.line + 1, d.severity]),
      [[4, 'warning']],
    );
  });

  it('arguments that are not JSON leave the command unknown and the rest loads', async () => {
    const model = await read(
      meta(),
      user(1, 'go'),
      fn(2, 'c1', 'shell_command', '{"command": "ls'),
      usage(3, [10, 0, 2, 0]),
      out(4, 'c1', 'Exit code: 0\nWall time: 0 seconds\nOutput:\n'),
    );
    const t = model.sessions[0]!.calls[0]!.toolCalls[0]!;
    assert.deepEqual([t.name, t.command, t.isError], ['shell_command', null, false]);
    assert.match(model.diagnostics[0]!.message, /not a JSON object/);
  });

  it('a response interrupted before its report is kept as a call with unknown tokens', async () => {
    const model = await read(
      meta(),
      ctx(1),
      user(1, 'go'),
      fn(2, 'c1', 'exec_command', '{"cmd":"sleep 100"}'),
      rec(3, 'event_msg', { type: 'turn_aborted', reason: 'interrupted' }),
    );
    const [call] = model.sessions[0]!.calls;
    assert.deepEqual(call!.tokens, {
      input: null,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: null,
      reasoningOutput: null,
    });
    assert.deepEqual([call!.toolCalls[0]!.command, call!.toolCalls[0]!.isError], ['sleep 100', null]);
    assert.ok(model.diagnostics.some((d) => /no usage report/.test(d.message)));
    assert.equal(summarizeSession(model.sessions[0]!).cacheHitRate, null);
  });

  it('reports a last_token_usage that disagrees with the change in the totals', async () => {
    const model = await read(
      meta(),
      user(1, 'go'),
      usage(2, [10, 4, 2, 0]),
      user(3, 'again'),
      usage(4, [30, 10, 5, 0], [25, 6, 3, 0]),
    );
    assert.deepEqual(
      model.sessions[0]!.calls.map((c) => c.tokens.input),
      [10, 25],
    );
    assert.match(
      model.diagnostics.find((d) => d.line === 4)!.message,
      /^1 usage reports give a last_token_usage that differs/,
    );
  });

  it('a compacted line becomes a compaction before the next call; context_compacted does not repeat it', async () => {
    const model = await read(
      meta(),
      user(1, 'go'),
      usage(2, [10, 4, 2, 0]),
      rec(3, 'compacted', { message: 'summary' }),
      rec(3, 'event_msg', { type: 'context_compacted' }),
      usage(4, [20, 4, 4, 0]),
    );
    assert.deepEqual(
      model.sessions[0]!.compactions.map((c) => [c.beforeCall, c.trigger, c.preTokens, c.source.line + 1]),
      [[1, null, null, 4]],
    );
  });

  it('patch targets: the header path joined to the cwd, replaced by the path a failure names', async () => {
    const patch = (file: string) => `*** Begin Patch\n*** Update File: ${file}\n@@\n-a\n+b\n*** End Patch`;
    const model = await read(
      meta(),
      user(1, 'go'),
      usage(2, [10, 0, 2, 0]),
      rec(2, 'response_item', {
        type: 'custom_tool_call',
        status: 'completed',
        call_id: 'p1',
        name: 'apply_patch',
        input: patch('src/a.ts'),
      }),
      rec(2, 'response_item', {
        type: 'custom_tool_call_output',
        call_id: 'p1',
        output:
          '{"output":"Success. Updated the following files:\\nM src/a.ts\\n","metadata":{"exit_code":0,"duration_seconds":0.2}}',
      }),
      rec(3, 'response_item', {
        type: 'custom_tool_call',
        status: 'completed',
        call_id: 'p2',
        name: 'apply_patch',
        input: patch('./b.ts') + '\n' + patch('c.ts'),
      }),
      rec(3, 'response_item', {
        type: 'custom_tool_call_output',
        call_id: 'p2',
        output: 'apply_patch verification failed: Failed to find expected lines in /repo/c.ts:\n-a',
      }),
    );
    assert.deepEqual(
      model.sessions[0]!.calls[0]!.toolCalls.map((t) => [t.targetFile, t.isError, t.exitCode, t.durationMs]),
      [
        ['/repo/src/a.ts', false, 0, 200],
        ['/repo/c.ts', true, null, 0],
      ],
    );
  });

  it('a sub-agent rollout names its parent thread', async () => {
    const model = await read(
      meta({ source: { subagent: { thread_spawn: { parent_thread_id: 'p0', depth: 1 } } } }),
      user(1, 'go'),
      usage(2, [10, 0, 2, 0]),
    );
    assert.deepEqual([model.sessions[0]!.role, model.sessions[0]!.parentId], ['subagent', 'p0']);
  });

  it('a task that reaches the model without a typed prompt still starts a turn', async () => {
    const model = await read(
      meta(),
      rec(1, 'event_msg', { type: 'task_started', turn_id: 't1' }),
      ctx(1),
      rec(2, 'response_item', { type: 'reasoning', summary: [] }),
      usage(3, [10, 0, 2, 2]),
    );
    assert.deepEqual(
      model.sessions[0]!.turns.map((t) => [t.preview, t.source.line + 1]),
      [['(task started without a typed prompt)', 2]],
    );
    assert.equal(model.sessions[0]!.calls[0]!.turn, 0);
  });

  it('without session_meta the session still loads, with a warning', async () => {
    const model = await read(user(1, 'go'), usage(2, [10, 0, 2, 0]));
    assert.equal(model.sessions[0]!.id, 'codex-session');
    assert.equal(model.sessions[0]!.calls.length, 1);
    assert.ok(model.diagnostics.some((d) => d.severity === 'warning' && /No session_meta/.test(d.message)));
  });

  it('a web_search_end and the id-less web_search_call written after it are one search (0.128)', async () => {
    const action = { type: 'search', query: 'vllm prefix caching', queries: ['vllm prefix caching'] };
    const model = await read(
      meta(),
      user(1, 'go'),
      rec(2, 'event_msg', { type: 'web_search_end', call_id: 'ws_1', query: 'vllm prefix caching', action }),
      rec(2, 'response_item', { type: 'web_search_call', status: 'completed', action }),
      rec(3, 'event_msg', {
        type: 'web_search_end',
        call_id: 'ws_2',
        query: 'other',
        action: { type: 'search', query: 'other' },
      }),
      rec(3, 'response_item', {
        type: 'web_search_call',
        status: 'completed',
        action: { type: 'search', query: 'a different one' },
      }),
      usage(4, [10, 0, 2, 0]),
    );
    // The second item's action differs from the event before it: two searches there.
    assert.deepEqual(
      tools(model.sessions[0]!).map((t) => [t.name, t.id, t.source.line + 1]),
      [
        ['web_search', 'ws_1', 3],
        ['web_search', 'ws_2', 5],
        ['web_search', 'web_search@6', 6],
      ],
    );
  });

  it('detection: rollout envelopes vote for Codex; `codex exec --json` lines and Claude lines do not', () => {
    assert.equal(
      codexFormat.matchesRecord!({ timestamp: at(0), type: 'event_msg', payload: { type: 'token_count', info: null } }),
      true,
    );
    assert.equal(codexFormat.matchesRecord!({ type: 'thread.started', thread_id: 'x' }), false);
    assert.equal(
      codexFormat.matchesRecord!({ type: 'user', sessionId: 's', uuid: 'u', timestamp: at(0), message: {} }),
      false,
    );
  });
});
