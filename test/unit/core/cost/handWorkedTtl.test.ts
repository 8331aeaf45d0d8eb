import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { idealTtlCurve } from '../../../../src/core/analysis/idealTtlCache';
import { priceTrace } from '../../../../src/core/cost/callCost';
import { cacheTtlWhatIf, replayTtl, ttlCalls } from '../../../../src/core/cost/cacheTtlWhatIf';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { buildTraceReport } from '../../../../src/core/report/traceReport';
import { fixtures, parseFile } from '../../../support/helpers';

// The TTL replay on a small hand-built timeline (test/fixtures/canonical/ttl-timeline.trace.jsonl):
// six Claude Haiku 4.5 calls of 10 s each, 5-minute cache writes, with idle gaps of
// 2 min, 7 min, 40 min, 90 min and 30 s before calls 1–5. Tokens (prompt = read + written):
//   call  gap     read    written  output   as logged
//   0     —          0     10,000    100    first call writes its prompt
//   1     2 min  10,000     1,000    100    hit
//   2     7 min      0     12,000    100    the 5-minute cache expired: all written again
//   3     40 min     0     13,000    100    expired
//   4     90 min     0     14,000    100    expired
//   5     30 s   14,000       500    200    hit
// Haiku 4.5, USD per million tokens: input 1, read 0.1, write 5 min 1.25, write 1 h 2, output 5.
//
// As logged (µ$): 0: 10,000×1.25 + 100×5 = 13,000; 1: 1,000 + 1,250 + 500 = 2,750; 2: 15,000 + 500 = 15,500;
//   3: 16,250 + 500 = 16,750; 4: 17,500 + 500 = 18,000; 5: 1,400 + 625 + 1,000 = 3,025.  Total 69,025.
// What an expired call could have read (the previous call's cached prefix, within its own):
//   2: min(12,000, 11,000) = 11,000;  3: min(13,000, 12,000) = 12,000;  4: min(14,000, 13,000) = 13,000.
// 5 minutes (write 1.25): the log itself, 69,025. Expired: calls 2, 3, 4; 36,000 tokens written
//   instead of read, costing 36,000 × (1.25 − 0.1) = 41,400 µ$ more.
// 1 hour (write 2): 0: 10,000×2 + 500 = 20,500; 1: 1,000 + 1,000×2 + 500 = 3,500; 2: 11,000×0.1 + 1,000×2 + 500 = 3,600;
//   3: 1,200 + 2,000 + 500 = 3,700; 4 (90 min > 1 h, still expired): 14,000×2 + 500 = 28,500; 5: 1,400 + 500×2 + 1,000 = 3,400.
//   Total 63,200 µ$, −5,825 = −8.4%. Expired: call 4 only; 13,000 × (2 − 0.1) = 24,700 µ$.
// 90 s, 5-minute price: call 1's 2-minute gap now outlasts the TTL: it reads 0 and writes 11,000
//   (13,750 + 500 = 14,250 instead of 2,750): 80,525 µ$; expired 1, 2, 3, 4; 46,000 tokens, 52,900 µ$.
// 2 h at 3× the input price: nothing expires. 0: 30,000 + 500; 1: 1,000 + 3,000 + 500; 2: 1,100 + 3,000 + 500;
//   3: 1,200 + 3,000 + 500; 4: 1,300 + 3,000 + 500; 5: 1,400 + 1,500 + 1,000: 53,000 µ$.

const TIMELINE = join(fixtures, 'canonical/ttl-timeline.trace.jsonl');
const µ = 1e-6;
const MIN = 60_000;

function close(actual: number | null, expected: number, what: string): void {
  assert.notEqual(actual, null, `${what} is null`);
  assert.ok(Math.abs(actual! - expected) < 1e-12, `${what}: ${actual} ≠ ${expected}`);
}

async function timeline() {
  const parsed = await parseFile(TIMELINE);
  assert.deepEqual(parsed.model.diagnostics, []);
  const session = parsed.model.sessions[0]!;
  const cost = priceTrace(parsed.model, createPriceBook()).sessions[0]!;
  return { session, cost, calls: ttlCalls(session, cost) };
}

describe('provider cache TTL what-if (hand-worked timeline)', () => {
  it('reads the gaps and the logged cost', async () => {
    const { calls, cost } = await timeline();
    assert.deepEqual(
      calls.map((c) => c.gapMs),
      [null, 2 * MIN, 7 * MIN, 40 * MIN, 90 * MIN, 30_000],
    );
    close(cost.totalUsd, 69025 * µ, 'as logged');
  });

  it('5 minutes reproduces the log and lists the calls that re-wrote the cache', async () => {
    const { calls } = await timeline();
    const r = replayTtl(calls, { ttlMs: 5 * MIN, write: '5m' });
    close(r.costUsd, 69025 * µ, '5 min');
    assert.deepEqual(r.expiredCalls, [2, 3, 4]);
    assert.equal(r.rewriteTokens, 36000);
    close(r.rewriteUsd, 41400 * µ, 'rewrite');
  });

  it('1 hour wins back the 7- and 40-minute gaps but not the 90-minute one, at the 1-hour write price', async () => {
    const { calls } = await timeline();
    const r = replayTtl(calls, { ttlMs: 60 * MIN, write: '1h' });
    close(r.costUsd, 63200 * µ, '1 h');
    close(r.deltaUsd, -5825 * µ, 'delta');
    assert.deepEqual(r.expiredCalls, [4]);
    assert.equal(r.rewriteTokens, 13000);
    close(r.rewriteUsd, 24700 * µ, 'rewrite');
  });

  it('a custom TTL shorter than a gap the log survived makes that call expire too', async () => {
    const { calls } = await timeline();
    const r = replayTtl(calls, { ttlMs: 1.5 * MIN, write: '5m' });
    close(r.costUsd, 80525 * µ, '90 s');
    assert.deepEqual(r.expiredCalls, [1, 2, 3, 4]);
    assert.equal(r.rewriteTokens, 46000);
    close(r.rewriteUsd, 52900 * µ, 'rewrite');
  });

  it('a custom TTL with its own write price', async () => {
    const { calls } = await timeline();
    const r = replayTtl(calls, { ttlMs: 120 * MIN, write: { inputMultiple: 3 } });
    close(r.costUsd, 53000 * µ, '2 h at 3×');
    assert.deepEqual(r.expiredCalls, []);
    assert.equal(r.writeLabel, '3× the input price');
  });

  it('the report replays the same timeline (it streams the calls instead of keeping an array of them)', async () => {
    const parsed = await parseFile(TIMELINE);
    const book = createPriceBook();
    const custom = { ttlMs: 1.5 * MIN, write: '5m' as const };
    const ttl = buildTraceReport(parsed, {}, { book, customTtl: custom }).sessions[0]!.cacheTtl!;
    close(ttl.actualUsd, 69025 * µ, 'as logged');
    assert.deepEqual(
      ttl.replays.map((r) => r.ttlMin),
      [5, 60, 1.5],
    );
    close(ttl.replays[0]!.costUsd, 69025 * µ, '5 min');
    close(ttl.replays[1]!.costUsd, 63200 * µ, '1 h');
    close(ttl.replays[2]!.costUsd, 80525 * µ, '90 s');
    // 1-based in the report: calls 2, 3, 4 (0-based) are 3, 4, 5.
    assert.deepEqual(ttl.replays[0]!.expiredCalls, [3, 4, 5]);
    assert.deepEqual(ttl.replays[1]!.expiredCalls, [5]);
    assert.deepEqual(ttl.replays[2]!.expiredCalls, [2, 3, 4, 5]);
    assert.equal(ttl.replays[2]!.rewriteTokens, 46000);
  });

  it('says it in one sentence', async () => {
    const { calls } = await timeline();
    const w = cacheTtlWhatIf(calls);
    assert.equal(w.actualTtlMs, 5 * MIN);
    assert.equal(w.actualTtlBasis, 'the log’s cache writes are 5-minute writes');
    assert.equal(
      w.sentence,
      'With 1-hour caching this session would have cost $0.063 (−8%); 3 calls re-wrote the cache after a gap longer than 5 min.',
    );
  });
});

describe('ideal cache with an idle TTL, TraceLab’s way (hand-worked timeline)', () => {
  // Steps are calls 1–5 (each with its predecessor). fresh = growth − previous output, within appended:
  //   1: (11,000 − 10,000) − 100 = 900;  2: 900;  3: 900;  4: 900;  5: (14,500 − 14,000) − 100 = 400.  Σ fresh 4,000.
  // cacheable = prompt − fresh: 10,100, 11,100, 12,100, 13,100, 14,100 (Σ 60,500); Σ prompt 64,500.
  // Hit rate at 1 min (only the 30-s gap kept): 14,100 / 64,500 = 21.86%; at 5 min (+ the 2-min gap): 24,200 / 64,500 = 37.52%;
  //   at 1 h (+ 7 and 40 min): 47,400 / 64,500 = 73.49%; with no TTL: 60,500 / 64,500 = 93.80%.
  // Amplification = (Σ fresh + cacheable of evicted steps) / Σ fresh: 1 min (4,000 + 46,400) / 4,000 = 12.6×;
  //   5 min (4,000 + 36,300) / 4,000 = 10.075×; 1 h (4,000 + 13,100) / 4,000 = 4.275×.
  // The real cache: Σ cached / Σ prompt = 24,000 / 64,500 = 37.21%; Σ appended / Σ fresh = 40,500 / 4,000 = 10.125×.
  // Effective TTL: by gap, 30 s gives 21.86%, 2 min gives 37.52% ≥ 37.21%: 2 minutes.
  it('matches the paper figures', async () => {
    const { session } = await timeline();
    const c = idealTtlCurve(session);
    assert.equal(c.steps, 5);
    assert.deepEqual(
      c.points.map((p) => p.label),
      ['1 min', '5 min', '1 h'],
    );
    const expect = [
      [14100 / 64500, 12.6],
      [24200 / 64500, 10.075],
      [47400 / 64500, 4.275],
    ];
    c.points.forEach((p, i) => {
      close(p.hitRate, expect[i]![0]!, `${p.label} hit rate`);
      close(p.amplification, expect[i]![1]!, `${p.label} amplification`);
    });
    close(c.optimalHitRate, 60500 / 64500, 'optimal');
    close(c.realHitRate, 24000 / 64500, 'real hit rate');
    close(c.realAmplification, 10.125, 'real amplification');
    assert.equal(c.effectiveTtlMs, 2 * MIN);
    assert.deepEqual(c.points[0]!.published, { hitRate: 0.854, amplification: 18.9, approximate: false });
  });
});

describe('the replay at the TTL a session ran with reproduces what it paid (real samples)', () => {
  // Sessions whose writes all have one TTL (or none: automatic caching): replayed at that TTL with
  // that TTL's write price, every call costs what the log says.
  const cases: Array<[string, string, 5 | 60]> = [
    ['spotter main session (5-minute writes)', 'claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl', 5],
    ['M-Claude session (5-minute writes)', 'claude-code/edit-retry-loop.jsonl', 5],
    ['user-rejections (1-hour writes)', 'claude-code/user-rejections.jsonl', 60],
    ['Codex 0.114 (automatic caching)', 'codex/tracelab-agents-md-0.114.jsonl', 5],
  ];
  for (const [name, rel, minutes] of cases) {
    it(name, async () => {
      const parsed = await parseFile(join(fixtures, rel));
      const costs = priceTrace(parsed.model, createPriceBook());
      const session = parsed.model.sessions[0]!;
      const calls = ttlCalls(session, costs.sessions[0]!);
      const r = replayTtl(calls, { ttlMs: minutes * MIN, write: minutes === 60 ? '1h' : '5m' });
      assert.ok(
        Math.abs(r.costUsd! - costs.sessions[0]!.totalUsd!) < 1e-12,
        `${r.costUsd} ≠ ${costs.sessions[0]!.totalUsd}`,
      );
      assert.equal(cacheTtlWhatIf(calls).actualTtlMs, minutes * MIN);
    });
  }
});
