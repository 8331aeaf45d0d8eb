import type { ReportDocument } from '../../src/core/share/reportDocument';
import type { TeamReport, TeamReportCell, TeamReportTable } from '../../src/core/team/teamReport';
import { formatCount, formatPercent, formatUsd } from '../../src/core/text/formatNumbers';
import { el, replaceChildren, table } from '../shared/dom';

/**
 * The team report (agent-trace team-report DIR): the report's several-sessions view over an
 * export folder instead of traces. The header holds the folder's totals and its sessions,
 * costliest first, as the trace report's header lists its sessions; below, one section per
 * named team query. Every value is drawn as text (el's `text`), never as HTML: user names,
 * session ids, commands and error texts come from traces.
 */

/** A cell as the tables print it: dollars, rates and counts by their column's name. */
function cellText(column: string, value: TeamReportCell): string {
  // A dollar column's null is a session or call without a price: never $0.
  if (value === null) return /usd$/.test(column) ? formatUsd(null) : '';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') {
    if (/usd$/.test(column)) return formatUsd(value);
    if (/rate$|^p\d+$|^median$|^overall$/.test(column)) return formatPercent(value);
    return Number.isInteger(value) ? formatCount(value) : String(Number(value.toPrecision(4)));
  }
  return value;
}

function resultTable(result: TeamReportTable, caption: string): HTMLTableElement {
  // Numbers align right from the first column whose every value is a number.
  const numeric = result.columns.map(
    (_, j) => result.rows.length > 0 && result.rows.every((r) => r[j] === null || typeof r[j] === 'number'),
  );
  const rows = result.rows.map((r) =>
    el(
      'tr',
      {},
      r.map((v, j) =>
        el('td', {
          className: numeric[j] ? 'num' : '',
          text: cellText(result.columns[j]!, v),
          data: { column: result.columns[j]!, value: v === null ? '' : String(v) },
        }),
      ),
    ),
  );
  const firstNumeric = numeric.indexOf(true);
  return table(
    `team-table team-${result.name}`,
    caption,
    result.columns.map((c) => c.replace(/_/g, ' ')),
    rows,
    firstNumeric < 0 ? result.columns.length : firstNumeric,
  );
}

/** The value of a totals column. */
function total(team: TeamReport, column: string): TeamReportCell {
  const j = team.totals.columns.indexOf(column);
  return j < 0 ? null : (team.totals.rows[0]?.[j] ?? null);
}

/** Draws a team report document into `root`. */
export function renderTeamReport(root: HTMLElement, doc: ReportDocument, team: TeamReport): void {
  const generated = new Date(doc.generatedAt);
  const num = (column: string): number | null => {
    const v = total(team, column);
    return typeof v === 'number' ? v : null;
  };
  const sessions = num('sessions') ?? 0;
  const listed = team.sessions.rows.length;
  const header = el('header', { className: 'report-header team-header' }, [
    el('h1', { text: doc.title }),
    el('p', {
      className: 'muted',
      text: `${team.source} · made ${isNaN(generated.getTime()) ? doc.generatedAt : generated.toLocaleString()} by ${doc.generator}`,
    }),
    el('p', { className: 'team-totals' }, [
      el('span', { text: 'Sessions ' }),
      el('strong', { text: formatCount(sessions), data: { total: 'sessions', value: String(sessions) } }),
      el('span', { text: ` (${formatCount(num('main_sessions'))} main) · LLM calls ` }),
      el('strong', {
        text: formatCount(num('llm_calls')),
        data: { total: 'llm_calls', value: String(num('llm_calls')) },
      }),
      el('span', { text: ' · tool calls ' }),
      el('strong', {
        text: formatCount(num('tool_calls')),
        data: { total: 'tool_calls', value: String(num('tool_calls')) },
      }),
      el('span', { text: ' · cost ' }),
      el('strong', { text: formatUsd(num('cost_usd')), data: { total: 'cost_usd', value: String(num('cost_usd')) } }),
      el('span', {
        text: ` (${formatCount(num('unpriced_calls'))} calls without a price) · ${formatCount(num('users'))} user${num('users') === 1 ? '' : 's'}, ${formatCount(num('agents'))} agent${num('agents') === 1 ? '' : 's'}`,
      }),
    ]),
    el('p', {
      className: 'redaction',
      text: 'Redaction ran when the folder was exported (agent-trace export --to parquet redacts unless --no-redact); this report adds nothing the folder does not hold.',
    }),
    el('h2', {
      text:
        listed < sessions
          ? `The ${formatCount(listed)} costliest of ${formatCount(sessions)} sessions`
          : 'Every session',
    }),
    resultTable(team.sessions, team.sessions.description),
  ]);
  const sections = team.queries.map((q) =>
    el('section', { className: 'report-cost team-query', data: { query: q.name }, attrs: { 'aria-label': q.name } }, [
      el('h2', { text: q.name }),
      el('p', { className: 'muted', text: q.description }),
      q.rows.length === 0
        ? el('p', { className: 'muted', text: 'No rows.', data: { empty: 'true' } })
        : resultTable(q, q.description),
    ]),
  );
  replaceChildren(root, [header, el('main', { className: 'team-queries' }, sections)]);
}
