import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createRedactor } from '../../../src/node/secretlintDetector';
import { fixtures } from '../../support/helpers';

// Precision: the benign strings of test/fixtures/redaction-benign (the two that issue 23
// names, and every secret-word line of the real samples; see the README there), each as a
// Claude Code tool result, come out of the whole redactor unchanged, in default and in
// strict mode.

const dir = join(fixtures, 'redaction-benign');

describe('benign strings', () => {
  for (const [set, mode] of readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .flatMap((f) => (['default', 'strict'] as const).map((m) => [f, m] as const))) {
    // Strict mode too: its first version took a GPG subkey id in real-samples.txt (`rsa4096/0603BC876BB7E4B0`).
    it(`${set}: none is redacted (${mode})`, async () => {
      const strings = readFileSync(join(dir, set), 'utf8').split('\n').filter((l) => l.length > 0 && !l.startsWith('#'));
      assert.ok(strings.length > 0);
      const lines = strings.map((s) => JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: s }] } }));
      const out = await createRedactor(mode).redactJsonTexts(lines);
      const changed = strings.filter((_, i) => out[i] !== lines[i]);
      assert.deepEqual(changed, []);
    });
  }
});
