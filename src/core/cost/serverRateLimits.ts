import type { PlanWindow, WindowCall, WindowKind } from './planWindows';

/**
 * Codex's own account of its plan windows. Each `event_msg` / `token_count` line of a Codex
 * rollout carries `rate_limits.primary` and `.secondary`: `used_percent` (of the plan's limit
 * for that window, as OpenAI's server counts it), `window_minutes` (300: the 5-hour window;
 * 10080: the weekly one) and `resets_at` (Unix seconds). Set beside the window counted from
 * the logs, the two give the limit the server's percentage implies: the tokens (and list-price
 * dollars) our logs show in the server's window up to that report, divided by the share used.
 * The rules and their caveats are in docs/guide/windows.md.
 */

/** One window as the server reported it. */
export interface ServerWindow {
  /** `primary` or `secondary`, as the log names it. */
  slot: 'primary' | 'secondary';
  /** 300 minutes → 5h, 10080 → weekly; another length → null (shown, not matched). */
  kind: WindowKind | null;
  usedPercent: number;
  windowMinutes: number;
  resetsAtMs: number;
}

/** The last rate-limit report of a Codex log. */
export interface ServerRateLimits {
  /** The time of the `token_count` line that carried it. */
  observedAtMs: number;
  /** `rate_limits.plan_type` when the log names one (newer CLIs: "plus", "pro"…); null otherwise or when it is not a short plain word. */
  planType: string | null;
  windows: ServerWindow[];
}

/** How much of a log's end is read for its last report: every `token_count` line carries one, so a few lines suffice; 256 KiB spans many. */
export const RATE_LIMIT_TAIL_BYTES = 256 * 1024;

const KIND_BY_MINUTES: Readonly<Record<number, WindowKind>> = { 300: '5h', 10080: 'weekly' };

function finiteNumber(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function serverWindow(slot: ServerWindow['slot'], v: unknown): ServerWindow | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  const usedPercent = finiteNumber(o.used_percent);
  const windowMinutes = finiteNumber(o.window_minutes);
  const resetsAt = finiteNumber(o.resets_at);
  if (usedPercent === null || windowMinutes === null || resetsAt === null || windowMinutes <= 0 || usedPercent < 0)
    return null;
  return {
    slot,
    kind: KIND_BY_MINUTES[windowMinutes] ?? null,
    usedPercent,
    windowMinutes,
    resetsAtMs: resetsAt * 1000,
  };
}

/** The rate limits one rollout line reports, or null when it reports none (any other line, bad JSON, a partial first line of a tail). */
export function lineRateLimits(line: string): ServerRateLimits | null {
  if (!line.includes('"rate_limits"')) return null;
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof row !== 'object' || row === null) return null;
  const r = row as { timestamp?: unknown; payload?: { type?: unknown; rate_limits?: unknown } };
  if (r.payload?.type !== 'token_count' || typeof r.timestamp !== 'string') return null;
  const observedAtMs = Date.parse(r.timestamp);
  const rl = r.payload.rate_limits;
  if (!Number.isFinite(observedAtMs) || typeof rl !== 'object' || rl === null) return null;
  const limits = rl as Record<string, unknown>;
  const windows = [serverWindow('primary', limits.primary), serverWindow('secondary', limits.secondary)].filter(
    (w): w is ServerWindow => w !== null,
  );
  const plan = limits.plan_type;
  const planType = typeof plan === 'string' && /^[a-z0-9_-]{1,20}$/i.test(plan) ? plan : null;
  return windows.length > 0 ? { observedAtMs, planType, windows } : null;
}

/** The latest report (by its time) among a log's lines; null when none has one. */
export function latestRateLimits(text: string): ServerRateLimits | null {
  let best: ServerRateLimits | null = null;
  for (const line of text.split('\n')) {
    const r = lineRateLimits(line);
    if (r && (best === null || r.observedAtMs >= best.observedAtMs)) best = r;
  }
  return best;
}

/** The limit a server percentage implies, with the range its rounding allows. */
export interface ImpliedLimit {
  /** used ÷ (used_percent / 100). */
  value: number;
  /**
   * A whole-number percentage p may stand for anything in (p − 1, p + 1) whether the server
   * rounds, floors or ceils: the limit then lies between used ÷ (p + 1)% and used ÷ (p − 1)%
   * (`high` null: unbounded, when p is 1). Null when the percentage has decimals.
   */
  low: number | null;
  high: number | null;
}

/** The server's figure for one window beside ours. */
export interface ServerWindowCheck {
  server: ServerWindow;
  observedAtMs: number;
  planType: string | null;
  /** The server's window: `resets_at` − `window_minutes`. */
  serverStartMs: number;
  /** Our logs' calls that ended in the server's window, up to the report. */
  calls: number;
  tokens: number;
  /** List-price dollars of those calls; null when one could not be priced. */
  usd: number | null;
  /** Null when the server reports 0% (too little used to imply anything) or ours saw no call. */
  impliedTokens: ImpliedLimit | null;
  impliedUsd: ImpliedLimit | null;
  /** Our counted window of the same kind that holds the report's time, if any. */
  ours: { startMs: number; endMs: number } | null;
  /** Our window's reset minus the server's (positive: ours resets later); null without ours. */
  resetDiffMs: number | null;
}

function implied(used: number, percent: number): ImpliedLimit | null {
  if (percent <= 0 || used <= 0) return null;
  const whole = Number.isInteger(percent);
  return {
    value: used / (percent / 100),
    low: whole ? used / ((percent + 1) / 100) : null,
    high: whole && percent > 1 ? used / ((percent - 1) / 100) : null,
  };
}

/**
 * Each server window beside what our calls show in it: the calls timed within
 * [resets_at − window_minutes, the report's time] by their end, and the limit the percentage implies.
 * `calls` are the plan's calls as the windows count them; `windows` the windows counted from them.
 */
export function checkServerWindows(
  report: ServerRateLimits,
  calls: readonly WindowCall[],
  windows: readonly PlanWindow[],
): ServerWindowCheck[] {
  return report.windows.map((server) => {
    const serverStartMs = server.resetsAtMs - server.windowMinutes * 60_000;
    let n = 0;
    let tokens = 0;
    let usd: number | null = 0;
    for (const c of calls) {
      // The server counts a call when it completes (a 5-hour window's start is its first call's
      // end, to the second, on the real logs): the end time, the start when there is none.
      const t = c.endMs ?? c.timeMs;
      if (t < serverStartMs || t > report.observedAtMs) continue;
      n += 1;
      tokens += c.tokens;
      usd = usd === null || c.usd === null ? null : usd + c.usd;
    }
    const mine = windows.find(
      (w) => w.kind === server.kind && w.startMs <= report.observedAtMs && report.observedAtMs < w.endMs,
    );
    return {
      server,
      observedAtMs: report.observedAtMs,
      planType: report.planType,
      serverStartMs,
      calls: n,
      tokens,
      usd: n === 0 ? null : usd,
      impliedTokens: implied(tokens, server.usedPercent),
      impliedUsd: usd === null || n === 0 ? null : implied(usd, server.usedPercent),
      ours: mine ? { startMs: mine.startMs, endMs: mine.endMs } : null,
      resetDiffMs: mine ? mine.endMs - server.resetsAtMs : null,
    };
  });
}
