import { PARAM_BOUNDS } from './bounds';
import type { EngineParams } from './params';

/**
 * Fits the simulator's step-time model to requests measured on a real server.
 *
 * The model (docs/design/simulator.md §5) prices one engine step as
 *   stepFixedMs + prefill tokens × prefillUsPerToken + Σ decode context × kvReadNsPerToken
 *   + decodes × decodeUsPerSeq.
 * A benchmark client sees no steps, only when each request was sent and when each of its
 * tokens arrived. Every running request samples one token per step, so the tokens that
 * arrive together mark the ends of the steps; what each step held is then read off the
 * tokens: a request's k-th token after the first was a decode over its prompt + k − 1
 * tokens, its first token ended its prefill. Prefill chunks that end no request are placed
 * the way vLLM's scheduler places them (running decodes first, then waiting prompts in
 * arrival order, up to the step's token budget). Each reconstructed interval between two
 * token arrivals is one row of a non-negative least-squares fit.
 */

/** One request as a benchmark client measured it; times in milliseconds on the client's clock. */
export interface MeasuredRequest {
  /** When the request was sent. */
  startMs: number;
  /** Time to the first token. */
  ttftMs: number;
  /** The gaps between later tokens (one per token after the first), or null when only the total is known. */
  itlsMs: readonly number[] | null;
  /** From sending to the last token (used when `itlsMs` is null). */
  latencyMs: number | null;
  inputTokens: number;
  /** Prompt tokens the server found in its prefix cache (null: not reported, taken as 0). */
  cachedTokens: number | null;
  outputTokens: number;
  /** Where the request is in the results (a 1-based line or index), for the residual table. */
  label: string;
}

/** The four step-time constants, in the simulator's units. */
export interface StepModel {
  stepFixedMs: number;
  prefillUsPerToken: number;
  kvReadNsPerToken: number;
  decodeUsPerSeq: number;
}

/** The step-model keys in the order of the fit's columns. */
export const STEP_MODEL_KEYS = ['stepFixedMs', 'prefillUsPerToken', 'kvReadNsPerToken', 'decodeUsPerSeq'] as const;
type StepKey = (typeof STEP_MODEL_KEYS)[number];

/** Milliseconds per unit of each constant's column (µs → 1e-3 ms, ns → 1e-6 ms). */
const MS_PER_UNIT: Record<StepKey, number> = {
  stepFixedMs: 1,
  prefillUsPerToken: 1e-3,
  kvReadNsPerToken: 1e-6,
  decodeUsPerSeq: 1e-3,
};

/** One interval between token arrivals, as the fit sees it. */
export interface StepRow {
  /** Start and end of the interval, ms from the first request's start. */
  startMs: number;
  endMs: number;
  measuredMs: number;
  /** Engine steps in the interval (more than one only when prompts were prefilled with nothing decoding). */
  steps: number;
  prefillTokens: number;
  /** Σ over the decodes of the context each read. */
  kvTokens: number;
  decodes: number;
  /** Requests whose first token ended the interval (their labels). */
  firstTokens: string[];
  fittedMs: number;
}

/** The fit and how well it explains the measurements. */
export interface Calibration {
  model: StepModel;
  /** Constants the data could not tell apart from the others (held at 0, with the reason). */
  notIdentified: Array<{ key: StepKey; reason: string }>;
  requests: number;
  rows: number;
  /** Root-mean-square of the residuals, ms. */
  rmsErrorMs: number;
  /** Median of |fitted − measured| / measured over the rows. */
  medianAbsRelError: number;
  /** Share of the rows' variance the fit explains. */
  rSquared: number;
  /** Every row, the worst residual first. */
  residuals: StepRow[];
  notes: string[];
}

/** How the intervals are read off the token arrivals. */
export interface CalibrateOptions {
  /** The engine's token budget per step (vLLM `--max-num-batched-tokens`); Infinity: every prompt in one step. */
  maxBatchedTokens: number;
  /** Token arrivals closer than this are one step's end (client-side jitter), ms. */
  toleranceMs: number;
}

/** Defaults: prompts prefilled in one step, arrivals within 0.5 ms taken as one step's end. */
export const DEFAULT_CALIBRATE_OPTIONS: CalibrateOptions = {
  maxBatchedTokens: Number.POSITIVE_INFINITY,
  toleranceMs: 0.5,
};

interface Arrival {
  t: number;
  request: number;
  /** 0: the first token; k ≥ 1: the (k+1)-th. */
  k: number;
}

/** Every request's token arrival times, ms from `origin`; notes what had to be assumed. */
function tokenTimes(requests: readonly MeasuredRequest[], origin: number, notes: string[]): number[][] {
  let spread = 0;
  const times = requests.map((r) => {
    const first = r.startMs - origin + r.ttftMs;
    const out = [first];
    const gaps = r.itlsMs;
    if (gaps && gaps.length === r.outputTokens - 1) {
      let t = first;
      for (const g of gaps) out.push((t += g));
      return out;
    }
    if (r.outputTokens > 1 && r.latencyMs !== null) {
      // Only the total is known (or the stream's chunks are not its tokens): the tokens are spread evenly.
      spread += 1;
      const gap = (r.latencyMs - r.ttftMs) / (r.outputTokens - 1);
      for (let k = 1; k < r.outputTokens; k++) out.push(first + k * gap);
    }
    return out;
  });
  if (spread > 0)
    notes.push(
      `${spread} request(s) without one gap per token: their tokens are spread evenly between the first and the last, so their steps are approximate.`,
    );
  return times;
}

/** Reads the engine's intervals off the token arrivals (see the module comment). */
export function reconstructSteps(
  requests: readonly MeasuredRequest[],
  options: CalibrateOptions = DEFAULT_CALIBRATE_OPTIONS,
  notes: string[] = [],
  estimate: StepModel | null = null,
): StepRow[] {
  if (requests.length === 0) return [];
  const origin = Math.min(...requests.map((r) => r.startMs));
  const times = tokenTimes(requests, origin, notes);
  const arrivals: Arrival[] = [];
  times.forEach((ts, request) => ts.forEach((t, k) => arrivals.push({ t, request, k })));
  arrivals.sort((a, b) => a.t - b.t || a.request - b.request);
  const sent = requests.map((r) => r.startMs - origin);
  const remaining = requests.map((r) => Math.max(0, r.inputTokens - (r.cachedTokens ?? 0)));
  const firstDone = requests.map(() => false);
  // Waiting prompts in arrival order: vLLM's scheduler serves them first come, first served.
  const byArrival = requests.map((_, i) => i).sort((a, b) => sent[a]! - sent[b]! || a - b);
  // The requests sent by a time and still without their first token, in arrival order: a scan over them,
  // not over every request, keeps a run of thousands of requests linear.
  const pending: number[] = [];
  let nextSend = 0;
  const sendUpTo = (t: number): void => {
    while (nextSend < byArrival.length && sent[byArrival[nextSend]!]! <= t) pending.push(byArrival[nextSend++]!);
  };
  const rows: StepRow[] = [];
  let prevEnd = 0;
  let budgetBroken = 0;
  for (let i = 0; i < arrivals.length; ) {
    const t0 = arrivals[i]!.t;
    const group: Arrival[] = [];
    // One step samples at most one token per request: a second token of a request already here ends another step.
    while (
      i < arrivals.length &&
      arrivals[i]!.t - t0 <= options.toleranceMs &&
      !group.some((a) => a.request === arrivals[i]!.request)
    )
      group.push(arrivals[i++]!);
    const end = t0;
    const decodes = group.filter((a) => a.k >= 1);
    const firsts = group.filter((a) => a.k === 0).map((a) => a.request);
    const kvTokens = decodes.reduce((sum, a) => sum + requests[a.request]!.inputTokens + a.k - 1, 0);
    // The interval starts at the previous step's end, or, when the engine had nothing to do then, at the next send.
    sendUpTo(prevEnd);
    let start = prevEnd;
    if (decodes.length === 0 && !pending.some((r) => remaining[r]! > 0 || firsts.includes(r))) {
      const next = byArrival[nextSend];
      start = next === undefined ? prevEnd : Math.max(prevEnd, sent[next]!);
    }
    // Place prefill chunks step by step until every prompt whose first token ends the interval is done.
    let steps = 0;
    let prefillTokens = 0;
    let stepStart = start;
    const due = (): boolean => firsts.some((r) => remaining[r]! > 0);
    do {
      let budget = options.maxBatchedTokens - decodes.length;
      let chunk = 0;
      sendUpTo(stepStart);
      for (const r of pending) {
        if (budget <= 0) break;
        if (remaining[r]! === 0) continue;
        const take = Math.min(remaining[r]!, budget);
        remaining[r]! -= take;
        budget -= take;
        chunk += take;
      }
      // A prefill-only step with nothing to prefill is the engine idle: the prompts due were not sent yet.
      if (chunk === 0 && decodes.length === 0 && steps > 0) break;
      prefillTokens += chunk;
      steps += 1;
      // No token marks where a prefill-only step ends: the estimate says, so that a prompt sent meanwhile joins the next.
      if (estimate)
        stepStart += estimate.stepFixedMs + chunk * estimate.prefillUsPerToken * MS_PER_UNIT.prefillUsPerToken;
    } while (decodes.length === 0 && due() && steps < 100_000);
    if (due()) {
      // The client saw a first token sooner than the budget allows: the rest of that prompt is put in this interval.
      budgetBroken += 1;
      for (const r of firsts) {
        prefillTokens += remaining[r]!;
        remaining[r] = 0;
      }
    }
    for (const r of firsts) firstDone[r] = true;
    if (firsts.length > 0) pending.splice(0, pending.length, ...pending.filter((r) => !firstDone[r]));
    rows.push({
      startMs: start,
      endMs: end,
      measuredMs: end - start,
      steps,
      prefillTokens,
      kvTokens,
      decodes: decodes.length,
      firstTokens: firsts.map((r) => requests[r]!.label),
      fittedMs: Number.NaN,
    });
    prevEnd = end;
  }
  if (budgetBroken > 0)
    notes.push(
      `${budgetBroken} interval(s) ended a prompt sooner than a budget of ${options.maxBatchedTokens} tokens per step allows: check --max-batched-tokens.`,
    );
  return rows;
}

/** A row's columns: how many ms each constant's unit adds to it. */
function columns(row: StepRow): number[] {
  return [
    row.steps * MS_PER_UNIT.stepFixedMs,
    row.prefillTokens * MS_PER_UNIT.prefillUsPerToken,
    row.kvTokens * MS_PER_UNIT.kvReadNsPerToken,
    row.decodes * MS_PER_UNIT.decodeUsPerSeq,
  ];
}

/** Solves the normal equations over the chosen columns; null when they are (nearly) dependent. */
function leastSquares(x: readonly number[][], y: readonly number[], use: readonly number[]): number[] | null {
  const n = use.length;
  // Scale each column to unit RMS so that ms, µs and ns columns are conditioned alike.
  const scale = use.map((j) => Math.sqrt(x.reduce((s, row) => s + row[j]! * row[j]!, 0) / x.length) || 0);
  if (scale.some((s) => s === 0)) return null;
  const a = use.map(() => use.map(() => 0));
  const b = use.map(() => 0);
  x.forEach((row, i) => {
    for (let p = 0; p < n; p++) {
      const xp = row[use[p]!]! / scale[p]!;
      b[p]! += xp * y[i]!;
      for (let q = 0; q < n; q++) a[p]![q]! += xp * (row[use[q]!]! / scale[q]!);
    }
  });
  // Gauss–Jordan with partial pivoting; a tiny pivot means a column the others already explain.
  const diag = Math.max(...a.map((r, p) => r[p]!));
  for (let c = 0; c < n; c++) {
    let pivot = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[pivot]![c]!)) pivot = r;
    if (Math.abs(a[pivot]![c]!) <= 1e-10 * diag) return null;
    [a[c], a[pivot]] = [a[pivot]!, a[c]!];
    [b[c], b[pivot]] = [b[pivot]!, b[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = a[r]![c]! / a[c]![c]!;
      for (let q = c; q < n; q++) a[r]![q]! -= f * a[c]![q]!;
      b[r]! -= f * b[c]!;
    }
  }
  return use.map((_, p) => b[p]! / a[p]![p]! / scale[p]!);
}

/** A constant is fitted only when it lowers the squared error by more than this share. */
const TIE = 1e-3;

/** Fits the step model to reconstructed rows: the best non-negative fit over every subset of the four constants. */
export function fitStepModel(rows: readonly StepRow[]): {
  model: StepModel;
  notIdentified: Calibration['notIdentified'];
} {
  const x = rows.map(columns);
  const y = rows.map((r) => r.measuredMs);
  const fits: Array<{ use: number[]; coef: number[]; sse: number }> = [];
  // Four constants: all 15 subsets is exact non-negative least squares, no iteration to trust.
  for (let mask = 1; mask < 16; mask++) {
    const use = [0, 1, 2, 3].filter((j) => mask & (1 << j));
    const coef = leastSquares(x, y, use);
    if (!coef || coef.some((c) => c < 0)) continue;
    const sse = x.reduce((s, row, i) => {
      const e = use.reduce((f, j, p) => f + row[j]! * coef[p]!, 0) - y[i]!;
      return s + e * e;
    }, 0);
    fits.push({ use, coef, sse });
  }
  // Constants the data can hardly tell apart (every prompt the same length, one request per step) would
  // otherwise share the time at random: the simplest set that fits within TIE of the best wins, a set
  // with the fixed cost before one without (a cost the data cannot place is counted as fixed).
  const lowest = Math.min(...fits.map((f) => f.sse));
  fits.sort((a, b) => Number(b.use.includes(0)) - Number(a.use.includes(0)) || a.use.length - b.use.length);
  const best = fits.find((f) => f.sse <= lowest * (1 + TIE) + 1e-12) ?? null;
  const model: StepModel = { stepFixedMs: 0, prefillUsPerToken: 0, kvReadNsPerToken: 0, decodeUsPerSeq: 0 };
  const notIdentified: Calibration['notIdentified'] = [];
  best?.use.forEach((j, p) => (model[STEP_MODEL_KEYS[j]!] = best!.coef[p]!));
  for (let j = 0; j < 4; j++) {
    if (best?.use.includes(j)) continue;
    const key = STEP_MODEL_KEYS[j]!;
    const seen = x.some((row) => row[j]! !== 0);
    const constantPerStep = j === 3 && rows.every((r) => r.decodes === (r.decodes > 0 ? r.steps : 0));
    notIdentified.push({
      key,
      reason: !seen
        ? 'no measured step had any'
        : constantPerStep && rows.every((r) => r.decodes <= 1)
          ? 'every step decoded at most one request: its cost is counted in stepFixedMs'
          : `fitting it lowers the error by less than ${TIE * 100}% (its best value is 0, or the others already explain it)`,
    });
  }
  return { model, notIdentified };
}

/** The model's time for one row, ms. */
export function stepTimeMs(model: StepModel, row: StepRow): number {
  const c = columns(row);
  return STEP_MODEL_KEYS.reduce((s, key, j) => s + c[j]! * model[key], 0);
}

/** At most this many rounds of reconstruct-then-fit. */
const MAX_ROUNDS = 12;

/** Reconstructs the steps of measured requests, fits the step model and says how well it fits. */
export function calibrate(
  requests: readonly MeasuredRequest[],
  options: CalibrateOptions = DEFAULT_CALIBRATE_OPTIONS,
): Calibration {
  const notes: string[] = [];
  const withTokens = requests.filter((r) => r.outputTokens > 0);
  if (withTokens.length < requests.length)
    notes.push(`${requests.length - withTokens.length} request(s) without an output token (failed) are left out.`);
  if (withTokens.some((r) => r.cachedTokens === null))
    notes.push(
      'The results do not say how much of each prompt the server found cached: every prompt is taken as prefilled in full.',
    );
  // Where prefill-only steps end is not measured: each fit's step times place them for the next, until the fit settles.
  let estimate: StepModel | null = null;
  let rows: StepRow[] = [];
  let fit: ReturnType<typeof fitStepModel> | null = null;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const roundNotes: string[] = [];
    rows = reconstructSteps(withTokens, options, roundNotes, estimate).filter((r) => r.measuredMs > 0);
    const next = fitStepModel(rows);
    const settled =
      estimate !== null &&
      STEP_MODEL_KEYS.every((k) => Math.abs(next.model[k] - estimate![k]) <= 1e-9 * (1 + Math.abs(next.model[k])));
    fit = next;
    estimate = next.model;
    if (settled || round === MAX_ROUNDS - 1) {
      notes.push(...roundNotes);
      break;
    }
  }
  const { model, notIdentified } = fit!;
  for (const row of rows) row.fittedMs = stepTimeMs(model, row);
  const residual = (r: StepRow): number => r.fittedMs - r.measuredMs;
  const mean = rows.reduce((s, r) => s + r.measuredMs, 0) / (rows.length || 1);
  const sse = rows.reduce((s, r) => s + residual(r) ** 2, 0);
  const sst = rows.reduce((s, r) => s + (r.measuredMs - mean) ** 2, 0);
  const rel = rows.map((r) => Math.abs(residual(r)) / r.measuredMs).sort((a, b) => a - b);
  const mid = rel.length >> 1;
  return {
    model,
    notIdentified,
    requests: withTokens.length,
    rows: rows.length,
    rmsErrorMs: Math.sqrt(sse / (rows.length || 1)),
    medianAbsRelError: rel.length === 0 ? 0 : rel.length % 2 ? rel[mid]! : (rel[mid - 1]! + rel[mid]!) / 2,
    rSquared: sst > 0 ? 1 - sse / sst : 1,
    residuals: [...rows].sort((a, b) => Math.abs(residual(b)) - Math.abs(residual(a))),
    notes,
  };
}

/** The engine parameters with a calibration's step constants in place of the preset's. */
export function withCalibration(params: EngineParams, model: StepModel): EngineParams {
  return { ...params, ...model };
}

/** Nanoseconds per unit of each constant. */
const NS_PER_UNIT: Record<StepKey, number> = {
  stepFixedMs: 1e6,
  prefillUsPerToken: 1e3,
  kvReadNsPerToken: 1,
  decodeUsPerSeq: 1e3,
};

/**
 * A fit's constants rounded to whole nanoseconds, as the simulate flags carry them: the
 * engines charge each cost to the nanosecond, and the panel and `simulate --calibration`
 * must run the very same numbers.
 */
export function roundedStepModel(model: StepModel): StepModel {
  const round = (key: StepKey): number => Math.round(model[key] * NS_PER_UNIT[key]) / NS_PER_UNIT[key];
  return {
    stepFixedMs: round('stepFixedMs'),
    prefillUsPerToken: round('prefillUsPerToken'),
    kvReadNsPerToken: round('kvReadNsPerToken'),
    decodeUsPerSeq: round('decodeUsPerSeq'),
  };
}

/** A calibration file's fit as the what-if uses it: the constants (rounded) and how well they fitted. */
export interface CalibrationFit {
  model: StepModel;
  /** Requests fitted, when the file says. */
  requests: number | null;
  /** Median |fitted − measured| / measured, when the file says. */
  medianAbsRelError: number | null;
  rSquared: number | null;
}

/**
 * Reads a calibration file's JSON (`calibrate --json` or `-o`), which may come from
 * anywhere: each constant must be a finite number within the engine's bounds; the fit's
 * figures are kept only when they are plausible numbers. The error says what was missing.
 */
export function readCalibrationDocument(
  doc: unknown,
): { ok: true; fit: CalibrationFit } | { ok: false; error: string } {
  const model = typeof doc === 'object' && doc !== null ? (doc as { model?: unknown }).model : undefined;
  const raw = typeof model === 'object' && model !== null ? (model as Record<string, unknown>) : {};
  const fit: Partial<StepModel> = {};
  for (const key of STEP_MODEL_KEYS) {
    const v = raw[key];
    const bound = PARAM_BOUNDS[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < bound.min || v > bound.max)
      return {
        ok: false,
        error: `not a calibration (no "model.${key}" from ${bound.min} to ${bound.max.toLocaleString('en-US')}); make one with agent-trace calibrate RESULTS -o FILE`,
      };
    fit[key] = v;
  }
  const figure = (key: string, max: number): number | null => {
    const v = (doc as Record<string, unknown>)[key];
    return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= max ? v : null;
  };
  const requests = figure('requests', Number.MAX_SAFE_INTEGER);
  return {
    ok: true,
    fit: {
      model: roundedStepModel(fit as StepModel),
      requests: requests !== null && Number.isInteger(requests) ? requests : null,
      medianAbsRelError: figure('medianAbsRelError', 1e9),
      rSquared: (() => {
        const v = (doc as Record<string, unknown>)['rSquared'];
        return typeof v === 'number' && Number.isFinite(v) && v <= 1 && v >= -1e9 ? v : null;
      })(),
    },
  };
}
