import { LineReader, LONG_LINE_BYTES } from '../text/lineReader';
import type { LinePieceConsumer, SourceLine, TextEncoding } from '../text/lineReader';
import { clipText } from '../text/safeText';
import { DETECTION_RECORDS, detectDocument, detectRecords } from './detectFormat';
import type { Detection } from './detectFormat';
import type { FormatDefinition, JsonDocument } from './formatDefinition';
import { formatById, FORMATS, supportedFormatsText } from './formats';
import { clip, isObject } from './json';
import type { JsonObject } from './json';
import { parseJsonDocument, streamedJsonDocument } from './jsonDocument';
import { MAX_JSON_DEPTH, parseJsonStreaming, StreamingJsonParser } from './jsonStream';
import type { StreamResult } from './jsonStream';
import { portableState, registerSharedObject, registerStateClass, restorePortableState } from './parserState';
import type { PortableState } from './parserState';
import type { Diagnostic, FormatId, Session, ToolCall, TraceModel } from './model';
import { badCountMessage, checkRecord } from './recordChecks';
import type { ReaderResult, RecordReader, TraceRecord } from './recordReader';

export { supportedFormatsText };

/** Bytes of a file: whole, or as chunks from a stream. */
export type ByteChunks = Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

/** One file of a trace. `key` is how diagnostics and sources name it (a relative path). */
export interface TraceFile {
  key: string;
  bytes: ByteChunks;
  /** What the host noticed about this file's companions (ones it refused to read, and why); said on the main file. */
  notes?: readonly string[];
}

/** Options for parseTrace. */
export interface ParseOptions {
  /** Skip detection and read as this format. */
  format?: FormatId;
  /** Awaited between slices of input, so a host can keep serving other work. */
  yieldControl?: () => Promise<void>;
  /** Lines longer than this are streamed through the incremental parser (default LONG_LINE_BYTES; tests set it low). */
  longLineBytes?: number;
  /** A document's lines are kept while under this many characters (default HELD_DOCUMENT_CHARS; tests set it to 0 to stream every document). */
  heldDocumentChars?: number;
  /** Also hands every record the format's reader gets to this function, after the reader (the context anatomy's content pass). A parse with a tap cannot be saved. */
  recordTap?: (record: TraceRecord) => void;
}

/** Why a file could not be read at all, in words for the user. */
export interface FileProblem {
  kind: 'empty' | 'binary' | 'unknown-format' | 'unreadable';
  message: string;
}

/** The result of reading a trace: the model, how its format was found, and any fatal problem. */
export interface ParsedTrace {
  model: TraceModel;
  detection: Detection;
  problem: FileProblem | null;
}

/** Diagnostics kept per trace; the rest are counted, so a broken 1 GB file cannot flood memory. */
export const MAX_DIAGNOSTICS = 1000;
/** Longest diagnostic message kept. */
export const MAX_MESSAGE_CHARS = 1000;
/** Whole chunks larger than this are fed in slices, with `yieldControl` between them. */
const SLICE_BYTES = 1 << 20;
/**
 * A document's lines are kept (for exact "where is this" answers and jsonc-parser's
 * error recovery) while their text stays under this many characters; a larger document
 * is only streamed.
 */
export const HELD_DOCUMENT_CHARS = 64 * 2 ** 20;
/**
 * Lines of text a file may start with before its JSON document (a command's progress line
 * captured with its output: `opencode export` writes `Exporting session: ses_…` first).
 */
const LEADING_TEXT_LINES_MAX = 5;
/** Read this much of a file with NUL bytes and no record, and it is called binary without reading the rest. */
const BINARY_VERDICT_BYTES = 1 << 20;

/** The bytes of a trace file as chunks, a whole buffer in slices of SLICE_BYTES. */
export async function* chunksOf(bytes: ByteChunks): AsyncGenerator<Uint8Array> {
  if (bytes instanceof Uint8Array) {
    for (let at = 0; at < bytes.length; at += SLICE_BYTES) yield bytes.subarray(at, at + SLICE_BYTES);
    return;
  }
  yield* bytes;
}

/** A first line that opens a JSON document spread over many lines ("{" or "[" and not a whole value). */
function opensDocument(text: string, parsed: boolean): boolean {
  return !parsed && /^\s*[[{]/.test(text);
}

/** A line that is one whole JSON object by itself. */
function looksLikeRecord(text: string | null): boolean {
  if (text === null || !/^\s*\{.*\}\s*$/.test(text)) return false;
  try {
    return isObject(JSON.parse(text));
  } catch {
    return false;
  }
}

/** "600 MiB", "12.5 KiB": a size for messages. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ${units[unit]}`;
}

const NOT_TEXT_MESSAGE = {
  utf8: 'Line is not valid UTF-8 text; skipped.',
  nul: 'Line holds NUL bytes (binary data), not text; skipped.',
} as const;

/** A document being read: the streaming parser, and its lines while they are few enough to keep. */
interface DocumentState {
  parser: StreamingJsonParser;
  /** Every line so far, until the text passes HELD_DOCUMENT_CHARS (or a line is too long to keep): then null. */
  held: SourceLine[] | null;
  heldChars: number;
  /** Some held line is one JSON object by itself, so this may be JSON Lines after all. Only whether matters, so lines stop being parsed once one is. */
  sawRecordLikeLine: boolean;
}

/**
 * A file read on a weak match (detection's candidate): records that do not look like the
 * format are skipped, kept here to be said if the reading is kept.
 */
interface WeakReading {
  /** The skipped records' lines and keys, at most MAX_DIAGNOSTICS of them. */
  skipped: Array<{ line: number; keys: string }>;
  skippedCount: number;
}

/** A line too long to decode whole, parsed as it streams in. */
interface LongValue {
  parser: StreamingJsonParser;
  file: number;
  line: number;
}

/**
 * Reads one trace. Owns the detection buffer, the chosen reader and the diagnostics
 * until `parseTrace` hands back the model.
 */
class TraceParser {
  readonly diagnostics: Diagnostic[] = [];
  private dropped = 0;
  private format: FormatDefinition | null;
  private reader: RecordReader | null = null;
  detection: Detection;
  private readonly buffered: TraceRecord[] = [];
  /** Document mode: the main file is one JSON document spread over many lines. */
  private doc: DocumentState | null = null;
  /** Set when a would-be document is read again as JSON Lines. */
  private replayed = false;
  private longValue: LongValue | null = null;
  /** The file's first line, a JSON array too long to read twice: a one-line document unless records follow. */
  private arrayFirst: { line: SourceLine; value: unknown[] } | null = null;
  /** The file's first line, too deep to be a record, read with its deep parts left out (it may be a one-line document). */
  private deepFirst: { line: SourceLine; result: StreamResult } | null = null;
  private mainRecords = 0;
  private mainNonBlank = 0;
  /**
   * Detection saw its whole sample and no format claims it: the file is not read further
   * (later records cannot change a decision made on the first DETECTION_RECORDS).
   */
  undetectable = false;
  /** Set while the file is read on a weak match (see WeakReading). */
  private weak: WeakReading | null = null;
  /** Lines of text before anything JSON (0-based numbers, and the first one's text), skipped if a document follows them. */
  private leadingText: { lines: number[]; first: string } | null = null;
  /** Lines of the main file that were not text (invalid UTF-8, NUL bytes). */
  private mainNotText = 0;
  /** What the main file's LineReader learned about its encoding. */
  encoding: { declared: TextEncoding; utf16WithoutBom: boolean } = { declared: 'utf-8', utf16WithoutBom: false };

  constructor(
    forced: FormatDefinition | null,
    private readonly heldDocumentChars = HELD_DOCUMENT_CHARS,
    private readonly recordTap: ((record: TraceRecord) => void) | null = null,
  ) {
    this.format = forced;
    this.detection = forced
      ? { format: forced.id, evidence: 'chosen by the user', confidence: null }
      : { format: null, evidence: 'nothing read yet', confidence: null };
    if (forced?.createRecordReader) this.reader = this.tapped(forced.createRecordReader());
  }

  /** The reader, or one that also feeds the tap: wrapped where it is made, so the record loops stay as they are. */
  private tapped(reader: RecordReader): RecordReader {
    const tap = this.recordTap;
    if (tap === null) return reader;
    return {
      record: (record) => {
        reader.record(record);
        tap(record);
      },
      finish: () => reader.finish(),
    };
  }

  report(d: Diagnostic): void {
    // Readers quote trace values (ids, types) in messages: one 10 MiB id must not make a 10 MiB message.
    if (this.diagnostics.length < MAX_DIAGNOSTICS)
      this.diagnostics.push(
        d.message.length > MAX_MESSAGE_CHARS ? { ...d, message: clipText(d.message, MAX_MESSAGE_CHARS) } : d,
      );
    else this.dropped += 1;
  }

  get isDocument(): boolean {
    return this.doc !== null;
  }

  /** True once the opened file's kind is settled: a record format chosen, or a document being read. */
  get decided(): boolean {
    return this.reader !== null || this.doc !== null;
  }

  /** Nothing readable so far, though NUL bytes were seen: a binary file, not worth reading to its end. */
  looksBinary(bytesRead: number, sawNul: boolean): boolean {
    return (
      sawNul &&
      bytesRead >= BINARY_VERDICT_BYTES &&
      this.mainRecords === 0 &&
      this.doc === null &&
      this.longValue === null
    );
  }

  /** A line of `file` outgrew the line limit: where its text goes as it streams in. */
  longLine(file: number, line: number, offset: number): LinePieceConsumer | null {
    if (this.undetectable) return null;
    if (file === 0 && this.doc) {
      const parser = this.doc.parser;
      this.doc.held = null; // a line this long cannot be kept, so the document is only streamed
      parser.startLine(line, offset);
      return { write: (text) => (parser.write(text), !parser.failed) };
    }
    if (file !== 0 && !this.reader) return null;
    const parser = new StreamingJsonParser(MAX_JSON_DEPTH);
    parser.startLine(line, offset);
    this.longValue = { parser, file, line };
    return { write: (text) => (parser.write(text), !parser.failed) };
  }

  /** A line of the opened file (index 0). */
  mainLine(line: SourceLine): void {
    if (this.undetectable) return;
    if (this.doc) {
      this.documentLine(this.doc, line);
      return;
    }
    if (line.notText === 'long') {
      this.longLineEnded(0, line);
      return;
    }
    if (line.text === null) {
      this.mainNotText += 1;
      this.report({
        file: 0,
        line: line.line,
        severity: 'error',
        message: NOT_TEXT_MESSAGE[line.notText === 'nul' ? 'nul' : 'utf8'],
      });
      return;
    }
    if (line.text.trim() === '') return;
    this.mainNonBlank += 1;
    const atStart = this.atDocumentStart();
    const value = this.parseLine(0, line, atStart);
    if (value === undefined) {
      const leadRoom = atStart && (this.leadingText?.lines.length ?? 0) < LEADING_TEXT_LINES_MAX;
      if (atStart && opensDocument(line.text, false)) {
        this.startDocument(line);
        // "[plugin] loaded 5 tools" opens no document: its first line already fails. Text, then.
        if (!this.doc!.parser.failed || !leadRoom) return;
        this.doc = null;
        this.parseLine(0, line, false);
      }
      if (leadRoom) {
        this.leadingText ??= { lines: [], first: clipText(line.text.trim(), 80) };
        this.leadingText.lines.push(line.line);
      }
      return;
    }
    // A whole JSON array on the first line is a minified document (Cline's ui_messages.json), not a bad record.
    if (atStart && Array.isArray(value)) {
      this.startDocument(line);
      return;
    }
    this.mainValue(line, value);
  }

  private mainValue(line: SourceLine, value: unknown): void {
    const checked = this.checkValue(0, line, value);
    if (checked === null) return;
    this.mainRecords += 1;
    const record: TraceRecord = { value: checked, line, source: { file: 0, line: line.line, offset: line.offset } };
    if (this.reader) this.feedMain(record);
    else {
      this.buffered.push(record);
      if (this.buffered.length >= DETECTION_RECORDS) this.decideRecords();
    }
  }

  /**
   * The format, when records of file `file` may be read on other threads from here on: it
   * is decided (not on a weak match, not a document), it has a `slimRecord`, and there is no
   * tap. Null otherwise.
   */
  handOffFormat(file: number): FormatId | null {
    if (!this.reader || this.doc || this.weak || this.undetectable || this.recordTap) return null;
    if (file === 0 && this.mainRecords === 0) return null;
    return this.format?.slimRecord ? this.format.id : null;
  }

  /**
   * A line another thread parsed and checked (an object within MAX_JSON_DEPTH, counts that
   * are counts) and slimmed: what `mainLine` or `companionLine` does with such a line.
   */
  checkedLine(file: number, line: SourceLine, value: JsonObject): void {
    const record: TraceRecord = { value, line, source: { file, line: line.line, offset: line.offset } };
    if (file === 0) {
      this.mainNonBlank += 1;
      this.mainRecords += 1;
      this.feedMain(record);
    } else this.reader!.record(record);
  }

  /** A record of the opened file to its reader; on a weak match, one that does not look like the format is skipped and noted. */
  private feedMain(record: TraceRecord): void {
    const weak = this.weak;
    const format = this.format!;
    if (weak && !(format.matchesRecord?.(record.value) || format.decidesRecord?.(record.value))) {
      weak.skippedCount += 1;
      if (weak.skipped.length < MAX_DIAGNOSTICS) {
        weak.skipped.push({
          line: record.source.line,
          keys: Object.keys(record.value)
            .slice(0, 4)
            .map((k) => JSON.stringify(clip(k, 40)))
            .join(', '),
        });
      }
      return;
    }
    this.reader!.record(record);
  }

  /** A line of a companion file (Claude Code sub-agent logs). */
  companionLine(file: number, line: SourceLine): void {
    if (line.notText === 'long') {
      this.longLineEnded(file, line);
      return;
    }
    if (line.text === null) {
      this.report({
        file,
        line: line.line,
        severity: 'error',
        message: NOT_TEXT_MESSAGE[line.notText === 'nul' ? 'nul' : 'utf8'],
      });
      return;
    }
    if (line.text.trim() === '' || !this.reader) return;
    const value = this.parseLine(file, line, false);
    const checked = value === undefined ? null : this.checkValue(file, line, value);
    if (checked) this.reader.record({ value: checked, line, source: { file, line: line.line, offset: line.offset } });
  }

  /** A line that was streamed through its own parser has ended: read its value like any line's. */
  private longLineEnded(file: number, line: SourceLine): void {
    if (this.undetectable) return;
    const long = this.longValue;
    this.longValue = null;
    if (file === 0) this.mainNonBlank += 1;
    const size = formatBytes(line.byteLength);
    if (!long || long.line !== line.line || long.file !== file) {
      // Nobody took its text (a companion line before any reader): say why it was not read.
      this.report({
        file,
        line: line.line,
        severity: 'error',
        message: `Line is ${size} long, more than the ${formatBytes(LONG_LINE_BYTES)} a line is read whole; skipped.`,
      });
      return;
    }
    // The first line of a document that goes on over more lines: read on as a document.
    if (file === 0 && this.atDocumentStart() && !long.parser.failed && long.parser.inContainer) {
      this.doc = { parser: long.parser, held: null, heldChars: 0, sawRecordLikeLine: false };
      long.parser.write('\n');
      return;
    }
    const result = long.parser.end();
    if (result.error) {
      this.report({
        file,
        line: line.line,
        severity: 'error',
        message: `Line (${size}) is not valid JSON (${result.error.message}); skipped.`,
      });
      return;
    }
    if (result.prunedCount > 0) {
      this.report({
        file,
        line: line.line,
        severity: 'error',
        message: `Line nests deeper than ${MAX_JSON_DEPTH} levels; skipped.`,
      });
      if (file === 0 && this.mainRecords === 0 && this.mainNonBlank === 1) this.deepFirst = { line, result };
      return;
    }
    if (file === 0 && this.atDocumentStart() && Array.isArray(result.value))
      this.arrayFirst = { line, value: result.value };
    else if (file === 0) this.mainValue(line, result.value);
    else {
      const checked = this.checkValue(file, line, result.value);
      if (checked && this.reader)
        this.reader.record({ value: checked, line, source: { file, line: line.line, offset: line.offset } });
    }
  }

  /**
   * The current main-file line (already counted) is the first that could start a document:
   * only lines of leading text came before it, and nothing was replayed.
   */
  private atDocumentStart(): boolean {
    return !this.replayed && this.mainRecords === 0 && this.mainNonBlank === 1 + (this.leadingText?.lines.length ?? 0);
  }

  /**
   * A document followed leading lines of text: their "not valid JSON" errors become one
   * warning that says they were skipped and the document after them was read.
   */
  private skipLeadingText(): void {
    const lead = this.leadingText;
    if (!lead) return;
    const skipped = new Set(lead.lines);
    const kept = this.diagnostics.filter(
      (d) => !(d.file === 0 && skipped.has(d.line) && d.message.startsWith('Line is not valid JSON')),
    );
    this.diagnostics.length = 0;
    this.diagnostics.push(...kept);
    const n = lead.lines.length;
    const where =
      n === 1 ? `Line ${lead.lines[0]! + 1} is` : `Lines ${lead.lines[0]! + 1}–${lead.lines[n - 1]! + 1} are`;
    this.report({
      file: 0,
      line: lead.lines[0]!,
      severity: 'warning',
      message: `${where} text, not JSON (${n === 1 ? '' : 'the first: '}${JSON.stringify(lead.first)}), before the JSON document: skipped, and the document after ${n === 1 ? 'it' : 'them'} was read.`,
    });
  }

  /** JSON.parse one line: the value, or undefined (not JSON; reported unless it may open a document). */
  private parseLine(file: number, line: SourceLine, quietIfDocument: boolean): unknown {
    try {
      return JSON.parse(line.text!);
    } catch (e) {
      // The first line of a pretty-printed document is not an error: the document is read whole.
      if (quietIfDocument && !this.replayed && opensDocument(line.text!, false)) return undefined;
      this.report({
        file,
        line: line.line,
        severity: 'error',
        message: `Line is not valid JSON (${jsonErrorText(e)}); skipped.`,
      });
      return undefined;
    }
  }

  /**
   * The checks every record gets before a reader sees it: an object, not nested past
   * MAX_JSON_DEPTH (skipped whole), token counts that are counts (others read as
   * unknown, each reported). Null when the record is skipped.
   */
  private checkValue(file: number, line: SourceLine, value: unknown): JsonObject | null {
    if (!isObject(value)) {
      this.report({ file, line: line.line, severity: 'error', message: 'Line is JSON but not an object; skipped.' });
      return null;
    }
    const check = checkRecord(value, MAX_JSON_DEPTH);
    if (check.tooDeep) {
      this.report({
        file,
        line: line.line,
        severity: 'error',
        message: `Line nests deeper than ${MAX_JSON_DEPTH} levels; skipped.`,
      });
      // The only line of the file may be a whole document: keep it with the deep parts left out, in case it is.
      if (file === 0 && this.mainRecords === 0 && this.mainNonBlank === 1 && line.text !== null)
        this.deepFirst = { line, result: parseJsonStreaming(line.text) };
      return null;
    }
    for (const bad of check.badCounts)
      this.report({ file, line: line.line, severity: 'warning', message: badCountMessage(bad) });
    return value;
  }

  private startDocument(line: SourceLine): void {
    const parser = new StreamingJsonParser(MAX_JSON_DEPTH);
    this.doc = { parser, held: [], heldChars: 0, sawRecordLikeLine: false };
    this.documentLine(this.doc, line);
  }

  private documentLine(doc: DocumentState, line: SourceLine): void {
    if (line.notText !== 'long') {
      doc.parser.startLine(line.line, line.offset);
      if (line.text !== null) doc.parser.write(line.text);
      else {
        this.report({
          file: 0,
          line: line.line,
          severity: 'error',
          message:
            line.notText === 'nul'
              ? 'Line holds NUL bytes (binary data); read as empty.'
              : 'Line is not valid UTF-8 text; read as empty.',
        });
      }
    }
    doc.parser.write('\n');
    if (doc.held) {
      doc.held.push(line);
      doc.heldChars += (line.text?.length ?? 0) + 1;
      if (!doc.sawRecordLikeLine && looksLikeRecord(line.text)) doc.sawRecordLikeLine = true;
      if (doc.heldChars > this.heldDocumentChars) doc.held = null;
    }
  }

  /**
   * Chooses the format from the buffered records and replays them into its reader. Runs
   * once per parse on a full sample: when no format claims it, the file is undetectable
   * and the buffer stops growing (running detection again on every later record made a
   * file of unrecognised records quadratic). A weak match is read on trial.
   */
  decideRecords(): void {
    if (this.reader || this.doc || this.undetectable) return;
    if (!this.format) {
      this.detection = detectRecords(this.buffered.map((r) => r.value));
      const id = this.detection.format ?? this.detection.candidate?.format ?? null;
      this.format = id ? (formatById(id) ?? null) : null;
      if (this.detection.format === null && this.format) this.weak = { skipped: [], skippedCount: 0 };
    }
    if (this.format?.createRecordReader) {
      this.reader = this.tapped(this.format.createRecordReader());
      for (const r of this.buffered) this.feedMain(r);
      this.buffered.length = 0;
    } else if (this.buffered.length >= DETECTION_RECORDS) this.undetectable = true;
  }

  /**
   * The model of every record fed so far, with reading able to go on: what finishing
   * changes (diagnostics it adds or drops, a format decided on fewer records than
   * detection wants) is taken back afterwards, so a later snapshot decides and reports
   * again on more. A document cannot be finished twice (its streaming parser ends), so
   * use `isDocument` first: a document's snapshot is `finish`. `beforeFinish` runs
   * first, inside the taking back (it may feed lines held for a tentative decision).
   */
  snapshot(keys: string[], beforeFinish?: () => void): ParsedTrace {
    const diagnostics = [...this.diagnostics];
    const dropped = this.dropped;
    // Before the format is decided (fewer than DETECTION_RECORDS records), finishing decides
    // it from what is here: for a snapshot that decision is tentative, so it is taken back.
    const undecided =
      this.reader === null
        ? { format: this.format, detection: this.detection, buffered: [...this.buffered], weak: this.weak }
        : null;
    try {
      beforeFinish?.();
      return this.finish(keys);
    } finally {
      this.diagnostics.length = 0;
      this.diagnostics.push(...diagnostics);
      this.dropped = dropped;
      if (undecided) {
        this.reader = null;
        this.format = undecided.format;
        this.detection = undecided.detection;
        this.weak = undecided.weak;
        this.buffered.length = 0;
        this.buffered.push(...undecided.buffered);
      }
    }
  }

  /** The result, once every file has been fed. */
  finish(keys: string[]): ParsedTrace {
    if (this.encoding.declared !== 'utf-8') {
      const order = this.encoding.declared === 'utf-16le' ? 'little-endian' : 'big-endian';
      this.report({
        file: 0,
        line: -1,
        severity: 'info',
        message: `The file is UTF-16 text (${order}, by its byte-order mark); it was decoded. Agents write UTF-8.`,
      });
    }
    if (this.doc) {
      const doc = this.doc;
      const result = doc.parser.end();
      // A JSON Lines file whose first line is broken also "opens a document"; if the whole
      // does not parse but its lines do, read it as JSON Lines with that line reported.
      if (result.error && doc.sawRecordLikeLine && doc.held) {
        const lines = doc.held;
        this.doc = null;
        this.replayed = true;
        this.mainNonBlank = 0;
        for (const line of lines) this.mainLine(line);
      } else {
        this.doc = null;
        this.skipLeadingText();
        const small = doc.held !== null && result.prunedCount === 0;
        const parsed = !small
          ? streamedJsonDocument(doc.parser, result, 0)
          : result.error
            ? parseJsonDocument(doc.held!, 0)
            : parseJsonDocument(doc.held!, 0, { value: result.value });
        return this.finishDocument(keys, parsed);
      }
    }
    if (this.mainNonBlank === 0 && this.mainNotText === 0)
      return this.failed(keys, {
        kind: 'empty',
        message: `This file is empty. Agent Trace Inspector expected a trace in one of these formats: ${supportedFormatsText()}.`,
      });
    if (this.mainRecords === 0 && this.mainNotText > 0 && this.mainNotText >= this.mainNonBlank)
      return this.failed(keys, this.binaryProblem());
    this.decideRecords();
    // A file whose one line is a document nested too deeply: read it with the deep parts left out.
    const deep = this.deepFirst;
    if (!this.reader && this.buffered.length === 0 && this.mainNonBlank === 1 && deep && isObject(deep.result.value)) {
      const at = deep.line;
      const skipped = this.diagnostics.findIndex(
        (d) => d.file === 0 && d.line === at.line && /^Line nests deeper/.test(d.message),
      );
      if (skipped >= 0) this.diagnostics.splice(skipped, 1);
      const doc: JsonDocument = {
        value: deep.result.value,
        file: 0,
        locate: () => ({ file: 0, line: at.line, offset: at.offset }),
      };
      const diagnostics: Diagnostic[] = [
        {
          file: 0,
          line: at.line,
          severity: 'error',
          message: `${deep.result.prunedCount === 1 ? 'A value on this line nests' : `${deep.result.prunedCount} values on this line nest`} deeper than ${MAX_JSON_DEPTH} levels; left out, the rest is read.`,
        },
      ];
      return this.finishDocument(keys, { doc, diagnostics });
    }
    const array = this.arrayFirst;
    if (!this.reader && this.buffered.length === 0 && array) {
      const at = array.line;
      this.skipLeadingText();
      return this.finishDocument(keys, {
        doc: { value: array.value, file: 0, locate: () => ({ file: 0, line: at.line, offset: at.offset }) },
        diagnostics: [],
      });
    }
    // One JSON object on one line can be a whole document (a vllm bench result).
    if (!this.reader && this.buffered.length === 1) {
      const only = this.buffered[0]!;
      const line = only.source.line;
      const doc: JsonDocument = {
        value: only.value,
        file: 0,
        locate: () => ({ file: 0, line, offset: only.source.offset }),
      };
      return this.finishDocument(keys, { doc, diagnostics: [] });
    }
    if (!this.reader) {
      const seen = this.mainRecords === 0 ? 'no line is a JSON object' : this.detection.evidence;
      return this.failed(keys, {
        kind: 'unknown-format',
        message: `Not a trace format Agent Trace Inspector knows: ${seen}. Supported: ${supportedFormatsText()}.`,
      });
    }
    return this.success(keys, this.reader.finish());
  }

  binaryProblem(): FileProblem {
    const hint = this.encoding.utf16WithoutBom
      ? ' It looks like UTF-16 without a byte-order mark: convert it to UTF-8.'
      : '';
    return {
      kind: 'binary',
      message: `This file is not text: its lines are not UTF-8, or hold NUL bytes (binary data).${hint} Agent Trace Inspector reads: ${supportedFormatsText()}.`,
    };
  }

  private finishDocument(keys: string[], parsed: { doc: JsonDocument; diagnostics: Diagnostic[] }): ParsedTrace {
    for (const d of parsed.diagnostics) this.report(d);
    const { doc } = parsed;
    if (doc.value === undefined) {
      return this.failed(keys, {
        kind: 'unknown-format',
        message: `The file starts like a JSON document but is not valid JSON. Supported: ${supportedFormatsText()}.`,
      });
    }
    // Depth is bounded already (the streaming parser left deeper parts out); check the counts.
    for (const bad of checkRecord(doc.value, Number.MAX_SAFE_INTEGER).badCounts) {
      this.report({ file: 0, line: doc.locate(bad.path).line, severity: 'warning', message: badCountMessage(bad) });
    }
    if (!this.format) {
      this.detection = detectDocument(doc.value);
      this.format = this.detection.format ? (formatById(this.detection.format) ?? null) : null;
      // A top-level array of records is JSON Lines in disguise.
      if (!this.format && Array.isArray(doc.value)) {
        const records = doc.value.filter(isObject);
        this.detection = detectRecords(records);
        this.format = this.detection.format ? (formatById(this.detection.format) ?? null) : null;
      }
    }
    const format = this.format;
    if (!format) {
      return this.failed(keys, {
        kind: 'unknown-format',
        message: `Not a trace format Agent Trace Inspector knows: ${this.detection.evidence}. Supported: ${supportedFormatsText()}.`,
      });
    }
    if (format.readDocument) {
      const tap = this.recordTap;
      if (tap && format.documentRecords) for (const r of format.documentRecords(doc)) tap(r);
      return this.success(keys, format.readDocument(doc));
    }
    const reader = this.tapped(format.createRecordReader!());
    const elements = Array.isArray(doc.value) ? doc.value.map((v, i) => [v, [i]] as const) : [[doc.value, []] as const];
    for (const [value, path] of elements) {
      const source = doc.locate(path);
      if (isObject(value))
        reader.record({ value, source, line: { line: source.line, offset: source.offset, byteLength: 0, text: null } });
    }
    return this.success(keys, reader.finish());
  }

  private success(keys: string[], result: ReaderResult): ParsedTrace {
    const weak = this.weak;
    let detection = this.detection;
    if (weak) {
      // Read on a weak match: kept only when the records that look like the format give calls or prompts.
      const label = this.format!.label;
      const gives = result.sessions.some((s) => s.calls.length > 0 || s.turns.length > 0 || s.reportedTotals);
      if (!gives)
        return this.failed(keys, {
          kind: 'unknown-format',
          message: `Not a trace format Agent Trace Inspector knows: ${this.detection.evidence}. Supported: ${supportedFormatsText()}.`,
        });
      for (const s of weak.skipped)
        this.report({
          file: 0,
          line: s.line,
          severity: 'warning',
          message: `Record does not look like a ${label} record (keys ${s.keys}); skipped.`,
        });
      const more = weak.skippedCount - weak.skipped.length;
      this.report({
        file: 0,
        line: -1,
        severity: 'warning',
        message:
          `Read as ${label} though ${this.detection.candidate!.evidence}: the records that do are read, the ${weak.skippedCount} that do not are skipped` +
          `${more > 0 ? ` (${more} of them not listed)` : ''}. If this is another format, choose it (--format).`,
      });
      detection = {
        format: this.format!.id,
        evidence: `${this.detection.candidate!.evidence}; read as one, the ${weak.skippedCount} other records skipped`,
        confidence: 'weak',
      };
    }
    for (const d of result.diagnostics) this.report(d);
    for (const d of reusedToolIds(result.sessions)) this.report(d);
    this.explainEmpty(result);
    // A copy, sorted: the parser's own list stays in reading order for the next snapshot.
    const diagnostics = [...this.diagnostics];
    if (this.dropped > 0)
      diagnostics.push({
        file: 0,
        line: -1,
        severity: 'info',
        message: `${this.dropped} more diagnostics were not kept.`,
      });
    diagnostics.sort((a, b) => a.file - b.file || a.line - b.line);
    return {
      model: {
        format: this.format!.id,
        files: [...keys],
        sessions: result.sessions,
        diagnostics,
        skippedRecords: plainRecord(result.skippedRecords),
        limitations: [...this.format!.limitations],
      },
      detection,
      problem: null,
    };
  }

  /**
   * A file read as some format but holding no call and no prompt gets a warning that says
   * so, unless the reader already said why: an empty analysis is never shown unexplained.
   */
  private explainEmpty(result: ReaderResult): void {
    const calls = result.sessions.reduce((n, s) => n + s.calls.length + s.turns.length, 0);
    const totals = result.sessions.some((s) => s.reportedTotals);
    if (calls > 0 || totals || result.diagnostics.length > 0 || this.diagnostics.some((d) => d.severity !== 'info'))
      return;
    const what =
      result.sessions.length === 0
        ? 'no session'
        : `${result.sessions.length} session${result.sessions.length === 1 ? '' : 's'} but no LLM call or prompt`;
    this.report({
      file: 0,
      line: -1,
      severity: 'warning',
      message: `Read as ${this.format!.label} (${this.detection.evidence}), but the file holds ${what}: it may be another format, or cut before its first call.`,
    });
  }

  failed(keys: string[], problem: FileProblem): ParsedTrace {
    if (problem.kind === 'binary') this.diagnostics.length = 0; // per-line noise of a binary file says nothing
    const evidence =
      problem.kind === 'empty'
        ? 'the file is empty'
        : problem.kind === 'binary'
          ? 'the file is not text'
          : this.detection.evidence;
    return {
      model: {
        format: null,
        files: [...keys],
        sessions: [],
        diagnostics: [...this.diagnostics],
        skippedRecords: {},
        limitations: [],
      },
      detection: { format: this.detection.format, evidence, confidence: this.detection.confidence },
      problem,
    };
  }

  /** Companion files are read for a format whose definition says where they are (Claude Code's sub-agent logs). */
  acceptsCompanions(): boolean {
    return this.format?.companions !== undefined;
  }
}

/**
 * A plain object with the same own entries: readers count into null-prototype objects
 * (a record type may be "__proto__"), and `Object.fromEntries` keeps such keys as own
 * properties of an ordinary object.
 */
function plainRecord<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record));
}

/** A JSON.parse error in words, without quoting the line back at length (it is hostile and may be huge). */
function jsonErrorText(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  // V8 quotes the text around the error: keep its own words, drop the quote.
  const cut = message.replace(/, "[\s\S]*" is not valid JSON$/, '').replace(/ in JSON at position/, ' at position');
  return cut.length > 200 ? `${cut.slice(0, 199)}…` : cut;
}

/**
 * Tool calls of one session that share an id: a reader pairs results by id, so a reused
 * id can put a result on the wrong call. Each reuse is reported with both lines.
 */
export function reusedToolIds(sessions: readonly Session[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const s of sessions) {
    // The session's tool calls in order, sorted by id (then by position) so equal ids sit together: each
    // later one is a reuse of the group's first. A Map of every id did the same but grew its table through
    // large, short-lived copies (about 7 MB of them on a 777 MB log) at the end of the read.
    let n = 0;
    for (const c of s.calls) n += c.toolCalls.length;
    if (n < 2) continue;
    const tools: ToolCall[] = new Array(n);
    n = 0;
    for (const c of s.calls) for (const t of c.toolCalls) tools[n++] = t;
    const byId = new Uint32Array(n);
    for (let i = 0; i < n; i++) byId[i] = i;
    byId.sort((a, b) => {
      const x = tools[a]!.id;
      const y = tools[b]!.id;
      return x < y ? -1 : x > y ? 1 : a - b;
    });
    // firstOf[i] - 1: the position of the first tool call with tool i's id, for a reuse; 0 for a first.
    const firstOf = new Uint32Array(n);
    for (let k = 1; k < n; k++) {
      const prev = byId[k - 1]!;
      const cur = byId[k]!;
      if (tools[cur]!.id === tools[prev]!.id) firstOf[cur] = firstOf[prev] !== 0 ? firstOf[prev]! : prev + 1;
    }
    for (let i = 0; i < n; i++) {
      if (firstOf[i] === 0) continue;
      const t = tools[i]!;
      const first = tools[firstOf[i]! - 1]!;
      out.push({
        file: t.source.file,
        line: t.source.line,
        severity: 'warning',
        message: `Tool-call id ${JSON.stringify(clip(t.id, 80))} is used again (first at line ${first.source.line + 1}${first.source.file !== t.source.file ? ' of another file' : ''}): both calls are kept, and a result naming it goes to the later one.`,
      });
    }
  }
  return out;
}

/** Where a file's read stopped: the end of its last complete line and that line's number. */
export interface FileResumePoint {
  key: string;
  offset: number;
  line: number;
}

/** Marks a saved TraceParse of this shape: a state saved by other code is not resumed. */
const SAVED_PARSE_KIND = 'trace-parse/1';

/**
 * A TraceParse as plain data (a structured-clone serializer such as Node's `v8.serialize`
 * stores it): the parser's state and, per file, where its read stopped. Bytes after a
 * resume point were not read: a half-written last line is read again when it is whole.
 */
export interface SavedTraceParse {
  kind: typeof SAVED_PARSE_KIND;
  parser: PortableState;
  longLineBytes: number | null;
  companions: boolean | null;
  files: Array<FileResumePoint & { sawNul: boolean; held: SourceLine[] }>;
}

/**
 * A trace read incrementally: bytes are pushed per file as they arrive and `snapshot()`
 * gives the model of everything read so far, as often as wanted, with the readers' state
 * kept in between. So a growing file (an agent still writing its log) is followed by
 * pushing only its new bytes, from `bytesRead(file)` on: the JSON of a line is parsed
 * once, whenever it comes. File 0 is the opened file; others are companion files (Claude
 * Code sub-agent logs), read only when the opened file is a Claude Code log. Records reach
 * the reader in the order they are pushed. A JSON document (not JSON Lines) is read to its
 * end by its first snapshot: later bytes are not read. Never throws on bad input.
 *
 * Only complete lines are read: a last line still being written stays hidden until its
 * newline comes (or `endFile`). Companion lines that arrive before the opened file's
 * format is decided are held, not guessed at: they are read once it is Claude Code, and
 * a snapshot reads them on its tentative decision. `saveState()` gives the parse as
 * plain data that `TraceParse.restore` resumes in another process (the session index
 * keeps it per session file), from each file's resume point.
 */
export class TraceParse {
  private parser: TraceParser;
  private readonly keys: string[];
  private readonly lines: LineReader[] = [];
  private readonly longLineBytes: number | undefined;
  /** Whether companion files are read: settled once the opened file's format is decided, or when asked. */
  private companions: boolean | null = null;
  /** Companion lines read before `companions` was settled, by file index. */
  private held: SourceLine[][] = [];
  /** The result once reading stopped: a binary file, or a document read to its end. */
  private final: ParsedTrace | null = null;
  /** Lines were read on other threads (`handOff`): the byte counts here no longer say where reading stopped. */
  private handedOff = false;

  constructor(
    keys: readonly string[],
    options: {
      format?: FormatId;
      longLineBytes?: number;
      heldDocumentChars?: number;
      recordTap?: (record: TraceRecord) => void;
    } = {},
  ) {
    const forced = options.format ? (formatById(options.format) ?? null) : null;
    this.parser = new TraceParser(forced, options.heldDocumentChars, options.recordTap ?? null);
    this.keys = [...keys];
    this.longLineBytes = options.longLineBytes;
  }

  /** Adds a file (a sub-agent log that appeared) and returns its index. */
  addFile(key: string): number {
    this.keys.push(key);
    return this.keys.length - 1;
  }

  /** The files' keys, by index. */
  get files(): readonly string[] {
    return this.keys;
  }

  /** True once nothing more is read: the opened file is not text or of no known format, or a document was read to its end. */
  get stopped(): boolean {
    return this.final !== null;
  }

  /** Bytes of file `index` pushed so far: where reading resumes. */
  bytesRead(index: number): number {
    return this.lines[index]?.byteCount ?? 0;
  }

  /** Bytes at the end of file `index` not yet ended by a newline (held until it comes, or `endFile`). */
  pendingBytes(index: number): number {
    return this.lines[index]?.pendingByteCount ?? 0;
  }

  /** Where each file's read stopped, counting complete lines only (what `saveState` keeps). */
  resumePoints(): FileResumePoint[] {
    return this.keys.map((key, i) => ({
      key,
      offset: this.lines[i]?.completedBytes ?? 0,
      line: this.lines[i]?.completedLines ?? 0,
    }));
  }

  private reader(index: number): LineReader {
    let lines = this.lines[index];
    if (!lines) {
      // Lines arrive through onLine, in file order with the starts of long lines.
      const feed = (line: SourceLine): void =>
        index === 0 ? this.parser.mainLine(line) : this.companionLine(index, line);
      lines = new LineReader({
        longLineBytes: this.longLineBytes,
        onLongLine: (line, offset) => this.parser.longLine(index, line, offset),
        onLine: feed,
      });
      this.lines[index] = lines;
    }
    return lines;
  }

  private companionLine(index: number, line: SourceLine): void {
    if (this.companions === null) this.settleOnceDecided();
    if (this.companions === null) (this.held[index] ??= []).push(line);
    else if (this.companions) this.parser.companionLine(index, line);
  }

  /** Once the opened file's format is decided, companions are settled and the lines held for it read or dropped. */
  private settleOnceDecided(): void {
    if (this.companions === null && this.parser.decided) this.settle();
  }

  private settle(): void {
    this.companions = !this.parser.isDocument && this.parser.acceptsCompanions();
    const held = this.held;
    this.held = [];
    if (this.companions)
      held.forEach((lines, index) => lines.forEach((line) => this.parser.companionLine(index, line)));
  }

  /**
   * Whether companion files are read: only for a Claude Code log (its sub-agents). Asking
   * decides the format from the opened file's records so far (ask once the opened file
   * is read; pushing companions without asking holds their lines until it is decided).
   */
  acceptsCompanions(): boolean {
    if (this.companions === null) {
      this.parser.decideRecords();
      this.settle();
    }
    return this.companions!;
  }

  /** Feeds the next bytes of file `index`; false when reading should stop (the opened file is not text). */
  push(index: number, chunk: Uint8Array): boolean {
    if (this.final) return false;
    if (index > 0 && this.companions === false) return true;
    const lines = this.reader(index);
    lines.push(chunk);
    if (index === 0) {
      this.parser.encoding = { declared: lines.encoding, utf16WithoutBom: lines.looksLikeUtf16WithoutBom };
      if (this.parser.looksBinary(lines.byteCount, lines.containsNul)) {
        this.final = this.parser.failed(this.keys, this.parser.binaryProblem());
        return false;
      }
      // Detection has decided that no format claims the file: nothing after its sample is read.
      if (this.parser.undetectable) {
        this.final = this.parser.finish(this.keys);
        return false;
      }
      this.settleOnceDecided();
    }
    return true;
  }

  /**
   * File `index` has no more bytes for now: a last line without a newline is read as a
   * line. (A live reader that expects more calls this only when the file is closed: a
   * line still being written would otherwise be read half.)
   */
  endFile(index: number): void {
    if (this.final || (index > 0 && this.companions === false)) return;
    const lines = this.reader(index);
    lines.end();
    if (index === 0) {
      this.parser.encoding = { declared: lines.encoding, utf16WithoutBom: lines.looksLikeUtf16WithoutBom };
      this.settleOnceDecided();
    }
  }

  /** A companion file that could not be read (gone, a FIFO swapped in): said, and the rest is read. */
  unreadable(index: number, error: unknown): void {
    this.parser.report({
      file: 0,
      line: -1,
      severity: 'warning',
      message: `${this.keys[index]} could not be read (${error instanceof Error ? error.message : String(error)}); the rest of the trace is read.`,
    });
  }

  /** What the host noticed about the companions (ones it refused to read, and why), said on the opened file when companions are read. */
  notes(notes: readonly string[]): void {
    if (this.acceptsCompanions())
      for (const note of notes) this.parser.report({ file: 0, line: -1, severity: 'warning', message: note });
  }

  /**
   * Where file `index` may be read on other threads from (its bytes so far end with a
   * whole line, it is UTF-8 text, and the parser can take checked records: `slimmerFor`),
   * with the format's slimRecord; null when it must stay on this thread.
   */
  handOff(index: number): { offset: number; line: number; format: FormatId } | null {
    if (this.final || (index > 0 && this.companions !== true)) return null;
    const lines = this.lines[index];
    if (!lines || lines.encoding !== 'utf-8' || lines.pendingByteCount > 0 || lines.inLongLine) return null;
    const format = this.parser.handOffFormat(index);
    if (format === null) return null;
    this.handedOff = true;
    return { offset: lines.completedBytes, line: lines.completedLines, format };
  }

  /** A line of file `index` that another thread parsed, checked and slimmed (after `handOff`). */
  checkedLine(index: number, line: SourceLine, value: JsonObject): void {
    this.parser.checkedLine(index, line, value);
  }

  /**
   * A line of file `index` another thread did not read (not a plain record: bad JSON, not
   * text, too long, odd counts), its bytes without the terminator: read here, as if in place.
   */
  lineBytes(index: number, bytes: Uint8Array, offset: number, line: number): void {
    const feed = (l: SourceLine): void => (index === 0 ? this.parser.mainLine(l) : this.parser.companionLine(index, l));
    const reader = new LineReader({
      longLineBytes: this.longLineBytes,
      onLongLine: (n, at) => this.parser.longLine(index, n, at),
      onLine: feed,
    });
    reader.resumeAt(offset, line, false);
    reader.push(bytes);
    reader.end();
  }

  /** The model of everything read so far; reading may go on after it (not after a document's). */
  snapshot(): ParsedTrace {
    if (this.final) return this.final;
    if (this.parser.isDocument) {
      this.final = this.parser.finish(this.keys);
      return this.final;
    }
    if (this.companions !== null || this.held.length === 0) return this.parser.snapshot(this.keys);
    // Companion lines wait for the format: read them on the snapshot's tentative decision, which it takes back.
    return this.parser.snapshot(this.keys, () => {
      this.parser.decideRecords();
      if (!this.parser.isDocument && this.parser.acceptsCompanions())
        this.held.forEach((lines, index) => lines.forEach((line) => this.parser.companionLine(index, line)));
    });
  }

  /**
   * The parse as plain data (see SavedTraceParse), or null when it cannot be kept that
   * way: reading stopped, a document, a UTF-16 file (its offsets are of a re-encoding), a
   * long line half read, or a reader holding something that is not data. A caller with
   * no saved state reads the file again from the start, which is always right.
   */
  saveState(): SavedTraceParse | null {
    if (this.final || this.parser.isDocument || this.handedOff) return null;
    if (this.lines.some((l) => l !== undefined && (l.encoding !== 'utf-8' || l.inLongLine))) return null;
    const parser = portableState(this.parser);
    if (parser === null) return null;
    return {
      kind: SAVED_PARSE_KIND,
      parser,
      longLineBytes: this.longLineBytes ?? null,
      companions: this.companions,
      files: this.resumePoints().map((p, i) => ({
        ...p,
        sawNul: this.lines[i]?.containsNul ?? false,
        held: [...(this.held[i] ?? [])],
      })),
    };
  }

  /** A parse saved by `saveState` (after a serializer's round trip), ready for the bytes after each resume point; null if this build cannot resume it. */
  static restore(saved: SavedTraceParse): TraceParse | null {
    if (saved?.kind !== SAVED_PARSE_KIND || !Array.isArray(saved.files)) return null;
    const parser = restorePortableState<TraceParser>(saved.parser);
    if (!(parser instanceof TraceParser)) return null;
    const parse = new TraceParse(
      saved.files.map((f) => f.key),
      { longLineBytes: saved.longLineBytes ?? undefined },
    );
    parse.parser = parser;
    parse.companions = saved.companions;
    saved.files.forEach((f, i) => {
      parse.reader(i).resumeAt(f.offset, f.line, f.sawNul);
      if (f.held.length > 0) parse.held[i] = [...f.held];
    });
    return parse;
  }
}

// A saved parse holds the parser, its record reader and the format definitions it points
// at (shared, saved by name). Nested helper classes register where they are defined
// (claudeCode/claudeCodeReader.ts).
registerStateClass('trace-parser', TraceParser);
for (const format of FORMATS) {
  registerSharedObject(`format:${format.id}`, format);
  const reader = format.createRecordReader?.();
  const proto = reader ? (Object.getPrototypeOf(reader) as object | null) : null;
  if (proto && proto !== Object.prototype) registerStateClass(`reader:${format.id}`, { prototype: proto });
}

/**
 * Reads a trace: the opened file first, then its companion files (Claude Code
 * sub-agent logs). Streams JSON Lines line by line, reads whole JSON documents with
 * an error-tolerant parser, detects the format from the first records unless told,
 * and never throws on bad input: malformed lines become diagnostics with their line
 * numbers and the rest of the file still loads.
 */
export async function parseTrace(files: readonly TraceFile[], options: ParseOptions = {}): Promise<ParsedTrace> {
  const parse = new TraceParse(
    files.map((f) => f.key),
    {
      format: options.format,
      longLineBytes: options.longLineBytes,
      heldDocumentChars: options.heldDocumentChars,
      recordTap: options.recordTap,
    },
  );
  return readTraceInto(parse, files, async (fileIndex, bytes) => {
    for await (const chunk of chunksOf(bytes)) {
      if (!parse.push(fileIndex, chunk)) return true;
      if (options.yieldControl) await options.yieldControl();
    }
    return false;
  });
}

/**
 * Reads one file's bytes into a TraceParse (on this thread, or on parse threads:
 * src/node/parallelParse.ts); true when reading stopped (the opened file is not text, or of
 * no known format), false when the file was read to its end.
 */
export type TraceFileReader = (fileIndex: number, bytes: ByteChunks) => Promise<boolean>;

/**
 * The loop every whole read of a trace runs: the opened file, then its companions (only
 * when the opened file takes them), each through `readFile`; a companion that cannot be
 * read is said and left out, the opened file must be readable. Returns the parse's model.
 */
export async function readTraceInto(
  parse: TraceParse,
  files: readonly TraceFile[],
  readFile: TraceFileReader,
): Promise<ParsedTrace> {
  for (let fileIndex = 0; fileIndex < files.length; fileIndex++) {
    // Companions of a file that is not a Claude Code log are not even opened.
    if (fileIndex > 0 && !parse.acceptsCompanions()) break;
    try {
      if (await readFile(fileIndex, files[fileIndex]!.bytes)) return parse.snapshot();
    } catch (e) {
      // The opened file must be readable; a companion that is not is said and left out.
      if (fileIndex === 0) throw e;
      parse.unreadable(fileIndex, e);
      continue;
    }
    parse.endFile(fileIndex);
  }
  parse.notes(files[0]?.notes ?? []);
  return parse.snapshot();
}
