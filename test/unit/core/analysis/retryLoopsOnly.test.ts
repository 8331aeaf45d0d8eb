import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { findRetryLoops, findRetryLoopsOnly } from '../../../../src/core/analysis/retryLoops';
import { isCollateralFailure, toolTarget } from '../../../../src/core/analysis/toolTaxonomy';
import type { Session } from '../../../../src/core/trace/model';
import { fixtures, parseFile, repoRoot, traceFilesUnder } from '../../../support/helpers';
import { failed, ok, SessionBuilder } from '../../../support/sessionBuilder';

/**
 * The runs as the first version found them, target for target: every tool call with an
 * outcome gets its target worked out (no skipping of successes), a success closes the run
 * on its target, a failure that is not collateral extends it. Loops as [first call,
 * attempts' call indexes, target, escape call], in order of first attempt.
 */
function referenceLoops(session: Session, minAttempts = 3): Array<[number, number[], string, number | null]> {
  const open = new Map<string, { target: string; calls: number[] }>();
  const loops: Array<[number, number[], string, number | null]> = [];
  const close = (key: string, escape: number | null): void => {
    const run = open.get(key);
    if (!run) return;
    open.delete(key);
    if (run.calls.length >= minAttempts) loops.push([run.calls[0]!, run.calls, run.target, escape]);
  };
  for (const call of session.calls) {
    for (const tool of call.toolCalls) {
      if (tool.isError === null) continue;
      const target = toolTarget(tool);
      const key = `${target.family} ${target.key}`;
      if (!tool.isError) close(key, call.index);
      else if (!isCollateralFailure(tool)) {
        const run = open.get(key) ?? { target: target.key, calls: [] };
        run.calls.push(call.index);
        open.set(key, run);
      }
    }
  }
  for (const key of [...open.keys()]) close(key, null);
  return loops.sort((a, b) => a[0] - b[0]);
}

function loopsOf(session: Session, only: boolean): Array<[number, number[], string, number | null]> {
  const r = only ? findRetryLoopsOnly(session) : findRetryLoops(session);
  return r.loops.map((l) => [l.firstCall, l.attempts.map((a) => a.callIndex), l.target, l.escapeCall]);
}

describe('retry loops without the per-failure list (what the report uses)', () => {
  it('a successful command closes its own shell run, also while a file run is open, and only then; a file run closes with no shell run open', () => {
    const s = new SessionBuilder()
      .call({}, [failed('Edit', { targetFile: 'a.ts' })]) // c0: a file run opens
      .call({}, [ok('Bash', { command: 'npm test' })]) // c1: no shell run open: nothing to close
      .call({}, [failed('Bash', { command: 'npm test' })]) // c2: a shell run opens
      .call({}, [failed('Edit', { targetFile: 'a.ts' })]) // c3
      .call({}, [failed('Bash', { command: 'npm test -- --watch' })]) // c4: same target (flags set aside)
      .call({}, [failed('Edit', { targetFile: 'a.ts' })]) // c5: the file run has 3 attempts
      .call({}, [failed('Bash', { command: 'npm test' })]) // c6: the shell run has 3
      .call({}, [ok('Bash', { command: 'npm run build' })]) // c7: another command: the shell run stays open
      .call({}, [ok('Bash', { command: 'npm test' })]) // c8: escapes the shell run
      .call({}, [ok('Write', { targetFile: 'a.ts' })]) // c9: no shell run open now; escapes the file run
      .build();
    const expected: Array<[number, number[], string, number | null]> = [
      [0, [0, 3, 5], 'a.ts', 9],
      [2, [2, 4, 6], 'npm test', 8],
    ];
    assert.deepEqual(referenceLoops(s), expected);
    assert.deepEqual(loopsOf(s, false), expected);
    assert.deepEqual(loopsOf(s, true), expected);
    const only = findRetryLoopsOnly(s);
    assert.deepEqual(only.failing, []);
    assert.equal(only.callsInLoops, 6);
  });

  it('finds what the full analysis and the reference find on every session of every fixture and sample', async () => {
    const files = [...traceFilesUnder(fixtures), ...traceFilesUnder(join(repoRoot, 'samples'))];
    let sessions = 0;
    let loops = 0;
    for (const file of files) {
      const { model } = await parseFile(file);
      for (const session of model.sessions) {
        sessions += 1;
        const full = findRetryLoops(session);
        const only = findRetryLoopsOnly(session);
        assert.deepEqual(only.loops, full.loops, file);
        assert.equal(only.callsInLoops, full.callsInLoops, file);
        assert.deepEqual(loopsOf(session, true), referenceLoops(session), file);
        loops += only.loops.length;
      }
    }
    // The corpus has sessions with loops, or the comparison would prove little.
    assert.ok(sessions > 50 && loops > 5, `${sessions} sessions, ${loops} loops`);
  });
});
