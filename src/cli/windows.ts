import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { checkServerWindows, latestRateLimits, RATE_LIMIT_TAIL_BYTES } from '../core/cost/serverRateLimits';
import type { ServerRateLimits, ServerWindowCheck } from '../core/cost/serverRateLimits';
import { createPriceBook } from '../core/cost/priceBook';
import { parseLimit, planFamily, planWindows } from '../core/cost/planWindows';
import type {
  PlanFamily,
  PlanWindow,
  PlanWindows,
  WindowCall,
  WindowKind,
  WindowLimit,
  WindowOptions,
} from '../core/cost/planWindows';
import { formatCompact, formatCount, formatPercent, formatUsd } from '../core/text/formatNumbers';
import { parseSince } from '../core/sessions/sessionQuery';
import {
  limitNowText,
  limitText,
  PLAN_LABELS,
  serverCheckLines,
  WINDOW_KIND_LABELS,
} from '../core/sessions/sessionWindows';
import { localDateTime, localTime, plainText, shortDuration } from '../core/sessions/sessionText';
import { terminalJson, terminalText } from '../core/text/safeText';
import { UsageError } from '../core/text/usageError';
import { parseLedgerArgs, readLedger } from './ledger';

export const WINDOWS_USAGE = `Usage: agent-trace windows [FILE...] [--json] [--limit-5h L] [--limit-week L] [options]

Claude's and Codex's plan windows rebuilt from the calls' times: every 5-hour and
weekly window, what it used (tokens, and dollars at API list price), the burn rate,
the projection to its reset and, for a limit you set, how soon it is reached; per
session its share. Without FILEs: this machine's Claude Code and Codex sessions
active in the last 8 days (as agent-trace sessions finds them). The rules and their
sources: docs/guide/windows.md. The plans' own limits are not published: give yours.

  --limit-5h L      a 5-hour window's limit: tokens (2M, 500k, 1200000) or dollars ($40);
                    repeat it to give both
  --limit-week L    the same for the weekly window
  --week-reset WHEN the weekly reset time /usage or /status shows (2026-12-07T08:00Z):
                    weeks then run from it, used or not
  --align-hour      start a 5-hour window at the full hour before its first call (ccusage)
  --plan P          only claude or codex
  --json            every figure as JSON (docs/reference/json-output.md)
  --since, --agent, --project, --root, --index, --no-index: as agent-trace sessions

Exit status: 0 ok, 1 no call with a time found, 2 usage error.
`;

const HELP = 'agent-trace windows --help';

interface WindowArgs {
  limits: Partial<Record<WindowKind, WindowLimit>>;
  anchorMs: Partial<Record<WindowKind, number>>;
  alignHour: boolean;
  plans: PlanFamily[];
}

function addLimit(limits: WindowArgs['limits'], kind: WindowKind, flag: string, text: string | undefined): void {
  const parsed = text === undefined ? null : parseLimit(text);
  if (!parsed)
    throw new UsageError(`${flag} needs tokens (2M, 500k, 1200000) or dollars ($40), not "${text ?? ''}"`, HELP);
  const l = (limits[kind] ??= { tokens: null, usd: null });
  if ('tokens' in parsed) l.tokens = parsed.tokens;
  else l.usd = parsed.usd;
}

/** `agent-trace windows`: exit status. */
export async function runWindows(
  argv: readonly string[],
  write: (text: string) => void,
  writeErr: (text: string) => void,
  now = Date.now(),
): Promise<number> {
  const out = (text: string): void => write(terminalText(text));
  const err = (text: string): void => writeErr(terminalText(text));
  if (argv.includes('--help') || argv.includes('-h')) {
    out(WINDOWS_USAGE);
    return 0;
  }
  const w: WindowArgs = { limits: {}, anchorMs: {}, alignHour: false, plans: [] };
  const { args, files } = parseLedgerArgs(argv, now, HELP, (a, i) => {
    const flag = a[i]!;
    if (flag === '--limit-5h' || flag === '--limit-week') {
      addLimit(w.limits, flag === '--limit-5h' ? '5h' : 'weekly', flag, a[i + 1]);
      return i + 1;
    }
    if (flag === '--week-reset') {
      const t = Date.parse(a[i + 1] ?? '');
      if (!Number.isFinite(t))
        throw new UsageError(`--week-reset needs a date and time (2026-12-07T08:00Z), not "${a[i + 1] ?? ''}"`, HELP);
      w.anchorMs.weekly = t;
      return i + 1;
    }
    if (flag === '--align-hour') {
      w.alignHour = true;
      return i;
    }
    if (flag === '--plan') {
      const p = a[i + 1];
      if (p !== 'claude' && p !== 'codex') throw new UsageError(`--plan is claude or codex, not "${p ?? ''}"`, HELP);
      w.plans.push(p);
      return i + 1;
    }
    return null;
  });
  // A weekly window that is open now may have started up to 7 days ago.
  if (files.length === 0 && args.filter.sinceMs === undefined) args.filter.sinceMs = parseSince('8d', now)!;
  const { traces, unread, looked } = await readLedger(files, args, createPriceBook(), now, err);
  const options: WindowOptions = { align: w.alignHour ? 'hour' : 'call', anchorMs: w.anchorMs, limits: w.limits };
  const byPlan = new Map<PlanFamily, WindowCall[]>();
  const fileOf = new Map<string, string>();
  const codexFiles = new Set<string>();
  let untimed = 0;
  let otherAgents = 0;
  for (const t of traces) {
    const family = planFamily(t.model.format);
    if (family === null || (w.plans.length > 0 && !w.plans.includes(family))) {
      otherAgents += t.calls.length;
      continue;
    }
    if (family === 'codex') codexFiles.add(t.file);
    for (const c of t.calls) {
      if (c.timeMs === null) {
        untimed += 1;
        continue;
      }
      fileOf.set(c.session, t.file);
      const list = byPlan.get(family) ?? [];
      list.push({ timeMs: c.timeMs, endMs: c.endMs, session: c.session, tokens: c.tokens, usd: c.usd });
      byPlan.set(family, list);
    }
  }
  const plans = [...byPlan].map(([family, calls]) => planWindows(family, calls, options, now));
  const server = new Map<PlanFamily, ServerReport>();
  const codexPlan = plans.find((p) => p.family === 'codex');
  const report = codexPlan ? await latestReport(codexFiles) : null;
  if (codexPlan && report)
    server.set('codex', {
      file: report.file,
      checks: checkServerWindows(report.limits, byPlan.get('codex') ?? [], codexPlan.windows),
    });
  if (args.json) {
    write(
      terminalJson(
        JSON.stringify(windowsJson(plans, options, now, fileOf, { untimed, otherAgents, unread }, server), null, 2),
      ) + '\n',
    );
    return plans.length > 0 ? 0 : 1;
  }
  if (plans.length === 0) {
    err(
      `agent-trace: no Claude Code or Codex call with a time found in ${plainText(looked, 400)}${otherAgents > 0 ? ` (${otherAgents} calls of other agents, which have no plan windows)` : ''}.\n`,
    );
    return 1;
  }
  out(renderWindows(plans, options, now, fileOf, { untimed, otherAgents, unread }, server));
  return 0;
}

/** A plan's own rate-limit report (Codex's) and its windows beside ours. */
export interface ServerReport {
  file: string;
  checks: ServerWindowCheck[];
}

/** The last few hundred kilobytes of a file as text (a report is on every `token_count` line, so the tail holds the latest). */
async function fileTail(file: string, bytes: number): Promise<{ text: string; whole: boolean }> {
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return { text: buffer.toString('utf8'), whole: length === size };
  } finally {
    await handle.close();
  }
}

/** The latest rate-limit report among the Codex logs read (a file that cannot be read again is passed over). */
async function latestReport(files: Iterable<string>): Promise<{ file: string; limits: ServerRateLimits } | null> {
  let best: { file: string; limits: ServerRateLimits } | null = null;
  for (const file of files) {
    let limits: ServerRateLimits | null = null;
    try {
      const tail = await fileTail(file, RATE_LIMIT_TAIL_BYTES);
      limits = latestRateLimits(tail.text);
      // Long tool outputs at the end can push the last report out of the tail: then the whole log.
      if (!limits && !tail.whole) limits = latestRateLimits((await fileTail(file, Number.MAX_SAFE_INTEGER)).text);
    } catch {
      continue;
    }
    if (limits && (best === null || limits.observedAtMs > best.limits.observedAtMs)) best = { file, limits };
  }
  return best;
}

interface Leftovers {
  untimed: number;
  otherAgents: number;
  unread: number;
}

const PLAN_LABEL = PLAN_LABELS;
const KIND_LABEL = WINDOW_KIND_LABELS;

function windowLines(win: PlanWindow, now: number, fileOf: ReadonlyMap<string, string>): string[] {
  const span =
    win.kind === '5h'
      ? `${localDateTime(win.startMs)} – ${localTime(win.endMs)}`
      : `${localDateTime(win.startMs)} – ${localDateTime(win.endMs)}`;
  const usd = win.usd === null ? 'cost unknown' : formatUsd(win.usd);
  const head = `  ${KIND_LABEL[win.kind].padEnd(6)} ${span}${win.active ? `  [active, resets in ${shortDuration(win.endMs - now)}]` : ''}`;
  const lines = [
    head,
    `    used       ${formatCompact(win.tokens)} tokens, ${usd} in ${formatCount(win.calls)} calls${win.unpricedCalls > 0 ? ` (${win.unpricedCalls} not priced)` : ''}`,
  ];
  if (win.burn)
    lines.push(
      `    burn rate  ${formatCompact(win.burn.tokensPerHour)} tokens/h${win.burn.usdPerHour === null ? '' : `, ${formatUsd(win.burn.usdPerHour)}/h`} (first to last call)`,
    );
  if (win.projected)
    lines.push(
      `    at reset   ~${formatCompact(win.projected.tokens)} tokens${win.projected.usd === null ? '' : `, ~${formatUsd(win.projected.usd)}`} at this rate`,
    );
  for (const l of win.limits) lines.push(`    limit      ${limitText(l, win.active)}`);
  for (const s of win.sessions) {
    const file = fileOf.get(s.session);
    lines.push(
      `      ${formatPercent(s.tokenShare).padStart(6)} of tokens  ${s.usd === null ? '   cost ?' : formatUsd(s.usd).padStart(8)}  ${String(s.calls).padStart(5)} calls  ${plainText(s.session, 40)}${file ? `  ${plainText(basename(file), 60)}` : ''}`,
    );
  }
  return lines;
}

/** The windows as text: per plan, each window with its figures and its sessions' shares. */
export function renderWindows(
  plans: readonly PlanWindows[],
  options: WindowOptions,
  now: number,
  fileOf: ReadonlyMap<string, string>,
  left: Leftovers,
  server: ReadonlyMap<PlanFamily, ServerReport> = new Map(),
): string {
  const lines: string[] = [];
  for (const p of plans) {
    lines.push(
      `${PLAN_LABEL[p.family]}: windows open at the first call after the last one closed${options.align === 'hour' ? ' (floored to the hour)' : ''}${options.anchorMs.weekly !== undefined ? '; weeks from the reset time given' : ''}`,
    );
    for (const win of p.windows) lines.push(...windowLines(win, now, fileOf));
    const own = server.get(p.family);
    if (own) {
      lines.push(`  the server's figures (rate_limits in ${plainText(basename(own.file), 60)}):`);
      for (const c of own.checks) for (const l of serverCheckLines(c)) lines.push(`    ${l}`);
    }
    const active = p.windows.filter((x) => x.active && x.limits.length > 0);
    for (const a of active) {
      const l = a.limits[0]!;
      lines.push(`  now: ${KIND_LABEL[a.kind]} window ${limitNowText(l)}`);
    }
    lines.push('');
  }
  if (Object.keys(options.limits).length === 0)
    lines.push('No limit given: the plans do not publish theirs. --limit-5h and --limit-week set yours (tokens or $).');
  if (left.untimed > 0) lines.push(`${left.untimed} calls without a time left out.`);
  if (left.otherAgents > 0) lines.push(`${left.otherAgents} calls of other agents left out (no plan windows).`);
  if (left.unread > 0) lines.push(`${left.unread} files could not be read.`);
  return lines.join('\n').trimEnd() + '\n';
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The windows as `windows --json` prints them (docs/reference/json-output.md). */
export function windowsJson(
  plans: readonly PlanWindows[],
  options: WindowOptions,
  now: number,
  fileOf: ReadonlyMap<string, string>,
  left: Leftovers,
  server: ReadonlyMap<PlanFamily, ServerReport> = new Map(),
): Record<string, unknown> {
  return {
    now: iso(now),
    rule: {
      align: options.align,
      weeklyResetAt: options.anchorMs.weekly === undefined ? null : iso(options.anchorMs.weekly),
      lengthsMs: { '5h': 5 * 3_600_000, weekly: 7 * 24 * 3_600_000 },
    },
    limits: options.limits,
    plans: plans.map((p) => ({
      plan: p.family,
      windows: p.windows.map((w) => ({
        kind: w.kind,
        startedAt: iso(w.startMs),
        resetsAt: iso(w.endMs),
        active: w.active,
        firstCallAt: iso(w.firstCallMs),
        lastCallAt: iso(w.lastCallMs),
        calls: w.calls,
        tokens: w.tokens,
        costUsd: w.usd,
        unpricedCalls: w.unpricedCalls,
        burn: w.burn,
        projectedAtReset: w.projected,
        limits: w.limits,
        sessions: w.sessions.map((s) => ({ ...s, file: fileOf.get(s.session) ?? null })),
      })),
      server: serverJson(server.get(p.family)),
    })),
    untimedCalls: left.untimed,
    otherAgentCalls: left.otherAgents,
    unreadFiles: left.unread,
  };
}

function serverJson(own: ServerReport | undefined): Record<string, unknown> | null {
  if (!own) return null;
  return {
    file: own.file,
    planType: own.checks[0]?.planType ?? null,
    windows: own.checks.map((c) => ({
      slot: c.server.slot,
      kind: c.server.kind,
      usedPercent: c.server.usedPercent,
      windowMinutes: c.server.windowMinutes,
      startedAt: iso(c.serverStartMs),
      resetsAt: iso(c.server.resetsAtMs),
      reportedAt: iso(c.observedAtMs),
      ours: {
        calls: c.calls,
        tokens: c.tokens,
        costUsd: c.usd,
        window: c.ours ? { startedAt: iso(c.ours.startMs), resetsAt: iso(c.ours.endMs) } : null,
        resetDiffMs: c.resetDiffMs,
      },
      impliedLimit: { tokens: c.impliedTokens, usd: c.impliedUsd },
    })),
  };
}
