import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { buildTraceView } from '../../../../src/core/view/traceView';
import {
  customReplay,
  idealRows,
  idealSummary,
  parseTtlMinutes,
  parseWriteMultiple,
  ttlBasisText,
  ttlRows,
} from '../../../../webview/cost/costModel';
import { costGroups } from '../../../../webview/inspector/inspectorModel';
import { costText, tooltipLines } from '../../../../webview/timeline/timelineModel';
import { TraceService } from '../../../../src/core/view/traceService';
import { costWords, failureTitle } from '../../../../src/extension/traceAnalysis';
import { findRetryLoops } from '../../../../src/core/analysis/retryLoops';
import { fixtures, parseFile } from '../../../support/helpers';

// The cost panel, summary, tooltip and bar figures as strings, on the hand-worked fixtures
// (test/unit/core/cost/handWorkedPricing.test.ts and handWorkedTtl.test.ts give the numbers).

const PRICED = join(fixtures, 'canonical/priced-session.trace.jsonl');
const TIMELINE = join(fixtures, 'canonical/ttl-timeline.trace.jsonl');

async function session(path: string) {
  return buildTraceView(await parseFile(path), 'x', false, {}, createPriceBook()).sessions[0]!;
}

describe('cost panel model', () => {
  it('rows for 5 minutes (as logged), 1 hour and the user’s TTL', async () => {
    const s = await session(TIMELINE);
    const what = s.cost!.ttl;
    const custom = customReplay(s.cost!.ttlCalls, what, { minutes: 120, writeMultiple: 3 });
    const rows = ttlRows(what, custom);
    assert.deepEqual(
      rows.map((r) => [r.key, r.ttl, r.writePrice, r.cost, r.change, r.expired, r.tone]),
      [
        ['5m', '5 min', '5-minute write price', '$0.069', 'as logged', '3 calls', 'logged'],
        ['1h', '1 h', '1-hour write price', '$0.063', '−8%', '1 call', 'cheaper'],
        // 53,000 µ$ against 69,025: −23%.
        ['custom', '2 h', '3× the input price', '$0.053', '−23%', '0 calls', 'cheaper'],
      ],
    );
    assert.deepEqual(rows[0]!.expiredCalls, [2, 3, 4]);
    assert.equal(rows[1]!.rewrite, '13,000 tokens, $0.025 more than reading them');
    assert.equal(rows[2]!.rewrite, '—');
    assert.equal(
      ttlBasisText(what),
      'Ran with a 5-minute cache (the log’s cache writes are 5-minute writes); logged cost $0.069 over 6 priced calls.',
    );
  });

  it('reads what the user types', () => {
    assert.equal(parseTtlMinutes(' 30 '), 30);
    assert.equal(parseTtlMinutes('0'), 'The TTL must be more than 0 minutes.');
    assert.equal(parseTtlMinutes('soon'), 'Type a number of minutes.');
    assert.equal(parseTtlMinutes('20000'), 'At most 10,080 minutes (a week).');
    assert.equal(parseWriteMultiple(''), null);
    assert.equal(parseWriteMultiple('1.5'), 1.5);
    assert.equal(parseWriteMultiple('-1'), 'Type a multiple of the input price (1.25, 2), or leave it empty.');
  });

  it('TraceLab rows and the summary sentence', async () => {
    const s = await session(TIMELINE);
    assert.deepEqual(idealRows(s.analysis.idealCache), [
      {
        ttl: '1 min',
        hitRate: '21.9%',
        publishedHitRate: '85.4%',
        amplification: '12.6×',
        publishedAmplification: '18.9×',
      },
      {
        ttl: '5 min',
        hitRate: '37.5%',
        publishedHitRate: '≈94.0%',
        amplification: '10.1×',
        publishedAmplification: '7.4×',
      },
      {
        ttl: '1 h',
        hitRate: '73.5%',
        publishedHitRate: '98.6%',
        amplification: '4.28×',
        publishedAmplification: '1.8×',
      },
    ]);
    assert.equal(
      idealSummary(s.analysis.idealCache),
      "This session's cache served 37.2% of its prompts (93.8% with no TTL) and prefilled 10.1× the genuinely new tokens; TraceLab measured ≈5.3× on deployed caches (8.1× Claude, 3.9× Codex). It behaves like an ideal cache with a 2 min idle TTL.",
    );
  });
});

describe('cost in the summary, tooltip and bars', () => {
  it('summary: total with the unpriced count, kinds, models; an unpriced model reads unknown', async () => {
    const s = await session(PRICED);
    const [kinds, models] = costGroups(s.cost!);
    const value = (g: typeof kinds, name: string) => g!.figures.find((f) => f.name === name)?.value;
    assert.equal(value(kinds, 'costTotal'), '$0.328 + 1 unpriced');
    assert.equal(value(kinds, 'costInput'), '$0.000048');
    assert.equal(value(kinds, 'costCacheWrite1h'), '$0.138');
    assert.deepEqual(
      models!.figures.map((f) => [f.label, f.value]),
      [
        ['claude-opus-4-6', '$0.278'],
        ['claude-haiku-4-5-20251001', '$0.050'],
        ['glm-4.6', 'unknown'],
      ],
    );
  });

  it('tooltip: the call’s dollars by kind, or why they are unknown', async () => {
    const s = await session(PRICED);
    // Call 7: 15 + 5,757.5 + 138,350 + 325 µ$.
    assert.equal(
      costText(s.calls[6]!),
      'Cost: $0.144 (uncached $0.000015, read $0.0058, write 1 h $0.138, output $0.0003)',
    );
    assert.equal(costText(s.calls[5]!), 'Cost: unknown (no price for model "glm-4.6")');
    assert.ok(tooltipLines(s.calls[6]!).includes('Cache write: 13,835 (13,835 for 1 h)'));
  });

  it('bars: the cost columns stack dollars in the same three kinds; an unpriced call is NaN, not zero', async () => {
    const parsed = await parseFile(PRICED);
    const service = new TraceService(parsed, {
      fileName: 'x',
      formatChosen: false,
      analysis: {},
      prices: createPriceBook(),
    });
    const id = parsed.model.sessions[0]!.id;
    const cost = service.sessionBody({ sessionId: id })!.columns.cost!;
    // Call 1: read 8,921 µ$; appended = uncached 15 + written 51,031.25; output 5,225.
    assert.ok(
      Math.abs(cost.cached[0]! - 0.008921) < 1e-12 &&
        Math.abs(cost.appended[0]! - 0.05104625) < 1e-12 &&
        Math.abs(cost.output[0]! - 0.005225) < 1e-12,
    );
    assert.ok([cost.cached[5], cost.appended[5], cost.output[5]].every((v) => Number.isNaN(v)));
    // Without prices there is no cost view to switch to.
    const plain = new TraceService(parsed, { fileName: 'x', formatChosen: false, analysis: {} });
    assert.equal(plain.sessionBody({ sessionId: id })!.columns.cost, null);
    assert.equal(plain.sessionIntro({ sessionId: id })!.cost, null);
  });
});

describe('cost in editor words (CodeLens, notifications, picker)', () => {
  it('numbers only', () => {
    assert.equal(costWords(2.9056013, 0), '$2.91');
    assert.equal(costWords(0.328, 1), '$0.328 + 1 call unpriced');
    assert.equal(costWords(null, 4), 'cost unknown (4 calls unpriced)');
  });

  it('a failing call’s lens adds what carrying its error costs', async () => {
    const parsed = await parseFile(join(fixtures, 'claude-code/edit-retry-loop.jsonl'));
    const s = parsed.model.sessions[0]!;
    const f = findRetryLoops(s, 3).failing.find((x) => x.callIndex === 20)!;
    assert.match(failureTitle(f, 0.000378), /carries ≈24 tokens × 20 calls \(\$0\.0004\)$/);
    assert.match(failureTitle(f, null), /carries ≈24 tokens × 20 calls$/);
  });
});
