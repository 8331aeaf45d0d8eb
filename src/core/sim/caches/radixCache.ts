import type { KeyRun } from '../simRequests';

/**
 * SGLang's RadixCache (docs/design/simulator.md §2; sgl-project/sglang@8905cbd4:
 * python/sglang/srt/mem_cache/radix_cache.py), over the simulator's token key runs
 * instead of token ids, at any page size.
 *
 * A node is an edge label: the tokens at positions [from, to) of every sequence that
 * passes through it (its depth fixes the positions, so two sequences share a node
 * exactly when they have equal keys there). The label is kept as key runs, and may
 * span several runs: SGLang makes the whole unmatched rest of an insert one node, and
 * eviction frees whole nodes, so cutting nodes at run boundaries would evict in
 * smaller pieces than SGLang does.
 *
 * Pages: with page size P every key is cut to whole pages (RadixKey.page_aligned,
 * radix_cache.py l.136) and matches are rounded down to pages (RadixKey.match, l.162), so
 * every node holds whole pages. A child is filed under its first page (child_key, l.198);
 * with the plan's keys a token's key stands for the whole prefix up to it (simRequests.ts),
 * so the key of a page's last token identifies the page.
 *
 * Access times are a logical clock: SGLang stamps one time.monotonic() per match or insert
 * call on every node of the path (l.651, l.717), and a node created by a split or an insert
 * gets its own, later time (TreeNode.__init__, l.227). Only the order of the stamps matters
 * (LRU compares them), so one tick per call and one per new node keeps SGLang's order.
 */

/** One node of the tree: the tokens at positions [from, to) below its parent. */
export interface RadixNode {
  readonly id: number;
  parent: RadixNode | null;
  from: number;
  to: number;
  /** The keys of those tokens: position t has key base + t in the run holding t. */
  runs: KeyRun[];
  /** Children by the key of their first page's last token. */
  readonly children: Map<number, RadixNode>;
  /** Logical time of the last match or insert through this node (or of its creation). */
  lastAccess: number;
  /** How many locked paths (running requests) go through this node. */
  lockRef: number;
  /** False once evicted. */
  alive: boolean;
}

/** A reader of a run list that remembers where it is: a walk asks growing positions, so each step is O(1) amortised. */
class RunCursor {
  private i = 0;

  constructor(private readonly runs: readonly KeyRun[]) {}

  /** The run holding position t, or undefined past the end or in a gap. */
  at(t: number): KeyRun | undefined {
    const runs = this.runs;
    while (this.i > 0 && runs[this.i - 1]!.to > t) this.i--;
    while (this.i < runs.length && runs[this.i]!.to <= t) this.i++;
    const r = runs[this.i];
    return r !== undefined && r.from <= t ? r : undefined;
  }
}

/** The runs of a list clipped to positions [a, b). */
function sliceRuns(runs: readonly KeyRun[], a: number, b: number): KeyRun[] {
  const out: KeyRun[] = [];
  for (const r of runs) {
    if (r.to <= a) continue;
    if (r.from >= b) break;
    out.push({ base: r.base, from: Math.max(r.from, a), to: Math.min(r.to, b) });
  }
  return out;
}

/** The key of position t in a node's runs. */
function keyIn(runs: readonly KeyRun[], t: number): number {
  for (const r of runs) if (r.from <= t && t < r.to) return r.base + t;
  throw new Error(`no key at position ${t}`);
}

/**
 * Tokens from `pos` up to `end` (≤ node.to) where the node and the sequence have equal
 * keys. Keys at one position are equal exactly when the bases are, so runs compare
 * whole.
 */
function commonLength(node: RadixNode, seq: RunCursor, pos: number, end: number): number {
  let t = pos;
  let j = 0;
  const runs = node.runs;
  while (t < end) {
    while (runs[j]!.to <= t) j++;
    const s = seq.at(t);
    if (s === undefined || s.base !== runs[j]!.base) break;
    t = Math.min(end, runs[j]!.to, s.to);
  }
  return t - pos;
}

/**
 * Everything ever inserted, as a never-evicting tree would keep it, for the ideal hit.
 * It leans on the plan's key scheme being a hash chain (simRequests.ts): a key at a
 * position implies the whole prefix before it, and a run (its base and first position)
 * stands for the same keys wherever it appears. So "inserted up to t" per run is the
 * whole record, and the longest inserted prefix is found run by run. A run is named by
 * its base and its first position together: in a block-hash plan two blocks at different
 * positions can share a base (block j with key k has base (k − 1 − j) × block size).
 */
export class PrefixRecord {
  /** Per run (base and first position), the end of the furthest inserted position. */
  private readonly upTo = new Map<string, number>();

  /** Records that the first `length` tokens of `runs` were inserted. */
  insert(runs: readonly KeyRun[], length: number): void {
    for (const r of runs) {
      if (r.from >= length) break;
      const end = Math.min(r.to, length);
      const key = `${r.base}:${r.from}`;
      if ((this.upTo.get(key) ?? -1) < end) this.upTo.set(key, end);
    }
  }

  /** The longest prefix of `runs`, within `limit` tokens, that was ever inserted. */
  longestPrefix(runs: readonly KeyRun[], limit: number): number {
    let t = 0;
    for (const r of runs) {
      if (r.from !== t || t >= limit) break;
      const end = Math.min(r.to, limit);
      const got = this.upTo.get(`${r.base}:${r.from}`) ?? -1;
      if (got < end) return Math.max(t, got);
      t = end;
    }
    return Math.min(t, limit);
  }
}

/** What a match found: the deepest node of the matched path and the matched length. */
export interface RadixMatch {
  node: RadixNode;
  length: number;
}

/** A radix tree of token keys with lock refs and LRU leaf eviction, as SGLang's RadixCache. */
export class RadixCache {
  readonly root: RadixNode;
  private nextId = 1;
  private clock = 0;
  private tokens = 0;
  private locked = 0;
  private live = 0;
  /**
   * Eviction candidates, a min-heap by (lastAccess, id) with lazy deletion: an entry
   * counts only while its node is alive, a leaf, unlocked and still has that stamp.
   * SGLang heapifies its set of evictable leaves on each evict call (l.571); popping the
   * valid minimum here picks the same node (stamps of two leaves never tie: a stamp is
   * shared only along one path).
   */
  private readonly heapAt: number[] = [];
  private readonly heapNode: RadixNode[] = [];

  constructor(readonly pageSize = 1) {
    if (!Number.isInteger(pageSize) || pageSize < 1)
      throw new RangeError(`page size must be a whole number ≥ 1, got ${pageSize}`);
    this.root = {
      id: 0,
      parent: null,
      from: 0,
      to: 0,
      runs: [],
      children: new Map(),
      lastAccess: 0,
      lockRef: 0,
      alive: true,
    };
  }

  /** Tokens held by the tree (whole pages). */
  get size(): number {
    return this.tokens;
  }

  /** Tokens in nodes some running request has locked (protected_size). */
  get lockedTokens(): number {
    return this.locked;
  }

  /** Tokens eviction could free (evictable_size): every unlocked node, since locks cover whole root paths. */
  get evictableTokens(): number {
    return this.tokens - this.locked;
  }

  /** `n` rounded down to whole pages. */
  aligned(n: number): number {
    return n - (n % this.pageSize);
  }

  /**
   * match_prefix (l.355): the longest cached prefix of `runs` within the first `limit`
   * tokens, in whole pages. Refreshes every node on the path with one new stamp and
   * splits the node the match ends inside, so the returned node ends exactly at the
   * matched length. A key shorter than a page touches nothing.
   */
  match(runs: readonly KeyRun[], limit: number): RadixMatch {
    const end = this.aligned(limit);
    if (end <= 0) return { node: this.root, length: 0 };
    return this.walk(runs, end, ++this.clock);
  }

  /** The length match would find, without refreshing or splitting anything (a router's look at the tree). */
  matchLength(runs: readonly KeyRun[], limit: number): number {
    const end = this.aligned(limit);
    const seq = new RunCursor(runs);
    let node = this.root;
    let pos = 0;
    while (pos < end) {
      const child = node.children.get(this.pageKey(seq, pos));
      if (child === undefined) break;
      const m = this.aligned(commonLength(child, seq, pos, Math.min(child.to, end)));
      pos += m;
      if (pos < child.to) break;
      node = child;
    }
    return pos;
  }

  /**
   * insert (l.415): puts the first `length` tokens of `runs` (a whole number of pages) into
   * the tree, refreshing the path; the part not yet there becomes one new leaf. Returns
   * the node ending at `length` and the prefix that was already there (the caller's own
   * copies of it are duplicates and go back to the free pool).
   */
  insert(runs: readonly KeyRun[], length: number): { node: RadixNode; prefixLength: number } {
    if (length % this.pageSize !== 0)
      throw new Error(`insert of ${length} tokens: not whole ${this.pageSize}-token pages`);
    const stamp = ++this.clock;
    if (length === 0) return { node: this.root, prefixLength: 0 };
    const { node, length: pos } = this.walk(runs, length, stamp);
    if (pos >= length) return { node, prefixLength: pos };
    const leafRuns = sliceRuns(runs, pos, length);
    if (leafRuns.length === 0 || leafRuns[0]!.from !== pos || leafRuns[leafRuns.length - 1]!.to !== length)
      throw new Error(`key runs do not cover positions ${pos}–${length}`);
    // A new node's time is its creation, after the call's stamp (TreeNode() in _insert_helper, l.747).
    const leaf: RadixNode = {
      id: this.nextId++,
      parent: node,
      from: pos,
      to: length,
      runs: leafRuns,
      children: new Map(),
      lastAccess: ++this.clock,
      lockRef: 0,
      alive: true,
    };
    node.children.set(this.firstKey(leaf), leaf);
    this.tokens += length - pos;
    this.live += 1;
    this.pushCandidate(leaf);
    return { node: leaf, prefixLength: pos };
  }

  /** inc_lock_ref (l.594): protects the path root → node from eviction. */
  lock(node: RadixNode): void {
    for (let n: RadixNode | null = node; n !== null && n !== this.root; n = n.parent) {
      if (n.lockRef === 0) this.locked += n.to - n.from;
      n.lockRef += 1;
    }
  }

  /** dec_lock_ref (l.609): an unlocked leaf becomes an eviction candidate again. */
  unlock(node: RadixNode): void {
    for (let n: RadixNode | null = node; n !== null && n !== this.root; n = n.parent) {
      n.lockRef -= 1;
      if (n.lockRef < 0) throw new Error(`node ${n.id} unlocked more often than locked`);
      if (n.lockRef === 0) {
        this.locked -= n.to - n.from;
        if (n.children.size === 0) this.pushCandidate(n);
      }
    }
  }

  /**
   * evict (l.565): removes unlocked leaves, least recently accessed first, each whole (so
   * it may free more than asked), until `tokens` are freed or nothing is evictable. A
   * parent left without children becomes a candidate with its own access time.
   * Returns the tokens freed.
   */
  evict(tokens: number): number {
    let freed = 0;
    while (freed < tokens) {
      const x = this.popCandidate();
      if (x === undefined) break;
      const parent = x.parent!;
      parent.children.delete(this.firstKey(x));
      x.alive = false;
      x.parent = null;
      const len = x.to - x.from;
      this.tokens -= len;
      this.live -= 1;
      freed += len;
      if (parent !== this.root && parent.children.size === 0 && parent.lockRef === 0) this.pushCandidate(parent);
    }
    return freed;
  }

  /** Recounts the whole tree and throws when a kept total, a lock count or a link disagrees (for tests). */
  check(): void {
    let tokens = 0;
    let locked = 0;
    let live = 0;
    const stack: RadixNode[] = [this.root];
    while (stack.length > 0) {
      const n = stack.pop()!;
      for (const [key, c] of n.children) {
        if (!c.alive || c.parent !== n) throw new Error(`node ${c.id}: dead or wrongly linked`);
        if (c.from !== n.to || c.to <= c.from)
          throw new Error(`node ${c.id}: covers ${c.from}–${c.to} below a parent ending at ${n.to}`);
        if ((c.to - c.from) % this.pageSize !== 0)
          throw new Error(`node ${c.id}: ${c.to - c.from} tokens, not whole pages`);
        if (this.firstKey(c) !== key)
          throw new Error(`node ${c.id}: filed under key ${key}, first page key ${this.firstKey(c)}`);
        let t = c.from;
        for (const r of c.runs) {
          if (r.from !== t || r.to <= r.from) throw new Error(`node ${c.id}: runs not contiguous at ${t}`);
          t = r.to;
        }
        if (t !== c.to) throw new Error(`node ${c.id}: runs end at ${t}, node at ${c.to}`);
        if (c.lockRef < 0 || (n !== this.root && n.lockRef < c.lockRef))
          throw new Error(`node ${c.id}: lock ref ${c.lockRef} above its parent's ${n.lockRef}`);
        tokens += c.to - c.from;
        if (c.lockRef > 0) locked += c.to - c.from;
        live += 1;
        stack.push(c);
      }
    }
    if (tokens !== this.tokens || locked !== this.locked || live !== this.live) {
      throw new Error(
        `tree totals drifted: tokens ${this.tokens} (counted ${tokens}), locked ${this.locked} (${locked}), nodes ${this.live} (${live})`,
      );
    }
  }

  // ---- internals ----

  /** The key a child starting at `pos` is filed under: its first page's last token (child_key). */
  private pageKey(seq: RunCursor, pos: number): number {
    const s = seq.at(pos + this.pageSize - 1);
    return s === undefined ? Number.NaN : s.base + pos + this.pageSize - 1;
  }

  private firstKey(n: RadixNode): number {
    return keyIn(n.runs, n.from + this.pageSize - 1);
  }

  /** _match_prefix_helper / the walk of _insert_helper: stamps the path, splits where the match ends inside a node. */
  private walk(runs: readonly KeyRun[], end: number, stamp: number): RadixMatch {
    this.root.lastAccess = stamp;
    const seq = new RunCursor(runs);
    let node = this.root;
    let pos = 0;
    while (pos < end) {
      const child = node.children.get(this.pageKey(seq, pos));
      if (child === undefined) break;
      this.touch(child, stamp);
      const m = this.aligned(commonLength(child, seq, pos, Math.min(child.to, end)));
      if (pos + m < child.to) {
        // The rest of the key differs from the child (or ends): after the split it hangs below the new node.
        node = this.split(child, pos + m);
        pos += m;
        break;
      }
      node = child;
      pos = child.to;
    }
    return { node, length: pos };
  }

  private touch(n: RadixNode, stamp: number): void {
    n.lastAccess = stamp;
    if (n.children.size === 0 && n.lockRef === 0) this.pushCandidate(n);
  }

  /** _split_node (l.676): the first `at − from` tokens of `child` become a new parent node, created now. */
  private split(child: RadixNode, at: number): RadixNode {
    const parent = child.parent!;
    const top: RadixNode = {
      id: this.nextId++,
      parent,
      from: child.from,
      to: at,
      runs: sliceRuns(child.runs, child.from, at),
      children: new Map(),
      lastAccess: ++this.clock,
      lockRef: child.lockRef,
      alive: true,
    };
    parent.children.set(this.firstKey(top), top);
    child.from = at;
    child.runs = sliceRuns(child.runs, at, child.to);
    child.parent = top;
    top.children.set(this.firstKey(child), child);
    this.live += 1;
    return top;
  }

  private less(i: number, j: number): boolean {
    const a = this.heapAt[i]!;
    const b = this.heapAt[j]!;
    return a < b || (a === b && this.heapNode[i]!.id < this.heapNode[j]!.id);
  }

  private swap(i: number, j: number): void {
    [this.heapAt[i], this.heapAt[j]] = [this.heapAt[j]!, this.heapAt[i]!];
    [this.heapNode[i], this.heapNode[j]] = [this.heapNode[j]!, this.heapNode[i]!];
  }

  private pushCandidate(n: RadixNode): void {
    // Stale entries pile up as nodes are touched; rebuild from the live leaves when they dominate.
    if (this.heapAt.length > 2 * this.live + 64) this.rebuildHeap();
    this.heapAt.push(n.lastAccess);
    this.heapNode.push(n);
    let i = this.heapAt.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!this.less(i, up)) break;
      this.swap(i, up);
      i = up;
    }
  }

  private popCandidate(): RadixNode | undefined {
    while (this.heapAt.length > 0) {
      const at = this.heapAt[0]!;
      const n = this.heapNode[0]!;
      const lastAt = this.heapAt.pop()!;
      const lastNode = this.heapNode.pop()!;
      if (this.heapAt.length > 0) {
        this.heapAt[0] = lastAt;
        this.heapNode[0] = lastNode;
        this.siftDown(0);
      }
      if (n.alive && n !== this.root && n.children.size === 0 && n.lockRef === 0 && n.lastAccess === at) return n;
    }
    return undefined;
  }

  private siftDown(start: number): void {
    let i = start;
    const size = this.heapAt.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < size && this.less(l, m)) m = l;
      if (r < size && this.less(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }

  private rebuildHeap(): void {
    this.heapAt.length = 0;
    this.heapNode.length = 0;
    const stack: RadixNode[] = [this.root];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (n !== this.root && n.children.size === 0 && n.lockRef === 0) {
        this.heapAt.push(n.lastAccess);
        this.heapNode.push(n);
      }
      for (const c of n.children.values()) stack.push(c);
    }
    for (let i = (this.heapAt.length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }
}
