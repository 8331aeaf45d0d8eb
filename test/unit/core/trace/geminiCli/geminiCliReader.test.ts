import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { LOCAL_ONLY, fixtures, localSample, parseFile } from '../../../../support/helpers';
import { assertRoundTrip } from '../../../../support/roundTrip';

// A real Gemini CLI chat (gemini-2.0-flash in a Terminal-Bench container), kept by Harbor as
// the example of the format in its trajectory RFC (Apache-2.0, test/fixtures/README.md).
// Counted by hand: one user message, one gemini message with tokens {input 5915, output 24,
// cached 0, thoughts 0, tool 0, total 5939}.
const FILE = join(fixtures, 'gemini-cli/harbor-rfc-gemini-cli-trajectory.json');

describe('Gemini CLI reader on a chat session file', async () => {
  const parsed = await parseFile(FILE);
  const s = parsed.model.sessions[0]!;

  it('detects the chat by its structure, not by a weak key match', () => {
    assert.equal(parsed.model.format, 'gemini-cli');
    assert.equal(parsed.detection.confidence, 'likely');
  });

  it("reads the session id, one typed prompt and one call with the message's tokens", () => {
    assert.equal(s.id, 'cdd63974-c2a3-4f1c-931d-cce1db22ec03');
    assert.equal(s.turns.length, 1);
    assert.equal(s.calls.length, 1);
    const c = s.calls[0]!;
    // input = promptTokenCount (5915) + toolUsePromptTokenCount (0); cached 0 is a value.
    assert.deepEqual(
      [c.tokens.input, c.tokens.cached, c.tokens.appended, c.tokens.output, c.tokens.reasoningOutput],
      [5915, 0, 5915, 24, 0],
    );
    assert.equal(c.model, 'gemini-2.0-flash');
    // The call ran from the prompt (06:59:39.894) to the answer (06:59:41.751).
    assert.equal(c.endMs! - c.startMs!, 1857);
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

// A real Gemini CLI 0.59.0 session (gemini-3-flash-preview) kept by a Harbor run in
// yds233013/forensicds, jobs/p31-prospective-1/p31-fill-rate-dispute__GyUgp7D/agent/gemini-cli.trajectory.jsonl
// at commit ef328b5f5066e1120b24153894255a651e3c3f6d. The repository states no licence, so the file is
// read from $AGENT_TRACE_LOCAL_SAMPLES and never copied (test/fixtures/README.md). Its 11 lines, counted
// by hand and by test/reference/gemini_chat.py: a header; a `$set` checkpoint holding the
// `<session_context>` message; the typed prompt; gemini message 9db71eb9 written twice (first with
// tokens only, then again with its 6 tool calls: update_topic and 5 read_file, all `success`); a `user`
// message of 6 `functionResponse` parts that the CLI writes itself (the same results, no text);
// gemini message bd0c1a8c (no model, output 0); `$set` time updates. Tokens: input 10473 + 13514 = 23,987
// (tool 0), cached 8125 + 8110 = 16,235, output (output + thoughts) 267 + 426 + 0 + 0 = 693.
const FORENSICDS = localSample('gemini-cli/yds233013+forensicds+p31-prospective-1.jsonl');

describe('Gemini CLI 0.59.0 JSON Lines session from a Harbor run (yds233013/forensicds)', {
  skip: FORENSICDS === null && LOCAL_ONLY,
}, async () => {
  const parsed = FORENSICDS === null ? null : await parseFile(FORENSICDS);
  const s = parsed?.model.sessions[0];

  it('reads every record as Gemini CLI: header, messages and $set updates', () => {
    assert.equal(parsed!.model.format, 'gemini-cli');
    assert.deepEqual({ ...parsed!.model.skippedRecords }, {});
    assert.equal(s!.id, '091be5f4-e524-4296-9041-a38ccf1a8f2b');
  });

  it('counts the one typed prompt, not the tool-result turn the CLI records as a user message', () => {
    assert.deepEqual(
      s!.turns.map((t) => t.preview.slice(0, 57)),
      ['You are a demand-science analyst at Meridian Retail Group'],
    );
    // Both responses answer that prompt: the second follows the tool results, not a new prompt.
    assert.deepEqual(
      s!.calls.map((c) => c.turn),
      [0, 0],
    );
  });

  it('two calls with the tokens summed by hand, the re-written message counted once with its tool calls', () => {
    const sum = summarizeSession(s!);
    assert.deepEqual([sum.llmCalls, sum.tokens.input, sum.tokens.cached, sum.tokens.output], [2, 23987, 16235, 693]);
    assert.deepEqual([sum.toolCalls, sum.failedToolCalls], [6, 0]);
    // input − cached: 10473 − 8125 and 13514 − 8110; thoughts 426 on the first call only.
    assert.deepEqual(
      s!.calls.map((c) => [c.tokens.appended, c.tokens.reasoningOutput]),
      [
        [2348, 426],
        [5404, 0],
      ],
    );
    assert.deepEqual(
      s!.calls[0]!.toolCalls.filter((t) => t.name === 'read_file').map((t) => t.targetFile),
      [
        'docs/customer_supply_agreement.md',
        'docs/supplier_report_methodology.md',
        'docs/table_dictionary.md',
        'docs/outputs/readout_contract.md',
        'notes/correspondence.md',
      ],
    );
  });

  it('times each call from the input before it: the prompt, then the tool results', () => {
    // 08:44:47.792 → 08:44:52.118 and 08:44:52.143 → 08:44:56.307.
    assert.deepEqual(
      s!.calls.map((c) => c.endMs! - c.startMs!),
      [4326, 4164],
    );
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed!);
  });
});

// A real Gemini CLI chat document (gemini_session.json, 214 messages, June 2026) committed to
// bhanu7410/personal_finance at 2a9f6c37d5feb22f8144ebf24882b9e1bc4372f7. No licence: read from
// $AGENT_TRACE_LOCAL_SAMPLES, never copied (test/fixtures/README.md). The user switched out of plan
// mode four times, and the CLI recorded each switch as a `user` message ("User has manually exited
// Plan Mode. Switching to Default mode …", useGeminiStream.ts); one shell call was refused at its
// confirmation prompt ("[Operation Cancelled] Reason: User denied execution."). Figures from
// test/reference/gemini_chat.py ("prompts 20 other 5 calls 93 input 5105051 cached 3317672
// output 61008 tools 113 failed 11") and test/reference/tool_denials.py ("gemini-cli denied 1").
const PLAN_MODE = localSample('gemini-cli/bhanu7410+personal_finance-gemini_session.json');

describe('Gemini CLI chat with plan-mode switches (bhanu7410/personal_finance, local only)', {
  skip: PLAN_MODE === null && LOCAL_ONLY,
}, async () => {
  const parsed = PLAN_MODE === null ? null : await parseFile(PLAN_MODE);
  const s = parsed?.model.sessions[0];

  it('the plan-mode notices the CLI writes as the user are other inputs, not typed prompts: 20 turns, not 24', () => {
    assert.equal(s!.turns.length, 20);
    assert.ok(s!.turns.every((t) => !t.preview.startsWith('User has manually exited Plan Mode')));
    // The <session_context> message and the four notices.
    assert.deepEqual(s!.otherInputs, {
      notification: 0,
      localCommand: 0,
      hookOutput: 0,
      compactionSummary: 0,
      interruption: 0,
      injected: 5,
    });
  });

  it('keeps every call and token the reference sums', () => {
    const x = summarizeSession(s!);
    assert.deepEqual(
      [x.llmCalls, x.tokens.input, x.tokens.cached, x.tokens.output, x.toolCalls, x.failedToolCalls],
      [93, 5105051, 3317672, 61008, 113, 11],
    );
  });

  it('the call refused at its confirmation prompt is denied by the user, and failed; the other cancelled ones are not denied', () => {
    const tools = s!.calls.flatMap((c) => c.toolCalls);
    const cancelled = tools.filter((t) => t.errorText?.startsWith('cancelled:'));
    const denied = tools.filter((t) => t.deniedByUser === true);
    // Two calls were cancelled: a run_shell_command refused at its prompt, and a replace stopped ("Operation cancelled").
    assert.deepEqual(
      cancelled.map((t) => [t.name, t.deniedByUser === true]),
      [
        ['run_shell_command', true],
        ['replace', false],
      ],
    );
    assert.equal(denied.length, 1);
    assert.equal(denied[0]!.isError, true);
    assert.match(denied[0]!.errorText!, /User denied execution/);
    assert.equal(summarizeSession(s!).deniedToolCalls, 1);
  });

  it('round-trips through the canonical format, the denial included', async () => {
    await assertRoundTrip(parsed!);
  });
});
