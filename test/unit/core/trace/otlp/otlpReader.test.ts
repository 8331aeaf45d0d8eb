import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import type { Session } from '../../../../../src/core/trace/model';
import { otlpFormat } from '../../../../../src/core/trace/otlp/definition';
import { anyValue, nanosToMs, normalizeId, parseNanos } from '../../../../../src/core/trace/otlp/otlpJson';
import { withoutSources, assertRoundTrip } from '../../../../support/roundTrip';
import {
  assertClaimsNone,
  fixtures,
  needsShared,
  parseFile,
  parseText,
  sharedTrace,
  sharedTracesDir,
  traceFilesUnder,
} from '../../../../support/helpers';

// Fixtures: test/fixtures/otlp/trace.json is the official OTLP example (Apache-2.0, no
// gen_ai attributes). The others are hand-made by build_fixtures.py, whose vLLM spans
// follow vLLM's own do_tracing / create_trace_span attribute names (see that file).
// Every expected number below is worked out by hand from the values in build_fixtures.py.

const OTLP = join(fixtures, 'otlp');
const SAMPLE = join(OTLP, 'trace.json');
const AGENT_JSONL = join(OTLP, 'agent-vllm.jsonl');
const AGENT_DOC = join(OTLP, 'agent-vllm.json');
const VLLM_ONLY = join(OTLP, 'vllm-only.jsonl');
const LEGACY = join(OTLP, 'legacy-instrumentation-library.json');

const TRACE_A = '4bf92f3577b34da6a3ce929d0e0e4736';
/** 2026-01-01T00:00:00Z, the fixtures' t0, in ms. */
const T0_MS = 1767225600000;

function session(sessions: Session[], id: string): Session {
  const s = sessions.find((x) => x.id === id);
  assert.ok(s, `session ${id} not found among ${sessions.map((x) => x.id).join(', ')}`);
  return s;
}

/** One TracesData line with the given spans under one resource. */
function tracesLine(service: string, spans: object[]): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [{ scope: { name: 't' }, spans }],
      },
    ],
  });
}

type Attr = [string, string | number | boolean];
/** A span with attributes given as [key, value]: strings, ints (written as int64 strings), doubles. */
function span(
  traceId: string,
  spanId: string,
  parent: string | null,
  name: string,
  startS: number,
  endS: number,
  attrs: Attr[],
  extra: object = {},
): object {
  const value = (v: string | number | boolean): object =>
    typeof v === 'string'
      ? { stringValue: v }
      : typeof v === 'boolean'
        ? { boolValue: v }
        : Number.isInteger(v)
          ? { intValue: String(v) }
          : { doubleValue: v };
  return {
    traceId,
    spanId,
    ...(parent ? { parentSpanId: parent } : {}),
    name,
    kind: 1,
    startTimeUnixNano: String(BigInt(T0_MS) * 1_000_000n + BigInt(Math.round(startS * 1e9))),
    endTimeUnixNano: String(BigInt(T0_MS) * 1_000_000n + BigInt(Math.round(endS * 1e9))),
    attributes: attrs.map(([key, v]) => ({ key, value: value(v) })),
    ...extra,
  };
}

describe('OTLP reader: the official OTLP/JSON example (no GenAI spans)', async () => {
  const parsed = await parseFile(SAMPLE);

  it('is detected as OTLP from its resourceSpans, as a whole pretty-printed document', () => {
    assert.equal(parsed.model.format, 'otlp');
    assert.equal(parsed.detection.format, 'otlp');
    assert.equal(parsed.problem, null);
  });

  it('loads with zero calls and says plainly that no GenAI spans were found (a warning, not an error)', () => {
    assert.deepEqual(parsed.model.sessions, []);
    assert.deepEqual(
      parsed.model.diagnostics.map((d) => [d.line, d.severity]),
      [[-1, 'warning']],
    );
    assert.match(
      parsed.model.diagnostics[0]!.message,
      /^No GenAI spans found: 1 span was read, none with gen_ai\.\* attributes/,
    );
    assert.deepEqual(parsed.model.skippedRecords, { 'span:not-genai': 1 });
    assert.ok(parsed.model.limitations.some((l) => /vLLM request spans carry no cached-token count/.test(l)));
  });

  it('the fixture copy is byte-identical to the shared sample', {
    skip: needsShared(sharedTrace('otlp/trace.json')),
  }, () => {
    assert.deepEqual(readFileSync(SAMPLE), readFileSync(sharedTrace('otlp/trace.json')!));
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('OTLP reader: agent GenAI spans joined to vLLM request spans (file-exporter JSON Lines)', async () => {
  const parsed = await parseFile(AGENT_JSONL);
  const main = session(parsed.model.sessions, TRACE_A);
  const sub = session(parsed.model.sessions, `${TRACE_A}/a2a2a2a2a2a2a2a2`);

  it('is detected from its lines: each is a TracesData', () => {
    assert.equal(parsed.model.format, 'otlp');
    assert.match(parsed.detection.evidence, /^4 of the first 4 records/);
    assert.deepEqual(parsed.model.diagnostics, []);
  });

  it('makes the invoke_agent span the session and the nested one a sub-agent started by the "task" tool', () => {
    assert.deepEqual(
      parsed.model.sessions.map((s) => [s.id, s.role, s.parentId, s.parentToolCallId, s.agent?.name, s.calls.length]),
      [
        [TRACE_A, 'main', null, null, 'coder', 2],
        [`${TRACE_A}/a2a2a2a2a2a2a2a2`, 'subagent', TRACE_A, 'call_3', 'reviewer', 1],
      ],
    );
    assert.deepEqual(main.agent, { name: 'coder', version: '0.3.0' });
  });

  it('sorts calls by start time although the lines are not in time order', () => {
    // chatcmpl-1 is on line 4 (0-based 3), chatcmpl-2 on line 2 (0-based 1).
    assert.deepEqual(
      main.calls.map((c) => [c.index, c.id, c.source.line]),
      [
        [0, 'chatcmpl-1', 3],
        [1, 'chatcmpl-2', 1],
      ],
    );
  });

  it('join through an HTTP client span: call 1 has the agent cache figures and the vLLM server timing', () => {
    const c = main.calls[0]!;
    // Agent span: input_tokens "1200" (includes cache), cache_read.input_tokens "1024" → appended 1200 − 1024 = 176.
    assert.deepEqual(c.tokens, {
      input: 1200,
      cached: 1024,
      appended: 176,
      cacheWrite: null,
      output: 80,
      reasoningOutput: null,
    });
    // vLLM span (grandchild through POST span 0b0b…01): queue 0.0012 s, ttft 0.0521, prefill 0.0498, decode 1.7801, e2e 1.8345, × 1,000.
    assert.deepEqual(c.server, { queueMs: 1.2, ttftMs: 52.1, prefillMs: 49.8, decodeMs: 1780.1, e2eMs: 1834.5 });
    assert.equal(c.model, 'Qwen/Qwen3-32B');
    // start "1767225600100250000" ns = 1767225600100 ms + 250000 ns = …100.25 ms; end t0 + 2 s.
    assert.equal(c.startMs, T0_MS + 100.25);
    assert.equal(c.endMs, T0_MS + 2000);
  });

  it('join as a direct child: call 2 (input 1450, cached 1280 → appended 170)', () => {
    const c = main.calls[1]!;
    assert.deepEqual(c.tokens, {
      input: 1450,
      cached: 1280,
      appended: 170,
      cacheWrite: null,
      output: 60,
      reasoningOutput: null,
    });
    // queue 0.0005, ttft 0.0301, prefill 0.029, decode 0.9012, e2e 0.932 s.
    assert.deepEqual(c.server, { queueMs: 0.5, ttftMs: 30.1, prefillMs: 29, decodeMs: 901.2, e2eMs: 932 });
  });

  it("join by time when the vLLM span's parent is missing from the file (a dangling parent, §12.9)", () => {
    const c = sub.calls[0]!;
    // The vLLM span starts at t0 + 6.31 s, inside the reviewer's chat span (6.3–7.3 s); its parent 0b0b…03 was never exported.
    assert.equal(c.id, 'c3c3c3c3c3c3c3c3'); // no gen_ai.response.id: the span id
    assert.deepEqual(c.server, { queueMs: 2, ttftMs: 101, prefillMs: 99, decodeMs: 848, e2eMs: 950 });
    // Older names gen_ai.usage.prompt_tokens / completion_tokens; no cache attribute → cached unknown.
    assert.deepEqual(c.tokens, {
      input: 300,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: 20,
      reasoningOutput: null,
    });
    assert.equal(c.model, 'Qwen/Qwen3-32B'); // gen_ai.request.model: there is no response model
  });

  it('joined vLLM spans are not counted again as calls of their own', () => {
    const calls = parsed.model.sessions.flatMap((s) => s.calls);
    assert.equal(calls.length, 3); // 3 chat spans, 3 vLLM spans, all joined
  });

  it('attaches execute_tool spans to the call before them, with errors from status and exception events', () => {
    assert.deepEqual(
      main.calls.map((c) => c.toolCalls.map((t) => [t.id, t.name, t.isError, t.durationMs])),
      [
        [['call_1', 'bash', true, 3000]], // 2.01 → 5.01 s
        [
          ['call_2', 'read_file', false, 20], // 6.15 → 6.17 s
          ['call_3', 'task', false, 3600], // 6.2 → 9.8 s
        ],
      ],
    );
    const bash = main.calls[0]!.toolCalls[0]!;
    // status {code: 2} without a message: the exception event's type and message.
    assert.equal(bash.errorText, 'ToolError: 1 failing test');
    assert.equal(bash.command, 'npm test');
    const read = main.calls[1]!.toolCalls[0]!;
    assert.equal(read.targetFile, 'src/app.ts');
    assert.equal(read.resultChars, 20); // "export const x = 1;\n": 19 characters and a newline
  });

  it('counts the spans it leaves out: the embeddings span and the HTTP client span', () => {
    assert.deepEqual(parsed.model.skippedRecords, { 'gen_ai:embeddings': 1, 'span:not-genai': 1 });
  });

  it('session totals by hand: input 1200 + 1450, cached 1024 + 1280, output 80 + 60', () => {
    const s = summarizeSession(main);
    assert.deepEqual(s.tokens, { input: 2650, cached: 2304, appended: 346, cacheWrite: null, output: 140 });
    assert.equal(s.cacheHitRate, 2304 / 2650);
    assert.equal(s.failedToolCalls, 1);
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('OTLP reader: the same spans as one pretty-printed document', async () => {
  const doc = await parseFile(AGENT_DOC);
  const lines = readFileSync(AGENT_DOC, 'utf8').split('\n');

  it('gives the same sessions as the JSON Lines form', async () => {
    const jsonl = await parseFile(AGENT_JSONL);
    assert.equal(doc.model.format, 'otlp');
    assert.match(doc.detection.evidence, /top-level keys match OpenTelemetry/);
    assert.deepEqual(withoutSources(doc.model.sessions), withoutSources(jsonl.model.sessions));
  });

  it('points each call and tool at the line where its span starts', () => {
    const main = session(doc.model.sessions, TRACE_A);
    const c1 = main.calls[0]!;
    // The span object opens on its line; traceId follows, then spanId.
    assert.match(lines[c1.source.line]!, /^\s*\{\s*$/);
    assert.match(lines[c1.source.line + 2]!, /"spanId": "c1c1c1c1c1c1c1c1"/);
    const bash = c1.toolCalls[0]!;
    assert.match(lines[bash.source.line + 2]!, /"spanId": "d1d1d1d1d1d1d1d1"/);
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(doc);
  });
});

describe('OTLP reader: vLLM request spans without an agent (no traceparent)', async () => {
  const parsed = await parseFile(VLLM_ONLY);
  const only = parsed.model.sessions[0]!;

  it('pools single-request traces into one session per service instead of one per request', () => {
    assert.deepEqual(
      parsed.model.sessions.map((s) => [s.id, s.calls.length]),
      [['service:vllm', 3]],
    );
    assert.equal(only.agent, null); // a server is not the agent
  });

  it('accepts a line that is a single ResourceSpans rather than a TracesData', () => {
    assert.equal(only.calls.find((c) => c.id === 'chatcmpl-a')!.source.line, 1);
  });

  it('pitfall §12.8, nanosecond strings past 2^53: ordering survives where the ms values are equal', () => {
    // chatcmpl-b (line 1) starts at …700000000001 ns, chatcmpl-a (line 2) 1 ns earlier.
    // Number() of both strings is the same double, and so are their ms values.
    assert.equal(Number('1767225700000000001'), Number('1767225700000000000'));
    assert.deepEqual(
      only.calls.map((c) => c.id),
      ['chatcmpl-a', 'chatcmpl-b', 'cmpl-v0-7'],
    );
    assert.equal(only.calls[0]!.startMs, only.calls[1]!.startMs);
    assert.equal(only.calls[0]!.startMs, T0_MS + 100_000);
  });

  it('pitfall §12.10: vLLM spans have no cached-token attribute, so cached is unknown (null), never 0', () => {
    for (const c of only.calls) {
      assert.equal(c.tokens.cached, null);
      assert.equal(c.tokens.appended, null);
    }
    assert.deepEqual(only.calls[1]!.tokens, {
      input: 2048,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: 128,
      reasoningOutput: null,
    });
    assert.equal(summarizeSession(only).cacheHitRate, null);
  });

  it('v1 engine span: float seconds × 1,000, a real zero queue stays 0', () => {
    // chatcmpl-b: queue 0.0, ttft 0.2125, prefill 0.2101, decode 1.5, e2e 1.7135 s.
    assert.deepEqual(only.calls[1]!.server, {
      queueMs: 0,
      ttftMs: 212.5,
      prefillMs: 210.1,
      decodeMs: 1500,
      e2eMs: 1713.5,
    });
    assert.equal(only.calls[1]!.model, null); // v1 do_tracing sets no model attribute
  });

  it('v0 engine span: model from gen_ai.response.model, no prefill/decode split (null, not 0)', () => {
    const v0 = only.calls[2]!;
    assert.equal(v0.model, 'meta-llama/Llama-3.1-8B-Instruct');
    assert.deepEqual(v0.server, { queueMs: 100, ttftMs: 350, prefillMs: null, decodeMs: null, e2eMs: 1500 });
    assert.deepEqual([v0.tokens.input, v0.tokens.output], [900, 256]);
    assert.equal(v0.endMs! - v0.startMs!, 1500);
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('OTLP reader: the older instrumentationLibrarySpans form and attribute aliases', async () => {
  const parsed = await parseFile(LEGACY);
  const s = parsed.model.sessions[0]!;

  it('reads instrumentationLibrarySpans; without agent spans the trace is the session', () => {
    assert.equal(parsed.model.format, 'otlp');
    assert.deepEqual(
      parsed.model.sessions.map((x) => [x.id, x.calls.length]),
      [['3df7651916cd43dd8448eb211c80319f', 2]],
    );
    assert.deepEqual(s.agent, { name: 'weather-bot', version: null });
    assert.deepEqual(parsed.model.skippedRecords, { 'span:not-genai': 1 }); // the "workflow" root span
  });

  it('older names without gen_ai.operation.name, and the cache_read_input_tokens alias', () => {
    // prompt_tokens 2006 (written as a JSON number), completion_tokens "300", cache_read_input_tokens "1920" → appended 86.
    assert.deepEqual(s.calls[0]!.tokens, {
      input: 2006,
      cached: 1920,
      appended: 86,
      cacheWrite: null,
      output: 300,
      reasoningOutput: null,
    });
    assert.equal(s.calls[0]!.model, 'gpt-4o-mini-2024-07-18'); // response model before request model
  });

  it('the input_tokens.cached alias: 2100 in, 2048 cached → 52 appended', () => {
    assert.deepEqual(s.calls[1]!.tokens, {
      input: 2100,
      cached: 2048,
      appended: 52,
      cacheWrite: null,
      output: 50,
      reasoningOutput: null,
    });
    assert.equal(s.calls[1]!.model, 'gpt-4o-mini');
  });

  it('a tool span known only by gen_ai.tool.name fails with its status message', () => {
    const t = s.calls[0]!.toolCalls[0]!;
    assert.deepEqual(
      [t.id, t.name, t.isError, t.errorText, t.durationMs],
      ['call_w1', 'get_weather', true, 'HTTP 503 from weather API', 500],
    );
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('OTLP reader: pitfalls and edge cases', () => {
  const T = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

  it('pitfall §12.3, inclusive input: cache reads and writes are part of input_tokens', async () => {
    const r = await parseText(
      tracesLine('agent', [
        span(T, '1000000000000001', null, 'invoke_agent', 0, 9, [['gen_ai.operation.name', 'invoke_agent']]),
        span(T, '1000000000000002', '1000000000000001', 'chat', 1, 2, [
          ['gen_ai.operation.name', 'chat'],
          ['gen_ai.usage.input_tokens', 1000],
          ['gen_ai.usage.output_tokens', 10],
          ['gen_ai.usage.cache_read.input_tokens', 600],
          ['gen_ai.usage.cache_creation.input_tokens', 300],
        ]),
      ]) + '\n',
    );
    // 1000 in = 600 read + 400 new, of which 300 were written to the cache.
    assert.deepEqual(r.model.sessions[0]!.calls[0]!.tokens, {
      input: 1000,
      cached: 600,
      appended: 400,
      cacheWrite: 300,
      output: 10,
      reasoningOutput: null,
    });
  });

  it('pitfall §12.3, exclusive input: more cached than input means the input left the cache out (Anthropic style)', async () => {
    const r = await parseText(
      tracesLine('agent', [
        span(T, '2000000000000002', null, 'chat', 1, 2, [
          ['gen_ai.operation.name', 'chat'],
          ['gen_ai.usage.input_tokens', 3],
          ['gen_ai.usage.output_tokens', 209],
          ['gen_ai.usage.cache_read.input_tokens', 17842],
          ['gen_ai.usage.cache_creation.input_tokens', 8165],
        ]),
      ]) + '\n',
    );
    // appended = 3 + 8165 = 8168; input = 8168 + 17842 = 26010 (the Claude Code figures of the same call).
    assert.deepEqual(r.model.sessions[0]!.calls[0]!.tokens, {
      input: 26010,
      cached: 17842,
      appended: 8168,
      cacheWrite: 8165,
      output: 209,
      reasoningOutput: null,
    });
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[0, 'info']],
    );
    assert.match(r.model.diagnostics[0]!.message, /^1 span reports more cached than input tokens/);
  });

  it('int64 token counts past 2^53 are refused with a warning, not rounded', async () => {
    const big = span(T, '3000000000000002', null, 'chat', 1, 2, [
      ['gen_ai.operation.name', 'chat'],
      ['gen_ai.usage.output_tokens', 5],
    ]) as { attributes: object[] };
    big.attributes.push({ key: 'gen_ai.usage.input_tokens', value: { intValue: '9007199254740993' } });
    const r = await parseText(tracesLine('agent', [big]) + '\n');
    assert.equal(r.model.sessions[0]!.calls[0]!.tokens.input, null);
    assert.equal(r.model.sessions[0]!.calls[0]!.tokens.output, 5);
    assert.match(r.model.diagnostics[0]!.message, /gen_ai\.usage\.input_tokens is not a whole token count/);
    assert.equal(anyValue({ intValue: '9007199254740993' }), '9007199254740993');
    assert.equal(anyValue({ intValue: '42' }), 42);
  });

  it('nanoseconds to ms: exact whole ms, the rest as a fraction; 0 and garbage are unknown', () => {
    // 1767225600123456789 ns = 1767225600123 ms + 456789 ns; a double keeps ~0.24 µs here.
    const ms = nanosToMs(parseNanos('1767225600123456789'))!;
    assert.equal(Math.floor(ms), 1767225600123);
    assert.ok(Math.abs(ms - 1767225600123 - 0.456789) < 0.0003, String(ms));
    assert.equal(nanosToMs(parseNanos('1544712660000000000')), 1544712660000);
    assert.equal(parseNanos('0'), null);
    assert.equal(parseNanos('12:00'), null);
    assert.equal(parseNanos(undefined), null);
  });

  it('ids: hex is lower-cased, base64 ids (protobuf JSON mapping) become the same hex', () => {
    assert.equal(normalizeId('5B8EFFF798038103D269B633813FC60C'), '5b8efff798038103d269b633813fc60c');
    assert.equal(normalizeId('S/kvNXezTaajzpKdDg5HNg=='), '4bf92f3577b34da6a3ce929d0e0e4736');
    assert.equal(normalizeId('wsLCwsLCwsI='), 'c2c2c2c2c2c2c2c2');
    assert.equal(normalizeId(''), null);
    assert.equal(normalizeId('0000000000000000'), null); // the invalid all-zero id means "no parent"
  });

  it('attribute values: arrays, kvlists, doubles written as strings, booleans', () => {
    assert.deepEqual(anyValue({ arrayValue: { values: [{ stringValue: 'a' }, { intValue: '2' }] } }), ['a', 2]);
    assert.deepEqual(anyValue({ kvlistValue: { values: [{ key: 'k', value: { boolValue: true } }] } }), { k: true });
    assert.equal(anyValue({ doubleValue: '0.25' }), 0.25);
    assert.equal(anyValue({ doubleValue: 'NaN' }), null);
    assert.equal(anyValue({}), null);
  });

  it('a retried request: the agent call takes the first vLLM span, the second is a call of its own', async () => {
    const r = await parseText(
      tracesLine('agent', [
        span(T, '4000000000000001', null, 'invoke_agent', 0, 9, [['gen_ai.operation.name', 'invoke_agent']]),
        span(T, '4000000000000002', '4000000000000001', 'chat', 1, 5, [
          ['gen_ai.operation.name', 'chat'],
          ['gen_ai.usage.input_tokens', 100],
          ['gen_ai.usage.output_tokens', 7],
        ]),
      ]) +
        '\n' +
        tracesLine('vllm', [
          span(T, '4000000000000004', '4000000000000002', 'llm_request', 3, 4, [
            ['gen_ai.request.id', 'r2'],
            ['gen_ai.latency.e2e', 1.0],
            ['gen_ai.usage.prompt_tokens', 100],
          ]),
          span(T, '4000000000000003', '4000000000000002', 'llm_request', 1.1, 1.5, [
            ['gen_ai.request.id', 'r1'],
            ['gen_ai.latency.e2e', 0.4],
            ['gen_ai.usage.prompt_tokens', 100],
          ]),
        ]) +
        '\n',
    );
    const calls = r.model.sessions[0]!.calls;
    assert.deepEqual(
      calls.map((c) => [c.id, c.server?.e2eMs]),
      [
        ['4000000000000002', 400],
        ['r2', 1000],
      ],
    );
  });

  it('a vLLM span whose agent call it cannot find becomes a call of its own in the agent session', async () => {
    const r = await parseText(
      tracesLine('agent', [
        span(T, '5000000000000001', null, 'invoke_agent', 0, 9, [
          ['gen_ai.operation.name', 'invoke_agent'],
          ['gen_ai.agent.name', 'a'],
        ]),
      ]) +
        '\n' +
        tracesLine('vllm', [
          span(T, '5000000000000002', '5000000000000001', 'llm_request', 1, 2, [
            ['gen_ai.request.id', 'only-server'],
            ['gen_ai.latency.time_to_first_token', 0.5],
            ['gen_ai.usage.prompt_tokens', 10],
          ]),
        ]) +
        '\n',
    );
    assert.deepEqual(
      r.model.sessions.map((s) => [s.id, s.calls.map((c) => c.id)]),
      [[T, ['only-server']]],
    );
  });

  it('single-call traces with gen_ai.conversation.id are pooled by conversation', async () => {
    const chat = (trace: string, id: string, conv: string, at: number): object =>
      span(trace, id, null, 'chat', at, at + 1, [
        ['gen_ai.operation.name', 'chat'],
        ['gen_ai.conversation.id', conv],
        ['gen_ai.usage.input_tokens', 10],
      ]);
    const r = await parseText(
      tracesLine('app', [
        chat('b1000000000000000000000000000001', '6000000000000001', 'conv-x', 1),
        chat('b1000000000000000000000000000002', '6000000000000002', 'conv-y', 2),
      ]) +
        '\n' +
        tracesLine('app', [chat('b1000000000000000000000000000003', '6000000000000003', 'conv-x', 3)]) +
        '\n',
    );
    assert.deepEqual(
      r.model.sessions.map((s) => [s.id, s.calls.map((c) => c.id)]),
      [
        ['conv-x', ['6000000000000001', '6000000000000003']],
        ['conv-y', ['6000000000000002']],
      ],
    );
  });

  it("a run whose invoke_agent names a conversation is the session of that id (a sub-agent with its own too, one sharing its parent's is not); the 1-hour write split and service tier are read", async () => {
    const T2 = 'c2000000000000000000000000000001';
    const r = await parseText(
      tracesLine('agent', [
        span(T2, '8000000000000001', null, 'invoke_agent', 0, 9, [
          ['gen_ai.operation.name', 'invoke_agent'],
          ['gen_ai.conversation.id', 'session-main'],
        ]),
        span(T2, '8000000000000002', '8000000000000001', 'chat', 1, 2, [
          ['gen_ai.operation.name', 'chat'],
          ['gen_ai.request.model', 'claude-opus-4-6'],
          ['gen_ai.usage.input_tokens', 1000],
          ['gen_ai.usage.cache_read.input_tokens', 600],
          ['gen_ai.usage.cache_creation.input_tokens', 300],
          ['agent_trace.cache_creation_5m_input_tokens', 100],
          ['agent_trace.cache_creation_1h_input_tokens', 200],
          ['gen_ai.usage.output_tokens', 50],
          ['agent_trace.service_tier', 'priority'],
        ]),
        span(T2, '8000000000000003', '8000000000000001', 'invoke_agent', 3, 5, [
          ['gen_ai.operation.name', 'invoke_agent'],
          ['gen_ai.conversation.id', 'session-sub'],
        ]),
        span(T2, '8000000000000004', '8000000000000003', 'chat', 3, 4, [
          ['gen_ai.operation.name', 'chat'],
          ['gen_ai.usage.input_tokens', 10],
        ]),
        span(T2, '8000000000000005', '8000000000000001', 'invoke_agent', 6, 8, [
          ['gen_ai.operation.name', 'invoke_agent'],
          ['gen_ai.conversation.id', 'session-main'],
        ]),
        span(T2, '8000000000000006', '8000000000000005', 'chat', 6, 7, [
          ['gen_ai.operation.name', 'chat'],
          ['gen_ai.usage.input_tokens', 20],
        ]),
      ]) + '\n',
    );
    assert.deepEqual(
      r.model.sessions.map((s) => [s.id, s.parentId]),
      [
        ['session-main', null],
        ['session-sub', 'session-main'],
        [`${T2}/8000000000000005`, 'session-main'],
      ],
    );
    const call = r.model.sessions[0]!.calls[0]!;
    // 1,000 in, 600 read, 300 written (100 for 5 minutes, 200 for an hour): appended 400.
    assert.deepEqual(call.tokens, {
      input: 1000,
      cached: 600,
      appended: 400,
      cacheWrite: 300,
      cacheWrite5m: 100,
      cacheWrite1h: 200,
      output: 50,
      reasoningOutput: null,
    });
    assert.equal(call.serviceTier, 'priority');
  });

  it('span kind and status written as enum names; a tool before any call is skipped with a note', async () => {
    const tool = span(T, '7000000000000002', '7000000000000001', 'execute_tool', 0.5, 0.6, [
      ['gen_ai.operation.name', 'execute_tool'],
      ['gen_ai.tool.name', 'early'],
    ]);
    const failed = {
      ...span(T, '7000000000000004', '7000000000000001', 'execute_tool', 3, 4, [
        ['gen_ai.operation.name', 'execute_tool'],
        ['gen_ai.tool.name', 'late'],
      ]),
      kind: 'SPAN_KIND_INTERNAL',
      status: { code: 'STATUS_CODE_ERROR', message: 'boom' },
    };
    const r = await parseText(
      tracesLine('agent', [
        span(T, '7000000000000001', null, 'invoke_agent', 0, 9, [['gen_ai.operation.name', 'invoke_agent']]),
        tool,
        span(T, '7000000000000003', '7000000000000001', 'chat', 1, 2, [['gen_ai.operation.name', 'chat']]),
        failed,
      ]) + '\n',
    );
    const calls = r.model.sessions[0]!.calls;
    assert.deepEqual(
      calls[0]!.toolCalls.map((t) => [t.name, t.isError, t.errorText]),
      [['late', true, 'boom']],
    );
    assert.equal(r.model.skippedRecords['execute_tool:before-first-call'], 1);
    assert.ok(r.model.diagnostics.some((d) => d.severity === 'info' && /comes before any model call/.test(d.message)));
  });

  it('pitfall §12.7, version drift: unknown GenAI operations and non-trace lines are counted, never fatal', async () => {
    const r = await parseText(
      tracesLine('agent', [
        span(T, '8000000000000001', null, 'create_agent', 0, 1, [['gen_ai.operation.name', 'create_agent']]),
        span(T, '8000000000000002', null, 'chat', 1, 2, [
          ['gen_ai.operation.name', 'chat'],
          ['gen_ai.usage.input_tokens', 5],
        ]),
      ]) +
        '\n' +
        JSON.stringify({ resourceLogs: [] }) +
        '\n{not json\n',
    );
    assert.equal(r.problem, null);
    assert.equal(r.model.sessions.flatMap((s) => s.calls).length, 1);
    assert.deepEqual(r.model.skippedRecords, { 'gen_ai:create_agent': 1, resourceLogs: 1 });
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[2, 'error']],
    );
  });

  it('a broken document is read as far as it goes, without throwing', async () => {
    const r = await parseText('{\n  "resourceSpans": [\n    {"scopeSpans": [}\n  ]\n}\n', 'broken.json');
    assert.equal(r.model.format, 'otlp');
    assert.ok(r.model.diagnostics.some((d) => /JSON syntax error/.test(d.message)));
  });

  it('a JSON array of TracesData documents is read like JSON Lines, with a line per span', async () => {
    const one = (trace: string, id: string): object =>
      JSON.parse(
        tracesLine('vllm', [
          span(trace, id, null, 'llm_request', 1, 2, [
            ['gen_ai.request.id', id],
            ['gen_ai.latency.e2e', 1.0],
            ['gen_ai.usage.prompt_tokens', 3],
          ]),
        ]),
      );
    const text = JSON.stringify(
      [
        one('c1000000000000000000000000000001', '9000000000000001'),
        one('c1000000000000000000000000000002', '9000000000000002'),
      ],
      null,
      1,
    );
    const r = await parseText(text + '\n', 'array.json');
    assert.equal(r.model.format, 'otlp');
    const calls = r.model.sessions[0]!.calls;
    assert.deepEqual(
      calls.map((c) => c.id),
      ['9000000000000001', '9000000000000002'],
    );
    assert.ok(calls[1]!.source.line > calls[0]!.source.line);
  });

  it('an empty export says it has no spans', async () => {
    const r = await parseText('{"resourceSpans": []}\n', 'empty.json');
    assert.equal(r.model.format, 'otlp');
    assert.match(r.model.diagnostics[0]!.message, /contains no spans/);
  });
});

describe("OTLP detection does not steal other formats' samples", () => {
  it("no record or document of another format's fixture matches OTLP", () => {
    const others = traceFilesUnder(fixtures).filter((f) => !f.includes('/otlp/'));
    assert.ok(others.length > 5);
    assertClaimsNone(otlpFormat, others);
  });

  it('nor of the shared traces', { skip: needsShared(sharedTracesDir) }, () => {
    assertClaimsNone(
      otlpFormat,
      traceFilesUnder(sharedTracesDir!).filter((f) => !f.includes('/otlp/')),
    );
  });
});
