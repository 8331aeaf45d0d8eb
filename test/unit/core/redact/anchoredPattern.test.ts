import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { AnchoredPattern } from '../../../../src/core/redact/anchoredPattern';
import { OWN_RULES } from '../../../../src/core/redact/ownRules';
import { PAIR_NEAR_COLON } from '../../../../src/core/redact/strictRules';
import { repoRoot } from '../../../support/workspace.mjs';

// AnchoredPattern must find exactly what its plain regex finds, at the same places with the
// same groups: checked against the plain regex's own scan (a different method) over every
// real sample in the fixtures and over random texts dense in the characters these rules turn on.

/** Every match of a plain global regex, as "index:group0|group1|…". */
function plainMatches(pattern: RegExp, text: string): string[] {
  const re = new RegExp(pattern.source, pattern.flags);
  const out: string[] = [];
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out.push(`${m.index}:${[...m].join('|')}`);
    if (m[0].length === 0) re.lastIndex++;
  }
  return out;
}

function anchoredMatches(anchored: AnchoredPattern, text: string): string[] {
  const out: string[] = [];
  for (let m = anchored.exec(text, 0); m !== null; m = anchored.exec(text, m.index + Math.max(1, m[0].length)))
    out.push(`${m.index}:${[...m].join('|')}`);
  return out;
}

const ANCHORED: Array<[string, AnchoredPattern]> = [
  ...OWN_RULES.filter((r) => r.anchor).map((r): [string, AnchoredPattern] => [
    r.kind,
    new AnchoredPattern(r.pattern, r.anchor!.chars, r.anchor!.reach),
  ]),
  ['strict user:password pair', PAIR_NEAR_COLON],
];

function fixtureTexts(): Array<[string, string]> {
  const root = path.join(repoRoot, 'test', 'fixtures');
  const out: Array<[string, string]> = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (fs.statSync(p).size < 4 << 20) out.push([path.relative(root, p), fs.readFileSync(p, 'utf8')]);
    }
  };
  walk(root);
  return out;
}

/**
 * Deterministic texts built of what these rules read: a separator, a run of name characters,
 * maybe a quote, spaces or tabs, an operator (`@`, `:`, `=`), then a value. Half the runs and
 * spaces have the lengths at the rules' bounds (a pair's name of 32, an address's local part
 * of 64, an assignment's name of 81 and 8 spaces), so a reach one short of a pattern's is caught.
 */
function randomTexts(count: number, seed: number): string[] {
  // mulberry32: a linear congruential generator's low bits repeat too soon for lengths drawn this often.
  let x = seed >>> 0;
  const next = (n: number): number => {
    x = (x + 0x6d2b79f5) >>> 0;
    let t = x;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const pick = (chars: string): string => chars[next(chars.length)]!;
  const BOUNDS = [1, 2, 31, 32, 33, 63, 64, 65, 80, 81, 82];
  const run = (length: number, chars: string): string => Array.from({ length }, () => pick(chars)).join('');
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    let text = '';
    for (let segment = 1 + next(6); segment > 0; segment--) {
      text += pick(' \n"\'(/,{=x');
      text += run(next(2) === 0 ? next(101) : BOUNDS[next(BOUNDS.length)]!, next(2) === 0 ? 'k' : 'kkkkA9_.-+%');
      if (next(2) === 0) text += pick('"\'');
      text += run([0, 0, next(11), 8][next(4)]!, ' \t');
      text += pick('@:=');
      text += run(next(21), 'abcXYZ019.-!#');
    }
    texts.push(text);
  }
  return texts;
}

describe('AnchoredPattern', () => {
  const fixtures = fixtureTexts();
  const randoms = randomTexts(3000, 7);

  for (const [name, anchored] of ANCHORED) {
    it(`${name}: the same matches as the plain regex, on every real sample and on random texts`, () => {
      let matches = 0;
      for (const [file, text] of fixtures) {
        const expected = plainMatches(anchored.pattern, text);
        assert.deepEqual(anchoredMatches(anchored, text), expected, file);
        matches += expected.length;
      }
      for (const text of randoms) {
        const expected = plainMatches(anchored.pattern, text);
        assert.deepEqual(anchoredMatches(anchored, text), expected, JSON.stringify(text));
        matches += expected.length;
      }
      // The comparison saw matches (a rule that matched nothing would prove nothing).
      assert.ok(matches > 100, `${matches} matches`);
    });
  }

  it('a reach shorter than the pattern needs misses matches, and the comparison says so', () => {
    const email = OWN_RULES.find((r) => r.kind === 'email')!;
    const tooShort = new AnchoredPattern(email.pattern, '@', 8);
    const texts = [...randoms, 'write to someone.with.a.long.name@example.com today'];
    assert.ok(texts.some((t) => anchoredMatches(tooShort, t).join() !== plainMatches(email.pattern, t).join()));
    // By hand: the address starts 24 characters before its `@`, past the reach of 8.
    assert.deepEqual(anchoredMatches(tooShort, 'write to someone.with.a.long.name@example.com today'), []);
  });

  it('skips text without the anchor characters, and starts from the position given', () => {
    const env = OWN_RULES.find((r) => r.kind === 'env-assignment')!;
    const anchored = new AnchoredPattern(env.pattern, env.anchor!.chars, env.anchor!.reach);
    assert.equal(anchored.exec('msg_01AbCdEf toolu_01XyZ '.repeat(1000), 0), null);
    const text = 'A_TOKEN=abc B_TOKEN=def';
    assert.equal(anchored.exec(text, 0)?.index, 0);
    assert.equal(anchored.exec(text, 1)?.index, 12);
    assert.equal(anchored.exec(text, 1)?.[1], 'B_TOKEN');
  });

  it('refuses a pattern that is not global or that refers back to a group', () => {
    assert.throws(() => new AnchoredPattern(/a@b/, '@', 1), /not global/);
    assert.throws(() => new AnchoredPattern(/(a)\1@/g, '@', 2), /back-reference/);
  });
});
