import type { FormatDefinition } from '../formatDefinition';
import {
  GeminiRecordReader,
  geminiDocumentRecords,
  isGeminiChat,
  isGeminiRecord,
  readGeminiDocument,
} from './geminiCliReader';

/** Gemini CLI chat sessions (`~/.gemini/tmp/<project>/chats/session-*.json` and the newer `.jsonl`). */
export const geminiCliFormat: FormatDefinition = {
  id: 'gemini-cli',
  label: 'Gemini CLI chat session',
  fileHint: '~/.gemini/tmp/<project>/chats/session-<time>-<id>.json(l): "sessionId" + "projectHash" + "messages"',
  limitations: [
    'No cache-write figure: Gemini reports cached prompt tokens, not how many were written to a cache.',
    'No server-side timing: a call ends when its message was recorded and starts after the message before it.',
    "Tool calls carry their status and result but no duration, and a shell command's exit code only inside its output text.",
  ],
  matchesDocument: isGeminiChat,
  matchesRecord: isGeminiRecord,
  createRecordReader: () => new GeminiRecordReader(),
  readDocument: readGeminiDocument,
  documentRecords: geminiDocumentRecords,
};
