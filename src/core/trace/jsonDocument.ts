import { findNodeAtLocation, parse, parseTree, printParseErrorCode } from 'jsonc-parser';
import type { Node, ParseError } from 'jsonc-parser';
import type { SourceLine } from '../text/lineReader';
import type { JsonDocument, JsonPath } from './formatDefinition';
import type { Diagnostic, SourceRef } from './model';

/** Syntax errors reported per document; a badly broken file would otherwise report one per token. */
const MAX_SYNTAX_ERRORS = 20;

/**
 * Parses a whole JSON document (a pretty-printed SWE-agent trajectory, an OTLP export)
 * with jsonc-parser, which recovers from syntax errors instead of giving up, and maps
 * JSON paths back to file lines so CodeLens and "reveal source" work on documents too.
 * The syntax tree is only built when a reader first asks where something is.
 */
export function parseJsonDocument(lines: readonly SourceLine[], file: number): { doc: JsonDocument; diagnostics: Diagnostic[] } {
  const charStarts: number[] = [];
  let text = '';
  let at = 0;
  const parts: string[] = [];
  for (const line of lines) {
    charStarts.push(at);
    const t = line.text ?? '';
    parts.push(t);
    at += t.length + 1;
  }
  text = parts.join('\n');

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

  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { disallowComments: true, allowTrailingComma: false });
  const diagnostics: Diagnostic[] = errors.slice(0, MAX_SYNTAX_ERRORS).map((e) => ({
    ...pick(refAt(e.offset)),
    severity: 'error' as const,
    message: `JSON syntax error: ${printParseErrorCode(e.error)}; the rest of the document is read as far as it can be.`,
  }));
  if (errors.length > MAX_SYNTAX_ERRORS) {
    diagnostics.push({ file, line: -1, severity: 'error', message: `${errors.length - MAX_SYNTAX_ERRORS} more JSON syntax errors.` });
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

function pick(ref: SourceRef): { file: number; line: number } {
  return { file: ref.file, line: ref.line };
}
