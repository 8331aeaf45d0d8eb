import type { FormatDefinition } from '../formatDefinition';
import { isObject, str } from '../json';
import { CodexReader, ROLLOUT_TYPES, slimCodexRecord } from './codexReader';

/** OpenAI Codex CLI rollouts (docs/design/formats.md §2). */
export const codexFormat: FormatDefinition = {
  id: 'codex',
  label: 'OpenAI Codex CLI rollout',
  fileHint: '~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl',
  limitations: [
    'No cache-write figure in most rollouts: Codex reports cached input tokens, and only newer CLIs (0.15x) how many were written to the cache.',
    'No server-side timing: call times come from the rollout timestamps and include queueing, prefill, decode and network time.',
    'No sub-agents in the same file: each spawned agent writes its own rollout, and the parent rollout does not list them.',
    'Tool results are read from the output text: success from the exit code or error message, duration from the runner’s own "Wall time"; a command still running when its output was logged has no result.',
  ],
  // Each line is {timestamp, type, payload}; the `codex exec --json` stream (thread.started…) is another format.
  matchesRecord: (r) => {
    const type = str(r['type']);
    return type !== null && ROLLOUT_TYPES.has(type) && 'timestamp' in r && isObject(r['payload']);
  },
  createRecordReader: () => new CodexReader(),
  slimRecord: slimCodexRecord,
};
