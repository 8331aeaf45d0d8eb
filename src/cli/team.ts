import type * as DuckDb from '@duckdb/node-api';
import { existsSync } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, userInfo } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import { createPriceBook } from '../core/cost/priceBook';
import { NAMED_QUERIES, namedQuery, QUERY_VARIABLES } from '../core/team/namedQueries';
import { buildTeamRows, partitionValue } from '../core/team/teamRows';
import type { TeamIdentity } from '../core/team/teamRows';
import { OTLP_OWN_PREFIX, TEAM_SCHEMA_VERSION, TEAM_TABLES } from '../core/team/teamSchema';
import type { TeamColumnType, TeamTable } from '../core/team/teamSchema';
import { plainText } from '../core/sessions/sessionText';
import { terminalJson, terminalText } from '../core/text/safeText';
import { FORMATS } from '../core/trace/formats';
import type { FormatId } from '../core/trace/model';
import { parseTrace } from '../core/trace/parseTrace';
import type { ParsedTrace, TraceFile } from '../core/trace/parseTrace';
import { assembleSession } from '../node/agentSessions';
import { agentRoots, discoverSessions, resolveRoots } from '../node/sessions/agentRegistry';
import { createRedactor } from '../node/secretlintDetector';
import { longHash, shortHash } from '../node/team/parquetWrite';
import { exportOne, redactTeamRows, answerRedaction } from '../node/team/exportRows';
import type { ExportJob, ExportOutcome, ExportSettings } from '../node/team/exportRows';
import { ExportPool, exportThreadsFor } from '../node/team/exportPool';
import type { FoundSession } from '../node/sessions/agentRegistry';
import { postOtlp } from '../node/team/otlpPost';
import { COMPACTED, compactExport, loadDuckDb } from '../node/team/compact';
import type { Compaction } from '../node/team/compact';
import { batchRequests, stringAttr, teamRowsToOtlp } from '../core/team/otlpSpans';
import type { OtlpResourceSpans } from '../core/team/otlpSpans';
import { listCompanions, readTraceFiles } from '../node/traceFiles';
import { isDirectory, traceFilesIn } from './sessions';
import { redactionLine } from './share';
import { UsageError } from '../core/text/usageError';
import type { ReportDocument } from '../core/share/reportDocument';
import { TEAM_REPORT_SESSIONS, teamReportQueries } from '../core/team/teamReport';
import type { TeamReport, TeamReportTable } from '../core/team/teamReport';
import { readReportAssets, reportHtml } from '../node/htmlReport';
import { outputFile } from './outputFile';

/**
 * The team path (docs/guide/team.md): `export --to parquet` writes this machine's sessions
 * (or the traces named) as Parquet tables another engine reads, and `query` runs DuckDB SQL
 * over such a folder. DuckDB is a native module: loaded only by `query`, never bundled.
 */

export const TEAM_USAGE = `  agent-trace export --to parquet -o DIR [FILE|FOLDER]... [--context] [--compact] [--plain-names] [--user NAME] [--machine NAME] [--salt TEXT] [--full] [--format ID] [--no-redact]
  agent-trace export --to otlp (-o FILE | --endpoint URL [--header K=V]...) [FILE|FOLDER]... [--max-request-bytes N] [same identity options]
  agent-trace compact DIR                                               (merge an export folder's small files)
  agent-trace query DIR "SQL" [--json] [--set NAME=VALUE]... [--init SQL]...
  agent-trace query DIR --named NAME [--json] [--set NAME=VALUE]...   (--list: the named queries)
  agent-trace team-report DIR -o REPORT.html [--set NAME=VALUE]...     (every named query in one HTML file)`;

const EXPORT_HELP = `Usage: agent-trace export --to parquet -o DIR [FILE|FOLDER]... [options]

Writes LLM calls, tool calls and sessions (and, with --context, context parts) as Parquet tables (schema version ${TEAM_SCHEMA_VERSION},
docs/reference/parquet.md) under DIR/calls, DIR/tool_calls and DIR/sessions, Hive-partitioned
agent=…/date=…/machine=…. Without FILE or FOLDER: every agent session on this machine
(the folders \`agent-trace sessions\` reads). A trace whose files did not change since the
last export into DIR is not written again; one that grew is written whole again, replacing
its files.

  --plain-names     write the user and machine names as they are (default: a hash of each)
  --user NAME       the user name to record (default: this account's, ${safeUser()})
  --machine NAME    the machine name to record (default: this host's)
  --salt TEXT       salt the hashes (or AGENT_TRACE_TEAM_SALT): without one, a name can be
                    found again by hashing candidate names
  --full            write every trace again, changed or not
  --context         also write the context_parts table: what fills each call's input
                    (agent-trace context), counted with the model's tokenizer (slower)
  --compact         merge the folder's files into a few large ones afterwards
                    (agent-trace compact DIR): queries open far fewer files
  --format ID       read FILE as this format
  --no-redact       keep secrets: by default ids, paths, commands and error texts pass
                    through the same redaction as every export
`;

const OTLP_HELP = `Usage: agent-trace export --to otlp -o FILE [FILE|FOLDER]... [options]
       agent-trace export --to otlp --endpoint URL [--header K=V]... [FILE|FOLDER]... [options]

Writes the sessions as OpenTelemetry GenAI spans in OTLP/JSON (docs/reference/otlp.md): an
invoke_agent span per session (sub-agents under the tool call that started them), a chat
span per LLM call, an execute_tool span per tool call. -o FILE writes one
ExportTraceServiceRequest per line (the collector's file exporter's form; agent-trace reads
it back); --endpoint POSTs each of those lines to URL's /v1/traces (appended unless URL ends
with it) as Content-Type: application/json. Without FILE or FOLDER: every agent session on
this machine. Ids derive from the sessions' and calls' ids: exporting again gives the same
spans, so a backend that keeps span ids does not count them twice.

  -o FILE               write the OTLP/JSON to FILE
  --endpoint URL        POST to an OTLP/HTTP receiver (http://localhost:4318, Langfuse's
                        https://cloud.langfuse.com/api/public/otel, Phoenix's http://localhost:6006)
  --header K=V          a request header, e.g. --header "Authorization=Basic …" (repeatable)
  --max-request-bytes N the largest request body (default 4000000): larger exports go in batches
  --plain-names, --user, --machine, --salt, --format, --no-redact: as for --to parquet
`;

const QUERY_HELP = `Usage: agent-trace query DIR "SQL" [--json] [--set NAME=VALUE]...
       agent-trace query DIR --named NAME [--json] [--set NAME=VALUE]...
       agent-trace query --list

Runs DuckDB SQL over an export folder (agent-trace export --to parquet): the views calls,
tool_calls and sessions read DIR's Parquet files, partition columns agent, date, machine
included. DIR may be a local folder or an object store prefix (s3://bucket/prefix, gs://,
r2://: DuckDB's httpfs extension, downloaded by DuckDB on first use); --init runs a
statement first, e.g. --init "CREATE SECRET (TYPE s3, PROVIDER credential_chain)".
Output: an aligned table, or --json (an array of objects). --set defines a SQL variable
read with getvariable('NAME').

Named queries:
${NAMED_QUERIES.map((q) => `  ${q.name.padEnd(22)} ${q.description}`).join('\n')}
`;

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

interface TeamExportArgs {
  to: 'parquet' | 'otlp';
  out: string | null;
  endpoint: string | null;
  headers: Array<[string, string]>;
  maxRequestBytes: number;
  sources: string[];
  plainNames: boolean;
  user: string;
  machine: string;
  salt: string;
  format: FormatId | null;
  noRedact: boolean;
  full: boolean;
  compact: boolean;
  context: boolean;
}

/** The export folder's record of what it holds: per source trace (by its key), its stamp and files. */
interface ExportManifest {
  /** A hash of everything that shapes the rows (schema, version, identity, salt, redaction): another value rewrites all. */
  settings: string;
  sources: Record<string, { stamp: string; files: string[] }>;
  /** Source keys whose rows the compacted tier holds (kept whatever the settings: those rows stay until superseded). */
  compacted?: string[];
}

/** Beside the tables; the leading underscore keeps Spark and Hive from reading it as data. */
const MANIFEST = '_agent_trace_export.json';

function emptyManifest(settings: string, compacted: string[] = []): ExportManifest {
  return { settings, sources: {}, compacted };
}

async function readManifestFile(dir: string): Promise<Partial<ExportManifest> | null> {
  try {
    return JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as Partial<ExportManifest>;
  } catch {
    return null;
  }
}

async function readManifest(dir: string, settings: string, full = false): Promise<ExportManifest> {
  // No manifest, or an unreadable one, or other settings: export everything.
  const value = await readManifestFile(dir);
  const compacted = Array.isArray(value?.compacted) ? value.compacted.filter((k) => typeof k === 'string') : [];
  if (!full && value?.settings === settings && value.sources && typeof value.sources === 'object')
    return { settings, sources: value.sources, compacted };
  return emptyManifest(settings, compacted);
}

/**
 * Compacts the export folder (src/node/team/compact.ts) and records it in the folder's
 * manifest: every source's rows now live in the compacted tier, none in files of its own.
 */
export async function compactFolder(dir: string): Promise<Awaited<ReturnType<typeof compactExport>>> {
  const done = await compactExport(dir);
  const value = await readManifestFile(dir);
  const moved = new Set(
    done.removed.map((f) => /part-([0-9a-f]{16})\.parquet$/.exec(f)?.[1]).filter((k) => k !== undefined),
  );
  const compacted = new Set([...(Array.isArray(value?.compacted) ? value.compacted : []), ...moved]);
  const sources: ExportManifest['sources'] = {};
  for (const [key, entry] of Object.entries(value?.sources ?? {})) sources[key] = { stamp: entry.stamp, files: [] };
  await writeManifest(dir, { settings: value?.settings ?? '', sources, compacted: [...compacted].sort() });
  return done;
}

async function writeManifest(dir: string, manifest: ExportManifest): Promise<void> {
  const path = join(dir, MANIFEST);
  await writeFile(`${path}.tmp`, JSON.stringify(manifest));
  await rename(`${path}.tmp`, path);
}

/** `f` of each item, at most `limit` at once; the results in the items' order. */
async function inOrderLimited<T, R>(
  items: readonly T[],
  limit: number,
  f: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

async function allExist(paths: readonly string[]): Promise<boolean> {
  for (const p of paths) if (!existsSync(p)) return false;
  return true;
}

function parseTeamExportArgs(argv: readonly string[]): TeamExportArgs {
  const a: TeamExportArgs = {
    to: 'parquet',
    out: null,
    endpoint: null,
    headers: [],
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    sources: [],
    plainNames: false,
    user: safeUser(),
    machine: hostname(),
    salt: process.env['AGENT_TRACE_TEAM_SALT'] ?? '',
    format: null,
    noRedact: false,
    full: false,
    compact: false,
    context: false,
  };
  const to = argv[argv.indexOf('--to') + 1];
  if (to === 'otlp') a.to = 'otlp';
  const help = `agent-trace export --to ${a.to} --help`;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined || v === '') throw new UsageError(`export: ${flag} needs a value`, help);
      return v;
    };
    if (flag === '--to') {
      const v = value();
      if (v !== 'parquet' && v !== 'otlp') throw new UsageError('export: --to parquet or --to otlp expected', help);
    } else if (flag === '-o' || flag === '--out') a.out = value();
    else if (a.to === 'otlp' && flag === '--endpoint') a.endpoint = value();
    else if (a.to === 'otlp' && flag === '--header') {
      const spec = value();
      const m = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(spec);
      if (!m) throw new UsageError(`--header needs NAME=VALUE, not "${spec}"`, help);
      a.headers.push([m[1]!, m[2]!]);
    } else if (a.to === 'otlp' && flag === '--max-request-bytes') {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 10_000)
        throw new UsageError('--max-request-bytes needs a whole number of bytes, at least 10000', help);
      a.maxRequestBytes = n;
    } else if (flag === '--plain-names') a.plainNames = true;
    else if (flag === '--user') a.user = value();
    else if (flag === '--machine') a.machine = value();
    else if (flag === '--salt') a.salt = value();
    else if (flag === '--no-redact') a.noRedact = true;
    else if (flag === '--full' && a.to === 'parquet') a.full = true;
    else if (flag === '--compact' && a.to === 'parquet') a.compact = true;
    else if (flag === '--context' && a.to === 'parquet') a.context = true;
    else if (flag === '--format') {
      const f = value();
      const known = FORMATS.find((s) => s.id === f);
      if (!known) throw new UsageError(`unknown --format "${f}"; one of: ${FORMATS.map((s) => s.id).join(', ')}`, help);
      a.format = known.id;
    } else if (flag.startsWith('-') && flag !== '-')
      throw new UsageError(`export --to ${a.to}: unknown option ${flag}`, help);
    else a.sources.push(flag);
  }
  return a;
}

/** A trace to export: where it came from (its hash names the files) and how to parse it. */
interface ExportSource {
  path: string;
  parse(): Promise<ParsedTrace>;
  /** Sizes and times of every file the trace is read from: equal stamps, same trace. */
  stamp(): Promise<string>;
  /** A session assembled from several files (what an export thread is told to assemble), or null for a file. */
  assembled: FoundSession | null;
}

/** The size and modification time of each file, in order; a missing file stamps as missing. */
async function statStamp(paths: readonly string[]): Promise<string> {
  const parts: string[] = [];
  for (const p of paths)
    parts.push(
      await stat(p).then(
        (s) => `${s.size}:${s.mtimeMs}`,
        () => 'missing',
      ),
    );
  return parts.join(',');
}

async function exportSources(a: TeamExportArgs, note: (t: string) => void): Promise<ExportSource[]> {
  const byFormat = a.format ? { format: a.format } : {};
  const source = (
    path: string,
    read: () => Promise<TraceFile[]>,
    stamp: () => Promise<string>,
    assembled: FoundSession | null = null,
  ): ExportSource => ({
    path,
    parse: async () => parseTrace(await read(), byFormat),
    stamp,
    assembled,
  });
  const ofFile = (path: string): ExportSource =>
    source(
      path,
      () => readTraceFiles(path),
      // A session's sub-agent logs can grow while its own file does not.
      async () => statStamp([path, ...(await listCompanions(path)).files.map((c) => c.path)]),
    );
  if (a.sources.length > 0) {
    const out: ExportSource[] = [];
    for (const s of a.sources) {
      if (await isDirectory(s)) out.push(...(await traceFilesIn(s)).map(ofFile));
      else out.push(ofFile(s));
    }
    return out;
  }
  const { sessions, notes } = await discoverSessions(agentRoots(resolveRoots({})));
  for (const n of notes) note(`note: ${n}`);
  return sessions.map((found) =>
    found.assemble
      ? source(
          found.path,
          async () => [
            {
              key: `${found.agentId}-session.json`,
              bytes: new TextEncoder().encode((await assembleSession(found)) ?? ''),
            },
          ],
          async () => `${found.sizeBytes}:${found.mtimeMs}`,
          found,
        )
      : ofFile(found.path),
  );
}

/** `agent-trace export --to parquet -o DIR [FILE|FOLDER]...`: exit status. */
export async function runTeamExport(
  argv: readonly string[],
  generator: string,
  writeRaw: (t: string) => void,
  options: Partial<AnalysisOptions> = {},
): Promise<number> {
  // Paths, problems and notes come from the traces: control and bidi characters print as visible escapes.
  const write = (t: string): void => writeRaw(terminalText(t));
  if (argv.includes('--help') || argv.includes('-h')) {
    write(argv[argv.indexOf('--to') + 1] === 'otlp' ? OTLP_HELP : EXPORT_HELP);
    return 0;
  }
  const a = parseTeamExportArgs(argv);
  if (a.to === 'otlp') return runOtlpExport(a, generator, write, options);
  if (!a.out)
    throw new UsageError(
      'export --to parquet needs -o DIR (the folder the tables go into)',
      'agent-trace export --to parquet --help',
    );
  const { identity, machine } = exportIdentity(a);
  const redactor = a.noRedact ? null : createRedactor();
  const book = createPriceBook();
  const sources = await exportSources(a, write);
  const totals = {
    traces: 0,
    files: 0,
    bytes: 0,
    calls: 0,
    tool_calls: 0,
    sessions: 0,
    context_parts: 0,
    skipped: 0,
    unchanged: 0,
  };
  // What the folder already holds: a trace whose files did not change since, exported the same way, is not written again.
  const settings = shortHash(
    JSON.stringify([
      TEAM_SCHEMA_VERSION,
      generator,
      identity,
      machine,
      a.salt,
      a.noRedact,
      a.format,
      options,
      a.context,
    ]),
  );
  const manifest = await readManifest(a.out, settings, a.full);
  const inCompacted = new Set(manifest.compacted);
  // A source written again whose earlier rows sit in the compacted tier: compacted at the end, so no query counts it twice.
  // (An export stopped before that compaction left such sources behind: they count too.)
  let supersedes = Object.entries(manifest.sources).filter(([k, e]) => e.files.length > 0 && inCompacted.has(k)).length;
  let manifestWritten = Date.now();
  let unsaved = false;
  // The sources to write (those whose files changed), in order: the export threads build and write them, the redactor
  // takes their texts in this order, and the manifest records them in it.
  type Entry = {
    source: ExportSource;
    job: ExportJob;
    stamp: string;
    before: ExportManifest['sources'][string] | undefined;
  };
  const todo: Entry[] = [];
  const outDir = a.out;
  const exportSettings: ExportSettings = {
    outDir,
    machine,
    generator,
    identity,
    analysis: options,
    format: a.format,
    context: a.context,
  };
  // Threads when there is more than one trace to write and their script is beside this bundle (dist/teamExportWorker.js);
  // otherwise, and for the unit tests that run this file from source, everything in this thread.
  const script = join(__dirname, 'teamExportWorker.js');
  const threads: { count: number; pool: ExportPool | null } = { count: 0, pool: null };
  const startThreads = (writing: number): void => {
    threads.count = existsSync(script) ? exportThreadsFor(writing) : 0;
    threads.pool = threads.count > 0 ? new ExportPool(script, threads.count, exportSettings, redactor) : null;
  };
  const run = (job: ExportJob): Promise<ExportOutcome> =>
    threads.pool
      ? threads.pool.run(job)
      : exportOne(job, exportSettings, book, redactor ? (request) => answerRedaction(request, redactor) : null);
  // Eight unfinished sources per thread, so a thread whose sources wait for their redaction (behind a large source on
  // the other thread) parses the next ones: with three, the threads sat idle 6-8% of the export (docs/performance.md).
  // A waiting source holds its rows, not its parse (exportOne). A source that finishes makes room at once, not when
  // the ones before it are taken (outcomes are taken in order).
  const queued: Array<{ entry: Entry; outcome: Promise<ExportOutcome> }> = [];
  let next = 0;
  let unfinished = 0;
  const fill = (): void => {
    const ahead = Math.max(1, threads.count * 8);
    while (next < todo.length && unfinished < ahead && queued.length < ahead * 4) {
      const entry = todo[next++]!;
      const outcome = run(entry.job);
      unfinished += 1;
      const finished = (): void => {
        unfinished -= 1;
        fill();
      };
      outcome.then(finished, finished);
      queued.push({ entry, outcome });
    }
  };
  // Each source's stamp (taken before it is read: a file that grows meanwhile is written again next time) and files
  // checked 32 at a time: one after another, the waits for the file system were most of an export with nothing to
  // write (0.66 of its 1.1 s) and held back the first source of every export.
  const check = async (source: ExportSource) => {
    const key = shortHash(resolve(source.path), a.salt);
    const stamp = await source.stamp();
    const before = manifest.sources[key];
    const unchanged =
      before !== undefined && before.stamp === stamp && (await allExist(before.files.map((f) => join(outDir, f))));
    return { source, key, stamp, before, unchanged };
  };
  const take = ({ source, key, stamp, before, unchanged }: Awaited<ReturnType<typeof check>>): void => {
    if (unchanged) totals.unchanged += 1;
    else todo.push({ source, job: { path: source.path, assembled: source.assembled, key }, stamp, before });
  };
  // Nothing recorded (a new folder, other settings, --full): every source is written. The threads start loading their
  // bundle now, and each source is handed out as soon as it and those before it are checked, not after the last one
  // (about 0.2 s of a first export's start on the bench's 1,000 sessions; docs/performance.md).
  const everything = Object.keys(manifest.sources).length === 0;
  /** While sources are still being checked (`done` false): what the loop below waits on when every checked one is taken. */
  const checking: { done: boolean; progress: Promise<void>; failed: unknown } = {
    done: true,
    progress: Promise.resolve(),
    failed: null,
  };
  if (everything) {
    startThreads(sources.length);
    const results: Array<Awaited<ReturnType<typeof check>> | null> = sources.map(() => null);
    let ready = 0;
    let wake = (): void => undefined;
    const rearm = (): void => {
      checking.progress = new Promise<void>((r) => (wake = r));
    };
    rearm();
    checking.done = false;
    void inOrderLimited(sources, 32, async (source, i) => {
      results[i] = await check(source);
      for (; ready < results.length && results[ready] !== null; ready++) take(results[ready]!);
      fill();
      wake();
      rearm();
    }).then(
      () => {
        checking.done = true;
        wake();
      },
      (e: unknown) => {
        checking.failed = e ?? new Error('checking the sources failed');
        wake();
      },
    );
  } else {
    for (const c of await inOrderLimited(sources, 32, check)) take(c);
    startThreads(todo.length);
  }
  try {
    fill();
    for (;;) {
      if (queued.length === 0) {
        if (checking.failed) throw checking.failed;
        if (checking.done) break;
        await checking.progress;
        continue;
      }
      const { entry, outcome: pending } = queued.shift()!;
      const outcome = await pending;
      fill();
      const { source, job, stamp, before } = entry;
      if (outcome.kind !== 'written') {
        totals.skipped += 1;
        write(
          `${plainText(source.path, 300)}: ${outcome.kind === 'notRead' ? 'not read' : 'not written'} (${plainText(outcome.message, 200)})\n`,
        );
        continue;
      }
      const { written } = outcome;
      const key = job.key;
      // Files of the trace's last export it did not write again (a partition it left) are removed.
      const now = written.files.map((f) => relative(outDir, f).split(sep).join('/'));
      for (const old of before?.files ?? []) if (!now.includes(old)) await rm(join(outDir, old), { force: true });
      manifest.sources[key] = { stamp, files: now };
      if (inCompacted.has(key) && !before?.files.length) supersedes += 1;
      // Written every few seconds, not after every trace (a rewrite of the whole record each time: quadratic over a
      // machine's sessions); an export stopped in between writes the traces after the last record again, no more.
      unsaved = true;
      if (Date.now() - manifestWritten >= 2000) {
        await writeManifest(outDir, manifest);
        manifestWritten = Date.now();
        unsaved = false;
      }
      totals.traces += 1;
      totals.files += written.files.length;
      totals.bytes += written.bytes;
      for (const t of TEAM_TABLES) totals[t.name] += written.rows[t.name];
    }
  } finally {
    await threads.pool?.close();
  }
  if (unsaved) await writeManifest(a.out, manifest);
  const compacted = a.compact || supersedes > 0 ? await compactFolder(a.out) : null;
  const lines = [
    `${a.out}: ${totals.sessions} sessions, ${totals.calls} LLM calls, ${totals.tool_calls} tool calls${a.context ? `, ${totals.context_parts} context parts` : ''} from ${totals.traces} trace${totals.traces === 1 ? '' : 's'}` +
      ` in ${totals.files} Parquet files (${(totals.bytes / 1024).toFixed(0)} KB, schema version ${TEAM_SCHEMA_VERSION})` +
      `${totals.unchanged > 0 ? `; ${totals.unchanged} unchanged since the last export, not written again (--full rewrites them)` : ''}${totals.skipped > 0 ? `; ${totals.skipped} not read` : ''}`,
    a.plainNames
      ? `user and machine written as they are: ${a.user}, ${machine}`
      : `user and machine hashed${a.salt ? ' with the salt' : ' (no salt: --salt or AGENT_TRACE_TEAM_SALT makes them unguessable)'}: user.hash ${identity.userHash}, machine=${machine}`,
    redactor ? redactionLine(redactor.summary()) : 'redaction: off (--no-redact)',
    ...(compacted ? [compactionLine(a.out, compacted, supersedes > 0 && !a.compact ? supersedes : 0)] : []),
    `query it: agent-trace query ${a.out} --named cost-by-user-day`,
  ];
  write(lines.join('\n') + '\n');
  return totals.traces > 0 || totals.unchanged > 0 || sources.length === 0 ? 0 : 1;
}

/** One line on what a compaction did. */
function compactionLine(dir: string, done: Compaction, superseded: number): string {
  const read = done.tables.reduce((n, t) => n + t.filesRead, 0);
  const written = done.tables.reduce((n, t) => n + t.filesWritten, 0);
  const bytes = done.tables.reduce((n, t) => n + t.bytes, 0);
  const why =
    superseded > 0
      ? ` (${superseded} trace${superseded === 1 ? '' : 's'} written again replaced ${superseded === 1 ? 'its' : 'their'} compacted rows)`
      : '';
  return `compacted${why}: ${read} files into ${written} under ${join(dir, COMPACTED)} (${(bytes / 2 ** 20).toFixed(1)} MB; ${done.tables.map((t) => `${t.name} ${t.rows}`).join(', ')} rows)`;
}

const COMPACT_HELP = `Usage: agent-trace compact DIR

Merges an export folder's many small files (one per source trace and partition) into a few
large ones under DIR/${COMPACTED}/<table>/, sorted by date, agent and machine: a query's
time follows the number of files it opens. Incremental exports into DIR keep working: a
trace exported again replaces its compacted rows. Compact a folder that one process
writes (a machine's own export folder, or a team copy a job builds): docs/guide/team.md.
\`agent-trace export --to parquet --compact\` compacts after exporting.
`;

/** \`agent-trace compact DIR\`: exit status. */
export async function runCompact(argv: readonly string[], writeErr: (t: string) => void): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    writeErr(COMPACT_HELP);
    return 0;
  }
  const help = 'agent-trace compact --help';
  const dirs = argv.filter((x) => !x.startsWith('-'));
  const unknown = argv.find((x) => x.startsWith('-'));
  if (unknown) throw new UsageError(`compact: unknown option ${unknown}`, help);
  if (dirs.length !== 1)
    throw new UsageError('compact needs one DIR (an agent-trace export --to parquet folder)', help);
  const dir = dirs[0]!;
  if (!(await isDirectory(dir))) throw new UsageError(`compact: no such folder: ${dir}`, help);
  try {
    writeErr(terminalText(compactionLine(dir, await compactFolder(dir), 0) + '\n'));
  } catch (e) {
    writeErr(terminalText(`agent-trace compact: ${e instanceof Error ? e.message : String(e)}\n`));
    return 1;
  }
  return 0;
}

/** OTLP receivers limit a request's size (the collector's default is 20 MiB); 4 MB stays well under the common limits. */
const DEFAULT_MAX_REQUEST_BYTES = 4_000_000;

/** Who ran the sessions and where, as both exports write them. */
function exportIdentity(a: TeamExportArgs): { identity: TeamIdentity; machine: string } {
  const identity: TeamIdentity = a.plainNames
    ? { userHash: null, userName: a.user }
    : { userHash: shortHash(a.user, a.salt), userName: null };
  // A hashed machine starts with a letter: engines that infer partition types (Spark) would read 16 hex digits like 1234e567… as a number.
  const machine = partitionValue(a.plainNames ? a.machine : `h${shortHash(a.machine, a.salt)}`);
  return { identity, machine };
}

/** `agent-trace export --to otlp`: the sessions as GenAI spans, to a file and/or an OTLP/HTTP endpoint. */
async function runOtlpExport(
  a: TeamExportArgs,
  generator: string,
  write: (t: string) => void,
  options: Partial<AnalysisOptions>,
): Promise<number> {
  const help = 'agent-trace export --to otlp --help';
  if (!a.out && !a.endpoint) throw new UsageError('export --to otlp needs -o FILE or --endpoint URL', help);
  if (a.endpoint !== null && !/^https?:\/\//i.test(a.endpoint))
    throw new UsageError(`--endpoint needs an http:// or https:// URL, not "${a.endpoint}"`, help);
  const { identity, machine } = exportIdentity(a);
  const redactor = a.noRedact ? null : createRedactor();
  const book = createPriceBook();
  const sources = await exportSources(a, write);
  const resources: OtlpResourceSpans[] = [];
  const totals = { traces: 0, sessions: 0, calls: 0, tools: 0, skipped: 0 };
  const identityAttrs = [
    ...(identity.userHash !== null ? [stringAttr('user.hash', identity.userHash)] : []),
    ...(identity.userName !== null ? [stringAttr('user.name', identity.userName)] : []),
    stringAttr(`${OTLP_OWN_PREFIX}machine`, machine),
  ];
  const [scopeName, scopeVersion] = generator.split(' ');
  // Sources in a stable order: the same traces export the same bytes.
  for (const source of [...sources].sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0))) {
    let parsed: ParsedTrace;
    try {
      parsed = await source.parse();
    } catch (e) {
      totals.skipped += 1;
      write(
        `${plainText(source.path, 300)}: not read (${plainText(e instanceof Error ? e.message : String(e), 200)})\n`,
      );
      continue;
    }
    if (parsed.problem || parsed.model.sessions.length === 0) {
      totals.skipped += 1;
      write(
        `${plainText(source.path, 300)}: not read (${plainText(parsed.problem?.message ?? 'no session in it', 200)})\n`,
      );
      continue;
    }
    const rows = buildTeamRows(parsed, { book, identity, analysis: options });
    if (redactor) await redactTeamRows(rows, redactor);
    resources.push(
      ...teamRowsToOtlp(rows, {
        hexHash: longHash,
        sourceKey: shortHash(resolve(source.path), a.salt),
        identity: identityAttrs,
        scope: { name: scopeName ?? 'agent-trace', version: scopeVersion ?? '' },
      }),
    );
    totals.traces += 1;
    totals.sessions += rows.sessions.length;
    totals.calls += rows.calls.length;
    totals.tools += rows.tool_calls.length;
  }
  const requests = batchRequests(resources, a.maxRequestBytes);
  const bodies = requests.map((r) => JSON.stringify(r));
  const spans = totals.sessions + totals.calls + totals.tools;
  const what = `${totals.sessions} sessions, ${totals.calls} LLM calls, ${totals.tools} tool calls from ${totals.traces} trace${totals.traces === 1 ? '' : 's'} as ${spans} spans in ${resources.length} OTLP trace${resources.length === 1 ? '' : 's'}`;
  const lines: string[] = [];
  if (a.out) {
    const text = bodies.join('\n') + (bodies.length > 0 ? '\n' : '');
    await writeFile(`${a.out}.tmp`, text);
    await rename(`${a.out}.tmp`, a.out);
    lines.push(
      `${a.out}: ${what}, ${bodies.length} request${bodies.length === 1 ? '' : 's'} (${(Buffer.byteLength(text) / 1024).toFixed(0)} KB)${totals.skipped > 0 ? `; ${totals.skipped} not read` : ''}`,
    );
  }
  let status = totals.traces > 0 || sources.length === 0 ? 0 : 1;
  if (a.endpoint) {
    const sent = await postOtlp(a.endpoint, bodies, a.headers);
    if (sent.error) {
      write(`agent-trace export --to otlp: ${sent.error}\n`);
      status = 1;
    } else
      lines.push(
        `${sent.url}: ${what}, sent in ${bodies.length} request${bodies.length === 1 ? '' : 's'}${sent.rejectedSpans > 0 ? `; the receiver rejected ${sent.rejectedSpans} spans${sent.message ? ` (${sent.message})` : ''}` : ''}`,
      );
  }
  lines.push(
    a.plainNames
      ? `user and machine written as they are: ${a.user}, ${machine}`
      : `user and machine hashed${a.salt ? ' with the salt' : ' (no salt: --salt or AGENT_TRACE_TEAM_SALT makes them unguessable)'}: user.hash ${identity.userHash}, machine ${machine}`,
    redactor ? redactionLine(redactor.summary()) : 'redaction: off (--no-redact)',
  );
  write(lines.join('\n') + '\n');
  return status;
}

/** A SQL string literal. */
function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** A value for `SET VARIABLE`: a number as a number, anything else as text. */
function sqlValue(text: string): string {
  return /^-?\d+(\.\d+)?$/.test(text) ? text : sqlString(text);
}

/** Whether DIR is read by DuckDB's httpfs (s3://, https://, gs://…) rather than from this disk. */
function isRemote(dir: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(dir) && !/^file:\/\//i.test(dir);
}

const DUCKDB_TYPES: Readonly<Record<TeamColumnType, string>> = {
  STRING: 'VARCHAR',
  INT32: 'INTEGER',
  INT64: 'BIGINT',
  DOUBLE: 'DOUBLE',
  BOOLEAN: 'BOOLEAN',
  TIMESTAMP: 'TIMESTAMP',
};

/**
 * The statement that defines one table's view over an export folder: the export's own files
 * (Hive-partitioned) and the compacted tier (`compact`), whichever hold files. A table with
 * neither (an export without a single tool call) is an empty view of the same columns, so
 * every named query runs on every export.
 */
export function viewStatement(dir: string, table: TeamTable, has: { raw: boolean; compacted: boolean }): string {
  const base = dir.replace(/\/+$/, '');
  const parts: string[] = [];
  if (has.raw)
    parts.push(
      `SELECT * FROM read_parquet(${sqlString(`${base}/${table.name}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true, ` +
        `hive_types = {'agent': VARCHAR, 'date': DATE, 'machine': VARCHAR})`,
    );
  if (has.compacted)
    parts.push(
      `SELECT * EXCLUDE (export_source) FROM read_parquet(${sqlString(`${base}/${COMPACTED}/${table.name}/*.parquet`)}, union_by_name = true)`,
    );
  if (parts.length === 0)
    return `CREATE OR REPLACE VIEW ${table.name} AS SELECT ${table.columns.map((c) => `NULL::${DUCKDB_TYPES[c.type]} AS "${c.name}"`).join(', ')}, NULL::VARCHAR AS agent, NULL::DATE AS date, NULL::VARCHAR AS machine WHERE false`;
  return `CREATE OR REPLACE VIEW ${table.name} AS ${parts.join(' UNION ALL BY NAME ')}`;
}

/** Defines the views calls, tool_calls and sessions over `dir` on the connection (DuckDB lists the folder: local or object store). */
async function defineViews(connection: DuckDb.DuckDBConnection, dir: string): Promise<void> {
  const base = dir.replace(/\/+$/, '');
  const any = async (pattern: string): Promise<boolean> =>
    Number(
      (await connection.runAndReadAll(`SELECT count(*) FROM glob(${sqlString(pattern)})`)).getRows()[0]?.[0] ?? 0,
    ) > 0;
  for (const t of TEAM_TABLES) {
    const has = {
      raw: await any(`${base}/${t.name}/**/*.parquet`),
      compacted: await any(`${base}/${COMPACTED}/${t.name}/*.parquet`),
    };
    await connection.run(viewStatement(dir, t, has));
  }
}

/** A DuckDB value as JSON: integers as numbers while exact, dates and times as text. */
function plainValue(v: unknown): string | number | boolean | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'bigint')
    return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString();
  const o = v as { toDouble?: () => number; toString(): string };
  if (typeof o.toDouble === 'function') return o.toDouble();
  return o.toString();
}

function cellText(v: string | number | boolean | null): string {
  if (v === null) return '';
  if (typeof v === 'number' && !Number.isInteger(v)) return String(Number(v.toPrecision(6)));
  return String(v);
}

/** Rows as an aligned table: numbers to the right. */
export function renderTable(
  columns: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | number | boolean | null>>,
): string {
  const texts = rows.map((r) => r.map((v) => cellText(v).replace(/\s+/g, ' ').slice(0, 80)));
  const widths = columns.map((c, j) => Math.max(c.length, ...texts.map((r) => r[j]!.length)));
  const numeric = columns.map(
    (_, j) => rows.length > 0 && rows.every((r) => r[j] === null || typeof r[j] === 'number'),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((c, j) => (numeric[j] ? c.padStart(widths[j]!) : c.padEnd(widths[j]!)))
      .join('  ')
      .trimEnd();
  return (
    [line(columns), line(widths.map((w) => '-'.repeat(w))), ...texts.map(line)].join('\n') +
    `\n(${rows.length} row${rows.length === 1 ? '' : 's'})\n`
  );
}

interface QueryArgs {
  dir: string | null;
  sql: string | null;
  named: string | null;
  json: boolean;
  list: boolean;
  set: Array<[string, string]>;
  init: string[];
}

function parseQueryArgs(argv: readonly string[]): QueryArgs {
  const a: QueryArgs = { dir: null, sql: null, named: null, json: false, list: false, set: [], init: [] };
  const help = 'agent-trace query --help';
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '--json') a.json = true;
    else if (flag === '--list') a.list = true;
    else if (flag === '--named') {
      const name = argv[++i];
      if (!name || !namedQuery(name))
        throw new UsageError(
          `--named needs one of: ${NAMED_QUERIES.map((q) => q.name).join(', ')}${name ? `, not "${name}"` : ''}`,
          help,
        );
      a.named = name;
    } else if (flag === '--set') {
      const spec = argv[++i] ?? '';
      const m = /^([A-Za-z_]\w*)=(.*)$/.exec(spec);
      if (!m) throw new UsageError(`--set needs NAME=VALUE, not "${spec}"`, help);
      a.set.push([m[1]!, m[2]!]);
    } else if (flag === '--init') {
      const statement = argv[++i];
      if (!statement) throw new UsageError('--init needs a SQL statement (e.g. CREATE SECRET for s3://)', help);
      a.init.push(statement);
    } else if (flag.startsWith('--')) throw new UsageError(`query: unknown option ${flag}`, help);
    else if (a.dir === null) a.dir = flag;
    else if (a.sql === null) a.sql = flag;
    else throw new UsageError(`query: unexpected argument ${flag} (quote the SQL as one argument)`, help);
  }
  return a;
}

/** A query's answer: column names and plain rows. */
export interface QueryResult {
  columns: string[];
  rows: Array<Array<string | number | boolean | null>>;
}

/** Runs SQL over an export folder: column names and plain rows. */
export async function queryFolder(
  dir: string,
  sql: string,
  variables: ReadonlyArray<[string, string]> = [],
  init: readonly string[] = [],
): Promise<QueryResult> {
  return (await queryFolderAll(dir, [sql], variables, init))[0]!;
}

/** Runs several statements over an export folder on one connection (the views and variables defined once). */
export async function queryFolderAll(
  dir: string,
  sqls: readonly string[],
  variables: ReadonlyArray<[string, string]> = [],
  init: readonly string[] = [],
): Promise<QueryResult[]> {
  const { DuckDBInstance } = await loadDuckDb();
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    // --init first: a remote folder's credentials (CREATE SECRET) must exist before the views read its listing.
    for (const statement of init) await connection.run(statement);
    await defineViews(connection, dir);
    const vars = new Map<string, string>(Object.entries(QUERY_VARIABLES).map(([k, v]) => [k, String(v)]));
    for (const [k, v] of variables) vars.set(k, v);
    for (const [k, v] of vars) await connection.run(`SET VARIABLE ${k} = ${sqlValue(v)}`);
    const results: QueryResult[] = [];
    for (const sql of sqls) {
      const reader = await connection.runAndReadAll(sql);
      results.push({ columns: reader.columnNames(), rows: reader.getRows().map((r) => r.map(plainValue)) });
    }
    return results;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const TEAM_REPORT_HELP = `Usage: agent-trace team-report DIR -o REPORT.html [--set NAME=VALUE]... [--init SQL]...

Runs every named team query (agent-trace query --list) over an export folder
(agent-trace export --to parquet) and writes them into one self-contained HTML file: the
folder's totals, its sessions (the ${TEAM_REPORT_SESSIONS} costliest), then a table per query. The
file opens offline in any browser (strict Content-Security-Policy, no request); every value
is drawn as text. DIR may be an object store prefix, as for query (--init for credentials).
--set sets a query variable (budget_usd, top).
`;

/** \`agent-trace team-report DIR -o REPORT.html\`: exit status. */
export async function runTeamReport(
  argv: readonly string[],
  generator: string,
  writeErr: (t: string) => void,
): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    writeErr(TEAM_REPORT_HELP);
    return 0;
  }
  const help = 'agent-trace team-report --help';
  let dir: string | null = null;
  let out: string | null = null;
  const set: Array<[string, string]> = [];
  const init: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (flag === '-o' || flag === '--out') {
      out = argv[++i] ?? null;
      if (!out) throw new UsageError('-o needs a file name (REPORT.html)', help);
    } else if (flag === '--set') {
      const m = /^([A-Za-z_]\w*)=(.*)$/.exec(argv[++i] ?? '');
      if (!m) throw new UsageError(`--set needs NAME=VALUE, not "${argv[i] ?? ''}"`, help);
      set.push([m[1]!, m[2]!]);
    } else if (flag === '--init') {
      const statement = argv[++i];
      if (!statement) throw new UsageError('--init needs a SQL statement (e.g. CREATE SECRET for s3://)', help);
      init.push(statement);
    } else if (flag.startsWith('-')) throw new UsageError(`team-report: unknown option ${flag}`, help);
    else if (dir === null) dir = flag;
    else throw new UsageError(`team-report: unexpected argument ${flag}`, help);
  }
  if (!dir) throw new UsageError('team-report needs DIR (an agent-trace export --to parquet folder)', help);
  if (!out) throw new UsageError('team-report needs -o REPORT.html', help);
  if (!isRemote(dir) && !(await isDirectory(dir))) throw new UsageError(`team-report: no such folder: ${dir}`, help);
  await outputFile(out, undefined, '-o', help);
  const queries = teamReportQueries();
  let results: QueryResult[];
  try {
    results = await queryFolderAll(
      dir,
      queries.map((q) => q.sql),
      set,
      init,
    );
  } catch (e) {
    writeErr(terminalText(`agent-trace team-report: ${e instanceof Error ? e.message : String(e)}\n`));
    return 1;
  }
  const tables: TeamReportTable[] = queries.map((q, i) => ({
    name: q.name,
    description: q.description,
    columns: results[i]!.columns,
    rows: results[i]!.rows,
  }));
  const team: TeamReport = { source: dir, totals: tables[0]!, sessions: tables[1]!, queries: tables.slice(2) };
  const doc: ReportDocument = {
    schema: 1,
    title: `Agent trace team report: ${dir}`,
    generatedAt: new Date().toISOString(),
    generator,
    traces: [],
    redaction: null,
    team,
  };
  // The CLI runs as dist/cli.js: the report's page and stylesheet are beside it.
  const html = reportHtml(doc, await readReportAssets(resolve(__dirname, '..')));
  await outputFile(out, html, '-o', help);
  const totals = Object.fromEntries(team.totals.columns.map((c, j) => [c, team.totals.rows[0]?.[j] ?? null]));
  writeErr(
    terminalText(
      `${out}: ${String(totals['sessions'])} sessions, ${String(totals['llm_calls'])} LLM calls, ${team.queries.length} named queries, ${(Buffer.byteLength(html) / 1024).toFixed(0)} KB; opens offline in any browser\n`,
    ),
  );
  return 0;
}

/** `agent-trace query DIR "SQL" | --named NAME`: exit status. */
export async function runQuery(
  argv: readonly string[],
  write: (t: string) => void,
  writeErr: (t: string) => void,
): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    write(QUERY_HELP);
    return 0;
  }
  const a = parseQueryArgs(argv);
  if (a.list) {
    write(NAMED_QUERIES.map((q) => `${q.name}\n  ${q.description}\n\n${q.sql.replace(/^/gm, '    ')}\n`).join('\n'));
    return 0;
  }
  if (!a.dir)
    throw new UsageError('query needs DIR (an agent-trace export --to parquet folder)', 'agent-trace query --help');
  if (a.named && a.sql) throw new UsageError('query takes SQL or --named NAME, not both', 'agent-trace query --help');
  const sql = a.named ? namedQuery(a.named)!.sql : a.sql;
  if (!sql) throw new UsageError('query needs "SQL" or --named NAME (--list shows them)', 'agent-trace query --help');
  if (!isRemote(a.dir) && !(await isDirectory(a.dir)))
    throw new UsageError(`query: no such folder: ${a.dir}`, 'agent-trace query --help');
  let result;
  try {
    result = await queryFolder(a.dir, sql, a.set, a.init);
  } catch (e) {
    writeErr(terminalText(`agent-trace query: ${e instanceof Error ? e.message : String(e)}\n`));
    return 1;
  }
  if (a.json)
    write(
      terminalJson(
        JSON.stringify(
          result.rows.map((r) => Object.fromEntries(result.columns.map((c, j) => [c, r[j]]))),
          null,
          2,
        ),
      ) + '\n',
    );
  else write(terminalText(renderTable(result.columns, result.rows)));
  return 0;
}
