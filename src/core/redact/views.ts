/**
 * Other views of a text in which secrets that the rules cannot see in it become visible,
 * each with a map back to the text's own offsets:
 *
 * - joined: a value split across lines (a terminal's wrap, a long line broken by an
 *   agent, a key printed by the Read tool one line-numbered line at a time) is put back
 *   together: a line break (with a line-number prefix after it) between two runs of token
 *   characters is removed. Only the neighbourhood of such breaks is joined, so the view
 *   costs in proportion to the breaks, not the text.
 * - decoded: base64 blobs (standard and URL-safe, 24 characters or more) that decode to
 *   text are decoded (as bytes: secrets are ASCII), so the secrets inside (a `.env` file, a Kubernetes secret, a
 *   basic-auth pair) can be scanned.
 *
 * Both are a single pass over the text.
 */

/** A piece of a view: its text, and for each of its characters' runs where it came from. */
export interface ViewPiece {
  text: string;
  /** Sorted [offset in piece, offset in the original text] pairs: each starts a run copied as is. */
  runs: Array<[number, number]>;
}

/** The original offset of a piece offset (the run it falls in, shifted). */
export function originalOffset(piece: ViewPiece, at: number): number {
  let lo = 0;
  let hi = piece.runs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (piece.runs[mid]![0] <= at) lo = mid;
    else hi = mid - 1;
  }
  const [p, o] = piece.runs[lo]!;
  return o + (at - p);
}

/** The piece offset where the run holding `at` starts (everything from there to `at` was copied in one stretch). */
export function lastRunStart(piece: ViewPiece, at: number): number {
  let lo = 0;
  let hi = piece.runs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (piece.runs[mid]![0] <= at) lo = mid;
    else hi = mid - 1;
  }
  return piece.runs[lo]![0];
}

/** Maps [start, end) of a piece back to the original text: end is mapped from its last character. */
export function originalSpan(piece: ViewPiece, start: number, end: number): [number, number] {
  return [originalOffset(piece, start), originalOffset(piece, end - 1) + 1];
}

const TOKEN_CHAR = /[A-Za-z0-9_+/=.-]/;
/** Characters of the token before a break that make the break look like a wrap inside a value. */
const MIN_RUN_BEFORE = 8;
/** How much of the lines around a break a piece keeps. */
const REACH = 400;
/** A break: a line end, and on the next line a line-number prefix (`  12→`, `  12\t`) or nothing. `\u2192` is `→`: the bundles hold one byte a character (scripts/latin1Bundle.mjs). */
const BREAK = /\r?\n(?:[ \t]{0,12}\d{1,9}(?:\u2192|\t))?/g;

/** Pieces of `text` with the line breaks inside split values removed. */
export function joinedPieces(text: string): ViewPiece[] {
  // The breaks to remove: [start, end) of each, in order.
  const breaks: Array<[number, number]> = [];
  BREAK.lastIndex = 0;
  for (let m = BREAK.exec(text); m !== null; m = BREAK.exec(text)) {
    const start = m.index;
    const end = start + m[0].length;
    if (end >= text.length || !TOKEN_CHAR.test(text[end]!)) continue;
    let run = 0;
    while (run < MIN_RUN_BEFORE && start - run - 1 >= 0 && TOKEN_CHAR.test(text[start - run - 1]!)) run++;
    if (run < MIN_RUN_BEFORE) continue;
    breaks.push([start, end]);
  }
  const pieces: ViewPiece[] = [];
  let i = 0;
  while (i < breaks.length) {
    const from = Math.max(0, breaks[i]![0] - REACH);
    let to = Math.min(text.length, breaks[i]![1] + REACH);
    let j = i;
    while (j + 1 < breaks.length && breaks[j + 1]![0] - REACH <= to)
      to = Math.min(text.length, breaks[++j]![1] + REACH);
    const runs: Array<[number, number]> = [];
    let piece = '';
    let pos = from;
    for (let k = i; k <= j; k++) {
      runs.push([piece.length, pos]);
      piece += text.slice(pos, breaks[k]![0]);
      pos = breaks[k]![1];
    }
    runs.push([piece.length, pos]);
    piece += text.slice(pos, to);
    pieces.push({ text: piece, runs });
    i = j + 1;
  }
  return pieces;
}

/** A base64 blob of the text and what it decodes to. */
export interface DecodedBlob {
  start: number;
  end: number;
  text: string;
}

const BLOB = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])/g;
/** Longest blob decoded (a larger one is a file: an image, an archive). */
const MAX_BLOB = 1 << 20;

/**
 * Counts the bytes of decoded base64 that are not text: control bytes other than tab and
 * line ends, and bytes that are not part of a well-formed UTF-8 sequence (a stray
 * continuation byte, a lead byte no continuation follows, 0xC0, 0xC1, 0xF5 and above). Random
 * bytes (an id's or a hash's, which are base64 runs too) are half above 0x7F and almost never
 * UTF-8: counting only control bytes let about one random id of 18 bytes in ten read as text,
 * and each was then scanned by every detector.
 */
class NonTextBytes {
  bad = 0;
  /** Continuation bytes the current UTF-8 sequence still needs. */
  private pending = 0;

  push(b: number): void {
    if (this.pending > 0) {
      if (b >= 0x80 && b <= 0xbf) {
        this.pending--;
        return;
      }
      this.pending = 0;
      this.bad++;
    }
    if (b < 0x80) {
      if (b < 0x20 ? b !== 9 && b !== 10 && b !== 13 : b === 0x7f) this.bad++;
    } else if (b >= 0xc2 && b <= 0xdf) this.pending = 1;
    else if (b >= 0xe0 && b <= 0xef) this.pending = 2;
    else if (b >= 0xf0 && b <= 0xf4) this.pending = 3;
    else this.bad++;
  }

  /** The count, a sequence cut at the end included unless the bytes are only the start of the whole (`cut`). */
  count(cut: boolean): number {
    return this.bad + (this.pending > 0 && !cut ? 1 : 0);
  }
}

/** Whether decoded bytes read as text (UTF-8): at most one byte in fifty is not (NonTextBytes). */
function isText(bytes: string): boolean {
  const counter = new NonTextBytes();
  for (let i = 0; i < bytes.length; i++) counter.push(bytes.charCodeAt(i));
  return counter.count(false) <= bytes.length / 50;
}

/** Each base64 character's value, both alphabets (-1: not base64). */
const SEXTET = new Int8Array(128).fill(-1);
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  .split('')
  .forEach((c, i) => (SEXTET[c.charCodeAt(0)] = i));
SEXTET['-'.charCodeAt(0)] = 62;
SEXTET['_'.charCodeAt(0)] = 63;

/**
 * Hands each byte that base64 `blob[0, end)` (standard or URL-safe, no padding) decodes to to
 * `byte`, in order, until it returns false. False when a character is not base64, the length
 * cannot be base64's, or `byte` stopped it. Written out because src/core has neither atob nor
 * Buffer.
 */
function forEachDecodedByte(blob: string, end: number, byte: (b: number) => boolean): boolean {
  if (end % 4 === 1) return false;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < end; i++) {
    const c = blob.charCodeAt(i);
    const v = c < 128 ? SEXTET[c]! : -1;
    if (v < 0) return false;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (!byte((acc >> bits) & 0xff)) return false;
    }
  }
  return true;
}

/**
 * Decodes base64 (standard or URL-safe, padding optional) to a string of bytes (each
 * character one byte: secrets are ASCII, and nothing here needs the rest as UTF-8), or
 * null when it is not base64.
 */
function decodeBase64(blob: string): string | null {
  let end = blob.length;
  while (end > 0 && blob.charCodeAt(end - 1) === 0x3d) end--;
  const bytes: number[] = [];
  if (!forEachDecodedByte(blob, end, (b) => bytes.push(b) > 0)) return null;
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.slice(i, i + 8192));
  return out;
}

/**
 * Whether the first bytes of a blob, `head` (base64 characters only, its padding removed),
 * read as text: what `isText` of their decoding answers, a UTF-8 character cut at the head's
 * end not counted, without building the bytes and stopping at the byte that makes it fail.
 * Most runs this is asked about are ids and words: a team export asks it of every id.
 */
function headIsText(head: string): boolean {
  const allowed = Math.floor((head.length * 6) / 8) / 50;
  const counter = new NonTextBytes();
  const read = forEachDecodedByte(head, head.length, (b) => {
    counter.push(b);
    return counter.bad <= allowed;
  });
  return read && counter.count(true) <= allowed;
}

/** The V8 regexes of this module, for the ReDoS check (test/unit/core/redact/linear.test.ts). */
export const VIEW_PATTERNS: readonly RegExp[] = [BREAK, BLOB];

/** Base64 blobs in `text` that decode to text (UTF-8), in order. */
export function decodedBlobs(text: string): DecodedBlob[] {
  const out: DecodedBlob[] = [];
  BLOB.lastIndex = 0;
  for (let m = BLOB.exec(text); m !== null; m = BLOB.exec(text)) {
    const blob = m[0];
    if (blob.length > MAX_BLOB) continue;
    // Both alphabets at once is no base64; neither is a run with no digit and no upper case (a long word or path).
    if (/[+/]/.test(blob) && /[_-]/.test(blob)) continue;
    if (!/[A-Z]/.test(blob) || !/[a-z0-9]/.test(blob)) continue;
    // Decode a little first: most runs that are not base64 text fail here.
    if (!headIsText(blob.slice(0, 64).replace(/=+$/, ''))) continue;
    const bytes = decodeBase64(blob);
    if (bytes === null || !isText(bytes)) continue;
    out.push({ start: m.index, end: m.index + blob.length, text: bytes });
  }
  return out;
}
