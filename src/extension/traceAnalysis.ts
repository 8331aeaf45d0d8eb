import { analyzeSession } from '../core/analysis/sessionAnalysis';
import type { AnalysisOptions, SessionAnalysis } from '../core/analysis/sessionAnalysis';
import type { FailingToolCall, RetryLoop } from '../core/analysis/retryLoops';
import { uiText } from '../core/text/safeText';
import { priceTrace } from '../core/cost/callCost';
import type { SessionCost, TraceCost } from '../core/cost/callCost';
import type { PriceBook } from '../core/cost/costTypes';
import { formatPercent, formatUsd } from '../core/text/formatNumbers';
import { costWords, scopeFigures, sessionsWords } from '../core/report/traceScopes';
import type { ScopeSession } from '../core/report/traceScopes';
import type { Session } from '../core/trace/model';
import type { ParsedTrace } from '../core/trace/parseTrace';

// Words for CodeLens titles and Problems messages, from the core's analyses. No `vscode`
// here: the adapters (codeLens.ts, diagnostics.ts) only place these strings.

/** A session and its analysis. */
export interface AnalyzedSession {
  session: Session;
  analysis: SessionAnalysis;
  /** Null when analysed without prices. */
  cost: SessionCost | null;
}

/** A parsed trace with every session analysed once, shared by CodeLens, Problems and the commands. */
export interface TraceAnalysis {
  parsed: ParsedTrace;
  /** Empty when the file is not a trace (see `isTrace`). */
  sessions: AnalyzedSession[];
  /** The whole trace priced (sub-agents included); null without prices or for a file that is not a trace. */
  cost: TraceCost | null;
  /** Set when the file was not read because it is over agentTrace.maxFileSizeMB: the message saying so. */
  tooLarge?: string;
}

/** The analysis of a text document too large to read: nothing but the message that says so. */
export function tooLargeAnalysis(uri: { path: string }, message: string): TraceAnalysis {
  const name = baseName(uri.path);
  return {
    parsed: {
      model: { format: null, files: [name], sessions: [], diagnostics: [], skippedRecords: {}, limitations: [] },
      detection: { format: null, evidence: 'not read: over agentTrace.maxFileSizeMB', confidence: null },
      problem: { kind: 'unreadable', message },
    },
    sessions: [],
    cost: null,
    tooLarge: message,
  };
}

/** True when the file was read as a known format (not empty, binary or unknown). */
export function isTrace(parsed: ParsedTrace): boolean {
  return parsed.problem === null && parsed.model.format !== null;
}

/** Analyses (and, with a price book, prices) every session of a parsed trace with the same core the CLI and the inspector use. */
export function analyzeTrace(
  parsed: ParsedTrace,
  options: Partial<AnalysisOptions>,
  prices: PriceBook | null = null,
): TraceAnalysis {
  if (!isTrace(parsed)) return { parsed, sessions: [], cost: null };
  const cost = prices ? priceTrace(parsed.model, prices) : null;
  return {
    parsed,
    sessions: parsed.model.sessions.map((session, i) => ({
      session,
      analysis: analyzeSession(session, options),
      cost: cost?.sessions[i] ?? null,
    })),
    cost,
  };
}

/** 1st, 2nd, 3rd, 4th, 11th, 21st… */
export function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  switch (n % 10) {
    case 1:
      return `${n}st`;
    case 2:
      return `${n}nd`;
    case 3:
      return `${n}rd`;
    default:
      return `${n}th`;
  }
}

/** Rough token count for prose: 24, 2.1k, 62k, 1.3M. */
export function approxTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 10_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, '')}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Trace text for a CodeLens title, hover or Problems message: one line (unless asked),
 * clipped, with control and bidi characters escaped and `$(icon)` and Markdown links
 * broken, so nothing from the trace renders as an icon or acts as a link. Only the
 * words and icons written here around it may.
 */
function clip(text: string, max: number): string {
  return uiText(text.replace(/\s+/g, ' ').trim(), { max });
}

/** The last path segment of a file target or a folder; Windows and POSIX separators alike. */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/).filter((p) => p !== '');
  return parts[parts.length - 1] ?? path;
}

/** A short target for titles: "on sync_raw_logs.py", "`git add && git commit`", or nothing for a tool-only target. */
export function shortTarget(kind: RetryLoop['targetKind'], target: string): string {
  if (kind === 'file') return ` on ${clip(baseName(target), 80)}`;
  if (kind === 'command') return ` \`${clip(target, 40)}\``;
  return '';
}

/** "carries ≈24 tokens × 20 calls ($0.0012)", or '' when the trace gives no size or no later call reads it. */
function carries(f: FailingToolCall, usd: number | null): string {
  if (f.errorTokens === null || f.laterCalls === 0) return '';
  return ` · carries ≈${approxTokens(f.errorTokens)} tokens × ${plural(f.laterCalls, 'call')}${usd === null ? '' : ` (${formatUsd(usd)})`}`;
}

/** How a loop ended, in a few words. */
function loopEnd(loop: RetryLoop): string {
  return loop.escaped && loop.escapeCall !== null ? `succeeded at call ${loop.escapeCall + 1}` : 'gave up';
}

/**
 * The CodeLens title of a failed tool call: "4th failed Write on sync_raw_logs.py: File has
 * not been read yet… · carries ≈24 tokens × 20 calls". Collateral failures say they are.
 */
export function failureTitle(f: FailingToolCall, carryUsd: number | null = null): string {
  const target = shortTarget(f.targetKind, f.targetKind === 'tool' ? f.toolName : f.target);
  const error = clip(f.errorShort, 60);
  if (f.collateral) {
    const why = /^Sibling tool call errored/i.test(f.errorShort)
      ? 'cancelled because a sibling call failed'
      : 'rejected or interrupted by the user';
    return `$(circle-slash) ${clip(f.toolName, 60)}${target} not run: ${why} (collateral, not a retry)`;
  }
  const place = f.failureOrdinal > 1 || f.loopIndex !== null ? `${ordinal(f.failureOrdinal)} failed` : 'failed';
  return `$(error) ${place} ${clip(f.toolName, 60)}${target}: ${error}${carries(f, carryUsd)}`;
}

/** The hover of a failed tool call's lens: the full target, the error and its loop. */
export function failureTooltip(f: FailingToolCall, loop: RetryLoop | null, carryUsd: number | null = null): string {
  const lines = [
    `${clip(f.toolName, 100)} (call ${f.callIndex + 1}) on ${clip(f.target, 300)}`,
    clip(f.errorShort, 600),
  ];
  if (loop) {
    const n = loop.attempts.findIndex((a) => a.toolId === f.toolId) + 1;
    lines.push(`Attempt ${n} of ${loop.attempts.length} in a retry loop of ${loop.tool}, which ${loopEnd(loop)}.`);
  }
  if (f.errorTokens !== null) {
    const dollars = carryUsd === null ? '' : `, which costs ${formatUsd(carryUsd)}`;
    lines.push(
      `The error text (≈${approxTokens(f.errorTokens)} tokens) is re-read by ${plural(f.laterCalls, 'later call')}${dollars}.`,
    );
  }
  return lines.join('\n');
}

/** The Problems message of a retry loop: "Retry loop: 4 failed Edit/Write on sync_raw_logs.py, gave up; ≈2.1k tokens carried forward". */
export function loopMessage(loop: RetryLoop): string {
  const carried =
    loop.carryForwardTokens !== null ? `; ≈${approxTokens(loop.carryForwardTokens)} tokens carried forward` : '';
  return `Retry loop: ${loop.attempts.length} failed ${clip(loop.tool, 100)}${shortTarget(loop.targetKind, loop.target)}, ${loopEnd(loop)}${carried}`;
}

/** The message of a later attempt, as related information of the loop's warning. */
export function attemptMessage(loop: RetryLoop, index: number): string {
  const a = loop.attempts[index]!;
  return `${ordinal(index + 1)} attempt: ${clip(a.toolName, 100)} in call ${a.callIndex + 1}`;
}

/** A session of the analysis as a part of the whole trace's scope. */
function scopeSession({ session, analysis }: AnalyzedSession): ScopeSession {
  const s = analysis.summary;
  return {
    role: session.role,
    llmCalls: s.llmCalls,
    userTurns: s.userTurns,
    cached: s.tokens.cached,
    input: s.tokens.input,
    failedToolCalls: s.failedToolCalls,
    retryLoops: analysis.retry.loops.length,
  };
}

/**
 * The top lens, over the whole file (every session in it, sub-agents included, as the
 * inspector's session picker lists them and as its cost counts): "Agent Trace · 41 calls ·
 * $3.37 · cache hit 85.5% · 13 failed tool calls · 1 retry loop", and with several sessions
 * "Agent Trace · 3 sessions (2 main, 1 sub-agent) · 90 calls · $5.13 · …".
 */
export function summaryTitle(a: TraceAnalysis): string {
  const whole = scopeFigures(a.sessions.map(scopeSession));
  const parts = ['$(pulse) Agent Trace'];
  if (whole.sessions > 1) parts.push(sessionsWords(whole));
  parts.push(plural(whole.llmCalls, 'call'));
  if (a.cost) parts.push(costWords(a.cost.total.totalUsd, a.cost.total.unpricedCalls));
  parts.push(
    `cache hit ${formatPercent(whole.cacheHitRate)}`,
    plural(whole.failedToolCalls, 'failed tool call'),
    plural(whole.retryLoops, 'retry loop'),
  );
  return parts.join(' · ');
}

/** The top lens's hover: which sessions its figures are over. */
export function summaryTooltip(a: TraceAnalysis): string {
  const whole = scopeFigures(a.sessions.map(scopeSession));
  return whole.sessions > 1
    ? `Over the whole file: ${sessionsWords(whole)}, as the inspector's session picker lists them. Click to analyse it.`
    : 'Analyze this agent session';
}

export { costWords } from '../core/report/traceScopes';
