import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import type { AnalysisOptions } from '../core/analysis/sessionAnalysis';
import { formatCount, formatPercent, formatRatio } from '../core/text/formatNumbers';
import { compareRows, durationMs, localDay, matchesFilter, parseSince } from '../core/sessions/sessionQuery';
import type { SessionFilter, SessionRow } from '../core/sessions/sessionQuery';
import { indexRecords } from '../core/sessions/sessionRecord';
import { formatUsd, lastSegment, localTime, plainText, shortDuration } from '../core/sessions/sessionText';
import { buildSessionsReport, reportJson } from '../core/sessions/sessionsReport';
import type { Distribution, SessionsReport } from '../core/sessions/sessionsReport';
import { isCompanionName } from '../core/trace/formats';
import { parseTrace } from '../core/trace/parseTrace';
import { AGENTS, agentById, agentRoots, resolveRoots } from '../node/sessions/agentRegistry';
import { createPriceBook } from '../core/cost/priceBook';
import { SessionIndex } from '../node/sessions/sessionIndex';
import { SessionIndexer, unreadNote } from '../node/sessions/sessionIndexer';
import { readTraceFiles } from '../node/traceFiles';
import { terminalJson, terminalText } from '../core/text/safeText';
import { UsageError } from '../core/text/usageError';

export const SESSIONS_USAGE = `Usage: agent-trace sessions [--json] [--agent ID] [--since WHEN] [--project TEXT] [options]

Lists the agent sessions on this machine, newest first, with the figures of the
Agent Sessions view: when, how long, LLM calls, cache hit rate, cost, failed tool
calls, retry loops, and "live" for a file still growing. Sub-agents are listed
under their session.

  --json            the sessions as JSON (one object per session, sub-agents included)
  --agent ID        only this agent (${AGENTS.map((a) => a.id).join(', ')}); repeatable
  --since WHEN      only sessions active since WHEN: 30m, 12h, 7d, 2w, or a date 2026-03-01
  --project TEXT    only projects whose path contains TEXT (case-insensitive); repeatable
  --root ID=DIR     look for agent ID's sessions in DIR (default: the folder the agent
                    itself uses, e.g. ${AGENTS.slice(0, 2)
                      .map((a) => `${a.id} ${a.defaultRoot}`)
                      .join(', ')})
  --index FILE      the index to keep (default: ${defaultIndexPath().replace(homedir(), '~')})
  --no-index        read every file, keep nothing

The index makes later runs read only what changed. Exit status: 0 ok, 2 usage error.
`;

/** Where the CLI keeps its own session index (the extension keeps its own in VS Code's storage). */
export function defaultIndexPath(env: NodeJS.ProcessEnv = process.env): string {
  if (process.platform === 'win32' && env['LOCALAPPDATA'])
    return join(env['LOCALAPPDATA'], 'agent-trace', 'sessions.sqlite');
  const cache = env['XDG_CACHE_HOME'] || join(homedir(), process.platform === 'darwin' ? 'Library/Caches' : '.cache');
  return join(cache, 'agent-trace', 'sessions.sqlite');
}

/** The options of `agent-trace sessions`. */
export interface SessionsArgs {
  json: boolean;
  filter: SessionFilter;
  roots: Record<string, string>;
  index: string | null;
}

/**
 * The options of `sessions` (and of the commands that read the same local sessions); `extra`
 * takes the command's own flags: it returns the index of the last argument it used, or null.
 */
export function parseSessionsArgs(
  argv: readonly string[],
  nowMs: number,
  extra: ((argv: readonly string[], i: number) => number | null) | null = null,
  help = 'agent-trace sessions --help',
): SessionsArgs {
  const args: SessionsArgs = { json: false, filter: {}, roots: {}, index: defaultIndexPath() };
  const value = (i: number, flag: string): string => {
    const v = argv[i];
    if (v === undefined || v.startsWith('--')) throw new UsageError(`${flag} needs a value`, help);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const used = extra ? extra(argv, i) : null;
    if (used !== null) i = used;
    else if (a === '--json') args.json = true;
    else if (a === '--agent') {
      const id = value(++i, a);
      if (!agentById(id))
        throw new UsageError(`unknown --agent "${id}"; one of: ${AGENTS.map((x) => x.id).join(', ')}`, help);
      args.filter.agents = [...(args.filter.agents ?? []), id];
    } else if (a === '--since') {
      const text = value(++i, a);
      const since = parseSince(text, nowMs);
      if (since === null)
        throw new UsageError(`--since needs a duration (30m, 12h, 7d, 2w) or a date (2026-03-01), not "${text}"`, help);
      args.filter.sinceMs = since;
    } else if (a === '--project') args.filter.projects = [...(args.filter.projects ?? []), value(++i, a)];
    else if (a === '--root') {
      const spec = value(++i, a);
      const eq = spec.indexOf('=');
      const agent = eq > 0 ? agentById(spec.slice(0, eq)) : undefined;
      if (!agent || eq === spec.length - 1)
        throw new UsageError(
          `--root needs ID=DIR with ID one of ${AGENTS.map((x) => x.id).join(', ')}, not "${spec}"`,
          help,
        );
      args.roots[agent.settingKey] = spec.slice(eq + 1);
    } else if (a === '--index') args.index = value(++i, a);
    else if (a === '--no-index') args.index = null;
    else throw new UsageError(`unknown option ${a}`, help);
  }
  return args;
}

/** A session as `sessions --json` prints it: the row's figures under stable names. */
function sessionJson(r: SessionRow): Record<string, unknown> {
  return {
    id: r.key,
    parentId: r.parentKey,
    role: r.role,
    agent: r.agentId,
    model: r.model,
    path: r.path,
    project: r.project,
    title: r.title,
    startedAt: r.startMs === null ? null : new Date(r.startMs).toISOString(),
    endedAt: r.endMs === null ? null : new Date(r.endMs).toISOString(),
    durationMs: durationMs(r),
    llmCalls: r.calls,
    userTurns: r.userTurns,
    tokens: r.tokens,
    cacheHitRate: r.cacheHitRate,
    costUsd: r.costUsd,
    unpricedCalls: r.unpricedCalls,
    toolCalls: r.toolCalls,
    failedToolCalls: r.failedToolCalls,
    retryLoops: r.retryLoops,
    cacheMisses: r.cacheMisses,
    live: r.live,
    file: r.fileStatus,
    problem: r.problem,
  };
}

function sessionLine(r: SessionRow, depth: number): string {
  const when = r.startMs === null ? '????-??-?? ??:??' : `${localDay(r.startMs)} ${localTime(r.startMs)}`;
  const title = plainText(
    r.role === 'main'
      ? (r.title ?? lastSegment(r.path))
      : `${r.role === 'compaction' ? 'compaction agent' : 'sub-agent'} ${r.key}`,
    70,
  );
  const flags = [
    r.live ? 'live' : '',
    r.fileStatus === 'deleted' ? 'deleted' : '',
    r.fileStatus === 'problem' ? 'unreadable' : '',
  ]
    .filter((x) => x)
    .join(' ');
  return (
    `${'  '.repeat(depth)}${when}  ${r.agentId.padEnd(11)} ${shortDuration(durationMs(r)).padStart(9)} ${String(r.calls).padStart(5)} calls  hit ${formatPercent(r.cacheHitRate).padStart(6)}  ` +
    `${formatUsd(r.costUsd).padStart(8)}  ${String(r.failedToolCalls).padStart(3)} failed  ${String(r.retryLoops).padStart(2)} loops  ${flags ? `[${flags}] ` : ''}${title}`
  );
}

/** `agent-trace sessions`: exit status. */
export async function runSessions(
  argv: readonly string[],
  write: (text: string) => void,
  writeErr: (text: string) => void,
): Promise<number> {
  // Titles, paths and problems come from the logs: control and bidi characters print as visible escapes.
  const out = (text: string): void => write(terminalText(text));
  const err = (text: string): void => writeErr(terminalText(text));
  if (argv.includes('--help') || argv.includes('-h')) {
    out(SESSIONS_USAGE);
    return 0;
  }
  const now = Date.now();
  const args = parseSessionsArgs(argv, now);
  const { index, rows, roots } = await syncLocalSessions(args.roots, args.index, now, err);
  try {
    // A main session passes the filter for itself; its sub-agents are listed with it.
    const mains = rows.filter(
      (r) => r.role === 'main' || !rows.some((p) => p.fileId === r.fileId && p.key === r.parentKey),
    );
    const kept = new Set(mains.filter((r) => matchesFilter(r, args.filter)).map((r) => r.fileId));
    const shown = rows.filter((r) => kept.has(r.fileId)).sort(compareRows('newest'));
    if (args.json) {
      write(
        terminalJson(
          JSON.stringify(
            {
              index: args.index,
              roots: roots.map((r) => ({ agent: r.agent.id, root: r.root })),
              sessions: shown.map(sessionJson),
            },
            null,
            2,
          ),
        ) + '\n',
      );
      return 0;
    }
    if (shown.length === 0) {
      out(
        `No sessions found${args.filter.agents || args.filter.sinceMs !== undefined || args.filter.projects ? ' that match' : ''}. Looked in: ${roots.map((r) => `${r.agent.id} ${r.root}`).join(', ')}.\n`,
      );
      return 0;
    }
    const lines: string[] = [];
    const byParent = (r: SessionRow): SessionRow[] =>
      shown.filter((c) => c.fileId === r.fileId && c.parentKey === r.key);
    const printed = new Set<SessionRow>();
    const print = (r: SessionRow, depth: number): void => {
      if (printed.has(r)) return;
      printed.add(r);
      lines.push(sessionLine(r, depth));
      for (const c of byParent(r)) print(c, depth + 1);
    };
    let project: string | null = null;
    for (const r of shown.filter(
      (x) => x.role === 'main' || !shown.some((p) => p.fileId === x.fileId && p.key === x.parentKey),
    )) {
      if (r.project !== project) {
        project = r.project;
        lines.push('', plainText(project, 200));
      }
      print(r, 1);
    }
    out(
      `${shown.filter((r) => r.role === 'main').length} sessions (${shown.length} with sub-agents), newest first\n${lines.join('\n')}\n`,
    );
    return 0;
  } finally {
    index.close();
  }
}

/**
 * Brings the session index up to date with this machine's agent folders (the ones `roots`
 * names instead of the defaults) and returns its rows; notes and unread files go to `err`.
 * The caller closes the index.
 */
export async function syncLocalSessions(
  rootOverrides: Record<string, string>,
  indexPath: string | null,
  now: number,
  err: (text: string) => void,
): Promise<{ index: SessionIndex; rows: SessionRow[]; roots: ReturnType<typeof agentRoots> }> {
  const { index, notice } = SessionIndex.open(indexPath ?? ':memory:');
  try {
    if (notice) err(`agent-trace: ${notice.message}\n`);
    const roots = agentRoots(resolveRoots(rootOverrides));
    const indexer = new SessionIndexer(index, { stateVersion: 'cli', prices: createPriceBook() });
    let lastReport = Date.now();
    const result = await indexer.sync(roots, {
      onProgress: (p) => {
        // Only a long first run says how far it got (on stderr, so --json stays clean).
        if (Date.now() - lastReport > 2000 && p.filesDone < p.filesTotal) {
          lastReport = Date.now();
          err(
            `reading sessions: ${p.filesDone} of ${p.filesTotal} files, ${(p.bytesDone / 2 ** 20).toFixed(0)} of ${(p.bytesTotal / 2 ** 20).toFixed(0)} MB\n`,
          );
        }
      },
    });
    for (const r of result.rereads) err(`agent-trace: read again from the start: ${plainText(r, 300)}\n`);
    for (const n of result.notes) err(`agent-trace: note: ${plainText(n, 400)}\n`);
    // Once a run, with the count: folders it could not list and files it could not read are never skipped silently.
    const unread = unreadNote(result);
    if (unread) err(`agent-trace: ${plainText(unread, 2000)}\n`);
    return { index, rows: index.rows(now), roots };
  } catch (e) {
    index.close();
    throw e;
  }
}

/** Files of a folder that may be traces: *.jsonl, *.json, *.traj (sub-agent logs go with their session). */
export async function traceFilesIn(dir: string, depth = 0): Promise<string[]> {
  const out: string[] = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (depth < 8 && !['subagents', '.git', 'node_modules'].includes(e.name))
        out.push(...(await traceFilesIn(path, depth + 1)));
    } else if (e.isFile() && /\.(jsonl|json|traj)$/i.test(e.name) && !isCompanionName(e.name)) out.push(path);
  }
  return out;
}

/** Whether a path is a folder (analyze DIR) rather than a file. */
export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** `agent-trace analyze DIR`: every session in the folder as one report (the several-sessions view). */
export async function analyzeFolder(
  dir: string,
  options: Partial<AnalysisOptions>,
  json: boolean,
  write: (text: string) => void,
  writeErr: (text: string) => void,
): Promise<number> {
  const out = (text: string): void => write(terminalText(text));
  const err = (text: string): void => writeErr(terminalText(text));
  const files = await traceFilesIn(dir);
  const prices = createPriceBook();
  const rows: SessionRow[] = [];
  let id = 0;
  let unreadable = 0;
  for (let fileId = 0; fileId < files.length; fileId++) {
    const path = files[fileId]!;
    let parsed;
    try {
      parsed = await parseTrace(await readTraceFiles(path));
    } catch (e) {
      unreadable += 1;
      err(`agent-trace: ${plainText(relative(dir, path), 200)}: ${e instanceof Error ? e.message : String(e)}\n`);
      continue;
    }
    if (parsed.problem) {
      unreadable += 1;
      err(
        `agent-trace: ${plainText(relative(dir, path), 200)}: not read (${plainText(parsed.problem.message, 200)})\n`,
      );
      continue;
    }
    const s = await stat(path);
    const records = indexRecords(parsed, options, prices);
    const main = records.find((r) => r.session.role === 'main') ?? records[0];
    for (const { session } of records) {
      rows.push({
        ...session,
        id: id++,
        fileId,
        path,
        agentId: parsed.model.format ?? 'unknown',
        project: main?.session.cwd ?? dir,
        fileMtimeMs: s.mtimeMs,
        lastWriteMs: s.mtimeMs,
        live: false,
        fileStatus: 'ok',
        problem: null,
      });
    }
  }
  const report = buildSessionsReport(rows);
  if (report.sessions === 0 && !json) {
    err(
      `agent-trace: no agent session found in ${plainText(dir, 200)} (looked at ${files.length} *.jsonl, *.json and *.traj files).\n`,
    );
    return 1;
  }
  if (json) write(terminalJson(reportJson(report)));
  else out(renderFolderReport(dir, report, unreadable));
  return report.sessions > 0 ? 0 : 1;
}

function distributionLine(label: string, d: Distribution, format: (v: number | null) => string): string {
  const spread = d.count === 0 ? 'unknown' : [d.min, d.p25, d.median, d.p75, d.max].map(format).join(' / ');
  const range = d.range
    ? `   published ${format(d.range.low)}–${format(d.range.high)}: ${d.range.below} below, ${d.range.within} within, ${d.range.above} above`
    : '';
  return `  ${label.padEnd(22)} ${spread}${range}`;
}

/** The several-sessions report as text. */
export function renderFolderReport(dir: string, r: SessionsReport, unreadable: number): string {
  const t = r.totals;
  const c = r.combined;
  const span = r.firstMs === null ? '' : `, ${localDay(r.firstMs)} – ${localDay(r.lastMs!)}`;
  const lines = [
    `${plainText(dir, 200)}: ${r.sessions} sessions (${r.threads} with sub-agents)${span}${unreadable > 0 ? `; ${unreadable} files not read` : ''}`,
    '',
    'combined fingerprint',
    `  LLM calls              ${formatCount(t.calls)}, user turns ${formatCount(t.userTurns)}`,
    `  tokens                 input ${formatCount(t.tokens.input)}  cached ${formatCount(t.tokens.cached)}  appended ${formatCount(t.tokens.appended)}  output ${formatCount(t.tokens.output)}`,
    `  cache hit rate         ${formatPercent(c.cacheHitRate)}${c.positions.cacheHitRate ? `   [${c.positions.cacheHitRate} published 84.6–99.5%]` : ''}`,
    `  raw input / output     ${formatRatio(c.rawInputToOutput)}${c.positions.rawInputToOutput ? `   [${c.positions.rawInputToOutput} published 53.9–559.8×]` : ''}`,
    `  appended / output      ${formatRatio(c.appendToOutput)} (Σ/Σ)`,
    `  tool calls             ${formatCount(t.toolCalls)}, failed ${formatCount(t.failedToolCalls)} (${formatPercent(c.toolFailureRate)})`,
    `  retry loops            ${t.retryLoops} (${formatPercent(c.callsInLoopsShare)} of calls spent in them)`,
    `  cache misses           ${t.cacheMisses}, compactions ${t.compactions}`,
    `  cost                   ${t.costUsd === null ? 'unknown' : formatUsd(t.costUsd)}${t.unpricedCalls > 0 ? ` (${t.unpricedCalls} calls not priced)` : ''}`,
    '',
    'across sessions (min / p25 / median / p75 / max)',
    distributionLine('cache hit rate', r.distributions.cacheHitRate, formatPercent),
    distributionLine('LLM calls', r.distributions.calls, (v) => formatCount(v)),
    distributionLine('cost', r.distributions.costUsd, (v) => (v === null ? 'unknown' : formatUsd(v))),
    distributionLine('raw input / output', r.distributions.rawInputToOutput, formatRatio),
    distributionLine('appended / output', r.distributions.appendToOutputMean, formatRatio),
    '',
    'sessions',
  ];
  for (const s of r.rows) {
    const when = s.startMs === null ? '????-??-?? ??:??' : `${localDay(s.startMs)} ${localTime(s.startMs)}`;
    lines.push(
      `  ${when}  ${s.agentId.padEnd(11)} ${String(s.calls).padStart(5)} calls  hit ${formatPercent(s.cacheHitRate).padStart(6)}  ${formatUsd(s.costUsd).padStart(8)}  ${String(s.failedToolCalls).padStart(3)} failed  ${String(s.retryLoops).padStart(2)} loops  ${plainText(relative(dir, s.path) || s.path, 90)}`,
    );
  }
  return lines.join('\n') + '\n';
}
