import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../../support/helpers';

// The map in docs/design/architecture.md must match the house: every bundle esbuild.mjs
// builds has a row in its bundles table, and every folder of src/ and webview/ (two levels
// down) a row in its code map. A new bundle or folder without its row fails here.

const architecture = readFileSync(join(repoRoot, 'docs/design/architecture.md'), 'utf8');

/** The first cells of the table under `heading` (up to the next heading). */
function firstCells(heading: string): string[] {
  const from = architecture.indexOf(`\n## ${heading}\n`);
  assert.ok(from >= 0, `a "## ${heading}" section`);
  const to = architecture.indexOf('\n## ', from + 1);
  return architecture
    .slice(from, to < 0 ? undefined : to)
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => l.split('|')[1]!.trim());
}

describe('the architecture map matches the house', () => {
  it('every bundle esbuild.mjs builds is in the bundles table, with its entry', () => {
    const build = readFileSync(join(repoRoot, 'esbuild.mjs'), 'utf8');
    const bundles = [...build.matchAll(/entryPoints: \['([^']+)'\],\s*outfile: '([^']+)'/g)].map((m) => ({
      entry: m[1]!,
      outfile: m[2]!,
    }));
    // The extension, its three Node workers, the CLI's launcher and its two command bundles, its sweep threads, its parse threads and its export threads, the context tokenizer, the inspector's page and its worker, the sessions page, the report.
    assert.equal(bundles.length, 15, bundles.map((b) => b.outfile).join(', '));
    const rows = architecture.split('\n').filter((l) => l.startsWith('| `dist/'));
    for (const { entry, outfile } of bundles) {
      const row = rows.find((r) => r.startsWith(`| \`${outfile}\` |`));
      assert.ok(row, `${outfile} has a row in the bundles table`);
      assert.ok(row.includes(`\`${entry}\``), `${outfile}'s row names its entry ${entry}`);
    }
    // The host tests' bundles (--tests) too.
    assert.ok(
      rows.some((r) => r.startsWith('| `dist/test/*.js`')),
      "the host tests' bundles",
    );
  });

  it('the bundles the table puts in the .vsix are those .vscodeignore lets in (a worker left out fails only when it is loaded)', () => {
    const allowed = new Set(
      readFileSync(join(repoRoot, '.vscodeignore'), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('!dist/') && l.endsWith('.js'))
        .map((l) => l.slice(1)),
    );
    const rows = architecture.split('\n').filter((l) => /^\| `dist\/[A-Za-z]+\.js` \|/.test(l));
    const packaged = rows.filter((r) => r.trimEnd().endsWith('| yes |')).map((r) => r.split('`')[1]!);
    const left = rows.filter((r) => r.trimEnd().endsWith('| no |')).map((r) => r.split('`')[1]!);
    assert.equal(packaged.length + left.length, rows.length, 'every bundle row ends in yes or no');
    assert.deepEqual([...allowed].sort(), [...packaged].sort());
    assert.ok(packaged.includes('dist/contextTokenizer.js'));
    for (const bundle of left) assert.ok(!allowed.has(bundle), `${bundle} is kept out of the .vsix`);
  });

  it('every folder of src/ and webview/, two levels down, has a row in the code map', () => {
    const mapped = new Set(
      firstCells('Code map').flatMap((cell) => [...cell.matchAll(/`([^`]+)\/`/g)].map((m) => m[1]!)),
    );
    const folders: string[] = [];
    for (const top of ['src', 'webview']) {
      for (const a of readdirSync(join(repoRoot, top), { withFileTypes: true })) {
        if (!a.isDirectory()) continue;
        folders.push(`${top}/${a.name}`);
        if (top === 'webview') continue;
        for (const b of readdirSync(join(repoRoot, top, a.name), { withFileTypes: true }))
          if (b.isDirectory()) folders.push(`${top}/${a.name}/${b.name}`);
      }
    }
    // The format readers' folders are one row (`src/core/trace/`: one sub-folder per format).
    const missing = folders.filter((f) => !mapped.has(f) && f !== 'src/core');
    assert.deepEqual(missing, []);
  });

  it('the inspector page stays an owner of state, not of parts: InspectorApp is at most 450 lines', () => {
    // A part or panel grown inside the page class is what this holds back: it belongs in its own file under webview/.
    const lines = readFileSync(join(repoRoot, 'webview/inspector/inspectorApp.ts'), 'utf8').split('\n').length - 1;
    assert.ok(lines <= 450, `InspectorApp has ${lines} lines`);
  });
});
