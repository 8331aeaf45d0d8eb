// A fresh workspace folder for the VS Code tests: the bundled sample, a real Claude Code
// session with its sub-agent logs, the bad-input files, and a fake home with ~/.claude and ~/.codex
// (the workspace settings point agentTrace.sessionRoots there, so no test ever lists the
// sessions of the machine it runs on). Fresh per run, so editors restored from an earlier
// run cannot interfere.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFakeHome, fakeHomeRoots } from './fakeHome.mjs';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');


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
  // A Codex 0.144 log whose token_count events carry rate_limits (the Plan Windows view's server figures).
  copy(
    path.join(repoRoot, 'test/fixtures/codex/edgerunner-code-mode-0.144.1.head558.jsonl'),
    path.join(dir, 'codex/edgerunner-code-mode-0.144.1.head558.jsonl'),
  );
  copy(path.join(repoRoot, 'test/fixtures/bad-input'), path.join(dir, 'bad-input'));
  // Other formats, opened through "Open With" and the explorer's context menu.
  copy(path.join(repoRoot, 'test/fixtures/swe-agent/pydicom__pydicom-1458.traj'), path.join(dir, 'formats/pydicom__pydicom-1458.traj'));
  copy(path.join(repoRoot, 'test/fixtures/mooncake/conversation_trace.head300.jsonl'), path.join(dir, 'formats/conversation_trace.head300.jsonl'));

  // A fake home with real sessions of Claude Code (one with sub-agents) and Codex where the
  // agents keep them (test/support/fakeHome.mjs); the settings point the session roots there.
  const home = createFakeHome(path.join(dir, 'home'));
  const roots = fakeHomeRoots(home);
  addHostileFiles(dir);
  fs.mkdirSync(path.join(dir, '.vscode'), { recursive: true });
  fs.writeFileSync(
    path.join(dir, '.vscode/settings.json'),
    JSON.stringify(Object.fromEntries(Object.entries(roots).map(([agent, folder]) => [`agentTrace.sessionRoots.${agent}`, folder])), null, 1),
  );
  return dir;
}
