import type { FormatDefinition } from '../formatDefinition';
import { AiperfReader, isAiperfRecord } from './aiperfReader';

/** AIPerf per-request benchmark records (`profile_export.jsonl`). */
export const aiperfFormat: FormatDefinition = {
  id: 'aiperf',
  label: 'AIPerf profile export',
  fileHint:
    'artifacts/<run>/profile_export.jsonl from aiperf profile: "metadata" (x_request_id, conversation_id) + "metrics"',
  limitations: [
    "Cached tokens only where the server reported them (AIPerf's usage_prompt_cached_tokens: vLLM with --enable-prompt-tokens-details); otherwise no cache data.",
    "Times are the benchmark client's own measures (TTFT, request latency) and include network time; queue and prefill times are unknown.",
    'No tools and no prompts: one call per benchmark request, grouped by conversation.',
  ],
  matchesRecord: isAiperfRecord,
  createRecordReader: () => new AiperfReader(),
};
