// Runs every test/unit/**/*.test.ts with node's own test runner (TypeScript through tsx).
// Node 20's runner does not expand globs or pick up .ts files by itself, hence this list.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? find(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []);
}

const dirs = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const files = (dirs.length ? dirs : ['test/unit']).flatMap(find).sort();
const extra = process.argv.slice(2).filter((a) => a.startsWith('--'));
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...extra, ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
