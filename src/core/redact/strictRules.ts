import { AnchoredPattern } from './anchoredPattern';
import { shannonEntropy } from './entropy';
import { entropyFloor, hasIdPrefix, wordiness } from './entropyRules';
import type { Finding } from './finding';

/**
 * Strict redaction (`--redact strict`, setting `agentTrace.redaction`): the shapes the
 * default rules leave bare because a trace is full of them — hex (hashes, commit and
 * trace ids), UUIDs, long numbers, and random tokens of 11 to 15 characters. Many
 * providers' keys have exactly these shapes (Heroku and HubSpot keys are UUIDs, Facebook
 * and Algolia secrets 32 hex digits, Discord and Asana client ids long numbers), and bare
 * (in a path, a URL query, a sentence) nothing else tells them from an id. So strict mode
 * takes them all, and also takes the ids: a user chooses it knowing that commit hashes and
 * request ids in tool output become placeholders (docs/redaction.md lists what it took in
 * the real samples). The trace's own structure is left: a value under a JSON key that
 * names an id (`"uuid"`, `"parentUuid"`, `"tool_use_id"`, `"sessionId"`) is not a secret
 * (the redactor checks the key: `isIdKey`).
 */

/** The kinds strict mode adds; the redactor drops them inside values of id-named keys. */
export const STRICT_KINDS: ReadonlySet<string> = new Set([
  'strict-uuid',
  'strict-hex',
  'strict-number',
  'strict-short',
  'strict-credential',
]);

/**
 * Groups of hex joined by `-` or `:`: UUIDs, Mailgun's signing keys (`<32 hex>-<8>-<8>`),
 * Sidekiq's `<8 hex>:<8 hex>` credentials. Taken when one group has 8 digits or more and
 * they add up to 16 (IPv6 addresses and MACs have shorter groups; dates are digits of 2 and 4).
 */
const HEX_GROUPS = /(?<![0-9A-Za-z])[0-9a-fA-F]{4,}(?:[-:][0-9a-fA-F]{4,})+(?![0-9A-Za-z])/g;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
/**
 * A `user:password` pair standing alone (`curl -u` arguments, a line of a credentials
 * file): a name, a colon, a value of 8 to 64 characters, between spaces, quotes, brackets
 * or path and query separators. Bounded both sides, so it cannot backtrack far.
 */
const PAIR = /(?<![^\s'"`(=/,[{])([A-Za-z0-9._+-]{2,32}):([^\s:'"`/?&#<>()[\]{},;]{8,64})(?=$|[\s'"`/?&#<>()[\]{},;])/g;
/** PAIR run only near a colon, which follows a name of 2 to 32 characters (exported for its equivalence test). */
export const PAIR_NEAR_COLON = new AnchoredPattern(PAIR, ':', 32);
/** Names before a colon that start a scheme, a digest or a namespace, not a user (`sha256:…`, `https:…`, `arn:…`). */
const NOT_A_USER =
  /^(?:sha\d*|md5|blake2[bs]?|https?|ftp|ssh|git|file|mailto|data|urn|arn|std|npm|docker|image|node|python|localhost)$/i;
/** A run of letters and digits: greedy over one class with a look-behind, so each run is matched once. */
const RUN = /(?<![0-9A-Za-z])[0-9A-Za-z]{11,}/g;
const HEX = /^[0-9a-fA-F]+$/;
const DIGITS = /^[0-9]+$/;
/** Shortest hex or number taken: 16 digits (a 64-bit value; shorter ones are counts, dates, ports, short commit ids). */
const HEX_MIN = 16;
/** Shortest and longest random token taken here (the entropy rules take 16 and up). */
const SHORT_MIN = 11;
const SHORT_MAX = 15;
/** Class changes per character a short random run has at least (random text of two classes: about one in two; `turn5search25`, a citation mark, 0.33). */
const SHORT_SWITCHES = 0.4;
/** A key that names an id, a hash or a signature: `id`, `uuid`, `parentUuid`, `tool_use_id`, `sessionId`, `commit_sha`. */
const ID_KEY =
  /(?:^|[_\-.])(?:ids?|uuid|guid|hash|sha\d*|digest|etag|signature|checksum|commit|nonce)$|[a-z0-9](?:Ids?|ID|Uuid|UUID|Guid|Hash|Sha\d*|Digest|Etag|Signature|Checksum|Commit|Nonce)$/;

/** A character of a base64 or URL-safe blob (a signature, a Fernet token), separators included. */
const BLOB_CHAR = /[0-9A-Za-z+/_=-]/;
/** How far the blob around a short run is read each way. */
const BLOB_REACH = 256;

/**
 * Whether the run at [start, end) is a piece of a longer blob: the other letters and digits
 * of the run of blob characters around it (`…Bq/zTJeX6QTCznTv1+UTAg7tk0…`) are many and
 * not words. In a path they are folder names (`/srv/app/releases/<run>/config`), and an
 * agent's id (`tooluse_<run>_…`) has its own prefix.
 */
function inBlob(text: string, start: number, end: number): boolean {
  let from = start;
  while (from > 0 && start - from < BLOB_REACH && BLOB_CHAR.test(text[from - 1]!)) from--;
  let to = end;
  while (to < text.length && to - end < BLOB_REACH && BLOB_CHAR.test(text[to]!)) to++;
  const around = text.slice(from, start) + ' ' + text.slice(end, to);
  if (hasIdPrefix(text.slice(from, to))) return true;
  const others = around.split(/[^0-9A-Za-z]+/).filter((p) => p.length > 0);
  const letters = others.join('').length;
  return letters >= 16 && wordiness(others.join(' ')) < 0.4;
}

/** Whether the value at `start` ends an agent's id (`msg_<hex>`, `toolu_<hex>`, `rs_<hex>`): the word before it has an id prefix. */
function agentId(text: string, start: number): boolean {
  if (start === 0 || (text[start - 1] !== '_' && text[start - 1] !== '-')) return false;
  let from = start - 1;
  while (from > 0 && start - from < 32 && /[0-9A-Za-z_-]/.test(text[from - 1]!)) from--;
  return hasIdPrefix(text.slice(from, start));
}

/**
 * Whether a run of 11 to 15 letters and digits is random: digits in two places or more
 * among the letters, the character class changing often (a name with a version, `utf8mb4`,
 * `gpt4o`, changes once or twice), and the entropy a random run of its length reaches.
 * Too short for the letter-pair test of the longer tokens: a random 14-character run often
 * holds a few common English pairs.
 */
function looksShortRandom(run: string): boolean {
  if (run.length < SHORT_MIN || run.length > SHORT_MAX) return false;
  const digitRuns = run.match(/[0-9]+/g)?.length ?? 0;
  const letters = run.replace(/[0-9]/g, '').length;
  if (digitRuns < 2 || letters < 4 || switchRate(run) < SHORT_SWITCHES) return false;
  return shannonEntropy(run) >= Math.log2(run.length) - 0.6;
}

/**
 * Whether the value of a `user:password` pair is a password: a digit or both cases, and
 * either a symbol passwords use (`!@#$%^&*~+=`) or 12 characters or more whose class
 * changes often and whose entropy is a random string's. A CSS class (`hover:bg-gray-100`),
 * an image tag (`rust:1.95-bookworm`), a namespaced id (`codex:<uuid>`) or a registry path
 * (`HKLM:\SOFTWARE…`) has neither.
 */
function looksLikePassword(value: string): boolean {
  // A shell default (`${NAME:-value}`), hex or a UUID (a digest, a namespaced id), a version or a time.
  if (value.includes('\\') || /^[-+=?]/.test(value) || /^[0-9a-fA-F-]+$/.test(value) || /^[0-9.]+$/.test(value))
    return false;
  const digit = /[0-9]/.test(value);
  if (!digit && !(/[a-z]/.test(value) && /[A-Z]/.test(value))) return false;
  if (/[!@#$%^&*~+=]/.test(value)) return true;
  return value.length >= 12 && switchRate(value) >= 0.3 && shannonEntropy(value) >= entropyFloor(value.length, 36);
}

/** Class changes between lower case, upper case and digits, per character. */
function switchRate(s: string): number {
  let switches = 0;
  const cls = (c: number): number => (c <= 57 ? 0 : c <= 90 ? 1 : 2);
  for (let i = 1; i < s.length; i++) if (cls(s.charCodeAt(i)) !== cls(s.charCodeAt(i - 1))) switches++;
  return switches / (s.length - 1);
}

/**
 * Whether hex or digits reach the entropy a random string of their length over their
 * alphabet reaches (less a margin: the bare entropy rule's floor, entropyRules.ts): a
 * pattern (`cafebabedeadbeef`, `1111222233334444`) does not.
 */
function randomEnough(s: string, alphabet: number): boolean {
  return shannonEntropy(s) >= entropyFloor(s.length, alphabet);
}

/** Whether a JSON key names an id, a hash or a signature (its value is the trace's structure, not a secret). */
export function isIdKey(key: string): boolean {
  return key.length <= 64 && (ID_KEY.test(key) || (ID_KEY.test(key.toLowerCase()) && /^[a-z0-9_.-]+$/.test(key)));
}

/** The regexes of this module that scan text of any length, for the ReDoS check (test/unit/core/redact/linear.test.ts). */
export const STRICT_PATTERNS: readonly RegExp[] = [HEX_GROUPS, RUN, PAIR];

/** Hex and UUID-shaped values, long numbers and short random tokens, wherever they stand. */
export function strictFindings(text: string): Finding[] {
  const found: Finding[] = [];
  const uuids: Array<[number, number]> = [];
  HEX_GROUPS.lastIndex = 0;
  for (let m = HEX_GROUPS.exec(text); m !== null; m = HEX_GROUPS.exec(text)) {
    const groups = m[0].split(/[-:]/);
    const digits = groups.join('');
    if (digits.length < HEX_MIN || !groups.some((g) => g.length >= 8)) continue;
    uuids.push([m.index, m.index + m[0].length]);
    const uuid = UUID.test(m[0]);
    // The nil UUID and the all-ones one are placeholders; hex of low entropy is a pattern (`cafebabe:deadbeef`), not a key.
    if (/^[0-]+$|^[fF-]+$/.test(m[0]) || agentId(text, m.index) || (!uuid && !randomEnough(digits, 16))) continue;
    found.push({ kind: uuid ? 'strict-uuid' : 'strict-hex', start: m.index, end: m.index + m[0].length });
  }
  RUN.lastIndex = 0;
  let u = 0;
  for (let m = RUN.exec(text); m !== null; m = RUN.exec(text)) {
    const start = m.index;
    const end = start + m[0].length;
    while (u < uuids.length && uuids[u]![1] <= start) u++;
    if (u < uuids.length && uuids[u]![0] < end) continue; // a part of a UUID already taken
    // `0x` before hex is the number's prefix (`0x` + 64 hex is an Ethereum private key).
    const run = /^0x/i.test(m[0]) && HEX.test(m[0].slice(2)) ? m[0].slice(2) : m[0];
    if (HEX.test(run)) {
      // GPG key ids and fingerprints (upper-case hex of 16 or 40 digits) are public, as the entropy rules leave them.
      const digits = DIGITS.test(run);
      if (agentId(text, start) || (!digits && /^(?:[0-9A-F]{16}|[0-9A-F]{40})$/.test(run))) continue;
      if (run.length < HEX_MIN || !randomEnough(run, digits ? 10 : 16)) continue;
      found.push({ kind: digits ? 'strict-number' : 'strict-hex', start, end });
    } else if (run.length <= SHORT_MAX && looksShortRandom(run) && !inBlob(text, start, end)) {
      found.push({ kind: 'strict-short', start, end });
    }
  }
  for (let m = PAIR_NEAR_COLON.exec(text, 0); m !== null; m = PAIR_NEAR_COLON.exec(text, m.index + m[0].length)) {
    // `scheme://user:password@host` is the URL rule's (ownRules.ts): it takes the password and keeps the host.
    if (text.startsWith('://', m.index - 3)) continue;
    if (!NOT_A_USER.test(m[1]!) && !/^[0-9]+$/.test(m[1]!) && looksLikePassword(m[2]!))
      found.push({ kind: 'strict-credential', start: m.index, end: m.index + m[0].length });
  }
  return found;
}
