import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { count, num } from '../../../../src/core/trace/json';
import { badCountMessage, checkRecord, checkRecordFully, isCountLike } from '../../../../src/core/trace/recordChecks';
import { repoRoot } from '../../../support/helpers';
import { deepText } from '../../../support/hostileCorpus';

/** Every line of every JSON Lines fixture (the samples and the hostile corpus) that parses. */
function fixtureRecords(): Array<{ where: string; text: string }> {
  const out: Array<{ where: string; text: string }> = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (/\.(jsonl|json|traj)$/.test(e.name)) {
        readFileSync(path, 'utf8')
          .split('\n')
          .forEach((text, i) => {
            try {
              JSON.parse(text);
              out.push({ where: `${path}:${i + 1}`, text });
            } catch {
              // not a record: nothing to check
            }
          });
      }
    }
  };
  walk(join(repoRoot, 'test/fixtures'));
  return out;
}

describe('record checks and numeric helpers', () => {
  it('a count is a whole number from 0 to 2^53 − 1, or a decimal string of one', () => {
    for (const ok of [0, 7, 2 ** 53 - 1, '123', ' 7 ']) assert.equal(isCountLike(ok), true, String(ok));
    for (const bad of [
      -5,
      1.5,
      1e308,
      2 ** 64,
      Infinity,
      NaN,
      '0x10',
      '0b101',
      '0o7',
      '1e3',
      'Infinity',
      '',
      '-1',
      true,
      {},
    ])
      assert.equal(isCountLike(bad), false, String(bad));
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
    assert.deepEqual(r.badCounts.map((b) => b.name).sort(), [
      'gen_ai.usage.input_tokens',
      'input_lens',
      'tokens.input',
      'usage.cache_read_input_tokens',
      'usage.input_tokens',
    ]);
    assert.deepEqual(record.usage, {
      input_tokens: null,
      output_tokens: 5,
      cache_read_input_tokens: null,
      service_tier: 'standard',
    });
    assert.deepEqual(record.tokens, { input: null, cached: 3 });
    assert.deepEqual(record.input_lens, [1, null, 3]);
    assert.equal(record.timestamp, '0x10');
    assert.equal(record.attributes[0]!.value.intValue, null);
    assert.equal(
      badCountMessage(r.badCounts.find((b) => b.name === 'usage.input_tokens')!),
      'usage.input_tokens is not a whole token count from 0 to 2^53 ("0x10"); read as unknown.',
    );
  });

  it('says a value nests too deep without walking it recursively (100,000 levels)', () => {
    assert.equal(checkRecord(JSON.parse(deepText(100_000)), 512).tooDeep, true);
    assert.equal(checkRecord(JSON.parse(deepText(511)), 512).tooDeep, false);
    assert.equal(checkRecord(JSON.parse(deepText(513)), 512).tooDeep, true);
  });

  it('the quick walk every record gets decides as the full walk does: on every fixture record, and on each with its counts broken', () => {
    const records = fixtureRecords();
    assert.ok(records.length > 5000, `${records.length} records`);
    let broken = 0;
    for (const { where, text } of records) {
      const quick = JSON.parse(text) as unknown;
      const full = JSON.parse(text) as unknown;
      const checked = checkRecord(quick, 512);
      assert.deepEqual(checked, checkRecordFully(full, 512), where);
      // A record nested too deep is skipped whole (and too deep to compare recursively).
      if (checked.tooDeep) continue;
      assert.deepEqual(quick, full, where);
      // The same record with every number under a count's key made negative: the quick walk must find each (the full walk names them).
      // Counts by key (input_tokens, input_length, output_token_count), in lists by key (input_lens), inside `tokens`, and OTLP attribute values.
      const bad = text
        .replace(/((?:tokens|_length|_token_count)"\s*:\s*)(\d+)/gi, '$1-$2')
        .replace(/(_lens"\s*:\s*\[\s*)(\d+)/gi, '$1-$2')
        .replace(/("(?:input|cached|output|appended|cacheWrite)"\s*:\s*)(\d+)/g, '$1-$2')
        .replace(/("intValue"\s*:\s*")(\d+)/g, '$1-$2');
      if (bad === text) continue;
      const q = JSON.parse(bad) as unknown;
      const f = JSON.parse(bad) as unknown;
      const r = checkRecord(q, 512);
      assert.deepEqual(r, checkRecordFully(f, 512), `${where} (broken)`);
      // (a match inside a string, such as a quoted log, breaks no count)
      if (r.badCounts.length > 0) broken += 1;
      assert.deepEqual(q, f, `${where} (broken)`);
    }
    assert.ok(broken > 1000, `${broken} records with counts`);
  });

  it('the quick walk says too deep where the full walk does, a bad count before the depth or not', () => {
    for (const depth of [511, 512, 513, 5000]) {
      for (const text of [
        deepText(depth),
        `{"usage":{"input_tokens":-1},"x":${deepText(depth)}}`,
        `{"x":${deepText(depth)},"usage":{"input_tokens":-1}}`,
      ]) {
        assert.deepEqual(
          checkRecord(JSON.parse(text), 512),
          checkRecordFully(JSON.parse(text), 512),
          `${depth}: ${text.slice(0, 40)}`,
        );
      }
    }
  });
});
