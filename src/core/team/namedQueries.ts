/**
 * The team queries shipped with `agent-trace query DIR --named NAME`: DuckDB SQL over the
 * views `calls`, `tool_calls` and `sessions` the CLI defines on the export folder
 * (docs/reference/parquet.md). Variables (`getvariable('budget_usd')`) take their default
 * here and `--set NAME=VALUE` on the command line.
 */

/** One named query. */
export interface NamedQuery {
  name: string;
  /** What it answers, one line (the `--list` output and the docs). */
  description: string;
  sql: string;
}

/** Variables the named queries read, with their defaults. */
export const QUERY_VARIABLES: Readonly<Record<string, number>> = { budget_usd: 10, top: 20 };

/** Who, in one column: the plain name when exported with names, else the hash. */
const WHO = 'coalesce("user.name", "user.hash")';

export const NAMED_QUERIES: readonly NamedQuery[] = [
  {
    name: 'cost-by-user-day',
    description: 'Cost, calls and tokens per user and UTC day',
    sql: `SELECT ${WHO} AS "user", date, count(*) AS calls, sum(cost_usd) AS cost_usd, count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_calls,
  sum("gen_ai.usage.input_tokens") AS input_tokens, sum("gen_ai.usage.cache_read.input_tokens") AS cached_tokens, sum("gen_ai.usage.output_tokens") AS output_tokens
FROM calls GROUP BY ALL ORDER BY date, cost_usd DESC NULLS LAST`,
  },
  {
    name: 'cost-by-model',
    description: 'Cost, calls and cache hit rate per model',
    sql: `SELECT "gen_ai.request.model" AS model, count(*) AS calls, sum(cost_usd) AS cost_usd, count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_calls,
  sum("gen_ai.usage.cache_read.input_tokens") / nullif(sum("gen_ai.usage.input_tokens"), 0) AS cache_hit_rate
FROM calls GROUP BY ALL ORDER BY cost_usd DESC NULLS LAST`,
  },
  {
    name: 'cost-by-day',
    description: 'Cost and calls per UTC day and agent',
    sql: `SELECT date, agent, count(*) AS calls, sum(cost_usd) AS cost_usd, count(DISTINCT "gen_ai.conversation.id") AS sessions
FROM calls GROUP BY ALL ORDER BY date, agent`,
  },
  {
    name: 'cost-by-project',
    description: 'Cost and sessions per project folder (sub-agents counted with their own project)',
    sql: `SELECT project, count(*) FILTER (WHERE session_role = 'main') AS sessions, sum(llm_calls) AS calls, sum(cost_usd) AS cost_usd
FROM sessions GROUP BY ALL ORDER BY cost_usd DESC NULLS LAST LIMIT getvariable('top')`,
  },
  {
    name: 'hit-rate-by-agent',
    description: "Distribution of sessions' cache hit rates per agent (p10, p25, median, p75, p90)",
    sql: `SELECT agent, count(*) AS sessions,
  quantile_cont(cache_hit_rate, 0.1) AS p10, quantile_cont(cache_hit_rate, 0.25) AS p25, median(cache_hit_rate) AS median,
  quantile_cont(cache_hit_rate, 0.75) AS p75, quantile_cont(cache_hit_rate, 0.9) AS p90,
  sum("gen_ai.usage.cache_read.input_tokens") / nullif(sum("gen_ai.usage.input_tokens"), 0) AS overall
FROM sessions WHERE cache_hit_rate IS NOT NULL GROUP BY ALL ORDER BY agent`,
  },
  {
    name: 'worst-retry-loops',
    description: 'Retry loops with the most failed attempts: tool, target, attempts, LLM calls spanned',
    sql: `SELECT agent, "gen_ai.conversation.id" AS session, retry_loop_id AS loop, string_agg(DISTINCT "gen_ai.tool.name", '/' ORDER BY "gen_ai.tool.name") AS tool,
  arg_min(coalesce(target_file, command), call_index) AS target, count(*) AS attempts, max(call_index) - min(call_index) + 1 AS calls_spanned,
  arg_min(error_text, call_index) AS first_error
FROM tool_calls WHERE retry_loop_id IS NOT NULL GROUP BY agent, session, loop ORDER BY attempts DESC, calls_spanned DESC LIMIT getvariable('top')`,
  },
  {
    name: 'sessions-over-budget',
    description:
      'Main sessions (with their sub-agents) that cost more than budget_usd (default $10; --set budget_usd=N)',
    sql: `WITH thread AS (
  SELECT coalesce(parent_conversation_id, "gen_ai.conversation.id") AS session, sum(cost_usd) AS cost_usd, sum(llm_calls) AS calls,
    min(start_time) AS started, any_value(${WHO}) AS "user", any_value(agent) AS agent, sum(unpriced_calls) AS unpriced_calls
  FROM sessions GROUP BY 1)
SELECT * FROM thread WHERE cost_usd > getvariable('budget_usd') ORDER BY cost_usd DESC`,
  },
  {
    name: 'ttl-savings',
    description: 'What the other prompt-cache TTL (5 minutes or 1 hour) would have saved, per agent and model',
    sql: `SELECT agent, "gen_ai.request.model" AS model, count(*) AS sessions, sum(cost_usd) AS cost_usd,
  sum(cache_ttl_5m_cost_usd) AS cost_with_5m_usd, sum(cache_ttl_1h_cost_usd) AS cost_with_1h_usd,
  sum(greatest(cost_usd - least(cache_ttl_5m_cost_usd, cache_ttl_1h_cost_usd), 0)) AS savings_usd,
  count(*) FILTER (WHERE cache_ttl_1h_cost_usd < cache_ttl_5m_cost_usd) AS sessions_cheaper_with_1h
FROM sessions WHERE cost_usd IS NOT NULL GROUP BY ALL ORDER BY savings_usd DESC NULLS LAST`,
  },
  {
    name: 'cache-miss-causes',
    description:
      'Cache misses by cause per agent (first call, sub-agent start, compaction, idle gap, prefix change, unexplained)',
    sql: `SELECT agent, count(*) AS sessions, sum(cache_misses_first_call) AS first_call, sum(cache_misses_subagent_start) AS subagent_start,
  sum(cache_misses_compaction) AS compaction, sum(cache_misses_idle_gap) AS idle_gap, sum(cache_misses_prefix_change) AS prefix_change,
  sum(cache_misses_unexplained) AS unexplained
FROM sessions GROUP BY ALL ORDER BY agent`,
  },
  {
    name: 'failing-tools',
    description: 'Tool calls, failures and failure rate per tool, worst first',
    sql: `SELECT "gen_ai.tool.name" AS tool, count(*) AS calls, count(*) FILTER (WHERE is_error) AS failed,
  count(*) FILTER (WHERE is_error) / count(*) AS failure_rate, count(*) FILTER (WHERE denied_by_user) AS denied, median(duration_ms) AS median_ms
FROM tool_calls GROUP BY ALL HAVING count(*) >= 5 ORDER BY failed DESC, calls DESC LIMIT getvariable('top')`,
  },
  {
    name: 'context-sources',
    description:
      'Most expensive context sources: what the calls carried in their input (a file read, a command, a tool, the system prompt…), by dollars over every call that carried it (export --context)',
    sql: `SELECT kind, coalesce(target_file, command, mcp_server, "gen_ai.tool.name") AS source, string_agg(DISTINCT "gen_ai.tool.name", '/' ORDER BY "gen_ai.tool.name") AS tools,
  count(*) AS parts, count(DISTINCT "gen_ai.conversation.id") AS sessions, sum(tokens) AS tokens, sum(calls_carried) AS calls_carried,
  sum(cost_usd) AS cost_usd, sum(cost_cache_read_usd) AS cache_read_usd, sum(cost_write_usd) AS write_usd
FROM context_parts GROUP BY kind, source ORDER BY cost_usd DESC NULLS LAST, tokens DESC, kind, source LIMIT getvariable('top')`,
  },
];

/** A named query by name. */
export function namedQuery(name: string): NamedQuery | undefined {
  return NAMED_QUERIES.find((q) => q.name === name);
}
