import { MAX_CUSTOM_TTL_MIN, MAX_WRITE_MULTIPLE } from '../core/cost/cacheTtlWhatIf';
import { FORMATS } from '../core/trace/formats';
import type { FormatId } from '../core/trace/model';
import { MAX_ROWS_PER_REQUEST } from '../core/view/traceService';
import { SESSION_PAGE_SIZE } from './messages';
import type { CallRef, WebviewNotification, WebviewRequests } from './messages';
import { TRANSCRIPT_MAX_CHARS } from '../core/view/transcript';
import type { TraceQueryName, TraceQueryNullMeansMissing, TraceQueryParams, TraceQueryResult } from '../core/view/traceQueries';
import { uiText } from '../core/text/safeText';

/**
 * The webview renders hostile trace text, so the host treats every message from it as
 * untrusted too: each one is checked here for shape, type and range before any handler
 * sees it, and anything else is refused with a reason (logged and answered by the host).
 * Pure, so unit tests can throw every crafted message at it.
 */

/** A checked message, or why it was refused. */
export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** Longest id (session, tool call) a message may carry. */
export const MAX_ID_CHARS = 4096;
/** Largest call index, line and file index a message may name. */
export const MAX_CALL_INDEX = 100_000_000;
export const MAX_LINE = 2 ** 31 - 1;
export const MAX_FILE_INDEX = 1_000_000;
/** Longest clipboard text (a simulate command line) and what-if export. */
export const MAX_CLIPBOARD_CHARS = 16 * 1024;
export const MAX_EXPORT_CHARS = 64 * 2 ** 20;
export const MAX_EXPORT_NAME_CHARS = 255;
/** Longest search or session-find query. */
export const MAX_QUERY_CHARS = 1000;
/** Largest offset into the session list. */
export const MAX_SESSION_OFFSET = 100_000_000;
/** Longest error text the webview may ask the host to log (it is clipped further in the log). */
export const MAX_LOG_CHARS = 64 * 1024;

class Refused extends Error {}

export function refuse(message: string): never {
  throw new Refused(message);
}

/** Runs a check built from the helpers here: a refusal becomes `{ ok: false, error }`, anything else is a bug and throws. */
export function checkWith<T>(check: () => T): Checked<T> {
  try {
    return { ok: true, value: check() };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, error: e.message };
    throw e;
  }
}

export function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse(`${what} is not an object`);
  return value as Record<string, unknown>;
}

export function string(value: unknown, what: string, max: number): string {
  if (typeof value !== 'string') refuse(`${what} is not a string`);
  if (value.length > max) refuse(`${what} is longer than ${max} characters`);
  return value;
}

export function integer(value: unknown, what: string, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) refuse(`${what} is not a whole number from 0 to ${max}`);
  return value;
}

/** A finite number in (min, max] (or [min, max] when `zeroOk`). */
function number(value: unknown, what: string, min: number, max: number, zeroOk = false): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value > max || value < min || (!zeroOk && value === min)) refuse(`${what} is not a number ${zeroOk ? 'from' : 'above'} ${min}${zeroOk ? ' to' : ', at most'} ${max}`);
  return value;
}

function boolean(value: unknown, what: string): boolean {
  if (typeof value !== 'boolean') refuse(`${what} is not true or false`);
  return value;
}

function sessionId(p: Record<string, unknown>): string {
  return string(p['sessionId'], 'params.sessionId', MAX_ID_CHARS);
}

function callRef(value: unknown, what: string): CallRef {
  const r = record(value, what);
  return { sessionId: string(r['sessionId'], `${what}.sessionId`, MAX_ID_CHARS), callIndex: integer(r['callIndex'], `${what}.callIndex`, MAX_CALL_INDEX) };
}

const FORMAT_IDS: ReadonlySet<string> = new Set(FORMATS.map((f) => f.id));

/**
 * The name the panel proposes for a what-if export: a plain file name ending in .json. No
 * folder part, no leading dot (a hidden file, `..`), no control or bidi characters. The
 * host does not use it as given anyway: it names the file after its own trace (the page
 * shows hostile text, so it must not choose where, or as what, a file is written).
 */
const EXPORT_NAME = /^[^./\\][^/\\]*\.json$/;

/** A shell word as the panel writes one (shellWord): safe characters bare, anything else in single quotes (a quote as '\''). */
const SHELL_WORD = /^(?:[\w@%+=:,./-]+|'[^']*'(?:\\''[^']*')*)/;
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL_OR_BIDI = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * The words of a command line the panel wants on the clipboard, split as a POSIX shell
 * would: only bare safe words and single-quoted words (the two forms the panel writes)
 * separated by single spaces, so nothing in it can run anything else when pasted (no
 * `;`, `|`, `$(…)`, backquotes, redirections, globs or escapes outside quotes). Null when
 * it is not such a line.
 */
export function shellWords(text: string): string[] | null {
  if (CONTROL_OR_BIDI.test(text)) return null;
  const words: string[] = [];
  let rest = text;
  while (rest.length > 0) {
    const m = SHELL_WORD.exec(rest);
    if (!m) return null;
    const raw = m[0];
    words.push(raw.startsWith("'") ? raw.slice(1, -1).replace(/'\\''/g, "'") : raw);
    rest = rest.slice(raw.length);
    if (rest.length === 0) break;
    if (!rest.startsWith(' ') || rest.startsWith('  ')) return null;
    rest = rest.slice(1);
  }
  return words;
}

/** Checks a notification from the webview; unknown types, missing fields, wrong types and values out of range are refused. */
export function checkWebviewNotification(data: unknown): Checked<WebviewNotification> {
  try {
    const m = record(data, 'the message');
    const type = string(m['type'], 'type', 64);
    switch (type) {
      case 'ready':
      case 'load/cancel':
        return { ok: true, value: { type } };
      case 'load/retry':
        return { ok: true, value: { type, ignoreSizeLimit: boolean(m['ignoreSizeLimit'], 'ignoreSizeLimit') } };
      case 'source/reveal': {
        const toolId = m['toolId'] === null || m['toolId'] === undefined ? null : string(m['toolId'], 'toolId', MAX_ID_CHARS);
        return { ok: true, value: { type, ref: callRef(m['ref'], 'ref'), toolId } };
      }
      case 'source/revealLine':
        return { ok: true, value: { type, file: integer(m['file'], 'file (the index of one of the trace\'s files)', MAX_FILE_INDEX), line: integer(m['line'], 'line', MAX_LINE) } };
      case 'format/choose': {
        const format = m['format'];
        if (format !== null && (typeof format !== 'string' || !FORMAT_IDS.has(format))) refuse('format is not a known format id or null');
        return { ok: true, value: { type, format: format as FormatId | null } };
      }
      case 'clipboard/write': {
        const text = string(m['text'], 'text', MAX_CLIPBOARD_CHARS);
        const words = shellWords(text);
        if (!words || words[0] !== 'agent-trace' || words[1] !== 'simulate') refuse('text is not an agent-trace simulate command of plain or single-quoted words on one line');
        return { ok: true, value: { type, text } };
      }
      case 'whatif/export': {
        const fileName = string(m['fileName'], 'fileName', MAX_EXPORT_NAME_CHARS);
        if (!EXPORT_NAME.test(fileName) || CONTROL_OR_BIDI.test(fileName)) refuse('fileName is not a plain file name ending in .json (no folder, no leading dot, no control characters)');
        const json = string(m['json'], 'json', MAX_EXPORT_CHARS);
        let parsed: unknown;
        try {
          parsed = JSON.parse(json);
        } catch {
          refuse('json is not valid JSON');
        }
        record(parsed, 'the exported JSON');
        return { ok: true, value: { type, fileName, json } };
      }
      case 'log/error':
        return { ok: true, value: { type, message: string(m['message'], 'message', MAX_LOG_CHARS) } };
      default:
        return refuse(`unknown message type ${JSON.stringify(type.slice(0, 64))}`);
    }
  } catch (e) {
    if (e instanceof Refused) return { ok: false, error: e.message };
    throw e;
  }
}

type Params<M extends keyof WebviewRequests> = WebviewRequests[M]['params'];

/**
 * How the host takes one trace query from the page: its params, checked; and, for a query
 * of one session or call, what its null answer (not there) tells the page.
 */
type TraceQueryCheck<M extends TraceQueryName> = { params(p: Record<string, unknown>): TraceQueryParams<M> } & (M extends TraceQueryNullMeansMissing ? { missing(p: TraceQueryParams<M>): string } : unknown);

function rowsParams(p: Record<string, unknown>): { sessionId: string; from: number; count: number } {
  return { sessionId: sessionId(p), from: integer(p['from'], 'params.from', MAX_CALL_INDEX), count: integer(p['count'], 'params.count', MAX_ROWS_PER_REQUEST) };
}

const noSession = ({ sessionId }: { sessionId: string }): string => `No session ${uiText(sessionId, { max: 80 })} in this trace.`;
/** What the page is told when a call it names is not there (a detail, a transcript). */
export const noCall = ({ sessionId, callIndex }: CallRef): string => `No call ${callIndex + 1} in session ${uiText(sessionId, { max: 80 })}.`;

/** Every trace query the page may ask, by name: a method added to TraceQueries is refused until it has its checks here (the compiler asks). */
export const TRACE_QUERY_CHECKS: { [M in TraceQueryName]: TraceQueryCheck<M> } = {
  sessionList: {
    params: (p) => ({ query: string(p['query'], 'params.query', MAX_QUERY_CHARS), offset: integer(p['offset'], 'params.offset', MAX_SESSION_OFFSET), limit: integer(p['limit'], 'params.limit', SESSION_PAGE_SIZE) }),
  },
  sessionIntro: { params: (p) => ({ sessionId: sessionId(p) }), missing: noSession },
  sessionBody: { params: (p) => ({ sessionId: sessionId(p) }), missing: noSession },
  callRows: { params: rowsParams },
  toolRows: { params: rowsParams },
  search: { params: (p) => ({ query: string(p['query'], 'params.query', MAX_QUERY_CHARS), sessionId: p['sessionId'] === null ? null : sessionId(p) }) },
  callsUsingTool: { params: (p) => ({ sessionId: sessionId(p), tool: string(p['tool'], 'params.tool', MAX_ID_CHARS) }) },
  callDetail: { params: (p) => callRef(p, 'params'), missing: noCall },
  customTtl: {
    params: (p) => ({
      sessionId: sessionId(p),
      minutes: number(p['minutes'], 'params.minutes', 0, MAX_CUSTOM_TTL_MIN),
      writeMultiple: p['writeMultiple'] === null ? null : number(p['writeMultiple'], 'params.writeMultiple', 0, MAX_WRITE_MULTIPLE, true),
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
export function queryAnswer<M extends TraceQueryName>(method: M, params: TraceQueryParams<M>, result: TraceQueryResult<M>): WebviewRequests[M]['result'] {
  const check = TRACE_QUERY_CHECKS[method] as { missing?: (p: TraceQueryParams<M>) => string };
  if (result === null && check.missing) throw new Error(check.missing(params));
  return result as WebviewRequests[M]['result'];
}

/** Checks the params of a request from the webview. */
export function checkRequestParams<M extends keyof WebviewRequests>(method: M, params: unknown): Checked<Params<M>> {
  return checkWith(() => {
    const p = record(params, 'params');
    if (isTraceQuery(method)) return (TRACE_QUERY_CHECKS[method].params as (p: Record<string, unknown>) => Params<M>)(p);
    switch (method) {
      case 'callTranscript': {
        const ref = callRef(p, 'params');
        const maxChars = integer(p['maxChars'], 'params.maxChars', TRANSCRIPT_MAX_CHARS);
        if (maxChars === 0) refuse('params.maxChars is 0');
        return { ...ref, maxChars } as Params<M>;
      }
      case 'whatIfWorkload':
        return { sessionId: sessionId(p) } as Params<M>;
      default:
        return refuse(`unknown request ${JSON.stringify(String(method).slice(0, 64))}`);
    }
  });
}
