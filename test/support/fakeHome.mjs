// A fake home folder holding real agent sessions where the agents keep them: Claude Code
// logs (with sub-agent logs) under .claude/projects/<project folder>/, a Codex rollout under
// .codex/sessions/YYYY/MM/DD/. The files are the committed real fixtures (test/fixtures,
// origins and licences in its README); only their place and modification times are made up.
// Used by the index tests (Node), the extension-host tests and the end-to-end test.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const claude = path.join(repoRoot, 'test/fixtures/claude-code');

/** The sessions of the fake home: where each lands, where it comes from, its modification time. */
export const FAKE_HOME_SESSIONS = {
  spotter: {
    rel: '.claude/projects/-home-USER-projects-spotter-worktrees-spotter-4te/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl',
    from: path.join(claude, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl'),
    companions: path.join(claude, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04'),
    mtime: new Date('2026-02-12T15:40:00Z'),
  },
  editLoop: {
    rel: '.claude/projects/C--Windows-System32/e5821007-9ca0-4a36-afc0-94da583da0ea.jsonl',
    from: path.join(claude, 'edit-retry-loop.jsonl'),
    mtime: new Date('2026-01-02T09:00:00Z'),
  },
  rejections: {
    rel: '.claude/projects/-home-marco-projects-spotter/55604662-cf2a-4331-851a-ec234028f8ca.jsonl',
    from: path.join(claude, 'user-rejections.jsonl'),
    mtime: new Date('2026-01-01T09:00:00Z'),
  },
  codex: {
    rel: '.codex/sessions/2026/03/21/rollout-2026-03-21T10-05-38-01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73.jsonl',
    from: path.join(repoRoot, 'test/fixtures/codex/tracelab-agents-md-0.114.jsonl'),
    mtime: new Date('2026-03-21T10:20:00Z'),
  },
};

/** Makes the fake home in `dir` (a new temporary folder by default) and returns its path. */
export function createFakeHome(dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-trace-home-'))) {
  for (const s of Object.values(FAKE_HOME_SESSIONS)) {
    const to = path.join(dir, s.rel);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(s.from, to);
    if (s.companions) fs.cpSync(s.companions, to.replace(/\.jsonl$/, ''), { recursive: true });
    fs.utimesSync(to, s.mtime, s.mtime);
  }
  // An old-style sub-agent log beside the sessions: read with its session, never a session of its own.
  const sibling = path.join(dir, '.claude/projects/-home-marco-projects-spotter/agent-aac57f5.jsonl');
  fs.copyFileSync(path.join(claude, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl'), sibling);
  return dir;
}

/**
 * The agents' folders in a fake home, as `agentTrace.sessionRoots` settings: every agent
 * the registry knows, so a test never lists the sessions of the machine it runs on.
 */
export function fakeHomeRoots(home) {
  return {
    claudeCode: path.join(home, '.claude/projects'),
    codex: path.join(home, '.codex/sessions'),
    geminiCli: path.join(home, '.gemini/tmp'),
    openCode: path.join(home, '.local/share/opencode'),
    openHands: path.join(home, '.openhands'),
    cline: path.join(home, 'globalStorage/saoudrizwan.claude-dev/tasks'),
    rooCode: path.join(home, 'globalStorage/rooveterinaryinc.roo-cline/tasks'),
    aiperf: path.join(home, 'artifacts'),
    // Empty unless addCopilotAndOtlp fills them: never the VS Code or home folder of the machine the tests run on.
    vscodeCopilot: path.join(home, '.config/Code/User'),
    openTelemetry: path.join(home, '.copilot/otel'),
  };
}

/**
 * Adds VS Code's own agent and an OpenTelemetry file where they are kept: a real Copilot Chat
 * session (exported from VS Code and committed by its author to oocx/tfplan2md) in a
 * workspace's chat store, `<User>/workspaceStorage/<hash>/chatSessions/<id>.json`, with the
 * `workspace.json` that names the folder; and VS Code's Agent Debug Logs export of a Copilot
 * Chat session (built from the extension's source: test/fixtures/otlp/build_agent_fixtures.py)
 * in the OpenTelemetry folder. Returns the two paths.
 */
export function addCopilotAndOtlp(home) {
  const fixtures = path.join(repoRoot, 'test/fixtures');
  const storage = path.join(home, '.config/Code/User/workspaceStorage/9f2c41d7e0b3a5c6f1e2d3c4b5a69788');
  const chat = path.join(storage, 'chatSessions/badbd1d2-1f0b-4626-a215-56ee404562fe.json');
  fs.mkdirSync(path.dirname(chat), { recursive: true });
  fs.copyFileSync(path.join(fixtures, 'vscode-copilot/tfplan2md-043-task-planner.chat.json'), chat);
  fs.writeFileSync(path.join(storage, 'workspace.json'), JSON.stringify({ folder: 'file:///home/oocx/src/tfplan2md' }));
  fs.utimesSync(chat, new Date('2026-01-19T23:10:00Z'), new Date('2026-01-19T23:10:00Z'));
  const otlp = path.join(home, '.copilot/otel/copilot-chat-debug-log.json');
  fs.mkdirSync(path.dirname(otlp), { recursive: true });
  fs.copyFileSync(path.join(fixtures, 'otlp/copilot-chat-debug-log.json'), otlp);
  fs.utimesSync(otlp, new Date('2026-12-01T00:02:00Z'), new Date('2026-12-01T00:02:00Z'));
  return { chat, otlp };
}

/**
 * Adds real sessions of the agents beyond Claude Code and Codex where those agents keep
 * them: a Gemini CLI chat, an OpenHands session as its file store writes it (one event per
 * file) and an AIPerf run (8 conversations). Separate from createFakeHome so the suites
 * whose expected lists are of Claude Code and Codex keep them.
 */
export function addOtherAgents(home) {
  const fixtures = path.join(repoRoot, 'test/fixtures');
  const place = (from, rel, when) => {
    const to = path.join(home, rel);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
    fs.utimesSync(to, new Date(when), new Date(when));
    return to;
  };
  // Under the folder Gemini CLI names by the SHA-256 of the project's path (the chat's own projectHash,
  // sha256("/app")), with the registry newer versions keep beside tmp/ mapping that path to its short name.
  const gemini = place(path.join(fixtures, 'gemini-cli/harbor-rfc-gemini-cli-trajectory.json'), '.gemini/tmp/f53b52ad6d21cceb72dfa78fb67614fe14f110c58e68412b01508d6a485501c3/chats/session-2025-10-10T06-59-cdd63974.json', '2025-10-10T07:00:00Z');
  fs.writeFileSync(path.join(home, '.gemini/projects.json'), JSON.stringify({ projects: { '/app': 'app' } }));
  const aiperf = place(path.join(fixtures, 'aiperf/non_uniform_requests.profile_export.jsonl'), 'artifacts/llama-run/profile_export.jsonl', '2025-11-08T12:00:00Z');
  const events = JSON.parse(fs.readFileSync(path.join(fixtures, 'openhands/basic_gui_mode.json'), 'utf8'));
  const eventDir = path.join(home, '.openhands/sessions/2f1c9e/events');
  fs.mkdirSync(eventDir, { recursive: true });
  for (const e of events) fs.writeFileSync(path.join(eventDir, `${e.id}.json`), JSON.stringify(e));
  return { gemini, aiperf, openHands: eventDir };
}
