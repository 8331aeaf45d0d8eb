import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CALL_FLAG } from '../../../../src/core/view/timelineColumns';
import type { TimelineColumns } from '../../../../src/core/view/timelineColumns';
import type { TimelineData } from '../../../../webview/timeline/bins';
import { groupMarks, jump, jumpTargets, loopSlots, mergeLabels } from '../../../../webview/timeline/marks';

function flagsOnly(flags: number[]): TimelineData {
  const n = flags.length;
  const columns: TimelineColumns = {
    cached: new Float64Array(n),
    appended: new Float64Array(n),
    output: new Float64Array(n),
    input: new Float64Array(n),
    flags: Uint8Array.from(flags),
    missCause: new Uint8Array(n),
    cost: null,
  };
  return { columns, shown: null };
}

describe('readable marks', () => {
  it('overlapping labels fold into the first with "+N"; labels with room stay', () => {
    const items = [
      { x: 0, width: 70, text: 'compaction' },
      { x: 40, width: 70, text: 'compaction' },
      { x: 72, width: 70, text: 'sub-agent a1' },
      { x: 200, width: 70, text: 'compaction' },
    ];
    // Measured at 6 px a character + 10: 40 starts before 0 + 70 + 4 = 74: folded ("compaction ×2", 88 px wide);
    // 72 starts before 92: folded too, and the label now mixes kinds; 200 starts after 0 + 118 + 4.
    assert.deepEqual(mergeLabels(items), [
      { x: 0, text: 'compaction +2', items: 3 },
      { x: 200, text: 'compaction', items: 1 },
    ]);
    // Sixty compactions 18 px apart (a 9,089-call session at 1,100 px) become labels that clear each other, each saying how many it holds.
    const sixty = Array.from({ length: 60 }, (_, i) => ({ x: i * 18, width: 70, text: 'compaction' }));
    const placed = mergeLabels(sixty);
    assert.equal(
      placed.reduce((n, p) => n + p.items, 0),
      60,
    );
    // "compaction ×5" is 13 characters, 88 px: each label starts 4 px or more past the one before ends.
    assert.ok(placed.every((p, i) => i === 0 || p.x >= placed[i - 1]!.x + placed[i - 1]!.text.length * 6 + 10 + 4));
    assert.equal(placed[0]!.text, 'compaction ×6');
  });

  it('nearby marked calls become one glyph with a count', () => {
    // Failed calls 0, 1, 2 at 2, 6 and 10 px, then call 10 at 42 px: two glyphs (centred at 6 and 42), of 3 and 1.
    const d = flagsOnly([1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
    const groups = groupMarks(d, CALL_FLAG.failed, 0, 11, (slot) => slot * 4 + 2, 12);
    assert.deepEqual(groups, [
      { x: 6, count: 3, callIndex: 0 },
      { x: 42, count: 1, callIndex: 10 },
    ]);
  });

  it('jumps go to the next or previous target and wrap; none says so', () => {
    const t = [5, 20, 138];
    assert.deepEqual(jump(t, null, 1), { callIndex: 5, ordinal: 1, total: 3 });
    assert.deepEqual(jump(t, null, -1), { callIndex: 138, ordinal: 3, total: 3 });
    assert.deepEqual(jump(t, 5, 1), { callIndex: 20, ordinal: 2, total: 3 });
    assert.deepEqual(jump(t, 19, 1), { callIndex: 20, ordinal: 2, total: 3 });
    assert.deepEqual(jump(t, 138, 1), { callIndex: 5, ordinal: 1, total: 3 });
    assert.deepEqual(jump(t, 20, -1), { callIndex: 5, ordinal: 1, total: 3 });
    assert.deepEqual(jump(t, 21, -1), { callIndex: 20, ordinal: 2, total: 3 });
    assert.deepEqual(jump(t, 5, -1), { callIndex: 138, ordinal: 3, total: 3 });
    assert.equal(jump([], 3, 1), null);
  });

  it('targets: flagged calls, and each loop at its first attempt', () => {
    const d = flagsOnly([CALL_FLAG.failed, 0, CALL_FLAG.miss | CALL_FLAG.failed, CALL_FLAG.compaction, 0]);
    assert.deepEqual(jumpTargets('failure', d, []), [0, 2]);
    assert.deepEqual(jumpTargets('miss', d, []), [2]);
    assert.deepEqual(jumpTargets('compaction', d, []), [3]);
    const loop = {
      tool: 'Bash',
      target: 't',
      targetKind: 'command' as const,
      attempts: 2,
      attemptCalls: [3, 4],
      firstCall: 3,
      lastCall: 4,
      callsSpanned: 2,
      escaped: false,
      escapeCall: null,
      firstError: null,
      wastedTokens: null,
      carryForwardTokens: null,
      wastedUsd: null,
      carriedForwardUsd: null,
      file: 'f',
      fileIndex: 0,
      firstLine: 0,
      lastLine: 1,
      attemptLines: [0, 1],
    };
    assert.deepEqual(
      jumpTargets('loop', d, [loop, { ...loop, attemptCalls: [1, 2], firstCall: 1, lastCall: 2 }]),
      [1, 3],
    );
  });

  it('a loop spans the slots of its calls that are shown, or none', () => {
    const d: TimelineData = { ...flagsOnly([0, 0, 0, 0, 0, 0]), shown: Int32Array.from([0, 2, 5]) };
    assert.deepEqual(loopSlots(d, { firstCall: 1, lastCall: 2 }), { first: 1, last: 1 });
    assert.deepEqual(loopSlots(d, { firstCall: 3, lastCall: 4 }), null);
  });
});
