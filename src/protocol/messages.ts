import type { CallTranscript } from '../core/view/transcript';
import type { SessionPage } from '../core/view/sessionList';
import type {
  SessionIntro,
  TraceHeader,
  TraceQueryName,
  TraceQueryNullMeansMissing,
  TraceQueryParams,
  TraceQueryResult,
} from '../core/view/traceQueries';
import type { PolicyId } from '../core/sim/policies';
import type { CalibrationFit } from '../core/sim/calibrate';
import type { WhatIfWorkload } from '../core/sim/whatIfWorkload';
import type { FormatId } from '../core/trace/model';

/**
 * The one protocol between the extension host and the inspector webview. Type
 * strings of notifications are `noun/verb` paths; a request is named by the method that
 * answers it (TraceQueries). Notifications flow both ways; requests (webview → host) carry
 * an `id` and are answered by a `response` with `inReplyTo`.
 */

/** Concurrent sessions the what-if panel (and `agentTrace.whatIf.replicas`) allows: 1 to this. */
export const WHATIF_MAX_REPLICAS = 256;
/** The tool-wait scale the what-if panel (and `agentTrace.whatIf.toolWaitScale`) allows. */
export const WHATIF_MIN_TOOL_WAIT_SCALE = 0.25;
export const WHATIF_MAX_TOOL_WAIT_SCALE = 4;

/** The what-if panel's starting scenario (`agentTrace.whatIf.*`); a file's own saved choices win over it. */
export interface WhatIfDefaults {
  /** GPU preset id (`h100`, `h200`). */
  gpu: string;
  /** Model preset id (MODEL_PRESETS). */
  model: string;
  /** Concurrent sessions, 1–256. */
  replicas: number;
  /** Seconds between session starts. */
  staggerS: number;
  /** Multiplier on every tool wait, 0.25–4. */
  toolWaitScale: number;
  policy: PolicyId;
}

/**
 * The built-in what-if defaults, for the host's settings and for the panel when a host
 * sends none: 16 sessions staggered 10 s apart, Qwen3-32B on one H200 (docs/design/simulator.md §4), vLLM's LRU.
 */
export const WHATIF_DEFAULTS: WhatIfDefaults = {
  gpu: 'h200',
  model: 'qwen3-32b',
  replicas: 16,
  staggerS: 10,
  toolWaitScale: 1,
  policy: 'vllm-lru',
};

/** Settings the webview needs; sent with every `init`. */
export interface InspectorSettings {
  /** Show the cached share in the bars by default. */
  showCached: boolean;
  /** Defaults of the what-if panel; an older host sends none and the panel uses its built-in ones. */
  whatIf?: WhatIfDefaults;
}

export type { WhatIfWorkload } from '../core/sim/whatIfWorkload';

/** Picker entries sent with `init` at most; more are asked for with `sessionList` (a query narrows them). */
export const SESSION_PAGE_SIZE = 1000;

/**
 * The trace queries (TraceQueries, src/core/view/traceQueries.ts) as requests of the page,
 * each by its method's name: the host checks the params (traceQueryChecks.ts) and forwards any of
 * them to the trace worker. A query whose null means "no such session or call" is answered
 * with an error saying so instead.
 */
export type TraceQueryRequests = {
  [M in TraceQueryName]: {
    params: TraceQueryParams<M>;
    result: M extends TraceQueryNullMeansMissing ? NonNullable<TraceQueryResult<M>> : TraceQueryResult<M>;
  };
};

/**
 * Requests the webview sends and the host answers: method → params and result. The page
 * asks for what it draws: a session's summary, then its analyses and timeline columns
 * (typed arrays), rows by page, search hits; never the whole trace. Besides the trace
 * queries, two the host answers with more than the model: a transcript (read again from
 * the trace's files) and the what-if workload (which names the file).
 */
export interface WebviewRequests extends TraceQueryRequests {
  /**
   * A call's transcript (its prompt, answer, tool inputs and outputs), read again from the
   * trace's own files when the page shows it; each text clipped to `maxChars` (at most
   * TRANSCRIPT_MAX_CHARS), asked again with more for "Show more".
   */
  callTranscript: { params: { sessionId: string; callIndex: number; maxChars: number }; result: CallTranscript };
  /** The what-if workload of a session (or of the whole trace, for block-hash traces), fetched when the what-if panel opens. */
  whatIfWorkload: { params: { sessionId: string }; result: WhatIfWorkload };
  /**
   * Step times from the person's own server: the host shows an open dialog for a
   * calibration file (`agent-trace calibrate RESULTS -o CAL.json`), reads and checks it,
   * and answers its fit; null when the dialog is cancelled. The page names no file.
   */
  'whatif/calibration': { params: Record<string, never>; result: WhatIfCalibration | null };
}

/** A calibration file's fit, for the what-if: its constants, how well they fitted, and the file's name (for the page to show). */
export interface WhatIfCalibration extends CalibrationFit {
  /** The file's base name, as text. */
  name: string;
}

/** Requests the host sends and the webview answers. */
export interface HostRequests {
  /**
   * The what-if panel's last scenario and sweep, for the HTML report (null when nothing ran).
   * The host checks the answer with parseWhatIfDocument before using any of it.
   */
  'whatif/current': { params: Record<string, never>; result: unknown };
}

/** Requests a side can send, as messages. */
export type RequestMessage<R> = {
  [M in keyof R & string]: { type: M; id: number; params: R[M] extends { params: infer P } ? P : never };
}[keyof R & string];

/** Answer to a request: `ok` with the result, or `err` with a message for the user. */
export type ResponseMessage =
  | { type: 'response'; inReplyTo: number; ok: unknown }
  | { type: 'response'; inReplyTo: number; err: string };

/** Notifications from the host. */
export type HostNotification =
  /**
   * Answer to `ready`, once the file is read: what the trace is, the first page of its
   * sessions, the session to show with its summary (the page paints it at once and then
   * asks for its body), the settings, and the call to select first (if any). Sent again
   * after `ready` on every reload of the page.
   */
  | {
      type: 'init';
      header: TraceHeader;
      sessions: SessionPage;
      intro: SessionIntro | null;
      settings: InspectorSettings;
      select: CallRef | null;
      live?: LiveState;
    }
  /**
   * The file was read again (it changed on disk, or another format was chosen) or the
   * analysis settings changed, or (`appended`) a followed file grew and only its new
   * bytes were read: the page asks again for what it shows and keeps its session,
   * selection, zoom window and scroll where it can.
   */
  | { type: 'trace/didChange'; header: TraceHeader; sessions: SessionPage; appended?: AppendedBytes; live?: LiveState }
  /**
   * A followed file was truncated, replaced (rotated) or deleted: what the page shows is
   * no longer the file. The page hides its figures and says why; the host reads the file
   * again from scratch (`trace/didChange`) or says it cannot (`load/stopped`).
   */
  | { type: 'trace/reset'; reason: 'truncated' | 'replaced' | 'deleted'; message: string }
  /** Reading stopped before the end: cancelled by the user, or failed (the message says why and what to do). */
  | { type: 'load/stopped'; reason: 'cancelled' | 'failed'; message: string; canRetry: boolean; overSizeLimit: boolean }
  /** Select and reveal a call (from a CodeLens or a command). */
  | { type: 'call/select'; ref: CallRef }
  /** Reading a large file: how far it got, so the panel shows progress instead of a blank view. */
  | { type: 'load/progress'; bytesRead: number; totalBytes: number | null }
  /** A request of the webview could not be carried out (or was refused): why, for the panel to say. */
  | { type: 'host/error'; message: string };

/** Notifications from the webview. */
export type WebviewNotification =
  /** The webview has loaded and listens; the host answers with `init`. Nothing is sent before it. */
  | { type: 'ready' }
  /** Stop reading the file (the Cancel button under the progress bar). */
  | { type: 'load/cancel' }
  /** Read the file again after a stop; `ignoreSizeLimit` reads a file above `agentTrace.maxFileSizeMB` this once. */
  | { type: 'load/retry'; ignoreSizeLimit: boolean }
  /** Show the source line of a call (or of one of its tool calls) in a text editor beside the inspector. */
  | { type: 'source/reveal'; ref: CallRef; toolId: string | null }
  /**
   * Show a line of one of the trace's files (a diagnostic's place) in a text editor beside
   * the inspector. `file` is the index the host gave the file in the trace view
   * (`fileIndex`), never a path: the host opens only files of the loaded trace.
   */
  | { type: 'source/revealLine'; file: number; line: number }
  /** Read the trace again as this format (null: detect it again). */
  | { type: 'format/choose'; format: FormatId | null }
  /** Put text on the clipboard ("Copy as CLI"): the host's clipboard works whatever the webview's permissions. */
  | { type: 'clipboard/write'; text: string }
  /** Save a what-if scenario and its results: the host asks where, then writes the JSON. */
  | { type: 'whatif/export'; fileName: string; json: string }
  /** Something failed inside the webview; the host logs it. */
  | { type: 'log/error'; message: string };

/** How long ago the trace's file last grew (or was written, when it was opened), by the host's clock: the page shows "live" while it is recent. */
export interface LiveState {
  /** Milliseconds since the file last grew; null when not known (not a local file). */
  grewMsAgo: number | null;
}

/** What an append brought: the bytes read for it (the file's new bytes only). */
export interface AppendedBytes {
  newBytes: number;
}

/** The file is "live" while it grew this recently (the Agent Sessions view says "live" on the same terms). */
export const LIVE_WINDOW_MS = 2 * 60_000;

/** A call in a session. */
export interface CallRef {
  sessionId: string;
  callIndex: number;
}

/** Everything the host can post to the webview. */
export type HostMessage = HostNotification | ResponseMessage | RequestMessage<HostRequests>;
/** Everything the webview can post to the host. */
export type WebviewMessage = WebviewNotification | ResponseMessage | RequestMessage<WebviewRequests>;
