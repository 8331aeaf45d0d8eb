import type { FormatDefinition } from '../formatDefinition';
import { isObject } from '../json';
import { isWekaTrace, readWekaDocument, WekaRecordReader } from './wekaReader';

/** The kv-cache-tester ("Weka") agentic trace that AIPerf AgentX, InferenceX and BLIS replay (docs/design/formats.md §18). */
export const wekaFormat: FormatDefinition = {
  id: 'weka',
  label: 'Weka / kv-cache-tester agentic trace',
  fileHint:
    'kv-cache-tester traces/trace_*.json or a SemiAnalysis cc-traces-weka corpus: {"block_size", "hash_id_scope", "requests": [{"t", "type", "in", "out", "hash_ids"}, …]}',
  limitations: [
    'Cached tokens are what an infinite prefix cache would hit (computed from hash_ids within the trace), not what the provider served.',
    'No tool calls: output_types and stop only say that a call asked for tools, not which.',
    'No prompt or response text: a turn is a call whose new input is text (input_types), with no words to show.',
    "No cache writes; times are the capture's (t, api_time, ttft, think_time), in whole seconds on most published traces.",
  ],
  matchesDocument: isWekaTrace,
  // hash_id_scope is the format's own marker; a block_size alone is only structure.
  documentConfidence: (v) => (isObject(v) && typeof v['hash_id_scope'] === 'string' ? 'certain' : 'likely'),
  // Published corpora also come as JSON Lines, one trace per line.
  matchesRecord: isWekaTrace,
  createRecordReader: () => new WekaRecordReader(),
  readDocument: readWekaDocument,
};
