import { clip } from '../trace/json';
import type { LlmCall, Session, SourceRef, ToolCall } from '../trace/model';
import { isCollateralFailure, isShellTarget, toolTarget } from './toolTaxonomy';
import type { ToolTarget } from './toolTaxonomy';

/** Characters per token for estimating the size of error text (the usual rule of thumb for English and code). */
export const CHARS_PER_TOKEN = 4;

/** One failed attempt inside a retry loop. */
export interface LoopAttempt {
  callIndex: number;
  toolId: string;
  toolName: string;
  /** Where the failure shows: the result's line (or the call's, where one line holds both). */
  source: SourceRef;
}

/** A run of failed calls of one kind on one target, with no success on it in between. */
export interface RetryLoop {
  /** Tool names used in the attempts, e.g. "Edit/Write". */
  tool: string;
  family: ToolTarget['family'];
  targetKind: ToolTarget['kind'];
  /** The file, the normalised command, or the tool name. */
  target: string;
  attempts: LoopAttempt[];
  firstCall: number;
  lastCall: number;
  /** LLM calls from the first attempt to the last, inclusive. */
  callsSpanned: number;
  /** True when a later call of the same kind on the same target succeeded. */
  escaped: boolean;
  /** The call whose tool call succeeded, when escaped. */
  escapeCall: number | null;
  firstError: string | null;
  /** Outputs of the calls that made the failed attempts plus the error text appended (tokens; the error part is estimated). */
  wastedTokens: number | null;
  /** The error text's tokens times the later calls that re-read it (estimated). */
  carryForwardTokens: number | null;
}

/** A failed tool call with its place in the session, for CodeLens and the details pane. */
export interface FailingToolCall {
  callIndex: number;
  toolId: string;
  toolName: string;
  target: string;
  targetKind: ToolTarget['kind'];
  /** First line of the error, short. */
  errorShort: string;
  /** 1-based count of failures of this kind on this target since the last success ("3rd failed Edit"). */
  failureOrdinal: number;
  /** Index into the session's retry loops, when this failure is part of one. */
  loopIndex: number | null;
  /** Collateral failures (user rejection, sibling error) are not the agent's own attempts. */
  collateral: boolean;
  /** Estimated tokens of the error text. */
  errorTokens: number | null;
  /** Later calls that re-read the error (until the session ends or a compaction drops it). */
  laterCalls: number;
  carryForwardTokens: number | null;
  source: SourceRef;
}

/** Retry loops and every failing tool call of a session. */
export interface RetryAnalysis {
  loops: RetryLoop[];
  failing: FailingToolCall[];
  /** Calls that made at least one loop attempt. */
  callsInLoops: number;
}

/** Estimated tokens of a tool's result or error text, or null when the trace gives no size. */
export function errorTokens(tool: ToolCall): number | null {
  const chars = tool.resultChars ?? (tool.errorText !== null ? tool.errorText.length : null);
  return chars === null ? null : Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * How many calls after `callIndex` re-read what that call's tools returned: every
 * later call until the next compaction, which replaces the context with a summary.
 */
export function laterCallsReading(session: Session, callIndex: number): number {
  const boundaries = compactionBoundaries(session);
  // The first compaction after the call (boundaries are sorted): a binary search, as a
  // million-call session has thousands of compactions and tens of thousands of failures.
  let lo = 0;
  let hi = boundaries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (boundaries[mid]! > callIndex) hi = mid;
    else lo = mid + 1;
  }
  const next = lo < boundaries.length ? boundaries[lo]! : Infinity;
  const end = Math.min(session.calls.length, next);
  return Math.max(0, end - callIndex - 1);
}

/** A session's compaction points (`beforeCall`), sorted; remade when its list of compactions is another or has grown (a followed file). */
const boundariesOf = new WeakMap<
  Session,
  { compactions: Session['compactions']; count: number; sorted: Float64Array }
>();

function compactionBoundaries(session: Session): Float64Array {
  const known = boundariesOf.get(session);
  if (known && known.compactions === session.compactions && known.count === session.compactions.length)
    return known.sorted;
  const sorted = Float64Array.from(session.compactions, (c) => c.beforeCall).sort();
  boundariesOf.set(session, { compactions: session.compactions, count: session.compactions.length, sorted });
  return sorted;
}

interface OpenRun {
  target: ToolTarget;
  /** With the figures already worked out for the failing list, so building the loop need not recount them. */
  attempts: Array<{ call: LlmCall; tool: ToolCall; tokens: number | null; later: number }>;
}

function firstLine(text: string | null): string {
  if (!text) return 'failed';
  const line = text.split('\n').find((l) => l.trim() !== '') ?? text;
  return clip(line.trim(), 100);
}

/**
 * Finds retry loops (docs/guide/inspector.md, "How the analyses decide"): a run of failed calls of the same kind (file edits,
 * shell commands, or one tool) on the same target (file; command with flags and
 * quoted text set aside) with no success on that target in between, of at least
 * `minAttempts` attempts. Collateral failures are listed but never count as attempts.
 */
export function findRetryLoops(session: Session, minAttempts = 3): RetryAnalysis {
  return retryAnalysis(session, minAttempts, true);
}

/** The retry loops alone and the calls in them (`failing` left empty): what the report needs, without a record per failed call. */
export function findRetryLoopsOnly(session: Session, minAttempts = 3): RetryAnalysis {
  return retryAnalysis(session, minAttempts, false);
}

function retryAnalysis(session: Session, minAttempts: number, listFailing: boolean): RetryAnalysis {
  const open = new Map<string, OpenRun>();
  const loops: RetryLoop[] = [];
  const failing: FailingToolCall[] = [];
  /** failing index → run it belongs to, to fill loopIndex once the run closes. */
  const runOf = new Map<number, OpenRun>();
  const loopOfRun = new Map<OpenRun, number>();

  // A shell call's target depends on its command alone: a command run again is not normalised again.
  const shellTargets = new Map<string, ToolTarget>();
  const targetOf = (tool: ToolCall): ToolTarget => {
    if (!isShellTarget(tool)) return toolTarget(tool);
    let target = shellTargets.get(tool.command!);
    if (target === undefined) shellTargets.set(tool.command!, (target = toolTarget(tool)));
    return target;
  };
  /** Open runs on shell commands: while there are none, a successful command need not be normalised to find its run. */
  let openShell = 0;
  const close = (key: string, escapeCall: number | null): void => {
    const run = open.get(key);
    if (!run) return;
    open.delete(key);
    if (run.target.family === 'shell') openShell -= 1;
    if (run.attempts.length < minAttempts) return;
    loopOfRun.set(run, loops.length);
    loops.push(buildLoop(run, escapeCall));
  };

  for (const call of session.calls) {
    for (const tool of call.toolCalls) {
      if (tool.isError === null) continue;
      // A success only closes a run on its target: with no run open there is none to find.
      if (tool.isError === false && (open.size === 0 || (openShell === 0 && isShellTarget(tool)))) continue;
      const target = targetOf(tool);
      const key = `${target.family}\u0000${target.key}`;
      if (tool.isError === false) {
        close(key, call.index);
        continue;
      }
      const collateral = isCollateralFailure(tool);
      if (collateral && !listFailing) continue;
      const later = laterCallsReading(session, call.index);
      const tokens = errorTokens(tool);
      let run = open.get(key);
      if (!collateral) {
        if (!run) {
          run = { target, attempts: [] };
          open.set(key, run);
          if (target.family === 'shell') openShell += 1;
        }
        run.attempts.push({ call, tool, tokens, later });
      }
      if (!listFailing) continue;
      if (!collateral && run) runOf.set(failing.length, run);
      failing.push({
        callIndex: call.index,
        toolId: tool.id,
        toolName: tool.name,
        target: target.key,
        targetKind: target.kind,
        errorShort: firstLine(tool.errorText),
        failureOrdinal: collateral || !run ? 0 : run.attempts.length,
        loopIndex: null,
        collateral,
        errorTokens: tokens,
        laterCalls: later,
        carryForwardTokens: tokens === null ? null : tokens * later,
        source: tool.resultSource ?? tool.source,
      });
    }
  }
  for (const key of [...open.keys()]) close(key, null);
  // Loops close in the order they end; list them by first attempt, as a reader expects.
  const order = loops.map((_, i) => i).sort((a, b) => loops[a]!.firstCall - loops[b]!.firstCall || a - b);
  const renumber = new Map(order.map((old, now) => [old, now]));
  loops.splice(0, loops.length, ...order.map((i) => loops[i]!));
  for (const [run, i] of loopOfRun) loopOfRun.set(run, renumber.get(i)!);
  for (const [i, run] of runOf) failing[i]!.loopIndex = loopOfRun.get(run) ?? null;
  const loopCalls = new Set<number>();
  for (const loop of loops) for (const a of loop.attempts) loopCalls.add(a.callIndex);
  return { loops, failing, callsInLoops: loopCalls.size };
}

function buildLoop(run: OpenRun, escapeCall: number | null): RetryLoop {
  const names = [...new Set(run.attempts.map((a) => a.tool.name))];
  const firstCall = run.attempts[0]!.call.index;
  const lastCall = run.attempts[run.attempts.length - 1]!.call.index;
  let wasted: number | null = null;
  let carry: number | null = null;
  const countedCalls = new Set<number>();
  for (const { call, tokens, later } of run.attempts) {
    // A call that made several failed attempts wrote its output once.
    if (!countedCalls.has(call.index) && call.tokens.output !== null) {
      countedCalls.add(call.index);
      wasted = (wasted ?? 0) + call.tokens.output;
    }
    if (tokens !== null) {
      wasted = (wasted ?? 0) + tokens;
      carry = (carry ?? 0) + tokens * later;
    }
  }
  return {
    tool: names.join('/'),
    family: run.target.family,
    targetKind: run.target.kind,
    target: run.target.key,
    attempts: run.attempts.map(({ call, tool }) => ({
      callIndex: call.index,
      toolId: tool.id,
      toolName: tool.name,
      source: tool.resultSource ?? tool.source,
    })),
    firstCall,
    lastCall,
    callsSpanned: lastCall - firstCall + 1,
    escaped: escapeCall !== null,
    escapeCall,
    firstError: run.attempts[0]!.tool.errorText !== null ? clip(run.attempts[0]!.tool.errorText, 300) : null,
    wastedTokens: wasted,
    carryForwardTokens: carry,
  };
}
