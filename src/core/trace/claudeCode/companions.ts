/**
 * Where Claude Code keeps the sub-agent logs of a session file, relative to the
 * file's folder: `<session>.jsonl` → `<session>/subagents/` (2.1.x, docs/design/formats.md §1).
 * Null when the name is not a `.jsonl` file, or its stem is only dots (it would name a
 * folder above the session's). Hosts list that folder's `*.jsonl`
 * files and pass them to parseTrace after the main file.
 */
export function claudeSubagentFolder(fileName: string): string | null {
  // `s`: a file name may hold any character but a slash, a newline too.
  const match = /^(.+)\.jsonl$/is.exec(fileName);
  // "...jsonl" would name "../subagents": a folder outside the session's own.
  if (!match || /^\.+$/.test(match[1]!) || /[\\/]/.test(match[1]!)) return null;
  return `${match[1]}/subagents`;
}

/** True for the names of sub-agent logs in that folder, and of the 2.0.x sibling logs beside the session. */
export function isSubagentLogName(name: string): boolean {
  return /^agent-.+\.jsonl$/is.test(name);
}

/** Folders below `subagents/` a host looks into (2.1.x workflow agents sit in `subagents/workflows/<run>/`). */
export const SUBAGENT_FOLDER_DEPTH = 3;

/** Bytes of a sibling `agent-*.jsonl` a host reads to learn which session it belongs to. */
export const SIBLING_HEAD_BYTES = 64 * 1024;

/**
 * The session a Claude Code 2.0.x sub-agent log belongs to, from the start of the file:
 * those versions write sub-agents as `agent-<id>.jsonl` beside the session, in the same
 * project folder as every other session, each line carrying the parent's `sessionId`.
 * Null when no complete line in `head` names one.
 */
export function siblingAgentSessionId(head: string): string | null {
  for (const line of head.split('\n')) {
    if (!line.includes('"sessionId"')) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (
        typeof value === 'object' &&
        value !== null &&
        typeof (value as { sessionId?: unknown }).sessionId === 'string'
      )
        return (value as { sessionId: string }).sessionId;
    } catch {
      // A line cut by the head's end, or a broken one: look at the next.
    }
  }
  return null;
}

/** The session id of a Claude Code session file name (`<id>.jsonl`), or null for other names. */
export function claudeSessionIdOf(fileName: string): string | null {
  const match = /^(.+)\.jsonl$/is.exec(fileName);
  return match && !isSubagentLogName(fileName) ? match[1]! : null;
}
