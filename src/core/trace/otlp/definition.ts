import type { FormatDefinition } from '../formatDefinition';
import { isObject } from '../json';
import { isResourceSpans, isTracesData } from './otlpJson';
import { OtlpRecordReader, readOtlpDocument } from './otlpReader';

/** OpenTelemetry traces as OTLP/JSON: GenAI agent spans and vLLM request spans (docs/design/formats.md §4, §5). */
export const otlpFormat: FormatDefinition = {
  id: 'otlp',
  label: 'OpenTelemetry traces (OTLP/JSON)',
  fileHint: 'an OTLP/JSON export {"resourceSpans": …} or collector file-exporter JSON Lines, e.g. from vllm serve --otlp-traces-endpoint',
  limitations: [
    'vLLM request spans carry no cached-token count: the cache hit rate is unknown unless an agent span with cache attributes shares the trace.',
    'OpenTelemetry spans carry no user prompts: the trace has no turns.',
    'Tool calls are known only where the agent writes GenAI execute_tool spans; a vLLM-only trace has none.',
    'Only spans with gen_ai.* attributes become LLM calls and tool calls; other spans are counted and left out.',
  ],
  // Each line of the file exporter is a TracesData; some writers put one ResourceSpans per line.
  matchesRecord: (r) => isTracesData(r) || isResourceSpans(r),
  matchesDocument: (value) => isObject(value) && (isTracesData(value) || isResourceSpans(value)),
  createRecordReader: () => new OtlpRecordReader(),
  readDocument: readOtlpDocument,
};
