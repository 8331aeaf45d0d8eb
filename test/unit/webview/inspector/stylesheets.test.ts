import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { before, describe, it } from 'node:test';
import { build } from 'esbuild';
import type { Metafile } from 'esbuild';
import { repoRoot } from '../../../support/helpers';

// Each part and panel of the inspector keeps its stylesheet beside its code, imported by
// its module; esbuild bundles them into the page's one stylesheet (dist/webview.css for
// the inspector and the Agent Sessions panels, dist/report.css inlined in the HTML
// report). Two ways this breaks without an error anywhere: a rule left open (once it
// swallowed every rule after it and unstyled the whole report, and no test noticed), and a
// stylesheet nobody imports (its rules never reach the page). Both are checked here on
// every .css file under webview/, and the bundles are made as esbuild.mjs makes them.

/** Every stylesheet under webview/, as a path from the repository root with forward slashes. */
function stylesheets(dir = join(repoRoot, 'webview')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? stylesheets(join(dir, e.name))
      : e.name.endsWith('.css')
        ? [relative(repoRoot, join(dir, e.name)).split(sep).join('/')]
        : [],
  );
}

/**
 * The first place the braces of a stylesheet do not balance (null: they do). Comments and
 * strings are skipped: a brace in `content: "}"` or in a comment is not a block.
 */
function unbalancedBrace(css: string): { line: number; problem: string } | null {
  let depth = 0;
  let line = 1;
  const opened: number[] = [];
  for (let i = 0; i < css.length; i++) {
    const c = css[i]!;
    if (c === '\n') line++;
    else if (c === '/' && css[i + 1] === '*') {
      const end = css.indexOf('*/', i + 2);
      if (end < 0) return { line, problem: 'a comment is never closed' };
      for (let j = i; j < end; j++) if (css[j] === '\n') line++;
      i = end + 1;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < css.length && css[j] !== c && css[j] !== '\n') j += css[j] === '\\' ? 2 : 1;
      if (css[j] !== c) return { line, problem: 'a string is never closed' };
      i = j;
    } else if (c === '{') {
      depth++;
      opened.push(line);
    } else if (c === '}') {
      if (depth === 0) return { line, problem: 'a "}" closes nothing' };
      depth--;
      opened.pop();
    }
  }
  return depth === 0
    ? null
    : { line: opened[opened.length - 1]!, problem: `the "{" here is never closed (${depth} open at the end)` };
}

/** The stylesheets esbuild puts in the CSS output of a page's bundle (the same options as esbuild.mjs). */
async function bundledStylesheets(
  entry: string,
  outfile: string,
): Promise<{ css: string; inputs: string[]; warnings: string[] }> {
  const result = await build({
    entryPoints: [join(repoRoot, entry)],
    outfile: join(repoRoot, outfile),
    absWorkingDir: repoRoot,
    bundle: true,
    mainFields: ['module', 'main'],
    platform: 'browser',
    format: 'iife',
    target: 'chrome120',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const metafile: Metafile = result.metafile;
  const cssOutput = Object.entries(metafile.outputs).find(([path]) => path.endsWith('.css'));
  assert.ok(cssOutput, `${entry} bundles no stylesheet`);
  const css = result.outputFiles.find((f) => f.path.endsWith('.css'))!.text;
  return {
    css,
    inputs: Object.keys(cssOutput[1].inputs),
    warnings: result.warnings.map((w) => `${w.location?.file ?? ''}:${w.location?.line ?? ''} ${w.text}`),
  };
}

describe("the inspector's stylesheets, one beside each part and panel", () => {
  const sheets = stylesheets();
  let inspector: Awaited<ReturnType<typeof bundledStylesheets>>;
  let report: Awaited<ReturnType<typeof bundledStylesheets>>;

  before(async () => {
    inspector = await bundledStylesheets('webview/main.ts', 'dist/webview.js');
    report = await bundledStylesheets('webview/report/reportMain.ts', 'dist/report.js');
  });

  it('finds the stylesheets of the parts and of the four panels (a glob that found nothing would pass everything below)', () => {
    for (const expected of [
      'webview/inspector/page.css',
      'webview/timeline/timeline.css',
      'webview/analysis/analysis.css',
      'webview/cost/cost.css',
      'webview/whatIf/whatIf.css',
      'webview/report/report.css',
    ]) {
      assert.ok(sheets.includes(expected), `${expected} is among ${sheets.join(', ')}`);
    }
  });

  it('the brace check finds what it is for: a rule left open, a stray "}", an unclosed comment; braces in strings and comments are not blocks', () => {
    assert.deepEqual(unbalancedBrace('.a {\n  color: red;\n\n.b {\n  color: blue;\n}\n'), {
      line: 1,
      problem: 'the "{" here is never closed (1 open at the end)',
    });
    assert.deepEqual(unbalancedBrace('.a { color: red; }\n}\n'), { line: 2, problem: 'a "}" closes nothing' });
    assert.deepEqual(unbalancedBrace('.a { color: red; }\n/* open'), { line: 2, problem: 'a comment is never closed' });
    assert.equal(
      unbalancedBrace('.a::after { content: "}"; }\n/* { */\n@media (max-width: 1px) {\n  .b { color: red; }\n}\n'),
      null,
    );
  });

  it('every stylesheet under webview/ closes every block it opens', () => {
    for (const sheet of sheets) {
      const found = unbalancedBrace(readFileSync(join(repoRoot, sheet), 'utf8'));
      assert.equal(found, null, `${sheet}:${found?.line}: ${found?.problem}`);
    }
  });

  it("every stylesheet but the report's is in the inspector page's stylesheet, the base first", () => {
    for (const sheet of sheets.filter((s) => s !== 'webview/report/report.css'))
      assert.ok(
        inspector.inputs.includes(sheet),
        `${sheet} is imported by no module of the inspector page: its rules never reach it (imported: ${inspector.inputs.join(', ')})`,
      );
    assert.equal(
      inspector.inputs[0],
      'webview/inspector/page.css',
      'the base styles come first: a panel rule overrides them, never the other way',
    );
    assert.ok(
      !inspector.inputs.includes('webview/report/report.css'),
      "the report's own rules stay out of the inspector",
    );
    assert.deepEqual(inspector.warnings, [], 'esbuild had nothing to say of the stylesheets');
  });

  it("the HTML report's stylesheet is the inspector's, in the same order, then the report's own", () => {
    assert.deepEqual(report.inputs, [...inspector.inputs, 'webview/report/report.css']);
    assert.deepEqual(report.warnings, []);
  });

  it('the bundled stylesheets balance too', () => {
    assert.equal(unbalancedBrace(inspector.css), null);
    assert.equal(unbalancedBrace(report.css), null);
  });
});
