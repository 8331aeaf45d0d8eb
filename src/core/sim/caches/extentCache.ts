import type { KeyRun } from '../simRequests';

/**
 * vLLM's block pool and prefix cache (docs/design/simulator.md §1.5–1.6), kept as extents:
 * runs of blocks that have behaved alike so far (same lineage, consecutive block
 * indices, same ref count, same place). An agent call that hits 5,000 cached blocks
 * and frees them again touches a handful of extents instead of 5,000 blocks.
 * Extents split when their blocks start to behave differently; the observable
 * behaviour is exactly the block-level pool's (tests compare the two engines).
 *
 * Owns the pool of one engine run: the free queue, the hash index, the ever-cached
 * set (for ideal hits) and the optional CPU tier.
 */

/** A run of blocks with uniform state. Blank extents are free blocks without a hash. */
export interface Extent {
  /** Key of block j is base + j; NaN for blank extents. */
  base: number;
  from: number;
  to: number;
  hashed: boolean;
  /** Insert order of block `from` into the hash map; block j's is seq0 + (j − from). */
  seq0: number;
  ref: number;
  /** Requests whose tables hold this extent (a finished request whose table a ttl-pin keeps stands for the pin). */
  holders: number[];
  inQueue: boolean;
  prev: Extent | null;
  next: Extent | null;
  alive: boolean;
}

/** A queued extent holding some of a lookup's hit blocks (see ExtentCache.queuedFragments). */
export interface QueuedFragment {
  ext: Extent;
  /** The hit range [lo, hi) it serves (block indices). */
  lo: number;
  hi: number;
  /** Blocks popped from the queue before its top block goes. */
  q0: number;
}

/** A slice of an extent chosen by a lookup. */
export interface HitPiece {
  ext: Extent;
  from: number;
  to: number;
}

const NO_EXTENTS: readonly Extent[] = [];

function size(e: Extent): number {
  return e.to - e.from;
}

/** Whether two extents are held by the same tables, in the same order. */
function sameHolders(a: Extent, b: Extent): boolean {
  if (a.holders.length !== b.holders.length) return false;
  for (let k = 0; k < a.holders.length; k++) if (a.holders[k] !== b.holders[k]) return false;
  return true;
}

/** Removes list[i] keeping the order (splice would allocate an array of the removed item). */
function removeAt<T>(list: T[], i: number): void {
  for (let k = i + 1; k < list.length; k++) list[k - 1] = list[k]!;
  list.pop();
}

/** Per-lineage interval set, for "was this key ever cached" (ideal hits). */
class IntervalSet {
  private readonly byBase = new Map<number, number[]>(); // sorted, disjoint [a0, b0, a1, b1, ...]

  add(base: number, from: number, to: number): void {
    if (from >= to) return;
    const list = this.byBase.get(base);
    if (!list) {
      this.byBase.set(base, [from, to]);
      return;
    }
    // Common case: appending at the end.
    const last = list.length - 1;
    if (from >= list[last - 1]! && from <= list[last]!) {
      list[last] = Math.max(list[last]!, to);
      return;
    }
    if (from > list[last]!) {
      list.push(from, to);
      return;
    }
    const merged: number[] = [];
    let a = from;
    let b = to;
    let placed = false;
    for (let i = 0; i < list.length; i += 2) {
      const x = list[i]!;
      const y = list[i + 1]!;
      if (y < a) merged.push(x, y);
      else if (x > b) {
        if (!placed) {
          merged.push(a, b);
          placed = true;
        }
        merged.push(x, y);
      } else {
        a = Math.min(a, x);
        b = Math.max(b, y);
      }
    }
    if (!placed) merged.push(a, b);
    this.byBase.set(base, merged);
  }

  /** The end of the covered stretch starting at j, or j when j is not covered. */
  coveredUntil(base: number, j: number): number {
    const list = this.byBase.get(base);
    if (!list) return j;
    // The last interval starting at or before j (the list is sorted and disjoint).
    let lo = 0;
    let hi = list.length / 2 - 1;
    if (list[0]! > j) return j;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (list[2 * mid]! <= j) lo = mid;
      else hi = mid - 1;
    }
    return j < list[2 * lo + 1]! ? list[2 * lo + 1]! : j;
  }
}

/** Keys saved to the CPU tier in save order: from `first` stepping by `dir`, `count` blocks. */
interface CpuRun {
  base: number;
  first: number;
  dir: 1 | -1;
  count: number;
  /** Position in save order; runs are never reordered, only shortened or split. */
  order: number;
}

/** The lowest key a (non-empty) run holds. */
function lowKey(run: CpuRun): number {
  return run.dir === 1 ? run.first : run.first - (run.count - 1);
}

/** The highest key a (non-empty) run holds. */
function highKey(run: CpuRun): number {
  return run.dir === 1 ? run.first + run.count - 1 : run.first;
}

/**
 * The CPU tier as an LRU of keys (oldest first), kept as runs of consecutive block
 * indices of one lineage, indexed by lineage for membership tests.
 */
class CpuTier {
  /**
   * A lineage's non-empty runs, sorted by lowest key. Runs are disjoint and only shrink,
   * or grow into keys no run holds, so the order never changes once a run is placed.
   */
  private readonly byBase = new Map<number, CpuRun[]>();
  /** Runs in save order; the oldest live run is at `head`. */
  private order: CpuRun[] = [];
  private head = 0;
  private total = 0;
  private nextOrder = 0;

  constructor(private readonly capacityBlocks: number) {}

  get enabled(): boolean {
    return this.capacityBlocks > 0;
  }

  private find(base: number, j: number): { run: CpuRun; pos: number } | null {
    const list = this.byBase.get(base);
    if (!list) return null;
    // The last run starting at or below j is the only one that can hold it.
    let lo = 0;
    let hi = list.length - 1;
    if (hi < 0 || lowKey(list[0]!) > j) return null;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lowKey(list[mid]!) <= j) lo = mid;
      else hi = mid - 1;
    }
    const run = list[lo]!;
    return j <= highKey(run) ? { run, pos: (j - run.first) * run.dir } : null;
  }

  private place(run: CpuRun): void {
    const list = this.byBase.get(run.base);
    if (!list) {
      this.byBase.set(run.base, [run]);
      return;
    }
    const key = lowKey(run);
    let i = list.length;
    while (i > 0 && lowKey(list[i - 1]!) > key) i--;
    list.splice(i, 0, run);
  }

  private unplace(run: CpuRun): void {
    const list = this.byBase.get(run.base)!;
    list.splice(list.indexOf(run), 1);
    if (list.length === 0) this.byBase.delete(run.base);
  }

  has(base: number, j: number): boolean {
    return this.find(base, j) !== null;
  }

  /** The end of the stretch of keys j, j + 1, … of `base` the tier holds (j when it lacks j). */
  heldUntil(base: number, j: number): number {
    for (;;) {
      const at = this.find(base, j);
      if (!at) return j;
      j = highKey(at.run) + 1;
    }
  }

  delete(base: number, j: number): void {
    const at = this.find(base, j);
    if (!at) return;
    const { run, pos } = at;
    const after: CpuRun = {
      base,
      first: run.first + (pos + 1) * run.dir,
      dir: run.dir,
      count: run.count - pos - 1,
      order: run.order,
    };
    if (pos === 0) this.unplace(run);
    run.count = pos;
    if (after.count > 0) {
      // The tail part keeps its place in save order, just after the head part.
      this.place(after);
      this.order.splice(this.order.indexOf(run, this.head) + 1, 0, after);
    }
    this.total -= 1;
  }

  /** Saves a key as the newest (refreshing it if present), dropping the oldest when full. */
  save(base: number, j: number): void {
    if (this.has(base, j)) this.delete(base, j);
    else if (this.total >= this.capacityBlocks) this.dropOldest();
    const last = this.order[this.order.length - 1];
    if (
      last &&
      this.order.length > this.head &&
      last.base === base &&
      last.count === 1 &&
      Math.abs(j - last.first) === 1
    ) {
      last.dir = (j - last.first) as 1 | -1;
      last.count = 2;
    } else if (
      last &&
      this.order.length > this.head &&
      last.base === base &&
      last.count > 1 &&
      j === last.first + last.count * last.dir
    ) {
      last.count += 1;
    } else {
      const run: CpuRun = { base, first: j, dir: -1, count: 1, order: this.nextOrder++ };
      this.order.push(run);
      this.place(run);
    }
    this.total += 1;
  }

  private dropOldest(): void {
    while (this.head < this.order.length && this.order[this.head]!.count === 0) this.head++;
    const run = this.order[this.head];
    if (!run) return;
    if (run.count === 1) this.unplace(run);
    run.first += run.dir;
    run.count -= 1;
    this.total -= 1;
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }
}

/** The extent pool. */
export class ExtentCache {
  private readonly queueHead: Extent;
  private readonly queueTail: Extent;
  freeCount: number;
  private readonly index = new Map<number, Extent[]>();
  private readonly ever = new IntervalSet();
  private readonly cpu: CpuTier;
  private seq = 0;
  /** Blocks saved to the CPU tier since the last call to takeSaved (for transfer time). */
  savedBlocks = 0;
  /** Scratch of blocksBeforePieces. */
  private readonly wantedScratch: Extent[] = [];
  private readonly wantedHiScratch: number[] = [];

  constructor(
    readonly blocks: number,
    private readonly freeOrder: 'current' | 'legacy',
    cpuBlocks: number,
  ) {
    const sentinel = (): Extent => ({
      base: NaN,
      from: 0,
      to: 0,
      hashed: false,
      seq0: 0,
      ref: 0,
      holders: [],
      inQueue: false,
      prev: null,
      next: null,
      alive: false,
    });
    this.queueHead = sentinel();
    this.queueTail = sentinel();
    this.queueHead.next = this.queueTail;
    this.queueTail.prev = this.queueHead;
    this.freeCount = 0;
    this.cpu = new CpuTier(cpuBlocks);
    if (blocks > 0) this.insertBefore(this.blank(blocks), this.queueTail);
  }

  private blank(n: number): Extent {
    return {
      base: NaN,
      from: 0,
      to: n,
      hashed: false,
      seq0: 0,
      ref: 0,
      holders: [],
      inQueue: false,
      prev: null,
      next: null,
      alive: true,
    };
  }

  // ---- queue ----

  private insertBefore(e: Extent, at: Extent): void {
    const p = at.prev!;
    p.next = e;
    e.prev = p;
    e.next = at;
    at.prev = e;
    e.inQueue = true;
    this.freeCount += size(e);
  }

  private unlinkFromQueue(e: Extent): void {
    e.prev!.next = e.next;
    e.next!.prev = e.prev;
    e.prev = null;
    e.next = null;
    e.inQueue = false;
    this.freeCount -= size(e);
  }

  // ---- index ----

  private indexAdd(e: Extent): void {
    const list = this.index.get(e.base);
    if (list) list.push(e);
    else this.index.set(e.base, [e]);
  }

  private indexRemove(e: Extent): void {
    const list = this.index.get(e.base);
    if (!list) return;
    const i = list.indexOf(e);
    // Order in an index list decides nothing (lookups compare insert order), so the last item fills the hole.
    // An emptied list stays for the lineage's next blocks: decode empties and refills it all the time.
    if (i >= 0) {
      list[i] = list[list.length - 1]!;
      list.pop();
    }
  }

  /** The hashed extents of a lineage (empty when none). */
  private indexed(base: number): readonly Extent[] {
    return this.index.get(base) ?? NO_EXTENTS;
  }

  /**
   * Splits `e` so that a boundary falls at block j, returning the part that starts at j.
   * Both parts keep the ref count, holders and place; in the queue, blocks are in
   * descending order (released tail first), so the higher part comes first.
   */
  private splitAt(e: Extent, j: number, tables: Extent[][]): Extent {
    const upper: Extent = {
      ...e,
      from: j,
      seq0: e.seq0 + (j - e.from),
      holders: [...e.holders],
      prev: null,
      next: null,
    };
    e.to = j;
    if (e.hashed) this.indexAdd(upper);
    if (e.inQueue) {
      // Queue order (head → tail) is descending j for hashed extents: upper goes before e.
      const p = e.prev!;
      p.next = upper;
      upper.prev = p;
      upper.next = e;
      e.prev = upper;
      upper.inQueue = true;
    }
    for (const h of e.holders) {
      const table = tables[h]!;
      const i = table.indexOf(e);
      table.splice(i + 1, 0, upper);
    }
    return upper;
  }

  // ---- lookup ----

  /** Set by best: how far its choice holds. */
  private bestUntil = 0;

  /** The best (earliest inserted) hashed extent covering (base, j); how far its choice holds goes to bestUntil. */
  private best(base: number, j: number): Extent | null {
    const list = this.index.get(base);
    if (!list) return null;
    let chosen: Extent | null = null;
    for (const e of list) {
      if (e.from <= j && j < e.to && (!chosen || e.seq0 - e.from < chosen.seq0 - chosen.from)) chosen = e;
    }
    if (!chosen) return null;
    // Another copy with an earlier insert order may start later inside the chosen one.
    let until = chosen.to;
    for (const e of list)
      if (e.from > j && e.from < until && e.seq0 - e.from < chosen.seq0 - chosen.from) until = e.from;
    this.bestUntil = until;
    return chosen;
  }

  /** The leading blocks of a key sequence present on the GPU (up to `max`); `pieces` is refilled with them, as pieces of extents. */
  lookup(keys: readonly KeyRun[], max: number, pieces: HitPiece[]): number {
    pieces.length = 0;
    let j = 0;
    for (let k = 0; k < keys.length; k++) {
      const run = keys[k]!;
      if (j >= max) break;
      if (run.from > j || run.to <= j) break;
      const end = Math.min(run.to, max);
      while (j < end) {
        const ext = this.best(run.base, j);
        if (!ext) return j;
        const to = Math.min(this.bestUntil, end);
        pieces.push({ ext, from: j, to });
        j = to;
      }
    }
    return j;
  }

  /** Leading blocks (from `from`, up to `max`) present in the CPU tier. */
  cpuHits(keys: readonly KeyRun[], from: number, max: number): number {
    if (!this.cpu.enabled) return 0;
    let j = from;
    for (const run of keys) {
      if (run.to <= j) continue;
      if (run.from > j) break;
      const end = Math.min(run.to, max);
      j = Math.min(end, this.cpu.heldUntil(run.base, j));
      if (j < end) break;
    }
    return j - from;
  }

  /** Leading blocks ever cached (an infinite cache), up to `max`. */
  idealHits(keys: readonly KeyRun[], max: number): number {
    let j = 0;
    for (const run of keys) {
      if (j >= max) break;
      if (run.from > j || run.to <= j) break;
      const end = Math.min(run.to, max);
      const until = Math.min(this.ever.coveredUntil(run.base, j), end);
      if (until < end) return until;
      j = until;
    }
    return Math.min(j, max);
  }

  /** The live fragment of `e` (same lineage and insert offset) that covers block j. */
  private fragment(e: Extent, j: number): Extent {
    if (e.alive && e.from <= j && j < e.to) return e;
    const offset = e.seq0 - e.from;
    for (const x of this.indexed(e.base)) if (x.from <= j && j < x.to && x.seq0 - x.from === offset) return x;
    throw new Error('touch: the hit block is gone');
  }

  /** Free blocks a set of hit pieces would take out of the queue. */
  touchedFree(pieces: readonly HitPiece[]): number {
    let n = 0;
    for (const p of pieces) if (p.ext.ref === 0) n += p.to - p.from;
    return n;
  }

  // ---- allocation ----

  /** Takes the hit pieces into a table: ref + 1, out of the free queue. */
  touch(owner: number, pieces: readonly HitPiece[], tables: Extent[][]): void {
    const table = tables[owner]!;
    for (const p of pieces) {
      // An earlier piece may have split this extent: find the fragment that now holds p.from.
      let e = this.fragment(p.ext, p.from);
      if (e.from < p.from) e = this.splitAt(e, p.from, tables);
      if (e.to > p.to) this.splitAt(e, p.to, tables);
      if (e.ref === 0 && e.inQueue) this.unlinkFromQueue(e);
      e.ref += 1;
      e.holders.push(owner);
      table.push(e);
    }
  }

  /**
   * Pops `n` blocks from the head of the free queue for `owner`, evicting the hashes of
   * cached blocks, and appends them to its table as unhashed blocks j = at … at + n − 1.
   */
  allocateFresh(owner: number, keys: readonly KeyRun[], at: number, n: number, tables: Extent[][]): void {
    this.popBlocks(n);
    this.appendOwned(owner, keys, at, n, tables);
  }

  /** Takes `n` blocks off the head of the free queue; cached ones lose their hash (and go to the CPU tier). */
  popBlocks(n: number): void {
    let left = n;
    while (left > 0) {
      const e = this.queueHead.next!;
      if (e === this.queueTail) throw new Error('popBlocks: free queue empty');
      const m = Math.min(left, size(e));
      this.freeCount -= m;
      // Evict from the head side: the highest block indices of a released run.
      if (e.hashed && this.cpu.enabled) {
        for (let j = e.to - 1; j >= e.to - m; j--) {
          this.cpu.save(e.base, j);
          this.savedBlocks += 1;
        }
      }
      e.to -= m;
      if (size(e) === 0) {
        e.prev!.next = e.next;
        e.next!.prev = e.prev;
        e.inQueue = false;
        e.alive = false;
        if (e.hashed) this.indexRemove(e);
      }
      left -= m;
    }
  }

  /** Appends blocks j = at … at + n − 1 to `owner`'s table, unhashed, cut along its key runs. */
  appendOwned(owner: number, keys: readonly KeyRun[], at: number, n: number, tables: Extent[][]): void {
    const table = tables[owner]!;
    let j = at;
    const end = at + n;
    for (const run of keys) {
      if (run.to <= j) continue;
      if (j >= end) break;
      const to = Math.min(run.to, end);
      table.push({
        base: run.base,
        from: j,
        to,
        hashed: false,
        seq0: 0,
        ref: 1,
        holders: [owner],
        inQueue: false,
        prev: null,
        next: null,
        alive: true,
      });
      j = to;
    }
    if (j < end) throw new Error('appendOwned: blocks beyond the request keys');
  }

  /**
   * How many blocks can be popped from the head before the first block of `pieces`
   * that sits in the free queue would go (looking no further than `limit` blocks).
   */
  blocksBeforePieces(pieces: readonly HitPiece[], limit: number): number {
    if (pieces.length === 0) return limit;
    // Queued extents holding hit blocks, each with the lowest `to` among the hit ranges in it (a handful: a scan beats a Map).
    const wanted = this.wantedScratch;
    const wantedHi = this.wantedHiScratch;
    wanted.length = 0;
    wantedHi.length = 0;
    for (const p of pieces) {
      // Fragments of a piece's extent may now hold it; every queued fragment overlapping counts.
      for (const e of this.indexed(p.ext.base)) {
        if (!e.inQueue || e.seq0 - e.from !== p.ext.seq0 - p.ext.from) continue;
        const lo = Math.max(e.from, p.from);
        const hi = Math.min(e.to, p.to);
        if (lo >= hi) continue;
        const k = wanted.indexOf(e);
        if (k < 0) {
          wanted.push(e);
          wantedHi.push(hi);
        } else wantedHi[k] = Math.min(wantedHi[k]!, hi);
      }
    }
    if (wanted.length === 0) return limit;
    let position = 0;
    for (let e = this.queueHead.next!; e !== this.queueTail && position < limit; e = e.next!) {
      const k = wanted.indexOf(e);
      // Queued hashed extents pop from their top block down: block hi − 1 goes after e.to − hi others.
      if (k >= 0) return Math.min(limit, position + (e.to - wantedHi[k]!));
      position += size(e);
    }
    return limit;
  }

  /**
   * The free-queue fragments holding blocks of `pieces` (a lookup's hits), each with the
   * hit range it serves and its place in the queue: `q0` blocks are popped before its top
   * block goes (Infinity when that is beyond `limit`). Null when some key of the pieces
   * has another copy: a lookup could then move to it, which the caller does not model.
   */
  queuedFragments(pieces: readonly HitPiece[], limit: number): QueuedFragment[] | null {
    const out: QueuedFragment[] = [];
    for (const p of pieces) {
      const offset = p.ext.seq0 - p.ext.from;
      for (const e of this.indexed(p.ext.base)) {
        if (Math.max(e.from, p.from) >= Math.min(e.to, p.to)) continue;
        if (e.seq0 - e.from !== offset) return null;
        if (e.inQueue) out.push({ ext: e, lo: p.from, hi: p.to, q0: Infinity });
      }
    }
    if (out.length === 0) return out;
    let position = 0;
    for (let e = this.queueHead.next!; e !== this.queueTail && position < limit; e = e.next!) {
      for (const f of out) if (f.ext === e) f.q0 = position;
      position += size(e);
    }
    return out;
  }

  /** Unhashed blocks at the front of the free queue, counting no further than `limit`. */
  blankAtFront(limit: number): number {
    let n = 0;
    for (let e = this.queueHead.next!; e !== this.queueTail && !e.hashed && n < limit; e = e.next!) n += size(e);
    return Math.min(n, limit);
  }

  /** Hashes blocks [from, to) of `owner`'s table (cache_full_blocks), in block order. */
  cacheBlocks(owner: number, from: number, to: number, tables: Extent[][]): void {
    if (from >= to) return;
    const table = tables[owner]!;
    for (let i = 0; i < table.length; i++) {
      let e = table[i]!;
      if (e.to <= from || e.hashed) continue;
      if (e.from >= to) break;
      if (e.from < from) {
        e = this.splitAt(e, from, tables);
        continue; // the loop reaches the upper part next
      }
      const previous = i > 0 ? table[i - 1]! : null;
      const end = Math.min(e.to, to);
      if (previous && this.extendsInto(previous, e, end)) {
        // Decode's common case: what the split, hash and fold below would do, without making and folding an extent.
        this.enterHashMap(e.base, e.from, end);
        if (end < e.to) {
          previous.to = end;
          e.from = end;
        } else {
          this.absorb(previous, e, tables);
          i--;
        }
        continue;
      }
      if (e.to > to) this.splitAt(e, to, tables);
      e.hashed = true;
      e.seq0 = this.enterHashMap(e.base, e.from, e.to);
      this.indexAdd(e);
      // Decode hashes a block at a time: fold it into the run before it when nothing tells them apart.
      if (previous && this.mergeable(previous, e)) {
        this.absorb(previous, e, tables);
        i--;
      }
    }
  }

  /**
   * Blocks [from, to) of lineage `base` enter the hash map: they take the next insert
   * orders, count as ever cached from now on, and their CPU-tier copies are dropped
   * (the GPU copy is the one a lookup finds first). Returns block `from`'s insert order.
   */
  private enterHashMap(base: number, from: number, to: number): number {
    const seq0 = this.seq;
    this.seq += to - from;
    this.ever.add(base, from, to);
    if (this.cpu.enabled) for (let j = from; j < to; j++) this.cpu.delete(base, j);
    return seq0;
  }

  /**
   * Two hashed extents can become one when they are contiguous blocks of one lineage
   * in the same place (same holders, or both free) and no other copy of any of their
   * keys exists: then the insert order within them can never decide a lookup.
   */
  private mergeable(lower: Extent, upper: Extent, entering = false): boolean {
    if (
      !lower.hashed ||
      !upper.hashed ||
      lower.base !== upper.base ||
      lower.to !== upper.from ||
      lower.ref !== upper.ref
    )
      return false;
    if ((!entering && lower.inQueue !== upper.inQueue) || !sameHolders(lower, upper)) return false;
    return this.noOtherCopy(lower, upper, upper.to);
  }

  /**
   * Whether hashing blocks [e.from, end) of the unhashed extent `e` would fold them into
   * `lower` (mergeable, asked before the split and the hashing).
   */
  private extendsInto(lower: Extent, e: Extent, end: number): boolean {
    if (
      !lower.hashed ||
      e.hashed ||
      lower.base !== e.base ||
      lower.to !== e.from ||
      lower.ref !== e.ref ||
      lower.inQueue !== e.inQueue
    )
      return false;
    return sameHolders(lower, e) && this.noOtherCopy(lower, e, end);
  }

  /** Whether no hashed extent of `lower`'s lineage but `lower` and `upper` holds any of blocks [lower.from, to): a fold would hide its insert order. */
  private noOtherCopy(lower: Extent, upper: Extent, to: number): boolean {
    for (const x of this.indexed(lower.base))
      if (x !== lower && x !== upper && x.from < to && lower.from < x.to) return false;
    return true;
  }

  /** Folds `upper` into `lower` (see mergeable and extendsInto, where `upper` is a held unhashed extent); `upper` is gone afterwards. */
  private absorb(lower: Extent, upper: Extent, tables: Extent[][]): void {
    lower.to = upper.to;
    upper.alive = false;
    this.indexRemove(upper);
    for (const h of upper.holders) {
      const t = tables[h]!;
      removeAt(t, t.indexOf(upper));
    }
    if (upper.inQueue) {
      upper.prev!.next = upper.next;
      upper.next!.prev = upper.prev;
      upper.inQueue = false;
    }
  }

  /** Releases a table tail first: hashed extents to the queue tail, unhashed to the head (current vLLM) or tail (legacy). */
  release(owner: number, tables: Extent[][]): void {
    const table = tables[owner]!;
    const toHead: Extent[] = [];
    for (let i = table.length - 1; i >= 0; i--) {
      const e = table[i]!;
      e.ref -= 1;
      const h = e.holders.indexOf(owner);
      if (h >= 0) removeAt(e.holders, h);
      if (e.ref > 0) continue;
      if (!e.hashed) {
        const b = this.blank(size(e));
        e.alive = false;
        if (this.freeOrder === 'current') toHead.push(b);
        else this.insertBefore(b, this.queueTail);
      } else {
        const last = this.queueTail.prev!;
        // Released tail first: e's top block comes right after the queue's last (lowest) block.
        if (last !== this.queueHead && this.mergeable(e, last, true)) {
          // e sits below `last` in block order; after folding, the run's blocks are still in descending order.
          last.from = e.from;
          last.seq0 = e.seq0;
          e.alive = false;
          this.indexRemove(e);
          this.freeCount += size(e);
        } else this.insertBefore(e, this.queueTail);
      }
    }
    // prepend_n keeps the list's order at the front; blank blocks are interchangeable.
    if (toHead.length > 0) {
      let n = 0;
      for (const b of toHead) n += size(b);
      this.insertBefore(this.blank(n), this.queueHead.next!);
    }
    tables[owner] = [];
  }

  /**
   * The pool's invariants, for tests: every extent's ref count ≥ 1 and equal to
   * the tables holding it; the queue is exactly the free blocks and freeCount counts
   * them; held plus free blocks are the capacity; the hash index holds exactly the live
   * hashed extents. Returns what is broken, or null.
   */
  brokenInvariant(tables: readonly Extent[][]): string | null {
    const holders = new Map<Extent, number>();
    for (let owner = 0; owner < tables.length; owner++) {
      for (const e of tables[owner]!) {
        if (!e.alive) return `table ${owner} holds a dead extent`;
        if (!e.holders.includes(owner)) return `table ${owner} holds an extent that does not list it`;
        holders.set(e, (holders.get(e) ?? 0) + 1);
      }
    }
    let heldBlocks = 0;
    for (const [e, n] of holders) {
      if (e.ref !== n || e.holders.length !== n)
        return `an extent with ref count ${e.ref} and ${e.holders.length} holders is in ${n} tables`;
      if (e.inQueue) return 'a held extent is in the free queue';
      heldBlocks += size(e);
    }
    let queued = 0;
    let extents = 0;
    for (let e = this.queueHead.next!; e !== this.queueTail; e = e.next!) {
      if (++extents > this.blocks) return 'the free queue has a cycle';
      if (e.ref !== 0 || !e.inQueue || !e.alive || size(e) <= 0)
        return `a queued extent has ref count ${e.ref}, size ${size(e)}`;
      if (e.next!.prev !== e) return 'the free queue links disagree';
      queued += size(e);
    }
    if (queued !== this.freeCount) return `${queued} blocks queued, freeCount ${this.freeCount}`;
    if (heldBlocks + queued !== this.blocks)
      return `${heldBlocks} held + ${queued} free blocks ≠ capacity ${this.blocks}`;
    let indexed = 0;
    for (const list of this.index.values()) {
      for (const e of list) {
        indexed++;
        if (!e.alive || !e.hashed) return 'the index lists a dead or unhashed extent';
        if (!holders.has(e) && !e.inQueue) return 'the index lists an extent nobody holds and the queue lacks';
      }
    }
    let hashed = 0;
    for (const e of holders.keys()) if (e.hashed) hashed++;
    for (let e = this.queueHead.next!; e !== this.queueTail; e = e.next!) if (e.hashed) hashed++;
    if (hashed !== indexed) return `${hashed} live hashed extents, the index lists ${indexed}`;
    return null;
  }

  /** Blocks held by tables (not free). */
  get usedBlocks(): number {
    return this.blocks - this.freeCount;
  }

  takeSaved(): number {
    const n = this.savedBlocks;
    this.savedBlocks = 0;
    return n;
  }
}
