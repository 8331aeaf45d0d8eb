import type { SessionContext } from '../context/contextView';
import type { TtlReplay } from '../cost/cacheTtlWhatIf';
import type { SessionSummary } from '../analysis/sessionSummary';
import type { SessionPage } from './sessionList';
import type { TimelineColumns } from './timelineColumns';
import type {
  CallDetail,
  CallRow,
  CompactionMark,
  EventMark,
  SessionCostFigures,
  SessionHead,
  SubagentLink,
  TraceView,
} from './traceView';

// The questions the inspector page asks about a trace and the shapes of their answers.
// Two services answer them: TraceService from the parsed model (in the extension's trace
// worker) and ViewTraceService from a built view (the HTML report, which has no host).

/**
 * Every question the page asks about a trace's model, one method each. A method's name is
 * the question's name on every wire (page → host → trace worker) and its one argument is
 * the params the page sends, so the host, the worker, the report and the test harness
 * forward any of them without naming it. Adding one: CONTRIBUTING.md, "Adding a data request".
 */
export interface TraceQueries {
  /** Picker entries matching a query (id, title or label, any case), in tree order, from an offset. */
  sessionList(p: { query: string; offset: number; limit: number }): SessionPage;
  /** A session's summary and marks (painted first); null: no such session. */
  sessionIntro(p: { sessionId: string }): SessionIntro | null;
  /** A session's analyses and timeline columns (painted after the summary); null: no such session. */
  sessionBody(p: { sessionId: string }): SessionBody | null;
  /** Rows of calls [from, from + count) of a session (tooltips, the selection, the calls table). */
  callRows(p: { sessionId: string; from: number; count: number }): CallRow[];
  /** Rows of a session's tool calls [from, from + count) (the tool-calls table). */
  toolRows(p: { sessionId: string; from: number; count: number }): ToolCallRow[];
  /** Calls whose tools, files, commands, errors or prompt contain the query: in one session, or all (null). */
  search(p: { query: string; sessionId: string | null }): SearchResult;
  /** The calls of a session that used one tool (the timeline's tool filter). */
  callsUsingTool(p: { sessionId: string; tool: string }): Int32Array;
  /** Tool calls, errors and source line of one call (fetched when it is selected); null: no such call. */
  callDetail(p: { sessionId: string; callIndex: number }): CallDetail | null;
  /** The session replayed under the cache TTL the user typed (the cost panel's own row); null without prices. */
  customTtl(p: { sessionId: string; minutes: number; writeMultiple: number | null }): TtlReplay | null;
  /** What fills each call's input, by source, and what each part cost (the context panel); null: no such session. */
  sessionContext(p: { sessionId: string }): SessionContext | null;
}

/** The name of a trace query (and of its request on every wire). */
export type TraceQueryName = keyof TraceQueries;
/** What a trace query is asked with. */
export type TraceQueryParams<M extends TraceQueryName> = Parameters<TraceQueries[M]>[0];
/** What a trace query answers. */
export type TraceQueryResult<M extends TraceQueryName> = ReturnType<TraceQueries[M]>;
/**
 * The queries whose null answer means the session or call asked for is not there: the
 * page is answered with an error saying so (src/protocol/traceQueryChecks.ts words it), never null.
 */
export type TraceQueryNullMeansMissing = 'sessionIntro' | 'sessionBody' | 'callDetail' | 'sessionContext';

/** What the page shows before any session: the file, its format and problems, and how many sessions there are. */
export interface TraceHeader
  extends Pick<
    TraceView,
    | 'fileName'
    | 'format'
    | 'formatLabel'
    | 'detection'
    | 'detectionConfidence'
    | 'formatChosen'
    | 'formatChoices'
    | 'limitations'
    | 'problem'
    | 'diagnostics'
    | 'skippedRecords'
    | 'cost'
  > {
  /** Keys of the trace's files: 0 is the opened file, others are companions (sub-agent logs) by relative path. */
  files: string[];
  sessionCount: number;
  /** LLM calls over every session. */
  callCount: number;
  /** The session shown first: the first main session, else the first. */
  defaultSessionId: string | null;
  /** What to call the trace beside its file name: its one main session's title (or its first's, for a file named by an id), null when none or when the file's name says more (traceTitle); trace text. */
  title: string | null;
}

/** The first part of a session, known as soon as the file is read: its summary and marks. */
export interface SessionIntro {
  summary: SessionSummary;
  compactions: CompactionMark[];
  /** Failed API requests, grouped by the call they came before. */
  events: EventMark[];
  subagents: SubagentLink[];
  /** The session's cost and cache TTL what-if (figures only: the page asks for a TTL the user types); null without prices. */
  cost: SessionCostFigures | null;
}

/** A tool name of a session with how often it was called, for the timeline's filter. */
export interface ToolCount {
  name: string;
  calls: number;
  failed: number;
}

/** The rest of a session, after its analysis: what the timeline, fingerprint and tables draw. */
export interface SessionBody {
  sessionId: string;
  analysis: SessionHead['analysis'];
  columns: TimelineColumns;
  tools: ToolCount[];
  /** Tool calls in the session (rows of the tool-calls table). */
  toolCallCount: number;
}

/** A tool call as the tool-calls table lists it. */
export interface ToolCallRow {
  /** Position in the session's tool calls. */
  index: number;
  callIndex: number;
  id: string;
  name: string;
  /** The file or command it worked on. */
  target: string | null;
  failed: boolean | null;
  exitCode: number | null;
  durationMs: number | null;
  /** First line of the error, clipped. */
  error: string | null;
}

/** Where a search hit matched. */
export type SearchField = 'tool' | 'file' | 'command' | 'error' | 'prompt';

/** One call a search found. */
export interface SearchHit {
  sessionId: string;
  callIndex: number;
  field: SearchField;
  /** The matching text around the match, on one line and clipped. */
  text: string;
}

/** The calls a search found, in session and call order, at most `limit` of them. */
export interface SearchResult {
  query: string;
  /** Every matching call, not only the hits listed. */
  total: number;
  hits: SearchHit[];
}

/** Asks `queries` one trace query by its name: what every forwarder (worker, report page, test host) does with a checked request. */
export function askQuery<M extends TraceQueryName>(
  queries: TraceQueries,
  method: M,
  params: TraceQueryParams<M>,
): TraceQueryResult<M> {
  return (queries[method] as (p: TraceQueryParams<M>) => TraceQueryResult<M>).call(queries, params);
}
