import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  literalPatchTarget,
  literalPrefix,
  scriptActions,
  scriptOutcome,
  unescapeJs,
} from '../../../../../src/core/trace/codex/codeMode';
import { patchTarget } from '../../../../../src/core/trace/codex/toolOutput';

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

/** A literal's end found the plain way, character by character (a backslash escapes the next one): -1 when it never closes. */
function closingByHand(source: string, open: number): number {
  for (let i = open + 1; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === source[open]) return i;
  }
  return -1;
}

/** What the patch target was before it was read from a prefix: the whole literal read, then patchTarget on it. */
function targetOfWholeLiteral(source: string, open: number): string | null | undefined {
  const end = closingByHand(source, open);
  return end < 0 ? undefined : patchTarget(unescapeJs(source.slice(open + 1, end)));
}

/** A patch's text written as a script's string literal, each character escaped one of several ways (by its place). */
function asLiteral(text: string, quote: string): string {
  let out = quote;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const code = c.charCodeAt(0);
    if (c === quote || c === '\\') out += `\\${c}`;
    else if (c === '\n') out += i % 3 === 0 && code < 256 ? '\\x0a' : i % 3 === 1 ? '\\u000A' : '\\n';
    else if (c === '\r') out += '\\r';
    else if (i % 5 === 0 && code < 256) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (i % 7 === 0) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += c;
  }
  return out + quote;
}

/** Lines of a patch: file lines of every kind (with trailing blanks, CRs, line separators), near misses and filler. */
const patchLine = fc.oneof(
  fc.constantFrom('*** Begin Patch', '*** End Patch', '@@', '-old', '+new', '', '   ', '***  Update File: x'),
  fc
    .tuple(
      fc.constantFrom('*** Update File: ', '*** Add File: ', '*** Delete File: ', ' *** Add File: '),
      fc.string({
        unit: fc.constantFrom('a', 'b', '/', '.', ' ', '\t', '\r', '\u2028', 'é', '"', "'", '\\'),
        maxLength: 12,
      }),
    )
    .map(([head, path]) => head + path),
  fc.nat({ max: 60 }).map((n) => 'x'.repeat(n)),
);

describe('Codex code mode: the target of a patch literal, read from its start', () => {
  it('is the whole literal’s target, with the file line before, across and after every prefix end', () => {
    fc.assert(
      fc.property(
        fc.array(patchLine, { maxLength: 12 }),
        fc.constantFrom('"', "'", '`'),
        fc.integer({ min: 1, max: 64 }),
        fc.boolean(),
        (lines, quote, limit, declared) => {
          const literal = asLiteral(lines.join(lines.length % 2 ? '\n' : '\r\n'), quote);
          const source = declared
            ? `const p = ${literal};\nawait tools.apply_patch(p);`
            : `await tools.apply_patch(${literal});`;
          const at = source.indexOf('apply_patch(') + 'apply_patch('.length;
          const open = declared ? source.indexOf(quote) : at;
          const expected = targetOfWholeLiteral(source, open);
          assert.equal(literalPatchTarget(source, at, limit), expected);
          assert.equal(literalPatchTarget(source, at), expected);
          // scriptActions, which reads it so, names the same file.
          assert.deepEqual(scriptActions(source).patchedFiles, expected ? [expected] : []);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('reads a literal’s prefix as a prefix of unescapeJs’s text, all of it when it closes first, and never calls an unclosed one closed', () => {
    fc.assert(
      fc.property(escapeHeavy, fc.constantFrom('"', "'"), fc.integer({ min: 0, max: 50 }), (body, quote, limit) => {
        const source = `${quote}${body}`;
        const end = closingByHand(source, 0);
        const read = literalPrefix(source, 0, limit);
        if (end < 0) return read === null || !read.closed;
        const whole = unescapeJs(source.slice(1, end));
        return read !== null && (read.closed ? read.text === whole : whole.startsWith(read.text));
      }),
      { numRuns: 5000 },
    );
  });

  it('falls back to the whole reading for an object, an unclosed literal or a patch built at run time', () => {
    assert.equal(literalPatchTarget('tools.apply_patch({input: "x"})', 'tools.apply_patch('.length), undefined);
    assert.equal(literalPatchTarget('tools.apply_patch("*** Add File: a', 'tools.apply_patch('.length), undefined);
    // Unclosed, with its file line read before the prefix ends: still no literal (a quote later on would close it).
    const unclosed = `tools.apply_patch("*** Begin Patch\\n*** Add File: a\\n${'@@\\n'.repeat(40)}+x = \\"1\\n`;
    assert.equal(literalPatchTarget(unclosed, 'tools.apply_patch('.length, 4), undefined);
    assert.deepEqual(scriptActions(unclosed).patchedFiles, []);
    assert.equal(literalPatchTarget('tools.apply_patch(p.replace("a", "b"))', 'tools.apply_patch('.length), undefined);
    assert.deepEqual(
      scriptActions(
        'const p = "*** Begin Patch\\n*** Add File: a.ts\\n"; await tools.apply_patch(p.replace("x", "y"));',
      ).patchedFiles,
      ['a.ts'],
    );
  });
});
