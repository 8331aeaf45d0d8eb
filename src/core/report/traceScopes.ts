import { shortSessionId } from '../view/sessionList';
import { uiText } from '../text/safeText';
import { formatPercent, formatUsd } from '../text/formatNumbers';
import type { TraceReport } from './traceReport';

/**
 * Figures of a trace said one scope at a time. A trace holds several sessions (main
 * threads, their sub-agents, the agent's compaction agent); a sentence that mixes the
 * main thread's calls with the whole trace's dollars reads as one session's figures
 * and is wrong for both. Every summary a user reads in VS Code's own UI (the *Analyze
 * Agent Session* notification, the CodeLens on the first line) is built here, and each
 * sentence names its scope.
 */

/** What a scope sums over one session. */
export interface ScopeSession {
  role: string;
  llmCalls: number;
  userTurns: number;
  /** Σcached and Σinput over the calls that have both (null when none does). */
  cached: number | null;
  input: number | null;
  failedToolCalls: number;
  retryLoops: number;
}

/** The figures of a set of sessions. */
export interface ScopeFigures {
  sessions: number;
  mainSessions: number;
  /** Sub-agents and compaction agents. */
  subAgents: number;
  llmCalls: number;
  userTurns: number;
  /** Σcached / Σinput over the sessions (token-weighted), null when unknown. */
  cacheHitRate: number | null;
  failedToolCalls: number;
  retryLoops: number;
}

/** Sums sessions into one scope. */
export function scopeFigures(sessions: readonly ScopeSession[]): ScopeFigures {
  let cached = 0;
  let input = 0;
  let known = false;
  const out: ScopeFigures = {
    sessions: sessions.length,
    mainSessions: 0,
    subAgents: 0,
    llmCalls: 0,
    userTurns: 0,
    cacheHitRate: null,
    failedToolCalls: 0,
    retryLoops: 0,
  };
  for (const s of sessions) {
    if (s.role === 'main') out.mainSessions += 1;
    else out.subAgents += 1;
    out.llmCalls += s.llmCalls;
    out.userTurns += s.userTurns;
    out.failedToolCalls += s.failedToolCalls;
    out.retryLoops += s.retryLoops;
    if (s.cached !== null && s.input !== null) {
      cached += s.cached;
      input += s.input;
      known = true;
    }
  }
  out.cacheHitRate = known && input > 0 ? cached / input : null;
  return out;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "$2.91", "$2.91 + 3 calls unpriced", "cost unknown (3 calls unpriced)": numbers only, no trace text. */
export function costWords(totalUsd: number | null, unpriced: number): string {
  if (totalUsd === null) return unpriced > 0 ? `cost unknown (${plural(unpriced, 'call')} unpriced)` : 'cost unknown';
  return unpriced > 0 ? `${formatUsd(totalUsd)} + ${plural(unpriced, 'call')} unpriced` : formatUsd(totalUsd);
}

/** "3 sessions (2 main, 1 sub-agent)", "1 session". */
export function sessionsWords(f: ScopeFigures): string {
  if (f.sessions === 1) return '1 session';
  if (f.subAgents === 0) return plural(f.sessions, 'session');
  return `${plural(f.sessions, 'session')} (${f.mainSessions} main, ${plural(f.subAgents, 'sub-agent')})`;
}

/** A report session as a scope's part. */
function reportScopeSession(s: TraceReport['sessions'][number]): ScopeSession {
  return {
    role: s.role,
    llmCalls: s.llmCalls,
    userTurns: s.userTurns,
    cached: s.tokens.cached,
    input: s.tokens.input,
    failedToolCalls: s.toolCalls.failed,
    retryLoops: s.retryLoops.length,
  };
}

/** The sentences of the *Analyze Agent Session* notification, one scope each. */
export interface AnalyzeNotice {
  /** The whole trace (every session): absent when the trace is one session (then the session's sentence says it all). */
  trace: string | null;
  /** The session the inspector opens on (the first main session), named, with its cache TTL what-if. */
  session: string | null;
  /** The notification: the file, then the sentences. */
  text: string;
}

/**
 * The notification after *Analyze Agent Session*: the whole trace's figures in one
 * sentence (its sessions, calls, hit rate, cost, failed tool calls, retry loops, read
 * errors), then the main session's in another (named by its short id), then that
 * session's cache TTL what-if. Ids are trace text: plain, clipped.
 */
export function analyzeNotice(fileLabel: string, report: TraceReport): AnalyzeNotice {
  const errors = report.diagnostics.filter((d) => d.severity === 'error').length;
  const errorWords = plural(errors, 'read error');
  const main = report.sessions.find((s) => s.role === 'main') ?? report.sessions[0];
  const whole = scopeFigures(report.sessions.map(reportScopeSession));
  const wholeCost = report.cost ? `, cost ${costWords(report.cost.totalUsd, report.cost.unpricedCalls)}` : '';
  // User turns belong to one conversation: the session says them, the whole trace does not sum them.
  const figures = (
    f: { llmCalls: number; cacheHitRate: number | null },
    turns: number | null,
    cost: string,
    failed: number,
    loops: number,
  ): string =>
    `${plural(f.llmCalls, 'LLM call')}${turns === null ? '' : `, ${plural(turns, 'user turn')}`}, cache hit rate ${formatPercent(f.cacheHitRate)}${cost}, ${plural(failed, 'failed tool call')}, ${plural(loops, 'retry loop')}`;
  if (!main) {
    const trace = `Whole trace: no sessions, ${errorWords}.`;
    return { trace, session: null, text: `${fileLabel}: ${trace}` };
  }
  const id = uiText(shortSessionId(main.id), { max: 40 });
  const kind = main.role === 'main' ? 'main session' : main.role === 'compaction' ? 'compaction agent' : 'sub-agent';
  const sessionCost = main.cost ? `, cost ${costWords(main.cost.totalUsd, main.cost.unpricedCalls)}` : '';
  const ttl = main.cacheTtl?.sentence ? ` ${uiText(main.cacheTtl.sentence, { max: 300 })}` : '';
  const own = figures(main, main.userTurns, sessionCost, main.toolCalls.failed, main.retryLoops.length);
  if (report.sessions.length === 1) {
    const session = `The ${kind} ${id}: ${own}, ${errorWords}.${ttl}`;
    return { trace: null, session, text: `${fileLabel}: ${session}` };
  }
  const trace = `Whole trace, ${sessionsWords(whole)}: ${figures(whole, null, wholeCost, whole.failedToolCalls, whole.retryLoops)}, ${errorWords}.`;
  const which = whole.mainSessions > 1 && main.role === 'main' ? ` (the first of ${whole.mainSessions})` : '';
  const session = `The ${kind} ${id}${which} alone: ${own}.${ttl}`;
  return { trace, session, text: `${fileLabel}. ${trace} ${session}` };
}
