import { countMissCauses, findCacheMisses } from '../analysis/cacheMisses';
import { findRetryLoopsOnly } from '../analysis/retryLoops';
import { DEFAULT_ANALYSIS_OPTIONS } from '../analysis/sessionAnalysis';
import type { AnalysisOptions } from '../analysis/sessionAnalysis';
import { summarizeSession } from '../analysis/sessionSummary';
import { cacheTtlWhatIf, ttlCalls } from '../cost/cacheTtlWhatIf';
import { COST_KIND_INDEX, pricingContext, priceTrace } from '../cost/callCost';
import type { SessionCost } from '../cost/callCost';
import type { PriceBook } from '../cost/costTypes';
import { loopWastedUsd } from '../cost/loopCost';
import type { ParsedTrace } from '../trace/parseTrace';
import type { Session } from '../trace/model';
import { CALLS_TABLE, CONTEXT_PARTS_TABLE, SESSIONS_TABLE, TOOL_CALLS_TABLE } from './teamSchema';
import type { TeamCell } from './teamSchema';
import { TeamColumns } from './teamColumns';

/**
 * A parsed trace as rows of the team tables (teamSchema.ts): the same analysis and prices
 * as `analyze --json`, so a sum over the rows is the figure analyze prints. Identity (user,
 * machine) is given by the caller, already hashed or not; redaction happens after, on the
 * columns marked `fromTrace`.
 */

/**
 * The rows of one trace, per table, each row with the Hive partition it belongs to (the
 * machine is the export's, not the row's).
 */
export interface TeamRows {
  calls: TeamColumns;
  tool_calls: TeamColumns;
  sessions: TeamColumns;
  /** Filled by `contextPartRows` when the export is asked for context parts; empty otherwise. */
  context_parts: TeamColumns;
}

/** Empty tables for one trace's rows. */
export function emptyTeamRows(): TeamRows {
  return {
    calls: new TeamColumns(CALLS_TABLE),
    tool_calls: new TeamColumns(TOOL_CALLS_TABLE),
    sessions: new TeamColumns(SESSIONS_TABLE),
    context_parts: new TeamColumns(CONTEXT_PARTS_TABLE),
  };
}

/** Who ran the sessions, as the export writes it. */
export interface TeamIdentity {
  /** A hash of the user name (null when names are written plainly). */
  userHash: string | null;
  /** The user name itself (null when hashed). */
  userName: string | null;
}

/** How the rows are built. */
export interface TeamRowOptions {
  book: PriceBook;
  analysis?: Partial<AnalysisOptions>;
  identity: TeamIdentity;
}

/** A partition value safe as a folder name on every system: lower case, `[a-z0-9._-]`, never empty. */
export function partitionValue(value: string | null): string {
  const v = (value ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|-+$/g, '')
    .slice(0, 64);
  return v.length > 0 ? v : 'unknown';
}

/** The UTC day of a time, `YYYY-MM-DD`; null without a time. */
export function utcDay(ms: number | null): string | null {
  return ms === null || !Number.isFinite(ms) ? null : new Date(ms).toISOString().slice(0, 10);
}

/**
 * `utcDay` remembering the days it has written (by the day's first millisecond: a time's
 * `YYYY-MM-DD` depends on its UTC day alone): every call and tool call of a trace asks, and they share a few days.
 */
export function dayWriter(): (ms: number | null) => string | null {
  const days = new Map<number, string | null>();
  return (ms) => {
    if (ms === null || !Number.isFinite(ms)) return null;
    // The day's first millisecond, in integers (Date truncates a fractional time; `%` and the
    // subtraction are exact below 2^53), so that no rounding of a division moves a time to a neighbouring day.
    const t = Math.trunc(ms);
    const n = t - (((t % 86_400_000) + 86_400_000) % 86_400_000);
    let day = days.get(n);
    if (day === undefined) days.set(n, (day = utcDay(ms)));
    return day;
  };
}

function sessionCostCells(cost: SessionCost): Record<string, TeamCell> {
  const nothing = cost.pricedCalls === 0;
  const k = cost.byKind;
  return {
    cost_usd: cost.totalUsd,
    cost_input_usd: nothing ? null : k.input,
    cost_cache_read_usd: nothing ? null : k.cacheRead,
    cost_cache_write_5m_usd: nothing ? null : k.cacheWrite5m,
    cost_cache_write_1h_usd: nothing ? null : k.cacheWrite1h,
    cost_output_usd: nothing ? null : k.output,
    cost_gpu_time_usd: nothing ? null : k.gpuTime,
    priced_calls: cost.pricedCalls,
    unpriced_calls: cost.unpricedCalls,
    reported_cost_usd: cost.reportedUsd,
  };
}

function identityCells(id: TeamIdentity): Record<string, TeamCell> {
  return { 'user.hash': id.userHash, 'user.name': id.userName };
}

/** Σ of values, null when any is null (a loop with an unpriced call has no dollar figure). */
function sumOrNull(values: ReadonlyArray<number | null>): number | null {
  let s = 0;
  for (const v of values) {
    if (v === null) return null;
    s += v;
  }
  return s;
}

function sessionStart(session: Session): number | null {
  for (const c of session.calls) if (c.startMs !== null) return c.startMs;
  return session.turns.find((t) => t.startMs !== null)?.startMs ?? null;
}

function sessionEnd(session: Session): number | null {
  let end: number | null = null;
  for (const c of session.calls) {
    const t = c.endMs ?? c.startMs;
    if (t !== null && (end === null || t > end)) end = t;
  }
  return end;
}

/** Builds the rows of every session of a parsed trace. */
export function buildTeamRows(parsed: ParsedTrace, options: TeamRowOptions): TeamRows {
  const { model } = parsed;
  const priced = priceTrace(model, options.book);
  const out = emptyTeamRows();
  const who = identityCells(options.identity);
  const o: AnalysisOptions = { ...DEFAULT_ANALYSIS_OPTIONS, ...options.analysis };
  const dayOf = dayWriter();
  model.sessions.forEach((session, si) => {
    // The parts of analyzeSession the rows write, each computed as analyzeSession computes it:
    // its summary, retry loops (without a record per failed call, which no column holds) and
    // miss causes; of its fingerprint only the tool calls, the failed ones and the compactions,
    // counted here (the fingerprint's per-tool statistics and compaction costs feed no column).
    const a = {
      summary: summarizeSession(session),
      retry: findRetryLoopsOnly(session, o.minLoopAttempts),
      missCauses: countMissCauses(findCacheMisses(session, o)),
    };
    let toolCalls = 0;
    let failedToolCalls = 0;
    for (const c of session.calls)
      for (const t of c.toolCalls) {
        toolCalls += 1;
        if (t.isError === true) failedToolCalls += 1;
      }
    const cost = priced.sessions[si]!;
    const agentName = session.agent?.name ?? model.format;
    const agent = partitionValue(agentName);
    const provider = pricingContext(model.format, session).providerHint;
    // Which loop (1-based, analyze --json order) each failed attempt belongs to.
    const loopOf = new Map<string, number>();
    a.retry.loops.forEach((l, li) => {
      for (const at of l.attempts) loopOf.set(`${at.callIndex}\u0000${at.toolId}`, li + 1);
    });
    const conversation = session.id;
    session.calls.forEach((call, ci) => {
      const day = dayOf(call.startMs);
      let failed = 0;
      let loop: number | null = null;
      for (const t of call.toolCalls) {
        if (t.isError === true) failed += 1;
        const l = loopOf.get(`${ci}\u0000${t.id}`) ?? null;
        if (l !== null && loop === null) loop = l;
        const start = t.startMs;
        // Each literal lists its table's columns in the schema's order: TeamColumns.append copies it by position.
        out.tool_calls.append(agent, dayOf(start) ?? day, si, {
          'gen_ai.conversation.id': conversation,
          call_index: ci,
          'gen_ai.tool.call.id': t.id,
          'gen_ai.tool.name': t.name,
          target_file: t.targetFile,
          command: t.command,
          start_time: start,
          end_time: t.endMs,
          duration_ms: t.durationMs,
          is_error: t.isError,
          denied_by_user: t.deniedByUser === true,
          exit_code: t.exitCode,
          error_text: t.errorText === null ? null : t.errorText.slice(0, 500),
          result_chars: t.resultChars,
          retry_loop_id: l,
          'user.hash': options.identity.userHash,
          'user.name': options.identity.userName,
        });
      }
      const s = call.server;
      const t = call.tokens;
      const usd = cost.calls.usdOf(ci);
      out.calls.append(agent, day, si, {
        'gen_ai.conversation.id': conversation,
        'gen_ai.agent.name': agentName,
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': provider,
        'gen_ai.request.model': call.model,
        'gen_ai.response.id': call.id,
        call_index: ci,
        turn: call.turn,
        start_time: call.startMs,
        end_time: call.endMs,
        duration_ms: call.startMs !== null && call.endMs !== null ? call.endMs - call.startMs : null,
        // The token and dollar cells written out rather than spread in from helpers: a literal
        // without spreads is built from one template, and this runs for every call of the export.
        'gen_ai.usage.input_tokens': t.input,
        'gen_ai.usage.output_tokens': t.output,
        'gen_ai.usage.cache_read.input_tokens': t.cached,
        'gen_ai.usage.cache_creation.input_tokens': t.cacheWrite,
        cache_creation_5m_input_tokens: t.cacheWrite5m ?? null,
        cache_creation_1h_input_tokens: t.cacheWrite1h ?? null,
        appended_input_tokens: t.appended,
        reasoning_output_tokens: t.reasoningOutput,
        // Dollars by kind; every kind null when the call is unpriced.
        cost_usd: usd,
        cost_input_usd: usd === null ? null : cost.calls.kindOf(ci, COST_KIND_INDEX.input),
        cost_cache_read_usd: usd === null ? null : cost.calls.kindOf(ci, COST_KIND_INDEX.cacheRead),
        cost_cache_write_5m_usd: usd === null ? null : cost.calls.kindOf(ci, COST_KIND_INDEX.cacheWrite5m),
        cost_cache_write_1h_usd: usd === null ? null : cost.calls.kindOf(ci, COST_KIND_INDEX.cacheWrite1h),
        cost_output_usd: usd === null ? null : cost.calls.kindOf(ci, COST_KIND_INDEX.output),
        cost_gpu_time_usd: usd === null ? null : cost.calls.kindOf(ci, COST_KIND_INDEX.gpuTime),
        price_id: cost.calls.priceIdOf(ci) ?? null,
        unpriced_reason: cost.calls.unpricedOf(ci) ?? null,
        service_tier: call.serviceTier ?? null,
        server_queue_ms: s?.queueMs ?? null,
        server_ttft_ms: s?.ttftMs ?? null,
        server_prefill_ms: s?.prefillMs ?? null,
        server_decode_ms: s?.decodeMs ?? null,
        tool_calls: call.toolCalls.length,
        failed_tool_calls: failed,
        retry_loop_id: loop,
        source_format: model.format,
        'user.hash': options.identity.userHash,
        'user.name': options.identity.userName,
        inference_geo: call.inferenceGeo ?? null,
      });
    });
    const sm = a.summary;
    const ttl = cacheTtlWhatIf(ttlCalls(session, cost), null);
    const replay = (min: number) => ttl.replays.find((r) => r.ttlMs === min * 60_000) ?? null;
    const loopWaste = a.retry.loops.map((l) => loopWastedUsd(l, session, cost));
    const start = sessionStart(session);
    out.sessions.append(agent, dayOf(start), si, {
      'gen_ai.conversation.id': conversation,
      parent_conversation_id: session.parentId,
      session_role: session.role,
      'gen_ai.agent.name': agentName,
      'gen_ai.agent.version': session.agent?.version ?? null,
      'gen_ai.request.model': sm.model,
      project: session.cwd,
      start_time: start,
      end_time: sessionEnd(session),
      llm_calls: sm.llmCalls,
      user_turns: sm.userTurns,
      api_errors: sm.apiErrors,
      'gen_ai.usage.input_tokens': sm.tokens.input,
      'gen_ai.usage.output_tokens': sm.tokens.output,
      'gen_ai.usage.cache_read.input_tokens': sm.tokens.cached,
      'gen_ai.usage.cache_creation.input_tokens': sm.tokens.cacheWrite,
      appended_input_tokens: sm.tokens.appended,
      tokens_source: sm.tokensSource,
      cache_hit_rate: sm.cacheHitRate,
      ...sessionCostCells(cost),
      tool_calls: toolCalls,
      failed_tool_calls: failedToolCalls,
      denied_tool_calls: sm.deniedToolCalls,
      retry_loops: a.retry.loops.length,
      calls_in_retry_loops: a.retry.callsInLoops,
      retry_loop_wasted_tokens: sumOrNull(a.retry.loops.map((l) => l.wastedTokens)),
      retry_loop_wasted_usd: sumOrNull(loopWaste),
      compactions: session.compactions.length,
      cache_misses_first_call: a.missCauses['first-call'],
      cache_misses_subagent_start: a.missCauses['subagent-start'],
      cache_misses_compaction: a.missCauses.compaction,
      cache_misses_idle_gap: a.missCauses['idle-gap'],
      cache_misses_prefix_change: a.missCauses['prefix-change'],
      cache_misses_unexplained: a.missCauses.unexplained,
      cache_ttl_ran_min: ttl.actualTtlMs / 60_000,
      cache_ttl_5m_cost_usd: replay(5)?.costUsd ?? null,
      cache_ttl_1h_cost_usd: replay(60)?.costUsd ?? null,
      cache_ttl_expired_calls_5m: replay(5)?.expiredCalls.length ?? null,
      source_format: model.format,
      ...who,
      parent_tool_call_id: session.parentToolCallId,
    });
  });
  return out;
}
