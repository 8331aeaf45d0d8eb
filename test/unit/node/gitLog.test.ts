import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { commitsBetween, isLocalAbsoluteDir, repositoryOf } from '../../../src/node/gitLog';

/**
 * The commit join runs the user's git in a folder a log names. That folder's repository may be
 * hostile; these tests build one whose own config would run a program from `git log`, and check
 * that our questions run nothing and still get their answers.
 */

const hasGit = (() => {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const root = mkdtempSync(join(tmpdir(), 'agent-trace-gitlog-'));
after(() => rmSync(root, { recursive: true, force: true }));

function run(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'a',
      GIT_AUTHOR_EMAIL: 'a@example.com',
      GIT_COMMITTER_NAME: 'a',
      GIT_COMMITTER_EMAIL: 'a@example.com',
      GIT_AUTHOR_DATE: '@1700000000 +0000',
      GIT_COMMITTER_DATE: '@1700000000 +0000',
    },
  }).trim();
}

/** A script that leaves a file named after itself when run, so a test can see whether it ran. */
function tripwire(name: string): { path: string; fired: () => boolean } {
  const marker = join(root, `${name}.fired`);
  const path = join(root, name);
  writeFileSync(path, `#!/bin/sh\ntouch '${marker}'\n`);
  chmodSync(path, 0o755);
  return { path, fired: () => existsSync(marker) };
}

describe('the commit join asks a hostile repository nothing that runs a program', {
  skip: process.platform === 'win32' ? 'the tripwires are shell scripts' : hasGit ? false : 'git is not installed',
}, () => {
  it('a signed commit with log.showSignature and gpg.program set, and an fsmonitor hook: nothing runs, the commits are still listed', async () => {
    const repo = join(root, 'hostile');
    run(root, 'init', '-q', repo);
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    run(repo, 'add', 'a.txt');
    run(repo, 'commit', '-q', '-m', 'first');
    // A commit object carrying a signature header: `git log --show-signature` hands it to gpg.program.
    const tree = run(repo, 'rev-parse', 'HEAD^{tree}');
    const parent = run(repo, 'rev-parse', 'HEAD');
    const object = `tree ${tree}\nparent ${parent}\nauthor a <a@example.com> 1700000100 +0000\ncommitter a <a@example.com> 1700000100 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n AAAA\n -----END PGP SIGNATURE-----\n\nsigned\n`;
    writeFileSync(join(root, 'commit.txt'), object);
    const signed = run(repo, 'hash-object', '-t', 'commit', '-w', join(root, 'commit.txt'));
    run(repo, 'update-ref', 'HEAD', signed);

    const gpg = tripwire('gpg');
    const fsmonitor = tripwire('fsmonitor');
    run(repo, 'config', 'log.showSignature', 'true');
    run(repo, 'config', 'gpg.program', gpg.path);
    run(repo, 'config', 'core.fsmonitor', fsmonitor.path);
    // The repository is armed: a plain `git log` in it runs the program.
    run(repo, 'log', '--format=%H');
    assert.equal(gpg.fired(), true, 'the tripwire should fire for a plain git log, or this test proves nothing');
    rmSync(join(root, 'gpg.fired'));

    assert.equal(await repositoryOf(repo), repo);
    const commits = await commitsBetween(repo, 1_699_999_000_000, 1_700_001_000_000);
    assert.deepEqual(
      commits.map((c) => [c.sha, c.subject, c.timeMs]),
      [
        [signed, 'signed', 1_700_000_100_000],
        [parent, 'first', 1_700_000_000_000],
      ],
    );
    assert.equal(gpg.fired(), false, 'gpg.program ran');
    assert.equal(fsmonitor.fired(), false, 'core.fsmonitor ran');
  });

  it('a UNC or relative folder is never handed to git', async () => {
    // A `git` first on PATH that only leaves a mark: any call to git at all shows.
    const bin = join(root, 'bin');
    mkdirSync(bin);
    const fake = tripwire('bin/git');
    const savedPath = process.env.PATH;
    process.env.PATH = `${bin}:${savedPath}`;
    after(() => {
      process.env.PATH = savedPath;
    });
    assert.equal(await repositoryOf(root), null, 'the fake git answers nothing');
    assert.equal(fake.fired(), true, 'the fake git should be the one found, or this test proves nothing');
    rmSync(join(root, 'bin/git.fired'));
    for (const dir of [
      '\\\\attacker.example\\share',
      '//attacker.example/share',
      'relative/dir',
      '',
      'C:relative',
      '/tmp/a\nb',
    ]) {
      assert.equal(isLocalAbsoluteDir(dir), false, JSON.stringify(dir));
      assert.equal(await repositoryOf(dir), null, JSON.stringify(dir));
      assert.deepEqual(await commitsBetween(dir, 0, Date.now()), [], JSON.stringify(dir));
    }
    assert.equal(fake.fired(), false, 'git was run for a UNC or relative folder');
    process.env.PATH = savedPath;
    for (const dir of ['/home/me/project', 'C:\\Users\\me\\project', 'D:/work'])
      assert.equal(isLocalAbsoluteDir(dir), true, dir);
  });
});
