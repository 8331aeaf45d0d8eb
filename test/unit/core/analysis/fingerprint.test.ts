import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeMs, prefillMs, QWEN3_32B_H100 } from '../../../../src/core/analysis/costModel';
import type { CostModel } from '../../../../src/core/analysis/costModel';
import {
  compareToRange,
  DEFAULT_FINGERPRINT_OPTIONS,
  fingerprint,
  PUBLISHED_RANGES,
} from '../../../../src/core/analysis/fingerprint';
import { DEFAULT_INTENT_MAPPING, toolIntent } from '../../../../src/core/analysis/toolTaxonomy';
import {
  formatCompact,
  formatCount,
  formatDuration,
  formatPercent,
  formatRatio,
} from '../../../../src/core/text/formatNumbers';
import { ok, SessionBuilder } from '../../../support/sessionBuilder';

/** Round numbers so the estimate can be checked by hand: 1 ms per prefill token, 10 ms per decode step. */
const SIMPLE: CostModel = {
  label: 'simple',
  stepFixedMs: 10,
  prefillUsPerToken: 1000,
  prefillAttnUsPerTokenPerKctx: 0,
  kvReadNsPerToken: 0,
  decodeUsPerSeq: 0,
};

describe('workload fingerprint', () => {
  it('estimates the prefill share with the cost model when there are no server timings', () => {
    // prefill 100 + 300 ms; decode 10 × 10 + 20 × 10 ms → 400 / (400 + 300) = 4/7.
    const s = new SessionBuilder()
      .call({ cached: 0, appended: 100, input: 100, output: 10 })
      .call({ cached: 100, appended: 300, input: 400, output: 20 })
      .build();
    const f = fingerprint(s, { ...DEFAULT_FINGERPRINT_OPTIONS, costModel: SIMPLE });
    assert.equal(f.prefillShare.estimated, true);
    assert.ok(Math.abs(f.prefillShare.value! - 4 / 7) < 1e-12);
    assert.match(f.prefillShare.basis, /^estimated: simple/);
  });

  it('measures it from server timings when calls have them', () => {
    const server = (prefillMs: number, decodeMs: number) => ({
      server: { queueMs: null, ttftMs: null, prefillMs, decodeMs, e2eMs: null },
    });
    const s = new SessionBuilder()
      .call({ appended: 5, output: 5 }, [], server(30, 70))
      .call({ appended: 5, output: 5 }, [], server(10, 90))
      .build();
    const f = fingerprint(s);
    // (30 + 10) / (30 + 70 + 10 + 90) = 0.2
    assert.deepEqual(f.prefillShare, {
      value: 0.2,
      estimated: false,
      basis: 'server prefill and decode times of 2 calls',
    });
  });

  it('the default cost model follows docs/design/simulator.md §5: Qwen3-32B on an H100', () => {
    // 1k new tokens after 19k cached: 1000 × (132.7 + 4.2 × 19.5) µs = 214.6 ms (the §5 example says ≈ 0.21 s).
    assert.ok(Math.abs(prefillMs(QWEN3_32B_H100, 19_000, 1_000) - 214.6) < 1e-9);
    // One output token after a 10k prompt: 23 ms + 10,000.5 × 92 ns.
    assert.ok(Math.abs(decodeMs(QWEN3_32B_H100, 10_000, 1) - (23 + 10_000.5 * 92e-6)) < 1e-9);
  });

  it('tool calls by tool, with latency median and p90', () => {
    const s = new SessionBuilder()
      .call({}, [ok('Bash', { durationMs: 100 }), ok('Bash', { durationMs: 300, isError: true })])
      .call({}, [ok('Bash', { durationMs: 200 }), ok('Read', { durationMs: 5 })])
      .build();
    const t = fingerprint(s).tools;
    assert.equal(t.total, 4);
    assert.equal(t.failed, 1);
    // Bash latencies 100, 300, 200: median 200, p90 = 200 + 0.8 × (300 − 200) = 280.
    assert.deepEqual(t.byTool['Bash'], {
      total: 3,
      failed: 1,
      failureRate: 1 / 3,
      latencyMsMedian: 200,
      latencyMsP90: 280,
    });
    assert.equal(t.toolTimeMs, 605);
  });

  it('exploration vs execution by quarter of the calls', () => {
    const one = (name: string, command: string | null = null) => [ok(name, { command })];
    const s = new SessionBuilder()
      .call({}, one('Read'))
      .call({}, one('Read'))
      .call({}, one('Bash', 'ls -la src'))
      .call({}, one('Edit'))
      .call({}, one('Bash', 'npm test'))
      .call({}, one('Write'))
      .call({}, one('Grep'))
      .call({}, one('mcp__custom__thing'))
      .build();
    assert.deepEqual(fingerprint(s).intentByQuartile, [
      { explore: 2, execute: 0, other: 0 },
      { explore: 1, execute: 1, other: 0 },
      { explore: 0, execute: 2, other: 0 },
      { explore: 1, execute: 0, other: 1 },
    ]);
    assert.equal(
      toolIntent({ name: 'Bash', command: 'cd x && git status && grep -r foo .' } as never, DEFAULT_INTENT_MAPPING),
      'explore',
    );
    assert.equal(
      toolIntent({ name: 'Bash', command: 'git status && rm -rf x' } as never, DEFAULT_INTENT_MAPPING),
      'execute',
    );
  });

  it('context growth leaves out the compaction step; a compaction costs its lost cache', () => {
    const s = new SessionBuilder()
      .call({ input: 100 })
      .call({ input: 200 })
      .call({ input: 350 })
      .compaction()
      .call({ input: 50, cached: 20, appended: 30 })
      .call({ input: 80 })
      .build();
    const f = fingerprint(s);
    // mean (100 + 200 + 350 + 50 + 80) / 5 = 156; growth (100 + 150 + 30) / 3.
    assert.deepEqual(f.context, { meanTokens: 156, maxTokens: 350, growthPerCall: 280 / 3 });
    // 350 before, 20 came back from the cache: 330 lost, 30 prefilled again.
    assert.deepEqual(f.compactions, [
      { beforeCall: 3, contextBefore: 350, lostCachedTokens: 330, reprefillTokens: 30 },
    ]);
  });

  it('compares figures to the published agent ranges', () => {
    assert.equal(compareToRange(0.984, PUBLISHED_RANGES.cacheHitRate), 'within');
    assert.equal(compareToRange(0.58, PUBLISHED_RANGES.cacheHitRate), 'below');
    assert.equal(compareToRange(600, PUBLISHED_RANGES.rawInputToOutput), 'above');
    assert.equal(compareToRange(null, PUBLISHED_RANGES.decodeShare), null);
  });
});

describe('figures that are not numbers', () => {
  it('NaN and ±Infinity have no place in a published range and print as unknown', () => {
    for (const v of [Number.NaN, Infinity, -Infinity]) {
      assert.equal(compareToRange(v, PUBLISHED_RANGES.cacheHitRate), null);
      for (const f of [formatPercent, formatRatio, formatCount, formatCompact, formatDuration])
        assert.equal(f(v), 'unknown');
    }
    assert.equal(compareToRange(0.9, PUBLISHED_RANGES.cacheHitRate), 'within');
  });
});
