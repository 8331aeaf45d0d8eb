import type { FormatDefinition } from '../formatDefinition';
import { isOpenCodeExport, openCodeDocumentRecords, readOpenCodeExport } from './opencodeReader';

/** OpenCode sessions as `opencode export <session>` writes them. */
export const openCodeFormat: FormatDefinition = {
  id: 'opencode',
  label: 'OpenCode session export',
  fileHint: 'opencode export <session> > session.json: "info" (ses_… id, projectID) + "messages" of {info, parts}',
  limitations: [
    "No server-side timing: a call's time is its message's creation and completion, and a step ends when its tools start.",
    'Sub-agents (the task tool) are separate sessions: export each one to see it.',
    'OpenCode 1.2 and later keep sessions in a SQLite database (opencode.db): export a session with `opencode export` to read it here.',
  ],
  matchesDocument: isOpenCodeExport,
  readDocument: readOpenCodeExport,
  documentRecords: openCodeDocumentRecords,
};
