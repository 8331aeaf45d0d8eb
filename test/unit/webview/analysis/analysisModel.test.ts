import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MissCause } from '../../../../src/core/analysis/cacheMisses';
import type { Fingerprint } from '../../../../src/core/analysis/fingerprint';
import { PUBLISHED_RANGES } from '../../../../src/core/analysis/fingerprint';
import type { SessionSummary } from '../../../../src/core/analysis/sessionSummary';
import { buildTraceView } from '../../../../src/core/view/traceView';
import type { AnalysisView, CallRow, LoopView } from '../../../../src/core/view/traceView';
import {
  analysisTooltipLines,
  ariaSort,
  compactionRows,
  decodeShare,
  fingerprintDigest,
  fingerprintGroups,
  headlineGroups,
  loopAttemptText,
  loopBands,
  loopHeadline,
  loopRows,
  missCalls,
  missCauseEntries,
  missText,
  nextLoopSort,
  nextMissCall,
  prefillBasis,
  quarterColumns,
  rangeNote,
  rangeText,
  readLoopSort,
  shortTarget,
  sortLoopRows,
  toolRows,
  wrapText,
} from '../../../../webview/analysis/analysisModel';
import { selectionAnnouncement } from '../../../../webview/timeline/timelineModel';
import { EDIT_LOOP, parseFile, SPOTTER } from '../../../support/helpers';

// Expected values are written by hand from the inputs below (or, for the fixture, read
// from the file: the loop's results are on lines 61, 65, 70 and 74, made by calls 15,
// 17, 19 and 21; the misses are the first call and idle gaps before calls 5, 23, 28, 41).

function loop(over: Partial<LoopView> = {}): LoopView {
  return {
    tool: 'Bash',
    target: 'npm test',
    targetKind: 'command',
    attempts: 3,
    attemptCalls: [2, 4, 6],
    firstCall: 2,
    lastCall: 6,
    callsSpanned: 5,
    escaped: false,
    escapeCall: null,
    firstError: 'boom',
    wastedTokens: 100,
    carryForwardTokens: 50,
    wastedUsd: null,
    carriedForwardUsd: null,
    file: 't.jsonl',
    fileIndex: 0,
    firstLine: 10,
    lastLine: 30,
    attemptLines: [10, 20, 30],
    ...over,
  };
}

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

const noMisses: Record<MissCause, number> = {
  'first-call': 0,
  'subagent-start': 0,
  compaction: 0,
  'idle-gap': 0,
  'prefix-change': 0,
  unexplained: 0,
};

function fingerprint(over: Partial<Fingerprint> = {}): Fingerprint {
  return {
    appendToOutputP90: 12.345,
    outputPerCall: { mean: 212.4, median: 114 },
    prefillShare: {
      value: 0.25,
      estimated: true,
      basis: 'estimated: Qwen3-32B bf16 on one H100, running alone (docs/design/simulator.md §5)',
    },
    tools: {
      total: 12,
      failed: 3,
      byTool: {
        Bash: { total: 10, failed: 3, failureRate: 0.3, latencyMsMedian: 1500, latencyMsP90: 65_000 },
        Read: { total: 2, failed: 0, failureRate: 0, latencyMsMedian: null, latencyMsP90: null },
      },
      toolTimeMs: 30_000,
      llmTimeMs: 90_000,
    },
    intentByQuartile: [
      { explore: 5, execute: 1, other: 0 },
      { explore: 2, execute: 3, other: 1 },
      { explore: 0, execute: 0, other: 0 },
      { explore: 1, execute: 4, other: 0 },
    ],
    context: { meanTokens: 50_470.78, maxTokens: 81_663, growthPerCall: 1563.7 },
    compactions: [{ beforeCall: 138, contextBefore: 142_431, lostCachedTokens: 120_983, reprefillTokens: null }],
    ...over,
  };
}

const summary = {
  cacheHitRate: 0.984,
  rawInputToOutput: 371.4,
  appendToOutput: { mean: 196.9, median: 5.6, aggregate: 5.86 },
} as SessionSummary;

function analysis(over: Partial<AnalysisView> = {}): AnalysisView {
  const idealCache = {
    steps: 0,
    skipped: 0,
    points: [],
    optimalHitRate: null,
    realHitRate: null,
    realAmplification: null,
    effectiveTtlMs: null,
  };
  return {
    fingerprint: fingerprint(),
    loops: [],
    loopSentence: null,
    callsInLoops: 0,
    missCauses: noMisses,
    collateralFailures: 0,
    idealCache,
    ...over,
  };
}

function figures(s: SessionSummary, a: AnalysisView): Record<string, { value: string; range?: string | null }> {
  return Object.fromEntries(
    [...headlineGroups(s, a), ...fingerprintGroups(a)].flatMap((g) =>
      g.figures.map((f) => [f.name, { value: f.value, range: f.range ? f.range.position : undefined }]),
    ),
  );
}

describe('published ranges', () => {
  it('writes each range without trailing zeros, as the paper does', () => {
    assert.equal(rangeText(PUBLISHED_RANGES.cacheHitRate, 'percent'), '84.6–99.5%');
    assert.equal(rangeText(PUBLISHED_RANGES.rawInputToOutput, 'ratio'), '53.9–559.8×');
    assert.equal(rangeText(PUBLISHED_RANGES.appendToOutputMean, 'ratio'), '1.5–7.3×');
    assert.equal(rangeText(PUBLISHED_RANGES.decodeShare, 'percent'), '91–98.6%');
  });

  it('says below, within or above in words, and names the source on hover', () => {
    const r = PUBLISHED_RANGES.cacheHitRate;
    assert.deepEqual(
      [0.5, 0.846, 0.9, 0.995, 0.999].map((v) => rangeNote(v, r, 'percent').position),
      ['below', 'within', 'within', 'within', 'above'],
    );
    assert.equal(rangeNote(0.984, r, 'percent').text, '✓ within 84.6–99.5%');
    assert.equal(rangeNote(1.2, PUBLISHED_RANGES.appendToOutputMean, 'ratio').text, '↓ below 1.5–7.3×');
    assert.equal(rangeNote(600, PUBLISHED_RANGES.rawInputToOutput, 'ratio').text, '↑ above 53.9–559.8×');
    assert.match(rangeNote(0.9, r, 'percent').title, /arXiv 2605\.26297/);
  });

  it('an unknown figure keeps the range but gets no verdict', () => {
    const n = rangeNote(null, PUBLISHED_RANGES.cacheHitRate, 'percent');
    assert.equal(n.position, null);
    assert.equal(n.text, 'range 84.6–99.5%');
    assert.match(n.title, /unknown/);
  });
});

describe('fingerprint figures', () => {
  it('formats every figure and puts verdicts on the four with published ranges', () => {
    const f = figures(summary, analysis());
    assert.deepEqual(f['cacheHitRate'], { value: '98.4%', range: 'within' });
    assert.deepEqual(f['rawInputToOutput'], { value: '371×', range: 'within' });
    assert.deepEqual(f['appendToOutputMean'], { value: '197×', range: 'above' });
    assert.deepEqual(f['appendToOutputMedian'], { value: '5.60×', range: undefined });
    assert.deepEqual(f['appendToOutputP90'], { value: '12.3×', range: undefined });
    assert.deepEqual(f['appendToOutputAggregate'], { value: '5.86×', range: undefined });
    // Decode is what prefill leaves: 1 − 0.25.
    assert.deepEqual(f['prefillShare'], { value: '25.0%', range: undefined });
    assert.deepEqual(f['decodeShare'], { value: '75.0%', range: 'below' });
    assert.equal(f['outputPerCallMean']!.value, '212');
    assert.equal(f['outputPerCallMedian']!.value, '114');
    assert.equal(f['toolTime']!.value, '30.0 s');
    assert.equal(f['llmTime']!.value, '1 min 30 s');
    assert.equal(f['toolTimeShare']!.value, '25.0%');
    assert.equal(f['contextMean']!.value, '50,471');
    assert.equal(f['contextMax']!.value, '81,663');
    assert.equal(f['growthPerCall']!.value, '+1,564');
  });

  it('says "estimated" or "measured", with the basis on hover', () => {
    const est = prefillBasis(fingerprint());
    assert.equal(est.text, 'estimated');
    assert.match(est.title, /^Estimated with a cost model \(Qwen3-32B bf16 on one H100/);
    const measured = prefillBasis(
      fingerprint({
        prefillShare: { value: 0.05, estimated: false, basis: 'server prefill and decode times of 12 calls' },
      }),
    );
    assert.deepEqual(measured, { text: 'measured', title: 'Measured: server prefill and decode times of 12 calls.' });
    assert.equal(fingerprintGroups(analysis()).find((g) => g.label === 'LLM time')?.tag?.text, 'estimated');
  });

  it('unknown stays unknown: no figure becomes 0', () => {
    const empty = fingerprint({
      appendToOutputP90: null,
      outputPerCall: { mean: null, median: null },
      prefillShare: { value: null, estimated: true, basis: 'no call reports appended and output tokens' },
      tools: { total: 0, failed: 0, byTool: {}, toolTimeMs: null, llmTimeMs: null },
      context: { meanTokens: null, maxTokens: null, growthPerCall: null },
      compactions: [],
    });
    const f = figures(
      {
        cacheHitRate: null,
        rawInputToOutput: null,
        appendToOutput: { mean: null, median: null, aggregate: null },
      } as unknown as SessionSummary,
      analysis({ fingerprint: empty }),
    );
    for (const [name, v] of Object.entries(f)) assert.equal(v.value, 'unknown', name);
    assert.equal(decodeShare(null), null);
    assert.equal(f['decodeShare']!.range, null);
    // The collapsed line leaves unknown figures out rather than printing "unknown" five times.
    assert.equal(fingerprintDigest(analysis({ fingerprint: empty })), 'no figures known in this trace');
    assert.equal(
      fingerprintDigest(
        analysis({
          fingerprint: {
            ...empty,
            tools: {
              ...empty.tools,
              toolTimeMs: 5000,
              byTool: { Bash: { total: 1, failed: 0, failureRate: 0, latencyMsMedian: 5000, latencyMsP90: 5000 } },
            },
          },
        }),
      ),
      'tool time 5.0 s · 1 tool',
    );
  });

  it('sums the panel up in one line while it is collapsed, the decode share with its verdict', () => {
    assert.equal(
      fingerprintDigest(analysis()),
      'decode 75.0% of LLM time (below 91–98.6%), estimated · output 114 per call (median) · tools 30.0 s vs LLM 1 min 30 s · context up to 81,663 · 2 tools · 1 compaction',
    );
  });

  it('an older host without analysis still gets the headline ratios, with p90 unknown', () => {
    const names = headlineGroups(summary, undefined).flatMap((g) => g.figures.map((f) => [f.name, f.value]));
    assert.deepEqual(
      names.find(([n]) => n === 'appendToOutputP90'),
      ['appendToOutputP90', 'unknown'],
    );
  });

  it('shrinks the context by a compaction as a negative growth with a true minus sign', () => {
    assert.equal(
      figures(
        summary,
        analysis({ fingerprint: fingerprint({ context: { meanTokens: 1, maxTokens: 1, growthPerCall: -2500 } }) }),
      )['growthPerCall']!.value,
      '−2,500',
    );
  });
});

describe('fingerprint tables', () => {
  it('tool rows: calls, failures, rate and latency, unknown latency said so', () => {
    assert.deepEqual(toolRows(fingerprint()), [
      {
        tool: 'Bash',
        calls: '10',
        failed: '3',
        failureRate: '30.0%',
        latencyMedian: '1.5 s',
        latencyP90: '1 min 05 s',
        hasFailures: true,
      },
      {
        tool: 'Read',
        calls: '2',
        failed: '0',
        failureRate: '0.0%',
        latencyMedian: 'unknown',
        latencyP90: 'unknown',
        hasFailures: false,
      },
    ]);
  });

  it('quarters name their calls: 41 calls split 11/10/10/10 at 10.25, 20.5, 30.75', () => {
    const q = quarterColumns(fingerprint(), 41);
    assert.deepEqual(
      q.map((c) => [c.label, c.calls, c.total]),
      [
        ['Q1', 'calls 1–11', 6],
        ['Q2', 'calls 12–21', 6],
        ['Q3', 'calls 22–31', 0],
        ['Q4', 'calls 32–41', 5],
      ],
    );
    assert.deepEqual(
      quarterColumns(fingerprint(), 149).map((c) => c.calls),
      ['calls 1–38', 'calls 39–75', 'calls 76–112', 'calls 113–149'],
    );
    // Two calls: ⌊4·0/2⌋ = 0 and ⌊4·1/2⌋ = 2, so Q2 and Q4 are empty.
    assert.deepEqual(
      quarterColumns(fingerprint(), 2).map((c) => c.calls),
      ['call 1', 'no calls', 'call 2', 'no calls'],
    );
  });

  it('compaction rows: 1-based call, costs, unknown kept', () => {
    assert.deepEqual(compactionRows(fingerprint()), [
      { beforeCall: 'before call 139', contextBefore: '142,431', lostCached: '120,983', reprefill: 'unknown' },
    ]);
  });
});

describe('cache-miss causes', () => {
  it('lists only non-zero causes, in the core order, with readable labels', () => {
    const entries = missCauseEntries({
      ...noMisses,
      'idle-gap': 4,
      'first-call': 1,
      'prefix-change': 2,
      unexplained: 1,
    });
    assert.deepEqual(
      entries.map((e) => e.text),
      ['1 first call', '4 idle gap > TTL', '2 prefix change (model switch)', '1 unexplained'],
    );
    assert.deepEqual(
      missCauseEntries({ ...noMisses, 'subagent-start': 1, compaction: 3 }).map((e) => e.label),
      ['sub-agent start', 'compaction'],
    );
    assert.deepEqual(missCauseEntries(noMisses), []);
    assert.deepEqual(missCauseEntries(undefined), []);
  });

  it('writes the miss as cause, detail and re-prefilled tokens', () => {
    const miss = {
      cause: 'idle-gap' as const,
      detail: 'idle 24 min 25 s since the previous call > cache TTL 5 min 00 s',
      lostTokens: 47_200,
    };
    assert.equal(
      missText(miss),
      'Cache miss: idle gap — idle 24 min 25 s since the previous call > cache TTL 5 min 00 s; 47.2k tokens re-prefilled',
    );
    assert.equal(
      missText({ cause: 'first-call', detail: 'first call of the session', lostTokens: null }),
      'Cache miss: first call — first call of the session',
    );
  });

  it("a compaction's miss says what the call prefilled, as the CLI does, not the context the summary replaced", async () => {
    // The spotter log (counted from the raw lines): the /compact boundary is line 1481; call 139's usage (line 1492) is
    // input 3 + cache_creation 23,812 = 23,815 prefilled, 21,448 read; call 138's prompt was 141,787 tokens, so 120,339
    // of them were dropped by the compaction, never prefilled again. The CLI's line: "re-prefilled 23.8k".
    const view = buildTraceView(await parseFile(SPOTTER), 'spotter.jsonl');
    const rows = view.sessions[0]!.calls;
    const call = rows[138]!;
    assert.equal(call.miss?.cause, 'compaction');
    assert.equal(call.miss?.lostTokens, 120_339);
    assert.equal(call.appended, 23_815);
    assert.match(missText(call.miss!, call.appended), /; 23\.8k tokens re-prefilled$/);
    assert.match(
      selectionAnnouncement(call, 149),
      /Cache miss: compaction — compaction \(manual\) replaced the context just before this call; 23\.8k tokens re-prefilled\.$/,
    );
  });

  it('selects the next call with a cause, wrapping around', () => {
    const calls = [
      call(0, { miss: { cause: 'first-call', detail: '', lostTokens: null } }),
      call(1),
      call(2, { miss: { cause: 'idle-gap', detail: '', lostTokens: 1 } }),
      call(3, { miss: { cause: 'idle-gap', detail: '', lostTokens: 1 } }),
    ];
    assert.deepEqual(missCalls(calls), [0, 2, 3]);
    assert.equal(nextMissCall(calls, 'idle-gap', null), 2);
    assert.equal(nextMissCall(calls, 'idle-gap', 2), 3);
    assert.equal(nextMissCall(calls, 'idle-gap', 3), 2);
    assert.equal(nextMissCall(calls, 'compaction', 0), null);
  });
});

describe('tooltip lines of the analyses', () => {
  it('wraps at spaces within the width; a long word stands alone', () => {
    assert.deepEqual(wrapText('aa bb cc dd', 5), ['aa bb', 'cc dd']);
    assert.deepEqual(wrapText('a verylongword b', 4), ['a', 'verylongword', 'b']);
    assert.deepEqual(wrapText('  ', 10), []);
  });

  it('names the loop attempt, then the miss, each wrapped to 60 characters', () => {
    const loops = [
      loop({
        tool: 'Edit/Write',
        target: 'C:/Users/x/scripts/sync.py',
        targetKind: 'file',
        attempts: 4,
        attemptCalls: [14, 16, 18, 20],
      }),
    ];
    const c = call(16, {
      loops: [0],
      miss: {
        cause: 'idle-gap',
        detail: 'idle 6 min 03 s since the previous call > cache TTL 5 min 00 s',
        lostTokens: 56_711,
      },
    });
    const lines = analysisTooltipLines(c, loops);
    assert.equal(lines[0], 'Retry loop: Edit/Write attempt 2 of 4 on sync.py (gave up)');
    assert.equal(
      lines.slice(1).join(' '),
      'Cache miss: idle gap — idle 6 min 03 s since the previous call > cache TTL 5 min 00 s; 56.7k tokens re-prefilled',
    );
    for (const l of lines) assert.ok(l.length <= 60, l);
    assert.deepEqual(analysisTooltipLines(call(1), loops), []);
  });

  it('short targets: the file name of a path, commands whole; outcomes in words', () => {
    assert.equal(shortTarget({ target: 'C:\\a\\b.py', targetKind: 'file' }), 'b.py');
    assert.equal(shortTarget({ target: 'git add && git commit', targetKind: 'command' }), 'git add && git commit');
    assert.equal(
      loopAttemptText(loop({ escaped: true, escapeCall: 9 }), 4),
      'Retry loop: Bash attempt 2 of 3 on npm test (escaped at call 10)',
    );
  });
});

describe('loops table', () => {
  const loops = [
    loop({
      tool: 'Edit',
      target: 'b.ts',
      targetKind: 'file',
      attempts: 3,
      callsSpanned: 4,
      wastedTokens: 900,
      carryForwardTokens: null,
      escaped: true,
      escapeCall: 8,
    }),
    loop({
      tool: 'Bash',
      target: 'npm test',
      attempts: 7,
      callsSpanned: 30,
      wastedTokens: 100,
      carryForwardTokens: 5000,
    }),
    loop({ tool: 'Bash', target: 'a', attempts: 4, callsSpanned: 4, wastedTokens: null, carryForwardTokens: 10 }),
  ];
  const rows = loopRows(loops);
  const order = (sorted: ReturnType<typeof loopRows>): number[] => sorted.map((r) => r.index);

  it('keeps the session order (first attempt first) until a column is chosen', () => {
    assert.deepEqual(order(sortLoopRows(rows, null)), [0, 1, 2]);
    // The core lists loops as they close: an escaped loop can come before one that started earlier.
    const closing = loopRows([
      loop({ firstCall: 4, attemptCalls: [4, 5, 6] }),
      loop({ firstCall: 1, attemptCalls: [1, 2, 9] }),
    ]);
    assert.deepEqual(order(sortLoopRows(closing, null)), [1, 0]);
    assert.deepEqual(order(sortLoopRows(closing, { key: 'attempts', direction: 'descending' })), [1, 0]);
  });

  it('sorts numbers, text and outcome both ways; unknown values go last either way', () => {
    assert.deepEqual(order(sortLoopRows(rows, { key: 'attempts', direction: 'descending' })), [1, 2, 0]);
    assert.deepEqual(order(sortLoopRows(rows, { key: 'attempts', direction: 'ascending' })), [0, 2, 1]);
    // Equal spans keep the session order.
    assert.deepEqual(order(sortLoopRows(rows, { key: 'callsSpanned', direction: 'descending' })), [1, 0, 2]);
    assert.deepEqual(order(sortLoopRows(rows, { key: 'wastedTokens', direction: 'descending' })), [0, 1, 2]);
    assert.deepEqual(order(sortLoopRows(rows, { key: 'wastedTokens', direction: 'ascending' })), [1, 0, 2]);
    assert.deepEqual(order(sortLoopRows(rows, { key: 'carryForwardTokens', direction: 'ascending' })), [2, 1, 0]);
    assert.deepEqual(order(sortLoopRows(rows, { key: 'target', direction: 'ascending' })), [2, 0, 1]);
    assert.deepEqual(order(sortLoopRows(rows, { key: 'tool', direction: 'descending' })), [0, 1, 2]);
    assert.deepEqual(order(sortLoopRows(rows, { key: 'outcome', direction: 'descending' })), [1, 2, 0]);
  });

  it('a new numeric column starts largest first, text A→Z; the same column flips', () => {
    assert.deepEqual(nextLoopSort(null, 'attempts'), { key: 'attempts', direction: 'descending' });
    assert.deepEqual(nextLoopSort({ key: 'attempts', direction: 'descending' }, 'attempts'), {
      key: 'attempts',
      direction: 'ascending',
    });
    assert.deepEqual(nextLoopSort({ key: 'attempts', direction: 'descending' }, 'tool'), {
      key: 'tool',
      direction: 'ascending',
    });
    assert.equal(ariaSort({ key: 'tool', direction: 'ascending' }, 'tool'), 'ascending');
    assert.equal(ariaSort({ key: 'tool', direction: 'ascending' }, 'target'), 'none');
    assert.equal(ariaSort(null, 'tool'), 'none');
  });

  it('reads a stored sort defensively', () => {
    assert.deepEqual(readLoopSort({ key: 'wastedTokens', direction: 'ascending' }), {
      key: 'wastedTokens',
      direction: 'ascending',
    });
    assert.equal(readLoopSort({ key: 'nope', direction: 'ascending' }), null);
    assert.equal(readLoopSort({ key: 'tool', direction: 'up' }), null);
    assert.equal(readLoopSort('tool'), null);
  });

  it('shows unknown tokens as "unknown" and lines 1-based while keeping the 0-based line for the host', () => {
    const r = rows[2]!;
    assert.equal(r.display.wastedTokens, 'unknown');
    assert.equal(r.line, 10);
    assert.equal(r.lines, 'lines 11–31');
    assert.equal(rows[0]!.outcome, 'escaped at call 9');
    assert.equal(rows[1]!.span, 'calls 3–7');
  });

  it('says briefly when there are no loops', () => {
    assert.equal(loopHeadline(analysis()), 'No retry loops in this session.');
    assert.equal(
      loopHeadline(analysis({ loopSentence: "12% of this session's calls were spent in 3 retry loops" })),
      "12% of this session's calls were spent in 3 retry loops",
    );
  });
});

describe('loop bands', () => {
  it('cover the outer edges of the first and last bar, clamped to the bars that exist', () => {
    const bands = loopBands(
      [loop(), loop({ firstCall: 8, lastCall: 12, escaped: true, attempts: 5, tool: 'Edit' })],
      10,
    );
    assert.deepEqual(
      bands.map((b) => [b.loop, b.x0, b.x1, b.escaped, b.label, b.shortLabel]),
      [
        [0, 1.5, 6.5, false, '✗ Bash ×3 gave up', '✗ ×3'],
        [1, 7.5, 9.5, true, '✓ Edit ×5 escaped', '✓ ×5'],
      ],
    );
    assert.deepEqual(loopBands([loop()], 0), []);
    assert.deepEqual(
      loopBands([loop({ firstCall: 5, lastCall: 6 }), loop({ firstCall: 1, lastCall: 3 })], 10).map((b) => b.loop),
      [1, 0],
    );
  });
});

describe('analysis view-models on edit-retry-loop.jsonl (41 calls, one Edit/Write loop)', async () => {
  const view = buildTraceView(await parseFile(EDIT_LOOP), 'edit-retry-loop.jsonl');
  const session = view.sessions[0]!;

  it('one loop row: Edit/Write on sync_raw_logs.py, 4 attempts over calls 15–21, gave up, first result on line 61', () => {
    const [row, ...rest] = loopRows(session.analysis.loops);
    assert.equal(rest.length, 0);
    assert.equal(row!.tool, 'Edit/Write');
    assert.equal(row!.target, 'C:/Users/[USER]/Documents/M-Claude/scripts/sync_raw_logs.py');
    assert.equal(row!.targetShort, 'sync_raw_logs.py');
    assert.deepEqual(
      [row!.attempts, row!.callsSpanned, row!.outcome, row!.span, row!.lines, row!.line, row!.firstCall],
      [4, 7, 'gave up', 'calls 15–21', 'lines 61–74', 60, 14],
    );
    assert.equal(row!.file, 'edit-retry-loop.jsonl');
  });

  it('a band over calls 14–20 (0-based) and miss marks at 0, 4, 22, 27, 40', () => {
    assert.deepEqual(
      loopBands(session.analysis.loops, session.calls.length).map((b) => [b.x0, b.x1, b.escaped]),
      [[13.5, 20.5, false]],
    );
    assert.deepEqual(missCalls(session.calls), [0, 4, 22, 27, 40]);
    assert.deepEqual(
      missCauseEntries(session.analysis.missCauses).map((e) => e.text),
      ['1 first call', '4 idle gap > TTL'],
    );
  });

  it('the tooltip of call 5 (index 4) tells the 24 min 25 s idle gap', () => {
    const text = analysisTooltipLines(session.calls[4]!, session.analysis.loops).join(' ');
    assert.match(
      text,
      /^Cache miss: idle gap — idle 24 min 25 s since the previous call > cache TTL 5 min 00 s; [\d.]+k tokens re-prefilled$/,
    );
  });
});
