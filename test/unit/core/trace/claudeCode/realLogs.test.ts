import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { findRetryLoops } from '../../../../../src/core/analysis/retryLoops';
import { findCacheMisses } from '../../../../../src/core/analysis/cacheMisses';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import type { Session } from '../../../../../src/core/trace/model';
import { parseTrace } from '../../../../../src/core/trace/parseTrace';
import { fixtures, parseFile } from '../../../../support/helpers';
import { assertRoundTrip } from '../../../../support/roundTrip';

// Real Claude Code 2.0.72–2.1.9 logs from M-Thisness/M-Claude (CC0, test/fixtures/README.md).
// Every figure below is printed by test/reference/claude_sessions.py (sessions, calls, tokens,
// typed prompts and the other inputs by kind, API errors) or test/reference/command_targets.py
// (retry loops over shell commands, with Python's shlex taking the wrappers apart):
//   python3 test/reference/claude_sessions.py test/fixtures/claude-code/m-claude/<file> [siblings…]
//   python3 test/reference/command_targets.py test/fixtures/claude-code/m-claude/<file>
const DIR = join(fixtures, 'claude-code/m-claude');
const WINDOWS = join(DIR, '3cfce0ff-0725-47be-a572-f8af8122b71e.jsonl');
const SIBLINGS = join(DIR, 'abc757d1-3da3-42fb-bb7b-ffa293a4ba29.jsonl');
const RATE_LIMITED = join(DIR, '0a8fc187-681a-4c42-9538-ba0f628ee289.jsonl');
const BROKEN_LINES = join(DIR, '554b9fa6-f719-40e8-ba70-beee69bd60b5.jsonl');
// Real Claude Code 1.0.98 and 1.0.108 logs from d-kimuson/claude-code-viewer (MIT), sub-agents inline.
const VIEWER = join(fixtures, 'claude-code/claude-code-viewer');
const PARALLEL_INLINE = join(VIEWER, 'fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl');
const FAILED_TASK_INLINE = join(VIEWER, '5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl');

function byId(sessions: Session[], id: string): Session {
  const s = sessions.find((x) => x.id === id);
  assert.ok(s, `session ${id} not among ${sessions.map((x) => x.id).join(', ')}`);
  return s;
}

describe('typed prompts on a Windows session (2.1.6): notifications, local commands and interruptions are not turns', async () => {
  const parsed = await parseFile(WINDOWS);
  const main = parsed.model.sessions[0]!;

  it('counts 8 typed prompts, not the 10 of before (2 task notifications, 3 local commands, 2 interruptions set apart)', () => {
    assert.equal(main.turns.length, 8);
    assert.deepEqual(main.otherInputs, {
      notification: 2,
      localCommand: 3,
      hookOutput: 0,
      compactionSummary: 0,
      interruption: 2,
      injected: 0,
    });
    // The notifications (file lines 610 and 709) start no turn.
    assert.ok(main.turns.every((t) => t.source.line + 1 !== 610 && t.source.line + 1 !== 709));
  });

  it('keeps every figure the reference recounts: 91 calls, Σinput 9,865,177, Σcached 8,966,317, Σoutput 79,910, 290 tools, 59 failed', () => {
    const s = summarizeSession(main);
    assert.deepEqual(
      [s.llmCalls, s.tokens.input, s.tokens.cached, s.tokens.output, s.toolCalls, s.failedToolCalls],
      [91, 9865177, 8966317, 79910, 290, 59],
    );
  });

  it('counts the 5 tool uses the user refused (lines 600, 749–752) as denied, each also failed', () => {
    // test/reference/tool_denials.py: "claude-code denied 5 on lines [600, 749, 750, 751, 752]".
    const denied = main.calls.flatMap((c) => c.toolCalls).filter((t) => t.deniedByUser === true);
    assert.deepEqual(
      denied.map((t) => t.resultSource!.line + 1),
      [600, 749, 750, 751, 752],
    );
    assert.ok(denied.every((t) => t.isError === true && t.errorText!.startsWith("The user doesn't want to ")));
    assert.equal(summarizeSession(main).deniedToolCalls, 5);
  });

  it('shows the rate-limit message ("out of extra usage", line 514) as an API error event and a warning', () => {
    assert.equal(main.events?.length, 1);
    const e = main.events![0]!;
    assert.equal(e.kind, 'api-error');
    assert.equal(e.source.line + 1, 514);
    assert.match(e.text, /out of extra usage/);
    assert.ok(
      parsed.model.diagnostics.some(
        (d) => d.line + 1 === 514 && d.severity === 'warning' && /API request failed/.test(d.message),
      ),
    );
  });

  it('unwraps powershell.exe -Command and cmd.exe /c: the one loop left is the real one, git pull ×3 (lines 740–752)', () => {
    // Before the fix: three "powershell.exe" loops over unrelated commands plus this one.
    const loops = findRetryLoops(main).loops;
    assert.deepEqual(
      loops.map((l) => [
        l.target,
        l.attempts.length,
        l.attempts[0]!.source.line + 1,
        l.attempts.at(-1)!.source.line + 1,
      ]),
      [['git pull', 3, 740, 752]],
    );
  });

  it('round-trips through the canonical format, other inputs and events included', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('flat sibling sub-agents (2.0.72): agent-<id>.jsonl beside the session, with its sessionId', async () => {
  const parsed = await parseFile(SIBLINGS);

  it("loads the three sibling agent files as companions, and no other session's agents", () => {
    assert.deepEqual(parsed.model.files.slice(1), [
      'agent-a5c3259.jsonl',
      'agent-abc3cb6.jsonl',
      'agent-ac46b1a.jsonl',
    ]);
    assert.equal(parsed.model.sessions.length, 4);
  });

  it("makes each its own sub-agent session under the main one, with the reference's figures", () => {
    const rows = parsed.model.sessions.map((s) => {
      const x = summarizeSession(s);
      return [
        s.id,
        s.role,
        s.parentId,
        x.llmCalls,
        x.tokens.input,
        x.tokens.cached,
        x.tokens.output,
        x.toolCalls,
        x.failedToolCalls,
      ];
    });
    const main = 'abc757d1-3da3-42fb-bb7b-ffa293a4ba29';
    assert.deepEqual(rows, [
      [main, 'main', null, 94, 6734944, 6387800, 42661, 92, 7],
      ['a5c3259', 'subagent', main, 1, 925, 0, 2, 0, 0],
      ['abc3cb6', 'subagent', main, 11, 495102, 393107, 3586, 39, 5],
      ['ac46b1a', 'subagent', main, 1, 1055, 0, 149, 0, 0],
    ]);
  });

  it('links the Explore agent to the Task call that started it (its toolUseResult names agentId abc3cb6, line 11)', () => {
    const explore = byId(parsed.model.sessions, 'abc3cb6');
    assert.equal(explore.parentToolCallId, 'toolu_01PYEh2GMqS7ZhNEvJUJrccF');
    // The two "Warmup" agents were started by Claude Code itself: no Task call.
    assert.equal(byId(parsed.model.sessions, 'a5c3259').parentToolCallId, null);
  });

  it('its Task result names an agent whose sibling file is there: no missing sub-agent is said', () => {
    assert.ok(parsed.model.diagnostics.every((d) => !/whose transcript is not beside the session/.test(d.message)));
  });

  it("read alone, without its sibling files, the same session says the Explore agent's transcript is missing (line 11)", async () => {
    const alone = await parseTrace([
      { key: 'abc757d1-3da3-42fb-bb7b-ffa293a4ba29.jsonl', bytes: readFileSync(SIBLINGS) },
    ]);
    const missing = alone.model.diagnostics.filter((d) => /whose transcript is not beside the session/.test(d.message));
    assert.deepEqual(
      missing.map((d) => [d.line + 1, /sub-agent (\w+)/.exec(d.message)![1]]),
      [[11, 'abc3cb6']],
    );
  });

  it("a sub-agent's first call is a sub-agent start, never an unexplained miss in the parent", () => {
    const explore = byId(parsed.model.sessions, 'abc3cb6');
    assert.deepEqual(
      findCacheMisses(explore).map((m) => [m.callIndex, m.cause]),
      [[0, 'subagent-start']],
    );
  });
});

describe('API errors are kept: a rate-limited session (2.1.3) with no successful call', async () => {
  const parsed = await parseFile(RATE_LIMITED);
  const main = parsed.model.sessions[0]!;

  it('has 0 calls, 2 typed prompts and 16 API errors (15 retried requests and the final message), each on the timeline', () => {
    assert.equal(main.calls.length, 0);
    assert.equal(main.turns.length, 2);
    assert.equal(summarizeSession(main).apiErrors, 16);
    assert.ok(main.events!.every((e) => e.kind === 'api-error' && e.beforeCall === 0));
  });

  it('says why the analysis is empty: every API error is a diagnostic', () => {
    assert.equal(parsed.model.diagnostics.filter((d) => /^API request failed/.test(d.message)).length, 16);
  });
});

describe("failed results whose tool_use line is unreadable (2.1.9, lines cut by the log's owner)", async () => {
  const parsed = await parseFile(BROKEN_LINES);
  const main = parsed.model.sessions[0]!;

  it('still count as failed calls: 112 failed results, as the reference counts them, not the 94 whose tool_use could be read', () => {
    assert.equal(summarizeSession(main).failedToolCalls, 112);
    const unknown = main.calls.flatMap((c) => c.toolCalls).filter((t) => t.name === '(unknown tool)');
    assert.equal(unknown.length, 18);
    assert.ok(unknown.every((t) => t.isError === true));
  });

  it('says which sub-agents its Task results name but whose transcripts are not beside the session: af8391d (line 27) and a6acba3 (line 29)', () => {
    // test/reference/claude_missing_subagents.py: "line 27 agent af8391d MISSING", "line 29 agent a6acba3 MISSING"
    // (two more Task results sit on lines the owner's export cut, so they name nothing readable).
    const missing = parsed.model.diagnostics.filter((d) =>
      /whose transcript is not beside the session/.test(d.message),
    );
    assert.deepEqual(
      missing.map((d) => [d.line + 1, d.severity, /sub-agent (\w+)/.exec(d.message)![1]]),
      [
        [27, 'warning', 'af8391d'],
        [29, 'warning', 'a6acba3'],
      ],
    );
    assert.equal(parsed.model.sessions.length, 1);
  });

  it('never groups failures of unnamed tools into a retry loop', () => {
    const loops = findRetryLoops(main).loops.map((l) => [l.tool, l.attempts.length]);
    assert.deepEqual(loops, [
      ['Write', 5],
      ['Bash', 81],
    ]);
  });
});

function figures(s: Session): (string | number | null)[] {
  const x = summarizeSession(s);
  return [
    s.id,
    s.role,
    s.parentId,
    s.parentToolCallId,
    x.llmCalls,
    x.tokens.input,
    x.tokens.cached,
    x.tokens.output,
    x.toolCalls,
    x.failedToolCalls,
    s.turns.length,
  ];
}

describe('parallel inline sub-agents (1.0.98): five Task sidechains in the main file, three running at once', async () => {
  const parsed = await parseFile(PARALLEL_INLINE);
  const main = 'fe5e1c67-53e7-4862-81ae-d0e013e3270b';
  const sc = (n: number): string => `${main}-sidechain-${n}`;

  it('splits the isSidechain records into one sub-agent per parentUuid chain, each started by its own Task call', () => {
    // Before: one "-sidechain" session of 161 calls and 5 "user turns" (the five Task prompts).
    // The reference routes each record by following parentUuid back to a chain's root and finds
    // the Task tool_use whose prompt is that root's text.
    assert.deepEqual(parsed.model.sessions.map(figures), [
      [main, 'main', null, null, 9, 168358, 161313, 2636, 11, 0, 2],
      [sc(1), 'subagent', main, 'toolu_01LS6tcVd796SbQKmZqeVnWY', 9, 117941, 103243, 2599, 8, 0, 1],
      [sc(2), 'subagent', main, 'toolu_014i9ThHMNShCHocf9xMKasf', 34, 780551, 739334, 9863, 33, 2, 1],
      [sc(3), 'subagent', main, 'toolu_01EbxY94wRUAGyMLj5wh699C', 40, 819402, 790241, 11134, 39, 9, 1],
      [sc(4), 'subagent', main, 'toolu_017rjDpjVPeNFmAEXNTkoP55', 25, 462783, 447579, 10415, 24, 2, 1],
      [sc(5), 'subagent', main, 'toolu_01EPom7jESzNbU8coiKjzVGS', 53, 1437613, 1406144, 15286, 52, 10, 1],
    ]);
  });

  it('keeps the parallel agents apart in time: the first three overlap (all start at 00:52:54.163)', () => {
    const [a, b, c] = [1, 2, 3].map((n) => byId(parsed.model.sessions, sc(n)));
    const start = (s: Session): number => s.calls[0]!.startMs!;
    const end = (s: Session): number => s.calls.at(-1)!.endMs!;
    assert.ok(start(b!) < end(a!) && start(c!) < end(a!) && start(c!) < end(b!));
  });

  it('finds retry loops inside one agent only: the Edit/Write loop on types/index.ts stays in sub-agent 3', () => {
    // Before, the merged sidechain mixed the parallel agents' calls; the loop's carried-forward
    // context was counted over the other agents' calls too. Hand count over the file's failed
    // results: Edit/Edit/MultiEdit/Write on types/index.ts at lines 147, 151, 153, 155 (chain 3);
    // Write/Write/Edit/MultiEdit on hooks/useTodos.ts at 355, 376, 378, 381 with a success on
    // another file (362) between (chain 5); `npm run build` ×4 at 403–412 is what
    // test/reference/command_targets.py prints.
    const loops = parsed.model.sessions.map((s) =>
      findRetryLoops(s).loops.map((l) => [l.target, l.attempts.length, l.attempts[0]!.source.line + 1]),
    );
    assert.deepEqual(loops, [
      [],
      [],
      [],
      [['/path/to/Demo/types/index.ts', 4, 147]],
      [],
      [
        ['/path/to/Demo/todo-app/src/hooks/useTodos.ts', 4, 355],
        ['npm run build', 4, 403],
      ],
    ]);
  });

  it('round-trips through the canonical format with every sub-agent and its Task link', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('inline sub-agents when one Task call failed (1.0.108): two sidechains for three Task calls', async () => {
  const parsed = await parseFile(FAILED_TASK_INLINE);
  const main = '5c0375b4-57a5-4f26-b12d-d022ee4e51b7';

  it('gives the two that ran their own sessions and none to the Task rejected with InputValidationError', () => {
    assert.deepEqual(parsed.model.sessions.map(figures), [
      [main, 'main', null, null, 10, 216399, 190261, 2003, 13, 2, 1],
      [`${main}-sidechain-1`, 'subagent', main, 'toolu_014YF9TXhDRR7BnpasNJ7gjC', 3, 39191, 25737, 485, 2, 0, 1],
      [`${main}-sidechain-2`, 'subagent', main, 'toolu_01LKfUwrsnof18CpWZQcJH44', 7, 116545, 108261, 1141, 6, 1, 1],
    ]);
  });
});
