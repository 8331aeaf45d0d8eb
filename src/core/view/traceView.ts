import { formatById, FORMATS } from '../trace/formats';
import type { Diagnostic, FormatId, LlmCall, Session, SourceRef, ToolCall, TraceModel } from '../trace/model';
import type { FileProblem, ParsedTrace } from '../trace/parseTrace';
import type { CacheMiss, MissCause } from '../analysis/cacheMisses';
import type { Fingerprint } from '../analysis/fingerprint';
import type { RetryLoop } from '../analysis/retryLoops';
import { analyzeSession } from '../analysis/sessionAnalysis';
import type { AnalysisOptions, SessionAnalysis } from '../analysis/sessionAnalysis';
import type { SessionSummary } from '../analysis/sessionSummary';
import { idealTtlCurve } from '../analysis/idealTtlCache';
import type { IdealTtlCurve } from '../analysis/idealTtlCache';
import { priceTrace } from '../cost/callCost';
import type { SessionCost } from '../cost/callCost';
import { cacheTtlWhatIf, ttlCallSource, ttlCalls } from '../cost/cacheTtlWhatIf';
import type { TtlCall, TtlWhatIf } from '../cost/cacheTtlWhatIf';
import type { CostByKind, CostSummary, PriceBook } from '../cost/costTypes';
import { loopCost } from '../cost/loopCost';

/** A tool call as the timeline shows it. */
export interface ToolChip {
  name: string;
  /** True failed, false succeeded, null no result seen. */
  failed: boolean | null;
  targetFile: string | null;
}

/** One bar of the timeline: an LLM call's figures, without its payloads. */
export interface CallRow {
  index: number;
  id: string;
  model: string | null;
  turn: number | null;
  startMs: number | null;
  endMs: number | null;
  input: number | null;
  cached: number | null;
  appended: number | null;
  cacheWrite: number | null;
  output: number | null;
  tools: ToolChip[];
  /** Why this call's prefix missed the cache, when it did. */
  miss: { cause: MissCause; detail: string; lostTokens: number | null } | null;
  /** Indexes into `SessionView.analysis.loops` of the loops this call made attempts in. */
  loops: number[];
  /** The part of `cacheWrite` kept for 1 hour (priced higher), when the trace splits writes. */
  cacheWrite1h: number | null;
  /** What the call cost; null when the view was built without prices. */
  cost: CallCostView | null;
}

/** One call's dollars for the timeline: the total, by kind, and why it is unknown when it is. */
export interface CallCostView {
  usd: number | null;
  byKind: CostByKind | null;
  /** Which price applied ("anthropic/claude-haiku-4-5", "user: glm-4.6"). */
  priceId: string | null;
  unpriced: string | null;
  notes: string[];
}

/** A session's cost, its cache TTL what-if, and the calls the page replays for a TTL the user types. */
export interface SessionCostView {
  summary: CostSummary;
  /** The cost the agent itself reported, when it did. */
  reportedUsd: number | null;
  notes: string[];
  /** Replays under 5 minutes and 1 hour. */
  ttl: TtlWhatIf;
  ttlCalls: TtlCall[];
}

/**
 * A session's cost as the inspector's summary and cost panel show it: the figures, without
 * the per-call replay input (a million calls of it would be hundreds of MB in one
 * message); a TTL the user types is replayed where the calls are (TraceService.customTtl).
 */
export type SessionCostFigures = Omit<SessionCostView, 'ttlCalls'>;

/** The figures of a cost view, without its replay input. */
export function costFigures(view: SessionCostView): SessionCostFigures {
  return { summary: view.summary, reportedUsd: view.reportedUsd, notes: view.notes, ttl: view.ttl };
}

/** A sub-agent as the parent's timeline marks it. */
export interface SubagentLink {
  sessionId: string;
  role: Session['role'];
  /** The parent's call whose tool call started it, when known. */
  parentCallIndex: number | null;
  calls: number;
}

/** A compaction marker on the timeline. */
export interface CompactionMark {
  beforeCall: number;
  trigger: 'manual' | 'auto' | null;
  preTokens: number | null;
  /** The user rewound to an earlier message: the context was cut back, not summarised. */
  rewind?: true;
}

/** A failed API request (or a run of them before one call) as the timeline marks it. */
export interface EventMark {
  kind: 'api-error';
  beforeCall: number;
  /** How many events share this place (retries of one request). */
  count: number;
  /** The first event's text. */
  text: string;
}

/** A session without its per-call rows: what the inspector sends (the rows go by page, the bars as columns). */
export interface SessionHead {
  summary: SessionSummary;
  compactions: CompactionMark[];
  /** Failed API requests, grouped by the call they came before. */
  events: EventMark[];
  subagents: SubagentLink[];
  analysis: AnalysisView;
  /** Null when the view was built without prices. */
  cost: SessionCostFigures | null;
}

/** Everything the timeline needs for one session, sent up front. */
export interface SessionView extends SessionHead {
  /** With the replay input: a built view (the HTML report) replays a typed TTL itself. */
  cost: SessionCostView | null;
  calls: CallRow[];
}

/** A retry loop as the timeline and the loops table show it (lines 0-based, files named). */
export interface LoopView {
  tool: string;
  target: string;
  targetKind: RetryLoop['targetKind'];
  attempts: number;
  /** Calls that made the attempts, in order. */
  attemptCalls: number[];
  firstCall: number;
  lastCall: number;
  callsSpanned: number;
  escaped: boolean;
  escapeCall: number | null;
  firstError: string | null;
  wastedTokens: number | null;
  carryForwardTokens: number | null;
  /** The same tokens in dollars; null when a call involved is unpriced or without prices. */
  wastedUsd: number | null;
  carriedForwardUsd: number | null;
  file: string;
  /** Index of `file` in the trace's files: what the page sends back to reveal a line (never a path). */
  fileIndex: number;
  firstLine: number;
  lastLine: number;
  /** 0-based lines of every attempt's result, in order. */
  attemptLines: number[];
}

/** The analyses of one session, sent with its bars. */
export interface AnalysisView {
  fingerprint: Fingerprint;
  loops: LoopView[];
  loopSentence: string | null;
  callsInLoops: number;
  missCauses: Record<MissCause, number>;
  /** Failed tool calls that are not the agent's own attempts (user rejections, sibling errors). */
  collateralFailures: number;
  /** The session in an ideal cache with an idle TTL, beside TraceLab's published figures. */
  idealCache: IdealTtlCurve;
}

/** A diagnostic with its file named. */
export interface DiagnosticView {
  file: string;
  /** Index of `file` in the trace's files (see LoopView.fileIndex). */
  fileIndex: number;
  /** 0-based; -1 for the file as a whole. */
  line: number;
  severity: Diagnostic['severity'];
  message: string;
}

/** A format the user can pick to override detection. */
export interface FormatChoice {
  id: FormatId;
  label: string;
}

/** The whole trace as the inspector shows it. */
export interface TraceView {
  fileName: string;
  format: TraceModel['format'];
  formatLabel: string | null;
  detection: string;
  /** How sure detection is (null when nothing matched or the user chose the format). */
  detectionConfidence: 'certain' | 'likely' | 'weak' | null;
  /** True when the user chose the format instead of detection. */
  formatChosen: boolean;
  /** Every format the picker offers. */
  formatChoices: FormatChoice[];
  /** What this format cannot give, in plain sentences. */
  limitations: string[];
  problem: FileProblem | null;
  /** The whole trace's cost, sub-agents included; null when built without prices. */
  cost: CostSummary | null;
  sessions: SessionView[];
  diagnostics: DiagnosticView[];
  skippedRecords: Record<string, number>;
}

/** A tool call with its result, sent on demand for the selected call. */
export interface ToolDetail {
  id: string;
  name: string;
  targetFile: string | null;
  command: string | null;
  failed: boolean | null;
  errorText: string | null;
  exitCode: number | null;
  durationMs: number | null;
  resultChars: number | null;
  /** 0-based line of the result (or the call), in `file`. */
  line: number;
  file: string;
}

/** Details of one call, for the side panel. */
export interface CallDetail {
  sessionId: string;
  index: number;
  turnPreview: string | null;
  file: string;
  line: number;
  tools: ToolDetail[];
}

/** A session's misses and loop attempts keyed by call index, built once so each row is a lookup rather than a scan. */
export interface CallMarks {
  missByCall: Map<number, CacheMiss>;
  loopsByCall: Map<number, number[]>;
}

export function callMarks(analysis: SessionAnalysis): CallMarks {
  const missByCall = new Map<number, CacheMiss>();
  // The first miss of a call wins, as a search from the front would find it.
  for (const m of analysis.misses) if (!missByCall.has(m.callIndex)) missByCall.set(m.callIndex, m);
  const loopsByCall = new Map<number, number[]>();
  analysis.retry.loops.forEach((l, i) => {
    for (const a of l.attempts) {
      const loops = loopsByCall.get(a.callIndex);
      if (!loops) loopsByCall.set(a.callIndex, [i]);
      // A loop with several attempts in one call is listed once for it.
      else if (loops[loops.length - 1] !== i) loops.push(i);
    }
  });
  return { missByCall, loopsByCall };
}

function callCostView(cost: SessionCost | null, index: number): CallCostView | null {
  const c = cost?.calls.at(index);
  return c ? { usd: c.usd, byKind: c.byKind, priceId: c.priceId, unpriced: c.unpriced, notes: c.notes } : null;
}

export function row(call: LlmCall, marks: CallMarks, cost: SessionCost | null): CallRow {
  const miss = marks.missByCall.get(call.index);
  const loops = marks.loopsByCall.get(call.index) ?? [];
  return {
    index: call.index,
    id: call.id,
    model: call.model,
    turn: call.turn,
    startMs: call.startMs,
    endMs: call.endMs,
    input: call.tokens.input,
    cached: call.tokens.cached,
    appended: call.tokens.appended,
    cacheWrite: call.tokens.cacheWrite,
    output: call.tokens.output,
    tools: call.toolCalls.map((t) => ({ name: t.name, failed: t.isError, targetFile: t.targetFile })),
    miss: miss ? { cause: miss.cause, detail: miss.detail, lostTokens: miss.lostTokens } : null,
    loops,
    cacheWrite1h: call.tokens.cacheWrite1h ?? null,
    cost: callCostView(cost, call.index),
  };
}

function loopView(
  model: TraceModel,
  loop: RetryLoop,
  dollars: { wastedUsd: number | null; carriedForwardUsd: number | null },
): LoopView {
  const first = loop.attempts[0]!.source;
  const last = loop.attempts[loop.attempts.length - 1]!.source;
  return {
    tool: loop.tool,
    target: loop.target,
    targetKind: loop.targetKind,
    attempts: loop.attempts.length,
    attemptCalls: loop.attempts.map((a) => a.callIndex),
    firstCall: loop.firstCall,
    lastCall: loop.lastCall,
    callsSpanned: loop.callsSpanned,
    escaped: loop.escaped,
    escapeCall: loop.escapeCall,
    firstError: loop.firstError,
    wastedTokens: loop.wastedTokens,
    carryForwardTokens: loop.carryForwardTokens,
    ...dollars,
    file: model.files[first.file] ?? '',
    fileIndex: first.file,
    firstLine: first.line,
    lastLine: last.line,
    attemptLines: loop.attempts.map((a) => a.source.line),
  };
}

export function analysisView(
  model: TraceModel,
  session: Session,
  a: SessionAnalysis,
  cost: SessionCost | null,
): AnalysisView {
  return {
    fingerprint: a.fingerprint,
    loops: a.retry.loops.map((l) =>
      loopView(model, l, cost ? loopCost(l, session, cost) : { wastedUsd: null, carriedForwardUsd: null }),
    ),
    loopSentence: a.loopSentence,
    callsInLoops: a.retry.callsInLoops,
    missCauses: a.missCauses,
    collateralFailures: a.retry.failing.filter((f) => f.collateral).length,
    idealCache: idealTtlCurve(session),
  };
}

export function sessionCostView(session: Session, cost: SessionCost): SessionCostView {
  const replay = ttlCalls(session, cost);
  return { ...costSummaryOf(cost), ttl: cacheTtlWhatIf(replay), ttlCalls: replay };
}

/** A session's cost figures, its replay input walked as it is made and not kept (a million calls of it were ~150 MB). */
export function sessionCostFigures(session: Session, cost: SessionCost): SessionCostFigures {
  return { ...costSummaryOf(cost), ttl: cacheTtlWhatIf(ttlCallSource(session, cost)) };
}

function costSummaryOf(cost: SessionCost): Omit<SessionCostFigures, 'ttl'> {
  const summary: CostSummary = {
    totalUsd: cost.totalUsd,
    byModel: cost.byModel,
    byKind: cost.byKind,
    pricedCalls: cost.pricedCalls,
    unpricedCalls: cost.unpricedCalls,
    priceSource: cost.priceSource,
  };
  return { summary, reportedUsd: cost.reportedUsd, notes: cost.notes };
}

/** Sessions by their parent's id, in model order, so each parent finds its sub-agents without scanning every session. */
export function childrenByParent(model: TraceModel): Map<string, Session[]> {
  const children = new Map<string, Session[]>();
  for (const s of model.sessions) {
    if (s.parentId === null) continue;
    const siblings = children.get(s.parentId);
    if (siblings) siblings.push(s);
    else children.set(s.parentId, [s]);
  }
  return children;
}

export function subagentLinks(children: Map<string, Session[]>, parent: Session): SubagentLink[] {
  const callOfTool = new Map<string, number>();
  for (const c of parent.calls) for (const t of c.toolCalls) callOfTool.set(t.id, c.index);
  return (children.get(parent.id) ?? [])
    .filter((s) => s !== parent)
    .map((s) => ({
      sessionId: s.id,
      role: s.role,
      parentCallIndex: s.parentToolCallId !== null ? (callOfTool.get(s.parentToolCallId) ?? null) : null,
      calls: s.calls.length,
    }));
}

/** The formats a user can choose from. */
export function formatChoices(): FormatChoice[] {
  return FORMATS.map((f) => ({ id: f.id, label: f.label }));
}

/**
 * Builds the view the host sends on `init`: summaries and bars for every session, and with
 * a price book (the host's, from the library and `agentTrace.prices`) each call's cost.
 */
export function buildTraceView(
  parsed: ParsedTrace,
  fileName: string,
  formatChosen = false,
  options: Partial<AnalysisOptions> = {},
  prices: PriceBook | null = null,
): TraceView {
  const { model } = parsed;
  const children = childrenByParent(model);
  const priced = prices && parsed.problem === null ? priceTrace(model, prices) : null;
  return {
    fileName,
    format: model.format,
    formatLabel: model.format ? (formatById(model.format)?.label ?? null) : null,
    detection: parsed.detection.evidence,
    detectionConfidence: parsed.detection.confidence,
    formatChosen,
    formatChoices: formatChoices(),
    limitations: model.limitations,
    problem: parsed.problem,
    cost: priced?.total ?? null,
    sessions: model.sessions.map((s, i) => {
      const analysis = analyzeSession(s, options);
      const marks = callMarks(analysis);
      const cost = priced?.sessions[i] ?? null;
      return {
        summary: analysis.summary,
        calls: s.calls.map((c) => row(c, marks, cost)),
        compactions: s.compactions.map((c) => ({
          beforeCall: c.beforeCall,
          trigger: c.trigger,
          preTokens: c.preTokens,
          ...(c.rewind ? { rewind: true as const } : {}),
        })),
        events: eventMarks(s),
        subagents: subagentLinks(children, s),
        analysis: analysisView(model, s, analysis, cost),
        cost: cost ? sessionCostView(s, cost) : null,
      };
    }),
    diagnostics: [...model.diagnostics, ...(priced?.diagnostics ?? [])].map((d) => ({
      file: model.files[d.file] ?? '',
      fileIndex: d.file,
      line: d.line,
      severity: d.severity,
      message: d.message,
    })),
    skippedRecords: model.skippedRecords,
  };
}

/** The session's events, one mark per place: 15 retries before one call are one mark of 15. */
export function eventMarks(s: Session): EventMark[] {
  const marks: EventMark[] = [];
  for (const e of s.events ?? []) {
    const last = marks[marks.length - 1];
    if (last && last.kind === e.kind && last.beforeCall === e.beforeCall) last.count += 1;
    else marks.push({ kind: e.kind, beforeCall: e.beforeCall, count: 1, text: e.text });
  }
  return marks;
}

export function toolDetail(model: TraceModel, t: ToolCall): ToolDetail {
  const where: SourceRef = t.resultSource ?? t.source;
  return {
    id: t.id,
    name: t.name,
    targetFile: t.targetFile,
    command: t.command,
    failed: t.isError,
    errorText: t.errorText,
    exitCode: t.exitCode,
    durationMs: t.durationMs,
    resultChars: t.resultChars,
    line: where.line,
    file: model.files[where.file] ?? '',
  };
}

/** Details of one call, or null when the session or call does not exist. */
export function buildCallDetail(model: TraceModel, sessionId: string, callIndex: number): CallDetail | null {
  const session = model.sessions.find((s) => s.id === sessionId);
  const call = session?.calls[callIndex];
  if (!session || !call) return null;
  return {
    sessionId,
    index: call.index,
    turnPreview: call.turn !== null ? (session.turns[call.turn]?.preview ?? null) : null,
    file: model.files[call.source.file] ?? '',
    line: call.source.line,
    tools: call.toolCalls.map((t) => toolDetail(model, t)),
  };
}
