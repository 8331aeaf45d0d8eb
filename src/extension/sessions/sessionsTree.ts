import * as vscode from 'vscode';
import { uiText } from '../../core/text/safeText';
import { formatPercent } from '../../core/report/formatNumbers';
import { describeFilter, groupSessions, isFiltering, matchesFilter } from '../../core/sessions/sessionQuery';
import type { DayGroup, ProjectGroup, SessionFilter, SessionNode, SessionRow, SessionSort } from '../../core/sessions/sessionQuery';
import { formatUsd, lastSegment, sessionFigures, sessionLabel, sessionTooltip } from '../../core/sessions/sessionText';
import { agentLabel } from '../../node/sessions/agentRegistry';
import type { SessionsService } from './sessionsService';

/** The Agent Sessions view's id (package.json `views`). */
export const SESSIONS_VIEW_ID = 'agentTrace.sessions';

/** A row of the tree: a project, a day of a project, or a session (sub-agents are sessions under theirs). */
export type SessionsTreeNode =
  | { kind: 'project'; group: ProjectGroup }
  | { kind: 'day'; project: string; group: DayGroup }
  | { kind: 'session'; node: SessionNode };

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

function dayLabel(day: string): string {
  const [y, m, d] = day.split('-').map(Number);
  const date = new Date(y!, m! - 1, d!);
  const today = new Date();
  const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
  const same = (a: Date, b: Date): boolean => a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
  const name = same(date, today) ? 'Today' : same(date, yesterday) ? 'Yesterday' : WEEKDAYS[date.getDay()]!;
  return `${day} · ${name}`;
}

function sumCost(rows: readonly SessionRow[]): number | null {
  let total: number | null = null;
  for (const r of rows) if (r.costUsd !== null) total = (total ?? 0) + r.costUsd;
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
 * sessions in the chosen order with their sub-agents nested. Every label, description
 * and tooltip is plain text: titles and paths come from traces (sessionText.ts).
 */
export class SessionsTreeProvider implements vscode.TreeDataProvider<SessionsTreeNode>, vscode.Disposable {
  private readonly didChange = new vscode.EventEmitter<SessionsTreeNode | undefined>();
  readonly onDidChangeTreeData = this.didChange.event;
  private filter: SessionFilter = {};
  private sort: SessionSort = 'newest';
  /** Ids the text search found (null: no text search). */
  private textMatches: Set<number> | null = null;
  private groups: ProjectGroup[] = [];
  private readonly listener: vscode.Disposable;
  view: vscode.TreeView<SessionsTreeNode> | null = null;

  constructor(private readonly service: SessionsService) {
    this.listener = service.onDidChange(() => void this.rebuild());
  }

  dispose(): void {
    this.listener.dispose();
    this.didChange.dispose();
  }

  get currentFilter(): SessionFilter {
    return this.filter;
  }

  get currentSort(): SessionSort {
    return this.sort;
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
    // The figures filter a session by its own; the text search finds it by any of its threads (a sub-agent's error counts).
    const found = new Set<SessionRow>();
    if (this.textMatches !== null) for (const r of rows) if (this.textMatches.has(r.id)) found.add(top(r));
    const kept = (t: SessionRow): boolean => matchesFilter(t, this.filter) && (this.textMatches === null || found.has(t));
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
    this.groups = groupSessions(rows, this.sort);
    const total = this.service.current().filter((r) => r.role === 'main').length;
    const shown = rows.filter((r) => r.role === 'main').length;
    void vscode.commands.executeCommand('setContext', 'agentTrace.sessions.filtered', isFiltering(this.filter));
    if (this.view) {
      this.view.description = this.service.ready ? (isFiltering(this.filter) ? `${shown} of ${total}` : `${total}`) : undefined;
      const unread = this.service.unread;
      this.view.message = isFiltering(this.filter)
        ? `Filtered: ${uiText(describeFilter(this.filter).join(' · '), { max: 300 })}`
        : !this.service.ready
          ? 'Reading agent sessions…'
          : unread
            ? `${unread.count} ${unread.count === 1 ? 'entry' : 'entries'} under the agents' folders could not be read: see Output ▸ Agent Trace Inspector.`
            : undefined;
    }
    this.didChange.fire(undefined);
  }

  /** The groups as the tree shows them (tests read them). */
  currentGroups(): ProjectGroup[] {
    return this.groups;
  }

  getChildren(element?: SessionsTreeNode): SessionsTreeNode[] {
    if (!element) return this.groups.map((group) => ({ kind: 'project', group }));
    if (element.kind === 'project') return element.group.days.map((group) => ({ kind: 'day', project: element.group.project, group }));
    if (element.kind === 'day') return element.group.sessions.map((node) => ({ kind: 'session', node }));
    return element.node.children.map((node) => ({ kind: 'session', node }));
  }

  getTreeItem(element: SessionsTreeNode): vscode.TreeItem {
    switch (element.kind) {
      case 'project': {
        const g = element.group;
        const item = new vscode.TreeItem(uiText(lastSegment(g.project), { max: 80 }), vscode.TreeItemCollapsibleState.Expanded);
        item.id = `project:${g.project}`;
        item.description = `${g.sessionCount} session${g.sessionCount === 1 ? '' : 's'} · ${uiText(g.project, { max: 120 })}`;
        item.tooltip = uiText(g.project, { max: 400 });
        item.iconPath = new vscode.ThemeIcon('folder');
        item.contextValue = 'agentTrace.project';
        return item;
      }
      case 'day': {
        const g = element.group;
        const rows = flatten(g.sessions);
        const mains = g.sessions.length;
        const item = new vscode.TreeItem(dayLabel(g.day), vscode.TreeItemCollapsibleState.Expanded);
        item.id = `day:${element.project}\u0000${g.day}`;
        const cost = sumCost(rows);
        item.description = `${mains} session${mains === 1 ? '' : 's'}${cost === null ? '' : ` · ${formatUsd(cost)}`}`;
        item.iconPath = new vscode.ThemeIcon('calendar');
        item.contextValue = 'agentTrace.day';
        return item;
      }
      case 'session': {
        const row = element.node.row;
        const item = new vscode.TreeItem(sessionLabel(row), element.node.children.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
        item.id = `session:${row.id}`;
        item.description = sessionFigures(row);
        item.tooltip = sessionTooltip(row);
        item.iconPath = row.live
          ? new vscode.ThemeIcon('pulse', new vscode.ThemeColor('charts.green'))
          : row.fileStatus !== 'ok'
            ? new vscode.ThemeIcon('warning')
            : new vscode.ThemeIcon(row.role === 'main' ? 'comment-discussion' : 'type-hierarchy-sub');
        item.contextValue = row.fileStatus === 'deleted' ? 'agentTrace.session.deleted' : 'agentTrace.session';
        item.accessibilityInformation = {
          label: `${sessionLabel(row)}, ${agentLabel(row.agentId)}, ${row.calls} calls, cache hit ${formatPercent(row.cacheHitRate)}, ${formatUsd(row.costUsd)}, ${row.failedToolCalls} failed tool calls, ${row.retryLoops} retry loops${row.live ? ', live' : ''}`,
        };
        if (row.fileStatus !== 'deleted') item.command = { command: 'agentTrace.sessions.open', title: 'Open in Agent Trace Inspector', arguments: [element] };
        return item;
      }
    }
  }

  getParent(element: SessionsTreeNode): SessionsTreeNode | undefined {
    if (element.kind === 'project') return undefined;
    if (element.kind === 'day') {
      const group = this.groups.find((g) => g.project === element.project);
      return group ? { kind: 'project', group } : undefined;
    }
    const row = element.node.row;
    for (const p of this.groups) {
      for (const d of p.days) {
        const find = (nodes: SessionNode[], parent: SessionsTreeNode): SessionsTreeNode | undefined => {
          for (const n of nodes) {
            if (n.row.id === row.id) return parent;
            const deeper = find(n.children, { kind: 'session', node: n });
            if (deeper) return deeper;
          }
          return undefined;
        };
        const found = find(d.sessions, { kind: 'day', project: p.project, group: d });
        if (found) return found;
      }
    }
    return undefined;
  }

  /** The session rows under tree nodes (a project or day: all its sessions; a session: it and its sub-agents). */
  rowsUnder(nodes: readonly SessionsTreeNode[]): SessionRow[] {
    const out = new Map<number, SessionRow>();
    for (const n of nodes) {
      const sessions = n.kind === 'project' ? n.group.days.flatMap((d) => d.sessions) : n.kind === 'day' ? n.group.sessions : [n.node];
      for (const r of flatten(sessions)) out.set(r.id, r);
    }
    return [...out.values()];
  }

  /** The tree node of a session row (for reveal). */
  nodeOf(rowId: number): SessionsTreeNode | undefined {
    for (const p of this.groups) {
      for (const d of p.days) {
        const stack = [...d.sessions];
        while (stack.length > 0) {
          const n = stack.pop()!;
          if (n.row.id === rowId) return { kind: 'session', node: n };
          stack.push(...n.children);
        }
      }
    }
    return undefined;
  }
}
