import type { Finding } from './finding';

/**
 * Private keys in every armoured form: PEM (`-----BEGIN RSA|EC|DSA|ENCRYPTED|… PRIVATE
 * KEY-----`, PKCS#8 `PRIVATE KEY`), OpenSSH, PGP (`PRIVATE KEY BLOCK`), SSH2 (`---- BEGIN
 * SSH2 ENCRYPTED PRIVATE KEY ----`) and PuTTY's `.ppk` (`Private-Lines:`), found however a
 * trace shows them: as plain lines, with each line prefixed by a line number (Claude
 * Code's Read tool writes `     1→`, `cat -n` writes `     1\t`), or with `\n` escapes left
 * in (a key inside a string inside a file). A regex over the body breaks on each of
 * those, so the block is found from its markers instead: the BEGIN line, then the END
 * line within MAX_BODY characters. A key cut before its END line (a Read with a line
 * limit, a cut trace line) is still a leak: the block then runs as far as the body's
 * base64 lines go.
 *
 * Everything here is a bounded scan or `indexOf`: linear in the text.
 */

/** Longest body looked through for the END line (a 16384-bit RSA key in PEM is about 12.5 KB). */
const MAX_BODY = 32 * 1024;
/** A body must have a run of base64 this long (a PEM line is 64 characters, an OpenSSH one 70): text between markers in code or docs has not. */
const MIN_BASE64_RUN = 40;

/** BEGIN markers: the label between BEGIN and PRIVATE KEY is a few words, each ended by its space (one way to read it). */
const BEGIN =
  /-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?-----|---- BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY ----|PuTTY-User-Key-File-\d: /gi;
/** A line of a key body once its line-number prefix is stripped: base64, a header (`Proc-Type:`, `DEK-Info:`, `Comment:`, PuTTY's), or blank. */
const BODY_LINE = /^(?:[A-Za-z0-9+/=]{1,200}|[A-Za-z][A-Za-z0-9-]{0,40}: ?[^\n]{0,400}|)$/;
/** A line-number prefix: Claude Code's Read (`  12→`) or `cat -n` (`  12\t`). `\u2192` is `→`: the bundles hold one byte a character (scripts/latin1Bundle.mjs). */
const LINE_NUMBER = /^[ \t]{0,12}\d{1,9}(?:\u2192|\t)/;

/** The V8 regexes of this module, for the ReDoS check (test/unit/core/redact/linear.test.ts). */
export const PRIVATE_KEY_PATTERNS: readonly RegExp[] = [BEGIN, BODY_LINE, LINE_NUMBER];

/** Length of the longest run of base64 characters in text[from, to). */
function longestBase64Run(text: string, from: number, to: number): number {
  let best = 0;
  let run = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    const b64 =
      (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 43 || c === 47 || c === 61;
    run = b64 ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best;
}

/** Finds markers after a position without searching the same text twice: BEGIN markers come in order, so the last answer holds until passed. */
class NextMarker {
  private at = -2;
  constructor(
    private readonly text: string,
    private readonly marker: string,
  ) {}
  from(pos: number): number {
    if (this.at === -1) return -1;
    if (this.at < pos) this.at = this.text.indexOf(this.marker, pos);
    return this.at;
  }
}

/** Where the END marker that closes a block starting at `from` ends, or -1. */
function endOfBlock(from: number, next: NextMarker): number {
  const end = next.from(from);
  if (end === -1 || end - from > MAX_BODY) return -1;
  return end;
}

/** Where a marker line closes: the end of `-----END … KEY-----`, `---- END SSH2 … ----`, or PuTTY's `Private-MAC: <hex>`. */
function closeOf(text: string, end: number, kind: 'pem' | 'ssh2' | 'putty'): number {
  if (kind === 'putty') {
    let e = end + 'Private-MAC:'.length;
    while (e < text.length && e - end < 200 && /[ 0-9a-fA-F]/.test(text[e]!)) e++;
    return e;
  }
  const tail = kind === 'ssh2' ? ' ----' : '-----';
  const close = text.slice(end + 5, end + 120).indexOf(tail);
  return close === -1 ? -1 : end + 5 + close + tail.length;
}

/**
 * Without an END line: the body runs over the following lines while each (line number
 * stripped, `\n` escapes split) is base64 or a header. One pass, each character once.
 */
function endOfCutBody(text: string, from: number): number {
  const limit = Math.min(text.length, from + MAX_BODY);
  let end = from;
  let lineStart = from;
  for (let i = from; i <= limit; i++) {
    const atEnd = i === limit;
    const c = atEnd ? 10 : text.charCodeAt(i);
    const escaped = c === 0x5c && text.charCodeAt(i + 1) === 0x6e; // a literal backslash-n
    if (c !== 10 && !escaped) continue;
    const line = text.slice(lineStart, i).replace(LINE_NUMBER, '').replace(/\r$/, '');
    if (!BODY_LINE.test(line)) break;
    if (line.length > 0) end = i;
    if (escaped) i++;
    lineStart = i + 1;
    if (atEnd) break;
  }
  return end;
}

/** Every private key block in `text`, BEGIN to END (or to where a cut body stops). */
export function privateKeyFindings(text: string): Finding[] {
  const found: Finding[] = [];
  const next = {
    pem: new NextMarker(text, '-----END'),
    ssh2: new NextMarker(text, '---- END SSH2'),
    putty: new NextMarker(text, 'Private-MAC:'),
  };
  BEGIN.lastIndex = 0;
  for (let m = BEGIN.exec(text); m !== null; m = BEGIN.exec(text)) {
    const kind = m[0].startsWith('PuTTY') ? 'putty' : m[0].startsWith('---- BEGIN SSH2') ? 'ssh2' : 'pem';
    const bodyStart = m.index + m[0].length;
    const marker = endOfBlock(bodyStart, next[kind]);
    let end = marker === -1 ? -1 : closeOf(text, marker, kind);
    if (end === -1) end = endOfCutBody(text, bodyStart);
    if (longestBase64Run(text, bodyStart, end) < MIN_BASE64_RUN) continue;
    found.push({ kind: 'private-key', start: m.index, end });
    BEGIN.lastIndex = end;
  }
  return found;
}
