import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../../support/helpers';
import { isExternal, markdownAnchors, markdownLinks } from '../../support/markdown';

// The documentation is a web of relative links (the README's docs map, the guides, the
// design notes, CONTRIBUTING and the changelog). Every relative link must reach a file that
// exists and, for a `#anchor` into a Markdown file, a heading there, by GitHub's slug rules
// (so a renamed heading shows up here, not as a dead link on the repository's page).

/** The Markdown files checked: every one at the root and every one under docs/. */
function docFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
    );
  const root = readdirSync(repoRoot)
    .filter((n) => n.endsWith('.md'))
    .map((n) => join(repoRoot, n));
  return [...root, ...walk(join(repoRoot, 'docs'))].sort();
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let a = anchorCache.get(file);
  if (!a) anchorCache.set(file, (a = markdownAnchors(readFileSync(file, 'utf8'))));
  return a;
}

/** Why a relative link of `from` does not resolve, or null when it does. */
export function brokenLink(from: string, target: string): string | null {
  const hash = target.indexOf('#');
  const path = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? null : target.slice(hash + 1);
  if (path.startsWith('/')) return 'a path from the root of the site: write it relative to this file';
  const file = path === '' ? from : resolve(dirname(from), path);
  if (!existsSync(file)) return `no such file ${relative(repoRoot, file)}`;
  if (anchor !== null && file.endsWith('.md') && statSync(file).isFile() && !anchorsOf(file).has(anchor)) {
    return `no heading with the anchor #${anchor} in ${relative(repoRoot, file)}`;
  }
  return null;
}

describe('documentation links', () => {
  const files = docFiles();

  it('finds the documentation (README, CONTRIBUTING, CHANGELOG, the guides and references)', () => {
    const names = files.map((f) => relative(repoRoot, f));
    for (const expected of [
      'README.md',
      'CONTRIBUTING.md',
      'CHANGELOG.md',
      'docs/guide/inspector.md',
      'docs/reference/json-output.md',
      'docs/performance.md',
      'docs/design/architecture.md',
    ]) {
      assert.ok(names.includes(expected), `${expected} is checked`);
    }
  });

  for (const file of files) {
    it(`every relative link in ${relative(repoRoot, file)} resolves`, () => {
      const links = markdownLinks(readFileSync(file, 'utf8')).filter((l) => !isExternal(l.target));
      const broken = links.flatMap((l) => {
        const why = brokenLink(file, l.target);
        return why ? [`line ${l.line}: ${l.target} (${why})`] : [];
      });
      assert.deepEqual(broken, []);
    });
  }

  it('a broken path and a missing anchor are both caught (the check can fail)', () => {
    const readme = join(repoRoot, 'README.md');
    assert.match(
      brokenLink(readme, 'docs/guide/no-such-guide.md') ?? '',
      /no such file docs\/guide\/no-such-guide\.md/,
    );
    assert.match(
      brokenLink(readme, 'docs/guide/cli.md#no-such-heading') ?? '',
      /no heading with the anchor #no-such-heading/,
    );
    assert.equal(brokenLink(readme, 'docs/guide/cli.md#exit-status-and-output-safety'), null);
    assert.equal(brokenLink(readme, '#quick-start'), null);
  });

  it('anchors follow GitHub: punctuation and code marks dropped, repeated headings numbered', () => {
    const anchors = markdownAnchors(
      '# JSON output (`analyze --json`), a stable contract\n\n## Options\n\n## Options\n\n```\n# not a heading\n```\n',
    );
    assert.deepEqual([...anchors], ['json-output-analyze---json-a-stable-contract', 'options', 'options-1']);
  });
});

describe('the README landing page', () => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

  it('stays a landing page of at most 250 lines, the rest in docs/', () => {
    const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
    assert.ok(lines <= 250, `README.md has ${lines} lines`);
  });

  it('names no load average (measured figures live in docs/performance.md with their load)', () => {
    assert.doesNotMatch(readme, /load average|loadavg/i);
  });
});

describe('the settings reference', () => {
  const documented = new Set(
    [
      ...readFileSync(join(repoRoot, 'docs/reference/settings.md'), 'utf8').matchAll(
        /^\| `(agentTrace\.[A-Za-z0-9.]+)` \|/gm,
      ),
    ].map((m) => m[1]!),
  );
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    contributes: {
      configuration: { properties: Record<string, unknown> } | Array<{ properties: Record<string, unknown> }>;
    };
  };
  const sections = Array.isArray(manifest.contributes.configuration)
    ? manifest.contributes.configuration
    : [manifest.contributes.configuration];
  const contributed = new Set(sections.flatMap((s) => Object.keys(s.properties)));

  it('has a row for every setting package.json contributes, and none it does not', () => {
    assert.ok(contributed.size > 20, 'package.json contributes settings');
    assert.deepEqual(
      [...contributed].filter((k) => !documented.has(k)),
      [],
      'settings without a row in docs/reference/settings.md',
    );
    assert.deepEqual(
      [...documented].filter((k) => !contributed.has(k)),
      [],
      'rows for settings package.json does not contribute',
    );
  });
});
