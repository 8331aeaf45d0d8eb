import type { FormatDefinition } from '../formatDefinition';
import { isClineUiMessages, readClineUiMessages } from './clineReader';

/** Cline and Roo Code task histories (`tasks/<id>/ui_messages.json` in the extension's global storage). */
export const clineFormat: FormatDefinition = {
  id: 'cline',
  label: 'Cline / Roo Code task (ui_messages.json)',
  fileHint:
    '<VS Code global storage>/saoudrizwan.claude-dev (or rooveterinaryinc.roo-cline)/tasks/<id>/ui_messages.json',
  limitations: [
    "Command exit codes are not logged: a command's outcome is unknown; file-tool failures show only when Cline reports an error after them.",
    'Cache figures as Cline reports them (tokensIn, cacheReads, cacheWrites): exact for Anthropic-style providers; other providers may count cached tokens inside tokensIn.',
    'No server-side timing: a request starts when Cline logs it and ends with the last message shown for it.',
  ],
  matchesDocument: isClineUiMessages,
  readDocument: readClineUiMessages,
};
