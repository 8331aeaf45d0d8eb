import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { isSubagentLogName } from '../../core/trace/claudeCode/companions';
import { listCompanions } from '../traceFiles';

/**
 * Every agent whose sessions live in a folder on this machine, and how to find them.
 * One list for everything that looks for local sessions: *Analyze Agent Session*'s
 * picker, the session index behind the Agent Sessions view and the status bar, and
 * `agent-trace sessions`. An agent added here (with its setting
 * `agentTrace.sessionRoots.<settingKey>`) shows up in all of them.
 */

/** A session file found under an agent's folder. */
export interface FoundSession {
  path: string;
  agentId: string;
  mtimeMs: number;
  sizeBytes: number;
  /** The project as the folder layout names it (Claude Code's project folder), until the log's own cwd is read. */
  projectHint: string | null;
}

/** How an agent's local sessions are found. */
export interface AgentDefinition {
  /** Stable id (settings, filters, `--agent`). */
  id: string;
  /** What users call it. */
  label: string;
  /** The key under `agentTrace.sessionRoots` naming its folder. */
  settingKey: string;
  /** The folder as the setting's default says it (`~` is the home folder). */
  defaultRoot: string;
  /** The folder the agent itself uses, from the environment variables it honours; null to use the default. */
  rootFromEnv(env: NodeJS.ProcessEnv): string | null;
  /** The session files under `root` (a missing folder has none). */
  discover(root: string): Promise<FoundSession[]>;
  /** Files read with a session file (sub-agent logs), relative to its folder. */
  companions(path: string): Promise<string[]>;
}

async function entries(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    return []; // a missing root is normal: that agent is not installed
  }
}

async function found(path: string, agentId: string, projectHint: string | null): Promise<FoundSession | null> {
  try {
    const s = await stat(path);
    return s.isFile() ? { path, agentId, mtimeMs: s.mtimeMs, sizeBytes: s.size, projectHint } : null;
  } catch {
    return null; // gone between readdir and stat
  }
}

/**
 * Claude Code names a project folder after its path with separators turned into
 * dashes (`-home-me-app`, `C--Users-me`). Dashes in names make it ambiguous, so this is
 * only used until the log's own `cwd` is read.
 */
export function decodeClaudeProject(folder: string): string {
  const drive = /^([A-Za-z])--(.*)$/.exec(folder);
  if (drive) return `${drive[1]}:\\${drive[2]!.replace(/-/g, '\\')}`;
  return folder.replace(/-/g, '/');
}

/** How deep the Codex walk goes (`sessions/YYYY/MM/DD/rollout-*.jsonl` is 3 folders down). */
const CODEX_MAX_DEPTH = 5;

async function codexWalk(root: string, depth: number, out: Array<Promise<FoundSession | null>>): Promise<void> {
  const dirs: Array<Promise<void>> = [];
  for (const e of await entries(root)) {
    const path = join(root, e.name);
    if (e.isDirectory() && depth < CODEX_MAX_DEPTH) dirs.push(codexWalk(path, depth + 1, out));
    else if (e.isFile() && /^rollout-.*\.jsonl$/i.test(e.name)) out.push(found(path, 'codex', null));
  }
  await Promise.all(dirs);
}

const noCompanions = (): Promise<string[]> => Promise.resolve([]);

export const CLAUDE_CODE: AgentDefinition = {
  id: 'claude-code',
  label: 'Claude Code',
  settingKey: 'claudeCode',
  defaultRoot: '~/.claude/projects',
  // Claude Code keeps its data under $CLAUDE_CONFIG_DIR when set.
  rootFromEnv: (env) => (env['CLAUDE_CONFIG_DIR'] ? join(env['CLAUDE_CONFIG_DIR'], 'projects') : null),
  async discover(root) {
    const files: Array<Promise<FoundSession | null>> = [];
    await Promise.all(
      (await entries(root))
        .filter((p) => p.isDirectory())
        .map(async (project) => {
          for (const file of await entries(join(root, project.name))) {
            if (file.isFile() && /\.jsonl$/i.test(file.name) && !isSubagentLogName(file.name)) {
              files.push(found(join(root, project.name, file.name), 'claude-code', decodeClaudeProject(project.name)));
            }
          }
        }),
    );
    return (await Promise.all(files)).filter((s): s is FoundSession => s !== null);
  },
  companions: (path) => listCompanions(path),
};

export const CODEX: AgentDefinition = {
  id: 'codex',
  label: 'Codex',
  settingKey: 'codex',
  defaultRoot: '~/.codex/sessions',
  // The Codex CLI keeps its data under $CODEX_HOME when set.
  rootFromEnv: (env) => (env['CODEX_HOME'] ? join(env['CODEX_HOME'], 'sessions') : null),
  async discover(root) {
    const files: Array<Promise<FoundSession | null>> = [];
    await codexWalk(root, 0, files);
    return (await Promise.all(files)).filter((s): s is FoundSession => s !== null);
  },
  companions: noCompanions,
};

/** Every agent with a local folder, in the order pickers list them. */
export const AGENTS: readonly AgentDefinition[] = [CLAUDE_CODE, CODEX];

export function agentById(id: string): AgentDefinition | undefined {
  return AGENTS.find((a) => a.id === id);
}

/** Expands a leading `~` to the home folder. */
export function expandHome(path: string, home = homedir()): string {
  if (path === '~') return home;
  if (path.startsWith('~/') || path.startsWith('~\\')) return join(home, path.slice(2));
  return path;
}

/** An agent and the folder its sessions are looked for in. */
export interface AgentRoot {
  agent: AgentDefinition;
  root: string;
}

/**
 * The folder of each agent: the user's setting when it differs from the default, else
 * the agent's own environment variable, else the default. `configured` maps setting
 * keys to their values (missing or blank: the default).
 */
export function resolveRoots(configured: Readonly<Record<string, string | undefined>>, env: NodeJS.ProcessEnv = process.env, home = homedir()): AgentRoot[] {
  return AGENTS.map((agent) => {
    const value = configured[agent.settingKey]?.trim();
    const root = value && value !== agent.defaultRoot ? expandHome(value, home) : (agent.rootFromEnv(env) ?? expandHome(agent.defaultRoot, home));
    return { agent, root };
  });
}

/** Every session file under the roots, newest first. */
export async function discoverSessions(roots: readonly AgentRoot[]): Promise<FoundSession[]> {
  const lists = await Promise.all(roots.map(({ agent, root }) => agent.discover(root)));
  return lists.flat().sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : 1));
}

/** The label of a session file's agent, for pickers. */
export function agentLabel(agentId: string): string {
  return agentById(agentId)?.label ?? agentId;
}

/** A session's name when nothing better is known. */
export function fileLabel(path: string): string {
  return basename(path);
}
