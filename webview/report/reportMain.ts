import type { ReportDocument } from '../../src/core/share/reportDocument';
import { el } from '../shared/dom';
import { isTeamReport } from '../../src/core/team/teamReport';
import { ReportPage } from './reportPage';
import { renderTeamReport } from './teamReportPage';
// After the inspector's stylesheets (reportPage's imports): the report's own rules win.
import './report.css';

/**
 * Entry of the standalone HTML report. The data sits in the page as
 * `<script type="application/json" id="report-data">` (never executed, `<` escaped),
 * so it is read as text and parsed, never evaluated. A page that cannot read it says so.
 */
function start(): void {
  const root = document.getElementById('report') ?? document.body;
  // VS Code sets a theme class on <body>; a report follows the reader's colour scheme instead.
  document.body.classList.add(matchMedia('(prefers-color-scheme: dark)').matches ? 'vscode-dark' : 'vscode-light');
  try {
    const text = document.getElementById('report-data')?.textContent ?? '';
    const doc = JSON.parse(text) as ReportDocument;
    if (doc?.schema !== 1 || !Array.isArray(doc.traces))
      throw new Error('this report holds no data this page can read');
    // A team report (agent-trace team-report) holds an export folder's query results instead of traces.
    if (doc.team !== undefined) {
      if (!isTeamReport(doc.team)) throw new Error('this team report holds no data this page can read');
      renderTeamReport(root, doc, doc.team);
    } else new ReportPage(root, doc);
    document.body.dataset['ready'] = 'true';
  } catch (e) {
    root.replaceChildren(
      el('p', {
        className: 'error-banner',
        text: `This report cannot be shown: ${e instanceof Error ? e.message : String(e)}`,
      }),
    );
    document.body.dataset['ready'] = 'error';
  }
}

start();
