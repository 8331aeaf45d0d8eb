// An esbuild plugin: a bundle whose text V8 can hold one byte a character.
//
// V8 keeps a script's source as a string for as long as the script lives (lazy functions are
// compiled from it), and a string holds two bytes a character as soon as one of its
// characters is above U+00FF. esbuild writes code as ASCII (its default `charset`), but it
// keeps some comments as they are, and in them this repository writes `…`, `→`, `≥`: one such
// character made the 1.9 MB analyze bundle a 3.8 MB string for the whole run of
// `agent-trace analyze` (docs/performance.md, "Issue 27, tenth session"). A minified build
// has no comments; a development build is what the repository's own runs and measurements use.
//
// After the build this replaces each UTF-16 unit above U+00FF in the bundle with `?`, one for
// one (columns, and so the source map, stay right), and only when they are all in comments:
// the bundle before and after, with whitespace and comments minified away, must be the same
// program, or the build fails and says where (such a character belongs in the source as a
// `\u` escape: esbuild writes strings as ASCII, but leaves regular expressions as they are).
import { readFile, writeFile } from 'node:fs/promises';
import * as esbuild from 'esbuild';

/** A UTF-16 unit above U+00FF. */
const ABOVE_LATIN1 = /[\u0100-\uffff]/;

/** TEXT without its comments and whitespace, as esbuild prints it (its default charset: code is ASCII). */
async function codeOf(text) {
  return (await esbuild.transform(text, { loader: 'js', minifyWhitespace: true, legalComments: 'none' })).code;
}

/** TEXT with every unit above U+00FF in its comments replaced by `?`; throws when one is in code. */
export async function latin1Bundle(text, name) {
  if (!ABOVE_LATIN1.test(text)) return text;
  const out = text.replace(new RegExp(ABOVE_LATIN1.source, 'g'), '?');
  // Comments and whitespace aside, the two must be the same program.
  const [before, after] = await Promise.all([codeOf(text), codeOf(out)]);
  if (before !== after) {
    let at = 0;
    while (before[at] === after[at]) at++;
    throw new Error(
      `${name}: a character above U+00FF in code, not in a comment, near: ${before.slice(Math.max(0, at - 60), at + 20)}; write it as a \\u escape in the source`,
    );
  }
  return out;
}

/** The plugin: rewrites the build's `outfile` in place. */
export const latin1BundlePlugin = {
  name: 'latin1-bundle',
  setup(build) {
    build.onEnd(async (result) => {
      const file = build.initialOptions.outfile;
      if (result.errors.length > 0 || !file) return;
      const text = await readFile(file, 'utf8');
      const out = await latin1Bundle(text, file);
      if (out !== text) await writeFile(file, out);
    });
  },
};
