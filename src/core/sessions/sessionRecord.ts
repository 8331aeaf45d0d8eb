import { findCacheMisses } from '../analysis/cacheMisses';
import type { MissCause } from '../analysis/cacheMisses';
import { findRetryLoopsOnly } from '../analysis/retryLoops';
import { summarizeSession } from '../analysis/sessionSummary';
import type { AnalysisOptions } from '../analysis/sessionAnalysis';
import type { TokenTotals } from '../analysis/sessionSummary';
import { DEFAULT_ANALYSIS_OPTIONS } from '../analysis/sessionAnalysis';
import type { ParsedTrace } from '../trace/parseTrace';
import type { LlmCall, Session } from '../trace/model';
import { sessionCacheTtl } from './cacheCountdown';
import type { TtlBasis } from './cacheCountdown';
import type { PriceBook } from '../cost/costTypes';
import { sessionCost } from './sessionCost';
import { sessionTitle } from './sessionTitle';

/**
 * What the session index keeps of one session (a main thread or a sub-agent): the
 * figures the Agent Sessions view, its filters, the several-sessions report, the
 * comparison, the status bar and `agent-trace sessions` show. Computed by the same
 * analyses as the inspector and the CLI, so every surface agrees.
 */
export interface SessionRecord {
  /** The session's id in its trace. */
  key: string;
  parentKey: string | null;
  role: Session['role'];
  /** The agent as its reader names it (`claude-code`, `codex`), null when the trace does not say. */
  agent: string | null;
  model: string | null;
  cwd: string | null;
  /** The agent's own title when it is a name, else the first prompt typed (sessionTitle.ts); trace text (show it as plain text only). */
  title: string | null;
  startMs: number | null;
  endMs: number | null;
  calls: number;
  userTurns: number;
  tokens: TokenTotals;
  cacheHitRate: number | null;
  rawInputToOutput: number | null;
  /** Mean over calls of appended / output, and Σappended / Σoutput. */
  appendToOutputMean: number | null;
  appendToOutputAggregate: number | null;
  costUsd: number | null;
  unpricedCalls: number;
  toolCalls: number;
  failedToolCalls: number;
  retryLoops: number;
  callsInLoops: number;
  cacheMisses: number;
  compactions: number;
  /** The last call, for the status bar: when it was asked, how full the context was, what the cache TTL is. */
  lastCall: {
    startMs: number | null;
    endMs: number | null;
    input: number | null;
    output: number | null;
    model: string | null;
  } | null;
  cacheTtlMs: number;
  cacheTtlBasis: TtlBasis;
  /** Text the search looks in: typed prompts, tool targets (files, commands), error text. */
  searchText: { prompts: string; tools: string; errors: string };
}

/** One call's figures as the index keeps them (the comparison draws these). */
export interface CallRecord {
  index: number;
  startMs: number | null;
  endMs: number | null;
  input: number | null;
  cached: number | null;
  appended: number | null;
  cacheWrite: number | null;
  output: number | null;
  costUsd: number | null;
  toolCalls: number;
  failedToolCalls: number;
  /** The miss cause when this call's cache missed, else null. */
  miss: MissCause | null;
  /** The call made an attempt of a retry loop. */
  inLoop: boolean;
  /** A compaction came just before this call. */
  afterCompaction: boolean;
}

/** A session's record and its calls. */
export interface IndexedSession {
  session: SessionRecord;
  calls: CallRecord[];
}

/** Longest search text kept per kind and session: enough to find a session by what it did, small enough for the index. */
const SEARCH_TEXT_MAX = 64 * 1024;

function joined(parts: Iterable<string>): string {
  const seen = new Set<string>();
  let out = '';
  for (const p of parts) {
    const t = p.trim();
    if (t === '' || seen.has(t)) continue;
    seen.add(t);
    if (out.length + t.length + 1 > SEARCH_TEXT_MAX) break;
    out += (out ? '\n' : '') + t;
  }
  return out;
}

function lastCallOf(calls: readonly LlmCall[]): SessionRecord['lastCall'] {
  const last = calls[calls.length - 1];
  if (!last) return null;
  return {
    startMs: last.startMs,
    endMs: last.endMs,
    input: last.tokens.input,
    output: last.tokens.output,
    model: last.model,
  };
}

/** Index records of every session of a parsed trace (none when it could not be read). */
export function indexRecords(
  parsed: ParsedTrace,
  options: Partial<AnalysisOptions> = {},
  prices: PriceBook | null = null,
): IndexedSession[] {
  if (parsed.problem || parsed.model.format === null) return [];
  const o: AnalysisOptions = { ...DEFAULT_ANALYSIS_OPTIONS, ...options };
  return parsed.model.sessions.map((session) => {
    // The parts of analyzeSession the record keeps, each computed as it computes them (its
    // fingerprint, miss-cause counts and loop sentence are not kept: a cold index skips them),
    // and the retry loops without a record per failed call (the record keeps the loops only).
    const s = summarizeSession(session);
    const analysis = { retry: findRetryLoopsOnly(session, o.minLoopAttempts), misses: findCacheMisses(session, o) };
    const cost = sessionCost(session, parsed.model.format, prices);
    const ttl = sessionCacheTtl(session, o.cacheTtlMs);
    const misses = new Map(analysis.misses.map((m) => [m.callIndex, m.cause]));
    const loopCalls = new Set<number>();
    for (const loop of analysis.retry.loops) for (const a of loop.attempts) loopCalls.add(a.callIndex);
    const compactionCalls = new Set(session.compactions.map((c) => c.beforeCall));
    const calls: CallRecord[] = session.calls.map((c, i) => ({
      index: i,
      startMs: c.startMs,
      endMs: c.endMs,
      input: c.tokens.input,
      cached: c.tokens.cached,
      appended: c.tokens.appended,
      cacheWrite: c.tokens.cacheWrite,
      output: c.tokens.output,
      costUsd: cost.perCallUsd[i] ?? null,
      toolCalls: c.toolCalls.length,
      failedToolCalls: c.toolCalls.filter((t) => t.isError === true).length,
      miss: misses.get(i) ?? null,
      inLoop: loopCalls.has(i),
      afterCompaction: compactionCalls.has(i),
    }));
    const tools = session.calls.flatMap((c) => c.toolCalls);
    const record: SessionRecord = {
      key: session.id,
      parentKey: session.parentId,
      role: session.role,
      agent: session.agent?.name ?? parsed.model.format,
      model: session.model,
      cwd: session.cwd,
      title: sessionTitle(session),
      startMs: s.startMs,
      endMs: s.endMs,
      calls: s.llmCalls,
      userTurns: s.userTurns,
      tokens: s.tokens,
      cacheHitRate: s.cacheHitRate,
      rawInputToOutput: s.rawInputToOutput,
      appendToOutputMean: s.appendToOutput.mean,
      appendToOutputAggregate: s.appendToOutput.aggregate,
      costUsd: cost.totalUsd,
      unpricedCalls: cost.unpricedCalls,
      toolCalls: s.toolCalls,
      failedToolCalls: s.failedToolCalls,
      retryLoops: analysis.retry.loops.length,
      callsInLoops: analysis.retry.callsInLoops,
      cacheMisses: analysis.misses.length,
      compactions: s.compactions,
      lastCall: lastCallOf(session.calls),
      cacheTtlMs: ttl.ttlMs,
      cacheTtlBasis: ttl.basis,
      searchText: {
        prompts: joined([session.title ?? '', ...session.turns.map((t) => t.preview)]),
        tools: joined(tools.flatMap((t) => [t.targetFile ?? '', t.command ?? ''])),
        errors: joined(tools.map((t) => t.errorText ?? '')),
      },
    };
    return { session: record, calls };
  });
}
