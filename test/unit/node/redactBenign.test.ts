import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createRedactor } from '../../../src/node/secretlintDetector';
import { fixtures } from '../../support/helpers';

// Precision: the benign strings of test/fixtures/redaction-benign (the two that issue 23
// names, and every secret-word line of the real samples; see the README there), each as a
// Claude Code tool result, come out of the whole redactor unchanged.

const dir = join(fixtures, 'redaction-benign');

describe('benign strings', () => {
  for (const set of readdirSync(dir).filter((f) => f.endsWith('.txt'))) {
    it(`${set}: none is redacted`, async () => {
      const strings = readFileSync(join(dir, set), 'utf8').split('\n').filter((l) => l.length > 0 && !l.startsWith('#'));
      assert.ok(strings.length > 0);
      const lines = strings.map((s) => JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: s }] } }));
      const out = await createRedactor().redactJsonTexts(lines);
      const changed = strings.filter((_, i) => out[i] !== lines[i]);
      assert.deepEqual(changed, []);
    });
  }
});
