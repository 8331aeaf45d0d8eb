import { ArrivalHeap } from '../engines/arrivalHeap';
import type {
  ArrivalSource,
  CallRecord,
  EngineDebug,
  EngineOutcome,
  EngineRun,
  EngineStarter,
  EngineTotals,
  FleetOutcome,
} from '../engines/engineTypes';
import { newCallRecord, pinTtlBySession, settleRecomputed, toNs, tooLongForCache } from '../engines/policySupport';
import { queueBySessionStart, recordBlockAdmission } from '../engines/sessionReplay';
import type { EngineParams } from '../params';
import type { SimPlan } from '../simRequests';
import { Router } from './routers';
import type { FleetParams, FleetView } from './routers';

/**
 * K GPUs behind a router. Each GPU is an engine as on its own (the same parameters, its
 * own KV cache and scheduler); the fleet owns the replay (sessions, closed-loop arrivals,
 * rejections) and, as each call arrives, asks the router which GPU serves it, looking at
 * the GPUs as they are at that moment.
 *
 * Time: GPUs advance one turn at a time, always the one whose next event is earliest,
 * and a call is routed once every GPU has run every step that started before it arrived
 * (and none that starts later), so the router sees each GPU exactly as a single GPU's
 * own queue would have at that instant, whichever engine runs the GPUs. A turn of the
 * fast engine may run a stretch of identical steps; it stops before the next call could
 * arrive: the next known arrival, or the earliest moment another GPU could end a call
 * (its clock plus a fixed step cost per token its closest-to-done request still has to
 * sample), since an ended call sends the session's next call to the router.
 *
 * Memory: each GPU keeps state only for the calls sent to it. Its engine runs on a plan of
 * those calls alone (`GpuFeed.plan`), numbered as they are sent, so what the engines keep
 * per request grows with the calls each GPU ran, not with every call of the run times the
 * GPUs: 1,024 GPUs × 2,000 replicas of a 48-call session once took 4.2 GB and overflowed
 * the heap, most of it per-request arrays each GPU held for all 96,000 calls.
 */

/**
 * One GPU's feed: the calls the router sent it, and where their ends go. Its engine sees
 * only them, numbered in the order sent (`plan.requests[l]` is the l-th call sent here);
 * sends come in (time, global id) order, so equal arrival times keep their order.
 */
class GpuFeed implements ArrivalSource {
  readonly rejectedRequests = 0;
  readonly adaptive = false;
  readonly future = new ArrivalHeap();
  /** No stretch may start a step at or after this (set by the fleet before each turn). */
  horizonNs = Infinity;
  /** Prompt tokens and the fewest outputs of the calls sent but not yet queued (the engine does not see them yet). */
  pendingTokens = 0;
  private readonly pendingOutputs: number[] = [];
  /** The engine's plan: the calls sent here, in order, and the run's sessions. */
  readonly plan: SimPlan;
  /** The records of the calls sent here (the fleet's own objects), by local id. */
  readonly records: CallRecord[] = [];
  /** The fleet's id of each local call. */
  private readonly globalOf: number[] = [];

  constructor(
    private readonly fleet: FleetRun,
    readonly sessionEndS: Array<number | null>,
  ) {
    const whole = fleet.plan;
    this.plan = {
      requests: [],
      sessions: whole.sessions,
      blockSizeTokens: whole.blockSizeTokens,
      tokenKeys: whole.tokenKeys,
    };
  }

  get totalCalls(): number {
    return this.fleet.plan.requests.length;
  }

  send(at: number, r: number): void {
    const req = this.fleet.plan.requests[r]!;
    const local = this.plan.requests.length;
    this.plan.requests.push(req);
    this.records.push(this.fleet.records[r]!);
    this.globalOf.push(r);
    this.future.push(at, local);
    this.pendingTokens += req.promptTokens;
    this.pendingOutputs.push(req.outputTokens);
  }

  arrive(now: number, queue: (r: number) => void): void {
    while (this.future.size > 0 && this.future.peekTime()! <= now) {
      const l = this.future.pop();
      const req = this.plan.requests[l]!;
      this.pendingTokens -= req.promptTokens;
      this.pendingOutputs.splice(this.pendingOutputs.indexOf(req.outputTokens), 1);
      queue(l);
    }
  }

  fewestPendingOutputs(): number {
    let n = Infinity;
    for (const o of this.pendingOutputs) n = Math.min(n, o);
    return n;
  }

  adaptCap(): void {}

  nextEventNs(engineNext: number | null): number | null {
    const t = this.future.peekTime() ?? null;
    if (engineNext !== null && (t === null || engineNext < t)) return engineNext;
    return t;
  }

  nextChangeNs(): number {
    return Math.min(this.future.peekTime() ?? Infinity, this.horizonNs);
  }

  get ended(): number {
    return this.fleet.ended;
  }

  callEnded(l: number, now: number): void {
    this.fleet.callEnded(this.globalOf[l]!, now);
  }

  recordBlockAdmission(
    l: number,
    firstAdmission: boolean,
    nowNs: number,
    blockSize: number,
    hitBlocks: number,
    cpuBlocks: number,
    idealBlocks: number,
  ): void {
    recordBlockAdmission(this.records[l]!, firstAdmission, nowNs, blockSize, hitBlocks, cpuBlocks, idealBlocks);
  }

  queueBySessionStart(waiting: number[], l: number): void {
    queueBySessionStart(this.plan, this.records, waiting, l);
  }

  pinTtlS(session: number): number {
    return this.fleet.pinTtlS(session);
  }
}

class FleetRun implements FleetView {
  readonly records: CallRecord[];
  readonly sessionEndS: Array<number | null>;
  readonly gpuOf: number[];
  private readonly pending = new ArrivalHeap();
  private readonly tooLong: Uint8Array;
  private readonly feeds: GpuFeed[];
  private readonly runs: EngineRun[];
  private readonly router: Router;
  private readonly fixedNs: number;
  private rejected = 0;
  /** Calls that ended (finished or rejected) on any GPU: the progress of a long run. */
  ended = 0;
  private readonly routed: number[];
  /** ttl-pin's pin time per session, made once for every GPU when first asked. */
  private pinTtl: number[] | null = null;

  constructor(
    readonly plan: SimPlan,
    private readonly p: EngineParams,
    fleet: FleetParams,
    start: EngineStarter,
    debug: EngineDebug,
  ) {
    this.records = plan.requests.map(newCallRecord);
    this.sessionEndS = plan.sessions.map(() => null);
    this.gpuOf = plan.requests.map(() => -1);
    this.tooLong = Uint8Array.from(plan.requests, (r) =>
      tooLongForCache(p, plan.blockSizeTokens, r.promptTokens, r.outputTokens) ? 1 : 0,
    );
    this.fixedNs = Math.round(p.stepFixedMs * 1e6);
    this.router = new Router(fleet.router);
    this.feeds = Array.from({ length: fleet.gpus }, () => new GpuFeed(this, this.sessionEndS));
    this.runs = this.feeds.map((feed) => start(feed.plan, p, feed, debug));
    this.routed = this.feeds.map(() => 0);
    // Sessions start at their start times (a fleet has no admission cap); open-loop requests at their own.
    for (const s of plan.sessions) this.schedule(s.requests[0]!, toNs(s.startS));
    for (const r of plan.requests) if (r.session < 0 && r.arrivalS !== null) this.schedule(r.id, toNs(r.arrivalS));
  }

  get gpus(): number {
    return this.feeds.length;
  }

  routedCalls(gpu: number): number {
    return this.routed[gpu]!;
  }

  loadTokens(gpu: number): number {
    return this.runs[gpu]!.loadTokens() + this.feeds[gpu]!.pendingTokens;
  }

  cachedPrefixTokens(gpu: number, r: number): number {
    return this.runs[gpu]!.cachedPrefixTokens(this.plan.requests[r]!);
  }

  pinTtlS(session: number): number {
    this.pinTtl ??= pinTtlBySession(this.plan, this.p);
    return this.pinTtl[session]!;
  }

  private schedule(r: number, at: number): void {
    this.records[r]!.arrivalS = at / 1e9;
    this.pending.push(at, r);
  }

  callEnded(r: number, now: number): void {
    this.ended += 1;
    const req = this.plan.requests[r]!;
    if (req.session < 0) return;
    const session = this.plan.sessions[req.session]!;
    if (req.callIndex + 1 < session.requests.length)
      this.schedule(session.requests[req.callIndex + 1]!, now + toNs(req.toolWaitS));
    else this.sessionEndS[req.session] = now / 1e9;
  }

  /** The earliest time GPU g could end a call (Infinity: it has none to end). */
  private earliestEndNs(g: number): number {
    const next = this.runs[g]!.nextEventNs();
    if (next === null) return Infinity;
    const samples = Math.min(this.runs[g]!.fewestSamplesLeft(), this.feeds[g]!.fewestPendingOutputs());
    return samples === Infinity ? Infinity : next + this.fixedNs * samples;
  }

  /** The next arrival: rejected on the spot if no GPU can hold it, else sent where the router says. */
  private routeNext(): void {
    const at = this.pending.peekTime()!;
    const r = this.pending.pop();
    if (this.tooLong[r]) {
      const rec = this.records[r]!;
      rec.rejected = true;
      rec.finishedS = at / 1e9;
      this.rejected += 1;
      this.callEnded(r, at);
      return;
    }
    const req = this.plan.requests[r]!;
    const g = this.router.route({ request: r, session: req.session, promptTokens: req.promptTokens }, this);
    this.gpuOf[r] = g;
    this.routed[g]! += 1;
    this.feeds[g]!.send(at, r);
  }

  run(): EngineOutcome & { fleet: FleetOutcome } {
    for (;;) {
      let g = -1;
      let t = Infinity;
      for (let k = 0; k < this.runs.length; k++) {
        const next = this.runs[k]!.nextEventNs();
        if (next !== null && next < t) {
          t = next;
          g = k;
        }
      }
      const arrival = this.pending.peekTime();
      // A call is routed before any GPU runs a step that starts at or after its arrival.
      if (arrival !== undefined && arrival <= t) {
        this.routeNext();
        continue;
      }
      if (g < 0) break;
      let horizon = arrival ?? Infinity;
      for (let k = 0; k < this.runs.length; k++) if (k !== g) horizon = Math.min(horizon, this.earliestEndNs(k));
      this.feeds[g]!.horizonNs = horizon;
      this.runs[g]!.turn();
    }
    // Each GPU's totals; its makespan is its last call's end (its records are the calls sent to it).
    const perGpu = this.runs.map((run) => {
      const totals = { ...run.outcome().totals };
      totals.rejectedRequests = 0;
      return totals;
    });
    settleRecomputed(this.records);
    const sum = (f: (t: EngineTotals) => number): number => perGpu.reduce((a, t) => a + f(t), 0);
    const totals: EngineTotals = {
      steps: sum((t) => t.steps),
      preemptions: sum((t) => t.preemptions),
      rejectedRequests: this.rejected,
      vllmQueries: sum((t) => t.vllmQueries),
      vllmHits: sum((t) => t.vllmHits),
      prefillMs: sum((t) => t.prefillMs),
      decodeMs: sum((t) => t.decodeMs),
      transferMs: sum((t) => t.transferMs),
      makespanS: this.records.reduce((m, rec) => Math.max(m, rec.finishedS ?? 0), 0),
    };
    return { records: this.records, totals, sessionEndS: this.sessionEndS, fleet: { gpuOf: this.gpuOf, gpus: perGpu } };
  }
}

/**
 * Runs a plan on `fleet.gpus` GPUs behind `fleet.router`, every GPU started by `start`
 * with the parameters `p`. The outcome's totals are the fleet's (steps, preemptions and
 * times summed over GPUs; the makespan is the last call's end); `fleet` has each GPU's.
 */
export function runFleet(
  start: EngineStarter,
  plan: SimPlan,
  p: EngineParams,
  fleet: FleetParams,
  debug: EngineDebug = {},
): EngineOutcome & { fleet: FleetOutcome } {
  return new FleetRun(plan, p, fleet, start, debug).run();
}
