import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { priceTrace } from '../../../../src/core/cost/callCost';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { readUserPrices } from '../../../../src/core/cost/userPrices';
import type { LlmCall, Session, TraceModel } from '../../../../src/core/trace/model';
import { fixtures, parseFile } from '../../../support/helpers';

// A session priced call by call on paper. test/fixtures/canonical/priced-session.trace.jsonl
// holds seven real Claude Code calls (test/fixtures/README.md gives each one's source line):
// spotter's first four calls (claude-opus-4-6, 5-minute writes), its first Haiku call, its
// second Haiku call renamed glm-4.6 (a model reached through an Anthropic-compatible proxy,
// which the price library does not know), and user-rejections.jsonl's only call (1-hour writes).
//
// List prices, USD per million tokens (Anthropic's pricing page; the library's data agrees):
//   claude-opus-4-6 (Feb 2026, prompt under 200k): input 5, cache read 0.5, write 5 min 6.25, write 1 h 10, output 25
//   claude-haiku-4-5:                               input 1, cache read 0.1, write 5 min 1.25, write 1 h 2,  output 5
// Each call, in millionths of a dollar (tokens × $/Mtok):
//   1 opus   3 uncached ×5 = 15;  17,842 read ×0.5 = 8,921;    8,165 w5m ×6.25 = 51,031.25;  209 out ×25 = 5,225   → 65,192.25
//   2 opus   1 ×5 = 5;            26,007 ×0.5 = 13,003.5;      1,531 ×6.25 = 9,568.75;       8 ×25 = 200          → 22,777.25
//   3 opus   1 ×5 = 5;            27,538 ×0.5 = 13,769;        1,077 ×6.25 = 6,731.25;       19 ×25 = 475         → 20,980.25
//   4 opus   1 ×5 = 5;            28,615 ×0.5 = 14,307.5;      111 ×6.25 = 693.75;           395 ×25 = 9,875      → 24,881.25
//   5 haiku  3 ×1 = 3;            0;                           39,413 ×1.25 = 49,266.25;     114 ×5 = 570         → 49,839.25
//   6 glm-4.6: no price → unknown, not $0
//   7 opus   3 ×5 = 15;           11,515 ×0.5 = 5,757.5;       13,835 w1h ×10 = 138,350;     13 ×25 = 325         → 144,447.5
// Total of the priced calls: 328,117.75 µ$ = $0.32811775.
// By kind: input 48; cache read 55,758.5; write 5 min 117,291.25; write 1 h 138,350; output 16,670 (µ$).
// By model: opus 278,278.5; haiku 49,839.25; glm-4.6 unknown.

const PRICED = join(fixtures, 'canonical/priced-session.trace.jsonl');
const µ = 1e-6;

function close(actual: number | null, expected: number, what: string): void {
  assert.notEqual(actual, null, `${what} is null`);
  assert.ok(Math.abs(actual! - expected) < 1e-12, `${what}: ${actual} ≠ ${expected}`);
}

async function priced(prices?: unknown) {
  const parsed = await parseFile(PRICED);
  assert.deepEqual(parsed.model.diagnostics, []);
  const book = createPriceBook(prices === undefined ? {} : { user: readUserPrices(prices), userLabel: 'test' });
  return { model: parsed.model, cost: priceTrace(parsed.model, book) };
}

describe('pricing a session call by call (hand-worked)', () => {
  it('prices each call as on paper, and the glm-4.6 call as unknown', async () => {
    const { cost } = await priced();
    const calls = [...cost.sessions[0]!.calls];
    const expected = [65192.25, 22777.25, 20980.25, 24881.25, 49839.25, null, 144447.5];
    calls.forEach((c, i) => {
      if (expected[i] === null) assert.equal(c.usd, null, `call ${i + 1}`);
      else close(c.usd, expected[i]! * µ, `call ${i + 1}`);
    });
    assert.match(calls[5]!.unpriced!, /no price for model "glm-4\.6"/);
    close(calls[0]!.byKind!.cacheWrite5m, 51031.25 * µ, 'call 1 5-minute writes');
    close(calls[6]!.byKind!.cacheWrite1h, 138350 * µ, 'call 7 1-hour writes');
    assert.equal(calls[6]!.byKind!.cacheWrite5m, 0);
  });

  it('totals the priced calls, by kind and by model, and counts the unpriced one', async () => {
    const { cost } = await priced();
    const s = cost.sessions[0]!;
    close(s.totalUsd, 328117.75 * µ, 'total');
    close(s.byKind.input, 48 * µ, 'input');
    close(s.byKind.cacheRead, 55758.5 * µ, 'cache read');
    close(s.byKind.cacheWrite5m, 117291.25 * µ, 'write 5 min');
    close(s.byKind.cacheWrite1h, 138350 * µ, 'write 1 h');
    close(s.byKind.output, 16670 * µ, 'output');
    assert.equal(s.byKind.gpuTime, 0);
    assert.deepEqual([s.pricedCalls, s.unpricedCalls], [6, 1]);
    close(s.byModel['claude-opus-4-6']!.usd, 278278.5 * µ, 'opus');
    close(s.byModel['claude-haiku-4-5-20251001']!.usd, 49839.25 * µ, 'haiku');
    assert.deepEqual(s.byModel['glm-4.6'], { usd: null, calls: 1, unpricedCalls: 1 });
    // The whole trace is this one session.
    close(cost.total.totalUsd, 328117.75 * µ, 'trace total');
  });

  it('names the unknown model in one diagnostic, at its call', async () => {
    const { cost, model } = await priced();
    const warnings = cost.diagnostics.filter((d) => d.severity === 'warning');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!.message, /^Cost unknown for 1 call: no price for model "glm-4\.6"\. Add a price/);
    assert.equal(warnings[0]!.line, model.sessions[0]!.calls[5]!.source.line);
  });

  it('a user price prices the unknown model: 7×0.6 + 39,413×0.11 + 136×0.6 (a write at the input rate) + 157×2.2 = 4,766.63 µ$', async () => {
    const { cost } = await priced({ prices: [{ model: 'glm-4.6', input: 0.6, cacheRead: 0.11, output: 2.2 }] });
    const s = cost.sessions[0]!;
    close(s.calls.at(5)!.usd, 4766.63 * µ, 'glm-4.6 call');
    assert.equal(s.calls.at(5)!.origin, 'user');
    assert.equal(s.unpricedCalls, 0);
    close(s.totalUsd, (328117.75 + 4766.63) * µ, 'total');
    assert.match(s.priceSource, /\+ user prices \(test\)$/);
  });

  it('a negotiated discount multiplies list prices; a per-GPU-hour price charges the call’s duration', async () => {
    const { cost } = await priced({
      prices: [
        { model: 'claude-*', multiplier: 0.8 },
        // $3.60 per GPU-hour × 2 GPUs shared by 4 sessions = $1.80 an hour; call 6 ran 14:13:08.476 → 14:13:11.162 = 2.686 s.
        { model: 'GLM-4.6', usdPerGpuHour: 3.6, gpus: 2, concurrentSessions: 4 },
      ],
    });
    const s = cost.sessions[0]!;
    close(s.calls.at(0)!.usd, 65192.25 * 0.8 * µ, 'call 1 at 80%');
    close(s.calls.at(5)!.usd, (2.686 / 3600) * 1.8, 'call 6 by GPU time');
    close(s.byKind.gpuTime, (2.686 / 3600) * 1.8, 'GPU time');
    close(s.totalUsd, 328117.75 * 0.8 * µ + (2.686 / 3600) * 1.8, 'total');
  });
});

/** A one-session trace of the given calls, for the rules below. */
function trace(calls: Array<Partial<LlmCall> & Pick<LlmCall, 'model' | 'tokens'>>, agent = 'claude-code'): TraceModel {
  const session: Session = {
    id: 's',
    parentId: null,
    parentToolCallId: null,
    role: 'main',
    agent: { name: agent, version: null },
    model: null,
    cwd: null,
    title: null,
    turns: [],
    compactions: [],
    calls: calls.map((c, index) => ({
      id: `c${index}`,
      index,
      turn: null,
      startMs: null,
      endMs: null,
      server: null,
      blocks: null,
      toolCalls: [],
      source: { file: 0, line: index, offset: 0 },
      ...c,
    })),
  };
  return {
    format: 'agent-trace',
    files: ['t.trace.jsonl'],
    sessions: [session],
    diagnostics: [],
    skippedRecords: {},
    limitations: [],
  };
}

function tokens(uncached: number, read: number, write5m: number, output: number, write1h = 0) {
  const write = write5m + write1h;
  return {
    input: uncached + read + write,
    cached: read,
    appended: uncached + write,
    cacheWrite: write,
    output,
    reasoningOutput: null,
    cacheWrite5m: write5m,
    cacheWrite1h: write1h,
  };
}

const FEB_12 = Date.UTC(2026, 1, 12, 14);
const APR_1 = Date.UTC(2026, 3, 1, 14);

describe('per-request tiers, price history, service tiers and regions (hand-worked, constructed calls)', () => {
  it('Sonnet 4.5 bills a request over 200k input tokens at its long-context rates; summing first would bill both calls that way', () => {
    // 150,000 in: 10×3 + 140,000×0.3 + 9,990×3.75 + 1,000×15 = 94,492.5 µ$.
    // 250,000 in (rates 6 / 0.6 / 7.5 / 22.5): 10×6 + 240,000×0.6 + 9,990×7.5 + 1,000×22.5 = 241,485 µ$.
    // Priced as one 400,000-token request: 20×6 + 380,000×0.6 + 19,980×7.5 + 2,000×22.5 = 422,970 µ$: wrong.
    const model = trace([
      { model: 'claude-sonnet-4-5-20250929', startMs: FEB_12, tokens: tokens(10, 140_000, 9_990, 1_000) },
      { model: 'claude-sonnet-4-5-20250929', startMs: FEB_12, tokens: tokens(10, 240_000, 9_990, 1_000) },
    ]);
    const s = priceTrace(model, createPriceBook()).sessions[0]!;
    close(s.calls.at(0)!.usd, 94492.5 * µ, '150k call');
    close(s.calls.at(1)!.usd, 241485 * µ, '250k call');
    close(s.totalUsd, 335977.5 * µ, 'total');
    assert.notEqual(Math.round(s.totalUsd! * 1e6), 422970);
    assert.deepEqual(s.calls.at(1)!.notes, ['long-context tier (input over 200,000 tokens)']);
  });

  it('prices a call as of its date: Opus 4.6 dropped its long-context tier on 2026-03-13', () => {
    // 250,000 in, 240,000 read, 10,000 written (5 min), 1,000 out.
    // 12 Feb (tier 10 / 1 / 12.5 / 37.5): 240,000×1 + 10,000×12.5 + 1,000×37.5 = 402,500 µ$.
    // 1 Apr (flat 5 / 0.5 / 6.25 / 25):   240,000×0.5 + 10,000×6.25 + 1,000×25 = 207,500 µ$.
    const model = trace([
      { model: 'claude-opus-4-6', startMs: FEB_12, tokens: tokens(0, 240_000, 10_000, 1_000) },
      { model: 'claude-opus-4-6', startMs: APR_1, tokens: tokens(0, 240_000, 10_000, 1_000) },
    ]);
    const s = priceTrace(model, createPriceBook()).sessions[0]!;
    close(s.calls.at(0)!.usd, 402500 * µ, '12 February');
    close(s.calls.at(1)!.usd, 207500 * µ, '1 April');
  });

  it('batch halves the price, US-only inference adds 10%, priority has no public price', () => {
    // Haiku call 5 above (49,839.25 µ$) in the batch tier: 24,919.625 µ$. Opus call 1 (65,192.25 µ$) run in the US: 71,711.475 µ$.
    const model = trace([
      { model: 'claude-haiku-4-5-20251001', startMs: FEB_12, serviceTier: 'batch', tokens: tokens(3, 0, 39_413, 114) },
      { model: 'claude-opus-4-6', startMs: FEB_12, inferenceGeo: 'us', tokens: tokens(3, 17_842, 8_165, 209) },
      { model: 'claude-opus-4-6', startMs: FEB_12, serviceTier: 'priority', tokens: tokens(3, 17_842, 8_165, 209) },
    ]);
    const cost = priceTrace(model, createPriceBook());
    const s = cost.sessions[0]!;
    close(s.calls.at(0)!.usd, 24919.625 * µ, 'batch');
    assert.deepEqual(s.calls.at(0)!.notes, ['service tier batch ×0.5']);
    assert.equal(s.calls.at(0)!.origin, 'supplement');
    close(s.calls.at(1)!.usd, 71711.475 * µ, 'US-only');
    assert.equal(s.calls.at(2)!.usd, null);
    assert.match(
      cost.diagnostics[0]!.message,
      /service tier "priority" has no public anthropic price \(model "claude-opus-4-6"\)/,
    );
    // A user price for the priority tier prices it.
    const withMine = priceTrace(
      model,
      createPriceBook({
        user: readUserPrices([
          {
            model: 'claude-opus-4-6',
            serviceTier: 'priority',
            input: 5,
            cacheRead: 0.5,
            cacheWrite5m: 6.25,
            cacheWrite1h: 10,
            output: 25,
          },
        ]),
      }),
    );
    close(withMine.sessions[0]!.calls.at(2)!.usd, 65192.25 * µ, 'priority at a user price');
    // …and only that tier: the US call keeps its list price.
    close(withMine.sessions[0]!.calls.at(1)!.usd, 71711.475 * µ, 'US-only unchanged');
  });

  it('a missing count is unknown, never 0; a self-hosted serving trace needs a user price', () => {
    const model = trace([
      {
        model: 'claude-haiku-4-5-20251001',
        tokens: { input: null, cached: null, appended: null, cacheWrite: null, output: 5, reasoningOutput: null },
      },
    ]);
    const s = priceTrace(model, createPriceBook()).sessions[0]!;
    assert.equal(s.totalUsd, null);
    assert.equal(s.calls.at(0)!.unpriced, 'its prompt token count is unknown');
    const served = {
      ...trace([{ model: 'gpt-4o-mini', tokens: tokens(100, 0, 0, 10) }]),
      format: 'vllm-bench' as const,
    };
    const c = priceTrace(served, createPriceBook());
    assert.equal(c.total.totalUsd, null);
    assert.match(c.diagnostics[0]!.message, /"gpt-4o-mini" runs on your own server: give it a price per GPU-hour/);
  });
});
