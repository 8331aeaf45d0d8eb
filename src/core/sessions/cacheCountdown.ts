import type { LlmCall, Session } from '../trace/model';

/**
 * How long the provider keeps a session's prompt cache warm after its last call, and
 * what the status bar says about it. Sources (docs/sessions.md): Anthropic caches a
 * prefix for 5 minutes, or 1 hour when written with `ttl: "1h"`, and every read
 * refreshes it; Claude Code logs which kind each call wrote
 * (`usage.cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`).
 * OpenAI clears cached prefixes after 5–10 minutes of inactivity (at most an hour),
 * so for Codex the countdown runs to the 5-minute lower bound.
 */

export const FIVE_MINUTES_MS = 5 * 60_000;
export const ONE_HOUR_MS = 60 * 60_000;

/** How the TTL was decided. */
export type TtlBasis = 'log-1h' | 'log-5m' | 'openai-minimum' | 'setting';

export interface CacheTtl {
  ttlMs: number;
  basis: TtlBasis;
}

/** Optional per-TTL cache-write split of a call (Anthropic logs it; other formats do not). */
interface TtlSplit {
  cacheWrite5m?: number | null;
  cacheWrite1h?: number | null;
}

/**
 * The session's cache TTL: the tier of the last call that wrote to the cache (Claude
 * Code logs it), the OpenAI lower bound for Codex, else the user's setting.
 */
export function sessionCacheTtl(session: Session, fallbackMs: number): CacheTtl {
  if (session.agent?.name === 'codex') return { ttlMs: FIVE_MINUTES_MS, basis: 'openai-minimum' };
  for (let i = session.calls.length - 1; i >= 0; i--) {
    const split = session.calls[i]!.tokens as TtlSplit;
    if ((split.cacheWrite1h ?? 0) > 0) return { ttlMs: ONE_HOUR_MS, basis: 'log-1h' };
    if ((split.cacheWrite5m ?? 0) > 0) return { ttlMs: FIVE_MINUTES_MS, basis: 'log-5m' };
  }
  return { ttlMs: fallbackMs, basis: 'setting' };
}

/**
 * When the cache stops being warm: the last request's start plus the TTL. The request
 * start is when the prefix was read (the line that triggered the call); the response's
 * own timestamp comes after streaming and would overstate the time left.
 */
export function cacheExpiresAt(lastCall: Pick<LlmCall, 'startMs' | 'endMs'>, ttlMs: number): number | null {
  const start = lastCall.startMs ?? lastCall.endMs;
  return start === null ? null : start + ttlMs;
}

/** "cache 3:12" while warm, "cache expired" after, "cache ?" when the log has no times. */
export function countdownText(expiresAtMs: number | null, nowMs: number): string {
  if (expiresAtMs === null) return 'cache ?';
  const left = expiresAtMs - nowMs;
  if (left <= 0) return 'cache expired';
  const totalSeconds = Math.ceil(left / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  const two = (n: number): string => String(n).padStart(2, '0');
  return hours > 0 ? `cache ${hours}:${two(minutes)}:${two(seconds)}` : `cache ${minutes}:${two(seconds)}`;
}

/** The TTL in words for the tooltip. */
export function ttlExplanation(ttl: CacheTtl): string {
  switch (ttl.basis) {
    case 'log-1h':
      return 'The last cache write in this session was a 1-hour write (ephemeral_1h_input_tokens), so the provider keeps the prefix for 1 hour after the last request.';
    case 'log-5m':
      return 'The last cache write in this session was a 5-minute write (ephemeral_5m_input_tokens), so the provider keeps the prefix for 5 minutes after the last request; each call refreshes it.';
    case 'openai-minimum':
      return 'OpenAI clears cached prompts after 5–10 minutes of inactivity (at most 1 hour); the countdown runs to the 5-minute lower bound.';
    case 'setting':
      return `This session has not written to the cache yet; the countdown uses agentTrace.analysis.cacheTtlMinutes (${Math.round(ttl.ttlMs / 60_000)} min).`;
  }
}
