import { PROGRESS_STEPS } from './engineTypes';
import type {
  ArrivalSource,
  CallRecord,
  EngineDebug,
  EngineOutcome,
  EngineRun,
  EngineTotals,
  StepLogEntry,
} from './engineTypes';
import type { EngineParams } from '../params';
import { isDecoding, StepClock, stepCostsNs, toNs } from './policySupport';
import { SessionReplay } from './sessionReplay';
import { visitKeys } from '../simRequests';
import type { SimPlan, SimRequest } from '../simRequests';

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

class ReferenceRun implements EngineRun {
  private readonly bs: number;
  private readonly nb: number;
  // Block pool: ref counts, hash keys, and the free queue as a doubly linked list.
  private readonly ref: Int32Array;
  private readonly key: Float64Array;
  private readonly prev: Int32Array;
  private readonly next: Int32Array;
  private readonly inQueue: Uint8Array;
  private freeCount: number;
  private readonly head: number;
  private readonly tail: number;
  private readonly cached = new Map<number, number[]>();
  private readonly everCached = new Set<number>();
  private readonly cpu = new Map<number, true>();
  private readonly cpuCapacity: number;
  // Requests.
  private readonly numComputed: number[];
  private readonly numTokens: number[];
  private readonly generated: number[];
  private readonly table: number[][];
  private readonly cachedBlocks: number[];
  private readonly admitted: boolean[];
  private readonly records: CallRecord[];
  private waiting: number[] = [];
  private running: number[] = [];
  private readonly pins: Pin[] = [];
  private readonly totals: EngineTotals = {
    steps: 0,
    preemptions: 0,
    rejectedRequests: 0,
    vllmQueries: 0,
    vllmHits: 0,
    prefillMs: 0,
    decodeMs: 0,
    transferMs: 0,
    makespanS: 0,
  };
  private readonly clock: StepClock;
  /** Blocks moved to or from the CPU tier in this step: their transfer time is one product, the same in both engines. */
  private stepTransferBlocks = 0;

  constructor(
    private readonly plan: SimPlan,
    private readonly p: EngineParams,
    private readonly debug: EngineDebug,
    private readonly replay: ArrivalSource,
  ) {
    this.bs = plan.blockSizeTokens;
    this.clock = new StepClock(stepCostsNs(p, this.bs));
    this.nb = Math.floor(p.capacityTokens / this.bs);
    this.ref = new Int32Array(this.nb);
    this.key = new Float64Array(this.nb).fill(NONE);
    this.prev = new Int32Array(this.nb + 2);
    this.next = new Int32Array(this.nb + 2);
    this.inQueue = new Uint8Array(this.nb);
    this.head = this.nb;
    this.tail = this.nb + 1;
    this.next[this.head] = this.tail;
    this.prev[this.tail] = this.head;
    this.freeCount = 0;
    // The free queue starts ordered by block id (docs/design/simulator.md §1.5).
    for (let b = 0; b < this.nb; b++) this.pushTail(b);
    this.cpuCapacity = p.offload ? Math.floor(p.offload.capacityTokens / this.bs) : 0;
    // Per request, for the plan's requests so far (a fleet GPU's plan grows as calls are routed to it: see grow).
    const n = plan.requests.length;
    this.numComputed = new Array<number>(n).fill(0);
    this.numTokens = plan.requests.map((r) => r.promptTokens);
    this.generated = new Array<number>(n).fill(0);
    this.table = plan.requests.map(() => []);
    this.cachedBlocks = new Array<number>(n).fill(0);
    this.admitted = new Array<boolean>(n).fill(false);
    this.records = this.replay.records;
  }

  /** Makes room for request r of a plan that grew since the run started (a fleet GPU's: one entry per call routed to it). */
  private grow(r: number): void {
    for (let i = this.numTokens.length; i <= r; i++) {
      this.numComputed.push(0);
      this.numTokens.push(this.plan.requests[i]!.promptTokens);
      this.generated.push(0);
      this.table.push([]);
      this.cachedBlocks.push(0);
      this.admitted.push(false);
    }
  }

  turn(): boolean {
    this.replay.arrive(this.clock.now, this.queue);
    this.expirePins();
    if (this.replay.adaptive) this.replay.adaptCap(this.clock.now, this.usedBlocks() < 0.9 * this.nb);
    if (this.running.length === 0 && this.waiting.length === 0) {
      const next = this.replay.nextEventNs(this.nextPinExpiry());
      if (next === null) return false;
      this.clock.now = Math.max(this.clock.now, next);
      return true;
    }
    this.step();
    if (this.debug.progress && this.clock.steps % PROGRESS_STEPS === 0)
      this.debug.progress(this.replay.ended, this.replay.totalCalls);
    if (this.debug.selfCheck) this.checkPool();
    return true;
  }

  outcome(): EngineOutcome {
    this.clock.fillTotals(this.totals, this.records, this.replay.rejectedRequests);
    return { records: this.records, totals: this.totals, sessionEndS: this.replay.sessionEndS };
  }

  get nowNs(): number {
    return this.clock.now;
  }

  private nextPinExpiry(): number | null {
    let t: number | null = null;
    for (const pin of this.pins) if (t === null || pin.expiresNs < t) t = pin.expiresNs;
    return t;
  }

  nextEventNs(): number | null {
    if (this.running.length > 0 || this.waiting.length > 0) return this.clock.now;
    const next = this.replay.nextEventNs(this.nextPinExpiry());
    return next === null ? null : Math.max(this.clock.now, next);
  }

  loadTokens(): number {
    let n = 0;
    for (const r of this.running) n += this.numTokens[r]!;
    for (const r of this.waiting) n += this.numTokens[r]!;
    return n;
  }

  cachedPrefixTokens(request: SimRequest): number {
    const max = Math.floor((request.promptTokens - 1) / this.bs);
    return visitKeys(request.keys, 0, max, (k) => this.cached.has(k)) * this.bs;
  }

  fewestSamplesLeft(): number {
    let n = Infinity;
    for (const r of this.running) n = Math.min(n, this.plan.requests[r]!.outputTokens - this.generated[r]!);
    for (const r of this.waiting) n = Math.min(n, this.plan.requests[r]!.outputTokens - this.generated[r]!);
    return n;
  }

  /**
   * The pool's invariants: ref counts ≥ 0 and equal to the tables holding each
   * block; the free queue is exactly the blocks nobody holds, so blocks in use never
   * exceed the capacity; the hash map and the blocks' keys agree.
   */
  private checkPool(): void {
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
    let queued = 0;
    for (let b = this.next[this.head]!; b !== this.tail; b = this.next[b]!) {
      if (++queued > this.nb) fail('the free queue has a cycle');
      if (this.ref[b] !== 0 || !this.inQueue[b]) fail(`block ${b} is in the free queue with ref count ${this.ref[b]}`);
    }
    if (queued !== this.freeCount || queued !== unheld)
      fail(`${queued} blocks queued, freeCount ${this.freeCount}, ${unheld} held by nobody`);
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
  private readonly queue = (r: number): void => {
    if (r >= this.numTokens.length) this.grow(r);
    if (this.p.policy === 'ttl-pin' && this.plan.requests[r]!.session >= 0)
      this.replay.queueBySessionStart(this.waiting, r);
    else this.waiting.push(r);
  };

  // ---- the free queue ----

  private pushTail(b: number): void {
    const last = this.prev[this.tail]!;
    this.next[last] = b;
    this.prev[b] = last;
    this.next[b] = this.tail;
    this.prev[this.tail] = b;
    this.inQueue[b] = 1;
    this.freeCount++;
  }

  private pushHeadAll(blocks: number[]): void {
    // prepend_n: the list keeps its order at the front of the queue.
    for (let i = blocks.length - 1; i >= 0; i--) {
      const b = blocks[i]!;
      const first = this.next[this.head]!;
      this.next[this.head] = b;
      this.prev[b] = this.head;
      this.next[b] = first;
      this.prev[first] = b;
      this.inQueue[b] = 1;
      this.freeCount++;
    }
  }

  private unlink(b: number): void {
    const a = this.prev[b]!;
    const c = this.next[b]!;
    this.next[a] = c;
    this.prev[c] = a;
    this.inQueue[b] = 0;
    this.freeCount--;
  }

  private popHead(): number {
    const b = this.next[this.head]!;
    this.unlink(b);
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
      else this.pushTail(b);
    }
    if (toHead.length > 0) this.pushHeadAll(toHead);
  }

  // ---- lookup and allocation ----

  private lookup(r: number): { hits: number[]; cpuBlocks: number; idealBlocks: number } {
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
    return { hits, cpuBlocks, idealBlocks };
  }

  /** allocate_slots (docs/design/simulator.md §1.5): false when there are not enough free blocks, with nothing changed. */
  private allocate(r: number, numNew: number, hits: number[], cpuBlocks: number): boolean {
    const held = this.table[r]!.length;
    const computed = this.numComputed[r]! + (hits.length + cpuBlocks) * this.bs;
    const needBlocks = Math.ceil((computed + numNew) / this.bs);
    const fresh = Math.max(0, needBlocks - held - hits.length);
    let touchedFree = 0;
    for (const b of hits) if (this.ref[b] === 0) touchedFree++;
    if (fresh + touchedFree > this.freeCount) return false;
    const table = this.table[r]!;
    for (const b of hits) {
      if (this.ref[b] === 0) this.unlink(b);
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

  private preempt(r: number): void {
    this.release(this.table[r]!);
    this.table[r] = [];
    this.cachedBlocks[r] = 0;
    this.numComputed[r] = 0;
    this.records[r]!.preemptions += 1;
    this.totals.preemptions += 1;
    this.waiting.unshift(r);
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
  private unpinOne(): boolean {
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

  private usedBlocks(): number {
    return this.nb - this.freeCount;
  }

  // ---- one engine step ----

  /** The step being logged (debug.onStepLog), else null. */
  private log: StepLogEntry | null = null;

  private step(): void {
    if (this.debug.onStepLog)
      this.log = {
        step: this.clock.steps,
        t: this.clock.now / 1e9,
        end: this.clock.now / 1e9,
        sched: [],
        preempted: [],
        admitted: [],
        lookups: [],
      };
    let budget = this.p.maxNumBatchedTokens;
    const scheduled: Array<{ r: number; numNew: number; decode: boolean }> = [];
    let preempted = false;
    this.stepTransferBlocks = 0;
    // Running requests first, in order; on failure preempt the last one (FCFS policy).
    let i = 0;
    while (i < this.running.length && budget > 0) {
      const r = this.running[i]!;
      const numNew = Math.min(this.numTokens[r]! - this.numComputed[r]!, budget);
      let selfPreempted = false;
      while (!this.allocate(r, numNew, [], 0)) {
        if (this.unpinOne()) continue;
        const victim = this.running.pop()!;
        this.preempt(victim);
        this.log?.preempted.push(victim);
        preempted = true;
        if (victim === r) {
          selfPreempted = true;
          break;
        }
      }
      if (selfPreempted) break;
      scheduled.push({ r, numNew, decode: this.isDecode(r) });
      budget -= numNew;
      i++;
    }
    // Waiting requests only when nothing was preempted; stop at the first that does not fit.
    if (!preempted) {
      while (this.waiting.length > 0 && budget > 0 && this.running.length < this.p.maxNumSeqs) {
        const r = this.waiting[0]!;
        let hits: number[] = [];
        let cpuBlocks = 0;
        let ideal = 0;
        if (this.numComputed[r] === 0) {
          const found = this.lookup(r);
          hits = found.hits;
          cpuBlocks = found.cpuBlocks;
          ideal = found.idealBlocks;
          this.log?.lookups.push([r, hits.length * this.bs]);
          if (this.records[r]!.preemptions === 0) {
            this.totals.vllmQueries += this.numTokens[r]!;
            this.totals.vllmHits += hits.length * this.bs;
          }
        }
        const computedAfter = this.numComputed[r]! + (hits.length + cpuBlocks) * this.bs;
        const numNew = Math.min(this.numTokens[r]! - computedAfter, budget);
        let ok = this.allocate(r, numNew, hits, cpuBlocks);
        while (!ok && this.unpinOne()) ok = this.allocate(r, numNew, hits, cpuBlocks);
        if (!ok) break;
        this.waiting.shift();
        this.running.push(r);
        this.log?.admitted.push(r);
        this.numComputed[r] = computedAfter;
        this.stepTransferBlocks += cpuBlocks;
        this.replay.recordBlockAdmission(r, !this.admitted[r], this.clock.now, this.bs, hits.length, cpuBlocks, ideal);
        const req = this.plan.requests[r]!;
        if (this.p.policy === 'ttl-pin' && req.session >= 0 && !this.admitted[r]) this.releasePinOf(req.session);
        this.admitted[r] = true;
        scheduled.push({ r, numNew, decode: this.isDecode(r) });
        budget -= numNew;
      }
    }
    this.advance(scheduled);
  }

  private isDecode(r: number): boolean {
    return isDecoding(this.numTokens[r]!, this.numComputed[r]!, this.plan.requests[r]!.promptTokens);
  }

  /** Runs the scheduled work: the clock moves by the step's cost, tokens are sampled, requests finish. */
  private advance(scheduled: Array<{ r: number; numNew: number; decode: boolean }>): void {
    let prefillTokens = 0;
    let decodeContext = 0;
    let decodes = 0;
    for (const s of scheduled) {
      if (s.decode) {
        decodes += 1;
        decodeContext += this.numComputed[s.r]!;
      } else {
        prefillTokens += s.numNew;
        this.records[s.r]!.prefillTokens += s.numNew;
      }
    }
    this.clock.chargeStep(prefillTokens, decodeContext, decodes, this.stepTransferBlocks);
    if (this.log) {
      for (const s of scheduled) this.log.sched.push([s.r, s.numNew, s.decode ? 1 : 0]);
      this.log.end = this.clock.now / 1e9;
      this.debug.onStepLog!(this.log);
      this.log = null;
    }
    for (const { r, numNew } of scheduled) {
      this.numComputed[r]! += numNew;
      if (this.numComputed[r]! < this.numTokens[r]!) continue;
      // Everything is computed: the model samples a token.
      this.generated[r]! += 1;
      if (this.generated[r]! >= this.plan.requests[r]!.outputTokens) this.finish(r);
      else this.numTokens[r]! += 1;
    }
  }

  private finish(r: number): void {
    this.running.splice(this.running.indexOf(r), 1);
    const rec = this.records[r]!;
    rec.finishedS = this.clock.now / 1e9;
    const req = this.plan.requests[r]!;
    const session = req.session;
    const hasNext = session >= 0 && req.callIndex + 1 < this.plan.sessions[session]!.requests.length;
    const ttl = this.p.policy === 'ttl-pin' && hasNext ? this.replay.pinTtlS(session) : 0;
    if (ttl > 0) this.pins.push({ session, blocks: this.table[r]!, expiresNs: this.clock.now + toNs(ttl) });
    else this.release(this.table[r]!);
    this.table[r] = [];
    this.replay.callEnded(r, this.clock.now);
  }
}
