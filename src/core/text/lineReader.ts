/** One line of a text file, without its line terminator. */
export interface SourceLine {
  /** 0-based line number, as in `vscode.Position`. */
  line: number;
  /** Byte offset of the line's first byte in the file (a leading BOM counts; in a UTF-16 file, of its UTF-8 re-encoding). */
  offset: number;
  /** Length of the line in bytes, without the terminator. */
  byteLength: number;
  /** The decoded text, or null when it was not decoded: `notText` says why. */
  text: string | null;
  /**
   * Why `text` is null: `utf8` the bytes are not valid UTF-8, `nul` the line holds NUL
   * bytes (binary data), `long` the line is longer than the reader's line limit (its
   * text went to the long-line consumer, if there was one, else nowhere).
   */
  notText?: 'utf8' | 'nul' | 'long';
}

/** Takes the text of one long line piece by piece; `write` returns false to stop (the rest of the line is skipped). */
export interface LinePieceConsumer {
  write(text: string): boolean;
}

/** Options of a LineReader. */
export interface LineReaderOptions {
  /** Lines longer than this many bytes are not decoded whole (default LONG_LINE_BYTES). */
  longLineBytes?: number;
  /** Called when a line grows past `longLineBytes`: a consumer for its text, or null to skip it. */
  onLongLine?: (line: number, offset: number) => LinePieceConsumer | null;
  /**
   * Called with each line as soon as it is complete (push and end then return nothing).
   * Use it with `onLongLine`: lines and long-line starts then arrive in file order, where
   * returned arrays would deliver a chunk's earlier lines after a later line had started.
   */
  onLine?: (line: SourceLine) => void;
}

/** Minimal shape of the platform's `TextDecoder`/`TextEncoder`, so the core needs neither DOM nor Node typings. */
interface Decoder {
  decode(input?: Uint8Array, options?: { stream: boolean }): string;
}
interface Encoder {
  encode(text: string): Uint8Array;
}
type DecoderConstructor = new (label: string, options: { fatal: boolean }) => Decoder;
type EncoderConstructor = new () => Encoder;

/**
 * Node, browsers and workers all provide `TextDecoder`; the core reaches it through
 * `globalThis` because its tsconfig deliberately has neither DOM nor Node typings.
 */
function createDecoder(label: string, fatal: boolean): Decoder {
  const ctor = (globalThis as unknown as { TextDecoder?: DecoderConstructor }).TextDecoder;
  if (!ctor) throw new Error('TextDecoder is not available in this JavaScript runtime');
  return new ctor(label, { fatal });
}

function createEncoder(): Encoder {
  const ctor = (globalThis as unknown as { TextEncoder?: EncoderConstructor }).TextEncoder;
  if (!ctor) throw new Error('TextEncoder is not available in this JavaScript runtime');
  return new ctor();
}

/**
 * Lines up to this size are decoded whole (and parsed with the fast `JSON.parse`);
 * longer ones are decoded and handed on in pieces, so no line, however long, is held
 * whole as bytes or as one string (JavaScript strings stop at about 512 M characters).
 */
export const LONG_LINE_BYTES = 32 * 2 ** 20;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** The text encodings a file can declare with a byte-order mark. */
export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be';

/**
 * Splits a byte stream into lines, chunk by chunk, so files of any size are read
 * without holding them whole. Keeps line numbers and byte offsets, accepts LF and
 * CRLF, drops a UTF-8 BOM, decodes UTF-16 files that start with a BOM, and decodes
 * each line once however many chunks it spans (a long line costs one concatenation,
 * not one per chunk). A line with NUL bytes or invalid UTF-8 is marked, not guessed;
 * a line past the long-line limit is streamed to a consumer instead of being held.
 *
 * Owns only the unfinished tail of the current line; callers own the lines it emits.
 */
export class LineReader {
  private readonly decoder = createDecoder('utf-8', true);
  private readonly longLineBytes: number;
  private readonly onLongLine: LineReaderOptions['onLongLine'];
  private readonly onLine: LineReaderOptions['onLine'];
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private lineStart = 0;
  private bytesSeen = 0;
  private lineNumber = 0;
  private atFileStart = true;
  private sawNul = false;
  private utf16: { decoder: Decoder; encoder: Encoder } | null = null;
  private detected: TextEncoding = 'utf-8';
  private utf16Suspect = false;
  // The current line, once it is past the long-line limit.
  private long: {
    decoder: Decoder;
    consumer: LinePieceConsumer | null;
    notText: 'long' | 'utf8' | 'nul';
    lastByte: number;
  } | null = null;

  constructor(options: LineReaderOptions = {}) {
    this.longLineBytes = options.longLineBytes ?? LONG_LINE_BYTES;
    this.onLongLine = options.onLongLine;
    this.onLine = options.onLine;
  }

  /** True once a NUL byte was seen anywhere. */
  get containsNul(): boolean {
    return this.sawNul;
  }

  /** The encoding the file declared with its byte-order mark (UTF-8 without one). */
  get encoding(): TextEncoding {
    return this.detected;
  }

  /** True when the file starts like UTF-16 without a byte-order mark (ASCII with every other byte NUL). */
  get looksLikeUtf16WithoutBom(): boolean {
    return this.utf16Suspect;
  }

  /** Total bytes pushed so far (in a UTF-16 file, of its UTF-8 re-encoding). */
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

  /** True while the current line is past the long-line limit (its text is streaming to a consumer). */
  get inLongLine(): boolean {
    return this.long !== null;
  }

  /**
   * Continues a UTF-8 file read earlier, by another reader, from `offset` (the end of a
   * complete line, see `completedBytes`), numbering lines from `line`: offsets and
   * numbers stay those of the whole file. `sawNul` carries over what the earlier bytes
   * showed.
   */
  resumeAt(offset: number, line: number, sawNul: boolean): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.bytesSeen = offset;
    this.lineStart = offset;
    this.lineNumber = line;
    this.atFileStart = offset === 0;
    this.sawNul = sawNul;
  }

  /** Bytes of the current line not yet ended by a newline. */
  get pendingByteCount(): number {
    return this.pendingBytes;
  }

  /** Feeds the next chunk; returns the lines it completed. */
  push(chunk: Uint8Array): SourceLine[] {
    let bytes = chunk;
    if (this.atFileStart && bytes.length > 0) bytes = this.start(bytes);
    if (this.utf16) bytes = this.utf16.encoder.encode(this.utf16.decoder.decode(bytes, { stream: true }));
    const lines: SourceLine[] = [];
    if (!this.sawNul && bytes.indexOf(0) !== -1) this.sawNul = true;
    let from = 0;
    for (;;) {
      const nl = bytes.indexOf(NEWLINE, from);
      if (nl === -1) break;
      const line = this.long ? this.finishLong(bytes.subarray(from, nl)) : this.completeLine(bytes.subarray(from, nl));
      if (this.onLine) this.onLine(line);
      else lines.push(line);
      this.bytesSeen += nl - from + 1;
      this.lineStart = this.bytesSeen;
      from = nl + 1;
    }
    if (from < bytes.length) {
      const rest = bytes.subarray(from);
      this.bytesSeen += rest.length;
      if (this.long) this.feedLong(rest);
      else {
        // Copy: the caller may reuse its chunk buffer after push() returns. Not rest.slice():
        // on a Node Buffer, slice() is a view of the same memory.
        this.pending.push(new Uint8Array(rest));
        this.pendingBytes += rest.length;
        if (this.pendingBytes > this.longLineBytes) this.startLong();
      }
    }
    return lines;
  }

  /** Ends the stream; returns the last line when the file does not end with a newline. */
  end(): SourceLine[] {
    if (this.utf16) {
      const tail = this.utf16.encoder.encode(this.utf16.decoder.decode());
      this.utf16 = null;
      if (tail.length > 0) return [...this.push(tail), ...this.end()];
    }
    let last: SourceLine | null = null;
    if (this.long) last = this.finishLong(new Uint8Array(0));
    else if (this.pendingBytes > 0) last = this.completeLine(new Uint8Array(0));
    if (last === null) return [];
    if (!this.onLine) return [last];
    this.onLine(last);
    return [];
  }

  /** Reads the byte-order mark (and guesses BOM-less UTF-16) from the first chunk. */
  private start(bytes: Uint8Array): Uint8Array {
    // A BOM split across chunks is not handled: real chunks are far larger than 3 bytes.
    this.atFileStart = false;
    if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
      this.bytesSeen = 3;
      this.lineStart = 3;
      return bytes.subarray(3);
    }
    if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
      this.detected = bytes[0] === 0xff ? 'utf-16le' : 'utf-16be';
      // Not fatal: a lone surrogate becomes U+FFFD, as in the editor's own UTF-16 decoding.
      this.utf16 = { decoder: createDecoder(this.detected, false), encoder: createEncoder() };
      return bytes.subarray(2);
    }
    const sample = bytes.subarray(0, 512);
    let zeroEven = 0;
    let zeroOdd = 0;
    for (let i = 0; i < sample.length; i++) {
      if (sample[i] !== 0) continue;
      if (i % 2 === 0) zeroEven++;
      else zeroOdd++;
    }
    const half = sample.length / 2;
    this.utf16Suspect =
      sample.length >= 4 && (zeroOdd > 0.8 * half || zeroEven > 0.8 * half) && Math.min(zeroOdd, zeroEven) < 0.1 * half;
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
    const line: SourceLine = { line: this.lineNumber, offset: this.lineStart, byteLength: length, text: null };
    this.lineNumber += 1;
    if (length > this.longLineBytes) {
      // Completed by the very chunk that made it long: stream it like any long line.
      this.long = {
        decoder: createDecoder('utf-8', true),
        consumer: this.onLongLine?.(line.line, line.offset) ?? null,
        notText: 'long',
        lastByte: -1,
      };
      this.feedLong(content);
      line.notText = this.closeLong();
      return line;
    }
    if (content.indexOf(0) !== -1) {
      line.notText = 'nul';
      return line;
    }
    try {
      line.text = this.decoder.decode(content);
    } catch {
      line.notText = 'utf8';
    }
    return line;
  }

  /** The current line passed the limit: hand what it has so far to a consumer and stream the rest. */
  private startLong(): void {
    const consumer = this.onLongLine?.(this.lineNumber, this.lineStart) ?? null;
    this.long = { decoder: createDecoder('utf-8', true), consumer, notText: 'long', lastByte: -1 };
    const parts = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    for (const part of parts) this.feedLong(part);
  }

  private feedLong(bytes: Uint8Array): void {
    const long = this.long!;
    if (bytes.length > 0) long.lastByte = bytes[bytes.length - 1]!;
    if (long.notText !== 'long') return;
    if (bytes.indexOf(0) !== -1) {
      long.notText = 'nul';
      long.consumer = null;
      return;
    }
    if (!long.consumer) return;
    let text: string;
    try {
      text = long.decoder.decode(bytes, { stream: true });
    } catch {
      long.notText = 'utf8';
      long.consumer = null;
      return;
    }
    if (text !== '' && !long.consumer.write(text)) long.consumer = null;
  }

  private finishLong(tail: Uint8Array): SourceLine {
    this.feedLong(tail);
    const lastByte = this.long!.lastByte;
    const notText = this.closeLong();
    const total = this.bytesSeen + tail.length - this.lineStart;
    const byteLength = lastByte === CARRIAGE_RETURN ? total - 1 : total;
    const line: SourceLine = { line: this.lineNumber, offset: this.lineStart, byteLength, text: null, notText };
    this.lineNumber += 1;
    return line;
  }

  /** Flushes the long line's decoder into its consumer and says how the line ended. */
  private closeLong(): 'long' | 'utf8' | 'nul' {
    const long = this.long!;
    this.long = null;
    if (long.consumer && long.notText === 'long') {
      try {
        const rest = long.decoder.decode();
        if (rest !== '') long.consumer.write(rest);
      } catch {
        return 'utf8';
      }
    }
    return long.notText;
  }
}
