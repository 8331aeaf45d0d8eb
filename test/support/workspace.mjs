// A fresh workspace folder for the VS Code tests: the bundled sample, a real Claude Code
// session with its sub-agent logs, the bad-input files, and a fake home with ~/.claude and ~/.codex
// (the workspace settings point agentTrace.sessionRoots there, so no test ever lists the
// sessions of the machine it runs on). Fresh per run, so editors restored from an earlier
// run cannot interfere.
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

  // A fake home with real sessions of Claude Code (one with sub-agents) and Codex where the
  // agents keep them (test/support/fakeHome.mjs); the settings point the session roots there.
  const home = createFakeHome(path.join(dir, 'home'));
  const roots = fakeHomeRoots(home);
  fs.mkdirSync(path.join(dir, '.vscode'), { recursive: true });
  fs.writeFileSync(
    path.join(dir, '.vscode/settings.json'),
    JSON.stringify({ 'agentTrace.sessionRoots.claudeCode': roots.claudeCode, 'agentTrace.sessionRoots.codex': roots.codex }, null, 1),
  );
  return dir;
}
