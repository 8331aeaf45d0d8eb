import { shannonEntropy } from './entropy';
import { hasIdPrefix, looksRandom, wordiness } from './entropyRules';
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
export const STRICT_KINDS: ReadonlySet<string> = new Set(['strict-uuid', 'strict-hex', 'strict-number', 'strict-short']);

/** A UUID (any version): fixed lengths, so the scan cannot backtrack. */
const UUID = /(?<![0-9A-Za-z])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z])/g;
/** A run of letters and digits: greedy over one class with a look-behind, so each run is matched once. */
const RUN = /(?<![0-9A-Za-z])[0-9A-Za-z]{11,}/g;
const HEX = /^[0-9a-fA-F]+$/;
const DIGITS = /^[0-9]+$/;
/** Shortest hex or number taken: 16 digits (a 64-bit value; shorter ones are counts, dates, ports, short commit ids). */
const HEX_MIN = 16;
/** Shortest and longest random token taken here (the entropy rules take 16 and up). */
const SHORT_MIN = 11;
const SHORT_MAX = 15;
/** detect-secrets' threshold for hex (bits per character); numbers get their own, digits allowing at most log2(10). */
const HEX_ENTROPY = 3.0;
const NUMBER_ENTROPY = 2.5;
/** A key that names an id, a hash or a signature: `id`, `uuid`, `parentUuid`, `tool_use_id`, `sessionId`, `commit_sha`. */
const ID_KEY = /(?:^|[_\-.]|[a-z0-9](?=[A-Z]))(?:ids?|uuid|guid|hash|sha\d*|digest|etag|signature|checksum|commit|nonce)$/i;

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

/** Whether a JSON key names an id, a hash or a signature (its value is the trace's structure, not a secret). */
export function isIdKey(key: string): boolean {
  return key.length <= 64 && ID_KEY.test(key);
}

/** The regexes of this module that scan text of any length, for the ReDoS check (test/unit/core/redact/linear.test.ts). */
export const STRICT_PATTERNS: readonly RegExp[] = [UUID, RUN];

/** Hex and UUID-shaped values, long numbers and short random tokens, wherever they stand. */
export function strictFindings(text: string): Finding[] {
  const found: Finding[] = [];
  const uuids: Array<[number, number]> = [];
  UUID.lastIndex = 0;
  for (let m = UUID.exec(text); m !== null; m = UUID.exec(text)) {
    // The nil UUID and the all-ones one are placeholders, not values.
    if (/^[0-]+$|^[fF-]+$/.test(m[0]) || agentId(text, m.index)) continue;
    found.push({ kind: 'strict-uuid', start: m.index, end: m.index + m[0].length });
    uuids.push([m.index, m.index + m[0].length]);
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
      if (agentId(text, start)) continue;
      const digits = DIGITS.test(run);
      if (run.length < HEX_MIN || shannonEntropy(run) <= (digits ? NUMBER_ENTROPY : HEX_ENTROPY)) continue;
      found.push({ kind: digits ? 'strict-number' : 'strict-hex', start, end });
    } else if (run.length <= SHORT_MAX && looksRandom(run, SHORT_MIN) && !inBlob(text, start, end)) {
      found.push({ kind: 'strict-short', start, end });
    }
  }
  return found;
}
