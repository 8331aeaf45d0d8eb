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
import { isDecoding, newEngineTotals, StepClock, stepCostsNs } from './policySupport';
import type { SimPlan, SimRequest } from '../simRequests';

/** What a KV manager's lookup found for a request at its first admission attempt. */
export interface KvLookup<H> {
  /** Blocks hit in the GPU cache (hit tokens = hitBlocks × block size). */
  hitBlocks: number;
  /** Blocks found in a CPU tier after the GPU hit (loaded, not recomputed). */
  cpuBlocks: number;
  /** The never-evicting ideal, in blocks. */
  idealBlocks: number;
  /** The manager's own record of the hit, handed back to allocate. */
  hit: H;
}

/**
 * vLLM v1's FCFS scheduler (docs/design/simulator.md §1.7): chunked prefill under a token
 * budget, running requests first with recompute preemption of the last running request
 * when a block is missing, then waiting requests in order while nothing was preempted,
 * stopping at the first that does not fit. Every cache decision is the KV manager's: the
 * reference engine's one full-attention group (referenceEngine.ts, with the pins and CPU
 * tier of its policies) or the hybrid engine's KV-cache groups (hybridEngine.ts).
 */
export abstract class VllmSchedulerRun<H> implements EngineRun {
  protected readonly bs: number;
  protected readonly nb: number;
  protected readonly clock: StepClock;
  // Per request, for the plan's requests so far (a fleet GPU's plan grows as calls are routed to it: see grow).
  protected readonly numComputed: number[];
  protected readonly numTokens: number[];
  protected readonly generated: number[];
  protected readonly admitted: boolean[];
  protected readonly records: CallRecord[];
  protected waiting: number[] = [];
  protected running: number[] = [];
  protected readonly totals: EngineTotals = newEngineTotals();
  /** CPU-tier blocks moved this step (charged in the step's time). */
  protected stepTransferBlocks = 0;
  /** The step being logged (debug.onStepLog), else null. */
  protected log: StepLogEntry | null = null;

  constructor(
    protected readonly plan: SimPlan,
    protected readonly p: EngineParams,
    protected readonly debug: EngineDebug,
    protected readonly replay: ArrivalSource,
  ) {
    this.bs = plan.blockSizeTokens;
    this.clock = new StepClock(stepCostsNs(p, this.bs));
    this.nb = Math.floor(p.capacityTokens / this.bs);
    const n = plan.requests.length;
    this.numComputed = new Array<number>(n).fill(0);
    this.numTokens = plan.requests.map((r) => r.promptTokens);
    this.generated = new Array<number>(n).fill(0);
    this.admitted = new Array<boolean>(n).fill(false);
    this.records = this.replay.records;
  }

  // ---- what a KV manager provides ----

  /** Makes room for the manager's own state of request i (the plan grew). */
  protected abstract growKv(i: number): void;
  /** The lookup at a request's first admission attempt; null when prefix caching is off (no lookup, no query counted). */
  protected abstract lookup(r: number): KvLookup<H> | null;
  /** allocate_slots: false when the pool has too few free blocks. */
  protected abstract allocate(r: number, numNew: number, found: KvLookup<H> | null): boolean;
  /** Frees a preempted request's blocks. */
  protected abstract freePreempted(r: number): void;
  /** Frees (or keeps) a finished request's blocks. */
  protected abstract freeFinished(r: number): void;
  /** Blocks held by anyone (the adaptive admission cap's pressure). */
  protected abstract usedBlocks(): number;
  abstract cachedPrefixTokens(request: SimRequest): number;
  /** The pool's invariants, checked after every step with debug.selfCheck. */
  protected abstract checkPool(): void;

  /** Frees memory held for later (a pin) before anyone is preempted; false when there is none. */
  protected relieve(): boolean {
    return false;
  }
  /** Runs before each turn's scheduling (pins expire). */
  protected beforeStep(): void {}
  /** The next time the manager itself has something to do (a pin's expiry), else null. */
  protected nextOwnEventNs(): number | null {
    return null;
  }
  /** A request was admitted for the first time (or again after a preemption). */
  protected admittedNow(_r: number, _first: boolean): void {}
  /** A step in which nothing could be scheduled. */
  protected nothingScheduled(): void {}

  // ---- EngineRun ----

  /** Makes room for request r of a plan that grew since the run started. */
  private grow(r: number): void {
    for (let i = this.numTokens.length; i <= r; i++) {
      this.numComputed.push(0);
      this.numTokens.push(this.plan.requests[i]!.promptTokens);
      this.generated.push(0);
      this.admitted.push(false);
      this.growKv(i);
    }
  }

  private readonly queue = (r: number): void => {
    if (r >= this.numTokens.length) this.grow(r);
    this.enqueue(r);
  };

  /** An arrival joins the waiting queue. */
  protected enqueue(r: number): void {
    this.waiting.push(r);
  }

  turn(): boolean {
    this.replay.arrive(this.clock.now, this.queue);
    this.beforeStep();
    if (this.replay.adaptive) this.replay.adaptCap(this.clock.now, this.usedBlocks() < 0.9 * this.nb);
    if (this.running.length === 0 && this.waiting.length === 0) {
      const next = this.replay.nextEventNs(this.nextOwnEventNs());
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
    return this.clock.outcome(this.totals, this.replay);
  }

  get nowNs(): number {
    return this.clock.now;
  }

  nextEventNs(): number | null {
    if (this.running.length > 0 || this.waiting.length > 0) return this.clock.now;
    const next = this.replay.nextEventNs(this.nextOwnEventNs());
    return next === null ? null : Math.max(this.clock.now, next);
  }

  loadTokens(): number {
    let n = 0;
    for (const r of this.running) n += this.numTokens[r]!;
    for (const r of this.waiting) n += this.numTokens[r]!;
    return n;
  }

  fewestSamplesLeft(): number {
    let n = Infinity;
    for (const r of this.running) n = Math.min(n, this.plan.requests[r]!.outputTokens - this.generated[r]!);
    for (const r of this.waiting) n = Math.min(n, this.plan.requests[r]!.outputTokens - this.generated[r]!);
    return n;
  }

  // ---- one engine step ----

  private preempt(r: number): void {
    this.freePreempted(r);
    this.numComputed[r] = 0;
    this.records[r]!.preemptions += 1;
    this.totals.preemptions += 1;
    this.waiting.unshift(r);
  }

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
      while (!this.allocate(r, numNew, null)) {
        if (this.relieve()) continue;
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
        const found = this.numComputed[r] === 0 ? this.lookup(r) : null;
        if (found) {
          this.log?.lookups.push([r, found.hitBlocks * this.bs]);
          if (this.records[r]!.preemptions === 0) {
            this.totals.vllmQueries += this.numTokens[r]!;
            this.totals.vllmHits += found.hitBlocks * this.bs;
          }
        }
        const hitBlocks = found ? found.hitBlocks : 0;
        const cpuBlocks = found ? found.cpuBlocks : 0;
        const computedAfter = this.numComputed[r]! + (hitBlocks + cpuBlocks) * this.bs;
        const numNew = Math.min(this.numTokens[r]! - computedAfter, budget);
        let ok = this.allocate(r, numNew, found);
        while (!ok && this.relieve()) ok = this.allocate(r, numNew, found);
        if (!ok) break;
        this.waiting.shift();
        this.running.push(r);
        this.log?.admitted.push(r);
        this.numComputed[r] = computedAfter;
        this.stepTransferBlocks += cpuBlocks;
        this.replay.recordBlockAdmission(
          r,
          !this.admitted[r],
          this.clock.now,
          this.bs,
          hitBlocks,
          cpuBlocks,
          found ? found.idealBlocks : 0,
        );
        this.admittedNow(r, !this.admitted[r]);
        this.admitted[r] = true;
        scheduled.push({ r, numNew, decode: this.isDecode(r) });
        budget -= numNew;
      }
    }
    if (scheduled.length === 0) this.nothingScheduled();
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
    this.records[r]!.finishedS = this.clock.now / 1e9;
    this.freeFinished(r);
    this.replay.callEnded(r, this.clock.now);
  }
}
