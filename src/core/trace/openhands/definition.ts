import type { FormatDefinition } from '../formatDefinition';
import {
  isOpenHandsEvent,
  isOpenHandsInstance,
  isOpenHandsTrajectory,
  OpenHandsRecordReader,
  readOpenHandsDocument,
} from './openhandsReader';

/** OpenHands event trajectories (V0 events: a saved trajectory, an evaluation output.jsonl, a session's events folder). */
export const openHandsFormat: FormatDefinition = {
  id: 'openhands',
  label: 'OpenHands event trajectory',
  fileHint:
    'a saved trajectory (JSON array of events), an evaluation output.jsonl ("instance_id" + "history"), or ~/.openhands/sessions/<id>/events/*.json',
  limitations: [
    'No server-side timing: call times come from the event timestamps and include network time.',
    "Per-call tokens only where the model response carries usage (function calling) or an evaluation lists token_usages; otherwise a call's tokens come from the change in the accumulated usage.",
    'Cached tokens as the provider reports them through litellm: a provider that does not report caching shows 0 cached.',
  ],
  matchesDocument: isOpenHandsTrajectory,
  matchesRecord: (r) => isOpenHandsInstance(r) || isOpenHandsEvent(r),
  createRecordReader: () => new OpenHandsRecordReader(),
  readDocument: readOpenHandsDocument,
};
