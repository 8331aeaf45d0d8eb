import type { CommitTable } from '../../src/core/sessions/sessionCommits';
import { formatUsd } from '../../src/core/text/formatNumbers';
import { el, table } from '../shared/dom';

/**
 * The report's "Cost per commit" section: the commits its sessions led to (joined by the rule
 * of `agent-trace cost --by commit`), each with its share of their cost, then what joined to no
 * commit. Every text is set as text (dom.ts): a commit subject or branch name is never HTML.
 */

/** Two-digit local date and time of a commit: "2026-02-12 14:11". */
function when(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

/** The section for a table, or for the wait while git is asked (`null`). */
export function commitSection(t: CommitTable | null): HTMLElement {
  const section = el('section', {
    className: 'panel commit-cost',
    attrs: { 'aria-label': 'Cost per commit' },
    data: { section: 'commits' },
  });
  section.appendChild(el('h2', { text: 'Cost per commit' }));
  if (t === null) {
    section.appendChild(el('p', { className: 'muted', text: 'Reading the git history of the sessions’ folders…' }));
    return section;
  }
  section.appendChild(
    el('p', {
      className: 'muted',
      text: `A commit counts for a session when it was made during it or within ${t.graceMinutes} min after, and touches a file the session edited; a session's cost is shared equally by its commits (git log, no network).`,
    }),
  );
  if (t.commits.length === 0)
    section.appendChild(el('p', { className: 'commit-none', text: 'No commit joined to these sessions.' }));
  else {
    const rows = t.commits.map((c) =>
      el('tr', { data: { sha: c.sha } }, [
        el('td', { className: 'mono', text: c.sha.slice(0, 10) }),
        el('td', { text: when(c.timeMs) }),
        el('td', { text: c.branch ?? '(no branch)' }),
        el('td', { text: c.subject }),
        el('td', { className: 'num', text: String(c.sessions.length) }),
        el('td', { className: 'num', text: formatUsd(c.usd) }),
      ]),
    );
    section.appendChild(
      table(
        'commit-table',
        'Cost per commit',
        ['Commit', 'Committed', 'Branch', 'Subject', 'Sessions', 'Cost'],
        rows,
        4,
      ),
    );
  }
  const notes: string[] = [];
  if (t.unjoined.sessions > 0)
    notes.push(
      `${t.unjoined.sessions} session${t.unjoined.sessions === 1 ? '' : 's'} joined to no commit: ${formatUsd(t.unjoined.usd)}.`,
    );
  if (t.noRepository > 0) notes.push(`${t.noRepository} of them in no git repository here.`);
  if (notes.length > 0) section.appendChild(el('p', { className: 'muted commit-unjoined', text: notes.join(' ') }));
  return section;
}
