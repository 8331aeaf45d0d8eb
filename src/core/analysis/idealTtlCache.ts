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

/**
 * The covered steps (a call with a predecessor, a known prompt and a measurable idle gap),
 * by column: a million steps as objects were ~100 MB for a moment, typed arrays are 16 MB.
 */
export interface IdleSteps {
  count: number;
  /** Idle gap before each step. */
  gapMs: Float64Array;
  /** L − fresh: what an eviction-free cache would serve. */
  cacheable: Float64Array;
  /** Sums over the steps: whole prompts L; fresh tokens (context growth minus the previous call's output, within [0, appended]); cacheable; what the real cache served (cached) and prefilled (appended). */
  totals: { prompt: number; fresh: number; cacheable: number; cached: number; appended: number };
  /** Calls left out (the first call, unknown tokens or gap). */
  skipped: number;
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

export const DEFAULT_IDEAL_TTLS: ReadonlyArray<{ ttlMs: number; label: string }> = TRACELAB_PUBLISHED.landmarks.map(
  (l) => ({ ttlMs: l.ttlMs, label: l.label }),
);

/** The covered steps of a session, as TraceLab pairs each step with its predecessor. */
export function idleSteps(session: Session): IdleSteps {
  const calls = session.calls;
  const gapMs = new Float64Array(Math.max(0, calls.length - 1));
  const cacheableOf = new Float64Array(gapMs.length);
  const totals = { prompt: 0, fresh: 0, cacheable: 0, cached: 0, appended: 0 };
  let count = 0;
  for (let i = 1; i < calls.length; i++) {
    const call = calls[i]!;
    const prev = calls[i - 1]!;
    const { input, cached, appended } = call.tokens;
    const start = call.startMs ?? call.endMs;
    if (
      input === null ||
      input === 0 ||
      cached === null ||
      appended === null ||
      prev.tokens.input === null ||
      start === null ||
      prev.endMs === null ||
      start < prev.endMs
    )
      continue;
    const growth = Math.max(0, input - prev.tokens.input);
    const fresh = Math.min(Math.max(growth - (prev.tokens.output ?? 0), 0), appended);
    gapMs[count] = start - prev.endMs;
    cacheableOf[count] = input - fresh;
    count += 1;
    totals.prompt += input;
    totals.fresh += fresh;
    totals.cacheable += input - fresh;
    totals.cached += cached;
    totals.appended += appended;
  }
  return {
    count,
    gapMs: gapMs.subarray(0, count),
    cacheable: cacheableOf.subarray(0, count),
    totals,
    skipped: calls.length - count,
  };
}

export function idealTtlCurve(
  session: Session,
  ttls: ReadonlyArray<{ ttlMs: number; label: string }> = DEFAULT_IDEAL_TTLS,
): IdealTtlCurve {
  const steps = idleSteps(session);
  const { prompt, fresh, cacheable, cached, appended } = steps.totals;
  const at = (ttlMs: number): { hit: number; evicted: number } => {
    let hit = 0;
    let evicted = 0;
    for (let i = 0; i < steps.count; i++) {
      if (steps.gapMs[i]! <= ttlMs) hit += steps.cacheable[i]!;
      else evicted += steps.cacheable[i]!;
    }
    return { hit, evicted };
  };
  const points =
    prompt === 0
      ? []
      : ttls.map(({ ttlMs, label }) => {
          const { hit, evicted } = at(ttlMs);
          const published = TRACELAB_PUBLISHED.landmarks.find((l) => l.ttlMs === ttlMs) ?? null;
          return {
            ttlMs,
            label,
            hitRate: hit / prompt,
            amplification: fresh === 0 ? null : (fresh + evicted) / fresh,
            published: published
              ? {
                  hitRate: published.hitRate,
                  amplification: published.amplification,
                  approximate: published.approximate,
                }
              : null,
          };
        });
  const realHitRate = prompt === 0 ? null : cached / prompt;
  return {
    steps: steps.count,
    skipped: steps.skipped,
    points,
    optimalHitRate: prompt === 0 ? null : cacheable / prompt,
    realHitRate,
    realAmplification: fresh === 0 ? null : appended / fresh,
    effectiveTtlMs: realHitRate === null ? null : effectiveTtl(steps, prompt, realHitRate),
  };
}

/** Walks the steps by gap: the first gap at which the ideal hit rate reaches the real one. */
function effectiveTtl(steps: IdleSteps, prompt: number, real: number): number | null {
  const { gapMs, cacheable } = steps;
  const byGap = new Uint32Array(steps.count);
  for (let i = 0; i < byGap.length; i++) byGap[i] = i;
  byGap.sort((a, b) => gapMs[a]! - gapMs[b]!);
  let hit = 0;
  if (real <= 0) return 0;
  for (let i = 0; i < byGap.length; i++) {
    const gap = gapMs[byGap[i]!]!;
    hit += cacheable[byGap[i]!]!;
    // Steps with the same gap are retained together.
    if (i + 1 < byGap.length && gapMs[byGap[i + 1]!] === gap) continue;
    if (hit / prompt >= real) return gap;
  }
  return null;
}
