import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { fixtures, parseFile } from '../../../../support/helpers';
import { assertRoundTrip } from '../../../../support/roundTrip';

// Real OpenHands V0 events (All-Hands-AI/OpenHands, MIT, test/fixtures/README.md). Expected
// figures for the evaluation output from test/reference/openhands_events.py:
//   python3 test/reference/openhands_events.py test/fixtures/openhands/multi_swe_bench-output.head2.jsonl
// The saved trajectory (basic_gui_mode.json, 18 events) was counted by hand and by the same
// script: four agent actions, each from its own model response (ids chatcmpl-6bb9…, -5593…,
// -34fe…, -51a8…), and a fifth response, the agent's closing `message` (event 15), a reply in
// text with no tool call and so no response metadata or usage (reference: "trajectory 5 …").
const OUTPUT = join(fixtures, 'openhands/multi_swe_bench-output.head2.jsonl');
const SAVED = join(fixtures, 'openhands/basic_gui_mode.json');

describe('OpenHands reader on an evaluation output.jsonl (two instances)', async () => {
  const parsed = await parseFile(OUTPUT);

  it('reads each line as one instance, certain of the format', () => {
    assert.equal(parsed.model.format, 'openhands');
    assert.equal(parsed.detection.confidence, 'certain');
    assert.deepEqual(
      parsed.model.sessions.map((s) => s.id),
      ['ponylang__ponyc-4595', 'ponylang__ponyc-4593'],
    );
  });

  it("one call per model response, with the reference's tokens, tools and failures", () => {
    const rows = parsed.model.sessions.map((s) => {
      const x = summarizeSession(s);
      return [x.llmCalls, x.tokens.input, x.tokens.output, x.toolCalls, x.failedToolCalls, x.userTurns];
    });
    // 4593: 33 tool calls of actions plus one `error` observation that answers none (a rejected
    // call: "Parameter 'command' is expected to be one of …"), counted as a failed unknown tool.
    assert.deepEqual(rows, [
      [23, 565158, 2558, 23, 6, 1],
      [33, 410169, 5156, 34, 14, 1],
    ]);
  });

  it('agrees with the run totals the evaluation reports (accumulated_token_usage)', () => {
    for (const s of parsed.model.sessions) {
      const x = summarizeSession(s);
      assert.equal(x.tokens.input, s.reportedTotals!.input);
      assert.equal(x.tokens.output, s.reportedTotals!.output);
    }
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('OpenHands reader on a saved trajectory (a JSON array of events)', async () => {
  const parsed = await parseFile(SAVED);
  const s = parsed.model.sessions[0]!;

  it('has 5 calls, 1 typed prompt and 4 tool calls; the server left running (exit code -1) has no outcome, not a failure', () => {
    assert.equal(parsed.model.format, 'openhands');
    assert.deepEqual([s.calls.length, s.turns.length, s.calls.flatMap((c) => c.toolCalls).length], [5, 1, 4]);
    const server = s.calls[3]!.toolCalls[0]!;
    assert.equal(server.command, 'cd /workspace/todo-app && python3 -m http.server 8000');
    assert.equal(server.isError, null);
    assert.equal(summarizeSession(s).failedToolCalls, 0);
  });

  it("takes each call's usage from its model response: 3,439 + 3,601 + 4,769 + 5,488 prompt tokens, and none for the text reply", () => {
    assert.deepEqual(
      s.calls.map((c) => c.tokens.input),
      [3439, 3601, 4769, 5488, null],
    );
    assert.deepEqual(
      s.calls.map((c) => c.tokens.output),
      [104, 1142, 693, 85, null],
    );
  });

  it("the agent's closing message is its own call: a reply with no tool call, its usage unknown, never 0", () => {
    const reply = s.calls[4]!;
    assert.equal(reply.source.line + 1, 598); // event 15 opens on line 598
    assert.deepEqual(
      [reply.toolCalls.length, reply.tokens.input, reply.tokens.cached, reply.tokens.output],
      [0, null, null, null],
    );
    // It answers the one typed prompt, and follows the last tool call's observation.
    assert.equal(reply.turn, 0);
    assert.ok(reply.startMs !== null && reply.endMs !== null && reply.startMs <= reply.endMs);
    const summary = summarizeSession(s);
    assert.deepEqual(
      [summary.llmCalls, summary.callsWithTokens, summary.tokens.input, summary.tokens.output],
      [5, 4, 17297, 2024],
    );
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});
