/**
 * Claude Code writes hook and bash progress lines (`"type":"progress"`) by the hundred:
 * on real logs they are a third to a half of the bytes, and ClaudeCodeReader only counts
 * them, except `agent_progress` ones (noteAgentProgress). `skimProgressLine` reads such a
 * line without building it: one pass that checks the whole line is JSON and finds what
 * the full path would decide on, so the record need not be parsed, checked and dropped.
 *
 * It answers PROGRESS_STUB only when the full path provably does exactly what the stub
 * does; on any doubt it answers null and the line takes the full path (JSON.parse,
 * checkRecord, the reader), so every diagnostic stays where it was. The stub is the
 * answer when all of these hold:
 * - the line is valid JSON (the grammar `JSON.parse` reads, checked in full), and an object;
 * - it nests at most SKIM_MAX_DEPTH levels (far below MAX_JSON_DEPTH: never "too deep");
 * - no key is written with an escape, none could name a token count (COUNT_KEY in
 *   recordChecks.ts) and none is `key` (an OTLP attribute's name): so checkRecord finds
 *   no bad count, there being no count to check;
 * - the top level has one `type` key, whose value is the string "progress";
 * - every `type` key directly inside a top-level `data` object has a string value without
 *   escapes that is not "agent_progress" (whichever of repeated keys wins): so the reader's
 *   noteAgentProgress does nothing, and the reader only counts the record as `progress`.
 * test/unit/trace/progressSkim.test.ts holds these to the full path on real lines and on
 * lines made to fool it.
 */
import type { JsonObject } from '../json';

/** What the reader is given for a skimmed line: all it reads of one (its type; no `data`). */
export const PROGRESS_STUB: JsonObject = Object.freeze({ type: 'progress' }) as JsonObject;

/** Nesting the skim follows (one bit each of a 32-bit mask); a deeper line takes the full path. */
export const SKIM_MAX_DEPTH = 30;

// eslint-disable-next-line no-control-regex -- JSON forbids raw control characters in strings: a line with one takes the full path
const CONTROL = /[\u0000-\u001f]/;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

const QUOTE = 0x22;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** text[from, to) ends with `suffix` (lower case ASCII), in either case. */
function endsWithCI(text: string, from: number, to: number, suffix: string): boolean {
  const n = suffix.length;
  if (to - from < n) return false;
  for (let k = 0; k < n; k++) if ((text.charCodeAt(to - n + k) | 0x20) !== suffix.charCodeAt(k)) return false;
  return true;
}

/**
 * True when the key text[from, to) may name a token count (recordChecks' COUNT_KEY,
 * `(tokens|_lens|_length|_token_count)$` ignoring case) or is `key` (an OTLP attribute's
 * name, also checked there): tested on the characters in place, no string made. "_" | 0x20 is
 * 0x7f, as is DEL's: a DEL in place of "_" only sends a line the full way too.
 */
function isCountLikeKey(text: string, from: number, to: number): boolean {
  const last = text.charCodeAt(to - 1) | 0x20;
  if (last === 0x73) return endsWithCI(text, from, to, 'tokens') || endsWithCI(text, from, to, '\x7flens');
  if (last === 0x68) return endsWithCI(text, from, to, '\x7flength');
  if (last === 0x74) return endsWithCI(text, from, to, '\x7ftoken\x7fcount');
  if (last === 0x79) return to - from === 3 && endsWithCI(text, from, to, 'key');
  return false;
}

/** text[from, to) is exactly `word`. */
function isWord(text: string, from: number, to: number, word: string): boolean {
  return to - from === word.length && text.startsWith(word, from);
}

/**
 * PROGRESS_STUB when the line is a progress record the reader only counts and the checks
 * pass untouched (see the file's comment); null when it must take the full path.
 */
export function skimProgressLine(text: string): JsonObject | null {
  // Cheap refusals first: nearly every other line lacks the word.
  if (text.indexOf('"progress"') === -1) return null;
  // No escapes and no raw control characters: every string then ends at its next quote,
  // and is valid JSON as it stands. (Real hook and bash progress lines have neither.)
  if (text.indexOf('\\') !== -1 || CONTROL.test(text)) return null;
  // How many containers are open, and which of them are arrays (bit d - 1 for the one at depth d).
  let depth = 0;
  let arrays = 0;
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return null;
  let topTypes = 0;
  let topTypeIsProgress = false;
  /** The value being read is the top level's `type` / `data`; the object open is a top-level `data`. */
  let valueIsTopType = false;
  let valueIsTopData = false;
  let valueIsDataType = false;
  let inTopData = false;
  // Expecting: 0 a value, 1 a key or "}", 2 a key, 3 "," or the container's end.
  let expect = 0;
  const n = text.length;
  for (;;) {
    i = skipSpace(text, i);
    if (i >= n) return null;
    const c = text.charCodeAt(i);
    if (expect === 1 || expect === 2) {
      if (c === 0x7d && expect === 1) {
        depth -= 1;
        if (depth === 1) inTopData = false;
        i++;
        expect = 3;
      } else {
        if (c !== QUOTE) return null;
        const close = text.indexOf('"', i + 1);
        if (close === -1 || (close > i + 1 && isCountLikeKey(text, i + 1, close))) return null;
        valueIsTopType = depth === 1 && isWord(text, i + 1, close, 'type');
        valueIsTopData = depth === 1 && isWord(text, i + 1, close, 'data');
        valueIsDataType = depth === 2 && inTopData && isWord(text, i + 1, close, 'type');
        if (valueIsTopType) topTypes += 1;
        i = skipSpace(text, close + 1);
        if (text.charCodeAt(i) !== 0x3a) return null;
        i++;
        expect = 0;
      }
      continue;
    }
    if (expect === 3) {
      if (depth === 0) return null; // text after the value: invalid
      const inArray = (arrays & (1 << (depth - 1))) !== 0;
      if (c === 0x2c) {
        expect = inArray ? 0 : 2;
        i++;
      } else if ((c === 0x7d && !inArray) || (c === 0x5d && inArray)) {
        depth -= 1;
        if (depth === 1) inTopData = false;
        i++;
        if (depth === 0) break;
      } else return null;
      continue;
    }
    // A value.
    const isTopType = valueIsTopType;
    const isTopData = valueIsTopData;
    const isDataType = valueIsDataType;
    valueIsTopType = valueIsTopData = valueIsDataType = false;
    if (c === 0x7b || c === 0x5b) {
      if (depth >= SKIM_MAX_DEPTH) return null;
      depth += 1;
      if (c === 0x5b) arrays |= 1 << (depth - 1);
      else arrays &= ~(1 << (depth - 1));
      if (isTopData && c === 0x7b) inTopData = true;
      i++;
      expect = c === 0x7b ? 1 : 0;
      // "[]": the array may close before its first value.
      if (c === 0x5b) {
        const j = skipSpace(text, i);
        if (text.charCodeAt(j) === 0x5d) {
          depth -= 1;
          i = j + 1;
          expect = 3;
        }
      }
      continue;
    }
    if (isDataType && c !== QUOTE) return null;
    if (c === QUOTE) {
      const close = text.indexOf('"', i + 1);
      if (close === -1) return null;
      if (isTopType) topTypeIsProgress = isWord(text, i + 1, close, 'progress');
      if (isDataType && isWord(text, i + 1, close, 'agent_progress')) return null;
      i = close + 1;
    } else {
      if (isTopType) topTypeIsProgress = false;
      if (c === 0x74 && text.startsWith('true', i)) i += 4;
      else if (c === 0x66 && text.startsWith('false', i)) i += 5;
      else if (c === 0x6e && text.startsWith('null', i)) i += 4;
      else {
        NUMBER.lastIndex = i;
        if (!NUMBER.test(text)) return null;
        i = NUMBER.lastIndex;
        // "01", "1.", "1x": what follows the number read is not "," or a closing bracket, which the next step refuses.
      }
    }
    expect = 3;
  }
  if (skipSpace(text, i) !== n) return null;
  return topTypes === 1 && topTypeIsProgress ? PROGRESS_STUB : null;
}
