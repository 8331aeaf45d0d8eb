import type { FormatDefinition } from '../formatDefinition';
import { TraceLabReader } from './tracelabReader';

/** TraceLab normalized round traces (docs/design/formats.md §3). */
export const traceLabFormat: FormatDefinition = {
  id: 'tracelab',
  label: 'TraceLab round trace',
  fileHint: 'uw-syfi/TraceLab round_trace.jsonl or the syfi_coding_trace.jsonl release',
  limitations: [
    'No server-side timing: call times come from the agent log events (first input to usage report or last output).',
    'Cache writes are known for Claude rounds only; Codex rounds leave them unknown.',
    'Sanitized rows have no prompt text, tool inputs or error messages: turns have no preview, and tool calls no command, file or error text.',
  ],
  // docs/design/formats.md §10: the provider plus TraceLab's own prefix/append split.
  matchesRecord: (r) => 'provider' in r && 'prefix_tokens' in r && 'newly_append_tokens' in r,
  createRecordReader: () => new TraceLabReader(),
};
