import type { FormatDefinition } from '../formatDefinition';
import { str } from '../json';
import { ClaudeCodeReader, slimClaudeCodeRecord } from './claudeCodeReader';
import {
  claudeSessionIdOf,
  claudeSubagentFolder,
  isSubagentLogName,
  SIBLING_HEAD_BYTES,
  siblingAgentSessionId,
  SUBAGENT_FOLDER_DEPTH,
} from './companions';

/** Record types only Claude Code writes; line 1 is often one of them (docs/design/formats.md §10). */
const CLAUDE_ONLY_TYPES = new Set([
  'file-history-snapshot',
  'summary',
  'queue-operation',
  'progress',
  'mode',
  'permission-mode',
  'ai-title',
  'last-prompt',
]);

/** Claude Code session logs (docs/design/formats.md §1). */
export const claudeCodeFormat: FormatDefinition = {
  id: 'claude-code',
  label: 'Claude Code session log',
  fileHint: '~/.claude/projects/<project>/<session>.jsonl',
  limitations: [
    'No server-side timing: call durations are measured by the client and include queueing, prefill, decode and network time.',
  ],
  matchesRecord: (r) => {
    if ('sessionId' in r && ('uuid' in r || 'parentUuid' in r)) return true;
    const type = str(r['type']);
    return type !== null && CLAUDE_ONLY_TYPES.has(type);
  },
  createRecordReader: () => new ClaudeCodeReader(),
  slimRecord: slimClaudeCodeRecord,
  // Sub-agent logs: `<session>/subagents/**/agent-*.jsonl` (2.1.x) and the 2.0.x `agent-*.jsonl` beside the session that name its id.
  companions: {
    folderOf: claudeSubagentFolder,
    folderDepth: SUBAGENT_FOLDER_DEPTH,
    isCompanionName: isSubagentLogName,
    nameGlob: '*.jsonl',
    beside: { headBytes: SIBLING_HEAD_BYTES, idOf: claudeSessionIdOf, ownerIn: siblingAgentSessionId },
  },
};
