import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import {
  aiperfRuns,
  claudeSessions,
  codexSessions,
  geminiSessions,
  openCodeSessions,
  openHandsSessions,
  otlpFiles,
  taskSessions,
  vscodeChatSessions,
} from '../agentSessions';
import type { Discovery, LocalAgent, LocalSession, SessionRoots, Unlisted } from '../agentSessions';
import { listCompanions } from '../traceFiles';

/**
 * Every agent whose sessions live in a folder on this machine, and how to find them.
 * One list for everything that looks for local sessions: *Analyze Agent Session*'s
 * picker, the session index behind the Agent Sessions view and the status bar, and
 * `agent-trace sessions`. An agent added here (with its setting
 * `agentTrace.sessionRoots.<settingKey>` and its discovery in ../agentSessions.ts)
 * shows up in all of them.
 */

export type { SessionRoots } from '../agentSessions';

/** A session found under an agent's folder, with the registry's id of its agent. */
export interface FoundSession extends LocalSession {
  agentId: string;
  /** The project as the folder layout names it (Claude Code's project folder), until the log's own cwd is read. */
  projectHint: string | null;
}

/** How an agent's local sessions are found. */
export interface AgentDefinition {
  /** Stable id (settings, filters, `--agent`). */
  id: string;
  /** What users call it. */
  label: LocalAgent;
  /** The key under `agentTrace.sessionRoots` (and in SessionRoots) naming its folder. */
  settingKey: keyof SessionRoots;
  /** The folder as the setting's default says it (`~` is the home folder; empty: see `defaultFolder`). */
  defaultRoot: string;
  /** The folder the agent itself uses when the setting is left at its default (its environment variables, its own storage). */
  defaultFolder(context: RootContext): string;
  /**
   * The sessions under one folder (a missing folder has none); `notes` gets what exists but
   * cannot be listed, `unlisted` the folders and files it could not look at.
   */
  discover(root: string, notes: string[], unlisted: Unlisted): Promise<LocalSession[]>;
  /** Files read with a session file (sub-agent logs), relative to its folder. */
  companions(path: string): Promise<string[]>;
}

/** What the default folders depend on. */
export interface RootContext {
  env: NodeJS.ProcessEnv;
  home: string;
  /** This extension's global storage: Cline's and Roo Code's storage is its sibling. Absent for the CLI. */
  globalStorageDir?: string;
  /** Folders AIPerf runs are looked for in, relative paths against each (the CLI: its working folder). */
  workspaceFolders: readonly string[];
}

/** Expands a leading `~` to the home folder. */
export function expandHome(path: string, home = homedir()): string {
  if (path === '~') return home;
  if (path.startsWith('~/') || path.startsWith('~\\')) return join(home, path.slice(2));
  return path;
}

/** VS Code's user folder (`…/Code/User`): the extension's storage's grandparent, else the platform's default for the CLI. */
function vscodeUserFolder(context: RootContext): string {
  if (context.globalStorageDir) return dirname(dirname(context.globalStorageDir));
  const { env, home } = context;
  return process.platform === 'win32'
    ? join(env['APPDATA'] ?? join(home, 'AppData/Roaming'), 'Code/User')
    : process.platform === 'darwin'
      ? join(home, 'Library/Application Support/Code/User')
      : join(env['XDG_CONFIG_HOME'] ?? join(home, '.config'), 'Code/User');
}

/** VS Code's global storage of another extension, for the CLI (the extension knows its own storage's parent). */
function vscodeGlobalStorage(context: RootContext, extensionId: string): string {
  if (context.globalStorageDir) return join(dirname(context.globalStorageDir), extensionId);
  return join(vscodeUserFolder(context), 'globalStorage', extensionId);
}

const noCompanions = (): Promise<string[]> => Promise.resolve([]);
const fromHome =
  (path: string) =>
  (c: RootContext): string =>
    expandHome(path, c.home);

export const AGENTS: readonly AgentDefinition[] = [
  {
    id: 'claude-code',
    label: 'Claude Code',
    settingKey: 'claudeCode',
    defaultRoot: '~/.claude/projects',
    // Claude Code keeps its data under $CLAUDE_CONFIG_DIR when set.
    defaultFolder: (c) =>
      c.env['CLAUDE_CONFIG_DIR']
        ? join(c.env['CLAUDE_CONFIG_DIR'], 'projects')
        : expandHome('~/.claude/projects', c.home),
    discover: (root, _notes, unlisted) => claudeSessions(root, unlisted),
    // Sub-agent logs: `<session>/subagents/agent-*.jsonl`, or 2.0.x siblings `agent-*.jsonl`.
    // Only what the safe listing accepts (regular files, links that stay inside the folder), as the inspector reads them.
    companions: async (path) => (await listCompanions(path)).files.map((f) => f.rel),
  },
  {
    id: 'codex',
    label: 'Codex',
    settingKey: 'codex',
    defaultRoot: '~/.codex/sessions',
    // The Codex CLI keeps its data under $CODEX_HOME when set.
    defaultFolder: (c) =>
      c.env['CODEX_HOME'] ? join(c.env['CODEX_HOME'], 'sessions') : expandHome('~/.codex/sessions', c.home),
    discover: (root, _notes, unlisted) => codexSessions(root, unlisted),
    companions: noCompanions,
  },
  {
    id: 'gemini-cli',
    label: 'Gemini CLI',
    settingKey: 'geminiCli',
    defaultRoot: '~/.gemini/tmp',
    defaultFolder: fromHome('~/.gemini/tmp'),
    discover: (root, _notes, unlisted) => geminiSessions(root, unlisted),
    companions: noCompanions,
  },
  {
    id: 'opencode',
    label: 'OpenCode',
    settingKey: 'openCode',
    defaultRoot: '~/.local/share/opencode',
    defaultFolder: (c) =>
      c.env['XDG_DATA_HOME'] ? join(c.env['XDG_DATA_HOME'], 'opencode') : expandHome('~/.local/share/opencode', c.home),
    discover: (root, notes, unlisted) => openCodeSessions(root, notes, unlisted),
    companions: noCompanions,
  },
  {
    id: 'openhands',
    label: 'OpenHands',
    settingKey: 'openHands',
    defaultRoot: '~/.openhands',
    defaultFolder: fromHome('~/.openhands'),
    discover: (root, _notes, unlisted) => openHandsSessions(root, unlisted),
    companions: noCompanions,
  },
  {
    id: 'cline',
    label: 'Cline',
    settingKey: 'cline',
    defaultRoot: '',
    defaultFolder: (c) => join(vscodeGlobalStorage(c, 'saoudrizwan.claude-dev'), 'tasks'),
    discover: (root, _notes, unlisted) => taskSessions(root, 'Cline', unlisted),
    companions: noCompanions,
  },
  {
    id: 'roo-code',
    label: 'Roo Code',
    settingKey: 'rooCode',
    defaultRoot: '',
    defaultFolder: (c) => join(vscodeGlobalStorage(c, 'rooveterinaryinc.roo-cline'), 'tasks'),
    discover: (root, _notes, unlisted) => taskSessions(root, 'Roo Code', unlisted),
    companions: noCompanions,
  },
  {
    id: 'aiperf',
    label: 'AIPerf',
    settingKey: 'aiperf',
    defaultRoot: 'artifacts',
    defaultFolder: () => 'artifacts',
    discover: (root, _notes, unlisted) => aiperfRuns([root], unlisted),
    companions: noCompanions,
  },
  {
    id: 'vscode-copilot',
    label: 'VS Code Copilot',
    settingKey: 'vscodeCopilot',
    defaultRoot: '',
    // The user folder of the VS Code this extension runs in (Insiders, VSCodium and code-server keep their own).
    defaultFolder: vscodeUserFolder,
    discover: (root, _notes, unlisted) => vscodeChatSessions(root, unlisted),
    companions: noCompanions,
  },
  {
    id: 'opentelemetry',
    label: 'OpenTelemetry',
    settingKey: 'openTelemetry',
    defaultRoot: '~/.copilot/otel',
    defaultFolder: fromHome('~/.copilot/otel'),
    discover: (root, _notes, unlisted) => otlpFiles(root, unlisted),
    companions: noCompanions,
  },
];

export function agentById(id: string): AgentDefinition | undefined {
  return AGENTS.find((a) => a.id === id);
}

function agentByLabel(label: LocalAgent): AgentDefinition {
  return AGENTS.find((a) => a.label === label)!;
}

/** An agent and one folder its sessions are looked for in. */
export interface AgentRoot {
  agent: AgentDefinition;
  root: string;
}

/**
 * Each agent's folder: the user's value when set and different from the default, else
 * the folder the agent itself uses. `configured` maps setting keys to their values
 * (missing or blank: the default). AIPerf's folder is relative to each workspace folder
 * unless absolute.
 */
export function resolveRoots(
  configured: Readonly<Record<string, string | undefined>>,
  context: Partial<RootContext> = {},
): SessionRoots {
  const c: RootContext = {
    env: context.env ?? process.env,
    home: context.home ?? homedir(),
    globalStorageDir: context.globalStorageDir,
    workspaceFolders: context.workspaceFolders ?? [process.cwd()],
  };
  const folder = (agent: AgentDefinition): string => {
    const value = configured[agent.settingKey]?.trim();
    return value && value !== agent.defaultRoot ? expandHome(value, c.home) : agent.defaultFolder(c);
  };
  const aiperf = folder(agentById('aiperf')!);
  const byKey = Object.fromEntries(
    AGENTS.filter((a) => a.id !== 'aiperf').map((a) => [a.settingKey, folder(a)]),
  ) as Omit<SessionRoots, 'aiperf'>;
  return {
    ...byKey,
    aiperf: aiperf === '' ? [] : isAbsolute(aiperf) ? [aiperf] : c.workspaceFolders.map((f) => resolve(f, aiperf)),
  };
}

/** The folders as one (agent, folder) pair each. */
export function agentRoots(roots: SessionRoots): AgentRoot[] {
  return AGENTS.flatMap((agent) => {
    const value = roots[agent.settingKey];
    return (Array.isArray(value) ? value : [value as string]).filter((r) => r !== '').map((root) => ({ agent, root }));
  });
}

/**
 * Every session under the folders, newest first, notes on sessions that exist but cannot be
 * listed, and the folders and files that could not be looked at (sorted, each once).
 */
export async function discoverSessions(
  roots: readonly AgentRoot[],
): Promise<{ sessions: FoundSession[]; notes: string[]; unlisted: string[] }> {
  const notes: string[] = [];
  const unlisted: Unlisted = [];
  const lists = await Promise.all(
    roots.map(async ({ agent, root }) =>
      (await agent.discover(root, notes, unlisted)).map(
        (s): FoundSession => ({ ...s, agentId: agentByLabel(s.agent).id, projectHint: s.project }),
      ),
    ),
  );
  const sessions = lists.flat().sort((a, b) => b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : 1));
  return { sessions, notes: [...new Set(notes)], unlisted: [...new Set(unlisted)].sort() };
}

/** The local agent sessions (Analyze Agent Session's picker): the newest `limit`, with the notes. */
export async function listLocalSessions(roots: SessionRoots, limit: number): Promise<Discovery> {
  const { sessions, notes } = await discoverSessions(agentRoots(roots));
  return { sessions: sessions.slice(0, limit), notes };
}

/** The label of an agent id, for pickers and tooltips. */
export function agentLabel(agentId: string): string {
  return agentById(agentId)?.label ?? agentId;
}
