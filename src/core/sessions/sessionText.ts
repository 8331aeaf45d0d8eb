import { formatCompact, formatPercent } from '../text/formatNumbers';
import { uiText } from '../text/safeText';
import { durationMs, isLive, localDay } from './sessionQuery';
import type { SessionRow, ThreadCost } from './sessionQuery';
import { isIdName } from './sessionTitle';

/**
 * Words for a session in VS Code's own UI (tree items, tooltips, the status bar, quick
 * picks) and in a terminal. A session's title, project and path come from the trace
 * (hostile text): they pass through `plainText`, that is main's `uiText` (src/core/text/safeText.ts), which shows control and bidi
 * characters as visible escapes, breaks `$(icon)` and Markdown links with a zero-width
 * space so they neither render nor run, and clips. Every other word here is ours.
 */

/** Trace text as one plain line, through the one sanitiser of VS Code's UI text (uiText): escapes visible, icons and links broken, at most `max` characters. */
export function plainText(text: string, max = 120): string {
  return uiText(text, { max }).trim();
}

/** The last part of a path (Windows or POSIX separators). */
export function lastSegment(path: string): string {
  const parts = path.split(/[\\/]/).filter((p) => p !== '');
  return parts[parts.length - 1] ?? path;
}

/** "$0.42", "$12.30", "<$0.01", or "cost unknown". */
export function formatUsd(usd: number | null): string {
  if (usd === null) return 'cost ?';
  if (usd > 0 && usd < 0.01) return '<$0.01';
  return `$${usd.toFixed(2)}`;
}

/** "14:05" in local time. */
export function localTime(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

/** "12 min", "2 h 05 min", "40 s". */
export function shortDuration(ms: number | null): string {
  if (ms === null) return '?';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A folder named by a hash (Gemini CLI's older project folders, a 64-digit SHA-256) names no one: shown as its first digits. */
const HASH_NAME = /^[0-9a-f]{32,}$/i;

/** A project's short name for a tree row or a picker: its folder's name (a hash folder as "project f53b52ad…"), plain text. */
export function projectLabel(project: string, max = 80): string {
  const name = lastSegment(project);
  return plainText(HASH_NAME.test(name) ? `project ${name.slice(0, 8)}…` : name, max);
}

/** "2026-02-12 14:05", local time. */
export function localDateTime(ms: number): string {
  return `${localDay(ms)} ${localTime(ms)}`;
}

/**
 * How long a tree row's label may be. VS Code draws the description after the label in
 * one line: at its default 300 px sidebar, a session row three levels down has about 215 px,
 * and a longer label (about 7 px a character) leaves none of it to the figures.
 */
export const TREE_LABEL_MAX = 20;

/**
 * A session's label: its title (the agent's own name for it, else the first prompt typed;
 * trace text, made plain), else what it is and when it started, never its file's UUID.
 */
export function sessionLabel(row: SessionRow, max = 80): string {
  if (row.role !== 'main') {
    const kind = row.role === 'compaction' ? 'compaction agent' : 'sub-agent';
    return plainText(row.title ? `${kind}: ${row.title}` : `${kind} ${row.key}`, max);
  }
  if (row.title) return plainText(row.title, max);
  const file = lastSegment(row.path);
  if (!isIdName(file)) return plainText(file, max);
  return plainText(row.startMs !== null ? `Session of ${localDateTime(row.startMs)}` : 'Untitled session', max);
}

/** "$2.91", or "$2.91 with 2 sub-agents" when the figure includes sub-agents (it says which). */
export function threadCostText(row: SessionRow, cost: ThreadCost | null): string {
  if (!cost || cost.subAgents === 0) return formatUsd(row.costUsd);
  return `${formatUsd(cost.usd)} with ${plural(cost.subAgents, 'sub-agent')}`;
}

/** What a row's description and tooltip need beyond the row: its cost with sub-agents, the time now, and the view's grouping. */
export interface RowContext {
  /** The row's cost with the sub-agents nested under it (SessionNode.cost); its own cost alone when absent. */
  cost?: ThreadCost | null;
  /** Now (ms), for "live". */
  nowMs: number;
  /** The rows are not under a day (the flat grouping): the start shows its date, and the project is named. */
  flat?: boolean;
}

/**
 * The figures of a row, most wanted first so a narrow sidebar still shows them, for the
 * tree's description: "$2.91 with 2 sub-agents · 149 calls · hit 98.4% · 11 failed · 1 loop · 14:05 · 41 min · ● live".
 */
export function sessionFigures(row: SessionRow, context: RowContext): string {
  const parts: string[] = [];
  parts.push(threadCostText(row, context.cost ?? null));
  parts.push(plural(row.calls, 'call'));
  parts.push(`hit ${formatPercent(row.cacheHitRate)}`);
  if (row.failedToolCalls > 0) parts.push(`${row.failedToolCalls} failed`);
  if (row.retryLoops > 0) parts.push(plural(row.retryLoops, 'loop'));
  if (row.startMs !== null) parts.push(context.flat ? localDateTime(row.startMs) : localTime(row.startMs));
  parts.push(shortDuration(durationMs(row)));
  if (context.flat && row.role === 'main') parts.push(projectLabel(row.project, 40));
  if (isLive(row, context.nowMs)) parts.push('● live');
  if (row.fileStatus === 'deleted') parts.push('file deleted');
  if (row.fileStatus === 'problem') parts.push('unreadable');
  return parts.join(' · ');
}

/** The cost line of a tooltip: its own cost, and with its sub-agents when it has any. */
function costLine(row: SessionRow, cost: ThreadCost | null): string {
  const own = row.costUsd === null ? 'unknown' : formatUsd(row.costUsd);
  if (!cost || cost.subAgents === 0)
    return `Cost: ${own}${row.unpricedCalls > 0 ? ` (${plural(row.unpricedCalls, 'call')} not priced)` : ''}`;
  const unpriced = cost.unpricedCalls > 0 ? ` (${plural(cost.unpricedCalls, 'call')} not priced)` : '';
  return `Cost with its ${plural(cost.subAgents, 'sub-agent')}: ${cost.usd === null ? 'unknown' : formatUsd(cost.usd)}${unpriced}; its own calls: ${own}`;
}

/** The tooltip of a row: every figure on its own line, plain text. */
export function sessionTooltip(row: SessionRow, context: RowContext): string {
  const t = row.tokens;
  const lines = [
    sessionLabel(row, 200),
    '',
    `${plainText(row.agent ?? row.agentId, 60)}${row.model ? ` · ${plainText(row.model, 60)}` : ''}`,
    `Project: ${plainText(row.project, 200)}`,
    `Started: ${row.startMs === null ? 'unknown' : new Date(row.startMs).toLocaleString()} · lasted ${shortDuration(durationMs(row))}`,
    `${plural(row.calls, 'LLM call')}, ${plural(row.userTurns, 'user turn')}`,
    `Tokens: input ${formatCompact(t.input)}, cached ${formatCompact(t.cached)}, appended ${formatCompact(t.appended)}, output ${formatCompact(t.output)}`,
    `Cache hit rate: ${formatPercent(row.cacheHitRate)}; cache misses: ${row.cacheMisses}`,
    costLine(row, context.cost ?? null),
    `Tool calls: ${row.toolCalls}, failed ${row.failedToolCalls}; ${plural(row.retryLoops, 'retry loop')}`,
  ];
  if (isLive(row, context.nowMs)) lines.push('Live: its file was written in the last 2 minutes.');
  if (row.fileStatus === 'deleted') lines.push('The file is gone: these are the figures last read.');
  if (row.problem) lines.push(`Not read: ${plainText(row.problem, 200)}`);
  lines.push('', plainText(row.path, 300));
  return lines.join('\n');
}
