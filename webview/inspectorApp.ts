import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import type { VscodeCheckbox } from '@vscode-elements/elements/dist/vscode-checkbox/vscode-checkbox.js';
import type { VscodeProgressBar } from '@vscode-elements/elements/dist/vscode-progress-bar/vscode-progress-bar.js';
import type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
import type { MissCause } from '../src/core/analysis/cacheMisses';
import { displayText } from '../src/core/text/safeText';
import type { CallDetail, SessionView, TraceView } from '../src/core/view/traceView';
import type { CallRef, HostNotification, InspectorSettings, WebviewNotification, WhatIfWorkload } from '../src/protocol/messages';
import { fingerprintDigest, loopRows, nextLoopSort, nextMissCall, sortLoopRows } from './analysis/analysisModel';
import type { LoopRow, LoopSort, LoopSortKey } from './analysis/analysisModel';
import { figureGroup, fingerprintContent, loopsContent, missSummary } from './analysis/analysisView';
import { detailsPlaceholder, renderCallDetails } from './timeline/callDetailsView';
import type { DetailsState } from './timeline/callDetailsView';
import { el, icon, linkButton, replaceChildren } from './shared/dom';
import { defaultSessionId, diagnosticRows, findSession, mergeState, progressText, readPersistedState, sessionMetaText, sessionOptions, skippedSummary, summaryFigures, wholeTraceCost } from './inspectorModel';
import type { PersistedState } from './inspectorModel';
import { buildPalette, isHighContrast } from './shared/palette';
import type { Palette } from './shared/palette';
import { TimelineChart } from './timeline/timelineChart';
import { buildTimeline, clampSelection, hasCosts, isNavigationKey, moveSelection, selectionAnnouncement } from './timeline/timelineModel';
import type { BarView, TimelineMarker } from './timeline/timelineModel';
import { CostPanel } from './cost/costView';
import { WhatIfView } from './whatIf/whatIfView';

/** What the app needs from the page around it: the channel to the host and the webview state. */
export interface InspectorHost {
  notify(message: WebviewNotification): void;
  callDetails(ref: CallRef): Promise<CallDetail>;
  /** The what-if workload of a session (`whatif/workload`). */
  whatIfWorkload(sessionId: string): Promise<WhatIfWorkload>;
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
}

export const INSPECTOR_IN_VSCODE: InspectorOptions = { whatIf: true, formatChoice: true, sourceLinks: true };

/** Keys that zoom the timeline: in around the selected call, out, and back to every call. */
const ZOOM_KEYS: Record<string, number | 'reset'> = { '+': 2, '=': 2, '-': 0.5, _: 0.5, '0': 'reset' };

/** Wait after the last selection change before fetching details, so holding an arrow key sends one request. */
const DETAILS_DELAY_MS = 120;

/** Reads the chart colours from the page's theme variables. */
export function readPalette(): Palette {
  const style = getComputedStyle(document.body);
  return buildPalette((name) => style.getPropertyValue(name), isHighContrast(document.body.className));
}

/**
 * The inspector page. Owns the UI state (trace, session, selected call, show-cached) and
 * the DOM under `#app`; the host owns the trace and answers `call/details`. Rendering
 * never throws to the caller: failures are shown on the page and reported as `log/error`.
 */
export class InspectorApp {
  private trace: TraceView | null = null;
  private sessionId: string | null = null;
  private selected: number | null = null;
  private showCached = true;
  private barView: BarView = 'tokens';
  /** Closed until the user opens it: the timeline stays above the fold. */
  private fingerprintOpen = false;
  private loopSort: LoopSort | null = null;
  /** The loop whose row was last opened, marked in the table. */
  private activeLoop: number | null = null;
  private palette: Palette;
  private readonly chart: TimelineChart;
  private readonly details = new Map<string, DetailsState>();
  private detailsTimer: ReturnType<typeof setTimeout> | undefined;

  private readonly loading = el('div', { className: 'loading-block' });
  private readonly progressBar = document.createElement('vscode-progress-bar') as VscodeProgressBar;
  private readonly progressLabel = el('p', { className: 'muted', text: 'Loading trace…' });
  private readonly errorBanner = el('div', { className: 'error-banner', attrs: { role: 'alert' } });
  private readonly fileName = el('h1', { className: 'file-name' });
  private readonly formatBadge = el('span', { className: 'badge' });
  private readonly evidence = el('p', { className: 'evidence muted' });
  private readonly picker = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly formatPicker = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly limitations = el('div', { className: 'limitations', attrs: { role: 'note' } });
  private readonly showCachedBox = document.createElement('vscode-checkbox') as VscodeCheckbox;
  private readonly barViewPicker = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly barViewControl = el('div', { className: 'bar-view-control' });
  private readonly controls = el('div', { className: 'controls' });
  private readonly sessionControls = el('div', { className: 'session-controls' });
  private readonly header = el('header', { className: 'header' });
  private readonly problem = el('section', { className: 'problem', attrs: { role: 'alert' } });
  private readonly sessionBody = el('div', { className: 'session-body' });
  private readonly sessionMeta = el('p', { className: 'session-meta muted' });
  private readonly summary = el('section', { className: 'summary', attrs: { 'aria-label': 'Session summary' } });
  private readonly tokensNote = el('p', { className: 'tokens-note', attrs: { role: 'note' } });
  private readonly legend = el('div', { className: 'legend', attrs: { 'aria-hidden': 'true' } });
  private readonly chartWrap = el('div', { className: 'chart-wrap', attrs: { tabindex: '0', role: 'application' } });
  private readonly canvas = el('canvas', { attrs: { 'aria-hidden': 'true' } });
  private readonly noCalls = el('p', { className: 'empty-note', text: 'This session has no LLM calls.' });
  private readonly markers = el('ul', { className: 'markers', attrs: { 'aria-label': 'Timeline markers' } });
  private readonly missLine = el('p', { className: 'miss-summary', data: { missCauses: '' } });
  private readonly fingerprint = el('details', { className: 'fingerprint' });
  private readonly fingerprintDigest = el('span', { className: 'fp-digest muted' });
  private readonly fingerprintBody = el('div', { className: 'fp-body' });
  private readonly loopsPane = el('section', { className: 'loops panel', attrs: { 'aria-label': 'Retry loops' } });
  private readonly live = el('div', { className: 'visually-hidden', attrs: { 'aria-live': 'polite', 'aria-atomic': 'true' } });
  private readonly detailsPane = el('section', { className: 'details panel', attrs: { 'aria-label': 'Selected call' } });
  private readonly diagnosticsPane = el('section', { className: 'diagnostics panel', attrs: { 'aria-label': 'Diagnostics' } });
  private readonly whatIf: WhatIfView | null;
  private readonly resetZoomButton: HTMLButtonElement;
  private readonly costPanel: CostPanel;

  constructor(
    private readonly root: HTMLElement,
    private readonly host: InspectorHost,
    private readonly options: InspectorOptions = INSPECTOR_IN_VSCODE,
  ) {
    this.palette = readPalette();
    this.chartWrap.appendChild(this.canvas);
    this.resetZoomButton = linkButton('Show every call', () => this.safely('reset the zoom', () => this.chart.resetZoom()), { title: 'Zoomed in: show the whole session again (0)' });
    this.resetZoomButton.classList.add('reset-zoom');
    this.resetZoomButton.hidden = true;
    this.chart = new TimelineChart(this.chartWrap, this.canvas, this.palette, {
      onPick: (i) => this.safely('select a call', () => this.pick(i)),
      onZoom: (range) => this.safely('zoom', () => this.zoomed(range)),
    });
    this.whatIf = !options.whatIf ? null : new WhatIfView(
      {
        workload: (sessionId) => this.host.whatIfWorkload(sessionId),
        pickCall: (index, reveal) => this.safely('select a call', () => (reveal ? this.pick(index) : this.setSelected(index))),
        notify: (message) => this.host.notify(message),
        getState: () => this.host.getState(),
        setState: (state) => this.host.setState(state),
        reportError: (what, error) => this.reportError(what, error),
      },
      root.dataset['workerUri'] || null,
      this.palette,
    );
    this.costPanel = new CostPanel({
      pickCall: (index) => this.safely('select a call', () => this.setSelected(index)),
      customChanged: (custom) => this.host.setState(mergeState(this.host.getState(), { costTtl: custom })),
    });
    this.buildSkeleton();
    this.watchTheme();
  }

  /** Handles one notification from the host. */
  handle(message: HostNotification): void {
    this.safely(`handle ${message.type}`, () => {
      switch (message.type) {
        case 'init':
          this.init(message.trace, message.settings, message.select);
          break;
        case 'trace/didChange':
          this.traceChanged(message.trace);
          break;
        case 'call/select':
          this.selectRef(message.ref);
          break;
        case 'load/progress':
          this.showProgress(message.bytesRead, message.totalBytes);
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

  /** A request the host refused or could not carry out: said at the top of the panel, which keeps showing the trace. */
  private showHostError(message: string): void {
    replaceChildren(this.errorBanner, [icon('warning'), el('span', { text: `The extension could not do that: ${message}` })]);
    this.errorBanner.hidden = false;
    // How many answers of this kind came, for tests and for anyone inspecting the page.
    this.errorBanner.dataset['hostErrors'] = String(Number(this.errorBanner.dataset['hostErrors'] ?? '0') + 1);
  }

  private safely(what: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.reportError(what, e);
    }
  }

  private buildSkeleton(): void {
    this.progressBar.setAttribute('aria-label', 'Reading trace');
    this.progressBar.indeterminate = true;
    this.loading.append(this.progressBar, this.progressLabel);
    this.errorBanner.hidden = true;
    this.problem.hidden = true;

    this.picker.setAttribute('aria-label', 'Session');
    this.picker.id = 'session-picker';
    this.picker.addEventListener('change', () => this.safely('switch session', () => this.switchSession(this.picker.value)));
    this.showCachedBox.label = 'Show cached';
    this.showCachedBox.addEventListener('change', () => this.safely('toggle cached', () => this.setShowCached(this.showCachedBox.checked)));
    this.formatPicker.setAttribute('aria-label', 'Format');
    this.formatPicker.id = 'format-picker';
    this.formatPicker.addEventListener('change', () => this.safely('choose a format', () => this.chooseFormat(this.formatPicker.value)));
    this.barViewPicker.setAttribute('aria-label', 'Bars show');
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
    this.sessionControls.append(
      el('label', { className: 'control-label', text: 'Session', attrs: { for: 'session-picker' } }),
      this.picker,
      this.showCachedBox,
      this.barViewControl,
    );
    this.controls.append(this.sessionControls);
    if (this.options.formatChoice) this.controls.append(el('div', { className: 'format-control' }, [el('label', { className: 'control-label', text: 'Format', attrs: { for: 'format-picker' } }), this.formatPicker]));

    this.chartWrap.addEventListener('keydown', (e) => this.safely('keyboard', () => this.onChartKey(e)));
    this.buildLegend();
    const timeline = el('section', { className: 'timeline', attrs: { 'aria-label': 'Timeline' } }, [
      el('div', { className: 'timeline-head' }, [el('h2', { text: 'Timeline' }), this.resetZoomButton, this.legend]),
      this.chartWrap,
      this.noCalls,
      this.markers,
      this.missLine,
      this.live,
    ]);
    const fingerprintHead = el('summary', { className: 'fp-summary' }, [icon('chevron-right', 'fp-chevron'), el('h2', { text: 'Workload fingerprint' }), this.fingerprintDigest]);
    this.fingerprint.append(fingerprintHead, this.fingerprintBody);
    this.fingerprint.addEventListener('toggle', () =>
      this.safely('toggle the fingerprint', () => {
        if (this.fingerprint.open === this.fingerprintOpen) return;
        this.fingerprintOpen = this.fingerprint.open;
        this.host.setState(mergeState(this.host.getState(), { fingerprintOpen: this.fingerprintOpen }));
      }),
    );
    if (this.whatIf) this.whatIf.element.hidden = true;
    this.sessionBody.append(this.sessionMeta, this.summary, this.tokensNote, this.fingerprint, timeline, this.costPanel.element, ...(this.whatIf ? [this.whatIf.element] : []), el('div', { className: 'lower' }, [this.loopsPane, this.detailsPane]));

    this.header.append(el('div', { className: 'title-row' }, [icon('graph', 'title-icon'), this.fileName, this.formatBadge]), this.evidence, this.limitations, this.controls);
    this.header.hidden = true;
    this.sessionBody.hidden = true;
    this.diagnosticsPane.hidden = true;
    replaceChildren(this.root, [this.loading, this.errorBanner, this.header, this.problem, this.sessionBody, this.diagnosticsPane]);
  }

  /** The three bar colours mean the same split in both views; only the unit changes. */
  private relabelLegend(view: BarView): void {
    const labels: Record<string, string> = view === 'cost' ? { cached: 'cache read $', appended: 'appended $ (writes + uncached)', output: 'output $' } : { cached: 'cached', appended: 'appended', output: 'output' };
    for (const [kind, text] of Object.entries(labels)) {
      const label = this.legend.querySelector<HTMLElement>(`[data-legend="${kind}"] span:last-child`);
      if (label) label.textContent = text;
    }
    this.legend.dataset['barView'] = view;
  }

  private buildLegend(): void {
    const item = (kind: string, label: string): HTMLElement => el('span', { className: `legend-item legend-${kind}`, data: { legend: kind } }, [el('span', { className: `swatch swatch-${kind}` }), el('span', { text: label })]);
    replaceChildren(this.legend, [
      item('cached', 'cached'),
      item('appended', 'appended'),
      item('output', 'output'),
      item('context', 'context size'),
      item('failed', 'failed tool'),
      item('compaction', 'compaction'),
      item('subagent', 'sub-agent'),
      item('loop', 'retry loop'),
      item('miss', 'cache miss'),
    ]);
  }

  private init(trace: TraceView, settings: InspectorSettings, select: CallRef | null): void {
    const saved: PersistedState = readPersistedState(this.host.getState());
    this.showCached = saved.showCached ?? settings.showCached;
    this.barView = saved.barView ?? 'tokens';
    this.costPanel.setCustom(saved.costTtl ?? null);
    this.fingerprintOpen = saved.fingerprintOpen ?? false;
    this.loopSort = saved.loopSort ?? null;
    this.whatIf?.setDefaults(settings.whatIf, saved.whatIf);
    this.whatIf?.setOpen(saved.whatIfOpen ?? false);
    this.activeLoop = null;
    this.details.clear();
    this.trace = trace;
    this.sessionId = defaultSessionId(trace, select?.sessionId ?? saved.sessionId ?? null);
    const count = this.currentSession()?.calls.length ?? 0;
    if (select && select.sessionId === this.sessionId) this.selected = clampSelection(select.callIndex, count);
    else if (saved.sessionId === this.sessionId) this.selected = clampSelection(saved.callIndex ?? null, count);
    else this.selected = null;
    this.errorBanner.hidden = true;
    this.renderTrace();
    if (select) this.revealChart();
  }

  private traceChanged(trace: TraceView): void {
    this.trace = trace;
    this.details.clear();
    // Loop indexes may point elsewhere in the new trace.
    this.activeLoop = null;
    this.sessionId = defaultSessionId(trace, this.sessionId);
    this.selected = clampSelection(this.selected, this.currentSession()?.calls.length ?? 0);
    this.renderTrace();
  }

  private selectRef(ref: CallRef): void {
    if (!this.trace || !findSession(this.trace, ref.sessionId)) return;
    if (ref.sessionId !== this.sessionId) {
      this.sessionId = ref.sessionId;
      this.selected = null;
      this.activeLoop = null;
      this.renderPicker();
      this.renderSession();
    }
    this.setSelected(clampSelection(ref.callIndex, this.currentSession()?.calls.length ?? 0));
    this.revealChart();
  }

  private showProgress(bytesRead: number, totalBytes: number | null): void {
    if (totalBytes !== null && totalBytes > 0) {
      this.progressBar.indeterminate = false;
      this.progressBar.max = totalBytes;
      this.progressBar.value = Math.min(bytesRead, totalBytes);
    } else {
      this.progressBar.indeterminate = true;
    }
    this.progressLabel.textContent = progressText(bytesRead, totalBytes);
    this.loading.hidden = false;
    this.root.setAttribute('aria-busy', 'true');
  }

  private currentSession(): SessionView | null {
    return this.trace ? findSession(this.trace, this.sessionId) : null;
  }

  private persist(): void {
    this.host.setState(mergeState(this.host.getState(), { sessionId: this.sessionId ?? undefined, callIndex: this.selected, showCached: this.showCached, barView: this.barView }));
  }

  private renderTrace(): void {
    const trace = this.trace;
    if (!trace) return;
    this.loading.hidden = true;
    this.root.setAttribute('aria-busy', 'false');
    this.header.hidden = false;
    this.fileName.textContent = displayText(trace.fileName);
    this.fileName.title = trace.fileName;
    this.formatBadge.textContent = trace.formatLabel ?? 'unknown format';
    this.evidence.textContent = displayText(trace.formatChosen ? `Read as ${trace.formatLabel ?? 'the chosen format'}, as you chose.` : `Detected: ${trace.detection}`);
    this.renderLimitations(trace);
    this.renderProblem(trace);
    this.renderPicker();
    this.renderFormatPicker(trace);
    this.showCachedBox.checked = this.showCached;
    this.renderDiagnostics(trace);
    this.renderSession();
    this.persist();
  }

  private renderProblem(trace: TraceView): void {
    let title: string | null = null;
    let text = '';
    if (trace.problem) {
      title = "This trace can't be shown";
      text = trace.problem.message;
    } else if (trace.sessions.length === 0) {
      title = 'No sessions found';
      text = trace.formatChosen
        ? `Nothing in this file matched ${trace.formatLabel ?? 'the chosen format'}. Choose another format, or "Detect automatically".`
        : 'The file was read, but it contains no agent session with LLM calls.';
    }
    this.problem.hidden = title === null;
    this.problem.dataset['problem'] = trace.problem?.kind ?? (title ? 'no-sessions' : '');
    replaceChildren(this.problem, title === null ? [] : [icon('error', 'problem-icon'), el('div', {}, [el('h2', { text: title }), el('p', { className: 'problem-message', text })])]);
  }

  /** Says what the format cannot give, so a missing figure reads as "not in this format", not as zero. */
  private renderLimitations(trace: TraceView): void {
    this.limitations.hidden = trace.limitations.length === 0;
    replaceChildren(
      this.limitations,
      trace.limitations.length === 0
        ? []
        : [
            icon('info', 'limitations-icon'),
            el('div', {}, [
              el('span', { className: 'limitations-title', text: `What ${trace.formatLabel ?? 'this format'} cannot give:` }),
              el('ul', {}, trace.limitations.map((text) => el('li', { text }))),
            ]),
          ],
    );
  }

  private renderFormatPicker(trace: TraceView): void {
    const auto = trace.formatChosen ? 'Detect automatically' : `Detect automatically (${trace.formatLabel ?? 'no match'})`;
    const options: Array<[string, string]> = [['', auto], ...trace.formatChoices.map((f): [string, string] => [f.id, f.label])];
    const current = trace.formatChosen && trace.format ? trace.format : '';
    replaceChildren(
      this.formatPicker,
      options.map(([value, label]) => {
        const option = document.createElement('vscode-option');
        option.value = value;
        option.textContent = label;
        option.selected = value === current;
        return option;
      }),
    );
    this.formatPicker.value = current;
    this.formatPicker.dataset['value'] = current;
  }

  private chooseFormat(value: string): void {
    if (!this.trace) return;
    const current = this.trace.formatChosen && this.trace.format ? this.trace.format : '';
    if (value === current) return;
    const choice = this.trace.formatChoices.find((f) => f.id === value);
    this.formatPicker.dataset['value'] = value;
    this.host.notify({ type: 'format/choose', format: choice ? choice.id : null });
    this.progressLabel.textContent = choice ? `Reading again as ${choice.label}…` : 'Detecting the format again…';
    this.loading.hidden = false;
  }

  private renderPicker(): void {
    const trace = this.trace!;
    const options = sessionOptions(trace);
    this.sessionControls.hidden = options.length === 0;
    replaceChildren(
      this.picker,
      options.map((o) => {
        const option = document.createElement('vscode-option');
        option.value = o.value;
        option.textContent = displayText(o.label);
        option.selected = o.value === this.sessionId;
        option.dataset['depth'] = String(o.depth);
        return option;
      }),
    );
    if (this.sessionId !== null) this.picker.value = this.sessionId;
    this.picker.dataset['value'] = this.sessionId ?? '';
  }

  private switchSession(id: string): void {
    if (!this.trace || id === this.sessionId || !findSession(this.trace, id)) return;
    this.sessionId = id;
    this.selected = null;
    this.activeLoop = null;
    this.picker.dataset['value'] = id;
    this.renderSession();
    this.persist();
  }

  private setShowCached(show: boolean): void {
    if (show === this.showCached) return;
    this.showCached = show;
    this.renderSession();
    this.persist();
  }

  private setBarView(view: BarView): void {
    if (view === this.barView) return;
    this.barView = view;
    this.renderSession();
    this.persist();
  }

  private renderSession(): void {
    const session = this.currentSession();
    this.sessionBody.hidden = session === null;
    if (this.trace) this.whatIf?.setContext(this.trace, session);
    this.costPanel.render(session);
    if (!session) {
      this.chart.destroy();
      return;
    }
    this.sessionMeta.textContent = displayText(sessionMetaText(session.summary, (ms) => new Date(ms).toLocaleString()));
    this.renderSummary(session);
    this.renderFingerprint(session);
    this.renderLoops(session);
    replaceChildren(this.missLine, missSummary(session, (cause) => this.safely('select a cache miss', () => this.selectMiss(cause))));
    this.missLine.hidden = this.missLine.childElementCount === 0;
    const hasCalls = session.calls.length > 0;
    this.chartWrap.hidden = !hasCalls;
    this.noCalls.hidden = hasCalls;
    this.legend.hidden = !hasCalls;
    this.legend.classList.toggle('cached-hidden', !this.showCached);
    this.chartWrap.setAttribute(
      'aria-label',
      `Timeline of ${session.calls.length} LLM calls. Left and Right arrows select a call, Home and End jump to the first or last, Page Up and Page Down move by 10, ` +
        `plus and minus zoom in and out, 0 shows every call${this.options.sourceLinks ? ", Enter shows the call's source" : ''}.`,
    );
    // The cost view is offered when the host priced the session.
    const costs = session !== null && hasCosts(session);
    this.barViewControl.hidden = !costs;
    const view: BarView = costs ? this.barView : 'tokens';
    this.barViewPicker.value = view;
    this.barViewPicker.dataset['value'] = view;
    this.relabelLegend(view);
    if (hasCalls) {
      const model = buildTimeline(session, this.showCached, view);
      this.chart.render(session.calls, model, this.showCached, this.selected);
      this.renderMarkers(model.markers);
      // The legend names only what this session's chart shows.
      const present: Record<string, boolean> = {
        failed: model.failedCalls.length > 0,
        compaction: model.markers.some((m) => m.kind === 'compaction'),
        subagent: model.markers.some((m) => m.kind === 'subagent'),
        loop: model.bands.length > 0,
        miss: model.missCalls.length > 0,
      };
      for (const item of this.legend.querySelectorAll<HTMLElement>('[data-legend]')) item.hidden = present[item.dataset['legend'] ?? ''] === false;
    } else {
      this.chart.destroy();
      this.chartWrap.dataset['barCount'] = '0';
      replaceChildren(this.markers, []);
      this.markers.hidden = true;
    }
    this.renderSelection(false);
  }

  private renderSummary(session: SessionView): void {
    const whole = this.trace ? wholeTraceCost(this.trace, session) : null;
    replaceChildren(this.summary, summaryFigures(session.summary, session.analysis, session.cost, whole).map((g) => figureGroup(g, 'h2')));
    // Say why the bars are flat rather than letting empty bars read as zero tokens.
    const source = session.summary.tokensSource;
    const note =
      source === 'reported'
        ? 'Totals only: this trace reports token counts for the whole session, not per call, so the figures above are the session totals and the bars below have no height. Failed tool calls are still marked.'
        : source === 'none'
          ? 'No token counts: this trace does not report tokens, so the bars below have no height. Failed tool calls are still marked.'
          : null;
    this.tokensNote.hidden = note === null;
    this.tokensNote.textContent = displayText(note ?? '');
    this.tokensNote.dataset['tokensSource'] = source;
  }

  /** The fingerprint panel; an older host that sends no analysis gets none. */
  private renderFingerprint(session: SessionView): void {
    this.fingerprint.hidden = !session.analysis;
    if (!session.analysis) return;
    this.fingerprint.open = this.fingerprintOpen;
    this.fingerprintDigest.textContent = fingerprintDigest(session.analysis);
    replaceChildren(this.fingerprintBody, fingerprintContent(session));
  }

  private renderLoops(session: SessionView): void {
    this.loopsPane.hidden = !session.analysis || session.calls.length === 0;
    if (this.loopsPane.hidden) return;
    const rows = sortLoopRows(loopRows(session.analysis.loops), this.loopSort);
    replaceChildren(
      this.loopsPane,
      loopsContent(session, rows, this.loopSort, this.activeLoop, {
        sort: (key) => this.safely('sort the loops', () => this.sortLoops(key)),
        open: (row) => this.safely('open a loop', () => this.openLoop(row)),
      }),
    );
  }

  private sortLoops(key: LoopSortKey): void {
    this.loopSort = nextLoopSort(this.loopSort, key);
    this.host.setState(mergeState(this.host.getState(), { loopSort: this.loopSort }));
    const session = this.currentSession();
    if (!session) return;
    this.renderLoops(session);
    // Re-rendering replaced the header button: keep the keyboard focus on it.
    this.loopsPane.querySelector<HTMLButtonElement>(`button[data-sort="${key}"]`)?.focus();
  }

  /** Selects the loop's first attempt on the timeline and opens its first line in the trace. */
  private openLoop(row: LoopRow): void {
    this.activeLoop = row.index;
    const session = this.currentSession();
    if (session) this.renderLoops(session);
    this.loopsPane.querySelector<HTMLButtonElement>(`tbody[data-loop="${row.index}"] [data-action="open-loop"]`)?.focus();
    this.setSelected(clampSelection(row.firstCall, session?.calls.length ?? 0));
    this.host.notify({ type: 'source/revealLine', file: row.fileIndex, line: row.line });
  }

  /** Selects the next call (after the selected one, wrapping) whose cache miss has this cause. */
  private selectMiss(cause: MissCause): void {
    const session = this.currentSession();
    if (!session) return;
    const next = nextMissCall(session.calls, cause, this.selected);
    if (next !== null) this.setSelected(next);
  }

  private renderMarkers(markers: TimelineMarker[]): void {
    this.markers.hidden = markers.length === 0;
    replaceChildren(
      this.markers,
      markers.map((m) =>
        el('li', { className: `marker marker-${m.kind}`, data: { marker: m.kind, call: String(m.callIndex) } }, [
          el('span', { className: `swatch swatch-${m.kind}`, attrs: { 'aria-hidden': 'true' } }),
          linkButton(m.description, () => this.safely('open marker', () => (m.sessionId ? this.switchSessionFromMarker(m.sessionId) : this.setSelected(m.callIndex))), {
            title: m.sessionId ? 'Open this sub-agent in the session picker' : 'Select the first call after the compaction',
          }),
        ]),
      ),
    );
  }

  private switchSessionFromMarker(id: string): void {
    this.switchSession(id);
    this.renderPicker();
  }

  private onChartKey(e: KeyboardEvent): void {
    const count = this.currentSession()?.calls.length ?? 0;
    const zoom = ZOOM_KEYS[e.key];
    if (zoom !== undefined && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      if (zoom === 'reset') this.chart.resetZoom();
      else this.chart.zoomBy(zoom, this.selected);
      return;
    }
    if (isNavigationKey(e.key)) {
      e.preventDefault();
      this.setSelected(moveSelection(this.selected, e.key, count));
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      if (this.selected === null) this.setSelected(moveSelection(null, 'Home', count));
      else this.reveal(this.selected);
    }
  }

  private pick(index: number): void {
    this.setSelected(index);
    this.reveal(index);
  }

  private zoomed(range: { first: number; last: number } | null): void {
    this.resetZoomButton.hidden = range === null;
    if (range) this.live.textContent = `Showing calls ${range.first + 1} to ${range.last + 1}.`;
  }

  private reveal(index: number): void {
    if (this.sessionId === null || !this.options.sourceLinks) return;
    this.host.notify({ type: 'source/reveal', ref: { sessionId: this.sessionId, callIndex: index }, toolId: null });
  }

  private setSelected(index: number | null): void {
    this.selected = index;
    this.persist();
    this.renderSelection(true);
  }

  private revealChart(): void {
    this.chartWrap.scrollIntoView({ block: 'nearest' });
  }

  private renderSelection(announce: boolean): void {
    const session = this.currentSession();
    this.chart.select(this.selected);
    this.whatIf?.select(this.selected);
    const call = session && this.selected !== null ? session.calls[this.selected] : undefined;
    if (!session || !call) {
      replaceChildren(this.detailsPane, [el('h2', { text: 'Call details' }), session && session.calls.length > 0 ? detailsPlaceholder() : null]);
      this.detailsPane.hidden = !session || session.calls.length === 0;
      return;
    }
    this.detailsPane.hidden = false;
    if (announce) this.live.textContent = selectionAnnouncement(call, session.calls.length, session.analysis?.loops ?? []);
    this.showDetails();
    this.scheduleDetails(session.summary.id, call.index);
  }

  private detailsKey(sessionId: string, index: number): string {
    return `${sessionId}\u0000${index}`;
  }

  private showDetails(override?: DetailsState): void {
    const session = this.currentSession();
    const call = session && this.selected !== null ? session.calls[this.selected] : undefined;
    if (!session || !call) return;
    const sessionId = session.summary.id;
    const state = override ?? this.details.get(this.detailsKey(sessionId, call.index)) ?? { kind: 'loading' };
    replaceChildren(
      this.detailsPane,
      renderCallDetails(call, session.calls.length, state, {
        revealCall: () => this.reveal(call.index),
        revealTool: (toolId) => this.host.notify({ type: 'source/reveal', ref: { sessionId, callIndex: call.index }, toolId }),
      }, session.analysis?.loops ?? []),
    );
  }

  private scheduleDetails(sessionId: string, index: number): void {
    const key = this.detailsKey(sessionId, index);
    if (this.details.get(key)?.kind === 'loaded') return;
    clearTimeout(this.detailsTimer);
    this.detailsTimer = setTimeout(() => {
      this.details.set(key, { kind: 'loading' });
      this.host.callDetails({ sessionId, callIndex: index }).then(
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
      const session = this.currentSession();
      if (session && this.selected !== null && key === this.detailsKey(session.summary.id, this.selected)) this.showDetails(fixed);
    });
  }

  private renderDiagnostics(trace: TraceView): void {
    const rows = diagnosticRows(trace.diagnostics);
    const skipped = skippedSummary(trace.skippedRecords);
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
              b.addEventListener('click', () => this.host.notify({ type: 'source/revealLine', file: r.fileIndex, line: r.line }));
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
        this.chart.setPalette(next);
        this.whatIf?.setPalette(next);
      });
    // VS Code swaps the body class (and theme attributes) and rewrites the variables on <html> when the theme changes.
    new MutationObserver(update).observe(document.body, { attributes: true, attributeFilter: ['class', 'data-vscode-theme-kind', 'data-vscode-theme-id'] });
    new MutationObserver(update).observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
  }
}
