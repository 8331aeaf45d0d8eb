import { formatCount } from '../../src/core/text/formatNumbers';
import type { SessionBody } from '../../src/core/view/traceService';
import type { CallRow } from '../../src/core/view/traceView';
import { el, icon, replaceChildren } from '../shared/dom';
import type { RowCache } from '../shared/rowCache';
import { detailsPlaceholder, renderCallDetails } from '../timeline/callDetailsView';
import type { DetailsState } from '../timeline/callDetailsView';
import { moreChars, TRANSCRIPT_CHARS } from '../timeline/transcriptModel';
import type { TranscriptState } from '../timeline/transcriptModel';
import type { InspectorHost, InspectorOptions } from './inspectorHost';
import { mergeState } from './inspectorModel';
import './callDetails.css';

/** Wait after the last selection change before fetching details, so holding an arrow key sends one request. */
const DETAILS_DELAY_MS = 120;

/** What the details pane asks of the page. */
export interface CallDetailsHost {
  readonly host: InspectorHost;
  readonly options: InspectorOptions;
  /** Opens the call's source line. */
  reveal(callIndex: number): void;
  safely(what: string, fn: () => void): void;
}

/** The call the pane shows. */
interface ShownCall {
  sessionId: string;
  call: CallRow;
  body: SessionBody;
}

function detailsKey(sessionId: string, index: number): string {
  return `${sessionId}\u0000${index}`;
}

/**
 * The selected call's pane: its row at once, then its details (tools, errors, targets)
 * fetched a moment after the selection settles, and its transcript when the reader opened
 * it. Keeps what it fetched, by call, until the session or the trace changes.
 */
export class CallDetails {
  readonly element = el('section', { className: 'details panel', attrs: { 'aria-label': 'Selected call' } });
  private readonly details = new Map<string, DetailsState>();
  /** Transcripts read, by call; the pane shows them while `transcriptOpen`. */
  private readonly transcripts = new Map<string, TranscriptState>();
  private transcriptOpen = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private shown: ShownCall | null = null;

  constructor(private readonly page: CallDetailsHost) {}

  /** Whether the transcript section was open (the webview state). */
  restore(transcriptOpen: boolean): void {
    this.transcriptOpen = transcriptOpen;
  }

  /** Forgets every call fetched (another session, the trace read again). */
  clear(): void {
    this.details.clear();
    this.transcripts.clear();
  }

  /** Calls were appended to session `keep` of `shownCalls` calls: only its last call can have gained tool results. */
  keepOnAppend(keep: string, shownCalls: number): void {
    for (const key of [...this.details.keys()]) {
      const [sessionId, index] = key.split('\u0000');
      if (sessionId !== keep || Number(index) >= shownCalls - 1) this.details.delete(key);
    }
    this.transcripts.clear();
  }

  /**
   * Shows the selected call of a session (none: a placeholder), or says its row is coming
   * and asks `rows` for it (the page calls again when it lands). Returns the call shown.
   */
  showSelection(
    sessionId: string | null,
    body: SessionBody | null,
    selected: number | null,
    rows: RowCache<CallRow> | null,
  ): CallRow | null {
    const count = body?.columns.flags.length ?? 0;
    if (sessionId === null || !body || selected === null || selected >= count) {
      this.showNone(body ? count : null);
      return null;
    }
    const call = rows?.get(selected);
    if (!call) {
      // The row comes by page: the pane (and the page's announcement) follow when it lands.
      this.showWaiting(selected);
      rows?.ensure(selected, selected);
      return null;
    }
    this.show(sessionId, call, body);
    return call;
  }

  /** No call selected: a placeholder when the session has calls, nothing without a body. */
  private showNone(count: number | null): void {
    this.shown = null;
    replaceChildren(this.element, [
      el('h2', { text: 'Call details' }),
      count !== null && count > 0 ? detailsPlaceholder() : null,
    ]);
    this.element.hidden = count === null || count === 0;
    delete this.element.dataset['waiting'];
  }

  /** The selected call's row is still coming by page. */
  private showWaiting(index: number): void {
    this.shown = null;
    this.element.hidden = false;
    this.element.dataset['waiting'] = String(index);
    replaceChildren(this.element, [
      el('h2', { text: 'Call details' }),
      el('p', { className: 'muted', text: `Loading call ${formatCount(index + 1)}…`, attrs: { 'aria-busy': 'true' } }),
    ]);
  }

  /** The call whose row the pane waits for (null: none). */
  waitingFor(): number | null {
    const waiting = this.element.dataset['waiting'];
    return waiting === undefined ? null : Number(waiting);
  }

  /** Shows a call, and fetches its details (and its transcript, when open) unless they are here. */
  private show(sessionId: string, call: CallRow, body: SessionBody): void {
    this.element.hidden = false;
    delete this.element.dataset['waiting'];
    this.shown = { sessionId, call, body };
    this.draw();
    this.schedule(sessionId, call.index);
  }

  private isShown(key: string): boolean {
    return this.shown !== null && key === detailsKey(this.shown.sessionId, this.shown.call.index);
  }

  private draw(override?: DetailsState): void {
    const shown = this.shown;
    if (!shown) return;
    const { sessionId, call, body } = shown;
    const state = override ?? this.details.get(detailsKey(sessionId, call.index)) ?? { kind: 'loading' };
    const page = this.page;
    replaceChildren(
      this.element,
      renderCallDetails(
        call,
        body.columns.flags.length,
        state,
        {
          revealCall: () => page.reveal(call.index),
          revealTool: (toolId) => {
            if (page.options.sourceLinks)
              page.host.notify({ type: 'source/reveal', ref: { sessionId, callIndex: call.index }, toolId });
          },
          toggleTranscript: (open) => page.safely('show the transcript', () => this.toggleTranscript(open)),
          moreTranscript: () =>
            page.safely('show more of the transcript', () => this.loadTranscript(sessionId, call.index, true)),
        },
        body.analysis.loops,
        !page.options.transcript
          ? null
          : !this.transcriptOpen
            ? { kind: 'closed' }
            : (this.transcripts.get(detailsKey(sessionId, call.index)) ?? {
                kind: 'loading',
                maxChars: TRANSCRIPT_CHARS,
              }),
      ),
    );
  }

  private toggleTranscript(open: boolean): void {
    this.transcriptOpen = open;
    this.page.host.setState(mergeState(this.page.host.getState(), { transcriptOpen: open }));
    this.draw();
    if (open && this.shown) this.loadTranscript(this.shown.sessionId, this.shown.call.index, false);
    this.element.querySelector<HTMLButtonElement>('[data-action="toggle-transcript"]')?.focus();
  }

  /** Asks the host for a call's transcript (`more`: each text eight times longer than shown). */
  private loadTranscript(sessionId: string, index: number, more: boolean): void {
    const key = detailsKey(sessionId, index);
    const had = this.transcripts.get(key);
    if (!more && had && had.kind !== 'error') return;
    const maxChars = more && had?.kind === 'loaded' ? moreChars(had.transcript.maxChars) : TRANSCRIPT_CHARS;
    if (!more) this.transcripts.set(key, { kind: 'loading', maxChars });
    this.page.host.request('callTranscript', { sessionId, callIndex: index, maxChars }).then(
      (transcript) => this.transcriptArrived(key, { kind: 'loaded', transcript }),
      (error: unknown) =>
        this.transcriptArrived(key, { kind: 'error', message: error instanceof Error ? error.message : String(error) }),
    );
  }

  private transcriptArrived(key: string, state: TranscriptState): void {
    this.page.safely('show the transcript', () => {
      // Errors are not kept, so showing the call again retries.
      if (state.kind === 'error') this.transcripts.delete(key);
      else this.transcripts.set(key, state);
      if (!this.isShown(key)) return;
      // Redrawing the pane keeps the reader where they were: the focus goes back to what had it.
      const focusedAction = (document.activeElement as HTMLElement | null)?.dataset?.['action'];
      this.draw();
      if (state.kind === 'error')
        this.element.querySelector<HTMLElement>('.transcript')?.replaceChildren(...transcriptErrorNodes(state.message));
      if (focusedAction) this.element.querySelector<HTMLElement>(`[data-action="${focusedAction}"]`)?.focus();
    });
  }

  private schedule(sessionId: string, index: number): void {
    const key = detailsKey(sessionId, index);
    const transcript = this.transcriptOpen && this.page.options.transcript;
    if (this.details.get(key)?.kind === 'loaded') {
      if (transcript) this.loadTranscript(sessionId, index, false);
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.transcriptOpen && this.page.options.transcript) this.loadTranscript(sessionId, index, false);
      this.details.set(key, { kind: 'loading' });
      this.page.host.request('callDetail', { sessionId, callIndex: index }).then(
        (detail) => this.detailsArrived(key, { kind: 'loaded', detail }),
        (error: unknown) =>
          this.detailsArrived(key, { kind: 'error', message: error instanceof Error ? error.message : String(error) }),
      );
    }, DETAILS_DELAY_MS);
  }

  private detailsArrived(key: string, state: DetailsState): void {
    this.page.safely('show call details', () => {
      // A null result means the host no longer has that call (the file changed meanwhile).
      const fixed: DetailsState =
        state.kind === 'loaded' && !state.detail
          ? { kind: 'error', message: 'the call is no longer in the trace' }
          : state;
      // Errors are not cached, so selecting the call again retries.
      if (fixed.kind === 'error') this.details.delete(key);
      else this.details.set(key, fixed);
      if (this.isShown(key)) this.draw(fixed);
    });
  }
}

/** The pane's transcript section after a failed read (the state itself is not kept). */
function transcriptErrorNodes(message: string): HTMLElement[] {
  return [
    el('h4', { text: 'Transcript' }),
    el('p', { className: 'inline-error', attrs: { role: 'alert' } }, [
      icon('error'),
      el('span', { text: `Could not read the transcript: ${message}` }),
    ]),
  ];
}
