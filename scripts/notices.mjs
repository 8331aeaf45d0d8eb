// Writes THIRD-PARTY-NOTICES.md: the licence of every npm package bundled into the
// extension, the webview or the CLI, found from esbuild's metafile (not guessed from
// package.json), plus the codicon font copied into dist/.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const entries = [
  'src/extension/main.ts',
  'src/node/traceWorker.ts',
  'src/cli/main.ts',
  'src/cli/commands.ts',
  'src/node/sessions/indexWorker.ts',
  'webview/main.ts',
  'webview/sessions/main.ts',
  'webview/report/reportMain.ts',
];
// DuckDB is not bundled: the CLI loads it from node_modules for \`agent-trace query\` (a native module), so it is named here.
const packages = new Set(['@vscode/codicons', '@duckdb/node-api', '@duckdb/node-bindings']);
for (const entry of entries) {
  const platform = entry.startsWith('webview') ? 'browser' : 'node';
  const r = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    mainFields: ['module', 'main'],
    write: false,
    metafile: true,
    platform,
    external: ['vscode', '@duckdb/node-api'],
    logLevel: 'silent',
    outdir: 'out-notices',
  });
  for (const input of Object.keys(r.metafile.inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m) packages.add(m[1]);
  }
}
const parts = [
  '# Third-party notices',
  '',
  "Agent Trace Inspector bundles the following packages (the CLI also loads DuckDB's, `@duckdb/…`, from node_modules). Their licences follow.",
  '',
];
for (const name of [...packages].sort()) {
  const dir = path.join('node_modules', name);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const licenceFile = fs.readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  parts.push(`## ${name} ${pkg.version} (${pkg.license ?? 'see below'})`, '');
  if (licenceFile) parts.push('```', fs.readFileSync(path.join(dir, licenceFile), 'utf8').trim(), '```', '');
}
// Data vendored into the repository (not npm packages): bundled as it is, so its licence goes here too.
const VENDORED = [
  {
    name: 'gitleaks rule set',
    what: 'src/core/redact/gitleaks/rules.json, from config/gitleaks.toml of https://github.com/gitleaks/gitleaks',
    version: JSON.parse(fs.readFileSync('src/core/redact/gitleaks/rules.json', 'utf8')).source.commit,
    licence: 'MIT',
    file: 'src/core/redact/gitleaks/LICENSE-gitleaks-MIT.txt',
  },
];
for (const v of VENDORED) {
  parts.push(
    `## ${v.name} ${v.version.slice(0, 12)} (${v.licence})`,
    '',
    `${v.what}.`,
    '',
    '```',
    fs.readFileSync(v.file, 'utf8').trim(),
    '```',
    '',
  );
}
fs.writeFileSync('THIRD-PARTY-NOTICES.md', parts.join('\n'));
console.log(`THIRD-PARTY-NOTICES.md: ${[...packages].sort().join(', ')}`);
