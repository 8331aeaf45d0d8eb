/**
 * Where Claude Code keeps the sub-agent logs of a session file, relative to the
 * file's folder: `<session>.jsonl` → `<session>/subagents/` (docs/design/formats.md §1).
 * Null when the name is not a `.jsonl` file. Hosts list that folder's `*.jsonl`
 * files and pass them to parseTrace after the main file.
 */
export function claudeSubagentFolder(fileName: string): string | null {
  const match = /^(.+)\.jsonl$/i.exec(fileName);
  return match ? `${match[1]}/subagents` : null;
}

/** True for the names of sub-agent logs in that folder. */
export function isSubagentLogName(name: string): boolean {
  return /^agent-.+\.jsonl$/i.test(name);
}
