// An esbuild plugin: the price list of @pydantic/genai-prices loaded as JSON.
//
// The library's bundle (dist/index.js) opens with its whole price list as one JavaScript
// object literal (`const E = [ …providers… ], J = { …units… };`, about 800 kB of source).
// Evaluating a literal that size makes V8 parse it into a syntax tree, compile it to
// bytecode and keep boilerplate objects for it, and much of that memory stays resident
// after the objects exist; `JSON.parse` of a string builds the same objects without any of
// it. This plugin evaluates the library's own literals at build time and writes each back
// as `JSON.parse("…")` of the same data: the library's data, its code and its matching
// logic are untouched (docs/performance.md, "Issue 27, ninth session"). The build fails if
// the file no longer has that shape or if any value would not survive JSON unchanged.
import { readFile } from 'node:fs/promises';

const LIBRARY_FILE = /[\\/]@pydantic[\\/]genai-prices[\\/]dist[\\/]index\.js$/;

/** The index just past the literal that opens at `start` (`[` or `{`); strings are skipped. */
function literalEnd(text, start) {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'" || c === '`') {
      for (i++; text[i] !== c; i++) {
        if (text[i] === '\\') i++;
        if (i >= text.length) throw new Error('genai-prices: unterminated string in the price list');
      }
    } else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  throw new Error('genai-prices: unterminated price list literal');
}

/** Throws unless `value` is data that JSON carries exactly (plain objects, arrays, strings, finite numbers, booleans, null). */
function checkJsonData(value, path) {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || Object.is(value, -0)) throw new Error(`genai-prices: ${path} is ${value}`);
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) throw new Error(`genai-prices: ${path}[${i}] is a hole`);
      checkJsonData(value[i], `${path}[${i}]`);
    }
    return;
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [k, v] of Object.entries(value)) checkJsonData(v, `${path}.${k}`);
    return;
  }
  throw new Error(`genai-prices: ${path} is not JSON data (${typeof value})`);
}

/** The library's source with each top-level data literal of its first declaration written as JSON.parse of a string. */
export function priceListAsJson(source) {
  const head = /^const (\w+) = \[/.exec(source);
  if (!head) throw new Error('genai-prices: the bundle no longer opens with its price list');
  let out = 'const ';
  let at = 'const '.length;
  let literals = 0;
  for (;;) {
    const decl = /^(\w+) = /.exec(source.slice(at, at + 100));
    if (!decl) throw new Error('genai-prices: unexpected declaration in the price list');
    const open = at + decl[0].length;
    const end = literalEnd(source, open);
    const literal = source.slice(open, end);
    const value = new Function(`return (${literal});`)();
    checkJsonData(value, decl[1]);
    out += `${decl[1]} = JSON.parse(${JSON.stringify(JSON.stringify(value))})`;
    literals++;
    at = end;
    if (source.startsWith(', ', at)) {
      out += ', ';
      at += 2;
    } else if (source[at] === ';') break;
    else throw new Error('genai-prices: unexpected text after the price list');
  }
  if (literals < 1) throw new Error('genai-prices: no price list found');
  return out + source.slice(at);
}

/** esbuild plugin: applies priceListAsJson to the library's ES module build when it is bundled. */
export const priceListJsonPlugin = {
  name: 'genai-prices-json',
  setup(build) {
    build.onLoad({ filter: LIBRARY_FILE }, async (args) => ({
      contents: priceListAsJson(await readFile(args.path, 'utf8')),
      loader: 'js',
    }));
  },
};
