import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { fixtures, parseFile, parseText } from '../../../../support/helpers';
import { assertRoundTrip } from '../../../../support/roundTrip';

// A real AIPerf run (ai-dynamo/aiperf's own plot fixtures, Apache-2.0, test/fixtures/README.md):
// 20 requests in 8 conversations. Expected figures from test/reference/aiperf_export.py:
//   python3 test/reference/aiperf_export.py test/fixtures/aiperf/non_uniform_requests.profile_export.jsonl
const FILE = join(fixtures, 'aiperf/non_uniform_requests.profile_export.jsonl');

describe('AIPerf reader on profile_export.jsonl', async () => {
  const parsed = await parseFile(FILE);

  it('detects every record as AIPerf, with certainty', () => {
    assert.equal(parsed.model.format, 'aiperf');
    assert.equal(parsed.detection.confidence, 'certain');
    assert.equal(parsed.problem, null);
  });

  it('groups the 20 requests into the 8 conversations, in file order of first appearance', () => {
    assert.equal(parsed.model.sessions.length, 8);
    assert.equal(
      parsed.model.sessions.reduce((n, s) => n + s.calls.length, 0),
      20,
    );
    const first = parsed.model.sessions[0]!;
    assert.equal(first.id, 'ccca5837-9df9-4a56-8d8e-bedc8d89c356');
    const s = summarizeSession(first);
    // Reference: 3 requests, Σinput 300, Σoutput 601, no reasoning tokens, no failure.
    assert.deepEqual([s.llmCalls, s.tokens.input, s.tokens.output, s.tokens.cached], [3, 300, 601, null]);
  });

  it('keeps the client timings: mean TTFT 30.85 ms and mean latency 3,621.5 ms over the first conversation', () => {
    const calls = parsed.model.sessions[0]!.calls;
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    assert.ok(Math.abs(mean(calls.map((c) => c.server!.ttftMs!)) - 30.850834666666668) < 1e-9);
    assert.ok(Math.abs(mean(calls.map((c) => c.server!.e2eMs!)) - 3621.5225716666664) < 1e-9);
    // start + latency = end, in epoch ms from request_start_ns / request_end_ns.
    for (const c of calls) assert.ok(Math.abs(c.endMs! - c.startMs! - c.server!.e2eMs!) < 1);
  });

  it('says what AIPerf cannot give instead of drawing zeros: no cache data unless the server reported it', () => {
    assert.ok(parsed.model.limitations.some((l) => /no cache data/.test(l)));
    assert.ok(parsed.model.sessions.every((s) => s.calls.every((c) => c.tokens.cached === null)));
  });

  it("reads the server's cached tokens where AIPerf recorded them (usage_prompt_cached_tokens)", async () => {
    // A real record of test/fixtures/aiperf/qwen_concurrency1 with the metric added under the name AIPerf gives it
    // (usage.prompt_tokens_details.cached_tokens, docs/reference/vendor-usage-fields.md): no real run with it is public.
    const raw = JSON.parse(
      readFileSync(join(fixtures, 'aiperf/qwen_concurrency1.profile_export.jsonl'), 'utf8').split('\n')[0]!,
    );
    raw.metrics.usage_prompt_cached_tokens = { value: 64, unit: 'tokens' };
    const p = await parseText(JSON.stringify(raw), 'profile_export.jsonl');
    const call = p.model.sessions[0]!.calls[0]!;
    assert.deepEqual([call.tokens.input, call.tokens.cached, call.tokens.appended], [100, 64, 36]);
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});
