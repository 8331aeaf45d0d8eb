import type { SessionSummary } from '../../src/core/analysis/sessionSummary';
import type { CostSummary } from '../../src/core/cost/costTypes';
import type { AnalysisView, DiagnosticView, SessionCostFigures } from '../../src/core/view/traceView';
import { formatCount, formatDuration, formatPercent, formatUsd } from '../../src/core/text/formatNumbers';
import { shortSessionId } from '../../src/core/view/sessionList';
import { headlineGroups, readLoopSort } from '../analysis/analysisModel';
import type { LoopSort } from '../analysis/analysisModel';
import type { Figure, FigureGroup } from '../shared/figures';
import { OTHER_INPUT_KINDS, OTHER_INPUT_LABELS } from '../../src/core/trace/model';
import type { BarView } from '../timeline/timelineModel';
import type { CustomTtl } from '../cost/costModel';

/** The summary strip of a session, formatted; unknown figures read "unknown", never 0. The ratios carry their published ranges. */
export function summaryFigures(
  s: SessionSummary,
  analysis?: AnalysisView,
  cost?: SessionCostFigures | null,
  whole?: WholeTraceCost | null,
): FigureGroup[] {
  const t = s.tokens;
  return [
    {
      label: 'Activity',
      figures: [
        {
          name: 'llmCalls',
          label: 'LLM calls',
          value: formatCount(s.llmCalls),
          hint: 'Requests to the model in this session',
        },
        { name: 'userTurns', label: 'User turns', value: formatCount(s.userTurns), hint: 'Prompts typed by the user' },
        ...otherInputsFigure(s),
        ...(s.apiErrors > 0
          ? [
              {
                name: 'apiErrors',
                label: 'API errors',
                value: formatCount(s.apiErrors),
                hint: 'Requests that failed (rate limits, overload) and were retried or given up; marked on the timeline and listed under Diagnostics',
              },
            ]
          : []),
        {
          name: 'toolCalls',
          label: 'Tool calls',
          value: toolCallsValue(s),
          hint: 'Tool calls the model made, how many failed, and how many of those the user denied (a permission prompt answered no)',
        },
      ],
    },
    {
      label: 'Tokens',
      figures: [
        { name: 'input', label: 'Input', value: formatCount(t.input), hint: 'Σ prompt tokens: cached + appended' },
        {
          name: 'cached',
          label: 'Cached',
          value: formatCount(t.cached),
          hint: 'Σ prompt tokens served from the prefix cache',
        },
        {
          name: 'appended',
          label: 'Appended',
          value: formatCount(t.appended),
          hint: 'Σ prompt tokens that needed prefill',
        },
        { name: 'output', label: 'Output', value: formatCount(t.output), hint: 'Σ generated tokens' },
        {
          name: 'cacheWrite',
          label: 'Cache write',
          value: formatCount(t.cacheWrite),
          hint: 'Σ tokens written to the provider cache',
        },
        ...unattributedFigure(s),
      ],
    },
    ...(cost ? costGroups(cost, whole ?? null) : []),
    ...headlineGroups(s, analysis),
  ];
}

/** "120 (7 failed, 2 denied)": the denied are among the failed, said only when there are any. */
function toolCallsValue(s: SessionSummary): string {
  if (s.failedToolCalls === 0) return formatCount(s.toolCalls);
  const denied = s.deniedToolCalls > 0 ? `, ${formatCount(s.deniedToolCalls)} denied` : '';
  return `${formatCount(s.toolCalls)} (${formatCount(s.failedToolCalls)} failed${denied})`;
}

/** Tokens the agent's own session totals count beyond the calls (OpenCode), when there are any: never spread over the calls. */
function unattributedFigure(s: SessionSummary): Figure[] {
  const u = s.unattributedTokens;
  if (!u) return [];
  return [
    {
      name: 'unattributed',
      label: 'Unattributed',
      value: `${formatCount(u.input)} in, ${formatCount(u.output)} out`,
      hint: `The agent's own session totals count these tokens beyond the sum over its calls (${formatCount(u.cached)} of the input cached); no call in the trace carries them, so they are in no other figure`,
    },
  ];
}

/** One of the three figures a user looks for first, above the timeline. */
export interface KeyFigure {
  /** Stable `data-key-figure` key. */
  name: 'cost' | 'cacheHitRate' | 'failedToolCalls';
  label: string;
  value: string;
  /** What it counts, for the hover. */
  hint: string;
}

/**
 * The session's cost, cache hit rate and failed tool calls: what a user looks for first,
 * on the first screen beside the timeline (the full strip follows it). Unknown is
 * "unknown", never 0; a session without prices says so rather than $0.
 */
export function keyFigures(s: SessionSummary, cost: SessionCostFigures | null | undefined): KeyFigure[] {
  const c = cost?.summary ?? null;
  const costValue = !c
    ? 'no prices'
    : `${formatUsd(c.totalUsd)}${c.unpricedCalls > 0 ? ` + ${formatCount(c.unpricedCalls)} unpriced` : ''}`;
  return [
    {
      name: 'cost',
      label: 'Cost',
      value: costValue,
      hint: c
        ? 'This session at its models\u2019 prices (the Cost figures below split it by kind and model)'
        : 'No price was found for this session\u2019s models (agentTrace.prices adds your own)',
    },
    {
      name: 'cacheHitRate',
      label: 'Cache hit rate',
      value: formatPercent(s.cacheHitRate),
      hint: 'Σ cached / Σ input tokens: the share of prompt tokens served from the prefix cache',
    },
    {
      name: 'failedToolCalls',
      label: 'Failed tool calls',
      value: s.toolCalls === 0 ? '0' : `${formatCount(s.failedToolCalls)} of ${formatCount(s.toolCalls)}`,
      hint: 'Tool calls whose result was an error (marked ▼ on the timeline; F jumps to the next)',
    },
  ];
}

/** "12 (9 notifications, 3 local commands)": user-role records that no person typed, when the format tells them apart and there are any. */
function otherInputsFigure(s: SessionSummary): Figure[] {
  const other = s.otherInputs;
  if (!other) return [];
  const kinds = OTHER_INPUT_KINDS.filter((k) => other[k] > 0);
  if (kinds.length === 0) return [];
  const total = kinds.reduce((n, k) => n + other[k], 0);
  const parts = kinds
    .map((k) => `${formatCount(other[k])} ${OTHER_INPUT_LABELS[k][other[k] === 1 ? 0 : 1]}`)
    .join(', ');
  return [
    {
      name: 'otherInputs',
      label: 'Not typed',
      value: `${formatCount(total)} (${parts})`,
      hint: 'User-role records the agent wrote itself, by kind: not counted as user turns',
    },
  ];
}

/** Models shown by name in the summary; the rest are summed into one figure. */
const MODELS_SHOWN = 4;

/** The whole trace's cost, shown with a main session that has sub-agents. */
export interface WholeTraceCost {
  summary: CostSummary;
  sessions: number;
}

/** The whole trace's cost when the session is a main thread and the trace holds more sessions. */
export function wholeTraceCost(
  trace: { cost: CostSummary | null; sessionCount: number },
  summary: SessionSummary,
): WholeTraceCost | null {
  if (!trace.cost || trace.sessionCount < 2 || summary.role !== 'main') return null;
  return { summary: trace.cost, sessions: trace.sessionCount };
}

/** The session's cost: total and by kind, then by model. Unknown is "unknown", never $0. */
export function costGroups(cost: SessionCostFigures, whole: WholeTraceCost | null = null): FigureGroup[] {
  const c = cost.summary;
  const k = c.byKind;
  const priced = c.pricedCalls > 0;
  const kind = (v: number): string => (priced ? formatUsd(v) : formatUsd(null));
  const unpriced = c.unpricedCalls > 0 ? ` + ${formatCount(c.unpricedCalls)} unpriced` : '';
  const byKind: FigureGroup = {
    label: 'Cost',
    figures: [
      {
        name: 'costTotal',
        label: 'Total',
        value: `${formatUsd(c.totalUsd)}${unpriced}`,
        hint: `Σ over the ${formatCount(c.pricedCalls)} priced calls, each at its own date, tier and rates${c.unpricedCalls > 0 ? `; ${formatCount(c.unpricedCalls)} calls have no price and are not in it (see Diagnostics)` : ''}. Prices: ${c.priceSource}`,
      },
      {
        name: 'costInput',
        label: 'Uncached input',
        value: kind(k.input),
        hint: 'Prompt tokens neither read from nor written to the cache, at the input price',
      },
      {
        name: 'costCacheRead',
        label: 'Cache read',
        value: kind(k.cacheRead),
        hint: 'Cached tokens, at the cache-read price',
      },
      {
        name: 'costCacheWrite5m',
        label: 'Write 5 min',
        value: kind(k.cacheWrite5m),
        hint: 'Tokens written to the cache for 5 minutes, at that write price (writes without a TTL split count here)',
      },
      {
        name: 'costCacheWrite1h',
        label: 'Write 1 h',
        value: kind(k.cacheWrite1h),
        hint: 'Tokens written to the cache for 1 hour, at that (higher) write price',
      },
      {
        name: 'costOutput',
        label: 'Output',
        value: kind(k.output),
        hint: 'Generated tokens, reasoning included, at the output price',
      },
      ...(k.gpuTime > 0
        ? [
            {
              name: 'costGpuTime',
              label: 'GPU time',
              value: formatUsd(k.gpuTime),
              hint: 'Self-hosted calls priced per GPU-hour (agentTrace.prices)',
            },
          ]
        : []),
      ...(whole
        ? [
            {
              name: 'costWholeTrace',
              label: 'Whole trace',
              value: `${formatUsd(whole.summary.totalUsd)}${whole.summary.unpricedCalls > 0 ? ` + ${formatCount(whole.summary.unpricedCalls)} unpriced` : ''}`,
              hint: `All ${formatCount(whole.sessions)} sessions of this trace: the main threads with their sub-agents and compaction agents`,
            },
          ]
        : []),
      ...(cost.reportedUsd !== null
        ? [
            {
              name: 'costReported',
              label: 'Agent reported',
              value: formatUsd(cost.reportedUsd),
              hint: 'The cost the agent itself logged for the session, beside ours',
            },
          ]
        : []),
    ],
  };
  const models = Object.entries(c.byModel).sort((a, b) => (b[1].usd ?? -1) - (a[1].usd ?? -1));
  if (models.length === 0) return [byKind];
  const shown = models.slice(0, MODELS_SHOWN);
  const rest = models.slice(MODELS_SHOWN);
  const restUsd = rest.reduce<number | null>((sum, [, m]) => (m.usd === null ? sum : (sum ?? 0) + m.usd), null);
  const byModel: FigureGroup = {
    label: 'Cost by model',
    figures: [
      ...shown.map(([model, m], i) => ({
        name: `costModel${i}`,
        label: model,
        value: `${formatUsd(m.usd)}${m.unpricedCalls > 0 && m.usd !== null ? ` + ${formatCount(m.unpricedCalls)} unpriced` : ''}`,
        hint: `${formatCount(m.calls)} calls${m.unpricedCalls > 0 ? `, ${formatCount(m.unpricedCalls)} without a price` : ''}`,
      })),
      ...(rest.length > 0
        ? [
            {
              name: 'costModelRest',
              label: `${rest.length} more models`,
              value: formatUsd(restUsd),
              hint: rest.map(([m]) => m).join(', '),
            },
          ]
        : []),
    ],
  };
  return [byKind, byModel];
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
  /** The file's index in the trace, what `source/revealLine` sends (never a path). */
  fileIndex: number;
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
    fileIndex: d.fileIndex,
    line: Math.max(0, d.line),
  }));
}

/** Record types skipped on purpose, largest first: "Skipped 1,140 progress, 20 file-history-snapshot". Null when none. */
export function skippedSummary(skipped: Record<string, number>, shown = 4): string | null {
  const entries = Object.entries(skipped)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (entries.length === 0) return null;
  const parts = entries.slice(0, shown).map(([type, n]) => `${formatCount(n)} ${type}`);
  const rest = entries.slice(shown);
  if (rest.length > 0)
    parts.push(
      `${formatCount(rest.reduce((a, [, n]) => a + n, 0))} of ${rest.length} other ${rest.length === 1 ? 'type' : 'types'}`,
    );
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
  /** What the timeline bars measure. */
  barView?: BarView;
  /** The extra cache TTL the cost panel replays. */
  costTtl?: CustomTtl;
  /** The timeline's zoom window and filter, for the session they were on: the view comes back as it was after a rebuild. */
  view?: TimelineViewState;
  /** How far the page was scrolled (CSS pixels). */
  scrollY?: number;
  /** Whether the call details show the call's transcript. */
  transcriptOpen?: boolean;
}

/** Which calls the timeline showed: its filter (`all`, `failed`, `tool:Bash`…) and its window in slots, on one session. */
export interface TimelineViewState {
  sessionId: string;
  filter: string;
  lo: number;
  hi: number;
}

/** A stored view state, or null when it is not one (an older build, a hand-edited state). */
export function readViewState(raw: unknown): TimelineViewState | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const v = raw as Record<string, unknown>;
  const { sessionId, filter, lo, hi } = v;
  if (typeof sessionId !== 'string' || typeof filter !== 'string' || typeof lo !== 'number' || typeof hi !== 'number')
    return null;
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || lo < 0 || hi <= lo) return null;
  return { sessionId, filter, lo, hi };
}

/** Reads persisted state defensively: it may come from an older build. */
export function readPersistedState(raw: unknown): PersistedState {
  if (typeof raw !== 'object' || raw === null) return {};
  const r = raw as Record<string, unknown>;
  const out: PersistedState = {};
  if (typeof r['sessionId'] === 'string') out.sessionId = r['sessionId'];
  if (
    r['callIndex'] === null ||
    (typeof r['callIndex'] === 'number' && Number.isInteger(r['callIndex']) && r['callIndex'] >= 0)
  )
    out.callIndex = r['callIndex'];
  if (typeof r['showCached'] === 'boolean') out.showCached = r['showCached'];
  if (typeof r['fingerprintOpen'] === 'boolean') out.fingerprintOpen = r['fingerprintOpen'];
  if (typeof r['transcriptOpen'] === 'boolean') out.transcriptOpen = r['transcriptOpen'];
  if (typeof r['whatIfOpen'] === 'boolean') out.whatIfOpen = r['whatIfOpen'];
  if (typeof r['whatIf'] === 'object' && r['whatIf'] !== null) out.whatIf = r['whatIf'];
  if (r['barView'] === 'tokens' || r['barView'] === 'cost') out.barView = r['barView'];
  const ttl = r['costTtl'] as Record<string, unknown> | null | undefined;
  if (
    typeof ttl === 'object' &&
    ttl !== null &&
    typeof ttl['minutes'] === 'number' &&
    ttl['minutes'] > 0 &&
    (ttl['writeMultiple'] === null || (typeof ttl['writeMultiple'] === 'number' && ttl['writeMultiple'] >= 0))
  ) {
    out.costTtl = { minutes: ttl['minutes'], writeMultiple: ttl['writeMultiple'] as number | null };
  }
  const view = readViewState(r['view']);
  if (view) out.view = view;
  if (typeof r['scrollY'] === 'number' && Number.isFinite(r['scrollY']) && r['scrollY'] >= 0)
    out.scrollY = r['scrollY'];
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
