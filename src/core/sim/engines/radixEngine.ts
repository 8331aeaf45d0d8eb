import { PROGRESS_STEPS } from './engineTypes';
import type { ArrivalSource, CallRecord, EngineOutcome, EngineRun, EngineTotals } from './engineTypes';
import type { EngineParams } from '../params';
import { newEngineTotals, sglangLimits, StepClock, stepCostsNs } from './policySupport';
import { PrefixRecord, RadixCache } from '../caches/radixCache';
import type { RadixNode } from '../caches/radixCache';
import { SessionReplay } from './sessionReplay';
import type { SimPlan, SimRequest } from '../simRequests';
import { widened } from '../../typedArrays';

/*
 * The sglang-lru engine: SGLang's scheduler and RadixCache, rule for rule
 * (docs/design/simulator.md §2, sources at sgl-project/sglang@8905cbd4, paths under
 * python/sglang/srt/). One turn is one pass of Scheduler.event_loop_normal
 * (managers/scheduler.py l.1520) without the overlap scheduler:
 *
 * - A batch is either a prefill (extend) batch or the decode batch, never mixed; a new
 *   prefill batch runs before decode whenever one can be formed
 *   (get_next_batch_to_run, l.2687).
 * - Admission is PrefillAdder's budget (managers/schedule_policy.py l.441): the free and
 *   evictable tokens minus, for every running request, min(its tokens still to sample,
 *   4096) × new_token_ratio, and for each admitted one its paged input + min(max_new,
 *   4096) + a page. new_token_ratio decays from 0.7 to 0.098 over 600 decode steps,
 *   is reset when the scheduler idles and re-estimated after a retraction
 *   (managers/scheduler_components/new_token_ratio_tracker.py).
 * - Memory: when an allocation finds fewer free tokens than it needs, SGLang evicts the
 *   whole allocation's size from the tree, not the shortfall (mem_cache/common.py
 *   evict_from_tree_cache, mem_cache/allocation.py); with pages, a page more per request.
 * - A decode step that cannot get its tokens retracts decoding requests, fewest
 *   outputs first (ties: longest prompt), freeing their KV without inserting it
 *   (managers/schedule_batch.py retract_decode, release_req); they go to the back of
 *   the waiting queue and re-prefill prompt + outputs so far.
 * - The tree gets a request's prompt after its prefill (cache_unfinished_req) and its
 *   prompt + output − 1 tokens at its end (cache_finished_req), whole pages only.
 *
 * The pool is counted, not kept slot by slot: which slot or page a token has never
 * changes a count (the paged allocator frees whole pages, and a request's own pages are
 * those covering its tokens past the prefix it shares with the tree).
 */

/** SGLang's defaults the engine takes as constants (server_args.py, environ.py at 8905cbd4). */
export const SGLANG = {
  /** --max-prefill-tokens: tokens a prefill batch may add (server_args.py l.722). */
  maxPrefillTokens: 16_384,
  /** SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION: the admission estimate caps a request's remaining outputs here (schedule_policy.py l.65). */
  clipMaxNewTokens: 4096,
  /** SGLANG_RETRACT_DECODE_STEPS: decode steps of room a retraction frees for each remaining request. */
  retractDecodeSteps: 20,
  initNewTokenRatio: 0.7,
  minNewTokenRatioFactor: 0.14,
  newTokenRatioDecaySteps: 600,
} as const;

/** What the debug hook sees after a step is scheduled. */
export interface RadixStepState {
  step: number;
  /** Clock at the start of the step, seconds. */
  nowS: number;
  mode: 'prefill' | 'decode';
  capacityTokens: number;
  treeTokens: number;
  lockedTokens: number;
  /** Tokens (whole pages) requests hold outside the tree. */
  privateTokens: number;
  /** Requests in the step's batch. */
  batch: number;
  waiting: number;
}

/** One step as the engine ran it, for comparing schedules with SGLang's code. */
export interface RadixStepLog {
  step: number;
  /** Clock at the step's start, seconds. */
  t: number;
  mode: 'prefill' | 'decode';
  /** [request, tokens computed] in batch order. */
  reqs: Array<[number, number]>;
  /** Requests retracted while this decode batch was formed. */
  retracted: number[];
  /** Tokens evicted from the tree while this step was formed. */
  evicted: number;
}

/** Test hooks: a callback per step, self-checks that throw on any inconsistency, progress. */
export interface RadixDebug {
  onStep?: (s: RadixStepState) => void;
  onRadixStep?: (e: RadixStepLog) => void;
  /** Recount the tree and every request's pages after each step, and check used ≤ capacity. */
  selfCheck?: boolean;
  /** Progress of a long run (see EngineDebug). */
  progress?: (endedCalls: number, totalCalls: number) => void;
  /** Filled with each request's SGLang `cached_tokens` (usage.prompt_tokens_details) as it runs. */
  cachedTokens?: number[];
}

/**
 * Runs a plan under SGLang's scheduler and radix cache with LRU leaf eviction (policy
 * sglang-lru). Deterministic; owns every piece of state of one run.
 */
export function runRadix(plan: SimPlan, p: EngineParams, debug: RadixDebug = {}): EngineOutcome {
  const run = startRadix(plan, p, new SessionReplay(plan, p), debug);
  while (run.turn());
  return run.outcome();
}

/** A radix-engine run fed by `source` and driven turn by turn (one GPU of a fleet). */
export function startRadix(plan: SimPlan, p: EngineParams, source: ArrivalSource, debug: RadixDebug = {}): EngineRun {
  // An empty key list would read as "nothing cached, ever": refuse rather than answer wrong.
  if (!plan.tokenKeys)
    throw new Error('the sglang-lru engine needs a plan with token keys (planWorkload(…, withTokenKeys = true))');
  return new RadixRun(plan, p, debug, source);
}

/** A ScheduleBatch: its requests in order and the flags the scheduler reads. Identity matters: the running batch can become a former prefill batch. */
interface Batch {
  reqs: number[];
  batchIsFull: boolean;
  mode: 'extend' | 'decode' | null;
  chunkedReq: number;
  /** Tokens the batch computes (extend_num_tokens). */
  extendTokens: number;
}

const NONE = -1;

const newBatch = (reqs: number[] = []): Batch => ({
  reqs,
  batchIsFull: false,
  mode: null,
  chunkedReq: NONE,
  extendTokens: 0,
});

/** The admission budget of one prefill pass (PrefillAdder, schedule_policy.py l.441). */
interface Adder {
  remTotalOffset: number;
  curRemOffset: number;
  remInput: number;
  remChunk: number;
  canRun: number[];
  newChunked: number;
  logHit: number;
  logInput: number;
}

const CONTINUE = 0;
const NO_TOKEN = 1;
const OTHER = 2;

class RadixRun implements EngineRun {
  private readonly ps: number;
  private readonly totalPages: number;
  private readonly maxTotal: number;
  private readonly maxRunning: number;
  private readonly maxReqLen: number;
  private readonly chunkSize: number;
  private readonly tree: RadixCache;
  /** Every key the tree was given: the never-evicting tree of the ideal hit. */
  private readonly ever = new PrefixRecord();
  /** Σ over requests holding KV of their own pages (those past their cache-protected prefix). */
  private ownPagesTotal = 0;
  /** Requests holding a req_to_token_pool slot. */
  private slotsUsed = 0;

  // Per request (Req's fields, schedule_batch.py l.714).
  private readonly maxNew: number[];
  private readonly outputs: number[];
  private readonly fillLen: number[];
  private readonly prefixLen: number[];
  private readonly lastNode: Array<RadixNode | null>;
  private readonly protectedLen: number[];
  private readonly extStart: number[];
  private readonly extEnd: number[];
  /** kv_allocated_len, or −1 while the request holds no KV. */
  private readonly allocated: number[];
  private readonly committed: number[];
  private readonly ownPages: number[];
  private hasSlot: Uint8Array;
  private readonly inflight: number[];
  private stain: Uint8Array;
  private retracted: Uint8Array;
  private finished: Uint8Array;
  private readonly cached: number[];
  private readonly alreadyComputed: number[];

  private waiting: number[] = [];
  private running: Batch = newBatch();
  private lastBatch: Batch | null = null;
  private chunked = NONE;
  private idleStreak = 0;
  private readonly ratio: { init: number; min: number; decay: number; current: number };

  private readonly records: CallRecord[];
  private readonly totals: EngineTotals = {
    ...newEngineTotals(),
    sglangCachedTokens: 0,
    sglangNewTokens: 0,
    evictedTokens: 0,
  };
  private readonly clock: StepClock;
  private stepEvicted = 0;
  /** Requests refused because they could never be scheduled (see turn). */
  private refused = 0;
  private stepRetracted: number[] = [];

  constructor(
    private readonly plan: SimPlan,
    p: EngineParams,
    private readonly debug: RadixDebug,
    private readonly replay: ArrivalSource,
  ) {
    this.ps = p.sglangPageSizeTokens;
    const limits = sglangLimits(p);
    this.maxTotal = limits.maxTotalTokens;
    this.totalPages = this.maxTotal / this.ps;
    this.maxReqLen = limits.maxReqLen;
    // kv_cache_configurator: at most half the pool in requests; req_to_token_pool has that many slots.
    this.maxRunning = Math.min(p.maxNumSeqs, Math.floor(this.maxTotal / 2));
    this.chunkSize = p.maxNumBatchedTokens;
    this.tree = new RadixCache(this.ps);
    this.clock = new StepClock(stepCostsNs(p, plan.blockSizeTokens));
    // Per request, for the plan's requests so far (a fleet GPU's plan grows as calls are routed to it: see grow).
    const n = plan.requests.length;
    const zeros = (): number[] => new Array<number>(n).fill(0);
    this.maxNew = zeros();
    this.outputs = zeros();
    this.fillLen = zeros();
    this.prefixLen = zeros();
    this.lastNode = new Array<RadixNode | null>(n).fill(null);
    this.protectedLen = zeros();
    this.extStart = zeros();
    this.extEnd = zeros();
    this.allocated = new Array<number>(n).fill(NONE);
    this.committed = zeros();
    this.ownPages = zeros();
    this.hasSlot = new Uint8Array(n);
    this.inflight = zeros();
    this.stain = new Uint8Array(n);
    this.retracted = new Uint8Array(n);
    this.finished = new Uint8Array(n);
    this.cached = zeros();
    this.alreadyComputed = zeros();
    // NewTokenRatioTracker.from_server_args, schedule_conservativeness 1.0, the same float arithmetic.
    const init = Math.min(SGLANG.initNewTokenRatio * 1.0, 1.0);
    const min = Math.min(init * SGLANG.minNewTokenRatioFactor, 1.0);
    this.ratio = { init, min, decay: (init - min) / SGLANG.newTokenRatioDecaySteps, current: init };
    this.records = this.replay.records;
  }

  // ---- EngineRun ----

  turn(): boolean {
    this.replay.arrive(this.clock.now, this.queue);
    if (!this.busy()) {
      // An idle pass changes nothing but the ratio (Scheduler.on_idle); after three the loop waits for the next arrival.
      this.ratio.current = this.ratio.init;
      this.lastBatch = null;
      this.idleStreak = 0;
      const next = this.replay.nextEventNs(null);
      if (next === null) return false;
      this.clock.now = Math.max(this.clock.now, next);
      return true;
    }
    this.stepEvicted = 0;
    this.stepRetracted = [];
    const batch = this.nextBatch();
    if (batch !== null) {
      this.idleStreak = 0;
      this.runBatch(batch);
    } else if (
      this.running.reqs.length === 0 &&
      this.chunked === NONE &&
      this.waiting.length > 0 &&
      this.neverFits(this.waiting[0]!)
    ) {
      // Nothing runs and the head of the queue does not fit the whole pool: SGLang would keep it
      // (and, FCFS, everything behind it) waiting for ever. The engine refuses it instead.
      // (Its NO_TOKEN left batch_is_full set, which only a shrinking running batch clears.)
      this.refuse(this.waiting.shift()!);
      this.running.batchIsFull = false;
    } else {
      this.ratio.current = this.ratio.init;
      this.idleStreak += 1;
      if (this.idleStreak >= 3) {
        this.idleStreak = 0;
        const next = this.replay.nextEventNs(null);
        if (next === null) {
          if (this.waiting.length > 0)
            throw new Error(`sglang-lru: ${this.waiting.length} request(s) can never be scheduled`);
        } else this.clock.now = Math.max(this.clock.now, next);
      }
    }
    this.lastBatch = batch;
    if (this.debug.progress && batch !== null && this.clock.steps % PROGRESS_STEPS === 0)
      this.debug.progress(this.replay.ended, this.replay.totalCalls);
    return true;
  }

  outcome(): EngineOutcome {
    return this.clock.outcome(this.totals, this.replay, this.refused);
  }

  get nowNs(): number {
    return this.clock.now;
  }

  nextEventNs(): number | null {
    if (this.busy()) return this.clock.now;
    const next = this.replay.nextEventNs(null);
    return next === null ? null : Math.max(this.clock.now, next);
  }

  loadTokens(): number {
    let n = 0;
    for (const r of this.running.reqs)
      if (!this.finished[r]) n += this.plan.requests[r]!.promptTokens + this.outputs[r]!;
    if (this.lastBatch !== null && this.lastBatch !== this.running && this.lastBatch.mode === 'extend')
      for (const r of this.lastBatch.reqs)
        if (!this.finished[r]) n += this.plan.requests[r]!.promptTokens + this.outputs[r]!;
    for (const r of this.waiting) n += this.plan.requests[r]!.promptTokens + this.outputs[r]!;
    return n;
  }

  cachedPrefixTokens(request: SimRequest): number {
    return this.tree.matchLength(request.tokenKeys, request.promptTokens - 1);
  }

  /** Makes room for request r of a plan that grew since the run started (a fleet GPU's: one entry per call routed to it). */
  private grow(r: number): void {
    const from = this.maxNew.length;
    if (r < from) return;
    for (let i = from; i <= r; i++) {
      for (const a of [
        this.maxNew,
        this.outputs,
        this.fillLen,
        this.prefixLen,
        this.protectedLen,
        this.extStart,
        this.extEnd,
        this.committed,
        this.ownPages,
        this.inflight,
        this.cached,
        this.alreadyComputed,
      ])
        a.push(0);
      this.lastNode.push(null);
      this.allocated.push(NONE);
    }
    if (r >= this.hasSlot.length) {
      const size = Math.max(r + 1, 2 * this.hasSlot.length);
      this.hasSlot = widened(this.hasSlot, size);
      this.stain = widened(this.stain, size);
      this.retracted = widened(this.retracted, size);
      this.finished = widened(this.finished, size);
    }
  }

  fewestSamplesLeft(): number {
    let n = Infinity;
    const left = (r: number): void => void (n = Math.min(n, Math.max(1, this.maxNew[r]!) - this.outputs[r]!));
    for (const r of this.running.reqs) if (!this.finished[r]) left(r);
    if (this.lastBatch !== null && this.lastBatch.mode === 'extend')
      for (const r of this.lastBatch.reqs) if (!this.finished[r]) left(r);
    for (const r of this.waiting) left(r);
    return n;
  }

  /** Whether a pass of the loop can do anything: requests waiting or held in a batch, or a prefill batch still to merge. */
  private busy(): boolean {
    return (
      this.waiting.length > 0 ||
      this.running.reqs.length > 0 ||
      this.chunked !== NONE ||
      (this.lastBatch !== null && this.lastBatch.mode === 'extend')
    );
  }

  /** A request arrives (Scheduler.handle_generate_request): its max_new_tokens clipped to what the pool can ever hold (init_req_max_new_tokens, scheduler.py l.1885). */
  private readonly queue = (r: number): void => {
    if (r >= this.maxNew.length) this.grow(r);
    const req = this.plan.requests[r]!;
    const pagedInput = Math.ceil(req.promptTokens / this.ps) * this.ps;
    this.maxNew[r] = Math.max(
      0,
      Math.min(req.outputTokens, this.maxReqLen - req.promptTokens - 1, this.maxTotal - pagedInput - this.ps - 1),
    );
    this.waiting.push(r);
  };

  /**
   * Whether add_one_req refuses `r` even with the whole pool free or evictable: with its own
   * prefix locked the budget is the pool less that prefix, and it needs its uncached tokens,
   * its remaining outputs (at most 4096) and a page, so fill + outputs + page ≥ pool. Only a
   * pool smaller than the request's pages plus one does this (init_req_max_new_tokens then
   * clips its output to nothing).
   */
  private neverFits(r: number): boolean {
    const fill = this.plan.requests[r]!.promptTokens + this.outputs[r]!;
    const rest = Math.min(Math.max(this.maxNew[r]! - this.outputs[r]!, 0), SGLANG.clipMaxNewTokens);
    return fill + rest + this.ps >= this.maxTotal;
  }

  /** Ends a request that can never be scheduled as refused; its session goes on. */
  private refuse(r: number): void {
    const rec = this.records[r]!;
    rec.rejected = true;
    rec.finishedS = this.clock.now / 1e9;
    this.refused += 1;
    this.replay.callEnded(r, this.clock.now);
  }

  // ---- the pool (mem_cache/allocator, mem_cache/common.py) ----

  /** available_size(): free pages × page size. */
  private get available(): number {
    return (this.totalPages - this.tree.size / this.ps - this.ownPagesTotal) * this.ps;
  }

  /** The request's own pages once its allocated and protected lengths changed. */
  private repage(r: number): void {
    const own = this.allocated[r] === NONE ? 0 : Math.ceil((this.allocated[r]! - this.protectedLen[r]!) / this.ps);
    this.ownPagesTotal += own - this.ownPages[r]!;
    this.ownPages[r] = own;
  }

  /** evict_from_tree_cache (common.py l.105): when fewer than `n` tokens are free, evict `n` (the whole request, not the shortfall). */
  private evictFor(n: number): void {
    if (this.available < n) {
      const freed = this.tree.evict(n);
      this.totals.evictedTokens! += freed;
      this.stepEvicted += freed;
    }
  }

  // ---- the tree (mem_cache/radix_cache.py) ----

  /** cache_unfinished_req (l.490): the computed prompt goes into the tree; duplicates are freed; the lock moves to the new end. */
  private cacheUnfinished(r: number): void {
    const keys = this.plan.requests[r]!.tokenKeys;
    const keyLen = this.tree.aligned(this.extEnd[r]!);
    this.tree.insert(keys, keyLen);
    this.ever.insert(keys, keyLen);
    // The prefix indices could have changed: match again (a second stamp on the path, l.521).
    const { node } = this.tree.match(keys, keyLen);
    this.protectedLen[r] = keyLen;
    this.repage(r);
    this.tree.unlock(this.lastNode[r]!);
    this.tree.lock(node);
    this.lastNode[r] = node;
    this.prefixLen[r] = this.extEnd[r]!;
  }

  /** release_kv_cache → cache_finished_req (common.py l.131, radix_cache.py l.437): prompt + output − 1 tokens go in (or, retracted, none), the rest is freed, the lock dropped. */
  private releaseKv(r: number, insert: boolean): void {
    const keys = this.plan.requests[r]!.tokenKeys;
    const keyLen = this.tree.aligned(this.committed[r]!);
    if (insert) {
      this.tree.insert(keys, keyLen);
      this.ever.insert(keys, keyLen);
    }
    if (this.allocated[r] !== this.committed[r])
      throw new Error(`request ${r}: ${this.allocated[r]} tokens allocated, ${this.committed[r]} committed`);
    this.allocated[r] = NONE;
    this.protectedLen[r] = 0;
    this.repage(r);
    if (this.lastNode[r] !== null) this.tree.unlock(this.lastNode[r]!);
    this.hasSlot[r] = 0;
    this.slotsUsed -= 1;
  }

  // ---- scheduling (managers/scheduler.py) ----

  /** get_next_batch_to_run (l.2687): merge the last prefill batch into the running one, then a new prefill batch if one forms, else decode. */
  private nextBatch(): Batch | null {
    const exclude: number[] = [];
    if (this.chunked !== NONE) {
      exclude.push(this.chunked);
      // stash_chunked_request: the chunk just computed goes into the tree.
      if (this.extEnd[this.chunked]! > this.prefixLen[this.chunked]!) this.cacheUnfinished(this.chunked);
    }
    const lb = this.lastBatch;
    if (lb !== null && lb.mode === 'extend') {
      if (lb.chunkedReq !== NONE) exclude.push(lb.chunkedReq);
      const lastBs = lb.reqs.length;
      lb.reqs = lb.reqs.filter((x) => !this.finished[x] && !exclude.includes(x));
      if (lb.reqs.length < lastBs) this.running.batchIsFull = false;
      if (lb.reqs.length > 0) {
        if (this.running.reqs.length === 0) this.running = lb;
        else this.running.reqs.push(...lb.reqs);
      }
    }
    const prefill = this.newPrefillBatch();
    if (prefill !== null) return prefill;
    if (this.running.reqs.length > 0) {
      this.updateRunningBatch(this.running);
      return this.running.reqs.length > 0 ? this.running : null;
    }
    return null;
  }

  private allocatableReqs(runningBs: number): number {
    return Math.min(this.maxRunning - runningBs, this.maxRunning - this.slotsUsed);
  }

  /** _get_new_batch_prefill_raw (l.2846): FCFS through the waiting queue with PrefillAdder. */
  private newPrefillBatch(): Batch | null {
    const rb = this.running;
    if ((rb.batchIsFull || this.waiting.length === 0) && this.chunked === NONE) return null;
    if (this.allocatableReqs(rb.reqs.length) <= 0 && this.chunked === NONE) {
      rb.batchIsFull = true;
      return null;
    }
    const adder: Adder = {
      remTotalOffset: 0,
      curRemOffset: 0,
      remInput: SGLANG.maxPrefillTokens,
      remChunk: this.chunkSize,
      canRun: [],
      newChunked: NONE,
      logHit: 0,
      logInput: 0,
    };
    // Σ over the running batch, in its order, as Python's sum() adds them.
    let reserve = 0;
    for (const r of rb.reqs)
      reserve += Math.min(this.maxNew[r]! - this.outputs[r]!, SGLANG.clipMaxNewTokens) * this.ratio.current;
    adder.remTotalOffset += reserve;
    if (this.chunked !== NONE) {
      this.fillLen[this.chunked] = this.plan.requests[this.chunked]!.promptTokens + this.outputs[this.chunked]!;
      this.chunked = this.addChunkedReq(adder, this.chunked);
    }
    for (const r of this.waiting) {
      if (adder.canRun.length >= this.allocatableReqs(rb.reqs.length)) rb.batchIsFull = true;
      if (rb.batchIsFull) break;
      // init_next_round_input: fill ids = prompt + outputs so far; match_prefix up to len − 1.
      const req = this.plan.requests[r]!;
      this.fillLen[r] = req.promptTokens + this.outputs[r]!;
      const { node, length } = this.tree.match(req.tokenKeys, Math.max(this.fillLen[r]! - 1, 0));
      this.prefixLen[r] = length;
      this.lastNode[r] = node;
      this.protectedLen[r] = length;
      const first = this.records[r]!.admittedS === null;
      const ideal = first
        ? this.tree.aligned(
            this.ever.longestPrefix(req.tokenKeys, this.tree.aligned(Math.max(this.fillLen[r]! - 1, 0))),
          )
        : 0;
      const res = this.addOneReq(adder, r);
      if (first && adder.canRun[adder.canRun.length - 1] === r) {
        const rec = this.records[r]!;
        rec.admittedS = this.clock.now / 1e9;
        rec.hitTokens = length;
        rec.idealHitTokens = ideal;
      }
      if (res !== CONTINUE) {
        if (res === NO_TOKEN) rb.batchIsFull = true;
        break;
      }
    }
    if (adder.canRun.length === 0) return null;
    const admitted = new Set(adder.canRun);
    this.waiting = this.waiting.filter((x) => !admitted.has(x));
    if (adder.newChunked !== NONE) {
      if (this.chunked !== NONE) throw new Error('two chunked requests');
      this.chunked = adder.newChunked;
    }
    if (this.chunked !== NONE) this.inflight[this.chunked]! += 1;
    const batch = newBatch(adder.canRun);
    batch.chunkedReq = this.chunked;
    this.prepareForExtend(batch);
    this.totals.sglangCachedTokens! += adder.logHit;
    this.totals.sglangNewTokens! += adder.logInput;
    return batch;
  }

  private ceilPaged(n: number): number {
    return Math.ceil(n / this.ps) * this.ps;
  }

  private remTotal(a: Adder): number {
    return this.available + this.tree.evictableTokens - a.remTotalOffset;
  }

  private curRem(a: Adder): number {
    return this.available + this.tree.evictableTokens - a.curRemOffset;
  }

  /** _update_prefill_budget (schedule_policy.py l.708). */
  private updateBudget(a: Adder, prefixLen: number, extendLen: number, maxNewTokens: number): void {
    const ext = this.ceilPaged(extendLen);
    a.remTotalOffset += ext + maxNewTokens + this.ps;
    a.curRemOffset += ext + this.ps;
    a.remInput -= ext;
    a.remChunk -= ext;
    a.logHit += prefixLen;
    a.logInput += ext;
  }

  /** budget_state (l.685). */
  private budgetState(a: Adder): number {
    if (this.remTotal(a) <= 0 || this.curRem(a) <= 0) return NO_TOKEN;
    if (a.remInput <= 0) return OTHER;
    if (a.remChunk <= 0) return OTHER;
    return CONTINUE;
  }

  /** add_chunked_req (l.830): the next chunk of the request being prefilled in chunks; returns it while chunks remain. */
  private addChunkedReq(a: Adder, r: number): number {
    let rem = Math.min(a.remChunk, Math.trunc(this.remTotal(a)));
    if (rem <= 0) rem = a.remChunk;
    const cand = this.fillLen[r]! - this.prefixLen[r]!;
    const truncated = cand > rem;
    const len = Math.min(cand, rem);
    this.extStart[r] = this.prefixLen[r]!;
    this.extEnd[r] = this.prefixLen[r]! + len;
    a.canRun.push(r);
    this.updateBudget(a, 0, len, truncated ? 0 : Math.min(this.maxNew[r]!, SGLANG.clipMaxNewTokens));
    return truncated ? r : NONE;
  }

  /** add_one_req (l.1001) for a request just matched. */
  private addOneReq(a: Adder, r: number): number {
    const maxNew = Math.min(Math.max(this.maxNew[r]! - this.outputs[r]!, 0), SGLANG.clipMaxNewTokens);
    const cand = this.fillLen[r]! - this.prefixLen[r]!;
    const total = cand + maxNew + this.ps;
    const prefixLen = this.prefixLen[r]!;
    if (total >= this.remTotal(a)) return NO_TOKEN;
    const chunkLimit = a.remChunk;
    // _lock_node: locked while deciding, so its own prefix no longer counts as evictable.
    const node = this.lastNode[r]!;
    this.tree.lock(node);
    try {
      if (total >= this.remTotal(a)) return NO_TOKEN;
      const input = this.ceilPaged(this.fillLen[r]! - this.prefixLen[r]!);
      if (input <= chunkLimit) {
        this.extStart[r] = prefixLen;
        this.extEnd[r] = this.fillLen[r]!;
        a.canRun.push(r);
        this.tree.lock(node);
        this.updateBudget(a, prefixLen, input, Math.min(this.maxNew[r]!, SGLANG.clipMaxNewTokens));
      } else {
        let trunc = Math.floor(chunkLimit / this.ps) * this.ps;
        if (trunc <= 0) return OTHER;
        const nowInput = Math.floor((trunc + prefixLen) / this.ps) * this.ps;
        trunc = nowInput - prefixLen;
        if (trunc <= 0) return OTHER;
        this.extStart[r] = prefixLen;
        this.extEnd[r] = prefixLen + trunc;
        a.canRun.push(r);
        a.newChunked = r;
        this.tree.lock(node);
        this.updateBudget(a, prefixLen, trunc, 0);
      }
    } finally {
      this.tree.unlock(node);
    }
    return this.budgetState(a);
  }

  /** prepare_for_extend (schedule_batch.py l.2148) with alloc_for_extend (allocation.py). */
  private prepareForExtend(batch: Batch): void {
    batch.mode = 'extend';
    let extendTokens = 0;
    let newPages = 0;
    for (const r of batch.reqs) {
      extendTokens += this.extEnd[r]! - this.prefixLen[r]!;
      newPages += Math.ceil(this.extEnd[r]! / this.ps) - Math.ceil(this.prefixLen[r]! / this.ps);
    }
    batch.extendTokens = extendTokens;
    for (const r of batch.reqs) {
      if (!this.hasSlot[r]) {
        this.hasSlot[r] = 1;
        this.slotsUsed += 1;
      }
    }
    if (this.slotsUsed > this.maxRunning) throw new Error('sglang-lru: req_to_token_pool ran out of slots');
    // alloc_token_slots / alloc_paged_token_slots_extend ("assume each request needs a new page").
    this.evictFor(this.ps === 1 ? extendTokens : extendTokens + batch.reqs.length * this.ps);
    if (newPages * this.ps > this.available)
      throw new Error(`sglang-lru: prefill out of memory (SGLang raises here): ${extendTokens} tokens`);
    for (const r of batch.reqs) {
      this.allocated[r] = this.extEnd[r]!;
      this.repage(r);
      this.committed[r] = this.extEnd[r]!;
      if (!this.stain[r]) {
        this.cached[r]! += this.prefixLen[r]! - this.alreadyComputed[r]!;
        this.alreadyComputed[r] = this.extEnd[r]!;
      }
      this.retracted[r] = 0;
    }
  }

  /** update_running_batch (scheduler.py l.3140): drop finished requests, retract when the next decode does not fit, then prepare the decode. */
  private updateRunningBatch(batch: Batch): void {
    const initialBs = batch.reqs.length;
    batch.reqs = batch.reqs.filter((r) => !this.finished[r]);
    if (batch.reqs.length === 0) {
      batch.batchIsFull = false;
      return;
    }
    if (!this.checkDecodeMem(batch.reqs)) {
      this.ratio.current = this.retractDecode(batch);
    } else this.ratio.current = Math.max(this.ratio.current - this.ratio.decay, this.ratio.min);
    if (batch.reqs.length < initialBs) batch.batchIsFull = false;
    if (batch.reqs.length === 0) return;
    // prepare_for_decode → alloc_for_decode: one token each.
    batch.mode = 'decode';
    if (this.ps === 1) this.evictFor(batch.reqs.length);
    else this.evictFor(batch.reqs.length * this.ps);
    let newPages = 0;
    for (const r of batch.reqs) if ((this.committed[r]! + 1) % this.ps === 1 % this.ps) newPages += 1;
    if (newPages * this.ps > this.available) throw new Error('sglang-lru: decode out of memory (SGLang raises here)');
    for (const r of batch.reqs) {
      this.allocated[r]! += 1;
      this.repage(r);
      this.committed[r]! += 1;
    }
  }

  /** check_decode_mem (schedule_batch.py l.2594): a page for each request whose last page is full; evicts for them first. */
  private checkDecodeMem(reqs: readonly number[]): boolean {
    let pages = 0;
    for (const r of reqs) if (this.committed[r]! % this.ps === 0) pages += 1;
    const need = pages * this.ps;
    this.evictFor(need);
    return this.available >= need;
  }

  /** retract_decode (l.2599): retract requests, fewest outputs first (ties: longest prompt), until the rest can decode; returns the new ratio. */
  private retractDecode(batch: Batch): number {
    const reqs = batch.reqs;
    const key = (i: number): [number, number] => [this.outputs[reqs[i]!]!, -this.plan.requests[reqs[i]!]!.promptTokens];
    // Python's sorted(…, reverse=True) is stable: equal keys keep their order.
    const order = reqs
      .map((_, i) => i)
      .sort((i, j) => {
        const [a0, a1] = key(i);
        const [b0, b1] = key(j);
        return b0 - a0 || b1 - a1 || i - j;
      });
    let first = true;
    while (first || !this.checkDecodeMem(order.map((i) => reqs[i]!))) {
      if (order.length === 1) break;
      first = false;
      const r = reqs[order.pop()!]!;
      this.retract(r, order.length);
    }
    if (order.length <= 1 && !this.checkDecodeMem(order.map((i) => reqs[i]!))) {
      throw new Error('sglang-lru: one request cannot decode even alone (SGLang aborts it)');
    }
    batch.reqs = order.map((i) => reqs[i]!);
    // estimate_new_token_ratio_after_retract.
    let decoded = 0;
    let maxNew = 0;
    for (const r of batch.reqs) {
      decoded += this.outputs[r]!;
      maxNew += this.maxNew[r]!;
    }
    return Math.min(1.0, (decoded + SGLANG.retractDecodeSteps * batch.reqs.length) / (maxNew + 1));
  }

  /** release_req (schedule_batch.py l.1714) and reset_for_retract: the request gives back all it holds and waits at the back of the queue. */
  private retract(r: number, remaining: number): void {
    this.releaseKv(r, false);
    this.evictFor(remaining * SGLANG.retractDecodeSteps);
    this.prefixLen[r] = 0;
    this.lastNode[r] = null;
    this.protectedLen[r] = 0;
    this.retracted[r] = 1;
    this.stain[r] = 1;
    this.inflight[r] = 0;
    this.alreadyComputed[r] = 0;
    this.committed[r] = 0;
    this.records[r]!.preemptions += 1;
    this.totals.preemptions += 1;
    this.stepRetracted.push(r);
    this.waiting.push(r);
  }

  // ---- the forward pass: the clock, then process_batch_result ----

  private runBatch(batch: Batch): void {
    const t0 = this.clock.now;
    if (batch.mode === 'extend') {
      for (const r of batch.reqs) this.records[r]!.prefillTokens += this.extEnd[r]! - this.extStart[r]!;
      this.observe(batch, 'prefill', t0);
      this.clock.chargeStep(batch.extendTokens, 0, 0, 0);
      this.processPrefillResult(batch);
    } else {
      // The context a decode reads is the KV already there (kv_committed_len − 1 after prepare_for_decode).
      let context = 0;
      for (const r of batch.reqs) context += this.committed[r]! - 1;
      this.observe(batch, 'decode', t0);
      this.clock.chargeStep(0, context, batch.reqs.length, 0);
      this.processDecodeResult(batch);
    }
    if (this.debug.selfCheck) this.selfCheck();
  }

  /** process_batch_result_prefill (batch_result_processor.py l.180). */
  private processPrefillResult(batch: Batch): void {
    for (const r of batch.reqs) {
      if ((this.finished[r] && this.inflight[r]! <= 0) || this.retracted[r]) continue;
      if (this.inflight[r]! <= 0) {
        this.sample(r);
        if (this.finished[r]) this.finish(r);
        else this.cacheUnfinished(r);
      } else this.inflight[r]! -= 1;
    }
  }

  /** process_batch_result_decode (l.651). */
  private processDecodeResult(batch: Batch): void {
    for (const r of batch.reqs) {
      this.sample(r);
      if (this.finished[r]) this.finish(r);
    }
  }

  /** One output token; update_finish_state: done at max_new_tokens. */
  private sample(r: number): void {
    this.outputs[r]! += 1;
    if (this.outputs[r]! >= this.maxNew[r]!) this.finished[r] = 1;
  }

  private finish(r: number): void {
    this.releaseKv(r, true);
    if (this.debug.cachedTokens) this.debug.cachedTokens[r] = this.cached[r]!;
    this.records[r]!.finishedS = this.clock.now / 1e9;
    this.replay.callEnded(r, this.clock.now);
  }

  // ---- test hooks ----

  private observe(batch: Batch, mode: 'prefill' | 'decode', t0: number): void {
    if (this.debug.onRadixStep) {
      this.debug.onRadixStep({
        step: this.clock.steps,
        t: t0 / 1e9,
        mode,
        reqs: batch.reqs.map((r) => [r, mode === 'prefill' ? this.extEnd[r]! - this.extStart[r]! : 1]),
        retracted: this.stepRetracted,
        evicted: this.stepEvicted,
      });
    }
    if (!this.debug.onStep) return;
    this.debug.onStep({
      step: this.clock.steps + 1,
      nowS: t0 / 1e9,
      mode,
      capacityTokens: this.maxTotal,
      treeTokens: this.tree.size,
      lockedTokens: this.tree.lockedTokens,
      privateTokens: this.ownPagesTotal * this.ps,
      batch: batch.reqs.length,
      waiting: this.waiting.length,
    });
  }

  private selfCheck(): void {
    this.tree.check();
    let own = 0;
    let slots = 0;
    for (let r = 0; r < this.ownPages.length; r++) {
      const expected =
        this.allocated[r] === NONE ? 0 : Math.ceil((this.allocated[r]! - this.protectedLen[r]!) / this.ps);
      if (expected !== this.ownPages[r])
        throw new Error(`request ${r}: ${this.ownPages[r]} own pages kept, ${expected} counted`);
      own += expected;
      slots += this.hasSlot[r]!;
    }
    if (own !== this.ownPagesTotal) throw new Error(`own pages drifted: ${this.ownPagesTotal}, counted ${own}`);
    if (slots !== this.slotsUsed) throw new Error(`slots drifted: ${this.slotsUsed}, counted ${slots}`);
    if (this.available < 0) throw new Error(`after step ${this.clock.steps}: ${-this.available} tokens over the pool`);
  }
}
