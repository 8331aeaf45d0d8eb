import { LineReader } from '../text/lineReader';
import type { SourceLine } from '../text/lineReader';
import { DETECTION_RECORDS, detectDocument, detectRecords } from './detectFormat';
import type { Detection } from './detectFormat';
import type { FormatDefinition, JsonDocument } from './formatDefinition';
import { formatById, supportedFormatsText } from './formats';
import { isObject } from './json';
import { parseJsonDocument } from './jsonDocument';
import type { Diagnostic, FormatId, TraceModel } from './model';
import type { ReaderResult, RecordReader, TraceRecord } from './recordReader';

export { supportedFormatsText };

/** Bytes of a file: whole, or as chunks from a stream. */
export type ByteChunks = Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

/** One file of a trace. `key` is how diagnostics and sources name it (a relative path). */
export interface TraceFile {
  key: string;
  bytes: ByteChunks;
}

/** Options for parseTrace. */
export interface ParseOptions {
  /** Skip detection and read as this format. */
  format?: FormatId;
  /** Awaited between slices of input, so a host can keep serving other work. */
  yieldControl?: () => Promise<void>;
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
/** Whole chunks larger than this are fed in slices, with `yieldControl` between them. */
const SLICE_BYTES = 1 << 20;

async function* chunksOf(bytes: ByteChunks): AsyncGenerator<Uint8Array> {
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

/**
 * Reads one trace. Owns the detection buffer, the chosen reader and the diagnostics
 * until `parseTrace` hands back the model. Exported for the incremental parse
 * (incrementalParse.ts), which feeds it lines as a file grows.
 */
export class TraceParser {
  readonly diagnostics: Diagnostic[] = [];
  private dropped = 0;
  private format: FormatDefinition | null;
  private reader: RecordReader | null = null;
  detection: Detection;
  private readonly buffered: TraceRecord[] = [];
  /** Document mode: every line of the main file, joined and parsed at the end. */
  private documentLines: SourceLine[] | null = null;
  /** Set when a would-be document is read again as JSON Lines. */
  private replayed = false;
  /** In document mode: some line is one JSON object by itself, so this may be JSON Lines after all. Only whether matters, so lines stop being parsed once one is. */
  private sawRecordLikeLine = false;
  private mainRecords = 0;
  private mainNonBlank = 0;
  private mainInvalidUtf8 = 0;

  constructor(forced: FormatDefinition | null) {
    this.format = forced;
    this.detection = forced ? { format: forced.id, evidence: 'chosen by the user' } : { format: null, evidence: 'nothing read yet' };
    if (forced?.createRecordReader) this.reader = forced.createRecordReader();
  }

  report(d: Diagnostic): void {
    if (this.diagnostics.length < MAX_DIAGNOSTICS) this.diagnostics.push(d);
    else this.dropped += 1;
  }

  get isDocument(): boolean {
    return this.documentLines !== null;
  }

  /** A line of the opened file (index 0). */
  mainLine(line: SourceLine): void {
    if (this.documentLines) {
      this.documentLines.push(line);
      if (!this.sawRecordLikeLine && looksLikeRecord(line.text)) this.sawRecordLikeLine = true;
      return;
    }
    if (line.text === null) {
      this.mainInvalidUtf8 += 1;
      this.report({ file: 0, line: line.line, severity: 'error', message: 'Line is not valid UTF-8 text; skipped.' });
      return;
    }
    if (line.text.trim() === '') return;
    this.mainNonBlank += 1;
    const value = this.parseLine(0, line, this.mainNonBlank === 1);
    if (value === undefined) {
      if (this.mainNonBlank === 1 && !this.replayed && opensDocument(line.text, false)) this.documentLines = [line];
      return;
    }
    if (value === null) return;
    this.mainRecords += 1;
    const record: TraceRecord = { value, line, source: { file: 0, line: line.line, offset: line.offset } };
    if (this.reader) this.reader.record(record);
    else {
      this.buffered.push(record);
      if (this.buffered.length >= DETECTION_RECORDS) this.decideRecords();
    }
  }

  /** A line of a companion file (Claude Code sub-agent logs). */
  companionLine(file: number, line: SourceLine): void {
    if (line.text === null) {
      this.report({ file, line: line.line, severity: 'error', message: 'Line is not valid UTF-8 text; skipped.' });
      return;
    }
    if (line.text.trim() === '' || !this.reader) return;
    const value = this.parseLine(file, line, false);
    if (value) this.reader.record({ value, line, source: { file, line: line.line, offset: line.offset } });
  }

  /** JSON.parse one line: the object, null (reported: not an object), or undefined (not JSON). */
  private parseLine(file: number, line: SourceLine, quietIfDocument: boolean): Record<string, unknown> | null | undefined {
    let value: unknown;
    try {
      value = JSON.parse(line.text!);
    } catch (e) {
      // The first line of a pretty-printed document is not an error: the document is read whole.
      if (quietIfDocument && !this.replayed && opensDocument(line.text!, false)) return undefined;
      this.report({ file, line: line.line, severity: 'error', message: `Line is not valid JSON (${e instanceof Error ? e.message : String(e)}); skipped.` });
      return undefined;
    }
    if (!isObject(value)) {
      this.report({ file, line: line.line, severity: 'error', message: 'Line is JSON but not an object; skipped.' });
      return null;
    }
    return value;
  }

  /** Chooses the format from the buffered records and replays them into its reader. */
  decideRecords(): void {
    if (this.reader || this.documentLines) return;
    if (!this.format) {
      this.detection = detectRecords(this.buffered.map((r) => r.value));
      this.format = this.detection.format ? (formatById(this.detection.format) ?? null) : null;
    }
    if (this.format?.createRecordReader) {
      this.reader = this.format.createRecordReader();
      for (const r of this.buffered) this.reader.record(r);
      this.buffered.length = 0;
    }
  }

  /** The result, once every file has been fed. */
  finish(keys: string[]): ParsedTrace {
    if (this.documentLines) {
      const parsed = parseJsonDocument(this.documentLines, 0);
      // A JSON Lines file whose first line is broken also "opens a document"; if the whole
      // does not parse but its lines do, read it as JSON Lines with that line reported.
      if (parsed.diagnostics.length === 0 || !this.sawRecordLikeLine) return this.finishDocument(keys, parsed);
      const lines = this.documentLines;
      this.documentLines = null;
      this.replayed = true;
      this.mainNonBlank = 0;
      for (const line of lines) this.mainLine(line);
    }
    if (this.mainNonBlank === 0 && this.mainInvalidUtf8 === 0) return this.failed(keys, { kind: 'empty', message: `This file is empty. Agent Trace Inspector expected a trace in one of these formats: ${supportedFormatsText()}.` });
    if (this.mainRecords === 0 && this.mainInvalidUtf8 > 0 && this.mainInvalidUtf8 >= this.mainNonBlank) {
      return this.failed(keys, { kind: 'binary', message: `This file is not UTF-8 text. Agent Trace Inspector reads: ${supportedFormatsText()}.` });
    }
    this.decideRecords();
    // One JSON object on one line can be a whole document (a vllm bench result).
    if (!this.reader && this.buffered.length === 1) {
      const only = this.buffered[0]!;
      const line = only.source.line;
      const doc: JsonDocument = { value: only.value, file: 0, locate: () => ({ file: 0, line, offset: only.source.offset }) };
      return this.finishDocument(keys, { doc, diagnostics: [] });
    }
    if (!this.reader) {
      const seen = this.mainRecords === 0 ? 'no line is a JSON object' : this.detection.evidence;
      return this.failed(keys, { kind: 'unknown-format', message: `Not a trace format Agent Trace Inspector knows: ${seen}. Supported: ${supportedFormatsText()}.` });
    }
    return this.success(keys, this.reader.finish());
  }

  private finishDocument(keys: string[], parsed: { doc: JsonDocument; diagnostics: Diagnostic[] }): ParsedTrace {
    for (const d of parsed.diagnostics) this.report(d);
    const { doc } = parsed;
    if (doc.value === undefined) {
      return this.failed(keys, { kind: 'unknown-format', message: `The file starts like a JSON document but is not valid JSON. Supported: ${supportedFormatsText()}.` });
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
      return this.failed(keys, { kind: 'unknown-format', message: `Not a trace format Agent Trace Inspector knows: ${this.detection.evidence}. Supported: ${supportedFormatsText()}.` });
    }
    if (format.readDocument) return this.success(keys, format.readDocument(doc));
    const reader = format.createRecordReader!();
    const elements = Array.isArray(doc.value) ? doc.value.map((v, i) => [v, [i]] as const) : [[doc.value, []] as const];
    for (const [value, path] of elements) {
      const source = doc.locate(path);
      if (isObject(value)) reader.record({ value, source, line: { line: source.line, offset: source.offset, byteLength: 0, text: null } });
    }
    return this.success(keys, reader.finish());
  }

  private success(keys: string[], result: ReaderResult): ParsedTrace {
    for (const d of result.diagnostics) this.report(d);
    if (this.dropped > 0) this.diagnostics.push({ file: 0, line: -1, severity: 'info', message: `${this.dropped} more diagnostics were not kept.` });
    this.diagnostics.sort((a, b) => a.file - b.file || a.line - b.line);
    return {
      model: { format: this.format!.id, files: keys, sessions: result.sessions, diagnostics: this.diagnostics, skippedRecords: result.skippedRecords, limitations: [...this.format!.limitations] },
      detection: this.detection,
      problem: null,
    };
  }

  failed(keys: string[], problem: FileProblem): ParsedTrace {
    if (problem.kind === 'binary') this.diagnostics.length = 0; // per-line noise of a binary file says nothing
    const evidence = problem.kind === 'empty' ? 'the file is empty' : problem.kind === 'binary' ? 'the file is not text' : this.detection.evidence;
    return {
      model: { format: null, files: keys, sessions: [], diagnostics: this.diagnostics, skippedRecords: {}, limitations: [] },
      detection: { format: this.detection.format, evidence },
      problem,
    };
  }

  /** Companion files only make sense for formats that read records (Claude Code sub-agent logs). */
  acceptsCompanions(): boolean {
    return this.format?.id === 'claude-code';
  }
}

/**
 * Reads a trace: the opened file first, then its companion files (Claude Code
 * sub-agent logs). Streams JSON Lines line by line, reads whole JSON documents with
 * an error-tolerant parser, detects the format from the first records unless told,
 * and never throws on bad input: malformed lines become diagnostics with their line
 * numbers and the rest of the file still loads.
 */
export async function parseTrace(files: readonly TraceFile[], options: ParseOptions = {}): Promise<ParsedTrace> {
  const forced = options.format ? (formatById(options.format) ?? null) : null;
  const parser = new TraceParser(forced);
  const keys = files.map((f) => f.key);
  for (let fileIndex = 0; fileIndex < files.length; fileIndex++) {
    if (fileIndex === 1) {
      parser.decideRecords();
      if (parser.isDocument || !parser.acceptsCompanions()) break;
    }
    const lines = new LineReader();
    const feed = (line: SourceLine): void => (fileIndex === 0 ? parser.mainLine(line) : parser.companionLine(fileIndex, line));
    for await (const chunk of chunksOf(files[fileIndex]!.bytes)) {
      for (const line of lines.push(chunk)) feed(line);
      if (fileIndex === 0 && lines.containsNul) {
        return parser.failed(keys, { kind: 'binary', message: `This file is not text: it contains NUL bytes. Agent Trace Inspector reads: ${supportedFormatsText()}.` });
      }
      if (options.yieldControl) await options.yieldControl();
    }
    for (const line of lines.end()) feed(line);
  }
  return parser.finish(keys);
}
