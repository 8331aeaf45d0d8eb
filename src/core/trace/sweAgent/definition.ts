import type { FormatDefinition } from '../formatDefinition';
import { isObject } from '../json';
import { readSweAgentDocument } from './sweAgentReader';

/** SWE-agent trajectories (`<instance>.traj`, docs/design/formats.md §8). */
export const sweAgentFormat: FormatDefinition = {
  id: 'swe-agent',
  label: 'SWE-agent trajectory',
  fileHint: 'trajectories/<user>/<run>/<instance>.traj: "trajectory" + "info" (+ "history")',
  limitations: [
    'No per-call token counts in SWE-agent trajectories: totals only (info.model_stats).',
    'No timestamps: call and tool times are unknown; execution_time (SWE-agent 1.x) gives tool durations only.',
    'No cache data: cached and appended tokens are unknown.',
  ],
  // docs/design/formats.md §10 rule 1: "trajectory" + "info" (+ "history"); ATIF also has steps, never "trajectory".
  matchesDocument: (v) =>
    isObject(v) && Array.isArray(v['trajectory']) && isObject(v['info']) && !('schema_version' in v),
  readDocument: readSweAgentDocument,
};
