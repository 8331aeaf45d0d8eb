import { parseLimit, planFamily, planWindows } from '../cost/planWindows';
import type {
  LimitStatus,
  PlanFamily,
  PlanWindow,
  PlanWindows,
  WindowCall,
  WindowKind,
  WindowLimit,
  WindowOptions,
} from '../cost/planWindows';
import type { ImpliedLimit, ServerWindowCheck } from '../cost/serverRateLimits';
import { formatCompact, formatCount, formatPercent, formatUsd } from '../text/formatNumbers';
import { activeMs } from './sessionQuery';
import type { SessionRow } from './sessionQuery';
import type { CallRecord } from './sessionRecord';
import { localDateTime, localTime, shortDuration } from './sessionText';

/**
 * The plan windows of this machine's sessions as the Agent Sessions view and the status
 * bar show them: the same windows `agent-trace windows` rebuilds (src/cli/windows.ts), from
 * the calls the session index keeps instead of a fresh read of every log.
 */

/** How far back the windows look: a weekly window open now began at most 7 days ago, plus a day of slack (as the CLI). */
export const WINDOWS_LOOKBACK_MS = 8 * 24 * 3_600_000;

/** A plan's display name. */
export const PLAN_LABELS: Readonly<Record<PlanFamily, string>> = { claude: 'Claude (Claude Code)', codex: 'Codex' };

/** A window kind's display name. */
export const WINDOW_KIND_LABELS: Readonly<Record<WindowKind, string>> = { '5h': '5-hour', weekly: 'weekly' };

/** The sessions whose calls count towards a plan's windows now: Claude Code and Codex sessions (sub-agents too) active within the lookback. */
export function windowSessions(rows: readonly SessionRow[], nowMs: number): SessionRow[] {
  return rows.filter(
    (r) => r.fileStatus === 'ok' && planFamily(r.agentId) !== null && nowMs - activeMs(r) <= WINDOWS_LOOKBACK_MS,
  );
}

/**
 * One indexed session's calls as the windows count them, exactly as the CLI's ledger does
 * (src/core/cost/callLedger.ts): the call's start (else end) time, its whole prompt (cached
 * included) plus its output, its list-price dollars. Calls without a time are left out.
 */
export function windowCallsOf(row: SessionRow, calls: readonly CallRecord[]): WindowCall[] {
  const out: WindowCall[] = [];
  for (const c of calls) {
    const timeMs = c.startMs ?? c.endMs;
    if (timeMs === null) continue;
    out.push({ timeMs, endMs: c.endMs, session: row.key, tokens: (c.input ?? 0) + (c.output ?? 0), usd: c.costUsd });
  }
  return out;
}

/** Each plan's windows over the sessions' calls (plans without a call are left out), Claude first. */
export function sessionPlanWindows(
  sessions: ReadonlyArray<{ row: SessionRow; calls: readonly CallRecord[] }>,
  optionsOf: (family: PlanFamily) => WindowOptions,
  nowMs: number,
): PlanWindows[] {
  const byPlan = new Map<PlanFamily, WindowCall[]>();
  for (const { row, calls } of sessions) {
    const family = planFamily(row.agentId);
    if (family === null) continue;
    const list = byPlan.get(family) ?? [];
    for (const c of windowCallsOf(row, calls)) list.push(c);
    byPlan.set(family, list);
  }
  const plans: PlanWindows[] = [];
  for (const family of ['claude', 'codex'] as const) {
    const calls = byPlan.get(family);
    if (calls && calls.length > 0) plans.push(planWindows(family, calls, optionsOf(family), nowMs));
  }
  return plans;
}

/** "of $40: 62% · limit in ~1 h 10 min" (the CLI's words). */
export function limitText(l: LimitStatus, active: boolean): string {
  const cap = l.unit === 'usd' ? formatUsd(l.limit) : `${formatCompact(l.limit)} tokens`;
  let when = '';
  if (l.timeToLimitMs === 0) when = ' · limit reached';
  else if (active && l.timeToLimitMs !== null)
    when = l.reachedBeforeReset
      ? ` · limit in ~${shortDuration(l.timeToLimitMs)}`
      : ' · limit not reached before the reset at this rate';
  return `of ${cap}: ${formatPercent(l.share)}${when}`;
}

/** "62% · limit in ~1 h 10 min" for an active window's first limit (the CLI's "now:" line). */
export function limitNowText(l: LimitStatus): string {
  return `${formatPercent(l.share)}${l.timeToLimitMs === 0 ? ' · limit reached' : l.reachedBeforeReset && l.timeToLimitMs !== null ? ` · limit in ~${shortDuration(l.timeToLimitMs)}` : ''}`;
}

/** The window of `kind` open at `nowMs`, if any. */
export function activeWindow(plan: PlanWindows, kind: WindowKind): PlanWindow | null {
  return plan.windows.find((w) => w.kind === kind && w.active) ?? null;
}

/**
 * An active window in a few words: with a limit, how much of it is used and how soon it is
 * reached ("5h 62% · limit in ~1 h 10 min"); without one, what it used and when it resets
 * ("5h 1.2M tokens · resets in 2 h 05 min").
 */
export function windowShortText(w: PlanWindow, nowMs: number): string {
  const kind = w.kind === '5h' ? '5h' : 'week';
  const first = w.limits[0];
  if (first) return `${kind} ${limitNowText(first)}`;
  return `${kind} ${formatCompact(w.tokens)} tokens · resets in ${shortDuration(w.endMs - nowMs)}`;
}

/**
 * A limit as a setting holds it: "2M", "$40", or both ("2M, $40"). Empty: no limit. A part
 * that is neither tokens nor dollars makes the whole value unusable (`problem` says which).
 */
export function limitSetting(text: string): { limit: WindowLimit | null; problem: string | null } {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) return { limit: null, problem: null };
  const limit: WindowLimit = { tokens: null, usd: null };
  for (const p of parts) {
    const parsed = parseLimit(p);
    if (!parsed) return { limit: null, problem: `"${p}" is neither tokens (2M, 500k) nor dollars ($40)` };
    if ('tokens' in parsed) limit.tokens = parsed.tokens;
    else limit.usd = parsed.usd;
  }
  return { limit, problem: null };
}

function impliedText(l: ImpliedLimit, money: (n: number) => string): string {
  if (l.low === null) return `~${money(l.value)}`;
  return `~${money(l.value)} (${l.high === null ? `at least ${money(l.low)}` : `${money(l.low)}–${money(l.high)}`}: the percent is whole)`;
}

/** "5-hour window", or the server's own length when it is neither 5 hours nor a week. */
function serverWindowName(c: ServerWindowCheck): string {
  return c.server.kind
    ? `${WINDOW_KIND_LABELS[c.server.kind]} window`
    : `${formatCount(c.server.windowMinutes)}-minute window`;
}

/**
 * Codex's own figure for a window beside ours, in two lines: what the server said (used share,
 * reset, how our reset differs) and what our logs saw in its window, with the limit it implies.
 */
export function serverCheckLines(c: ServerWindowCheck): string[] {
  const reset = c.server.kind === 'weekly' ? localDateTime(c.server.resetsAtMs) : localTime(c.server.resetsAtMs);
  let ours = '; no window of ours holds that time';
  if (c.resetDiffMs !== null) {
    const d = c.resetDiffMs;
    ours =
      Math.abs(d) < 60_000
        ? '; ours resets within a minute of it'
        : `; ours resets ${shortDuration(Math.abs(d))} ${d > 0 ? 'later' : 'earlier'}`;
  }
  const first = `Codex's own figure (${c.planType === null ? '' : `${c.planType} plan, `}${localDateTime(c.observedAtMs)}): ${serverWindowName(c)} ${formatPercent(c.server.usedPercent / 100)} used, resets ${reset}${ours}.`;
  if (c.calls === 0) return [first, 'Our logs show no call in its window up to then: no limit implied.'];
  const seen = `Our logs in its window up to then: ${formatCompact(c.tokens)} tokens${c.usd === null ? '' : `, ${formatUsd(c.usd)}`} in ${formatCount(c.calls)} calls`;
  if (c.impliedTokens === null) return [first, `${seen}; at 0% used no limit is implied.`];
  const usd = c.impliedUsd === null ? '' : `, ${impliedText(c.impliedUsd, formatUsd)}`;
  return [first, `${seen}: a limit of ${impliedText(c.impliedTokens, (n) => `${formatCompact(n)} tokens`)}${usd}.`];
}
