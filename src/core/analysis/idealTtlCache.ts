import type { Session } from '../trace/model';

/**
 * The session against TraceLab's published measurements of real Claude Code and Codex
 * sessions (uw-syfi/TraceLab, artifacts/prefix_cache/eviction_tradeoff), computed the same
 * way (docs/cost.md): an ideal prefix cache whose only flaw is an idle TTL. A step
 * (a call after the first) whose idle gap is at most the TTL prefills only its fresh
 * tokens; one whose gap is longer prefills its whole prompt again.
 */

/** TraceLab's figures on their merged Claude Code + Codex trace (their README, "SyFI result analysis"). */
export const TRACELAB_PUBLISHED = {
  source: 'uw-syfi/TraceLab, artifacts/prefix_cache/eviction_tradeoff (merged Claude Code and Codex trace)',
  landmarks: [
    { ttlMs: 60_000, label: '1 min', hitRate: 0.854, amplification: 18.9, approximate: false },
    { ttlMs: 300_000, label: '5 min', hitRate: 0.94, amplification: 7.4, approximate: true },
    { ttlMs: 3_600_000, label: '1 h', hitRate: 0.986, amplification: 1.8, approximate: false },
  ],
  /** Σappended / Σfresh of the caches they measured: ≈5.3× merged, 8.1× Claude, 3.9× Codex. */
  deployedAmplification: { merged: 5.3, claude: 8.1, codex: 3.9 },
} as const;

/** One covered step: a call with a predecessor, a known prompt and a measurable idle gap. */
export interface IdleStep {
  callIndex: number;
  gapMs: number;
  /** Whole prompt L. */
  prompt: number;
  /** Tokens never seen before: context growth minus the previous call's output, within [0, appended]. */
  fresh: number;
  /** L − fresh: what an eviction-free cache would serve. */
  cacheable: number;
  /** What the real cache served (cached) and prefilled (appended). */
  cached: number;
  appended: number;
}

/** The session at one idle TTL. */
export interface IdealTtlPoint {
  ttlMs: number;
  label: string;
  /** Σ cacheable of steps with gap ≤ TTL / Σ L. */
  hitRate: number;
  /** (Σ fresh + Σ cacheable of steps with gap > TTL) / Σ fresh; floors at 1×. */
  amplification: number | null;
  published: { hitRate: number; amplification: number; approximate: boolean } | null;
}

export interface IdealTtlCurve {
  /** Covered steps and how many calls were left out (first call, unknown tokens or gap). */
  steps: number;
  skipped: number;
  points: IdealTtlPoint[];
  /** TTL → ∞: Σ cacheable / Σ L. */
  optimalHitRate: number | null;
  /** The real cache on the same steps: Σ cached / Σ L and Σ appended / Σ fresh. */
  realHitRate: number | null;
  realAmplification: number | null;
  /** The smallest idle TTL at which the ideal cache reaches the real hit rate (TraceLab's "effective eviction time"). */
  effectiveTtlMs: number | null;
}

export const DEFAULT_IDEAL_TTLS: ReadonlyArray<{ ttlMs: number; label: string }> = TRACELAB_PUBLISHED.landmarks.map((l) => ({ ttlMs: l.ttlMs, label: l.label }));

/** The covered steps of a session, as TraceLab pairs each step with its predecessor. */
export function idleSteps(session: Session): { steps: IdleStep[]; skipped: number } {
  const steps: IdleStep[] = [];
  const calls = session.calls;
  for (let i = 1; i < calls.length; i++) {
    const call = calls[i]!;
    const prev = calls[i - 1]!;
    const { input, cached, appended } = call.tokens;
    const start = call.startMs ?? call.endMs;
    if (input === null || input === 0 || cached === null || appended === null || prev.tokens.input === null || start === null || prev.endMs === null || start < prev.endMs) continue;
    const growth = Math.max(0, input - prev.tokens.input);
    const fresh = Math.min(Math.max(growth - (prev.tokens.output ?? 0), 0), appended);
    steps.push({ callIndex: i, gapMs: start - prev.endMs, prompt: input, fresh, cacheable: input - fresh, cached, appended });
  }
  return { steps, skipped: calls.length - steps.length };
}

export function idealTtlCurve(session: Session, ttls: ReadonlyArray<{ ttlMs: number; label: string }> = DEFAULT_IDEAL_TTLS): IdealTtlCurve {
  const { steps, skipped } = idleSteps(session);
  let prompt = 0;
  let fresh = 0;
  let cacheable = 0;
  let cached = 0;
  let appended = 0;
  for (const s of steps) {
    prompt += s.prompt;
    fresh += s.fresh;
    cacheable += s.cacheable;
    cached += s.cached;
    appended += s.appended;
  }
  const at = (ttlMs: number): { hit: number; evicted: number } => {
    let hit = 0;
    let evicted = 0;
    for (const s of steps) {
      if (s.gapMs <= ttlMs) hit += s.cacheable;
      else evicted += s.cacheable;
    }
    return { hit, evicted };
  };
  const points = prompt === 0 ? [] : ttls.map(({ ttlMs, label }) => {
    const { hit, evicted } = at(ttlMs);
    const published = TRACELAB_PUBLISHED.landmarks.find((l) => l.ttlMs === ttlMs) ?? null;
    return {
      ttlMs,
      label,
      hitRate: hit / prompt,
      amplification: fresh === 0 ? null : (fresh + evicted) / fresh,
      published: published ? { hitRate: published.hitRate, amplification: published.amplification, approximate: published.approximate } : null,
    };
  });
  const realHitRate = prompt === 0 ? null : cached / prompt;
  return {
    steps: steps.length,
    skipped,
    points,
    optimalHitRate: prompt === 0 ? null : cacheable / prompt,
    realHitRate,
    realAmplification: fresh === 0 ? null : appended / fresh,
    effectiveTtlMs: realHitRate === null ? null : effectiveTtl(steps, prompt, realHitRate),
  };
}

/** Walks the steps by gap: the first gap at which the ideal hit rate reaches the real one. */
function effectiveTtl(steps: readonly IdleStep[], prompt: number, real: number): number | null {
  const byGap = [...steps].sort((a, b) => a.gapMs - b.gapMs);
  let hit = 0;
  if (real <= 0) return 0;
  for (let i = 0; i < byGap.length; i++) {
    hit += byGap[i]!.cacheable;
    // Steps with the same gap are retained together.
    if (i + 1 < byGap.length && byGap[i + 1]!.gapMs === byGap[i]!.gapMs) continue;
    if (hit / prompt >= real) return byGap[i]!.gapMs;
  }
  return null;
}
