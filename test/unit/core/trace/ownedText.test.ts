import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ownedText } from '../../../../src/core/trace/json';

describe('ownedText: a kept text as a string of its own', () => {
  it('equals the text it copies, lone surrogates, NULs and escapes included', () => {
    assert.equal(ownedText(''), '');
    assert.equal(ownedText('\ud800 a\u0000"\\\n\u2028é'), '\ud800 a\u0000"\\\n\u2028é');
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.nat(), (text, at) => {
        // A piece cut from a longer text: what the readers keep.
        const piece = text.slice(at % (text.length + 1));
        return ownedText(piece) === piece;
      }),
      { numRuns: 3000 },
    );
  });
});
