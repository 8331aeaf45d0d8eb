import type { SessionBody, SessionIntro, TraceHeader } from '../../src/core/view/traceService';
import type { CallRow, SessionHead } from '../../src/core/view/traceView';
import type { InspectorSettings } from '../../src/protocol/messages';
import type { Palette } from '../shared/palette';
import type { TimelineRestore } from '../timeline/timelinePanel';
import type { ViewWindow } from '../timeline/viewWindow';
import type { InspectorHost, InspectorOptions } from './inspectorHost';
import type { PersistedState } from './inspectorModel';

/**
 * Where a panel's section goes on the page, top to bottom:
 * - `controls`: the session's row of controls in the header, after the session picker;
 * - `timeline`: the first screen, under the session's key figures;
 * - `chart-notes`: inside the timeline's section, under the chart (what the chart shows, said in words);
 * - `beside-details`: beside the selected call's details;
 * - `below`: under the first screen and the session's figures.
 * Sections of one slot keep the order of the panels in `PANELS` (webview/inspector/panels.ts).
 */
export type PanelSlot = 'controls' | 'timeline' | 'chart-notes' | 'beside-details' | 'below';

/** One element of a panel and where it goes. */
export interface PanelSection {
  slot: PanelSlot;
  element: HTMLElement;
}

/** The session on screen, as every panel is told of it. */
export interface PanelSession {
  readonly id: string;
  /** Its summary, cost and marks: here first. */
  readonly intro: SessionIntro;
  /** Its analyses and timeline columns; null while they are coming. */
  readonly body: SessionBody | null;
  /** The intro and the body's analysis in one (null without the body). */
  readonly head: SessionHead | null;
  /** The trace's header. */
  readonly header: TraceHeader;
  /** A new object each time the trace is read again or grows: what a panel computed of the old one is stale. */
  readonly trace: object;
  /** New calls were appended to this session: windows and scrolls stay where the user left them. */
  readonly keepView: boolean;
  /** The timeline's view stored before the page was rebuilt, to put back on this session (null: none). */
  readonly storedView: TimelineRestore | null;
}

/**
 * The contract between the inspector page and each of its panels (the timeline, the
 * analyses, cost, what-if, the call tables). The page owns the trace header, the session
 * shown and the selected call; a panel draws what it is told and asks the page, through
 * its PanelContext, for anything else (data from the host, selecting a call, storing
 * state). Every method but `sections` and `showSession` is optional.
 */
export interface InspectorPanel {
  /** The panel's elements and where they go; placed once, when the page is built. */
  readonly sections: readonly PanelSection[];
  /** The state stored for this file (and the settings) when the trace arrives; before any `showSession`. */
  restore?(saved: PersistedState, settings: InspectorSettings): void;
  /** The session to show (its intro first, again with its body), or none. */
  showSession(session: PanelSession | null): void;
  /** The trace was read again from the start (`appended` false) or grew: indexes into the old one may point elsewhere. */
  traceChanged?(appended: boolean): void;
  /** The timeline's window moved (zoom, pan, a jump): the calls in view, over call numbers (null: none). */
  viewMoved?(window: ViewWindow | null): void;
  /** The selected call changed (null: none); `bringIntoView`: scroll or pan to it. */
  selectionChanged?(callIndex: number | null, bringIntoView: boolean): void;
  /** Call rows asked for through the context arrived. */
  rowsArrived?(): void;
  /** The theme changed: the colours to draw with. */
  setPalette?(palette: Palette): void;
  /** What the panel keeps in the webview state with the selection (merged into it on every store). */
  persisted?(): PersistedState;
  /** The panel's part of the HTML report the host writes (null: nothing to add). */
  reportDocument?(): unknown;
}

/** What a panel may ask of the page. */
export interface PanelContext {
  readonly host: InspectorHost;
  readonly options: InspectorOptions;
  /** The chart colours at start (later changes come through `setPalette`). */
  readonly palette: Palette;
  /** The what-if worker's script, set by the host on the page's root (null: none). */
  readonly workerUri: string | null;
  /** Selects a call (null: none); `reveal` opens its source line, `prefix` goes before the call's announcement. */
  select(callIndex: number | null, options?: { reveal?: boolean; prefix?: string }): void;
  selected(): number | null;
  /** Brings a call of the session shown into the timeline's view and selects it. */
  focusCall(callIndex: number): void;
  /** Shows these calls in the timeline's window. */
  showCalls(first: number, last: number): void;
  /** The calls in the timeline's window, over call numbers (null: none): a chart over calls shares its zoom. */
  callWindow(): ViewWindow | null;
  /** Moves the timeline's window to these calls (a chart over calls was zoomed or panned); every panel hears `viewMoved`. */
  setCallWindow(window: ViewWindow): void;
  /** Shows another session, selecting a call there. */
  openSession(sessionId: string, callIndex: number | null): void;
  /** The session shown (null: none). */
  sessionId(): string | null;
  /** A call's row, if it arrived; `ensureRows` asks for those not here yet (`rowsArrived` says when). */
  rowOf(callIndex: number): CallRow | undefined;
  ensureRows(first: number, last: number): void;
  /** Says a text in the page's live region. */
  announce(text: string): void;
  /** Runs `fn`; a throw is shown on the page and reported to the host. */
  safely(what: string, fn: () => void): void;
  reportError(what: string, error: unknown): void;
  /** Stores the selection and every panel's `persisted()` in the webview state. */
  persist(): void;
  /** Stores a patch of the webview state now. */
  saveState(patch: PersistedState): void;
  /** The panel's view (zoom, filter) moved: the page stores it a moment after it stops moving. */
  viewChanged(): void;
}

/** Makes a panel for the page; null when the page runs without it (a report has no what-if simulator). */
export type PanelFactory = (context: PanelContext) => InspectorPanel | null;

/** The session on screen: its summary first, its analyses and timeline columns once they come. */
export interface ShownSession {
  id: string;
  intro: SessionIntro;
  body: SessionBody | null;
}

/** What the panels are told of the session shown. */
export function panelSessionOf(
  s: ShownSession,
  header: TraceHeader,
  trace: object,
  keepView: boolean,
  storedView: TimelineRestore | null,
): PanelSession {
  const { intro, body } = s;
  const head = body
    ? {
        summary: intro.summary,
        compactions: intro.compactions,
        events: intro.events,
        subagents: intro.subagents,
        analysis: body.analysis,
        cost: intro.cost,
      }
    : null;
  return { id: s.id, intro, body, head, header, trace, keepView, storedView };
}
