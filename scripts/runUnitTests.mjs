// Runs the *.test.ts files under the folders (or the files) given, default test/unit, with
// node's own test runner (TypeScript through tsx). Node 20's runner does not expand globs
// or pick up .ts files by itself, hence this list. Every layer but host runs through it:
//   node scripts/runUnitTests.mjs test/unit/core/sim test/browser/whatIf.test.ts
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(path) {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? find(join(path, e.name)) : e.name.endsWith('.test.ts') ? [join(path, e.name)] : [],
  );
}

const dirs = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const files = (dirs.length ? dirs : ['test/unit']).flatMap(find).sort();
const extra = process.argv.slice(2).filter((a) => a.startsWith('--'));
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...extra, ...files], {
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
