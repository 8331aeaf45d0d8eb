import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TraceService } from '../../../../src/core/view/traceService';
import type { CallRow } from '../../../../src/core/view/traceView';
import { axisMaxima, binCalls } from '../../../../webview/timeline/bins';
import { jumpTargets, loopSlots, timelineMarkers } from '../../../../webview/timeline/marks';
import {
  callHitRate,
  callTimeText,
  clampSelection,
  formatClock,
  isNavigationKey,
  moveSelection,
  niceCeiling,
  selectionAnnouncement,
  shortSessionId,
  tooltipLines,
  tooltipTitle,
} from '../../../../webview/timeline/timelineModel';
import { fitAll } from '../../../../webview/timeline/viewWindow';
import { parseFile, parseText, SPOTTER } from '../../../support/helpers';

function call(index: number, over: Partial<CallRow> = {}): CallRow {
  return {
    index,
    id: `c${index}`,
    model: 'm',
    turn: 0,
    startMs: null,
    endMs: null,
    input: 100,
    cached: 80,
    appended: 20,
    cacheWrite: 5,
    output: 10,
    tools: [],
    miss: null,
    loops: [],
    cacheWrite1h: null,
    cost: null,
    ...over,
  };
}

describe('timeline data of the spotter session (149 calls, compaction before call 138, sub-agent from call 4)', async () => {
  const parsed = await parseFile(SPOTTER);
  const service = new TraceService(parsed, { fileName: 'spotter.jsonl', formatChosen: false, analysis: {} });
  const id = service.header().defaultSessionId!;
  const intro = service.sessionIntro({ sessionId: id })!;
  const body = service.sessionBody({ sessionId: id })!;
  const data = { columns: body.columns, shown: null };

  it('one column entry per main-thread call; sub-agent calls are not mixed in', () => {
    assert.equal(body.columns.cached.length, 149);
    // Call 0 read by hand: cached 17,842, appended 8,168, output 209, input 26,010.
    const c = body.columns;
    assert.deepEqual([c.cached[0], c.appended[0], c.output[0], c.input[0]], [17842, 8168, 209, 26010]);
  });

  it('marks the sub-agent after call 4 and the compaction before call 138', () => {
    const markers = timelineMarkers(149, intro.compactions, intro.events, intro.subagents);
    assert.deepEqual(
      markers.map((x) => [x.kind, x.label, x.callIndex, x.sessionId]),
      [
        ['subagent', 'sub-agent aac57f5', 4, 'aac57f5'],
        ['compaction', 'compaction', 138, null],
      ],
    );
    assert.equal(markers[1]!.description, 'Compaction before call 139 (manual, 142,431 tokens before)');
  });

  it('flags the 11 calls with a failed tool and the misses at the model switch (5) and after the compaction (138)', () => {
    assert.equal(jumpTargets('failure', data, []).length, 11);
    assert.deepEqual(jumpTargets('miss', data, []), [5, 138]);
    assert.deepEqual(jumpTargets('compaction', data, []), [138]);
    // Read from the file: the loop's results (lines 1209 … 1463) answer calls 105 and 136 (1-based), first and last.
    assert.deepEqual(
      body.analysis.loops.map((l) => [l.firstCall, l.lastCall, l.escaped]),
      [[104, 135, false]],
    );
    assert.deepEqual(loopSlots(data, body.analysis.loops[0]!), { first: 104, last: 135 });
  });

  it('shares a round maximum between both axes only while cached is shown', () => {
    const shown = axisMaxima(binCalls(data, fitAll(149), 1000, true), true);
    // Call 137 is the tallest: 141,369 cached plus its appended and output, under 150k.
    assert.deepEqual(shown, { bars: 150000, context: 150000 });
    const hidden = binCalls(data, fitAll(149), 1000, false);
    assert.equal(hidden.stackMax[0], 8168 + 209);
  });
});

describe('timeline data with unknown figures', () => {
  it('keeps unknown as NaN (a gap), never 0, and stacks only what is known', async () => {
    const line = JSON.stringify({
      sessionId: 's1',
      uuid: 'u',
      parentUuid: null,
      timestamp: '2026-01-01T00:00:00.000Z',
      type: 'assistant',
      message: { id: 'a', model: 'm', role: 'assistant', content: [], usage: { input_tokens: 10, output_tokens: 5 } },
    });
    const service = new TraceService(await parseText(line + '\n'), {
      fileName: 'x.jsonl',
      formatChosen: false,
      analysis: {},
    });
    const body = service.sessionBody({ sessionId: 's1' })!;
    assert.ok(Number.isNaN(body.columns.cached[0]!));
    assert.equal(body.columns.appended[0], 10);
    const bins = binCalls({ columns: body.columns, shown: null }, fitAll(1), 10, true);
    assert.equal(bins.stackMax[0], 15);
    assert.ok(Number.isNaN(bins.context[0]!));
    assert.deepEqual(tooltipLines(call(0, { input: null, cached: null, cacheWrite: null })).slice(1, 7), [
      'Input: unknown',
      'Cached: unknown',
      'Appended: 20',
      'Cache write: unknown',
      'Output: 10',
      'Hit: unknown',
    ]);
  });

  it('skips sub-agents whose parent call is unknown and names compaction agents', () => {
    const markers = timelineMarkers(
      2,
      [{ beforeCall: 2, trigger: null, preTokens: null }],
      [],
      [
        { sessionId: 'acompact-1', role: 'compaction', parentCallIndex: null, calls: 1 },
        { sessionId: 'x1', role: 'compaction', parentCallIndex: 0, calls: 1 },
      ],
    );
    assert.deepEqual(
      markers.map((m) => [m.label, m.description, m.callIndex]),
      [
        ['compaction agent x1', 'Compaction agent x1 started by call 1 (1 call)', 0],
        // A compaction after the last call selects the last call.
        ['compaction', 'Compaction before call 3', 1],
      ],
    );
  });

  it('names a rewind as a rewind, not a compaction', () => {
    const markers = timelineMarkers(2, [{ beforeCall: 1, trigger: 'manual', preTokens: null, rewind: true }], [], []);
    assert.deepEqual(
      markers.map((m) => [m.kind, m.label, m.description]),
      [['compaction', 'rewind', 'Rewind before call 2: the conversation was cut back to an earlier message']],
    );
  });
});

describe('tooltip and announcement text', () => {
  const c = call(11, {
    model: 'claude-opus-4-6',
    startMs: Date.UTC(2026, 0, 1, 10, 0, 0),
    endMs: Date.UTC(2026, 0, 1, 10, 0, 5, 300),
    tools: [
      { name: 'Bash', failed: false, targetFile: null },
      { name: 'Edit', failed: true, targetFile: '/a.ts' },
    ],
  });

  it('numbers calls from 1 and lists tools with ✗ on failures', () => {
    assert.equal(tooltipTitle(c), 'Call 12 · claude-opus-4-6');
    const lines = tooltipLines(c);
    assert.equal(lines[0], `Time: ${formatClock(c.startMs!)} → ${formatClock(c.endMs!)} (5.3 s)`);
    assert.equal(lines[6], 'Hit: 80.0%');
    assert.equal(lines[7], 'Tools: Bash, Edit ✗');
  });

  it('says what is known about time', () => {
    assert.equal(callTimeText(call(0)), 'unknown');
    assert.match(callTimeText(call(0, { startMs: 0 })), /^started \d\d:\d\d:\d\d$/);
    assert.equal(callHitRate(call(0, { input: 0 })), null);
  });

  it('announces the selection with its figures', () => {
    assert.equal(
      selectionAnnouncement(c, 149),
      'Call 12 of 149: input 100, cached 80, appended 20, output 10, hit 80.0%, 2 tools, 1 failed.',
    );
    assert.equal(
      selectionAnnouncement(call(0), 1),
      'Call 1 of 1: input 100, cached 80, appended 20, output 10, hit 80.0%, no tools.',
    );
  });

  it('announces a loop attempt and a cache miss after the figures', () => {
    const loops = [
      {
        tool: 'Bash',
        target: 'npm test',
        targetKind: 'command' as const,
        attempts: 3,
        attemptCalls: [0, 2, 3],
        firstCall: 0,
        lastCall: 3,
        callsSpanned: 4,
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
        lastLine: 9,
        attemptLines: [0, 4, 9],
      },
    ];
    const c2 = call(2, {
      loops: [0],
      miss: { cause: 'unexplained', detail: 'no reason in the trace', lostTokens: 900 },
    });
    assert.equal(
      selectionAnnouncement(c2, 4, loops),
      'Call 3 of 4: input 100, cached 80, appended 20, output 10, hit 80.0%, no tools. Retry loop: Bash attempt 2 of 3 on npm test (gave up). Cache miss: unexplained — no reason in the trace; 900 tokens re-prefilled.',
    );
  });
});

describe('selection logic', () => {
  it('arrows step and stop at the ends; Home/End jump; PageUp/PageDown move by 10', () => {
    assert.equal(moveSelection(5, 'ArrowRight', 10), 6);
    assert.equal(moveSelection(9, 'ArrowRight', 10), 9);
    assert.equal(moveSelection(0, 'ArrowLeft', 10), 0);
    assert.equal(moveSelection(5, 'Home', 10), 0);
    assert.equal(moveSelection(5, 'End', 10), 9);
    assert.equal(moveSelection(5, 'PageDown', 30), 15);
    assert.equal(moveSelection(5, 'PageUp', 30), 0);
  });

  it('from no selection, forward keys start at the first call and backward keys at the last', () => {
    assert.equal(moveSelection(null, 'ArrowRight', 10), 0);
    assert.equal(moveSelection(null, 'Home', 10), 0);
    assert.equal(moveSelection(null, 'ArrowLeft', 10), 9);
    assert.equal(moveSelection(null, 'End', 10), 9);
    assert.equal(moveSelection(3, 'ArrowRight', 0), null);
  });

  it('only navigation keys are navigation keys', () => {
    assert.ok(isNavigationKey('ArrowLeft'));
    assert.ok(!isNavigationKey('Enter'));
    assert.ok(!isNavigationKey('a'));
  });

  it('keeps a selection across a trace change while the call exists, else clamps', () => {
    assert.equal(clampSelection(42, 149), 42);
    assert.equal(clampSelection(200, 149), 148);
    assert.equal(clampSelection(3, 0), null);
    assert.equal(clampSelection(null, 10), null);
  });
});

describe('small helpers', () => {
  it('niceCeiling rounds up to 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^k', () => {
    assert.deepEqual(
      [142_431, 150_000, 150_001, 9, 0.2, 0, -5].map(niceCeiling),
      [150_000, 150_000, 200_000, 10, 0.2, 1, 1],
    );
  });

  it('shortens UUID session ids to their first block and leaves others whole', () => {
    assert.equal(shortSessionId('ae4a77f8-aedd-4bc1-888f-c94edc91af04'), 'ae4a77f8');
    assert.equal(shortSessionId('acompact-946d2b'), 'acompact-946d2b');
  });
});

describe('API errors on the timeline (M-Claude 2.1.6 Windows session, the rate-limit message at line 514)', async () => {
  const { join } = await import('node:path');
  const { fixtures } = await import('../../../support/helpers');
  const service = new TraceService(
    await parseFile(join(fixtures, 'claude-code/m-claude/3cfce0ff-0725-47be-a572-f8af8122b71e.jsonl')),
    { fileName: 'w.jsonl', formatChosen: false, analysis: {} },
  );
  const intro = service.sessionIntro({ sessionId: service.header().defaultSessionId! })!;

  it('marks the failed request between the calls it fell between, with its text', () => {
    const marks = timelineMarkers(intro.summary.llmCalls, intro.compactions, intro.events, intro.subagents).filter(
      (m) => m.kind === 'api-error',
    );
    assert.equal(marks.length, 1);
    assert.match(marks[0]!.description, /^API error before call \d+: You're out of extra usage/);
  });

  it('retries of one request are one mark with their count (15 retries and the final message before any call)', async () => {
    const limited = new TraceService(
      await parseFile(join(fixtures, 'claude-code/m-claude/0a8fc187-681a-4c42-9538-ba0f628ee289.jsonl')),
      { fileName: 'r.jsonl', formatChosen: false, analysis: {} },
    );
    assert.deepEqual(
      limited
        .sessionIntro({ sessionId: limited.header().defaultSessionId! })!
        .events.map((e) => [e.beforeCall, e.count]),
      [[0, 16]],
    );
  });
});
