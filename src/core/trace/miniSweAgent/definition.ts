import type { FormatDefinition } from '../formatDefinition';
import { isObject, str } from '../json';
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
    return Array.isArray(v['messages']) && isObject(v['info']) && !('trajectory' in v) && !('schema_version' in v);
  },
  readDocument: readMiniSweAgentDocument,
};
