import type { Dirent } from 'node:fs';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { readJsonFile } from './traceFiles';
import { basename, dirname, join } from 'node:path';
import { isSubagentLogName } from '../core/trace/claudeCode/companions';

/** Agents whose local sessions Analyze Agent Session lists. */
export type LocalAgent =
  | 'Claude Code'
  | 'Codex'
  | 'Gemini CLI'
  | 'OpenCode'
  | 'OpenHands'
  | 'Cline'
  | 'Roo Code'
  | 'AIPerf'
  | 'VS Code Copilot'
  | 'OpenTelemetry';

/** Where each agent keeps its sessions on this machine, as absolute folders (`~` already expanded). */
export interface SessionRoots {
  claudeCode: string;
  codex: string;
  geminiCli: string;
  /** OpenCode's data folder (`~/.local/share/opencode`): `storage/` (before 1.2) and `opencode.db`. */
  openCode: string;
  /** OpenHands' file store (`~/.openhands`): `sessions/<id>/events/<n>.json`. */
  openHands: string;
  /** Cline's task folder (`…/globalStorage/saoudrizwan.claude-dev/tasks`). */
  cline: string;
  /** Roo Code's task folder (`…/globalStorage/rooveterinaryinc.roo-cline/tasks`). */
  rooCode: string;
  /** Folders holding AIPerf runs (`artifacts/`). */
  aiperf: readonly string[];
  /** VS Code's user folder (`…/Code/User`): chat sessions under `workspaceStorage/<hash>/chatSessions/` and `globalStorage/emptyWindowChatSessions/`. */
  vscodeCopilot: string;
  /** A folder of OTLP/JSON files (`*.json`, `*.jsonl`): the Copilot CLI's file exporter writes to `~/.copilot/otel`. */
  openTelemetry: string;
}

/**
 * A session found on this machine. Most are one file; an OpenHands session is a folder of
 * event files and an OpenCode (before 1.2) session is spread over its storage: those are
 * written as one trace file when opened (see assembleSession).
 */
export interface LocalSession {
  /** The file to open, or the folder / session file the session is assembled from. */
  path: string;
  agent: LocalAgent;
  mtimeMs: number;
  sizeBytes: number;
  /** The project when the location tells it (Claude Code's folder name); null until the log is read. */
  project: string | null;
  /** How the session becomes one trace file. */
  assemble: null | { kind: 'openhands-events' } | { kind: 'opencode-storage'; storage: string; sessionId: string };
}

/** What discovery found: the sessions, and notes on sessions it cannot list (shown as such, never dropped silently). */
export interface Discovery {
  sessions: LocalSession[];
  notes: string[];
}

/** How deep the Codex walk goes (`sessions/YYYY/MM/DD/rollout-*.jsonl` is 3 folders down). */
const CODEX_MAX_DEPTH = 5;

/**
 * Folders and files discovery could not look at (permission denied, a loop of links):
 * the callers say how many, once, instead of skipping them silently. A missing folder is
 * not one of them (that agent is not installed, or the file went between list and look).
 */
export type Unlisted = string[];

function missing(e: unknown): boolean {
  return (e as NodeJS.ErrnoException).code === 'ENOENT';
}

async function entries(dir: string, unlisted?: Unlisted): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (e) {
    if (!missing(e)) unlisted?.push(dir);
    return [];
  }
}

async function withStat(
  path: string,
  agent: LocalAgent,
  project: string | null,
  assemble: LocalSession['assemble'] = null,
  unlisted?: Unlisted,
): Promise<LocalSession | null> {
  try {
    const s = await stat(path);
    return { path, agent, mtimeMs: s.mtimeMs, sizeBytes: s.size, project, assemble };
  } catch (e) {
    if (!missing(e)) unlisted?.push(path);
    return null;
  }
}

function present(list: ReadonlyArray<LocalSession | null>): LocalSession[] {
  return list.filter((s): s is LocalSession => s !== null);
}

/**
 * Claude Code names a project folder after its path with separators turned into
 * dashes (`-home-me-app`, `C--Users-me`). Dashes in names make it ambiguous, so this is
 * only shown until the log's own `cwd` is read.
 */
export function decodeClaudeProject(folder: string): string {
  const drive = /^([A-Za-z])--(.*)$/.exec(folder);
  if (drive) return `${drive[1]}:\\${drive[2]!.replace(/-/g, '\\')}`;
  return folder.replace(/-/g, '/');
}

/** Claude Code: `<root>/<project>/<session>.jsonl` (sub-agent logs, beside it or below it, are read with it). */
export async function claudeSessions(root: string, unlisted?: Unlisted): Promise<LocalSession[]> {
  const found: Array<Promise<LocalSession | null>> = [];
  for (const project of await entries(root, unlisted)) {
    if (!project.isDirectory()) continue;
    for (const file of await entries(join(root, project.name), unlisted)) {
      if (file.isFile() && /\.jsonl$/i.test(file.name) && !isSubagentLogName(file.name))
        found.push(
          withStat(
            join(root, project.name, file.name),
            'Claude Code',
            decodeClaudeProject(project.name),
            null,
            unlisted,
          ),
        );
    }
  }
  return present(await Promise.all(found));
}

/** Codex: `<root>/**\/rollout-*.jsonl`. */
export async function codexSessions(root: string, unlisted?: Unlisted, depth = 0): Promise<LocalSession[]> {
  const out: LocalSession[] = [];
  for (const e of await entries(root, unlisted)) {
    const path = join(root, e.name);
    if (e.isDirectory() && depth < CODEX_MAX_DEPTH) out.push(...(await codexSessions(path, unlisted, depth + 1)));
    // `s`: a name may hold a newline (`.` alone stops at one, and the file was skipped without a word).
    else if (e.isFile() && /^rollout-.*\.jsonl$/is.test(e.name))
      out.push(...present([await withStat(path, 'Codex', null, null, unlisted)]));
  }
  return out;
}

/** A small text file's content (Gemini CLI's project markers); null when it is missing, not a regular file, or larger than `max` bytes. */
async function smallText(path: string, max: number): Promise<string | null> {
  try {
    const s = await stat(path);
    if (!s.isFile() || s.size > max) return null;
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

/** The largest Gemini CLI project registry read (a map of paths to short names). */
const GEMINI_REGISTRY_MAX = 4 * 2 ** 20;

/**
 * Gemini CLI's project registry, `~/.gemini/projects.json` (`{"projects": {"<project
 * path>": "<short id>"}}`, beside `tmp/`): each project's folder under `tmp/` by its short
 * id, and by the SHA-256 of its path (the folder name of versions before the registry,
 * which Gemini CLI moves to the short id when it next runs there). Empty when absent.
 */
async function geminiRegistry(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const text = await smallText(join(dirname(root), 'projects.json'), GEMINI_REGISTRY_MAX);
  if (text === null) return out;
  try {
    const projects = (JSON.parse(text) as { projects?: unknown }).projects;
    if (typeof projects !== 'object' || projects === null) return out;
    for (const [path, id] of Object.entries(projects)) {
      if (typeof id === 'string' && id !== '') out.set(id, path);
      out.set(createHash('sha256').update(path).digest('hex'), path);
    }
  } catch {
    // Not the registry Gemini CLI writes: the folders name their projects themselves.
  }
  return out;
}

/**
 * The project a Gemini CLI folder under `tmp/` belongs to: the path in its `.project_root`
 * marker (Gemini CLI writes one into each project's folder), else the registry's entry for
 * it, else the folder itself (its name is the project's short name, or the SHA-256 of the
 * project's path, which cannot be undone: shown as such). Never `chats`.
 */
async function geminiProject(root: string, folder: string, registry: ReadonlyMap<string, string>): Promise<string> {
  const marker = (await smallText(join(root, folder, '.project_root'), 4096))?.trim();
  if (marker) return marker;
  return registry.get(folder) ?? join(root, folder);
}

/** Gemini CLI: `<root>/<project hash or short id>/chats/session-*.json` (and `.jsonl` in newer versions), with the project each folder belongs to. */
export async function geminiSessions(root: string, unlisted?: Unlisted): Promise<LocalSession[]> {
  const found: Array<Promise<LocalSession | null>> = [];
  const registry = await geminiRegistry(root);
  for (const project of await entries(root, unlisted)) {
    if (!project.isDirectory()) continue;
    const chats = join(root, project.name, 'chats');
    const files = (await entries(chats, unlisted)).filter(
      (file) => file.isFile() && /^session-.*\.jsonl?$/is.test(file.name),
    );
    if (files.length === 0) continue;
    const name = await geminiProject(root, project.name, registry);
    for (const file of files) found.push(withStat(join(chats, file.name), 'Gemini CLI', name, null, unlisted));
  }
  return present(await Promise.all(found));
}

/** Cline and Roo Code: `<tasks>/<task id>/ui_messages.json`. */
export async function taskSessions(
  root: string,
  agent: 'Cline' | 'Roo Code',
  unlisted?: Unlisted,
): Promise<LocalSession[]> {
  const found: Array<Promise<LocalSession | null>> = [];
  for (const task of await entries(root, unlisted)) {
    if (task.isDirectory())
      found.push(withStat(join(root, task.name, 'ui_messages.json'), agent, null, null, unlisted));
  }
  return present(await Promise.all(found));
}

/** AIPerf: `<folder>/profile_export.jsonl` and `<folder>/<run>/profile_export.jsonl`. */
export async function aiperfRuns(folders: readonly string[], unlisted?: Unlisted): Promise<LocalSession[]> {
  const found: Array<Promise<LocalSession | null>> = [];
  for (const folder of folders) {
    found.push(withStat(join(folder, 'profile_export.jsonl'), 'AIPerf', basename(folder), null, unlisted));
    for (const run of await entries(folder, unlisted)) {
      if (run.isDirectory())
        found.push(withStat(join(folder, run.name, 'profile_export.jsonl'), 'AIPerf', run.name, null, unlisted));
    }
  }
  return present(await Promise.all(found));
}

/** Chat session files of one folder (`<id>.json`, or the newer operation log `<id>.jsonl`). */
async function chatSessionFiles(dir: string, project: string | null): Promise<Array<Promise<LocalSession | null>>> {
  return (await entries(dir))
    .filter((f) => f.isFile() && /\.jsonl?$/i.test(f.name))
    .map((f) => withStat(join(dir, f.name), 'VS Code Copilot', project));
}

/**
 * The folder a VS Code workspace storage belongs to: `<hash>/workspace.json` names it
 * (`{"folder": "file:///…"}`, or `{"workspace": "file:///….code-workspace"}`); its last path
 * segment, URI-decoded. Null when the file is missing or names something else.
 */
export async function vscodeWorkspaceName(storage: string): Promise<string | null> {
  let value: unknown;
  try {
    value = await readJson(join(storage, 'workspace.json'));
  } catch {
    return null;
  }
  const uri =
    typeof value === 'object' && value !== null
      ? ((value as { folder?: unknown; workspace?: unknown }).folder ?? (value as { workspace?: unknown }).workspace)
      : null;
  if (typeof uri !== 'string') return null;
  const path = uri.replace(/^[a-z][\w+.-]*:\/\/[^/]*/i, '').replace(/[\\/]+$/, '');
  const last = path.split(/[\\/]/).pop() ?? '';
  try {
    return decodeURIComponent(last).replace(/\.code-workspace$/, '') || null;
  } catch {
    return last || null;
  }
}

/**
 * VS Code's chat sessions (Copilot Chat, agent mode): `<User>/workspaceStorage/<hash>/chatSessions/*`
 * with the workspace folder's name from `<hash>/workspace.json`, and the sessions of windows
 * without a folder in `<User>/globalStorage/emptyWindowChatSessions/`.
 */
export async function vscodeChatSessions(user: string, unlisted?: Unlisted): Promise<LocalSession[]> {
  const found: Array<Promise<LocalSession | null>> = [];
  const storage = join(user, 'workspaceStorage');
  for (const ws of await entries(storage, unlisted)) {
    if (!ws.isDirectory()) continue;
    const chats = join(storage, ws.name, 'chatSessions');
    if ((await entries(chats)).length === 0) continue;
    found.push(...(await chatSessionFiles(chats, await vscodeWorkspaceName(join(storage, ws.name)))));
  }
  found.push(...(await chatSessionFiles(join(user, 'globalStorage', 'emptyWindowChatSessions'), null)));
  return present(await Promise.all(found));
}

/** OTLP/JSON files of a folder (`*.json`, `*.jsonl`; the Copilot CLI's file exporter, a collector's file exporter). */
export async function otlpFiles(root: string, unlisted?: Unlisted): Promise<LocalSession[]> {
  const found = (await entries(root, unlisted))
    .filter((f) => f.isFile() && /\.jsonl?$/i.test(f.name))
    .map((f) => withStat(join(root, f.name), 'OpenTelemetry', null, null, unlisted));
  return present(await Promise.all(found));
}

/** OpenHands (V0 file store): `<root>/sessions/<id>/events/<n>.json`, one event per file. */
export async function openHandsSessions(root: string, unlisted?: Unlisted): Promise<LocalSession[]> {
  const out: LocalSession[] = [];
  for (const s of await entries(join(root, 'sessions'), unlisted)) {
    if (!s.isDirectory()) continue;
    const events = join(root, 'sessions', s.name, 'events');
    const files = (await entries(events, unlisted)).filter((e) => e.isFile() && /^\d+\.json$/.test(e.name));
    if (files.length === 0) continue;
    // The newest event file says when the session last changed.
    const last = files.reduce((a, b) => (Number(a.name.slice(0, -5)) > Number(b.name.slice(0, -5)) ? a : b));
    const st = await withStat(join(events, last.name), 'OpenHands', null, { kind: 'openhands-events' }, unlisted);
    if (st) out.push({ ...st, path: events });
  }
  return out;
}

/** OpenCode before 1.2: `<root>/storage/session/<project>/<ses_…>.json` (older: `storage/session/info/`). */
export async function openCodeSessions(root: string, notes: string[], unlisted?: Unlisted): Promise<LocalSession[]> {
  const storage = join(root, 'storage');
  const found: Array<Promise<LocalSession | null>> = [];
  for (const project of await entries(join(storage, 'session'), unlisted)) {
    if (!project.isDirectory()) continue;
    for (const file of await entries(join(storage, 'session', project.name), unlisted)) {
      const m = /^(ses_[^.]+)\.json$/.exec(file.name);
      if (file.isFile() && m)
        found.push(
          withStat(
            join(storage, 'session', project.name, file.name),
            'OpenCode',
            null,
            { kind: 'opencode-storage', storage, sessionId: m[1]! },
            unlisted,
          ),
        );
    }
  }
  const sessions = present(await Promise.all(found));
  if (await withStat(join(root, 'opencode.db'), 'OpenCode', null)) {
    notes.push(
      `OpenCode 1.2 and later keep sessions in ${join(root, 'opencode.db')} (SQLite), which is not read here: run \`opencode export <session id> > session.json\` and open that file.`,
    );
  }
  return sessions;
}

/** A JSON file of an agent's folder: a regular file only (a FIFO there must not block the picker), streamed, nesting bounded. */
async function readJson(path: string): Promise<unknown> {
  const read = await readJsonFile(path, "an agent's session file");
  if ('error' in read) throw new Error(read.error);
  return read.value;
}

/** JSON files of a folder, in the order of their names (OpenCode ids and OpenHands event numbers sort by time). */
async function jsonFiles(dir: string, numeric = false): Promise<string[]> {
  const names = (await entries(dir)).filter((e) => e.isFile() && e.name.endsWith('.json')).map((e) => e.name);
  return numeric ? names.sort((a, b) => Number(a.slice(0, -5)) - Number(b.slice(0, -5))) : names.sort();
}

/**
 * The text of one trace file for a session spread over several files: an OpenHands events
 * folder becomes the JSON array of its events (a saved trajectory); an OpenCode session in
 * its storage becomes `opencode export`'s `{info, messages: [{info, parts}]}`. Null for a
 * session that already is one file.
 */
export async function assembleSession(session: LocalSession): Promise<string | null> {
  const how = session.assemble;
  if (how === null) return null;
  if (how.kind === 'openhands-events') {
    const events = [];
    for (const name of await jsonFiles(session.path, true)) events.push(await readJson(join(session.path, name)));
    return JSON.stringify(events, null, 1);
  }
  const info = await readJson(session.path);
  const messages = [];
  const messageDir = join(how.storage, 'message', how.sessionId);
  for (const name of await jsonFiles(messageDir)) {
    const message = await readJson(join(messageDir, name));
    const id = typeof message === 'object' && message !== null ? (message as { id?: unknown }).id : undefined;
    const parts = [];
    if (typeof id === 'string') {
      const partDir = join(how.storage, 'part', id);
      for (const p of await jsonFiles(partDir)) parts.push(await readJson(join(partDir, p)));
    }
    messages.push({ info: message, parts });
  }
  return JSON.stringify({ info, messages }, null, 1);
}

/**
 * The file to open for a session: itself, or (assembled sessions) a file written into
 * `outDir`, named after the agent and session so that reopening it replaces the old copy.
 */
export async function sessionFile(session: LocalSession, outDir: string): Promise<string> {
  const text = await assembleSession(session);
  if (text === null) return session.path;
  await mkdir(outDir, { recursive: true });
  const id =
    session.assemble?.kind === 'opencode-storage' ? session.assemble.sessionId : basename(join(session.path, '..'));
  const out = join(
    outDir,
    `${session.agent === 'OpenCode' ? 'opencode' : 'openhands'}-${id.replace(/[^\w.-]/g, '_')}.json`,
  );
  await writeFile(out, text);
  return out;
}
