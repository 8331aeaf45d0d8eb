import type { ArrivalSource, EngineDebug, EngineOutcome, EngineRun } from './engineTypes';
import type { EngineParams, KvLayout } from '../params';
import { FreeBlockQueue } from './freeBlockQueue';
import { SessionReplay } from './sessionReplay';
import { visitKeys } from '../simRequests';
import type { KeyRun, SimPlan, SimRequest } from '../simRequests';
import { VllmSchedulerRun } from './vllmScheduler';
import type { KvLookup } from './vllmScheduler';

/**
 * The hybrid engine: vLLM v1's hybrid KV-cache manager (docs/design/simulator.md §1.8) for
 * models whose layers do not all keep every token: full-attention layers next to
 * sliding-window, chunked-local or Mamba (linear-attention) layers. One block pool is
 * shared by every KV-cache group; each group keeps its own block table per request; the
 * window groups free the blocks that leave the window (replacing them by vLLM's null
 * block); every group finds prefix hits by its own rule (a Mamba group: the last block
 * whose state is cached). The scheduler is the reference engine's, shared
 * (vllmScheduler.ts: FCFS, chunked prefill, recompute preemption of the last running request).
 *
 * Plain and step by step like the reference engine; used by both engine names whenever
 * the parameters carry a `kvLayout`.
 */
export function runHybrid(plan: SimPlan, p: EngineParams, debug: EngineDebug = {}): EngineOutcome {
  const run = startHybrid(plan, p, new SessionReplay(plan, p), debug);
  while (run.turn());
  return run.outcome();
}

/** A hybrid-engine run fed by `source` and driven turn by turn (one GPU of a fleet). */
export function startHybrid(plan: SimPlan, p: EngineParams, source: ArrivalSource, debug: EngineDebug = {}): EngineRun {
  if (!p.kvLayout) throw new Error('the hybrid engine needs a kvLayout');
  if (p.policy !== 'vllm-lru' && p.policy !== 'admission-cap')
    throw new Error(`policy ${p.policy} is not modelled with a hybrid KV layout`);
  return new HybridRun(plan, p, p.kvLayout, debug, source);
}

/** A block table entry that holds nothing: vLLM's null block (a skipped block outside the window). */
const NULL_BLOCK = -1;
const NONE = Number.NaN;

/** What one group of layers is: its kind decides which blocks it skips and how it finds a hit. */
type GroupKind = 'full' | KvLayout['other'];

/** A prefix hit: per group, the blocks (NULL_BLOCK where skipped), and its length in tokens. */
interface Hit {
  blocks: number[][];
  tokens: number;
}

class HybridRun extends VllmSchedulerRun<Hit> {
  /** Kind of each KV-cache group, in vLLM's group order. */
  private readonly kinds: GroupKind[];
  private readonly fullIds: number[];
  private readonly otherIds: number[];
  /** vLLM's enable_caching: off for a Mamba hybrid whose class does not declare Mamba prefix caching. */
  private readonly caching: boolean;
  // Block pool: ref counts, hash key and group, and the free queue.
  private readonly ref: Int32Array;
  private readonly key: Float64Array;
  private readonly keyGroup: Int32Array;
  private readonly free: FreeBlockQueue;
  /** Per group, hash key → cached blocks (BlockHashToBlockMap keyed by hash and group id). */
  private readonly cached: Array<Map<number, number[]>>;
  /** Keys a full-attention group ever cached: the never-evicting ideal. */
  private readonly everCached = new Set<number>();
  /** Per request, per group: the block table. */
  private readonly tables: number[][][];
  /** Per request, per group: blocks already cached (vLLM's num_cached_block). */
  private readonly cachedBlocks: number[][];
  private readonly keyCache = new Map<number, number[]>();
  constructor(
    plan: SimPlan,
    p: EngineParams,
    private readonly layout: KvLayout,
    debug: EngineDebug,
    replay: ArrivalSource,
  ) {
    super(plan, p, debug, replay);
    const full: GroupKind[] = new Array<GroupKind>(layout.fullGroups).fill('full');
    const other: GroupKind[] = new Array<GroupKind>(layout.otherGroups).fill(layout.other);
    this.kinds = layout.otherFirst ? [...other, ...full] : [...full, ...other];
    this.fullIds = this.kinds.flatMap((k, g) => (k === 'full' ? [g] : []));
    this.otherIds = this.kinds.flatMap((k, g) => (k === 'full' ? [] : [g]));
    this.caching = layout.prefixCaching !== false;
    this.cached = this.kinds.map(() => new Map<number, number[]>());
    this.ref = new Int32Array(this.nb);
    this.key = new Float64Array(this.nb).fill(NONE);
    this.keyGroup = new Int32Array(this.nb);
    this.free = new FreeBlockQueue(this.nb);
    this.tables = plan.requests.map(() => this.kinds.map(() => []));
    this.cachedBlocks = plan.requests.map(() => this.kinds.map(() => 0));
  }

  protected override growKv(_i: number): void {
    this.tables.push(this.kinds.map(() => []));
    this.cachedBlocks.push(this.kinds.map(() => 0));
  }

  protected usedBlocks(): number {
    return this.nb - this.free.size;
  }

  protected override nothingScheduled(): void {
    throw new Error(
      'hybrid engine: nothing can be scheduled (one request needs more blocks, across its KV-cache groups, than the cache holds)',
    );
  }

  cachedPrefixTokens(request: SimRequest): number {
    return this.findHit(this.keysOfRequest(-1, request.keys), request.promptTokens).tokens;
  }

  /** Ref counts equal the tables holding each block; the free queue is exactly the blocks nobody holds; keys and maps agree. */
  protected checkPool(): void {
    const fail = (what: string): never => {
      throw new Error(`hybrid engine invariant broken at step ${this.clock.steps}: ${what}`);
    };
    const held = new Int32Array(this.nb);
    for (const t of this.tables) for (const g of t) for (const b of g) if (b !== NULL_BLOCK) held[b]!++;
    let unheld = 0;
    for (let b = 0; b < this.nb; b++) {
      if (this.ref[b] !== held[b]) fail(`block ${b} has ref count ${this.ref[b]} but ${held[b]} tables hold it`);
      if (this.ref[b] === 0) unheld++;
    }
    const queueBroken = this.free.brokenInvariant(this.ref, unheld);
    if (queueBroken) fail(queueBroken);
    this.cached.forEach((map, g) => {
      for (const [k, blocks] of map)
        for (const b of blocks)
          if (this.key[b] !== k || this.keyGroup[b] !== g) fail(`group ${g} lists block ${b} under key ${k}`);
    });
  }

  /** Request r's block keys, one per whole block of prompt + output (vLLM's block_hashes); r < 0 for a request not to remember. */
  private keysOfRequest(r: number, runs: readonly KeyRun[]): number[] {
    const known = r >= 0 ? this.keyCache.get(r) : undefined;
    if (known) return known;
    const keys: number[] = [];
    visitKeys(runs, 0, Number.MAX_SAFE_INTEGER, (k) => {
      keys.push(k);
      return true;
    });
    if (r >= 0) this.keyCache.set(r, keys);
    return keys;
  }

  // ---- the free queue ----

  /** get_new_blocks: the head of the free queue, its cached hash (of whichever group) evicted. */
  private popHead(): number {
    const b = this.free.popHead();
    const k = this.key[b]!;
    if (!Number.isNaN(k)) {
      const map = this.cached[this.keyGroup[b]!]!;
      const list = map.get(k)!;
      list.splice(list.indexOf(b), 1);
      if (list.length === 0) map.delete(k);
      this.key[b] = NONE;
    }
    return b;
  }

  /**
   * free_blocks on blocks in eviction order: null blocks are never queued; in current
   * vLLM unhashed blocks go to the head, hashed ones to the tail (legacy: all to the tail).
   */
  private release(blocks: number[]): void {
    const toHead: number[] = [];
    for (const b of blocks) {
      if (b === NULL_BLOCK) continue;
      this.ref[b]!--;
      if (this.ref[b] !== 0) continue;
      if (this.p.freeOrder === 'current' && Number.isNaN(this.key[b]!)) toHead.push(b);
      else this.free.pushTail(b);
    }
    if (toHead.length > 0) this.free.pushHeadAll(toHead);
  }

  /** Frees every group's table, group by group, each tail first (coordinator.free). */
  private freeAll(r: number): void {
    for (let g = 0; g < this.kinds.length; g++) {
      this.release([...this.tables[r]![g]!].reverse());
      this.tables[r]![g] = [];
      this.cachedBlocks[r]![g] = 0;
    }
  }

  // ---- lookup ----

  private cachedIn(groups: number[], k: number): number[] | null {
    const out: number[] = [];
    for (const g of groups) {
      const list = this.cached[g]!.get(k);
      if (!list) return null;
      out.push(list[0]!); // the earliest cached copy
    }
    return out;
  }

  /**
   * find_longest_cache_hit of the hybrid coordinator: the full-attention groups' run of
   * cached blocks first, then the other groups' hit within it by their own rule, and the
   * full-attention hit cut to that length.
   */
  private findHit(keys: number[], numTokens: number): Hit {
    const maxBlocks = Math.floor((numTokens - 1) / this.bs);
    const full: number[][] = this.fullIds.map(() => []);
    for (let j = 0; j < maxBlocks && j < keys.length; j++) {
      const found = this.cachedIn(this.fullIds, keys[j]!);
      if (!found) break;
      found.forEach((b, i) => full[i]!.push(b));
    }
    const within = full[0]!.length;
    const other =
      this.layout.other === 'sliding-window'
        ? this.slidingHit(keys, within)
        : this.layout.other === 'chunked-local'
          ? this.chunkedHit(keys, within)
          : this.mambaHit(keys, within);
    const n = other[0]!.length;
    for (const list of full) list.length = n;
    const blocks: number[][] = [];
    let fi = 0;
    let oi = 0;
    for (const kind of this.kinds) blocks.push(kind === 'full' ? full[fi++]! : other[oi++]!);
    return { blocks, tokens: n * this.bs };
  }

  /** SlidingWindowManager.find_longest_cache_hit: from the right, the first run of window − 1 tokens' worth of cached blocks. */
  private slidingHit(keys: number[], maxBlocks: number): number[][] {
    const need = Math.ceil((this.layout.windowTokens - 1) / this.bs);
    const out: number[][] = this.otherIds.map(() => new Array<number>(maxBlocks).fill(NULL_BLOCK));
    let run = 0;
    for (let i = maxBlocks - 1; i >= 0; i--) {
      const found = this.cachedIn(this.otherIds, keys[i]!);
      if (!found) {
        run = 0;
        continue;
      }
      found.forEach((b, gi) => (out[gi]![i] = b));
      run++;
      if (run >= need) {
        for (const list of out) list.length = i + run;
        return out;
      }
    }
    // No full window: the run that starts at block 0 still counts.
    for (const list of out) list.length = run;
    return out;
  }

  /** ChunkedLocalAttentionManager.find_longest_cache_hit: blocks before the current chunk are skipped (null), the chunk's own blocks must be cached. */
  private chunkedHit(keys: number[], maxBlocks: number): number[][] {
    const maxLength = maxBlocks * this.bs;
    const chunk = this.layout.windowTokens;
    const startBlock = maxLength > 0 ? (Math.floor(maxLength / chunk) * chunk) / this.bs : 0;
    const out: number[][] = this.otherIds.map(() => new Array<number>(startBlock).fill(NULL_BLOCK));
    for (let i = startBlock; i < maxBlocks; i++) {
      const found = this.cachedIn(this.otherIds, keys[i]!);
      if (!found) break;
      found.forEach((b, gi) => out[gi]!.push(b));
    }
    return out;
  }

  /**
   * MambaManager.find_longest_cache_hit (single_type_kv_cache_manager.py l.659): from the
   * right, the first block whose state every Mamba group has cached; the blocks before it
   * are null. All groups share one block size, so every hit length is aligned.
   */
  private mambaHit(keys: number[], maxBlocks: number): number[][] {
    for (let i = maxBlocks - 1; i >= 0; i--) {
      const found = this.cachedIn(this.otherIds, keys[i]!);
      if (!found) continue;
      return found.map((b) => [...new Array<number>(i).fill(NULL_BLOCK), b]);
    }
    return this.otherIds.map(() => []);
  }

  private idealBlocks(keys: number[], numTokens: number): number {
    const max = Math.floor((numTokens - 1) / this.bs);
    let n = 0;
    while (n < max && n < keys.length && this.everCached.has(keys[n]!)) n++;
    return n;
  }

  // ---- allocation ----

  /** Tokens a group no longer attends to once `computed` tokens are computed (get_num_skipped_tokens). */
  private skippedTokens(kind: GroupKind, computed: number): number {
    if (kind === 'sliding-window') return computed - this.layout.windowTokens + 1;
    if (kind === 'chunked-local') return Math.floor(computed / this.layout.windowTokens) * this.layout.windowTokens;
    return 0;
  }

  /** remove_skipped_blocks: blocks that left the window become null and are freed, last first. */
  private removeSkipped(r: number): void {
    for (let g = 0; g < this.kinds.length; g++) {
      const skipped = this.skippedTokens(this.kinds[g]!, this.numComputed[r]!);
      if (skipped <= 0) continue;
      const table = this.tables[r]![g]!;
      const removed: number[] = [];
      for (let i = Math.floor(skipped / this.bs) - 1; i >= 0; i--) {
        if (table[i] === NULL_BLOCK) break;
        removed.push(table[i]!);
        table[i] = NULL_BLOCK;
      }
      this.release(removed);
    }
  }

  /**
   * allocate_slots (docs/design/simulator.md §1.8): skipped blocks are freed first (even
   * when the allocation then fails, as in vLLM); false when the pool has too few free
   * blocks for every group, with nothing else changed.
   */
  protected allocate(r: number, numNew: number, found: KvLookup<Hit> | null): boolean {
    const hit = found ? found.hit : null;
    this.removeSkipped(r);
    const computed = this.numComputed[r]! + (hit ? hit.tokens : 0);
    const slots = Math.min(computed + numNew, this.p.maxModelLenTokens);
    const needBlocks = this.kinds.map((kind) => this.blocksFor(kind, slots));
    let toAllocate = 0;
    for (let g = 0; g < this.kinds.length; g++) {
      const hits = hit ? hit.blocks[g]! : [];
      toAllocate += needBlocks[g]! - hits.length - this.tables[r]![g]!.length;
      for (const b of hits) if (b !== NULL_BLOCK && this.ref[b] === 0) toAllocate++;
    }
    if (toAllocate > this.free.size) return false;
    if (hit) {
      // touch, then save_new_computed_blocks.
      for (let g = 0; g < this.kinds.length; g++)
        for (const b of hit.blocks[g]!) {
          if (b === NULL_BLOCK) continue;
          if (this.ref[b] === 0) this.free.remove(b);
          this.ref[b]!++;
        }
      for (let g = 0; g < this.kinds.length; g++)
        if (hit.blocks.some((list) => list.length > 0)) {
          this.tables[r]![g] = [...hit.blocks[g]!];
          this.cachedBlocks[r]![g] = hit.blocks[g]!.length;
        }
    }
    for (let g = 0; g < this.kinds.length; g++) {
      const table = this.tables[r]![g]!;
      for (let i = table.length; i < needBlocks[g]!; i++) {
        const b = this.popHead();
        this.ref[b] = 1;
        table.push(b);
      }
    }
    if (!this.caching) return true; // allocate_slots returns before cache_blocks without prefix caching
    // cache_blocks: every group caches its blocks whose tokens are all computed or scheduled.
    const keys = this.keysOfRequest(r, this.plan.requests[r]!.keys);
    const full = Math.floor(Math.min(computed + numNew, this.numTokens[r]!) / this.bs);
    for (let g = 0; g < this.kinds.length; g++) {
      const table = this.tables[r]![g]!;
      for (let j = this.cachedBlocks[r]![g]!; j < full; j++) {
        const b = table[j]!;
        if (b === NULL_BLOCK) throw new Error(`hybrid engine: request ${r} caches a skipped block ${j}`);
        const k = keys[j];
        if (k === undefined) break; // a gap in the keys: nothing past it is shared
        this.key[b] = k;
        this.keyGroup[b] = g;
        const map = this.cached[g]!;
        const list = map.get(k);
        if (list) list.push(b);
        else map.set(k, [b]);
        if (this.kinds[g] === 'full') this.everCached.add(k);
      }
      this.cachedBlocks[r]![g] = Math.max(this.cachedBlocks[r]![g]!, full);
    }
    return true;
  }

  /**
   * Blocks a group needs for `tokens` slots (cdiv by its block size). Without prefix caching
   * vLLM gives a Mamba group blocks of max_model_len tokens: one block, the state.
   */
  private blocksFor(kind: GroupKind, tokens: number): number {
    if (kind === 'mamba' && !this.caching) return Math.ceil(tokens / this.p.maxModelLenTokens);
    return Math.ceil(tokens / this.bs);
  }

  /** The lookup at first admission; none without prefix caching (vLLM's KVCacheCoordinatorNoPrefixCache). */
  protected lookup(r: number): KvLookup<Hit> | null {
    if (!this.caching) return null;
    const keys = this.keysOfRequest(r, this.plan.requests[r]!.keys);
    const hit = this.findHit(keys, this.numTokens[r]!);
    return {
      hitBlocks: hit.tokens / this.bs,
      cpuBlocks: 0,
      idealBlocks: this.idealBlocks(keys, this.numTokens[r]!),
      hit,
    };
  }

  protected freePreempted(r: number): void {
    this.freeAll(r);
  }

  protected freeFinished(r: number): void {
    this.freeAll(r);
    this.keyCache.delete(r); // a finished request is never looked up again: keep memory to the live ones
  }
}
