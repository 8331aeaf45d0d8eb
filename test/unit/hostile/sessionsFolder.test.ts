import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AGENTS, agentRoots, resolveRoots } from '../../../src/node/sessions/agentRegistry';
import { SessionIndex } from '../../../src/node/sessions/sessionIndex';
import { SessionIndexer, unreadNote } from '../../../src/node/sessions/sessionIndexer';
import { createFakeHome, fakeHomeRoots } from '../../support/fakeHome.mjs';
import { ensureBuilt, repoRoot } from '../../support/helpers';

// Round two of the hostile probe, the agents' folders: an undetectable file indexed with the
// real sessions (it took `sessions` 234 s and kept the Agent Sessions view empty), names that
// hold a newline (a Codex rollout so named was skipped without a word), and folders and files
// that cannot be read (skipped silently too): each is said once, with the count.

const cli = join(repoRoot, 'dist/cli.js');
const temp: string[] = [];
after(() => {
  for (const d of temp) {
    try {
      chmodSync(join(d, 'home/.claude/projects/locked'), 0o755);
    } catch {
      // not every case locks a folder
    }
    rmSync(d, { recursive: true, force: true });
  }
});

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), 'agent-trace-folder-'));
  temp.push(d);
  return d;
}

/** `--root` for every agent: the fake home's folders, so nothing of this machine is listed. */
function rootArgs(home: string): string[] {
  const roots = fakeHomeRoots(home) as Record<string, string | string[]>;
  return AGENTS.flatMap((a) => {
    const v = roots[a.settingKey];
    const dir = Array.isArray(v) ? (v[0] ?? join(home, 'none')) : v!;
    return ['--root', `${a.id}=${dir}`];
  });
}

/** Runs the CLI, as an unprivileged user when this runs as root (root reads every file whatever its mode). */
function runAsUser(args: string[], home: string): { code: number | null; stdout: string; stderr: string } {
  const env = {
    ...process.env,
    HOME: home,
    CLAUDE_CONFIG_DIR: '',
    CODEX_HOME: '',
    XDG_CONFIG_HOME: join(home, '.config'),
  };
  const asRoot = process.getuid?.() === 0;
  const [cmd, argv] = asRoot
    ? ['setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, cli, ...args]]
    : [process.execPath, [cli, ...args]];
  const r = spawnSync(cmd, argv as string[], { encoding: 'utf8', env, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr + (r.error ? String(r.error) : '') };
}

const setprivMissing =
  process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status !== 0
    ? 'running as root without setpriv: permissions cannot be taken away'
    : false;

describe('sessions: a file no format claims among real sessions', () => {
  it('is read only as far as its sample (one 1 MiB read of 3 MB), listed as unreadable, and the real sessions are indexed', async () => {
    const home = createFakeHome(join(scratch(), 'home'));
    const junk = join(home, '.claude/projects/-tmp-junk/00000000-0000-4000-8000-00000000junk.jsonl');
    mkdirSync(join(junk, '..'), { recursive: true });
    // 3,000 records of 1 KB no format claims: the sample (50 records) is in the first read.
    writeFileSync(junk, `{"a":"${'x'.repeat(1000)}"}\n`.repeat(3000));
    const size = statSync(junk).size;
    const roots = agentRoots(resolveRoots(fakeHomeRoots(home), { env: {}, home, workspaceFolders: [home] }));
    const { index } = SessionIndex.open(':memory:');
    try {
      // One file at a time in this thread, the writes flushed after every file (the clock moves a second a call).
      let t = 0;
      const written: number[] = [];
      const result = await new SessionIndexer(index, { now: () => (t += 1000) }).sync(roots, {
        onWritten: () => written.push(index.rows().length),
      });
      assert.deepEqual(
        result.unread.map((u) => u.path),
        [junk],
      );
      assert.match(result.unread[0]!.problem, /none of the first 50 records matched a known format/);
      // The four real sessions and their sub-agents: the reader tests' six rows.
      assert.equal(index.rows().length, 6);
      // Of the 3 MB file, one 1 MiB read: the same home without it reads exactly that much less.
      assert.ok(size > 3_000_000);
      const without = createFakeHome(join(scratch(), 'home'));
      const { index: other } = SessionIndex.open(':memory:');
      const plain = await new SessionIndexer(other).sync(
        agentRoots(resolveRoots(fakeHomeRoots(without), { env: {}, home: without, workspaceFolders: [without] })),
      );
      other.close();
      assert.equal(result.bytesRead - plain.bytesRead, 2 ** 20);
      // Rows were written as files were read, not all at the end (the view shows a first index as it comes).
      assert.ok(written.length >= 2, `written ${written.join(',')}`);
      assert.ok(
        written.some((n) => n > 0 && n < 6),
        `rows after each batch: ${written.join(', ')}`,
      );
    } finally {
      index.close();
    }
  });
});

describe('sessions: names with a newline, folders and files that cannot be read', () => {
  before(() => ensureBuilt(cli));

  it('a Codex rollout and a Claude Code log whose names hold a newline are listed', () => {
    const home = createFakeHome(join(scratch(), 'home'));
    const codex = join(home, '.codex/sessions/2026/03/22/rollout-2026-03-22T10-00-00-new\nline.jsonl');
    mkdirSync(join(codex, '..'), { recursive: true });
    copyFileSync(join(repoRoot, 'test/fixtures/codex/tracelab-agents-md-0.114.jsonl'), codex);
    const claude = join(home, '.claude/projects/-tmp-newline/new\nline.jsonl');
    mkdirSync(join(claude, '..'), { recursive: true });
    writeFileSync(claude, '');
    copyFileSync(join(repoRoot, 'test/fixtures/claude-code/user-rejections.jsonl'), claude);
    const r = spawnSync(process.execPath, [cli, 'sessions', '--json', '--no-index', ...rootArgs(home)], {
      encoding: 'utf8',
      env: { ...process.env, HOME: home },
    });
    assert.equal(r.status, 0, r.stderr);
    const paths = (JSON.parse(r.stdout) as { sessions: Array<{ path: string }> }).sessions.map((s) => s.path);
    assert.ok(paths.includes(codex), 'the rollout named with a newline');
    assert.ok(paths.includes(claude), 'the Claude Code log named with a newline');
    assert.doesNotMatch(r.stderr, /not read/);
  });

  it('a folder it cannot list, a file it cannot read and a file of no known format: said once, with the count', {
    skip: setprivMissing,
  }, () => {
    const dir = scratch();
    chmodSync(dir, 0o755); // the unprivileged user must reach the fake home
    const home = createFakeHome(join(dir, 'home'));
    const projects = join(home, '.claude/projects');
    const locked = join(projects, 'locked');
    mkdirSync(locked);
    copyFileSync(join(repoRoot, 'test/fixtures/claude-code/edit-retry-loop.jsonl'), join(locked, 'hidden.jsonl'));
    chmodSync(locked, 0o000);
    const unreadable = join(projects, '-tmp-x/11111111-0000-4000-8000-000000000001.jsonl');
    mkdirSync(join(unreadable, '..'), { recursive: true });
    copyFileSync(join(repoRoot, 'test/fixtures/claude-code/edit-retry-loop.jsonl'), unreadable);
    chmodSync(unreadable, 0o000);
    const junk = join(projects, '-tmp-x/22222222-0000-4000-8000-000000000002.jsonl');
    writeFileSync(junk, '{"a":1}\n'.repeat(100));
    const r = runAsUser(['sessions', '--no-index', ...rootArgs(home)], home);
    assert.equal(r.code, 0, r.stderr);
    const notes = r.stderr.split('\n').filter((l) => /under the agents' folders/.test(l));
    assert.equal(notes.length, 1, r.stderr);
    assert.match(
      notes[0]!,
      /^agent-trace: 3 entries under the agents' folders were not read: 1 folder or file could not be looked at \(.*\/locked\); 2 session files could not be read \(/,
    );
    assert.ok(
      notes[0]!.includes(`${unreadable}: 11111111-0000-4000-8000-000000000001.jsonl could not be read: EACCES`),
      notes[0],
    );
    assert.ok(notes[0]!.includes(`${junk}: Not a trace format`), notes[0]);
    // The readable sessions are all listed.
    assert.match(r.stdout, /^4 sessions \(6 with sub-agents\), newest first/);
  });

  it('unreadNote: nothing left out says nothing', () => {
    assert.equal(unreadNote({ unlisted: [], unread: [] }), null);
    assert.equal(
      unreadNote({ unlisted: ['/a'], unread: [] }),
      "1 entry under the agents' folders was not read: 1 folder or file could not be looked at (/a).",
    );
  });
});
