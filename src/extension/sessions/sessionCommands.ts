import * as vscode from 'vscode';
import { uiText } from '../../core/text/safeText';
import { describeFilter, GROUPINGS, PERIOD_LABELS, SORT_KEYS, SORT_LABELS } from '../../core/sessions/sessionQuery';
import type { SessionFilter, SessionGrouping, SessionRow, SessionSort } from '../../core/sessions/sessionQuery';
import type { SessionComparison } from '../../core/sessions/compareSessions';
import type { SessionsReport } from '../../core/sessions/sessionsReport';
import { projectLabel, sessionLabel } from '../../core/sessions/sessionText';
import { AGENTS } from '../../node/sessions/agentRegistry';
import type { SessionsPanels } from './sessionsPanels';
import type { SessionsService } from './sessionsService';
import type { SessionsStatusBar } from './sessionsStatusBar';
import { STATUS_BAR_COMMAND } from './sessionsStatusBar';
import type { SessionsTreeNode, SessionsTreeProvider } from './sessionsTree';

/** The groupings as the "Group Sessions" choice names them. */
const GROUPING_LABELS: Record<SessionGrouping, string> = {
  project: 'By project, then day',
  recency: 'By recency: today, yesterday, this week, older',
};

/** What the Agent Sessions commands work with. */
export interface SessionCommandContext {
  service: SessionsService;
  tree: SessionsTreeProvider;
  panels: SessionsPanels;
  statusBar: SessionsStatusBar;
  /** Opens a session file in the inspector. */
  openInInspector(path: string): Promise<void>;
}

function isNode(value: unknown): value is SessionsTreeNode {
  const v = value as { kind?: unknown } | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    (v.kind === 'project' || v.kind === 'day' || v.kind === 'period' || v.kind === 'session')
  );
}

/** The nodes a command acts on: the clicked one and the selection it belongs to (VS Code passes both), else the tree's selection. */
function targets(ctx: SessionCommandContext, clicked: unknown, selected: unknown): SessionsTreeNode[] {
  const list = Array.isArray(selected) ? selected.filter(isNode) : [];
  if (isNode(clicked) && !list.some((n) => n === clicked)) return [clicked, ...list];
  if (list.length > 0) return list;
  if (isNode(clicked)) return [clicked];
  return [...(ctx.tree.view?.selection ?? [])];
}

function sessionOf(node: SessionsTreeNode | undefined): SessionRow | null {
  return node?.kind === 'session' ? node.node.row : null;
}

/** The fields a filter argument may have: an object with any other (a tree node) is not a filter. */
const FILTER_KEYS: ReadonlySet<string> = new Set([
  'agents',
  'projects',
  'sinceMs',
  'untilMs',
  'hasRetryLoops',
  'costAboveUsd',
  'hitRateBelow',
  'text',
]);

/**
 * A plain, checked filter from a command argument (tests and keybindings may pass one;
 * `{}` clears). Anything else is not one: VS Code passes the focused tree node to a title
 * bar button, and that node must open the dialog, not clear the filter and the search.
 */
function filterFrom(value: unknown): SessionFilter | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || isNode(value)) return null;
  const v = value as Record<string, unknown>;
  if (!Object.keys(v).every((k) => FILTER_KEYS.has(k))) return null;
  const strings = (x: unknown): string[] | undefined =>
    Array.isArray(x) && x.every((s) => typeof s === 'string') ? (x as string[]) : undefined;
  const number = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
  const f: SessionFilter = {};
  const agents = strings(v['agents']);
  if (agents) f.agents = agents;
  const projects = strings(v['projects']);
  if (projects) f.projects = projects;
  const since = number(v['sinceMs']);
  if (since !== undefined) f.sinceMs = since;
  const until = number(v['untilMs']);
  if (until !== undefined) f.untilMs = until;
  if (v['hasRetryLoops'] === true) f.hasRetryLoops = true;
  const cost = number(v['costAboveUsd']);
  if (cost !== undefined) f.costAboveUsd = cost;
  const hit = number(v['hitRateBelow']);
  if (hit !== undefined) f.hitRateBelow = hit;
  if (typeof v['text'] === 'string' && v['text'].trim() !== '') f.text = v['text'].slice(0, 200);
  return f;
}

async function askNumber(
  prompt: string,
  placeHolder: string,
  validate: (n: number) => string | null,
): Promise<number | undefined> {
  const text = await vscode.window.showInputBox({
    prompt,
    placeHolder,
    validateInput: (t) => {
      if (t.trim() === '') return null;
      const n = Number(t.replace(/[$%]/g, ''));
      return Number.isFinite(n) ? validate(n) : 'A number, please.';
    },
  });
  if (text === undefined || text.trim() === '') return undefined;
  return Number(text.replace(/[$%]/g, ''));
}

/** The filter dialog: pick a criterion, give its value; each choice narrows the view at once. */
async function editFilter(ctx: SessionCommandContext): Promise<void> {
  const f: SessionFilter = { ...ctx.tree.currentFilter };
  const now = Date.now();
  const items: Array<vscode.QuickPickItem & { id: string }> = [
    { id: 'agent', label: 'Agent…', description: f.agents?.join(', ') ?? 'all' },
    {
      id: 'project',
      label: 'Project…',
      description: f.projects?.map((p) => uiText(p, { max: 40 })).join(', ') ?? 'all',
    },
    {
      id: 'date',
      label: 'Date range…',
      description: describeFilter({ sinceMs: f.sinceMs, untilMs: f.untilMs }).join(', ') || 'any',
    },
    { id: 'loops', label: f.hasRetryLoops ? 'With or without retry loops' : 'Only sessions with retry loops' },
    {
      id: 'cost',
      label: 'Cost above…',
      description: f.costAboveUsd !== undefined ? `$${f.costAboveUsd.toFixed(2)}` : 'any',
    },
    {
      id: 'hit',
      label: 'Cache hit rate below…',
      description: f.hitRateBelow !== undefined ? `${(f.hitRateBelow * 100).toFixed(0)}%` : 'any',
    },
    { id: 'clear', label: 'Clear all filters' },
  ];
  const choice = await vscode.window.showQuickPick(items, {
    title: 'Filter Agent Sessions',
    placeHolder: describeFilter(f).join(' · ') || 'No filter',
  });
  if (!choice) return;
  switch (choice.id) {
    case 'agent': {
      const picked = await vscode.window.showQuickPick(
        AGENTS.map((a) => ({ label: a.label, id: a.id, picked: f.agents?.includes(a.id) ?? false })),
        { canPickMany: true, title: 'Sessions of these agents (none: all)' },
      );
      if (!picked) return;
      f.agents = picked.length > 0 && picked.length < AGENTS.length ? picked.map((p) => p.id) : undefined;
      break;
    }
    case 'project': {
      const projects = [
        ...new Set(
          ctx.service
            .current()
            .filter((r) => r.role === 'main')
            .map((r) => r.project),
        ),
      ].sort();
      const picked = await vscode.window.showQuickPick(
        projects.map((p) => ({
          label: projectLabel(p, 60),
          description: uiText(p, { max: 120 }),
          project: p,
          picked: f.projects?.includes(p) ?? false,
        })),
        { canPickMany: true, title: 'Sessions of these projects (none: all)', matchOnDescription: true },
      );
      if (!picked) return;
      f.projects = picked.length > 0 ? picked.map((p) => p.project) : undefined;
      break;
    }
    case 'date': {
      const ranges = [
        { label: 'Today', since: new Date(new Date(now).setHours(0, 0, 0, 0)).getTime() },
        { label: 'Last 7 days', since: now - 7 * 86_400_000 },
        { label: 'Last 30 days', since: now - 30 * 86_400_000 },
        { label: 'Any time', since: undefined },
      ];
      const picked = await vscode.window.showQuickPick(ranges, { title: 'Sessions active in…' });
      if (!picked) return;
      f.sinceMs = picked.since;
      f.untilMs = undefined;
      break;
    }
    case 'loops':
      f.hasRetryLoops = f.hasRetryLoops ? undefined : true;
      break;
    case 'cost': {
      const n = await askNumber('Only sessions that cost more than (US dollars; empty: any cost)', 'e.g. 1.50', (x) =>
        x < 0 ? 'At least 0.' : null,
      );
      f.costAboveUsd = n;
      break;
    }
    case 'hit': {
      const n = await askNumber('Only sessions whose cache hit rate is below (percent; empty: any)', 'e.g. 85', (x) =>
        x <= 0 || x > 100 ? 'From 0 to 100.' : null,
      );
      f.hitRateBelow = n === undefined ? undefined : n / 100;
      break;
    }
    case 'clear':
      await ctx.tree.setFilter({});
      return;
  }
  for (const key of Object.keys(f) as Array<keyof SessionFilter>) if (f[key] === undefined) delete f[key];
  await ctx.tree.setFilter(f);
}

/** Every Agent Sessions command, by id. Return values serve the tests (and other extensions). */
export function createSessionCommands(ctx: SessionCommandContext): Record<string, (...args: unknown[]) => unknown> {
  const open = async (row: SessionRow | null): Promise<void> => {
    if (!row) return;
    if (row.fileStatus === 'deleted') {
      void vscode.window.showWarningMessage('That session file was deleted; its figures are the last ones read.');
      return;
    }
    await ctx.openInInspector(row.path);
  };
  return {
    'agentTrace.sessions.refresh': () => ctx.service.sync(true),
    'agentTrace.sessions.filter': async (arg?: unknown) => {
      const given = filterFrom(arg);
      if (given) await ctx.tree.setFilter(given);
      else await editFilter(ctx);
      return ctx.tree.currentGroups();
    },
    'agentTrace.sessions.search': async (arg?: unknown) => {
      const text =
        typeof arg === 'string'
          ? arg
          : await vscode.window.showInputBox({
              title: 'Search Agent Sessions',
              prompt: 'Words in prompts, tool targets (files, commands) or error text; empty clears the search',
              value: ctx.tree.currentFilter.text ?? '',
            });
      if (text === undefined) return ctx.tree.currentGroups();
      const f = { ...ctx.tree.currentFilter };
      if (text.trim() === '') delete f.text;
      else f.text = text.slice(0, 200);
      await ctx.tree.setFilter(f);
      return ctx.tree.currentGroups();
    },
    'agentTrace.sessions.sort': async (arg?: unknown) => {
      let sort: SessionSort | undefined = SORT_KEYS.find((k) => k === arg);
      if (!sort) {
        const picked = await vscode.window.showQuickPick(
          SORT_KEYS.map((k) => ({
            label: SORT_LABELS[k],
            key: k,
            description: k === ctx.tree.currentSort ? 'current' : undefined,
          })),
          { title: 'Sort sessions within each day' },
        );
        sort = picked?.key;
      }
      if (sort) await ctx.tree.setSort(sort);
      return ctx.tree.currentGroups();
    },
    'agentTrace.sessions.clearFilters': () => ctx.tree.setFilter({}),
    // ('project' | 'recency') skips the choice; the setting keeps it for the next windows.
    'agentTrace.sessions.groupBy': async (arg?: unknown) => {
      let grouping: SessionGrouping | undefined = GROUPINGS.find((g) => g === arg);
      if (!grouping) {
        const picked = await vscode.window.showQuickPick(
          GROUPINGS.map((g) => ({
            label: GROUPING_LABELS[g],
            grouping: g,
            description: g === ctx.tree.currentGrouping ? 'current' : undefined,
          })),
          { title: 'Group Agent Sessions' },
        );
        grouping = picked?.grouping;
      }
      if (!grouping) return ctx.tree.currentGrouping;
      await ctx.tree.setGrouping(grouping);
      await vscode.workspace
        .getConfiguration('agentTrace')
        .update('sessions.groupBy', grouping, vscode.ConfigurationTarget.Global);
      return ctx.tree.currentGrouping;
    },
    'agentTrace.sessions.open': (node?: unknown) => open(sessionOf(targets(ctx, node, undefined)[0])),
    'agentTrace.sessions.revealFile': async (node?: unknown) => {
      const row = sessionOf(targets(ctx, node, undefined)[0]);
      if (row) await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(row.path));
    },
    'agentTrace.sessions.copyPath': async (node?: unknown) => {
      const row = sessionOf(targets(ctx, node, undefined)[0]);
      if (row) await vscode.env.clipboard.writeText(row.path);
    },
    'agentTrace.sessions.analyze': async (node?: unknown) => {
      const row = sessionOf(targets(ctx, node, undefined)[0]);
      if (row) return vscode.commands.executeCommand('agentTrace.analyzeSession', vscode.Uri.file(row.path));
      return undefined;
    },
    'agentTrace.sessions.report': async (node?: unknown, selected?: unknown): Promise<SessionsReport | undefined> => {
      const nodes = targets(ctx, node, selected);
      const rows = nodes.length > 0 ? ctx.tree.rowsUnder(nodes) : ctx.tree.visibleRows();
      if (rows.length === 0) {
        void vscode.window.showInformationMessage(
          'Select sessions, a day or a project in the Agent Sessions view first.',
        );
        return undefined;
      }
      const mains = rows.filter((r) => r.role === 'main').length;
      const only =
        nodes.length === 1 && nodes[0]!.kind === 'project'
          ? projectLabel(nodes[0]!.group.project, 60)
          : nodes.length === 1 && nodes[0]!.kind === 'period'
            ? PERIOD_LABELS[nodes[0]!.group.period]
            : null;
      const title = `${only ? `${only}: ` : ''}${mains} session${mains === 1 ? '' : 's'}`;
      return ctx.panels.openReport(
        title,
        rows.map((r) => r.id),
      );
    },
    'agentTrace.sessions.compare': async (
      node?: unknown,
      selected?: unknown,
    ): Promise<SessionComparison | undefined> => {
      const rows = targets(ctx, node, selected)
        .map(sessionOf)
        .filter((r): r is SessionRow => r !== null);
      const a = rows[0];
      let b = rows[1];
      if (!a) {
        void vscode.window.showInformationMessage('Select two sessions in the Agent Sessions view to compare them.');
        return undefined;
      }
      if (!b) {
        const others = ctx.tree.visibleRows().filter((r) => r.id !== a.id && r.role === 'main');
        const picked = await vscode.window.showQuickPick(
          others.map((r) => ({
            label: sessionLabel(r, 80),
            description: `${projectLabel(r.project, 40)} · ${r.calls} calls`,
            row: r,
          })),
          { title: `Compare with… (A: ${sessionLabel(a, 60)})`, matchOnDescription: true },
        );
        if (!picked) return undefined;
        b = picked.row;
      }
      return ctx.panels.openCompare(a.id, b.id);
    },
    [STATUS_BAR_COMMAND]: () => open(ctx.statusBar.current),
  };
}
