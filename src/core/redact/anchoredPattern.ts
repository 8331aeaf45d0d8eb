/**
 * A global pattern run only where one of its matches can start. Some rules' matches each
 * hold a character few texts hold and that comes soon after the match's start: an e-mail
 * address its `@` within 64 characters, an assignment its `=` or `:` within 90. Their
 * regexes alone try every position of a text, and most of a team export's text is ids and
 * other values with none of those characters (most of the e-mail and assignment rules' time
 * went there, docs/performance.md). Here the text is searched for the characters first, and
 * the regex is tried only at the positions up to `reach` before each.
 *
 * The matches are exactly the plain regex's, in the same order: the regex is tried from each
 * such position sticky, after a lazy skip of at most `reach` characters, so the first start
 * it accepts is the leftmost start the plain regex would (its look-behinds read the whole
 * text). Every position is tried at most once, so a text dense with the characters costs
 * what the plain scan costs.
 */
export class AnchoredPattern {
  /** Sticky: a lazy skip of up to `reach` characters, then the pattern as group 1. */
  private readonly windowed: RegExp;
  private readonly anchors: RegExp;

  /**
   * `pattern`: global, without back-references (its groups move up by one here).
   * `anchors`: the characters, one of which every match holds at most `reach` characters after its start.
   */
  constructor(
    readonly pattern: RegExp,
    anchors: string,
    readonly reach: number,
  ) {
    if (!pattern.global) throw new Error(`AnchoredPattern: ${pattern} is not global`);
    if (/\\[1-9]/.test(pattern.source)) throw new Error(`AnchoredPattern: ${pattern} has a back-reference`);
    this.windowed = new RegExp(`[^]{0,${reach}}?(${pattern.source})`, `${pattern.flags.replace('g', '')}y`);
    this.anchors = new RegExp(`[${anchors.replace(/[\\\]^-]/g, '\\$&')}]`, 'g');
  }

  /** The first match starting at `from` or after, as `pattern.exec` with `lastIndex = from` gives it (index and groups). */
  exec(text: string, from: number): RegExpExecArray | null {
    let position = from;
    for (;;) {
      this.anchors.lastIndex = position;
      const anchor = this.anchors.exec(text);
      if (anchor === null) return null;
      const start = Math.max(position, anchor.index - this.reach);
      this.windowed.lastIndex = start;
      const m = this.windowed.exec(text);
      if (m !== null) {
        const match = m.slice(1) as RegExpExecArray;
        match.index = m.index + m[0].length - m[1]!.length;
        match.input = text;
        return match;
      }
      // No match starts in [start, start + reach]; the next one holds an anchor after it.
      position = start + this.reach + 1;
    }
  }
}
