import { el, replaceChildren } from '../shared/dom';
import type { TimelineSection } from '../timeline/timelineSection';
import type { CallDetails } from './callDetails';
import type { TraceHeaderView } from './header';
import type { LoadState } from './loadState';
import type { InspectorPanel, PanelSlot } from './panel';
import type { SessionPicker } from './sessionPicker';
import type { SessionSummaryView } from './sessionSummary';

/** The parts the page frame places; the panels' sections go in their slots between them. */
export interface PageParts {
  load: LoadState;
  traceHeader: TraceHeaderView;
  picker: SessionPicker;
  summary: SessionSummaryView;
  details: CallDetails;
  timeline: TimelineSection;
  panels: readonly InspectorPanel[];
  safely(what: string, fn: () => void): void;
}

/**
 * The inspector page's frame: where each part and each panel's section goes, the skip link
 * to the timeline and the live region calls are announced in. Built once; the page then
 * only hides and shows its pieces.
 */
export class PageLayout {
  /** Everything about the session shown: hidden while no session is. */
  readonly sessionBody = el('div', { className: 'session-body' });
  /** The first Tab stop: straight to the timeline, past the pickers and the toolbar. */
  private readonly skipLink = el('button', {
    className: 'skip-link',
    text: 'Skip to the timeline',
    attrs: { type: 'button' },
  });
  private readonly live = el('div', {
    className: 'visually-hidden',
    attrs: { 'aria-live': 'polite', 'aria-atomic': 'true', role: 'status' },
  });

  /**
   * The first screen: what the session cost, how its cache did, what failed, and the
   * timeline; the call picked on it right under it. The full figures and the analyses follow.
   */
  constructor(root: HTMLElement, parts: PageParts) {
    const { load, traceHeader, picker, summary, details, timeline, panels, safely } = parts;
    const slot = (name: PanelSlot): HTMLElement[] =>
      panels.flatMap((p) => p.sections.filter((s) => s.slot === name).map((s) => s.element));
    picker.element.append(...slot('controls'));
    timeline.element.append(...slot('chart-notes'), this.live);
    this.sessionBody.append(
      ...summary.top,
      ...slot('timeline'),
      el('div', { className: 'lower' }, [details.element, ...slot('beside-details')]),
      summary.figures,
      ...slot('below'),
    );
    this.sessionBody.hidden = true;
    this.skipLink.addEventListener('click', () =>
      safely('skip to the timeline', () => {
        timeline.chartWrap.scrollIntoView({ block: 'nearest' });
        timeline.chartWrap.focus();
      }),
    );
    this.skipLink.hidden = true;
    replaceChildren(root, [
      this.skipLink,
      load.loading,
      load.stopped,
      load.resetNote,
      load.errorBanner,
      traceHeader.element,
      traceHeader.problem,
      this.sessionBody,
      traceHeader.diagnostics,
    ]);
  }

  /** Says a text in the live region. */
  announce(text: string): void {
    // A change of text is what a polite live region reads; the same text twice needs a reset.
    if (this.live.textContent === text) this.live.textContent = '';
    this.live.textContent = text;
  }

  /** Offers the skip link only while the timeline has calls to skip to. */
  showSkipLink(shown: boolean): void {
    this.skipLink.hidden = !shown;
  }
}
