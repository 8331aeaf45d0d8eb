// The page's base styles first: the parts' and panels' stylesheets (imported by their modules) follow it in the bundle.
import './page.css';
// Then in the order the page shows them (their stylesheets follow in that order).
import { LoadState } from './loadState';
import { TraceHeaderView } from './header';
import { SessionSummaryView } from './sessionSummary';
import type { SessionPage } from '../../src/core/view/sessionList';
import type { SessionIntro, TraceHeader } from '../../src/core/view/traceService';
import type { AppendedBytes, CallRef, HostNotification, InspectorSettings } from '../../src/protocol/messages';
import type { Palette } from '../shared/palette';
import { clampSelection, selectionAnnouncement } from '../timeline/timelineModel';
import { TimelineSection } from '../timeline/timelineSection';
import { CallDetails } from './callDetails';
import { INSPECTOR_IN_VSCODE, readPalette, watchTheme } from './inspectorHost';
import type { InspectorHost, InspectorOptions } from './inspectorHost';
import { mergeState, readPersistedState } from './inspectorModel';
import type { PersistedState } from './inspectorModel';
import { PageLayout } from './pageLayout';
import { panelSessionOf, type InspectorPanel, type PanelContext, type ShownSession } from './panel';
import { PANELS } from './panels';
import { ScrollAnchor } from './scrollAnchor';
import { SessionLoader } from './sessionLoader';
import { SessionPicker } from './sessionPicker';
import { ViewStore } from './viewStore';

/**
 * The inspector page. Owns the UI state (the trace header, the session shown, the selected
 * call) and the DOM under `#app`, built of parts (the load state, the header with the
 * session picker, the session's figures, the call details) and panels (the timeline, then
 * PANELS), each told of the session through the InspectorPanel contract. The host owns the
 * trace and answers what the page asks (a session's summary, then its body, rows by page,
 * search, details). Rendering never throws to the caller: failures are shown on the page
 * and reported as `log/error`.
 */
export class InspectorApp {
  private header: TraceHeader | null = null;
  private session: ShownSession | null = null;
  /** Bumped when the trace is read again or grows: the panels' caches start over. */
  private traceKey: object = {};
  private selected: number | null = null;
  private palette: Palette;
  private pendingAnnouncement: { call: number; prefix: string } | null = null;
  /** A call the host asked for before the page had its trace (Show in Timeline while the tab was rebuilt). */
  private earlySelect: CallRef | null = null;
  private readonly scrollAnchor = new ScrollAnchor();
  private readonly viewStore: ViewStore;
  private readonly loader: SessionLoader;
  private readonly load: LoadState;
  private readonly picker: SessionPicker;
  private readonly traceHeader: TraceHeaderView;
  private readonly summary = new SessionSummaryView();
  private readonly details: CallDetails;
  private readonly timeline: TimelineSection;
  private readonly panels: readonly InspectorPanel[];
  private readonly layout: PageLayout;

  constructor(
    private readonly root: HTMLElement,
    private readonly host: InspectorHost,
    private readonly options: InspectorOptions = INSPECTOR_IN_VSCODE,
  ) {
    this.palette = readPalette();
    const safely = (what: string, fn: () => void): void => this.safely(what, fn);
    this.load = new LoadState(root, {
      cancel: () => host.notify({ type: 'load/cancel' }),
      retry: (ignoreSizeLimit) => host.notify({ type: 'load/retry', ignoreSizeLimit }),
      // Every figure of the trace (header, session, diagnostics) is hidden until the next read's answer shows it.
      hideFigures: () => {
        this.traceHeader.hide();
        this.layout.sessionBody.hidden = true;
      },
      safely,
    });
    this.picker = new SessionPicker({ host, switchSession: (id) => this.switchSession(id, null), safely });
    this.traceHeader = new TraceHeaderView(
      { host, options, safely, readingAgain: (text) => this.load.readingAgain(text) },
      this.picker.element,
    );
    this.loader = new SessionLoader(
      host,
      safely,
      () => this.rowsArrived(),
      (what, e) => this.reportError(what, e),
    );
    this.details = new CallDetails({ host, options, reveal: (index) => this.reveal(index), safely });
    const context = this.panelContext();
    this.timeline = new TimelineSection(context);
    this.panels = [this.timeline, ...PANELS.flatMap((make) => make(context) ?? [])];
    this.viewStore = new ViewStore(host, safely, () => ({
      sessionId: this.session?.id ?? null,
      view: this.timeline.viewState(),
    }));
    this.layout = new PageLayout(root, {
      load: this.load,
      traceHeader: this.traceHeader,
      picker: this.picker,
      summary: this.summary,
      details: this.details,
      timeline: this.timeline,
      panels: this.panels,
      safely,
    });
    watchTheme(() => safely('apply theme', () => this.themeChanged()));
    // The scroll is view state too: VS Code rebuilds a hidden inspector when its tab comes back.
    window.addEventListener('scroll', () => this.viewStore.changed(), { passive: true });
  }

  /** Handles one notification from the host. */
  handle(message: HostNotification): void {
    this.safely(`handle ${message.type}`, () => {
      switch (message.type) {
        case 'init':
          this.init(message.header, message.sessions, message.intro, message.settings, message.select);
          this.traceHeader.showLive(message.live);
          break;
        case 'trace/didChange':
          this.traceChanged(message.header, message.sessions, message.appended ?? null);
          this.traceHeader.showLive(message.live);
          break;
        case 'trace/reset':
          this.load.showReset(message.reason, message.message);
          break;
        case 'call/select':
          this.selectRef(message.ref);
          break;
        case 'load/progress':
          this.load.showProgress(message.bytesRead, message.totalBytes);
          break;
        case 'load/stopped':
          this.load.showStopped(message.reason, message.message, message.overSizeLimit);
          break;
        case 'host/error':
          this.load.showHostError(message.message);
          break;
        default: {
          // Every notification the protocol defines is handled above; anything else is said, not ignored.
          const unknown: never = message;
          throw new Error(`unknown notification ${JSON.stringify((unknown as { type?: unknown }).type)}`);
        }
      }
    });
  }

  /** The panels' part of the HTML report (the what-if panel's last scenario and sweep); null when none has one. */
  whatIfDocument(): unknown {
    return this.panels.map((panel) => panel.reportDocument?.() ?? null).find((document) => document !== null) ?? null;
  }

  /** Shows an error on the page and tells the host; used for failures outside `handle` too. */
  reportError(what: string, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.load.showError(what, message);
    try {
      this.host.notify({
        type: 'log/error',
        message: `${what}: ${error instanceof Error ? (error.stack ?? message) : message}`,
      });
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

  /** What the panels may ask of the page. */
  private panelContext(): PanelContext {
    return {
      host: this.host,
      options: this.options,
      palette: this.palette,
      workerUri: this.root.dataset['workerUri'] || null,
      select: (call, options = {}) => this.setSelected(call, options),
      selected: () => this.selected,
      focusCall: (call) => this.selectCallInView(call),
      showCalls: (first, last) => this.timeline.showCalls(first, last),
      callWindow: () => this.timeline.callWindow(),
      setCallWindow: (w) => this.timeline.setCallWindow(w),
      openSession: (id, call) => this.switchSession(id, call),
      sessionId: () => this.session?.id ?? null,
      rowOf: (call) => this.loader.rows?.get(call),
      ensureRows: (first, last) => this.loader.rows?.ensure(first, last),
      announce: (text) => this.layout.announce(text),
      safely: (what, fn) => this.safely(what, fn),
      reportError: (what, error) => this.reportError(what, error),
      persist: () => this.persist(),
      saveState: (patch) => this.host.setState(mergeState(this.host.getState(), patch)),
      viewChanged: () => {
        this.viewStore.changed();
        // The timeline's window may have moved: the charts over calls follow it.
        const w = this.timeline.callWindow();
        for (const panel of this.panels) panel.viewMoved?.(w);
      },
    };
  }

  private init(
    header: TraceHeader,
    sessions: SessionPage,
    intro: SessionIntro | null,
    settings: InspectorSettings,
    asked: CallRef | null,
  ): void {
    const select = asked ?? this.earlySelect;
    this.earlySelect = null;
    const saved: PersistedState = readPersistedState(this.host.getState());
    for (const panel of this.panels) panel.restore?.(saved, settings);
    this.details.restore(saved.transcriptOpen ?? false);
    this.viewStore.expect(saved, select !== null);
    this.header = header;
    this.picker.setTrace(header, sessions);
    this.traceKey = {};
    this.load.errorBanner.hidden = true;
    this.renderHeader();
    const wanted = select?.sessionId ?? saved.sessionId ?? null;
    const id = wanted ?? header.defaultSessionId;
    const call =
      select && select.sessionId === id ? select.callIndex : saved.sessionId === id ? (saved.callIndex ?? null) : null;
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
      this.init(header, sessions, null, { showCached: this.timeline.persisted().showCached ?? true }, null);
      return;
    }
    const callsBefore = this.header.callCount;
    this.header = header;
    this.picker.setTrace(header, sessions);
    this.traceKey = {};
    const grown = appended !== null && this.session !== null;
    if (grown && this.session) {
      this.details.keepOnAppend(this.session.id, this.session.body?.columns.flags.length ?? 0);
      this.traceHeader.showAppended(header.callCount - callsBefore);
      this.load.resetNote.hidden = true;
      this.scrollAnchor.hold([
        this.traceHeader.element,
        ...(Array.from(this.layout.sessionBody.children) as HTMLElement[]),
      ]);
    } else {
      this.details.clear();
    }
    for (const panel of this.panels) panel.traceChanged?.(grown);
    this.renderHeader();
    const id = this.session?.id ?? header.defaultSessionId;
    if (id === null) this.showSession(null);
    else this.openSession(id, this.selected, null, false, appended !== null);
  }

  private renderHeader(): void {
    this.load.loaded();
    this.traceHeader.render(this.header!);
    this.picker.render(this.picked());
  }

  /** The session shown, as the picker lists it. */
  private picked(): { id: string; role: string } | null {
    return this.session ? { id: this.session.id, role: this.session.intro.summary.role } : null;
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
  private openSession(
    id: string,
    call: number | null,
    intro: SessionIntro | null,
    reveal: boolean,
    keepView = false,
  ): void {
    const same = this.session?.id === id;
    const follow = same && keepView;
    if (!same) this.selected = null;
    this.details.clear();
    this.loader.open(id, intro, {
      intro: (it) => {
        // Keep the old body on screen until the new one comes for the same session (a reload): no flicker.
        this.session = { id, intro: it, body: same && this.session ? this.session.body : null };
        this.showSession(this.session, follow);
      },
      body: (it, body) => {
        this.session = { id, intro: it, body };
        this.selected = clampSelection(call ?? this.selected, body.columns.flags.length);
        this.showBody(this.session, follow);
        if (follow) this.scrollAnchor.restore(true);
        if (reveal && this.selected !== null) this.revealChart();
      },
      introFailed: (e) => {
        // A saved session that is no longer in the file: show the default one.
        const fallback = this.header?.defaultSessionId ?? null;
        if (fallback !== null && fallback !== id) this.openSession(fallback, null, null, false);
        else this.reportError('load the session', e);
      },
      bodyFailed: (e) => {
        this.timeline.showFailure(e instanceof Error ? e.message : String(e));
        this.reportError('load the session', e);
      },
    });
  }

  /** Paints what is known at once: the header's picker, the session's summary and meta; the timeline says it is coming. */
  private showSession(s: ShownSession | null, keepView = false): void {
    this.layout.sessionBody.hidden = s === null;
    this.picker.render(this.picked());
    if (!s) {
      this.viewStore.forget();
      for (const panel of this.panels) panel.showSession(null);
      this.root.setAttribute('aria-busy', 'false');
      this.persist();
      return;
    }
    this.summary.renderMeta(s.intro);
    this.summary.render(this.header, s.intro, s.body);
    if (s.body) {
      this.showBody(s, keepView);
      return;
    }
    this.layout.showSkipLink(false);
    this.root.setAttribute('aria-busy', 'true');
    for (const panel of this.panels) panel.showSession(panelSessionOf(s, this.header!, this.traceKey, keepView, null));
    this.details.element.hidden = true;
    this.root.dataset['painted'] = 'summary';
  }

  /**
   * Paints the analyses, the timeline, the loops and the tables once the session's body is
   * here. `keepView` (new calls appended): the timeline's window and the tables' scroll
   * stay where the user left them, even if the selected call is out of view.
   */
  private showBody(s: ShownSession, keepView = false): void {
    const body = s.body!;
    this.summary.render(this.header, s.intro, body);
    // A rebuilt page puts back the zoom and filter it had on this session (the call asked for, if any, is brought into view after).
    const stored = this.viewStore.take(s.id);
    for (const panel of this.panels)
      panel.showSession(panelSessionOf(s, this.header!, this.traceKey, keepView, stored.view));
    this.layout.showSkipLink(body.columns.flags.length > 0);
    this.renderSelection(false, keepView || stored.keepSelection);
    if (keepView) this.scrollAnchor.restore(false);
    this.root.setAttribute('aria-busy', 'false');
    this.root.dataset['painted'] = 'timeline';
    this.persist();
  }

  private rowsArrived(): void {
    for (const panel of this.panels) panel.rowsArrived?.();
    if (this.session?.body && this.selected !== null && this.loader.rows?.get(this.selected)) {
      // A row arriving never moves the view: the selection was brought into view when it was made.
      if (this.details.waitingFor() === this.selected)
        this.renderSelection(this.pendingAnnouncement?.call === this.selected, true);
    }
  }

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
    const index = clampSelection(call, this.session?.body?.columns.flags.length ?? 0);
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
    for (const panel of this.panels) panel.selectionChanged?.(this.selected, !keepView);
    const body = this.session?.body ?? null;
    const call = this.details.showSelection(this.session?.id ?? null, body, this.selected, this.loader.rows);
    const pending = this.pendingAnnouncement;
    if (call && body && announce && pending && pending.call === call.index) {
      this.layout.announce(
        `${pending.prefix ? `${pending.prefix} ` : ''}${selectionAnnouncement(call, body.columns.flags.length, body.analysis.loops)}`,
      );
      this.pendingAnnouncement = null;
    }
  }

  /** Stores the session, the selected call and what each panel keeps. */
  private persist(): void {
    let patch: PersistedState = { sessionId: this.session?.id ?? undefined, callIndex: this.selected };
    for (const panel of this.panels) patch = { ...patch, ...panel.persisted?.() };
    this.host.setState(mergeState(this.host.getState(), patch));
  }

  private themeChanged(): void {
    const next = readPalette();
    if (JSON.stringify(next) === JSON.stringify(this.palette)) return;
    this.palette = next;
    for (const panel of this.panels) panel.setPalette?.(next);
  }
}
