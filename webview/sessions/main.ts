import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  ScatterController,
  Tooltip,
} from 'chart.js';
import type { ChartDataset } from 'chart.js';
import annotationPlugin from 'chartjs-plugin-annotation';
import type { AnnotationOptions } from 'chartjs-plugin-annotation';
import { formatCompact, formatPercent } from '../../src/core/text/formatNumbers';
import type { SessionComparison } from '../../src/core/sessions/compareSessions';
import type { SessionsReport } from '../../src/core/sessions/sessionsReport';
import { Channel } from '../../src/protocol/channel';
import type {
  SessionsHostNotification,
  SessionsHostRequests,
  SessionsPanelContent,
  SessionsWebviewNotification,
  SessionsWebviewRequests,
} from '../../src/protocol/sessionsMessages';
import { el, icon, linkButton, replaceChildren, table } from '../shared/dom';
import type { FigureGroup } from '../shared/figures';
import { buildPalette, isHighContrast, tooltipStyle, withAlpha } from '../shared/palette';
import type { Palette } from '../shared/palette';
import type { CommitTable } from '../../src/core/sessions/sessionCommits';
import { commitSection } from './commitTable';
import { contextSection } from './contextSection';
import type { ContextState } from './contextSection';
import { comparedCells, distributionRows, formatUsd, loopRuns, reportFigures } from './sessionsModel';

// The Agent Sessions panels: several sessions at once, or two side by side. Every string
// from a trace (titles, paths, projects) goes into the page with textContent only.

Chart.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  ScatterController,
  CategoryScale,
  LinearScale,
  Tooltip,
  annotationPlugin,
);

interface VsCodeApi {
  postMessage(message: unknown): void;
}
declare const acquireVsCodeApi: () => VsCodeApi;
const vscodeApi = acquireVsCodeApi();
// The page's end of the protocol, as the inspector's: what it cannot read is said to the host, never thrown.
const channel = new Channel<
  SessionsWebviewNotification,
  SessionsHostNotification,
  SessionsWebviewRequests,
  SessionsHostRequests
>((m) => vscodeApi.postMessage(m), {
  onError: (message) =>
    vscodeApi.postMessage({ type: 'log/error', message: `channel: ${message}` } satisfies SessionsWebviewNotification),
});
const post = (m: SessionsWebviewNotification): void => channel.notify(m);

const root = document.getElementById('app') ?? document.body.appendChild(document.createElement('main'));
const charts: Chart[] = [];
/** What the host could not do (or refused), said at the top of the panel, which keeps showing its content. */
const errorBanner = el('div', { className: 'error-banner', attrs: { role: 'alert' } });
errorBanner.hidden = true;

function showHostError(message: string): void {
  replaceChildren(errorBanner, [icon('warning'), el('span', { text: `The extension could not do that: ${message}` })]);
  errorBanner.hidden = false;
  // How many answers of this kind came, for tests and for anyone inspecting the page (as the inspector counts them).
  errorBanner.dataset['hostErrors'] = String(Number(errorBanner.dataset['hostErrors'] ?? '0') + 1);
  if (!errorBanner.isConnected) root.prepend(errorBanner);
}

function palette(): Palette {
  const style = getComputedStyle(document.body);
  return buildPalette((name) => style.getPropertyValue(name), isHighContrast(document.body.className));
}

function figureStrip(groups: FigureGroup[]): HTMLElement {
  return el(
    'section',
    { className: 'summary', attrs: { 'aria-label': 'Figures' } },
    groups.map((g) =>
      el('div', { className: 'figure-group' }, [
        el('h3', { className: 'figure-group-title', text: g.label }),
        el(
          'dl',
          { className: 'figures' },
          g.figures.map((f) =>
            el('div', { className: 'figure', title: f.hint }, [
              el('dt', { text: f.label }),
              el('dd', { text: f.value, data: { figure: f.name } }),
              f.range?.text
                ? el('dd', {
                    className: `range range-${f.range.position ?? 'none'}`,
                    text: f.range.text,
                    title: f.range.title,
                  })
                : null,
            ]),
          ),
        ),
      ]),
    ),
  );
}

function exportButtons(formats: Array<'csv' | 'json'>): HTMLElement {
  return el(
    'div',
    { className: 'panel-actions' },
    formats.map((format) =>
      linkButton(`Export ${format.toUpperCase()}`, () => post({ type: 'export', format }), {
        data: { export: format },
      }),
    ),
  );
}

function histogram(
  canvasWrap: HTMLElement,
  d: SessionsReport['distributions']['cacheHitRate'],
  label: (v: number) => string,
  p: Palette,
): void {
  const canvas = el('canvas', {
    attrs: { role: 'img', 'aria-label': `Histogram of ${canvasWrap.dataset['name'] ?? ''}` },
  });
  canvasWrap.appendChild(canvas);
  const annotations: Record<string, AnnotationOptions> = {};
  if (d.range && d.histogram.length > 0) {
    // Shade the bins inside the published range.
    d.histogram.forEach((b, i) => {
      if (b.to >= d.range!.low && b.from <= d.range!.high) {
        annotations[`r${i}`] = {
          type: 'box',
          xMin: i - 0.5,
          xMax: i + 0.5,
          backgroundColor: withAlpha(p.output, 0.12),
          borderWidth: 0,
        };
      }
    });
  }
  charts.push(
    new Chart(canvas, {
      type: 'bar',
      data: {
        labels: d.histogram.map((b) => (d.histogram.length === 1 ? label(b.from) : `${label(b.from)}–${label(b.to)}`)),
        datasets: [
          {
            data: d.histogram.map((b) => b.count),
            backgroundColor: withAlpha(p.cached, 0.8),
            borderColor: p.barBorder ?? undefined,
            borderWidth: p.barBorder ? 1 : 0,
          },
        ],
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        plugins: {
          legend: { display: false },
          tooltip: { ...tooltipStyle(p), callbacks: { label: (i) => `${String(i.raw)} sessions` } },
          annotation: { annotations },
        },
        scales: {
          x: {
            ticks: { color: p.muted, maxRotation: 0, autoSkip: true, font: { size: 10 } },
            grid: { display: false },
          },
          y: { beginAtZero: true, ticks: { color: p.muted, precision: 0 }, grid: { color: withAlpha(p.grid, 0.5) } },
        },
      },
    }),
  );
}

function showReport(title: string, r: SessionsReport): void {
  const p = palette();
  const period =
    r.firstMs === null
      ? ''
      : `${new Date(r.firstMs).toLocaleDateString()} – ${new Date(r.lastMs!).toLocaleDateString()}`;
  const dists = distributionRows(r);
  const histos = el('div', { className: 'histograms' });
  const shown: Array<[string, SessionsReport['distributions']['cacheHitRate'], (v: number) => string]> = [
    ['Cache hit rate', r.distributions.cacheHitRate, (v) => `${Math.round(v * 100)}%`],
    ['LLM calls', r.distributions.calls, (v) => formatCompact(v)],
    ['Cost', r.distributions.costUsd, (v) => formatUsd(v)],
  ];
  const rows = r.rows.map((s) =>
    el('tr', { data: { sessionId: String(s.id) }, attrs: { tabindex: '0' } }, [
      el('td', { text: s.startMs === null ? 'unknown' : new Date(s.startMs).toLocaleString() }),
      el('td', { text: s.agentId }),
      el('td', { className: 'title-cell', text: s.title ?? s.path, title: s.path }),
      el('td', { className: 'num', text: String(s.calls) }),
      el('td', { className: 'num', text: formatPercent(s.cacheHitRate) }),
      el('td', { className: 'num', text: formatUsd(s.costUsd) }),
      el('td', { className: 'num', text: String(s.failedToolCalls) }),
      el('td', { className: 'num', text: String(s.retryLoops) }),
    ]),
  );
  for (const tr of rows) {
    const open = (): void => post({ type: 'open', sessionId: Number(tr.dataset['sessionId']) });
    tr.addEventListener('click', open);
    tr.addEventListener('keydown', (e) => e.key === 'Enter' && open());
  }
  replaceChildren(root, [
    el('header', { className: 'header' }, [
      el('h1', { className: 'file-name', text: title }),
      el('p', { className: 'muted', text: period }),
      exportButtons(['csv', 'json']),
    ]),
    figureStrip(reportFigures(r)),
    el('section', { className: 'panel', attrs: { 'aria-label': 'Across sessions' } }, [
      el('h2', { text: 'Across sessions' }),
      el('p', {
        className: 'muted',
        text: 'min · p25 · median · p75 · max, per session (a session with its sub-agents)',
      }),
      table(
        'distributions',
        'Distributions across sessions',
        ['Figure', 'Spread', 'Against the published range'],
        dists.map((d) =>
          el('tr', { data: { distribution: d.name } }, [
            el('td', { text: d.label }),
            el('td', { text: d.spread }),
            el('td', { text: d.range }),
          ]),
        ),
        9,
      ),
      histos,
    ]),
    el('section', { className: 'panel', attrs: { 'aria-label': 'Sessions' } }, [
      el('h2', { text: 'Sessions' }),
      table(
        'sessions-table',
        'The sessions',
        ['Started', 'Agent', 'Session', 'Calls', 'Hit rate', 'Cost', 'Failed', 'Loops'],
        rows,
        3,
      ),
    ]),
  ]);
  for (const [label, d, fmt] of shown) {
    const wrap = el('div', { className: 'histogram', data: { name: label } }, [el('h3', { text: label })]);
    histos.appendChild(wrap);
    if (d.count === 0) wrap.appendChild(el('p', { className: 'muted', text: 'unknown for these sessions' }));
    else {
      const box = el('div', { className: 'histogram-canvas' });
      wrap.appendChild(box);
      histogram(box, d, fmt, p);
    }
  }
}

/** One session's calls on the shared axis: stacked bars, running cost, misses and loop bands. */
function sideChart(
  wrap: HTMLElement,
  c: SessionComparison,
  side: 'a' | 'b',
  yMax: number,
  costMax: number | null,
  p: Palette,
): void {
  const canvas = el('canvas', { attrs: { role: 'img', 'aria-label': `Calls of session ${side.toUpperCase()}` } });
  wrap.appendChild(canvas);
  const calls = c.calls;
  const value = (get: (x: NonNullable<(typeof calls)[number]['a']>) => number | null) =>
    calls.map((x) => (x[side] ? get(x[side]!) : null));
  const annotations: Record<string, AnnotationOptions> = {};
  loopRuns(calls, side).forEach(([from, to], i) => {
    annotations[`loop${i}`] = {
      type: 'box',
      xMin: from - 0.5,
      xMax: to + 0.5,
      backgroundColor: withAlpha(p.loop, 0.12),
      borderColor: withAlpha(p.loop, 0.5),
      borderWidth: 1,
    };
  });
  const datasets: Array<ChartDataset<'bar' | 'line' | 'scatter', Array<number | null>>> = [
    { type: 'bar', label: 'cached', data: value((x) => x.cached), backgroundColor: p.cached, stack: 's', yAxisID: 'y' },
    {
      type: 'bar',
      label: 'appended',
      data: value((x) => x.appended),
      backgroundColor: p.appended,
      stack: 's',
      yAxisID: 'y',
    },
    { type: 'bar', label: 'output', data: value((x) => x.output), backgroundColor: p.output, stack: 's', yAxisID: 'y' },
    {
      type: 'line',
      label: 'cache miss',
      data: calls.map((x) => (x[side]?.miss ? yMax * 0.98 : null)),
      showLine: false,
      pointStyle: 'triangle',
      pointRadius: 5,
      pointRotation: 180,
      backgroundColor: p.miss,
      borderColor: p.miss,
      yAxisID: 'y',
    },
  ];
  if (costMax !== null) {
    datasets.push({
      type: 'line',
      label: 'cost so far ($)',
      data: calls.map((x) => (side === 'a' ? x.costA : x.costB)),
      borderColor: p.foreground,
      borderWidth: 1.5,
      pointRadius: 0,
      yAxisID: 'cost',
    });
  }
  charts.push(
    new Chart(canvas, {
      type: 'bar',
      data: {
        labels: calls.map((x) => String(x.index + 1)),
        datasets: datasets as ChartDataset<'bar', Array<number | null>>[],
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        plugins: {
          legend: { display: false },
          tooltip: {
            ...tooltipStyle(p),
            mode: 'index',
            intersect: false,
            callbacks: { title: (items) => `Call ${items[0]?.label ?? ''}` },
          },
          annotation: { annotations },
        },
        scales: {
          x: { stacked: true, ticks: { color: p.muted, autoSkip: true, maxRotation: 0 }, grid: { display: false } },
          y: {
            stacked: true,
            max: yMax,
            beginAtZero: true,
            ticks: { color: p.muted, callback: (v) => formatCompact(Number(v)) },
            grid: { color: withAlpha(p.grid, 0.5) },
          },
          ...(costMax !== null
            ? {
                cost: {
                  position: 'right' as const,
                  min: 0,
                  max: costMax,
                  ticks: { color: p.muted, callback: (v: number | string) => `$${Number(v).toFixed(2)}` },
                  grid: { display: false },
                },
              }
            : {}),
        },
      },
    }),
  );
}

function showCompare(c: SessionComparison): void {
  const p = palette();
  const name = (s: SessionComparison['a']): string => s.title ?? s.path;
  const rows = c.figures.map((f) => {
    const cells = comparedCells(f);
    return el('tr', { data: { compared: f.id } }, [
      el('td', { text: f.label }),
      el('td', { className: 'num', text: cells.a }),
      el('td', { className: 'num', text: cells.b }),
      el('td', {
        className: `num delta${f.favours ? ` favours-${f.favours}` : ''}`,
        text: cells.delta,
        title: f.favours ? `Better in ${f.favours.toUpperCase()}` : '',
      }),
    ]);
  });
  let yMax = 1;
  let costMax: number | null = null;
  for (const x of c.calls) {
    for (const s of [x.a, x.b]) if (s) yMax = Math.max(yMax, (s.cached ?? 0) + (s.appended ?? 0) + (s.output ?? 0));
    for (const v of [x.costA, x.costB]) if (v !== null && v > 0) costMax = Math.max(costMax ?? 0, v);
  }
  yMax *= 1.05;
  const head = (side: 'a' | 'b'): HTMLElement => {
    const s = c[side];
    return el('div', { className: 'compare-side-head' }, [
      el('span', { className: 'badge', text: side.toUpperCase() }),
      linkButton(name(s), () => post({ type: 'open', sessionId: s.id }), { title: s.path, data: { open: side } }),
      el('span', {
        className: 'muted',
        text: ` ${s.agentId}${s.model ? ` · ${s.model}` : ''} · ${s.startMs === null ? 'start unknown' : new Date(s.startMs).toLocaleString()}`,
      }),
    ]);
  };
  const wrapA = el('div', { className: 'compare-chart', data: { side: 'a' } });
  const wrapB = el('div', { className: 'compare-chart', data: { side: 'b' } });
  replaceChildren(root, [
    el('header', { className: 'header' }, [
      el('h1', { className: 'file-name', text: 'Compare sessions' }),
      exportButtons(['json']),
    ]),
    el('div', { className: 'compare-heads' }, [head('a'), head('b')]),
    el('section', { className: 'panel', attrs: { 'aria-label': 'Figures compared' } }, [
      table('compare-table', 'A and B compared', ['Figure', 'A', 'B', 'B − A'], rows, 1),
    ]),
    el('section', { className: 'panel', attrs: { 'aria-label': 'Timelines' } }, [
      el('h2', { text: 'Call by call' }),
      el('p', { className: 'muted' }, [
        el('span', {
          text: 'Bars: cached, appended and output tokens of the n-th call of each session, on one scale. ',
        }),
        icon('triangle-down'),
        el('span', { text: ' cache miss, shaded: retry-loop calls, line: cost so far.' }),
      ]),
      head('a'),
      wrapA,
      head('b'),
      wrapB,
    ]),
  ]);
  sideChart(wrapA, c, 'a', yMax, costMax, p);
  sideChart(wrapB, c, 'b', yMax, costMax, p);
}

/** The report's cost per commit as last sent (null: git not asked yet); drawn after the report's sections. */
let commits: CommitTable | null = null;
/** The report's context anatomy as last sent (null: still counting); drawn before the cost per commit. */
let context: ContextState = null;

/** Draws the sections that come after the report's own, each as last sent: the context anatomy, then the cost per commit. */
function showLater(): void {
  root.querySelector('[data-section="context"]')?.remove();
  root.querySelector('[data-section="commits"]')?.remove();
  if (root.dataset['showing'] !== 'report') return;
  root.appendChild(contextSection(context));
  root.appendChild(commitSection(commits));
}

function show(content: SessionsPanelContent): void {
  for (const chart of charts.splice(0)) chart.destroy();
  root.setAttribute('aria-busy', 'false');
  root.dataset['showing'] = content.kind;
  if (content.kind === 'report') showReport(content.title, content.report);
  else showCompare(content.comparison);
  showLater();
  // The content is drawn anew; an error said before stays said above it.
  if (!errorBanner.hidden) root.prepend(errorBanner);
  root.dataset['ready'] = content.kind;
}

channel.onNotification((message) => {
  try {
    if (message.type === 'show') show(message.content);
    else if (message.type === 'commits') {
      commits = message.table;
      showLater();
    } else if (message.type === 'context') {
      context = message.context;
      showLater();
    } else if (message.type === 'context/failed') {
      context = { failed: message.message };
      showLater();
    } else if (message.type === 'host/error') showHostError(message.message);
  } catch (e) {
    post({ type: 'log/error', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  }
});
window.addEventListener('message', (event: MessageEvent<unknown>) => channel.receive(event.data));
window.addEventListener('error', (e) => post({ type: 'log/error', message: String(e.message) }));
// Only now is anyone listening; the host answers with `show`.
post({ type: 'ready' });
