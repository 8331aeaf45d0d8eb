import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type * as GenaiPrices from '@pydantic/genai-prices';
import { priceListAsJson } from '../../../scripts/priceListAsJson.mjs';
import { repoRoot } from '../../support/helpers';

// The build writes the price list of @pydantic/genai-prices as JSON.parse of its own data
// (scripts/priceListAsJson.mjs, docs/performance.md "Issue 27, ninth session"): the same
// data, the library's code untouched, or the build fails.

/** The values of the first declaration of `source`, evaluated. */
function declared(source: string): unknown[] {
  const end = source.indexOf(';\n');
  const names = [...source.slice(0, end).matchAll(/(?:^const |, )(\w+) = /g)].map((m) => m[1]!);
  return new Function(`${source.slice(0, end + 1)} return [${names.join(', ')}];`)() as unknown[];
}

describe('the price list as JSON', () => {
  it('writes each literal of the first declaration as JSON.parse of the same data, and leaves the rest', () => {
    const source =
      'const E = [{ id: "a", ok: !0, no: !1, s: "x]}\\" \'`", n: 1e3, nested: { list: [0.5, null] } }], J = { per: 36e2 };\nfunction keep() { return E; }\n';
    const out = priceListAsJson(source);
    assert.match(out, /^const E = JSON\.parse\(.*\), J = JSON\.parse\(.*\);\nfunction keep\(\) \{ return E; \}\n$/s);
    assert.deepEqual(declared(out), [
      [{ id: 'a', ok: true, no: false, s: 'x]}" \'`', n: 1000, nested: { list: [0.5, null] } }],
      { per: 3600 },
    ]);
  });

  it('fails the build on anything JSON would not carry unchanged, or on a file of another shape', () => {
    assert.throws(() => priceListAsJson('const E = [{ a: void 0 }];\n'), /E\[0\]\.a is not JSON data/);
    assert.throws(() => priceListAsJson('const E = [/x/];\n'), /E\[0\] is not JSON data/);
    assert.throws(() => priceListAsJson('const E = [1, , 2];\n'), /E\[1\] is a hole/);
    assert.throws(() => priceListAsJson('const E = [1 / 0];\n'), /E\[0\] is Infinity/);
    assert.throws(() => priceListAsJson('const E = [-0];\n'), /E\[0\] is 0/);
    assert.throws(() => priceListAsJson('let E = [1];\n'), /no longer opens with its price list/);
    assert.throws(() => priceListAsJson('const E = [1] + 2;\n'), /unexpected text after the price list/);
  });

  it('gives the library the same prices: every call of calcPrice and findProvider tried answers alike', async () => {
    const file = join(repoRoot, 'node_modules/@pydantic/genai-prices/dist/index.js');
    const source = readFileSync(file, 'utf8');
    const rewritten = priceListAsJson(source);
    assert.ok(rewritten.length < source.length);
    type Library = typeof GenaiPrices;
    const original = createRequire(__filename)('@pydantic/genai-prices') as Library;
    const asJson = (await import(
      `data:text/javascript;base64,${Buffer.from(rewritten).toString('base64')}`
    )) as Library;
    const usage = { input_tokens: 300_000, cache_read_tokens: 1000, cache_write_tokens: 500, output_tokens: 2000 };
    const when = { timestamp: new Date('2026-01-15T12:00:00Z') };
    for (const [model, providerId] of [
      ['claude-opus-4-6', 'anthropic'],
      ['claude-haiku-4-5-20251001', 'anthropic'],
      ['claude-sonnet-4-5', 'anthropic'],
      ['gpt-5', 'openai'],
      ['gpt-5-codex', 'openai'],
      ['gemini-2.5-pro', 'google'],
      ['anthropic/claude-sonnet-4-5', 'litellm'],
      ['deepseek-chat', 'litellm'],
      ['no-such-model', 'litellm'],
    ] as const) {
      const a = original.calcPrice(usage, model, { providerId, ...when });
      const b = asJson.calcPrice(usage, model, { providerId, ...when });
      assert.deepEqual(b, a, `${providerId}/${model}`);
      assert.deepEqual(asJson.findProvider({ providerId }), original.findProvider({ providerId }));
    }
    // The library itself found prices for the known models (not two nulls alike).
    assert.ok(original.calcPrice(usage, 'claude-opus-4-6', { providerId: 'anthropic', ...when })!.total_price > 0);
  });
});
