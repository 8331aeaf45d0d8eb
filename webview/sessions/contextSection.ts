import type { AcrossSessionsTotal, SessionsContext } from '../../src/core/context/contextAcrossSessions';
import { formatCount, formatUsd } from '../../src/core/text/formatNumbers';
import { el, table, withCode } from '../shared/dom';

/**
 * The report's "What fills the context" section: the context anatomy of its sessions summed by
 * tool, MCP server and file, and the priced suggestions over them (docs/guide/context.md#over-many-sessions).
 * Tool, server and file names and the suggestions' sentences are trace text: set as text only (dom.ts).
 */

/** What the section shows: the anatomy, the wait while it is counted (`null`), or why it failed. */
export type ContextState = SessionsContext | { failed: string } | null;

function totalsTable(name: string, caption: string, head: string, rows: readonly AcrossSessionsTotal[]): HTMLElement {
  return el('div', { className: 'context-across-group', data: { group: name } }, [
    el('h3', { text: caption }),
    rows.length === 0
      ? el('p', { className: 'muted', text: 'none in these sessions' })
      : table(
          `context-across-table context-by-${name}`,
          caption,
          [head, 'Tokens', 'Parts', 'Sessions', 'Carried cost'],
          rows.map((t) =>
            el('tr', { data: { name: t.name } }, [
              el('td', { className: 'mono', text: t.name }),
              el('td', { className: 'num', text: formatCount(t.tokens) }),
              el('td', { className: 'num', text: formatCount(t.parts) }),
              el('td', { className: 'num', text: formatCount(t.sessions) }),
              el('td', { className: 'num', text: formatUsd(t.usd) }),
            ]),
          ),
          1,
        ),
  ]);
}

/** The section for a state. */
export function contextSection(state: ContextState): HTMLElement {
  const section = el('section', {
    className: 'panel context-across',
    attrs: { 'aria-label': 'What fills the context' },
    data: { section: 'context' },
  });
  section.appendChild(el('h2', { text: 'What fills the context, over these sessions' }));
  if (state === null) {
    section.dataset['state'] = 'counting';
    section.appendChild(
      el('p', {
        className: 'muted',
        text: 'Counting the context of these sessions (each log is read again with the tokenizer)…',
      }),
    );
    return section;
  }
  if ('failed' in state) {
    section.dataset['state'] = 'failed';
    section.appendChild(el('p', { className: 'context-failed', text: `Could not count it: ${state.failed}` }));
    return section;
  }
  section.dataset['state'] = 'ready';
  const a = state.across;
  const subAgents = a.sessions - a.mainSessions;
  section.appendChild(
    el('p', {
      className: 'muted context-across-summary',
      text: `${formatCount(a.mainSessions)} session${a.mainSessions === 1 ? '' : 's'}${subAgents > 0 ? ` and ${formatCount(subAgents)} sub-agent or compaction runs` : ''}, ${formatCount(a.calls)} calls, input ${formatUsd(a.inputUsd)}. Each part's cost is its first write and every later cache read of it until it left the context; the tool schemas of MCP servers are inside the estimated base, which no log splits by server.`,
    }),
  );
  if (a.base)
    section.appendChild(
      el('p', {
        className: 'context-base',
        text: `Base (system prompt, tool definitions, memory files; estimated): ~${formatCount(a.base.tokensPerCall)} tokens in every call (median over ${formatCount(a.base.sessions)} sessions), ${formatUsd(a.base.usd)} carried.`,
      }),
    );
  if (a.suggestions.length > 0)
    section.appendChild(
      el(
        'ul',
        { className: 'context-suggestions' },
        a.suggestions.map((s) =>
          el('li', {}, [el('span', {}, withCode(s.text)), el('div', { className: 'muted', text: `how: ${s.how}` })]),
        ),
      ),
    );
  section.appendChild(
    el('div', { className: 'context-across-groups' }, [
      totalsTable('tool', 'By tool (results and calls)', 'Tool', a.byTool),
      totalsTable('mcp', 'By MCP server (results)', 'MCP server', a.byMcpServer),
      totalsTable('file', 'By file (tool results naming it)', 'File', a.byFile),
    ]),
  );
  if (state.skipped.length > 0)
    section.appendChild(
      el('p', {
        className: 'muted context-skipped',
        text: `Not counted: ${state.skipped.map((s) => `${s.file} (${s.why})`).join('; ')}.`,
      }),
    );
  return section;
}
