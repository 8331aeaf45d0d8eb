import type { SessionSummary } from '../src/core/analysis/sessionSummary';
import type { AnalysisView, DiagnosticView } from '../src/core/view/traceView';
import { formatCount, formatDuration } from '../src/core/report/formatNumbers';
import { shortSessionId } from '../src/core/view/sessionList';
import { headlineGroups, readLoopSort } from './analysis/analysisModel';
import type { LoopSort } from './analysis/analysisModel';
import type { Figure, FigureGroup } from './shared/figures';
import { OTHER_INPUT_KINDS } from '../src/core/trace/model';
import type { OtherInputs } from '../src/core/trace/model';

/** The summary strip of a session, formatted; unknown figures read "unknown", never 0. The ratios carry their published ranges. */
export function summaryFigures(s: SessionSummary, analysis?: AnalysisView): FigureGroup[] {
  const t = s.tokens;
  return [
    {
      label: 'Activity',
      figures: [
        { name: 'llmCalls', label: 'LLM calls', value: formatCount(s.llmCalls), hint: 'Requests to the model in this session' },
        { name: 'userTurns', label: 'User turns', value: formatCount(s.userTurns), hint: 'Prompts typed by the user' },
        ...otherInputsFigure(s),
        ...(s.apiErrors > 0 ? [{ name: 'apiErrors', label: 'API errors', value: formatCount(s.apiErrors), hint: 'Requests that failed (rate limits, overload) and were retried or given up; marked on the timeline and listed under Diagnostics' }] : []),
        { name: 'toolCalls', label: 'Tool calls', value: s.failedToolCalls > 0 ? `${formatCount(s.toolCalls)} (${formatCount(s.failedToolCalls)} failed)` : formatCount(s.toolCalls), hint: 'Tool calls the model made, and how many failed' },
      ],
    },
    {
      label: 'Tokens',
      figures: [
        { name: 'input', label: 'Input', value: formatCount(t.input), hint: 'Σ prompt tokens: cached + appended' },
        { name: 'cached', label: 'Cached', value: formatCount(t.cached), hint: 'Σ prompt tokens served from the prefix cache' },
        { name: 'appended', label: 'Appended', value: formatCount(t.appended), hint: 'Σ prompt tokens that needed prefill' },
        { name: 'output', label: 'Output', value: formatCount(t.output), hint: 'Σ generated tokens' },
        { name: 'cacheWrite', label: 'Cache write', value: formatCount(t.cacheWrite), hint: 'Σ tokens written to the provider cache' },
      ],
    },
    ...headlineGroups(s, analysis),
  ];
}

/** Singular and plural names of each kind of input no person typed. */
const OTHER_INPUT_LABELS: Record<keyof OtherInputs, [string, string]> = {
  notification: ['notification', 'notifications'],
  localCommand: ['local command', 'local commands'],
  hookOutput: ['hook output', 'hook outputs'],
  compactionSummary: ['compaction summary', 'compaction summaries'],
  interruption: ['interruption', 'interruptions'],
  injected: ['injected context', 'injected contexts'],
};

/** "12 (9 notifications, 3 local commands)": user-role records that no person typed, when the format tells them apart and there are any. */
function otherInputsFigure(s: SessionSummary): Figure[] {
  const other = s.otherInputs;
  if (!other) return [];
  const kinds = OTHER_INPUT_KINDS.filter((k) => other[k] > 0);
  if (kinds.length === 0) return [];
  const total = kinds.reduce((n, k) => n + other[k], 0);
  const parts = kinds.map((k) => `${formatCount(other[k])} ${OTHER_INPUT_LABELS[k][other[k] === 1 ? 0 : 1]}`).join(', ');
  return [{ name: 'otherInputs', label: 'Not typed', value: `${formatCount(total)} (${parts})`, hint: 'User-role records the agent wrote itself, by kind: not counted as user turns' }];
}

/** How long a session ran, from its first prompt or call to its last response; null when unknown. */
export function sessionDuration(s: SessionSummary): number | null {
  return s.startMs !== null && s.endMs !== null ? s.endMs - s.startMs : null;
}

/** The line under the header: kind, id, agent, model, start and duration. */
export function sessionMetaText(s: SessionSummary, formatStart: (ms: number) => string): string {
  const duration = sessionDuration(s);
  return [
    s.role === 'main' ? 'Main session' : s.role === 'compaction' ? 'Compaction agent' : 'Sub-agent',
    shortSessionId(s.id),
    s.agent ? `${s.agent}${s.agentVersion ? ` ${s.agentVersion}` : ''}` : null,
    s.model,
    s.startMs !== null ? `started ${formatStart(s.startMs)}` : null,
    duration !== null ? `ran ${formatDuration(duration)}` : null,
  ]
    .filter((x): x is string => x !== null)
    .join(' · ');
}

/** A diagnostic as the panel lists it. */
export interface DiagnosticRow {
  icon: 'error' | 'warning' | 'info';
  /** "file.jsonl:12" (1-based), or the file alone for whole-file problems. */
  location: string;
  message: string;
  file: string;
  /** 0-based, as the protocol carries it; whole-file problems reveal the first line. */
  line: number;
}

/** Diagnostics with 1-based line numbers for people, 0-based lines for the host. */
export function diagnosticRows(diagnostics: readonly DiagnosticView[]): DiagnosticRow[] {
  return diagnostics.map((d) => ({
    icon: d.severity,
    location: d.line >= 0 ? `${d.file}:${d.line + 1}` : d.file,
    message: d.message,
    file: d.file,
    line: Math.max(0, d.line),
  }));
}

/** Record types skipped on purpose, largest first: "Skipped 1,140 progress, 20 file-history-snapshot". Null when none. */
export function skippedSummary(skipped: Record<string, number>, shown = 4): string | null {
  const entries = Object.entries(skipped).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (entries.length === 0) return null;
  const parts = entries.slice(0, shown).map(([type, n]) => `${formatCount(n)} ${type}`);
  const rest = entries.slice(shown);
  if (rest.length > 0) parts.push(`${formatCount(rest.reduce((a, [, n]) => a + n, 0))} of ${rest.length} other ${rest.length === 1 ? 'type' : 'types'}`);
  return `Skipped ${parts.join(', ')}`;
}

/** Bytes as MB with one decimal, the unit the progress bar speaks. */
export function formatMegabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Progress text: "Reading trace… 12.3 MB of 40.0 MB (31%)". */
export function progressText(bytesRead: number, totalBytes: number | null): string {
  if (totalBytes === null || totalBytes <= 0) return `Reading trace… ${formatMegabytes(bytesRead)} read`;
  const pct = Math.min(100, Math.floor((bytesRead / totalBytes) * 100));
  return `Reading trace… ${formatMegabytes(bytesRead)} of ${formatMegabytes(totalBytes)} (${pct}%)`;
}

/** UI intent kept across reloads with the webview state (never trace data). */
export interface PersistedState {
  sessionId?: string;
  callIndex?: number | null;
  showCached?: boolean;
  /** Whether the workload fingerprint is expanded. */
  fingerprintOpen?: boolean;
  /** How the retry-loops table is sorted; null keeps the session's order. */
  loopSort?: LoopSort | null;
  /** Whether the what-if panel is expanded. */
  whatIfOpen?: boolean;
  /** The what-if panel's choices for this file (read back through whatIfModel.readScenario). */
  whatIf?: unknown;
}

/** Reads persisted state defensively: it may come from an older build. */
export function readPersistedState(raw: unknown): PersistedState {
  if (typeof raw !== 'object' || raw === null) return {};
  const r = raw as Record<string, unknown>;
  const out: PersistedState = {};
  if (typeof r['sessionId'] === 'string') out.sessionId = r['sessionId'];
  if (r['callIndex'] === null || (typeof r['callIndex'] === 'number' && Number.isInteger(r['callIndex']) && r['callIndex'] >= 0)) out.callIndex = r['callIndex'];
  if (typeof r['showCached'] === 'boolean') out.showCached = r['showCached'];
  if (typeof r['fingerprintOpen'] === 'boolean') out.fingerprintOpen = r['fingerprintOpen'];
  if (typeof r['whatIfOpen'] === 'boolean') out.whatIfOpen = r['whatIfOpen'];
  if (typeof r['whatIf'] === 'object' && r['whatIf'] !== null) out.whatIf = r['whatIf'];
  if (r['loopSort'] === null) out.loopSort = null;
  else if (readLoopSort(r['loopSort'])) out.loopSort = readLoopSort(r['loopSort']);
  return out;
}

/** Merges a change into stored state per key, keeping keys other code may have stored. */
export function mergeState(raw: unknown, patch: PersistedState): Record<string, unknown> {
  const base = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  return { ...base, ...patch };
}

/** Duration of a tool call, or null when unknown. */
export function toolDurationText(ms: number | null): string | null {
  return ms === null ? null : formatDuration(ms);
}
