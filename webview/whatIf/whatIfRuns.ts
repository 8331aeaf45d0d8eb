import { formatCount } from '../../src/core/text/formatNumbers';
import { POLICY_CHOICES } from '../../src/core/sim/policies';
import type { PolicyId } from '../../src/core/sim/policies';
import type { ScenarioOptions, ScenarioResult } from '../../src/core/sim/scenario';
import { DEFAULT_CLIFF } from '../../src/core/sim/sweep';
import type { Cliff } from '../../src/core/sim/sweep';
import type { WhatIfWorkload } from '../../src/protocol/messages';
import {
  fieldLabel,
  fitCheck,
  pointOf,
  POINTS_AFTER_CLIFF,
  resolveScenario,
  SWEEP_BUDGET_MS,
  sweepValues,
} from './whatIfModel';
import type { NumericField, ResolvedScenario, Scenario } from './whatIfModel';
import type { SweepRequest } from './whatIfRunner';
import type { FromWorker, LaneName, PointResult, PolicySpec } from '../../src/protocol/whatIfWorkerProtocol';

// The what-if panel's state and the two pure functions that move it (GitLens keeps a
// webview's state, the actions that change it and the events that arrive apart in the
// same way): planRuns turns the scenario into the worker jobs it needs, and
// reduceWorkerMessage folds what the workers send back into the runs on screen.
// Plain data in and out; whatIfView.ts starts the jobs and draws.

/** The workload of the selected session: asked of the host, then ready or failed. */
export type WorkloadState =
  | { key: string; status: 'loading' }
  | { key: string; status: 'ready'; data: WhatIfWorkload }
  | { key: string; status: 'error'; message: string };

/** The scenario lane's latest run. */
export interface ScenarioRun {
  seq: number;
  /** The policy comparison's run, in its own worker, started once the scenario's result is in (so it never slows it); -1 before. */
  compareSeq: number;
  others: PolicySpec[];
  compareStatus: 'running' | 'done' | 'error';
  key: string;
  spec: ScenarioOptions;
  result: ScenarioResult | null;
  alone: PointResult | null;
  policies: Map<PolicyId, { result: PointResult } | { error: string }>;
  status: 'running' | 'done' | 'error';
  error: string | null;
  ms: number | null;
  /** The scenario and its resolution as they were when the run started (the figures describe these). */
  scenario: Scenario;
  resolved: ResolvedScenario;
}

/** The sweep lane's latest run. */
export interface SweepRun {
  seq: number;
  key: string;
  axis: Scenario['sweepAxis'];
  values: number[];
  main: Array<{ value: number; result: PointResult }>;
  lines: Map<PolicyId, Array<{ value: number; result: PointResult }>>;
  lineErrors: Map<PolicyId, string>;
  cliff: Cliff | null;
  run: number[];
  skipped: number[];
  stoppedBy: 'cliff' | 'budget' | null;
  done: number;
  total: number;
  status: 'running' | 'done' | 'error';
  error: string | null;
  ms: number | null;
  /** The sweep's base scenario, for "Copy sweep as CLI". */
  scenario: Scenario;
  resolved: ResolvedScenario;
}

/** The runs on screen: the latest of each lane (the comparison rides on the scenario's run). */
export interface WhatIfRuns {
  scenario: ScenarioRun | null;
  sweep: SweepRun | null;
}

/** The scenario job a plan needs; `key` is equal for plans that would give the same results. */
export interface ScenarioPlan {
  key: string;
  spec: ScenarioOptions;
  /** The same scenario under the other policies (the comparison). */
  others: PolicySpec[];
  /** Also run it alone (N = 1), for the sentence's "from". */
  alone: boolean;
  /** Policies the comparison cannot run on this scenario, with why (an admission cap on a fleet). */
  unavailable: Array<{ policy: PolicyId; reason: string }>;
}

/** The sweep job a plan needs; its key leaves out the swept parameter, so moving N or the capacity keeps the sweep. */
export interface SweepPlan {
  key: string;
  request: SweepRequest;
}

/** What the scenario asks for, before any job starts. */
export type RunPlan =
  /** A field holds text that is not a value: nothing runs, the last results stay. */
  | { kind: 'invalid'; message: string }
  /** The scenario cannot work: messages by field, and one for the scenario. */
  | { kind: 'unresolved'; fieldErrors: Array<[NumericField, string]>; message: string }
  /** No call fits in the cache; `capacityField` says the typed capacity is to blame. */
  | { kind: 'no-fit'; message: string; capacityField: boolean }
  | { kind: 'run'; resolved: ResolvedScenario; fitNote: string | null; scenario: ScenarioPlan; sweep: SweepPlan };

/** The message for fields that hold no valid value. */
export function invalidMessage(invalid: ReadonlySet<NumericField>): string {
  return `Not updated: ${[...invalid].map(fieldLabel).join(', ')} ${invalid.size === 1 ? 'needs' : 'need'} a valid value.`;
}

/**
 * The jobs a scenario needs on a workload: the scenario (with the same under every other
 * policy) and the cliff sweep around it, or why none can run. `isField` tells a field's
 * error from one about the whole scenario.
 */
export function planRuns(
  scenario: Scenario,
  data: WhatIfWorkload,
  invalid: ReadonlySet<NumericField>,
  isField: (name: string) => name is NumericField,
): RunPlan {
  if (invalid.size > 0) return { kind: 'invalid', message: invalidMessage(invalid) };
  const blockTrace = data.workload.kind === 'requests';
  const options = {
    blockSizeTokens: data.workload.kind === 'requests' ? data.workload.blockSizeTokens : 16,
    blockTrace,
  };
  const resolved = resolveScenario(scenario, options);
  if (!resolved.ok) {
    const fieldErrors: Array<[NumericField, string]> = [];
    let general: string | null = null;
    for (const [k, message] of Object.entries(resolved.errors)) {
      if (isField(k)) fieldErrors.push([k, message]);
      else general = general ? `${general} ${message}` : message;
    }
    return { kind: 'unresolved', fieldErrors, message: general ?? 'Fix the marked field to run this scenario.' };
  }
  const rs = resolved.scenario;
  const fit = fitCheck(data.workload, rs.params);
  if (fit.tooLong === fit.total) {
    const message = `No call fits in a KV cache of ${formatCount(rs.params.capacityTokens)} tokens: the shortest needs ${formatCount(fit.shortestTokens)} (prompt + output). Choose more memory, a smaller model or a larger capacity.`;
    return { kind: 'no-fit', message, capacityField: scenario.capacityTyped };
  }
  // As the CLI notes it: calls longer than the whole cache are rejected, and left out of the hit rates.
  const fitNote =
    fit.tooLong === 0
      ? null
      : `${fit.tooLong} of ${fit.total} ${blockTrace ? 'requests' : 'calls'} need more than the whole KV cache of ${formatCount(rs.params.capacityTokens)} tokens: they are rejected (vLLM cannot schedule a request longer than its cache) and left out of the hit rates.`;
  const spec: ScenarioOptions = { params: rs.params, replicas: rs.replicas, session: data.sessionId };
  const unavailable: ScenarioPlan['unavailable'] = [];
  const others = POLICY_CHOICES.filter((c) => c.id !== scenario.policy).flatMap((c) => {
    const r = resolveScenario(scenario, { ...options, policy: c.id });
    if (!r.ok) unavailable.push({ policy: c.id, reason: Object.values(r.errors)[0] ?? 'cannot run here' });
    return r.ok
      ? [{ policy: c.id, spec: { params: r.scenario.params, replicas: r.scenario.replicas, session: data.sessionId } }]
      : [];
  });
  const axis = blockTrace ? 'capacity' : scenario.sweepAxis;
  const values = sweepValues(axis, rs.params.capacityTokens, rs.params.blockSizeTokens);
  const norm = (s: ScenarioOptions): ScenarioOptions =>
    axis === 'replicas'
      ? { ...s, replicas: s.replicas ? { ...s.replicas, replicas: 1 } : null }
      : { ...s, params: { ...s.params, capacityTokens: 0 } };
  return {
    kind: 'run',
    resolved: rs,
    fitNote,
    scenario: {
      key: JSON.stringify({ spec, others }),
      spec,
      others,
      alone: rs.replicas !== null && rs.replicas.replicas > 1,
      unavailable,
    },
    sweep: {
      key: JSON.stringify({ axis, values, base: norm(spec), lines: others.map((o) => ({ ...o, spec: norm(o.spec) })) }),
      request: {
        axis,
        values,
        base: spec,
        threshold: DEFAULT_CLIFF.hitRateDropThreshold,
        pointsAfterCliff: POINTS_AFTER_CLIFF,
        budgetMs: SWEEP_BUDGET_MS,
        lines: others,
      },
    },
  };
}

/** The run record of a scenario job just started. */
export function newScenarioRun(
  seq: number,
  plan: ScenarioPlan,
  scenario: Scenario,
  resolved: ResolvedScenario,
): ScenarioRun {
  const policies: ScenarioRun['policies'] = new Map(plan.unavailable.map((u) => [u.policy, { error: u.reason }]));
  return {
    seq,
    compareSeq: -1,
    others: plan.others,
    compareStatus: 'running',
    key: plan.key,
    spec: plan.spec,
    result: null,
    alone: null,
    policies,
    status: 'running',
    error: null,
    ms: null,
    scenario,
    resolved,
  };
}

/** The run record of a sweep job just started. */
export function newSweepRun(seq: number, plan: SweepPlan, scenario: Scenario, resolved: ResolvedScenario): SweepRun {
  const { axis, values } = plan.request;
  return {
    seq,
    key: plan.key,
    axis,
    values,
    main: [],
    lines: new Map(),
    lineErrors: new Map(),
    cliff: null,
    run: [],
    skipped: [],
    stoppedBy: null,
    done: 0,
    total: values.length,
    status: 'running',
    error: null,
    ms: null,
    scenario,
    resolved,
  };
}

/** What a worker message changed, for the view to act on. */
export interface RunEffects {
  /** Something on screen changed: draw. False for messages of superseded runs. */
  changed: boolean;
  /** The scenario's result arrived: the figures are current again. */
  resultArrived: boolean;
  /** Its first result: start the policy comparison (`runs.scenario.others`). */
  startCompare: boolean;
  /** The scenario run ended in an error. */
  scenarioFailed: boolean;
}

const NOTHING: RunEffects = { changed: false, resultArrived: false, startCompare: false, scenarioFailed: false };

/**
 * Folds a worker message into the runs (in place: the run records are the view's state)
 * and says what it changed. Messages of runs that are no longer the latest are dropped.
 */
export function reduceWorkerMessage(runs: WhatIfRuns, m: FromWorker): RunEffects {
  const sr = runs.scenario;
  const sw = runs.sweep;
  const changed: RunEffects = { ...NOTHING, changed: true };
  switch (m.type) {
    case 'scenario/result': {
      if (!sr || sr.seq !== m.seq) return NOTHING;
      const startCompare = sr.compareSeq < 0;
      sr.result = m.result;
      sr.ms = m.ms;
      sr.policies.set(sr.scenario.policy, { result: pointOf(m.result) });
      if (m.result.replicas === 1 || !sr.resolved.replicas) sr.alone = pointOf(m.result);
      return { ...changed, resultArrived: true, startCompare };
    }
    case 'scenario/alone':
      if (!sr || sr.seq !== m.seq) return NOTHING;
      sr.alone = m.result;
      return changed;
    case 'scenario/policy':
      if (!sr || sr.compareSeq !== m.seq) return NOTHING;
      sr.policies.set(m.policy, m.result ? { result: m.result } : { error: m.error ?? 'failed' });
      return changed;
    case 'sweep/point': {
      if (!sw || sw.seq !== m.seq) return NOTHING;
      if (m.line === null) sw.main.push({ value: m.value, result: m.result });
      else {
        const line = sw.lines.get(m.line) ?? [];
        line.push({ value: m.value, result: m.result });
        sw.lines.set(m.line, line);
      }
      sw.done = m.done;
      sw.total = m.total;
      return changed;
    }
    case 'sweep/cliff':
      if (!sw || sw.seq !== m.seq) return NOTHING;
      sw.cliff = m.cliff;
      sw.run = m.run;
      sw.skipped = m.skipped;
      sw.stoppedBy = m.stoppedBy;
      sw.ms = m.ms;
      return changed;
    case 'sweep/lineError':
      if (!sw || sw.seq !== m.seq) return NOTHING;
      sw.lineErrors.set(m.line, m.error);
      return changed;
    case 'done':
      if (m.job === 'scenario' && sr?.seq === m.seq) sr.status = 'done';
      if (m.job === 'compare' && sr?.compareSeq === m.seq) sr.compareStatus = 'done';
      if (m.job === 'sweep' && sw?.seq === m.seq) sw.status = 'done';
      return changed;
    case 'error':
      return { ...reduceLaneFailure(runs, m.job, m.seq, m.message), changed: true };
  }
}

/** A lane's job failed (its worker reported an error, could not start, or died). */
export function reduceLaneFailure(runs: WhatIfRuns, lane: LaneName, seq: number, error: string): RunEffects {
  const sr = runs.scenario;
  const sw = runs.sweep;
  let scenarioFailed = false;
  if (lane === 'scenario' && sr?.seq === seq) {
    sr.status = 'error';
    sr.error = error;
    scenarioFailed = true;
  }
  if (lane === 'compare' && sr?.compareSeq === seq) sr.compareStatus = 'error';
  if (lane === 'sweep' && sw?.seq === seq) {
    sw.status = 'error';
    sw.error = error;
  }
  return { ...NOTHING, changed: true, scenarioFailed };
}
