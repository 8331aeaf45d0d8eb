// A fresh workspace folder for the VS Code tests: the bundled sample, a real Claude Code
// session with its sub-agent logs, the bad-input files, and a fake ~/.claude and ~/.codex
// (the workspace settings point agentTrace.sessionRoots there, so no test ever lists the
// sessions of the machine it runs on). Fresh per run, so editors restored from an earlier
// run cannot interfere.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Modification times of the fake local sessions: the picker lists them newest first. */
export const SESSION_TIMES = {
  codex: new Date('2026-03-21T10:20:00Z'),
  mClaude: new Date('2026-01-02T09:00:00Z'),
  rejections: new Date('2026-01-01T09:00:00Z'),
};

function copy(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.cpSync(from, to, { recursive: true });
}

/** The committed hostile corpus's file named like a Markdown command link (a name git cannot carry to Windows, so made here). */
export const COMMAND_LINK_FILE = '[Click to repair this trace](command:workbench.action.files.newUntitledFile).jsonl';

/**
 * The hostile corpus (test/fixtures/hostile), plus what cannot be committed: a file named
 * like a command link, a Claude Code session whose sub-agent "logs" are a folder, a FIFO
 * and a link to a file outside the workspace, a file just over the 2,048 MB limit (sparse:
 * it takes no disk), a secret file beside the workspace folder (what path traversal would
 * reach), and a session root whose one session is the payload log (for the session picker).
 */
function addHostileFiles(dir) {
  const hostile = path.join(dir, 'hostile');
  copy(path.join(repoRoot, 'test/fixtures/hostile'), hostile);
  fs.copyFileSync(path.join(hostile, 'unknown-keys.jsonl'), path.join(hostile, COMMAND_LINK_FILE));
  const companions = path.join(hostile, 'companions');
  const sub = path.join(companions, 'session/subagents');
  fs.mkdirSync(path.join(sub, 'agent-dir.jsonl'), { recursive: true });
  fs.copyFileSync(path.join(repoRoot, 'test/fixtures/claude-code/edit-retry-loop.jsonl'), path.join(companions, 'session.jsonl'));
  execFileSync('mkfifo', [path.join(sub, 'agent-fifo.jsonl')]);
  fs.writeFileSync(`${dir}-secret.txt`, 'SECRET BESIDE THE WORKSPACE\n');
  fs.symlinkSync(`${dir}-secret.txt`, path.join(sub, 'agent-outside.jsonl'));
  const huge = fs.openSync(path.join(hostile, 'over-the-limit.jsonl'), 'w');
  fs.ftruncateSync(huge, 2048 * 2 ** 20 + 2 ** 20);
  fs.closeSync(huge);
  const payloadLines = fs.readFileSync(path.join(hostile, 'payloads.jsonl'), 'utf8').split('\n').slice(0, 60).join('\n') + '\n';
  const project = path.join(dir, 'sessions-hostile/claude/projects/-home-[Open](command:workbench.action.files.newUntitledFile)-$(check)');
  fs.mkdirSync(project, { recursive: true });
  fs.writeFileSync(path.join(project, `${'\u202e'}lmth.jsonl`), payloadLines);
}

/** Removes what addHostileFiles put beside the workspace folder. */
export function removeWorkspace(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(`${dir}-secret.txt`, { force: true });
}

/** Makes the workspace in `dir` (a new temporary folder by default) and returns its path. */
export function createWorkspace(dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-trace-ws-'))) {
  fs.mkdirSync(dir, { recursive: true });
  copy(path.join(repoRoot, 'samples/claude-code-sessions.trace.jsonl'), path.join(dir, 'claude-code-sessions.trace.jsonl'));
  const claude = path.join(repoRoot, 'test/fixtures/claude-code');
  copy(path.join(claude, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl'), path.join(dir, 'claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl'));
  copy(path.join(claude, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04'), path.join(dir, 'claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04'));
  // The M-Claude log: four failing Edit/Write calls on one file (CodeLens, Problems).
  copy(path.join(claude, 'edit-retry-loop.jsonl'), path.join(dir, 'claude/edit-retry-loop.jsonl'));
  copy(path.join(repoRoot, 'test/fixtures/bad-input'), path.join(dir, 'bad-input'));
  // Other formats, opened through "Open With" and the explorer's context menu.
  copy(path.join(repoRoot, 'test/fixtures/swe-agent/pydicom__pydicom-1458.traj'), path.join(dir, 'formats/pydicom__pydicom-1458.traj'));
  copy(path.join(repoRoot, 'test/fixtures/mooncake/conversation_trace.head300.jsonl'), path.join(dir, 'formats/conversation_trace.head300.jsonl'));

  // Fake session roots. Claude Code names a project folder after the session's cwd.
  const projects = path.join(dir, 'sessions/claude/projects');
  const mClaude = path.join(projects, 'C--Windows-System32/e5821007-9ca0-4a36-afc0-94da583da0ea.jsonl');
  copy(path.join(claude, 'edit-retry-loop.jsonl'), mClaude);
  const rejections = path.join(projects, '-home-marco-projects-spotter/55604662-cf2a-4331-851a-ec234028f8ca.jsonl');
  copy(path.join(claude, 'user-rejections.jsonl'), rejections);
  // An old-style sub-agent log beside the sessions: not a session of its own, never listed.
  copy(path.join(claude, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl'), path.join(projects, '-home-marco-projects-spotter/agent-aac57f5.jsonl'));
  const codex = path.join(dir, 'sessions/codex/2026/03/21/rollout-2026-03-21T10-05-38-01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73.jsonl');
  copy(path.join(repoRoot, 'test/fixtures/codex/tracelab-agents-md-0.114.jsonl'), codex);
  fs.utimesSync(codex, SESSION_TIMES.codex, SESSION_TIMES.codex);
  fs.utimesSync(mClaude, SESSION_TIMES.mClaude, SESSION_TIMES.mClaude);
  fs.utimesSync(rejections, SESSION_TIMES.rejections, SESSION_TIMES.rejections);
  addHostileFiles(dir);
  fs.mkdirSync(path.join(dir, '.vscode'), { recursive: true });
  fs.writeFileSync(
    path.join(dir, '.vscode/settings.json'),
    JSON.stringify({ 'agentTrace.sessionRoots.claudeCode': projects, 'agentTrace.sessionRoots.codex': path.join(dir, 'sessions/codex') }, null, 1),
  );
  return dir;
}
