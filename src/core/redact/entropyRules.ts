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
 * UUIDs, commit ids), the id forms agents write (`toolu_…`, `msg_…`, `call_…`), base58
 * (crypto addresses and signatures: public), SSH public keys, Fernet blobs and long blobs
 * (images, signatures) are left; hex is taken after a keyword.
 */

/** Characters of a token: base64 (standard and URL-safe) and the separators keys use. */
const TOKEN = /(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_+/=-]{16,}/g;
/** Shortest bare token taken, and longest (a longer one is data: an image, a signature, a blob). */
const BARE_MIN = 16;
const BARE_MAX = 200;
/** Shortest token taken after a keyword. */
const KEYWORD_MIN = 16;
/** A bare token whose letter pairs are this English (or more) is a name, not a key (random text scores about 0.15, names 0.5 and up). */
const MAX_WORDINESS = 0.4;
/** The longest stretch without a separator a bare key has (a name or a code with dashes, `tmpclaude-8f62-cwd`, has none this long). */
const MIN_STRETCH = 12;
/** A name before the token that says it is an id, a hash or a signature (`"x-request-id": "`, `session_id=`, `sha: `). */
const ID_CONTEXT =
  /(?:\b|_|-)(?:id|ids|uuid|guid|hash|sha\d*|digest|nonce|etag|signature|checksum|commit)["']?[ \t]*[:=,][ \t]*["'`]?$/i;
/** Words that say the next token is secret, and how far before the token they may stand (same line). */
const KEYWORD =
  /(?:secret|passw(?:or)?d|passphrase|\bpwd|token|api[_ -]?key|apikey|access[_ -]?key|private[_ -]?key|credential|\bauth\b|bearer|\bkey\b)/i;
const KEYWORD_REACH = 40;
/**
 * Id forms of agent traces and their providers: a known prefix before the random part
 * (Anthropic's `toolu_…`, `msg_…`, `req_…`; OpenAI's `call_…`, `resp_…`, `chatcmpl-…`;
 * Claude Code's `agent_msg_…`; OpenRouter's `gen-1746001974-…`; Amazon Bedrock's `tooluse_…`,
 * which VS Code Copilot Chat records as `tooluse_…__vscode-<n>`).
 */
const ID_PREFIX =
  /^(?:toolu|tooluse|srvtoolu|msg|agent_msg|req|call|fc|rs|resp|run|thread|asst|file|batch|chatcmpl|cmpl|evt|span|trace|sess|session|org|proj|ws|item|step|conv|turn|ctc|img|upload|ftjob|modr|gen-\d+)[_-]/;
/** Whether a token starts with an id prefix of agent traces (`toolu_`, `msg_`, `call_`, …). */
export function hasIdPrefix(token: string): boolean {
  return ID_PREFIX.test(token);
}
/** Hex (hashes, UUIDs, commit and trace ids): random, but in a trace almost always an identifier. */
const HEX = /^(?:0x)?[0-9a-fA-F-]+$/;
const UUID = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/;
/** Integrity hashes and digests written with their algorithm (`sha512-…`, `sha256:…` is split at the colon). */
const DIGEST_PREFIX = /^(?:sha(?:1|224|256|384|512)|md5|blake2[bs]?)[-_]/i;
/** Fernet tokens (Codex's `encrypted_content`): encrypted for the provider, not a key. */
const FERNET = /^gAAAAA/;
/** Base58 (Bitcoin and Solana addresses and signatures, IPFS ids): public by design; no 0, O, I or l in a long mixed-case run. */
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,}$/;
/** SSH public keys' base64 starts with the key type's name (`ssh-rsa`, `ssh-ed25519`, `ecdsa-…`). */
const SSH_PUBLIC = /^AAAA(?:B3NzaC1|C3NzaC1lZDI1NTE5|E2VjZHNh)/;
/** Words between a keyword and a token that make the token describe the secret, not be it (`Key ID:`, `token_url`, `public key`). */
const DESCRIBING =
  /\b(?:id|ids|name|path|file|url|uri|fingerprint|type|length|size|hash|mint|address)\b|public|ssh-(?:rsa|ed25519|dss)|ecdsa-/i;
/** GPG fingerprints and long key ids: upper-case hex of 40 or 16 digits, public by design. */
const GPG_FINGERPRINT = /^(?:[0-9A-F]{40}|[0-9A-F]{16})$/;

/** The letters and digits of a token, its separators taken out: where a key's randomness shows. */
function alnumOf(s: string): string {
  return s.replace(/[^A-Za-z0-9]+/g, '');
}

/**
 * The 150 most frequent letter pairs of English text (Peter Norvig's counts over the
 * Google Books corpus, "English Letter Frequency Counts: Mayzner Revisited", 2012). They
 * make up about three quarters of the pairs in English words and identifiers built from
 * them, and a fifth (150 of 676) of the pairs in a random string: the surest sign that a
 * long token is a name (`PlaywrightDownload`) and not a key.
 */
const COMMON_PAIRS = new Set(
  'th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so rs un lo wa ge ie wh ee wi em ad ol rt po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl ig tu ev ld ry mp fe bl ab gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt oc fa ef cu rn sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi rc rr eg au ck ew mu br bi pt ak pu ui rg ib tl ny ki rk ys ob mm fu ph og ms ye ud mb ip ub oi rl gu dr hr cc tw ft wn nu af hu nn eo vo rv nf xp gn sm fl iz ok nl my gl aw ju oa eq sy sl ps jo lf nv je nk kn gs dy hy ze ks xt bs ik dd cy rp sk xi oe oy ws lv dl rf eu dg wr xa yi nm eb rb tm xc eh tc gy ja hn yp za gg ym sw bj lm cs ii ix xe oh lk dv lp ax ox uf dm iu sf bt ka yt ek pm ya gt wl rh yl hs ah yc yn rw hm lw hl ae zi az lc py aj iq nj bb nh uo kl lb tn gm sn nr fs'
    .split(' ')
    .slice(0, 150),
);

/** The share of a token's letter pairs (inside its runs of letters, case folded) that are common in English; 0 without pairs. */
export function wordiness(token: string): number {
  let pairs = 0;
  let common = 0;
  const lower = token.toLowerCase();
  for (let i = 1; i < lower.length; i++) {
    const a = lower.charCodeAt(i - 1);
    const b = lower.charCodeAt(i);
    if (a < 97 || a > 122 || b < 97 || b > 122) continue;
    pairs++;
    if (COMMON_PAIRS.has(lower[i - 1]! + lower[i]!)) common++;
  }
  return pairs === 0 ? 0 : common / pairs;
}

/** Whether a run is mostly ascending sequences (`1234567890abcdef`): every character differs, but nothing is random. */
function isSequence(run: string): boolean {
  let steps = 0;
  for (let i = 1; i < run.length; i++) if (run.charCodeAt(i) === run.charCodeAt(i - 1) + 1) steps++;
  return steps > run.length * 0.3;
}

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
export function entropyFloor(length: number, alphabet: number): number {
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

/**
 * Whether a token with no keyword before it is random enough to be a key. `min` is the
 * shortest token judged (strict redaction judges shorter ones: strictRules.ts).
 */
export function looksRandom(token: string, min = BARE_MIN): boolean {
  if (token.length < min || token.length > BARE_MAX) return false;
  if (
    ID_PREFIX.test(token) ||
    DIGEST_PREFIX.test(token) ||
    FERNET.test(token) ||
    SSH_PUBLIC.test(token) ||
    UUID.test(token)
  )
    return false;
  // Judged on its letters and digits, separators (`_`, `-`, `=`, `+`, `/`) taken out.
  const run = alnumOf(token);
  if (run.length < min || HEX.test(run) || BASE58.test(run)) return false;
  let digits = 0;
  let letters = 0;
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
    else letters++;
  }
  // Letters and digits, both: a bare run of letters alone is a name more often than a key.
  if (letters < 4 || digits < 1) return false;
  let stretch = '';
  for (const part of token.split(/[^A-Za-z0-9]+/)) if (part.length > stretch.length) stretch = part;
  if (
    stretch.length < Math.min(MIN_STRETCH, min) ||
    HEX.test(stretch) ||
    wordiness(token) >= MAX_WORDINESS ||
    isSequence(run)
  )
    return false;
  // Upper case and digits, short: a serial or a model number (`HFS001TEJ9X115N`).
  if (/^[A-Z0-9]+$/.test(stretch) && stretch.length < 20) return false;
  return shannonEntropy(run) >= entropyFloor(run.length, alphabetOf(run));
}

/** Whether a token after a secret keyword is a value rather than a word, an id or a placeholder. */
export function looksLikeValue(token: string): boolean {
  if (token.length < KEYWORD_MIN || token.length > 4096) return false;
  if (DIGEST_PREFIX.test(token) || FERNET.test(token) || SSH_PUBLIC.test(token) || UUID.test(token)) return false;
  if (/^(?:x+|X+|\*+|0+|\.+|-+|_+)$/.test(token)) return false;
  // Hex after a keyword (`secret: 3f9a…`) is a key: detect-secrets' hex threshold (3.0 bits).
  if (HEX.test(token)) return !GPG_FINGERPRINT.test(token) && shannonEntropy(token) > 3.0;
  let digits = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
  }
  // Without digits only mixed case switching about every other letter is random (an identifier switches once a word).
  return shannonEntropy(token) > 3.5 && switchRate(token) >= (digits === 0 ? 0.4 : 0.2);
}

/** Whether a token with slashes is a path or a URL's (`trade/api/v1/accounts/…`), not base64 that happens to hold a `/`. */
function isPath(token: string): boolean {
  return token.length <= 1000 && token.split('/').some((p) => /^[a-z][a-z._-]{2,}$/.test(p));
}

/** Whether the token at `start` is part of a URL: `://` earlier in the same run of non-space characters (looked for 200 back). */
function inUrl(text: string, start: number): boolean {
  const back = text.slice(Math.max(0, start - 200), start);
  const word = back.slice(
    Math.max(
      back.lastIndexOf(' '),
      back.lastIndexOf('\n'),
      back.lastIndexOf('\t'),
      back.lastIndexOf('"'),
      back.lastIndexOf("'"),
    ) + 1,
  );
  return word.includes('://');
}

/**
 * The regexes of this module that scan text of any length, for the ReDoS check
 * (test/unit/core/redact/linear.test.ts); the others run on a token (at most a few
 * thousand characters, anchored) or on the 40 characters before one.
 */
export const ENTROPY_PATTERNS: readonly RegExp[] = [TOKEN];

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
    const keyword = KEYWORD.exec(before);
    if (keyword !== null) {
      // The words from the keyword on: `Key ID:` or `PublicKey(` say the token is not the secret.
      if (!DESCRIBING.test(before.slice(keyword.index)) && looksLikeValue(token))
        found.push({ kind: 'keyword-entropy', start, end });
    } else if (token.includes('/') && isPath(token)) {
      // A URL's path parts are resource ids (`/unblock-secret/383Dgj4…`); keys in URLs sit in the query or the user part.
      if (inUrl(text, start)) continue;
      // A path or a URL: each of its parts is judged on its own (a key can be a folder's name).
      let at = start;
      const parts = token.split('/');
      parts.forEach((part, i) => {
        // macOS's per-user temporary folders (`/var/folders/j4/<id>/T/`) are named at random.
        const tempFolder = i >= 2 && parts[i - 2] === 'folders';
        if (!tempFolder && looksRandom(part)) found.push({ kind: 'high-entropy', start: at, end: at + part.length });
        at += part.length + 1;
      });
    } else if (!ID_CONTEXT.test(before) && looksRandom(token)) found.push({ kind: 'high-entropy', start, end });
  }
  return found;
}
