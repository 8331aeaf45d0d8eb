import type { SessionContext } from '../../src/core/context/contextView';
import { formatCount, formatPercent } from '../../src/core/text/formatNumbers';
import { BODY_TIMEOUT_MS } from '../inspector/inspectorHost';
import type { InspectorPanel, PanelContext, PanelSection, PanelSession } from '../inspector/panel';
import { el, linkButton, replaceChildren, table, withCode } from '../shared/dom';
import type { Palette } from '../shared/palette';
import { fitAll, zoomAround } from '../timeline/viewWindow';
import type { ViewWindow } from '../timeline/viewWindow';
import { CompositionChart, kindColor } from './compositionChart';
import {
  callAnatomy,
  calibrationText,
  inputComparison,
  KIND_WORDS,
  stackKinds,
  tokensShort,
  usdShort,
} from './contextModel';
import './context.css';

/**
 * The context panel (docs/guide/context.md): what fills each call's input, by source.
 * Three sections: the stacked composition chart under the timeline, sharing its window
 * (zoom and pan either one and both move) and its selection; the selected call's anatomy
 * beside its details; the session's largest contributors and priced suggestions below.
 * The anatomy is asked of the host once per session (the trace worker counts it off the
 * page's thread); on a session of more than LAZY_CONTEXT_CALLS calls only once the section is
 * scrolled into view or its button pressed, since counting a long log's text takes the worker
 * seconds the timeline should have first. Part labels, files and commands are trace text:
 * drawn as text only.
 */
/** Calls in a session past which its anatomy waits until the panel is seen or asked for. */
export const LAZY_CONTEXT_CALLS = 1000;

export class ContextPanel implements InspectorPanel {
  readonly sections: readonly PanelSection[];
  private readonly composition = el('section', {
    className: 'context-composition panel',
    attrs: { 'aria-label': 'Context composition' },
  });
  private readonly status = el('p', { className: 'muted context-status', attrs: { role: 'status' } });
  private readonly legend = el('div', { className: 'context-legend' });
  private readonly chartWrap = el('div', {
    className: 'context-chart-wrap',
    attrs: { id: 'context-chart', tabindex: '0', role: 'img' },
  });
  private readonly canvas = el('canvas', { attrs: { 'aria-hidden': 'true' } });
  private readonly estimateNote = el('p', { className: 'muted context-estimates' });
  private readonly anatomy = el('section', {
    className: 'context-anatomy panel',
    attrs: { 'aria-label': 'The selected call’s context' },
  });
  private readonly contributors = el('section', {
    className: 'context-contributors panel',
    attrs: { 'aria-label': 'What fills the context' },
  });
  private readonly chart: CompositionChart;
  /** The anatomy of the session shown, for which trace (a read again makes it stale). */
  private shown: { trace: object; sessionId: string; ctx: SessionContext } | null = null;
  private asked: { trace: object; sessionId: string } | null = null;
  /** A long session's anatomy, not asked for until the section is seen or its button pressed. */
  private waiting: { trace: object; sessionId: string; calls: number } | null = null;
  private readonly countNow = linkButton(
    'Count it now',
    () => this.page.safely('count the context', () => this.askWaiting()),
    {
      className: 'context-count-now',
    },
  );
  private visible = false;
  private selected: number | null = null;
  private palette: Palette;

  constructor(private readonly page: PanelContext) {
    this.palette = page.palette;
    this.chartWrap.appendChild(this.canvas);
    this.chart = new CompositionChart(this.chartWrap, this.canvas, page.palette, {
      onPick: (call) => page.safely('select a call', () => page.select(call, {})),
      onWindow: (w) => page.safely('move the timeline', () => page.setCallWindow(w)),
    });
    this.chartWrap.addEventListener('keydown', (e) => page.safely('keyboard', () => this.onKey(e)));
    this.composition.append(
      el('div', { className: 'context-head' }, [el('h2', { text: 'Context composition' }), this.legend]),
      el('p', {
        className: 'muted',
        text: 'What each call’s input holds, by where it came from; the window and the selection are the timeline’s (wheel to zoom, drag to pan, click a call).',
      }),
      this.status,
      this.countNow,
      this.chartWrap,
      this.estimateNote,
    );
    for (const section of [this.composition, this.anatomy, this.contributors]) section.hidden = true;
    this.countNow.hidden = true;
    if (typeof IntersectionObserver === 'function')
      new IntersectionObserver((entries) =>
        page.safely('count the context', () => {
          this.visible = entries.some((e) => e.isIntersecting);
          if (this.visible) this.askWaiting();
        }),
      ).observe(this.composition);
    this.sections = [
      { slot: 'timeline', element: this.composition },
      { slot: 'beside-details', element: this.anatomy },
      { slot: 'below', element: this.contributors },
    ];
  }

  showSession(s: PanelSession | null): void {
    const calls = s?.intro.summary.llmCalls ?? 0;
    if (!s || calls === 0) {
      for (const section of [this.composition, this.anatomy, this.contributors]) section.hidden = true;
      this.shown = null;
      this.waiting = null;
      return;
    }
    this.composition.hidden = false;
    if (this.shown && this.shown.trace === s.trace && this.shown.sessionId === s.id) {
      if (s.body) this.render();
      return;
    }
    if (!s.body) {
      this.say(`Counting what fills each of ${formatCount(calls)} calls comes after the timeline…`);
      return;
    }
    if (this.asked && this.asked.trace === s.trace && this.asked.sessionId === s.id) return;
    if (calls > LAZY_CONTEXT_CALLS) {
      if (this.waiting && this.waiting.trace === s.trace && this.waiting.sessionId === s.id) return;
      this.waiting = { trace: s.trace, sessionId: s.id, calls };
      this.say(`What fills each of ${formatCount(calls)} calls is counted when this section is in view.`);
      this.countNow.hidden = false;
      // Already in view (the observer only reports changes): count now.
      if (this.visible) this.askWaiting();
      return;
    }
    this.waiting = null;
    this.ask(s.trace, s.id, calls);
  }

  /** Asks for the waiting session's anatomy (the section came into view, or its button was pressed). */
  private askWaiting(): void {
    const w = this.waiting;
    if (!w || w.sessionId !== this.page.sessionId()) return;
    this.waiting = null;
    this.countNow.hidden = true;
    this.ask(w.trace, w.sessionId, w.calls);
  }

  private ask(trace: object, sessionId: string, calls: number): void {
    const asked = { trace, sessionId };
    this.asked = asked;
    this.say(`Counting what fills each of ${formatCount(calls)} calls…`);
    this.page.host.request('sessionContext', { sessionId }, { timeoutMs: BODY_TIMEOUT_MS }).then(
      (ctx) =>
        this.page.safely('draw the context composition', () => {
          if (this.asked !== asked) return;
          this.asked = null;
          this.shown = { trace: asked.trace, sessionId: asked.sessionId, ctx };
          this.render();
        }),
      (e: unknown) =>
        this.page.safely('draw the context composition', () => {
          if (this.asked !== asked) return;
          this.asked = null;
          this.say(`Could not count what fills the context: ${e instanceof Error ? e.message : String(e)}`);
        }),
    );
  }

  traceChanged(): void {
    this.shown = null;
    this.asked = null;
    this.waiting = null;
  }

  viewMoved(window: ViewWindow | null): void {
    if (!this.shown) return;
    this.chart.setWindow(window ?? fitAll(this.shown.ctx.loggedInput.length));
  }

  selectionChanged(callIndex: number | null): void {
    this.selected = callIndex;
    this.chart.select(callIndex);
    this.renderAnatomy();
  }

  setPalette(palette: Palette): void {
    this.palette = palette;
    this.chart.setPalette(palette);
    if (this.shown) this.renderLegend(this.shown.ctx);
  }

  private say(text: string): void {
    this.countNow.hidden = true;
    this.status.hidden = false;
    this.status.textContent = text;
    this.chartWrap.hidden = true;
    this.estimateNote.hidden = true;
    this.anatomy.hidden = true;
    this.contributors.hidden = true;
  }

  private render(): void {
    const ctx = this.shown!.ctx;
    const count = ctx.loggedInput.length;
    if (count === 0 || ctx.kinds.length === 0) {
      this.say(ctx.notes[0] ?? 'Nothing to count in this session.');
      return;
    }
    this.status.hidden = true;
    this.chartWrap.hidden = false;
    this.estimateNote.hidden = false;
    this.renderLegend(ctx);
    const estimated = ctx.estimatedKinds.map((k) => KIND_WORDS[k]);
    this.estimateNote.textContent = `${estimated.length > 0 ? `Estimated, not counted from logged text: ${estimated.join(', ')}. ` : ''}${ctx.content === 'sizes' ? 'This log keeps only sizes: every part is an estimate. ' : ''}${calibrationText(ctx)}`;
    this.chartWrap.setAttribute(
      'aria-label',
      `Context composition of ${formatCount(count)} calls: input tokens by source, stacked. Left and Right arrows select a call, plus and minus zoom, 0 fits all.`,
    );
    this.chart.show(ctx, this.page.callWindow() ?? fitAll(count));
    this.chart.select(this.selected);
    this.renderAnatomy();
    this.renderContributors(ctx);
  }

  private renderLegend(ctx: SessionContext): void {
    const estimated = new Set(ctx.estimatedKinds);
    replaceChildren(
      this.legend,
      stackKinds(ctx.kinds).map((kind) => {
        const swatch = el('span', { className: 'swatch' });
        swatch.style.backgroundColor = kindColor(kind, this.palette);
        return el('span', { className: 'legend-item', data: { kind } }, [
          swatch,
          el('span', { text: `${KIND_WORDS[kind]}${estimated.has(kind) ? ' (est.)' : ''}` }),
        ]);
      }),
    );
  }

  private renderAnatomy(): void {
    const ctx = this.shown?.ctx;
    const view = ctx && this.selected !== null ? callAnatomy(ctx, this.selected) : null;
    this.anatomy.hidden = view === null;
    if (!view) return;
    const rows = view.rows.map((r) =>
      el('tr', { data: { kind: r.kind, tokens: String(r.tokens) } }, [
        el('th', { attrs: { scope: 'row' } }, [
          el('span', { className: 'kind-cell' }, [
            el('span', { className: 'swatch', attrs: { 'aria-hidden': 'true' } }),
            el('span', { text: `${r.label}${r.estimated ? ' (estimated)' : ''}` }),
          ]),
        ]),
        el('td', { className: 'num', text: formatCount(r.tokens) }),
        el('td', { className: 'num', text: formatPercent(r.share) }),
      ]),
    );
    for (const row of rows) {
      const swatch = row.querySelector<HTMLElement>('.swatch');
      if (swatch)
        swatch.style.backgroundColor = kindColor(row.dataset['kind'] as keyof typeof KIND_WORDS, this.palette);
    }
    const appended = view.appended.map((p) =>
      el('li', {}, [
        el('span', { className: 'part-label', text: p.label }),
        el('span', {
          className: 'muted',
          text: `: ${tokensShort(p.tokens)} tokens${p.estimated ? ' (estimated)' : ''}, carried for ${formatCount(p.carriedCalls)} call${p.carriedCalls === 1 ? '' : 's'}, ${usdShort(p.usd)}`,
        }),
      ]),
    );
    replaceChildren(this.anatomy, [
      el('h3', { text: `Call ${formatCount(view.call + 1)}: what its input holds` }),
      el('p', {
        className: 'muted',
        text: `${inputComparison(view)}${view.inputUsd !== null ? ` · input ${usdShort(view.inputUsd)}` : ''}`,
        data: { contextFigure: 'call-total' },
      }),
      table('context-call-table', `Call ${view.call + 1}'s input by source`, ['Source', 'Tokens', 'Share'], rows),
      appended.length > 0 ? el('h4', { text: 'Largest parts it appended' }) : null,
      appended.length > 0 ? el('ul', { className: 'context-appended' }, appended) : null,
    ]);
  }

  private renderContributors(ctx: SessionContext): void {
    this.contributors.hidden = false;
    const rows = ctx.contributors.map((c) =>
      el('tr', {}, [
        el('th', { attrs: { scope: 'row' } }, [
          el(
            'span',
            {},
            withCode(
              `${c.label}${c.count > 1 ? ` ${formatCount(c.count)} times` : ''}${c.estimated ? ' (estimated)' : ''}`,
            ),
          ),
        ]),
        el('td', { className: 'num', text: tokensShort(c.tokens) }),
        el('td', { className: 'num', text: formatCount(c.calls) }),
        el('td', { className: 'num', text: usdShort(c.usd) }),
      ]),
    );
    const suggestions = ctx.suggestions.map((s) =>
      el('li', {}, [el('span', {}, withCode(s.text)), el('p', { className: 'muted how', text: `How: ${s.how}` })]),
    );
    const totals =
      ctx.totalUsd === null
        ? 'No call of this session could be priced.'
        : `Input dollars ${usdShort(ctx.totalUsd)}: cache reads ${usdShort(ctx.cacheReadUsd)}, writes and uncached ${usdShort(ctx.writeUsd)}. A part’s dollars are its first write, every later cache read and every re-write until a compaction ends it.`;
    replaceChildren(this.contributors, [
      el('h2', { text: 'What fills the context, and what it costs' }),
      el('p', { className: 'muted', text: totals, data: { contextFigure: 'total-usd' } }),
      el('h3', { text: 'Largest contributors' }),
      table(
        'context-contributors-table',
        'Largest contributors to the context',
        ['Source', 'Tokens', 'Calls carrying it', 'Dollars'],
        rows,
      ),
      el('h3', { text: 'Suggestions' }),
      suggestions.length > 0
        ? el('ul', { className: 'context-suggestions' }, suggestions)
        : el('p', { className: 'muted', text: 'Nothing here is large or repeated enough to price a change.' }),
      ctx.notes.length > 0
        ? el('details', { className: 'context-notes' }, [
            el('summary', { text: 'What is estimated, and how' }),
            el(
              'ul',
              {},
              ctx.notes.map((n) => el('li', { text: n })),
            ),
          ])
        : null,
    ]);
  }

  private onKey(e: KeyboardEvent): void {
    const ctx = this.shown?.ctx;
    if (!ctx) return;
    const count = ctx.loggedInput.length;
    const w = this.page.callWindow() ?? fitAll(count);
    const middle = this.selected !== null ? this.selected + 0.5 : (w.lo + w.hi) / 2;
    if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
      const from = this.selected ?? Math.floor(w.lo);
      this.page.select(Math.max(0, Math.min(count - 1, from + (e.key === 'ArrowLeft' ? -1 : 1))), {});
    } else if (e.key === '+' || e.key === '=') this.page.setCallWindow(zoomAround(w, 2, middle, count));
    else if (e.key === '-') this.page.setCallWindow(zoomAround(w, 0.5, middle, count));
    else if (e.key === '0') this.page.setCallWindow(fitAll(count));
    else return;
    e.preventDefault();
  }
}

/** The panel's factory for PANELS. */
export function contextPanel(page: PanelContext): InspectorPanel {
  return new ContextPanel(page);
}
