// Packages the extension into dist/agent-trace-inspector.vsix (`npm run package` builds the
// notices and the production bundles first). The README is the extension's page on the
// Marketplace and in VS Code's Extensions view, and neither resolves a relative link: the
// Marketplace serves the README apart from the package's files, and VS Code opens only
// http(s) and mailto links from it. vsce rewrites relative links to the repository's URLs
// when package.json names a GitHub or GitLab `repository`; this project has no public
// remote yet, so until `repository` is set the links stay relative (they resolve on a git
// host and in a checkout) and the files they point to ship in the .vsix (.vscodeignore).
// test/unit/docs/marketplaceReadme.test.ts checks both halves.
import { createVSIX } from '@vscode/vsce';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where the package is written. */
export const VSIX_PATH = 'dist/agent-trace-inspector.vsix';

/**
 * The repository URL vsce rewrites relative README links against, or null.
 * @param {{ repository?: string | { url?: string } }} manifest package.json
 * @returns {string | null}
 */
export function repositoryUrl(manifest) {
  const repo = manifest.repository;
  const url = typeof repo === 'string' ? repo : repo?.url;
  return typeof url === 'string' && url.length > 0 ? url : null;
}

/**
 * vsce's options for this manifest: links rewritten when there is a repository to point
 * them at; otherwise kept as written, and packaging allowed without a repository.
 * @param {{ repository?: string | { url?: string } }} manifest package.json
 */
export function packageOptions(manifest) {
  const rewrite = repositoryUrl(manifest) !== null;
  return {
    packagePath: VSIX_PATH,
    dependencies: false,
    rewriteRelativeLinks: rewrite,
    allowMissingRepository: !rewrite,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
  const options = packageOptions(manifest);
  if (!options.rewriteRelativeLinks) {
    console.log(
      'package: no `repository` in package.json, so the README keeps its relative links (docs/ ships in the .vsix).',
    );
  }
  // No top-level await: the unit tests load this module's functions from CommonJS.
  createVSIX(options).catch((e) => {
    console.error(`package: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  });
}
