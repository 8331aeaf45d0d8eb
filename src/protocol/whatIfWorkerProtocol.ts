import type { ScenarioOptions, ScenarioResult } from '../core/sim/scenario';
import type { Cliff, SweepAxis } from '../core/sim/sweep';
import type { Workload } from '../core/sim/workload';
import type { PolicyId } from '../core/sim/policies';
import type { RpcRequest, RpcResponse } from './workerRpc';

// Messages between the inspector's page and the what-if worker (webview/whatIf/whatIfWorker.ts).
// Every run carries the sequence number the page gave it; the page ignores anything from an
// older run (and terminates a worker busy with one), so a stale result can never show.

/** One point's figures: a scenario result without its per-call and per-session lists. */
export type PointResult = Omit<ScenarioResult, 'calls' | 'sessions'>;

/** The same scenario under another policy (the comparison table and the chart's lines). */
export interface PolicySpec {
  policy: PolicyId;
  spec: ScenarioOptions;
}

/** Runs one scenario, then (optionally) the same alone (N = 1). */
export interface ScenarioJob {
  type: 'scenario';
  seq: number;
  workloadId: number;
  spec: ScenarioOptions;
  alone: boolean;
}

/** Runs the same scenario under other policies, one after another (its own worker: CPU offload can be slow). */
export interface CompareJob {
  type: 'compare';
  seq: number;
  workloadId: number;
  policies: PolicySpec[];
}

/** The worker lanes: each job kind runs in its own worker. */
export type LaneName = 'scenario' | 'compare' | 'sweep';

/**
 * Runs a sweep point by point in order, stopping `pointsAfterCliff` points past the
 * cliff or when `budgetMs` has passed, then the other policies' lines at the points run.
 */
export interface SweepJob {
  type: 'sweep';
  seq: number;
  workloadId: number;
  axis: SweepAxis;
  values: number[];
  base: ScenarioOptions;
  threshold: number;
  pointsAfterCliff: number;
  budgetMs: number;
  lines: PolicySpec[];
}

/** What the what-if worker answers (WorkerRpc): a job answers once it is over, after every partial result it posted. */
export interface WhatIfWorkerMethods {
  /** The workload the next jobs run on (a new one resets the simulator's caches). */
  load: { params: { workloadId: number; workload: Workload }; result: null };
  scenario: { params: ScenarioJob; result: JobDone };
  compare: { params: CompareJob; result: JobDone };
  sweep: { params: SweepJob; result: JobDone };
}

/** A job is over: the worker's own time for all of it. */
export interface JobDone {
  ms: number;
}

/** Page → worker. */
export type ToWorker = RpcRequest<WhatIfWorkerMethods>;

/** Worker → page: a job's partial results (PartialResult), then its answer. */
export type WorkerPost = PartialResult | RpcResponse;

/** A job's result as it comes, before the job's answer. */
export type PartialResult = Exclude<FromWorker, { type: 'done' | 'error' }>;

/**
 * What the panel is told about its jobs, in order (WhatIfRunner turns a job's answer into
 * `done` or `error`). `ms` is the worker's own time for that piece of work.
 */
export type FromWorker =
  /** The scenario's result, first of all. */
  | { type: 'scenario/result'; seq: number; result: ScenarioResult; ms: number }
  /** The same scenario with one session (N = 1): the "from" of the sentence. */
  | { type: 'scenario/alone'; seq: number; result: PointResult; ms: number }
  /** The scenario under another policy, or why it could not run. */
  | {
      type: 'scenario/policy';
      seq: number;
      policy: PolicyId;
      result: PointResult | null;
      error: string | null;
      ms: number;
    }
  /** One sweep point of the main line (`line` null) or of a policy's line; `done`/`total` for progress. */
  | {
      type: 'sweep/point';
      seq: number;
      line: PolicyId | null;
      value: number;
      result: PointResult;
      done: number;
      total: number;
      ms: number;
    }
  /** The main line is complete: its cliff, which points ran and which were skipped and why. */
  | {
      type: 'sweep/cliff';
      seq: number;
      cliff: Cliff;
      run: number[];
      skipped: number[];
      stoppedBy: 'cliff' | 'budget' | null;
      ms: number;
    }
  /** A policy line could not run (an engine refused its parameters). */
  | { type: 'sweep/lineError'; seq: number; line: PolicyId; error: string }
  /** The job is over; nothing more comes for this `seq`. */
  | { type: 'done'; seq: number; job: LaneName; ms: number }
  /** The job failed; nothing more comes for this `seq`. */
  | { type: 'error'; seq: number; job: LaneName; message: string };
