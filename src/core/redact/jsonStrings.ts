/**
 * The string literals of a JSON text, found by a plain scan: in valid JSON every `"` that
 * is not inside a string opens one, so walking the text once from the start finds exactly
 * the literals (keys and values), whatever the nesting. Redaction changes nothing else,
 * so numbers (every token figure), structure and whitespace stay byte for byte.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Calls `visit(start, end)` for each string literal of `text`: `text.slice(start, end)` is
 * the literal with its quotes. A literal left open at the end of the text (a cut line) runs
 * to the end.
 */
export function forEachStringLiteral(text: string, visit: (start: number, end: number) => void): void {
  let i = text.indexOf('"');
  while (i !== -1) {
    const start = i;
    let j = i + 1;
    for (;;) {
      const q = text.indexOf('"', j);
      if (q === -1) {
        visit(start, text.length);
        return;
      }
      // The quote closes the literal unless an odd run of backslashes escapes it.
      let slashes = 0;
      for (let k = q - 1; k > start && text.charCodeAt(k) === BACKSLASH; k--) slashes++;
      if (slashes % 2 === 0) {
        visit(start, q + 1);
        i = text.indexOf('"', q + 1);
        break;
      }
      j = q + 1;
    }
  }
}

/**
 * The value of a string literal (quotes included), or null when it is not valid JSON
 * (a raw control character, a bad escape, a literal cut short).
 */
export function decodeLiteral(literal: string): string | null {
  if (literal.length < 2 || literal.charCodeAt(literal.length - 1) !== QUOTE) return null;
  if (literal.indexOf('\\') === -1) {
    const inner = literal.slice(1, -1);
    // Control characters must be escaped in JSON: let JSON.parse refuse them.
    // eslint-disable-next-line no-control-regex
    if (!/[\u0000-\u001f]/.test(inner)) return inner;
  }
  try {
    const value: unknown = JSON.parse(literal);
    return typeof value === 'string' ? value : null;
  } catch {
    return null;
  }
}

/** A literal for `value`: JSON.stringify, which escapes quotes, backslashes, controls and lone surrogates. */
export function encodeLiteral(value: string): string {
  return JSON.stringify(value);
}
