import type { Session } from '../trace/model';

/** Why a call's prefix was not served from the cache, as far as the trace shows. */
export type MissCause = 'first-call' | 'subagent-start' | 'compaction' | 'idle-gap' | 'prefix-change' | 'unexplained';

/** Causes in the order they are tried; the first that fits is reported. */
export const MISS_CAUSES: readonly MissCause[] = [
  'first-call',
  'subagent-start',
  'compaction',
  'idle-gap',
  'prefix-change',
  'unexplained',
];

/** A call whose cached share dropped, and the likely reason. */
export interface CacheMiss {
  callIndex: number;
  cause: MissCause;
  /** cached / input of this call. */
  cachedShare: number;
  /** Tokens the previous call's prompt held that this call had to prefill again (null for first calls). */
  lostTokens: number | null;
  /** Words for the hover: "idle 7 min 12 s > cache TTL 5 min". */
  detail: string;
}

/** Options of the miss analysis. */
export interface MissOptions {
  /** The provider's cache TTL: a longer gap between calls explains a miss (default 5 minutes). */
  cacheTtlMs: number;
  /** A call misses when less than this share of the previous call's prompt came back from the cache. */
  missRatio: number;
}

export const DEFAULT_MISS_OPTIONS: MissOptions = { cacheTtlMs: 5 * 60_000, missRatio: 0.5 };

function minutes(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s` : `${s} s`;
}

/**
 * Finds the calls whose prefix was lost and says why, from what the trace shows. A
 * call misses when less than `missRatio` of the previous call's prompt came back from
 * the cache (the whole previous prompt should: the next prompt extends it); a
 * session's first call misses when less than that share of its own prompt is cached.
 * Causes, first match wins: the first call (or a sub-agent's first call), a compaction
 * just before, an idle gap longer than the cache TTL, a prefix change (a model switch
 * is the one the logs show; a changed system prompt or tool list is invisible), else
 * unexplained.
 */
export function findCacheMisses(session: Session, options: MissOptions = DEFAULT_MISS_OPTIONS): CacheMiss[] {
  const misses: CacheMiss[] = [];
  const calls = session.calls;
  // The first compaction before each call, by index: a lookup per miss, not a scan of every compaction.
  const firstCompaction = new Map<number, Session['compactions'][number]>();
  for (const c of session.compactions) if (!firstCompaction.has(c.beforeCall)) firstCompaction.set(c.beforeCall, c);
  const compactionBefore = (i: number): Session['compactions'][number] | undefined => firstCompaction.get(i);
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!;
    const { cached, input } = call.tokens;
    if (cached === null || input === null || input === 0) continue;
    const share = cached / input;
    const prev = i > 0 ? calls[i - 1]! : null;
    if (!prev) {
      if (share >= options.missRatio) continue;
      const cause: MissCause = session.role === 'main' ? 'first-call' : 'subagent-start';
      misses.push({
        callIndex: i,
        cause,
        cachedShare: share,
        lostTokens: null,
        detail:
          cause === 'first-call'
            ? 'first call of the session'
            : `first call of ${session.role === 'compaction' ? 'the compaction agent' : 'a sub-agent'}: its prefix is new`,
      });
      continue;
    }
    const prevInput = prev.tokens.input;
    if (prevInput === null || prevInput === 0 || cached >= options.missRatio * prevInput) continue;
    const lost = prevInput - cached;
    const compaction = compactionBefore(i);
    const start = call.startMs ?? call.endMs;
    const gapMs = start !== null && prev.endMs !== null ? start - prev.endMs : null;
    let cause: MissCause;
    let detail: string;
    if (compaction) {
      cause = 'compaction';
      detail = compaction.rewind
        ? 'a rewind to an earlier message cut the context back just before this call'
        : `compaction (${compaction.trigger ?? 'unknown trigger'}) replaced the context just before this call`;
    } else if (gapMs !== null && gapMs > options.cacheTtlMs) {
      cause = 'idle-gap';
      detail = `idle ${minutes(gapMs)} since the previous call > cache TTL ${minutes(options.cacheTtlMs)}`;
    } else if (prev.model !== null && call.model !== null && prev.model !== call.model) {
      cause = 'prefix-change';
      detail = `model switched from ${prev.model} to ${call.model}: a new model has its own cache`;
    } else {
      cause = 'unexplained';
      detail =
        'no compaction, idle gap or model switch in the trace (a changed system prompt or tool list does not show in logs)';
    }
    misses.push({ callIndex: i, cause, cachedShare: share, lostTokens: lost, detail });
  }
  return misses;
}

/** Misses counted by cause, every cause present (0 when none). */
export function countMissCauses(misses: readonly CacheMiss[]): Record<MissCause, number> {
  const counts = Object.fromEntries(MISS_CAUSES.map((c) => [c, 0])) as Record<MissCause, number>;
  for (const m of misses) counts[m.cause] += 1;
  return counts;
}
