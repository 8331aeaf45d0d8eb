import type { FormatDefinition } from '../formatDefinition';
import { isObject } from '../json';
import { findCompletion, OpenAiUsageReader } from './openaiUsageReader';

/** OpenAI-compatible usage logs: chat/completions responses, bare or wrapped (docs/design/formats.md §4). */
export const openAiUsageFormat: FormatDefinition = {
  id: 'openai-usage',
  label: 'OpenAI-compatible usage log',
  fileHint:
    'JSON Lines of chat/completions responses with "usage" (vLLM, OpenAI, proxies), bare, as {"request", "response"} or OpenAI Batch output',
  limitations: [
    'Cached tokens are known only where the server sent usage.prompt_tokens_details (vLLM needs --enable-prompt-tokens-details); elsewhere the cache hit rate is unknown, not zero.',
    'No server-side timing and no end times: a response only carries the second it was created.',
    'A response does not contain tool results: tool calls show their names and arguments, never whether they failed.',
    'No user turns: a response log carries no prompts.',
  ],
  matchesRecord: (r) => findCompletion(r) !== null,
  // A single pretty-printed response (or wrapper) saved as a .json file.
  matchesDocument: (value) => isObject(value) && findCompletion(value) !== null,
  createRecordReader: () => new OpenAiUsageReader(),
};
