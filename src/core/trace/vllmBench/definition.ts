import type { FormatDefinition } from '../formatDefinition';
import { isBenchResult, readBenchDocument, VllmBenchRecordReader } from './vllmBenchReader';

/** `vllm bench serve --save-result` results (docs/design/formats.md §4). */
export const vllmBenchFormat: FormatDefinition = {
  id: 'vllm-bench',
  label: 'vllm bench serve result',
  fileHint:
    '<backend>-<rate>qps-<model>-<date>.json from vllm bench serve --save-result --save-detailed: "input_lens" + "ttfts"',
  limitations: [
    'No sessions, no cache data, no tools: one call per benchmark request.',
    "Times are the benchmark client's own measures (TTFT, inter-token gaps, latency) and include network time; queue and prefill times are unknown.",
    'Request start times only in newer vLLM results (start_times, relative to the first request); per-request data only with --save-detailed.',
  ],
  // docs/design/formats.md §10 rule 1: "input_lens" + "ttfts"; also a result saved without --save-detailed (aggregates only).
  matchesDocument: isBenchResult,
  // One result is one line; `--append-result` makes JSON Lines of them.
  matchesRecord: isBenchResult,
  createRecordReader: () => new VllmBenchRecordReader(),
  readDocument: readBenchDocument,
};
