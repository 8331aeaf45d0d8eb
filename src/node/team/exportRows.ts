import type { AnalysisOptions } from '../../core/analysis/sessionAnalysis';
import { contextAnatomy } from '../../core/context/contextAnatomy';
import type { ContextSource } from '../../core/context/contextView';
import type { PriceBook } from '../../core/cost/costTypes';
import { ID_FIELD, ID_LEARNT, type Redactor } from '../../core/redact/redactor';
import { isIdKey } from '../../core/redact/strictRules';
import { contextPartRows } from '../../core/team/contextRows';
import { buildTeamRows } from '../../core/team/teamRows';
import type { TeamIdentity, TeamRows } from '../../core/team/teamRows';
import { TEAM_TABLES } from '../../core/team/teamSchema';
import type { TeamColumn } from '../../core/team/teamSchema';
import type { FormatId } from '../../core/trace/model';
import { parseTrace } from '../../core/trace/parseTrace';
import type { ParsedTrace, TraceFile } from '../../core/trace/parseTrace';
import { assembleSession } from '../agentSessions';
import { parseWithContext } from '../contextCollect';
import type { FoundSession } from '../sessions/agentRegistry';
import { readTraceFiles } from '../traceFiles';
import { writeTeamParquet } from './parquetWrite';
import type { WrittenFiles } from './parquetWrite';

/**
 * One source trace of `export --to parquet`, from its files to its Parquet files: read,
 * parse, rows, redaction, Parquet. The same function runs in the CLI's own thread and on
 * the export's parse threads (exportPool.ts); only the redaction is the export's one
 * redactor's, asked through `redact`, so that its numbering of secrets and the ids it has
 * learnt follow the sources in order whichever thread built their rows.
 */

/** A source trace, as a thread is told of it (plain data: it crosses to a worker thread). */
export interface ExportJob {
  /** The source's path (a file, or the folder / file a session is assembled from). */
  path: string;
  /** A session assembled from several files (OpenHands, OpenCode), or null for a file read as it is. */
  assembled: FoundSession | null;
  /** The hash of the source's path that names its files (`part-<key>.parquet`). */
  key: string;
}

/** What every source of one export shares. */
export interface ExportSettings {
  outDir: string;
  machine: string;
  generator: string;
  identity: TeamIdentity;
  analysis: Partial<AnalysisOptions>;
  format: FormatId | null;
  /** Also the context_parts table (export --context). */
  context: boolean;
}

/** How one source ended: not read (with why), read but not written (with why), or written. */
export type ExportOutcome =
  | { kind: 'notRead'; message: string }
  | { kind: 'notWritten'; message: string }
  | { kind: 'written'; written: WrittenFiles };

/**
 * What the redactor is asked for one trace's rows: per table, the distinct values of its
 * trace-text cells in order of first occurrence with how often each occurs, and the ids its
 * id columns declare (each distinct (column, value) once, in order of first occurrence), as
 * places in that table's `distinct`: every id column is a trace-text column, so each id is
 * there already and crosses to the redactor's thread once. The texts repeat (a session id
 * on every row, the same command run again), so this is far smaller than the rows. Values,
 * not JSON: the redactor takes each as the one literal of its JSON
 * (Redactor.redactCountedValues), so nothing is written as JSON and read back.
 */
export interface RedactionRequest {
  tables: Array<{ distinct: string[]; weights: number[]; ids: number[] }>;
}

/**
 * Per table, the values redaction changed: their places in the request's `distinct`, and what
 * they became (most values come back as they were: they need not cross back).
 */
export type RedactionAnswer = Array<{ slots: number[]; values: string[] }>;

/** Whether a column holds the trace's own ids (conversation, response, tool-call ids): trace text under an id's name. */
export function isTraceIdColumn(column: TeamColumn): boolean {
  return column.fromTrace === true && isIdKey(column.name);
}

/** Per table, its trace-text columns (positions in its schema), and which of them hold the trace's own ids. */
const TEXT_COLUMNS = TEAM_TABLES.map((table) => {
  const positions: number[] = [];
  const isId: boolean[] = [];
  table.columns.forEach((c, j) => {
    if (!c.fromTrace) return;
    positions.push(j);
    isId.push(isTraceIdColumn(c));
  });
  return { positions, isId };
});

/** The request for `rows`, and how to put the answer back into them. */
export function redactionRequest(rows: TeamRows): {
  request: RedactionRequest;
  apply(answer: RedactionAnswer): void;
} {
  // One pass over each table's text cells, row by row as the redactor numbers them: the
  // distinct values with their counts and, for the id columns, each (column, value) the first
  // time it stands there. The id columns' values are declared first (answerRedaction), as a
  // trace's id fields are, so default redaction leaves them in every column; a session id
  // stands on every one of its rows: it is learnt once.
  const tables = TEAM_TABLES.map((table, t) => {
    const { positions, isId } = TEXT_COLUMNS[t]!;
    const rowsOf = rows[table.name];
    const columns = positions.map((j) => rowsOf.cells[j]!);
    const index = new Map<string, number>();
    const distinct: string[] = [];
    const weights: number[] = [];
    const ids: number[] = [];
    const seen = isId.map((id) => (id ? new Set<number>() : null));
    const n = rowsOf.length;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < columns.length; j++) {
        const value = columns[j]![i];
        if (typeof value !== 'string') continue;
        let slot = index.get(value);
        if (slot === undefined) {
          slot = distinct.length;
          index.set(value, slot);
          distinct.push(value);
          weights.push(1);
        } else weights[slot]! += 1;
        const column = seen[j];
        if (column && !column.has(slot)) {
          column.add(slot);
          ids.push(slot);
        }
      }
    }
    return { distinct, weights, ids };
  });
  return {
    request: { tables },
    apply(answer) {
      TEAM_TABLES.forEach((table, t) => {
        const { slots, values } = answer[t]!;
        if (slots.length === 0) return;
        // Each changed value's cells, found again by value (the rows are not changed between request and answer).
        const changed = new Map<string, string>();
        const distinct = tables[t]!.distinct;
        slots.forEach((slot, i) => changed.set(distinct[slot]!, values[i]!));
        const rowsOf = rows[table.name];
        for (const j of TEXT_COLUMNS[t]!.positions) {
          const column = rowsOf.cells[j]!;
          for (let i = 0; i < column.length; i++) {
            const value = column[i];
            if (typeof value !== 'string') continue;
            const redacted = changed.get(value);
            if (redacted !== undefined) column[i] = redacted;
          }
        }
      });
    },
  };
}

/**
 * The export's redactor answering one trace's request: every table's ids learnt first, then
 * each table's texts redacted (each distinct text scanned once, its findings counted as
 * often as it occurs): the same calls, in the same order, as redacting the rows in place.
 */
export async function answerRedaction(request: RedactionRequest, redactor: Redactor): Promise<RedactionAnswer> {
  // Per table, which of its distinct values stood in an id column (the trace's structure, never a shape finding), and
  // which were just learnt from as ids: not learnt from again, nor remembered.
  const learnt = request.tables.map(({ distinct, ids }) => {
    const flags = new Uint8Array(distinct.length);
    const done = redactor.learnIdValues(ids.map((slot) => distinct[slot]!));
    ids.forEach((slot, k) => {
      flags[slot]! |= ID_FIELD | (done[k] ? ID_LEARNT : 0);
    });
    return flags;
  });
  const out: RedactionAnswer = [];
  for (const [t, { distinct, weights }] of request.tables.entries()) {
    const redacted = await redactor.redactCountedValues(distinct, weights, learnt[t]);
    const slots: number[] = [];
    const values: string[] = [];
    redacted.forEach((value, slot) => {
      if (value !== distinct[slot]) {
        slots.push(slot);
        values.push(value);
      }
    });
    out.push({ slots, values });
  }
  return out;
}

/** Redacts every `fromTrace` text cell of the rows in place (the redactor numbers equal values alike). */
export async function redactTeamRows(rows: TeamRows, redactor: Redactor): Promise<void> {
  const { request, apply } = redactionRequest(rows);
  apply(await answerRedaction(request, redactor));
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

async function readJob(job: ExportJob): Promise<TraceFile[]> {
  if (!job.assembled) return readTraceFiles(job.path, { blocking: true });
  const found = job.assembled;
  return [
    { key: `${found.agentId}-session.json`, bytes: new TextEncoder().encode((await assembleSession(found)) ?? '') },
  ];
}

/** A source's rows, or why it has none: `{ outcome }` when it was not read or its rows could not be built. */
async function sourceRows(
  job: ExportJob,
  settings: ExportSettings,
  book: PriceBook,
): Promise<{ rows: TeamRows } | { outcome: ExportOutcome }> {
  let parsed: ParsedTrace;
  let context: ContextSource | null = null;
  try {
    const files = await readJob(job);
    if (settings.context) ({ parsed, context } = await parseWithContext(files, settings.format));
    else parsed = await parseTrace(files, settings.format ? { format: settings.format } : {});
  } catch (e) {
    return { outcome: { kind: 'notRead', message: message(e) } };
  }
  if (parsed.problem || parsed.model.sessions.length === 0)
    return { outcome: { kind: 'notRead', message: parsed.problem?.message ?? 'no session in it' } };
  try {
    const rows = buildTeamRows(parsed, { book, identity: settings.identity, analysis: settings.analysis });
    if (context)
      rows.context_parts = contextPartRows(
        contextAnatomy(parsed.model, { ...context, prices: book }),
        rows,
        settings.identity,
        parsed.model.format,
      );
    return { rows };
  } catch (e) {
    return { outcome: { kind: 'notWritten', message: message(e) } };
  }
}

/**
 * Exports one source: its Parquet files under the settings' folder, or why not. `redact` is
 * the export's redactor (null: --no-redact). The parse is out of scope before the wait for
 * the redaction: a thread keeps several sources waiting (ExportPool), their rows, not their
 * parses.
 */
export async function exportOne(
  job: ExportJob,
  settings: ExportSettings,
  book: PriceBook,
  redact: ((request: RedactionRequest) => Promise<RedactionAnswer>) | null,
): Promise<ExportOutcome> {
  const built = await sourceRows(job, settings, book);
  if ('outcome' in built) return built.outcome;
  const { rows } = built;
  try {
    if (redact) {
      const { request, apply } = redactionRequest(rows);
      apply(await redact(request));
    }
    const written = writeTeamParquet(settings.outDir, rows, settings.machine, job.key, settings.generator);
    return { kind: 'written', written };
  } catch (e) {
    // One trace that cannot be written (a figure out of its column's range) does not stop the others.
    return { kind: 'notWritten', message: message(e) };
  }
}
