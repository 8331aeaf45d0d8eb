// Builds every bundle: the extension and the CLI for Node, the webview for the browser.
// Type checking is separate (npm run typecheck); esbuild only strips types.
import * as esbuild from 'esbuild';
import { chmod, cp, mkdir } from 'node:fs/promises';
import { priceListJsonPlugin } from './scripts/priceListAsJson.mjs';
import { latin1BundlePlugin } from './scripts/latin1Bundle.mjs';

const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');
const watch = process.argv.includes('--watch');

/** Prints errors in the shape of VS Code's "$esbuild-watch" problem matcher. */
const problemMatcher = {
  name: 'problem-matcher',
  setup(build) {
    build.onStart(() => console.log('[watch] build started'));
    build.onEnd((result) => {
      for (const { text, location } of result.errors) {
        console.error(`✘ [ERROR] ${text}`);
        if (location) console.error(`    ${location.file}:${location.line}:${location.column}:`);
      }
      console.log('[watch] build finished');
    });
  },
};

/**
 * The context tokenizer's ranks (gpt-tokenizer's o200k_base, about 4 MB of the bundle) in a bundle of their own,
 * dist/contextTokenizer.js, which src/node/contextCollect.ts loads on demand from beside the bundle that asks for it.
 * Inlined, every bundle that can build a context anatomy (the CLI's commands, the export, index and trace threads)
 * parsed them on every start, though only --context and the anatomy count a token.
 */
const contextTokenizerApart = {
  name: 'context-tokenizer-apart',
  setup(build) {
    build.onResolve({ filter: /^\.\/contextTokenizer$/ }, (args) =>
      /[\\/]src[\\/]node[\\/]contextCollect\.ts$/.test(args.importer)
        ? { path: './contextTokenizer.js', external: true }
        : undefined,
    );
  },
};

const common = {
  bundle: true,
  // Prefer ES module builds: jsonc-parser's "main" is a UMD bundle whose inner requires esbuild cannot follow.
  mainFields: ['module', 'main'],
  minify: production,
  sourcemap: production ? false : 'linked',
  logLevel: 'warning',
  // The price list of @pydantic/genai-prices as JSON.parse of a string, not a literal (scripts/priceListAsJson.mjs).
  plugins: watch
    ? [problemMatcher, priceListJsonPlugin, contextTokenizerApart]
    : [priceListJsonPlugin, contextTokenizerApart],
};

/** The CLI is package.json's `bin`: `npx agent-trace` runs the file itself, so it must be executable (esbuild writes 0644). */
const executable = {
  name: 'executable',
  setup(build) {
    build.onEnd(async (result) => {
      if (result.errors.length === 0) await chmod(build.initialOptions.outfile, 0o755);
    });
  },
};

const builds = [
  {
    ...common,
    entryPoints: ['src/extension/main.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  },
  {
    ...common,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    plugins: [...common.plugins, executable, latin1BundlePlugin],
  },
  // What the CLI's launcher loads from beside itself (src/cli/main.ts): analyze and convert alone, so
  // that they do not evaluate the other commands' dependencies; and every other command.
  {
    ...common,
    entryPoints: ['src/cli/analyze.ts'],
    outfile: 'dist/cliAnalyze.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Its source is a string in the analyze thread's heap for the whole run (scripts/latin1Bundle.mjs).
    plugins: [...common.plugins, latin1BundlePlugin],
  },
  {
    ...common,
    // DuckDB (agent-trace query) is a native module with per-platform binaries: required at run time from node_modules, never bundled.
    entryPoints: ['src/cli/commands.ts'],
    outfile: 'dist/cliCommands.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['@duckdb/node-api'],
  },
  // The CLI's sweep threads: started by dist/cli.js from beside itself (src/node/parallelSweep.ts).
  {
    ...common,
    entryPoints: ['src/node/sweepWorker.ts'],
    outfile: 'dist/sweepWorker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  // The session index's worker thread: started by the extension from beside itself (src/node/sessions/indexClient.ts).
  {
    ...common,
    entryPoints: ['src/node/sessions/indexWorker.ts'],
    outfile: 'dist/indexWorker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  // Its parse threads for a cold index: started by dist/indexWorker.js from beside itself (src/node/sessions/parsePool.ts).
  {
    ...common,
    entryPoints: ['src/node/sessions/indexParseWorker.ts'],
    outfile: 'dist/indexParseWorker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  // The export threads of \`agent-trace export --to parquet\`: started by dist/cli.js from beside itself (src/node/team/exportPool.ts).
  {
    ...common,
    entryPoints: ['src/node/team/exportWorker.ts'],
    outfile: 'dist/teamExportWorker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  // The context tokenizer, loaded on demand by the bundles above (contextTokenizerApart).
  {
    ...common,
    entryPoints: ['src/node/contextTokenizer.ts'],
    outfile: 'dist/contextTokenizer.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  // The parse threads of one big file for the CLI: started by dist/cli.js from beside itself (src/node/parallelParse.ts).
  {
    ...common,
    entryPoints: ['src/node/parseChunkWorker.ts'],
    outfile: 'dist/parseChunkWorker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    plugins: [...common.plugins, latin1BundlePlugin],
  },
  // The inspector's trace worker: reads and parses a trace off the extension host's event loop (src/node/traceWorkerClient.ts starts it from beside dist/extension.js).
  {
    ...common,
    entryPoints: ['src/node/traceWorker.ts'],
    outfile: 'dist/traceWorker.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    plugins: [...common.plugins, latin1BundlePlugin],
  },
  {
    ...common,
    entryPoints: ['webview/main.ts'],
    outfile: 'dist/webview.js',
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
  },
  // The Agent Sessions panels (several sessions at once, two side by side).
  {
    ...common,
    entryPoints: ['webview/sessions/main.ts'],
    outfile: 'dist/sessionsView.js',
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
  },
  // The standalone HTML report's page (agent-trace report): the inspector's views, inlined into one file, so always
  // minified and without a source map (an inline script has nowhere to point one).
  {
    ...common,
    entryPoints: ['webview/report/reportMain.ts'],
    outfile: 'dist/report.js',
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
    minify: true,
    sourcemap: false,
    legalComments: 'eof',
  },
  // The what-if simulator's Web Worker: the pure sim core, no DOM (the page starts it from a blob: URL).
  // No source map: a blob: worker cannot resolve the relative sourceMappingURL anyway.
  {
    ...common,
    entryPoints: ['webview/whatIf/whatIfWorker.ts'],
    outfile: 'dist/whatIfWorker.js',
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
    sourcemap: false,
  },
];

/** Codicons for @vscode-elements: served from the extension's own folder (no CDN; CSP allows only cspSource). */
async function copyCodicons() {
  await mkdir('dist/codicons', { recursive: true });
  await cp('node_modules/@vscode/codicons/dist/codicon.css', 'dist/codicons/codicon.css');
  await cp('node_modules/@vscode/codicons/dist/codicon.ttf', 'dist/codicons/codicon.ttf');
}

/**
 * node-sqlite3-wasm finds its WebAssembly module beside the script that loads it
 * (`__dirname`): once bundled, that is dist/ (the extension, its index worker, the CLI).
 */
async function copySqliteWasm() {
  await mkdir('dist', { recursive: true });
  await cp('node_modules/node-sqlite3-wasm/dist/node-sqlite3-wasm.wasm', 'dist/node-sqlite3-wasm.wasm');
}

/** Extension-host tests run inside VS Code, which loads plain CommonJS: bundle them (mocha and vscode stay external). */
if (tests) {
  const { readdirSync } = await import('node:fs');
  const entryPoints = readdirSync('test/host')
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `test/host/${f}`);
  builds.push({
    ...common,
    entryPoints,
    outdir: 'dist/test',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode', 'mocha'],
  });
}

await copyCodicons();
await copySqliteWasm();
if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
