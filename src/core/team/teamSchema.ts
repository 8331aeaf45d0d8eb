/**
 * The team tables' schema (docs/reference/parquet.md): calls, tool calls and sessions, one
 * row each (and context parts when asked), with OpenTelemetry GenAI attribute names where the conventions
 * have one and our own snake_case names where they do not. Pure data: the writer (src/node)
 * turns it into Parquet, the docs test checks every column is documented.
 */

/** Bumped when a column changes name, type or meaning; adding a column does not bump it. */
export const TEAM_SCHEMA_VERSION = 1;

/** The key-value metadata key that carries the version in every file. */
export const TEAM_SCHEMA_KEY = 'agent_trace.schema_version';

/** Physical types the writer knows; TIMESTAMP is milliseconds since the epoch, UTC. */
export type TeamColumnType = 'STRING' | 'INT32' | 'INT64' | 'DOUBLE' | 'BOOLEAN' | 'TIMESTAMP';

/** A cell: null for a figure the trace does not give (never 0 for unknown). */
export type TeamCell = string | number | boolean | null;

/** One column: its name, type, and whether its text comes from the trace (and so is redacted). */
export interface TeamColumn {
  name: string;
  type: TeamColumnType;
  /** Text from the trace (ids, paths, commands, errors): passes through the redactor. */
  fromTrace?: true;
  /**
   * Its attribute name in the OTLP export when the conventions name it otherwise
   * (`exit_code` is `process.exit.code`); without it, see `otlpAttributeName`.
   */
  otlp?: string;
}

/** A table: its folder name under the export folder and its columns, in file order. */
export interface TeamTable {
  name: 'calls' | 'tool_calls' | 'sessions' | 'context_parts';
  columns: readonly TeamColumn[];
}

/** The Hive partition keys, in folder order: `agent=…/date=…/machine=…`. */
export const PARTITION_KEYS = ['agent', 'date', 'machine'] as const;

const text = (name: string): TeamColumn => ({ name, type: 'STRING', fromTrace: true });
const ours = (name: string): TeamColumn => ({ name, type: 'STRING' });
const int = (name: string): TeamColumn => ({ name, type: 'INT64' });
const num = (name: string): TeamColumn => ({ name, type: 'DOUBLE' });
const flag = (name: string): TeamColumn => ({ name, type: 'BOOLEAN' });
const time = (name: string): TeamColumn => ({ name, type: 'TIMESTAMP' });

/** Who ran the session: a hash of the user name, or the name itself when asked (`--plain-names`). */
const IDENTITY: readonly TeamColumn[] = [ours('user.hash'), ours('user.name')];

/** Token columns shared by calls and sessions. */
const TOKENS: readonly TeamColumn[] = [
  int('gen_ai.usage.input_tokens'),
  int('gen_ai.usage.output_tokens'),
  int('gen_ai.usage.cache_read.input_tokens'),
  int('gen_ai.usage.cache_creation.input_tokens'),
  int('cache_creation_5m_input_tokens'),
  int('cache_creation_1h_input_tokens'),
  int('appended_input_tokens'),
  int('reasoning_output_tokens'),
];

/** Dollar columns shared by calls and sessions. */
const COST: readonly TeamColumn[] = [
  num('cost_usd'),
  num('cost_input_usd'),
  num('cost_cache_read_usd'),
  num('cost_cache_write_5m_usd'),
  num('cost_cache_write_1h_usd'),
  num('cost_output_usd'),
  num('cost_gpu_time_usd'),
];

/** One row per LLM call. */
export const CALLS_TABLE: TeamTable = {
  name: 'calls',
  columns: [
    text('gen_ai.conversation.id'),
    text('gen_ai.agent.name'),
    ours('gen_ai.operation.name'),
    ours('gen_ai.provider.name'),
    text('gen_ai.request.model'),
    text('gen_ai.response.id'),
    { name: 'call_index', type: 'INT32' },
    { name: 'turn', type: 'INT32' },
    time('start_time'),
    time('end_time'),
    num('duration_ms'),
    ...TOKENS,
    ...COST,
    text('price_id'),
    ours('unpriced_reason'),
    text('service_tier'),
    num('server_queue_ms'),
    num('server_ttft_ms'),
    num('server_prefill_ms'),
    num('server_decode_ms'),
    { name: 'tool_calls', type: 'INT32' },
    { name: 'failed_tool_calls', type: 'INT32' },
    { name: 'retry_loop_id', type: 'INT32' },
    ours('source_format'),
    ...IDENTITY,
    // Added after version 1's first columns: new columns only ever go at the end.
    text('inference_geo'),
  ],
};

/** One row per tool call. */
export const TOOL_CALLS_TABLE: TeamTable = {
  name: 'tool_calls',
  columns: [
    text('gen_ai.conversation.id'),
    { name: 'call_index', type: 'INT32' },
    text('gen_ai.tool.call.id'),
    text('gen_ai.tool.name'),
    text('target_file'),
    text('command'),
    time('start_time'),
    time('end_time'),
    num('duration_ms'),
    flag('is_error'),
    flag('denied_by_user'),
    { name: 'exit_code', type: 'INT64', otlp: 'process.exit.code' },
    text('error_text'),
    int('result_chars'),
    { name: 'retry_loop_id', type: 'INT32' },
    ...IDENTITY,
  ],
};

/** One row per session (sub-agents are sessions of their own, with a parent). */
export const SESSIONS_TABLE: TeamTable = {
  name: 'sessions',
  columns: [
    text('gen_ai.conversation.id'),
    text('parent_conversation_id'),
    ours('session_role'),
    text('gen_ai.agent.name'),
    text('gen_ai.agent.version'),
    text('gen_ai.request.model'),
    text('project'),
    time('start_time'),
    time('end_time'),
    { name: 'llm_calls', type: 'INT32' },
    { name: 'user_turns', type: 'INT32' },
    { name: 'api_errors', type: 'INT32' },
    ...TOKENS.slice(0, 4),
    int('appended_input_tokens'),
    ours('tokens_source'),
    num('cache_hit_rate'),
    ...COST,
    { name: 'priced_calls', type: 'INT32' },
    { name: 'unpriced_calls', type: 'INT32' },
    num('reported_cost_usd'),
    { name: 'tool_calls', type: 'INT32' },
    { name: 'failed_tool_calls', type: 'INT32' },
    { name: 'denied_tool_calls', type: 'INT32' },
    { name: 'retry_loops', type: 'INT32' },
    { name: 'calls_in_retry_loops', type: 'INT32' },
    int('retry_loop_wasted_tokens'),
    num('retry_loop_wasted_usd'),
    { name: 'compactions', type: 'INT32' },
    { name: 'cache_misses_first_call', type: 'INT32' },
    { name: 'cache_misses_subagent_start', type: 'INT32' },
    { name: 'cache_misses_compaction', type: 'INT32' },
    { name: 'cache_misses_idle_gap', type: 'INT32' },
    { name: 'cache_misses_prefix_change', type: 'INT32' },
    { name: 'cache_misses_unexplained', type: 'INT32' },
    num('cache_ttl_ran_min'),
    num('cache_ttl_5m_cost_usd'),
    num('cache_ttl_1h_cost_usd'),
    { name: 'cache_ttl_expired_calls_5m', type: 'INT32' },
    ours('source_format'),
    ...IDENTITY,
    text('parent_tool_call_id'),
  ],
};

/**
 * One row per context part of a session (`agent-trace context`'s anatomy, written with
 * `export --context`): a piece of the input (a tool result, a read file, typed text, the
 * unlogged system prompt and tools…) from the call that first carried it to the last, with
 * its tokens and the dollars it cost over every call that carried it. Sums by kind, tool,
 * MCP server or file equal `agent-trace context --json`'s totals.
 */
export const CONTEXT_PARTS_TABLE: TeamTable = {
  name: 'context_parts',
  columns: [
    text('gen_ai.conversation.id'),
    ours('session_role'),
    text('gen_ai.request.model'),
    { name: 'part_index', type: 'INT32' },
    ours('kind'),
    text('gen_ai.tool.name'),
    text('mcp_server'),
    text('target_file'),
    text('command'),
    num('tokens'),
    flag('estimated'),
    { name: 'first_call_index', type: 'INT32' },
    { name: 'last_call_index', type: 'INT32' },
    { name: 'calls_carried', type: 'INT32' },
    num('cost_usd'),
    num('cost_cache_read_usd'),
    num('cost_write_usd'),
    { name: 'writes', type: 'INT32' },
    ours('tokenizer'),
    num('calibration_factor'),
    ours('source_format'),
    ...IDENTITY,
  ],
};

/** Every table, in the order the export writes them. */
export const TEAM_TABLES: readonly TeamTable[] = [CALLS_TABLE, TOOL_CALLS_TABLE, SESSIONS_TABLE, CONTEXT_PARTS_TABLE];

/** The namespace of our own OTLP attributes: what the GenAI conventions lack. */
export const OTLP_OWN_PREFIX = 'agent_trace.';

/**
 * A column's attribute name in the OTLP export: its `otlp` name, else the column's own name
 * when it is a convention's (`gen_ai.*`, `user.*`), else ours under `agent_trace.`. One table
 * of names for both exports: the Parquet column and the span attribute never drift apart.
 */
export function otlpAttributeName(column: TeamColumn): string {
  if (column.otlp) return column.otlp;
  return column.name.startsWith('gen_ai.') || column.name.startsWith('user.')
    ? column.name
    : `${OTLP_OWN_PREFIX}${column.name}`;
}
