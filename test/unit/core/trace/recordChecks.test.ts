import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { count, num } from '../../../../src/core/trace/json';
import { badCountMessage, checkRecord, isCountLike } from '../../../../src/core/trace/recordChecks';
import { deepText } from '../../../support/hostileCorpus';

describe('record checks and numeric helpers', () => {
  it('a count is a whole number from 0 to 2^53 − 1, or a decimal string of one', () => {
    for (const ok of [0, 7, 2 ** 53 - 1, '123', ' 7 ']) assert.equal(isCountLike(ok), true, String(ok));
    for (const bad of [-5, 1.5, 1e308, 2 ** 64, Infinity, NaN, '0x10', '0b101', '0o7', '1e3', 'Infinity', '', '-1', true, {}]) assert.equal(isCountLike(bad), false, String(bad));
    assert.equal(num('0x10'), null);
    assert.equal(num('0b101'), null);
    assert.equal(num(' 12.5 '), 12.5);
    assert.equal(num('Infinity'), null);
    assert.equal(count(2 ** 64), null);
    assert.equal(count(2 ** 53 - 1), 2 ** 53 - 1);
  });

  it('replaces bad token counts with null, each reported by name, OTLP attributes included; other fields untouched', () => {
    const record = {
      usage: { input_tokens: '0x10', output_tokens: 5, cache_read_input_tokens: -1, service_tier: 'standard' },
      tokens: { input: 1e308, cached: 3 },
      input_lens: [1, -2, 3],
      timestamp: '0x10',
      attributes: [{ key: 'gen_ai.usage.input_tokens', value: { intValue: '18446744073709551616' } }],
    };
    const r = checkRecord(record, 100);
    assert.equal(r.tooDeep, false);
    assert.deepEqual(r.badCounts.map((b) => b.name).sort(), ['gen_ai.usage.input_tokens', 'input_lens', 'tokens.input', 'usage.cache_read_input_tokens', 'usage.input_tokens']);
    assert.deepEqual(record.usage, { input_tokens: null, output_tokens: 5, cache_read_input_tokens: null, service_tier: 'standard' });
    assert.deepEqual(record.tokens, { input: null, cached: 3 });
    assert.deepEqual(record.input_lens, [1, null, 3]);
    assert.equal(record.timestamp, '0x10');
    assert.equal(record.attributes[0]!.value.intValue, null);
    assert.equal(badCountMessage(r.badCounts.find((b) => b.name === 'usage.input_tokens')!), 'usage.input_tokens is not a whole token count from 0 to 2^53 ("0x10"); read as unknown.');
  });

  it('says a value nests too deep without walking it recursively (100,000 levels)', () => {
    assert.equal(checkRecord(JSON.parse(deepText(100_000)), 512).tooDeep, true);
    assert.equal(checkRecord(JSON.parse(deepText(511)), 512).tooDeep, false);
    assert.equal(checkRecord(JSON.parse(deepText(513)), 512).tooDeep, true);
  });
});
