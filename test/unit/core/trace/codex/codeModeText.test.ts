import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { scriptActions, scriptOutcome, unescapeJs } from '../../../../../src/core/trace/codex/codeMode';

/** The first version: one regular expression and a replacer per escape (what the one-pass reading must equal). */
function unescapeByRegex(body: string): string {
  return body.replace(/\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/gs, (_, e: string) => {
    if (e[0] === 'u' || e[0] === 'x') return String.fromCharCode(parseInt(e.slice(1), 16));
    return e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e;
  });
}

/** Text made mostly of the characters escapes are made of, so escapes (whole, cut short, at the end) are common. */
const escapeHeavy = fc.string({
  unit: fc.constantFrom('\\', 'u', 'x', 'n', 't', 'r', '0', '7', 'a', 'F', 'g', '"', "'", '\n', 'é', '\ud83d', ' '),
  maxLength: 40,
});

describe('Codex code mode: reading a script literal', () => {
  it('reads escapes as the regular expression did, by hand', () => {
    assert.equal(unescapeJs('a\\nb\\tc\\rd'), 'a\nb\tc\rd');
    assert.equal(unescapeJs('\\u00e9\\x41\\"\\\\'), 'éA"\\');
    // \u or \x without their digits: U+0000 and the rest as written; a last lone backslash stays.
    assert.equal(unescapeJs('\\uZZ\\x4'), '\u0000ZZ\u00004');
    assert.equal(unescapeJs('end\\'), 'end\\');
    assert.equal(unescapeJs('no escapes'), 'no escapes');
  });

  it('equals the regular-expression reading on any text', () => {
    fc.assert(
      fc.property(escapeHeavy, (body) => unescapeJs(body) === unescapeByRegex(body)),
      { numRuns: 5000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (body) => unescapeJs(body) === unescapeByRegex(body)),
      { numRuns: 2000 },
    );
  });

  it('finds a patch literal with escaped quotes and backslashes, and the command after it', () => {
    const source =
      'const patch = "*** Begin Patch\\n*** Update File: src/a\\\\b.ts\\n@@\\n-x = \\"1\\"\\n+x = \\"2\\"\\n*** End Patch";\nawait tools.apply_patch(patch);\nawait tools.exec_command({cmd: \'npm test\'});';
    assert.deepEqual(scriptActions(source), { commands: ['npm test'], patchedFiles: ['src/a\\b.ts'] });
  });

  it('reads exit codes only from a body that prints them', () => {
    const text =
      'Script completed\nWall time: 1.5 seconds\nOutput:\n{"exit_code": 2, "output": "x"}\nProcess exited with code 3\n';
    assert.deepEqual(scriptOutcome(text)?.exitCodes, [2, 3]);
    assert.deepEqual(scriptOutcome('Script completed\nOutput:\nall good\n')?.exitCodes, []);
  });
});
