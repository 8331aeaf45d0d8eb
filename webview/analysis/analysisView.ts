import type { MissCause } from '../../src/core/analysis/cacheMisses';
import type { SessionHead } from '../../src/core/view/traceView';
import {
  ariaSort,
  compactionRows,
  fingerprintGroups,
  LOOP_COLUMNS,
  loopHeadline,
  missCauseEntries,
  quarterColumns,
  toolRows,
} from './analysisModel';
import type { LoopRow, LoopSort, LoopSortKey, QuarterColumn } from './analysisModel';
import { el, icon, linkButton, table } from '../shared/dom';
import { VirtualTable } from '../shared/virtualTable';
import type { FigureGroup } from '../shared/figures';

// The DOM of the session analyses. Every string goes through textContent (via `el`);
// the view-models in analysisModel.ts decide what the strings are.

/** Tools the fingerprint lists before "Show all". */
const TOOLS_SHOWN = 8;

/** A card of figures, as the summary strip and the fingerprint draw them. */
export function figureGroup(g: FigureGroup, heading: 'h2' | 'h3' = 'h3'): HTMLElement {
  return el('div', { className: 'figure-group' }, [
    el(heading, { className: 'group-label' }, [
      el('span', { text: g.label }),
      g.tag
        ? el('span', {
            className: 'figure-tag',
            text: g.tag.text,
            title: g.tag.title,
            data: { tag: g.tag.name, tagValue: g.tag.text },
          })
        : null,
    ]),
    el(
      'dl',
      { className: 'figures' },
      g.figures.map((f) =>
        el('div', { className: 'figure', title: f.hint }, [
          el('dt', { text: f.label }),
          el('dd', { text: f.value, className: f.value === 'unknown' ? 'unknown' : '', data: { figure: f.name } }),
          f.range
            ? el('dd', {
                className: `range range-${f.range.position ?? 'unknown'}`,
                text: f.range.text,
                title: f.range.title,
                data: { range: f.range.position ?? 'unknown', rangeFor: f.name },
              })
            : null,
        ]),
      ),
    ),
  ]);
}

function cell(text: string, numeric = true, extra: Record<string, string> = {}): HTMLTableCellElement {
  return el('td', { text, className: `${numeric ? 'num' : ''}${text === 'unknown' ? ' unknown' : ''}`, data: extra });
}

/** The tools table: calls, failures and latency per tool; long lists fold behind a button. */
function toolsBlock(session: SessionHead): HTMLElement {
  const rows = toolRows(session.analysis.fingerprint);
  const block = el('div', { className: 'fp-block fp-tools' }, [el('h4', { text: 'Tool calls by tool' })]);
  if (rows.length === 0) {
    block.append(el('p', { className: 'muted', text: 'No tool calls.' }));
    return block;
  }
  const trs = rows.map((r, i) => {
    const tr = el('tr', { data: { tool: r.tool } }, [
      el('th', { attrs: { scope: 'row' }, className: 'tool-cell', title: r.tool }, [
        r.hasFailures ? icon('error', 'failed-icon') : null,
        el('span', { text: r.tool }),
      ]),
      cell(r.calls),
      cell(r.failed),
      cell(r.failureRate),
      cell(r.latencyMedian),
      cell(r.latencyP90),
    ]);
    tr.hidden = i >= TOOLS_SHOWN;
    return tr;
  });
  block.append(
    table('tools-table', 'Tool calls by tool', ['Tool', 'Calls', 'Failed', 'Failure rate', 'Median', 'p90'], trs),
  );
  if (rows.length > TOOLS_SHOWN) {
    const more = linkButton(`Show all ${rows.length} tools`, () => {
      for (const tr of trs) tr.hidden = false;
      more.remove();
    });
    block.append(more);
  }
  return block;
}

function quarterBar(q: QuarterColumn): HTMLElement {
  const bar = el('div', { className: 'quarter-bar', attrs: { 'aria-hidden': 'true' } });
  for (const kind of ['explore', 'execute', 'other'] as const) {
    if (q[kind] === 0) continue;
    const seg = el('span', { className: `seg seg-${kind}` });
    // CSSOM, not a style attribute: the CSP allows the former only.
    seg.style.flexGrow = String(q[kind]);
    bar.append(seg);
  }
  return bar;
}

/** Exploration vs execution per quarter of the session: one column per quarter, counts and a stacked bar. */
function quartersBlock(session: SessionHead): HTMLElement {
  const cols = quarterColumns(session.analysis.fingerprint, session.summary.llmCalls);
  const row = (kind: 'explore' | 'execute' | 'other', label: string): HTMLTableRowElement =>
    el('tr', { data: { intent: kind } }, [
      el('th', { attrs: { scope: 'row' } }, [
        el('span', { className: `swatch swatch-${kind}`, attrs: { 'aria-hidden': 'true' } }),
        el('span', { text: label }),
      ]),
      ...cols.map((c) => cell(String(c[kind]))),
    ]);
  const head = el('tr', {}, [
    el('th', { attrs: { scope: 'col' }, text: 'Tool calls' }),
    ...cols.map((c) =>
      el('th', { className: 'num', attrs: { scope: 'col' }, title: c.calls }, [
        el('span', { text: c.label }),
        el('span', { className: 'quarter-calls', text: c.calls }),
      ]),
    ),
  ]);
  const bars = el('tr', { className: 'bars-row', attrs: { 'aria-hidden': 'true' } }, [
    el('td'),
    ...cols.map((c) => el('td', {}, [quarterBar(c)])),
  ]);
  return el('div', { className: 'fp-block fp-quarters' }, [
    el('h4', { text: 'Exploration vs execution by quarter' }),
    el('table', { className: 'data-table quarters-table' }, [
      el('caption', {
        className: 'visually-hidden',
        text: "Tool calls by intent in each quarter of the session's calls",
      }),
      el('thead', {}, [head]),
      el('tbody', {}, [bars, row('explore', 'explore'), row('execute', 'execute'), row('other', 'other')]),
    ]),
  ]);
}

/** Each compaction and what it cost. */
function compactionsBlock(session: SessionHead): HTMLElement | null {
  const rows = compactionRows(session.analysis.fingerprint);
  if (rows.length === 0) return null;
  return el('div', { className: 'fp-block fp-compactions' }, [
    el('h4', { text: 'Compactions' }),
    table(
      'compactions-table',
      'What each compaction cost',
      ['Compaction', 'Context before', 'Lost cached', 'Re-prefilled'],
      rows.map((r, i) =>
        el('tr', { data: { compaction: String(i) } }, [
          el('th', { attrs: { scope: 'row' }, text: r.beforeCall }),
          cell(r.contextBefore),
          cell(r.lostCached),
          cell(r.reprefill),
        ]),
      ),
    ),
  ]);
}

/** The fingerprint panel's content for a session. */
export function fingerprintContent(session: SessionHead): HTMLElement[] {
  return [
    el(
      'div',
      { className: 'summary fingerprint-figures' },
      fingerprintGroups(session.analysis).map((g) => figureGroup(g, 'h3')),
    ),
    el('div', { className: 'fp-tables' }, [toolsBlock(session), quartersBlock(session), compactionsBlock(session)]),
  ];
}

/** "Cache misses: 1 first call · 4 idle gap > TTL", each cause a button that selects its next call. */
export function missSummary(session: SessionHead, onCause: (cause: MissCause) => void): HTMLElement[] {
  const entries = missCauseEntries(session.analysis?.missCauses);
  if (entries.length === 0) return [];
  const out: HTMLElement[] = [
    el('span', { className: 'miss-title' }, [
      el('span', { className: 'swatch swatch-miss', attrs: { 'aria-hidden': 'true' } }),
      el('span', { text: 'Cache misses:' }),
    ]),
  ];
  entries.forEach((e, i) => {
    if (i > 0) out.push(el('span', { className: 'muted', text: '·', attrs: { 'aria-hidden': 'true' } }));
    out.push(
      linkButton(e.text, () => onCause(e.cause), {
        title: `Select the next call whose cache miss is a ${e.label}`,
        data: { missCause: e.cause, count: String(e.count) },
      }),
    );
  });
  return out;
}

/** What the loops table can ask the app to do. */
export interface LoopsActions {
  sort(key: LoopSortKey): void;
  open(row: LoopRow): void;
}

/** The retry-loops panel: sentence, sortable table (virtualised: only the loops in view are drawn), each loop's first error. */
export function loopsContent(
  session: SessionHead,
  rows: LoopRow[],
  sort: LoopSort | null,
  active: number | null,
  actions: LoopsActions,
): { nodes: HTMLElement[]; table: VirtualTable | null } {
  const heading = el('h2', {}, [
    el('span', { text: 'Retry loops' }),
    el('span', { className: 'count-badge', text: String(rows.length) }),
  ]);
  const sentence = el('p', {
    className: 'loop-sentence',
    text: loopHeadline(session.analysis),
    data: { loopSentence: '' },
  });
  if (rows.length === 0) return { nodes: [heading, sentence], table: null };
  const head = el(
    'tr',
    {},
    LOOP_COLUMNS.map((c) => {
      const state = ariaSort(sort, c.key);
      const b = el(
        'button',
        {
          className: 'sort-button',
          attrs: { type: 'button' },
          data: { sort: c.key },
          title: `${c.hint}. Sort by ${c.label.toLowerCase()}.`,
        },
        [
          el('span', { text: c.label }),
          icon(
            state === 'ascending' ? 'arrow-up' : state === 'descending' ? 'arrow-down' : 'arrow-both',
            `sort-icon sort-${state}`,
          ),
        ],
      );
      b.addEventListener('click', () => actions.sort(c.key));
      return el(
        'th',
        { className: `col-${c.key}${c.numeric ? ' num' : ''}`, attrs: { scope: 'col', 'aria-sort': state } },
        [b],
      );
    }),
  );
  const loopBody = (r: LoopRow): HTMLTableSectionElement => {
    const open = linkButton(r.tool, () => actions.open(r), {
      title: `Select call ${r.firstCall + 1}, the first attempt, and open ${r.file} at line ${r.line + 1}`,
      data: { action: 'open-loop' },
    });
    const main = el(
      'tr',
      { className: `loop-row${r.escaped ? ' escaped' : ' gave-up'}`, data: { loop: String(r.index) } },
      [
        el('th', { attrs: { scope: 'row' }, className: 'col-tool' }, [open]),
        el('td', { className: 'col-target' }, [
          el('code', { title: r.target }, [
            r.targetDir ? el('span', { className: 'target-dir', text: r.targetDir }) : null,
            el('span', { className: 'target-name', text: r.targetDir ? r.targetShort : r.target }),
          ]),
        ]),
        cell(r.display.attempts, true, { col: 'attempts' }),
        el('td', { className: 'num', data: { col: 'callsSpanned' }, title: r.span, text: r.display.callsSpanned }),
        el('td', { className: 'col-outcome', data: { col: 'outcome' } }, [
          icon(r.escaped ? 'pass' : 'error', r.escaped ? 'ok-icon' : 'failed-icon'),
          el('span', { text: r.outcome }),
        ]),
        cell(r.display.wastedTokens, true, { col: 'wastedTokens' }),
        cell(r.display.carryForwardTokens, true, { col: 'carryForwardTokens' }),
        cell(r.display.wastedUsd, true, { col: 'wastedUsd' }),
        cell(r.display.carriedForwardUsd, true, { col: 'carriedForwardUsd' }),
      ],
    );
    // A click anywhere on the row does what its button does; the button is the keyboard path.
    main.addEventListener('click', (e) => {
      if (!(e.target instanceof Element && e.target.closest('button'))) actions.open(r);
    });
    if (active === r.index) main.setAttribute('aria-current', 'true');
    const errorRow = el('tr', { className: 'loop-error-row' }, [
      el('td', { attrs: { colspan: String(LOOP_COLUMNS.length) } }, [
        el('div', { className: 'loop-where muted', text: `${r.span} · ${r.lines} of ${r.file}` }),
        r.firstError !== null
          ? el('pre', {
              className: 'tool-error loop-error',
              text: r.firstError,
              data: { firstError: '' },
              attrs: { tabindex: '0', 'aria-label': 'First error of the loop' },
            })
          : el('p', { className: 'muted', text: 'The first attempt left no error text.' }),
      ]),
    ]);
    return el('tbody', { className: 'loop', data: { loop: String(r.index) } }, [main, errorRow]);
  };
  const table = new VirtualTable({
    className: 'loops-table',
    caption: 'Retry loops; column headers sort',
    head,
    columns: LOOP_COLUMNS.length,
    estimateHeight: 64,
    kind: 'bodies',
    render: (i) => loopBody(rows[i]!),
  });
  return { nodes: [heading, sentence, el('div', { className: 'table-wrap' }, [table.element])], table };
}
