import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
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
