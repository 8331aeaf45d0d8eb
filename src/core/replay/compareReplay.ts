import { mean, median, quantile, ratio, sum } from '../analysis/stats';
import type { Engine } from '../sim/engines/engineTypes';
import type { EngineParams } from '../sim/params';
import { planWorkload } from '../sim/simRequests';
import { workloadFromSession } from '../sim/workload';
import type { AgentWorkload, WorkloadSession } from '../sim/workload';
import type { LlmCall, TraceModel } from '../trace/model';
import type { ReplayExport, ReplayRequest } from './replayExport';

/**
 * A replay's measured results beside the trace and the simulator's prediction
 * (docs/replay.md, "Reading results back"). Measured: a benchmark's per-request records,
 * read by our own readers (AIPerf's profile_export.jsonl, vllm bench's detailed result).
 * Joined to the export they replayed: AIPerf names each request's conversation (the
 * export's `session_id`) and turn, so the join is exact; vllm bench replays a file's rows
 * in order, so its results join by position. Predicted: the what-if simulator run on the
 * same exported sessions, replicas and stagger, with the what-if's parameters.
 */

/** One exported request with what was measured and predicted for it. */
export interface ComparedCall {
  traceSessionId: string;
  callIndex: number;
  replica: number;
  promptTokens: number;
  /** The traced call's cached tokens (what the agent's provider served). */
  tracedCachedTokens: number | null;
  measured: {
    ttftMs: number | null;
    latencyMs: number | null;
    inputTokens: number | null;
    cachedTokens: number | null;
    failed: boolean;
  } | null;
  predicted: {
    hitTokens: number;
    idealHitTokens: number;
    waitedS: number | null;
    latencyS: number | null;
    ttftS: number | null;
  } | null;
}

export interface Distribution {
  mean: number | null;
  median: number | null;
  p90: number | null;
}

export interface ReplayComparison {
  /** How results were matched: by AIPerf conversation and turn, or by order. */
  join: 'conversation-turn' | 'order';
  calls: ComparedCall[];
  /** Exported requests with a result, and results that match no exported request. */
  matched: number;
  unmatchedResults: number;
  measured: {
    requests: number;
    failed: number;
    ttftMs: Distribution;
    latencyMs: Distribution;
    /** Σ cached / Σ input over the requests whose server reported cached tokens; null when none did. */
    cachedRate: number | null;
    cachedReported: number;
  };
  predicted: {
    /** Over every exported request (the whole simulated run). */
    hitRate: number | null;
    idealHitRate: number | null;
    /** Over the requests with a measured result. */
    ttftMs: Distribution;
    latencyMs: Distribution;
    /** How TTFT was predicted, in words (the engine has no first-token time of its own). */
    ttftBasis: string;
  } | null;
  notes: string[];
}

function distribution(values: Array<number | null>): Distribution {
  const known = values.filter((v): v is number => v !== null && Number.isFinite(v));
  return { mean: mean(known), median: median(known), p90: quantile(known, 0.9) };
}

function resultOf(c: LlmCall): ComparedCall['measured'] {
  // A failed request has no counts (AIPerf) or no timings (vllm bench keeps its input length).
  const failed =
    (c.tokens.input === null && c.tokens.output === null) || (c.server?.ttftMs == null && c.server?.e2eMs == null);
  return {
    ttftMs: c.server?.ttftMs ?? null,
    latencyMs: c.server?.e2eMs ?? null,
    inputTokens: c.tokens.input,
    cachedTokens: c.tokens.cached,
    failed,
  };
}

/**
 * Runs the simulator on the exported sessions as the replay ran them: each traced session
 * with its replicas and stagger, all on one GPU. Returns a prediction per exported request,
 * keyed like the export's requests.
 */
export interface ReplayPrediction {
  byCall: Map<string, NonNullable<ComparedCall['predicted']>>;
  hitRate: number | null;
  idealHitRate: number | null;
}

export function predictReplay(
  model: TraceModel,
  e: ReplayExport,
  params: EngineParams,
  engine: Engine,
  replicas: number,
  staggerS: number,
): ReplayPrediction {
  const sessions = e.sessions.map((id) => model.sessions.find((s) => s.id === id)!).filter((s) => s !== undefined);
  const firsts = sessions.map((s) => {
    const c = s.calls.find((x) => x.tokens.input !== null && x.tokens.output !== null);
    return c ? (c.startMs ?? c.endMs) : null;
  });
  const known = firsts.filter((t): t is number => t !== null);
  const t0 = known.length > 0 ? Math.min(...known) : 0;
  const built = sessions.map((s) => workloadFromSession(s));
  const workload: AgentWorkload = {
    kind: 'sessions',
    sharedPrefixTokens: built[0]?.workload.sharedPrefixTokens ?? 0,
    sessions: built.map(
      (b, i): WorkloadSession => ({
        ...b.workload.sessions[0]!,
        startS: firsts[i] !== null && firsts[i] !== undefined ? (firsts[i]! - t0) / 1000 : 0,
      }),
    ),
  };
  const plan = planWorkload(
    workload,
    params.blockSizeTokens,
    { replicas, staggerS, staggerMode: 'fixed', seed: 1, toolWaitScale: 1 },
    params.policy === 'sglang-lru',
  );
  const outcome = engine(plan, params);
  const out = new Map<string, NonNullable<ComparedCall['predicted']>>();
  // The engine records no first-token time: TTFT is predicted as the queue wait plus the
  // prefill of the tokens the cache did not hold, in steps of the token budget at the step cost.
  const prefillS = (tokens: number): number =>
    (Math.ceil(tokens / params.maxNumBatchedTokens) * params.stepFixedMs + (tokens * params.prefillUsPerToken) / 1000) /
    1000;
  plan.sessions.forEach((ss) => {
    const source = sessions[ss.source]!;
    const calls = source.calls.filter((c) => c.tokens.input !== null && c.tokens.output !== null);
    ss.requests.forEach((id, k) => {
      const r = outcome.records[id]!;
      const waited = r.admittedS === null ? null : r.admittedS - r.arrivalS;
      out.set(`${source.id}\u0000${ss.replica}\u0000${calls[k]!.index}`, {
        hitTokens: r.hitTokens,
        idealHitTokens: r.idealHitTokens,
        waitedS: waited,
        latencyS: r.finishedS === null || r.rejected ? null : r.finishedS - r.arrivalS,
        ttftS: waited === null || r.rejected ? null : waited + prefillS(Math.max(1, r.promptTokens - r.hitTokens)),
      });
    });
  });
  const done = outcome.records.filter((r) => !r.rejected);
  const prompt = sum(done.map((r) => r.promptTokens));
  return {
    byCall: out,
    hitRate: ratio(sum(done.map((r) => r.hitTokens)), prompt),
    idealHitRate: ratio(sum(done.map((r) => r.idealHitTokens)), prompt),
  };
}

const keyOf = (q: ReplayRequest): string => `${q.traceSessionId}\u0000${q.replica}\u0000${q.callIndex}`;

/**
 * Joins results to the export. `recordSessionIds` are the `session_id`s as written in the
 * file (after redaction), one per record, for the AIPerf join.
 */
export function compareReplay(
  source: TraceModel,
  e: ReplayExport,
  recordSessionIds: ReadonlyArray<string | null>,
  results: TraceModel,
  prediction: ReplayPrediction | null,
): ReplayComparison {
  const notes: string[] = [];
  const measured = new Map<number, LlmCall>();
  let unmatched = 0;
  let join: ReplayComparison['join'];
  if (results.format === 'aiperf') {
    join = 'conversation-turn';
    const byTurn = new Map<string, number>();
    e.records.forEach((_, i) => {
      const at = e.recordSession[i];
      const id = recordSessionIds[i];
      if (at && id !== null && id !== undefined) byTurn.set(`${id}\u0000${at.turn}`, e.recordRequest[i]!);
    });
    for (const s of results.sessions) {
      s.calls.forEach((c, turn) => {
        const request = byTurn.get(`${s.id}\u0000${turn}`);
        if (request === undefined) unmatched += 1;
        else measured.set(request, c);
      });
    }
    if (unmatched > 0)
      notes.push(
        `${unmatched} results name a conversation or turn this export does not have (another export, or other --replicas/--session options?).`,
      );
  } else {
    join = 'order';
    const calls = results.sessions.flatMap((s) => s.calls);
    if (e.target === 'aiperf')
      notes.push(
        'These results have no conversation ids: they are joined to the export by order, which holds only for an open-loop replay of the same file (vllm bench serve --dataset-name timed_trace of a mooncake or bailian export).',
      );
    calls.forEach((c, i) => {
      if (i < e.requests.length) measured.set(i, c);
      else unmatched += 1;
    });
    if (calls.length !== e.requests.length)
      notes.push(
        `The results have ${calls.length} requests and the export ${e.requests.length}: joined by order, the first ${Math.min(calls.length, e.requests.length)} only.`,
      );
  }
  const byId = new Map(source.sessions.map((s) => [s.id, s]));
  const compared: ComparedCall[] = e.requests.map((q, i) => {
    const m = measured.get(i);
    return {
      traceSessionId: q.traceSessionId,
      callIndex: q.callIndex,
      replica: q.replica,
      promptTokens: q.promptTokens,
      tracedCachedTokens: byId.get(q.traceSessionId)?.calls[q.callIndex]?.tokens.cached ?? null,
      measured: m ? resultOf(m) : null,
      predicted: prediction?.byCall.get(keyOf(q)) ?? null,
    };
  });
  const got = compared.filter((c) => c.measured !== null);
  const ok = got.filter((c) => !c.measured!.failed);
  const withCached = ok.filter((c) => c.measured!.cachedTokens !== null && c.measured!.inputTokens !== null);
  if (withCached.length === 0 && ok.length > 0)
    notes.push(
      "The results hold no cached-token counts: serve with vLLM's --enable-prompt-tokens-details (and --enable-force-include-usage when streaming) to record the server's prefix-cache hits per request.",
    );
  return {
    join,
    calls: compared,
    matched: got.length,
    unmatchedResults: unmatched,
    measured: {
      requests: got.length,
      failed: got.length - ok.length,
      ttftMs: distribution(ok.map((c) => c.measured!.ttftMs)),
      latencyMs: distribution(ok.map((c) => c.measured!.latencyMs)),
      cachedRate:
        withCached.length === 0
          ? null
          : ratio(
              sum(withCached.map((c) => c.measured!.cachedTokens!)),
              sum(withCached.map((c) => c.measured!.inputTokens!)),
            ),
      cachedReported: withCached.length,
    },
    // Over the same calls as the measured figures, so the two columns compare like with like.
    predicted: prediction
      ? {
          hitRate: prediction.hitRate,
          idealHitRate: prediction.idealHitRate,
          ttftMs: distribution(ok.map((c) => (c.predicted?.ttftS == null ? null : c.predicted.ttftS * 1000))),
          latencyMs: distribution(ok.map((c) => (c.predicted?.latencyS == null ? null : c.predicted.latencyS * 1000))),
          ttftBasis:
            'queue wait + prefill of the uncached tokens at the step cost (the simulator has no first-token time of its own)',
        }
      : null,
    notes,
  };
}
