import { execFile } from 'node:child_process';
import type { GitCommit } from '../core/cost/costGroups';

/**
 * The user's own git, asked for local history only (`rev-parse`, `log`, `name-rev`: no
 * fetch, no network), for joining sessions to the commits they led to.
 */

/**
 * Settings a repository's own config could use to make a read-only question run a program.
 * The folder comes from a log, so its repository may be hostile: `log.showSignature` with
 * `gpg.program` runs that program on every signed commit `log` lists, and `core.fsmonitor`
 * runs its hook whenever the index is read. Command-line settings win over the repository's.
 */
const DISARMED_SETTINGS = ['-c', 'log.showSignature=false', '-c', 'core.fsmonitor=false', '-c', 'core.quotepath=off'];

/**
 * Whether a folder named by a log may be handed to git: an absolute local path only. A UNC
 * path (`\\host\share`, `//host/share`) would make git, and Windows with it, contact that
 * host and offer the user's credentials; a relative one would be read against our own cwd.
 */
export function isLocalAbsoluteDir(dir: string): boolean {
  if (dir === '' || /[\0\r\n]/.test(dir)) return false;
  if (/^[\\/]{2}/.test(dir)) return false;
  return dir.startsWith('/') || /^[A-Za-z]:[\\/]/.test(dir);
}

function git(cwd: string, args: readonly string[]): Promise<string | null> {
  if (!isLocalAbsoluteDir(cwd)) return Promise.resolve(null);
  return new Promise((resolve) => {
    // No pager, no prompts, no optional locks: read-only questions to a repository that may be in use.
    execFile(
      'git',
      ['-C', cwd, '--no-pager', ...DISARMED_SETTINGS, ...args],
      { maxBuffer: 64 * 2 ** 20, env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' } },
      (error, stdout) => resolve(error ? null : stdout),
    );
  });
}

/** The repository holding `dir`, or null when there is none (or no git). */
export async function repositoryOf(dir: string): Promise<string | null> {
  const out = await git(dir, ['rev-parse', '--show-toplevel']);
  return out === null ? null : out.trim() || null;
}

/** Commits of every branch made (committer time) from `sinceMs` to `untilMs`, with the files each touched and its nearest branch. */
export async function commitsBetween(repo: string, sinceMs: number, untilMs: number): Promise<GitCommit[]> {
  const out = await git(repo, [
    'log',
    '--no-ext-diff',
    '--no-textconv',
    '--all',
    '--no-merges',
    `--since=@${Math.floor(sinceMs / 1000)}`,
    `--until=@${Math.ceil(untilMs / 1000)}`,
    '--format=%x1e%H%x09%ct%x09%s',
    '--name-only',
  ]);
  if (out === null) return [];
  const commits: GitCommit[] = [];
  for (const record of out.split('\x1e')) {
    const lines = record.split('\n').filter((l) => l !== '');
    const head = lines.shift();
    if (!head) continue;
    const [sha, ct, ...subject] = head.split('\t');
    if (!sha || !ct) continue;
    commits.push({ sha, timeMs: Number(ct) * 1000, subject: subject.join('\t'), files: lines, branch: null });
  }
  if (commits.length > 0) {
    // name-rev names each commit from the nearest branch tip: "feature~2" is on feature.
    const names = await git(repo, ['name-rev', '--name-only', '--refs=refs/heads/*', ...commits.map((c) => c.sha)]);
    const list = names === null ? [] : names.trim().split('\n');
    commits.forEach((c, i) => {
      const name = list[i]?.trim();
      c.branch = name && name !== 'undefined' ? name.replace(/[~^].*$/, '') : null;
    });
  }
  return commits;
}
