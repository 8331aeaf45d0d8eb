import { createReadStream } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { claudeSubagentFolder, isSubagentLogName } from '../core/trace/claudeCode/companions';
import type { TraceFile } from '../core/trace/parseTrace';

/** Read buffer per stream: large enough to be fast, small enough to yield often. */
const CHUNK_BYTES = 256 * 1024;

/**
 * The files of a trace on local disk: the file itself, streamed, then any Claude Code
 * sub-agent logs beside it (`<session>/subagents/agent-*.jsonl`), sorted by name so
 * runs are repeatable. Companion files are only read if the main file turns out to be
 * a Claude Code log (parseTrace decides).
 */
export async function readTraceFiles(path: string): Promise<TraceFile[]> {
  const name = basename(path);
  const files: TraceFile[] = [{ key: name, bytes: createReadStream(path, { highWaterMark: CHUNK_BYTES }) }];
  for (const rel of await listCompanions(path)) {
    files.push({ key: rel, bytes: createReadStream(join(dirname(path), rel), { highWaterMark: CHUNK_BYTES }) });
  }
  return files;
}

/** Relative paths (from the trace's folder) of its sub-agent logs; none when the folder is absent. */
export async function listCompanions(path: string): Promise<string[]> {
  const folder = claudeSubagentFolder(basename(path));
  if (folder === null) return [];
  try {
    const names = await readdir(join(dirname(path), folder));
    return names.filter(isSubagentLogName).sort().map((n) => `${folder}/${n}`);
  } catch {
    return [];
  }
}
