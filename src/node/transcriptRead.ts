import type { TraceService } from '../core/view/traceService';
import { ONE_LINE, transcriptEntries } from '../core/view/transcript';
import type { CallTranscript, TranscriptPlan, TranscriptRecord } from '../core/view/transcript';
import { regularFileChunks } from './traceFiles';
import type { WorkerFile } from '../protocol/traceWorkerProtocol';

/** Bytes read for one range of a call's records at most: a longer record is said, not read whole. */
export const TRANSCRIPT_RANGE_BYTES = 4 * 2 ** 20;
/** Bytes read for one call's transcript at most, over all its ranges. */
export const TRANSCRIPT_TOTAL_BYTES = 16 * 2 ** 20;

const NEWLINE = 0x0a;

/** Bytes [from, from + max) of a trace file, stopping early at `stopAtNewline`'s first newline. */
async function readBytes(
  file: WorkerFile,
  from: number,
  max: number,
  stopAtNewline: boolean,
): Promise<{ bytes: Uint8Array; ended: boolean }> {
  if ('bytes' in file) {
    const end = Math.min(file.bytes.length, from + max);
    let slice = file.bytes.subarray(from, end);
    if (stopAtNewline) {
      const nl = slice.indexOf(NEWLINE);
      if (nl >= 0) slice = slice.subarray(0, nl + 1);
    }
    return { bytes: slice, ended: end >= file.bytes.length };
  }
  const parts: Uint8Array[] = [];
  let length = 0;
  let ended = true;
  // Only the file the host listed, as it was checked when the trace was read (a regular file, no link swapped in).
  for await (const chunk of regularFileChunks(file.path, {
    noFollow: file.noFollow ?? false,
    ...(file.expect ? { expect: file.expect } : {}),
    start: from,
  })) {
    const room = max - length;
    let piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
    const nl = stopAtNewline ? piece.indexOf(NEWLINE) : -1;
    if (nl >= 0) piece = piece.subarray(0, nl + 1);
    parts.push(piece);
    length += piece.length;
    if (nl >= 0 || length >= max) {
      ended = false;
      break;
    }
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes, ended };
}

/**
 * Reads again the records of a call's transcript (`plan`, from the model's source
 * references) from the trace's own files, by their index: never another file. Each range
 * is bounded (TRANSCRIPT_RANGE_BYTES, TRANSCRIPT_TOTAL_BYTES in all); a line the bound
 * cuts is returned `cut`, to be said rather than parsed.
 */
export async function readTranscriptRecords(
  files: readonly (WorkerFile | null)[],
  plan: TranscriptPlan,
): Promise<{ records: TranscriptRecord[]; notes: string[] }> {
  const records: TranscriptRecord[] = [];
  const notes: string[] = [];
  const decoder = new TextDecoder('utf-8');
  let budget = TRANSCRIPT_TOTAL_BYTES;
  for (const range of plan.ranges) {
    const file = files[range.file];
    if (!file) {
      notes.push(`File ${range.file + 1} of the trace could not be read again.`);
      continue;
    }
    const oneLine = range.to === ONE_LINE;
    const wanted = range.to === null || oneLine ? TRANSCRIPT_RANGE_BYTES : Math.max(0, range.to - range.from);
    const max = Math.min(wanted, TRANSCRIPT_RANGE_BYTES, budget);
    if (max <= 0) {
      notes.push('The rest of this call is too large to read here: Show source opens it.');
      break;
    }
    let read;
    try {
      read = await readBytes(file, range.from, max, oneLine);
    } catch (e) {
      notes.push(`Could not read the trace again: ${e instanceof Error ? e.message : String(e)}`);
      continue;
    }
    budget -= read.bytes.length;
    // Whole when the range was read to its end, the file's end, or (one line) its newline.
    const whole =
      read.ended || (oneLine ? read.bytes[read.bytes.length - 1] === NEWLINE : range.to !== null && wanted <= max);
    let line = range.firstLine;
    let start = 0;
    const bytes = read.bytes;
    while (start < bytes.length) {
      let end = bytes.indexOf(NEWLINE, start);
      const last = end < 0;
      if (last) end = bytes.length;
      records.push({ file: range.file, line, text: decoder.decode(bytes.subarray(start, end)), cut: last && !whole });
      line += 1;
      start = end + 1;
    }
  }
  return { records, notes };
}

/** A call's transcript: its records read again from the trace's files (bounded), turned into entries by the core; null: no such call. */
export async function callTranscript(
  service: TraceService,
  files: readonly (WorkerFile | null)[],
  p: { sessionId: string; callIndex: number; maxChars: number },
): Promise<CallTranscript | null> {
  const plan = service.transcriptPlan(p.sessionId, p.callIndex);
  if (!plan) return null;
  const read = await readTranscriptRecords(files, plan);
  const { entries, notes } = transcriptEntries(read.records, p.maxChars, {
    id: p.sessionId,
    sidechain: plan.sidechain,
  });
  const all = [...read.notes, ...notes];
  if (entries.length === 0 && all.length === 0)
    all.push(
      'No prompt, answer or tool text in this call\u2019s records that the inspector can show: Show source opens them.',
    );
  return { sessionId: p.sessionId, callIndex: p.callIndex, entries, maxChars: p.maxChars, notes: all };
}
