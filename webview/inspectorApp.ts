import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import type { VscodeCheckbox } from '@vscode-elements/elements/dist/vscode-checkbox/vscode-checkbox.js';
import type { VscodeProgressBar } from '@vscode-elements/elements/dist/vscode-progress-bar/vscode-progress-bar.js';
import type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
import type { VscodeTextfield } from '@vscode-elements/elements/dist/vscode-textfield/vscode-textfield.js';
import type { MissCause } from '../src/core/analysis/cacheMisses';
import { formatCount } from '../src/core/report/formatNumbers';
import { displayText } from '../src/core/text/safeText';
import type { SessionEntry, SessionPage } from '../src/core/view/sessionList';
import { missCauseOf } from '../src/core/view/timelineColumns';
import type { SessionBody, SessionIntro, TraceHeader } from '../src/core/view/traceService';
import type { CallRow, SessionHead } from '../src/core/view/traceView';
import { LIVE_WINDOW_MS, SESSION_PAGE_SIZE } from '../src/protocol/messages';
import type { AppendedBytes, CallRef, HostNotification, InspectorSettings, LiveState, WebviewNotification, WebviewRequests } from '../src/protocol/messages';
import { fingerprintDigest, loopRows, nextLoopSort, sortLoopRows } from './analysis/analysisModel';
import type { LoopRow, LoopSort, LoopSortKey } from './analysis/analysisModel';
import { figureGroup, fingerprintContent, loopsContent, missSummary } from './analysis/analysisView';
import { detailsPlaceholder, renderCallDetails } from './timeline/callDetailsView';
import type { DetailsState } from './timeline/callDetailsView';
import { moreChars, TRANSCRIPT_CHARS } from './timeline/transcriptModel';
import type { TranscriptState } from './timeline/transcriptModel';
import { CallsTables } from './timeline/callsTable';
import { el, fillSelect, icon, linkButton, replaceChildren } from './shared/dom';
import { diagnosticRows, keyFigures, mergeState, progressText, readPersistedState, sessionMetaText, skippedSummary, summaryFigures, wholeTraceCost } from './inspectorModel';
import { CostPanel } from './cost/costView';
import type { PersistedState, TimelineViewState } from './inspectorModel';
import { buildPalette, isHighContrast } from './shared/palette';
import type { Palette } from './shared/palette';
import { RowCache } from './shared/rowCache';
import type { VirtualTable } from './shared/virtualTable';
import { TimelinePanel } from './timeline/timelinePanel';
import { clampSelection, selectionAnnouncement } from './timeline/timelineModel';
import type { BarView } from './timeline/timelineModel';
import type { TracedCall } from './whatIf/whatIfModel';
import { WhatIfView } from './whatIf/whatIfView';
import { countUnpriced } from './timeline/unpricedMarks';

/** Params and result of a request to the host. */
export type RequestParams<M extends keyof WebviewRequests> = WebviewRequests[M]['params'];
export type RequestResult<M extends keyof WebviewRequests> = WebviewRequests[M]['result'];

/** What the app needs from the page around it: the channel to the host and the webview state. */
export interface InspectorHost {
  notify(message: WebviewNotification): void;
  /** Asks the host (`timeoutMs` for answers that take long on big traces). */
  request<M extends keyof WebviewRequests>(method: M, params: RequestParams<M>, options?: { timeoutMs?: number }): Promise<RequestResult<M>>;
  getState(): unknown;
  setState(state: unknown): void;
}

/**
 * How the page runs. The inspector in VS Code has everything; the standalone HTML report
 * (agent-trace report) draws the same views from data embedded in the file, with no host
 * to re-read the trace as another format, open source lines or run the what-if simulator.
 */
export interface InspectorOptions {
  /** The interactive what-if panel (needs the host's workload and a worker). */
  whatIf: boolean;
  /** The format picker (the host reads the trace again). */
  formatChoice: boolean;
  /** Clicking a call opens its line in an editor. */
  sourceLinks: boolean;
  /** A call's transcript, read again from the trace by the host (a report embeds no trace text beyond its figures). */
  transcript?: boolean;
}

export const INSPECTOR_IN_VSCODE: InspectorOptions = { whatIf: true, formatChoice: true, sourceLinks: true, transcript: true };

/** Wait after the last selection change before fetching details, so holding an arrow key sends one request. */
const DETAILS_DELAY_MS = 120;
/** Call rows fetched at once; a session up to this size gets all its rows with its body. */
const ROW_PAGE = 2000;
/** A session's analyses can take a while on a million calls: wait for them this long. */
const BODY_TIMEOUT_MS = 10 * 60_000;
/** Wait after the last zoom, pan or scroll before storing the view (a wheel zoom changes it every frame). */
const VIEW_STATE_DELAY_MS = 200;

/** Reads the chart colours from the page's theme variables. */
export function readPalette(): Palette {
  const style = getComputedStyle(document.body);
  return buildPalette((name) => style.getPropertyValue(name), isHighContrast(document.body.className));
}

/** The session on screen: its summary first, its analyses and timeline columns once they come. */
interface ShownSession {
  id: string;
  intro: SessionIntro;
  body: SessionBody | null;
}

/**
 * The inspector page. Owns the UI state (the trace header, the session shown, the
 * selected call, show-cached) and the DOM under `#app`; the host owns the trace and
 * answers what the page asks (a session's summary, then its body, rows by page, search,
 * details). Rendering never throws to the caller: failures are shown on the page and
 * reported as `log/error`.
 */
export class InspectorApp {
  private header: TraceHeader | null = null;
  private sessions: SessionPage = { total: 0, offset: 0, entries: [] };
  private session: ShownSession | null = null;
  private sessionGeneration = 0;
  /** Bumped when the trace is read again: the what-if panel and caches start over. */
  private traceKey: object = {};
  private selected: number | null = null;
  private showCached = true;
  private barView: BarView = 'tokens';
  /** Closed until the user opens it: the timeline stays above the fold. */
  private fingerprintOpen = false;
  private loopSort: LoopSort | null = null;
  /** The loop whose row was last opened, marked in the table. */
  private activeLoop: number | null = null;
  private loopsTable: VirtualTable | null = null;
  private palette: Palette;
  private rows: RowCache<CallRow> | null = null;
  private readonly details = new Map<string, DetailsState>();
  /** Transcripts read, by call; the pane shows them while `transcriptOpen`. */
  private readonly transcripts = new Map<string, TranscriptState>();
  private transcriptOpen = false;
  private detailsTimer: ReturnType<typeof setTimeout> | undefined;
  private pendingAnnouncement: { call: number; prefix: string } | null = null;
  private pickerQuery = '';
  private pickerTimer: ReturnType<typeof setTimeout> | undefined;
  /** The view stored before the page was rebuilt (zoom, filter, scroll), put back when its session is drawn again. */
  private restoreView: { view: TimelineViewState | null; scrollY: number | null; asked: boolean } | null = null;
  /** A call the host asked for before the page had its trace (Show in Timeline while the tab was rebuilt). */
  private earlySelect: CallRef | null = null;
  private viewTimer: ReturnType<typeof setTimeout> | undefined;

  private readonly loading = el('div', { className: 'loading-block' });
  private readonly progressBar = document.createElement('vscode-progress-bar') as VscodeProgressBar;
  private readonly progressLabel = el('p', { className: 'muted', text: 'Loading trace…' });
  private readonly cancelButton = linkButton('Cancel', () => this.safely('cancel', () => this.cancelLoad()), { data: { action: 'cancel-load' }, title: 'Stop reading this file' });
  private readonly stopped = el('section', { className: 'load-stopped', attrs: { role: 'alert' } });
  private readonly errorBanner = el('div', { className: 'error-banner', attrs: { role: 'alert' } });
  /** The trace's file name; beside the title when the trace has one (the heading never shows only a file's UUID when a title exists). */
  private readonly fileName = el('span', { className: 'file-name' });
  /** The default session's title (the agent's own, else the first prompt typed), from the host. */
  private readonly traceTitle = el('span', { className: 'trace-title' });
  private readonly heading = el('h1', { className: 'trace-heading' }, [this.traceTitle, this.fileName]);
  private readonly formatBadge = el('span', { className: 'badge', attrs: { 'aria-describedby': 'format-evidence' } });
  /** "● live" while the file grew recently (new calls are added as they are written). */
  private readonly liveBadge = el('span', { className: 'badge live-badge', data: { live: '' } });
  /** What the last append brought ("3 new calls at 12:03:04"). */
  private readonly liveText = el('span', { className: 'live-text muted', attrs: { role: 'status' } });
  /** Why the figures were dropped and read again (a truncated, replaced or deleted file). */
  private readonly resetNote = el('p', { className: 'reset-note', attrs: { role: 'alert' } });
  private liveTimer: ReturnType<typeof setTimeout> | undefined;
  /** While appended calls are painted: the section at the top of the view and where it was, kept there. */
  private scrollAnchor: { element: HTMLElement; top: number } | null = null;
  private readonly evidence = el('p', { className: 'evidence muted', attrs: { id: 'format-evidence' } });
  private readonly picker = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly pickerFind = document.createElement('vscode-textfield') as VscodeTextfield;
  private readonly pickerNote = el('span', { className: 'picker-note muted' });
  private readonly formatPicker = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly limitations = el('div', { className: 'limitations', attrs: { role: 'note' } });
  private readonly showCachedBox = document.createElement('vscode-checkbox') as VscodeCheckbox;
  private readonly barViewPicker = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly barViewControl = el('div', { className: 'bar-view-control' });
  private readonly controls = el('div', { className: 'controls' });
  private readonly sessionControls = el('div', { className: 'session-controls' });
  private readonly headerEl = el('header', { className: 'header' });
  private readonly problem = el('section', { className: 'problem', attrs: { role: 'alert' } });
  private readonly sessionBody = el('div', { className: 'session-body' });
  private readonly sessionMeta = el('p', { className: 'session-meta muted' });
  private readonly summary = el('section', { className: 'summary', attrs: { 'aria-label': 'Session summary' } });
  /** Cost, cache hit rate and failed tool calls: on the first screen, above the timeline. */
  private readonly keyFiguresEl = el('dl', { className: 'key-figures', attrs: { 'aria-label': 'Key figures of the session' } });
  /** The first Tab stop: straight to the timeline, past the pickers and the toolbar. */
  private readonly skipLink = el('button', { className: 'skip-link', text: 'Skip to the timeline', attrs: { type: 'button' } });
  private readonly tokensNote = el('p', { className: 'tokens-note', attrs: { role: 'note' } });
  private readonly legend = el('div', { className: 'legend', attrs: { 'aria-hidden': 'true' } });
  private readonly timelineWaiting = el('p', { className: 'muted timeline-waiting', attrs: { role: 'status' } });
  private readonly missLine = el('p', { className: 'miss-summary', data: { missCauses: '' } });
  private readonly fingerprint = el('details', { className: 'fingerprint' });
  private readonly fingerprintDigest = el('span', { className: 'fp-digest muted' });
  private readonly fingerprintBody = el('div', { className: 'fp-body' });
  private readonly loopsPane = el('section', { className: 'loops panel', attrs: { 'aria-label': 'Retry loops' } });
  private readonly live = el('div', { className: 'visually-hidden', attrs: { 'aria-live': 'polite', 'aria-atomic': 'true', role: 'status' } });
  private readonly detailsPane = el('section', { className: 'details panel', attrs: { 'aria-label': 'Selected call' } });
  private readonly diagnosticsPane = el('section', { className: 'diagnostics panel', attrs: { 'aria-label': 'Diagnostics' } });
  private readonly timeline: TimelinePanel;
  private readonly tables: CallsTables;
  private readonly whatIf: WhatIfView | null;
  private readonly costPanel: CostPanel;

  constructor(
    private readonly root: HTMLElement,
    private readonly host: InspectorHost,
    private readonly options: InspectorOptions = INSPECTOR_IN_VSCODE,
  ) {
    this.palette = readPalette();
    this.buildLegend();
    this.timeline = new TimelinePanel(
      {
        select: (call, options) => this.setSelected(call, options),
        selected: () => this.selected,
        openSession: (id, call) => this.safely('open a session', () => this.switchSession(id, call)),
        callsUsingTool: (sessionId, tool) => this.host.request('callsUsingTool', { sessionId, tool }),
        search: (query, sessionId) => this.host.request('search', { query, sessionId }, { timeoutMs: BODY_TIMEOUT_MS }),
        rowOf: (call) => this.rows?.get(call),
        ensureRows: (first, last) => this.rows?.ensure(first, last),
        announce: (text) => this.announce(text),
        safely: (what, fn) => this.safely(what, fn),
        viewChanged: () => this.persistViewSoon(),
      },
      this.palette,
      this.legend,
    );
    this.tables = new CallsTables({
      select: (call) => this.setSelected(call, {}),
      rowOf: (call) => this.rows?.get(call),
      ensureRows: (first, last) => this.rows?.ensure(first, last),
      toolRows: (sessionId, from, count) => this.host.request('toolRows', { sessionId, from, count }),
      safely: (what, fn) => this.safely(what, fn),
    });
    this.whatIf = !options.whatIf ? null : new WhatIfView(
      {
        workload: (sessionId) => this.host.request('whatIfWorkload', { sessionId }, { timeoutMs: BODY_TIMEOUT_MS }),
        pickCall: (index, reveal) => this.safely('select a call', () => this.setSelected(index, { reveal })),
        notify: (message) => this.host.notify(message),
        getState: () => this.host.getState(),
        setState: (state) => this.host.setState(state),
        reportError: (what, error) => this.reportError(what, error),
      },
      root.dataset['workerUri'] || null,
      this.palette,
    );
    this.costPanel = new CostPanel({
      pickCall: (index) => this.safely('select a call', () => this.selectCallInView(index)),
      customChanged: (custom) => this.host.setState(mergeState(this.host.getState(), { costTtl: custom })),
      replayCustom: (custom) => {
        const id = this.session?.id;
        return id === undefined ? Promise.resolve(null) : this.host.request('customTtl', { sessionId: id, minutes: custom.minutes, writeMultiple: custom.writeMultiple });
      },
      failed: (e) => this.reportError('replay your cache TTL', e),
    });
    this.buildSkeleton();
    this.watchTheme();
    // The scroll is view state too: VS Code rebuilds a hidden inspector when its tab comes back.
    window.addEventListener('scroll', () => this.persistViewSoon(), { passive: true });
  }

  /** Handles one notification from the host. */
  handle(message: HostNotification): void {
    this.safely(`handle ${message.type}`, () => {
      switch (message.type) {
        case 'init':
          this.init(message.header, message.sessions, message.intro, message.settings, message.select);
          this.showLive(message.live);
          break;
        case 'trace/didChange':
          this.traceChanged(message.header, message.sessions, message.appended ?? null);
          this.showLive(message.live);
          break;
        case 'trace/reset':
          this.showReset(message.reason, message.message);
          break;
        case 'call/select':
          this.selectRef(message.ref);
          break;
        case 'load/progress':
          this.showProgress(message.bytesRead, message.totalBytes);
          break;
        case 'load/stopped':
          this.showStopped(message.reason, message.message, message.overSizeLimit);
          break;
        case 'host/error':
          this.showHostError(message.message);
          break;
        default: {
          // Every notification the protocol defines is handled above; anything else is said, not ignored.
          const unknown: never = message;
          throw new Error(`unknown notification ${JSON.stringify((unknown as { type?: unknown }).type)}`);
        }
      }
    });
  }

  /** The what-if panel's last scenario and sweep (the host puts them in the HTML report); null when it has not run. */
  whatIfDocument(): unknown {
    return this.whatIf?.currentDocument() ?? null;
  }

  /** A request the host refused or could not carry out: said at the top of the panel, which keeps showing the trace. */
  private showHostError(message: string): void {
    replaceChildren(this.errorBanner, [icon('warning'), el('span', { text: `The extension could not do that: ${message}` })]);
    this.errorBanner.hidden = false;
    // How many answers of this kind came, for tests and for anyone inspecting the page.
    this.errorBanner.dataset['hostErrors'] = String(Number(this.errorBanner.dataset['hostErrors'] ?? '0') + 1);
  }

  /** Shows an error on the page and tells the host; used for failures outside `handle` too. */
  reportError(what: string, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    replaceChildren(this.errorBanner, [icon('error'), el('span', { text: `Something went wrong (${what}): ${message}` })]);
    this.errorBanner.hidden = false;
    this.root.setAttribute('aria-busy', 'false');
    try {
      this.host.notify({ type: 'log/error', message: `${what}: ${error instanceof Error ? (error.stack ?? message) : message}` });
    } catch {
      // Nothing left to tell: the page already shows the error.
    }
  }

  private safely(what: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.reportError(what, e);
    }
  }

  private announce(text: string): void {
    // A change of text is what a polite live region reads; the same text twice needs a reset.
    if (this.live.textContent === text) this.live.textContent = '';
    this.live.textContent = text;
  }

  private buildSkeleton(): void {
    this.progressBar.setAttribute('aria-label', 'Reading trace');
    this.progressBar.indeterminate = true;
    this.loading.append(this.progressBar, el('div', { className: 'progress-row' }, [this.progressLabel, this.cancelButton]));
    this.errorBanner.hidden = true;
    this.problem.hidden = true;
    this.stopped.hidden = true;

    // The combobox inside the select's shadow root takes its accessible name from `label`, not from the host's aria-label.
    this.picker.label = 'Session';
    this.picker.id = 'session-picker';
    this.picker.addEventListener('change', () => this.safely('switch session', () => this.switchSession(this.picker.value, null)));
    this.pickerFind.placeholder = 'Find a session';
    this.pickerFind.label = 'Find a session by id or title';
    this.pickerFind.id = 'session-find';
    this.pickerFind.addEventListener('input', () =>
      this.safely('find a session', () => {
        clearTimeout(this.pickerTimer);
        this.pickerTimer = setTimeout(() => this.safely('find a session', () => void this.findSessions(this.pickerFind.value)), 250);
      }),
    );
    this.showCachedBox.label = 'Show cached';
    this.showCachedBox.addEventListener('change', () => this.safely('toggle cached', () => this.setShowCached(this.showCachedBox.checked)));
    this.formatPicker.label = 'Format';
    this.formatPicker.id = 'format-picker';
    this.formatPicker.addEventListener('change', () => this.safely('choose a format', () => this.chooseFormat(this.formatPicker.value)));
    this.barViewPicker.label = 'Bars show';
    this.barViewPicker.id = 'bar-view-picker';
    for (const [value, label] of [
      ['tokens', 'Tokens'],
      ['cost', 'Cost ($)'],
    ] as const) {
      const option = document.createElement('vscode-option');
      option.value = value;
      option.textContent = label;
      this.barViewPicker.appendChild(option);
    }
    this.barViewPicker.addEventListener('change', () => this.safely('switch the bars', () => this.setBarView(this.barViewPicker.value === 'cost' ? 'cost' : 'tokens')));
    this.barViewControl.append(el('label', { className: 'control-label', text: 'Bars', attrs: { for: 'bar-view-picker' } }), this.barViewPicker);
    this.barViewControl.hidden = true;
    this.sessionControls.append(el('label', { className: 'control-label', text: 'Session', attrs: { for: 'session-picker' } }), this.picker, this.pickerFind, this.pickerNote, this.showCachedBox, this.barViewControl);
    this.controls.append(this.sessionControls);
    if (this.options.formatChoice) this.controls.append(el('div', { className: 'format-control' }, [el('label', { className: 'control-label', text: 'Format', attrs: { for: 'format-picker' } }), this.formatPicker]));

    const fingerprintHead = el('summary', { className: 'fp-summary' }, [icon('chevron-right', 'fp-chevron'), el('h2', { text: 'Workload fingerprint' }), this.fingerprintDigest]);
    this.fingerprint.append(fingerprintHead, this.fingerprintBody);
    this.fingerprint.addEventListener('toggle', () =>
      this.safely('toggle the fingerprint', () => {
        if (this.fingerprint.open === this.fingerprintOpen) return;
        this.fingerprintOpen = this.fingerprint.open;
        this.host.setState(mergeState(this.host.getState(), { fingerprintOpen: this.fingerprintOpen }));
      }),
    );
    this.timeline.element.append(this.timelineWaiting, this.missLine, this.live);
    if (this.whatIf) this.whatIf.element.hidden = true;
    this.costPanel.element.hidden = true;
    // The first screen: what the session cost, how its cache did, what failed, and the timeline; the call picked on it
    // right under it. The full figures and the analyses follow.
    this.sessionBody.append(
      this.sessionMeta,
      this.keyFiguresEl,
      this.tokensNote,
      this.timeline.element,
      el('div', { className: 'lower' }, [this.detailsPane, this.loopsPane]),
      this.summary,
      this.fingerprint,
      this.costPanel.element,
      ...(this.whatIf ? [this.whatIf.element] : []),
      this.tables.element,
    );

    this.liveBadge.hidden = true;
    this.liveText.hidden = true;
    this.resetNote.hidden = true;
    this.headerEl.append(el('div', { className: 'title-row' }, [icon('graph', 'title-icon'), this.heading, this.formatBadge, this.liveBadge, this.liveText]), this.evidence, this.limitations, this.controls);
    this.headerEl.hidden = true;
    this.sessionBody.hidden = true;
    this.diagnosticsPane.hidden = true;
    this.skipLink.addEventListener('click', () =>
      this.safely('skip to the timeline', () => {
        this.timeline.chartWrap.scrollIntoView({ block: 'nearest' });
        this.timeline.chartWrap.focus();
      }),
    );
    this.skipLink.hidden = true;
    replaceChildren(this.root, [this.skipLink, this.loading, this.stopped, this.resetNote, this.errorBanner, this.headerEl, this.problem, this.sessionBody, this.diagnosticsPane]);
  }

  private buildLegend(): void {
    const item = (kind: string, label: string): HTMLElement => el('span', { className: `legend-item legend-${kind}`, data: { legend: kind } }, [el('span', { className: `swatch swatch-${kind}` }), el('span', { text: label })]);
    replaceChildren(this.legend, [
      item('cached', 'cached'),
      item('appended', 'appended'),
      item('output', 'output'),
      item('envelope', 'largest call of a column'),
      item('context', 'context size'),
      item('failed', 'failed tool'),
      item('compaction', 'compaction'),
      item('subagent', 'sub-agent'),
      item('loop', 'retry loop'),
      item('miss', 'cache miss'),
      item('unpriced', 'no price for its model'),
    ]);
  }

  // ---- loading ----

  private showProgress(bytesRead: number, totalBytes: number | null): void {
    if (totalBytes !== null && totalBytes > 0) {
      this.progressBar.indeterminate = false;
      this.progressBar.max = totalBytes;
      this.progressBar.value = Math.min(bytesRead, totalBytes);
    } else {
      this.progressBar.indeterminate = true;
    }
    this.progressLabel.textContent = progressText(bytesRead, totalBytes);
    this.cancelButton.hidden = false;
    this.stopped.hidden = true;
    this.loading.hidden = false;
    this.root.setAttribute('aria-busy', 'true');
  }

  private cancelLoad(): void {
    this.host.notify({ type: 'load/cancel' });
    this.progressLabel.textContent = 'Cancelling…';
  }

  /** Reading stopped: says why, with a way to read again (above the size limit too). */
  private showStopped(reason: 'cancelled' | 'failed', message: string, overSizeLimit: boolean): void {
    this.loading.hidden = true;
    // What was shown before is not what the file holds now (or not what was asked for): it goes.
    this.hideFigures();
    this.root.setAttribute('aria-busy', 'false');
    const retry = (label: string, ignoreSizeLimit: boolean, action: string): HTMLButtonElement =>
      linkButton(label, () => this.safely('read again', () => this.retry(ignoreSizeLimit)), { data: { action } });
    const lines: HTMLElement[] = [el('p', { className: 'problem-message', text: message })];
    if (overSizeLimit) {
      lines.push(
        el('p', {
          className: 'muted',
          text: 'The limit (agentTrace.maxFileSizeMB) guards the memory of VS Code’s extension host. The inspector reads in a worker that stops, with a message, if the trace needs more memory than it allows; the CLI (agent-trace analyze) reads any size.',
        }),
      );
    }
    lines.push(el('p', {}, [overSizeLimit ? retry('Open anyway', true, 'open-anyway') : retry(reason === 'cancelled' ? 'Read the file again' : 'Try again', false, 'retry-load')]));
    replaceChildren(this.stopped, [icon(reason === 'cancelled' ? 'circle-slash' : 'error', 'problem-icon'), el('div', {}, [el('h2', { text: reason === 'cancelled' ? 'Reading was cancelled' : "This trace can't be shown" }), ...lines])]);
    this.stopped.dataset['reason'] = reason;
    this.stopped.hidden = false;
  }

  /** Hides every figure of the trace (header, session, diagnostics): shown again by the next read's answer. */
  private hideFigures(): void {
    this.headerEl.hidden = true;
    this.problem.hidden = true;
    this.sessionBody.hidden = true;
    this.diagnosticsPane.hidden = true;
    this.liveBadge.hidden = true;
    clearTimeout(this.liveTimer);
  }

  /**
   * The followed file was truncated, replaced or deleted: its figures are dropped at once
   * (they are of a file that is no longer there) and the reason said; the host reads it
   * again from scratch, or says it cannot.
   */
  private showReset(reason: 'truncated' | 'replaced' | 'deleted', message: string): void {
    this.hideFigures();
    this.resetNote.textContent = displayText(message);
    this.resetNote.dataset['reset'] = reason;
    this.resetNote.hidden = false;
    this.progressLabel.textContent = reason === 'deleted' ? 'Looking for the file…' : 'Reading the file again from the start…';
    this.progressBar.indeterminate = true;
    this.cancelButton.hidden = true;
    this.stopped.hidden = true;
    this.loading.hidden = false;
    this.root.setAttribute('aria-busy', 'true');
    this.root.dataset['painted'] = 'reset';
  }

  /** The "live" badge: shown while the file grew within LIVE_WINDOW_MS, then hidden by a timer. */
  private showLive(live: LiveState | undefined): void {
    clearTimeout(this.liveTimer);
    const ago = live?.grewMsAgo ?? null;
    const left = ago === null ? 0 : LIVE_WINDOW_MS - ago;
    this.liveBadge.hidden = left <= 0 || this.headerEl.hidden;
    if (left <= 0) return;
    this.liveBadge.textContent = '● live';
    this.liveBadge.title = 'This file is being written: new calls are added as they arrive (only the new bytes are read). Your zoom, scroll and selection stay.';
    this.liveTimer = setTimeout(() => this.safely('live badge', () => this.showLive({ grewMsAgo: LIVE_WINDOW_MS })), left);
  }

  private retry(ignoreSizeLimit: boolean): void {
    this.stopped.hidden = true;
    this.host.notify({ type: 'load/retry', ignoreSizeLimit });
    this.showProgress(0, null);
  }

  // ---- trace ----

  private init(header: TraceHeader, sessions: SessionPage, intro: SessionIntro | null, settings: InspectorSettings, asked: CallRef | null): void {
    const select = asked ?? this.earlySelect;
    this.earlySelect = null;
    const saved: PersistedState = readPersistedState(this.host.getState());
    this.showCached = saved.showCached ?? settings.showCached;
    this.barView = saved.barView ?? 'tokens';
    this.costPanel.setCustom(saved.costTtl ?? null);
    this.fingerprintOpen = saved.fingerprintOpen ?? false;
    this.transcriptOpen = saved.transcriptOpen ?? false;
    this.loopSort = saved.loopSort ?? null;
    this.restoreView = { view: saved.view ?? null, scrollY: select === null ? (saved.scrollY ?? null) : null, asked: select !== null };
    this.whatIf?.setDefaults(settings.whatIf, saved.whatIf);
    this.whatIf?.setOpen(saved.whatIfOpen ?? false);
    this.header = header;
    this.sessions = sessions;
    this.traceKey = {};
    this.errorBanner.hidden = true;
    this.renderHeader();
    const wanted = select?.sessionId ?? saved.sessionId ?? null;
    const id = wanted ?? header.defaultSessionId;
    const call = select && select.sessionId === id ? select.callIndex : saved.sessionId === id ? (saved.callIndex ?? null) : null;
    if (id === null) {
      this.showSession(null);
      return;
    }
    // The host sent the default session's summary; another one is asked for.
    this.openSession(id, call, intro && intro.summary.id === id ? intro : null, select !== null);
  }

  /**
   * The trace changed: read again, or (`appended`) grown by new calls. The page keeps its
   * session and selection; on an append it also keeps its zoom window (the timeline
   * follows the new end only when it showed the end), its scroll, its open loop and the
   * details it fetched for calls before the last one.
   */
  private traceChanged(header: TraceHeader, sessions: SessionPage, appended: AppendedBytes | null): void {
    if (!this.header) {
      // A reload answered a page that never got `init` (a cancelled or failed first read).
      this.init(header, sessions, null, { showCached: this.showCached }, null);
      return;
    }
    const callsBefore = this.header.callCount;
    this.header = header;
    this.sessions = sessions;
    this.traceKey = {};
    const shownCalls = this.session?.body?.columns.flags.length ?? 0;
    if (appended && this.session) {
      // Only the last call of the session shown can have gained tool results from the new lines.
      const keep = this.session.id;
      for (const key of [...this.details.keys()]) {
        const [sessionId, index] = key.split('\u0000');
        if (sessionId !== keep || Number(index) >= shownCalls - 1) this.details.delete(key);
      }
      this.transcripts.clear();
      const added = header.callCount - callsBefore;
      this.liveText.textContent = `${added > 0 ? `${formatCount(added)} new ${added === 1 ? 'call' : 'calls'}` : 'updated'} at ${new Date().toLocaleTimeString()}`;
      this.liveText.dataset['added'] = String(added);
      this.liveText.hidden = false;
      this.resetNote.hidden = true;
      this.holdScroll();
    } else {
      this.details.clear();
      this.transcripts.clear();
      // Loop indexes may point elsewhere in the new trace.
      this.activeLoop = null;
    }
    this.renderHeader();
    const id = this.session?.id ?? header.defaultSessionId;
    if (id === null) this.showSession(null);
    else this.openSession(id, this.selected, null, false, appended !== null);
  }

  /**
   * Keeps what the user looks at in place while appended calls are painted: the first
   * section of the session still in view stays at the same height on screen, whatever
   * grew or shrank above it (the browser's own scroll anchoring is off meanwhile, so the
   * two do not both correct).
   */
  private holdScroll(): void {
    for (const element of [this.headerEl, ...Array.from(this.sessionBody.children)] as HTMLElement[]) {
      if (element.hidden) continue;
      const rect = element.getBoundingClientRect();
      if (rect.bottom <= 0) continue;
      this.scrollAnchor = { element, top: rect.top };
      document.documentElement.style.overflowAnchor = 'none';
      return;
    }
  }

  /** Puts the held section back where it was on screen; `done`: the appended calls are all painted. */
  private restoreScroll(done: boolean): void {
    const anchor = this.scrollAnchor;
    if (!anchor) return;
    const delta = anchor.element.getBoundingClientRect().top - anchor.top;
    if (Math.abs(delta) >= 1) window.scrollBy(0, delta);
    if (!done) return;
    this.scrollAnchor = null;
    document.documentElement.style.overflowAnchor = '';
  }

  private renderHeader(): void {
    const h = this.header!;
    this.loading.hidden = true;
    this.stopped.hidden = true;
    this.headerEl.hidden = false;
    this.fileName.textContent = displayText(h.fileName);
    this.fileName.title = h.fileName;
    this.traceTitle.textContent = h.title ? displayText(h.title) : '';
    this.traceTitle.title = h.title ?? '';
    this.traceTitle.hidden = !h.title;
    this.heading.classList.toggle('has-title', Boolean(h.title));
    this.formatBadge.textContent = h.formatLabel ?? 'unknown format';
    const evidence = displayText(h.formatChosen ? `Read as ${h.formatLabel ?? 'the chosen format'}, as you chose.` : `Detected: ${h.detection}`);
    this.evidence.textContent = evidence;
    // How the format was detected is a detail (the badge's tooltip; screen readers read it as the badge's description);
    // a format the user chose is said on the page, so a wrong choice shows.
    this.evidence.classList.toggle('visually-hidden', !h.formatChosen);
    this.formatBadge.title = evidence;
    this.renderLimitations(h);
    this.renderProblem(h);
    this.renderFormatPicker(h);
    this.showCachedBox.checked = this.showCached;
    this.renderDiagnostics(h);
    this.renderPicker();
  }

  private renderProblem(h: TraceHeader): void {
    let title: string | null = null;
    let text = '';
    if (h.problem) {
      title = "This trace can't be shown";
      text = h.problem.message;
    } else if (h.sessionCount === 0) {
      title = 'No sessions found';
      text = h.formatChosen
        ? `Nothing in this file matched ${h.formatLabel ?? 'the chosen format'}. Choose another format, or "Detect automatically".`
        : 'The file was read, but it contains no agent session with LLM calls.';
    }
    this.problem.hidden = title === null;
    this.problem.dataset['problem'] = h.problem?.kind ?? (title ? 'no-sessions' : '');
    replaceChildren(this.problem, title === null ? [] : [icon('error', 'problem-icon'), el('div', {}, [el('h2', { text: title }), el('p', { className: 'problem-message', text })])]);
  }

  /** Says what the format cannot give, so a missing figure reads as "not in this format", not as zero. */
  private renderLimitations(h: TraceHeader): void {
    this.limitations.hidden = h.limitations.length === 0;
    replaceChildren(
      this.limitations,
      h.limitations.length === 0
        ? []
        : [
            icon('info', 'limitations-icon'),
            el('div', {}, [el('span', { className: 'limitations-title', text: `What ${h.formatLabel ?? 'this format'} cannot give:` }), el('ul', {}, h.limitations.map((text) => el('li', { text })))]),
          ],
    );
  }

  private renderFormatPicker(h: TraceHeader): void {
    const auto = h.formatChosen ? 'Detect automatically' : `Detect automatically (${h.formatLabel ?? 'no match'})`;
    const options: Array<[string, string]> = [['', auto], ...h.formatChoices.map((f): [string, string] => [f.id, f.label])];
    const current = h.formatChosen && h.format ? h.format : '';
    fillSelect(this.formatPicker, options, current);
  }

  private chooseFormat(value: string): void {
    const h = this.header;
    if (!h) return;
    const current = h.formatChosen && h.format ? h.format : '';
    if (value === current) return;
    const choice = h.formatChoices.find((f) => f.id === value);
    this.formatPicker.dataset['value'] = value;
    this.host.notify({ type: 'format/choose', format: choice ? choice.id : null });
    this.progressLabel.textContent = choice ? `Reading again as ${choice.label}…` : 'Detecting the format again…';
    this.loading.hidden = false;
  }

  // ---- sessions ----

  /** The session picker: the page of sessions the host sent (all of them, unless there are thousands: then a query finds the rest). */
  private renderPicker(): void {
    const h = this.header!;
    const entries: SessionEntry[] = [...this.sessions.entries];
    const current = this.session?.id ?? null;
    // The session shown is always in the list, found or not.
    if (current !== null && !entries.some((e) => e.id === current) && this.session) entries.unshift({ id: current, label: `${this.session.intro.summary.role === 'main' ? 'main session' : 'sub-agent'} ${current}`, depth: 0 });
    this.sessionControls.hidden = h.sessionCount === 0;
    replaceChildren(
      this.picker,
      entries.map((o) => {
        const option = document.createElement('vscode-option');
        option.value = o.id;
        option.textContent = displayText(o.label);
        option.selected = o.id === current;
        option.dataset['depth'] = String(o.depth);
        return option;
      }),
    );
    if (current !== null) this.picker.value = current;
    this.picker.dataset['value'] = current ?? '';
    const many = h.sessionCount > SESSION_PAGE_SIZE;
    this.pickerFind.hidden = !many;
    this.pickerNote.hidden = !many && this.pickerQuery === '';
    this.pickerNote.textContent =
      this.pickerQuery !== ''
        ? `${formatCount(this.sessions.total)} ${this.sessions.total === 1 ? 'session matches' : 'sessions match'}${this.sessions.total > this.sessions.entries.length ? `; the first ${formatCount(this.sessions.entries.length)} are listed` : ''}`
        : many
          ? `${formatCount(h.sessionCount)} sessions; the first ${formatCount(this.sessions.entries.length)} are listed, find the others by id or title`
          : '';
  }

  private async findSessions(query: string): Promise<void> {
    this.pickerQuery = query.trim();
    const page = await this.host.request('sessionList', { query: this.pickerQuery, offset: 0, limit: SESSION_PAGE_SIZE });
    if (query.trim() !== this.pickerQuery) return;
    this.sessions = page;
    this.renderPicker();
  }

  private switchSession(id: string, call: number | null): void {
    if (!this.header) return;
    if (id === this.session?.id) {
      if (call !== null) this.selectCallInView(call);
      return;
    }
    this.openSession(id, call, null, true);
    this.persist();
  }

  /**
   * Shows a session: its summary as soon as it is here (the host may have sent it), then
   * its analyses and timeline columns, then the call to select. Answers for a session the
   * user has since left are dropped.
   */
  private openSession(id: string, call: number | null, intro: SessionIntro | null, reveal: boolean, keepView = false): void {
    const generation = ++this.sessionGeneration;
    const same = this.session?.id === id;
    const follow = same && keepView;
    if (!same) {
      this.selected = null;
      this.activeLoop = null;
    }
    this.details.clear();
    this.transcripts.clear();
    this.rows = new RowCache(
      (from, count) => this.host.request('callRows', { sessionId: id, from, count }),
      ROW_PAGE,
      () => this.safely('show call rows', () => this.rowsArrived()),
      (e) => this.reportError('load call rows', e),
    );
    const withIntro = (it: SessionIntro): void => {
      if (generation !== this.sessionGeneration) return;
      // Keep the old body on screen until the new one comes for the same session (a reload): no flicker.
      this.session = { id, intro: it, body: same && this.session ? this.session.body : null };
      this.showSession(this.session, follow);
      this.host.request('sessionBody', { sessionId: id }, { timeoutMs: BODY_TIMEOUT_MS }).then(
        (body) =>
          this.safely('show the session', () => {
            if (generation !== this.sessionGeneration) return;
            this.session = { id, intro: it, body };
            const n = body.columns.flags.length;
            if (n <= ROW_PAGE) this.rows?.ensure(0, n - 1);
            this.selected = clampSelection(call ?? this.selected, n);
            this.showBody(this.session, follow);
            if (follow) this.restoreScroll(true);
            if (reveal && this.selected !== null) this.revealChart();
          }),
        (e: unknown) => {
          if (generation !== this.sessionGeneration) return;
          this.timelineWaiting.textContent = `Could not draw the timeline: ${e instanceof Error ? e.message : String(e)}`;
          this.reportError('load the session', e);
        },
      );
    };
    if (intro) withIntro(intro);
    else {
      this.host.request('sessionIntro', { sessionId: id }).then(
        (it) => this.safely('show the session', () => withIntro(it)),
        (e: unknown) => {
          if (generation !== this.sessionGeneration) return;
          // A saved session that is no longer in the file: show the default one.
          const fallback = this.header?.defaultSessionId ?? null;
          if (fallback !== null && fallback !== id) this.openSession(fallback, null, null, false);
          else this.reportError('load the session', e);
        },
      );
    }
  }

  /** Paints what is known at once: the header's picker, the session's summary and meta; the timeline says it is coming. */
  private showSession(s: ShownSession | null, keepView = false): void {
    this.sessionBody.hidden = s === null;
    this.renderPicker();
    if (!s) {
      this.restoreView = null;
      this.timeline.setSession(null, this.showCached);
      this.root.setAttribute('aria-busy', 'false');
      this.persist();
      return;
    }
    const summary = s.intro.summary;
    this.sessionMeta.textContent = displayText(sessionMetaText(summary, (ms) => new Date(ms).toLocaleString()));
    this.renderSummary(s.intro, s.body);
    this.whatIf?.setContext(this.traceKey, { summary, traced: s.body ? tracedCalls(s.body) : [] }, keepView);
    if (!s.body) {
      this.skipLink.hidden = true;
      this.root.setAttribute('aria-busy', 'true');
      this.timelineWaiting.hidden = summary.llmCalls === 0;
      this.timelineWaiting.textContent = `Drawing the timeline of ${formatCount(summary.llmCalls)} calls…`;
      this.fingerprint.hidden = true;
      this.loopsPane.hidden = true;
      this.tables.element.hidden = true;
      this.detailsPane.hidden = true;
      this.missLine.hidden = true;
      this.costPanel.element.hidden = true;
      if (summary.llmCalls === 0) this.timeline.setSession(null, this.showCached);
      this.root.dataset['painted'] = 'summary';
    } else {
      this.showBody(s, keepView);
    }
  }

  /**
   * Paints the analyses, the timeline, the loops and the tables once the session's body is
   * here. `keepView` (new calls appended): the timeline's window and the tables' scroll
   * stay where the user left them, even if the selected call is out of view.
   */
  private showBody(s: ShownSession, keepView = false): void {
    const body = s.body!;
    const head = this.head(s);
    this.timelineWaiting.hidden = true;
    this.renderSummary(s.intro, body);
    this.costPanel.render({ callCount: body.columns.flags.length, cost: s.intro.cost, idealCache: body.analysis.idealCache ?? null });
    // The cost view is offered when the session was priced.
    const costs = s.intro.cost !== null && body.columns.cost !== null;
    this.barViewControl.hidden = !costs;
    const view: BarView = costs ? this.barView : 'tokens';
    this.barViewPicker.value = view;
    this.barViewPicker.dataset['value'] = view;
    this.relabelLegend(view);
    this.timeline.setBarView(view);
    this.renderFingerprint(head);
    this.renderLoops(head);
    replaceChildren(this.missLine, missSummary(head, (cause) => this.safely('select a cache miss', () => this.selectMiss(cause))));
    this.missLine.hidden = this.missLine.childElementCount === 0;
    const hasCalls = body.columns.flags.length > 0;
    this.legend.hidden = !hasCalls;
    this.skipLink.hidden = !hasCalls;
    this.legend.classList.toggle('cached-hidden', !this.showCached);
    // A rebuilt page puts back the zoom and filter it had on this session (the call asked for, if any, is brought into view after).
    const restore = this.restoreView;
    this.restoreView = null;
    const stored = restore?.view && restore.view.sessionId === s.id ? restore.view : null;
    this.timeline.setSession(
      { sessionId: s.id, columns: body.columns, loops: body.analysis.loops, compactions: s.intro.compactions, events: s.intro.events, subagents: s.intro.subagents, tools: body.tools },
      this.showCached,
      stored,
    );
    if (restore?.scrollY) {
      const y = restore.scrollY;
      requestAnimationFrame(() => window.scrollTo(0, y));
    }
    this.tables.setSession(s.id, body.columns, body.toolCallCount);
    this.renderLegend(body);
    this.whatIf?.setContext(this.traceKey, { summary: s.intro.summary, traced: tracedCalls(body) }, keepView);
    // The stored selection is shown where the stored window has it; a call the host asked for is brought into view.
    this.renderSelection(false, keepView || (stored !== null && !restore!.asked));
    if (keepView) this.restoreScroll(false);
    this.root.setAttribute('aria-busy', 'false');
    this.root.dataset['painted'] = 'timeline';
    this.persist();
  }

  private head(s: ShownSession): SessionHead {
    return { summary: s.intro.summary, compactions: s.intro.compactions, events: s.intro.events, subagents: s.intro.subagents, analysis: s.body!.analysis, cost: s.intro.cost };
  }

  /** The legend names only what this session's chart shows. */
  private renderLegend(body: SessionBody): void {
    const flags = body.columns.flags;
    let failed = false;
    let miss = false;
    let compaction = false;
    let subagent = false;
    for (let i = 0; i < flags.length; i++) {
      const f = flags[i]!;
      failed ||= (f & 1) !== 0;
      miss ||= (f & 2) !== 0;
      subagent ||= (f & 8) !== 0;
      compaction ||= (f & 16) !== 0;
    }
    const present: Record<string, boolean> = { failed, compaction, subagent, loop: body.analysis.loops.length > 0, miss, unpriced: this.showsUnpriced(this.legend.dataset['barView'] === 'cost', body) };
    for (const item of this.legend.querySelectorAll<HTMLElement>('[data-legend]')) item.hidden = present[item.dataset['legend'] ?? ''] === false;
  }

  private rowsArrived(): void {
    this.timeline.rowsArrived();
    this.tables.rowsArrived();
    const session = this.session;
    if (session?.body && this.selected !== null && this.rows?.get(this.selected)) {
      const needs = this.detailsPane.dataset['waiting'] === String(this.selected);
      // A row arriving never moves the view: the selection was brought into view when it was made.
      if (needs) this.renderSelection(this.pendingAnnouncement?.call === this.selected, true);
    }
  }

  private setShowCached(show: boolean): void {
    if (show === this.showCached) return;
    this.showCached = show;
    this.legend.classList.toggle('cached-hidden', !show);
    // The bars only: nothing is asked of the host again.
    this.timeline.setShowCached(show);
    this.persist();
  }

  private setBarView(view: BarView): void {
    if (view === this.barView) return;
    this.barView = view;
    this.relabelLegend(view);
    // The bars only: nothing is asked of the host again.
    this.timeline.setBarView(view);
    this.barViewPicker.dataset['value'] = view;
    this.persist();
  }

  /** The "?" mark is explained where it is drawn: in the cost view of a session with calls without a price. */
  private showsUnpriced(costView: boolean, body: SessionBody | null): boolean {
    return costView && body !== null && countUnpriced(body.columns.cost) > 0;
  }

  /** The three bar colours mean the same split in both views; only the unit changes (and the context line is tokens only). */
  private relabelLegend(view: BarView): void {
    const labels: Record<string, string> = view === 'cost' ? { cached: 'cache read $', appended: 'appended $ (writes + uncached)', output: 'output $' } : { cached: 'cached', appended: 'appended', output: 'output' };
    for (const [kind, text] of Object.entries(labels)) {
      const label = this.legend.querySelector<HTMLElement>(`[data-legend="${kind}"] span:last-child`);
      if (label) label.textContent = text;
    }
    const context = this.legend.querySelector<HTMLElement>('[data-legend="context"]');
    if (context) context.hidden = view === 'cost';
    const unpriced = this.legend.querySelector<HTMLElement>('[data-legend="unpriced"]');
    if (unpriced) unpriced.hidden = !this.showsUnpriced(view === 'cost', this.session?.body ?? null);
    this.legend.dataset['barView'] = view;
  }

  /**
   * Keeps the timeline's window and filter and the page's scroll in the webview state, a
   * moment after they stop changing (a wheel zoom changes them every frame): merged per key,
   * beside the selection and the panels' choices.
   */
  private persistViewSoon(): void {
    // Nothing to keep before the stored view was put back: the first paint would overwrite it.
    if (this.restoreView) return;
    clearTimeout(this.viewTimer);
    this.viewTimer = setTimeout(
      () =>
        this.safely('keep the view', () => {
          const id = this.session?.id;
          const view = this.timeline.viewState();
          this.host.setState(mergeState(this.host.getState(), { ...(id !== undefined && view ? { view: { sessionId: id, ...view } } : {}), scrollY: Math.round(window.scrollY) }));
        }),
      VIEW_STATE_DELAY_MS,
    );
  }

  private persist(): void {
    this.host.setState(mergeState(this.host.getState(), { sessionId: this.session?.id ?? undefined, callIndex: this.selected, showCached: this.showCached, barView: this.barView }));
  }

  // ---- panels ----

  private renderSummary(intro: SessionIntro, body: SessionBody | null): void {
    const summary = intro.summary;
    const whole = this.header ? wholeTraceCost(this.header, summary) : null;
    replaceChildren(this.summary, summaryFigures(summary, body?.analysis, intro.cost, whole).map((g) => figureGroup(g, 'h2')));
    replaceChildren(
      this.keyFiguresEl,
      keyFigures(summary, intro.cost).map((f) => el('div', { className: 'key-figure', title: f.hint }, [el('dt', { text: f.label }), el('dd', { text: f.value, className: f.value === 'unknown' ? 'unknown' : '', data: { keyFigure: f.name } })])),
    );
    // Say why the bars are flat rather than letting empty bars read as zero tokens.
    const source = summary.tokensSource;
    const note =
      source === 'reported'
        ? 'Totals only: this trace reports token counts for the whole session, not per call, so the figures are the session totals and the timeline\u2019s bars have no height. Failed tool calls are still marked.'
        : source === 'none'
          ? 'No token counts: this trace does not report tokens, so the timeline\u2019s bars have no height. Failed tool calls are still marked.'
          : null;
    this.tokensNote.hidden = note === null;
    this.tokensNote.textContent = displayText(note ?? '');
    this.tokensNote.dataset['tokensSource'] = source;
  }

  /** The fingerprint panel; an older host that sends no analysis gets none. */
  private renderFingerprint(session: SessionHead): void {
    this.fingerprint.hidden = !session.analysis;
    if (!session.analysis) return;
    this.fingerprint.open = this.fingerprintOpen;
    this.fingerprintDigest.textContent = fingerprintDigest(session.analysis);
    replaceChildren(this.fingerprintBody, fingerprintContent(session));
  }

  private renderLoops(session: SessionHead): void {
    this.loopsPane.hidden = !session.analysis || session.summary.llmCalls === 0;
    this.loopsTable?.dispose();
    this.loopsTable = null;
    if (this.loopsPane.hidden) return;
    const rows = sortLoopRows(loopRows(session.analysis.loops), this.loopSort);
    const { nodes, table } = loopsContent(session, rows, this.loopSort, this.activeLoop, {
      sort: (key) => this.safely('sort the loops', () => this.sortLoops(key)),
      open: (row) => this.safely('open a loop', () => this.openLoop(row)),
    });
    replaceChildren(this.loopsPane, nodes);
    this.loopsTable = table;
    table?.mount();
    table?.setCount(rows.length);
  }

  private sortLoops(key: LoopSortKey): void {
    this.loopSort = nextLoopSort(this.loopSort, key);
    this.host.setState(mergeState(this.host.getState(), { loopSort: this.loopSort }));
    const session = this.session;
    if (!session?.body) return;
    this.renderLoops(this.head(session));
    // Re-rendering replaced the header button: keep the keyboard focus on it.
    this.loopsPane.querySelector<HTMLButtonElement>(`button[data-sort="${key}"]`)?.focus();
  }

  /** Selects the loop's first attempt on the timeline (its calls in view) and opens its first line in the trace. */
  private openLoop(row: LoopRow): void {
    this.activeLoop = row.index;
    const session = this.session;
    if (session?.body) this.renderLoops(this.head(session));
    this.loopsPane.querySelector<HTMLButtonElement>(`tbody[data-loop="${row.index}"] [data-action="open-loop"]`)?.focus();
    const loop = session?.body?.analysis.loops[row.index];
    if (loop) this.timeline.showCalls(loop.firstCall, loop.lastCall);
    this.setSelected(clampSelection(row.firstCall, session?.body?.columns.flags.length ?? 0), {});
    if (this.options.sourceLinks) this.host.notify({ type: 'source/revealLine', file: row.fileIndex, line: row.line });
  }

  /** Selects the next call (after the selected one, wrapping) whose cache miss has this cause. */
  private selectMiss(cause: MissCause): void {
    const body = this.session?.body;
    if (!body) return;
    const codes = body.columns.missCause;
    const hits: number[] = [];
    for (let i = 0; i < codes.length; i++) if (missCauseOf(codes[i]!) === cause) hits.push(i);
    if (hits.length === 0) return;
    const next = hits.find((i) => this.selected === null || i > this.selected) ?? hits[0]!;
    this.timeline.focusCall(next);
    this.setSelected(next, {});
  }

  // ---- selection ----

  private selectRef(ref: CallRef): void {
    if (!this.header) {
      // The page is being built (its tab came back): the call is selected once the trace is shown.
      this.earlySelect = ref;
      return;
    }
    if (ref.sessionId !== this.session?.id) {
      this.openSession(ref.sessionId, ref.callIndex, null, true);
      return;
    }
    this.selectCallInView(ref.callIndex);
    this.revealChart();
  }

  private selectCallInView(call: number): void {
    const n = this.session?.body?.columns.flags.length ?? 0;
    const index = clampSelection(call, n);
    if (index === null) return;
    this.timeline.focusCall(index);
    this.setSelected(index, {});
  }

  /** Selects a call (the timeline, the keyboard, a table, a jump, a search hit); `reveal` opens its source line. */
  private setSelected(index: number | null, options: { reveal?: boolean; prefix?: string }): void {
    this.selected = index;
    this.persist();
    if (index !== null) this.pendingAnnouncement = { call: index, prefix: options.prefix ?? '' };
    this.renderSelection(true);
    if (options.reveal && index !== null) this.reveal(index);
  }

  private reveal(index: number): void {
    if (!this.session || !this.options.sourceLinks) return;
    this.host.notify({ type: 'source/reveal', ref: { sessionId: this.session.id, callIndex: index }, toolId: null });
  }

  private revealChart(): void {
    this.timeline.chartWrap.scrollIntoView({ block: 'nearest' });
  }

  private renderSelection(announce: boolean, keepView = false): void {
    const session = this.session;
    const body = session?.body;
    this.timeline.selectionChanged(this.selected, !keepView);
    this.tables.selectionChanged(this.selected, !keepView);
    this.whatIf?.select(this.selected);
    const count = body?.columns.flags.length ?? 0;
    if (!session || !body || this.selected === null || this.selected >= count) {
      replaceChildren(this.detailsPane, [el('h2', { text: 'Call details' }), count > 0 ? detailsPlaceholder() : null]);
      this.detailsPane.hidden = !body || count === 0;
      delete this.detailsPane.dataset['waiting'];
      return;
    }
    this.detailsPane.hidden = false;
    const call = this.rows?.get(this.selected);
    if (!call) {
      // The row comes by page: the pane and the announcement follow when it lands.
      this.detailsPane.dataset['waiting'] = String(this.selected);
      replaceChildren(this.detailsPane, [el('h2', { text: 'Call details' }), el('p', { className: 'muted', text: `Loading call ${formatCount(this.selected + 1)}…`, attrs: { 'aria-busy': 'true' } })]);
      this.rows?.ensure(this.selected, this.selected);
      return;
    }
    delete this.detailsPane.dataset['waiting'];
    const pending = this.pendingAnnouncement;
    if (announce && pending && pending.call === call.index) {
      this.announce(`${pending.prefix ? `${pending.prefix} ` : ''}${selectionAnnouncement(call, count, body.analysis.loops)}`);
      this.pendingAnnouncement = null;
    }
    this.showDetails();
    this.scheduleDetails(session.id, call.index);
  }

  private detailsKey(sessionId: string, index: number): string {
    return `${sessionId}\u0000${index}`;
  }

  private showDetails(override?: DetailsState): void {
    const session = this.session;
    const body = session?.body;
    const call = body && this.selected !== null ? this.rows?.get(this.selected) : undefined;
    if (!session || !body || !call) return;
    const sessionId = session.id;
    const state = override ?? this.details.get(this.detailsKey(sessionId, call.index)) ?? { kind: 'loading' };
    replaceChildren(
      this.detailsPane,
      renderCallDetails(
        call,
        body.columns.flags.length,
        state,
        {
          revealCall: () => this.reveal(call.index),
          revealTool: (toolId) => {
            if (this.options.sourceLinks) this.host.notify({ type: 'source/reveal', ref: { sessionId, callIndex: call.index }, toolId });
          },
          toggleTranscript: (open) => this.safely('show the transcript', () => this.toggleTranscript(open)),
          moreTranscript: () => this.safely('show more of the transcript', () => this.loadTranscript(sessionId, call.index, true)),
        },
        body.analysis.loops,
        !this.options.transcript ? null : !this.transcriptOpen ? { kind: 'closed' } : (this.transcripts.get(this.detailsKey(sessionId, call.index)) ?? { kind: 'loading', maxChars: TRANSCRIPT_CHARS }),
      ),
    );
  }

  private toggleTranscript(open: boolean): void {
    this.transcriptOpen = open;
    this.host.setState(mergeState(this.host.getState(), { transcriptOpen: open }));
    const session = this.session;
    this.showDetails();
    if (open && session && this.selected !== null) this.loadTranscript(session.id, this.selected, false);
    this.detailsPane.querySelector<HTMLButtonElement>('[data-action="toggle-transcript"]')?.focus();
  }

  /** Asks the host for a call's transcript (`more`: each text eight times longer than shown). */
  private loadTranscript(sessionId: string, index: number, more: boolean): void {
    const key = this.detailsKey(sessionId, index);
    const had = this.transcripts.get(key);
    if (!more && had && had.kind !== 'error') return;
    const maxChars = more && had?.kind === 'loaded' ? moreChars(had.transcript.maxChars) : TRANSCRIPT_CHARS;
    if (!more) this.transcripts.set(key, { kind: 'loading', maxChars });
    this.host.request('callTranscript', { sessionId, callIndex: index, maxChars }).then(
      (transcript) => this.transcriptArrived(key, { kind: 'loaded', transcript }),
      (error: unknown) => this.transcriptArrived(key, { kind: 'error', message: error instanceof Error ? error.message : String(error) }),
    );
  }

  private transcriptArrived(key: string, state: TranscriptState): void {
    this.safely('show the transcript', () => {
      // Errors are not kept, so showing the call again retries.
      if (state.kind === 'error') this.transcripts.delete(key);
      else this.transcripts.set(key, state);
      const session = this.session;
      if (!session || this.selected === null || key !== this.detailsKey(session.id, this.selected)) return;
      // Redrawing the pane keeps the reader where they were: the focus goes back to what had it.
      const focusedAction = (document.activeElement as HTMLElement | null)?.dataset?.['action'];
      this.showDetails();
      if (state.kind === 'error') this.detailsPane.querySelector<HTMLElement>('.transcript')?.replaceChildren(...this.transcriptErrorNodes(state.message));
      if (focusedAction) this.detailsPane.querySelector<HTMLElement>(`[data-action="${focusedAction}"]`)?.focus();
    });
  }

  /** The pane's transcript section after a failed read (the state itself is not kept). */
  private transcriptErrorNodes(message: string): HTMLElement[] {
    return [el('h4', { text: 'Transcript' }), el('p', { className: 'inline-error', attrs: { role: 'alert' } }, [icon('error'), el('span', { text: `Could not read the transcript: ${message}` })])];
  }

  private scheduleDetails(sessionId: string, index: number): void {
    const key = this.detailsKey(sessionId, index);
    if (this.details.get(key)?.kind === 'loaded') {
      if (this.transcriptOpen && this.options.transcript) this.loadTranscript(sessionId, index, false);
      return;
    }
    clearTimeout(this.detailsTimer);
    this.detailsTimer = setTimeout(() => {
      if (this.transcriptOpen && this.options.transcript) this.loadTranscript(sessionId, index, false);
      this.details.set(key, { kind: 'loading' });
      this.host.request('callDetail', { sessionId, callIndex: index }).then(
        (detail) => this.detailsArrived(key, { kind: 'loaded', detail }),
        (error: unknown) => this.detailsArrived(key, { kind: 'error', message: error instanceof Error ? error.message : String(error) }),
      );
    }, DETAILS_DELAY_MS);
  }

  private detailsArrived(key: string, state: DetailsState): void {
    this.safely('show call details', () => {
      // A null result means the host no longer has that call (the file changed meanwhile).
      const fixed: DetailsState = state.kind === 'loaded' && !state.detail ? { kind: 'error', message: 'the call is no longer in the trace' } : state;
      // Errors are not cached, so selecting the call again retries.
      if (fixed.kind === 'error') this.details.delete(key);
      else this.details.set(key, fixed);
      const session = this.session;
      if (session && this.selected !== null && key === this.detailsKey(session.id, this.selected)) this.showDetails(fixed);
    });
  }

  private renderDiagnostics(h: TraceHeader): void {
    const rows = diagnosticRows(h.diagnostics);
    const skipped = skippedSummary(h.skippedRecords);
    this.diagnosticsPane.hidden = false;
    const heading = el('h2', {}, [el('span', { text: 'Diagnostics' }), el('span', { className: 'count-badge', text: String(rows.length) })]);
    const list =
      rows.length === 0
        ? el('p', { className: 'muted', text: 'No problems found while reading this trace.' })
        : el(
            'ul',
            { className: 'diagnostic-list' },
            rows.map((r) => {
              const b = el('button', { className: `diagnostic diagnostic-${r.icon}`, attrs: { type: 'button' }, title: `Open ${r.location}`, data: { line: String(r.line) } }, [
                icon(r.icon === 'error' ? 'error' : r.icon === 'warning' ? 'warning' : 'info', `severity-${r.icon}`),
                el('span', { className: 'location', text: r.location }),
                el('span', { className: 'message', text: r.message }),
              ]);
              b.addEventListener('click', () => {
                if (this.options.sourceLinks) this.host.notify({ type: 'source/revealLine', file: r.fileIndex, line: r.line });
              });
              return el('li', {}, [b]);
            }),
          );
    replaceChildren(this.diagnosticsPane, [heading, list, skipped ? el('p', { className: 'skipped muted', text: skipped, data: { skipped: '' } }) : null]);
  }

  private watchTheme(): void {
    const update = (): void =>
      this.safely('apply theme', () => {
        const next = readPalette();
        if (JSON.stringify(next) === JSON.stringify(this.palette)) return;
        this.palette = next;
        this.timeline.setPalette(next);
        this.whatIf?.setPalette(next);
      });
    // VS Code swaps the body class (and theme attributes) and rewrites the variables on <html> when the theme changes.
    new MutationObserver(update).observe(document.body, { attributes: true, attributeFilter: ['class', 'data-vscode-theme-kind', 'data-vscode-theme-id'] });
    new MutationObserver(update).observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
  }
}

/** The traced figures of a session's calls for the what-if bars, read from the timeline columns. */
function tracedCalls(body: SessionBody): ArrayLike<TracedCall | undefined> {
  const c = body.columns;
  const value = (v: number): number | null => (Number.isNaN(v) ? null : v);
  return new Proxy([] as (TracedCall | undefined)[], {
    get(target, key) {
      if (key === 'length') return c.flags.length;
      if (typeof key === 'string' && /^\d+$/.test(key)) {
        const i = Number(key);
        return i < c.flags.length ? { cached: value(c.cached[i]!), appended: value(c.appended[i]!), output: value(c.output[i]!) } : undefined;
      }
      return Reflect.get(target, key) as unknown;
    },
  });
}
