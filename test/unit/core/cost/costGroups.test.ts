import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { costBy, joinCommits, sameFile } from '../../../../src/core/cost/costGroups';
import type { GitCommit, ThreadSpan } from '../../../../src/core/cost/costGroups';
import type { LedgerCall } from '../../../../src/core/cost/callLedger';

const call = (model: string, usd: number | null, tokens = 10): LedgerCall => ({
  timeMs: 0,
  endMs: null,
  session: 's',
  thread: 's',
  agent: 'claude-code',
  model,
  tokens,
  usd,
  file: 'f',
});
const span = (thread: string, startMs: number, endMs: number, edited: string[], usd: number | null): ThreadSpan => ({
  thread,
  file: `${thread}.jsonl`,
  startMs,
  endMs,
  cwd: '/home/dev/repo',
  edited,
  usd,
  calls: 1,
  unpricedCalls: 0,
});
const commit = (sha: string, timeMs: number, files: string[]): GitCommit => ({
  sha,
  timeMs,
  subject: sha,
  files,
  branch: 'main',
});

describe('cost groups', () => {
  it('sums by key, counts unpriced calls apart, and gives shares of the priced dollars', () => {
    // a: $1 + $3 and one unpriced call; b: $4. Shares 4/8 and 4/8.
    const g = costBy([call('a', 1), call('a', 3), call('a', null), call('b', 4)], (c) => c.model!);
    assert.deepEqual(
      g.map((x) => [x.key, x.usd, x.calls, x.unpricedCalls, x.share, x.tokens]),
      [
        ['a', 4, 3, 1, 0.5, 30],
        ['b', 4, 1, 0, 0.5, 10],
      ],
    );
    assert.deepEqual(
      costBy([call('x', null)], () => 'x').map((x) => [x.usd, x.share]),
      [[null, null]],
    );
  });

  it('matches files under the session folder exactly, and paths from elsewhere by their end', () => {
    assert.equal(sameFile('/home/dev/repo/src/a.ts', '/home/dev/repo', 'src/a.ts'), true);
    assert.equal(sameFile('/home/dev/repo/src/a.ts', '/home/dev/repo', 'other/src/a.ts'), true); // the session ran in a sub-folder
    assert.equal(sameFile('/home/dev/repo/src/a.ts', '/home/dev/repo', 'a.ts'), false);
    assert.equal(sameFile('C:\\Users\\me\\proj\\src\\a.ts', null, 'src/a.ts'), true);
    assert.equal(sameFile('/elsewhere/xsrc/a.ts', null, 'src/a.ts'), false);
  });

  it('joins on time and edited files; two commits share a session, a commit two sessions add up', () => {
    // s1 runs 0–100 and edits a.ts ($6); s2 runs 50–150 and edits b.ts ($2). Grace 10.
    // c1 at 60 touches a.ts and b.ts: s1 and s2. c2 at 105 touches a.ts: s1 (within grace). c3 at 200: nobody.
    // s1's $6 shared by c1, c2: $3 each; s2's $2 all to c1. c1 = $5, c2 = $3.
    const threads = [
      span('s1', 0, 100, ['/home/dev/repo/a.ts'], 6),
      span('s2', 50, 150, ['/home/dev/repo/b.ts'], 2),
      span('s3', 0, 10, ['/home/dev/repo/z.ts'], 1),
    ];
    const { commits, unjoined } = joinCommits(
      threads,
      [commit('c1', 60, ['a.ts', 'b.ts']), commit('c2', 105, ['a.ts']), commit('c3', 200, ['a.ts'])],
      10,
    );
    assert.deepEqual(
      commits.map((c) => [c.sha, c.usd, c.sessions.map((s) => s.thread)]),
      [
        ['c1', 5, ['s1', 's2']],
        ['c2', 3, ['s1']],
      ],
    );
    assert.deepEqual(
      unjoined.map((t) => t.thread),
      ['s3'],
    );
  });
});
