import { mkdir, realpath, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { RedactionMode } from '../core/redact/redactor';
import {
  buildReplayExport,
  REPLAY_BLOCK_TOKENS,
  REPLAY_TARGETS,
  replayJsonLines,
  ReplayError,
} from '../core/replay/replayExport';
import type { ReplayExport, ReplayOptions, ReplayTarget } from '../core/replay/replayExport';
import { buildWekaExport, WEKA_BLOCK_TOKENS, wekaJson } from '../core/replay/wekaExport';
import type { WekaExport } from '../core/replay/wekaExport';
import { formatPercent } from '../core/text/formatNumbers';
import { compareReplay, predictReplay } from '../core/replay/compareReplay';
import type { ReplayComparison } from '../core/replay/compareReplay';
import { renderComparison, resultsProblemText } from '../core/replay/compareText';
import { whatIfParams } from '../core/share/whatIfDocument';
import { runFast } from '../core/sim/engines/fastEngine';
import { describeBound, ParamError, REPLICA_BOUNDS, withinBound } from '../core/sim/params';
import type { EngineParams } from '../core/sim/params';
import { FORMATS } from '../core/trace/formats';
import type { FormatId } from '../core/trace/model';
import { parseTrace } from '../core/trace/parseTrace';
import { parseWithContext } from '../node/contextCollect';
import type { ParsedTrace } from '../core/trace/parseTrace';
import { buildReportTrace } from '../core/share/reportDocument';
import type { ReportDocument, ReportTrace } from '../core/share/reportDocument';
import { createPriceBook } from '../core/cost/priceBook';
import { parseWhatIfDocument, WhatIfDocumentError } from '../core/share/whatIfDocument';
import type { WhatIfDocument } from '../core/share/whatIfDocument';
import { readReportAssets, redactReport, reportHtml } from '../node/htmlReport';
import { redactTraceFiles } from '../node/redactFiles';
import { createRedactor } from '../node/secretlintDetector';
import { readJsonFile, readTraceFiles } from '../node/traceFiles';
import { printError, printJson, printText } from './output';
import { outputFile } from './outputFile';
import { UsageError } from '../core/text/usageError';
import { redactionLine, redactionModeFlag, redactJsonLinesText } from './redaction';

// Kept here too: the commands import them from this module.
export { redactionLine, redactionModeFlag, redactJsonLinesText };

/**
 * The commands that take a trace out of the machine: `redact`, `export` (and the
 * redaction step of `convert` and `report`). Everything they write passes through the
 * redactor unless `--no-redact` is given; what was redacted is printed as kinds and
 * counts, never values.
 */

export const SHARE_USAGE = `  agent-trace report FILE... -o REPORT.html [--session ID]... [--whatif W.json] [--format ID] [--redact strict] [--no-redact]
  agent-trace redact FILE -o OUT [--format ID] [--redact strict]
  agent-trace compare FILE RESULTS [--to aiperf|mooncake|bailian] [--replicas N] [--stagger-s S] [--session ID]... [--whatif W.json] [--json] [--redact strict]
  agent-trace export FILE --to mooncake|aiperf|bailian -o OUT.jsonl [--replicas N] [--stagger-s S] [--session ID]... [--format ID] [--redact strict] [--no-redact]
  agent-trace export FILE --to weka -o OUT.json|DIR/ [--session ID]... [--format ID] [--redact strict] [--no-redact]`;

/** Flags shared by the share commands, parsed strictly. */
export interface ShareArgs {
  files: string[];
  out: string | null;
  format: FormatId | null;
  noRedact: boolean;
  /** `--redact strict`: also take bare hex, UUIDs, long numbers, short random tokens and user:password pairs. */
  redact: RedactionMode;
  /** A block-hash target, or `weka` (the kv-cache-tester agentic trace: documents, not rows). */
  to: ReplayTarget | 'weka' | null;
  replicas: number;
  staggerS: number;
  sessions: string[];
  whatIf: string | null;
  json: boolean;
}

/**
 * A replica count or stagger from the command line, within the simulator's own bounds
 * (REPLICA_BOUNDS): `--replicas 1e12` asked for a trillion copies of every session and
 * never finished.
 */
function replicaFlag(
  flag: string,
  v: string | undefined,
  bound: (typeof REPLICA_BOUNDS)['replicas' | 'staggerS'],
): number {
  const n = v === undefined || v.trim() === '' ? Number.NaN : Number(v);
  if (!withinBound(n, bound)) throw new UsageError(`${flag} needs ${describeBound(bound)}, not "${v ?? ''}"`);
  return n;
}

/** Parses the flags `allowed` names (plus FILE arguments); anything else is a usage error naming it. */
export function parseShareArgs(command: string, argv: readonly string[], allowed: readonly string[]): ShareArgs {
  const a: ShareArgs = {
    files: [],
    out: null,
    format: null,
    noRedact: false,
    redact: 'default',
    to: null,
    replicas: 1,
    staggerS: 0,
    sessions: [],
    whatIf: null,
    json: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (!flag.startsWith('-') || flag === '-') {
      a.files.push(flag);
      continue;
    }
    if (!allowed.includes(flag === '--out' ? '-o' : flag)) throw new UsageError(`${command}: unknown option ${flag}`);
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${command}: ${flag} needs a value`);
      return v;
    };
    if (flag === '-o' || flag === '--out') a.out = value();
    else if (flag === '--format') {
      const f = value();
      const known = FORMATS.find((s) => s.id === f);
      if (!known) throw new UsageError(`unknown --format "${f}"; one of: ${FORMATS.map((s) => s.id).join(', ')}`);
      a.format = known.id;
    } else if (flag === '--no-redact') a.noRedact = true;
    else if (flag === '--redact') a.redact = redactionModeFlag(value());
    else if (flag === '--json') a.json = true;
    else if (flag === '--to') {
      const t = value();
      const targets = command === 'export' ? [...REPLAY_TARGETS, 'weka'] : REPLAY_TARGETS;
      if (!(targets as readonly string[]).includes(t))
        throw new UsageError(`--to must be one of ${targets.join(', ')}, not "${t}"`);
      a.to = t as ReplayTarget | 'weka';
    } else if (flag === '--replicas') a.replicas = replicaFlag(flag, argv[++i], REPLICA_BOUNDS.replicas);
    else if (flag === '--stagger-s') a.staggerS = replicaFlag(flag, argv[++i], REPLICA_BOUNDS.staggerS);
    else if (flag === '--session') a.sessions.push(value());
    else if (flag === '--whatif') a.whatIf = value();
  }
  return a;
}

/** Fails unless `out` is a different file from every input: redacting in place would read what it is overwriting. */
async function refuseOverwrite(inputs: readonly string[], out: string): Promise<void> {
  const target = await realpath(out).catch(() => resolve(out));
  for (const input of inputs) {
    if ((await realpath(input).catch(() => resolve(input))) === target)
      throw new UsageError(`-o ${out} is the input file: write the copy somewhere else`);
  }
}

async function parseFile(path: string, format: FormatId | null): Promise<ParsedTrace> {
  return parseTrace(await readTraceFiles(path), format ? { format } : {});
}

/** Per-call figures of a parse, for checking that a redacted copy reads the same. */
function callFigures(p: ParsedTrace): string {
  return JSON.stringify(
    p.model.sessions.map((s) => [s.id.length, s.calls.map((c) => [c.tokens, c.startMs, c.endMs, c.server, c.blocks])]),
  );
}

/** `agent-trace redact FILE -o OUT`: a redacted copy in the trace's own format (sub-agent logs included). */
export async function runRedact(argv: readonly string[]): Promise<number> {
  const a = parseShareArgs('redact', argv, ['-o', '--format', '--redact']);
  if (a.files.length !== 1) throw new UsageError('redact needs one FILE');
  if (!a.out) throw new UsageError('redact needs -o OUT');
  const file = a.files[0]!;
  await refuseOverwrite([file], a.out);
  const before = await parseFile(file, a.format);
  if (before.problem) {
    printError(`${file}: ${before.problem.message}`);
    return 1;
  }
  const redactor = createRedactor(a.redact);
  const written = await redactTraceFiles(file, a.out, redactor);
  // The copy must read as the same trace: same format, same calls, every token figure.
  const after = await parseFile(a.out, a.format);
  const calls = before.model.sessions.reduce((n, s) => n + s.calls.length, 0);
  if (after.model.format !== before.model.format || callFigures(after) !== callFigures(before)) {
    printError(
      `${a.out}: the redacted copy does not read as the original (${after.model.format ?? 'unreadable'}); please report this with the kinds below.\n${redactionLine(redactor.summary())}`,
    );
    return 1;
  }
  printError(
    `${written.join(', ')}: ${before.model.format} trace, ${before.model.sessions.length} sessions, ${calls} LLM calls, every token figure unchanged\n${redactionLine(redactor.summary())}`,
  );
  return 0;
}

/** One line on the ideal prefix-cache hit rate of an export, read back by our own reader of that format. */
async function readBackLine(e: ReplayExport, text: string): Promise<string> {
  if (e.target === 'aiperf')
    return `${e.records.filter((r) => 'timestamp' in r).length} AIPerf sessions, ${e.records.length} turns`;
  const parsed = await parseTrace([{ key: `export.${e.target}.jsonl`, bytes: new TextEncoder().encode(text) }], {
    format: e.target,
  });
  let input = 0;
  let cached = 0;
  for (const s of parsed.model.sessions) {
    for (const c of s.calls) {
      input += c.tokens.input ?? 0;
      cached += c.tokens.cached ?? 0;
    }
  }
  const how =
    e.target === 'bailian' ? 'each request against its parent' : 'an infinite prefix cache over the whole file';
  return `read back as ${e.target}: ideal prefix-cache hit rate ${formatPercent(input > 0 ? cached / input : null)} (${how}, ${e.blockSizeTokens}-token blocks)`;
}

/** `agent-trace export FILE --to …`: the sessions as a block-hash trace for AIPerf, Mooncake or vllm bench. */
export async function runExport(argv: readonly string[]): Promise<number> {
  const a = parseShareArgs('export', argv, [
    '-o',
    '--format',
    '--no-redact',
    '--redact',
    '--to',
    '--replicas',
    '--stagger-s',
    '--session',
  ]);
  if (a.files.length !== 1) throw new UsageError('export needs one FILE');
  if (!a.to) throw new UsageError(`export needs --to (${[...REPLAY_TARGETS, 'weka'].join(', ')})`);
  if (!a.out)
    throw new UsageError(
      a.to === 'weka'
        ? 'export --to weka needs -o OUT.json (or -o DIR/ for several sessions)'
        : 'export needs -o OUT.jsonl',
    );
  const file = a.files[0]!;
  await refuseOverwrite([file], a.out);
  if (a.to === 'weka' && (argv.includes('--replicas') || argv.includes('--stagger-s'))) {
    throw new UsageError(
      '--replicas and --stagger-s apply to mooncake, aiperf and bailian: a Weka trace is replayed at any concurrency by AIPerf or kv-cache-tester itself',
    );
  }
  // A Weka export may go into a folder (-o DIR/); its files are refused as they are written (writeWeka).
  if (a.to !== 'weka') await outputFile(a.out);
  const parsed = await parseFile(file, a.format);
  if (parsed.problem) {
    printError(`${file}: ${parsed.problem.message}`);
    return 1;
  }
  if (a.to === 'weka') return writeWeka(file, a.out, parsed, a.sessions, a.noRedact ? null : a.redact);
  const options: ReplayOptions = {
    replicas: a.replicas,
    staggerS: a.staggerS,
    sessions: a.sessions.length > 0 ? a.sessions : null,
  };
  let e: ReplayExport;
  try {
    e = buildReplayExport(parsed.model, a.to, options);
  } catch (err) {
    if (err instanceof ReplayError) {
      printError(`${file}: ${err.message}`);
      return 1;
    }
    throw err;
  }
  const redactor = a.noRedact ? null : createRedactor(a.redact);
  const text = await redactJsonLinesText(replayJsonLines(e), redactor);
  await outputFile(a.out, text);
  const lines = [
    `${a.out}: ${e.records.length} ${a.to} rows from ${e.sessions.length} session${e.sessions.length === 1 ? '' : 's'} × ${a.replicas} replica${a.replicas === 1 ? '' : 's'}` +
      `${a.replicas > 1 ? `, ${a.staggerS} s apart` : ''} (${REPLAY_BLOCK_TOKENS[a.to]}-token blocks)`,
    await readBackLine(e, text),
    ...e.notes.map((n) => `note: ${n}`),
    redactor ? redactionLine(redactor.summary()) : 'redaction: off (--no-redact)',
    `compare with a replay's results: agent-trace compare ${quote(file)} RESULTS --to ${a.to}${a.replicas > 1 ? ` --replicas ${a.replicas} --stagger-s ${a.staggerS}` : ''}${a.sessions.map((s) => ` --session ${quote(s)}`).join('')}`,
  ];
  printError(lines.join('\n'));
  return 0;
}

/** `export --to weka`: one document per top-level session, into a file (one session) or a folder (`-o DIR/`, or an existing folder). */
async function writeWeka(
  file: string,
  out: string,
  parsed: ParsedTrace,
  sessions: string[],
  redaction: RedactionMode | null,
): Promise<number> {
  let e: WekaExport;
  try {
    e = buildWekaExport(parsed.model, sessions.length > 0 ? sessions : null);
  } catch (err) {
    if (err instanceof ReplayError) {
      printError(`${file}: ${err.message}`);
      return 1;
    }
    throw err;
  }
  const toFolder =
    /[\\/]$/.test(out) ||
    (await stat(out)
      .then((s) => s.isDirectory())
      .catch(() => false));
  if (!toFolder && e.traces.length > 1) {
    printError(
      `${file}: ${e.traces.length} top-level sessions make ${e.traces.length} Weka traces (${e.traces.map((t) => t.id).join(', ')}): write them into a folder (-o DIR/) or choose one with --session`,
    );
    return 1;
  }
  const redactor = redaction === null ? null : createRedactor(redaction);
  const written: string[] = [];
  let input = 0;
  let cached = 0;
  if (toFolder) await mkdir(out, { recursive: true });
  for (const trace of e.traces) {
    const path = toFolder ? join(out, `${trace.id.replace(/[^\w.-]/g, '_')}.json`) : out;
    const text = await redactJsonLinesText(wekaJson(trace), redactor);
    await outputFile(path, text);
    written.push(path);
    // Read back with our own reader: the hit rate a replay's ideal cache would see.
    const back = await parseTrace([{ key: basename(path), bytes: new TextEncoder().encode(text) }], { format: 'weka' });
    for (const s of back.model.sessions)
      for (const c of s.calls) {
        input += c.tokens.input ?? 0;
        cached += c.tokens.cached ?? 0;
      }
  }
  const subagents = e.traces.reduce((n, t) => n + t.totals.subagent_count, 0);
  const lines = [
    `${written.length === 1 ? written[0] : `${out}: ${written.length} files`}: ${e.traces.length} Weka trace${e.traces.length === 1 ? '' : 's'}, ${e.requests.length} requests, ${subagents} sub-agent${subagents === 1 ? '' : 's'} (${WEKA_BLOCK_TOKENS}-token blocks, full blocks only)`,
    `read back as weka: ideal prefix-cache hit rate ${formatPercent(input > 0 ? cached / input : null)} (an infinite prefix cache over each file, ${WEKA_BLOCK_TOKENS}-token blocks)`,
    ...e.notes.map((n) => `note: ${n}`),
    redactor ? redactionLine(redactor.summary()) : 'redaction: off (--no-redact)',
    `replay with AIPerf: aiperf profile --url URL --model MODEL --endpoint-type chat --streaming --custom-dataset-type weka_trace --input-file ${quote(toFolder ? out : written[0]!)} --fixed-schedule`,
  ];
  printError(lines.join('\n'));
  return 0;
}

/** A shell word: quoted when it holds anything but safe characters. */
export function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Reads a what-if document (the panel's Export JSON): a regular file only (a FIFO would
 * wait forever), streamed with its nesting bounded, then checked field by field; a clear
 * message naming the line or the bad field. Returns the checked document and the raw value.
 */
async function readWhatIf(path: string): Promise<{ doc: WhatIfDocument; raw: unknown }> {
  let read: Awaited<ReturnType<typeof readJsonFile>>;
  try {
    read = await readJsonFile(path, 'a what-if export');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new UsageError(`--whatif ${path}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  }
  if ('error' in read) throw new UsageError(`--whatif ${path}: ${read.error}`);
  try {
    return { doc: parseWhatIfDocument(read.value), raw: read.value };
  } catch (e) {
    if (e instanceof WhatIfDocumentError)
      throw new UsageError(`--whatif ${path} is not a what-if export (the panel's Export JSON): ${e.message}`);
    throw e;
  }
}

/** The package root (dist/ and media/): the CLI runs as dist/cli.js. */
function packageRoot(): string {
  return resolve(__dirname, '..');
}

/** `agent-trace report FILE... -o REPORT.html`: one self-contained HTML file with the inspector's views of every trace. */
export async function runReport(argv: readonly string[], generator: string): Promise<number> {
  const a = parseShareArgs('report', argv, ['-o', '--format', '--no-redact', '--redact', '--session', '--whatif']);
  if (a.files.length === 0) throw new UsageError('report needs at least one FILE');
  if (!a.out) throw new UsageError('report needs -o REPORT.html');
  await refuseOverwrite(a.files, a.out);
  await outputFile(a.out);
  const whatIf = a.whatIf ? (await readWhatIf(a.whatIf)).doc : null;
  // Prices of the CLI's analyze: @pydantic/genai-prices and the project's dated supplement.
  const prices = createPriceBook();
  const traces: ReportTrace[] = [];
  for (const file of a.files) {
    // With the text the context panel counts (src/node/contextCollect.ts).
    const { parsed, context } = await parseWithContext(await readTraceFiles(file), a.format);
    if (parsed.problem) {
      printError(`${file}: ${parsed.problem.message}`);
      return 1;
    }
    // The what-if belongs to the trace it was run on (its file), or to the only trace.
    const own =
      whatIf && (a.files.length === 1 || (whatIf.input.file !== null && resolve(whatIf.input.file) === resolve(file)))
        ? whatIf
        : null;
    // --session picks sessions in whichever trace has them.
    const sessions = a.sessions.filter((s) => parsed.model.sessions.some((x) => x.id === s || x.id.startsWith(s)));
    if (a.sessions.length > 0 && sessions.length === 0) continue;
    traces.push(
      buildReportTrace(parsed, basename(file), {
        sessions,
        whatIf: own,
        prices,
        formatChosen: a.format !== null,
        context,
      }),
    );
  }
  const missing = a.sessions.filter(
    (s) => !traces.some((t) => t.view.sessions.some((x) => x.summary.id === s || x.summary.id.startsWith(s))),
  );
  if (missing.length > 0)
    throw new UsageError(`--session ${missing.join(', ')}: no such session in ${a.files.join(', ')}`);
  if (whatIf && !traces.some((t) => t.whatIf))
    printError(
      `note: --whatif ${a.whatIf} was run on ${whatIf.input.file ?? 'another trace'} (session ${whatIf.input.session ?? '?'}), which this report does not hold: it is left out`,
    );
  const doc: ReportDocument = {
    schema: 1,
    title:
      traces.length === 1
        ? `Agent trace report: ${traces[0]!.view.fileName}`
        : `Agent trace report: ${traces.length} traces`,
    generatedAt: new Date().toISOString(),
    generator,
    traces,
    redaction: null,
  };
  const redactor = a.noRedact ? null : createRedactor(a.redact);
  const html = reportHtml(await redactReport(doc, redactor), await readReportAssets(packageRoot()));
  await outputFile(a.out, html);
  const sessions = traces.reduce((n, t) => n + t.view.sessions.length, 0);
  const calls = traces.reduce((n, t) => n + t.view.sessions.reduce((m, s) => m + s.calls.length, 0), 0);
  const size = (await stat(a.out)).size;
  printError(
    `${a.out}: ${traces.length} trace${traces.length === 1 ? '' : 's'}, ${sessions} sessions, ${calls} LLM calls${traces.some((t) => t.whatIf) ? ', the what-if scenario' : ''}, ${(size / 1024).toFixed(0)} KB; opens offline in any browser\n` +
      `${redactor ? redactionLine(redactor.summary()) : 'redaction: off (--no-redact)'}`,
  );
  return 0;
}

/** `agent-trace compare FILE RESULTS`: a replay's measured results beside the trace and the simulator's prediction. */
export async function runCompare(argv: readonly string[]): Promise<number> {
  const a = parseShareArgs('compare', argv, [
    '--format',
    '--no-redact',
    '--redact',
    '--to',
    '--replicas',
    '--stagger-s',
    '--session',
    '--whatif',
    '--json',
  ]);
  if (a.files.length !== 2)
    throw new UsageError(
      'compare needs the trace FILE and the RESULTS file (AIPerf profile_export.jsonl or a vllm bench result)',
    );
  const [file, resultsFile] = a.files as [string, string];
  const given = new Set(argv);
  // Refuses what is not a what-if export, naming the field; its replicas are checked against the simulator's bounds.
  const whatIf = a.whatIf ? await readWhatIf(a.whatIf) : null;
  // Replicas and stagger: the command line's, else the what-if's (the scenario replayed), else 1 and 0.
  const replicas = given.has('--replicas') ? a.replicas : (whatIf?.doc.input.replicas?.replicas ?? 1);
  const staggerS = given.has('--stagger-s') ? a.staggerS : (whatIf?.doc.input.replicas?.staggerS ?? 0);
  const parsed = await parseFile(file, a.format);
  if (parsed.problem) {
    printError(`${file}: ${parsed.problem.message}`);
    return 1;
  }
  const results = await parseFile(resultsFile, null);
  if (results.problem || (results.model.format !== 'aiperf' && results.model.format !== 'vllm-bench')) {
    printError(resultsProblemText(resultsFile, results));
    return 1;
  }
  // Lines of the results that could not be read (broken, too deep, not text) are left out of the join: said, with their lines.
  const unread = results.model.diagnostics.filter((d) => d.severity === 'error' && d.file === 0);
  if (unread.length > 0)
    printError(
      `note: ${unread.length} line${unread.length === 1 ? '' : 's'} of ${resultsFile} left out: ${unread
        .slice(0, 3)
        .map((d) => `line ${d.line + 1}: ${d.message}`)
        .join('; ')}${unread.length > 3 ? '; …' : ''}`,
    );
  const target = (a.to as ReplayTarget | null) ?? (results.model.format === 'aiperf' ? 'aiperf' : 'mooncake');
  let params: EngineParams;
  try {
    params = whatIfParams((whatIf?.raw as { input?: { params?: unknown } } | undefined)?.input?.params);
  } catch (e) {
    if (e instanceof ParamError) throw new UsageError(`--whatif ${a.whatIf}: ${e.message}`);
    throw e;
  }
  let comparison: ReplayComparison;
  try {
    const e = buildReplayExport(parsed.model, target, {
      replicas,
      staggerS,
      sessions: a.sessions.length > 0 ? a.sessions : null,
    });
    // The session ids as the exported file has them: redacted the same way, unless the export was made with --no-redact.
    const text = await redactJsonLinesText(replayJsonLines(e), a.noRedact ? null : createRedactor(a.redact));
    const ids = text
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => {
        const v = JSON.parse(l) as { session_id?: unknown };
        return typeof v.session_id === 'string' ? v.session_id : null;
      });
    comparison = compareReplay(
      parsed.model,
      e,
      ids,
      results.model,
      predictReplay(parsed.model, e, params, runFast, replicas, staggerS),
    );
  } catch (err) {
    if (err instanceof ReplayError || err instanceof ParamError) {
      printError(`${file}: ${err.message}`);
      return 1;
    }
    throw err;
  }
  const input = {
    file,
    results: resultsFile,
    resultsFormat: results.model.format,
    target,
    replicas,
    staggerS,
    sessions: a.sessions,
    whatIf: a.whatIf,
    params,
  };
  if (a.json) printJson({ input, ...comparison });
  else
    printText(
      `compare: ${basename(resultsFile)} (${results.model.format}) against ${basename(file)} exported --to ${target}, ${replicas} replica${replicas === 1 ? '' : 's'}${replicas > 1 ? ` ${staggerS} s apart` : ''}\n${renderComparison(comparison)}`,
    );
  return comparison.matched === 0 ? 1 : 0;
}
