import type { FormatDefinition } from '../formatDefinition';
import { MooncakeReader } from './mooncakeReader';

/** Mooncake KV traces (docs/design/formats.md §6). */
export const mooncakeFormat: FormatDefinition = {
  id: 'mooncake',
  label: 'Mooncake KV trace',
  fileHint: 'kvcache-ai/Mooncake FAST25-release/traces/*.jsonl',
  limitations: [
    'Cached tokens are what an infinite prefix cache would hit (computed from hash_ids), not measured.',
    'No sessions, turns or tools: the file is read as one session of independent requests.',
    'No models or end times: each request has only its arrival time and token counts.',
  ],
  // docs/design/formats.md §10: the four request fields, and no Bailian chat_id.
  matchesRecord: (r) =>
    'hash_ids' in r && 'input_length' in r && 'output_length' in r && 'timestamp' in r && !('chat_id' in r),
  createRecordReader: () => new MooncakeReader(),
};
