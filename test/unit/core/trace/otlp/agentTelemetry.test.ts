import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import type { Session } from '../../../../../src/core/trace/model';
import { fixtures, parseFile, parseText, repoRoot } from '../../../../support/helpers';
import { assertRoundTrip } from '../../../../support/roundTrip';

// Agents' own OpenTelemetry output. logs.json is OpenTelemetry's official OTLP/JSON logs
// example (real, unchanged). No public sample of VS Code's Agent Debug Logs export was found,
// and the real Claude Code and Codex captures found (one request each) may not be copied
// here: they are tested from local samples in agentTelemetryReal.test.ts. The fixtures below
// are built from the producers' source and documentation, and from what those captures show,
// by test/fixtures/otlp/build_agent_fixtures.py (it cites them), for what the captures lack
// (several calls, tools, failures, API errors, sub-agents); every figure below is worked out
// by hand from that script's numbers.

const LOGS = join(fixtures, 'otlp/logs.json');
const COPILOT = join(fixtures, 'otlp/copilot-chat-debug-log.json');
const CLAUDE = join(fixtures, 'otlp/claude-code-events.jsonl');
const CODEX = join(fixtures, 'otlp/codex-events.jsonl');
const T0 = Date.UTC(2026, 11, 1);

function python(): boolean {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function tokens(s: Session): [number | null, number | null, number | null, number | null] {
  const t = summarizeSession(s).tokens;
  return [t.input, t.cached, t.cacheWrite, t.output];
}

describe('OTLP logs: the official example', () => {
  it('reads as OTLP with no calls, one skipped LogsData and a message that says why', async () => {
    const r = await parseFile(LOGS);
    assert.equal(r.problem, null);
    assert.equal(r.model.format, 'otlp');
    assert.deepEqual(r.model.sessions, []);
    assert.deepEqual(r.model.skippedRecords, { resourceLogs: 1 });
    assert.equal(r.model.diagnostics.length, 1);
    assert.match(
      r.model.diagnostics[0]!.message,
      /contains log records but no spans, and none of the records is an agent event/,
    );
  });
});

describe('VS Code Agent Debug Logs export (Copilot Chat spans)', async () => {
  const r = await parseFile(COPILOT);
  const [main, sub] = r.model.sessions;

  it('two user requests (two traces) of one gen_ai.conversation.id are one session with a turn each; the sub-agent hangs under it', () => {
    assert.equal(r.model.format, 'otlp');
    assert.deepEqual(r.model.diagnostics, []);
    assert.equal(r.model.sessions.length, 2);
    assert.equal(main!.id, '6d1f0c3e-2b7a-4b8e-9d7c-0a1b2c3d4e5f');
    assert.deepEqual(
      main!.turns.map((t) => [t.preview, t.startMs! - T0]),
      [
        ['Add a --verbose flag to the CLI', 0],
        ['Now update the README', 60000],
      ],
    );
    assert.deepEqual(
      main!.calls.map((c) => [c.id, c.turn]),
      [
        ['req-1', 0],
        ['req-2', 0],
        ['req-3', 0],
        ['req-4', 1],
      ],
    );
    assert.deepEqual(
      [sub!.parentId, sub!.role, sub!.parentToolCallId, sub!.agent?.name],
      [main!.id, 'subagent', 'call_3', 'Explore'],
    );
  });

  it('tokens by hand: input 21,000 + 24,500 + 26,000 + 27,100; cached 18,000 + 20,900 + 24,400 + 25,800; output 180 + 410 + 95 + 300', () => {
    assert.deepEqual(tokens(main!), [98600, 89100, null, 985]);
    // prompt_tokens include the cache: appended = input − cached; reasoning from gen_ai.usage.reasoning_tokens.
    assert.deepEqual(main!.calls[1]!.tokens, {
      input: 24500,
      cached: 20900,
      appended: 3600,
      cacheWrite: null,
      output: 410,
      reasoningOutput: 120,
    });
    // The run's summed usage on invoke_agent is not a call.
    assert.equal(main!.calls.length, 4);
    // No cache_read attribute when nothing was cached (chatMLFetcher writes it only when non-zero): unknown, not 0.
    assert.deepEqual(
      [sub!.calls[0]!.tokens.input, sub!.calls[0]!.tokens.cached, sub!.calls[0]!.model],
      [9000, null, 'gpt-5-mini'],
    );
  });

  it('tools: read_file after call 1, the failing run_in_terminal (status ERROR) after call 2, runSubagent in request 2', () => {
    assert.deepEqual(
      main!.calls.map((c) => c.toolCalls.map((t) => [t.name, t.isError, t.command])),
      [[['read_file', false, null]], [['run_in_terminal', true, 'npm test']], [], [['runSubagent', false, null]]],
    );
    assert.equal(main!.calls[1]!.toolCalls[0]!.errorText, 'Command exited with code 1');
    assert.equal(main!.calls[0]!.toolCalls[0]!.targetFile, '/w/src/cli.ts');
  });

  it('round trip through the canonical format', async () => {
    await assertRoundTrip(r);
  });
});

describe('Claude Code telemetry events (claude_code.*)', async () => {
  const r = await parseFile(CLAUDE);
  const s = r.model.sessions[0]!;

  it('one session per session.id, four api_request calls, two prompts (the first not logged: "<REDACTED>"), one API error', () => {
    assert.equal(r.model.format, 'otlp');
    assert.equal(r.model.sessions.length, 1);
    assert.equal(s.id, '0b7e2c1a-9f3d-4e5b-8a6c-1d2e3f4a5b6c');
    assert.deepEqual(s.agent, { name: 'claude-code', version: '2.1.50' });
    assert.equal(s.calls.length, 4);
    assert.deepEqual(
      s.turns.map((t) => t.preview),
      ['(prompt not logged: 41 characters)', 'run it again'],
    );
    assert.deepEqual(
      s.events!.map((e) => [e.kind, e.beforeCall, e.text]),
      [['api-error', 2, '529 Overloaded']],
    );
  });

  it('an event it does not read (hook_registered) is counted by its name, not dropped unsaid', () => {
    assert.deepEqual(r.model.skippedRecords, { 'event:claude_code.hook_registered': 1 });
  });

  it('test/reference/otlp_agent_events.py counts the same calls, tokens and turns', {
    skip: !python() && 'python3 not installed',
  }, () => {
    const out = JSON.parse(
      execFileSync('python3', [join(repoRoot, 'test/reference/otlp_agent_events.py'), CLAUDE], { encoding: 'utf8' }),
    ) as Record<string, Record<string, unknown>>;
    const ref = out[s.id]!;
    assert.deepEqual(
      [ref['calls'], ref['input'], ref['cached'], ref['cacheWrite'], ref['output'], ref['turns'], ref['promptsLogged']],
      [4, ...tokens(s).slice(0, 3), tokens(s)[3], 2, 1],
    );
    assert.deepEqual(
      ref['callTimes'],
      s.calls.map((c) => [c.startMs, c.endMs]),
    );
  });

  it('Anthropic counts: input = input_tokens + cache reads + cache writes; appended = input_tokens + cache writes', () => {
    // Call 1: 3 + 14,000 + 2,500 = 16,503 in; 14,000 cached; 2,500 written; 2,503 appended; 210 out.
    assert.deepEqual(s.calls[0]!.tokens, {
      input: 16503,
      cached: 14000,
      appended: 2503,
      cacheWrite: 2500,
      output: 210,
      reasoningOutput: null,
    });
    // Σ: 16,503 + 17,805 + 18,204 + 19,106; cached 14,000 + 16,500 + 17,800 + 18,200; written 2,500 + 1,300 + 400 + 900; out 210 + 95 + 180 + 60.
    assert.deepEqual(tokens(s), [71618, 66500, 5100, 545]);
    assert.equal(s.calls[3]!.model, 'claude-haiku-4-5-20251001');
  });

  it('times: an event is written when its request ended, so start = event.timestamp − duration_ms', () => {
    assert.deepEqual(
      s.calls.map((c) => [c.startMs! - T0, c.endMs! - T0]),
      [
        [1000, 9000],
        [11000, 16000],
        [20500, 26000],
        [91000, 96000],
      ],
    );
    assert.deepEqual(
      s.calls.map((c) => c.turn),
      [0, 0, 0, 1],
    );
  });

  it('tool results go to the call that ended before the tool started: a failing Bash after call 1, an Edit after call 2', () => {
    assert.deepEqual(
      s.calls.map((c) => c.toolCalls.map((t) => [t.name, t.isError, t.command, t.durationMs])),
      [[['Bash', true, 'npm test', 1200]], [['Edit', false, null, 40]], [], []],
    );
    assert.equal(s.calls[0]!.toolCalls[0]!.errorText, 'Exit code 1\nnpm ERR! Test failed.');
  });

  it('round trip through the canonical format', async () => {
    await assertRoundTrip(r);
  });
});

describe('Codex telemetry events (codex.*)', async () => {
  const r = await parseFile(CODEX);
  const s = r.model.sessions[0]!;

  it('one session per conversation.id: two responses, one prompt (redacted by Codex), the 429 as an API error', () => {
    assert.equal(r.model.sessions.length, 1);
    assert.equal(s.id, '019a3c5e-7b2d-7f10-9c4e-5a6b7c8d9e0f');
    assert.deepEqual(s.agent, { name: 'codex', version: '0.152.0' });
    assert.deepEqual(
      s.turns.map((t) => t.preview),
      ['(prompt not logged: 38 characters)'],
    );
    assert.deepEqual(
      s.events!.map((e) => [e.beforeCall, e.text]),
      [[1, '429 rate limited']],
    );
  });

  it('OpenAI counts, written as strings: input includes the cache, reasoning is part of output', () => {
    assert.deepEqual(s.calls[0]!.tokens, {
      input: 12450,
      cached: 11008,
      appended: 1442,
      cacheWrite: null,
      output: 310,
      reasoningOutput: 192,
    });
    assert.deepEqual(tokens(s), [25470, 23424, null, 395]);
    assert.equal(s.calls[0]!.model, 'gpt-5.6-codex');
  });

  it('a response starts when its codex.api_request began (timestamp − duration_ms) and ends at response.completed', () => {
    assert.deepEqual(
      s.calls.map((c) => [c.startMs! - T0, c.endMs! - T0]),
      [
        [100, 6000],
        [10600, 15000],
      ],
    );
  });

  it('the failing shell tool belongs to the first response, with its command and output', () => {
    const t = s.calls[0]!.toolCalls[0]!;
    assert.deepEqual(
      [t.id, t.name, t.isError, t.command, t.durationMs],
      ['call_A1', 'shell', true, 'bash -lc cargo test', 2100],
    );
    assert.equal(t.errorText, 'error: test failed, to rerun pass `--lib`');
    assert.deepEqual(s.calls[1]!.toolCalls, []);
  });
});

describe('agent telemetry: the same calls as spans and as log events are counted once', () => {
  it('a conversation read from spans keeps its calls; events of the same session id are not added again, and a note says so', async () => {
    const events = readFileSync(CLAUDE, 'utf8').trim().split('\n');
    const sid = '0b7e2c1a-9f3d-4e5b-8a6c-1d2e3f4a5b6c';
    const attr = (key: string, value: string): unknown => ({ key, value: { stringValue: value } });
    // Two agent runs (two traces) of the conversation the events report, one chat span each.
    const spans = ['0af7651916cd43dd8448eb211c80319c', '1af7651916cd43dd8448eb211c80319c'].map((traceId, i) => ({
      traceId,
      spanId: `b7ad6b716920333${i}`,
      name: 'invoke_agent',
      startTimeUnixNano: String(BigInt(T0 + i * 60000) * 1000000n),
      endTimeUnixNano: String(BigInt(T0 + i * 60000 + 30000) * 1000000n),
      attributes: [attr('gen_ai.operation.name', 'invoke_agent'), attr('gen_ai.conversation.id', sid)],
    }));
    const chats = spans.map((a, i) => ({
      ...a,
      spanId: `c7ad6b716920333${i}`,
      parentSpanId: a.spanId,
      name: 'chat',
      attributes: [
        attr('gen_ai.operation.name', 'chat'),
        { key: 'gen_ai.usage.input_tokens', value: { intValue: '100' } },
      ],
    }));
    const text =
      [JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [...spans, ...chats] }] }] }), ...events].join('\n') +
      '\n';
    const r = await parseText(text, 'mixed.jsonl');
    assert.deepEqual(
      r.model.sessions.map((s) => [s.id, s.calls.length]),
      [[sid, 2]],
    );
    assert.ok(
      r.model.diagnostics.some((d) =>
        /both as spans and as log events: its calls are read from the spans; the 4 api_request events are not counted again/.test(
          d.message,
        ),
      ),
    );
  });
});

describe('OTLP fixtures against the OTLP protobuf JSON mapping', () => {
  it("every OTLP fixture, real and built, keeps opentelemetry-proto's field names and value kinds (otlp_json_check.py)", () => {
    if (!python()) return;
    const files = [
      'trace.json',
      'logs.json',
      'agent-vllm.json',
      'agent-vllm.jsonl',
      'vllm-only.jsonl',
      'legacy-instrumentation-library.json',
      'copilot-chat-debug-log.json',
      'claude-code-events.jsonl',
      'codex-events.jsonl',
    ].map((f) => join(fixtures, 'otlp', f));
    const out = execFileSync('python3', [join(repoRoot, 'test/reference/otlp_json_check.py'), ...files], {
      encoding: 'utf8',
    });
    assert.equal(out.trim(), 'ok');
  });
});
