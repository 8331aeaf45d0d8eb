import { NAMED_QUERIES } from './namedQueries';

/**
 * What `agent-trace team-report DIR` puts into the HTML report: the totals of an export
 * folder, its sessions (the report's several-sessions view) and the result of every named
 * team query, each as columns and plain rows. The report page draws them with the
 * report's own tables (webview/report/teamReportPage.ts), as text only.
 */

/** A plain cell: what DuckDB's values become on their way into JSON. */
export type TeamReportCell = string | number | boolean | null;

/** One query's result. */
export interface TeamReportTable {
  /** The named query's name, or `totals` / `sessions` for the report's own. */
  name: string;
  description: string;
  columns: string[];
  rows: TeamReportCell[][];
}

/** The team part of a report document. */
export interface TeamReport {
  /** The export folder as the user named it. */
  source: string;
  /** The whole folder's figures, one row (the columns of TEAM_TOTALS_SQL). */
  totals: TeamReportTable;
  /** The costliest sessions, at most TEAM_REPORT_SESSIONS of them, with the count of all. */
  sessions: TeamReportTable;
  /** Every named query in NAMED_QUERIES' order. */
  queries: TeamReportTable[];
}

/** How many sessions the report lists: a team's folder holds millions; the named queries cover the rest. */
export const TEAM_REPORT_SESSIONS = 500;

/** The folder's totals: every session, sub-agents included, and its LLM and tool calls. */
export const TEAM_TOTALS_SQL = `SELECT count(*) AS sessions, count(*) FILTER (WHERE session_role = 'main') AS main_sessions,
  coalesce(sum(llm_calls), 0) AS llm_calls, coalesce(sum(tool_calls), 0) AS tool_calls, coalesce(sum(failed_tool_calls), 0) AS failed_tool_calls,
  sum(cost_usd) AS cost_usd, coalesce(sum(unpriced_calls), 0) AS unpriced_calls,
  count(DISTINCT coalesce("user.name", "user.hash")) AS users, count(DISTINCT agent) AS agents,
  min(start_time) AS first_start, max(end_time) AS last_end
FROM sessions`;

/** The sessions the report lists, costliest first (then by start): the several-sessions view's rows. */
export const TEAM_SESSIONS_SQL = `SELECT agent, coalesce("user.name", "user.hash") AS "user", "gen_ai.conversation.id" AS session, session_role AS role,
  start_time AS started, llm_calls, cache_hit_rate, "gen_ai.usage.output_tokens" AS output_tokens, failed_tool_calls, cost_usd
FROM sessions ORDER BY cost_usd DESC NULLS LAST, start_time, session LIMIT ${TEAM_REPORT_SESSIONS}`;

/** Every query a team report runs: its own two, then the named ones. */
export function teamReportQueries(): Array<{ name: string; description: string; sql: string }> {
  return [
    { name: 'totals', description: 'The whole folder', sql: TEAM_TOTALS_SQL },
    {
      name: 'sessions',
      description: `Sessions, costliest first (at most ${TEAM_REPORT_SESSIONS})`,
      sql: TEAM_SESSIONS_SQL,
    },
    ...NAMED_QUERIES,
  ];
}

/** Whether a parsed value is a team report the page can draw (the document is read back from the page). */
export function isTeamReport(value: unknown): value is TeamReport {
  const t = value as TeamReport | null;
  const isTable = (x: unknown): boolean => {
    const y = x as TeamReportTable | null;
    return (
      typeof y === 'object' &&
      y !== null &&
      typeof y.name === 'string' &&
      Array.isArray(y.columns) &&
      Array.isArray(y.rows) &&
      y.rows.every((r) => Array.isArray(r) && r.length === y.columns.length)
    );
  };
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof t.source === 'string' &&
    isTable(t.totals) &&
    isTable(t.sessions) &&
    Array.isArray(t.queries) &&
    t.queries.every(isTable)
  );
}
