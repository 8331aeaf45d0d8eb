import type { FormatDefinition } from '../formatDefinition';
import { arr, isObject, obj, str } from '../json';
import { isLegacyMessages, readMiniSweAgentDocument } from './miniSweAgentReader';

/** mini-swe-agent trajectories (`<instance>.traj.json`, docs/design/formats.md §8). */
export const miniSweAgentFormat: FormatDefinition = {
  id: 'mini-swe-agent',
  label: 'mini-swe-agent trajectory',
  fileHint: '<instance>.traj.json: "trajectory_format": "mini-swe-agent-1…", "info" + "messages"',
  limitations: [
    'No server-side timing in mini-swe-agent trajectories: call times come from the agent clock (extra.timestamp) and include network time.',
    'Cached tokens only where the provider reports prompt_tokens_details; elsewhere cache data is unknown.',
    'Legacy trajectories (a bare messages array) have no token counts, times or run totals.',
  ],
  // docs/design/formats.md §10 rule 1: trajectory_format "mini-swe-agent…", or messages + info; a bare array only with mini-swe-agent's own marks.
  matchesDocument: (v) => {
    if (Array.isArray(v)) return isLegacyMessages(v);
    if (!isObject(v)) return false;
    const format = str(v['trajectory_format']);
    if (format !== null) return format.startsWith('mini-swe-agent');
    // Without the marker, confirm the structure: chat messages with a role, and mini-swe-agent's
    // run info (an OpenCode export also has "info" + "messages", of another shape).
    const info = obj(v['info']);
    const messages = arr(v['messages']);
    if (!info || !messages || 'trajectory' in v || 'schema_version' in v) return false;
    const chat = messages.length > 0 && messages.slice(0, 5).every((m) => isObject(m) && typeof m['role'] === 'string');
    return chat && ('model_stats' in info || 'mini_version' in info || 'exit_status' in info);
  },
  documentConfidence: (v) => (isObject(v) && str(v['trajectory_format']) !== null ? 'certain' : 'likely'),
  readDocument: readMiniSweAgentDocument,
};
