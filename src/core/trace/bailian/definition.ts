import type { FormatDefinition } from '../formatDefinition';
import { BailianReader } from './bailianReader';

/** Alibaba Bailian / Qwen KV traces (docs/design/formats.md §7). */
export const bailianFormat: FormatDefinition = {
  id: 'bailian',
  label: 'Alibaba Bailian (Qwen) KV trace',
  fileHint: 'alibaba-edu/qwen-bailian-usagetraces-anon qwen_*_blksz_16.jsonl',
  limitations: [
    'Cached tokens are the prefix a request shares with the request it follows up (computed from hash_ids, as an ideal per-conversation cache), not measured.',
    'No tools, models or end times: each request has only its arrival time, token counts and the request it follows up.',
  ],
  // docs/design/formats.md §10: the chat chain fields plus block hashes.
  matchesRecord: (r) => 'chat_id' in r && 'parent_chat_id' in r && 'hash_ids' in r,
  createRecordReader: () => new BailianReader(),
};
