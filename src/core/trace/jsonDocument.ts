import { findNodeAtLocation, parse, parseTree, printParseErrorCode } from 'jsonc-parser';
import type { Node, ParseError } from 'jsonc-parser';
import type { SourceLine } from '../text/lineReader';
import type { JsonDocument, JsonPath } from './formatDefinition';
import { MAX_JSON_DEPTH } from './jsonStream';
import type { StreamingJsonParser, StreamResult } from './jsonStream';
import type { Diagnostic, SourceRef } from './model';

/** Syntax errors reported per document; a badly broken file would otherwise report one per token. */
const MAX_SYNTAX_ERRORS = 20;

/**
 * A whole JSON document (a pretty-printed SWE-agent trajectory, an OTLP export) whose
 * lines are all at hand, read with jsonc-parser, which recovers from syntax errors
 * instead of giving up, and maps JSON paths back to file lines so CodeLens and "reveal
 * source" work on documents too. The syntax tree is only built when a reader first
 * asks where something is. `value` is the document already parsed (by the streaming
 * parser, when the text is valid JSON); without it the text is parsed here.
 *
 * Only for documents known to nest at most MAX_JSON_DEPTH levels: jsonc-parser is
 * recursive.
 */
export function parseJsonDocument(
  lines: readonly SourceLine[],
  file: number,
  parsed?: { value: unknown },
): { doc: JsonDocument; diagnostics: Diagnostic[] } {
  const charStarts: number[] = [];
  let at = 0;
  const parts: string[] = [];
  for (const line of lines) {
    charStarts.push(at);
    const t = line.text ?? '';
    parts.push(t);
    at += t.length + 1;
  }
  const text = parts.join('\n');

  const lineOf = (charOffset: number): number => {
    let lo = 0;
    let hi = charStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (charStarts[mid]! <= charOffset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const refAt = (charOffset: number): SourceRef => {
    const i = lineOf(charOffset);
    const line = lines[i];
    if (!line) return { file, line: 0, offset: 0 };
    // Within a line, characters stand in for bytes: exact for ASCII, close enough to scroll to.
    return { file, line: line.line, offset: line.offset + (charOffset - charStarts[i]!) };
  };

  const diagnostics: Diagnostic[] = [];
  let value: unknown;
  if (parsed) value = parsed.value;
  else {
    const errors: ParseError[] = [];
    value = parse(text, errors, { disallowComments: true, allowTrailingComma: false });
    for (const e of errors.slice(0, MAX_SYNTAX_ERRORS)) {
      const ref = refAt(e.offset);
      diagnostics.push({
        file: ref.file,
        line: ref.line,
        severity: 'error',
        message: `JSON syntax error: ${printParseErrorCode(e.error)}; the rest of the document is read as far as it can be.`,
      });
    }
    if (errors.length > MAX_SYNTAX_ERRORS) {
      diagnostics.push({
        file,
        line: -1,
        severity: 'error',
        message: `${errors.length - MAX_SYNTAX_ERRORS} more JSON syntax errors.`,
      });
    }
  }

  let tree: Node | undefined | null = null;
  const locate = (path: JsonPath): SourceRef => {
    if (tree === null) tree = parseTree(text, [], { disallowComments: true });
    if (!tree) return refAt(0);
    // Walk up until a path that exists: a reader may ask for a field the file lacks.
    for (let n = path.length; n >= 0; n--) {
      const node = findNodeAtLocation(tree, path.slice(0, n) as (string | number)[]);
      if (node) return refAt(node.offset);
    }
    return refAt(0);
  };
  return { doc: { value, file, locate }, diagnostics };
}

/**
 * A document read by the streaming parser alone (too large to hold as text, or nested
 * too deeply for jsonc-parser): paths are located at the nearest object or array
 * whose start the parser recorded. The first syntax error (parsing stopped there) and
 * the subtrees left out for depth are reported with their lines.
 */
export function streamedJsonDocument(
  parser: StreamingJsonParser,
  result: StreamResult,
  file: number,
): { doc: JsonDocument; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  if (result.error) {
    diagnostics.push({
      file,
      line: result.error.at.line,
      severity: 'error',
      message: `JSON syntax error: ${result.error.message}; the document is read up to there.`,
    });
  }
  for (const at of result.pruned) {
    diagnostics.push({
      file,
      line: at.line,
      severity: 'error',
      message: `A value here nests deeper than ${MAX_JSON_DEPTH} levels; it is left out.`,
    });
  }
  if (result.prunedCount > result.pruned.length) {
    diagnostics.push({
      file,
      line: -1,
      severity: 'error',
      message: `${result.prunedCount - result.pruned.length} more values nested deeper than ${MAX_JSON_DEPTH} levels were left out.`,
    });
  }
  const root = result.value;
  const locate = (path: JsonPath): SourceRef => {
    let best = typeof root === 'object' && root !== null ? parser.positionOf(root) : undefined;
    let node: unknown = root;
    for (const key of path) {
      if (typeof node !== 'object' || node === null) break;
      node = (node as Record<string | number, unknown>)[key];
      if (typeof node !== 'object' || node === null) break;
      const at = parser.positionOf(node);
      if (!at) break;
      best = at;
    }
    return best ? { file, line: best.line, offset: best.offset } : { file, line: 0, offset: 0 };
  };
  return { doc: { value: root, file, locate }, diagnostics };
}
