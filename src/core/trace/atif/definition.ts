import type { FormatDefinition } from '../formatDefinition';
import { isObject, str } from '../json';
import { readAtifDocument } from './atifReader';

/** Harbor's Agent Trajectory Interchange Format (docs/design/formats.md §8). */
export const atifFormat: FormatDefinition = {
  id: 'atif',
  label: 'Harbor ATIF trajectory',
  fileHint: 'trajectory.json: "schema_version": "ATIF-v1.x" + "steps"',
  limitations: [
    'No server-side timing in ATIF: call end times are step timestamps; a call start is known only after a user step.',
    'Tool errors are read from the observation text (exit codes, shell and Python errors); other failures count as successes.',
    'Tool results carry no times: tool durations are unknown.',
  ],
  // docs/design/formats.md §10 rule 1: schema_version starts with "ATIF-" and there are steps.
  matchesDocument: (v) =>
    isObject(v) && (str(v['schema_version']) ?? '').startsWith('ATIF-') && Array.isArray(v['steps']),
  // schema_version names the format.
  documentConfidence: () => 'certain',
  readDocument: readAtifDocument,
};
