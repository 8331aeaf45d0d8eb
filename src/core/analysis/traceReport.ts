import type { ParsedTrace } from '../trace/parseTrace';
import type { Severity } from '../trace/model';
import { summarizeSession } from './sessionSummary';
import type { TokenTotals } from './sessionSummary';

/** One session in the `agent-trace analyze --json` contract (README, "JSON output"). */
export interface ReportSession {
  id: string;
  parentId: string | null;
  role: string;
  agent: string | null;
  model: string | null;
  llmCalls: number;
  userTurns: number;
  tokens: TokenTotals;
  /** "calls": summed over calls; "reported": the trace's own session totals (no per-call figures); "none". */
  tokensSource: 'calls' | 'reported' | 'none';
  cacheHitRate: number | null;
  rawInputToOutput: number | null;
  appendToOutput: { mean: number | null; median: number | null; aggregate: number | null };
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
  /** What the format cannot give, in words (figures it lacks are null). */
  limitations: string[];
  problem: string | null;
  sessions: ReportSession[];
  diagnostics: ReportDiagnostic[];
}

/** Builds the stable JSON contract from a parsed trace. */
export function buildTraceReport(parsed: ParsedTrace): TraceReport {
  const { model } = parsed;
  return {
    format: model.format,
    detection: parsed.detection.evidence,
    limitations: model.limitations,
    problem: parsed.problem?.message ?? null,
    sessions: model.sessions.map((session) => {
      const s = summarizeSession(session);
      return {
        id: s.id,
        parentId: s.parentId,
        role: s.role,
        agent: s.agent,
        model: s.model,
        llmCalls: s.llmCalls,
        userTurns: s.userTurns,
        tokens: s.tokens,
        tokensSource: s.tokensSource,
        cacheHitRate: s.cacheHitRate,
        rawInputToOutput: s.rawInputToOutput,
        appendToOutput: s.appendToOutput,
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
