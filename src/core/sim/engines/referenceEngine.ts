import type { ArrivalSource, EngineDebug, EngineOutcome, EngineRun } from './engineTypes';
import type { EngineParams } from '../params';
import { FreeBlockQueue } from './freeBlockQueue';
import { toNs } from './policySupport';
import { SessionReplay } from './sessionReplay';
import { visitKeys } from '../simRequests';
import type { SimPlan, SimRequest } from '../simRequests';
import { VllmSchedulerRun } from './vllmScheduler';
import type { KvLookup } from './vllmScheduler';

/**
 * The reference engine: vLLM v1's prefix cache and FCFS scheduler followed step by
 * step and block by block (docs/design/simulator.md §0, §1.5–1.9). Slow and plain on
 * purpose: it is the yardstick the fast engine is tested against.
 *
 * Owns every piece of state of one run; nothing survives the call.
 */
export function runReference(plan: SimPlan, p: EngineParams, debug: EngineDebug = {}): EngineOutcome {
  // engineTable.ts sends sglang-lru to the radix engine: this one models vLLM's block pool only.
  if (p.policy === 'sglang-lru')
    throw new Error('sglang-lru runs on the radix engine: pick engines through engineTable.ts');
  const run = startReference(plan, p, new SessionReplay(plan, p), debug);
  while (run.turn());
  return run.outcome();
}

/** A reference-engine run fed by `source` and driven turn by turn (one GPU of a fleet). */
export function startReference(
  plan: SimPlan,
  p: EngineParams,
  source: ArrivalSource,
  debug: EngineDebug = {},
): EngineRun {
  if (p.policy === 'sglang-lru')
    throw new Error('sglang-lru runs on the radix engine: pick engines through engineTable.ts');
  return new ReferenceRun(plan, p, debug, source);
}

const NONE = Number.NaN;

interface Pin {
  session: number;
  blocks: number[];
  expiresNs: number;
}

class ReferenceRun extends VllmSchedulerRun<number[]> {
  // Block pool: ref counts, hash keys, and the free queue.
  private readonly ref: Int32Array;
  private readonly key: Float64Array;
  private readonly free: FreeBlockQueue;
  private readonly cached = new Map<number, number[]>();
  private readonly everCached = new Set<number>();
  private readonly cpu = new Map<number, true>();
  private readonly cpuCapacity: number;
  // Requests.
  private readonly table: number[][];
  private readonly cachedBlocks: number[];
  private readonly pins: Pin[] = [];
  constructor(plan: SimPlan, p: EngineParams, debug: EngineDebug, replay: ArrivalSource) {
    super(plan, p, debug, replay);
    this.ref = new Int32Array(this.nb);
    this.key = new Float64Array(this.nb).fill(NONE);
    this.free = new FreeBlockQueue(this.nb);
    this.cpuCapacity = p.offload ? Math.floor(p.offload.capacityTokens / this.bs) : 0;
    // Per request, for the plan's requests so far (a fleet GPU's plan grows: see growKv).
    this.table = plan.requests.map(() => []);
    this.cachedBlocks = new Array<number>(plan.requests.length).fill(0);
  }

  protected override growKv(_i: number): void {
    this.table.push([]);
    this.cachedBlocks.push(0);
  }

  protected override beforeStep(): void {
    this.expirePins();
  }

  protected override nextOwnEventNs(): number | null {
    return this.nextPinExpiry();
  }

  private nextPinExpiry(): number | null {
    let t: number | null = null;
    for (const pin of this.pins) if (t === null || pin.expiresNs < t) t = pin.expiresNs;
    return t;
  }

  cachedPrefixTokens(request: SimRequest): number {
    const max = Math.floor((request.promptTokens - 1) / this.bs);
    return visitKeys(request.keys, 0, max, (k) => this.cached.has(k)) * this.bs;
  }

  /**
   * The pool's invariants: ref counts ≥ 0 and equal to the tables holding each
   * block; the free queue is exactly the blocks nobody holds, so blocks in use never
   * exceed the capacity; the hash map and the blocks' keys agree.
   */
  protected checkPool(): void {
    const fail = (what: string): never => {
      throw new Error(`reference engine invariant broken at step ${this.clock.steps}: ${what}`);
    };
    const held = new Int32Array(this.nb);
    for (const t of this.table) for (const b of t) held[b]!++;
    for (const pin of this.pins) for (const b of pin.blocks) held[b]!++;
    let unheld = 0;
    for (let b = 0; b < this.nb; b++) {
      if (this.ref[b]! < 0) fail(`block ${b} has ref count ${this.ref[b]}`);
      if (this.ref[b] !== held[b]) fail(`block ${b} has ref count ${this.ref[b]} but ${held[b]} tables hold it`);
      if (this.ref[b] === 0) unheld++;
    }
    const queueBroken = this.free.brokenInvariant(this.ref, unheld);
    if (queueBroken) fail(queueBroken);
    let mapped = 0;
    for (const [k, blocks] of this.cached) {
      for (const b of blocks) {
        mapped++;
        if (this.key[b] !== k) fail(`hash map lists block ${b} under key ${k}, the block has ${this.key[b]}`);
      }
    }
    let keyed = 0;
    for (let b = 0; b < this.nb; b++) if (!Number.isNaN(this.key[b]!)) keyed++;
    if (mapped !== keyed) fail(`${keyed} blocks have a key, the hash map lists ${mapped}`);
  }

  // ---- arrivals ----

  /** An arrival joins the waiting queue (under ttl-pin, by its session's start). */
  protected override enqueue(r: number): void {
    if (this.p.policy === 'ttl-pin' && this.plan.requests[r]!.session >= 0)
      this.replay.queueBySessionStart(this.waiting, r);
    else this.waiting.push(r);
  }

  // ---- the free queue ----

  private popHead(): number {
    const b = this.free.popHead();
    const k = this.key[b]!;
    if (!Number.isNaN(k)) {
      // Eviction is lazy: a freed block keeps its hash until it is reused.
      const list = this.cached.get(k)!;
      list.splice(list.indexOf(b), 1);
      if (list.length === 0) this.cached.delete(k);
      this.key[b] = NONE;
      this.saveToCpu(k);
    }
    return b;
  }

  private saveToCpu(k: number): void {
    if (this.cpuCapacity === 0) return;
    if (this.cpu.has(k)) this.cpu.delete(k);
    else if (this.cpu.size >= this.cpuCapacity) this.cpu.delete(this.cpu.keys().next().value!);
    this.cpu.set(k, true);
    this.stepTransferBlocks += 1;
  }

  /** Releases blocks tail first (docs/design/simulator.md §1.6): hashed ones to the tail; in current vLLM unhashed ones to the head. */
  private release(blocks: number[]): void {
    const toHead: number[] = [];
    for (let i = blocks.length - 1; i >= 0; i--) {
      const b = blocks[i]!;
      this.ref[b]!--;
      if (this.ref[b] !== 0) continue;
      if (this.p.freeOrder === 'current' && Number.isNaN(this.key[b]!)) toHead.push(b);
      else this.free.pushTail(b);
    }
    if (toHead.length > 0) this.free.pushHeadAll(toHead);
  }

  // ---- lookup and allocation ----

  protected lookup(r: number): KvLookup<number[]> {
    const req = this.plan.requests[r]!;
    const max = Math.floor((this.numTokens[r]! - 1) / this.bs);
    const hits: number[] = [];
    visitKeys(req.keys, 0, max, (k) => {
      const list = this.cached.get(k);
      if (list) hits.push(list[0]!); // the earliest cached copy, as BlockHashToBlockMap returns
      return list !== undefined;
    });
    const cpuBlocks =
      this.cpuCapacity > 0 ? visitKeys(req.keys, hits.length, max, (k) => this.cpu.has(k)) - hits.length : 0;
    const idealBlocks = visitKeys(req.keys, 0, max, (k) => this.everCached.has(k));
    return { hitBlocks: hits.length, cpuBlocks, idealBlocks, hit: hits };
  }

  /** allocate_slots (docs/design/simulator.md §1.5): false when there are not enough free blocks, with nothing changed. */
  protected allocate(r: number, numNew: number, found: KvLookup<number[]> | null): boolean {
    const hits = found ? found.hit : [];
    const cpuBlocks = found ? found.cpuBlocks : 0;
    const held = this.table[r]!.length;
    const computed = this.numComputed[r]! + (hits.length + cpuBlocks) * this.bs;
    const needBlocks = Math.ceil((computed + numNew) / this.bs);
    const fresh = Math.max(0, needBlocks - held - hits.length);
    let touchedFree = 0;
    for (const b of hits) if (this.ref[b] === 0) touchedFree++;
    if (fresh + touchedFree > this.free.size) return false;
    const table = this.table[r]!;
    for (const b of hits) {
      if (this.ref[b] === 0) this.free.remove(b);
      this.ref[b]!++;
      table.push(b);
    }
    for (let i = 0; i < fresh; i++) {
      const b = this.popHead();
      this.ref[b] = 1;
      table.push(b);
    }
    // cache_full_blocks: blocks whose tokens are all computed or scheduled now become hit-able.
    const req = this.plan.requests[r]!;
    const full = Math.floor(Math.min(computed + numNew, this.numTokens[r]!) / this.bs);
    visitKeys(req.keys, this.cachedBlocks[r]!, full, (k, j) => {
      const b = table[j]!;
      if (!Number.isNaN(this.key[b]!)) return true;
      this.key[b] = k;
      const list = this.cached.get(k);
      if (list) list.push(b);
      else this.cached.set(k, [b]);
      this.everCached.add(k);
      this.cpu.delete(k); // the GPU copy is the one that counts now
      return true;
    });
    this.cachedBlocks[r] = Math.max(this.cachedBlocks[r]!, full);
    return true;
  }

  protected freePreempted(r: number): void {
    this.release(this.table[r]!);
    this.table[r] = [];
    this.cachedBlocks[r] = 0;
  }

  // ---- pins (ttl-pin) ----

  private expirePins(): void {
    for (let i = 0; i < this.pins.length; ) {
      if (this.pins[i]!.expiresNs <= this.clock.now) {
        this.release(this.pins[i]!.blocks);
        this.pins.splice(i, 1);
      } else i++;
    }
  }

  /** Under memory pressure, unpin the pin that expires first. */
  protected override relieve(): boolean {
    if (this.pins.length === 0) return false;
    let best = 0;
    for (let i = 1; i < this.pins.length; i++) if (this.pins[i]!.expiresNs < this.pins[best]!.expiresNs) best = i;
    this.release(this.pins[best]!.blocks);
    this.pins.splice(best, 1);
    return true;
  }

  private releasePinOf(session: number): void {
    const i = this.pins.findIndex((pin) => pin.session === session);
    if (i < 0) return;
    this.release(this.pins[i]!.blocks);
    this.pins.splice(i, 1);
  }

  protected usedBlocks(): number {
    return this.nb - this.free.size;
  }

  /** A session's call that finished keeps its blocks pinned under ttl-pin (while a next call may come), else frees them. */
  protected freeFinished(r: number): void {
    const req = this.plan.requests[r]!;
    const session = req.session;
    const hasNext = session >= 0 && req.callIndex + 1 < this.plan.sessions[session]!.requests.length;
    const ttl = this.p.policy === 'ttl-pin' && hasNext ? this.replay.pinTtlS(session) : 0;
    if (ttl > 0) this.pins.push({ session, blocks: this.table[r]!, expiresNs: this.clock.now + toNs(ttl) });
    else this.release(this.table[r]!);
    this.table[r] = [];
  }

  /** Under ttl-pin, a session's next call admitted drops the session's pin. */
  protected override admittedNow(r: number, first: boolean): void {
    const req = this.plan.requests[r]!;
    if (this.p.policy === 'ttl-pin' && req.session >= 0 && first) this.releasePinOf(req.session);
  }
}
