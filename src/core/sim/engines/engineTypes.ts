import type { EngineParams } from '../params';
import type { SimPlan, SimRequest } from '../simRequests';

/** What happened to one request (one agent call). */
export interface CallRecord {
  request: number;
  session: number;
  callIndex: number;
  promptTokens: number;
  outputTokens: number;
  arrivalS: number;
  /** First time it was scheduled; null if it never was. */
  admittedS: number | null;
  finishedS: number | null;
  /** Prompt tokens served from the GPU prefix cache when it was first admitted. */
  hitTokens: number;
  /** What an infinite cache would have served at that moment. */
  idealHitTokens: number;
  /**
   * Tokens it prefilled (computed), over all its admissions: the prompt tokens it did
   * not hit and, after a preemption, everything it computed again, generated tokens too.
   */
  prefillTokens: number;
  /**
   * The extra prefill eviction and preemption cost it: prefillTokens − (promptTokens −
   * idealHitTokens), what it computed beyond what even an infinite cache leaves to compute.
   */
  recomputedTokens: number;
  /** Tokens reloaded from the CPU tier instead of recomputed. */
  offloadHitTokens: number;
  preemptions: number;
  /** Longer than the whole cache: vLLM can never schedule it. */
  rejected: boolean;
}

/** Totals of one engine run. */
export interface EngineTotals {
  steps: number;
  preemptions: number;
  rejectedRequests: number;
  /** vLLM's prefix_cache_queries / prefix_cache_hits (tokens), every lookup of a not-preempted request counted. */
  vllmQueries: number;
  vllmHits: number;
  prefillMs: number;
  decodeMs: number;
  /** Time spent moving KV to and from the CPU tier. */
  transferMs: number;
  makespanS: number;
  /** sglang-lru: SGLang's own cache-hit counters, #cached-token and #new-token summed over prefill batches (PrefillAdder.log_hit_tokens / log_input_tokens). */
  sglangCachedTokens?: number;
  sglangNewTokens?: number;
  /** sglang-lru: tokens evicted from the radix tree (RadixCache.evict). */
  evictedTokens?: number;
}

/** A finished engine run: one record per request, totals, and when each session ended. */
export interface EngineOutcome {
  records: CallRecord[];
  totals: EngineTotals;
  sessionEndS: Array<number | null>;
  /** A fleet run (more than one GPU): which GPU ran each request, and each GPU's totals. */
  fleet?: FleetOutcome;
}

/** What a fleet run adds to an engine outcome. */
export interface FleetOutcome {
  /** The GPU each request ran on (−1: rejected before routing). */
  gpuOf: number[];
  /** Each GPU's totals (its makespan: when its last call ended). */
  gpus: EngineTotals[];
}

/** One engine step as the reference engine ran it (a test hook for comparing schedules with vLLM's). */
export interface StepLogEntry {
  step: number;
  /** Clock at the step's start, in seconds. */
  t: number;
  /** Clock at the step's end, in seconds: when the tokens it sampled reach the client. */
  end: number;
  /** [request, tokens, 1 if a decode] in the order scheduled. */
  sched: Array<[number, number, 0 | 1]>;
  /** Requests preempted in this step, in order. */
  preempted: number[];
  /** Requests admitted from the waiting queue in this step (first admissions and resumptions). */
  admitted: number[];
  /** Every cache lookup of the step: [request, hit tokens]. */
  lookups: Array<[number, number]>;
}

/** Hooks into a run: invariant checks and a log of every step (tests, the reference engine) and progress (long runs). */
export interface EngineDebug {
  /** Check the pool's invariants after every step and throw on the first broken one. */
  selfCheck?: boolean;
  onStepLog?: (entry: StepLogEntry) => void;
  /** Called every PROGRESS_STEPS steps with the calls that ended so far and all calls. */
  progress?: (endedCalls: number, totalCalls: number) => void;
}

/** How often (in engine steps) a run reports its progress. */
export const PROGRESS_STEPS = 64;

/** An engine: deterministic, the same plan and parameters give the same outcome. */
export type Engine = (plan: SimPlan, params: EngineParams, debug?: EngineDebug) => EngineOutcome;

/**
 * Where an engine's requests come from and where their ends go: one GPU running a whole
 * replay by itself (SessionReplay), or one GPU of a fleet fed by a router (fleet.ts).
 * Times are whole nanoseconds. Request ids are the engine's plan's: the whole plan's for
 * one GPU; on a GPU of a fleet, a plan of the requests routed to it, numbered as they
 * come, so a GPU keeps state only for its own calls (fleet.ts).
 */
export interface ArrivalSource {
  /** Every request's record, by the engine's request id (a fleet's records are shared: each GPU's plan points at the ones it runs). */
  readonly records: CallRecord[];
  /** Calls of the whole run (a fleet: every GPU's), for progress. */
  readonly totalCalls: number;
  readonly sessionEndS: Array<number | null>;
  readonly rejectedRequests: number;
  /** Calls that ended (finished or rejected) so far, over the whole run (a fleet: every GPU). */
  readonly ended: number;
  /** An adaptive admission cap runs (adaptCap is called every loop). */
  readonly adaptive: boolean;
  /** Hands every request due by `now` to `queue`, in arrival order. */
  arrive(now: number, queue: (r: number) => void): void;
  adaptCap(now: number, cacheUnderNinetyPercent: boolean): void;
  /** When an idle engine should wake: its next arrival or `engineNext`, whichever comes first; null: never. */
  nextEventNs(engineNext: number | null): number | null;
  /** The earliest event that could change what a stretch of identical steps does (Infinity: none). */
  nextChangeNs(arrivalsCount: boolean): number;
  /** A request ended (finished) at `now`. */
  callEnded(r: number, now: number): void;
  /** A request admitted by a block-pool engine: what it hit and would have hit. */
  recordBlockAdmission(
    r: number,
    firstAdmission: boolean,
    nowNs: number,
    blockSize: number,
    hitBlocks: number,
    cpuBlocks: number,
    idealBlocks: number,
  ): void;
  /** Queues `r` by its session's start (ttl-pin's program-level FCFS). */
  queueBySessionStart(waiting: number[], r: number): void;
  /** ttl-pin: how long a session's KV stays pinned after one of its calls ends, in seconds (computed once per run). */
  pinTtlS(session: number): number;
}

/**
 * One GPU's engine driven from outside, turn by turn (a fleet runs several, routing each
 * call as it arrives). `runFast(plan, p)` is `while (run.turn()); run.outcome()`.
 */
export interface EngineRun {
  /** One turn of the engine loop: arrivals due, pins, then one step (or a stretch of identical steps, none starting at or after the source's next change), or a jump to its next event. False when nothing is left. */
  turn(): boolean;
  /** When it next acts: its clock while it has requests, else its next arrival or own event; null: never (until fed). */
  nextEventNs(): number | null;
  /** Tokens (prompt and generated so far) of its running and waiting requests: its load. */
  loadTokens(): number;
  /** Prompt tokens of a request not yet sent to it that it would serve from its GPU cache if it looked it up now; changes nothing. */
  cachedPrefixTokens(request: SimRequest): number;
  /** The fewest tokens any of its running or waiting requests still has to sample before it ends (Infinity: none); a step samples at most one per request. */
  fewestSamplesLeft(): number;
  /** Its clock, in nanoseconds. */
  readonly nowNs: number;
  /** The outcome once every turn is done (its totals; the records are the source's). */
  outcome(): EngineOutcome;
}

/** Starts an engine run on a plan, fed by `source`. */
export type EngineStarter = (
  plan: SimPlan,
  params: EngineParams,
  source: ArrivalSource,
  debug?: EngineDebug,
) => EngineRun;

/** An engine by name, as the CLI and its JSON name it and as a sweep's worker threads are told it (a function cannot be sent to a thread). */
export type EngineName = 'fast' | 'reference';
