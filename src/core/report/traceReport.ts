import type { ParsedTrace } from '../trace/parseTrace';
import type { OtherInputs, Severity } from '../trace/model';
import type { MissCause } from '../analysis/cacheMisses';
import type { CompactionCost } from '../analysis/fingerprint';
import { analyzeSession } from '../analysis/sessionAnalysis';
import type { AnalysisOptions } from '../analysis/sessionAnalysis';
import type { TokenTotals } from '../analysis/sessionSummary';

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
}

/** One session in the `agent-trace analyze --json` contract (README, "JSON output"). */
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
  cacheHitRate: number | null;
  rawInputToOutput: number | null;
  appendToOutput: { mean: number | null; median: number | null; p90: number | null; aggregate: number | null };
  outputPerCall: { mean: number | null; median: number | null };
  toolCalls: {
    total: number;
    failed: number;
    byTool: Record<string, { total: number; failed: number; failureRate: number | null; latencyMsMedian: number | null; latencyMsP90: number | null }>;
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
  sessions: ReportSession[];
  diagnostics: ReportDiagnostic[];
}

/** Builds the stable JSON contract from a parsed trace. */
export function buildTraceReport(parsed: ParsedTrace, options: Partial<AnalysisOptions> = {}): TraceReport {
  const { model } = parsed;
  return {
    format: model.format,
    detection: parsed.detection.evidence,
    detectionConfidence: parsed.detection.confidence,
    limitations: model.limitations,
    problem: parsed.problem?.message ?? null,
    sessions: model.sessions.map((session) => {
      const a = analyzeSession(session, options);
      const s = a.summary;
      const f = a.fingerprint;
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
        cacheHitRate: s.cacheHitRate,
        rawInputToOutput: s.rawInputToOutput,
        appendToOutput: { mean: s.appendToOutput.mean, median: s.appendToOutput.median, p90: f.appendToOutputP90, aggregate: s.appendToOutput.aggregate },
        outputPerCall: f.outputPerCall,
        toolCalls: f.tools,
        retryLoops: a.retry.loops.map((l) => {
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
          };
        }),
        retryLoopSummary: a.loopSentence,
        missCauses: a.missCauses,
        prefillShare: f.prefillShare,
        intentByQuartile: f.intentByQuartile,
        context: f.context,
        compactions: f.compactions,
      };
    }),
    diagnostics: model.diagnostics.map((d) => ({
      file: model.files[d.file] ?? '',
      line: d.line >= 0 ? d.line + 1 : null,
      severity: d.severity,
      message: d.message,
    })),
  };
}
