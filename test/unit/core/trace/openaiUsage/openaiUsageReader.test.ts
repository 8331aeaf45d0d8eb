import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { openAiUsageFormat } from '../../../../../src/core/trace/openaiUsage/definition';
import { FILE_SESSION_ID } from '../../../../../src/core/trace/openaiUsage/openaiUsageReader';
import { assertRoundTrip } from '../../../../support/roundTrip';
import {
  assertClaimsNone,
  fixtures,
  needsShared,
  parseFile,
  parseText,
  sharedTracesDir,
  traceFilesUnder,
} from '../../../../support/helpers';

// No real usage log with a licence that allows copying was found, so the fixtures in
// test/fixtures/openai-usage/ are hand-made in the shapes vLLM's OpenAI-compatible
// server and the OpenAI Batch API write. Every expected number is read off those lines
// by hand.

const DIR = join(fixtures, 'openai-usage');
const VLLM = join(DIR, 'vllm-responses.jsonl');
const BATCH = join(DIR, 'batch-output.jsonl');
const CONVERSATIONS = join(DIR, 'conversations.jsonl');

/** A chat.completion line with the given usage. */
function completion(
  id: string,
  created: number,
  usage: object | undefined,
  message: object = { role: 'assistant', content: 'ok' },
): string {
  return JSON.stringify({
    id,
    object: 'chat.completion',
    created,
    model: 'm',
    choices: [{ index: 0, message, finish_reason: 'stop' }],
    ...(usage ? { usage } : {}),
  });
}

describe('OpenAI usage reader: vLLM chat/completions responses, one per line', async () => {
  const parsed = await parseFile(VLLM);
  const s = parsed.model.sessions[0]!;

  it('is detected from its records and makes one session for the file', () => {
    assert.equal(parsed.model.format, 'openai-usage');
    assert.match(parsed.detection.evidence, /^4 of the first 4 records/);
    assert.deepEqual(
      parsed.model.sessions.map((x) => [x.id, x.calls.length]),
      [[FILE_SESSION_ID, 4]],
    );
    assert.deepEqual(parsed.model.diagnostics, []);
  });

  it('line 1: prompt 1200 with 1024 cached → appended 176, output 80, created s → ms', () => {
    const c = s.calls[0]!;
    assert.equal(c.id, 'chatcmpl-1');
    assert.equal(c.model, 'Qwen/Qwen3-32B');
    assert.deepEqual(c.tokens, {
      input: 1200,
      cached: 1024,
      appended: 176,
      cacheWrite: null,
      output: 80,
      reasoningOutput: null,
    });
    assert.equal(c.startMs, 1767225600000);
    assert.equal(c.endMs, null);
    assert.equal(c.server, null);
  });

  it('missing details = unknown: prompt_tokens_details null (line 2) or absent (line 3) leaves cached null, not 0 (pitfall §12.10)', () => {
    assert.deepEqual(s.calls[1]!.tokens, {
      input: 1450,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: 60,
      reasoningOutput: null,
    });
    assert.deepEqual(s.calls[2]!.tokens, {
      input: 1500,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: 200,
      reasoningOutput: 150,
    });
  });

  it('a reported cached_tokens of 0 is a real zero (line 4, a text_completion)', () => {
    assert.deepEqual(s.calls[3]!.tokens, {
      input: 40,
      cached: 0,
      appended: 40,
      cacheWrite: null,
      output: 16,
      reasoningOutput: null,
    });
  });

  it('session totals by hand: inputs 1200 + 1450 + 1500 + 40, cache hit over the two calls that report it', () => {
    const sum = summarizeSession(s);
    assert.deepEqual(sum.tokens, { input: 4190, cached: 1024, appended: 216, cacheWrite: null, output: 356 });
    // Paired over calls where both are known: 1024 / (1200 + 40).
    assert.equal(sum.cacheHitRate, 1024 / 1240);
  });

  it('tool calls from choices[].message.tool_calls: names and arguments, results unknown', () => {
    assert.deepEqual(
      s.calls.map((c) => c.toolCalls.map((t) => [t.id, t.name, t.command, t.targetFile, t.isError])),
      [
        [['call_a', 'bash', 'npm test', null, null]],
        [],
        [
          ['call_b', 'write_file', null, 'src/app.ts', null],
          ['call_c', 'bash', 'npm test', null, null], // a command given as an argv array
        ],
        [],
      ],
    );
    assert.equal(s.calls[0]!.toolCalls[0]!.resultSource, null);
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('OpenAI usage reader: OpenAI Batch API output (response.body), out of order, with a failed request', async () => {
  const parsed = await parseFile(BATCH);
  const s = parsed.model.sessions[0]!;

  it('unwraps response.body and sorts by created, since batch output is in no order', () => {
    assert.equal(parsed.model.format, 'openai-usage');
    // chatcmpl-B1 (created …700, line 3) before chatcmpl-B2 (created …720, line 1).
    assert.deepEqual(
      s.calls.map((c) => [c.index, c.id, c.source.line]),
      [
        [0, 'chatcmpl-B1', 2],
        [1, 'chatcmpl-B2', 0],
      ],
    );
    assert.deepEqual(s.calls[1]!.tokens, {
      input: 2006,
      cached: 1920,
      appended: 86,
      cacheWrite: null,
      output: 300,
      reasoningOutput: 0,
    });
    assert.deepEqual(s.calls[0]!.tokens, {
      input: 2006,
      cached: 0,
      appended: 2006,
      cacheWrite: null,
      output: 250,
      reasoningOutput: 0,
    });
  });

  it('the failed request (response null, error set) is a note on its line, not a call', () => {
    assert.deepEqual(
      parsed.model.diagnostics.map((d) => [d.line, d.severity]),
      [[1, 'info']],
    );
    assert.match(parsed.model.diagnostics[0]!.message, /task-3 failed \(batch_expired: /);
    assert.deepEqual(parsed.model.skippedRecords, { 'request-error': 1 });
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('OpenAI usage reader: {request, response} log records with a conversation id', async () => {
  const parsed = await parseFile(CONVERSATIONS);

  it('one session per conversation_id, calls in file order within each', () => {
    assert.deepEqual(
      parsed.model.sessions.map((x) => [x.id, x.calls.map((c) => c.id)]),
      [
        ['conv-1', ['chatcmpl-c1a', 'chatcmpl-c1b']],
        ['conv-2', ['chatcmpl-c2a']],
      ],
    );
  });

  it('numbers by hand: conv-1 300/256 and 340/304; conv-2 has no details → cached unknown', () => {
    const [c1, c2] = parsed.model.sessions;
    assert.deepEqual(
      c1!.calls.map((c) => [c.tokens.input, c.tokens.cached, c.tokens.appended, c.tokens.output]),
      [
        [300, 256, 44, 12],
        [340, 304, 36, 8],
      ],
    );
    assert.deepEqual(c2!.calls[0]!.tokens, {
      input: 20,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: 3,
      reasoningOutput: null,
    });
    assert.equal(c1!.calls[0]!.toolCalls[0]!.command, 'ls');
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('OpenAI usage reader: edge cases', () => {
  it('pitfall §12.3: prompt_tokens includes the cached tokens (appended = prompt − cached)', async () => {
    const r = await parseText(
      completion('a', 1, { prompt_tokens: 500, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 480 } }) +
        '\n',
    );
    assert.deepEqual(r.model.sessions[0]!.calls[0]!.tokens, {
      input: 500,
      cached: 480,
      appended: 20,
      cacheWrite: null,
      output: 5,
      reasoningOutput: null,
    });
  });

  it('prompt_tokens_details present without cached_tokens is still unknown', async () => {
    const r = await parseText(
      completion('a', 1, { prompt_tokens: 500, completion_tokens: 5, prompt_tokens_details: { audio_tokens: 0 } }) +
        '\n',
    );
    assert.equal(r.model.sessions[0]!.calls[0]!.tokens.cached, null);
  });

  it('cached above prompt is impossible: a warning, cached unknown', async () => {
    const r = await parseText(
      completion('a', 1, { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 11 } }) +
        '\n',
    );
    assert.deepEqual(r.model.sessions[0]!.calls[0]!.tokens, {
      input: 10,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: 5,
      reasoningOutput: null,
    });
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[0, 'warning']],
    );
  });

  it('a response without usage: tokens unknown, with a note', async () => {
    const r = await parseText(
      completion('a', 1, undefined) + '\n' + completion('b', 2, { prompt_tokens: 3, completion_tokens: 1 }) + '\n',
    );
    assert.deepEqual(r.model.sessions[0]!.calls[0]!.tokens, {
      input: null,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: null,
      reasoningOutput: null,
    });
    assert.match(r.model.diagnostics[0]!.message, /has no usage/);
  });

  it('a stream logged chunk by chunk: chunks without usage are skipped, usage on every chunk keeps the last count', async () => {
    const chunk = (usage: object | null): string =>
      JSON.stringify({
        id: 'chatcmpl-s',
        object: 'chat.completion.chunk',
        created: 5,
        model: 'm',
        choices: [{ index: 0, delta: { content: 'x' } }],
        usage,
      });
    const r = await parseText(
      [
        chunk(null),
        chunk({ prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 }),
        chunk({ prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 }),
      ].join('\n') + '\n',
    );
    assert.equal(r.model.format, 'openai-usage');
    assert.deepEqual(
      r.model.sessions[0]!.calls.map((c) => [c.id, c.tokens.input, c.tokens.output]),
      [['chatcmpl-s', 9, 4]],
    );
    assert.deepEqual(r.model.skippedRecords, { 'chat.completion.chunk': 2 });
  });

  it('the same response id twice (a log written twice): the repeat is skipped with a warning', async () => {
    const line = completion('dup', 1, { prompt_tokens: 3, completion_tokens: 1 });
    const r = await parseText(`${line}\n${line}\n`);
    assert.equal(r.model.sessions[0]!.calls.length, 1);
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[1, 'warning']],
    );
  });

  it('legacy function_call and tool_calls without ids get ids of their own', async () => {
    const r = await parseText(
      completion(
        'f',
        1,
        { prompt_tokens: 3, completion_tokens: 1 },
        { role: 'assistant', function_call: { name: 'get_time', arguments: '{}' } },
      ) + '\n',
    );
    assert.deepEqual(
      r.model.sessions[0]!.calls[0]!.toolCalls.map((t) => [t.id, t.name]),
      [['f#1', 'get_time']],
    );
  });

  it('a single pretty-printed response is read as a document', async () => {
    const text = JSON.stringify(
      JSON.parse(
        completion('doc', 7, { prompt_tokens: 12, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 8 } }),
      ),
      null,
      2,
    );
    const r = await parseText(text + '\n', 'response.json');
    assert.equal(r.model.format, 'openai-usage');
    assert.deepEqual(
      r.model.sessions[0]!.calls.map((c) => [c.id, c.tokens.appended]),
      [['doc', 4]],
    );
  });

  it('a malformed line in the middle is reported on its line; the rest loads', async () => {
    const r = await parseText(
      completion('a', 1, { prompt_tokens: 3, completion_tokens: 1 }) +
        '\n{"id": \n' +
        completion('b', 2, { prompt_tokens: 4, completion_tokens: 1 }) +
        '\n',
    );
    assert.equal(r.model.sessions[0]!.calls.length, 2);
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[1, 'error']],
    );
  });
});

describe("OpenAI usage detection does not steal other formats' samples", () => {
  it("no record or document of another format's fixture matches an OpenAI usage log", () => {
    const others = traceFilesUnder(fixtures).filter((f) => !f.includes('/openai-usage/'));
    assert.ok(others.length > 5);
    assertClaimsNone(openAiUsageFormat, others);
  });

  it('nor of the shared traces', { skip: needsShared(sharedTracesDir) }, () => {
    assertClaimsNone(openAiUsageFormat, traceFilesUnder(sharedTracesDir!));
  });
});
