import * as vscode from 'vscode';
import { priceTrace } from '../core/cost/callCost';
import type { PriceBook } from '../core/cost/costTypes';
import { formatPercent } from '../core/text/formatNumbers';
import { uiText } from '../core/text/safeText';
import { parseTrace } from '../core/trace/parseTrace';
import type { TraceFile } from '../core/trace/parseTrace';
import { maxFileBytes, sessionRoots } from './settings';
import { baseName, costWords } from './traceAnalysis';
import { scopeFigures } from '../core/report/traceScopes';
import { tooLargeMessage, yieldToEventLoop } from './traceLoader';
import { companionFiles, listCompanions, regularFileChunks } from '../node/traceFiles';
import { basename, join } from 'node:path';
import { assembleSession, sessionFile } from '../node/agentSessions';
import type { LocalSession } from '../node/agentSessions';
import { listLocalSessions } from '../node/sessions/agentRegistry';

/** Sessions listed at most: the newest ones, so a years-old ~/.claude stays quick. */
export const MAX_LISTED_SESSIONS = 50;

export { decodeClaudeProject } from '../node/agentSessions';
export { listLocalSessions } from '../node/sessions/agentRegistry';
export type { LocalSession } from '../node/agentSessions';

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

/** What a row shows once the log is read: the whole file's figures (its sessions, sub-agents included). */
export interface SessionStats {
  /** Sessions in the file (main threads, sub-agents and compaction agents) and how many are sub-agents. */
  sessions: number;
  subAgents: number;
  calls: number;
  cacheHitRate: number | null;
  failedToolCalls: number;
  cwd: string | null;
  /** What the whole trace cost, sub-agents included (priced calls), and how many calls could not be priced. */
  costUsd: number | null;
  unpricedCalls: number;
}

/** Reads one session log with its sub-agent logs and sums every session in it. */
export async function readSessionStats(session: LocalSession, prices: PriceBook): Promise<SessionStats | string> {
  const max = maxFileBytes();
  if (session.sizeBytes > max) return tooLargeMessage(basename(session.path), session.sizeBytes, max);
  const assembled = await assembleSession(session);
  const files: TraceFile[] = [];
  if (assembled !== null) files.push({ key: basename(session.path), bytes: new TextEncoder().encode(assembled) });
  else {
    // Sub-agent logs beside it (`<session>/subagents/`, or 2.0.x sibling `agent-*.jsonl`) are read too (the safe ones): the cost includes them.
    const listing = await listCompanions(session.path);
    files.push(
      { key: basename(session.path), bytes: regularFileChunks(session.path), notes: listing.refused },
      ...companionFiles(listing),
    );
  }
  const parsed = await parseTrace(files, { yieldControl: yieldToEventLoop });
  if (parsed.problem) return parsed.problem.message;
  // One scope, the whole file (sub-agents included), as its cost and the inspector's session picker count it.
  const cost = priceTrace(parsed.model, prices).total;
  const whole = scopeFigures(
    parsed.model.sessions.map((s) => {
      let cached = 0;
      let input = 0;
      let known = false;
      let failed = 0;
      for (const c of s.calls) {
        if (c.tokens.cached !== null && c.tokens.input !== null) {
          cached += c.tokens.cached;
          input += c.tokens.input;
          known = true;
        }
        failed += c.toolCalls.filter((t) => t.isError === true).length;
      }
      return {
        role: s.role,
        llmCalls: s.calls.length,
        userTurns: s.turns.length,
        cached: known ? cached : null,
        input: known ? input : null,
        failedToolCalls: failed,
        retryLoops: 0,
      };
    }),
  );
  const cwd = parsed.model.sessions.find((s) => s.role === 'main' && s.cwd !== null)?.cwd ?? null;
  return {
    sessions: whole.sessions,
    subAgents: whole.subAgents,
    calls: whole.llmCalls,
    cacheHitRate: whole.cacheHitRate,
    failedToolCalls: whole.failedToolCalls,
    cwd,
    costUsd: cost.totalUsd,
    unpricedCalls: cost.unpricedCalls,
  };
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
  // The cwd, folder and file names come from the logs and the disk: plain text in the rows
  // (quick picks render `$(icon)`), clipped; only the icons written here render.
  const project = typeof stats === 'object' && stats?.cwd ? stats.cwd : session.project;
  const file = uiText(basename(session.path), { max: 120 });
  item.label = project ? uiText(baseName(project), { max: 80 }) : file;
  item.description = `${session.agent} · ${localDate(session.mtimeMs)}${project ? ` · ${uiText(project, { max: 200 })}` : ''}`;
  if (stats === null) item.detail = '$(loading~spin) reading…';
  else if (typeof stats === 'string') item.detail = `$(warning) ${uiText(stats, { max: 300 })}`;
  else {
    const calls = `${stats.calls} call${stats.calls === 1 ? '' : 's'}${stats.sessions > 1 ? ` in ${stats.sessions} sessions (${stats.subAgents} sub-agent${stats.subAgents === 1 ? '' : 's'})` : ''}`;
    const failed = `${stats.failedToolCalls} failed tool call${stats.failedToolCalls === 1 ? '' : 's'}`;
    item.detail = `${calls} · ${costWords(stats.costUsd, stats.unpricedCalls)} · cache hit ${formatPercent(stats.cacheHitRate)} · ${failed} · ${file}`;
  }
}

const OPEN_FILE_ITEM: SessionItem = {
  label: '$(folder-opened) Open a trace file…',
  detail: 'Any supported trace: *.jsonl, *.json, *.traj',
  session: null,
  alwaysShow: true,
};

/**
 * Offers the local agent sessions (newest first) in a QuickPick. Rows appear at once
 * with "reading…" and fill in as each log is parsed, newest first; parsing stops when
 * the pick closes. Resolves to the chosen file, or undefined when dismissed.
 */
export async function pickLocalSession(
  log: vscode.LogOutputChannel,
  storageDir: string,
  prices: PriceBook,
  hook: PickHook | null = null,
): Promise<vscode.Uri | undefined> {
  const roots = sessionRoots(storageDir);
  const qp = vscode.window.createQuickPick<SessionItem>();
  qp.title = 'Analyze Agent Session';
  // One placeholder throughout (busy shows the reading): a changed one leaves a stale hover behind.
  qp.placeholder = 'Choose a local agent session to analyse (newest first)';
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
    const { sessions, notes } = await listLocalSessions(roots, MAX_LISTED_SESSIONS);
    const items = sessions.map(itemFor);
    // Sessions discovery knows of but cannot list (OpenCode's database) are said, not dropped.
    const noteItems: SessionItem[] = notes.map((n) => ({
      label: '$(info) Not listed',
      detail: n,
      session: null,
      alwaysShow: true,
    }));
    const looked = [
      roots.claudeCode,
      roots.codex,
      roots.geminiCli,
      roots.openCode,
      roots.openHands,
      roots.cline,
      roots.rooCode,
      ...roots.aiperf,
      roots.vscodeCopilot,
      roots.openTelemetry,
    ].join(', ');
    const none: SessionItem = {
      label: '$(info) No local sessions found',
      detail: `Looked in ${looked} (agentTrace.sessionRoots)`,
      session: null,
      alwaysShow: true,
    };
    const tail = [...noteItems, OPEN_FILE_ITEM];
    qp.items = sessions.length > 0 ? [...items, ...tail] : [none, ...tail];
    if (sessions.length === 0) qp.activeItems = [OPEN_FILE_ITEM];
    for (const item of items) {
      if (!open) return;
      let stats: SessionStats | string;
      try {
        stats = await readSessionStats(item.session!, prices);
      } catch (e) {
        stats = `could not read: ${e instanceof Error ? e.message : String(e)}`;
        log.warn(`Reading ${uiText(item.session!.path, { max: 2000 })}: ${uiText(stats, { max: 2000 })}`);
      }
      describe(item, item.session!, stats);
      // Re-assigning the rows redraws them; keep the row the user is on.
      const active = qp.activeItems;
      qp.items = [...items, ...tail];
      qp.activeItems = active;
    }
  })()
    .catch((e: unknown) =>
      log.error(
        `Listing agent sessions: ${uiText(e instanceof Error ? (e.stack ?? e.message) : String(e), { max: 4000, multiline: true })}`,
      ),
    )
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
  // A session kept in several files (OpenHands events, OpenCode storage) opens as one file written beside this extension's storage.
  if (item.session) return vscode.Uri.file(await sessionFile(item.session, join(storageDir, 'assembled-sessions')));
  const picked = await vscode.window.showOpenDialog({
    title: 'Analyze Agent Session',
    canSelectMany: false,
    openLabel: 'Analyze',
    filters: { 'Agent traces': ['jsonl', 'json', 'traj'] },
  });
  return picked?.[0];
}
