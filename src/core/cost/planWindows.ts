import type { FormatId } from '../trace/model';

/**
 * Subscription plan windows (Claude's 5-hour session and weekly limits, Codex's 5-hour
 * and weekly ones) rebuilt from the calls' timestamps: what each window used, how fast,
 * and when a limit the user sets would be reached. The plans' limits are not published,
 * so nothing here guesses one: the user gives them in tokens or dollars at list price.
 * The rules and their sources are in docs/guide/windows.md.
 */

/** The plans whose windows are modelled. */
export type PlanFamily = 'claude' | 'codex';

/** The two windows each plan counts at once. */
export type WindowKind = '5h' | 'weekly';

export const FIVE_HOURS_MS = 5 * 3_600_000;
export const ONE_WEEK_MS = 7 * 24 * 3_600_000;

/** Every plan's windows: 5 hours and 7 days, counted at the same time. */
export const WINDOW_LENGTHS: Readonly<Record<WindowKind, number>> = { '5h': FIVE_HOURS_MS, weekly: ONE_WEEK_MS };

/** The plan a trace format's calls count against; null for agents without such a plan. */
export function planFamily(format: FormatId | string | null): PlanFamily | null {
  if (format === 'claude-code') return 'claude';
  if (format === 'codex') return 'codex';
  return null;
}

/** One call as the windows need it. */
export interface WindowCall {
  timeMs: number;
  /** When it ended, if known: a server that counts usage as calls complete counts it then (serverRateLimits.ts). */
  endMs?: number | null;
  /** The session (main or sub-agent) it belongs to, for its share of the window. */
  session: string;
  /** Whole prompt (cached included) plus output: what a token limit is compared with. */
  tokens: number;
  /** List-price dollars; null when the call could not be priced. */
  usd: number | null;
}

/** A limit the user sets for one kind of window; either or both may be null. */
export interface WindowLimit {
  tokens: number | null;
  usd: number | null;
}

/** How windows start. */
export interface WindowOptions {
  /** `call`: a window starts at the call that opens it (Anthropic's and OpenAI's wording); `hour`: floored to the UTC hour (ccusage's blocks). */
  align: 'call' | 'hour';
  /**
   * A fixed reset time the user read from /usage or /status: windows of this kind then run
   * anchor + k × length, used or not. Without it a window opens at the first call after the
   * previous one closed.
   */
  anchorMs: Partial<Record<WindowKind, number>>;
  limits: Partial<Record<WindowKind, WindowLimit>>;
}

/** One session's part of a window. */
export interface WindowShare {
  session: string;
  calls: number;
  tokens: number;
  usd: number | null;
  /** Of the window's tokens. */
  tokenShare: number;
  /** Of the window's priced dollars; null when nothing was priced. */
  usdShare: number | null;
}

/** How close a window is to a limit. */
export interface LimitStatus {
  unit: 'tokens' | 'usd';
  limit: number;
  used: number;
  /** used ÷ limit. */
  share: number;
  /** At the burn rate, from `nowMs`: 0 when already reached; null when the rate is unknown or zero or the window has closed. */
  timeToLimitMs: number | null;
  /** The limit comes before the window resets, at this rate (null when not known). */
  reachedBeforeReset: boolean | null;
}

/** One window. */
export interface PlanWindow {
  kind: WindowKind;
  startMs: number;
  endMs: number;
  /** `nowMs` falls inside it. */
  active: boolean;
  firstCallMs: number;
  lastCallMs: number;
  calls: number;
  tokens: number;
  /** Σ of the priced calls (null when none was). */
  usd: number | null;
  unpricedCalls: number;
  /** Per hour over first → last call; null for a single instant. */
  burn: { tokensPerHour: number; usdPerHour: number | null } | null;
  /** An active window at its burn rate until it resets; null otherwise. */
  projected: { tokens: number; usd: number | null } | null;
  /** One per unit the user set a limit in. */
  limits: LimitStatus[];
  sessions: WindowShare[];
}

/** Every window of one plan, oldest first. */
export interface PlanWindows {
  family: PlanFamily;
  windows: PlanWindow[];
}

const HOUR_MS = 3_600_000;

/** Where the window that a call at `t` opens starts. */
function windowStart(t: number, kind: WindowKind, options: WindowOptions): number {
  const anchor = options.anchorMs[kind];
  const length = WINDOW_LENGTHS[kind];
  if (anchor !== undefined) return anchor + Math.floor((t - anchor) / length) * length;
  return options.align === 'hour' ? Math.floor(t / HOUR_MS) * HOUR_MS : t;
}

/** The windows of one kind over the calls (any order; calls without a time are left to the caller). */
export function windowsOf(
  calls: readonly WindowCall[],
  kind: WindowKind,
  options: WindowOptions,
  nowMs: number,
): PlanWindow[] {
  const sorted = [...calls].sort((a, b) => a.timeMs - b.timeMs);
  const groups: Array<{ startMs: number; endMs: number; calls: WindowCall[] }> = [];
  for (const c of sorted) {
    const open = groups[groups.length - 1];
    // A call at the very end of a window belongs to the next one: a window covers [start, start + length).
    if (open && c.timeMs < open.endMs) open.calls.push(c);
    else {
      const startMs = windowStart(c.timeMs, kind, options);
      groups.push({ startMs, endMs: startMs + WINDOW_LENGTHS[kind], calls: [c] });
    }
  }
  return groups.map((g) => summarize(g.startMs, g.endMs, g.calls, kind, options.limits[kind] ?? null, nowMs));
}

function summarize(
  startMs: number,
  endMs: number,
  calls: readonly WindowCall[],
  kind: WindowKind,
  limit: WindowLimit | null,
  nowMs: number,
): PlanWindow {
  let tokens = 0;
  let usd = 0;
  let priced = 0;
  const bySession = new Map<string, { calls: number; tokens: number; usd: number; priced: number }>();
  for (const c of calls) {
    tokens += c.tokens;
    const s = bySession.get(c.session) ?? { calls: 0, tokens: 0, usd: 0, priced: 0 };
    s.calls += 1;
    s.tokens += c.tokens;
    if (c.usd !== null) {
      usd += c.usd;
      priced += 1;
      s.usd += c.usd;
      s.priced += 1;
    }
    bySession.set(c.session, s);
  }
  const usdOrNull = priced > 0 ? usd : null;
  const firstCallMs = calls[0]!.timeMs;
  const lastCallMs = calls[calls.length - 1]!.timeMs;
  const spanHours = (lastCallMs - firstCallMs) / HOUR_MS;
  const burn =
    spanHours > 0
      ? { tokensPerHour: tokens / spanHours, usdPerHour: usdOrNull === null ? null : usdOrNull / spanHours }
      : null;
  const active = nowMs >= startMs && nowMs < endMs;
  const leftHours = (endMs - nowMs) / HOUR_MS;
  const projected =
    active && burn
      ? {
          tokens: tokens + burn.tokensPerHour * leftHours,
          usd: usdOrNull === null || burn.usdPerHour === null ? null : usdOrNull + burn.usdPerHour * leftHours,
        }
      : null;
  const limits: LimitStatus[] = [];
  const status = (unit: LimitStatus['unit'], cap: number, used: number, rate: number | null): LimitStatus => {
    let timeToLimitMs: number | null = null;
    if (used >= cap) timeToLimitMs = 0;
    else if (active && rate !== null && rate > 0) timeToLimitMs = ((cap - used) / rate) * HOUR_MS;
    return {
      unit,
      limit: cap,
      used,
      share: used / cap,
      timeToLimitMs,
      reachedBeforeReset: used >= cap ? true : timeToLimitMs === null ? null : nowMs + timeToLimitMs < endMs,
    };
  };
  if (limit?.tokens != null) limits.push(status('tokens', limit.tokens, tokens, burn?.tokensPerHour ?? null));
  if (limit?.usd != null) limits.push(status('usd', limit.usd, usdOrNull ?? 0, burn?.usdPerHour ?? null));
  const sessions: WindowShare[] = [...bySession].map(([session, s]) => ({
    session,
    calls: s.calls,
    tokens: s.tokens,
    usd: s.priced > 0 ? s.usd : null,
    tokenShare: tokens > 0 ? s.tokens / tokens : 0,
    usdShare: usdOrNull !== null && usdOrNull > 0 && s.priced > 0 ? s.usd / usdOrNull : null,
  }));
  sessions.sort((a, b) => b.tokens - a.tokens);
  return {
    kind,
    startMs,
    endMs,
    active,
    firstCallMs,
    lastCallMs,
    calls: calls.length,
    tokens,
    usd: usdOrNull,
    unpricedCalls: calls.length - priced,
    burn,
    projected,
    limits,
    sessions,
  };
}

/** Both kinds of window for one plan's calls. */
export function planWindows(
  family: PlanFamily,
  calls: readonly WindowCall[],
  options: WindowOptions,
  nowMs: number,
): PlanWindows {
  return {
    family,
    windows: [...windowsOf(calls, '5h', options, nowMs), ...windowsOf(calls, 'weekly', options, nowMs)],
  };
}

/**
 * "2M", "1.5m", "500k", "2000000" → tokens; "$40", "40usd" → dollars. Null for anything else
 * (a limit of 0 or below included).
 */
export function parseLimit(text: string): { tokens: number } | { usd: number } | null {
  const t = text.trim().toLowerCase();
  const usd = /^\$\s*(\d+(?:\.\d+)?)$/.exec(t) ?? /^(\d+(?:\.\d+)?)\s*usd$/.exec(t);
  if (usd) return Number(usd[1]) > 0 ? { usd: Number(usd[1]) } : null;
  const tok = /^(\d+(?:\.\d+)?)\s*([km]?)$/.exec(t);
  if (!tok) return null;
  const n = Number(tok[1]) * (tok[2] === 'k' ? 1e3 : tok[2] === 'm' ? 1e6 : 1);
  return n > 0 ? { tokens: n } : null;
}
