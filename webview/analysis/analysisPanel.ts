import type { MissCause } from '../../src/core/analysis/cacheMisses';
import type { SessionHead } from '../../src/core/view/traceView';
import { missCauseOf } from '../../src/core/view/timelineColumns';
import type { InspectorPanel, PanelContext, PanelSection, PanelSession } from '../inspector/panel';
import type { PersistedState } from '../inspector/inspectorModel';
import { el, icon, replaceChildren } from '../shared/dom';
import type { VirtualTable } from '../shared/virtualTable';
import { clampSelection } from '../timeline/timelineModel';
import { fingerprintDigest, loopRows, nextLoopSort, sortLoopRows } from './analysisModel';
import type { LoopRow, LoopSort, LoopSortKey } from './analysisModel';
import { fingerprintContent, loopsContent, missSummary } from './analysisView';
import './analysis.css';

/**
 * The session's analyses: the cache misses by cause under the chart (a click selects the
 * next miss of that cause), the retry loops beside the call details (a click shows the
 * loop's calls and opens its first line), and the workload fingerprint, closed until the
 * reader opens it.
 */
export class AnalysisPanel implements InspectorPanel {
  readonly sections: readonly PanelSection[];
  private readonly missLine = el('p', { className: 'miss-summary', data: { missCauses: '' } });
  private readonly fingerprint = el('details', { className: 'fingerprint' });
  private readonly fingerprintDigest = el('span', { className: 'fp-digest muted' });
  private readonly fingerprintBody = el('div', { className: 'fp-body' });
  private readonly loopsPane = el('section', { className: 'loops panel', attrs: { 'aria-label': 'Retry loops' } });
  /** Closed until the user opens it: the timeline stays above the fold. */
  private fingerprintOpen = false;
  private loopSort: LoopSort | null = null;
  /** The loop whose row was last opened, marked in the table. */
  private activeLoop: number | null = null;
  private loopsTable: VirtualTable | null = null;
  private session: PanelSession | null = null;

  constructor(private readonly page: PanelContext) {
    this.sections = [
      { slot: 'chart-notes', element: this.missLine },
      { slot: 'beside-details', element: this.loopsPane },
      { slot: 'below', element: this.fingerprint },
    ];
    const fingerprintHead = el('summary', { className: 'fp-summary' }, [
      icon('chevron-right', 'fp-chevron'),
      el('h2', { text: 'Workload fingerprint' }),
      this.fingerprintDigest,
    ]);
    this.fingerprint.append(fingerprintHead, this.fingerprintBody);
    this.fingerprint.addEventListener('toggle', () =>
      page.safely('toggle the fingerprint', () => {
        if (this.fingerprint.open === this.fingerprintOpen) return;
        this.fingerprintOpen = this.fingerprint.open;
        page.saveState({ fingerprintOpen: this.fingerprintOpen });
      }),
    );
  }

  restore(saved: PersistedState): void {
    this.fingerprintOpen = saved.fingerprintOpen ?? false;
    this.loopSort = saved.loopSort ?? null;
  }

  traceChanged(appended: boolean): void {
    // Loop indexes may point elsewhere in the new trace.
    if (!appended) this.activeLoop = null;
  }

  showSession(session: PanelSession | null): void {
    if (session && session.id !== this.session?.id) this.activeLoop = null;
    this.session = session;
    if (!session) return;
    const head = session.head;
    if (!head) {
      this.fingerprint.hidden = true;
      this.loopsPane.hidden = true;
      this.missLine.hidden = true;
      return;
    }
    this.renderFingerprint(head);
    this.renderLoops(head);
    replaceChildren(
      this.missLine,
      missSummary(head, (cause) => this.page.safely('select a cache miss', () => this.selectMiss(cause))),
    );
    this.missLine.hidden = this.missLine.childElementCount === 0;
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
      sort: (key) => this.page.safely('sort the loops', () => this.sortLoops(key)),
      open: (row) => this.page.safely('open a loop', () => this.openLoop(row)),
    });
    replaceChildren(this.loopsPane, nodes);
    this.loopsTable = table;
    table?.mount();
    table?.setCount(rows.length);
  }

  private sortLoops(key: LoopSortKey): void {
    this.loopSort = nextLoopSort(this.loopSort, key);
    this.page.saveState({ loopSort: this.loopSort });
    const head = this.session?.head;
    if (!head) return;
    this.renderLoops(head);
    // Re-rendering replaced the header button: keep the keyboard focus on it.
    this.loopsPane.querySelector<HTMLButtonElement>(`button[data-sort="${key}"]`)?.focus();
  }

  /** Selects the loop's first attempt on the timeline (its calls in view) and opens its first line in the trace. */
  private openLoop(row: LoopRow): void {
    this.activeLoop = row.index;
    const head = this.session?.head;
    if (head) this.renderLoops(head);
    this.loopsPane
      .querySelector<HTMLButtonElement>(`tbody[data-loop="${row.index}"] [data-action="open-loop"]`)
      ?.focus();
    const body = this.session?.body;
    const loop = body?.analysis.loops[row.index];
    if (loop) this.page.showCalls(loop.firstCall, loop.lastCall);
    this.page.select(clampSelection(row.firstCall, body?.columns.flags.length ?? 0));
    if (this.page.options.sourceLinks)
      this.page.host.notify({ type: 'source/revealLine', file: row.fileIndex, line: row.line });
  }

  /** Selects the next call (after the selected one, wrapping) whose cache miss has this cause. */
  private selectMiss(cause: MissCause): void {
    const body = this.session?.body;
    if (!body) return;
    const codes = body.columns.missCause;
    const hits: number[] = [];
    const selected = this.page.selected();
    for (let i = 0; i < codes.length; i++) if (missCauseOf(codes[i]!) === cause) hits.push(i);
    if (hits.length === 0) return;
    const next = hits.find((i) => selected === null || i > selected) ?? hits[0]!;
    this.page.focusCall(next);
  }
}

/** The analyses panel of the inspector page. */
export function analysisPanel(page: PanelContext): InspectorPanel {
  return new AnalysisPanel(page);
}
