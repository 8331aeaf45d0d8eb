import { formatCount, formatDuration, formatPercent } from '../../src/core/text/formatNumbers';
import { CALL_FLAG } from '../../src/core/view/timelineColumns';
import type { TimelineColumns } from '../../src/core/view/timelineColumns';
import type { ToolCallRow } from '../../src/core/view/traceService';
import type { CallRow } from '../../src/core/view/traceView';
import type { InspectorPanel, PanelContext, PanelSection, PanelSession } from '../inspector/panel';
import { el, icon, replaceChildren } from '../shared/dom';
import { RowCache } from '../shared/rowCache';
import { VirtualTable } from '../shared/virtualTable';
import { toolsText } from './timelineModel';

/** What the tables need from the app. */
export interface CallsTableHost {
  select(callIndex: number): void;
  rowOf(callIndex: number): CallRow | undefined;
  ensureRows(first: number, last: number): void;
  toolRows(sessionId: string, from: number, count: number): Promise<ToolCallRow[]>;
  safely(what: string, fn: () => void): void;
}

/** Tool-call rows fetched at once. */
const TOOL_PAGE = 500;

const num = (v: number): string => (Number.isNaN(v) ? 'unknown' : formatCount(v));

/**
 * Every call of the session and every tool call, as two virtualised tables (only the rows
 * in view are in the DOM, fetched from the host by page), in a section closed until the
 * user opens it. A click or Enter on a row selects its call in the timeline.
 */
export class CallsTables implements InspectorPanel {
  readonly element = el('details', { className: 'calls-panel' });
  readonly sections: readonly PanelSection[] = [{ slot: 'below', element: this.element }];
  private readonly count = el('span', { className: 'fp-digest muted' });
  private readonly tabs = el('div', { className: 'calls-tabs', attrs: { role: 'tablist', 'aria-label': 'Table' } });
  private readonly body = el('div', { className: 'calls-body' });
  private sessionId: string | null = null;
  private columns: TimelineColumns | null = null;
  private toolCount = 0;
  private tab: 'calls' | 'tools' = 'calls';
  private table: VirtualTable | null = null;
  private tools: RowCache<ToolCallRow> | null = null;
  private selected: number | null = null;

  constructor(private readonly host: CallsTableHost) {
    this.element.append(
      el('summary', { className: 'fp-summary' }, [
        icon('chevron-right', 'fp-chevron'),
        el('h2', { text: 'All calls and tool calls' }),
        this.count,
      ]),
      this.tabs,
      this.body,
    );
    this.element.addEventListener('toggle', () => host.safely('open the tables', () => this.render()));
  }

  /** Shown with the session's body (its columns); hidden while it comes. */
  showSession(s: PanelSession | null): void {
    if (!s) return;
    if (!s.body) this.element.hidden = true;
    else this.setSession(s.id, s.body.columns, s.body.toolCallCount);
  }

  /** The session's calls; the same session again (new calls appended, a reload) keeps the table's scroll. */
  setSession(sessionId: string, columns: TimelineColumns, toolCallCount: number): void {
    const same = sessionId === this.sessionId && this.table !== null;
    this.sessionId = sessionId;
    this.columns = columns;
    this.toolCount = toolCallCount;
    this.tools = new RowCache(
      (from, count) => this.host.toolRows(sessionId, from, count),
      TOOL_PAGE,
      () => this.table?.refresh(),
    );
    const calls = columns.flags.length;
    this.element.hidden = calls === 0;
    this.count.textContent = `${formatCount(calls)} ${calls === 1 ? 'call' : 'calls'}, ${formatCount(toolCallCount)} tool ${toolCallCount === 1 ? 'call' : 'calls'}`;
    if (same) this.grow();
    else this.render();
  }

  /** The same session with more calls (or new figures): the table stays, scrolled where it was, with its new length. */
  private grow(): void {
    if (!this.table || !this.columns) return;
    this.renderTabs();
    this.table.setCount(this.tab === 'calls' ? this.columns.flags.length : this.toolCount, { keepMeasures: true });
  }

  /** Rows of calls arrived (the tools column). */
  rowsArrived(): void {
    if (this.tab === 'calls') this.table?.refresh();
  }

  /** The app selected a call: marked, and scrolled to unless `scroll` is false (new calls came: the table stays where it was). */
  selectionChanged(callIndex: number | null, scroll = true): void {
    this.selected = callIndex;
    if (!this.element.open || !this.table || callIndex === null) return;
    if (!scroll) {
      this.table.refresh();
      return;
    }
    if (this.tab === 'calls') this.table.scrollTo(callIndex);
    else this.table.refresh();
  }

  private render(): void {
    this.table?.dispose();
    this.table = null;
    if (!this.element.open || !this.columns || !this.sessionId) {
      replaceChildren(this.body, []);
      replaceChildren(this.tabs, []);
      return;
    }
    this.renderTabs();
    this.table = this.tab === 'calls' ? this.callsTable() : this.toolsTable();
    replaceChildren(this.body, [this.table.element]);
    this.table.mount();
    this.table.setCount(this.tab === 'calls' ? this.columns.flags.length : this.toolCount);
    if (this.tab === 'calls' && this.selected !== null) this.table.scrollTo(this.selected);
  }

  private renderTabs(): void {
    if (!this.columns) return;
    const tab = (name: 'calls' | 'tools', label: string): HTMLButtonElement => {
      const b = el('button', {
        className: 'calls-tab',
        text: label,
        attrs: { type: 'button', role: 'tab', 'aria-selected': String(this.tab === name) },
        data: { tab: name },
      });
      b.addEventListener('click', () =>
        this.host.safely('switch tables', () => {
          this.tab = name;
          this.render();
        }),
      );
      return b;
    };
    replaceChildren(this.tabs, [
      tab('calls', `Calls (${formatCount(this.columns.flags.length)})`),
      tab('tools', `Tool calls (${formatCount(this.toolCount)})`),
    ]);
  }

  private head(labels: string[], numericFrom: number): HTMLTableRowElement {
    return el(
      'tr',
      {},
      labels.map((h, i) =>
        el('th', { text: h, className: i >= numericFrom && i < numericFrom + 5 ? 'num' : '', attrs: { scope: 'col' } }),
      ),
    );
  }

  private rowButton(text: string, callIndex: number): HTMLButtonElement {
    const b = el('button', {
      className: 'link-button',
      text,
      attrs: { type: 'button' },
      data: { call: String(callIndex) },
    });
    b.addEventListener('click', () => this.host.safely('select a call', () => this.host.select(callIndex)));
    return b;
  }

  private callsTable(): VirtualTable {
    return new VirtualTable({
      className: 'calls-table',
      caption: 'Every LLM call of the session; a call number selects it in the timeline',
      head: this.head(['Call', 'Input', 'Cached', 'Appended', 'Output', 'Hit', 'Tools', 'Marks'], 1),
      columns: 8,
      estimateHeight: 24,
      kind: 'rows',
      onRange: (first, last) => this.host.ensureRows(first, last),
      render: (i) => {
        // The columns at drawing time: new calls appended replace them, the table stays.
        const c = this.columns!;
        const row = this.host.rowOf(i);
        const input = c.input[i]!;
        const cached = c.cached[i]!;
        const f = c.flags[i]!;
        const marks = [
          f & CALL_FLAG.failed ? 'failed tool' : null,
          f & CALL_FLAG.miss ? 'cache miss' : null,
          f & CALL_FLAG.loop ? 'retry loop' : null,
          f & CALL_FLAG.compaction ? 'after compaction' : null,
        ].filter((m): m is string => m !== null);
        const tr = el(
          'tr',
          { className: `call-row${f & CALL_FLAG.failed ? ' failed' : ''}`, data: { call: String(i) } },
          [
            el('td', {}, [this.rowButton(formatCount(i + 1), i)]),
            el('td', { className: 'num', text: num(input) }),
            el('td', { className: 'num', text: num(cached) }),
            el('td', { className: 'num', text: num(c.appended[i]!) }),
            el('td', { className: 'num', text: num(c.output[i]!) }),
            el('td', {
              className: 'num',
              text: formatPercent(Number.isNaN(cached) || Number.isNaN(input) || input === 0 ? null : cached / input),
            }),
            el('td', { className: 'tools-cell', text: row ? toolsText(row) : '…' }),
            el('td', { className: 'marks-cell', text: marks.join(', ') }),
          ],
        );
        if (this.selected === i) tr.setAttribute('aria-current', 'true');
        return tr;
      },
    });
  }

  private toolsTable(): VirtualTable {
    return new VirtualTable({
      className: 'tool-calls-table',
      caption: 'Every tool call of the session; a call number selects its call in the timeline',
      head: this.head(['Call', 'Tool', 'Target', 'Result', 'Exit', 'Duration', 'Error'], 99),
      columns: 7,
      estimateHeight: 24,
      kind: 'rows',
      onRange: (first, last) => this.tools?.ensure(first, last),
      render: (i) => {
        const t = this.tools?.get(i);
        if (!t) return el('tr', { className: 'tool-row loading' }, [el('td', { text: '…', attrs: { colspan: '7' } })]);
        const tr = el(
          'tr',
          {
            className: `tool-row${t.failed === true ? ' failed' : ''}`,
            data: { call: String(t.callIndex), tool: t.id },
          },
          [
            el('td', {}, [this.rowButton(formatCount(t.callIndex + 1), t.callIndex)]),
            el('td', { text: t.name }),
            el('td', {}, [t.target !== null ? el('code', { text: t.target, title: t.target }) : null]),
            el('td', { text: t.failed === true ? 'failed' : t.failed === false ? 'ok' : 'no result' }),
            el('td', { className: 'num', text: t.exitCode === null ? '' : String(t.exitCode) }),
            el('td', { className: 'num', text: t.durationMs === null ? '' : formatDuration(t.durationMs) }),
            el('td', { className: 'error-cell' }, [
              t.error !== null ? el('code', { text: t.error, title: t.error }) : null,
            ]),
          ],
        );
        if (this.selected === t.callIndex) tr.setAttribute('aria-current', 'true');
        return tr;
      },
    });
  }
}

/** The tables of every call and tool call, under the inspector page's analyses. */
export function callsTablesPanel(page: PanelContext): InspectorPanel {
  return new CallsTables({
    select: (call) => page.select(call),
    rowOf: (call) => page.rowOf(call),
    ensureRows: (first, last) => page.ensureRows(first, last),
    toolRows: (sessionId, from, count) => page.host.request('toolRows', { sessionId, from, count }),
    safely: (what, fn) => page.safely(what, fn),
  });
}
