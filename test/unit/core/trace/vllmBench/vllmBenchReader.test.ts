import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { assertRoundTrip, withoutSources } from '../../../../support/roundTrip';
import { fixtures, parseFile, parseText } from '../../../../support/helpers';

// Hand-built fixtures (see test/fixtures/vllm-bench/README.md): the per-request values were
// chosen by hand as binary fractions, so every figure below is exact.
//   request  start_times   input  output  ttft     itls                            error
//   0        8412.5        512    4       0.125    0.015625 0.03125 0.0234375      ""
//   1        8412.515625   300    3       0.0625   0.015625 0.015625               ""
//   2        8412.75       700    0       0.0      []                              "Internal Server Error"
//   3        8412.765625   1024   2       0.25     0.046875                        ""
// start − 8412.5 s → 0, 15.625, 250, 265.625 ms; decode Σitls → 70.3125, 31.25, –, 46.875 ms;
// latency (ttft + Σitls) → 195.3125, 93.75, –, 296.875 ms; end = start + latency.
const ONE_LINE = join(fixtures, 'vllm-bench/openai-infqps-concurrency2-Qwen3-8B-20260315-101500.json');
const PRETTY = join(fixtures, 'vllm-bench/pretty-printed.json');
const LEGACY = join(fixtures, 'vllm-bench/legacy-benchmark_serving.json');
const AGGREGATES = join(fixtures, 'vllm-bench/aggregates-only.json');

describe('vllm bench reader on a detailed result (one line, as vllm writes it)', async () => {
  const parsed = await parseFile(ONE_LINE);
  const session = parsed.model.sessions[0]!;

  it('detects the one-line result as a vllm bench result', () => {
    assert.equal(readFileSync(ONE_LINE, 'utf8').split('\n').length, 1);
    assert.equal(parsed.problem, null);
    assert.equal(parsed.model.format, 'vllm-bench');
    assert.deepEqual(
      parsed.model.sessions.map((s) => [s.id, s.model]),
      [['vllm-bench-20260315-101500', 'Qwen/Qwen3-8B']],
    );
    assert.equal(session.title, 'vllm bench serve: Qwen/Qwen3-8B, 4 prompts at inf req/s, max concurrency 2');
  });

  it('makes one call per request with input_lens and output_lens, cache unknown', () => {
    assert.deepEqual(
      session.calls.map((c) => [c.id, c.tokens.input, c.tokens.output, c.tokens.cached, c.tokens.appended]),
      [
        ['request-0', 512, 4, null, null],
        ['request-1', 300, 3, null, null],
        ['request-2', 700, null, null, null],
        ['request-3', 1024, 2, null, null],
      ],
    );
    assert.ok(session.calls.every((c) => c.toolCalls.length === 0 && c.turn === null && c.source.line === 0));
  });

  it('converts seconds to ms: TTFT, decode = Σ itls, e2e = latency; start relative to the first request', () => {
    assert.deepEqual(
      session.calls.map((c) => [
        c.startMs,
        c.endMs,
        c.server!.ttftMs,
        c.server!.decodeMs,
        c.server!.e2eMs,
        c.server!.queueMs,
        c.server!.prefillMs,
      ]),
      [
        [0, 195.3125, 125, 70.3125, 195.3125, null, null],
        [15.625, 109.375, 62.5, 31.25, 93.75, null, null],
        [250, null, null, null, null, null, null],
        [265.625, 562.5, 250, 46.875, 296.875, null, null],
      ],
    );
  });

  it('notes the failed request: its 0 output and 0.0 TTFT mean "not measured", not zero', () => {
    assert.deepEqual(
      parsed.model.diagnostics.map((d) => [d.severity, d.message]),
      [
        [
          'warning',
          '1 of 4 requests failed (requests 2); their output and times are unknown. First error: Internal Server Error',
        ],
      ],
    );
  });

  it('keeps the aggregates as reported totals (completed requests only) beside the per-call sums', () => {
    assert.deepEqual(session.reportedTotals, { input: 1836, output: 9, cached: null, costUsd: null, llmCalls: 4 });
    const s = summarizeSession(session);
    // The calls: 512 + 300 + 700 + 1024 = 2,536 sent (the failed prompt too); 4 + 3 + 2 = 9 out.
    assert.deepEqual(s.tokens, { input: 2536, cached: null, appended: null, cacheWrite: null, output: 9 });
    assert.equal(s.tokensSource, 'calls');
    assert.equal(s.cacheHitRate, null);
    assert.equal(s.startMs, 0);
    assert.equal(s.endMs, 562.5);
  });

  it('says what the format cannot give', () => {
    assert.equal(parsed.model.limitations[0], 'No sessions, no cache data, no tools: one call per benchmark request.');
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('vllm bench reader: other shapes of the result', () => {
  it('a pretty-printed result reads as the same model, with each request on its own line', async () => {
    const one = await parseFile(ONE_LINE);
    const pretty = await parseFile(PRETTY);
    assert.equal(pretty.model.format, 'vllm-bench');
    assert.deepEqual(withoutSources(pretty.model.sessions), withoutSources(one.model.sessions));
    // "input_lens": [ is on file line 21, its entries on lines 22–25.
    assert.deepEqual(
      pretty.model.sessions[0]!.calls.map((c) => c.source.line + 1),
      [22, 23, 24, 25],
    );
    await assertRoundTrip(pretty);
  });

  it('an older benchmark_serving.py result (no start_times, latencies or failed): latency = TTFT + Σ ITL, start and end unknown', async () => {
    const r = await parseFile(LEGACY);
    const s = r.model.sessions[0]!;
    assert.equal(r.model.format, 'vllm-bench');
    assert.deepEqual(
      s.calls.map((c) => [c.startMs, c.endMs, c.server!.ttftMs, c.server!.decodeMs, c.server!.e2eMs]),
      [
        [null, null, 125, 70.3125, 195.3125],
        [null, null, 62.5, 31.25, 93.75],
      ],
    );
    assert.deepEqual(s.reportedTotals, { input: 812, output: 7, cached: null, costUsd: null, llmCalls: 2 });
    assert.deepEqual(r.model.diagnostics, []);
    await assertRoundTrip(r);
  });

  it('a result saved without --save-detailed has aggregates only: no calls, totals shown as reported', async () => {
    const r = await parseFile(AGGREGATES);
    const s = r.model.sessions[0]!;
    assert.equal(r.model.format, 'vllm-bench');
    assert.equal(s.calls.length, 0);
    assert.match(r.model.diagnostics[0]!.message, /saved without --save-detailed/);
    const summary = summarizeSession(s);
    assert.equal(summary.tokensSource, 'reported');
    assert.deepEqual(summary.tokens, { input: 1836, cached: null, appended: null, cacheWrite: null, output: 9 });
    await assertRoundTrip(r);
  });

  it('--append-result writes one run per line: each line is a session', async () => {
    const text = `${readFileSync(ONE_LINE, 'utf8')}\n${readFileSync(LEGACY, 'utf8')}\n`;
    const r = await parseText(text, 'appended.json');
    assert.equal(r.model.format, 'vllm-bench');
    assert.deepEqual(
      r.model.sessions.map((s) => [s.id, s.calls.length, s.calls[0]!.source.line]),
      [
        ['vllm-bench-20260315-101500', 4, 0],
        ['vllm-bench-20250110-083000', 2, 1],
      ],
    );
  });

  it('arrays of unequal length are reported; the missing entries are unknown', async () => {
    const r = await parseText(
      JSON.stringify({
        model_id: 'm',
        input_lens: [10, 20],
        output_lens: [1],
        ttfts: [0.5, 0.25],
        itls: [[], []],
        errors: ['', ''],
      }),
      'x.json',
    );
    const s = r.model.sessions[0]!;
    assert.deepEqual(
      s.calls.map((c) => c.tokens.output),
      [1, null],
    );
    assert.deepEqual(
      r.model.diagnostics.map((d) => d.message),
      ['"output_lens" has 1 entries for 2 requests; the missing ones are unknown.'],
    );
    assert.equal(s.id, 'vllm-bench-1'); // no date: numbered
  });

  it('does not claim other one-line JSON objects', async () => {
    const r = await parseText('{"duration": 3, "completed": 2}\n', 'x.json');
    assert.notEqual(r.model.format, 'vllm-bench');
  });
});
