import type { CollectedContent } from './claudeCodeContent';
import type { TraceAnatomy } from './contextAnatomy';
import { PART_KINDS } from './contextParts';
import type { Calibration, PartKind, SessionAnatomy } from './contextParts';
import { contextReport, partLabel } from './contextReport';
import type { Contributor, Suggestion } from './contextReport';
import type { TokenCounterFor } from './tokenCounter';

/**
 * What the inspector draws of one session's context anatomy (docs/guide/context.md): each
 * call's input by part kind (the composition chart and a call's anatomy), the largest parts
 * each call appended, the session's largest contributors and priced suggestions. Plain data,
 * so it crosses the worker and webview boundaries and is embedded in the HTML report as is.
 * Labels, files and commands in it are trace text: drawn as text only.
 */
export interface SessionContext {
  sessionId: string;
  /** Counted from the log's text, or from the sizes it keeps only. */
  content: 'text' | 'sizes';
  calibration: Calibration;
  /** Kinds with tokens in at least one call, in PART_KINDS order (the chart's stack, bottom up). */
  kinds: PartKind[];
  /** Kinds whose tokens are estimates, not counted from logged text (the unlogged base, what a compaction restored, sizes). */
  estimatedKinds: PartKind[];
  /** `byKind[kind][call]`: that call's tokens of the kind, for every kind in `kinds`. */
  byKind: Partial<Record<PartKind, number[]>>;
  /** Each call's logged input (null when the log does not say). */
  loggedInput: Array<number | null>;
  /** Each call's input dollars, shared among its parts (null when unpriced). */
  inputUsd: Array<number | null>;
  /** The largest parts each call appended (at most APPENDED_PER_CALL a call), in call order. */
  appended: AppendedPart[];
  /** Input dollars of the session's priced calls (the parts' dollars sum to it); null when none was priced. */
  totalUsd: number | null;
  cacheReadUsd: number;
  writeUsd: number;
  contributors: Contributor[];
  suggestions: Suggestion[];
  /** What is estimated and why, in words (the trace's notes, then the session's). */
  notes: string[];
}

/** A part as a call's anatomy lists it. */
export interface AppendedPart {
  /** The call whose input first held it. */
  call: number;
  kind: PartKind;
  /** "`src/big.ts` read", "output of `npm test`", a kind's words. */
  label: string;
  tokens: number;
  estimated: boolean;
  /** Calls that carried it (first to last, inclusive). */
  carriedCalls: number;
  /** Its dollars over every call that carried it (null: unpriced). */
  usd: number | null;
}

/** Parts a call's anatomy lists of what it appended, largest first. */
export const APPENDED_PER_CALL = 5;
/** Contributors the inspector lists. */
export const CONTRIBUTORS_LISTED = 15;

/** The view of session `index` of an anatomy; null when there is none. */
export function sessionContextView(anatomy: TraceAnatomy, index: number): SessionContext | null {
  const s = anatomy.sessions[index];
  if (!s) return null;
  return viewOf(s, anatomy);
}

function viewOf(s: SessionAnatomy, anatomy: TraceAnatomy): SessionContext {
  const present = new Set<PartKind>();
  for (const c of s.calls) for (const k of PART_KINDS) if (c.byKind[k] > 0) present.add(k);
  const kinds = PART_KINDS.filter((k) => present.has(k));
  const byKind: Partial<Record<PartKind, number[]>> = {};
  for (const k of kinds) byKind[k] = s.calls.map((c) => c.byKind[k]);
  const estimated = new Set<PartKind>();
  for (const p of s.parts) if (p.estimated && p.tokens > 0) estimated.add(p.kind);
  // The largest parts of each call, without sorting every part: parts come in call order.
  const appended: AppendedPart[] = [];
  let from = 0;
  const parts = [...s.parts].sort((a, b) => a.firstCall - b.firstCall || a.id - b.id);
  while (from < parts.length) {
    let to = from;
    while (to < parts.length && parts[to]!.firstCall === parts[from]!.firstCall) to++;
    const group = parts.slice(from, to).filter((p) => p.tokens > 0);
    group.sort((a, b) => b.tokens - a.tokens);
    for (const p of group.slice(0, APPENDED_PER_CALL)) {
      appended.push({
        call: p.firstCall,
        kind: p.kind,
        label: partLabel(p),
        tokens: p.tokens,
        estimated: p.estimated,
        carriedCalls: p.lastCall - p.firstCall + 1,
        usd: p.usd,
      });
    }
    from = to;
  }
  const report = contextReport({ format: anatomy.format, sessions: [s], notes: anatomy.notes }, CONTRIBUTORS_LISTED);
  return {
    sessionId: s.sessionId,
    content: s.content,
    calibration: s.calibration,
    kinds,
    estimatedKinds: kinds.filter((k) => estimated.has(k)),
    byKind,
    loggedInput: s.calls.map((c) => c.loggedInput),
    inputUsd: s.calls.map((c) => c.inputUsd),
    appended,
    totalUsd: report.inputUsd,
    cacheReadUsd: report.cacheReadUsd,
    writeUsd: report.writeUsd,
    contributors: report.contributors,
    suggestions: report.suggestions,
    notes: [...new Set([...anatomy.notes, ...s.notes])],
  };
}

/** What the anatomy of a loaded trace is built from: the text the collector kept (null: sizes only), the tokenizers, notes. */
export interface ContextSource {
  content: CollectedContent | null;
  tokenizer: TokenCounterFor;
  /** Notes about the whole trace (how much text was counted by its length only). */
  notes: string[];
}

/** A session's view with nothing in it and why (a report made without the anatomy). */
export function emptySessionContext(sessionId: string, note: string): SessionContext {
  return {
    sessionId,
    content: 'sizes',
    calibration: {
      tokenizer: 'none',
      factor: 1,
      perPiece: 0,
      perCall: 0,
      comparedCalls: 0,
      medianAbsErrorRaw: null,
      medianAbsError: null,
      medianInputError: null,
      predictive: { comparedCalls: 0, medianAbsError: null, medianAbsErrorRaw: null },
    },
    kinds: [],
    estimatedKinds: [],
    byKind: {},
    loggedInput: [],
    inputUsd: [],
    appended: [],
    totalUsd: null,
    cacheReadUsd: 0,
    writeUsd: 0,
    contributors: [],
    suggestions: [],
    notes: [note],
  };
}
