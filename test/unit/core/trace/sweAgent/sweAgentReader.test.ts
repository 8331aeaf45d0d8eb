import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { outputFailure } from '../../../../../src/core/trace/sweAgent/observationErrors';
import { assertRoundTrip } from '../../../../support/roundTrip';
import { fixtures, parseFile, parseText } from '../../../../support/helpers';

const PYDICOM = join(fixtures, 'swe-agent/pydicom__pydicom-1458.traj');
const TEST_REPO = join(fixtures, 'swe-agent/6e44b9__sweagenttestrepo-1c2844.traj');

// Figures read off the files by hand:
// pydicom (SWE-agent 0.x, GPT-4): 12 trajectory steps, each starting at file line 4 + 7·i
// (0-based 3 + 7·i) with its observation two lines below; info.model_stats says
// tokens_sent 122,612, tokens_received 1,369, instance_cost 1.26719, api_calls 12.
// Steps 5, 6 and 7 (file lines 39, 46, 53) are edits whose observation starts "Your proposed
// edit has introduced new syntax error(s)" (grep finds the sentence 7 times in the file:
// these 3 observations, the same 3 again as history messages, and once in the demonstration).
// Step 2 runs the reproduction script, whose output is a Python traceback ending in
// "AttributeError: …". Everything else succeeded.

describe('SWE-agent reader on the pydicom trajectory (0.x, model_stats totals only)', async () => {
  const parsed = await parseFile(PYDICOM);
  const session = parsed.model.sessions[0]!;

  it('detects the document as a SWE-agent trajectory', () => {
    assert.equal(parsed.problem, null);
    assert.equal(parsed.model.format, 'swe-agent');
    assert.match(parsed.detection.evidence, /top-level keys match SWE-agent trajectory/);
    assert.deepEqual(parsed.model.diagnostics, []); // api_calls (12) = steps (12): nothing to say
  });

  it('makes one call per trajectory step (12, as model_stats.api_calls counts), each on its step line', () => {
    assert.equal(parsed.model.sessions.length, 1);
    assert.equal(session.calls.length, 12);
    assert.deepEqual(
      session.calls.map((c) => c.source.line),
      [3, 10, 17, 24, 31, 38, 45, 52, 59, 66, 73, 80],
    );
    assert.equal(session.calls[11]!.id, 'step-11');
  });

  it('leaves every per-call token count null: never 0, never the totals divided by 12', () => {
    for (const c of session.calls) {
      assert.deepEqual(c.tokens, {
        input: null,
        cached: null,
        appended: null,
        cacheWrite: null,
        output: null,
        reasoningOutput: null,
      });
      assert.equal(c.startMs, null);
      assert.equal(c.endMs, null);
    }
  });

  it('keeps the instance totals as reported totals, and the summary says they are totals only', () => {
    assert.deepEqual(session.reportedTotals, {
      input: 122612,
      output: 1369,
      cached: null,
      costUsd: 1.26719,
      llmCalls: 12,
    });
    const s = summarizeSession(session);
    assert.equal(s.tokensSource, 'reported');
    assert.deepEqual(s.tokens, { input: 122612, cached: null, appended: null, cacheWrite: null, output: 1369 });
    assert.equal(s.callsWithTokens, 0);
    assert.equal(s.cacheHitRate, null);
    // Whole-session ratios still follow from the totals: 122,612 / 1,369 = 89.56…; per-call ones do not.
    assert.ok(Math.abs(s.rawInputToOutput! - 122612 / 1369) < 1e-12);
    assert.deepEqual(s.appendToOutput, { mean: null, median: null, aggregate: null });
    assert.deepEqual(parsed.model.limitations.slice(0, 2), [
      'No per-call token counts in SWE-agent trajectories: totals only (info.model_stats).',
      'No timestamps: call and tool times are unknown; execution_time (SWE-agent 1.x) gives tool durations only.',
    ]);
  });

  it('turns each action into a tool call named by its first word, with the action as command', () => {
    const tools = session.calls.map((c) => c.toolCalls);
    assert.ok(tools.every((t) => t.length === 1));
    assert.deepEqual(
      tools.map((t) => t[0]!.name),
      ['create', 'edit', 'python', 'find_file', 'open', 'edit', 'edit', 'edit', 'edit', 'python', 'rm', 'submit'],
    );
    assert.equal(tools[2]![0]!.command, 'python reproduce_bug.py');
    assert.match(tools[5]![0]!.command!, /^edit 287:295\n/);
    // resultChars: the observation of step 9 is "Script completed successfully, no errors. Result: True\n" (55 characters).
    assert.equal(tools[9]![0]!.resultChars, 55);
    assert.equal(tools[10]![0]!.resultChars, 0); // rm printed nothing
  });

  it('finds the edit target from the open file (state before the step) and create/open arguments', () => {
    const numpyHandler = '/pydicom__pydicom/pydicom/pixel_data_handlers/numpy_handler.py';
    assert.deepEqual(
      session.calls.map((c) => c.toolCalls[0]!.targetFile),
      [
        '/pydicom__pydicom/reproduce_bug.py', // create reproduce_bug.py, resolved against working_dir
        '/pydicom__pydicom/reproduce_bug.py', // edit 1:1 on the file create opened
        null,
        null,
        numpyHandler, // open pydicom/pixel_data_handlers/numpy_handler.py 293
        numpyHandler,
        numpyHandler,
        numpyHandler,
        numpyHandler,
        null,
        null,
        null,
      ],
    );
    assert.equal(session.cwd, '/pydicom__pydicom');
  });

  it('marks the 3 rejected edits (steps 5–7, file lines 39/46/53) and the crashing script (step 2) as failed', () => {
    const failed = session.calls.flatMap((c, i) =>
      c.toolCalls.filter((t) => t.isError === true).map((t) => [i, t.source.line + 1, t.resultSource!.line + 1]),
    );
    assert.deepEqual(failed, [
      [2, 18, 20],
      [5, 39, 41],
      [6, 46, 48],
      [7, 53, 55],
    ]);
    const rejected = session.calls[5]!.toolCalls[0]!;
    assert.match(
      rejected.errorText!,
      /^Your proposed edit has introduced new syntax error\(s\)\. Please understand the fixes/,
    );
    assert.equal(rejected.errorText!.length, 600);
    assert.equal(rejected.exitCode, null);
    assert.match(session.calls[2]!.toolCalls[0]!.errorText!, /^Traceback \(most recent call last\):/);
    assert.equal(summarizeSession(session).failedToolCalls, 4);
    // Every other result was seen and is a success, not unknown.
    assert.equal(session.calls.flatMap((c) => c.toolCalls).filter((t) => t.isError === false).length, 8);
  });

  it('has one turn, the issue, from the first non-demo user message (history[2], file line 101)', () => {
    assert.equal(session.turns.length, 1);
    assert.equal(session.turns[0]!.source.line + 1, 101);
    assert.match(
      session.turns[0]!.preview,
      /^Pixel Representation attribute should be optional for pixel data handler/,
    );
    assert.equal(session.title, 'Pixel Representation attribute should be optional for pixel data handler');
    assert.ok(session.calls.every((c) => c.turn === 0));
  });

  it('names the agent and falls back to a fixed id: 0.x trajectories do not name their instance', () => {
    assert.equal(session.id, 'swe-agent');
    assert.deepEqual(session.agent, { name: 'swe-agent', version: null });
    assert.equal(session.model, null);
  });

  it('round-trips through the canonical format, reported totals included', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('SWE-agent reader on the test-repo trajectory (1.x: state objects, execution_time, replay_config)', async () => {
  const parsed = await parseFile(TEST_REPO);
  const session = parsed.model.sessions[0]!;

  it('takes the instance id and model from replay_config', () => {
    assert.equal(parsed.model.format, 'swe-agent');
    assert.equal(session.id, 'SWE-agent__test-repo-i1');
    assert.equal(session.model, 'gpt-4o');
    assert.ok(session.calls.every((c) => c.model === 'gpt-4o'));
    assert.equal(session.title, 'SyntaxError: invalid syntax');
  });

  it('uses execution_time as the tool duration, in ms', () => {
    // execution_time of step 0: 0.2814128329991945 s.
    const first = session.calls[0]!.toolCalls[0]!;
    assert.ok(Math.abs(first.durationMs! - 281.4128329991945) < 1e-9);
    assert.ok(session.calls.every((c) => c.toolCalls[0]!.durationMs! > 0));
  });

  it('takes tool call ids from the history (function calling) and targets from the open file', () => {
    assert.equal(session.calls[0]!.toolCalls[0]!.id, 'call_fJuazlMUN5fQDQ73G6XSpYpx');
    assert.deepEqual(
      session.calls.map((c) => [c.toolCalls[0]!.name, c.toolCalls[0]!.targetFile]),
      [
        ['find_file', null],
        ['open', '/SWE-agent__test-repo/tests/missing_colon.py'],
        ['edit', '/SWE-agent__test-repo/tests/missing_colon.py'],
        ['python3', null],
        ['submit', null],
      ],
    );
    assert.equal(summarizeSession(session).failedToolCalls, 0);
  });

  it('reports model_stats (7,141 sent, 243 received, 5 calls) and round-trips', async () => {
    assert.deepEqual(session.reportedTotals, {
      input: 7141,
      output: 243,
      cached: null,
      costUsd: 0.019520000000000006,
      llmCalls: 5,
    });
    await assertRoundTrip(parsed);
  });
});

describe('SWE-agent pitfalls', () => {
  const doc = (over: object): string =>
    JSON.stringify({
      environment: 'swe_main',
      trajectory: [
        {
          action: 'ls\n',
          observation: 'a.py\n',
          response: '',
          thought: '',
          state: '{"open_file": "n/a", "working_dir": "/repo"}',
        },
        {
          action: 'cat b.py\n',
          observation: 'cat: b.py: No such file or directory\n',
          response: '',
          thought: '',
          state: '{"open_file": "n/a", "working_dir": "/repo"}',
        },
      ],
      history: [],
      info: {
        exit_status: 'submitted',
        model_stats: { instance_cost: 0.5, tokens_sent: 1000, tokens_received: 50, api_calls: 4 },
      },
      ...over,
    });

  it('§12.10 totals only: more api_calls than steps is said, and calls stay unknown', async () => {
    const r = await parseText(doc({}), 'x.traj');
    assert.equal(r.model.format, 'swe-agent');
    assert.equal(r.model.sessions[0]!.calls.length, 2);
    const d = r.model.diagnostics.find((x) => /api_calls|API calls/.test(x.message));
    assert.ok(d);
    assert.match(d.message, /model_stats counts 4 API calls but the trajectory has 2 steps: 2 requeries/);
    assert.equal(d.severity, 'info');
  });

  it('recognises a shell "No such file" failure conservatively, and not an ordinary listing', async () => {
    const r = await parseText(doc({}), 'x.traj');
    assert.deepEqual(
      r.model.sessions[0]!.calls.map((c) => c.toolCalls[0]!.isError),
      [false, true],
    );
  });

  it('an empty action is a call without a tool call', async () => {
    const r = await parseText(
      JSON.stringify({
        trajectory: [{ action: '', observation: 'Exited', response: '', thought: '', state: {} }],
        info: {},
      }),
      'x.traj',
    );
    assert.equal(r.model.sessions[0]!.calls.length, 1);
    assert.deepEqual(r.model.sessions[0]!.calls[0]!.toolCalls, []);
    assert.equal(r.model.sessions[0]!.reportedTotals, null); // no model_stats: nothing reported
  });

  it('a step that is not an object is reported on its line and skipped', async () => {
    const r = await parseText(
      '{\n  "trajectory": [\n    42,\n    {"action": "ls", "observation": ""}\n  ],\n  "info": {}\n}\n',
      'x.traj',
    );
    assert.equal(r.model.sessions[0]!.calls.length, 1);
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[2, 'warning']],
    );
  });

  it('error rules are conservative: a user script printing "Error:" is not a failure, a tool refusal is', () => {
    assert.equal(outputFailure('Error: value out of range\n', false), null);
    assert.deepEqual(
      outputFailure('Usage: open "<file>" [<line_number>]\nError: <line_number> must be a number', true),
      { rule: 'tool-usage', exitCode: null },
    );
    assert.deepEqual(outputFailure('/bin/bash: line 1: pytest: command not found\n'), {
      rule: 'command-not-found',
      exitCode: null,
    });
    assert.equal(outputFailure('Traceback (most recent call last):\n  File "x.py", line 1\nsome text after\n'), null);
    assert.equal(outputFailure('3 failed, 2 passed\n'), null);
  });

  it('canonical reportedTotals: read back as written, bad figures unknown with a warning, absent stays absent', async () => {
    const header = '{"type":"header","format":"agent-trace","version":1,"generator":"hand-written"}';
    const r = await parseText(
      [
        header,
        '{"type":"session","id":"a","reportedTotals":{"input":1000,"output":-5,"cached":null,"costUsd":"0.1","llmCalls":3}}',
        '{"type":"session","id":"b"}',
        '{"type":"session","id":"c","reportedTotals":null}',
      ].join('\n') + '\n',
      'x.trace.jsonl',
    );
    const [a, b, c] = r.model.sessions;
    assert.deepEqual(a!.reportedTotals, { input: 1000, output: null, cached: null, costUsd: null, llmCalls: 3 });
    assert.equal('reportedTotals' in b!, false);
    assert.equal(c!.reportedTotals, null);
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [
        [1, 'warning'],
        [1, 'warning'],
      ],
    );
  });

  it('does not claim documents of other formats', async () => {
    const r = await parseText(
      JSON.stringify({ schema_version: 'ATIF-v1.4', trajectory: [], info: {}, steps: [] }),
      'x.json',
    );
    assert.notEqual(r.model.format, 'swe-agent');
  });
});

// SWE-agent's own demonstrations (trajectories/demonstrations in SWE-agent/SWE-agent, MIT):
// model_stats all 0 while steps ran. Read off the files: the marshmallow replay has
// {instance_cost 0, tokens_sent 0, tokens_received 0, api_calls 11} and 11 steps; the CTF
// demonstration has every figure 0, api_calls 0 included, and 4 steps.
describe('SWE-agent demonstrations and replays: all-zero model_stats are "not recorded", not 0 tokens', () => {
  it('a replay with api_calls 11: tokens and cost unknown, the 11 API calls kept, and a warning that says why', async () => {
    const parsed = await parseFile(join(fixtures, 'swe-agent/demo-replay-marshmallow-1867.traj'));
    const s = parsed.model.sessions[0]!;
    assert.deepEqual(s.reportedTotals, { input: null, output: null, cached: null, costUsd: null, llmCalls: 11 });
    const x = summarizeSession(s);
    assert.equal(x.tokens.input, null);
    assert.equal(x.tokensSource, 'none');
    assert.ok(
      parsed.model.diagnostics.some((d) => d.severity === 'warning' && /did not record its usage/.test(d.message)),
    );
  });

  it('a demonstration with api_calls 0 over 4 steps: the 0 calls are not recorded either', async () => {
    const parsed = await parseFile(join(fixtures, 'swe-agent/demo-ctf-networking_1.traj'));
    const s = parsed.model.sessions[0]!;
    assert.equal(s.calls.length, 4);
    assert.deepEqual(s.reportedTotals, { input: null, output: null, cached: null, costUsd: null, llmCalls: null });
  });
});
