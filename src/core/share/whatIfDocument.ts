import { DEFAULT_PARAMS, describeBound, ParamError, REPLICA_BOUNDS, validateParams, withinBound } from '../sim/params';
import { POLICY_NAMES } from '../sim/policies';
import type { ParamBound } from '../sim/params';
import type { EngineParams } from '../sim/params';
import type { ScenarioCall, ScenarioGpu, ScenarioResult } from '../sim/scenario';
import type { Cliff, SweepAxis } from '../sim/sweep';
import { MAX_GPUS, ROUTER_NAMES } from '../sim/fleet/routers';
import type { RouterName } from '../sim/fleet/routers';

/**
 * A what-if scenario and its results as the what-if panel saves them ("Export JSON") and
 * hands them to the HTML report: the scenario's figures, the session alone, every policy
 * on the same scenario, and the sweep with its cliff. Everything in it came from the
 * webview, so the host and the CLI read it with `parseWhatIfDocument`, which keeps only
 * fields of the expected types (numbers finite, strings strings) and refuses the rest.
 */

/** A scenario's figures without its per-call and per-session lists (a sweep point). */
export type WhatIfPoint = Omit<ScenarioResult, 'calls' | 'sessions' | 'perGpu'>;

export interface WhatIfDocument {
  /** The `agent-trace simulate` command that reproduces it. */
  command: string | null;
  /** The panel's sentence over the results ("16 sessions like this on one H200 …"). */
  sentence: string | null;
  input: {
    file: string | null;
    session: string | null;
    workloadKind: 'sessions' | 'requests';
    notes: string[];
    gpu: string | null;
    model: string | null;
    replicas: { replicas: number; staggerS: number; staggerMode: string; toolWaitScale: number } | null;
    params: {
      capacityTokens: number;
      blockSizeTokens: number;
      policy: string;
      gpus: number;
      router: RouterName | null;
    };
  };
  scenario: ScenarioResult;
  alone: WhatIfPoint | null;
  /** For an agent session: the index in the session's calls of each scenario call. */
  callIndexes: number[];
  policies: Array<{ policy: string; result: WhatIfPoint | null; error: string | null }>;
  sweep: {
    axis: SweepAxis;
    points: Array<{ value: number; result: WhatIfPoint }>;
    lines: Record<string, Array<{ value: number; result: WhatIfPoint }>>;
    cliff: Cliff | null;
    skipped: number[];
    stoppedBy: 'cliff' | 'budget' | null;
  } | null;
}

export class WhatIfDocumentError extends Error {}

type Json = Record<string, unknown>;

function fail(path: string, want: string): never {
  throw new WhatIfDocumentError(`${path} should be ${want}`);
}

function object(v: unknown, path: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(path, 'an object');
  return v as Json;
}

function array(v: unknown, path: string, max = 1_000_000): unknown[] {
  if (!Array.isArray(v)) fail(path, 'an array');
  if (v.length > max) fail(path, `at most ${max} items long`);
  return v;
}

function number(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(path, 'a finite number');
  return v;
}

function bounded(v: unknown, path: string, bound: ParamBound): number {
  if (!withinBound(v, bound)) fail(path, describeBound(bound));
  return v;
}

/** A call's index in its session: a whole number. */
function index(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 2 ** 31)
    fail(path, 'a whole number from 0 to 2^31');
  return v;
}

function numberOrNull(v: unknown, path: string): number | null {
  return v === null || v === undefined ? null : number(v, path);
}

function stringOrNull(v: unknown, path: string, max = 100_000): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') fail(path, 'a string');
  return v.length > max ? v.slice(0, max) : v;
}

function bool(v: unknown, path: string): boolean {
  if (typeof v !== 'boolean') fail(path, 'true or false');
  return v;
}

const POINT_NUMBERS = [
  'replicas',
  'capacityTokens',
  'requests',
  'rejectedRequests',
  'promptTokens',
  'prefillTokens',
  'recomputedPrefillTokens',
  'offloadHitTokens',
  'preemptions',
  'makespanS',
  'steps',
] as const;
const POINT_RATES = ['admissionHitRate', 'idealHitRate', 'vllmMetricHitRate', 'prefillShare'] as const;

function gpuCount(v: unknown, path: string): number {
  const n = number(v, path);
  if (!Number.isInteger(n) || n < 1 || n > MAX_GPUS) fail(path, `a whole number from 1 to ${MAX_GPUS}`);
  return n;
}

function router(v: unknown, path: string): RouterName {
  if (typeof v !== 'string' || !(ROUTER_NAMES as readonly string[]).includes(v))
    fail(path, `one of ${ROUTER_NAMES.join(', ')}`);
  return v as RouterName;
}

const GPU_NUMBERS = [
  'gpu',
  'requests',
  'sessions',
  'promptTokens',
  'recomputedPrefillTokens',
  'preemptions',
  'steps',
  'busyS',
  'makespanS',
] as const;
const GPU_RATES = ['admissionHitRate', 'idealHitRate', 'prefillShare', 'utilization'] as const;

function gpuRow(v: unknown, path: string): ScenarioGpu {
  const o = object(v, path);
  const out: Record<string, unknown> = {};
  for (const k of GPU_NUMBERS) out[k] = number(o[k], `${path}.${k}`);
  for (const k of GPU_RATES) out[k] = numberOrNull(o[k], `${path}.${k}`);
  return out as unknown as ScenarioGpu;
}

function point(v: unknown, path: string): WhatIfPoint {
  const o = object(v, path);
  const out: Record<string, unknown> = { policy: stringOrNull(o['policy'], `${path}.policy`, 40) ?? '' };
  for (const k of POINT_NUMBERS) out[k] = number(o[k], `${path}.${k}`);
  for (const k of POINT_RATES) out[k] = numberOrNull(o[k], `${path}.${k}`);
  const slowdown = object(o['slowdown'], `${path}.slowdown`);
  out['slowdown'] = {
    mean: numberOrNull(slowdown['mean'], `${path}.slowdown.mean`),
    max: numberOrNull(slowdown['max'], `${path}.slowdown.max`),
  };
  if (o['gpus'] !== undefined && o['gpus'] !== null) {
    out['gpus'] = gpuCount(o['gpus'], `${path}.gpus`);
    out['router'] = router(o['router'], `${path}.router`);
  }
  return out as unknown as WhatIfPoint;
}

function call(v: unknown, path: string): ScenarioCall {
  const o = object(v, path);
  return {
    callIndex: index(o['callIndex'], `${path}.callIndex`),
    promptTokens: number(o['promptTokens'], `${path}.promptTokens`),
    outputTokens: number(o['outputTokens'], `${path}.outputTokens`),
    hitTokens: number(o['hitTokens'], `${path}.hitTokens`),
    idealHitTokens: number(o['idealHitTokens'], `${path}.idealHitTokens`),
    prefillTokens: number(o['prefillTokens'], `${path}.prefillTokens`),
    recomputedTokens: number(o['recomputedTokens'], `${path}.recomputedTokens`),
    offloadHitTokens: number(o['offloadHitTokens'] ?? 0, `${path}.offloadHitTokens`),
    waitedS: numberOrNull(o['waitedS'], `${path}.waitedS`),
    latencyS: numberOrNull(o['latencyS'], `${path}.latencyS`),
    preemptions: number(o['preemptions'], `${path}.preemptions`),
    rejected: bool(o['rejected'], `${path}.rejected`),
    ...(o['gpu'] !== undefined ? { gpu: numberOrNull(o['gpu'], `${path}.gpu`) } : {}),
  };
}

function scenario(v: unknown, path: string): ScenarioResult {
  const o = object(v, path);
  const sessions = array(o['sessions'] ?? [], `${path}.sessions`).map((s, i) => {
    const x = object(s, `${path}.sessions[${i}]`);
    return {
      id: stringOrNull(x['id'], `${path}.sessions[${i}].id`, 1000) ?? '',
      completionS: numberOrNull(x['completionS'], `${path}.sessions[${i}].completionS`),
      aloneS: numberOrNull(x['aloneS'], `${path}.sessions[${i}].aloneS`),
      slowdown: numberOrNull(x['slowdown'], `${path}.sessions[${i}].slowdown`),
    };
  });
  const perGpu =
    o['perGpu'] === undefined || o['perGpu'] === null
      ? {}
      : { perGpu: array(o['perGpu'], `${path}.perGpu`, MAX_GPUS).map((g, i) => gpuRow(g, `${path}.perGpu[${i}]`)) };
  return {
    ...point(o, path),
    sessions,
    calls: array(o['calls'] ?? [], `${path}.calls`).map((c, i) => call(c, `${path}.calls[${i}]`)),
    ...perGpu,
  };
}

function cliff(v: unknown, path: string): Cliff | null {
  if (v === null || v === undefined) return null;
  const o = object(v, path);
  const axis = o['axis'];
  if (axis !== 'replicas' && axis !== 'capacity' && axis !== 'gpus')
    fail(`${path}.axis`, '"replicas", "capacity" or "gpus"');
  const reason = o['reason'];
  if (reason !== null && reason !== 'hit-rate' && reason !== 'prefill-share')
    fail(`${path}.reason`, '"hit-rate", "prefill-share" or null');
  return {
    axis,
    at: numberOrNull(o['at'], `${path}.at`),
    reason,
    hitRateDropThreshold: number(o['hitRateDropThreshold'], `${path}.hitRateDropThreshold`),
    lastGood: numberOrNull(o['lastGood'], `${path}.lastGood`),
    suggestedAdmissionCap: numberOrNull(o['suggestedAdmissionCap'], `${path}.suggestedAdmissionCap`),
    summary: stringOrNull(o['summary'], `${path}.summary`, 2000) ?? '',
  } as Cliff;
}

function points(v: unknown, path: string): Array<{ value: number; result: WhatIfPoint }> {
  return array(v, path, 10_000).map((p, i) => {
    const o = object(p, `${path}[${i}]`);
    return { value: number(o['value'], `${path}[${i}].value`), result: point(o['result'], `${path}[${i}].result`) };
  });
}

/** The fleet an export's params name: one GPU and no router when it has none. */
function fleetOf(v: unknown): { gpus: number; router: RouterName | null } {
  if (v === null || v === undefined) return { gpus: 1, router: null };
  const f = object(v, 'input.params.fleet');
  return {
    gpus: gpuCount(f['gpus'], 'input.params.fleet.gpus'),
    router: router(f['router'], 'input.params.fleet.router'),
  };
}

/** Reads a what-if document (the panel's export, or what the panel hands the report), keeping only what is well typed. */
export function parseWhatIfDocument(value: unknown): WhatIfDocument {
  const o = object(value, 'what-if');
  const input = object(o['input'], 'input');
  const params = object(input['params'], 'input.params');
  const kind = input['workloadKind'];
  if (kind !== 'sessions' && kind !== 'requests') fail('input.workloadKind', '"sessions" or "requests"');
  let replicas: WhatIfDocument['input']['replicas'] = null;
  if (input['replicas'] !== null && input['replicas'] !== undefined) {
    const r = object(input['replicas'], 'input.replicas');
    // Within the simulator's bounds: the host and the CLI replay this many copies (Compare With Replay Results).
    replicas = {
      replicas: bounded(r['replicas'], 'input.replicas.replicas', REPLICA_BOUNDS.replicas),
      staggerS: bounded(r['staggerS'], 'input.replicas.staggerS', REPLICA_BOUNDS.staggerS),
      staggerMode: stringOrNull(r['staggerMode'], 'input.replicas.staggerMode', 20) ?? 'fixed',
      toolWaitScale: bounded(r['toolWaitScale'] ?? 1, 'input.replicas.toolWaitScale', REPLICA_BOUNDS.toolWaitScale),
    };
  }
  const sweepValue = o['sweep'];
  let sweep: WhatIfDocument['sweep'] = null;
  if (sweepValue !== null && sweepValue !== undefined) {
    const s = object(sweepValue, 'sweep');
    const axis = s['axis'];
    if (axis !== 'replicas' && axis !== 'capacity' && axis !== 'gpus')
      fail('sweep.axis', '"replicas", "capacity" or "gpus"');
    const lines: Record<string, Array<{ value: number; result: WhatIfPoint }>> = Object.create(null);
    for (const [policy, pts] of Object.entries(object(s['lines'] ?? {}, 'sweep.lines')))
      lines[policy.slice(0, 40)] = points(pts, `sweep.lines.${policy}`);
    const stoppedBy = s['stoppedBy'];
    sweep = {
      axis,
      points: points(s['points'], 'sweep.points'),
      lines,
      cliff: cliff(s['cliff'], 'sweep.cliff'),
      skipped: array(s['skipped'] ?? [], 'sweep.skipped', 10_000).map((x, i) => number(x, `sweep.skipped[${i}]`)),
      stoppedBy: stoppedBy === 'cliff' || stoppedBy === 'budget' ? stoppedBy : null,
    };
  }
  return {
    command: stringOrNull(o['command'], 'command', 10_000),
    sentence: stringOrNull(o['sentence'], 'sentence', 2000),
    input: {
      file: stringOrNull(input['file'], 'input.file', 4096),
      session: stringOrNull(input['session'], 'input.session', 1000),
      workloadKind: kind,
      notes: array(input['notes'] ?? [], 'input.notes', 100).map(
        (n, i) => stringOrNull(n, `input.notes[${i}]`, 2000) ?? '',
      ),
      gpu: stringOrNull(input['gpu'], 'input.gpu', 100),
      model: stringOrNull(input['model'], 'input.model', 100),
      replicas,
      params: {
        capacityTokens: number(params['capacityTokens'], 'input.params.capacityTokens'),
        blockSizeTokens: number(params['blockSizeTokens'], 'input.params.blockSizeTokens'),
        policy: stringOrNull(params['policy'], 'input.params.policy', 40) ?? '',
        ...fleetOf(params['fleet']),
      },
    },
    scenario: scenario(o['scenario'], 'scenario'),
    alone: o['alone'] === null || o['alone'] === undefined ? null : point(o['alone'], 'alone'),
    callIndexes: array(o['callIndexes'] ?? [], 'callIndexes').map((x, i) => index(x, `callIndexes[${i}]`)),
    policies: array(o['policies'] ?? [], 'policies', 20).map((p, i) => {
      const x = object(p, `policies[${i}]`);
      return {
        policy: stringOrNull(x['policy'], `policies[${i}].policy`, 40) ?? '',
        result: x['result'] ? point(x['result'], `policies[${i}].result`) : null,
        error: stringOrNull(x['error'], `policies[${i}].error`, 2000),
      };
    }),
    sweep,
  };
}

/** Engine parameters of a what-if export (its `input.params`), each kept only if it has the default's type, then checked (ParamError names a bad one). */
export function whatIfParams(raw: unknown): EngineParams {
  const p = JSON.parse(JSON.stringify(DEFAULT_PARAMS)) as Record<string, unknown>;
  if (typeof raw === 'object' && raw !== null) {
    for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
      // Own keys of the defaults only: `__proto__` or `constructor` from the document must not reach the prototype.
      if (!Object.prototype.hasOwnProperty.call(p, key)) continue;
      const d = p[key];
      if (typeof d === 'number' && typeof value === 'number' && Number.isFinite(value)) p[key] = value;
      else if (typeof d === 'string' && typeof value === 'string') p[key] = value;
      else if (typeof d === 'object' && (value === null || (typeof value === 'object' && !Array.isArray(value))))
        p[key] = value;
    }
    // The fleet is not among the defaults (one GPU has none): taken as its two fields, checked by validateParams.
    const fleet = (raw as Record<string, unknown>)['fleet'];
    if (typeof fleet === 'object' && fleet !== null && !Array.isArray(fleet)) {
      const { gpus, router } = fleet as Record<string, unknown>;
      if (typeof gpus !== 'number' || typeof router !== 'string')
        throw new ParamError('fleet must be { gpus: a number, router: a name }');
      p['fleet'] = { gpus, router };
    }
  }
  const params = p as unknown as EngineParams;
  if (!(POLICY_NAMES as readonly string[]).includes(params.policy))
    throw new ParamError(
      `policy must be one of ${POLICY_NAMES.join(', ')}, got ${JSON.stringify(String(params.policy).slice(0, 40))}`,
    );
  validateParams(params);
  return params;
}
