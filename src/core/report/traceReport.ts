import { priceTrace } from '../cost/callCost';
import type { TraceCost } from '../cost/callCost';
import type { SessionCost } from '../cost/callCost';
import { cacheTtlWhatIf, ttlCallSource } from '../cost/cacheTtlWhatIf';
import type { TtlOption, TtlWhatIf } from '../cost/cacheTtlWhatIf';
import type { CostByKind, CostSummary, PriceBook } from '../cost/costTypes';
import { loopCost } from '../cost/loopCost';
import type { ParsedTrace } from '../trace/parseTrace';
import type { OtherInputs, Severity } from '../trace/model';
import type { MissCause } from '../analysis/cacheMisses';
import type { CompactionCost } from '../analysis/fingerprint';
import { idealTtlCurve, TRACELAB_PUBLISHED } from '../analysis/idealTtlCache';
import type { IdealTtlCurve } from '../analysis/idealTtlCache';
import { countMissCauses, findCacheMisses } from '../analysis/cacheMisses';
import { fingerprint } from '../analysis/fingerprint';
import { findRetryLoopsOnly } from '../analysis/retryLoops';
import { DEFAULT_ANALYSIS_OPTIONS, loopSentence } from '../analysis/sessionAnalysis';
import type { AnalysisOptions } from '../analysis/sessionAnalysis';
import { summarizeSession } from '../analysis/sessionSummary';
import type { TokenTotals, UnattributedTokens } from '../analysis/sessionSummary';

/** A retry loop in the contract: 1-based lines. */
export interface ReportRetryLoop {
  tool: string;
  target: string;
  attempts: number;
  callsSpanned: number;
  escaped: boolean;
  file: string;
  firstLine: number;
  lastLine: number;
  firstError: string | null;
  wastedTokens: number | null;
  carryForwardTokens: number | null;
  /** The same tokens in dollars (null when a call involved is unpriced, or without prices). */
  wastedUsd: number | null;
  carriedForwardUsd: number | null;
}

/** What calls cost (docs/guide/cost.md). Unpriced calls are counted, never added as $0. */
export interface ReportCost {
  /** Σ over priced calls; null when there were calls and none could be priced. */
  totalUsd: number | null;
  byModel: Record<string, { usd: number | null; calls: number; unpricedCalls: number }>;
  /** input, cacheRead, cacheWrite5m, cacheWrite1h, output, gpuTime; null when nothing was priced. */
  byKind: CostByKind | null;
  pricedCalls: number;
  unpricedCalls: number;
  priceSource: string;
}

export interface ReportSessionCost extends ReportCost {
  /** The cost the agent itself reported for the session, when it did. */
  reportedUsd: number | null;
  /** Assumptions made while pricing, with how many calls each concerns. */
  notes: string[];
}

/** The provider's cache TTL, what-if (docs/guide/cost.md). */
export interface ReportCacheTtl {
  ranWithTtlMin: number;
  basis: string;
  actualUsd: number | null;
  sentence: string | null;
  replays: Array<{
    ttlMin: number;
    writePrice: string;
    costUsd: number | null;
    deltaUsd: number | null;
    deltaShare: number | null;
    /** 1-based numbers of the calls whose idle gap outlasted this TTL. */
    expiredCalls: number[];
    rewriteTokens: number;
    rewriteUsd: number | null;
    unavailable: string | null;
  }>;
}

/** The session in an ideal cache with an idle TTL, beside TraceLab's published figures. */
export interface ReportIdealCache {
  steps: number;
  skippedCalls: number;
  points: Array<{
    ttlMin: number;
    hitRate: number;
    amplification: number | null;
    published: { hitRate: number; amplification: number; approximate: boolean } | null;
  }>;
  optimalHitRate: number | null;
  realHitRate: number | null;
  realAmplification: number | null;
  effectiveTtlMin: number | null;
  published: { source: string; deployedAmplification: { merged: number; claude: number; codex: number } };
}

/** One session in the `agent-trace analyze --json` contract (docs/reference/json-output.md). */
export interface ReportSession {
  id: string;
  parentId: string | null;
  role: string;
  agent: string | null;
  model: string | null;
  llmCalls: number;
  /** Prompts a person typed. */
  userTurns: number;
  /** User-role records that were not typed prompts (notifications, local commands, hook output…), by kind; null when the format does not tell them apart. */
  otherInputs: OtherInputs | null;
  /** Failed API requests the agent logged (rate limits, overload); each is also a diagnostic. */
  apiErrors: number;
  tokens: TokenTotals;
  /** "calls": summed over calls; "reported": the trace's own session totals (no per-call figures); "none". */
  tokensSource: 'calls' | 'reported' | 'none';
  /** Tokens the trace's session totals count beyond its calls (input, cached, output); null when none. */
  unattributedTokens: UnattributedTokens | null;
  cacheHitRate: number | null;
  rawInputToOutput: number | null;
  appendToOutput: { mean: number | null; median: number | null; p90: number | null; aggregate: number | null };
  outputPerCall: { mean: number | null; median: number | null };
  toolCalls: {
    total: number;
    failed: number;
    /** Calls the user denied (a permission prompt answered no); each is also among the failed. */
    denied: number;
    byTool: Record<
      string,
      {
        total: number;
        failed: number;
        failureRate: number | null;
        latencyMsMedian: number | null;
        latencyMsP90: number | null;
      }
    >;
    toolTimeMs: number | null;
    llmTimeMs: number | null;
  };
  retryLoops: ReportRetryLoop[];
  /** "12% of this session's calls were spent in 3 retry loops", or null. */
  retryLoopSummary: string | null;
  missCauses: Record<MissCause, number>;
  prefillShare: { value: number | null; estimated: boolean; basis: string };
  intentByQuartile: Array<{ explore: number; execute: number; other: number }>;
  context: { meanTokens: number | null; maxTokens: number | null; growthPerCall: number | null };
  compactions: CompactionCost[];
  /** Null when the report was built without prices. */
  cost: ReportSessionCost | null;
  cacheTtl: ReportCacheTtl | null;
  idealCache: ReportIdealCache;
}

/** A diagnostic in the contract: 1-based line (null for the file as a whole). */
export interface ReportDiagnostic {
  file: string;
  line: number | null;
  severity: Severity;
  message: string;
}

/** The whole `--json` document. Missing values are null, never 0. */
export interface TraceReport {
  format: string | null;
  /** How the format was found: detection evidence, or "chosen by the user". */
  detection: string;
  /** How sure detection is: "certain", "likely", "weak" (not enough to read the file), or null (nothing matched, or chosen by the user). */
  detectionConfidence: 'certain' | 'likely' | 'weak' | null;
  /** What the format cannot give, in words (figures it lacks are null). */
  limitations: string[];
  problem: string | null;
  /** The whole trace, sub-agents included; null when built without prices. */
  cost: ReportCost | null;
  sessions: ReportSession[];
  diagnostics: ReportDiagnostic[];
}

/** Prices for a report: the book (the CLI builds it from the library and --prices) and an extra TTL to replay. */
export interface ReportPricing {
  book: PriceBook;
  customTtl?: TtlOption | null;
  /** The trace already priced with `book` (priceTrace), when the caller has it (shared with the context anatomy). */
  priced?: TraceCost | null;
}

const MINUTE_MS = 60_000;

export function reportCost(summary: CostSummary): ReportCost {
  return {
    totalUsd: summary.totalUsd,
    byModel: summary.byModel,
    byKind: summary.pricedCalls === 0 && summary.unpricedCalls > 0 ? null : summary.byKind,
    pricedCalls: summary.pricedCalls,
    unpricedCalls: summary.unpricedCalls,
    priceSource: summary.priceSource,
  };
}

export function reportCacheTtl(w: TtlWhatIf): ReportCacheTtl {
  return {
    ranWithTtlMin: w.actualTtlMs / MINUTE_MS,
    basis: w.actualTtlBasis,
    actualUsd: w.actualUsd,
    sentence: w.sentence,
    replays: w.replays.map((r) => ({
      ttlMin: r.ttlMs / MINUTE_MS,
      writePrice: r.writeLabel,
      costUsd: r.costUsd,
      deltaUsd: r.deltaUsd,
      deltaShare: r.deltaShare,
      expiredCalls: r.expiredCalls.map((i) => i + 1),
      rewriteTokens: r.rewriteTokens,
      rewriteUsd: r.rewriteUsd,
      unavailable: r.unavailable,
    })),
  };
}

export function reportIdealCache(c: IdealTtlCurve): ReportIdealCache {
  return {
    steps: c.steps,
    skippedCalls: c.skipped,
    points: c.points.map((p) => ({
      ttlMin: p.ttlMs / MINUTE_MS,
      hitRate: p.hitRate,
      amplification: p.amplification,
      published: p.published,
    })),
    optimalHitRate: c.optimalHitRate,
    realHitRate: c.realHitRate,
    realAmplification: c.realAmplification,
    effectiveTtlMin: c.effectiveTtlMs === null ? null : c.effectiveTtlMs / MINUTE_MS,
    published: {
      source: TRACELAB_PUBLISHED.source,
      deployedAmplification: { ...TRACELAB_PUBLISHED.deployedAmplification },
    },
  };
}

function sessionCostReport(c: SessionCost): ReportSessionCost {
  return { ...reportCost(c), reportedUsd: c.reportedUsd, notes: c.notes };
}

/** Builds the stable JSON contract from a parsed trace. */
export function buildTraceReport(
  parsed: ParsedTrace,
  options: Partial<AnalysisOptions> = {},
  pricing: ReportPricing | null = null,
): TraceReport {
  const { model } = parsed;
  const priced = pricing ? (pricing.priced ?? priceTrace(model, pricing.book)) : null;
  const diagnostics = [...model.diagnostics, ...(priced?.diagnostics ?? [])];
  const o: AnalysisOptions = { ...DEFAULT_ANALYSIS_OPTIONS, ...options };
  return {
    format: model.format,
    detection: parsed.detection.evidence,
    detectionConfidence: parsed.detection.confidence,
    limitations: model.limitations,
    problem: parsed.problem?.message ?? null,
    cost: priced ? reportCost(priced.total) : null,
    sessions: model.sessions.map((session, sessionIndex) => {
      // analyzeSession's analyses, but the retry loops without a record per failed call (the report lists loops only).
      const retry = findRetryLoopsOnly(session, o.minLoopAttempts);
      const cost = priced?.sessions[sessionIndex] ?? null;
      const s = summarizeSession(session);
      const f = fingerprint(session, o);
      return {
        id: s.id,
        parentId: s.parentId,
        role: s.role,
        agent: s.agent,
        model: s.model,
        llmCalls: s.llmCalls,
        userTurns: s.userTurns,
        otherInputs: s.otherInputs,
        apiErrors: s.apiErrors,
        tokens: s.tokens,
        tokensSource: s.tokensSource,
        unattributedTokens: s.unattributedTokens,
        cacheHitRate: s.cacheHitRate,
        rawInputToOutput: s.rawInputToOutput,
        appendToOutput: {
          mean: s.appendToOutput.mean,
          median: s.appendToOutput.median,
          p90: f.appendToOutputP90,
          aggregate: s.appendToOutput.aggregate,
        },
        outputPerCall: f.outputPerCall,
        toolCalls: {
          total: f.tools.total,
          failed: f.tools.failed,
          denied: s.deniedToolCalls,
          byTool: f.tools.byTool,
          toolTimeMs: f.tools.toolTimeMs,
          llmTimeMs: f.tools.llmTimeMs,
        },
        retryLoops: retry.loops.map((l) => {
          const first = l.attempts[0]!.source;
          return {
            tool: l.tool,
            target: l.target,
            attempts: l.attempts.length,
            callsSpanned: l.callsSpanned,
            escaped: l.escaped,
            file: model.files[first.file] ?? '',
            firstLine: first.line + 1,
            lastLine: l.attempts[l.attempts.length - 1]!.source.line + 1,
            firstError: l.firstError,
            wastedTokens: l.wastedTokens,
            carryForwardTokens: l.carryForwardTokens,
            ...(cost ? loopCost(l, session, cost) : { wastedUsd: null, carriedForwardUsd: null }),
          };
        }),
        retryLoopSummary: loopSentence(retry, session.calls.length),
        missCauses: countMissCauses(findCacheMisses(session, o)),
        prefillShare: f.prefillShare,
        intentByQuartile: f.intentByQuartile,
        context: f.context,
        compactions: f.compactions,
        cost: cost ? sessionCostReport(cost) : null,
        cacheTtl: cost
          ? reportCacheTtl(cacheTtlWhatIf(ttlCallSource(session, cost), pricing?.customTtl ?? null))
          : null,
        idealCache: reportIdealCache(idealTtlCurve(session)),
      };
    }),
    diagnostics: diagnostics.map((d) => ({
      file: model.files[d.file] ?? '',
      line: d.line >= 0 ? d.line + 1 : null,
      severity: d.severity,
      message: d.message,
    })),
  };
}
