import type { FormatDefinition } from '../formatDefinition';
import { isObject } from '../json';
import { isLogsData, isResourceLogs, isResourceSpans, isTracesData } from './otlpJson';
import { OtlpRecordReader, readOtlpDocument } from './otlpReader';

/**
 * OpenTelemetry as OTLP/JSON (docs/design/formats.md §4, §5): GenAI agent spans, vLLM request
 * spans, and coding agents' own log events (Claude Code, Codex).
 */
export const otlpFormat: FormatDefinition = {
  id: 'otlp',
  label: 'OpenTelemetry (OTLP/JSON traces and logs)',
  fileHint:
    'an OTLP/JSON export {"resourceSpans": …} or {"resourceLogs": …}, collector file-exporter JSON Lines, VS Code\'s Agent Debug Logs export, Claude Code or Codex telemetry, vllm serve --otlp-traces-endpoint',
  limitations: [
    'vLLM request spans carry no cached-token count: the cache hit rate is unknown unless an agent span with cache attributes shares the trace.',
    'Turns only where the agent records its prompt (a user_message span event, gen_ai.input.messages, or a user_prompt log event); otherwise the trace has no turns.',
    'Tool calls are known only where the agent writes GenAI execute_tool spans or tool_result events; a vLLM-only trace has none.',
    "Only spans with gen_ai.* attributes and Claude Code's and Codex's own events become LLM calls and tool calls; other spans and log records are counted and left out.",
  ],
  // Each line of the file exporter is a TracesData or LogsData; some writers put one ResourceSpans / ResourceLogs per line.
  matchesRecord: (r) => isTracesData(r) || isResourceSpans(r) || isLogsData(r) || isResourceLogs(r),
  matchesDocument: (value) =>
    isObject(value) && (isTracesData(value) || isResourceSpans(value) || isLogsData(value) || isResourceLogs(value)),
  createRecordReader: () => new OtlpRecordReader(),
  readDocument: readOtlpDocument,
};
