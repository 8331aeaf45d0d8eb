import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { priceTrace } from '../../../../src/core/cost/callCost';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { repriceOn } from '../../../../src/core/cost/repriceModel';
import { fixtures, parseFile } from '../../../support/helpers';

// The hand-built timeline of handWorkedTtl.test.ts: six Claude Haiku 4.5 calls costing 69,025 µ$
// (input 1, read 0.1, write 5 min 1.25, output 5 $/M). Claude Sonnet 4.5's list prices are 3, 0.3,
// 3.75 and 15 $/M (Anthropic's pricing page; no prompt here reaches its 200k long-context tier):
// exactly three times Haiku's, so on Sonnet the same token split costs 3 × 69,025 = 207,075 µ$, +200%.
// GPT-5 (OpenAI: input 1.25, cached 0.125, output 10 $/M; no write price, so writes bill as input):
//   written tokens 10,000 + 1,000 + 12,000 + 13,000 + 14,000 + 500 = 50,500 × 1.25 = 63,125
//   read 10,000 + 14,000 = 24,000 × 0.125 = 3,000; output 5 × 100 + 200 = 700 × 10 = 7,000
//   total 73,125 µ$, +5.9% (rounded +6%).

describe('the same session on another model', () => {
  it('re-prices each call with the other model’s rates, saying the tokenizer would differ', async () => {
    const parsed = await parseFile(join(fixtures, 'canonical/ttl-timeline.trace.jsonl'));
    const book = createPriceBook();
    const cost = priceTrace(parsed.model, book);
    const sonnet = repriceOn(parsed.model, cost, book, 'claude-sonnet-4-5');
    assert.ok(Math.abs(sonnet.loggedUsd! - 0.069025) < 1e-12);
    assert.ok(Math.abs(sonnet.usd! - 0.207075) < 1e-12, String(sonnet.usd));
    assert.equal(sonnet.calls, 6);
    assert.match(
      sonnet.sentence,
      /^On claude-sonnet-4-5 this session would have cost \$0\.207, \+200% against \$0\.069 as logged\. The token counts are the logged model’s: a different tokenizer/,
    );
    const gpt = repriceOn(parsed.model, cost, book, 'gpt-5');
    assert.ok(Math.abs(gpt.usd! - 0.073125) < 1e-12, String(gpt.usd));
    assert.match(gpt.sentence, /\+6% against/);
    const none = repriceOn(parsed.model, cost, book, 'no-such-model-xyz');
    assert.deepEqual([none.usd, none.leftOut], [null, 6]);
    assert.match(
      none.sentence,
      /No call could be priced on no-such-model-xyz \(6 calls left out: no price for model "no-such-model-xyz"\)/,
    );
  });
});
