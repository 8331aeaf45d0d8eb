import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { contextWindowFor } from '../../../../src/core/sessions/contextWindow';

// Windows as the providers publish them: Claude Opus 4.5 200,000 tokens (Anthropic's models
// overview). A call that used more than the listed window proves a larger one.
describe('the context window behind "ctx" in the status bar', () => {
  it("comes from the price library's model entry", () => {
    assert.equal(contextWindowFor('claude-opus-4-5-20251101', 40_509), 200_000);
  });
  it('is not claimed when the call used more, or the model or its name is unknown', () => {
    assert.equal(contextWindowFor('claude-opus-4-5-20251101', 300_000), null);
    assert.equal(contextWindowFor('a-model-nobody-lists', 5), null);
    assert.equal(contextWindowFor(null, 5), null);
  });
});
