import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { patternMatches, readUserPrices } from '../../../../src/core/cost/userPrices';

describe('user prices (agentTrace.prices, --prices FILE)', () => {
  it('reads the three kinds of entry, with defaults for the rates left out', () => {
    const p = readUserPrices({
      prices: [
        { model: 'my-model', input: 2, output: 8 },
        { model: 'claude-*', multiplier: 0.9, since: '2026-01-01' },
        { model: 'Qwen/Qwen3-32B', usdPerGpuHour: 2.5 },
      ],
    });
    assert.deepEqual(p.problems, []);
    // No cache prices given: reads and writes cost the input price.
    assert.deepEqual(p.entries[0], {
      model: 'my-model',
      serviceTier: null,
      sinceMs: null,
      kind: 'tokens',
      input: 2,
      output: 8,
      cacheRead: 2,
      cacheWrite5m: 2,
      cacheWrite1h: 2,
    });
    assert.deepEqual(p.entries[1], {
      model: 'claude-*',
      serviceTier: null,
      sinceMs: Date.UTC(2026, 0, 1),
      kind: 'multiplier',
      multiplier: 0.9,
    });
    assert.deepEqual(p.entries[2], {
      model: 'Qwen/Qwen3-32B',
      serviceTier: null,
      sinceMs: null,
      kind: 'gpu-time',
      usdPerGpuHour: 2.5,
      gpus: 1,
      concurrentSessions: 1,
    });
    assert.deepEqual(readUserPrices([{ model: 'x', input: 1, output: 1 }]).problems, [], 'a bare list works too');
  });

  it('names every problem by entry and field, and leaves those entries out', () => {
    const p = readUserPrices([
      { model: 'a', input: -1, output: 2 },
      { model: '', input: 1, output: 2 },
      { model: 'b', input: 1 },
      { model: 'c', multiplier: 0.5, input: 1, output: 1 },
      { model: 'd', usdPerGpuHour: 'two' },
      { model: 'e', input: 1, output: 1, since: 'yesterday', colour: 'blue' },
      'f',
    ]);
    assert.deepEqual(p.entries, []);
    assert.deepEqual(p.problems, [
      'prices[0].input must be a number ≥ 0, got -1',
      'prices[1].model must be a model name (or a pattern with *), got ""',
      'prices[2] needs both input and output prices (USD per million tokens)',
      'prices[3] needs exactly one of: per-token prices (input and output, USD per million tokens), a multiplier, or usdPerGpuHour',
      'prices[4].usdPerGpuHour must be a number ≥ 0, got "two"',
      'prices[5] has unknown field "colour"',
      'prices[5].since must be a date YYYY-MM-DD, got "yesterday"',
      'prices[6] must be an object, got "f"',
    ]);
    assert.deepEqual(readUserPrices({ model: 'x' }).problems, [
      'prices must be a list of entries, or an object with a "prices" list',
    ]);
  });

  it('patterns: case-insensitive, * for any run, nothing else special', () => {
    assert.ok(patternMatches('claude-*', 'Claude-Opus-4-6'));
    assert.ok(patternMatches('*sonnet*', 'claude-sonnet-4-5-20250929'));
    assert.ok(!patternMatches('gpt-5.1', 'gpt-5x1'), 'a dot is a dot');
    assert.ok(!patternMatches('claude', 'claude-opus'), 'no pattern, exact name');
  });

  it('the first matching entry wins; since limits an entry to calls on or after its date', () => {
    const book = createPriceBook({
      user: readUserPrices([
        { model: 'my-model', since: '2026-03-01', input: 2, output: 8 },
        { model: 'my-*', input: 1, output: 4 },
      ]),
      userLabel: 'mine.json',
    });
    const q = (timeMs: number | null) =>
      book.quote({
        model: 'my-model',
        providerHint: null,
        selfHosted: false,
        timeMs,
        inputTokens: 10,
        serviceTier: null,
        inferenceGeo: null,
      });
    const march = q(Date.UTC(2026, 2, 2));
    const february = q(Date.UTC(2026, 1, 2));
    assert.ok(march.kind === 'tokens' && february.kind === 'tokens');
    assert.ok(Math.abs(march.rates.input * 1e6 - 2) < 1e-9);
    assert.ok(Math.abs(february.rates.input * 1e6 - 1) < 1e-9);
    assert.equal(
      book.source,
      `@pydantic/genai-prices 0.1.8 + price-supplement.json (checked 2026-11-30) + user prices (mine.json)`,
    );
  });

  it('a call without a calendar date is priced as of today, and says so', () => {
    const book = createPriceBook({ todayMs: Date.UTC(2026, 10, 30) });
    const quote = book.quote({
      model: 'claude-haiku-4-5',
      providerHint: 'anthropic',
      selfHosted: false,
      timeMs: 1200,
      inputTokens: 10,
      serviceTier: null,
      inferenceGeo: null,
    });
    assert.equal(quote.kind, 'tokens');
    assert.deepEqual(quote.kind === 'tokens' && quote.notes, ["the call's date is unknown: priced as of 2026-11-30"]);
  });
});
