import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildTraceView } from '../../../../src/core/view/traceView';
import type { TraceView } from '../../../../src/core/view/traceView';
import {
  diagnosticRows,
  keyFigures,
  mergeState,
  progressText,
  readPersistedState,
  sessionMetaText,
  skippedSummary,
  summaryFigures,
} from '../../../../webview/inspector/inspectorModel';
import { fingerprintGroups } from '../../../../webview/analysis/analysisModel';
import { parseFile, parseText, REJECTIONS, SPOTTER } from '../../../support/helpers';

/** The summary strip and the fingerprint's figures together, by `data-figure` name. */
function figureMap(view: TraceView, index = 0): Record<string, string> {
  const s = view.sessions[index]!;
  return Object.fromEntries(
    [...summaryFigures(s.summary, s.analysis), ...fingerprintGroups(s.analysis)].flatMap((g) =>
      g.figures.map((f) => [f.name, f.value]),
    ),
  );
}

describe('inspector view-model: tool calls the user denied', async () => {
  // marot/spotter's short session: two tool uses, both rejected at their permission prompts
  // (test/reference/tool_denials.py: "claude-code denied 2").
  const view = buildTraceView(await parseFile(REJECTIONS), 'short.jsonl');

  it('says how many of the failed the user denied', () => {
    assert.equal(figureMap(view)['toolCalls'], '2 (2 failed, 2 denied)');
  });

  it('a session with failures and no denial reads as before', async () => {
    const spotter = buildTraceView(await parseFile(SPOTTER), 'spotter.jsonl');
    assert.equal(figureMap(spotter)['toolCalls'], '162 (11 failed)');
    assert.equal(figureMap(spotter)['unattributed'], undefined);
  });
});

describe('inspector view-model on the spotter session', async () => {
  const view = buildTraceView(await parseFile(SPOTTER), 'spotter.jsonl');

  it('puts the cost, the cache hit rate and the failed tool calls first, without prices saying so', () => {
    const s = view.sessions[0]!;
    // test/reference/claude_code_totals.py: 11,560,832 of 11,746,257 prompt tokens cached; 11 of the 162 tool results are errors (counted by hand from the log's is_error).
    assert.deepEqual(
      keyFigures(s.summary, null).map((f) => [f.name, f.value]),
      [
        ['cost', 'no prices'],
        ['cacheHitRate', '98.4%'],
        ['failedToolCalls', '11 of 162'],
      ],
    );
    const priced = { summary: { totalUsd: 1.5, unpricedCalls: 2 } } as unknown as Parameters<typeof keyFigures>[1];
    assert.equal(keyFigures(s.summary, priced)[0]!.value, '$1.50 + 2 unpriced');
  });

  it('summary figures match the independent Python totals', () => {
    const all = figureMap(view);
    const headline = Object.fromEntries(
      Object.entries(all).filter(
        ([k]) =>
          !/^(appendToOutputP90|prefillShare|decodeShare|outputPerCall|toolTime|llmTime|context|growthPerCall)/.test(k),
      ),
    );
    assert.deepEqual(headline, {
      llmCalls: '149',
      userTurns: '2',
      // test/reference/claude_sessions.py: 3 local commands (/compact, its caveat and output), the compaction summary, 1 meta line.
      otherInputs: '5 (3 local commands, 1 compaction summary, 1 injected context)',
      toolCalls: '162 (11 failed)',
      input: '11,746,257',
      cached: '11,560,832',
      appended: '185,425',
      output: '31,625',
      cacheWrite: '185,255',
      cacheHitRate: '98.4%',
      rawInputToOutput: '371×',
      appendToOutputMedian: '5.60×',
      appendToOutputMean: '197×',
      appendToOutputAggregate: '5.86×',
    });
  });

  it('every required figure has a name, and each name is used once across the strip and the fingerprint', () => {
    const s = view.sessions[0]!;
    const names = [...summaryFigures(s.summary, s.analysis), ...fingerprintGroups(s.analysis)].flatMap((g) =>
      g.figures.map((f) => f.name),
    );
    for (const n of [
      'llmCalls',
      'userTurns',
      'input',
      'cached',
      'appended',
      'output',
      'cacheWrite',
      'cacheHitRate',
      'rawInputToOutput',
      'appendToOutputMean',
      'appendToOutputMedian',
      'appendToOutputAggregate',
      'appendToOutputP90',
      'prefillShare',
      'decodeShare',
      'outputPerCallMean',
      'outputPerCallMedian',
      'toolTime',
      'llmTime',
      'contextMean',
      'contextMax',
      'growthPerCall',
    ]) {
      assert.ok(names.includes(n), n);
    }
    assert.equal(new Set(names).size, names.length);
  });

  it('summarises skipped records largest first', () => {
    assert.equal(
      skippedSummary(view.skippedRecords),
      'Skipped 1,140 progress, 20 file-history-snapshot, 1 system:stop_hook_summary, 1 system:turn_duration',
    );
    assert.equal(skippedSummary({ a: 5, b: 4, c: 3, d: 2, e: 1, f: 1 }, 2), 'Skipped 5 a, 4 b, 7 of 4 other types');
    assert.equal(skippedSummary({}), null);
  });

  it('describes the session under the header', () => {
    assert.equal(
      sessionMetaText(view.sessions[1]!.summary, () => 'START'),
      'Sub-agent · aac57f5 · claude-code 2.1.39 · claude-sonnet-4-5-20250929 · started START · ran 32.5 s',
    );
  });
});

describe('inspector view-model on bad input', () => {
  it('unknown figures read "unknown", never 0', async () => {
    const line = JSON.stringify({
      sessionId: 's1',
      uuid: 'u',
      parentUuid: null,
      timestamp: '2026-01-01T00:00:00.000Z',
      type: 'assistant',
      message: { id: 'a', model: 'm', role: 'assistant', content: [], usage: { input_tokens: 10, output_tokens: 5 } },
    });
    const f = figureMap(buildTraceView(await parseText(line + '\n'), 'x.jsonl'));
    assert.equal(f['cached'], 'unknown');
    assert.equal(f['input'], 'unknown');
    assert.equal(f['cacheHitRate'], 'unknown');
    assert.equal(f['appended'], '10');
  });

  it('diagnostic rows show 1-based lines but keep 0-based lines for the host', async () => {
    const ok = JSON.stringify({
      sessionId: 's1',
      uuid: 'u',
      parentUuid: null,
      type: 'user',
      message: { role: 'user', content: 'hi' },
    });
    const view = buildTraceView(await parseText([ok, '{broken', ok].join('\n'), 'b.jsonl'), 'b.jsonl');
    const row = diagnosticRows(view.diagnostics).find((r) => r.icon === 'error')!;
    assert.equal(row.location, 'b.jsonl:2');
    assert.equal(row.line, 1);
    assert.deepEqual(diagnosticRows([{ file: 'f', fileIndex: 0, line: -1, severity: 'info', message: 'm' }])[0], {
      icon: 'info',
      location: 'f',
      message: 'm',
      file: 'f',
      fileIndex: 0,
      line: 0,
    });
  });
});

describe('progress and persisted state', () => {
  it('progress speaks MB, with or without a total', () => {
    assert.equal(progressText(5 * 1024 * 1024, 20 * 1024 * 1024), 'Reading trace… 5.0 MB of 20.0 MB (25%)');
    assert.equal(progressText(1536 * 1024, null), 'Reading trace… 1.5 MB read');
  });

  it('reads only well-formed keys from stored state', () => {
    assert.deepEqual(readPersistedState({ sessionId: 's', callIndex: 3, showCached: false, other: 1 }), {
      sessionId: 's',
      callIndex: 3,
      showCached: false,
    });
    assert.deepEqual(readPersistedState({ sessionId: 4, callIndex: -1, showCached: 'yes' }), {});
    assert.deepEqual(readPersistedState(undefined), {});
    assert.deepEqual(readPersistedState({ callIndex: null }), { callIndex: null });
    assert.deepEqual(
      readPersistedState({ fingerprintOpen: false, loopSort: { key: 'attempts', direction: 'descending' } }),
      { fingerprintOpen: false, loopSort: { key: 'attempts', direction: 'descending' } },
    );
    assert.deepEqual(
      readPersistedState({ fingerprintOpen: 'no', loopSort: { key: 'x', direction: 'descending' } }),
      {},
    );
    assert.deepEqual(readPersistedState({ loopSort: null }), { loopSort: null });
  });

  it('reads the timeline view and the scroll back only when they are well formed', () => {
    const view = { sessionId: 's', filter: 'tool:Bash', lo: 10.5, hi: 40 };
    assert.deepEqual(readPersistedState({ view, scrollY: 420 }), { view, scrollY: 420 });
    for (const bad of [
      { ...view, lo: -1 },
      { ...view, hi: 10 },
      { ...view, lo: Number.NaN },
      { ...view, filter: 3 },
      { ...view, sessionId: null },
      'view',
    ]) {
      assert.deepEqual(readPersistedState({ view: bad }), {}, JSON.stringify(bad));
    }
    assert.deepEqual(readPersistedState({ scrollY: -5 }), {});
    // Merged per key: a view change keeps the what-if choices and the selection stored beside it.
    assert.deepEqual(mergeState({ whatIf: { n: 4 }, callIndex: 7 }, { view }), {
      whatIf: { n: 4 },
      callIndex: 7,
      view,
    });
  });

  it('merges per key and keeps keys it does not own', () => {
    assert.deepEqual(mergeState({ zoom: 2, sessionId: 'a' }, { sessionId: 'b' }), { zoom: 2, sessionId: 'b' });
    assert.deepEqual(mergeState(null, { showCached: true }), { showCached: true });
  });
});
