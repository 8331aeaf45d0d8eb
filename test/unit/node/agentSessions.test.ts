import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { summarizeSession } from '../../../src/core/analysis/sessionSummary';
import { parseTrace } from '../../../src/core/trace/parseTrace';
import { assembleSession } from '../../../src/node/agentSessions';
import { listLocalSessions } from '../../../src/node/sessions/agentRegistry';
import type { SessionRoots } from '../../../src/node/agentSessions';
import { fixtures, LOCAL_ONLY, localSample, parseFile } from '../../support/helpers';

// A fake home laid out the way each agent keeps its sessions, filled with the real samples
// of test/fixtures (and, for OpenCode, a local-only export split into OpenCode's storage).
const home = mkdtempSync(join(tmpdir(), 'agent-sessions-'));
after(() => rmSync(home, { recursive: true, force: true }));

function place(from: string, to: string, when: string): string {
  mkdirSync(join(to, '..'), { recursive: true });
  copyFileSync(from, to);
  const t = new Date(when);
  utimesSync(to, t, t);
  return to;
}

const roots: SessionRoots = {
  claudeCode: join(home, '.claude/projects'),
  codex: join(home, '.codex/sessions'),
  geminiCli: join(home, '.gemini/tmp'),
  openCode: join(home, '.local/share/opencode'),
  openHands: join(home, '.openhands'),
  cline: join(home, 'Code/User/globalStorage/saoudrizwan.claude-dev/tasks'),
  rooCode: join(home, 'Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks'),
  aiperf: [join(home, 'bench/artifacts')],
  vscodeCopilot: join(home, '.config/Code/User'),
  openTelemetry: join(home, '.copilot/otel'),
};

const claude = place(
  join(fixtures, 'claude-code/m-claude/abc757d1-3da3-42fb-bb7b-ffa293a4ba29.jsonl'),
  join(roots.claudeCode, 'C--Users-Mischa/abc757d1-3da3-42fb-bb7b-ffa293a4ba29.jsonl'),
  '2026-01-10T04:00:00Z',
);
// A 2.0.x sibling sub-agent log: read with its session, never listed as one.
place(
  join(fixtures, 'claude-code/m-claude/agent-abc3cb6.jsonl'),
  join(roots.claudeCode, 'C--Users-Mischa/agent-abc3cb6.jsonl'),
  '2026-01-10T04:01:00Z',
);
const gemini = place(
  join(fixtures, 'gemini-cli/harbor-rfc-gemini-cli-trajectory.json'),
  join(roots.geminiCli, 'f53b52ad/chats/session-2025-10-10T06-59-cdd63974.json'),
  '2025-10-10T07:00:00Z',
);
const aiperf = place(
  join(fixtures, 'aiperf/non_uniform_requests.profile_export.jsonl'),
  join(home, 'bench/artifacts/llama-run/profile_export.jsonl'),
  '2025-11-08T12:00:00Z',
);
// OpenHands keeps one event per file: the saved trajectory's 18 events, one file each.
const events = JSON.parse(readFileSync(join(fixtures, 'openhands/basic_gui_mode.json'), 'utf8')) as Array<{
  id: number;
}>;
const eventDir = join(roots.openHands, 'sessions/2f1c9e/events');
mkdirSync(eventDir, { recursive: true });
for (const e of events) writeFileSync(join(eventDir, `${e.id}.json`), JSON.stringify(e));
utimesSync(
  join(eventDir, `${events.at(-1)!.id}.json`),
  new Date('2025-06-01T00:00:00Z'),
  new Date('2025-06-01T00:00:00Z'),
);
// VS Code's chat store: a workspace's session (named by its workspace.json, a URI with an escaped space) and a window without a folder.
const chat = place(
  join(fixtures, 'vscode-copilot/tfplan2md-043-task-planner.chat.json'),
  join(roots.vscodeCopilot, 'workspaceStorage/9f2c41d7e0b3a5c6/chatSessions/badbd1d2-1f0b-4626-a215-56ee404562fe.json'),
  '2026-01-19T23:00:00Z',
);
writeFileSync(
  join(roots.vscodeCopilot, 'workspaceStorage/9f2c41d7e0b3a5c6/workspace.json'),
  JSON.stringify({ folder: 'file:///home/oocx/src/tf%20plan2md' }),
);
const emptyWindow = place(
  join(fixtures, 'vscode-copilot/copilot-usage.chatSessions.jsonl'),
  join(roots.vscodeCopilot, 'globalStorage/emptyWindowChatSessions/3c9d2e41-7a0b-4c55-9e12-6f8a0b1c2d3e.jsonl'),
  '2025-12-01T00:00:00Z',
);
// A workspace storage without chat sessions lists nothing.
mkdirSync(join(roots.vscodeCopilot, 'workspaceStorage/0000/chatSessions'), { recursive: true });
const otlp = place(
  join(fixtures, 'otlp/claude-code-events.jsonl'),
  join(roots.openTelemetry, 'claude-code.jsonl'),
  '2025-11-30T00:00:00Z',
);
mkdirSync(roots.openCode, { recursive: true });
writeFileSync(join(roots.openCode, 'opencode.db'), '');

describe('local session discovery for every agent', () => {
  it('lists the sessions newest first, one row per session, sub-agent logs not as sessions of their own', async () => {
    const { sessions } = await listLocalSessions(roots, 50);
    assert.deepEqual(
      sessions.map((s) => [s.agent, s.path]),
      [
        ['VS Code Copilot', chat],
        ['Claude Code', claude],
        ['VS Code Copilot', emptyWindow],
        ['OpenTelemetry', otlp],
        ['AIPerf', aiperf],
        ['Gemini CLI', gemini],
        ['OpenHands', eventDir],
      ],
    );
  });

  it('a VS Code chat session is named by its workspace folder (workspace.json); a window without a folder has none', async () => {
    const { sessions } = await listLocalSessions(roots, 50);
    assert.deepEqual(
      sessions.filter((s) => s.agent === 'VS Code Copilot').map((s) => s.project),
      ['tf plan2md', null],
    );
  });

  it('says that OpenCode 1.2+ sessions (opencode.db) are not listed, and how to open one', async () => {
    const { notes } = await listLocalSessions(roots, 50);
    assert.equal(notes.length, 1);
    assert.match(notes[0]!, /opencode\.db .*opencode export/);
  });

  it('an OpenHands events folder opens as one trajectory with the figures of the saved one', async () => {
    const { sessions } = await listLocalSessions(roots, 50);
    const text = await assembleSession(sessions.find((s) => s.agent === 'OpenHands')!);
    const assembled = await parseTrace([{ key: 'openhands.json', bytes: new TextEncoder().encode(text!) }]);
    const saved = await parseFile(join(fixtures, 'openhands/basic_gui_mode.json'));
    assert.equal(assembled.model.format, 'openhands');
    assert.deepEqual(summarizeSession(assembled.model.sessions[0]!), summarizeSession(saved.model.sessions[0]!));
  });
});

const EXPORT = localSample('opencode/w12z+Cap.json');

describe('OpenCode before 1.2: a session in storage/ opens as its export', {
  skip: EXPORT === null && LOCAL_ONLY,
}, () => {
  it("splitting a real export into OpenCode's storage layout and reading it back gives the export's figures", async () => {
    const exported = JSON.parse(readFileSync(EXPORT!, 'utf8')) as {
      info: { id: string; projectID: string };
      messages: Array<{ info: { id: string }; parts: Array<{ id: string }> }>;
    };
    const storage = join(home, 'oc/storage');
    const info = join(storage, 'session', exported.info.projectID, `${exported.info.id}.json`);
    mkdirSync(join(info, '..'), { recursive: true });
    writeFileSync(info, JSON.stringify(exported.info));
    for (const m of exported.messages) {
      mkdirSync(join(storage, 'message', exported.info.id), { recursive: true });
      writeFileSync(join(storage, 'message', exported.info.id, `${m.info.id}.json`), JSON.stringify(m.info));
      mkdirSync(join(storage, 'part', m.info.id), { recursive: true });
      for (const p of m.parts) writeFileSync(join(storage, 'part', m.info.id, `${p.id}.json`), JSON.stringify(p));
    }
    const { sessions } = await listLocalSessions({ ...roots, openCode: join(home, 'oc') }, 50);
    const oc = sessions.find((s) => s.agent === 'OpenCode')!;
    const parsed = await parseTrace([
      { key: 'opencode.json', bytes: new TextEncoder().encode((await assembleSession(oc))!) },
    ]);
    const direct = await parseFile(EXPORT!);
    assert.equal(parsed.model.format, 'opencode');
    assert.deepEqual(summarizeSession(parsed.model.sessions[0]!), summarizeSession(direct.model.sessions[0]!));
  });
});

describe('Gemini CLI sessions name their project, never "chats"', () => {
  // Gemini CLI keeps a project's chats in ~/.gemini/tmp/<folder>/chats/. Its folder is a short id with a
  // `.project_root` marker holding the project's path (packages/core/src/config/projectRegistry.ts), or, in
  // versions before that registry, the SHA-256 of the project's path (storage.ts getFilePathHash), which
  // ~/.gemini/projects.json maps back ({"projects": {"<path>": "<short id>"}}). Hashes by sha256sum:
  //   printf %s /srv/api | sha256sum       → 5afe96de…2001541
  //   printf %s /home/me/web | sha256sum   → 366eb473…ba39b0190
  const gemini = mkdtempSync(join(tmpdir(), 'gemini-home-'));
  after(() => rmSync(gemini, { recursive: true, force: true }));
  const tmp = join(gemini, '.gemini/tmp');
  const chat = join(fixtures, 'gemini-cli/harbor-rfc-gemini-cli-trajectory.json');
  const put = (folder: string): string =>
    place(chat, join(tmp, folder, 'chats/session-2025-10-10T06-59-cdd63974.json'), '2025-10-10T07:00:00Z');
  const slug = put('app');
  writeFileSync(join(tmp, 'app/.project_root'), '/app\n');
  const legacy = put('5afe96def09814c69f4ae7bd26fc666fc2fad00d4da9981fbc3aad4fc2001541');
  const unknown = put('366eb473e5b2900b97409860f721b6ae740d5eb5555146a5553b4f5ba39b0190');
  writeFileSync(
    join(gemini, '.gemini/projects.json'),
    JSON.stringify({ projects: { '/app': 'app', '/srv/api': 'api' } }),
  );

  it('the marker, then the registry (by the hash of each path), else the folder itself', async () => {
    const { sessions } = await listLocalSessions(
      {
        ...roots,
        claudeCode: '',
        codex: '',
        openCode: '',
        openHands: '',
        cline: '',
        rooCode: '',
        aiperf: [],
        geminiCli: tmp,
      },
      50,
    );
    const project = new Map(sessions.map((s) => [s.path, s.project]));
    assert.equal(project.get(slug), '/app');
    assert.equal(project.get(legacy), '/srv/api');
    assert.equal(project.get(unknown), join(tmp, '366eb473e5b2900b97409860f721b6ae740d5eb5555146a5553b4f5ba39b0190'));
  });
});
