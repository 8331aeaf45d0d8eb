import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findRetryLoops, laterCallsReading } from '../../../../src/core/analysis/retryLoops';
import { loopSentence } from '../../../../src/core/analysis/sessionAnalysis';
import { normalizeCommand } from '../../../../src/core/analysis/toolTaxonomy';
import { EDIT_LOOP, needsShared, parseFile, sharedTrace, SPOTTER } from '../../../support/helpers';
import { failed, ok, SessionBuilder } from '../../../support/sessionBuilder';

// Hand-built sessions: every expected figure is worked out in the comments.
// Error texts are 400 characters = 100 tokens at 4 characters per token.

describe('retry loops on hand-built sessions', () => {
  it('a loop that escapes: three failed Edits on a.ts, a Read in between, then a successful Edit', () => {
    const s = new SessionBuilder()
      .call({ output: 10 }, [failed('Edit', { targetFile: 'a.ts' })]) // c0
      .call({ output: 20 }, [failed('Edit', { targetFile: 'a.ts' })]) // c1
      .call({ output: 30 }, [ok('Read', { targetFile: 'a.ts' })]) // c2: a Read does not end an edit loop
      .call({ output: 40 }, [failed('Edit', { targetFile: 'a.ts' })]) // c3
      .call({ output: 50 }, [ok('Edit', { targetFile: 'a.ts' })]) // c4: escape
      .call({ output: 5 }) // c5
      .build();
    const r = findRetryLoops(s);
    assert.equal(r.loops.length, 1);
    const l = r.loops[0]!;
    assert.deepEqual(
      [l.tool, l.target, l.attempts.length, l.firstCall, l.lastCall, l.callsSpanned, l.escaped, l.escapeCall],
      ['Edit', 'a.ts', 3, 0, 3, 4, true, 4],
    );
    // Outputs 10 + 20 + 40 plus 3 × 100 error tokens.
    assert.equal(l.wastedTokens, 370);
    // Each error is re-read by the later calls: c0 by 5, c1 by 4, c3 by 2 → (5 + 4 + 2) × 100.
    assert.equal(l.carryForwardTokens, 1100);
    assert.deepEqual(
      r.failing.map((f) => [f.callIndex, f.failureOrdinal, f.loopIndex, f.laterCalls, f.carryForwardTokens]),
      [
        [0, 1, 0, 5, 500],
        [1, 2, 0, 4, 400],
        [3, 3, 0, 2, 200],
      ],
    );
    // 3 of 6 calls made attempts.
    assert.equal(r.callsInLoops, 3);
    assert.equal(loopSentence(r, 6), "50% of this session's calls were spent in 1 retry loop");
  });

  it('a loop that never escapes: the same command with different flags counts as one target', () => {
    const s = new SessionBuilder()
      .call({ output: 1 }, [failed('Bash', { command: 'npm test' })])
      .call({ output: 1 }, [failed('Bash', { command: 'npm test --silent' })])
      .call({ output: 1 }, [failed('Bash', { command: 'CI=1 npm test -- --watch=false' })])
      .call({ output: 1 }, [ok('Bash', { command: 'ls' })]) // another command's success does not end it
      .build();
    const r = findRetryLoops(s);
    assert.deepEqual(
      r.loops.map((l) => [l.tool, l.target, l.attempts.length, l.escaped, l.escapeCall]),
      [['Bash', 'npm test', 3, false, null]],
    );
  });

  it('a success on the target breaks the run: 2 + 2 failures are no loop at 3 attempts', () => {
    const s = new SessionBuilder()
      .call({}, [failed('Edit', { targetFile: 'a.ts' })])
      .call({}, [failed('Edit', { targetFile: 'a.ts' })])
      .call({}, [ok('Write', { targetFile: 'a.ts' })]) // Write is the same kind (file edit) on the same file
      .call({}, [failed('Edit', { targetFile: 'a.ts' })])
      .call({}, [failed('Edit', { targetFile: 'a.ts' })])
      .build();
    const r = findRetryLoops(s);
    assert.deepEqual(r.loops, []);
    assert.deepEqual(
      r.failing.map((f) => f.failureOrdinal),
      [1, 2, 1, 2],
    );
  });

  it('different files are different targets; the minimum is a setting', () => {
    const s = new SessionBuilder()
      .call({}, [failed('Edit', { targetFile: 'a.ts' })])
      .call({}, [failed('Edit', { targetFile: 'b.ts' })])
      .call({}, [failed('Edit', { targetFile: 'a.ts' })])
      .build();
    assert.deepEqual(findRetryLoops(s).loops, []);
    const two = findRetryLoops(s, 2);
    assert.deepEqual(
      two.loops.map((l) => [l.target, l.attempts.length, l.callsSpanned]),
      [['a.ts', 2, 3]],
    );
  });

  it('near-duplicate commit attempts (other message, --no-verify) are one loop; other test files are not', () => {
    assert.equal(normalizeCommand('git add -A && git commit -m "feat: a"'), 'git add && git commit');
    assert.equal(normalizeCommand("git add -A && git commit --no-verify -m 'feat: b'"), 'git add && git commit');
    assert.equal(normalizeCommand('cd /repo && GIT_EDITOR=true git commit -am "c"'), 'git commit');
    assert.notEqual(normalizeCommand('pytest tests/a.py'), normalizeCommand('pytest tests/b.py'));
    const s = new SessionBuilder()
      .call({}, [failed('Bash', { command: 'git add -A && git commit -m "feat: a"' })])
      .call({}, [failed('Bash', { command: "git add -A && git commit --no-verify -m 'feat: b'" })])
      .call({}, [failed('Bash', { command: 'git add -A && git commit -m "feat: c" --quiet' })])
      .build();
    assert.deepEqual(
      findRetryLoops(s).loops.map((l) => [l.target, l.attempts.length]),
      [['git add && git commit', 3]],
    );
  });

  it('user rejections and sibling errors are listed as failures but never count as attempts', () => {
    const s = new SessionBuilder()
      .call({}, [
        failed('Edit', { targetFile: 'a.ts', errorText: "The user doesn't want to proceed with this tool use." }),
      ])
      .call({}, [failed('Edit', { targetFile: 'a.ts', errorText: 'Sibling tool call errored' })])
      .call({}, [failed('Edit', { targetFile: 'a.ts' })])
      .call({}, [failed('Edit', { targetFile: 'a.ts' })])
      .build();
    const r = findRetryLoops(s);
    assert.deepEqual(r.loops, []);
    assert.deepEqual(
      r.failing.map((f) => [f.collateral, f.failureOrdinal]),
      [
        [true, 0],
        [true, 0],
        [false, 1],
        [false, 2],
      ],
    );
  });

  it('a compaction ends how long an error is carried forward', () => {
    // c0 fails; a compaction comes before c2, so only c1 re-reads the error: 1 × 100.
    const s = new SessionBuilder()
      .call({}, [failed('Edit', { targetFile: 'a.ts' })])
      .call({})
      .compaction()
      .call({})
      .call({})
      .build();
    assert.deepEqual(
      findRetryLoops(s).failing.map((f) => [f.laterCalls, f.carryForwardTokens]),
      [[1, 100]],
    );
  });

  it('reads up to the first compaction after the call, whatever order compactions are listed in', () => {
    // Calls 0..9; compactions before calls 3 and 7, listed out of order (a merged trace may).
    const b = new SessionBuilder();
    for (let i = 0; i < 10; i++) b.call({});
    const s = b.build();
    s.compactions.push(
      { beforeCall: 7, trigger: 'auto', preTokens: null, timeMs: null, source: s.calls[0]!.source },
      { beforeCall: 3, trigger: 'auto', preTokens: null, timeMs: null, source: s.calls[0]!.source },
    );
    // Counted by hand: call 0 → calls 1, 2 (3 is after the first compaction); call 2 → none;
    // call 3 → 4, 5, 6; call 6 → none; call 7 → 8, 9; call 9 → none.
    assert.deepEqual(
      [0, 2, 3, 6, 7, 9].map((i) => laterCallsReading(s, i)),
      [2, 0, 3, 0, 2, 0],
    );
    // A compaction added later (a followed file grew) is seen.
    s.compactions.push({ beforeCall: 9, trigger: 'auto', preTokens: null, timeMs: null, source: s.calls[0]!.source });
    assert.equal(laterCallsReading(s, 7), 1);
  });

  it('unknown outcomes (no result yet) neither fail nor succeed', () => {
    const s = new SessionBuilder()
      .call({}, [failed('Bash', { command: 'make' })])
      .call({}, [{ name: 'Bash', command: 'make', isError: null }])
      .call({}, [failed('Bash', { command: 'make' })])
      .call({}, [failed('Bash', { command: 'make' })])
      .build();
    assert.deepEqual(
      findRetryLoops(s).loops.map((l) => l.attempts.length),
      [3],
    );
  });
});

describe('retry loops on the real Claude Code fixtures', async () => {
  // Expected figures: test/reference/claude_retry_loops.py reads the error sizes and outputs
  // straight from the files; lines are the tool_result lines found by grep.
  const spotter = (await parseFile(SPOTTER)).model.sessions[0]!;
  const mClaude = (await parseFile(EDIT_LOOP)).model.sessions[0]!;

  it('spotter: the failing pre-commit runs are one loop of 7 that gave up; the two Edit misses are not loops', () => {
    const r = findRetryLoops(spotter);
    assert.equal(r.loops.length, 1);
    const l = r.loops[0]!;
    assert.equal(l.tool, 'Bash');
    assert.equal(l.target, 'git add && git commit');
    assert.deepEqual(
      l.attempts.map((a) => a.source.line + 1),
      [1209, 1343, 1366, 1389, 1419, 1447, 1463],
    );
    assert.deepEqual([l.firstCall, l.lastCall, l.callsSpanned, l.escaped], [104, 135, 32, false]);
    assert.equal(l.wastedTokens, 7550);
    assert.equal(l.carryForwardTokens, 62358);
    const edits = r.failing.filter((f) => f.toolName === 'Edit');
    assert.deepEqual(
      edits.map((f) => [f.source.line + 1, f.failureOrdinal, f.loopIndex]),
      [
        [259, 1, null],
        [1300, 1, null],
      ],
    );
    // 11 failed tool calls in all (docs/design/formats.md §1).
    assert.equal(r.failing.length, 11);
  });

  it('M-Claude: four failing Edit/Write calls on one file are one loop that gave up', () => {
    const r = findRetryLoops(mClaude);
    const edit = r.loops.find((l) => l.family === 'file-edit');
    assert.ok(edit);
    assert.equal(edit.tool, 'Edit/Write');
    assert.equal(edit.target, 'C:/Users/[USER]/Documents/M-Claude/scripts/sync_raw_logs.py');
    assert.deepEqual(
      edit.attempts.map((a) => a.source.line + 1),
      [61, 65, 70, 74],
    );
    assert.deepEqual(
      [edit.callsSpanned, edit.escaped, edit.wastedTokens, edit.carryForwardTokens],
      [7, false, 6762, 2058],
    );
    assert.match(edit.firstError!, /^File has been unexpectedly modified/);
    assert.deepEqual(
      r.failing.filter((f) => f.loopIndex !== null).map((f) => f.failureOrdinal),
      [1, 2, 3, 4],
    );
  });
});

describe('retry loop order', () => {
  it('loops are listed by first attempt, not by when they close', () => {
    // Loop A (a.ts) starts at c0 and gives up at the end; loop B (b.ts) starts at c1 and escapes at c4.
    const s = new SessionBuilder()
      .call({}, [failed('Edit', { targetFile: 'a.ts' })])
      .call({}, [failed('Edit', { targetFile: 'b.ts' }), failed('Edit', { targetFile: 'a.ts' })])
      .call({}, [failed('Edit', { targetFile: 'b.ts' }), failed('Edit', { targetFile: 'a.ts' })])
      .call({}, [failed('Edit', { targetFile: 'b.ts' })])
      .call({}, [ok('Edit', { targetFile: 'b.ts' })])
      .build();
    const r = findRetryLoops(s);
    assert.deepEqual(
      r.loops.map((l) => [l.target, l.firstCall, l.escaped]),
      [
        ['a.ts', 0, false],
        ['b.ts', 1, true],
      ],
    );
    assert.deepEqual(
      r.failing.map((f) => [f.target, f.loopIndex]),
      [
        ['a.ts', 0],
        ['b.ts', 1],
        ['a.ts', 0],
        ['b.ts', 1],
        ['a.ts', 0],
        ['b.ts', 1],
      ],
    );
  });
});

describe('retry loops on the real Codex rollout (shared sample)', () => {
  const path = sharedTrace('codex/rtchess-exported-session.jsonl');
  it('lists its 8 failed apply_patch calls; each is followed by a successful patch of the same file, so none is a loop', {
    skip: needsShared(path),
  }, async () => {
    const session = (await parseFile(path!)).model.sessions[0]!;
    const r = findRetryLoops(session);
    // grep -n "apply_patch verification failed": result lines 238 677 847 862 1439 1512 1859 1992.
    const patches = r.failing.filter((f) => f.toolName === 'apply_patch');
    assert.deepEqual(
      patches.map((f) => f.source.line + 1),
      [238, 677, 847, 862, 1439, 1512, 1859, 1992],
    );
    assert.ok(patches.every((f) => f.loopIndex === null && f.failureOrdinal <= 2));
    assert.equal(r.loops.filter((l) => l.family === 'file-edit').length, 0);
  });
});

describe('command targets: shell wrappers and script runners (commands as the M-Claude Windows session and Codex write them)', () => {
  it('a wrapper is replaced by the script it runs: powershell -Command, pwsh -c, cmd /c, bash -lc, sh -c', () => {
    assert.equal(normalizeCommand('powershell.exe -Command "whoami /priv"'), 'whoami /priv');
    assert.equal(normalizeCommand('powershell.exe -Command "net localgroup administrators"'), 'net localgroup');
    assert.equal(normalizeCommand('cmd.exe /c "whoami /groups"'), 'whoami /groups');
    assert.equal(normalizeCommand('pwsh -NoProfile -c "Get-ChildItem -Path C:\\\\x"'), 'Get-ChildItem C:\\\\x');
    assert.equal(normalizeCommand('bash -lc "cd /repo && npm run build"'), 'npm run build');
    assert.equal(normalizeCommand("sh -c 'git pull origin main 2>&1'"), 'git pull');
    // Codex writes the command as an argv array, joined without quotes.
    assert.equal(normalizeCommand('/bin/zsh -lc gh pr create --title x'), 'gh pr');
    assert.equal(
      normalizeCommand(
        'C:\\\\Windows\\\\System32\\\\WindowsPowerShell\\\\v1.0\\\\powershell.exe -NoProfile -ExecutionPolicy Bypass -Command "git pull"',
      ),
      'git pull',
    );
  });

  it('two different commands through one wrapper are two targets, so they never make a loop together', () => {
    assert.notEqual(
      normalizeCommand('powershell.exe -Command "whoami /priv"'),
      normalizeCommand('powershell.exe -Command "whoami /groups"'),
    );
  });

  it('a script runner keeps the script name: npm run build and npm run test differ, npm test stays itself', () => {
    assert.equal(normalizeCommand('npm run build'), 'npm run build');
    assert.equal(normalizeCommand('npm run test -- --watch=false'), 'npm run test');
    assert.equal(normalizeCommand('npm test'), 'npm test');
    assert.equal(normalizeCommand('uv run pytest tests/a.py'), 'uv run pytest');
    assert.notEqual(normalizeCommand('pnpm run lint'), normalizeCommand('pnpm run typecheck'));
  });
});
