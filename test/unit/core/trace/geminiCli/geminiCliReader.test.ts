import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { fixtures, parseFile } from '../../../../support/helpers';
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

  it('reads the session id, one typed prompt and one call with the message\'s tokens', () => {
    assert.equal(s.id, 'cdd63974-c2a3-4f1c-931d-cce1db22ec03');
    assert.equal(s.turns.length, 1);
    assert.equal(s.calls.length, 1);
    const c = s.calls[0]!;
    // input = promptTokenCount (5915) + toolUsePromptTokenCount (0); cached 0 is a value.
    assert.deepEqual([c.tokens.input, c.tokens.cached, c.tokens.appended, c.tokens.output, c.tokens.reasoningOutput], [5915, 0, 5915, 24, 0]);
    assert.equal(c.model, 'gemini-2.0-flash');
    // The call ran from the prompt (06:59:39.894) to the answer (06:59:41.751).
    assert.equal(c.endMs! - c.startMs!, 1857);
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

// Hand-built (test/fixtures/README.md says why): no real chat with these records could be copied.
// It follows what Gemini CLI's chatRecordingService writes today: the JSON Lines form, a message
// written again once its tokens and tool results arrive, the chat synced with the model's history
// (a `<session_context>` user message, tool results as user messages of `functionResponse` parts),
// a recorded slash command, and `{"$rewindTo": id}` when the user rewinds. Counted by hand:
// 3 typed prompts (u-prompt-1, u-prompt-2, u-prompt-3); 5 gemini messages with tokens (g-1 twice:
// the later copy counts); Σinput (input + tool) 1000 + 1100 + 1200 + 1300 + 1250 = 5,850;
// Σcached 0 + 800 + 1000 + 1100 + 1000 = 3,900; Σoutput (output + thoughts) 50 + 15 + 50 + 300 + 25 = 440;
// 2 tool calls, read_file failed. The rewind to u-prompt-2 drops u-prompt-2 and g-4 (2 messages)
// after the 4th call. test/reference/gemini_chat.py, which replays the file with Gemini CLI's own
// rules, prints the same figures.
const HISTORY_SYNC = join(fixtures, 'gemini-cli/hand-built-history-sync-rewind.jsonl');

describe('Gemini CLI reader on a JSON Lines chat with history sync and a rewind (hand-built)', async () => {
  const parsed = await parseFile(HISTORY_SYNC);
  const s = parsed.model.sessions[0]!;

  it('reads every record as Gemini CLI: the rewind record too', () => {
    assert.equal(parsed.model.format, 'gemini-cli');
    assert.deepEqual({ ...parsed.model.skippedRecords }, {});
    assert.equal(parsed.detection.confidence, 'certain');
  });

  it('counts only typed prompts: not the session context, tool results or a slash command', () => {
    // Before: 7 turns, the 4 records the CLI wrote itself among them.
    assert.deepEqual(s.turns.map((t) => t.preview), ['Why does make fail?', 'Rewrite the Makefile', 'Only add the missing target']);
    assert.equal(s.otherInputs?.injected, 1);
    assert.equal(s.otherInputs?.localCommand, 1);
  });

  it('keeps every call, the rewound one included, with the last copy of each message', () => {
    const sum = summarizeSession(s);
    assert.deepEqual([sum.llmCalls, sum.tokens.input, sum.tokens.cached, sum.tokens.output], [5, 5850, 3900, 440]);
    assert.deepEqual([sum.toolCalls, sum.failedToolCalls], [2, 1]);
    assert.match(s.calls[0]!.toolCalls[0]!.errorText!, /Path is a directory/);
    // g-5 answers the prompt typed after the rewind.
    assert.equal(s.calls[4]!.turn, 2);
  });

  it('marks the rewind as a manual cut of the context before the next call, and says what left', () => {
    assert.deepEqual(s.compactions.map((c) => [c.beforeCall, c.trigger, c.rewind]), [[4, 'manual', true]]);
    const note = parsed.model.diagnostics.find((d) => /rewound/.test(d.message));
    assert.ok(note, 'a diagnostic names the rewind');
    assert.match(note.message, /2 message\(s\) left the conversation/);
    assert.equal(note.line + 1, 13); // 0-based line of file line 13
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});
