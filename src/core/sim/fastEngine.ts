import type { CallRecord, EngineOutcome, EngineTotals } from './engineTypes';
import { ExtentCache } from './extentCache';
import type { Extent, HitPiece } from './extentCache';
import type { EngineParams } from './params';
import { peakBlocks, pinTtlBySession, sessionStartOrder, stepCostsNs, toNs } from './policySupport';
import type { StepCostsNs } from './policySupport';
import type { SimPlan } from './simRequests';

/**
 * The fast engine: the same vLLM v1 scheduler as the reference engine, with the block
 * pool kept as extents (see ExtentCache) and stretches of pure decode steps run
 * without visiting every request every step. It must give the reference engine's
 * outcome exactly; property tests on random workloads check that it does.
 *
 * Owns every piece of state of one run; nothing survives the call.
 */
export function runFast(plan: SimPlan, p: EngineParams): EngineOutcome {
  return new FastRun(plan, p).run();
}

interface Pin {
  session: number;
  owner: number;
  expiresNs: number;
}

/** A min-heap of (time, id) pairs, for arrivals. */
class ArrivalHeap {
  private readonly at: number[] = [];
  private readonly ids: number[] = [];

  get size(): number {
    return this.at.length;
  }

  peekTime(): number | undefined {
    return this.at[0];
  }

  peekId(): number | undefined {
    return this.ids[0];
  }

  private less(i: number, j: number): boolean {
    return this.at[i]! < this.at[j]! || (this.at[i] === this.at[j] && this.ids[i]! < this.ids[j]!);
  }

  private swap(i: number, j: number): void {
    [this.at[i], this.at[j]] = [this.at[j]!, this.at[i]!];
    [this.ids[i], this.ids[j]] = [this.ids[j]!, this.ids[i]!];
  }

  push(time: number, id: number): void {
    this.at.push(time);
    this.ids.push(id);
    let i = this.at.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): number {
    const id = this.ids[0]!;
    const lastAt = this.at.pop()!;
    const lastId = this.ids.pop()!;
    if (this.at.length > 0) {
      this.at[0] = lastAt;
      this.ids[0] = lastId;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.at.length && this.less(l, m)) m = l;
        if (r < this.at.length && this.less(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return id;
  }
}

class FastRun {
  private readonly bs: number;
  private readonly nb: number;
  private readonly cache: ExtentCache;
  private readonly tables: Extent[][];
  private readonly nRequests: number;
  private readonly numComputed: number[];
  private readonly numTokens: number[];
  private readonly generated: number[];
  private readonly cachedBlocks: number[];
  private readonly heldBlocks: number[];
  private readonly admitted: boolean[];
  private readonly records: CallRecord[];
  private readonly waiting: number[] = [];
  private readonly running: number[] = [];
  private readonly future = new ArrivalHeap();
  private readonly pins: Pin[] = [];
  private readonly pinTtl: number[];
  private readonly pendingSessions: number[];
  private pendingHead = 0;
  private activeSessions = 0;
  private cap: number;
  private nextWindowNs: number;
  private windowHit = 0;
  private windowIdeal = 0;
  private readonly sessionEndS: Array<number | null>;
  private readonly totals: EngineTotals = { steps: 0, preemptions: 0, rejectedRequests: 0, vllmQueries: 0, vllmHits: 0, prefillMs: 0, decodeMs: 0, transferMs: 0, makespanS: 0 };
  /** Integer nanoseconds: the clock and the time totals (converted to seconds and ms on the way out). */
  private prefillNs = 0;
  private decodeNs = 0;
  private transferNs = 0;
  private readonly cost: StepCostsNs;
  /** The clock, in whole nanoseconds. */
  private now = 0;

  constructor(
    private readonly plan: SimPlan,
    private readonly p: EngineParams,
  ) {
    this.bs = plan.blockSizeTokens;
    this.cost = stepCostsNs(p, this.bs);
    this.nb = Math.floor(p.capacityTokens / this.bs);
    this.cache = new ExtentCache(this.nb, p.freeOrder, p.offload ? Math.floor(p.offload.capacityTokens / this.bs) : 0);
    const n = plan.requests.length;
    this.nRequests = n;
    // Tables of requests, then one per session for its pin.
    this.tables = Array.from({ length: n + plan.sessions.length }, () => []);
    this.numComputed = new Array<number>(n).fill(0);
    this.numTokens = plan.requests.map((r) => r.promptTokens);
    this.generated = new Array<number>(n).fill(0);
    this.cachedBlocks = new Array<number>(n).fill(0);
    this.heldBlocks = new Array<number>(n).fill(0);
    this.admitted = new Array<boolean>(n).fill(false);
    this.records = plan.requests.map((r) => ({
      request: r.id,
      session: r.session,
      callIndex: r.callIndex,
      promptTokens: r.promptTokens,
      outputTokens: r.outputTokens,
      arrivalS: r.arrivalS === null ? 0 : toNs(r.arrivalS) / 1e9,
      admittedS: null,
      finishedS: null,
      hitTokens: 0,
      idealHitTokens: 0,
      recomputedTokens: 0,
      offloadHitTokens: 0,
      preemptions: 0,
      rejected: false,
    }));
    this.pinTtl = p.policy === 'ttl-pin' ? pinTtlBySession(plan, p) : plan.sessions.map(() => 0);
    this.sessionEndS = plan.sessions.map(() => null);
    this.cap = p.policy === 'admission-cap' ? (p.admissionCap.cap === 'adaptive' ? p.admissionCap.initialCap : p.admissionCap.cap) : Number.POSITIVE_INFINITY;
    this.nextWindowNs = toNs(p.admissionCap.windowS);
    this.pendingSessions = sessionStartOrder(plan);
    for (const r of plan.requests) if (r.session < 0 && r.arrivalS !== null) this.future.push(toNs(r.arrivalS), r.id);
  }

  run(): EngineOutcome {
    for (;;) {
      this.activateSessions();
      this.admitArrivals();
      this.expirePins();
      if (this.adaptive) this.adaptCap();
      if (this.running.length === 0 && this.waiting.length === 0) {
        const next = this.nextEventS();
        if (next === null) break;
        this.now = Math.max(this.now, next);
        continue;
      }
      this.step();
    }
    this.totals.prefillMs = this.prefillNs / 1e6;
    this.totals.decodeMs = this.decodeNs / 1e6;
    this.totals.transferMs = this.transferNs / 1e6;
    this.totals.makespanS = this.records.reduce((m, r) => Math.max(m, r.finishedS ?? 0), 0);
    return { records: this.records, totals: this.totals, sessionEndS: this.sessionEndS };
  }

  private get adaptive(): boolean {
    return this.p.policy === 'admission-cap' && this.p.admissionCap.cap === 'adaptive';
  }

  // ---- time and arrivals (as the reference engine) ----

  private addFuture(r: number, at: number): void {
    this.records[r]!.arrivalS = at / 1e9;
    this.future.push(at, r);
  }

  private nextEventS(): number | null {
    let t: number | null = this.future.peekTime() ?? null;
    for (const pin of this.pins) if (t === null || pin.expiresNs < t) t = pin.expiresNs;
    if (this.activeSessions < this.cap && this.pendingHead < this.pendingSessions.length) {
      const s = toNs(this.plan.sessions[this.pendingSessions[this.pendingHead]!]!.startS);
      if (t === null || s < t) t = s;
    }
    if (this.adaptive && t !== null && this.nextWindowNs < t) t = this.nextWindowNs;
    return t;
  }

  private activateSessions(): void {
    while (this.activeSessions < this.cap && this.pendingHead < this.pendingSessions.length) {
      const s = this.pendingSessions[this.pendingHead]!;
      const session = this.plan.sessions[s]!;
      const startNs = toNs(session.startS);
      if (startNs > this.now) break;
      this.pendingHead += 1;
      this.activeSessions += 1;
      this.addFuture(session.requests[0]!, Math.max(startNs, this.now));
    }
  }

  private admitArrivals(): void {
    while (this.future.size > 0 && this.future.peekTime()! <= this.now) {
      const r = this.future.pop();
      const req = this.plan.requests[r]!;
      if (peakBlocks(req.promptTokens, req.outputTokens, this.bs) > this.nb) {
        this.reject(r);
        continue;
      }
      if (this.p.policy === 'ttl-pin' && req.session >= 0) this.insertBySessionStart(r);
      else this.waiting.push(r);
    }
  }

  private insertBySessionStart(r: number): void {
    const start = (x: number): number => (this.plan.requests[x]!.session >= 0 ? this.plan.sessions[this.plan.requests[x]!.session]!.startS : 0);
    const s = start(r);
    let i = this.waiting.length;
    while (i > 0 && !this.records[this.waiting[i - 1]!]!.preemptions && start(this.waiting[i - 1]!) > s) i--;
    this.waiting.splice(i, 0, r);
  }

  private reject(r: number): void {
    const rec = this.records[r]!;
    rec.rejected = true;
    rec.finishedS = this.now / 1e9;
    this.totals.rejectedRequests += 1;
    this.sessionContinues(r);
  }

  private sessionContinues(r: number): void {
    const req = this.plan.requests[r]!;
    if (req.session < 0) return;
    const session = this.plan.sessions[req.session]!;
    if (req.callIndex + 1 < session.requests.length) this.addFuture(session.requests[req.callIndex + 1]!, this.now + toNs(req.toolWaitS));
    else {
      this.sessionEndS[req.session] = this.now / 1e9;
      this.activeSessions -= 1;
    }
  }

  // ---- cache operations ----

  private lookup(r: number): { pieces: HitPiece[]; hitBlocks: number; cpuBlocks: number; idealBlocks: number } {
    const keys = this.plan.requests[r]!.keys;
    const max = Math.floor((this.numTokens[r]! - 1) / this.bs);
    const { pieces, blocks } = this.cache.lookup(keys, max);
    const cpuBlocks = this.cache.cpuHits(keys, blocks, max);
    const idealBlocks = this.cache.idealHits(keys, max);
    return { pieces, hitBlocks: blocks, cpuBlocks, idealBlocks };
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

  private pinOwner(session: number): number {
    return this.nRequests + session;
  }

  private releasePin(i: number): void {
    this.cache.release(this.pins[i]!.owner, this.tables);
    this.pins.splice(i, 1);
  }

  private expirePins(): void {
    for (let i = 0; i < this.pins.length; ) {
      if (this.pins[i]!.expiresNs <= this.now) this.releasePin(i);
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

  /** Moves a finished request's table to its session's pin: the blocks stay referenced. */
  private pin(r: number, session: number, expiresNs: number): void {
    const owner = this.pinOwner(session);
    const table = this.tables[r]!;
    for (const e of table) e.holders[e.holders.indexOf(r)] = owner;
    this.tables[owner] = table;
    this.tables[r] = [];
    this.heldBlocks[r] = 0;
    this.pins.push({ session, owner, expiresNs });
  }

  // ---- admission cap ----

  private adaptCap(): void {
    while (this.now >= this.nextWindowNs) {
      const a = this.p.admissionCap;
      if (this.windowIdeal > 0 && this.windowHit < a.hitRateFloor * this.windowIdeal) this.cap = Math.max(1, Math.floor(this.cap * a.backoff));
      else if (this.cache.usedBlocks < 0.9 * this.nb) this.cap += 1;
      this.windowHit = 0;
      this.windowIdeal = 0;
      this.nextWindowNs += toNs(a.windowS);
    }
  }

  // ---- one engine step ----

  private step(): void {
    let budget = this.p.maxNumBatchedTokens;
    const scheduled: Array<{ r: number; numNew: number; decode: boolean }> = [];
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
      scheduled.push({ r, numNew, decode: this.isDecode(r) });
      budget -= numNew;
      i++;
    }
    if (!preempted) {
      while (this.waiting.length > 0 && budget > 0 && this.running.length < this.p.maxNumSeqs) {
        const r = this.waiting[0]!;
        let pieces: HitPiece[] = [];
        let hitBlocks = 0;
        let cpuBlocks = 0;
        let ideal = 0;
        if (this.numComputed[r] === 0) {
          const found = this.lookup(r);
          pieces = found.pieces;
          hitBlocks = found.hitBlocks;
          cpuBlocks = found.cpuBlocks;
          ideal = found.idealBlocks;
          if (this.records[r]!.preemptions === 0) {
            this.totals.vllmQueries += this.numTokens[r]!;
            this.totals.vllmHits += hitBlocks * this.bs;
          }
        }
        const computedAfter = this.numComputed[r]! + (hitBlocks + cpuBlocks) * this.bs;
        const numNew = Math.min(this.numTokens[r]! - computedAfter, budget);
        let ok = this.allocate(r, numNew, pieces, hitBlocks, cpuBlocks);
        while (!ok && this.unpinOne()) ok = this.allocate(r, numNew, pieces, hitBlocks, cpuBlocks);
        if (!ok) break;
        this.waiting.shift();
        this.running.push(r);
        this.numComputed[r] = computedAfter;
        loadedBlocks += cpuBlocks;
        this.recordAdmission(r, hitBlocks, cpuBlocks, ideal);
        const req = this.plan.requests[r]!;
        if (this.p.policy === 'ttl-pin' && req.session >= 0 && !this.admitted[r]) this.releasePinOf(req.session);
        this.admitted[r] = true;
        scheduled.push({ r, numNew, decode: false });
        budget -= numNew;
      }
    }
    this.advance(scheduled, this.cache.takeSaved() + loadedBlocks);
  }

  private isDecode(r: number): boolean {
    return this.numTokens[r]! - this.numComputed[r]! === 1 && this.numComputed[r]! >= this.plan.requests[r]!.promptTokens;
  }

  private recordAdmission(r: number, hitBlocks: number, cpuBlocks: number, idealBlocks: number): void {
    const rec = this.records[r]!;
    rec.recomputedTokens += Math.max(0, idealBlocks - hitBlocks - cpuBlocks) * this.bs;
    rec.offloadHitTokens += cpuBlocks * this.bs;
    if (!this.admitted[r]) {
      rec.admittedS = this.now / 1e9;
      rec.hitTokens = hitBlocks * this.bs;
      rec.idealHitTokens = idealBlocks * this.bs;
      this.windowHit += rec.hitTokens;
      this.windowIdeal += rec.idealHitTokens;
    }
  }

  private advance(scheduled: Array<{ r: number; numNew: number; decode: boolean }>, transferBlocks: number): void {
    let prefillTokens = 0;
    let decodeContext = 0;
    let decodes = 0;
    for (const s of scheduled) {
      if (s.decode) {
        decodes += 1;
        decodeContext += this.numComputed[s.r]! + 1;
      } else prefillTokens += s.numNew;
    }
    const c = this.cost;
    const prefillNs = prefillTokens * c.prefillPerToken;
    const decodeNs = decodeContext * c.kvPerToken + decodes * c.decodePerSeq;
    const transferNs = transferBlocks * c.transferPerBlock;
    if (decodes > 0) this.decodeNs += decodeNs + c.fixed;
    else this.prefillNs += c.fixed;
    this.prefillNs += prefillNs;
    this.transferNs += transferNs;
    this.totals.steps += 1;
    this.now += c.fixed + prefillNs + decodeNs + transferNs;
    for (const { r, numNew } of scheduled) {
      this.numComputed[r]! += numNew;
      if (this.numComputed[r]! < this.numTokens[r]!) continue;
      this.generated[r]! += 1;
      if (this.generated[r]! >= this.plan.requests[r]!.outputTokens) this.finish(r);
      else this.numTokens[r]! += 1;
    }
  }

  private finish(r: number): void {
    this.running.splice(this.running.indexOf(r), 1);
    this.records[r]!.finishedS = this.now / 1e9;
    const req = this.plan.requests[r]!;
    const session = req.session;
    const hasNext = session >= 0 && req.callIndex + 1 < this.plan.sessions[session]!.requests.length;
    const ttl = session >= 0 ? this.pinTtl[session]! : 0;
    if (this.p.policy === 'ttl-pin' && hasNext && ttl > 0) this.pin(r, session, this.now + toNs(ttl));
    else this.releaseRequest(r);
    this.sessionContinues(r);
  }
}
