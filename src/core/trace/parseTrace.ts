import { LineReader } from '../text/lineReader';
import type { SourceLine } from '../text/lineReader';
import { CanonicalReader } from './canonical/canonicalReader';
import { ClaudeCodeReader } from './claudeCode/claudeCodeReader';
import { detectFormat, DETECTION_RECORDS, SUPPORTED_FORMATS } from './detectFormat';
import type { Detection } from './detectFormat';
import { isObject } from './json';
import type { Diagnostic, FormatId, TraceModel } from './model';
import type { RecordReader, TraceRecord } from './recordReader';

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

function createReader(format: FormatId): RecordReader {
  switch (format) {
    case 'agent-trace':
      return new CanonicalReader();
    case 'claude-code':
      return new ClaudeCodeReader();
  }
}

/** What a user should know about the formats, for "unknown format" messages. */
export function supportedFormatsText(): string {
  return SUPPORTED_FORMATS.map((f) => `${f.label}, ${f.hint}`).join('; ');
}

async function* chunksOf(bytes: ByteChunks): AsyncGenerator<Uint8Array> {
  if (bytes instanceof Uint8Array) {
    for (let at = 0; at < bytes.length; at += SLICE_BYTES) yield bytes.subarray(at, at + SLICE_BYTES);
    return;
  }
  yield* bytes;
}

/**
 * Reads a trace: the opened file first, then its companion files (Claude Code
 * sub-agent logs). Streams line by line, detects the format from the first records
 * unless told, and never throws on bad input: malformed lines become diagnostics with
 * their line numbers and the rest of the file still loads.
 */
export async function parseTrace(files: readonly TraceFile[], options: ParseOptions = {}): Promise<ParsedTrace> {
  const diagnostics: Diagnostic[] = [];
  let droppedDiagnostics = 0;
  const report = (d: Diagnostic): void => {
    if (diagnostics.length < MAX_DIAGNOSTICS) diagnostics.push(d);
    else droppedDiagnostics += 1;
  };
  const keys = files.map((f) => f.key);
  let reader: RecordReader | null = options.format ? createReader(options.format) : null;
  let detection: Detection = options.format
    ? { format: options.format, evidence: 'chosen by the user' }
    : { format: null, evidence: 'nothing read yet' };
  const buffered: TraceRecord[] = [];
  let mainRecords = 0;
  let mainNonBlankLines = 0;
  let mainInvalidUtf8 = 0;
  let firstLineText: string | null = null;

  const decide = (): void => {
    if (reader) return;
    detection = detectFormat(buffered.map((r) => r.value));
    if (detection.format) {
      reader = createReader(detection.format);
      for (const r of buffered) reader.record(r);
    }
    buffered.length = 0;
  };

  const take = (fileIndex: number, line: SourceLine): void => {
    if (line.text === null) {
      if (fileIndex === 0) mainInvalidUtf8 += 1;
      report({ file: fileIndex, line: line.line, severity: 'error', message: 'Line is not valid UTF-8 text; skipped.' });
      return;
    }
    if (line.text.trim() === '') return;
    if (fileIndex === 0) {
      mainNonBlankLines += 1;
      firstLineText ??= line.text;
    }
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch (e) {
      const detail = e instanceof Error ? e.message : String(e);
      report({ file: fileIndex, line: line.line, severity: 'error', message: `Line is not valid JSON (${detail}); skipped.` });
      return;
    }
    if (!isObject(value)) {
      report({ file: fileIndex, line: line.line, severity: 'error', message: 'Line is JSON but not an object; skipped.' });
      return;
    }
    const record: TraceRecord = { value, line, source: { file: fileIndex, line: line.line, offset: line.offset } };
    if (fileIndex === 0) mainRecords += 1;
    if (reader) reader.record(record);
    else if (fileIndex === 0) {
      buffered.push(record);
      if (buffered.length >= DETECTION_RECORDS) decide();
    }
  };

  for (let fileIndex = 0; fileIndex < files.length; fileIndex++) {
    if (fileIndex === 1) {
      decide();
      // Companion files are sub-agent logs of a Claude Code session; other formats keep none.
      if (detection.format !== 'claude-code') break;
    }
    const lines = new LineReader();
    for await (const chunk of chunksOf(files[fileIndex]!.bytes)) {
      for (const line of lines.push(chunk)) take(fileIndex, line);
      if (fileIndex === 0 && lines.containsNul) break;
      if (options.yieldControl) await options.yieldControl();
    }
    if (fileIndex === 0 && lines.containsNul) {
      // Line diagnostics of a binary file are noise; the one message says it all.
      diagnostics.length = 0;
      return failed(keys, detection, { kind: 'binary', message: 'This file is not text: it contains NUL bytes. Agent Trace Inspector reads JSON Lines traces: ' + supportedFormatsText() + '.' });
    }
    for (const line of lines.end()) take(fileIndex, line);
    if (fileIndex === 0) {
      if (lines.byteCount === 0 || (mainNonBlankLines === 0 && mainInvalidUtf8 === 0)) {
        return failed(keys, detection, { kind: 'empty', message: 'This file is empty. Agent Trace Inspector expected a trace in one of these formats: ' + supportedFormatsText() + '.' });
      }
      if (mainRecords === 0 && mainInvalidUtf8 > 0 && mainInvalidUtf8 >= mainNonBlankLines) {
        return failed(keys, detection, { kind: 'binary', message: 'This file is not UTF-8 text. Agent Trace Inspector reads JSON Lines traces: ' + supportedFormatsText() + '.' });
      }
    }
  }
  decide();
  if (!reader) {
    const wholeDocument = firstLineText !== null && mainRecords === 0 && /^\s*[[{]\s*$/.test(firstLineText)
      ? ' The file looks like one JSON document spread over many lines; this version reads JSON Lines (one record per line).'
      : '';
    const seen = mainRecords === 0 ? 'no line is a JSON object' : detection.evidence;
    return failed(keys, detection, {
      kind: 'unknown-format',
      message: `Not a trace format Agent Trace Inspector knows: ${seen}.${wholeDocument} Supported: ${supportedFormatsText()}.`,
    });
  }
  const result = (reader as RecordReader).finish();
  for (const d of result.diagnostics) report(d);
  if (droppedDiagnostics > 0) {
    diagnostics.push({ file: 0, line: -1, severity: 'info', message: `${droppedDiagnostics} more diagnostics were not kept.` });
  }
  diagnostics.sort((a, b) => a.file - b.file || a.line - b.line);
  return {
    model: { format: detection.format, files: keys, sessions: result.sessions, diagnostics, skippedRecords: result.skippedRecords },
    detection,
    problem: null,
  };

  function failed(fileKeys: string[], det: Detection, problem: FileProblem): ParsedTrace {
    const evidence = problem.kind === 'empty' ? 'the file is empty' : problem.kind === 'binary' ? 'the file is not text' : det.evidence;
    return {
      model: { format: null, files: fileKeys, sessions: [], diagnostics, skippedRecords: {} },
      detection: { format: det.format, evidence },
      problem,
    };
  }
}
