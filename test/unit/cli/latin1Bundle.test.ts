import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { latin1Bundle } from '../../../scripts/latin1Bundle.mjs';
import { repoRoot } from '../../support/helpers';

// The build keeps the bundles that read a trace at one byte a character in V8
// (scripts/latin1Bundle.mjs, docs/performance.md "Issue 27, tenth session"): a character above
// U+00FF in a comment becomes `?`; one in code fails the build.

/** Whether V8 would hold TEXT two bytes a character: some UTF-16 unit above U+00FF. */
function twoByte(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) return true;
  return false;
}

describe('bundles held one byte a character', () => {
  it('replaces each unit above U+00FF in comments with one `?`, and leaves Latin-1 and code alone', async () => {
    const source = '/** x ≥ 0 → ok … */\nconst a = "§×";\n// 𝑥 (two units)\nfunction f() { return a; /* ≈ */ }\n';
    const out = await latin1Bundle(source, 'test.js');
    assert.equal(out, '/** x ? 0 ? ok ? */\nconst a = "§×";\n// ?? (two units)\nfunction f() { return a; /* ? */ }\n');
    assert.equal(out.length, source.length);
    const plain = 'const b = "caf\\u00e9 \\u2192"; // § only\n';
    assert.equal(await latin1Bundle(plain, 'test.js'), plain);
  });

  it('fails on a unit above U+00FF in code: a string, a template, a regular expression', async () => {
    await assert.rejects(latin1Bundle('// ok →\nconst s = "→";\n', 'a.js'), /a\.js: a character above U\+00FF in code/);
    await assert.rejects(latin1Bundle('const t = `≥${1}`;\n', 'b.js'), /b\.js: a character above U\+00FF in code/);
    await assert.rejects(
      latin1Bundle('const r = /\\d(?:→|\\t)/;\n', 'c.js'),
      /c\.js: a character above U\+00FF in code/,
    );
  });

  it('holds for the built analyze thread, its parse threads, the launcher and the trace worker', () => {
    for (const file of ['cli.js', 'cliAnalyze.js', 'parseChunkWorker.js', 'traceWorker.js'])
      assert.equal(
        twoByte(readFileSync(join(repoRoot, 'dist', file), 'utf8')),
        false,
        `dist/${file} holds a character above U+00FF (a dist built before scripts/latin1Bundle.mjs? run npm run build)`,
      );
  });
});
