import { displayText } from '../../src/core/text/safeText';
import type { SessionBody, SessionIntro, TraceHeader } from '../../src/core/view/traceService';
import { figureGroup } from '../analysis/analysisView';
import { el, replaceChildren } from '../shared/dom';
import { keyFigures, sessionMetaText, summaryFigures, wholeTraceCost } from './inspectorModel';
import './sessionSummary.css';

/**
 * The session's own figures: when it ran and with what (the meta line), the three key
 * figures on the first screen, why the bars may be flat (a trace without per-call tokens),
 * and the full figures under the first screen.
 */
export class SessionSummaryView {
  /** The first screen's part, above the timeline. */
  readonly top: readonly HTMLElement[];
  /** Every figure of the session, under the first screen. */
  readonly figures = el('section', { className: 'summary', attrs: { 'aria-label': 'Session summary' } });
  private readonly meta = el('p', { className: 'session-meta muted' });
  /** Cost, cache hit rate and failed tool calls: on the first screen, above the timeline. */
  private readonly keyFigures = el('dl', {
    className: 'key-figures',
    attrs: { 'aria-label': 'Key figures of the session' },
  });
  private readonly tokensNote = el('p', { className: 'tokens-note', attrs: { role: 'note' } });

  constructor() {
    this.top = [this.meta, this.keyFigures, this.tokensNote];
  }

  /** The session's start, length and model. */
  renderMeta(intro: SessionIntro): void {
    this.meta.textContent = displayText(sessionMetaText(intro.summary, (ms) => new Date(ms).toLocaleString()));
  }

  /** The figures (with the analyses' once the body is here). */
  render(header: TraceHeader | null, intro: SessionIntro, body: SessionBody | null): void {
    const summary = intro.summary;
    const whole = header ? wholeTraceCost(header, summary) : null;
    replaceChildren(
      this.figures,
      summaryFigures(summary, body?.analysis, intro.cost, whole).map((g) => figureGroup(g, 'h2')),
    );
    replaceChildren(
      this.keyFigures,
      keyFigures(summary, intro.cost).map((f) =>
        el('div', { className: 'key-figure', title: f.hint }, [
          el('dt', { text: f.label }),
          el('dd', { text: f.value, className: f.value === 'unknown' ? 'unknown' : '', data: { keyFigure: f.name } }),
        ]),
      ),
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
}
