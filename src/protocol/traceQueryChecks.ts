import { MAX_CUSTOM_TTL_MIN, MAX_WRITE_MULTIPLE } from '../core/cost/cacheTtlWhatIf';
import { uiText } from '../core/text/safeText';
import type {
  TraceQueryName,
  TraceQueryNullMeansMissing,
  TraceQueryParams,
  TraceQueryResult,
} from '../core/view/traceQueries';
import { MAX_ROWS_PER_REQUEST } from '../core/view/traceService';
import {
  callRef,
  integer,
  MAX_CALL_INDEX,
  MAX_ID_CHARS,
  MAX_QUERY_CHARS,
  MAX_SESSION_OFFSET,
  number,
  sessionId,
  string,
} from './checks';
import { SESSION_PAGE_SIZE } from './messages';
import type { CallRef, WebviewRequests } from './messages';

// The trace queries (TraceQueries) as the page asks them: how each one's params are checked
// before the host forwards it (every message from the page is hostile data), and what the
// page is told when a query of one session or call finds nothing. The host, the HTML
// report's page and the test harness answer every query through these.

/**
 * How the host takes one trace query from the page: its params, checked; and, for a query
 * of one session or call, what its null answer (not there) tells the page.
 */
type TraceQueryCheck<M extends TraceQueryName> = {
  params(p: Record<string, unknown>): TraceQueryParams<M>;
} & (M extends TraceQueryNullMeansMissing ? { missing(p: TraceQueryParams<M>): string } : unknown);

function rowsParams(p: Record<string, unknown>): { sessionId: string; from: number; count: number } {
  return {
    sessionId: sessionId(p),
    from: integer(p['from'], 'params.from', MAX_CALL_INDEX),
    count: integer(p['count'], 'params.count', MAX_ROWS_PER_REQUEST),
  };
}

const noSession = ({ sessionId }: { sessionId: string }): string =>
  `No session ${uiText(sessionId, { max: 80 })} in this trace.`;
/** What the page is told when a call it names is not there (a detail, a transcript). */
export const noCall = ({ sessionId, callIndex }: CallRef): string =>
  `No call ${callIndex + 1} in session ${uiText(sessionId, { max: 80 })}.`;

/** Every trace query the page may ask, by name: a method added to TraceQueries is refused until it has its checks here (the compiler asks). */
export const TRACE_QUERY_CHECKS: { [M in TraceQueryName]: TraceQueryCheck<M> } = {
  sessionList: {
    params: (p) => ({
      query: string(p['query'], 'params.query', MAX_QUERY_CHARS),
      offset: integer(p['offset'], 'params.offset', MAX_SESSION_OFFSET),
      limit: integer(p['limit'], 'params.limit', SESSION_PAGE_SIZE),
    }),
  },
  sessionIntro: { params: (p) => ({ sessionId: sessionId(p) }), missing: noSession },
  sessionBody: { params: (p) => ({ sessionId: sessionId(p) }), missing: noSession },
  callRows: { params: rowsParams },
  toolRows: { params: rowsParams },
  search: {
    params: (p) => ({
      query: string(p['query'], 'params.query', MAX_QUERY_CHARS),
      sessionId: p['sessionId'] === null ? null : sessionId(p),
    }),
  },
  callsUsingTool: {
    params: (p) => ({ sessionId: sessionId(p), tool: string(p['tool'], 'params.tool', MAX_ID_CHARS) }),
  },
  callDetail: { params: (p) => callRef(p, 'params'), missing: noCall },
  sessionContext: { params: (p) => ({ sessionId: sessionId(p) }), missing: noSession },
  customTtl: {
    params: (p) => ({
      sessionId: sessionId(p),
      minutes: number(p['minutes'], 'params.minutes', 0, MAX_CUSTOM_TTL_MIN),
      writeMultiple:
        p['writeMultiple'] === null
          ? null
          : number(p['writeMultiple'], 'params.writeMultiple', 0, MAX_WRITE_MULTIPLE, true),
    }),
  },
};

/** The names of the trace queries, for the loops that forward every one of them. */
export const TRACE_QUERY_NAMES = Object.keys(TRACE_QUERY_CHECKS) as TraceQueryName[];

/** True when `method` names a trace query (own keys only: `constructor`, `__proto__` are not). */
export function isTraceQuery(method: string): method is TraceQueryName {
  return Object.hasOwn(TRACE_QUERY_CHECKS, method);
}

/** A trace query's answer as the page gets it: a null that means "not there" becomes an error saying so. */
export function queryAnswer<M extends TraceQueryName>(
  method: M,
  params: TraceQueryParams<M>,
  result: TraceQueryResult<M>,
): WebviewRequests[M]['result'] {
  const check = TRACE_QUERY_CHECKS[method] as { missing?: (p: TraceQueryParams<M>) => string };
  if (result === null && check.missing) throw new Error(check.missing(params));
  return result as WebviewRequests[M]['result'];
}
