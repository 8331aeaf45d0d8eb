// Bundles a benchmark (bench/NAME.bench.ts) with esbuild and runs it with plain node:
// tsx's on-the-fly transform keeps function names with wrappers that would skew the timings.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { priceListJsonPlugin } from './priceListAsJson.mjs';
import { latin1BundlePlugin } from './latin1Bundle.mjs';

const [name, ...args] = process.argv.slice(2);
if (!name) {
  console.error('usage: node scripts/runBench.mjs NAME [args…]   (runs bench/NAME.bench.ts)');
  process.exit(2);
}
const outfile = path.join('dist/bench', `${name}.bench.js`);
const node = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  mainFields: ['module', 'main'],
  logLevel: 'warning',
  // The price list as the CLI's bundles load it (esbuild.mjs).
  plugins: [priceListJsonPlugin],
};
await esbuild.build({
  ...node,
  entryPoints: [`bench/${name}.bench.ts`],
  outfile,
  external: ['playwright-core', '@duckdb/node-api'],
  // Held one byte a character in V8, as the CLI's bundles are (scripts/latin1Bundle.mjs).
  plugins: [...node.plugins, latin1BundlePlugin],
});
// Sweeps on worker threads start this from beside the benchmark.
await esbuild.build({
  ...node,
  entryPoints: ['src/node/sweepWorker.ts'],
  outfile: path.join('dist/bench', 'sweepWorker.js'),
});
// The parse threads of one big file (src/node/parallelParse.ts), likewise.
await esbuild.build({
  ...node,
  entryPoints: ['src/node/parseChunkWorker.ts'],
  outfile: path.join('dist/bench', 'parseChunkWorker.js'),
  plugins: [...node.plugins, latin1BundlePlugin],
});
const r = spawnSync(process.execPath, ['--expose-gc', outfile, ...args], { stdio: 'inherit' });
process.exit(r.status ?? 1);
