import { traceTitle } from '../sessions/sessionTitle';
import { contextAnatomy } from '../context/contextAnatomy';
import type { TraceAnatomy } from '../context/contextAnatomy';
import { sessionContextView } from '../context/contextView';
import type { ContextSource, SessionContext } from '../context/contextView';
import { CHAR_ESTIMATE } from '../context/tokenCounter';
import { analyzeSession } from '../analysis/sessionAnalysis';
import type { AnalysisOptions, SessionAnalysis } from '../analysis/sessionAnalysis';
import { summarizeSession } from '../analysis/sessionSummary';
import type { SessionSummary } from '../analysis/sessionSummary';
import { findRetryLoops } from '../analysis/retryLoops';
import type { RetryLoop } from '../analysis/retryLoops';
import { buildTraceReport } from '../report/traceReport';
import type { TraceReport } from '../report/traceReport';
import { buildWhatIfWorkload } from '../sim/whatIfWorkload';
import { priceTrace } from '../cost/callCost';
import type { TraceCost } from '../cost/callCost';
import type { PriceBook } from '../cost/costTypes';
import type { WhatIfWorkload } from '../sim/whatIfWorkload';
import { formatById } from '../trace/formats';
import type { Diagnostic, FormatId, Session, SourceRef, TraceModel } from '../trace/model';
import type { FileProblem, ParsedTrace } from '../trace/parseTrace';
import { sessionLabel, sessionTreeOrder } from './sessionList';
import type { SessionEntry, SessionPage } from './sessionList';
import { buildTimelineColumns, markSubagentStarts } from './timelineColumns';
import {
  analysisView,
  callMarks,
  childrenByParent,
  eventMarks,
  formatChoices,
  row,
  sessionCostFigures,
  subagentLinks,
  toolDetail,
} from './traceView';
import type { CallDetail, CallMarks, CallRow, SessionCostFigures, SubagentLink } from './traceView';
import { customReplay, ttlCallSource } from '../cost/cacheTtlWhatIf';
import type { CustomTtl, TtlReplay } from '../cost/cacheTtlWhatIf';
import { transcriptPlan } from './transcript';
import type {
  SearchField,
  SearchHit,
  SearchResult,
  SessionBody,
  SessionIntro,
  ToolCallRow,
  ToolCount,
  TraceHeader,
  TraceQueries,
  TraceQueryParams,
} from './traceQueries';
import type { TranscriptPlan } from './transcript';

// What the inspector page asks about a trace, answered from the parsed model where it
// lives (the extension's parse worker, or a test in Node): the page gets what it draws
// (a header, one session's summary and columns, rows by page, search hits), never the
// whole model. Every answer is plain data or typed arrays, so it crosses a thread or a
// webview boundary as is.

export type {
  SearchField,
  SearchHit,
  SearchResult,
  SessionBody,
  SessionIntro,
  ToolCallRow,
  ToolCount,
  TraceHeader,
} from './traceQueries';

/** Counts a session's tool calls by name, most called first: the timeline filter's tools and the number of tool calls. */
export function countTools(calls: Iterable<{ name: string; failed: boolean }>): {
  tools: ToolCount[];
  toolCallCount: number;
} {
  const tools = new Map<string, ToolCount>();
  let toolCallCount = 0;
  for (const t of calls) {
    toolCallCount += 1;
    let entry = tools.get(t.name);
    if (!entry) {
      entry = { name: t.name, calls: 0, failed: 0 };
      tools.set(t.name, entry);
    }
    entry.calls += 1;
    if (t.failed) entry.failed += 1;
  }
  return {
    tools: [...tools.values()].sort((a, b) => b.calls - a.calls || a.name.localeCompare(b.name)),
    toolCallCount,
  };
}

/** What the Problems view lists for a trace, in plain data (the extension words and places it). */
export interface TraceProblems {
  files: string[];
  problem: FileProblem | null;
  diagnostics: Diagnostic[];
  /** Every session's retry loops, the first PROBLEM_LOOPS_MAX of them (in session order, each session's by first attempt). */
  loops: RetryLoop[];
  /** Loops after those, left out: the Problems view shows 1,000 problems a file at most, the inspector lists them all. */
  loopsLeftOut: number;
}

/**
 * Most retry loops the Problems view is given. VS Code lists at most 1,000 problems per
 * file and drops the rest; a million-call trace has thousands of loops, whose problems
 * (each with its attempts as related locations) cost the extension host ~150 MiB to build
 * and send, for problems it would not show.
 */
export const PROBLEM_LOOPS_MAX = 1000;

/** What the service needs besides the parse. */
export interface TraceServiceOptions {
  fileName: string;
  /** True when the user chose the format instead of detection. */
  formatChosen: boolean;
  analysis: Partial<AnalysisOptions>;
  /** The price book costs are figured with (the library's and the user's prices); null: no costs. */
  prices?: PriceBook | null;
  /** What the context anatomy is built from (the trace worker collects it when the page first asks); none: sizes only, characters ÷ 4. */
  context?: ContextSource | null;
}

/** Rows a page may ask for at once. */
export const MAX_ROWS_PER_REQUEST = 2000;
/** Search hits listed at most (the total is still counted). */
export const MAX_SEARCH_HITS = 1000;
/** Characters of text shown around a search match. */
const SNIPPET_CHARS = 120;

function clipLine(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}

/** The text around the match at `at`, on one line, at most SNIPPET_CHARS long. */
export function snippet(text: string, at: number, length: number): string {
  if (text.length <= SNIPPET_CHARS) return clipLine(text, SNIPPET_CHARS);
  const start = Math.max(0, Math.min(at - 40, text.length - SNIPPET_CHARS));
  const piece = text.slice(start, start + SNIPPET_CHARS);
  return `${start > 0 ? '…' : ''}${clipLine(piece, SNIPPET_CHARS)}${start + SNIPPET_CHARS < text.length && at + length <= start + SNIPPET_CHARS ? '…' : ''}`;
}

/** What search looks at in one call: its tools' names, files, commands and errors, and its turn's prompt. */
export interface SearchableCall {
  index: number;
  turn: number | null;
  tools: readonly { name: string; targetFile: string | null; command: string | null; errorText: string | null }[];
  /** The prompt of the call's turn (looked at on the turn's first call only). */
  prompt(): string | null;
}

/**
 * Calls whose tool names, files, commands, error text or prompt (on the turn's first
 * call) contain `query`, ignoring case, in the sessions' order: one hit per call, its
 * first matching field; at most `limit` listed, all counted. Shared by the trace worker
 * and the HTML report, so both find the same calls.
 */
export function searchCalls(
  sessions: Iterable<{ id: string; calls: Iterable<SearchableCall> }>,
  query: string,
  limit = MAX_SEARCH_HITS,
): SearchResult {
  const q = query.trim().toLowerCase();
  const result: SearchResult = { query, total: 0, hits: [] };
  if (q === '') return result;
  const cap = Math.max(0, Math.min(limit, MAX_SEARCH_HITS));
  const find = (text: string | null): number => (text === null ? -1 : text.toLowerCase().indexOf(q));
  for (const session of sessions) {
    let lastTurn: number | null = null;
    for (const call of session.calls) {
      let hit: SearchHit | null = null;
      const take = (field: SearchField, text: string | null): boolean => {
        const at = find(text);
        if (at < 0) return false;
        hit = { sessionId: session.id, callIndex: call.index, field, text: snippet(text!, at, q.length) };
        return true;
      };
      for (const t of call.tools) {
        if (
          take('tool', t.name) ||
          take('file', t.targetFile) ||
          take('command', t.command) ||
          take('error', t.errorText)
        )
          break;
      }
      if (!hit && call.turn !== null && call.turn !== lastTurn) take('prompt', call.prompt());
      lastTurn = call.turn;
      if (!hit) continue;
      result.total += 1;
      if (result.hits.length < cap) result.hits.push(hit);
    }
  }
  return result;
}

/** A tool call as the tool-calls table lists it (from the model's tool call or a call's details alike). */
export function toolCallRow(
  index: number,
  callIndex: number,
  tool: {
    id: string;
    name: string;
    targetFile: string | null;
    command: string | null;
    exitCode: number | null;
    durationMs: number | null;
    errorText: string | null;
  },
  failed: boolean | null,
): ToolCallRow {
  return {
    index,
    callIndex,
    id: tool.id,
    name: tool.name,
    target: tool.targetFile ?? tool.command,
    failed,
    exitCode: tool.exitCode,
    durationMs: tool.durationMs,
    error:
      tool.errorText === null
        ? null
        : clipLine(tool.errorText.split('\n').find((l) => l.trim() !== '') ?? tool.errorText, 200),
  };
}

/** The picker page of entries matching `query` (label or id, any case), from `offset`. */
export function sessionPage(order: readonly SessionEntry[], query: string, offset: number, limit: number): SessionPage {
  const q = query.trim().toLowerCase();
  const matching =
    q === '' ? order : order.filter((e) => e.label.toLowerCase().includes(q) || e.id.toLowerCase().includes(q));
  const from = Math.max(0, Math.min(offset, matching.length));
  return { total: matching.length, offset: from, entries: matching.slice(from, from + Math.max(0, limit)) };
}

interface SessionCache {
  summary?: SessionSummary;
  analysis?: SessionAnalysis;
  marks?: CallMarks;
  tools?: { call: number; tool: Session['calls'][number]['toolCalls'][number] }[];
  /**
   * The cost figures for the current prices. The per-call replay input they come from is
   * not kept (at a million calls it is ~150 MB): a typed TTL builds it again.
   */
  cost?: SessionCostFigures;
}

/**
 * One parsed trace and what the page asks about it. Owns the indexes it builds on
 * demand (sessions by id, the picker order, analyses per session for the current
 * options); changing the options drops the analyses, never the parse.
 */
export class TraceService implements TraceQueries {
  private readonly byId = new Map<string, Session>();
  private children: Map<string, Session[]> | null = null;
  private order: SessionEntry[] | null = null;
  private readonly cache = new Map<string, SessionCache>();
  private analysisOptions: Partial<AnalysisOptions>;
  private prices: PriceBook | null;
  /** Every session priced (once per price book), by model order. */
  private priced: TraceCost | null = null;
  private readonly indexOf = new Map<Session, number>();
  private contextSource: ContextSource | null;
  /** The context anatomy of every session, for the current prices (built when first asked). */
  private anatomy: TraceAnatomy | null = null;

  constructor(
    readonly parsed: ParsedTrace,
    private readonly options: TraceServiceOptions,
  ) {
    parsed.model.sessions.forEach((s, i) => {
      if (!this.byId.has(s.id)) this.byId.set(s.id, s);
      this.indexOf.set(s, i);
    });
    this.analysisOptions = options.analysis;
    this.prices = options.prices ?? null;
    this.contextSource = options.context ?? null;
  }

  /** True once the context anatomy has its source (the text the trace worker collected). */
  get hasContextSource(): boolean {
    return this.contextSource !== null;
  }

  /** What the context anatomy is built from: the anatomy is built again when next asked. */
  setContextSource(source: ContextSource | null): void {
    this.contextSource = source;
    this.anatomy = null;
  }

  /** The price book in use. */
  get pricesInUse(): PriceBook | null {
    return this.prices;
  }

  /** New prices: costs are figured again when next asked for; the parse and the analyses stay. */
  setPrices(prices: PriceBook | null): void {
    this.prices = prices;
    this.priced = null;
    this.anatomy = null;
    for (const c of this.cache.values()) delete c.cost;
  }

  private traceCost(): TraceCost | null {
    if (!this.prices || this.parsed.problem !== null) return null;
    this.priced ??= priceTrace(this.parsed.model, this.prices);
    return this.priced;
  }

  private sessionCost(session: Session): TraceCost['sessions'][number] | null {
    return this.traceCost()?.sessions[this.indexOf.get(session) ?? -1] ?? null;
  }

  get model(): TraceModel {
    return this.parsed.model;
  }

  /** The analysis options the service analyses with now. */
  get analysisOptionsInUse(): Partial<AnalysisOptions> {
    return this.analysisOptions;
  }

  /** New analysis settings: analyses are redone when next asked for; the parse stays. */
  setAnalysisOptions(options: Partial<AnalysisOptions>): void {
    this.analysisOptions = options;
    for (const c of this.cache.values()) {
      delete c.analysis;
      delete c.marks;
    }
  }

  session(id: string): Session | undefined {
    return this.byId.get(id);
  }

  header(): TraceHeader {
    const { model } = this.parsed;
    let callCount = 0;
    for (const s of model.sessions) callCount += s.calls.length;
    const first = model.sessions.find((s) => s.role === 'main') ?? model.sessions[0];
    return {
      fileName: this.options.fileName,
      files: model.files,
      format: model.format,
      formatLabel: model.format ? (formatById(model.format)?.label ?? null) : null,
      detection: this.parsed.detection.evidence,
      detectionConfidence: this.parsed.detection.confidence,
      formatChosen: this.options.formatChosen,
      formatChoices: formatChoices(),
      limitations: model.limitations,
      problem: this.parsed.problem,
      diagnostics: [...model.diagnostics, ...(this.traceCost()?.diagnostics ?? [])].map((d) => ({
        file: model.files[d.file] ?? '',
        fileIndex: d.file,
        line: d.line,
        severity: d.severity,
        message: d.message,
      })),
      skippedRecords: model.skippedRecords,
      sessionCount: model.sessions.length,
      callCount,
      defaultSessionId: first?.id ?? null,
      title: traceTitle(this.options.fileName, model.sessions, first),
      cost: this.traceCost()?.total ?? null,
    };
  }

  /** Picker entries matching `query` (id, title or label, any case), in tree order, from `offset`. */
  sessionList({ query, offset, limit }: TraceQueryParams<'sessionList'>): SessionPage {
    if (!this.order) {
      const sessions = this.parsed.model.sessions;
      this.order = sessionTreeOrder(sessions).map(({ index, depth }) => {
        const s = sessions[index]!;
        return { id: s.id, label: sessionLabel(s, s.calls.length, depth), depth };
      });
    }
    return sessionPage(this.order, query, offset, limit);
  }

  private entry(id: string): SessionCache {
    let c = this.cache.get(id);
    if (!c) {
      c = {};
      this.cache.set(id, c);
    }
    return c;
  }

  private summary(session: Session): SessionSummary {
    const c = this.entry(session.id);
    c.summary ??= summarizeSession(session);
    return c.summary;
  }

  private analysis(session: Session): SessionAnalysis {
    const c = this.entry(session.id);
    c.analysis ??= analyzeSession(session, this.analysisOptions, this.summary(session));
    return c.analysis;
  }

  private marks(session: Session): CallMarks {
    const c = this.entry(session.id);
    c.marks ??= callMarks(this.analysis(session));
    return c.marks;
  }

  private subagents(session: Session): SubagentLink[] {
    this.children ??= childrenByParent(this.parsed.model);
    return subagentLinks(this.children, session);
  }

  /** The summary and marks of a session: cheap, so the page paints them before the analyses. */
  sessionIntro({ sessionId }: TraceQueryParams<'sessionIntro'>): SessionIntro | null {
    const session = this.byId.get(sessionId);
    if (!session) return null;
    return {
      summary: this.summary(session),
      compactions: session.compactions.map((c) => ({
        beforeCall: c.beforeCall,
        trigger: c.trigger,
        preTokens: c.preTokens,
        ...(c.rewind ? { rewind: true as const } : {}),
      })),
      events: eventMarks(session),
      subagents: this.subagents(session),
      cost: this.costFigures(session),
    };
  }

  private costFigures(session: Session): SessionCostFigures | null {
    const c = this.entry(session.id);
    if (c.cost) return c.cost;
    const cost = this.sessionCost(session);
    if (!cost) return null;
    c.cost = sessionCostFigures(session, cost);
    return c.cost;
  }

  /** The session replayed under a TTL the user typed (the cost panel's own row); null without prices. */
  customTtl({ sessionId, minutes, writeMultiple }: TraceQueryParams<'customTtl'>): TtlReplay | null {
    const custom: CustomTtl = { minutes, writeMultiple };
    const session = this.byId.get(sessionId);
    const cost = session ? this.sessionCost(session) : null;
    const figures = session ? this.costFigures(session) : null;
    if (!session || !cost || !figures) return null;
    return customReplay(ttlCallSource(session, cost), figures.ttl, custom);
  }

  /** A session's context anatomy: what fills each call's input and what each part cost. */
  sessionContext({ sessionId }: TraceQueryParams<'sessionContext'>): SessionContext | null {
    const session = this.byId.get(sessionId);
    if (!session) return null;
    const source = this.contextSource;
    this.anatomy ??= contextAnatomy(this.parsed.model, {
      content: source?.content ?? null,
      tokenizer: source?.tokenizer ?? (() => CHAR_ESTIMATE),
      prices: this.prices,
      costs: this.traceCost(),
      notes: source ? source.notes : ['no tokenizer was loaded: text counted as characters ÷ 4'],
    });
    return sessionContextView(this.anatomy, this.indexOf.get(session) ?? -1);
  }

  /** The analyses and the timeline columns of a session. */
  sessionBody({ sessionId }: TraceQueryParams<'sessionBody'>): SessionBody | null {
    const session = this.byId.get(sessionId);
    if (!session) return null;
    const analysis = this.analysis(session);
    const cost = this.sessionCost(session);
    const columns = buildTimelineColumns(session, analysis, cost);
    markSubagentStarts(
      columns,
      this.subagents(session).map((s) => s.parentCallIndex),
    );
    // Generated as counted: a million calls are not copied first.
    const { tools, toolCallCount } = countTools(
      (function* (): Generator<{ name: string; failed: boolean }> {
        for (const c of session.calls) for (const t of c.toolCalls) yield { name: t.name, failed: t.isError === true };
      })(),
    );
    return {
      sessionId,
      analysis: analysisView(this.parsed.model, session, analysis, cost),
      columns,
      tools,
      toolCallCount,
    };
  }

  /** Rows of calls [from, from + count) of a session, for tooltips, the selection and the calls table. */
  callRows({ sessionId, from, count }: TraceQueryParams<'callRows'>): CallRow[] {
    const session = this.byId.get(sessionId);
    if (!session) return [];
    const marks = this.marks(session);
    const cost = this.sessionCost(session);
    const end = Math.min(session.calls.length, from + Math.min(count, MAX_ROWS_PER_REQUEST));
    const out: CallRow[] = [];
    for (let i = Math.max(0, from); i < end; i++) out.push(row(session.calls[i]!, marks, cost));
    return out;
  }

  private toolList(session: Session): NonNullable<SessionCache['tools']> {
    const c = this.entry(session.id);
    if (!c.tools) {
      c.tools = [];
      for (const call of session.calls) for (const tool of call.toolCalls) c.tools.push({ call: call.index, tool });
    }
    return c.tools;
  }

  /** Rows of tool calls [from, from + count) of a session, in call order. */
  toolRows({ sessionId, from, count }: TraceQueryParams<'toolRows'>): ToolCallRow[] {
    const session = this.byId.get(sessionId);
    if (!session) return [];
    const list = this.toolList(session);
    const end = Math.min(list.length, from + Math.min(count, MAX_ROWS_PER_REQUEST));
    const out: ToolCallRow[] = [];
    for (let i = Math.max(0, from); i < end; i++) {
      const { call, tool } = list[i]!;
      out.push(toolCallRow(i, call, tool, tool.isError));
    }
    return out;
  }

  /** The calls of a session that used tool `name` (for the timeline's tool filter). */
  callsUsingTool({ sessionId, tool: name }: TraceQueryParams<'callsUsingTool'>): Int32Array {
    const session = this.byId.get(sessionId);
    if (!session) return new Int32Array(0);
    const out: number[] = [];
    for (const c of session.calls) if (c.toolCalls.some((t) => t.name === name)) out.push(c.index);
    return Int32Array.from(out);
  }

  /**
   * Calls whose tool names, files, commands, error text or prompt (the turn's first
   * characters, on the turn's first call) contain `query`, ignoring case: in one session,
   * or in all of them when `sessionId` is null. One hit per call, its first matching field.
   */
  search({ query, sessionId }: TraceQueryParams<'search'>, limit = MAX_SEARCH_HITS): SearchResult {
    const sessions =
      sessionId === null
        ? this.parsed.model.sessions
        : [this.byId.get(sessionId)].filter((s): s is Session => s !== undefined);
    return searchCalls(
      sessions.map((session) => ({
        id: session.id,
        // Generated as searched: a million calls are not copied first.
        calls: (function* (): Generator<SearchableCall> {
          for (const call of session.calls)
            yield {
              index: call.index,
              turn: call.turn,
              tools: call.toolCalls,
              prompt: () => (call.turn === null ? null : (session.turns[call.turn]?.preview ?? null)),
            };
        })(),
      })),
      query,
      limit,
    );
  }

  /** Details of one call, or null when the session or call does not exist. */
  callDetail({ sessionId: id, callIndex }: TraceQueryParams<'callDetail'>): CallDetail | null {
    const session = this.byId.get(id);
    const call = session?.calls[callIndex];
    if (!session || !call) return null;
    const model = this.parsed.model;
    return {
      sessionId: id,
      index: call.index,
      turnPreview: call.turn !== null ? (session.turns[call.turn]?.preview ?? null) : null,
      file: model.files[call.source.file] ?? '',
      line: call.source.line,
      tools: call.toolCalls.map((t) => toolDetail(model, t)),
    };
  }

  /** Where a call (or one of its tool calls, by id) was read: the line to reveal. */
  /** Where a call's records are, to read its transcript again (null: no such call). */
  transcriptPlan(id: string, callIndex: number): TranscriptPlan | null {
    const session = this.byId.get(id);
    return session ? transcriptPlan(session, callIndex) : null;
  }

  sourceOf(id: string, callIndex: number, toolId: string | null): SourceRef | null {
    const call = this.byId.get(id)?.calls[callIndex];
    if (!call) return null;
    const tool = toolId === null ? undefined : call.toolCalls.find((t) => t.id === toolId);
    return tool ? (tool.resultSource ?? tool.source) : call.source;
  }

  /** The what-if workload of a session (the whole trace for block-hash traces). */
  whatIfWorkload(id: string, filePath: string, format: FormatId | null): WhatIfWorkload {
    return buildWhatIfWorkload(this.parsed.model, id, filePath, format, (s) => this.byId.get(s));
  }

  /** The CLI's report of the trace (Analyze Agent Session), with the current options and prices. */
  report(): TraceReport {
    return buildTraceReport(this.parsed, this.analysisOptions, this.prices ? { book: this.prices } : null);
  }

  /**
   * What the Problems view lists: the file's problem, read errors and every session's
   * retry loops. Only the retry analysis runs (or is reused), so a trace of 50,000
   * conversations is not analysed whole for it.
   */
  problems(): TraceProblems {
    const { model, problem } = this.parsed;
    const loops: RetryLoop[] = [];
    let loopsLeftOut = 0;
    const minAttempts = this.analysisOptions.minLoopAttempts;
    for (const session of model.sessions) {
      const cached = this.cache.get(session.id)?.analysis;
      const found = cached ? cached.retry.loops : findRetryLoops(session, minAttempts).loops;
      const room = Math.max(0, PROBLEM_LOOPS_MAX - loops.length);
      loops.push(...found.slice(0, room));
      loopsLeftOut += Math.max(0, found.length - room);
    }
    return { files: model.files, problem, diagnostics: model.diagnostics, loops, loopsLeftOut };
  }
}
