import { shannonEntropy } from './entropy';
import type { Finding } from './finding';

/**
 * Random-looking tokens, as detect-secrets' high-entropy plugins find them (base64 above
 * 4.5 bits per character, hex above 3.0), with its keyword context: a token after a word
 * that says secret (`token`, `key`, `password`, …) on the same line needs less evidence
 * than a bare one. The provider rules (gitleaks, secretlint) need a prefix or a keyword;
 * this is what catches a key pasted bare into a path, a URL query or a sentence.
 *
 * A bare token must look random on three counts, each measured on the real samples so
 * that nothing in them is taken (docs/redaction.md): length, entropy for its length, and
 * how often it switches between lower case, upper case and digits (identifiers and words
 * switch once per word; random text about every other character). Hex strings (hashes,
 * UUIDs, commit ids), the id forms agents write (`toolu_…`, `msg_…`, `call_…`) and long
 * blobs (images, signatures) are left, unless a keyword stands before them.
 */

/** Characters of a token: base64 (standard and URL-safe) and the separators keys use. */
const TOKEN = /(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_+/=-]{16,}/g;
/** Shortest bare token taken, and longest (a longer one is data: an image, a signature, a blob). */
const BARE_MIN = 20;
const BARE_MAX = 200;
/** Shortest token taken after a keyword. */
const KEYWORD_MIN = 16;
/** Words that say the next token is secret, and how far before the token they may stand (same line). */
const KEYWORD = /(?:secret|passw(?:or)?d|passphrase|\bpwd|token|api[_ -]?key|apikey|access[_ -]?key|private[_ -]?key|credential|\bauth\b|bearer|\bkey\b)/i;
const KEYWORD_REACH = 40;
/** Id forms of agent traces and their providers: random, not secret (Anthropic, OpenAI, Codex, Gemini ids). */
const ID_PREFIX = /^(?:toolu|srvtoolu|msg|req|call|fc|rs|resp|run|thread|asst|file|batch|chatcmpl|cmpl|evt|span|trace|sess|session|org|proj|user|ws|item|step|conv|turn|ctc|img|vs|ft|ftjob|modr|upload|cs|pi|ch|cus|in|ii|price|prod|sub|si|tok|pm|seti|src|txn|acct|evt)[_-][A-Za-z0-9]/;
/** Hex (hashes, UUIDs, commit and trace ids): random, but in a trace almost always an identifier. */
const HEX = /^(?:0x)?[0-9a-fA-F-]+$/;
/** Integrity hashes and digests written with their algorithm (`sha512-…`, `sha256:…` is split at the colon). */
const DIGEST_PREFIX = /^(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?)[-_]/i;

/** Class changes between lower case, upper case and digits, per character. */
function switchRate(s: string): number {
  let prev = -1;
  let switches = 0;
  let counted = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const cls = c >= 48 && c <= 57 ? 0 : c >= 65 && c <= 90 ? 1 : c >= 97 && c <= 122 ? 2 : -1;
    if (cls === -1) continue;
    if (prev !== -1 && cls !== prev) switches++;
    prev = cls;
    counted++;
  }
  return counted < 2 ? 0 : switches / (counted - 1);
}

/** The entropy a random token of this length over this many symbols reaches, less a margin: shorter tokens repeat fewer characters. */
function entropyFloor(length: number, alphabet: number): number {
  // The expected number of distinct symbols among `length` draws from `alphabet`, as bits.
  const distinct = alphabet * (1 - Math.pow(1 - 1 / alphabet, length));
  return Math.log2(distinct) - 0.6;
}

/** How many symbols the token's character classes allow (digits 10, each case 26, other 4). */
function alphabetOf(s: string): number {
  let lower = false;
  let upper = false;
  let digit = false;
  let other = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = true;
    else if (c >= 65 && c <= 90) upper = true;
    else if (c >= 48 && c <= 57) digit = true;
    else other = true;
  }
  return (lower ? 26 : 0) + (upper ? 26 : 0) + (digit ? 10 : 0) + (other ? 4 : 0);
}

/** Whether a token with no keyword before it is random enough to be a key. */
export function looksRandom(token: string): boolean {
  if (token.length < BARE_MIN || token.length > BARE_MAX) return false;
  if (HEX.test(token) || ID_PREFIX.test(token) || DIGEST_PREFIX.test(token)) return false;
  let digits = 0;
  let letters = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
    else if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) letters++;
  }
  if (digits < 2 || letters < 4) return false;
  // A path or a dashed name of words (`node_modules/foo-bar`, `my-app-2024-01-02`): parts, not a key.
  if (/[/_-]/.test(token) && token.split(/[/_-]+/).every((p) => p.length < 12)) return false;
  if (switchRate(token) < 0.3) return false;
  return shannonEntropy(token) >= entropyFloor(token.length, alphabetOf(token));
}

/** Whether a token after a secret keyword is a value rather than a word or a placeholder. */
export function looksLikeValue(token: string): boolean {
  if (token.length < KEYWORD_MIN || token.length > 4096) return false;
  if (ID_PREFIX.test(token) || DIGEST_PREFIX.test(token)) return false;
  if (/^(?:x+|X+|\*+|0+|\.+|-+|_+)$/.test(token)) return false;
  let digits = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
  }
  // Hex after a keyword (`secret: 3f9a…`) is a key: detect-secrets' hex threshold (3.0 bits).
  if (HEX.test(token)) return shannonEntropy(token) > 3.0;
  if (digits === 0 && !/[A-Z]/.test(token.slice(1))) return false; // a lower-case word or identifier
  return shannonEntropy(token) > 3.5 && switchRate(token) >= 0.2;
}

/** Random-looking tokens: after a keyword on the same line, or bare. */
export function entropyFindings(text: string): Finding[] {
  const found: Finding[] = [];
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m !== null; m = TOKEN.exec(text)) {
    // Trim separators that end a sentence or a base64 pad run on its own.
    let start = m.index;
    let end = m.index + m[0].length;
    while (start < end && /[-_/+=]/.test(text[start]!)) start++;
    while (end > start && /[-_/+]/.test(text[end - 1]!)) end--;
    const token = text.slice(start, end);
    // The words before the token on its line (at most KEYWORD_REACH characters: a bounded look back).
    const reach = text.slice(Math.max(0, start - KEYWORD_REACH), start);
    const before = reach.slice(reach.lastIndexOf('\n') + 1);
    const keyword = KEYWORD.test(before);
    if (keyword ? looksLikeValue(token) : looksRandom(token)) found.push({ kind: keyword ? 'keyword-entropy' : 'high-entropy', start, end });
  }
  return found;
}
