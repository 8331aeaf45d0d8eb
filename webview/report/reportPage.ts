import type { ReportCost, ReportDocument } from '../../src/core/share/reportDocument';
import { ViewTraceService } from '../../src/core/view/viewTraceService';
import { askQuery } from '../../src/core/view/traceQueries';
import type { TraceQueryParams } from '../../src/core/view/traceQueries';
import { isTraceQuery, queryAnswer } from '../../src/protocol/traceQueryChecks';
import { formatCount, formatPercent } from '../../src/core/text/formatNumbers';
import { SESSION_PAGE_SIZE } from '../../src/protocol/messages';
import type { WebviewRequests } from '../../src/protocol/messages';
import { InspectorApp } from '../inspector/inspectorApp';
import { readPalette } from '../inspector/inspectorHost';
import type { InspectorHost, RequestParams, RequestResult } from '../inspector/inspectorHost';
import { el, replaceChildren, table } from '../shared/dom';
import { ReportWhatIf } from './reportWhatIf';

/** Dollars as the report prints them: cents below $100, whole dollars above. */
function usd(value: number | null): string {
  if (value === null) return 'unknown';
  return value < 100 ? `$${value.toFixed(2)}` : `$${Math.round(value).toLocaleString('en-US')}`;
}

/**
 * The inspector's requests answered in the page, from the trace the report embeds: the
 * page asks exactly what it asks its host in VS Code (any trace query: a session's summary,
 * its body, rows, search, details) and gets the same answers, without a host or a worker.
 */
function answerInPage<M extends keyof WebviewRequests>(
  service: ViewTraceService,
  method: M,
  params: RequestParams<M>,
): RequestResult<M> {
  if (method === 'whatIfWorkload') throw new Error('a report runs no simulator');
  if (method === 'callTranscript')
    throw new Error('a report holds no transcripts (the trace\u2019s text stays out of it)');
  if (!isTraceQuery(method)) throw new Error(`no handler for ${method}`);
  return queryAnswer(
    method,
    params as TraceQueryParams<typeof method>,
    askQuery(service, method, params as TraceQueryParams<typeof method>),
  ) as RequestResult<M>;
}

/**
 * The standalone report: a header (what the report holds, what redaction removed, every
 * session at a glance, a trace picker when there are several), the inspector itself for
 * the chosen trace, drawn by InspectorApp from the embedded data instead of a host, and
 * the what-if scenario and cost of that trace. Nothing leaves the page: the host's
 * notifications (open a source line, copy) go nowhere, and the page makes no request.
 */
export class ReportPage {
  private readonly header = el('header', { className: 'report-header' });
  private readonly appRoot = el('main', { attrs: { id: 'app', 'aria-busy': 'true' } });
  private readonly whatIf: ReportWhatIf;
  private readonly costPane = el('section', { className: 'report-cost panel', attrs: { 'aria-label': 'Cost' } });
  private readonly app: InspectorApp;
  private service: ViewTraceService | null = null;
  private state: unknown = undefined;

  constructor(
    root: HTMLElement,
    private readonly doc: ReportDocument,
  ) {
    this.whatIf = new ReportWhatIf(readPalette());
    const host: InspectorHost = {
      notify: () => {},
      request: async (method, params) => {
        if (!this.service) throw new Error('no trace is shown');
        return answerInPage(this.service, method, params);
      },
      getState: () => this.state,
      setState: (s) => {
        this.state = s;
      },
    };
    this.app = new InspectorApp(this.appRoot, host, { whatIf: false, formatChoice: false, sourceLinks: false });
    replaceChildren(root, [this.header, this.appRoot, this.whatIf.element, this.costPane]);
    this.renderHeader();
    this.show(0);
    // Follow a change of colour scheme (the palette is read from the page's variables).
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => this.whatIf.setPalette(readPalette()));
  }

  private renderHeader(): void {
    const d = this.doc;
    const sessions = d.traces.reduce((n, t) => n + t.view.sessions.length, 0);
    const calls = d.traces.reduce((n, t) => n + t.view.sessions.reduce((m, s) => m + s.calls.length, 0), 0);
    const generated = new Date(d.generatedAt);
    const redaction = d.redaction
      ? d.redaction.occurrences === 0
        ? `Redaction found nothing to remove (${d.redaction.detectors}).`
        : `Redacted before export: ${Object.entries(d.redaction.byKind)
            .map(([kind, c]) => `${kind} ${c.occurrences}`)
            .join(', ')} (${d.redaction.detectors}).`
      : 'Not redacted: the report was made with --no-redact.';
    const rows = d.traces.flatMap((t, ti) =>
      t.view.sessions.map((s) =>
        el('tr', { data: { trace: String(ti), session: s.summary.id } }, [
          el('th', { attrs: { scope: 'row' } }, [el('span', { text: t.view.fileName })]),
          el('td', { text: `${s.summary.role === 'main' ? '' : '↳ '}${s.summary.id}` }),
          el('td', { className: 'num', text: formatCount(s.summary.llmCalls) }),
          el('td', { className: 'num', text: formatPercent(s.summary.cacheHitRate) }),
          el('td', { className: 'num', text: formatCount(s.summary.tokens.output) }),
          el('td', { className: 'num', text: formatCount(s.summary.failedToolCalls) }),
        ]),
      ),
    );
    const picker = el(
      'select',
      { attrs: { id: 'report-trace', 'aria-label': 'Trace' } },
      d.traces.map((t, i) => el('option', { text: t.view.fileName, attrs: { value: String(i) } })),
    );
    picker.addEventListener('change', () => this.show(Number(picker.value)));
    replaceChildren(this.header, [
      el('h1', { text: d.title }),
      el('p', {
        className: 'muted',
        text: `${d.traces.length} trace${d.traces.length === 1 ? '' : 's'}, ${sessions} session${sessions === 1 ? '' : 's'}, ${formatCount(calls)} LLM calls · made ${isNaN(generated.getTime()) ? d.generatedAt : generated.toLocaleString()} by ${d.generator}`,
      }),
      el('p', {
        className: `redaction ${d.redaction ? '' : 'not-redacted'}`,
        text: redaction,
        data: { redaction: d.redaction ? String(d.redaction.occurrences) : 'off' },
      }),
      table(
        'report-overview',
        'Every session in this report',
        ['Trace', 'Session', 'LLM calls', 'Cache hit rate', 'Output tokens', 'Failed tool calls'],
        rows,
        2,
      ),
      d.traces.length > 1
        ? el('div', { className: 'report-picker' }, [
            el('label', { className: 'control-label', text: 'Trace', attrs: { for: 'report-trace' } }),
            picker,
          ])
        : null,
    ]);
  }

  /** Shows one trace: the inspector for it, its what-if and its cost. */
  private show(index: number): void {
    const trace = this.doc.traces[index];
    if (!trace) return;
    const service = new ViewTraceService(trace.view, trace.details, trace.context ?? []);
    this.service = service;
    this.state = undefined;
    const header = service.header();
    const intro =
      header.defaultSessionId === null ? null : service.sessionIntro({ sessionId: header.defaultSessionId });
    this.app.handle({
      type: 'init',
      header,
      sessions: service.sessionList({ query: '', offset: 0, limit: SESSION_PAGE_SIZE }),
      intro,
      settings: { showCached: true },
      select: null,
    });
    const session = trace.whatIf?.input.session
      ? (trace.view.sessions.find((s) => s.summary.id === trace.whatIf!.input.session) ?? null)
      : null;
    this.whatIf.render(trace.whatIf, session);
    this.renderCost(trace.cost);
  }

  private renderCost(cost: ReportCost | null): void {
    if (!cost) {
      replaceChildren(this.costPane, [
        el('h2', { text: 'Cost' }),
        el('p', {
          className: 'muted',
          text: 'No prices for this trace: cost is not part of this report.',
          data: { cost: 'none' },
        }),
      ]);
      return;
    }
    const rows = Object.entries(cost.byModel).map(([model, m]) =>
      el('tr', {}, [
        el('th', { attrs: { scope: 'row' } }, [el('span', { text: model })]),
        el('td', { className: 'num', text: usd(m.usd) }),
        el('td', { className: 'num', text: formatCount(m.calls) }),
        el('td', { className: 'num', text: formatCount(m.unpricedCalls) }),
      ]),
    );
    replaceChildren(this.costPane, [
      el('h2', { text: 'Cost' }),
      el('p', { className: 'report-cost-total' }, [
        el('span', { text: 'Total ' }),
        el('strong', { text: usd(cost.totalUsd), data: { cost: String(cost.totalUsd) } }),
        el('span', {
          className: 'muted',
          text: ` · ${formatCount(cost.pricedCalls)} calls priced, ${formatCount(cost.unpricedCalls)} without a price · ${cost.priceSource}`,
        }),
      ]),
      table('report-cost-table', 'Cost by model', ['Model', 'Cost', 'Calls', 'Unpriced calls'], rows),
    ]);
  }
}
