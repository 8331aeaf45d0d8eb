import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, posix } from 'node:path';
import { describe, it } from 'node:test';
import { listFiles, PackageManager } from '@vscode/vsce';
import { packageOptions, repositoryUrl } from '../../../scripts/package.mjs';
import { repoRoot } from '../../support/helpers';
import { isExternal, markdownLinks } from '../../support/markdown';

// The README is the extension's page on the Marketplace and in VS Code's Extensions view.
// Neither resolves a relative link, so the page's links work there only once vsce rewrites
// them to the repository's URLs, which it does when package.json names a repository
// (scripts/package.mjs). The project has no public remote yet: until then the README keeps
// its relative links and the files they point to ship in the .vsix. Both halves are checked
// here with vsce itself: its file list (the .vscodeignore rules) and the README processor
// `vsce package` runs.

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as Record<string, unknown> & {
  repository?: string | { url?: string };
};
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const relativeLinks = markdownLinks(readme).filter((l) => !isExternal(l.target) && !l.target.startsWith('#'));

/** vsce's README processor (not in its public API): the step of `vsce package` that rewrites the README's links. */
interface ReadmeProcessorLike {
  onFile(file: { path: string; contents: Buffer }): Promise<{ contents: Buffer | string }>;
}
const { ReadmeProcessor } = createRequire(__filename)('@vscode/vsce/out/package') as {
  ReadmeProcessor: new (manifest: unknown, options: { rewriteRelativeLinks: boolean }) => ReadmeProcessorLike;
};

async function packagedReadme(withManifest: unknown, rewriteRelativeLinks: boolean): Promise<string> {
  const out = await new ReadmeProcessor(withManifest, { rewriteRelativeLinks }).onFile({
    path: 'extension/readme.md',
    contents: Buffer.from(readme),
  });
  return out.contents.toString();
}

describe("the README's links on the extension's page", () => {
  it('the README links to the guides, the references and screenshots (the page has something to lose)', () => {
    const targets = relativeLinks.map((l) => l.target);
    assert.ok(
      targets.some((t) => t.startsWith('docs/guide/')),
      'links into docs/guide/',
    );
    assert.ok(
      targets.some((t) => t.startsWith('media/') && t.endsWith('.png')),
      'a screenshot',
    );
    assert.ok(targets.includes('CONTRIBUTING.md') && targets.includes('CHANGELOG.md'));
  });

  it('every file the README links to ships in the .vsix (vsce lists the package with .vscodeignore)', async () => {
    const shipped = new Set(await listFiles({ cwd: repoRoot, packageManager: PackageManager.None }));
    const missing = relativeLinks
      .map((l) => posix.normalize(l.target.split('#')[0]!))
      .filter((path) => !shipped.has(path));
    assert.deepEqual(missing, [], 'linked from README.md but left out of the .vsix');
    // The docs' own pages travel too, so a guide's links to its neighbours resolve inside the package.
    assert.ok(
      shipped.has('docs/guide/inspector.md') &&
        shipped.has('docs/reference/json-output.md') &&
        shipped.has('docs/design/architecture.md'),
    );
  });

  it('with a repository in package.json, packaging rewrites every relative link to it, anchors kept', async () => {
    const repo = 'https://github.com/example-owner/agent-trace-inspector';
    const options = packageOptions({ ...manifest, repository: { url: `${repo}.git` } });
    assert.equal(options.rewriteRelativeLinks, true);
    const page = await packagedReadme(
      { ...manifest, repository: { url: `${repo}.git` } },
      options.rewriteRelativeLinks,
    );
    const after = markdownLinks(page);
    assert.deepEqual(
      after.filter((l) => !isExternal(l.target) && !l.target.startsWith('#')),
      [],
      'no relative link left on the page',
    );
    // Link for link, the same file (and anchor) under the repository: pages under blob/, images under raw/.
    const before = markdownLinks(readme);
    assert.equal(after.length, before.length);
    before.forEach((l, i) => {
      const expected =
        isExternal(l.target) || l.target.startsWith('#')
          ? l.target
          : `${repo}/${l.image ? 'raw' : 'blob'}/HEAD/${posix.normalize(l.target)}`;
      assert.equal(after[i]!.target, expected, `link ${i + 1} (${l.target})`);
    });
  });

  it('without one (the project today: no public remote), the package keeps the links as written and says so', async () => {
    const bare = { ...manifest };
    delete bare.repository;
    const options = packageOptions(bare);
    assert.deepEqual([options.rewriteRelativeLinks, options.allowMissingRepository], [false, true]);
    assert.equal(await packagedReadme(bare, options.rewriteRelativeLinks), readme);
    // Rewriting with nowhere to point the links at is what vsce refuses, so the choice matters.
    await assert.rejects(packagedReadme(bare, true), /Couldn't detect the repository/);
    assert.equal(repositoryUrl(manifest) === null, packageOptions(manifest).allowMissingRepository);
  });
});
