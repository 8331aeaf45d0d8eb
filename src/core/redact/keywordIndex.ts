/**
 * Every place where any of a set of keywords occurs in a text, ASCII case folded, in one
 * pass (Aho–Corasick). The rules' keywords decide where their regexes run, as gitleaks
 * does: a regex never scans text with none of its keywords near, which is what keeps the
 * rule set fast on long traces and linear on hostile ones (the pass is O(text + hits)).
 */
export class KeywordIndex {
  /** goto[state * 128 + c]: the next state on ASCII character c (folded to lower case). */
  private readonly next: Int32Array;
  private readonly fail: Int32Array;
  /** Keyword indexes ending at each state (its own, then those along its failure chain). */
  private readonly outputs: number[][];
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
    this.next = next.subarray(0, count * 128);
    this.fail = fail;
    this.outputs = outputs;
  }

  /** Calls `hit(keyword, start)` for every occurrence, in order of its end. */
  scan(text: string, hit: (keyword: number, start: number) => void): void {
    const next = this.next;
    const outputs = this.outputs;
    const lengths = this.keywords.map((k) => k.length);
    let s = 0;
    for (let i = 0; i < text.length; i++) {
      let c = text.charCodeAt(i);
      if (c >= 128) {
        s = 0;
        continue;
      }
      if (c >= 65 && c <= 90) c += 32;
      s = next[s * 128 + c]!;
      const out = outputs[s]!;
      for (let k = 0; k < out.length; k++) hit(out[k]!, i + 1 - lengths[out[k]!]!);
    }
  }

  /** How many states the automaton has (for tests: it stays proportional to the keywords' length). */
  get size(): number {
    return this.fail.length;
  }
}
