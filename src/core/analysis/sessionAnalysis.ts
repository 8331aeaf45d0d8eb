import type { Session } from '../trace/model';
import { countMissCauses, DEFAULT_MISS_OPTIONS, findCacheMisses } from './cacheMisses';
import type { CacheMiss, MissCause, MissOptions } from './cacheMisses';
import { DEFAULT_FINGERPRINT_OPTIONS, fingerprint } from './fingerprint';
import type { Fingerprint, FingerprintOptions } from './fingerprint';
import { findRetryLoops } from './retryLoops';
import type { RetryAnalysis } from './retryLoops';
import { summarizeSession } from './sessionSummary';
import type { SessionSummary } from './sessionSummary';

/** Everything the analyses can tune; the extension fills it from `agentTrace.analysis.*` settings. */
export interface AnalysisOptions extends FingerprintOptions, MissOptions {
  /** Fewest failed attempts that make a retry loop (default 3). */
  minLoopAttempts: number;
}

export const DEFAULT_ANALYSIS_OPTIONS: AnalysisOptions = {
  ...DEFAULT_FINGERPRINT_OPTIONS,
  ...DEFAULT_MISS_OPTIONS,
  minLoopAttempts: 3,
};

/** A session explained: headline figures, fingerprint, retry loops, cache misses. */
export interface SessionAnalysis {
  summary: SessionSummary;
  fingerprint: Fingerprint;
  retry: RetryAnalysis;
  misses: CacheMiss[];
  missCauses: Record<MissCause, number>;
  /** "12% of this session's calls were spent in 3 retry loops", or null when there are none. */
  loopSentence: string | null;
}

/** The sentence that sums a session's retry loops. */
export function loopSentence(retry: RetryAnalysis, calls: number): string | null {
  const n = retry.loops.length;
  if (n === 0 || calls === 0) return null;
  const pct = (100 * retry.callsInLoops) / calls;
  const shown = pct >= 10 ? pct.toFixed(0) : pct.toFixed(1);
  return `${shown}% of this session's calls were spent in ${n} retry loop${n === 1 ? '' : 's'}`;
}

/** Analyses one session with the same core the CLI, the extension and the webview use; a summary already made for it is reused. */
export function analyzeSession(
  session: Session,
  options: Partial<AnalysisOptions> = {},
  summary: SessionSummary = summarizeSession(session),
): SessionAnalysis {
  const o: AnalysisOptions = { ...DEFAULT_ANALYSIS_OPTIONS, ...options };
  const retry = findRetryLoops(session, o.minLoopAttempts);
  const misses = findCacheMisses(session, o);
  return {
    summary,
    fingerprint: fingerprint(session, o),
    retry,
    misses,
    missCauses: countMissCauses(misses),
    loopSentence: loopSentence(retry, session.calls.length),
  };
}
