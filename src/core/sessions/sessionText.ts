import { formatCompact, formatPercent } from '../report/formatNumbers';
import { uiText } from '../text/safeText';
import { durationMs } from './sessionQuery';
import type { SessionRow } from './sessionQuery';

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

/** A session's label: its title (trace text, made plain), else its file name. */
export function sessionLabel(row: SessionRow, max = 80): string {
  if (row.role !== 'main') {
    const kind = row.role === 'compaction' ? 'compaction agent' : 'sub-agent';
    return plainText(row.title ? `${kind}: ${row.title}` : `${kind} ${row.key}`, max);
  }
  return plainText(row.title ?? lastSegment(row.path), max);
}

/** The figures of a row, short, for the tree's description: "14:05 · 12 min · 41 calls · hit 85.5% · $0.42 · 13 failed · 1 loop · live". */
export function sessionFigures(row: SessionRow): string {
  const parts: string[] = [];
  if (row.startMs !== null) parts.push(localTime(row.startMs));
  parts.push(shortDuration(durationMs(row)));
  parts.push(plural(row.calls, 'call'));
  parts.push(`hit ${formatPercent(row.cacheHitRate)}`);
  parts.push(formatUsd(row.costUsd));
  if (row.failedToolCalls > 0) parts.push(`${row.failedToolCalls} failed`);
  if (row.retryLoops > 0) parts.push(plural(row.retryLoops, 'loop'));
  if (row.live) parts.push('● live');
  if (row.fileStatus === 'deleted') parts.push('file deleted');
  if (row.fileStatus === 'problem') parts.push('unreadable');
  return parts.join(' · ');
}

/** The tooltip of a row: every figure on its own line, plain text. */
export function sessionTooltip(row: SessionRow): string {
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
    `Cost: ${row.costUsd === null ? 'unknown' : formatUsd(row.costUsd)}${row.unpricedCalls > 0 ? ` (${plural(row.unpricedCalls, 'call')} not priced)` : ''}`,
    `Tool calls: ${row.toolCalls}, failed ${row.failedToolCalls}; ${plural(row.retryLoops, 'retry loop')}`,
  ];
  if (row.live) lines.push('Live: the file grew in the last 2 minutes.');
  if (row.fileStatus === 'deleted') lines.push('The file is gone: these are the figures last read.');
  if (row.problem) lines.push(`Not read: ${plainText(row.problem, 200)}`);
  lines.push('', plainText(row.path, 300));
  return lines.join('\n');
}
