import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { shellWriteTarget, usageTokens } from '../../../../../src/core/trace/miniSweAgent/miniSweAgentReader';
import { assertRoundTrip } from '../../../../support/roundTrip';
import { fixtures, parseFile, parseText } from '../../../../support/helpers';

const PVLIB = join(fixtures, 'mini-swe-agent/pvlib__pvlib-python-1072.traj.json');
const LEGACY = join(fixtures, 'mini-swe-agent/github_issue.traj.json');

// Totals and ratios for the pvlib run come from test/fixtures/mini-swe-agent/reference_totals.py
// (plain Python over the messages' usage); lines, ids and times were read off the file by hand.

describe('mini-swe-agent reader on a real v2 run (2.2.7, deepseek-reasoner, tool calling)', async () => {
  const parsed = await parseFile(PVLIB);
  const session = parsed.model.sessions[0]!;

  it('detects trajectory_format "mini-swe-agent-1.1"', () => {
    assert.equal(parsed.problem, null);
    assert.equal(parsed.model.format, 'mini-swe-agent');
    assert.equal(parsed.model.sessions.length, 1);
  });

  it('makes one call per response: 15, and says model_stats counted 16 (the last request failed)', () => {
    assert.equal(session.calls.length, 15);
    assert.deepEqual(
      parsed.model.diagnostics.map((d) => [d.line + 1, d.severity, d.message]),
      [
        [
          5,
          'info',
          'model_stats counts 16 API calls but 15 responses are in the trajectory: 1 call(s) left no response (the run ended with InternalServerError).',
        ],
      ],
    );
    assert.deepEqual(session.reportedTotals, {
      input: null,
      output: null,
      cached: null,
      costUsd: 0.006691356000000001,
      llmCalls: 16,
    });
  });

  it('maps the first call by hand: message 2 on file line 71, prompt 2,182 of which 384 cached', () => {
    const c = session.calls[0]!;
    assert.equal(c.id, 'c5635932-ec91-4855-bba0-88f197911aff');
    assert.equal(c.source.line + 1, 71);
    assert.deepEqual(c.tokens, {
      input: 2182,
      cached: 384,
      appended: 1798,
      cacheWrite: null,
      output: 94,
      reasoningOutput: 27,
    });
    assert.equal(c.model, 'deepseek-reasoner');
    assert.equal(c.startMs, null); // system and task messages carry no time
    assert.equal(c.endMs, 1776075371.0677812 * 1000); // extra.timestamp, seconds
    assert.equal(c.turn, 0);
  });

  it('times a call from the previous tool result to its own response', () => {
    const c = session.calls[1]!;
    assert.equal(c.startMs, 1776075371.2884946 * 1000); // the tool result of message 3
    assert.equal(c.endMs, 1776075375.864362 * 1000);
  });

  it('totals match the independent Python sums', () => {
    const s = summarizeSession(session);
    assert.equal(s.tokensSource, 'calls'); // per-call figures, not reported totals
    assert.deepEqual(s.tokens, { input: 92817, cached: 83392, appended: 9425, cacheWrite: null, output: 4089 });
    assert.equal(s.callsWithTokens, 15);
    assert.ok(Math.abs(s.cacheHitRate! - 0.8984561017916977) < 1e-12);
    assert.ok(Math.abs(s.rawInputToOutput! - 22.699192956713134) < 1e-9);
    assert.ok(Math.abs(s.appendToOutput.mean! - 5.086161621125614) < 1e-9);
    assert.ok(Math.abs(s.appendToOutput.median! - 2.5324675324675323) < 1e-12);
    assert.ok(Math.abs(s.appendToOutput.aggregate! - 2.3049645390070923) < 1e-12);
    assert.equal(
      session.calls.reduce((a, c) => a + (c.tokens.reasoningOutput ?? 0), 0),
      2808,
    );
  });

  it('pairs the 15 bash tool calls with their role "tool" results by tool_call_id', () => {
    const tools = session.calls.flatMap((c) => c.toolCalls);
    assert.equal(tools.length, 15);
    assert.ok(tools.every((t) => t.name === 'bash' && t.isError !== null));
    const first = tools[0]!;
    assert.equal(first.id, 'call_00_unPJZRylyBKTuYxvhjd7wiEm');
    assert.equal(first.command, 'find . -type f -name "*.py" | grep -E "(temperature|fuentes)" | head -20');
    assert.equal(first.exitCode, 0);
    assert.equal(first.endMs, 1776075371.2884946 * 1000);
    assert.ok(Math.abs(first.durationMs! - 220.7134) < 1e-3); // 371.2884946 − 371.0677812 s
  });

  it('marks 3 failures: return code 1, and two commands killed after 60 s (exception, return code -1)', () => {
    const failed = session.calls.flatMap((c) => c.toolCalls).filter((t) => t.isError === true);
    assert.deepEqual(
      failed.map((t) => [t.id, t.exitCode, t.resultSource!.line + 1]),
      [
        ['call_00_XcOJcC4HAl8yoRQyDo6jzK0J', 1, 588],
        ['call_00_Lw2LREa5JWRr2tGP1ZebO4bI', -1, 676],
        ['call_00_JizRRHZ83X9iJ5IAW9fu9vY5', -1, 942],
      ],
    );
    assert.match(
      failed[1]!.errorText!,
      /^An error occurred while executing the command: .* timed out after 60 seconds$/s,
    );
    assert.equal(failed[0]!.targetFile, 'reproduce_error.py'); // cat > reproduce_error.py << 'EOF'
  });

  it('takes the instance, version, cwd and a title from the run', () => {
    assert.equal(session.id, 'pvlib__pvlib-python-1072');
    assert.deepEqual(session.agent, { name: 'mini-swe-agent', version: '2.2.7' });
    assert.equal(session.cwd, '/testbed');
    assert.equal(session.title, 'temperature.fuentes errors when given tz-aware inputs on pandas>=1.0.0');
    assert.equal(session.turns.length, 1);
    assert.equal(session.turns[0]!.source.line + 1, 67);
    assert.deepEqual(parsed.model.skippedRecords, { 'message:system': 1, 'message:exit': 1 });
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('mini-swe-agent reader on the legacy messages array (tests/test_data/github_issue.traj.json)', async () => {
  const parsed = await parseFile(LEGACY);
  const session = parsed.model.sessions[0]!;

  it('detects the bare array by mini-swe-agent marks and says what it lacks', () => {
    assert.equal(parsed.model.format, 'mini-swe-agent');
    assert.deepEqual(
      parsed.model.diagnostics.map((d) => d.message),
      ['Legacy mini-swe-agent trajectory (a bare messages array): it has no token counts, times or run info.'],
    );
    assert.equal(session.reportedTotals, undefined);
  });

  it('makes 10 calls (the assistant messages) with unknown tokens and one bash action each', () => {
    // By hand: messages 2, 4, …, 20 are assistant messages, each with one ```mswea_bash_command block.
    assert.equal(session.calls.length, 10);
    assert.ok(
      session.calls.every((c) => c.toolCalls.length === 1 && c.tokens.input === null && c.tokens.output === null),
    );
    assert.equal(session.calls[1]!.toolCalls[0]!.command, 'ls -la');
  });

  it('reads exit codes from <returncode>: messages 3 and 17 failed with 1', () => {
    const tools = session.calls.flatMap((c) => c.toolCalls);
    assert.deepEqual(
      tools.map((t) => t.exitCode),
      [1, 0, 0, 0, 0, 0, 0, 1, 0, null],
    );
    assert.deepEqual(
      tools.map((t) => t.isError),
      [true, false, false, false, false, false, false, true, false, false],
    );
    // The submission (message 21) answers the last command: seen, no exit code, not a failure.
    assert.equal(tools[9]!.resultSource!.line + 1, 86);
  });

  it('finds the files sed -i and cat > write', () => {
    assert.deepEqual(
      session.calls.map((c) => c.toolCalls[0]!.targetFile),
      [null, null, null, null, 'tests/missing_colon.py', null, null, null, 'tests/missing_colon.py', null],
    );
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

/** A v2 document around the given messages. */
function v2(messages: unknown[], info: object = {}): string {
  return JSON.stringify(
    {
      info: { model_stats: { instance_cost: 0.01, api_calls: 2 }, mini_version: '2.2.7', ...info },
      messages,
      trajectory_format: 'mini-swe-agent-1.1',
    },
    null,
    2,
  );
}

describe('mini-swe-agent pitfalls', () => {
  it('§12.10 no prompt_tokens_details: cached stays unknown, never 0', async () => {
    const r = await parseText(
      v2([
        { role: 'system', content: 's' },
        { role: 'user', content: 'task' },
        {
          role: 'assistant',
          content: 'x',
          extra: {
            actions: [],
            response: { id: 'r1', model: 'm', usage: { prompt_tokens: 500, completion_tokens: 20 } },
            timestamp: 10,
          },
        },
      ]),
      'x.traj.json',
    );
    assert.deepEqual(r.model.sessions[0]!.calls[0]!.tokens, {
      input: 500,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: 20,
      reasoningOutput: null,
    });
  });

  it('a v2 format error keeps the response it could not parse: that is an LLM call, without tools', async () => {
    const r = await parseText(
      v2([
        { role: 'system', content: 's' },
        { role: 'user', content: 'task' },
        {
          role: 'user',
          content: 'No tool calls found',
          extra: {
            interrupt_type: 'FormatError',
            cost: 0.001,
            response: {
              id: 'r1',
              usage: { prompt_tokens: 100, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 0 } },
            },
          },
        },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 't1', function: { name: 'bash', arguments: '{"command":"ls"}' } }],
          extra: {
            actions: [{ command: 'ls', tool_call_id: 't1' }],
            response: {
              id: 'r2',
              usage: { prompt_tokens: 150, completion_tokens: 8, prompt_tokens_details: { cached_tokens: 100 } },
            },
            timestamp: 20,
          },
        },
        {
          role: 'tool',
          tool_call_id: 't1',
          content: '<returncode>0</returncode>\n<output>\na\n</output>',
          extra: { returncode: 0, timestamp: 20.5 },
        },
      ]),
      'x.traj.json',
    );
    const s = r.model.sessions[0]!;
    assert.deepEqual(
      s.calls.map((c) => [c.id, c.toolCalls.length]),
      [
        ['r1', 0],
        ['r2', 1],
      ],
    );
    assert.deepEqual(r.model.diagnostics, []); // api_calls 2 = 2 responses
    assert.equal(s.calls[1]!.toolCalls[0]!.isError, false);
    assert.equal(s.calls[1]!.toolCalls[0]!.durationMs, 500);
  });

  it('v1 ("mini-swe-agent-1"): message timestamps, ```bash actions, timeouts and the submission', async () => {
    const r = await parseText(
      JSON.stringify({
        info: { model_stats: { instance_cost: 0.02, api_calls: 3 }, mini_version: '1.17.5', exit_status: 'Submitted' },
        trajectory_format: 'mini-swe-agent-1',
        messages: [
          { role: 'system', content: 's', timestamp: 100 },
          { role: 'user', content: 'Please solve this issue: fix it', timestamp: 100.5 },
          {
            role: 'assistant',
            content: 'THOUGHT: look\n\n```bash\nsleep 100\n```',
            timestamp: 102,
            extra: {
              response: {
                id: 'a1',
                usage: { prompt_tokens: 900, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 0 } },
              },
            },
          },
          {
            role: 'user',
            content:
              'The last command <command>sleep 100</command> timed out and has been killed.\nThe output of the command was:\n<output>\n\n</output>\nPlease try another command.',
            timestamp: 112,
          },
          {
            role: 'assistant',
            content: 'Two blocks\n```bash\nls\n```\n```bash\npwd\n```',
            timestamp: 115,
            extra: { response: { id: 'a2', usage: { prompt_tokens: 1000, completion_tokens: 20 } } },
          },
          { role: 'user', content: 'Please always provide EXACTLY ONE action in triple backticks.', timestamp: 115.1 },
          {
            role: 'assistant',
            content: 'Done\n```bash\necho MINI_SWE_AGENT_FINAL_OUTPUT && git diff\n```',
            timestamp: 118,
            extra: { response: { id: 'a3', usage: { prompt_tokens: 1100, completion_tokens: 15 } } },
          },
          { role: 'user', content: 'diff --git a/x b/x\n', timestamp: 118.4 },
        ],
      }),
      'x.traj.json',
    );
    const s = r.model.sessions[0]!;
    assert.equal(r.model.format, 'mini-swe-agent');
    assert.deepEqual(
      s.calls.map((c) => [c.id, c.startMs, c.endMs]),
      [
        ['a1', 100500, 102000],
        ['a2', 112000, 115000],
        ['a3', 115100, 118000],
      ],
    );
    const [timeout] = s.calls[0]!.toolCalls;
    assert.equal(timeout!.isError, true);
    assert.equal(timeout!.command, 'sleep 100');
    assert.deepEqual(s.calls[1]!.toolCalls, []); // two blocks: a format error, nothing ran
    assert.equal(s.calls[2]!.toolCalls[0]!.isError, false);
    assert.equal(s.turns[0]!.preview, 'Please solve this issue: fix it');
    assert.equal(s.turns[0]!.startMs, 100500);
  });

  it('litellm usage: Anthropic cache writes are part of appended; Responses-API names are read too', () => {
    assert.deepEqual(
      usageTokens({
        prompt_tokens: 3000,
        completion_tokens: 50,
        prompt_tokens_details: { cached_tokens: 2000 },
        cache_creation_input_tokens: 600,
      }),
      {
        input: 3000,
        cached: 2000,
        appended: 1000,
        cacheWrite: 600,
        output: 50,
        reasoningOutput: null,
      },
    );
    assert.deepEqual(
      usageTokens({
        input_tokens: 800,
        output_tokens: 90,
        input_tokens_details: { cached_tokens: 512 },
        output_tokens_details: { reasoning_tokens: 64 },
      }),
      {
        input: 800,
        cached: 512,
        appended: 288,
        cacheWrite: null,
        output: 90,
        reasoningOutput: 64,
      },
    );
  });

  it('does not claim a generic chat export (an array of role/content without mini-swe-agent marks)', async () => {
    const r = await parseText(
      JSON.stringify([
        { role: 'system', content: 's' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ]),
      'chat.json',
    );
    assert.notEqual(r.model.format, 'mini-swe-agent');
  });

  it('finds written files only when the command says so plainly', () => {
    assert.equal(shellWriteTarget("sed -i 's/a/b/' src/x.py"), 'src/x.py');
    assert.equal(shellWriteTarget("cat <<'EOF' > notes.md\nhello\nEOF"), 'notes.md');
    assert.equal(shellWriteTarget('python run.py > /dev/null'), null);
    assert.equal(shellWriteTarget('grep -n foo src/x.py'), null);
    assert.equal(shellWriteTarget('echo hi 2>&1 | tee log.txt'), 'log.txt');
  });
});
