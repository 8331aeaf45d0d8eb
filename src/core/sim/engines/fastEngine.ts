import { PROGRESS_STEPS } from './engineTypes';
import type { ArrivalSource, CallRecord, EngineDebug, EngineOutcome, EngineRun, EngineTotals } from './engineTypes';
import { ExtentCache } from '../caches/extentCache';
import type { Extent, HitPiece } from '../caches/extentCache';
import type { EngineParams } from '../params';
import { isDecoding, newEngineTotals, StepClock, stepCostsNs, toNs } from './policySupport';
import { SessionReplay } from './sessionReplay';
import type { SimPlan, SimRequest } from '../simRequests';
import { widened } from '../../typedArrays';

/**
 * The fast engine: the same vLLM v1 scheduler as the reference engine, with the block
 * pool kept as extents (see ExtentCache) and stretches of pure decode steps run
 * without visiting every request every step. It must give the reference engine's
 * outcome exactly; property tests on random workloads check that it does.
 *
 * Owns every piece of state of one run; nothing survives the call.
 */
export function runFast(plan: SimPlan, p: EngineParams, debug: EngineDebug = {}): EngineOutcome {
  // engineTable.ts sends sglang-lru to the radix engine: this one models vLLM's block pool only.
  if (p.policy === 'sglang-lru')
    throw new Error('sglang-lru runs on the radix engine: pick engines through engineTable.ts');
  const run = startFast(plan, p, new SessionReplay(plan, p), debug);
  while (run.turn());
  return run.outcome();
}

/** A fast-engine run fed by `source` and driven turn by turn (one GPU of a fleet). */
export function startFast(plan: SimPlan, p: EngineParams, source: ArrivalSource, debug: EngineDebug = {}): EngineRun {
  if (p.policy === 'sglang-lru')
    throw new Error('sglang-lru runs on the radix engine: pick engines through engineTable.ts');
  return new FastRun(plan, p, debug, source);
}

interface Pin {
  session: number;
  owner: number;
  expiresNs: number;
}

/** Time of k steps costing A, A + B, A + 2B, … ns: integers, so exact. */
function elapsedNs(k: number, A: number, B: number): number {
  return k * A + (B * k * (k - 1)) / 2;
}

class FastRun implements EngineRun {
  private readonly bs: number;
  private readonly nb: number;
  private readonly cache: ExtentCache;
  /** Each request's block table; a finished request's stays while its session's pin holds it. */
  private readonly tables: Extent[][];
  private readonly numComputed: number[];
  private readonly numTokens: number[];
  private readonly generated: number[];
  private readonly cachedBlocks: number[];
  private readonly heldBlocks: number[];
  private readonly admitted: boolean[];
  private readonly records: CallRecord[];
  private readonly waiting: number[] = [];
  private readonly running: number[] = [];
  private readonly pins: Pin[] = [];
  /** Scratch for tryStretch: running requests by the step (mod block size) of their next new block. */
  private readonly buckets: Int32Array;
  /** Scratch for one step: what is scheduled (request, new tokens, decoding?), reused to spare the collector. */
  private schedR = new Int32Array(64);
  private schedNew = new Int32Array(64);
  private schedDecode = new Uint8Array(64);
  private schedCount = 0;
  /** Scratch for an admission's lookup (the head memo keeps its own pieces). */
  private readonly admitPieces: HitPiece[] = [];
  /** Bumped by every change to the pool except a stretch's pops: the waiting head's lookup stays valid while it holds. */
  private mutations = 0;
  private headMemo: {
    r: number;
    mutations: number;
    hitBlocks: number;
    pieces: HitPiece[];
    need: number;
    blocksBefore: number;
    limitFor: number;
  } | null = null;
  private readonly totals: EngineTotals = newEngineTotals();
  private readonly clock: StepClock;

  constructor(
    private readonly plan: SimPlan,
    private readonly p: EngineParams,
    private readonly debug: EngineDebug,
    private readonly replay: ArrivalSource,
  ) {
    this.bs = plan.blockSizeTokens;
    this.clock = new StepClock(stepCostsNs(p, this.bs));
    this.nb = Math.floor(p.capacityTokens / this.bs);
    this.buckets = new Int32Array(plan.blockSizeTokens);
    this.cache = new ExtentCache(this.nb, p.freeOrder, p.offload ? Math.floor(p.offload.capacityTokens / this.bs) : 0);
    // Per request, for the plan's requests so far (a fleet GPU's plan grows as calls are routed to it: see grow).
    const n = plan.requests.length;
    this.tables = Array.from({ length: n }, () => []);
    this.numComputed = new Array<number>(n).fill(0);
    this.numTokens = plan.requests.map((r) => r.promptTokens);
    this.generated = new Array<number>(n).fill(0);
    this.cachedBlocks = new Array<number>(n).fill(0);
    this.heldBlocks = new Array<number>(n).fill(0);
    this.admitted = new Array<boolean>(n).fill(false);
    this.records = this.replay.records;
  }

  /** Makes room for request r of a plan that grew since the run started (a fleet GPU's: one entry per call routed to it). */
  private grow(r: number): void {
    for (let i = this.numTokens.length; i <= r; i++) {
      this.tables.push([]);
      this.numComputed.push(0);
      this.numTokens.push(this.plan.requests[i]!.promptTokens);
      this.generated.push(0);
      this.cachedBlocks.push(0);
      this.heldBlocks.push(0);
      this.admitted.push(false);
    }
  }

  turn(): boolean {
    this.replay.arrive(this.clock.now, this.queue);
    this.expirePins();
    if (this.replay.adaptive) this.replay.adaptCap(this.clock.now, this.cache.usedBlocks < 0.9 * this.nb);
    if (this.running.length === 0 && this.waiting.length === 0) {
      const next = this.replay.nextEventNs(this.nextPinExpiry());
      if (next === null) return false;
      this.clock.now = Math.max(this.clock.now, next);
      return true;
    }
    this.step();
    if (this.debug.progress && this.clock.steps % PROGRESS_STEPS === 0)
      this.debug.progress(this.replay.ended, this.replay.totalCalls);
    if (this.debug.selfCheck) {
      const broken = this.cache.brokenInvariant(this.tables);
      if (broken) throw new Error(`fast engine invariant broken at step ${this.clock.steps}: ${broken}`);
    }
    return true;
  }

  outcome(): EngineOutcome {
    return this.clock.outcome(this.totals, this.replay);
  }

  get nowNs(): number {
    return this.clock.now;
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
    return (
      this.cache.lookup(request.keys, Math.floor((request.promptTokens - 1) / this.bs), this.routePieces) * this.bs
    );
  }

  /** Scratch for the router's lookups (the pool is not changed by them). */
  private readonly routePieces: HitPiece[] = [];

  fewestSamplesLeft(): number {
    let n = Infinity;
    for (const r of this.running) n = Math.min(n, this.plan.requests[r]!.outputTokens - this.generated[r]!);
    for (const r of this.waiting) n = Math.min(n, this.plan.requests[r]!.outputTokens - this.generated[r]!);
    return n;
  }

  /** An arrival joins the waiting queue (under ttl-pin, by its session's start). */
  private readonly queue = (r: number): void => {
    if (r >= this.numTokens.length) this.grow(r);
    if (this.p.policy === 'ttl-pin' && this.plan.requests[r]!.session >= 0)
      this.replay.queueBySessionStart(this.waiting, r);
    else this.waiting.push(r);
  };

  private nextPinExpiry(): number | null {
    let t: number | null = null;
    for (const pin of this.pins) if (t === null || pin.expiresNs < t) t = pin.expiresNs;
    return t;
  }

  // ---- cache operations ----

  /** Blocks the last lookup found in the CPU tier, after its GPU hits. */
  private lookupCpuBlocks = 0;

  /** A request's GPU hit blocks, with their pieces refilled into `pieces` (and its CPU-tier hits in lookupCpuBlocks). */
  private lookup(r: number, pieces: HitPiece[]): number {
    const keys = this.plan.requests[r]!.keys;
    const max = Math.floor((this.numTokens[r]! - 1) / this.bs);
    const blocks = this.cache.lookup(keys, max, pieces);
    this.lookupCpuBlocks = this.cache.cpuHits(keys, blocks, max);
    return blocks;
  }

  /** What an infinite cache would hit, at the moment of an admission (the ever-cached set only grows, so it is asked only when it counts). */
  private idealBlocks(r: number): number {
    return this.cache.idealHits(this.plan.requests[r]!.keys, Math.floor((this.numTokens[r]! - 1) / this.bs));
  }

  /** Whether allocate would succeed, changing nothing. */
  private fits(r: number, numNew: number, pieces: HitPiece[], hitBlocks: number, cpuBlocks: number): boolean {
    const computed = this.numComputed[r]! + (hitBlocks + cpuBlocks) * this.bs;
    const fresh = Math.max(0, Math.ceil((computed + numNew) / this.bs) - this.heldBlocks[r]! - hitBlocks);
    return fresh + this.cache.touchedFree(pieces) <= this.cache.freeCount;
  }

  private allocate(r: number, numNew: number, pieces: HitPiece[], hitBlocks: number, cpuBlocks: number): boolean {
    const held = this.heldBlocks[r]!;
    const computed = this.numComputed[r]! + (hitBlocks + cpuBlocks) * this.bs;
    const needBlocks = Math.ceil((computed + numNew) / this.bs);
    const fresh = Math.max(0, needBlocks - held - hitBlocks);
    if (fresh + this.cache.touchedFree(pieces) > this.cache.freeCount) return false;
    const keys = this.plan.requests[r]!.keys;
    if (pieces.length > 0) this.cache.touch(r, pieces, this.tables);
    if (fresh > 0) this.cache.allocateFresh(r, keys, held + hitBlocks, fresh, this.tables);
    this.heldBlocks[r] = held + hitBlocks + fresh;
    const full = Math.floor(Math.min(computed + numNew, this.numTokens[r]!) / this.bs);
    if (full > this.cachedBlocks[r]!) {
      this.cache.cacheBlocks(r, this.cachedBlocks[r]!, full, this.tables);
      this.cachedBlocks[r] = full;
    }
    return true;
  }

  private releaseRequest(r: number): void {
    this.cache.release(r, this.tables);
    this.heldBlocks[r] = 0;
  }

  private preempt(r: number): void {
    this.releaseRequest(r);
    this.cachedBlocks[r] = 0;
    this.numComputed[r] = 0;
    this.records[r]!.preemptions += 1;
    this.totals.preemptions += 1;
    this.waiting.unshift(r);
  }

  // ---- pins ----

  private releasePin(i: number): void {
    this.mutations++;
    this.cache.release(this.pins[i]!.owner, this.tables);
    this.pins.splice(i, 1);
  }

  private expirePins(): void {
    for (let i = 0; i < this.pins.length; ) {
      if (this.pins[i]!.expiresNs <= this.clock.now) this.releasePin(i);
      else i++;
    }
  }

  private unpinOne(): boolean {
    if (this.pins.length === 0) return false;
    let best = 0;
    for (let i = 1; i < this.pins.length; i++) if (this.pins[i]!.expiresNs < this.pins[best]!.expiresNs) best = i;
    this.releasePin(best);
    return true;
  }

  private releasePinOf(session: number): void {
    const i = this.pins.findIndex((pin) => pin.session === session);
    if (i >= 0) this.releasePin(i);
  }

  /**
   * Pins a finished request's blocks for its session: its table stays referenced, owned by
   * the pin (the request never runs again, so its id names the pin; a session has one pin
   * at a time, released before its next call runs).
   */
  private pin(r: number, session: number, expiresNs: number): void {
    this.heldBlocks[r] = 0;
    this.pins.push({ session, owner: r, expiresNs });
  }

  // ---- stretches of identical steps ----

  /**
   * Extends a decode stretch past the point where its pops start evicting the blocked
   * head's cached blocks. The queue pops a released run from its top block down, so the
   * head's hit shrinks to the lowest block gone; the head is looked up after each step's
   * pops and must stay blocked (its need grows as its hit shrinks, the free blocks fall).
   * Steps 1 … `from` are known safe. Returns how far the stretch may go and the head's
   * hit blocks summed over steps from + 1 … steps (for vLLM's counters).
   */
  private eatHead(head: number, from: number, upper: number, budgetLeft: number): { steps: number; hits: number } {
    const memo = this.headMemo!;
    const free0 = this.cache.freeCount;
    const frags = this.cache.queuedFragments(memo.pieces, this.stretchPops(upper));
    if (!frags) return { steps: from, hits: 0 };
    const bs = this.bs;
    const tokens = this.numTokens[head]!;
    let hits = 0;
    let steps = from;
    for (let i = from + 1; i <= upper; i++) {
      const p = this.stretchPops(i);
      if (p > free0) break; // a running request's allocation would fail: a normal step preempts
      let hit = memo.hitBlocks;
      for (const f of frags) {
        const popped = Math.min(Math.max(0, p - f.q0), f.ext.to - f.ext.from);
        const lowest = f.ext.to - popped;
        if (popped > 0 && Math.max(f.lo, lowest) < Math.min(f.hi, f.ext.to))
          hit = Math.min(hit, Math.max(f.lo, lowest));
      }
      let touched = 0;
      for (const f of frags) {
        const popped = Math.min(Math.max(0, p - f.q0), f.ext.to - f.ext.from);
        touched += Math.max(0, Math.min(f.ext.to - popped, f.hi, hit) - Math.max(f.ext.from, f.lo));
      }
      const numNew = Math.min(tokens - hit * bs, budgetLeft);
      const need = Math.max(0, Math.ceil((hit * bs + numNew) / bs) - hit) + touched;
      if (need <= free0 - p) break; // admissible at step i: a normal step admits it
      hits += hit;
      steps = i;
    }
    return { steps, hits };
  }

  /** A stretch's prefilling request (chunk 0: none): tokens a step, computed and blocks held at the start. */
  private prefillChunk = 0;
  private prefillComputed = 0;
  private prefillHeld = 0;

  /** Blocks a stretch allocates in its first k steps: the decoders' (from the buckets) and the prefill's. */
  private stretchPops(k: number): number {
    const prefill =
      this.prefillChunk === 0
        ? 0
        : Math.max(0, Math.ceil((this.prefillComputed + k * this.prefillChunk) / this.bs) - this.prefillHeld);
    return this.popsIn(k) + prefill;
  }

  /** Blocks the running requests allocate in the next k decode steps (from the buckets). */
  private popsIn(k: number): number {
    let n = 0;
    const last = Math.min(this.bs, k);
    for (let b = 0; b < last; b++) {
      const count = this.buckets[b]!;
      if (count > 0) n += count * (Math.floor((k - 1 - b) / this.bs) + 1);
    }
    return n;
  }

  /**
   * Runs many steps at once while nothing but the same thing can happen each step.
   * Either every running request only decodes, or all but the last decode and the last
   * is prefilling a chunk that takes the rest of the token budget (so the waiting queue
   * is never looked at). Nothing else may happen: no arrival or other timed event, no
   * finish, no prefill that completes, no allocation that fails, and a waiting head
   * that stays blocked with the same lookup. Each step's cost is an integer (A + B·i
   * ns), so the clock jumps by an exact sum; blocks the steps would allocate are popped
   * in one go (which block goes to which request does not change anything observable,
   * as nothing looks the pool up in between); the head's repeated lookups are counted
   * as vLLM counts them. Returns false when the next step is not such a step.
   */
  private tryStretch(): boolean {
    const R = this.running.length;
    if (R === 0 || R > this.p.maxNumBatchedTokens) return false;
    const last = this.running[R - 1]!;
    // A prefilling last request: it takes `chunk` tokens a step, all the budget the decoders leave.
    const chunk = this.p.maxNumBatchedTokens - (R - 1);
    const prefilling = !this.isDecode(last);
    const D = prefilling ? R - 1 : R;
    let finishIn = Infinity;
    let context0 = 0;
    const buckets = this.buckets;
    buckets.fill(0);
    for (let k = 0; k < D; k++) {
      const r = this.running[k]!;
      const c = this.numComputed[r]!;
      if (this.numTokens[r]! - c !== 1 || c < this.plan.requests[r]!.promptTokens) return false;
      finishIn = Math.min(finishIn, this.plan.requests[r]!.outputTokens - this.generated[r]!);
      context0 += c;
      buckets[(this.bs - (c % this.bs)) % this.bs]! += 1;
    }
    // Keep the step in which a request finishes (or a prefill completes) out of the stretch.
    let upper = finishIn - 1;
    this.prefillChunk = 0;
    if (prefilling) {
      const left = this.numTokens[last]! - this.numComputed[last]!;
      upper = Math.min(upper, Math.floor((left - 1) / chunk));
      this.prefillChunk = chunk;
      this.prefillComputed = this.numComputed[last]!;
      this.prefillHeld = this.heldBlocks[last]!;
    }
    if (upper < 2) return false;
    const c = this.clock.cost;
    const prefillPerStep = prefilling ? chunk * c.prefillPerToken : 0;
    const A = c.fixed + prefillPerStep + c.kvPerToken * context0 + D * c.decodePerSeq;
    const B = c.kvPerToken * D;
    // Steps 1 … S − 1 start before the next event: elapsed(S − 1) < E.
    // Arrivals only join the waiting queue's tail, unseen while the budget is spent or
    // the head stays blocked; under ttl-pin they may go ahead of the head.
    const waitingLooked = !prefilling && this.p.maxNumBatchedTokens - R > 0 && R < this.p.maxNumSeqs;
    const arrivalsCount = this.p.policy === 'ttl-pin' || (waitingLooked && this.waiting.length === 0);
    const E = Math.min(this.replay.nextChangeNs(arrivalsCount), this.nextPinExpiry() ?? Infinity) - this.clock.now;
    if (Number.isFinite(E)) {
      let m =
        B === 0
          ? A === 0
            ? upper
            : Math.ceil(E / A) - 1
          : Math.ceil((-(A - B / 2) + Math.sqrt((A - B / 2) ** 2 + 2 * B * E)) / B) - 1;
      m = Math.max(0, Math.min(m, upper));
      while (m + 1 <= upper && elapsedNs(m + 1, A, B) < E) m++;
      while (m > 0 && elapsedNs(m, A, B) >= E) m--;
      upper = Math.min(upper, m + 1);
    }
    if (upper < 2) return false;
    // The waiting head: looked up every step (after the running requests allocate), and blocked throughout.
    let head = -1;
    let headHitBlocks = 0;
    let limit = this.cache.freeCount;
    const budgetLeft = this.p.maxNumBatchedTokens - R;
    if (waitingLooked && this.waiting.length > 0) {
      // With a CPU tier the head's lookup runs on into it: a normal step decides.
      if (this.p.offload) return false;
      head = this.waiting[0]!;
      if (this.pins.length > 0) return false; // a blocked head may be admitted after unpinning: a normal step decides
      const want = this.stretchPops(upper);
      let memo = this.headMemo;
      // The head's lookup only changes when the pool does; a stretch's pops stay clear of its blocks by construction.
      if (
        !memo ||
        memo.r !== head ||
        memo.mutations !== this.mutations ||
        memo.limitFor < Math.min(want, memo.blocksBefore + 1)
      ) {
        memo = this.headMemo ?? { r: 0, mutations: 0, hitBlocks: 0, pieces: [], need: 0, blocksBefore: 0, limitFor: 0 };
        const hitBlocks = this.lookup(head, memo.pieces); // offload is off here, so no CPU-tier walk
        const computedAfter = hitBlocks * this.bs;
        const numNew = Math.min(this.numTokens[head]! - computedAfter, budgetLeft);
        const need =
          Math.max(0, Math.ceil((computedAfter + numNew) / this.bs) - hitBlocks) + this.cache.touchedFree(memo.pieces);
        memo.r = head;
        memo.mutations = this.mutations;
        memo.hitBlocks = hitBlocks;
        memo.need = need;
        memo.blocksBefore = this.cache.blocksBeforePieces(memo.pieces, want);
        memo.limitFor = want;
        this.headMemo = memo;
      }
      // Admissible now: a normal step decides (the pops of its running requests come first).
      if (memo.need <= this.cache.freeCount) return false;
      headHitBlocks = memo.hitBlocks;
      limit = Math.min(limit, memo.blocksBefore);
    }
    // With a CPU tier, popping a cached block saves it there and costs transfer time in
    // its step: keep to the blank blocks at the front, whose pops cost nothing.
    if (this.p.offload) limit = Math.min(limit, this.cache.blankAtFront(this.stretchPops(upper)));
    // The largest S ≤ upper whose pops fit: pops are monotone, so search.
    let lo = 0;
    let hi = upper;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (this.stretchPops(mid) <= limit) lo = mid;
      else hi = mid - 1;
    }
    let S = lo;
    let headHits = S * headHitBlocks;
    let headEaten = false;
    // The pops reach the head's own cached blocks: follow its shrinking hit step by step.
    if (head >= 0 && S < upper && limit < this.cache.freeCount) {
      const eaten = this.eatHead(head, S, upper, budgetLeft);
      if (eaten.steps > S) {
        headHits += eaten.hits;
        S = eaten.steps;
        headEaten = true;
      }
    }
    if (S < 2) return false;

    // Apply S steps.
    const clock = this.clock;
    clock.steps += S;
    const decodePart = c.kvPerToken * (S * context0 + (D * S * (S - 1)) / 2) + S * D * c.decodePerSeq;
    if (D > 0) clock.decodeNs += decodePart + S * c.fixed;
    else clock.prefillNs += S * c.fixed;
    clock.prefillNs += S * prefillPerStep;
    if (prefilling) this.records[last]!.prefillTokens += S * chunk;
    clock.now += elapsedNs(S, A, B);
    if (head >= 0 && this.records[head]!.preemptions === 0) {
      this.totals.vllmQueries += S * this.numTokens[head]!;
      this.totals.vllmHits += headHits * this.bs;
    }
    const popped = this.stretchPops(S);
    this.cache.popBlocks(popped);
    if (prefilling || headEaten)
      this.mutations++; // new cached blocks, or the head's own gone: its lookup changes
    else if (this.headMemo && head >= 0) {
      // The head's first queued block moved that much closer to the front.
      this.headMemo.blocksBefore -= popped;
      this.headMemo.limitFor -= popped;
    }
    for (let k = 0; k < R; k++) {
      const r = this.running[k]!;
      const c0 = this.numComputed[r]!;
      const decoding = k < D;
      const c1 = c0 + (decoding ? S : S * chunk);
      const held = this.heldBlocks[r]!;
      const need = Math.ceil(c1 / this.bs);
      if (need > held) this.cache.appendOwned(r, this.plan.requests[r]!.keys, held, need - held, this.tables);
      this.heldBlocks[r] = Math.max(held, need);
      this.numComputed[r] = c1;
      if (decoding) {
        this.numTokens[r] = c1 + 1;
        this.generated[r]! += S;
      }
      const full = Math.floor(Math.min(c1, this.numTokens[r]!) / this.bs);
      if (full > this.cachedBlocks[r]!) {
        this.cache.cacheBlocks(r, this.cachedBlocks[r]!, full, this.tables);
        this.cachedBlocks[r] = full;
      }
    }
    return true;
  }

  // ---- one engine step ----

  private schedule(r: number, numNew: number, decode: boolean): void {
    if (this.schedCount === this.schedR.length) {
      const n = this.schedR.length * 2;
      this.schedR = widened(this.schedR, n);
      this.schedNew = widened(this.schedNew, n);
      this.schedDecode = widened(this.schedDecode, n);
    }
    this.schedR[this.schedCount] = r;
    this.schedNew[this.schedCount] = numNew;
    this.schedDecode[this.schedCount] = decode ? 1 : 0;
    this.schedCount++;
  }

  private step(): void {
    if (this.tryStretch()) return;
    this.mutations++;
    let budget = this.p.maxNumBatchedTokens;
    this.schedCount = 0;
    let preempted = false;
    this.cache.takeSaved();
    let loadedBlocks = 0;
    let i = 0;
    while (i < this.running.length && budget > 0) {
      const r = this.running[i]!;
      const numNew = Math.min(this.numTokens[r]! - this.numComputed[r]!, budget);
      let selfPreempted = false;
      while (!this.allocate(r, numNew, [], 0, 0)) {
        if (this.unpinOne()) continue;
        const victim = this.running.pop()!;
        this.preempt(victim);
        preempted = true;
        if (victim === r) {
          selfPreempted = true;
          break;
        }
      }
      if (selfPreempted) break;
      this.schedule(r, numNew, this.isDecode(r));
      budget -= numNew;
      i++;
    }
    if (!preempted) {
      while (this.waiting.length > 0 && budget > 0 && this.running.length < this.p.maxNumSeqs) {
        const r = this.waiting[0]!;
        const pieces = this.admitPieces;
        pieces.length = 0;
        let hitBlocks = 0;
        let cpuBlocks = 0;
        let ideal = 0;
        const looked = this.numComputed[r] === 0;
        if (looked) {
          hitBlocks = this.lookup(r, pieces);
          cpuBlocks = this.lookupCpuBlocks;

          if (this.records[r]!.preemptions === 0) {
            this.totals.vllmQueries += this.numTokens[r]!;
            this.totals.vllmHits += hitBlocks * this.bs;
          }
        }
        const computedAfter = this.numComputed[r]! + (hitBlocks + cpuBlocks) * this.bs;
        const numNew = Math.min(this.numTokens[r]! - computedAfter, budget);
        let ok = this.fits(r, numNew, pieces, hitBlocks, cpuBlocks);
        while (!ok && this.unpinOne()) ok = this.fits(r, numNew, pieces, hitBlocks, cpuBlocks);
        if (!ok) break;
        // Asked only now that it counts, and before allocating: blocks this request caches itself are no ideal hits.
        if (looked) ideal = this.idealBlocks(r);
        this.allocate(r, numNew, pieces, hitBlocks, cpuBlocks);
        this.waiting.shift();
        this.running.push(r);
        this.numComputed[r] = computedAfter;
        loadedBlocks += cpuBlocks;
        this.replay.recordBlockAdmission(r, !this.admitted[r], this.clock.now, this.bs, hitBlocks, cpuBlocks, ideal);
        const req = this.plan.requests[r]!;
        if (this.p.policy === 'ttl-pin' && req.session >= 0 && !this.admitted[r]) this.releasePinOf(req.session);
        this.admitted[r] = true;
        this.schedule(r, numNew, this.isDecode(r));
        budget -= numNew;
      }
    }
    this.advance(this.cache.takeSaved() + loadedBlocks);
  }

  private isDecode(r: number): boolean {
    return isDecoding(this.numTokens[r]!, this.numComputed[r]!, this.plan.requests[r]!.promptTokens);
  }

  private advance(transferBlocks: number): void {
    let prefillTokens = 0;
    let decodeContext = 0;
    let decodes = 0;
    const n = this.schedCount;
    for (let k = 0; k < n; k++) {
      if (this.schedDecode[k]) {
        decodes += 1;
        decodeContext += this.numComputed[this.schedR[k]!]!;
      } else {
        prefillTokens += this.schedNew[k]!;
        this.records[this.schedR[k]!]!.prefillTokens += this.schedNew[k]!;
      }
    }
    this.clock.chargeStep(prefillTokens, decodeContext, decodes, transferBlocks);
    for (let k = 0; k < n; k++) {
      const r = this.schedR[k]!;
      this.numComputed[r]! += this.schedNew[k]!;
      if (this.numComputed[r]! < this.numTokens[r]!) continue;
      this.generated[r]! += 1;
      if (this.generated[r]! >= this.plan.requests[r]!.outputTokens) this.finish(r);
      else this.numTokens[r]! += 1;
    }
  }

  private finish(r: number): void {
    const i = this.running.indexOf(r);
    for (let k = i + 1; k < this.running.length; k++) this.running[k - 1] = this.running[k]!;
    this.running.pop();
    this.records[r]!.finishedS = this.clock.now / 1e9;
    const req = this.plan.requests[r]!;
    const session = req.session;
    const hasNext = session >= 0 && req.callIndex + 1 < this.plan.sessions[session]!.requests.length;
    const ttl = this.p.policy === 'ttl-pin' && hasNext ? this.replay.pinTtlS(session) : 0;
    if (ttl > 0) this.pin(r, session, this.clock.now + toNs(ttl));
    else this.releaseRequest(r);
    this.replay.callEnded(r, this.clock.now);
  }
}
