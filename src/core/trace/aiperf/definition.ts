import type { FormatDefinition } from '../formatDefinition';
import { AiperfReader, isAiperfRecord } from './aiperfReader';

/** AIPerf per-request benchmark records (`profile_export.jsonl`). */
export const aiperfFormat: FormatDefinition = {
  id: 'aiperf',
  label: 'AIPerf profile export',
  fileHint: 'artifacts/<run>/profile_export.jsonl from aiperf profile: "metadata" (x_request_id, conversation_id) + "metrics"',
  limitations: [
    'No cache data: AIPerf records the input and output lengths of each request, not how much of the prompt was cached.',
    'Times are the benchmark client\'s own measures (TTFT, request latency) and include network time; queue and prefill times are unknown.',
    'No tools and no prompts: one call per benchmark request, grouped by conversation.',
  ],
  matchesRecord: isAiperfRecord,
  createRecordReader: () => new AiperfReader(),
};
