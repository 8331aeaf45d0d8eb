import { FORMATS } from '../core/trace/formats';
import type { FormatId } from '../core/trace/model';
import {
  boolean,
  callRef,
  checkWith,
  integer,
  MAX_CLIPBOARD_CHARS,
  MAX_EXPORT_CHARS,
  MAX_EXPORT_NAME_CHARS,
  MAX_FILE_INDEX,
  MAX_ID_CHARS,
  MAX_LINE,
  MAX_LOG_CHARS,
  record,
  refuse,
  Refused,
  sessionId,
  string,
} from './checks';
import type { Checked } from './checks';
import type { WebviewNotification, WebviewRequests } from './messages';
import { TRANSCRIPT_MAX_CHARS } from '../core/view/transcript';
import { isTraceQuery, TRACE_QUERY_CHECKS } from './traceQueryChecks';

export {
  checkWith,
  integer,
  MAX_CALL_INDEX,
  MAX_CLIPBOARD_CHARS,
  MAX_EXPORT_CHARS,
  MAX_EXPORT_NAME_CHARS,
  MAX_FILE_INDEX,
  MAX_ID_CHARS,
  MAX_LINE,
  MAX_LOG_CHARS,
  MAX_QUERY_CHARS,
  MAX_SESSION_OFFSET,
  record,
  refuse,
  string,
} from './checks';
export type { Checked } from './checks';

/**
 * The webview renders hostile trace text, so the host treats every message from it as
 * untrusted too: each one is checked here for shape, type and range before any handler
 * sees it, and anything else is refused with a reason (logged and answered by the host).
 * Pure, so unit tests can throw every crafted message at it.
 */

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
        const toolId =
          m['toolId'] === null || m['toolId'] === undefined ? null : string(m['toolId'], 'toolId', MAX_ID_CHARS);
        return { ok: true, value: { type, ref: callRef(m['ref'], 'ref'), toolId } };
      }
      case 'source/revealLine':
        return {
          ok: true,
          value: {
            type,
            file: integer(m['file'], "file (the index of one of the trace's files)", MAX_FILE_INDEX),
            line: integer(m['line'], 'line', MAX_LINE),
          },
        };
      case 'format/choose': {
        const format = m['format'];
        if (format !== null && (typeof format !== 'string' || !FORMAT_IDS.has(format)))
          refuse('format is not a known format id or null');
        return { ok: true, value: { type, format: format as FormatId | null } };
      }
      case 'clipboard/write': {
        const text = string(m['text'], 'text', MAX_CLIPBOARD_CHARS);
        const words = shellWords(text);
        if (!words || words[0] !== 'agent-trace' || words[1] !== 'simulate')
          refuse('text is not an agent-trace simulate command of plain or single-quoted words on one line');
        return { ok: true, value: { type, text } };
      }
      case 'whatif/export': {
        const fileName = string(m['fileName'], 'fileName', MAX_EXPORT_NAME_CHARS);
        if (!EXPORT_NAME.test(fileName) || CONTROL_OR_BIDI.test(fileName))
          refuse(
            'fileName is not a plain file name ending in .json (no folder, no leading dot, no control characters)',
          );
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

/** Checks the params of a request from the webview. */
export function checkRequestParams<M extends keyof WebviewRequests>(method: M, params: unknown): Checked<Params<M>> {
  return checkWith(() => {
    const p = record(params, 'params');
    if (isTraceQuery(method))
      return (TRACE_QUERY_CHECKS[method].params as (p: Record<string, unknown>) => Params<M>)(p);
    switch (method) {
      case 'callTranscript': {
        const ref = callRef(p, 'params');
        const maxChars = integer(p['maxChars'], 'params.maxChars', TRANSCRIPT_MAX_CHARS);
        if (maxChars === 0) refuse('params.maxChars is 0');
        return { ...ref, maxChars } as Params<M>;
      }
      case 'whatIfWorkload':
        return { sessionId: sessionId(p) } as Params<M>;
      case 'whatif/calibration':
        // The page asks only that the dialog be shown: anything it sends along is refused.
        if (Object.keys(p).length > 0) refuse('params of whatif/calibration must be empty');
        return {} as Params<M>;
      default:
        return refuse(`unknown request ${JSON.stringify(String(method).slice(0, 64))}`);
    }
  });
}
