import type { JsonObject } from './json';
import type { FormatId, SourceRef } from './model';
import type { ReaderResult, RecordReader } from './recordReader';

/** A path into a JSON document: object keys and array indexes. */
export type JsonPath = ReadonlyArray<string | number>;

/** A whole JSON document (SWE-agent .traj, OTLP/JSON, vllm bench result…) and a way back to its lines. */
export interface JsonDocument {
  value: unknown;
  /** Index of the file in `TraceModel.files`. */
  file: number;
  /** Where the value at `path` starts (its nearest existing ancestor when the path does not exist). */
  locate(path: JsonPath): SourceRef;
}

/**
 * Everything the rest of the program knows about one trace format. Each format's
 * module exports one of these; `formats.ts` lists them in detection order.
 */
export interface FormatDefinition {
  id: FormatId;
  /** What users call it: "OpenAI Codex CLI rollout". */
  label: string;
  /** Where such files come from, to help a user recognise them. */
  fileHint: string;
  /**
   * What this format cannot give, said plainly in the panel and the CLI instead of
   * drawing zeros ("no per-call cache data in SWE-agent trajectories: totals only").
   */
  limitations: readonly string[];
  /** JSON Lines: true when a record looks like one of this format's. Each match is one vote. */
  matchesRecord?(record: JsonObject): boolean;
  /** A record so distinctive that it decides the format at once (a canonical header). */
  decidesRecord?(record: JsonObject): boolean;
  /**
   * Whole-document formats: true when the parsed document is of this format. It must confirm
   * the structure (the shape of the elements, not only the top-level keys), so that another
   * format's document with the same keys is not claimed.
   */
  matchesDocument?(value: unknown): boolean;
  /** How sure a document match is: `certain` when the document names its format (a version marker); `likely` (the default) on structure alone. */
  documentConfidence?(value: unknown): 'certain' | 'likely';
  /** Reader for JSON Lines records (also fed a matching document as one record when there is no readDocument). */
  createRecordReader?(): RecordReader;
  /** Reader for a whole document. */
  readDocument?(doc: JsonDocument): ReaderResult;
}
