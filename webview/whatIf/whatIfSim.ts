import type { Engine, EngineOutcome } from '../../src/core/sim/engines/engineTypes';
import type { EngineParams } from '../../src/core/sim/params';
import { runScenario } from '../../src/core/sim/scenario';
import type { ScenarioOptions, ScenarioResult } from '../../src/core/sim/scenario';
import type { SimPlan } from '../../src/core/sim/simRequests';
import { findCliff, pastCliff } from '../../src/core/sim/sweep';
import type { SweepPoint } from '../../src/core/sim/sweep';
import type { Workload } from '../../src/core/sim/workload';
import { pointOf } from './whatIfModel';
import type { CompareJob, PartialResult, ScenarioJob, SweepJob } from '../../src/protocol/whatIfWorkerProtocol';

// The what-if worker's work, without the worker: pure, so it runs (and is tested) in
// Node too. The cliff of the points run comes from the core's findCliff, the one
// runSweep uses: the panel's knee, suggested cap and sentence are the CLI's by
// construction. Engine runs go through a memo, so moving a control back is instant.

/** A plan and its parameters as a key: within one workload, equal keys are equal runs. */
function runKey(plan: SimPlan, p: EngineParams): string {
  // Replica count, start times and tool-wait scale are what vary between plans of one workload.
  let waits = 0;
  for (const r of plan.requests) waits += r.toolWaitS;
  return `${JSON.stringify(p)}|${plan.blockSizeTokens}|${plan.requests.length}|${waits}|${plan.sessions.map((s) => s.startS).join(',')}`;
}

/**
 * An engine that remembers its outcomes, up to `limitRecords` call records in all (a
 * run of 256 copies of a 315-call session alone holds 80k), then starts over. Owns its
 * cache; one per workload.
 */
export class MemoEngine {
  private cache = new Map<string, EngineOutcome>();
  private records = 0;
  /** Engine runs actually made (not recalled), for tests and the bench. */
  runs = 0;

  constructor(
    private readonly engine: Engine,
    private readonly limitRecords = 400_000,
  ) {}

  readonly run: Engine = (plan, p) => {
    const key = runKey(plan, p);
    const hit = this.cache.get(key);
    if (hit) return hit;
    const outcome = this.engine(plan, p);
    this.runs += 1;
    if (this.records + outcome.records.length > this.limitRecords) {
      this.cache = new Map();
      this.records = 0;
    }
    this.cache.set(key, outcome);
    this.records += outcome.records.length;
    return outcome;
  };
}

/** The simulator of one workload: runs jobs and posts what they find. */
export class WhatIfSim {
  private readonly alone = new Map<string, Array<number | null>>();

  constructor(
    private readonly workload: Workload,
    private readonly engine: MemoEngine,
    private readonly post: (m: PartialResult) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  private options(spec: ScenarioOptions): ScenarioOptions {
    return {
      params: spec.params,
      ...(spec.replicas ? { replicas: spec.replicas } : {}),
      ...(spec.session !== null ? { session: spec.session } : {}),
    };
  }

  /** One scenario and the time it took. */
  private run(spec: ScenarioOptions): { result: ScenarioResult; ms: number } {
    const t0 = this.now();
    const result = runScenario(this.engine.run, this.workload, this.options(spec), this.alone);
    return { result, ms: this.now() - t0 };
  }

  scenario(job: ScenarioJob): void {
    const { result, ms } = this.run(job.spec);
    this.post({ type: 'scenario/result', seq: job.seq, result, ms });
    if (job.alone && job.spec.replicas) {
      const one = this.run({ ...job.spec, replicas: { ...job.spec.replicas, replicas: 1 } });
      this.post({ type: 'scenario/alone', seq: job.seq, result: pointOf(one.result), ms: one.ms });
    }
  }

  compare(job: CompareJob): void {
    for (const p of job.policies) {
      try {
        const r = this.run(p.spec);
        this.post({
          type: 'scenario/policy',
          seq: job.seq,
          policy: p.policy,
          result: pointOf(r.result),
          error: null,
          ms: r.ms,
        });
      } catch (e) {
        this.post({
          type: 'scenario/policy',
          seq: job.seq,
          policy: p.policy,
          result: null,
          error: e instanceof Error ? e.message : String(e),
          ms: 0,
        });
      }
    }
  }

  private at(job: SweepJob, spec: ScenarioOptions, value: number): ScenarioOptions {
    if (job.axis === 'capacity') return { ...spec, params: { ...spec.params, capacityTokens: value } };
    return { ...spec, replicas: spec.replicas ? { ...spec.replicas, replicas: value } : null };
  }

  /**
   * The cliff sweep: points in order (N rising, capacity falling), each posted as it
   * comes; stops `pointsAfterCliff` points past the first point past the cliff, or once
   * `budgetMs` has passed; then the core's findCliff over the points run gives the
   * cliff. Then the other policies' lines at
   * the same points, each within the same budget.
   */
  sweep(job: SweepJob): void {
    const t0 = this.now();
    const threshold = { hitRateDropThreshold: job.threshold };
    const ordered = [...new Set(job.values)].sort((a, b) => (job.axis === 'replicas' ? a - b : b - a));
    const run: number[] = [];
    const points: SweepPoint[] = [];
    let stop: number | null = null;
    let stoppedBy: 'cliff' | 'budget' | null = null;
    const total = (): number => (stop === null ? ordered.length : stop + 1) + job.lines.length * run.length;
    for (let i = 0; i < ordered.length; i++) {
      if (stop !== null && i > stop) {
        stoppedBy = 'cliff';
        break;
      }
      if (i > 0 && this.now() - t0 > job.budgetMs) {
        stoppedBy = 'budget';
        break;
      }
      const value = ordered[i]!;
      const { result, ms } = this.run(this.at(job, job.base, value));
      run.push(value);
      points.push({ value, result });
      if (stop === null && pastCliff(result, threshold)) stop = Math.min(ordered.length - 1, i + job.pointsAfterCliff);
      this.post({
        type: 'sweep/point',
        seq: job.seq,
        line: null,
        value,
        result: pointOf(result),
        done: run.length,
        total: total(),
        ms,
      });
    }
    const cliff = findCliff(job.axis, points, this.workload, threshold);
    const skipped = ordered.filter((v) => !run.includes(v));
    this.post({
      type: 'sweep/cliff',
      seq: job.seq,
      cliff,
      run,
      skipped,
      stoppedBy: skipped.length > 0 ? stoppedBy : null,
      ms: this.now() - t0,
    });
    let done = run.length;
    for (const line of job.lines) {
      const lineStart = this.now();
      try {
        for (const value of run) {
          if (this.now() - lineStart > job.budgetMs) break;
          const { result, ms } = this.run(this.at(job, line.spec, value));
          done += 1;
          this.post({
            type: 'sweep/point',
            seq: job.seq,
            line: line.policy,
            value,
            result: pointOf(result),
            done,
            total: total(),
            ms,
          });
        }
      } catch (e) {
        this.post({
          type: 'sweep/lineError',
          seq: job.seq,
          line: line.policy,
          error: e instanceof Error ? e.message : String(e),
        });
      }
    }
  }
}
