import { RE2JS, type Matcher } from 're2js';
import { shannonEntropy } from './entropy';
import type { Finding } from './finding';
import rulesData from './gitleaks/rules.json';
import { KeywordIndex } from './keywordIndex';

/**
 * gitleaks' rule set (src/core/redact/gitleaks/rules.json: config/gitleaks.toml of
 * gitleaks, MIT, © 2019 Zachary Rice; refreshed by scripts/refreshGitleaksRules.mjs),
 * run the way gitleaks runs it (keywords, the secret group, the entropy threshold, the
 * global and per-rule allowlists) with three differences, all for speed and safety on
 * long, hostile trace text:
 *
 * - The regexes run in re2js, a JavaScript port of RE2 (the engine they are written for),
 *   so every one compiles as written and none can backtrack: matching is linear in the
 *   text it is given.
 * - A rule runs only on windows around its keywords' occurrences (found in one pass for
 *   all rules), not on the whole text: RE2's guarantee is linear, but its JavaScript NFA is
 *   slow (about 1 s per MB for a pattern that starts with a character class), so the text
 *   each regex sees must be small. A window reaches WINDOW_BEFORE characters before the
 *   keyword and WINDOW_AFTER after; a match touching a window's edge is retried on a window
 *   twice as large, so no match is cut.
 * - The 101 "semi-generic" rules (`<identifier> = <secret>`, written by gitleaks'
 *   GenerateSemiGenericRegex) start with `[\w.-]{0,50}?`: a lazy run that only moves the
 *   match's start back over the identifier. They run without it, anchored at each keyword,
 *   which finds the same secrets for a fraction of the work; their full match, which some
 *   allowlists test, is rebuilt by walking back over up to 50 identifier characters.
 */

interface AllowlistData {
  condition?: string;
  regexTarget?: string;
  regexes?: string[];
  stopwords?: string[];
  hasPathsOrCommits?: boolean;
}
interface RuleData {
  id: string;
  regex: string;
  secretGroup?: number;
  entropy?: number;
  keywords: string[];
  allowlists?: AllowlistData[];
}

/** Where the rule set came from, for the redaction summary and the docs. */
export const GITLEAKS_SOURCE: { repository: string; commit: string } = rulesData.source;

const WINDOW_BEFORE = 96;
/** Fewer characters than this per keyword on average, and a semi-generic rule scans the whole text once instead. */
const DENSE = 64;
const WINDOW_AFTER = 1024;
/** How far a window may grow when a match touches its edge (no gitleaks secret is longer than a private key, handled elsewhere). */
const WINDOW_MAX = 64 * 1024;
/** The lazy identifier prefix of gitleaks' semi-generic rules, in its two spellings. */
const SEMI_GENERIC_PREFIXES = ['(?i)[\\w.-]{0,50}?(?:', '[\\w.-]{0,50}?(?i:'];
/**
 * gitleaks' usual end of a secret (a quote, a space, `;`, an escaped newline or the end)
 * and ours: in a trace a key also ends a path part, a URL query value or a bracketed
 * argument (`/…/dop_v1_…/config`, `?token=…&page=2`, `(…)`), where gitleaks' files
 * rarely put one. Applied to every rule that uses gitleaks' suffix.
 */
const SECRET_END = '(?:[\\x60\'"\\s;]|\\\\[nr]|$)';
const SECRET_END_IN_TRACES = '(?:[\\x60\'"\\s;/&?#,)\\]}|]|\\\\[nr]|$)';
/**
 * The same widening for the one rule with boundaries of its own (azure-ad-client-secret,
 * whose secret has no prefix): in a trace its secret also starts after `/`, `?` or `&`
 * and ends before `/`, `&`, `?` or `#` (a path part, a URL query value).
 */
const BOUNDED_START = '(?:^|[\\\\\'"\\x60\\s>=:(,)])';
const BOUNDED_START_IN_TRACES = '(?:^|[\\\\\'"\\x60\\s>=:(,)/?&])';
const BOUNDED_END = '(?:$|[\\\\\'"\\x60\\s<),])';
const BOUNDED_END_IN_TRACES = '(?:$|[\\\\\'"\\x60\\s<),/&?#])';
/** Rules we run elsewhere, better: private keys (src/core/redact/privateKeys.ts reads them through line-number prefixes and escaped newlines, and has no 64 KB limit). */
const REPLACED_RULES = new Set(['private-key']);

class Allowlist {
  private readonly regex: RE2JS | null;
  private readonly stopwords: string[];
  private readonly and: boolean;
  readonly target: 'secret' | 'match' | 'line';
  private readonly hasPaths: boolean;

  constructor(data: AllowlistData) {
    this.regex = data.regexes?.length ? RE2JS.compile(data.regexes.map((r) => `(?:${r})`).join('|')) : null;
    this.stopwords = (data.stopwords ?? []).map((w) => w.toLowerCase());
    this.and = data.condition === 'AND';
    this.target = data.regexTarget === 'match' ? 'match' : data.regexTarget === 'line' ? 'line' : 'secret';
    this.hasPaths = data.hasPathsOrCommits === true;
  }

  /** Whether a finding is allowed (not a secret): gitleaks' checkFindingAllowed without file paths or commits (a trace has neither). */
  allows(secret: string, target: string): boolean {
    const regexAllowed = this.regex !== null && target.length > 0 && this.regex.test(target);
    const lower = secret.toLowerCase();
    const stopword = this.stopwords.length > 0 && secret.length > 0 && this.stopwords.some((w) => lower.includes(w));
    if (!this.and) return regexAllowed || stopword;
    // AND: every kind of check the allowlist has must pass; a path or commit check never does here.
    if (this.hasPaths) return false;
    const checks: boolean[] = [];
    if (this.regex) checks.push(regexAllowed);
    if (this.stopwords.length) checks.push(stopword);
    return checks.length > 0 && checks.every(Boolean);
  }
}

class Rule {
  readonly id: string;
  readonly keywords: string[];
  private compiled: RE2JS | null = null;
  /** The pattern run in windows: the whole regex, or a semi-generic one without its identifier prefix. */
  private readonly pattern: string;
  readonly semiGeneric: boolean;
  private readonly secretGroup: number;
  private readonly entropy: number;
  readonly allowlists: Allowlist[];

  constructor(data: RuleData) {
    this.id = data.id;
    this.keywords = data.keywords.map((k) => k.toLowerCase());
    const prefix = SEMI_GENERIC_PREFIXES.find((p) => data.regex.startsWith(p));
    this.semiGeneric = prefix !== undefined;
    // `(?i)[\w.-]{0,50}?(?:ids)rest` → `(?i)(?:ids)rest`; `[\w.-]{0,50}?(?i:ids)rest` → `(?i:ids)rest`.
    const regex = data.regex
      .split(SECRET_END)
      .join(SECRET_END_IN_TRACES)
      .split(BOUNDED_START)
      .join(BOUNDED_START_IN_TRACES)
      .split(BOUNDED_END)
      .join(BOUNDED_END_IN_TRACES);
    this.pattern =
      prefix === undefined
        ? regex
        : prefix.startsWith('(?i)')
          ? `(?i)(?:${regex.slice(prefix.length)}`
          : `(?i:${regex.slice(prefix.length)}`;
    this.secretGroup = data.secretGroup ?? 0;
    this.entropy = data.entropy ?? 0;
    this.allowlists = (data.allowlists ?? []).map((a) => new Allowlist(a));
  }

  get regex(): RE2JS {
    // Compiled on first use: most rules never meet their keywords in a trace.
    return (this.compiled ??= RE2JS.compile(this.pattern));
  }

  /** The secret of a match: the configured group, else the first non-empty group, else the whole match (gitleaks' rule). */
  secretSpan(m: Matcher, offset: number): [number, number] {
    const groups = m.groupCount();
    if (groups > 0) {
      if (this.secretGroup > 0) {
        if (this.secretGroup <= groups && m.start(this.secretGroup) >= 0)
          return [offset + m.start(this.secretGroup), offset + m.end(this.secretGroup)];
      } else {
        for (let g = 1; g <= groups; g++) {
          const s = m.start(g);
          if (s >= 0 && m.end(g) > s) return [offset + s, offset + m.end(g)];
        }
      }
    }
    return [offset + m.start(), offset + m.end()];
  }

  passesEntropy(secret: string): boolean {
    return this.entropy === 0 || shannonEntropy(secret) > this.entropy;
  }
}

const GLOBAL_ALLOWLIST = new Allowlist(rulesData.allowlist as AllowlistData);
/**
 * Our addition to gitleaks' allowlists, for its generic rule only, from what it took in
 * the real sample traces (docs/redaction.md): a name that says the value describes a
 * secret or is public (`Key ID: …`, `Token Mint: <address>`, `public_key`), and GPG
 * fingerprints and key ids (upper-case hex of 40 or 16 digits), which are public.
 */
const GENERIC_EXTRA = {
  match: RE2JS.compile(
    '(?i)(?:key|token|secret|auth|access|api)[ _.-]?(?:id|ids|name|path|file|url|uri|fingerprint|mint|address|hash)\\b|public',
  ),
  secret: RE2JS.compile('^(?:[0-9A-F]{40}|[0-9A-F]{16})$'),
};
const RULES: Rule[] = (rulesData.rules as RuleData[]).filter((r) => !REPLACED_RULES.has(r.id)).map((r) => new Rule(r));
/** The rules' keywords, each once, and which rules each one triggers. */
export const KEYWORDS: string[] = [];
const RULES_BY_KEYWORD: number[][] = [];
{
  const index = new Map<string, number>();
  RULES.forEach((rule, r) => {
    for (const k of new Set(rule.keywords)) {
      let i = index.get(k);
      if (i === undefined) {
        index.set(k, (i = KEYWORDS.length));
        KEYWORDS.push(k);
        RULES_BY_KEYWORD.push([]);
      }
      RULES_BY_KEYWORD[i]!.push(r);
    }
  });
}
let keywordIndex: KeywordIndex | null = null;

/** The ids of the gitleaks rules the redactor runs (for the docs and the bench). */
export function gitleaksRuleIds(): string[] {
  return RULES.map((r) => r.id);
}

const IDENTIFIER_CHAR = /[\w.-]/;
/**
 * What must follow a semi-generic rule's keyword for its regex to have a chance: the rest
 * of the identifier, spacing and quotes, an assignment operator, more quotes or operator
 * characters, and a value character (gitleaks' template, loosened so that it accepts
 * everything the template does). Checked with V8 (sticky, bounded: a few hundred steps at
 * most) before re2js is asked, so that a text full of keywords without values
 * (`key key key`) costs little.
 */
export const SEMI_GENERIC_NEXT = /[\s\w.'"-]{0,43}(?:=|>|:|\|\||\?=|,)[\x60'"\s=:>]{0,6}[^\s'"\x60;=:>]/y;

/** The line of `text` around [start, end), for allowlists whose target is the line. */
function lineAround(text: string, start: number, end: number): string {
  const from = text.lastIndexOf('\n', start - 1) + 1;
  let to = text.indexOf('\n', end);
  if (to === -1) to = text.length;
  return text.slice(from, to);
}

/**
 * Runs gitleaks' rules over `text`; each finding covers the secret (not the identifier or
 * the quotes around it), its kind the gitleaks rule id.
 */
export function gitleaksFindings(text: string): Finding[] {
  keywordIndex ??= new KeywordIndex(KEYWORDS);
  // Keyword hits per rule, in text order.
  const hits = new Map<number, number[]>();
  keywordIndex.scan(text, (k, start) => {
    for (const r of RULES_BY_KEYWORD[k]!) {
      const list = hits.get(r);
      if (list === undefined) hits.set(r, [start]);
      else if (list[list.length - 1] !== start) list.push(start);
    }
  });
  const found: Finding[] = [];
  for (const [r, starts] of hits) {
    const rule = RULES[r]!;
    starts.sort((a, b) => a - b);
    if (rule.semiGeneric) scanAnchored(rule, text, starts, found);
    else scanWindows(rule, text, starts, found);
  }
  return found;
}

/** Checks a candidate (entropy, allowlists) and records it. */
function accept(
  rule: Rule,
  text: string,
  secretStart: number,
  secretEnd: number,
  matchStart: number,
  matchEnd: number,
  found: Finding[],
): void {
  if (secretEnd <= secretStart) return;
  const secret = text.slice(secretStart, secretEnd);
  if (!rule.passesEntropy(secret)) return;
  const match = text.slice(matchStart, matchEnd).replace(/^\n+|\n+$/g, '');
  for (const list of [GLOBAL_ALLOWLIST, ...rule.allowlists]) {
    const target =
      list.target === 'secret' ? secret : list.target === 'match' ? match : lineAround(text, matchStart, matchEnd);
    if (list.allows(secret, target)) return;
  }
  if (
    rule.id === 'generic-api-key' &&
    (GENERIC_EXTRA.match.test(match.slice(0, match.length - secret.length)) || GENERIC_EXTRA.secret.test(secret))
  )
    return;
  found.push({ kind: rule.id, start: secretStart, end: secretEnd });
}

/** Semi-generic rules: the regex without its identifier prefix, anchored at each keyword. */
function scanAnchored(rule: Rule, text: string, starts: number[], found: Finding[]): void {
  // Keywords closer than every DENSE characters on average (a hostile text, `key=key=…`):
  // one unanchored pass over the whole text costs less than a run at each of them.
  if (starts.length * DENSE > text.length) {
    const m = rule.regex.matcher(text);
    while (m.find()) {
      if (m.end() === m.start()) continue;
      const [s, e] = rule.secretSpan(m, 0);
      let matchStart = m.start();
      while (matchStart > 0 && m.start() - matchStart < 50 && IDENTIFIER_CHAR.test(text[matchStart - 1]!)) matchStart--;
      accept(rule, text, s, e, matchStart, m.end(), found);
    }
    return;
  }
  let coveredTo = -1;
  for (const start of starts) {
    // A keyword inside this rule's last match starts nothing new: gitleaks' matches do not overlap either.
    if (start < coveredTo) continue;
    SEMI_GENERIC_NEXT.lastIndex = start + 1;
    if (!SEMI_GENERIC_NEXT.test(text)) continue;
    let size = WINDOW_AFTER;
    for (;;) {
      const end = Math.min(text.length, start + size);
      const m = rule.regex.matcher(text.slice(start, end));
      if (!m.lookingAt()) break;
      if (m.end() === end - start && end < text.length && size < WINDOW_MAX) {
        size *= 2;
        continue;
      }
      const [s, e] = rule.secretSpan(m, start);
      // gitleaks' match starts where its lazy `[\w.-]{0,50}?` could first reach the keyword.
      let matchStart = start;
      while (matchStart > 0 && start - matchStart < 50 && IDENTIFIER_CHAR.test(text[matchStart - 1]!)) matchStart--;
      accept(rule, text, s, e, matchStart, start + m.end(), found);
      coveredTo = start + m.end();
      break;
    }
  }
}

/** Other rules: unanchored, in windows around the keywords (merged where they overlap). */
function scanWindows(rule: Rule, text: string, starts: number[], found: Finding[]): void {
  let i = 0;
  while (i < starts.length) {
    let from = Math.max(0, starts[i]! - WINDOW_BEFORE);
    let to = Math.min(text.length, starts[i]! + WINDOW_AFTER);
    while (i + 1 < starts.length && starts[i + 1]! - WINDOW_BEFORE <= to)
      to = Math.min(text.length, starts[++i]! + WINDOW_AFTER);
    i++;
    let grow = 0;
    for (;;) {
      const window = text.slice(from, to);
      const m = rule.regex.matcher(window);
      const spans: Array<[number, number, number, number]> = [];
      let edge = false;
      while (m.find()) {
        if (m.end() === m.start()) continue;
        // A match at an edge of the window may go on past it (or a `\b` may be wrong there): look again, wider.
        if ((m.start() === 0 && from > 0) || (m.end() === window.length && to < text.length)) edge = true;
        const [s, e] = rule.secretSpan(m, from);
        spans.push([s, e, from + m.start(), from + m.end()]);
      }
      if (edge && grow < 6) {
        grow++;
        from = Math.max(0, from - (WINDOW_BEFORE << grow));
        to = Math.min(text.length, to + (WINDOW_AFTER << grow));
        continue;
      }
      for (const [s, e, ms, me] of spans) accept(rule, text, s, e, ms, me, found);
      break;
    }
  }
}
