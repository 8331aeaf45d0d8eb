/**
 * Every place where any of a set of keywords occurs in a text, ASCII case folded, in one
 * pass (Aho–Corasick). The rules' keywords decide where their regexes run, as gitleaks
 * does: a regex never scans text with none of its keywords near, which is what keeps the
 * rule set fast on long traces and linear on hostile ones (the pass is O(text + hits)).
 */
export class KeywordIndex {
  private readonly fail: Int32Array;
  /** Keyword indexes ending at each state (its own, then those along its failure chain). */
  private readonly outputs: number[][];
  /**
   * The automaton's transitions, small enough to stay in the processor's cache (a table of
   * 128 entries of 4 bytes a state is 650 KB for gitleaks' keywords): each ASCII
   * character mapped to a class (the characters of no keyword share class 0), and
   * `scanNext[state * classes + class]` the next state, times `classes`, as 16 bits when the
   * states allow it. `hasOutput[state * classes]` says whether the state ends a keyword.
   */
  private readonly classOf: Uint8Array;
  private readonly classes: number;
  private readonly scanNext: Uint16Array | Int32Array;
  private readonly hasOutput: Uint8Array;
  readonly keywords: readonly string[];

  constructor(keywords: readonly string[]) {
    this.keywords = keywords.map((k) => k.toLowerCase());
    let states = 1;
    for (const k of this.keywords) states += k.length;
    const next = new Int32Array(states * 128).fill(-1);
    const outputs: number[][] = [[]];
    let count = 1;
    this.keywords.forEach((k, index) => {
      let s = 0;
      for (let i = 0; i < k.length; i++) {
        const c = k.charCodeAt(i);
        // Keywords are ASCII in every rule set we load; anything else could never match a folded ASCII text.
        if (c >= 128) return;
        let t = next[s * 128 + c]!;
        if (t === -1) {
          t = count++;
          next[s * 128 + c] = t;
          outputs.push([]);
        }
        s = t;
      }
      outputs[s]!.push(index);
    });
    const fail = new Int32Array(count);
    // Breadth-first: complete the goto function with failure transitions (a DFA).
    const queue: number[] = [];
    for (let c = 0; c < 128; c++) {
      const t = next[c]!;
      if (t === -1) next[c] = 0;
      else {
        fail[t] = 0;
        queue.push(t);
      }
    }
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!;
      outputs[s]!.push(...outputs[fail[s]!]!);
      for (let c = 0; c < 128; c++) {
        const t = next[s * 128 + c]!;
        if (t === -1) next[s * 128 + c] = next[fail[s]! * 128 + c]!;
        else {
          fail[t] = next[fail[s]! * 128 + c]!;
          queue.push(t);
        }
      }
    }
    this.fail = fail;
    this.outputs = outputs;
    // Upper-case letters fold to lower case; every other character outside the keywords leads
    // where any of them does (from each state, to the state its failure chain has for none).
    const classOf = new Uint8Array(128);
    let classes = 1;
    for (const k of this.keywords)
      for (let i = 0; i < k.length; i++) {
        const c = k.charCodeAt(i);
        if (c < 128 && classOf[c] === 0) classOf[c] = classes++;
      }
    for (let c = 65; c <= 90; c++) classOf[c] = classOf[c + 32]!;
    const scanNext = count * classes < 65536 ? new Uint16Array(count * classes) : new Int32Array(count * classes);
    let other = -1;
    for (let c = 0; c < 128 && other === -1; c++) if (classOf[c] === 0 && !(c >= 65 && c <= 90)) other = c;
    for (let state = 0; state < count; state++)
      for (let c = 0; c < 128; c++) {
        const cls = classOf[c]!;
        if (cls === 0 && c !== other) continue;
        scanNext[state * classes + cls] = next[state * 128 + (c >= 65 && c <= 90 ? c + 32 : c)]! * classes;
      }
    this.classOf = classOf;
    this.classes = classes;
    this.scanNext = scanNext;
    const hasOutput = new Uint8Array(count * classes);
    outputs.forEach((o, state) => {
      if (o.length > 0) hasOutput[state * classes] = 1;
    });
    this.hasOutput = hasOutput;
  }

  /** Calls `hit(keyword, start)` for every occurrence, in order of its end. */
  scan(text: string, hit: (keyword: number, start: number) => void): void {
    const { classOf, classes, scanNext, hasOutput, outputs } = this;
    const lengths = this.keywords.map((k) => k.length);
    // `at` is the state times `classes`: one multiplication fewer per character.
    let at = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 128) {
        at = 0;
        continue;
      }
      at = scanNext[at + classOf[c]!]!;
      if (hasOutput[at]! === 0) continue;
      const out = outputs[at / classes]!;
      for (let k = 0; k < out.length; k++) hit(out[k]!, i + 1 - lengths[out[k]!]!);
    }
  }

  /** How many states the automaton has (for tests: it stays proportional to the keywords' length). */
  get size(): number {
    return this.fail.length;
  }
}
