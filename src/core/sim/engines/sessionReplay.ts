import { ArrivalHeap } from './arrivalHeap';
import type { ArrivalSource, CallRecord } from './engineTypes';
import type { EngineParams } from '../params';
import { newCallRecord, pinTtlBySession, sessionStartOrder, toNs, tooLongForCache } from './policySupport';
import type { SimPlan } from '../simRequests';

/**
 * The replay side every engine shares, so the engines differ only in how they keep the
 * cache and schedule: when each call arrives (closed loop: after its session's previous
 * call ended and the tool wait passed; open loop: at its recorded time), which sessions
 * may start under the admission cap and how an adaptive cap moves, and what becomes of
 * calls too long for the cache. Engines say when calls end.
 *
 * Owns the call records (engines fill in what happens in the cache) and the sessions'
 * end times, for one engine run. Times are whole nanoseconds (policySupport.ts).
 */
export class SessionReplay implements ArrivalSource {
  readonly records: CallRecord[];
  readonly sessionEndS: Array<number | null>;
  readonly totalCalls: number;
  rejectedRequests = 0;
  /** Calls that ended (finished or rejected) so far: the progress of a long run. */
  ended = 0;
  /** Sessions allowed to be active at once: the admission cap, else unlimited. */
  private cap: number;
  private readonly future = new ArrivalHeap();
  /** The arrivals in `future` that will be rejected: unlike the others, they act when they arrive. */
  private readonly rejections = new ArrivalHeap();
  private readonly pending: number[];
  private pendingHead = 0;
  private active = 0;
  /**
   * Since when the admission cap has had room for another session: a session arrives at
   * its start time, or when the cap made room for it (a session ended, or the adaptive
   * cap grew) if that came later.
   */
  private roomSinceNs = 0;
  private windowEnd: number;
  private windowHit = 0;
  private windowIdeal = 0;
  readonly adaptive: boolean;

  /** `tooLong[r]` is 1 when request r can never fit in the engine's cache (it is rejected on arrival). */
  private readonly tooLong: Uint8Array;
  /** ttl-pin's pin time per session, made when first asked. */
  private pinTtl: number[] | null = null;

  constructor(
    private readonly plan: SimPlan,
    private readonly p: EngineParams,
  ) {
    this.tooLong = Uint8Array.from(plan.requests, (r) =>
      tooLongForCache(p, plan.blockSizeTokens, r.promptTokens, r.outputTokens) ? 1 : 0,
    );
    this.records = plan.requests.map(newCallRecord);
    this.totalCalls = plan.requests.length;
    this.sessionEndS = plan.sessions.map(() => null);
    this.adaptive = p.policy === 'admission-cap' && p.admissionCap.cap === 'adaptive';
    this.cap =
      p.policy === 'admission-cap'
        ? p.admissionCap.cap === 'adaptive'
          ? p.admissionCap.initialCap
          : p.admissionCap.cap
        : Number.POSITIVE_INFINITY;
    this.windowEnd = toNs(p.admissionCap.windowS);
    this.pending = sessionStartOrder(plan);
    // Open-loop requests arrive on their own schedule.
    for (const r of plan.requests) if (r.session < 0 && r.arrivalS !== null) this.push(toNs(r.arrivalS), r.id);
  }

  private push(at: number, r: number): void {
    this.future.push(at, r);
    if (this.tooLong[r]) this.rejections.push(at, r);
  }

  private schedule(r: number, at: number): void {
    this.records[r]!.arrivalS = at / 1e9;
    this.push(at, r);
  }

  /**
   * Everything due by `now`: sessions whose start has come begin while the cap allows,
   * then arrivals in (time, id) order; a call too long for the cache is rejected when it
   * arrives (its session goes on), the others are handed to `queue`.
   */
  arrive(now: number, queue: (r: number) => void): void {
    while (this.active < this.cap && this.pendingHead < this.pending.length) {
      const session = this.plan.sessions[this.pending[this.pendingHead]!]!;
      const startNs = toNs(session.startS);
      if (startNs > now) break;
      this.pendingHead += 1;
      this.active += 1;
      // Due sessions arrive in time order, not when the engine next looks: a call that
      // arrived during a step joins the queue ahead of later ones (as in vLLM, where
      // requests are queued as they come).
      this.schedule(session.requests[0]!, Math.max(startNs, this.roomSinceNs));
    }
    while (this.future.size > 0 && this.future.peekTime()! <= now) {
      const at = this.future.peekTime()!;
      const r = this.future.pop();
      if (this.tooLong[r]) {
        // Refused as it arrives (vLLM answers at once): the session's next call is due a tool wait later.
        this.rejections.pop(); // the same (time, id) order: it is that heap's first too
        const rec = this.records[r]!;
        rec.rejected = true;
        rec.finishedS = at / 1e9;
        this.rejectedRequests += 1;
        this.callEnded(r, at);
      } else queue(r);
    }
  }

  /** A call ended (finished or rejected) at `now`: its session's next call arrives after the tool wait, or the session ends. */
  callEnded(r: number, now: number): void {
    this.ended += 1;
    const req = this.plan.requests[r]!;
    if (req.session < 0) return;
    const session = this.plan.sessions[req.session]!;
    if (req.callIndex + 1 < session.requests.length)
      this.schedule(session.requests[req.callIndex + 1]!, now + toNs(req.toolWaitS));
    else {
      this.sessionEndS[req.session] = now / 1e9;
      this.active -= 1;
      if (this.active === this.cap - 1) this.roomSinceNs = now; // the cap was full: room from now
    }
  }

  /**
   * When the engine, idle, should wake up: the next arrival, session start the cap
   * allows, or the engine's own next event (`engineNext`, e.g. a pin expiry); an adaptive
   * cap's window end only counts when something else is still to come. Null: nothing.
   */
  nextEventNs(engineNext: number | null): number | null {
    let t = this.future.peekTime() ?? null;
    if (engineNext !== null && (t === null || engineNext < t)) t = engineNext;
    const start = this.nextStartNs();
    if (start !== null && (t === null || start < t)) t = start;
    if (this.adaptive && t !== null && this.windowEnd < t) t = this.windowEnd;
    return t;
  }

  /**
   * The earliest replay event that changes what a run of identical steps would do (for the
   * fast engine's stretches): an arrival (or, when `arrivalsCount` is false, only a
   * rejection), a session start the cap allows, an adaptive window's end. Infinity: none.
   */
  nextChangeNs(arrivalsCount: boolean): number {
    let t = (arrivalsCount ? this.future.peekTime() : this.rejections.peekTime()) ?? Infinity;
    const start = this.nextStartNs();
    if (start !== null) t = Math.min(t, start);
    if (this.adaptive) t = Math.min(t, this.windowEnd);
    return t;
  }

  private nextStartNs(): number | null {
    if (this.active >= this.cap || this.pendingHead >= this.pending.length) return null;
    return toNs(this.plan.sessions[this.pending[this.pendingHead]!]!.startS);
  }

  queueBySessionStart(waiting: number[], r: number): void {
    queueBySessionStart(this.plan, this.records, waiting, r);
  }

  pinTtlS(session: number): number {
    this.pinTtl ??= pinTtlBySession(this.plan, this.p);
    return this.pinTtl[session]!;
  }

  recordBlockAdmission(
    r: number,
    firstAdmission: boolean,
    nowNs: number,
    blockSize: number,
    hitBlocks: number,
    cpuBlocks: number,
    idealBlocks: number,
  ): void {
    if (recordBlockAdmission(this.records[r]!, firstAdmission, nowNs, blockSize, hitBlocks, cpuBlocks, idealBlocks))
      this.countAdmission(this.records[r]!.hitTokens, this.records[r]!.idealHitTokens);
  }

  /** A call's first admission, for the adaptive cap's hit rate. */
  countAdmission(hitTokens: number, idealTokens: number): void {
    this.windowHit += hitTokens;
    this.windowIdeal += idealTokens;
  }

  /**
   * Closes the adaptive cap's windows that ended by `now`: it backs off when the window's
   * hits fell below the floor of its ideal, else grows by one while the cache is under
   * 90% full (CONCUR-like, docs/design/simulator.md §3.2).
   */
  adaptCap(now: number, cacheUnderNinetyPercent: boolean): void {
    const a = this.p.admissionCap;
    while (now >= this.windowEnd) {
      if (this.windowIdeal > 0 && this.windowHit < a.hitRateFloor * this.windowIdeal)
        this.cap = Math.max(1, Math.floor(this.cap * a.backoff));
      else if (cacheUnderNinetyPercent) {
        if (this.active === this.cap) this.roomSinceNs = now;
        this.cap += 1;
      }
      this.windowHit = 0;
      this.windowIdeal = 0;
      this.windowEnd += toNs(a.windowS);
    }
  }
}

/** Continuum's program-level FCFS (ttl-pin): a returning agent is not queued behind sessions that started later. */
export function queueBySessionStart(plan: SimPlan, records: readonly CallRecord[], waiting: number[], r: number): void {
  const start = (x: number): number =>
    plan.requests[x]!.session >= 0 ? plan.sessions[plan.requests[x]!.session]!.startS : 0;
  const s = start(r);
  let i = waiting.length;
  while (i > 0 && !records[waiting[i - 1]!]!.preemptions && start(waiting[i - 1]!) > s) i--;
  waiting.splice(i, 0, r);
}

/**
 * A call admitted by a block-pool engine: its reloaded tokens, and on its first admission
 * what it hit and would have hit (a re-admission after a preemption costs prefill, counted
 * as it runs, but does not count as the call's hit). True on a first admission.
 */
export function recordBlockAdmission(
  rec: CallRecord,
  firstAdmission: boolean,
  nowNs: number,
  blockSize: number,
  hitBlocks: number,
  cpuBlocks: number,
  idealBlocks: number,
): boolean {
  rec.offloadHitTokens += cpuBlocks * blockSize;
  if (!firstAdmission) return false;
  rec.admittedS = nowNs / 1e9;
  rec.hitTokens = hitBlocks * blockSize;
  rec.idealHitTokens = idealBlocks * blockSize;
  return true;
}
