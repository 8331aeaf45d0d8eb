import { createReadStream } from 'node:fs';
import type { Dirent } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { claudeSessionIdOf, claudeSubagentFolder, isSubagentLogName, SIBLING_HEAD_BYTES, siblingAgentSessionId, SUBAGENT_FOLDER_DEPTH } from '../core/trace/claudeCode/companions';
import type { TraceFile } from '../core/trace/parseTrace';

/** Read buffer per stream: large enough to be fast, small enough to yield often. */
const CHUNK_BYTES = 256 * 1024;

/**
 * The files of a trace on local disk: the file itself, streamed, then its companion
 * files (see listCompanions), so runs are repeatable. Companion files are only read
 * if the main file turns out to be of a format that uses them (parseTrace decides).
 */
export async function readTraceFiles(path: string): Promise<TraceFile[]> {
  const name = basename(path);
  // Listed before any stream opens: an open stream with nobody reading it yet would throw its error (a missing file) unhandled.
  const companions = await listCompanions(path);
  const files: TraceFile[] = [{ key: name, bytes: createReadStream(path, { highWaterMark: CHUNK_BYTES }) }];
  for (const rel of companions) {
    files.push({ key: rel, bytes: createReadStream(join(dirname(path), rel), { highWaterMark: CHUNK_BYTES }) });
  }
  return files;
}

async function entries(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    return []; // an absent folder: no companions of that kind
  }
}

/**
 * Relative paths (from the trace's folder) of a Claude Code session's sub-agent logs,
 * sorted by name: `<session>/subagents/**\/agent-*.jsonl` (2.1.x) and the 2.0.x
 * `agent-*.jsonl` files beside it whose lines carry this session's id. None when the
 * file is not named like a session.
 */
export async function listCompanions(path: string): Promise<string[]> {
  const name = basename(path);
  const folder = claudeSubagentFolder(name);
  const sessionId = claudeSessionIdOf(name);
  if (folder === null || sessionId === null) return [];
  const nested = await subagentLogs(dirname(path), folder, 0);
  const siblings: string[] = [];
  for (const e of await entries(dirname(path))) {
    if (!e.isFile() || !isSubagentLogName(e.name)) continue;
    if ((await headSessionId(join(dirname(path), e.name))) === sessionId) siblings.push(e.name);
  }
  return [...nested.sort(), ...siblings.sort()];
}

async function subagentLogs(base: string, rel: string, depth: number): Promise<string[]> {
  const out: string[] = [];
  for (const e of await entries(join(base, rel))) {
    if (e.isFile() && isSubagentLogName(e.name)) out.push(`${rel}/${e.name}`);
    else if (e.isDirectory() && depth < SUBAGENT_FOLDER_DEPTH) out.push(...(await subagentLogs(base, `${rel}/${e.name}`, depth + 1)));
  }
  return out;
}

/** The sessionId named by the first lines of a sub-agent log, or null when unreadable. */
async function headSessionId(path: string): Promise<string | null> {
  let handle;
  try {
    handle = await open(path, 'r');
    const buffer = Buffer.alloc(SIBLING_HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SIBLING_HEAD_BYTES, 0);
    return siblingAgentSessionId(buffer.subarray(0, bytesRead).toString('utf8'));
  } catch {
    return null;
  } finally {
    await handle?.close();
  }
}
