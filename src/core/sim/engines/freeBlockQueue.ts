/**
 * vLLM's free block queue (`FreeKVCacheBlockQueue`, docs/design/simulator.md §1.5): the
 * blocks nobody holds, in eviction order, as a doubly linked list over block ids. A block
 * found by a prefix hit leaves the middle of the queue in O(1), and freeing puts hashed
 * blocks at the tail and (in current vLLM) unhashed ones at the head.
 *
 * The reference and hybrid engines share it; what a popped block's hash means (one map, a
 * map per KV-cache group, a CPU tier) stays theirs.
 */
export class FreeBlockQueue {
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  private readonly queued: Uint8Array;
  /** Sentinels: ids past the last block, so an empty queue needs no special case. */
  private readonly head: number;
  private readonly tail: number;
  private count = 0;

  /** A queue holding every one of `blocks` blocks, ordered by id (vLLM's starting order). */
  constructor(private readonly blocks: number) {
    this.prev = new Int32Array(blocks + 2);
    this.next = new Int32Array(blocks + 2);
    this.queued = new Uint8Array(blocks);
    this.head = blocks;
    this.tail = blocks + 1;
    this.next[this.head] = this.tail;
    this.prev[this.tail] = this.head;
    for (let b = 0; b < blocks; b++) this.pushTail(b);
  }

  /** Blocks in the queue. */
  get size(): number {
    return this.count;
  }

  has(b: number): boolean {
    return this.queued[b] === 1;
  }

  pushTail(b: number): void {
    const last = this.prev[this.tail]!;
    this.next[last] = b;
    this.prev[b] = last;
    this.next[b] = this.tail;
    this.prev[this.tail] = b;
    this.queued[b] = 1;
    this.count++;
  }

  /** prepend_n: the blocks go to the front of the queue in their own order. */
  pushHeadAll(blocks: readonly number[]): void {
    for (let i = blocks.length - 1; i >= 0; i--) {
      const b = blocks[i]!;
      const first = this.next[this.head]!;
      this.next[this.head] = b;
      this.prev[b] = this.head;
      this.next[b] = first;
      this.prev[first] = b;
      this.queued[b] = 1;
      this.count++;
    }
  }

  /** Takes a queued block out from wherever it is (a prefix hit on a free block). */
  remove(b: number): void {
    const a = this.prev[b]!;
    const c = this.next[b]!;
    this.next[a] = c;
    this.prev[c] = a;
    this.queued[b] = 0;
    this.count--;
  }

  /** Takes the block at the head out and returns it; the caller makes sure the queue is not empty. */
  popHead(): number {
    const b = this.next[this.head]!;
    this.remove(b);
    return b;
  }

  /**
   * The queue head to tail, for the engines' self-checks: at most one entry more than there
   * are blocks, so a cycle shows as a list longer than the pool instead of a hang.
   */
  inOrder(): number[] {
    const out: number[] = [];
    for (let b = this.next[this.head]!; b !== this.tail && out.length <= this.blocks; b = this.next[b]!) out.push(b);
    return out;
  }

  /**
   * The engines' self-check of the queue against their ref counts: it must hold exactly the
   * blocks nobody holds (`refs[b] === 0`, `unheld` of them), once each. A broken invariant's
   * description, else null.
   */
  brokenInvariant(refs: Int32Array, unheld: number): string | null {
    const inOrder = this.inOrder();
    if (inOrder.length > this.blocks) return 'the free queue has a cycle';
    for (const b of inOrder)
      if (refs[b] !== 0 || !this.has(b)) return `block ${b} is in the free queue with ref count ${refs[b]}`;
    if (inOrder.length !== this.count || inOrder.length !== unheld)
      return `${inOrder.length} blocks queued, freeCount ${this.count}, ${unheld} held by nobody`;
    return null;
  }
}
