import * as vscode from 'vscode';
import { uiText } from '../../core/text/safeText';
import { formatPercent } from '../../core/text/formatNumbers';
import {
  describeFilter,
  groupByPeriod,
  groupSessions,
  isFiltering,
  isLive,
  matchesFilter,
  nextLiveExpiry,
  PERIOD_LABELS,
  threadCosts,
} from '../../core/sessions/sessionQuery';
import type {
  DayGroup,
  PeriodGroup,
  ProjectGroup,
  SessionFilter,
  SessionGrouping,
  SessionNode,
  SessionRow,
  SessionSort,
} from '../../core/sessions/sessionQuery';
import {
  formatUsd,
  projectLabel,
  sessionFigures,
  sessionLabel,
  sessionTooltip,
  threadCostText,
  TREE_LABEL_MAX,
} from '../../core/sessions/sessionText';
import { sessionsGrouping } from '../settings';
import { agentLabel } from '../../node/sessions/agentRegistry';
import type { SessionsService } from './sessionsService';

/** The Agent Sessions view's id (package.json `views`). */
export const SESSIONS_VIEW_ID = 'agentTrace.sessions';

/** A row of the tree: a project, a day of a project, a period (the flat grouping), or a session (sub-agents are sessions under theirs). */
export type SessionsTreeNode =
  | { kind: 'project'; group: ProjectGroup }
  | { kind: 'day'; project: string; group: DayGroup }
  | { kind: 'period'; group: PeriodGroup }
  | { kind: 'session'; node: SessionNode };

/** The tree's top level: projects (then days), or periods ("today", "yesterday", …). */
type Groups = { grouping: 'project'; projects: ProjectGroup[] } | { grouping: 'recency'; periods: PeriodGroup[] };

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

function dayLabel(day: string): string {
  const [y, m, d] = day.split('-').map(Number);
  const date = new Date(y!, m! - 1, d!);
  const today = new Date();
  const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
  const same = (a: Date, b: Date): boolean =>
    a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
  const name = same(date, today) ? 'Today' : same(date, yesterday) ? 'Yesterday' : WEEKDAYS[date.getDay()]!;
  return `${day} · ${name}`;
}

/** A group's cost: Σ over its sessions, each with its sub-agents (so it equals the sum of the rows it shows). */
function sumCost(nodes: readonly SessionNode[]): number | null {
  let total: number | null = null;
  for (const n of nodes) if (n.cost.usd !== null) total = (total ?? 0) + n.cost.usd;
  return total;
}

function flatten(nodes: readonly SessionNode[]): SessionRow[] {
  const out: SessionRow[] = [];
  const stack = [...nodes];
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.push(n.row);
    stack.push(...n.children);
  }
  return out;
}

/**
 * The Agent Sessions tree: projects (latest activity first), each by day, each day's
 * sessions in the chosen order with their sub-agents nested; or, grouped by recency
 * (`agentTrace.sessions.groupBy`), today, yesterday, this week and older. Every label,
 * description and tooltip is plain text: titles and paths come from traces (sessionText.ts).
 */
export class SessionsTreeProvider implements vscode.TreeDataProvider<SessionsTreeNode>, vscode.Disposable {
  private readonly didChange = new vscode.EventEmitter<SessionsTreeNode | undefined>();
  readonly onDidChangeTreeData = this.didChange.event;
  private filter: SessionFilter = {};
  private sort: SessionSort = 'newest';
  private grouping: SessionGrouping = sessionsGrouping();
  /** Ids the text search found (null: no text search). */
  private textMatches: Set<number> | null = null;
  private groups: Groups = { grouping: 'project', projects: [] };
  private readonly listeners: vscode.Disposable[];
  /** Redraws the rows when the first "live" one stops being live (nothing on disk changes then). */
  private liveTimer: ReturnType<typeof setTimeout> | undefined;
  view: vscode.TreeView<SessionsTreeNode> | null = null;

  constructor(private readonly service: SessionsService) {
    this.listeners = [
      service.onDidChange(() => void this.rebuild()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('agentTrace.sessions.groupBy')) {
          this.grouping = sessionsGrouping();
          void this.rebuild();
        }
      }),
    ];
  }

  dispose(): void {
    clearTimeout(this.liveTimer);
    for (const l of this.listeners) l.dispose();
    this.didChange.dispose();
  }

  get currentFilter(): SessionFilter {
    return this.filter;
  }

  get currentSort(): SessionSort {
    return this.sort;
  }

  get currentGrouping(): SessionGrouping {
    return this.grouping;
  }

  async setFilter(filter: SessionFilter): Promise<void> {
    this.filter = filter;
    this.textMatches = filter.text ? await this.service.search(filter.text) : null;
    await this.rebuild();
  }

  async setSort(sort: SessionSort): Promise<void> {
    this.sort = sort;
    await this.rebuild();
  }

  /** Groups by project then day, or by recency, for this window (the setting keeps the choice). */
  async setGrouping(grouping: SessionGrouping): Promise<void> {
    this.grouping = grouping;
    await this.rebuild();
  }

  /** The rows the tree shows: a session passes the filter, and its sub-agents come with it. */
  visibleRows(): SessionRow[] {
    const rows = this.service.current();
    const byFileKey = new Map(rows.map((r) => [`${r.fileId}\u0000${r.key}`, r]));
    const top = (r: SessionRow): SessionRow => {
      let t = r;
      for (let hops = 0; t.parentKey !== null && hops < 10_000; hops++) {
        const p = byFileKey.get(`${t.fileId}\u0000${t.parentKey}`);
        if (!p) break;
        t = p;
      }
      return t;
    };
    // A session's cost is its own and its sub-agents', as its row shows it.
    const costs = this.filter.costAboveUsd !== undefined ? threadCosts(rows) : null;
    // The figures filter a session by its own; the text search finds it by any of its threads (a sub-agent's error counts).
    const found = new Set<SessionRow>();
    if (this.textMatches !== null) for (const r of rows) if (this.textMatches.has(r.id)) found.add(top(r));
    const kept = (t: SessionRow): boolean =>
      matchesFilter(t, this.filter, costs?.get(t.id)?.usd ?? t.costUsd) && (this.textMatches === null || found.has(t));
    const tops = new Map<SessionRow, boolean>();
    return rows.filter((r) => {
      const t = top(r);
      if (!tops.has(t)) tops.set(t, kept(t));
      return tops.get(t)!;
    });
  }

  private async rebuild(): Promise<void> {
    if (this.filter.text && this.textMatches === null) this.textMatches = await this.service.search(this.filter.text);
    const rows = this.visibleRows();
    const now = Date.now();
    this.groups =
      this.grouping === 'recency'
        ? { grouping: 'recency', periods: groupByPeriod(rows, this.sort, now) }
        : { grouping: 'project', projects: groupSessions(rows, this.sort) };
    const total = this.service.current().filter((r) => r.role === 'main').length;
    const shown = rows.filter((r) => r.role === 'main').length;
    void vscode.commands.executeCommand('setContext', 'agentTrace.sessions.filtered', isFiltering(this.filter));
    void vscode.commands.executeCommand('setContext', 'agentTrace.sessions.groupBy', this.grouping);
    if (this.view) {
      this.view.description = this.service.ready
        ? isFiltering(this.filter)
          ? `${shown} of ${total}`
          : `${total}`
        : undefined;
      const unread = this.service.unread;
      this.view.message = isFiltering(this.filter)
        ? `Filtered: ${uiText(describeFilter(this.filter).join(' · '), { max: 300 })}`
        : !this.service.ready
          ? 'Reading agent sessions…'
          : unread
            ? `${unread.count} ${unread.count === 1 ? 'entry' : 'entries'} under the agents' folders could not be read: see Output ▸ Agent Trace Inspector.`
            : undefined;
    }
    this.scheduleLiveExpiry(rows, now);
    this.didChange.fire(undefined);
  }

  /** "● live" goes when its window passes: the rows are drawn again then, read or not. */
  private scheduleLiveExpiry(rows: readonly SessionRow[], now: number): void {
    clearTimeout(this.liveTimer);
    const next = nextLiveExpiry(rows, now);
    if (next === null) return;
    this.liveTimer = setTimeout(() => this.didChange.fire(undefined), Math.max(0, next - now) + 250);
  }

  /** The project groups as the tree shows them (empty when grouped by recency; tests read them). */
  currentGroups(): ProjectGroup[] {
    return this.groups.grouping === 'project' ? this.groups.projects : [];
  }

  /** The period groups when grouped by recency (else empty). */
  currentPeriods(): PeriodGroup[] {
    return this.groups.grouping === 'recency' ? this.groups.periods : [];
  }

  getChildren(element?: SessionsTreeNode): SessionsTreeNode[] {
    if (!element)
      return this.groups.grouping === 'recency'
        ? this.groups.periods.map((group) => ({ kind: 'period', group }))
        : this.groups.projects.map((group) => ({ kind: 'project', group }));
    if (element.kind === 'project')
      return element.group.days.map((group) => ({ kind: 'day', project: element.group.project, group }));
    if (element.kind === 'day' || element.kind === 'period')
      return element.group.sessions.map((node) => ({ kind: 'session', node }));
    return element.node.children.map((node) => ({ kind: 'session', node }));
  }

  getTreeItem(element: SessionsTreeNode): vscode.TreeItem {
    switch (element.kind) {
      case 'project': {
        const g = element.group;
        const item = new vscode.TreeItem(projectLabel(g.project), vscode.TreeItemCollapsibleState.Expanded);
        item.id = `project:${g.project}`;
        item.description = `${g.sessionCount} session${g.sessionCount === 1 ? '' : 's'} · ${uiText(g.project, { max: 120 })}`;
        item.tooltip = uiText(g.project, { max: 400 });
        item.iconPath = new vscode.ThemeIcon('folder');
        item.contextValue = 'agentTrace.project';
        return item;
      }
      case 'day':
      case 'period': {
        const g = element.group;
        const mains = g.sessions.length;
        const label = element.kind === 'day' ? dayLabel(element.group.day) : PERIOD_LABELS[element.group.period];
        const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.Expanded);
        item.id =
          element.kind === 'day'
            ? `day:${element.project}\u0000${element.group.day}`
            : `period:${element.group.period}`;
        const cost = sumCost(g.sessions);
        item.description = `${mains} session${mains === 1 ? '' : 's'}${cost === null ? '' : ` · ${formatUsd(cost)}`}`;
        item.tooltip = `${item.description}: each session with its sub-agents${element.kind === 'period' ? `; by when each was last active` : ''}`;
        item.iconPath = new vscode.ThemeIcon(element.kind === 'day' ? 'calendar' : 'history');
        item.contextValue = element.kind === 'day' ? 'agentTrace.day' : 'agentTrace.period';
        return item;
      }
      case 'session': {
        const { row, cost } = element.node;
        const now = Date.now();
        const context = { cost, nowMs: now, flat: this.groups.grouping === 'recency' };
        const live = isLive(row, now);
        // Short, so VS Code's default 300 px sidebar still shows the figures beside it; the tooltip has the whole title.
        const item = new vscode.TreeItem(
          sessionLabel(row, TREE_LABEL_MAX),
          element.node.children.length > 0
            ? vscode.TreeItemCollapsibleState.Collapsed
            : vscode.TreeItemCollapsibleState.None,
        );
        item.id = `session:${row.id}`;
        item.description = sessionFigures(row, context);
        item.tooltip = sessionTooltip(row, context);
        item.iconPath = live
          ? new vscode.ThemeIcon('pulse', new vscode.ThemeColor('charts.green'))
          : row.fileStatus !== 'ok'
            ? new vscode.ThemeIcon('warning')
            : new vscode.ThemeIcon(row.role === 'main' ? 'comment-discussion' : 'type-hierarchy-sub');
        item.contextValue = row.fileStatus === 'deleted' ? 'agentTrace.session.deleted' : 'agentTrace.session';
        item.accessibilityInformation = {
          label: `${sessionLabel(row, 200)}, ${agentLabel(row.agentId)}, ${threadCostText(row, cost)}, ${row.calls} calls, cache hit ${formatPercent(row.cacheHitRate)}, ${row.failedToolCalls} failed tool calls, ${row.retryLoops} retry loops${live ? ', live' : ''}`,
        };
        if (row.fileStatus !== 'deleted')
          item.command = {
            command: 'agentTrace.sessions.open',
            title: 'Open in Agent Trace Inspector',
            arguments: [element],
          };
        return item;
      }
    }
  }

  /** The top-level nodes and, for each, the session lists under it (a project's days, or a period's own list). */
  private sessionLists(): Array<{ parent: SessionsTreeNode; sessions: SessionNode[] }> {
    if (this.groups.grouping === 'recency')
      return this.groups.periods.map((group) => ({ parent: { kind: 'period', group }, sessions: group.sessions }));
    return this.groups.projects.flatMap((p) =>
      p.days.map((group) => ({
        parent: { kind: 'day', project: p.project, group } as SessionsTreeNode,
        sessions: group.sessions,
      })),
    );
  }

  getParent(element: SessionsTreeNode): SessionsTreeNode | undefined {
    if (element.kind === 'project' || element.kind === 'period') return undefined;
    if (element.kind === 'day') {
      const group = this.currentGroups().find((g) => g.project === element.project);
      return group ? { kind: 'project', group } : undefined;
    }
    const row = element.node.row;
    for (const { parent, sessions } of this.sessionLists()) {
      // Depth first without recursion: sub-agents nest as deep as the agent nested them.
      const stack: Array<{ node: SessionNode; parent: SessionsTreeNode }> = sessions.map((node) => ({ node, parent }));
      while (stack.length > 0) {
        const { node, parent: p } = stack.pop()!;
        if (node.row.id === row.id) return p;
        for (const c of node.children) stack.push({ node: c, parent: { kind: 'session', node } });
      }
    }
    return undefined;
  }

  /** The session rows under tree nodes (a project, day or period: all its sessions; a session: it and its sub-agents). */
  rowsUnder(nodes: readonly SessionsTreeNode[]): SessionRow[] {
    const out = new Map<number, SessionRow>();
    for (const n of nodes) {
      const sessions =
        n.kind === 'project'
          ? n.group.days.flatMap((d) => d.sessions)
          : n.kind === 'day' || n.kind === 'period'
            ? n.group.sessions
            : [n.node];
      for (const r of flatten(sessions)) out.set(r.id, r);
    }
    return [...out.values()];
  }

  /** The tree node of a session row (for reveal). */
  nodeOf(rowId: number): SessionsTreeNode | undefined {
    for (const { sessions } of this.sessionLists()) {
      const stack = [...sessions];
      while (stack.length > 0) {
        const n = stack.pop()!;
        if (n.row.id === rowId) return { kind: 'session', node: n };
        stack.push(...n.children);
      }
    }
    return undefined;
  }
}
