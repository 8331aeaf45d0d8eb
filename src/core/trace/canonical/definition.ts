import type { FormatDefinition } from '../formatDefinition';
import { str } from '../json';
import { CanonicalReader } from './canonicalReader';

const CANONICAL_TYPES = new Set(['header', 'session', 'turn', 'llm_call', 'tool_call', 'compaction']);

/** The canonical Agent Trace format (docs/trace-format.md). */
export const canonicalFormat: FormatDefinition = {
  id: 'agent-trace',
  label: 'Agent Trace (canonical)',
  fileHint: '*.trace.jsonl: "type": "header" / "session" / "llm_call" records',
  limitations: [],
  decidesRecord: (r) => r['type'] === 'header' && r['format'] === 'agent-trace',
  matchesRecord: (r) => {
    const type = str(r['type']);
    return type !== null && CANONICAL_TYPES.has(type) && ('session' in r || 'id' in r);
  },
  createRecordReader: () => new CanonicalReader(),
};
