import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkSync } from 'recheck';
import { ENTROPY_PATTERNS } from '../../../../src/core/redact/entropyRules';
import { SEMI_GENERIC_NEXT } from '../../../../src/core/redact/gitleaksRules';
import { PRIVATE_KEY_PATTERNS } from '../../../../src/core/redact/privateKeys';
import { Redactor } from '../../../../src/core/redact/redactor';
import { ID_CONTEXT_PATTERNS } from '../../../../src/core/redact/idContext';
import { STRICT_PATTERNS } from '../../../../src/core/redact/strictRules';
import { VIEW_PATTERNS } from '../../../../src/core/redact/views';

// Redaction runs over hostile trace text. gitleaks' regexes run in re2js (linear by
// construction); every regex that runs in V8 must be free of super-linear backtracking
// (recheck, as for the own rules in ownRules.test.ts), and texts built to make a naive
// scanner quadratic (long runs, a keyword every few characters, markers without ends)
// must go through the whole redactor. Each case is 256 KiB; a quadratic pass over it would
// take hours, so the test's timeout is the check; what each cost is printed as a diagnostic.

const N = 1 << 18;
const HOSTILE: Record<string, string> = {
  'one run of a word character': 'a'.repeat(N),
  'one run of base64 that decodes to text': 'QUFB'.repeat(N / 4),
  'a keyword and an operator every 4 characters (key=key=…)': 'key='.repeat(N / 4),
  'a secret name and a placeholder value, repeated (TOKEN=xxxxTOKEN=…)': 'TOKEN=xxxx'.repeat(N / 10),
  'BEGIN PRIVATE KEY lines without an END': '-----BEGIN PRIVATE KEY-----\n'.repeat(N / 28),
  'a BEGIN line and then only \\n escapes': '-----BEGIN EC PRIVATE KEY-----' + '\\n'.repeat(N / 2),
  'short wrapped lines (a join at every break)': 'aaaaaaaa\n'.repeat(N / 9),
  'a provider prefix repeated (ghp_ghp_…)': 'ghp_'.repeat(N / 4),
  'an identifier keyword followed by a long dotted run': ('twitch_token ' + 'x.'.repeat(20)).repeat(N / 53),
  'e-mail and URL-password fragments': 'a@://a:'.repeat(N / 7),
  'JWT-like runs without the second dot': 'eyAAAAAAAAAAAAAAAAAAA.'.repeat(N / 22),
  'letters and digits alternating (random-looking, no separator)': 'a1'.repeat(N / 2),
  'the longest assignment name, then a colon, repeated (every window of the anchored scan full)': (
    'k'.repeat(80) + ':'
  ).repeat(N / 81),
};
/** Texts built against strict mode's scans (strictRules.ts), redacted in strict mode on top of the ones above. */
const HOSTILE_STRICT: Record<string, string> = {
  ...HOSTILE,
  'hex groups of four joined by dashes, never eight (abcd-abcd-…)': 'abcd-'.repeat(N / 5),
  'a name and a colon repeated (user:user:…)': 'ab1:'.repeat(N / 4),
  'user:password pairs with a password-like value, back to back': ' dev:P@ss1word'.repeat(N / 14),
  'short random runs joined by + (a blob read run by run)': 'Ab1cD2eF3gH4+'.repeat(N / 13),
};

/**
 * Texts built against the id contexts (idContext.ts), which read a window around every value
 * of an id's shape: long names and brackets before each, braces, git's forms, timestamps;
 * redacted by default (which runs strict mode's scans too, then reads each value's context).
 */
const UUID = '832d2129-a846-4e27-99f4-7004b6ad53ef';
const HOSTILE_DEFAULT: Record<string, string> = {
  ...Object.fromEntries(Object.entries(HOSTILE_STRICT).filter(([name]) => !(name in HOSTILE))),
  'a UUID after every 90 letters (the longest name before each)': ('a'.repeat(90) + ' ' + UUID + ' ').repeat(N / 128),
  "a bracket and a long word before every hex value (git's `[branch <h>]` read back)": (
    '[' +
    'b'.repeat(80) +
    ' 0123456789abcdef0123 '
  ).repeat(N / 103),
  'brackets and words alternating before every number': ('[a'.repeat(40) + ' 1783709313394819000 ').repeat(N / 101),
  'UUIDs back to back in braces, colons and dots': `{${UUID}}:${UUID}..`.repeat(N / 78),
  'a time word and a number, repeated (time_ns=time_ns=…)': 'time_ns=1783709313394819000,'.repeat(N / 28),
};

describe('redaction on hostile text', () => {
  for (const [name, text] of Object.entries(HOSTILE_DEFAULT)) {
    it(`default mode: ${name}`, { timeout: 180_000 }, async (t) => {
      const started = performance.now();
      const [out] = await new Redactor([], 'core').redactJsonTexts([JSON.stringify({ t: text })]);
      t.diagnostic(`${(text.length / 1024).toFixed(0)} KiB in ${(performance.now() - started).toFixed(0)} ms`);
      assert.equal(typeof (JSON.parse(out!) as { t: string }).t, 'string');
    });
  }
  for (const [name, text] of Object.entries(HOSTILE)) {
    it(name, { timeout: 180_000 }, async (t) => {
      const started = performance.now();
      const [out] = await new Redactor([], 'core').redactJsonTexts([JSON.stringify({ t: text })]);
      t.diagnostic(`${(text.length / 1024).toFixed(0)} KiB in ${(performance.now() - started).toFixed(0)} ms`);
      assert.equal(typeof (JSON.parse(out!) as { t: string }).t, 'string');
    });
  }
  for (const [name, text] of Object.entries(HOSTILE_STRICT)) {
    it(`strict mode: ${name}`, { timeout: 180_000 }, async (t) => {
      const started = performance.now();
      const [out] = await new Redactor([], 'core', { mode: 'strict' }).redactJsonTexts([JSON.stringify({ t: text })]);
      t.diagnostic(`${(text.length / 1024).toFixed(0)} KiB in ${(performance.now() - started).toFixed(0)} ms`);
      assert.equal(typeof (JSON.parse(out!) as { t: string }).t, 'string');
    });
  }

  it('every V8 regex of the detectors is free of super-linear backtracking (recheck)', () => {
    const deterministic = {
      randomSeed: 1,
      timeout: null,
      attackTimeout: null,
      incubationTimeout: null,
      recallTimeout: null,
      maxAttackStringSize: 30_000,
    };
    // recheck's own step limits remain; its time limits are off so the verdict does not depend on the load.
    for (const re of [
      ...PRIVATE_KEY_PATTERNS,
      ...ENTROPY_PATTERNS,
      ...STRICT_PATTERNS,
      ...ID_CONTEXT_PATTERNS,
      ...VIEW_PATTERNS,
      SEMI_GENERIC_NEXT,
    ]) {
      // A sticky regex only ever matches where it is put: checked as anchored.
      const source = re.sticky ? `^(?:${re.source})` : re.source;
      const result = checkSync(source, re.flags.replace(/[gy]/g, ''), deterministic);
      assert.equal(
        result.status,
        'safe',
        `/${re.source}/: ${result.status === 'vulnerable' ? `attack ${result.attack.pattern}` : result.status}`,
      );
    }
  });
});
