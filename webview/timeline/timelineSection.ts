import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import type { VscodeCheckbox } from '@vscode-elements/elements/dist/vscode-checkbox/vscode-checkbox.js';
import type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
import { formatCount } from '../../src/core/text/formatNumbers';
import type { SessionBody } from '../../src/core/view/traceService';
import type { InspectorSettings } from '../../src/protocol/messages';
import { BODY_TIMEOUT_MS } from '../inspector/inspectorHost';
import type { PersistedState } from '../inspector/inspectorModel';
import type { InspectorPanel, PanelContext, PanelSection, PanelSession } from '../inspector/panel';
import { el, replaceChildren } from '../shared/dom';
import type { Palette } from '../shared/palette';
import type { BarView } from './timelineModel';
import { TimelinePanel } from './timelinePanel';
import type { TimelineRestore } from './timelinePanel';
import { countUnpriced } from './unpricedMarks';
import type { ViewWindow } from './viewWindow';
import './timeline.css';

/**
 * The timeline as a panel of the inspector page: the chart with its toolbar, search and
 * markers (TimelinePanel), its legend (naming only what this session's chart shows), the
 * note while the session's columns come, and its two controls in the header's row: "Show
 * cached" and what the bars measure (tokens, or the dollars they cost in a priced session).
 * It is the page's spine: the page brings calls into view through it.
 */
export class TimelineSection implements InspectorPanel {
  readonly sections: readonly PanelSection[];
  private readonly timeline: TimelinePanel;
  private readonly legend = el('div', { className: 'legend', attrs: { 'aria-hidden': 'true' } });
  private readonly waiting = el('p', { className: 'muted timeline-waiting', attrs: { role: 'status' } });
  private readonly showCachedBox = document.createElement('vscode-checkbox') as VscodeCheckbox;
  private readonly barViewPicker = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly barViewControl = el('div', { className: 'bar-view-control' });
  private showCached = true;
  private barView: BarView = 'tokens';
  private body: SessionBody | null = null;

  constructor(private readonly page: PanelContext) {
    this.buildLegend();
    this.timeline = new TimelinePanel(
      {
        select: (call, options) => page.select(call, options),
        selected: () => page.selected(),
        openSession: (id, call) => page.safely('open a session', () => page.openSession(id, call)),
        callsUsingTool: (sessionId, tool) => page.host.request('callsUsingTool', { sessionId, tool }),
        search: (query, sessionId) => page.host.request('search', { query, sessionId }, { timeoutMs: BODY_TIMEOUT_MS }),
        rowOf: (call) => page.rowOf(call),
        ensureRows: (first, last) => page.ensureRows(first, last),
        announce: (text) => page.announce(text),
        safely: (what, fn) => page.safely(what, fn),
        viewChanged: () => page.viewChanged(),
      },
      page.palette,
      this.legend,
    );
    this.showCachedBox.label = 'Show cached';
    this.showCachedBox.addEventListener('change', () =>
      page.safely('toggle cached', () => this.setShowCached(this.showCachedBox.checked)),
    );
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
    this.barViewPicker.addEventListener('change', () =>
      page.safely('switch the bars', () => this.setBarView(this.barViewPicker.value === 'cost' ? 'cost' : 'tokens')),
    );
    this.barViewControl.append(
      el('label', { className: 'control-label', text: 'Bars', attrs: { for: 'bar-view-picker' } }),
      this.barViewPicker,
    );
    this.barViewControl.hidden = true;
    this.timeline.element.append(this.waiting);
    this.sections = [
      { slot: 'controls', element: this.showCachedBox },
      { slot: 'controls', element: this.barViewControl },
      { slot: 'timeline', element: this.timeline.element },
    ];
  }

  /** The timeline's section (the chart notes of other panels go in it). */
  get element(): HTMLElement {
    return this.timeline.element;
  }

  /** The chart itself: where the skip link and a revealed call take the reader. */
  get chartWrap(): HTMLElement {
    return this.timeline.chartWrap;
  }

  restore(saved: PersistedState, settings: InspectorSettings): void {
    this.showCached = saved.showCached ?? settings.showCached;
    this.barView = saved.barView ?? 'tokens';
    this.showCachedBox.checked = this.showCached;
  }

  persisted(): PersistedState {
    return { showCached: this.showCached, barView: this.barView };
  }

  showSession(s: PanelSession | null): void {
    this.body = s?.body ?? null;
    if (!s) {
      this.timeline.setSession(null, this.showCached);
      return;
    }
    const summary = s.intro.summary;
    const body = s.body;
    if (!body) {
      this.waiting.hidden = summary.llmCalls === 0;
      this.waiting.textContent = `Drawing the timeline of ${formatCount(summary.llmCalls)} calls…`;
      if (summary.llmCalls === 0) this.timeline.setSession(null, this.showCached);
      return;
    }
    this.waiting.hidden = true;
    // The cost view is offered when the session was priced.
    const costs = s.intro.cost !== null && body.columns.cost !== null;
    this.barViewControl.hidden = !costs;
    const view: BarView = costs ? this.barView : 'tokens';
    this.barViewPicker.value = view;
    this.barViewPicker.dataset['value'] = view;
    this.relabelLegend(view);
    this.timeline.setBarView(view);
    this.legend.hidden = body.columns.flags.length === 0;
    this.legend.classList.toggle('cached-hidden', !this.showCached);
    this.timeline.setSession(
      {
        sessionId: s.id,
        columns: body.columns,
        loops: body.analysis.loops,
        compactions: s.intro.compactions,
        events: s.intro.events,
        subagents: s.intro.subagents,
        tools: body.tools,
      },
      this.showCached,
      s.storedView,
    );
    this.renderLegend(body);
  }

  /** The session's columns could not be had: said where the timeline would be. */
  showFailure(message: string): void {
    this.waiting.textContent = `Could not draw the timeline: ${message}`;
  }

  selectionChanged(callIndex: number | null, bringIntoView: boolean): void {
    this.timeline.selectionChanged(callIndex, bringIntoView);
  }

  rowsArrived(): void {
    this.timeline.rowsArrived();
  }

  setPalette(palette: Palette): void {
    this.timeline.setPalette(palette);
  }

  /** Brings a call into view with the focus on the chart; the selection is the page's. */
  focusCall(callIndex: number): void {
    this.timeline.focusCall(callIndex);
  }

  /** Shows these calls in the window. */
  showCalls(first: number, last: number): void {
    this.timeline.showCalls(first, last);
  }

  /** The calls in view, as a window over call numbers (null: none). */
  callWindow(): ViewWindow | null {
    return this.timeline.callWindow();
  }

  /** Moves the timeline to a window over call numbers. */
  setCallWindow(w: ViewWindow): void {
    this.timeline.setCallWindow(w);
  }

  /** The window and filter to store (null: no session). */
  viewState(): TimelineRestore | null {
    return this.timeline.viewState();
  }

  private buildLegend(): void {
    const item = (kind: string, label: string): HTMLElement =>
      el('span', { className: `legend-item legend-${kind}`, data: { legend: kind } }, [
        el('span', { className: `swatch swatch-${kind}` }),
        el('span', { text: label }),
      ]);
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
    const present: Record<string, boolean> = {
      failed,
      compaction,
      subagent,
      loop: body.analysis.loops.length > 0,
      miss,
      unpriced: this.showsUnpriced(this.legend.dataset['barView'] === 'cost', body),
    };
    for (const item of this.legend.querySelectorAll<HTMLElement>('[data-legend]'))
      item.hidden = present[item.dataset['legend'] ?? ''] === false;
  }

  private setShowCached(show: boolean): void {
    if (show === this.showCached) return;
    this.showCached = show;
    this.legend.classList.toggle('cached-hidden', !show);
    // The bars only: nothing is asked of the host again.
    this.timeline.setShowCached(show);
    this.page.persist();
  }

  private setBarView(view: BarView): void {
    if (view === this.barView) return;
    this.barView = view;
    this.relabelLegend(view);
    // The bars only: nothing is asked of the host again.
    this.timeline.setBarView(view);
    this.barViewPicker.dataset['value'] = view;
    this.page.persist();
  }

  /** The "?" mark is explained where it is drawn: in the cost view of a session with calls without a price. */
  private showsUnpriced(costView: boolean, body: SessionBody | null): boolean {
    return costView && body !== null && countUnpriced(body.columns.cost) > 0;
  }

  /** The three bar colours mean the same split in both views; only the unit changes (and the context line is tokens only). */
  private relabelLegend(view: BarView): void {
    const labels: Record<string, string> =
      view === 'cost'
        ? { cached: 'cache read $', appended: 'appended $ (writes + uncached)', output: 'output $' }
        : { cached: 'cached', appended: 'appended', output: 'output' };
    for (const [kind, text] of Object.entries(labels)) {
      const label = this.legend.querySelector<HTMLElement>(`[data-legend="${kind}"] span:last-child`);
      if (label) label.textContent = text;
    }
    const context = this.legend.querySelector<HTMLElement>('[data-legend="context"]');
    if (context) context.hidden = view === 'cost';
    const unpriced = this.legend.querySelector<HTMLElement>('[data-legend="unpriced"]');
    if (unpriced) unpriced.hidden = !this.showsUnpriced(view === 'cost', this.body);
    this.legend.dataset['barView'] = view;
  }
}
