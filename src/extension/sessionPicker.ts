import * as vscode from 'vscode';
import { formatPercent } from '../core/report/formatNumbers';
import { parseTrace } from '../core/trace/parseTrace';
import { agentLabel, AGENTS, discoverSessions } from '../node/sessions/agentRegistry';
import type { AgentRoot } from '../node/sessions/agentRegistry';
import { maxFileBytes, sessionRoots } from './settings';
import { baseName } from './traceAnalysis';
import { yieldToEventLoop } from './traceLoader';
import { createReadStream } from 'node:fs';
import { basename } from 'node:path';

/** Sessions listed at most: the newest ones, so a years-old ~/.claude stays quick. */
export const MAX_LISTED_SESSIONS = 50;

/** An agent session log found on this machine. */
export interface LocalSession {
  path: string;
  /** The agent's label (Claude Code, Codex, …). */
  agent: string;
  mtimeMs: number;
  sizeBytes: number;
  /** The project: what the agent's folder layout says (Claude Code's project folder) until the log's cwd is read. */
  project: string | null;
}

/** A QuickPick row: a session, or the "open a file" fallback. */
export interface SessionItem extends vscode.QuickPickItem {
  session: LocalSession | null;
}

/** Lets a test choose from the real QuickPick's rows once they are all filled in. */
export interface PickHook {
  pick: (items: readonly SessionItem[]) => SessionItem | undefined;
}

/** True for a `{ pick }` test hook passed as a command argument. */
export function isPickHook(value: unknown): value is PickHook {
  return typeof value === 'object' && value !== null && typeof (value as { pick?: unknown }).pick === 'function';
}

/** The local agent sessions under the agents' folders (the registry's), newest first (by modification time). */
export async function listLocalSessions(roots: readonly AgentRoot[], limit = MAX_LISTED_SESSIONS): Promise<LocalSession[]> {
  return (await discoverSessions(roots)).slice(0, limit).map((f) => ({ path: f.path, agent: agentLabel(f.agentId), mtimeMs: f.mtimeMs, sizeBytes: f.sizeBytes, project: f.projectHint }));
}

/** What a row shows once the log is read. */
export interface SessionStats {
  calls: number;
  cacheHitRate: number | null;
  failedToolCalls: number;
  cwd: string | null;
}

/** Reads one session log (the main file only: quick) and sums its main sessions. */
export async function readSessionStats(session: LocalSession): Promise<SessionStats | string> {
  if (session.sizeBytes > maxFileBytes()) return 'too large to read (agentTrace.maxFileSizeMB)';
  const parsed = await parseTrace([{ key: basename(session.path), bytes: createReadStream(session.path, { highWaterMark: 256 * 1024 }) }], { yieldControl: yieldToEventLoop });
  if (parsed.problem) return parsed.problem.message;
  let calls = 0;
  let cached = 0;
  let input = 0;
  let known = false;
  let failed = 0;
  let cwd: string | null = null;
  for (const s of parsed.model.sessions) {
    if (s.role !== 'main') continue;
    cwd ??= s.cwd;
    calls += s.calls.length;
    for (const c of s.calls) {
      if (c.tokens.cached !== null && c.tokens.input !== null) {
        cached += c.tokens.cached;
        input += c.tokens.input;
        known = true;
      }
      failed += c.toolCalls.filter((t) => t.isError === true).length;
    }
  }
  return { calls, cacheHitRate: known && input > 0 ? cached / input : null, failedToolCalls: failed, cwd };
}

/** "2026-02-12 14:05" in local time. */
function localDate(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

function itemFor(session: LocalSession): SessionItem {
  const item: SessionItem = { label: '', session };
  describe(item, session, null);
  return item;
}

/** Fills a row's texts from what is known so far. */
function describe(item: SessionItem, session: LocalSession, stats: SessionStats | string | null): void {
  const project = typeof stats === 'object' && stats?.cwd ? stats.cwd : session.project;
  item.label = project ? baseName(project) : basename(session.path);
  item.description = `${session.agent} · ${localDate(session.mtimeMs)}${project ? ` · ${project}` : ''}`;
  if (stats === null) item.detail = '$(loading~spin) reading…';
  else if (typeof stats === 'string') item.detail = `$(warning) ${stats}`;
  else {
    const calls = `${stats.calls} call${stats.calls === 1 ? '' : 's'}`;
    const failed = `${stats.failedToolCalls} failed tool call${stats.failedToolCalls === 1 ? '' : 's'}`;
    item.detail = `${calls} · cache hit ${formatPercent(stats.cacheHitRate)} · ${failed} · ${basename(session.path)}`;
  }
}

const OPEN_FILE_ITEM: SessionItem = { label: '$(folder-opened) Open a trace file…', detail: 'Any supported trace: *.jsonl, *.json, *.traj', session: null, alwaysShow: true };

/**
 * Offers the local agent sessions (newest first) in a QuickPick. Rows appear at once
 * with "reading…" and fill in as each log is parsed, newest first; parsing stops when
 * the pick closes. Resolves to the chosen file, or undefined when dismissed.
 */
export async function pickLocalSession(log: vscode.LogOutputChannel, hook: PickHook | null = null): Promise<vscode.Uri | undefined> {
  const roots = sessionRoots();
  const qp = vscode.window.createQuickPick<SessionItem>();
  qp.title = 'Analyze Agent Session';
  // One placeholder throughout (busy shows the reading): a changed one leaves a stale hover behind.
  qp.placeholder = `Choose a ${AGENTS.map((a) => a.label).join(' or ')} session to analyse (newest first)`;
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.busy = true;
  qp.show();
  let open = true;
  const chosen = new Promise<SessionItem | undefined>((resolve) => {
    qp.onDidAccept(() => resolve(qp.selectedItems[0] ?? qp.activeItems[0]));
    qp.onDidHide(() => {
      open = false;
      resolve(undefined);
    });
  });
  const fill = (async (): Promise<void> => {
    const sessions = await listLocalSessions(roots);
    const items = sessions.map(itemFor);
    const none: SessionItem = { label: '$(info) No local sessions found', detail: `Looked in ${roots.map((r) => r.root).join(', ')} (agentTrace.sessionRoots)`, session: null, alwaysShow: true };
    qp.items = sessions.length > 0 ? [...items, OPEN_FILE_ITEM] : [none, OPEN_FILE_ITEM];
    if (sessions.length === 0) qp.activeItems = [OPEN_FILE_ITEM];
    for (const item of items) {
      if (!open) return;
      let stats: SessionStats | string;
      try {
        stats = await readSessionStats(item.session!);
      } catch (e) {
        stats = `could not read: ${e instanceof Error ? e.message : String(e)}`;
        log.warn(`Reading ${item.session!.path}: ${stats}`);
      }
      describe(item, item.session!, stats);
      // Re-assigning the rows redraws them; keep the row the user is on.
      const active = qp.activeItems;
      qp.items = [...items, OPEN_FILE_ITEM];
      qp.activeItems = active;
    }
  })()
    .catch((e: unknown) => log.error(`Listing agent sessions: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`))
    .finally(() => {
      qp.busy = false;
    });
  let item: SessionItem | undefined;
  if (hook) {
    await fill;
    item = hook.pick(qp.items);
  } else {
    item = await chosen;
  }
  qp.dispose();
  if (!item) return undefined;
  if (item.session) return vscode.Uri.file(item.session.path);
  const picked = await vscode.window.showOpenDialog({
    title: 'Analyze Agent Session',
    canSelectMany: false,
    openLabel: 'Analyze',
    filters: { 'Agent traces': ['jsonl', 'json', 'traj'] },
  });
  return picked?.[0];
}
