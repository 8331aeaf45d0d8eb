import type { FormatDefinition } from '../formatDefinition';
import { ChatLogReader, isChatLogEntry, isChatLogHeader, isChatSession, readChatDocument } from './vscodeCopilotReader';

/** VS Code's chat sessions: GitHub Copilot Chat and agent mode (docs/design/formats.md §19). */
export const vscodeCopilotFormat: FormatDefinition = {
  id: 'vscode-copilot',
  label: 'VS Code Copilot Chat session',
  fileHint:
    '<VS Code user folder>/workspaceStorage/<hash>/chatSessions/<id>.json or .jsonl, globalStorage/emptyWindowChatSessions/, or a file from Chat: Export Chat…',
  limitations: [
    "Token counts only where VS Code recorded them: newer versions keep the prompt and output tokens of a request's last model call (Anthropic models first); older sessions and exports have none, and no cached-token count.",
    "Call times: a request's start and its total time (the first call starts with the request, the last ends with it); the calls in between have no times unless VS Code stored them per round.",
    "No cache writes, no server timing; a tool's result text is kept only as VS Code stored it (terminal exit codes, denials).",
  ],
  matchesDocument: isChatSession,
  // The operation log (chatSessions/*.jsonl): its first line holds the whole session and names its version.
  decidesRecord: isChatLogHeader,
  matchesRecord: isChatLogEntry,
  createRecordReader: () => new ChatLogReader(),
  readDocument: readChatDocument,
};
