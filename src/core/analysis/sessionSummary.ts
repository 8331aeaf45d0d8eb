import { sessionTitle } from '../sessions/sessionTitle';
import type { LlmCall, OtherInputs, Session } from '../trace/model';
import { NumberSample, ratio } from './stats';

/** Token totals of a session; a total is null when no call reports that figure. */
export interface TokenTotals {
  input: number | null;
  cached: number | null;
  appended: number | null;
  cacheWrite: number | null;
  output: number | null;
}

/** The headline figures of one session (the CLI's `--json` contract, plus a few extras). */
export interface SessionSummary {
  id: string;
  parentId: string | null;
  role: Session['role'];
  agent: string | null;
  agentVersion: string | null;
  model: string | null;
  /** The title the trace gives, whole (trace text). */
  title: string | null;
  /** What to call the session: the agent's own title when it is a name, else the first prompt typed (sessionTitle.ts), clipped; trace text. */
  displayTitle: string | null;
  llmCalls: number;
  /** Prompts a person typed. */
  userTurns: number;
  /** User-role records that were not typed prompts, by kind; null when the format does not tell them apart. */
  otherInputs: OtherInputs | null;
  /** Failed API requests the agent logged (rate limits, overload), shown on the timeline. */
  apiErrors: number;
  tokens: TokenTotals;
  /**
   * Where `tokens` come from: summed over the calls, the session totals the trace
   * reports when no call has figures (SWE-agent, ATIF: "totals only"), or nowhere.
   */
  tokensSource: 'calls' | 'reported' | 'none';
  /** Calls whose input, cached and output are all known: the ratios use these. */
  callsWithTokens: number;
  /** Σcached / Σinput. */
  cacheHitRate: number | null;
  /** Σinput / Σoutput. */
  rawInputToOutput: number | null;
  /** appended / output per call (mean, median) and Σappended / Σoutput. */
  appendToOutput: { mean: number | null; median: number | null; aggregate: number | null };
  toolCalls: number;
  failedToolCalls: number;
  /** Tool calls the user denied (a permission prompt answered no); each is also among the failed. */
  deniedToolCalls: number;
  /**
   * Tokens the trace's own session totals count beyond the sum over its calls (OpenCode's
   * `info.tokens` above its messages'): counted by the agent, carried by no call. Null when
   * the trace reports no totals, or they do not exceed the calls' sums.
   */
  unattributedTokens: UnattributedTokens | null;
  compactions: number;
  startMs: number | null;
  endMs: number | null;
}

/** Reported session totals minus the sums over the calls, each ≥ 0 (null when unknown). */
export interface UnattributedTokens {
  input: number | null;
  cached: number | null;
  output: number | null;
}

const TOTAL_KEYS = ['input', 'cached', 'appended', 'cacheWrite', 'output'] as const;

/** Each figure summed over the calls that report it (null when none does), in one pass over the calls. */
function totals(calls: readonly LlmCall[]): TokenTotals {
  const sums = [0, 0, 0, 0, 0];
  const seen = [false, false, false, false, false];
  for (const c of calls) {
    for (let k = 0; k < TOTAL_KEYS.length; k++) {
      const v = c.tokens[TOTAL_KEYS[k]!];
      if (v === null) continue;
      sums[k]! += v;
      seen[k] = true;
    }
  }
  return {
    input: seen[0] ? sums[0]! : null,
    cached: seen[1] ? sums[1]! : null,
    appended: seen[2] ? sums[2]! : null,
    cacheWrite: seen[3] ? sums[3]! : null,
    output: seen[4] ? sums[4]! : null,
  };
}

/** The counts every call has (the TTL split of cache writes is optional and summed elsewhere). */
type CountKey = 'input' | 'cached' | 'appended' | 'cacheWrite' | 'output' | 'reasoningOutput';

/** Σa / Σb over the calls where both are known. */
function pairedRatio(calls: readonly LlmCall[], a: CountKey, b: CountKey): number | null {
  let sa = 0;
  let sb = 0;
  let n = 0;
  for (const c of calls) {
    const va = c.tokens[a];
    const vb = c.tokens[b];
    if (va === null || vb === null) continue;
    sa += va;
    sb += vb;
    n += 1;
  }
  return n === 0 ? null : ratio(sa, sb);
}

/** The session's reported totals as token totals, or null when it reports no token figure. */
function reportedTokenTotals(session: Session): TokenTotals | null {
  const r = session.reportedTotals;
  if (!r || (r.input === null && r.cached === null && r.output === null)) return null;
  return {
    input: r.input,
    cached: r.cached,
    appended: r.input !== null && r.cached !== null && r.input >= r.cached ? r.input - r.cached : null,
    cacheWrite: null,
    output: r.output,
  };
}

/**
 * What the session totals the trace reports count beyond its calls: the excess of each
 * reported figure over the calls' sum, for totals that sum every request of the session
 * (`coversEveryCall`). Only where both are known and some figure exceeds
 * (a total below the calls' sum is not spread back; it would be a rounding or a cut file).
 */
function unattributedOf(session: Session, calls: TokenTotals): UnattributedTokens | null {
  const r = session.reportedTotals;
  if (!r?.coversEveryCall) return null;
  const excess = (reported: number | null, summed: number | null): number | null =>
    reported === null || summed === null ? null : Math.max(0, reported - summed);
  const out: UnattributedTokens = {
    input: excess(r.input, calls.input),
    cached: excess(r.cached, calls.cached),
    output: excess(r.output, calls.output),
  };
  return (out.input ?? 0) > 0 || (out.cached ?? 0) > 0 || (out.output ?? 0) > 0 ? out : null;
}

/** Summarises one session. Pure: the CLI, the extension host and the webview agree by construction. */
export function summarizeSession(session: Session): SessionSummary {
  const calls = session.calls;
  const perCallAppendToOutput = new NumberSample(calls.length);
  for (const c of calls) {
    const { appended, output } = c.tokens;
    // A call with no output has no ratio (it would be infinite), so it is left out.
    if (appended !== null && output !== null && output > 0) perCallAppendToOutput.add(appended / output);
  }
  let toolCalls = 0;
  let failed = 0;
  let denied = 0;
  let startMs: number | null = null;
  let endMs: number | null = null;
  let callsWithTokens = 0;
  for (const c of calls) {
    toolCalls += c.toolCalls.length;
    for (const t of c.toolCalls) {
      if (t.isError === true) failed += 1;
      if (t.deniedByUser === true) denied += 1;
    }
    if (c.tokens.input !== null && c.tokens.cached !== null && c.tokens.output !== null) callsWithTokens += 1;
    const s = c.startMs ?? c.endMs;
    if (s !== null && (startMs === null || s < startMs)) startMs = s;
    if (c.endMs !== null && (endMs === null || c.endMs > endMs)) endMs = c.endMs;
  }
  const callTotals = totals(calls);
  const reported = Object.values(callTotals).every((v) => v === null) ? reportedTokenTotals(session) : null;
  const firstTurn = session.turns[0]?.startMs ?? null;
  if (firstTurn !== null && (startMs === null || firstTurn < startMs)) startMs = firstTurn;
  return {
    id: session.id,
    parentId: session.parentId,
    role: session.role,
    agent: session.agent?.name ?? null,
    agentVersion: session.agent?.version ?? null,
    model: session.model,
    title: session.title,
    displayTitle: sessionTitle(session),
    llmCalls: calls.length,
    userTurns: session.turns.length,
    otherInputs: session.otherInputs ? { ...session.otherInputs } : null,
    apiErrors: (session.events ?? []).filter((e) => e.kind === 'api-error').length,
    tokens: reported ?? callTotals,
    tokensSource: reported ? 'reported' : Object.values(callTotals).some((v) => v !== null) ? 'calls' : 'none',
    callsWithTokens,
    // With totals only, the whole-session ratios still follow from them; per-call ones cannot.
    cacheHitRate: reported ? ratio(reported.cached, reported.input) : pairedRatio(calls, 'cached', 'input'),
    rawInputToOutput: reported ? ratio(reported.input, reported.output) : pairedRatio(calls, 'input', 'output'),
    appendToOutput: {
      mean: perCallAppendToOutput.mean(),
      median: perCallAppendToOutput.median(),
      aggregate: reported ? ratio(reported.appended, reported.output) : pairedRatio(calls, 'appended', 'output'),
    },
    toolCalls,
    failedToolCalls: failed,
    deniedToolCalls: denied,
    unattributedTokens: reported ? null : unattributedOf(session, callTotals),
    compactions: session.compactions.length,
    startMs,
    endMs,
  };
}
