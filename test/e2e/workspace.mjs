// A fresh workspace folder for the VS Code tests: the bundled sample, a real Claude Code
// session with its sub-agent logs, and the bad-input files. Fresh per run, so editors
// restored from an earlier run cannot interfere.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function createWorkspace() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-trace-ws-'));
  fs.cpSync(path.join(repoRoot, 'samples/claude-code-sessions.trace.jsonl'), path.join(dir, 'claude-code-sessions.trace.jsonl'));
  const claude = path.join(repoRoot, 'test/fixtures/claude-code');
  fs.mkdirSync(path.join(dir, 'claude'));
  fs.cpSync(path.join(claude, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl'), path.join(dir, 'claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl'));
  fs.cpSync(path.join(claude, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04'), path.join(dir, 'claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04'), { recursive: true });
  fs.cpSync(path.join(repoRoot, 'test/fixtures/bad-input'), path.join(dir, 'bad-input'), { recursive: true });
  // Other formats, opened through "Open With" and the explorer's context menu.
  fs.mkdirSync(path.join(dir, 'formats'));
  fs.cpSync(path.join(repoRoot, 'test/fixtures/swe-agent/pydicom__pydicom-1458.traj'), path.join(dir, 'formats/pydicom__pydicom-1458.traj'));
  fs.cpSync(path.join(repoRoot, 'test/fixtures/mooncake/conversation_trace.head300.jsonl'), path.join(dir, 'formats/conversation_trace.head300.jsonl'));
  return dir;
}
