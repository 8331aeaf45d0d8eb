import type { TraceAnatomy } from './contextAnatomy';
import type { ContextReport } from './contextReport';
import { kindsOf } from './contextReport';

/** Version of `agent-trace context --json` (docs/reference/json-output.md#context). */
export const CONTEXT_JSON_VERSION = 1;

/** The stable JSON of `agent-trace context --json`: per session its calibration and each call's input by part kind, then the trace's totals, contributors and suggestions. */
export function contextJson(file: string, anatomy: TraceAnatomy, report: ContextReport): unknown {
  return {
    contextVersion: CONTEXT_JSON_VERSION,
    file,
    format: anatomy.format,
    notes: anatomy.notes,
    sessions: anatomy.sessions.map((s) => ({
      id: s.sessionId,
      role: s.role,
      model: s.model,
      content: s.content,
      calibration: s.calibration,
      notes: s.notes,
      calls: s.calls.map((c) => ({
        index: c.index,
        loggedInput: c.loggedInput,
        estimatedInput: c.estimatedInput,
        loggedGrowth: c.loggedGrowth,
        estimatedGrowth: c.estimatedGrowth,
        inputUsd: c.inputUsd,
        byKind: kindsOf(c.byKind),
      })),
    })),
    totals: {
      calls: report.calls,
      inputUsd: report.inputUsd,
      cacheReadUsd: report.cacheReadUsd,
      writeUsd: report.writeUsd,
      byKind: report.byKind,
      byTool: report.byTool,
      byMcpServer: report.byMcpServer,
      byFile: report.byFile,
      medianGrowthError: report.medianGrowthError,
      medianGrowthErrorRaw: report.medianGrowthErrorRaw,
      medianGrowthErrorPredicted: report.medianGrowthErrorPredicted,
      medianInputError: report.medianInputError,
    },
    contributors: report.contributors,
    suggestions: report.suggestions,
  };
}
