/** One line of a text file, without its line terminator. */
export interface SourceLine {
  /** 0-based line number, as in `vscode.Position`. */
  line: number;
  /** Byte offset of the line's first byte in the file (a leading BOM counts). */
  offset: number;
  /** Length of the line in bytes, without the terminator. */
  byteLength: number;
  /** The decoded text, or null when the bytes are not valid UTF-8. */
  text: string | null;
}

/** Minimal shape of the platform's `TextDecoder`, so the core needs neither DOM nor Node typings. */
interface Utf8Decoder {
  decode(input: Uint8Array): string;
}

type DecoderConstructor = new (label: string, options: { fatal: boolean }) => Utf8Decoder;

/**
 * Node, browsers and workers all provide `TextDecoder`; the core reaches it through
 * `globalThis` because its tsconfig deliberately has neither DOM nor Node typings.
 */
function createFatalUtf8Decoder(): Utf8Decoder {
  const ctor = (globalThis as unknown as { TextDecoder?: DecoderConstructor }).TextDecoder;
  if (!ctor) throw new Error('TextDecoder is not available in this JavaScript runtime');
  return new ctor('utf-8', { fatal: true });
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Splits a byte stream into lines, chunk by chunk, so files of any size are read
 * without holding them whole. Keeps line numbers and byte offsets, accepts LF and
 * CRLF, drops a UTF-8 BOM, and decodes each line once however many chunks it spans
 * (a very long line costs one concatenation, not one per chunk).
 *
 * Owns only the unfinished tail of the current line; callers own the lines it emits.
 */
export class LineReader {
  private readonly decoder = createFatalUtf8Decoder();
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private lineStart = 0;
  private bytesSeen = 0;
  private lineNumber = 0;
  private atFileStart = true;
  private sawNul = false;

  /** True once a NUL byte was seen: the file is almost certainly binary, not text. */
  get containsNul(): boolean {
    return this.sawNul;
  }

  /** Total bytes pushed so far. */
  get byteCount(): number {
    return this.bytesSeen;
  }

  /** Bytes up to the end of the last complete line: where a later read of the same file resumes. */
  get completedBytes(): number {
    return this.lineStart;
  }

  /** Complete lines emitted so far (the number of the next line). */
  get completedLines(): number {
    return this.lineNumber;
  }

  /**
   * Continues a file read earlier from `offset` (the end of a complete line, see
   * `completedBytes`), numbering lines from `line`: offsets and numbers stay those of
   * the whole file.
   */
  resumeAt(offset: number, line: number): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.bytesSeen = offset;
    this.lineStart = offset;
    this.lineNumber = line;
    this.atFileStart = offset === 0;
  }

  /** The unfinished last line as it stands, without consuming it (null when there is none). */
  pendingLine(): SourceLine | null {
    if (this.pendingBytes === 0) return null;
    const bytes = new Uint8Array(this.pendingBytes);
    let at = 0;
    for (const part of this.pending) {
      bytes.set(part, at);
      at += part.length;
    }
    const length = bytes[bytes.length - 1] === CARRIAGE_RETURN ? bytes.length - 1 : bytes.length;
    let text: string | null;
    try {
      text = this.decoder.decode(bytes.subarray(0, length));
    } catch {
      text = null;
    }
    return { line: this.lineNumber, offset: this.lineStart, byteLength: length, text };
  }

  /** Feeds the next chunk; returns the lines it completed. */
  push(chunk: Uint8Array): SourceLine[] {
    let bytes = chunk;
    if (this.atFileStart && bytes.length > 0) {
      bytes = this.skipBom(bytes);
    }
    const lines: SourceLine[] = [];
    if (!this.sawNul && bytes.indexOf(0) !== -1) this.sawNul = true;
    let from = 0;
    for (;;) {
      const nl = bytes.indexOf(NEWLINE, from);
      if (nl === -1) break;
      lines.push(this.completeLine(bytes.subarray(from, nl)));
      this.bytesSeen += nl - from + 1;
      this.lineStart = this.bytesSeen;
      from = nl + 1;
    }
    if (from < bytes.length) {
      const rest = bytes.subarray(from);
      // Copy: the caller may reuse its chunk buffer after push() returns.
      this.pending.push(rest.slice());
      this.pendingBytes += rest.length;
      this.bytesSeen += rest.length;
    }
    return lines;
  }

  /** Ends the stream; returns the last line when the file does not end with a newline. */
  end(): SourceLine[] {
    if (this.pendingBytes === 0) return [];
    return [this.completeLine(new Uint8Array(0))];
  }

  private skipBom(bytes: Uint8Array): Uint8Array {
    // A BOM split across chunks is not handled: real chunks are far larger than 3 bytes.
    this.atFileStart = false;
    if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
      this.bytesSeen = 3;
      this.lineStart = 3;
      return bytes.subarray(3);
    }
    return bytes;
  }

  private completeLine(tail: Uint8Array): SourceLine {
    let bytes: Uint8Array;
    if (this.pending.length === 0) {
      bytes = tail;
    } else {
      bytes = new Uint8Array(this.pendingBytes + tail.length);
      let at = 0;
      for (const part of this.pending) {
        bytes.set(part, at);
        at += part.length;
      }
      bytes.set(tail, at);
      this.pending = [];
      this.pendingBytes = 0;
    }
    let length = bytes.length;
    if (length > 0 && bytes[length - 1] === CARRIAGE_RETURN) length -= 1;
    const content = bytes.subarray(0, length);
    let text: string | null;
    try {
      text = this.decoder.decode(content);
    } catch {
      text = null;
    }
    const line: SourceLine = { line: this.lineNumber, offset: this.lineStart, byteLength: length, text };
    this.lineNumber += 1;
    return line;
  }
}
