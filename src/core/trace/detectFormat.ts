import { str } from './json';
import type { JsonObject } from './json';
import type { FormatId } from './model';

/** How many records detection looks at: line 1 alone is often a snapshot or title line. */
export const DETECTION_RECORDS = 50;

/** Formats this build reads, with what a user should recognise them by. */
export const SUPPORTED_FORMATS: ReadonlyArray<{ id: FormatId; label: string; hint: string }> = [
  { id: 'agent-trace', label: 'Agent Trace (canonical, *.trace.jsonl)', hint: 'JSON Lines with "type": "header" / "session" / "llm_call" records' },
  { id: 'claude-code', label: 'Claude Code session log', hint: '~/.claude/projects/<project>/<session>.jsonl' },
];

/** The detected format and why, or null with what was seen. */
export interface Detection {
  format: FormatId | null;
  evidence: string;
}

const CANONICAL_TYPES = new Set(['header', 'session', 'turn', 'llm_call', 'tool_call', 'compaction']);
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

/** One record's vote, or null when it says nothing. */
function vote(record: JsonObject): FormatId | null {
  const type = str(record['type']);
  if (type === 'header' && record['format'] === 'agent-trace') return 'agent-trace';
  if ('sessionId' in record && ('uuid' in record || 'parentUuid' in record)) return 'claude-code';
  if (type !== null && CLAUDE_ONLY_TYPES.has(type)) return 'claude-code';
  if (type !== null && CANONICAL_TYPES.has(type) && ('session' in record || 'id' in record)) return 'agent-trace';
  return null;
}

/**
 * Decides the format from the first records by majority vote (formats.md §10): a
 * canonical header decides at once; otherwise each record votes by its keys.
 */
export function detectFormat(records: readonly JsonObject[]): Detection {
  const votes = new Map<FormatId, number>();
  for (const record of records.slice(0, DETECTION_RECORDS)) {
    const v = vote(record);
    if (v === 'agent-trace' && record['type'] === 'header') return { format: v, evidence: 'an agent-trace "header" record' };
    if (v) votes.set(v, (votes.get(v) ?? 0) + 1);
  }
  let best: FormatId | null = null;
  let bestVotes = 0;
  for (const [format, n] of votes) {
    if (n > bestVotes) {
      best = format;
      bestVotes = n;
    }
  }
  const looked = Math.min(records.length, DETECTION_RECORDS);
  if (best === null) return { format: null, evidence: `none of the first ${looked} records matched a known format (${describeKeys(records)})` };
  return { format: best, evidence: `${bestVotes} of the first ${looked} records look like ${best}` };
}

/** The most common top-level keys, to tell the user what the file does contain. */
function describeKeys(records: readonly JsonObject[]): string {
  const counts = new Map<string, number>();
  for (const r of records.slice(0, DETECTION_RECORDS)) for (const k of Object.keys(r)) counts.set(k, (counts.get(k) ?? 0) + 1);
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k]) => `"${k}"`);
  return top.length > 0 ? `keys seen: ${top.join(', ')}` : 'no JSON objects';
}
