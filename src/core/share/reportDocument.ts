import type { AnalysisOptions } from '../analysis/sessionAnalysis';
import { contextAnatomy } from '../context/contextAnatomy';
import { sessionContextView } from '../context/contextView';
import type { ContextSource, SessionContext } from '../context/contextView';
import { priceTrace } from '../cost/callCost';
import type { PriceBook } from '../cost/costTypes';
import { buildTraceReport } from '../report/traceReport';
import type { RedactionSummary } from '../redact/redactor';
import type { TeamReport } from '../team/teamReport';
import type { ParsedTrace } from '../trace/parseTrace';
import { buildCallDetail, buildTraceView } from '../view/traceView';
import type { CallDetail, TraceView } from '../view/traceView';
import type { WhatIfDocument } from './whatIfDocument';

/**
 * What a standalone HTML report holds (agent-trace report, Agent Trace: Export HTML
 * Report): for each trace, the very view the inspector draws (summaries, bars, analyses),
 * every call's details (what the inspector fetches from the host on selection), the
 * what-if scenario and cliff the user ran, and cost. The report page draws it with the
 * inspector's own views (webview/report), so the report and the inspector cannot drift.
 */
export interface ReportDocument {
  schema: 1;
  title: string;
  /** ISO time the report was made. */
  generatedAt: string;
  /** "agent-trace 0.1.0". */
  generator: string;
  traces: ReportTrace[];
  /** What redaction removed, by kind; null when the user turned redaction off (--no-redact). */
  redaction: RedactionSummary | null;
  /** A team report (agent-trace team-report): an export folder's named queries, drawn instead of traces. */
  team?: TeamReport;
}

/** Dollar figures of the whole trace, sub-agents included (the cost module's `cost` of `analyze --json`). */
export interface ReportCost {
  totalUsd: number | null;
  byModel: Record<string, { usd: number | null; calls: number; unpricedCalls: number }>;
  pricedCalls: number;
  unpricedCalls: number;
  priceSource: string;
}

export interface ReportTrace {
  view: TraceView;
  /** `details[i][k]`: call k of `view.sessions[i]`. */
  details: CallDetail[][];
  whatIf: WhatIfDocument | null;
  cost: ReportCost | null;
  /** `context[i]`: the context anatomy of `view.sessions[i]` (the inspector's context panel); absent when the report was made without it. */
  context?: (SessionContext | null)[];
}

/** The sessions a report keeps: the chosen ones (id or unique prefix) and their sub-agents; all when none is chosen. */
export function keepSessions(view: TraceView, wanted: readonly string[]): TraceView {
  if (wanted.length === 0) return view;
  const ids = new Set<string>();
  for (const w of wanted) {
    const exact = view.sessions.find((s) => s.summary.id === w);
    const matches = exact ? [exact] : view.sessions.filter((s) => s.summary.id.startsWith(w));
    if (matches.length !== 1)
      throw new Error(
        matches.length === 0
          ? `no session "${w}" in ${view.fileName}`
          : `"${w}" matches ${matches.length} sessions in ${view.fileName}`,
      );
    ids.add(matches[0]!.summary.id);
  }
  // Sub-agents come with their parents, however deep.
  let grew = true;
  while (grew) {
    grew = false;
    for (const s of view.sessions) {
      if (!ids.has(s.summary.id) && s.summary.parentId !== null && ids.has(s.summary.parentId)) {
        ids.add(s.summary.id);
        grew = true;
      }
    }
  }
  return { ...view, sessions: view.sessions.filter((s) => ids.has(s.summary.id)) };
}

/** One trace of a report: its view (only the chosen sessions), every call's details, and what the user ran. */
export function buildReportTrace(
  parsed: ParsedTrace,
  fileName: string,
  options: {
    sessions?: readonly string[];
    analysis?: Partial<AnalysisOptions>;
    whatIf?: WhatIfDocument | null;
    prices?: PriceBook | null;
    formatChosen?: boolean;
    /** What the context anatomy is built from (the collected text and the tokenizer); none: the report has no context panel. */
    context?: ContextSource | null;
  } = {},
): ReportTrace {
  const prices = options.prices ?? null;
  // With prices, every session's view carries its calls' costs (the inspector's cost panel draws them).
  const view = keepSessions(
    buildTraceView(parsed, fileName, options.formatChosen ?? false, options.analysis ?? {}, prices),
    options.sessions ?? [],
  );
  const details = view.sessions.map((s) => s.calls.map((c) => buildCallDetail(parsed.model, s.summary.id, c.index)!));
  // A what-if run on a session the report leaves out has nothing to stand beside.
  const whatIf =
    options.whatIf &&
    (options.whatIf.input.session === null || view.sessions.some((s) => s.summary.id === options.whatIf!.input.session))
      ? options.whatIf
      : null;
  // The trace's total is for every session: left out when the report keeps only some.
  const source = options.context ?? null;
  // Priced once for the trace's total and the context anatomy's dollars.
  const priced = prices && ((options.sessions ?? []).length === 0 || source) ? priceTrace(parsed.model, prices) : null;
  const cost =
    prices && (options.sessions ?? []).length === 0
      ? buildTraceReport(parsed, options.analysis ?? {}, { book: prices, priced }).cost
      : null;
  if (!source) return { view, details, whatIf, cost };
  const anatomy = contextAnatomy(parsed.model, {
    content: source.content,
    tokenizer: source.tokenizer,
    prices,
    costs: priced,
    notes: source.notes,
  });
  const index = new Map<string, number>();
  parsed.model.sessions.forEach((s, i) => {
    if (!index.has(s.id)) index.set(s.id, i);
  });
  const context = view.sessions.map((s) => sessionContextView(anatomy, index.get(s.summary.id) ?? -1));
  return { view, details, whatIf, cost, context };
}
