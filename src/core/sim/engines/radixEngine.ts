import { PROGRESS_STEPS } from './engineTypes';
import type { ArrivalSource, CallRecord, EngineOutcome, EngineRun, EngineTotals } from './engineTypes';
import type { EngineParams } from '../params';
import { isDecoding, StepClock, stepCostsNs } from './policySupport';
import { PrefixRecord, RadixCache } from '../caches/radixCache';
import type { RadixNode } from '../caches/radixCache';
import { SessionReplay } from './sessionReplay';
import type { SimPlan, SimRequest } from '../simRequests';

/*
 * The sglang-lru engine: SGLang's RadixAttention cache (docs/design/simulator.md §2) under
 * the same FCFS scheduler, step cost and clock as the vLLM engines. How it differs
 * from vLLM's block pool (referenceEngine.ts):
 *
 * - Tokens, not 16-token blocks: a hit is the exact shared prefix, capped at len − 1
 *   tokens (vLLM: whole blocks, capped at floor((len − 1) / 16) blocks).
 * - What is hit-able: the tree. A request's tokens enter it after each prefill chunk
 *   (cache_unfinished_req), at the end of the step that computed them, and all of
 *   prompt + output − 1 when it finishes (cache_finished_req). Decode tokens stay
 *   private until the finish. vLLM keys every full block, decode blocks too, as soon
 *   as it is scheduled, so requests admitted in the same step share.
 * - Duplicates: an insert that finds tokens already in the tree frees the request's
 *   own copies (vLLM keeps both blocks).
 * - Eviction: the unlocked leaf node with the oldest access time goes whole (possibly
 *   more than needed); a match refreshes every node on its path. vLLM pops single
 *   blocks from the head of one free queue, ordered by release.
 * - Preemption: SGLang retracts decoding requests in its own order, which was not
 *   read (docs/design/simulator.md §2, unverified); here the last running request is preempted as in
 *   vLLM. Its private tokens are freed, never inserted (SGLang's release with
 *   is_insert=False), and its path unlocked: it re-hits what the tree still holds.
 * - Admission: SGLang's PrefillAdder budgets with its new_token_ratio estimate
 *   (unverified); here a waiting request is admitted when the free tokens plus the
 *   evictable ones cover its first chunk, FCFS with head-of-line blocking, as vLLM.
 * - Metrics: vllmQueries / vllmHits count every admission attempt's lookup (tokens)
 *   of a not-preempted request, as vLLM's counters do; SGLang's own cache-hit
 *   counters count per scheduled prefill batch, so they would read differently.
 * - No CPU tier, no pins, no admission cap: those policies are separate PolicyName
 *   values, and validateParams refuses an offload tier with sglang-lru.
 */

/** What the debug hook sees after a step's scheduling, when memory use peaks. */
export interface RadixStepState {
  step: number;
  /** Clock at the start of the step, seconds. */
  nowS: number;
  capacityTokens: number;
  treeTokens: number;
  lockedTokens: number;
  /** Tokens running requests hold outside the tree (decode tokens since the last insert, and this step's chunk). */
  privateTokens: number;
  running: number;
  waiting: number;
}

/** Test hooks: a callback per step, and self-checks that throw on any inconsistency. */
export interface RadixDebug {
  onStep?: (s: RadixStepState) => void;
  /** Recount the tree and every running request's private tokens after each step, and check used ≤ capacity. */
  selfCheck?: boolean;
  /** Progress of a long run (see EngineDebug). */
  progress?: (endedCalls: number, totalCalls: number) => void;
}

/**
 * Runs a plan under SGLang's radix cache with LRU leaf eviction (policy sglang-lru).
 * Deterministic; owns every piece of state of one run.
 */
export function runRadix(plan: SimPlan, p: EngineParams, debug: RadixDebug = {}): EngineOutcome {
  // An empty key list would read as "nothing cached, ever": refuse rather than answer wrong.
  if (!plan.tokenKeys) throw new Error('the sglang-lru engine needs a plan with token keys (planWorkload(…, withTokenKeys = true))');
  const run = startRadix(plan, p, new SessionReplay(plan, p), debug);
  while (run.turn());
  return run.outcome();
}

/** A radix-engine run fed by `source` and driven turn by turn (one GPU of a fleet). */
export function startRadix(plan: SimPlan, p: EngineParams, source: ArrivalSource, debug: RadixDebug = {}): EngineRun {
  if (!plan.tokenKeys) throw new Error('the sglang-lru engine needs a plan with token keys (planWorkload(…, withTokenKeys = true))');
  return new RadixRun(plan, p, debug, source);
}

interface Scheduled {
  r: number;
  numNew: number;
  decode: boolean;
}

class RadixRun implements EngineRun {
  /** Whole tokens: SGLang's pool is counted in token slots. */
  private readonly capacity: number;
  private readonly tree = new RadixCache();
  /** Every prefix that was ever in the tree (or computed, for preempted requests): the infinite cache. */
  private readonly ever = new PrefixRecord();
  /** Σ over running requests of tokens they hold outside the tree. */
  private privateTokens = 0;
  private readonly numComputed: number[];
  private readonly numTokens: number[];
  private readonly generated: number[];
  /** Tokens the current admission prefills (prompt + tokens generated before a preemption); beyond it the request decodes. */
  private readonly fillLen: number[];
  /** cache_protected_len: leading tokens of the request that are in the tree, on its locked path. */
  private readonly protectedLen: number[];
  /** last_node: the end of the request's locked path, null while it holds none. */
  private readonly lastNode: Array<RadixNode | null>;
  private readonly admitted: boolean[];
  private readonly records: CallRecord[];
  private readonly waiting: number[] = [];
  private readonly running: number[] = [];
  private readonly totals: EngineTotals = { steps: 0, preemptions: 0, rejectedRequests: 0, vllmQueries: 0, vllmHits: 0, prefillMs: 0, decodeMs: 0, transferMs: 0, makespanS: 0 };
  private readonly clock: StepClock;

  constructor(
    private readonly plan: SimPlan,
    private readonly p: EngineParams,
    private readonly debug: RadixDebug,
    private readonly replay: ArrivalSource,
  ) {
    this.capacity = Math.floor(p.capacityTokens);
    this.clock = new StepClock(stepCostsNs(p, plan.blockSizeTokens));
    // Per request, for the plan's requests so far (a fleet GPU's plan grows as calls are routed to it: see grow).
    const n = plan.requests.length;
    this.numComputed = new Array<number>(n).fill(0);
    this.numTokens = plan.requests.map((r) => r.promptTokens);
    this.generated = new Array<number>(n).fill(0);
    this.fillLen = new Array<number>(n).fill(0);
    this.protectedLen = new Array<number>(n).fill(0);
    this.lastNode = new Array<RadixNode | null>(n).fill(null);
    this.admitted = new Array<boolean>(n).fill(false);
    this.records = this.replay.records;
  }

  /** Makes room for request r of a plan that grew since the run started (a fleet GPU's: one entry per call routed to it). */
  private grow(r: number): void {
    for (let i = this.numTokens.length; i <= r; i++) {
      this.numComputed.push(0);
      this.numTokens.push(this.plan.requests[i]!.promptTokens);
      this.generated.push(0);
      this.fillLen.push(0);
      this.protectedLen.push(0);
      this.lastNode.push(null);
      this.admitted.push(false);
    }
  }

  turn(): boolean {
    this.replay.arrive(this.clock.now, this.queue);
    if (this.running.length === 0 && this.waiting.length === 0) {
      const next = this.replay.nextEventNs(null);
      if (next === null) return false;
      this.clock.now = Math.max(this.clock.now, next);
      return true;
    }
    this.step();
    if (this.debug.progress && this.clock.steps % PROGRESS_STEPS === 0) this.debug.progress(this.replay.ended, this.replay.totalCalls);
    return true;
  }

  outcome(): EngineOutcome {
    this.clock.fillTotals(this.totals, this.records, this.replay.rejectedRequests);
    return { records: this.records, totals: this.totals, sessionEndS: this.replay.sessionEndS };
  }

  get nowNs(): number {
    return this.clock.now;
  }

  nextEventNs(): number | null {
    if (this.running.length > 0 || this.waiting.length > 0) return this.clock.now;
    const next = this.replay.nextEventNs(null);
    return next === null ? null : Math.max(this.clock.now, next);
  }

  loadTokens(): number {
    let n = 0;
    for (const r of this.running) n += this.numTokens[r]!;
    for (const r of this.waiting) n += this.numTokens[r]!;
    return n;
  }

  cachedPrefixTokens(request: SimRequest): number {
    return this.tree.matchLength(request.tokenKeys, request.promptTokens - 1);
  }

  fewestSamplesLeft(): number {
    let n = Infinity;
    for (const r of this.running) n = Math.min(n, this.plan.requests[r]!.outputTokens - this.generated[r]!);
    for (const r of this.waiting) n = Math.min(n, this.plan.requests[r]!.outputTokens - this.generated[r]!);
    return n;
  }

  private readonly queue = (r: number): void => {
    if (r >= this.numTokens.length) this.grow(r);
    this.waiting.push(r);
  };

  // ---- memory ----

  private get freeTokens(): number {
    return this.capacity - this.tree.size - this.privateTokens;
  }

  /**
   * alloc_token_slots: makes room for `n` new tokens, evicting only the shortfall
   * (evict_from_tree_cache, sglang common.py); whole leaves may free more. False
   * when even an empty evictable pool leaves too little.
   */
  private reserve(n: number): boolean {
    const free = this.freeTokens;
    if (free >= n) return true;
    this.tree.evict(n - free);
    return this.freeTokens >= n;
  }

  /** Tokens a running request holds outside the tree (its scheduled chunk not counted: that is added by the caller). */
  private privateOf(r: number): number {
    return this.numComputed[r]! - this.protectedLen[r]!;
  }

  private preempt(r: number): void {
    // The ideal cache would still have what it computed: the loss shows as recomputed tokens, as in the vLLM engines.
    if (this.numComputed[r]! > 0) this.ever.insert(this.plan.requests[r]!.tokenKeys, this.numComputed[r]!);
    this.privateTokens -= this.privateOf(r);
    this.tree.unlock(this.lastNode[r]!);
    this.lastNode[r] = null;
    this.protectedLen[r] = 0;
    this.numComputed[r] = 0;
    this.records[r]!.preemptions += 1;
    this.totals.preemptions += 1;
    this.waiting.unshift(r);
  }

  /** cache_unfinished_req: the computed prefix goes into the tree; the request's lock moves to its new end. */
  private cacheUnfinished(r: number): void {
    const keys = this.plan.requests[r]!.tokenKeys;
    const len = this.numComputed[r]!;
    const { node } = this.tree.insert(keys, len);
    this.ever.insert(keys, len);
    // Added tokens move from private to the tree; ones already there were duplicates and are freed.
    this.privateTokens -= this.privateOf(r);
    this.tree.lock(node);
    this.tree.unlock(this.lastNode[r]!);
    this.lastNode[r] = node;
    this.protectedLen[r] = len;
  }

  /** cache_finished_req: prompt + output − 1 computed tokens go into the tree, unlocked. */
  private cacheFinished(r: number): void {
    const keys = this.plan.requests[r]!.tokenKeys;
    const len = this.numComputed[r]!;
    this.tree.insert(keys, len);
    this.ever.insert(keys, len);
    this.privateTokens -= this.privateOf(r);
    this.tree.unlock(this.lastNode[r]!);
    this.lastNode[r] = null;
    this.protectedLen[r] = 0;
  }

  // ---- one engine step ----

  private step(): void {
    let budget = this.p.maxNumBatchedTokens;
    const scheduled: Scheduled[] = [];
    let preempted = false;
    // Running requests first, in order; when memory runs out, evict, then preempt the last one.
    let i = 0;
    while (i < this.running.length && budget > 0) {
      const r = this.running[i]!;
      const numNew = Math.min(this.numTokens[r]! - this.numComputed[r]!, budget);
      let selfPreempted = false;
      while (!this.reserve(numNew)) {
        const victim = this.running.pop()!;
        this.preempt(victim);
        preempted = true;
        if (victim === r) {
          selfPreempted = true;
          break;
        }
      }
      if (selfPreempted) break;
      this.privateTokens += numNew;
      scheduled.push({ r, numNew, decode: this.isDecode(r) });
      budget -= numNew;
      i++;
    }
    // Waiting requests only when nothing was preempted; stop at the first that does not fit.
    if (!preempted) {
      while (this.waiting.length > 0 && budget > 0 && this.running.length < this.p.maxNumSeqs) {
        const r = this.waiting[0]!;
        const req = this.plan.requests[r]!;
        // A waiting request holds nothing (a preempted one restarted from 0): match_prefix up to len − 1 tokens.
        const limit = this.numTokens[r]! - 1;
        const { node, length: hit } = this.tree.match(req.tokenKeys, limit);
        if (this.records[r]!.preemptions === 0) {
          this.totals.vllmQueries += this.numTokens[r]!;
          this.totals.vllmHits += hit;
        }
        const numNew = Math.min(this.numTokens[r]! - hit, budget);
        // Its own hit cannot be evicted to make room for it: it is locked first.
        if (this.freeTokens + this.tree.evictableTokens - this.tree.unlockedOnPath(node) < numNew) break;
        const ideal = this.ever.longestPrefix(req.tokenKeys, limit);
        this.tree.lock(node);
        if (!this.reserve(numNew)) throw new Error(`request ${r}: admitted without room`);
        this.waiting.shift();
        this.running.push(r);
        this.lastNode[r] = node;
        this.protectedLen[r] = hit;
        this.numComputed[r] = hit;
        this.fillLen[r] = this.numTokens[r]!;
        this.privateTokens += numNew;
        this.recordAdmission(r, hit, ideal);
        this.admitted[r] = true;
        scheduled.push({ r, numNew, decode: this.isDecode(r) });
        budget -= numNew;
      }
    }
    this.observe();
    this.advance(scheduled);
    if (this.debug.selfCheck) this.selfCheck();
  }

  private isDecode(r: number): boolean {
    return isDecoding(this.numTokens[r]!, this.numComputed[r]!, this.plan.requests[r]!.promptTokens);
  }

  private recordAdmission(r: number, hit: number, ideal: number): void {
    const rec = this.records[r]!;
    if (!this.admitted[r]) {
      rec.admittedS = this.clock.now / 1e9;
      rec.hitTokens = hit;
      rec.idealHitTokens = ideal;
    }
  }

  /** Runs the scheduled work with the vLLM engines' step cost: the clock moves, tokens are sampled, chunks are cached. */
  private advance(scheduled: Scheduled[]): void {
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
    // No CPU tier: nothing is transferred.
    this.clock.chargeStep(prefillTokens, decodeContext, decodes, 0);
    for (const { r, numNew } of scheduled) {
      const prefilling = this.numComputed[r]! < this.fillLen[r]!;
      this.numComputed[r]! += numNew;
      if (this.numComputed[r]! >= this.numTokens[r]!) {
        // Everything is computed: the model samples a token.
        this.generated[r]! += 1;
        if (this.generated[r]! >= this.plan.requests[r]!.outputTokens) {
          this.finish(r);
          continue;
        }
        this.numTokens[r]! += 1;
      }
      if (prefilling) this.cacheUnfinished(r);
    }
  }

  private finish(r: number): void {
    this.running.splice(this.running.indexOf(r), 1);
    this.records[r]!.finishedS = this.clock.now / 1e9;
    this.cacheFinished(r);
    this.replay.callEnded(r, this.clock.now);
  }

  // ---- test hooks ----

  private observe(): void {
    if (!this.debug.onStep && !this.debug.selfCheck) return;
    if (this.debug.selfCheck && this.freeTokens < 0) throw new Error(`step ${this.clock.steps + 1}: ${this.capacity - this.freeTokens} tokens used of ${this.capacity}`);
    this.debug.onStep?.({
      step: this.clock.steps + 1,
      nowS: this.clock.now / 1e9,
      capacityTokens: this.capacity,
      treeTokens: this.tree.size,
      lockedTokens: this.tree.lockedTokens,
      privateTokens: this.privateTokens,
      running: this.running.length,
      waiting: this.waiting.length,
    });
  }

  private selfCheck(): void {
    this.tree.check();
    let held = 0;
    for (const r of this.running) {
      if (this.lastNode[r] === null) throw new Error(`running request ${r} holds no path`);
      held += this.privateOf(r);
    }
    if (held !== this.privateTokens) throw new Error(`private tokens drifted: ${this.privateTokens}, counted ${held}`);
    if (this.freeTokens < 0) throw new Error(`after step ${this.clock.steps}: over capacity`);
  }
}
