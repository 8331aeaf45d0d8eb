import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import type { Session } from '../../../../../src/core/trace/model';
import { LOCAL_ONLY, localSample, parseFile, repoRoot } from '../../../../support/helpers';

// Real captures of the agents' own OpenTelemetry events, found in public repositories whose
// licence does not let this project copy them (test/fixtures/README.md, "Real samples the
// licence does not let us copy", says where each comes from and why): read from
// $AGENT_TRACE_LOCAL_SAMPLES, skipped, saying so, when absent. Expected figures:
// test/reference/otlp_agent_events.py, which walks the OTLP records itself; each is checked
// by hand in the comments.

const CLAUDE = localSample('otlp/a11ign+agent-org-otel-receiver.jsonl');
const CODEX = localSample('otlp/Necmttn+ax-codex-logs.json');

interface Figures {
  agent: string;
  version: string | null;
  calls: number;
  input: number | null;
  cached: number | null;
  cacheWrite?: number | null;
  output: number | null;
  reasoning?: number;
  turns: number;
  promptsLogged: number;
  models: Array<string | null>;
  callTimes: Array<[number | null, number | null]>;
}

const REFERENCE: Record<string, Record<string, Figures>> = {
  // Claude Code 2.1.294, one `claude -p` request (claude-haiku-5-5): 2 uncached + 9,179 read +
  // 13,356 written = 22,537 in, 4 out; it ended at 08:15:18.137 after 742 ms.
  claude: {
    'eec3945a-5a85-4c3c-9aa2-39e4b8445cef': {
      agent: 'claude-code',
      version: '2.1.294',
      calls: 1,
      input: 22537,
      cached: 9179,
      cacheWrite: 13356,
      output: 4,
      turns: 1,
      promptsLogged: 0,
      models: ['claude-haiku-5-5'],
      callTimes: [[1791447317395, 1791447318137]],
    },
  },
  // Codex 0.139.0 (`codex exec`, gpt-5.5): one response.completed with 9,994 in, none cached, 0 out.
  codex: {
    '019ecba3-1618-7c63-8e2e-e2eaf13075f3': {
      agent: 'codex',
      version: '0.139.0',
      calls: 1,
      input: 9994,
      cached: 0,
      output: 0,
      reasoning: 0,
      turns: 1,
      promptsLogged: 0,
      models: ['gpt-5.5'],
      callTimes: [[1781532925235, 1781532925235]],
    },
  },
};

function figures(s: Session): Figures {
  const t = summarizeSession(s).tokens;
  const out: Figures = {
    agent: s.agent!.name,
    version: s.agent!.version ?? null,
    calls: s.calls.length,
    input: t.input,
    cached: t.cached,
    output: t.output,
    turns: s.turns.length,
    promptsLogged: s.turns.filter((u) => !u.preview.startsWith('(prompt not logged')).length,
    models: s.calls.map((c) => c.model),
    callTimes: s.calls.map((c) => [c.startMs, c.endMs]),
  };
  if (s.agent!.name === 'codex') out.reasoning = s.calls.reduce((n, c) => n + (c.tokens.reasoningOutput ?? 0), 0);
  else out.cacheWrite = t.cacheWrite;
  return out;
}

function python(): boolean {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('Claude Code 2.1.294 telemetry, a real capture (local only)', {
  skip: CLAUDE === null && LOCAL_ONLY,
}, async () => {
  const r = CLAUDE === null ? null : await parseFile(CLAUDE);

  it('one session with the reference figures', () => {
    assert.equal(r!.problem, null);
    assert.equal(r!.model.format, 'otlp');
    assert.deepEqual(Object.fromEntries(r!.model.sessions.map((s) => [s.id, figures(s)])), REFERENCE['claude']);
  });

  it('the prompt Claude Code did not log ("<REDACTED>") is a turn saying its length, not a prompt reading "<REDACTED>"', () => {
    const s = r!.model.sessions[0]!;
    assert.deepEqual(
      s.turns.map((t) => t.preview),
      ['(prompt not logged: 30 characters)'],
    );
    assert.deepEqual(
      s.calls.map((c) => [c.id, c.turn]),
      [['req_011CfpSK96NthX9vPNsW9X2b', 0]],
    );
    assert.deepEqual(s.calls[0]!.tokens, {
      input: 22537,
      cached: 9179,
      appended: 13358,
      cacheWrite: 13356,
      output: 4,
      reasoningOutput: null,
    });
  });

  it('the events it does not read (hook_registered, assistant_response, two mcp_server_connection) are counted by name, not lost', () => {
    assert.deepEqual(r!.model.skippedRecords, {
      'event:claude_code.hook_registered': 1,
      'event:claude_code.assistant_response': 1,
      'event:claude_code.mcp_server_connection': 2,
    });
  });

  it('and the reference run again now gives the same', { skip: !python() && 'python3 not installed' }, () => {
    const out = JSON.parse(
      execFileSync('python3', [join(repoRoot, 'test/reference/otlp_agent_events.py'), CLAUDE!], { encoding: 'utf8' }),
    ) as unknown;
    assert.deepEqual(out, REFERENCE['claude']);
  });
});

describe('Codex 0.139.0 telemetry, a real capture (local only)', { skip: CODEX === null && LOCAL_ONLY }, async () => {
  const r = CODEX === null ? null : await parseFile(CODEX);

  it('one session with the reference figures; times from event.timestamp, since Codex writes timeUnixNano "0"', () => {
    assert.equal(r!.problem, null);
    assert.equal(r!.model.format, 'otlp');
    assert.deepEqual(Object.fromEntries(r!.model.sessions.map((s) => [s.id, figures(s)])), REFERENCE['codex']);
  });

  it('the prompt (written "[REDACTED]", 41 characters) comes before the call although the file lists it after', () => {
    const s = r!.model.sessions[0]!;
    assert.deepEqual(
      s.turns.map((t) => [t.preview, t.startMs]),
      [['(prompt not logged: 41 characters)', 1781532923537]],
    );
    assert.equal(s.calls[0]!.turn, 0);
  });

  it('the records it does not read (conversation_starts, a websocket_event) are counted by name, not lost', () => {
    assert.deepEqual(r!.model.skippedRecords, {
      'event:codex.conversation_starts': 1,
      'event:codex.websocket_event': 1,
    });
  });

  it('and the reference run again now gives the same', { skip: !python() && 'python3 not installed' }, () => {
    const out = JSON.parse(
      execFileSync('python3', [join(repoRoot, 'test/reference/otlp_agent_events.py'), CODEX!], { encoding: 'utf8' }),
    ) as unknown;
    assert.deepEqual(out, REFERENCE['codex']);
  });
});

describe('the real captures against the OTLP protobuf JSON mapping (local only)', {
  skip: (CLAUDE === null || CODEX === null) && LOCAL_ONLY,
}, () => {
  it("keep opentelemetry-proto's field names and value kinds (otlp_json_check.py): Claude Code writes intValue as a JSON number, Codex a null body and an eventName", {
    skip: !python() && 'python3 not installed',
  }, () => {
    const out = execFileSync('python3', [join(repoRoot, 'test/reference/otlp_json_check.py'), CLAUDE!, CODEX!], {
      encoding: 'utf8',
    });
    assert.equal(out.trim(), 'ok');
  });
});
