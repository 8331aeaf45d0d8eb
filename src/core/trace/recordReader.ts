import type { SourceLine } from '../text/lineReader';
import type { JsonObject } from './json';
import type { Diagnostic, Session, SourceRef } from './model';

/** One parsed JSON Lines record and where it sits. */
export interface TraceRecord {
  value: JsonObject;
  source: SourceRef;
  line: SourceLine;
}

/** What a format reader hands back when the stream ends. */
export interface ReaderResult {
  sessions: Session[];
  diagnostics: Diagnostic[];
  skippedRecords: Record<string, number>;
}

/**
 * A format reader for JSON Lines traces: it is fed records in file order (companion
 * files after the main file) and builds sessions. It never throws on bad input; it
 * reports diagnostics and keeps going.
 */
export interface RecordReader {
  /** Called for every record of every file, in order. */
  record(record: TraceRecord): void;
  /** Called once after the last record. */
  finish(): ReaderResult;
}

/** Counts a skipped record type; the counts tell the user what was left out and why. */
export function countSkipped(skipped: Record<string, number>, type: string): void {
  // The type comes from the trace: a 10 MiB "type" is counted under its first characters.
  const key = type.length > 120 ? `${type.slice(0, 119)}…` : type;
  // An own property whatever the key: on an ordinary object "__proto__" would set the prototype instead.
  // Once the key is an own data property, assigning sets that property (own properties come before the prototype's setter).
  if (Object.prototype.hasOwnProperty.call(skipped, key)) skipped[key] = skipped[key]! + 1;
  else Object.defineProperty(skipped, key, { value: 1, writable: true, enumerable: true, configurable: true });
}
