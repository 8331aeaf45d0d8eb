import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import type { VscodeCheckbox } from '@vscode-elements/elements/dist/vscode-checkbox/vscode-checkbox.js';
import type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
import type { VscodeTextfield } from '@vscode-elements/elements/dist/vscode-textfield/vscode-textfield.js';
import { formatCount } from '../../src/core/text/formatNumbers';
import { shortSessionId } from '../../src/core/view/sessionList';
import { CALL_FLAG } from '../../src/core/view/timelineColumns';
import type { TimelineColumns } from '../../src/core/view/timelineColumns';
import type { SearchHit, SearchResult, ToolCount } from '../../src/core/view/traceService';
import type { CallRow, CompactionMark, EventMark, LoopView, SubagentLink } from '../../src/core/view/traceView';
import { el, fillSelect, icon, linkButton, replaceChildren } from '../shared/dom';
import type { Palette } from '../shared/palette';
import { VirtualTable } from '../shared/virtualTable';
import { callAt, isShown, slotCount, slotOf } from './bins';
import type { TimelineData } from './bins';
import { jump, JUMP_KINDS, JUMP_WORDS, jumpTargets, timelineMarkers } from './marks';
import type { JumpKind, TimelineMarker } from './marks';
import { OverviewStrip } from './overviewStrip';
import { TimelineChart } from './timelineChart';
import type { BarView } from './timelineModel';
import {
  centerOn,
  clampWindow,
  ensureVisible,
  fitAll,
  pageBy,
  showsAll,
  visibleSlots,
  windowAround,
  zoomAround,
} from './viewWindow';
import type { ViewWindow } from './viewWindow';
import { countUnpriced } from './unpricedMarks';

/** A session as the timeline draws it. */
export interface TimelineSession {
  sessionId: string;
  columns: TimelineColumns;
  loops: readonly LoopView[];
  compactions: readonly CompactionMark[];
  events: readonly EventMark[];
  subagents: readonly SubagentLink[];
  tools: readonly ToolCount[];
}

/** What the timeline needs from the app. */
export interface TimelineHost {
  /** Selects a call (null: none); `reveal` opens its source, `announce` adds words before the call's own announcement. */
  select(callIndex: number | null, options: { reveal?: boolean; prefix?: string }): void;
  selected(): number | null;
  /** Shows another session (a sub-agent filter, a search hit elsewhere), selecting a call there. */
  openSession(sessionId: string, callIndex: number | null): void;
  callsUsingTool(sessionId: string, tool: string): Promise<Int32Array>;
  search(query: string, sessionId: string | null): Promise<SearchResult>;
  rowOf(callIndex: number): CallRow | undefined;
  ensureRows(first: number, last: number): void;
  announce(text: string): void;
  safely(what: string, fn: () => void): void;
  /** The window or the filter changed (the app keeps them in the webview state). */
  viewChanged?(): void;
}

/** The timeline's view to put back on a session: its filter's value and its window, in slots. */
export interface TimelineRestore {
  filter: string;
  lo: number;
  hi: number;
}

/** A filter of the timeline. */
type Filter =
  | { kind: 'all' }
  | { kind: 'failed' }
  | { kind: 'misses' }
  | { kind: 'loops' }
  | { kind: 'tool'; tool: string };

/** Zoom steps of the +/− keys and buttons. */
const ZOOM_STEP = 2;
/** A search hit or jump shows at most this many calls around its call, so the call is readable. */
const FOCUS_SPAN = 200;
/** Markers listed under the chart before "Show all". */
const MARKERS_SHOWN = 12;
/** Wait after the last keystroke before searching. */
const SEARCH_DELAY_MS = 250;

const FIELD_WORDS: Record<SearchHit['field'], string> = {
  tool: 'tool',
  file: 'file',
  command: 'command',
  error: 'error',
  prompt: 'prompt',
};

function filterValue(f: Filter): string {
  return f.kind === 'tool' ? `tool:${f.tool}` : f.kind;
}

/** The filter a stored value names (unknown values show all calls). */
function filterOf(value: string): Filter {
  if (value.startsWith('tool:')) return { kind: 'tool', tool: value.slice(5) };
  return value === 'failed' || value === 'misses' || value === 'loops' ? { kind: value } : { kind: 'all' };
}

/**
 * The timeline section: toolbar (zoom, fit, jumps, filter), search with its results,
 * the chart, the overview strip with its brush, and the marker list. Owns the window
 * (which calls are in view), the filter and the search; the app owns the selection.
 */
export class TimelinePanel {
  readonly element: HTMLElement;
  readonly chartWrap = el('div', {
    className: 'chart-wrap',
    attrs: { id: 'timeline-chart', tabindex: '0', role: 'application' },
  });
  private readonly canvas = el('canvas', { attrs: { 'aria-hidden': 'true' } });
  private readonly overviewWrap = el('div', { className: 'overview-wrap' });
  private readonly overviewCanvas = el('canvas', {
    className: 'overview',
    attrs: {
      tabindex: '0',
      role: 'scrollbar',
      'aria-orientation': 'horizontal',
      'aria-label': 'Overview of the whole session; the highlighted part is in view',
    },
  });
  private readonly chart: TimelineChart;
  private readonly overview: OverviewStrip;
  private readonly toolbar = el('div', {
    className: 'timeline-toolbar',
    attrs: { role: 'toolbar', 'aria-label': 'Timeline navigation' },
  });
  private readonly viewText = el('span', { className: 'view-text muted', attrs: { 'aria-hidden': 'true' } });
  private readonly filterSelect = document.createElement('vscode-single-select') as VscodeSingleSelect;
  private readonly filterNote = el('p', { className: 'filter-note muted', attrs: { role: 'status' } });
  private readonly searchField = document.createElement('vscode-textfield') as VscodeTextfield;
  private readonly searchAll = document.createElement('vscode-checkbox') as VscodeCheckbox;
  private readonly searchStatus = el('p', { className: 'search-status muted', attrs: { role: 'status' } });
  private readonly searchResults = el('div', { className: 'search-results' });
  private readonly markersList = el('ul', { className: 'markers', attrs: { 'aria-label': 'Timeline markers' } });
  private readonly noCalls = el('p', { className: 'empty-note', text: 'This session has no LLM calls.' });
  private readonly jumpButtons = new Map<string, HTMLButtonElement>();
  private session: TimelineSession | null = null;
  private data: TimelineData | null = null;
  private barView: BarView = 'tokens';
  private showCached = true;
  private filter: Filter = { kind: 'all' };
  private window: ViewWindow = { lo: 0, hi: 1 };
  private markers: TimelineMarker[] = [];
  private showAllMarkers = false;
  private targets = new Map<JumpKind, number[]>();
  private search: SearchResult | null = null;
  private searchTable: VirtualTable | null = null;
  private searchTimer: ReturnType<typeof setTimeout> | undefined;
  private searchGeneration = 0;
  private filterGeneration = 0;
  private announceTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly host: TimelineHost,
    palette: Palette,
    legend: HTMLElement,
  ) {
    this.chartWrap.appendChild(this.canvas);
    this.chart = new TimelineChart(this.chartWrap, this.canvas, palette, {
      // A click selects (the details pane shows the call); its source opens on Enter or "Show source".
      onPick: (call) => host.safely('select a call', () => host.select(call, {})),
      onWindow: (w) => host.safely('move the timeline', () => this.windowMoved(w, false)),
      rowOf: (call) => {
        const row = host.rowOf(call);
        if (!row) host.ensureRows(call, call);
        return row;
      },
      // The plot's area moves with its axes' labels and with every resize chart.js handles: the strip follows it.
      onLayout: () => host.safely('align the overview', () => this.alignStrip()),
    });
    this.overviewWrap.appendChild(this.overviewCanvas);
    this.overview = new OverviewStrip(this.overviewWrap, this.overviewCanvas, palette, {
      onWindow: (w) => host.safely('move the brush', () => this.windowMoved(w, true)),
    });
    this.buildToolbar();
    this.buildSearch();
    this.chartWrap.addEventListener('keydown', (e) => host.safely('keyboard', () => this.onChartKey(e)));
    this.overviewCanvas.addEventListener('keydown', (e) => host.safely('keyboard', () => this.onOverviewKey(e)));
    new ResizeObserver(() => host.safely('resize the timeline', () => this.align())).observe(this.chartWrap);
    this.element = el('section', { className: 'timeline', attrs: { 'aria-label': 'Timeline' } }, [
      el('div', { className: 'timeline-head' }, [el('h2', { text: 'Timeline' }), legend]),
      this.toolbar,
      this.filterNote,
      el('div', { className: 'timeline-search' }, [this.searchField, this.searchAll]),
      this.searchStatus,
      this.searchResults,
      this.chartWrap,
      this.overviewWrap,
      this.noCalls,
      this.markersList,
    ]);
    this.filterNote.hidden = true;
    this.searchStatus.hidden = true;
    this.searchResults.hidden = true;
    this.noCalls.hidden = true;
  }

  // ---- building ----

  private button(name: string, codicon: string, label: string, keys: string, onClick: () => void): HTMLButtonElement {
    const b = el(
      'button',
      {
        className: 'tool-button',
        attrs: { type: 'button', 'aria-label': label, 'aria-keyshortcuts': keys },
        title: `${label} (${keys})`,
        data: { action: name },
      },
      [icon(codicon)],
    );
    b.addEventListener('click', () => this.host.safely(label.toLowerCase(), onClick));
    return b;
  }

  private buildToolbar(): void {
    const zoom = el('div', { className: 'tool-group', attrs: { role: 'group', 'aria-label': 'Zoom' } }, [
      this.button('zoom-out', 'zoom-out', 'Zoom out', '-', () => this.zoom(1 / ZOOM_STEP)),
      this.button('zoom-in', 'zoom-in', 'Zoom in', '+', () => this.zoom(ZOOM_STEP)),
      this.button('fit', 'screen-full', 'Fit all calls', '0', () => this.setWindow(fitAll(this.count), true)),
    ]);
    const jumps = el('div', { className: 'tool-group jumps', attrs: { role: 'group', 'aria-label': 'Jump to' } });
    const keyOf: Record<JumpKind, string> = { failure: 'F', miss: 'M', loop: 'L', compaction: 'C' };
    for (const kind of JUMP_KINDS) {
      const [one] = JUMP_WORDS[kind];
      const prev = this.button(`prev-${kind}`, 'chevron-left', `Previous ${one}`, `Shift+${keyOf[kind]}`, () =>
        this.jump(kind, -1),
      );
      const next = this.button(`next-${kind}`, 'chevron-right', `Next ${one}`, keyOf[kind], () => this.jump(kind, 1));
      this.jumpButtons.set(`prev-${kind}`, prev);
      this.jumpButtons.set(`next-${kind}`, next);
      jumps.append(
        el('span', { className: `jump jump-${kind}`, data: { jump: kind } }, [
          prev,
          el('span', { className: 'jump-label', text: one }),
          next,
        ]),
      );
    }
    this.filterSelect.label = 'Show';
    this.filterSelect.id = 'timeline-filter';
    this.filterSelect.addEventListener('change', () =>
      this.host.safely('filter the timeline', () => this.chooseFilter(this.filterSelect.value)),
    );
    const filter = el('div', { className: 'tool-group filter' }, [
      el('label', { className: 'control-label', text: 'Show', attrs: { for: 'timeline-filter' } }),
      this.filterSelect,
    ]);
    this.toolbar.append(zoom, this.viewText, jumps, filter);
  }

  private buildSearch(): void {
    this.searchField.placeholder = 'Search calls: tool, file, command, error or prompt text';
    this.searchField.label = 'Search calls by tool, file, command, error or prompt text';
    this.searchField.type = 'search';
    this.searchField.id = 'call-search';
    this.searchField.addEventListener('input', () => this.host.safely('search', () => this.scheduleSearch()));
    this.searchField.addEventListener('keydown', (e) => this.host.safely('search', () => this.onSearchKey(e)));
    this.searchAll.label = 'All sessions';
    this.searchAll.addEventListener('change', () => this.host.safely('search', () => this.runSearch()));
  }

  // ---- data ----

  private get count(): number {
    return this.data ? slotCount(this.data) : 0;
  }

  /**
   * A session to draw (null: none). The filter and the window stay when it is the same
   * session (new settings, a reload, new calls appended), with one exception: a window
   * that showed the last call (all calls, or zoomed on the end) follows the new end, as a
   * log viewer tails its file: "fit all" still shows all, a zoom on the end moves right by
   * the calls added, its span kept.
   */
  setSession(session: TimelineSession | null, showCached: boolean, restore: TimelineRestore | null = null): void {
    const same = session !== null && this.session?.sessionId === session.sessionId;
    const before = this.count;
    // The last call (partly) in view: a zoom around it keeps a little room after it.
    const atEnd = same && before > 0 && this.window.hi > before - 1;
    const wasAll = same && showsAll(this.window, before);
    this.session = session;
    this.showCached = showCached;
    this.searchGeneration += 1;
    if (!same) {
      this.filter = { kind: 'all' };
      this.search = null;
      this.renderSearch();
    }
    const calls = session?.columns.flags.length ?? 0;
    this.noCalls.hidden = session === null || calls > 0;
    this.chartWrap.hidden = calls === 0;
    this.overviewWrap.hidden = calls === 0;
    this.toolbar.hidden = calls === 0;
    this.element.querySelector<HTMLElement>('.timeline-search')!.hidden = calls === 0;
    if (!session || calls === 0) {
      this.data = null;
      this.chart.destroy();
      this.overview.clear();
      this.chartWrap.dataset['barCount'] = '0';
      replaceChildren(this.markersList, []);
      this.markersList.hidden = true;
      return;
    }
    this.markers = timelineMarkers(calls, session.compactions, session.events, session.subagents);
    this.renderFilterOptions();
    const kept = this.window;
    let keep: ViewWindow | ((count: number) => ViewWindow) | null = !same
      ? null
      : wasAll
        ? (count: number) => fitAll(count)
        : atEnd
          ? (count: number) => ({ lo: kept.lo + count - before, hi: kept.hi + count - before })
          : kept;
    if (!same && restore) {
      // The page was rebuilt (its tab hidden and shown again): the filter and the zoom come back as they were.
      this.filter = filterOf(restore.filter);
      keep = { lo: restore.lo, hi: restore.hi };
    }
    void this.applyFilter(this.filter, keep);
    this.renderMarkerList();
  }

  /**
   * What the bars measure: tokens, or (for a priced session) the dollars those tokens cost.
   * Only the bars change: the window, the filter and the marks stay.
   */
  setBarView(view: BarView): void {
    if (view === this.barView) return;
    this.barView = view;
    this.chart.barView = view;
    if (!this.data || !this.session) return;
    this.data = { columns: this.barColumns(this.session.columns), shown: this.data.shown };
    this.chart.setData(this.data, this.session.loops, this.markers, this.showCached);
    this.chart.setWindow(this.window);
    this.overview.setData(this.data, this.showCached);
  }

  /** The columns the bars draw: the tokens, or in the cost view the dollars (no context line: it is in tokens). */
  private barColumns(columns: TimelineColumns): TimelineColumns {
    if (this.barView !== 'cost' || !columns.cost) {
      delete this.chartWrap.dataset['unpricedCalls'];
      return columns;
    }
    // A call without a price has no dollar bar (NaN, never $0): counted here, marked "?" by the chart, said in its tooltip.
    this.chartWrap.dataset['unpricedCalls'] = String(countUnpriced(columns.cost));
    const noContext = new Float64Array(columns.input.length).fill(Number.NaN);
    return {
      ...columns,
      cached: columns.cost.cached,
      appended: columns.cost.appended,
      output: columns.cost.output,
      input: noContext,
    };
  }

  setShowCached(show: boolean): void {
    this.showCached = show;
    if (!this.data || !this.session) return;
    this.chart.setData(this.data, this.session.loops, this.markers, show);
    this.chart.setWindow(this.window);
    this.overview.setData(this.data, show);
  }

  setPalette(palette: Palette): void {
    this.chart.setPalette(palette);
    this.overview.setPalette(palette);
  }

  /** Rows the tooltips waited for arrived. */
  rowsArrived(): void {
    this.chart.refreshTooltip();
  }

  /** The app selected a call: highlight it and (unless told not to: new calls came, the view stays) bring it into view. */
  selectionChanged(callIndex: number | null, bringIntoView = true): void {
    this.chart.select(callIndex);
    if (callIndex === null || !this.data || !bringIntoView) return;
    if (!isShown(this.data, callIndex)) return;
    const slot = slotOf(this.data, callIndex);
    const next = ensureVisible(this.window, slot, this.count);
    if (next !== this.window) this.setWindow(next, false);
  }

  /** Shows a call at a readable zoom (a search hit, a jump, a loop opened): centred, at most FOCUS_SPAN calls in view. */
  focusCall(callIndex: number): void {
    if (!this.data) return;
    if (!isShown(this.data, callIndex)) {
      // The filter hides it: show all calls again.
      void this.applyFilter({ kind: 'all' }, null).then(() => this.focusCall(callIndex));
      return;
    }
    const slot = slotOf(this.data, callIndex);
    const span = Math.min(this.window.hi - this.window.lo, FOCUS_SPAN);
    this.setWindow(clampWindow({ lo: slot + 0.5 - span / 2, hi: slot + 0.5 + span / 2 }, this.count), false);
  }

  /** Brings calls [first, last] (a loop's span) into view, unless they are in view already. */
  showCalls(first: number, last: number): void {
    if (!this.data) return;
    const a = slotOf(this.data, first);
    const b = slotOf(this.data, last + 1) - 1;
    if (a >= this.window.lo && b + 1 <= this.window.hi) return;
    this.setWindow(windowAround(a, b, this.count), false);
  }

  destroy(): void {
    this.chart.destroy();
    this.searchTable?.dispose();
  }

  // ---- filter ----

  private renderFilterOptions(): void {
    const s = this.session!;
    const flags = s.columns.flags;
    let failed = 0;
    let misses = 0;
    let loops = 0;
    for (let i = 0; i < flags.length; i++) {
      if (flags[i]! & CALL_FLAG.failed) failed += 1;
      if (flags[i]! & CALL_FLAG.miss) misses += 1;
      if (flags[i]! & CALL_FLAG.loop) loops += 1;
    }
    const options: Array<[string, string]> = [
      ['all', `All calls (${formatCount(flags.length)})`],
      ['failed', `Calls with failed tools (${formatCount(failed)})`],
      ['misses', `Cache misses (${formatCount(misses)})`],
      ['loops', `Retry-loop attempts (${formatCount(loops)})`],
      ...s.tools.map((t): [string, string] => [`tool:${t.name}`, `Tool: ${t.name} (${formatCount(t.calls)})`]),
      ...s.subagents.map((a): [string, string] => [
        `subagent:${a.sessionId}`,
        `Sub-agent ${shortSessionId(a.sessionId)} (${formatCount(a.calls)} ${a.calls === 1 ? 'call' : 'calls'})`,
      ]),
    ];
    const current = filterValue(this.filter);
    fillSelect(this.filterSelect, options, current);
  }

  private chooseFilter(value: string): void {
    if (!this.session) return;
    if (value.startsWith('subagent:')) {
      // One sub-agent: its own calls, in its own session (the picker follows).
      this.host.openSession(value.slice('subagent:'.length), null);
      return;
    }
    void this.applyFilter(filterOf(value), null);
  }

  /** Narrows the timeline to the calls a filter keeps (a fitted window unless one is given, or a window made for the slot count). */
  private async applyFilter(f: Filter, keep: ViewWindow | ((count: number) => ViewWindow) | null): Promise<void> {
    const s = this.session;
    if (!s) return;
    const generation = ++this.filterGeneration;
    let shown: Int32Array | null = null;
    const flags = s.columns.flags;
    const byFlag = (flag: number): Int32Array => {
      const out: number[] = [];
      for (let i = 0; i < flags.length; i++) if (flags[i]! & flag) out.push(i);
      return Int32Array.from(out);
    };
    if (f.kind === 'failed') shown = byFlag(CALL_FLAG.failed);
    else if (f.kind === 'misses') shown = byFlag(CALL_FLAG.miss);
    else if (f.kind === 'loops') shown = byFlag(CALL_FLAG.loop);
    else if (f.kind === 'tool') shown = await this.host.callsUsingTool(s.sessionId, f.tool);
    if (generation !== this.filterGeneration || this.session !== s) return;
    this.filter = f;
    this.filterSelect.value = filterValue(f);
    this.filterSelect.dataset['value'] = filterValue(f);
    this.data = { columns: this.barColumns(s.columns), shown };
    for (const kind of JUMP_KINDS) this.targets.set(kind, jumpTargets(kind, this.data, s.loops));
    this.updateJumpButtons();
    const count = this.count;
    this.filterNote.hidden = f.kind === 'all';
    this.filterNote.textContent =
      f.kind === 'all'
        ? ''
        : `Showing ${formatCount(count)} of ${formatCount(flags.length)} calls; the call numbers under the bars are the session's.`;
    this.chartWrap.dataset['filter'] = filterValue(f);
    this.window = keep ? clampWindow(typeof keep === 'function' ? keep(count) : keep, count) : fitAll(count);
    this.chart.setData(this.data, s.loops, this.markers, this.showCached);
    this.overview.setData(this.data, this.showCached);
    this.setWindow(this.window, false);
    this.align();
    this.chartWrap.setAttribute(
      'aria-label',
      `Timeline of ${formatCount(count)} LLM calls${f.kind === 'all' ? '' : ' (filtered)'}. Left and Right arrows select a call, Home and End the first or last, Enter shows its source. ` +
        'Plus and minus zoom, 0 fits all, Page Up and Page Down (or Shift with the arrows) move by a page. F, M, L and C jump to the next failure, cache miss, retry loop or compaction; with Shift, to the previous.',
    );
    if (count === 0) this.host.announce('No calls match this filter.');
  }

  // ---- window ----

  private windowMoved(w: ViewWindow, fromOverview: boolean): void {
    this.window = w;
    if (fromOverview) this.chart.setWindow(w);
    this.overview.setWindow(w);
    this.writeView();
    this.host.viewChanged?.();
  }

  private setWindow(w: ViewWindow, announce: boolean): void {
    this.window = clampWindow(w, this.count);
    this.chart.setWindow(this.window);
    this.overview.setWindow(this.window);
    this.writeView();
    this.host.viewChanged?.();
    if (announce) this.announceView();
  }

  /**
   * The calls in view as a window over call numbers (fractions kept without a filter, so a
   * chart over calls can follow the zoom exactly); null without calls.
   */
  callWindow(): ViewWindow | null {
    const d = this.data;
    const count = this.count;
    if (!d || count === 0) return null;
    if (!d.shown) return { lo: this.window.lo, hi: this.window.hi };
    const { first, end } = visibleSlots(this.window, count);
    return end <= first ? null : { lo: callAt(d, first), hi: callAt(d, end - 1) + 1 };
  }

  /** Shows the calls of a window over call numbers (a chart over calls zoomed or panned): the timeline moves with it. */
  setCallWindow(w: ViewWindow): void {
    const d = this.data;
    if (!d || this.count === 0) return;
    if (!d.shown) {
      this.setWindow(w, false);
      return;
    }
    this.setWindow({ lo: slotOf(d, Math.floor(w.lo)), hi: slotOf(d, Math.ceil(w.hi)) }, false);
  }

  /** What the timeline shows now (its filter and window), to keep across a rebuild of the page; null without calls. */
  viewState(): TimelineRestore | null {
    if (!this.data || !this.session) return null;
    return { filter: filterValue(this.filter), lo: this.window.lo, hi: this.window.hi };
  }

  private writeView(): void {
    const d = this.data;
    if (!d) return;
    const count = this.count;
    const { first, end } = visibleSlots(this.window, count);
    const text =
      end <= first
        ? 'no calls'
        : showsAll(this.window, count)
          ? `All ${formatCount(count)} calls`
          : `Calls ${formatCount(callAt(d, first) + 1)}–${formatCount(callAt(d, end - 1) + 1)} · ${formatCount(end - first)} of ${formatCount(count)}`;
    this.viewText.textContent = text;
    // The window in slots, for tests and for anyone inspecting the page.
    this.chartWrap.dataset['window'] = `${this.window.lo.toFixed(3)},${this.window.hi.toFixed(3)}`;
    this.overviewCanvas.setAttribute('aria-controls', 'timeline-chart');
  }

  /** Says what is in view after a keyboard zoom or pan (once the keys stop). */
  private announceView(): void {
    clearTimeout(this.announceTimer);
    this.announceTimer = setTimeout(() => this.host.announce(`Showing ${this.viewText.textContent ?? ''}.`), 300);
  }

  /** Zooms around the selected call when it is in view, else around the middle. */
  private zoom(factor: number): void {
    if (!this.data) return;
    const selected = this.host.selected();
    const slot = selected !== null && isShown(this.data, selected) ? slotOf(this.data, selected) : null;
    const anchor =
      slot !== null && slot >= this.window.lo && slot < this.window.hi
        ? slot + 0.5
        : (this.window.lo + this.window.hi) / 2;
    this.setWindow(zoomAround(this.window, factor, anchor, this.count), true);
  }

  private align(): void {
    this.alignStrip();
    this.overview.setWindow(this.window);
  }

  /** Lines the overview strip up with the plot (it redraws only when that moved it). */
  private alignStrip(): void {
    const a = this.chart.plotArea();
    if (!a || this.overviewWrap.hidden) return;
    const chartBox = this.canvas.getBoundingClientRect();
    const stripBox = this.overviewCanvas.getBoundingClientRect();
    this.overview.align(chartBox.left - stripBox.left + a.left, a.right - a.left);
  }

  // ---- jumps ----

  private updateJumpButtons(): void {
    for (const kind of JUMP_KINDS) {
      const n = this.targets.get(kind)?.length ?? 0;
      const [one, many] = JUMP_WORDS[kind];
      for (const dir of ['prev', 'next'] as const) {
        const b = this.jumpButtons.get(`${dir}-${kind}`)!;
        b.disabled = n === 0;
        b.title =
          n === 0
            ? `No ${many} in this session`
            : `${dir === 'prev' ? 'Previous' : 'Next'} ${one} (${dir === 'prev' ? 'Shift+' : ''}${kind[0]!.toUpperCase()}) · ${formatCount(n)} ${n === 1 ? one : many}`;
      }
      const group = this.toolbar.querySelector<HTMLElement>(`[data-jump="${kind}"]`);
      if (group) group.dataset['count'] = String(n);
    }
  }

  /** Selects the next or previous call of a kind, brings it into view and says where it is. */
  jump(kind: JumpKind, direction: 1 | -1): void {
    if (!this.data) return;
    const targets = this.targets.get(kind) ?? [];
    const [one, many] = JUMP_WORDS[kind];
    const to = jump(targets, this.host.selected(), direction);
    if (!to) {
      this.host.announce(`No ${many} in this session.`);
      return;
    }
    const shown = isShown(this.data, to.callIndex);
    if (shown) {
      const slot = slotOf(this.data, to.callIndex);
      if (slot < this.window.lo || slot + 1 > this.window.hi)
        this.setWindow(centerOn(this.window, slot, this.count), false);
    }
    this.host.select(to.callIndex, {
      prefix: `${one[0]!.toUpperCase()}${one.slice(1)} ${formatCount(to.ordinal)} of ${formatCount(to.total)}.`,
    });
    if (!shown) this.focusCall(to.callIndex);
  }

  // ---- keyboard ----

  private onChartKey(e: KeyboardEvent): void {
    if (!this.data || e.altKey || e.ctrlKey || e.metaKey) return;
    const count = this.count;
    const selected = this.host.selected();
    const slot = selected !== null && isShown(this.data, selected) ? slotOf(this.data, selected) : null;
    const selectSlot = (s: number): void =>
      this.host.select(callAt(this.data!, Math.max(0, Math.min(count - 1, s))), {});
    if (this.navigationKey(e)) return;
    switch (e.key) {
      case 'ArrowLeft':
      case 'ArrowRight': {
        e.preventDefault();
        if (e.shiftKey) {
          this.setWindow(pageBy(this.window, e.key === 'ArrowLeft' ? -1 : 1, count), true);
          return;
        }
        if (slot === null) selectSlot(e.key === 'ArrowLeft' ? count - 1 : 0);
        else selectSlot(slot + (e.key === 'ArrowLeft' ? -1 : 1));
        return;
      }
      case 'Home':
      case 'End':
        e.preventDefault();
        selectSlot(e.key === 'Home' ? 0 : count - 1);
        return;
      case 'Enter':
      case ' ':
        e.preventDefault();
        if (selected === null) selectSlot(0);
        else this.host.select(selected, { reveal: true });
        return;
    }
  }

  /** Keys the chart and the overview share: zoom, fit, pages, jumps. True when handled. */
  private navigationKey(e: KeyboardEvent): boolean {
    const count = this.count;
    const lower = e.key.toLowerCase();
    const kinds: Record<string, JumpKind> = { f: 'failure', m: 'miss', l: 'loop', c: 'compaction' };
    if (lower in kinds) {
      e.preventDefault();
      this.jump(kinds[lower]!, e.shiftKey ? -1 : 1);
      return true;
    }
    switch (e.key) {
      case '+':
      case '=':
        e.preventDefault();
        this.zoom(ZOOM_STEP);
        return true;
      case '-':
      case '_':
        e.preventDefault();
        this.zoom(1 / ZOOM_STEP);
        return true;
      case '0':
        e.preventDefault();
        this.setWindow(fitAll(count), true);
        return true;
      case 'PageUp':
      case 'PageDown':
        e.preventDefault();
        this.setWindow(pageBy(this.window, e.key === 'PageUp' ? -1 : 1, count), true);
        return true;
    }
    return false;
  }

  /** The overview strip is the timeline's scrollbar: ←/→ move a page, Home/End go to the ends, +/− zoom. */
  private onOverviewKey(e: KeyboardEvent): void {
    if (!this.data || e.altKey || e.ctrlKey || e.metaKey) return;
    if (this.navigationKey(e)) return;
    const count = this.count;
    const span = this.window.hi - this.window.lo;
    switch (e.key) {
      case 'ArrowLeft':
      case 'ArrowRight':
        e.preventDefault();
        this.setWindow(pageBy(this.window, e.key === 'ArrowLeft' ? -1 : 1, count), true);
        return;
      case 'Home':
        e.preventDefault();
        this.setWindow({ lo: 0, hi: span }, true);
        return;
      case 'End':
        e.preventDefault();
        this.setWindow({ lo: count - span, hi: count }, true);
        return;
    }
  }

  // ---- markers ----

  private renderMarkerList(): void {
    const markers = this.markers;
    this.markersList.hidden = markers.length === 0;
    const shown = this.showAllMarkers ? markers : markers.slice(0, MARKERS_SHOWN);
    const items: HTMLElement[] = shown.map((m) =>
      el('li', { className: `marker marker-${m.kind}`, data: { marker: m.kind, call: String(m.callIndex) } }, [
        el('span', { className: `swatch swatch-${m.kind}`, attrs: { 'aria-hidden': 'true' } }),
        linkButton(
          m.description,
          () =>
            this.host.safely('open marker', () => {
              if (m.sessionId) this.host.openSession(m.sessionId, null);
              else {
                this.host.select(m.callIndex, {});
                this.focusCall(m.callIndex);
              }
            }),
          {
            title: m.sessionId
              ? 'Open this sub-agent in the session picker'
              : 'Select the first call after the compaction',
          },
        ),
      ]),
    );
    if (markers.length > shown.length) {
      const of = (kind: TimelineMarker['kind']): number => markers.filter((m) => m.kind === kind).length;
      const parts = [
        [of('compaction'), 'compaction', 'compactions'],
        [of('api-error'), 'API error mark', 'API error marks'],
        [of('subagent'), 'sub-agent', 'sub-agents'],
      ]
        .filter(([n]) => (n as number) > 0)
        .map(([n, one, many]) => `${formatCount(n as number)} ${n === 1 ? one : many}`);
      items.push(
        el('li', { className: 'marker-more' }, [
          linkButton(`Show all ${formatCount(markers.length)} markers (${parts.join(', ')})`, () =>
            this.host.safely('show markers', () => {
              this.showAllMarkers = true;
              this.renderMarkerList();
            }),
          ),
        ]),
      );
    }
    replaceChildren(this.markersList, items);
  }

  // ---- search ----

  private scheduleSearch(): void {
    clearTimeout(this.searchTimer);
    this.searchTimer = setTimeout(() => this.host.safely('search', () => this.runSearch()), SEARCH_DELAY_MS);
  }

  private runSearch(): void {
    clearTimeout(this.searchTimer);
    const query = this.searchField.value.trim();
    const generation = ++this.searchGeneration;
    if (query === '' || !this.session) {
      this.search = null;
      this.renderSearch();
      return;
    }
    this.searchStatus.hidden = false;
    this.searchStatus.textContent = 'Searching…';
    this.host.search(query, this.searchAll.checked ? null : this.session.sessionId).then(
      (result) => {
        if (generation !== this.searchGeneration) return;
        this.search = result;
        this.host.safely('show search results', () => this.renderSearch());
      },
      (error: unknown) => {
        if (generation !== this.searchGeneration) return;
        this.searchStatus.textContent = `Search failed: ${error instanceof Error ? error.message : String(error)}`;
      },
    );
  }

  private onSearchKey(e: KeyboardEvent): void {
    if (e.key === 'Enter') {
      e.preventDefault();
      // Enter searches at once and opens the first hit.
      const query = this.searchField.value.trim();
      if (this.search && this.search.query.trim() === query && this.search.hits[0]) this.openHit(this.search.hits[0]);
      else {
        this.runSearch();
      }
    } else if (e.key === 'ArrowDown' && this.search && this.search.hits.length > 0) {
      e.preventDefault();
      this.searchResults.querySelector<HTMLButtonElement>('button[data-hit]')?.focus();
    } else if (e.key === 'Escape') {
      this.searchField.value = '';
      this.search = null;
      this.renderSearch();
    }
  }

  private renderSearch(): void {
    const r = this.search;
    if (!r) {
      this.searchStatus.hidden = true;
      this.searchResults.hidden = true;
      this.searchTable?.dispose();
      this.searchTable = null;
      replaceChildren(this.searchResults, []);
      return;
    }
    const where = this.searchAll.checked ? 'in all sessions' : 'in this session';
    this.searchStatus.hidden = false;
    this.searchStatus.textContent =
      r.total === 0
        ? `No calls match “${r.query}” ${where}.`
        : `${formatCount(r.total)} ${r.total === 1 ? 'call matches' : 'calls match'} “${r.query}” ${where}${r.total > r.hits.length ? `; the first ${formatCount(r.hits.length)} are listed` : ''}.`;
    this.searchResults.hidden = r.hits.length === 0;
    this.searchResults.dataset['hits'] = String(r.hits.length);
    this.searchResults.dataset['total'] = String(r.total);
    this.searchTable?.dispose();
    const head = el('tr', {}, [
      el('th', { text: 'Call', attrs: { scope: 'col' } }),
      el('th', { text: 'Where', attrs: { scope: 'col' } }),
      el('th', { text: 'Text', attrs: { scope: 'col' } }),
    ]);
    const otherSessions = this.searchAll.checked;
    this.searchTable = new VirtualTable({
      className: 'search-table',
      caption: 'Search results; press Enter on a call to select it',
      head,
      columns: 3,
      estimateHeight: 24,
      kind: 'rows',
      render: (i) => {
        const hit = r.hits[i]!;
        const label =
          otherSessions && hit.sessionId !== this.session?.sessionId
            ? `${shortSessionId(hit.sessionId)} · call ${formatCount(hit.callIndex + 1)}`
            : `call ${formatCount(hit.callIndex + 1)}`;
        const open = el('button', {
          className: 'link-button',
          text: label,
          attrs: { type: 'button' },
          data: { hit: String(i), call: String(hit.callIndex) },
        });
        open.addEventListener('click', () => this.host.safely('open a search result', () => this.openHit(hit)));
        open.addEventListener('keydown', (e) => this.host.safely('search results', () => this.onHitKey(e, i)));
        return el('tr', { className: 'search-hit', data: { field: hit.field } }, [
          el('td', {}, [open]),
          el('td', { className: 'muted', text: FIELD_WORDS[hit.field] }),
          el('td', { className: 'hit-text' }, [el('code', { text: hit.text, title: hit.text })]),
        ]);
      },
    });
    replaceChildren(this.searchResults, [this.searchTable.element]);
    this.searchTable.mount();
    this.searchTable.setCount(r.hits.length);
  }

  private onHitKey(e: KeyboardEvent, index: number): void {
    const r = this.search;
    if (!r || (e.key !== 'ArrowDown' && e.key !== 'ArrowUp')) return;
    e.preventDefault();
    const next = Math.max(0, Math.min(r.hits.length - 1, index + (e.key === 'ArrowDown' ? 1 : -1)));
    this.searchTable?.scrollTo(next);
    requestAnimationFrame(() =>
      this.searchResults.querySelector<HTMLButtonElement>(`button[data-hit="${next}"]`)?.focus(),
    );
  }

  /** Selects a hit's call (in its session) and shows it at a readable zoom. */
  private openHit(hit: SearchHit): void {
    if (!this.session || hit.sessionId !== this.session.sessionId) {
      this.host.openSession(hit.sessionId, hit.callIndex);
      return;
    }
    this.focusCall(hit.callIndex);
    this.host.select(hit.callIndex, { prefix: `Search result: ${FIELD_WORDS[hit.field]} “${hit.text}”.` });
  }
}

export { fitAll };
