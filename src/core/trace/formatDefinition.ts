import type { JsonObject } from './json';
import type { FormatId, SourceRef } from './model';
import type { ReaderResult, RecordReader, TraceRecord } from './recordReader';

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
 * Where a format keeps the companion files of a trace (sub-agent logs written apart from
 * the opened file), as pure rules: the hosts (src/node/traceFiles.ts, the extension's
 * remote reads and file watchers, redacted copies) list the folders and read the files,
 * and parseTrace reads companions only when the opened file is of a format that has them.
 */
export interface CompanionLayout {
  /**
   * The folder holding the companions of a file named `fileName`, relative to its folder
   * (where a redacted copy by that name puts them too); null when a file so named has none.
   */
  folderOf(fileName: string): string | null;
  /** How many folders below that one are searched as well (real folders only, never links). */
  folderDepth: number;
  /** True for a companion's file name, in that folder and beside the opened file. */
  isCompanionName(name: string): boolean;
  /** A glob covering every companion's name in that folder, for file watchers (which take globs). */
  nameGlob: string;
  /**
   * Companions that may also lie beside the opened file, among other traces' (told apart by
   * their first `headBytes` bytes): `ownerIn(head)` must equal `idOf(fileName)`. A file
   * whose name gives no id (null) has no companions at all, in the folder or beside it.
   */
  beside?: { headBytes: number; idOf(fileName: string): string | null; ownerIn(head: string): string | null };
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
  /**
   * The record with the parts its reader never reads left out (the same reading, fewer
   * bytes): what a parse thread hands the reader's thread (src/node/parallelParse.ts).
   * Formats without it are read on one thread.
   */
  slimRecord?(record: JsonObject): JsonObject;
  /** Reader for a whole document. */
  readDocument?(doc: JsonDocument): ReaderResult;
  /** A document as the records a content collector is fed (ParseOptions.recordTap), for a format read by readDocument whose text the context anatomy counts. */
  documentRecords?(doc: JsonDocument): TraceRecord[];
  /** Where its traces keep companion files (sub-agent logs), for a format that writes them apart (JSON Lines formats only). */
  companions?: CompanionLayout;
}
