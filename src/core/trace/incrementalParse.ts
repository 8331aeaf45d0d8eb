import { LineReader } from '../text/lineReader';
import type { SourceLine } from '../text/lineReader';
import { FORMATS } from './formats';
import type { FormatId } from './model';
import { TraceParser } from './parseTrace';
import type { ParsedTrace } from './parseTrace';
import { copyState, portableState, registerSharedObject, registerStateClass, restorePortableState } from './parserState';
import type { PortableState } from './parserState';
import { supportedFormatsText } from './formats';

// The parser, every format definition (shared, never copied) and every record reader's
// class may sit in a saved state. Nested helper classes register themselves where they
// are defined (claudeCode/claudeCodeReader.ts).
registerStateClass('trace-parser', TraceParser);
for (const format of FORMATS) {
  registerSharedObject(`format:${format.id}`, format);
  const reader = format.createRecordReader?.();
  const proto = reader ? (Object.getPrototypeOf(reader) as object | null) : null;
  if (proto && proto !== Object.prototype) registerStateClass(`reader:${format.id}`, { prototype: proto });
}

/** One file of an incremental parse: its line splitter and, for a companion, lines waiting for the format. */
interface FileFeed {
  key: string;
  lines: LineReader;
  /** Companion lines read before the format was decided (a full parse reads them after the whole main file). */
  queued: SourceLine[];
}

/** Where a file's read stopped: the end of its last complete line and that line's number. */
export interface FileResumePoint {
  key: string;
  offset: number;
  line: number;
}

/** A saved incremental parse: the parser as plain data and where each file's read stopped. */
export interface SavedParse {
  parser: PortableState;
  files: Array<FileResumePoint & { queued: SourceLine[] }>;
  binary: boolean;
}

/**
 * A parse that goes on as files grow (a live agent session, the session index): bytes
 * are pushed as they are appended, each file from where its last complete line ended,
 * and `snapshot()` gives the trace as it stands without ending the parse. Reading a
 * file in any number of pushes gives the same result as `parseTrace` reading it whole
 * (companion files after the main file; tested on real logs).
 *
 * Only complete lines are fed to the readers; a snapshot adds an unfinished last line
 * when it already is whole JSON (a file that does not end with a newline), so a file
 * caught mid-write never shows a broken line. `saveState()` lets another process resume
 * (the index keeps it per file); a state it cannot save (a format whose reader holds
 * functions, a whole-document format) is null and the caller reads the file again.
 */
export class IncrementalTraceParser {
  private readonly parser: TraceParser;
  private readonly files: FileFeed[] = [];
  /** The main file holds NUL bytes: not text (as parseTrace decides it). */
  private binary = false;

  constructor(options: { format?: FormatId } = {}, parser?: TraceParser) {
    const forced = options.format ? (FORMATS.find((f) => f.id === options.format) ?? null) : null;
    this.parser = parser ?? new TraceParser(forced);
  }

  /** The files pushed so far, main file first. */
  get keys(): string[] {
    return this.files.map((f) => f.key);
  }

  /** Where the next read of `key` starts: the byte after its last complete line (0 for a file not seen yet). */
  offset(key: string): number {
    return this.files.find((f) => f.key === key)?.lines.completedBytes ?? 0;
  }

  /** Where each file's read stopped. */
  resumePoints(): FileResumePoint[] {
    return this.files.map((f) => ({ key: f.key, offset: f.lines.completedBytes, line: f.lines.completedLines }));
  }

  /** Registers a file (the first one is the main file) without reading from it yet. */
  addFile(key: string): void {
    if (!this.files.some((f) => f.key === key)) this.files.push({ key, lines: new LineReader(), queued: [] });
  }

  /** Feeds the next bytes of `key` (appended since its last push). */
  push(key: string, chunk: Uint8Array): void {
    this.addFile(key);
    const index = this.files.findIndex((f) => f.key === key);
    const feed = this.files[index]!;
    if (this.binary) return;
    const lines = feed.lines.push(chunk);
    if (index === 0) {
      if (feed.lines.containsNul) {
        this.binary = true;
        return;
      }
      for (const line of lines) this.parser.mainLine(line);
      this.flushCompanions();
    } else if (this.parser.acceptsCompanions()) {
      for (const line of lines) this.parser.companionLine(index, line);
    } else {
      feed.queued.push(...lines);
    }
  }

  /** Companion lines waited for the main file to decide the format; once it is Claude Code, they are read. */
  private flushCompanions(): void {
    if (!this.parser.acceptsCompanions()) return;
    for (let i = 1; i < this.files.length; i++) {
      const feed = this.files[i]!;
      for (const line of feed.queued) this.parser.companionLine(i, line);
      feed.queued = [];
    }
  }

  /**
   * The trace as it stands, the parse going on. Null when the parser's state cannot be
   * copied (a reader holding functions): read the file again with parseTrace.
   */
  snapshot(): ParsedTrace | null {
    const copy = copyState(this.parser);
    if (copy === null) return null;
    return this.finishParser(copy, true);
  }

  /** Ends the parse (unfinished last lines are read as they are) and returns the trace. */
  finish(): ParsedTrace {
    return this.finishParser(this.parser, false);
  }

  private finishParser(parser: TraceParser, onlyWholeTails: boolean): ParsedTrace {
    const keys = this.keys;
    if (this.binary) return parser.failed(keys, { kind: 'binary', message: `This file is not text: it contains NUL bytes. Agent Trace Inspector reads: ${supportedFormatsText()}.` });
    const tail = (feed: FileFeed): SourceLine | null => {
      const line = onlyWholeTails ? feed.lines.pendingLine() : (feed.lines.end()[0] ?? null);
      if (!line || !onlyWholeTails) return line;
      try {
        JSON.parse(line.text ?? '');
        return line;
      } catch {
        return null; // still being written
      }
    };
    const main = this.files[0];
    if (main) {
      const last = tail(main);
      if (last) parser.mainLine(last);
    }
    if (this.files.length > 1) {
      parser.decideRecords();
      if (!parser.isDocument && parser.acceptsCompanions()) {
        for (let i = 1; i < this.files.length; i++) {
          const feed = this.files[i]!;
          for (const line of feed.queued) parser.companionLine(i, line);
          const last = tail(feed);
          if (last) parser.companionLine(i, last);
        }
      }
    }
    return parser.finish(keys);
  }

  /** The parse as plain data another process can resume (`IncrementalTraceParser.resume`), or null. */
  saveState(): SavedParse | null {
    const parser = portableState(this.parser);
    if (parser === null || this.parser.isDocument) return null;
    return { parser, binary: this.binary, files: this.files.map((f) => ({ key: f.key, offset: f.lines.completedBytes, line: f.lines.completedLines, queued: f.queued })) };
  }

  /** A parse saved by `saveState` (deserialized), ready for the bytes after each file's resume point; null if this build cannot resume it. */
  static resume(saved: SavedParse): IncrementalTraceParser | null {
    const parser = restorePortableState<TraceParser>(saved.parser);
    if (!(parser instanceof TraceParser)) return null;
    const resumed = new IncrementalTraceParser({}, parser);
    resumed.binary = saved.binary;
    for (const f of saved.files) {
      const lines = new LineReader();
      lines.resumeAt(f.offset, f.line);
      resumed.files.push({ key: f.key, lines, queued: f.queued });
    }
    return resumed;
  }
}
