import type { Diagnostic, FormatId, LlmCall, Session, TraceModel } from '../trace/model';
import { COST_KINDS, zeroByKind } from './costTypes';
import type { CallCost, CallRates, CostByKind, CostSummary, PriceBook, PriceQuery } from './costTypes';

/**
 * Prices each call on its own: its own date (price history), its own input size (a
 * long-context tier bills the whole request higher, so pricing a session's totals in one
 * go would be wrong), its own service tier and cache-write TTLs. Pure: the price book
 * answers the rates.
 */

/** A call's tokens as pricing splits them: every prompt token is exactly one of uncached, read, written 5 min, written 1 h. */
export interface PricedTokens {
  uncached: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  output: number;
}

/** Notes that many calls share are counted, not repeated. */
const NOTE_NO_SPLIT = 'cache writes without a 5-minute / 1-hour split: priced at the 5-minute rate';
const NOTE_NO_CACHED = 'no cached-token count: every prompt token priced as uncached (an upper bound)';

/** What the format implies about who served the calls. */
export function pricingContext(format: FormatId | null, session: Session): { providerHint: string | null; selfHosted: boolean } {
  // Serving traces record one's own server: list prices of an API do not apply to them.
  if (format === 'vllm-bench' || format === 'mooncake' || format === 'bailian') return { providerHint: null, selfHosted: true };
  const agent = session.agent?.name ?? '';
  if (format === 'claude-code' || /claude/i.test(agent)) return { providerHint: 'anthropic', selfHosted: false };
  if (format === 'codex' || /codex/i.test(agent)) return { providerHint: 'openai', selfHosted: false };
  return { providerHint: null, selfHosted: false };
}

/** Splits a call's prompt for pricing, or says which count is missing. */
export function pricedTokens(call: LlmCall): { tokens: PricedTokens; notes: string[] } | { missing: string } {
  const t = call.tokens;
  if (t.input === null) return { missing: 'its prompt token count is unknown' };
  if (t.output === null) return { missing: 'its output token count is unknown' };
  const notes: string[] = [];
  if (t.cached === null) notes.push(NOTE_NO_CACHED);
  const read = Math.min(t.cached ?? 0, t.input);
  const written = Math.min(t.cacheWrite ?? 0, t.input - read);
  const split = t.cacheWrite5m != null || t.cacheWrite1h != null;
  if (written > 0 && !split) notes.push(NOTE_NO_SPLIT);
  const oneHour = Math.min(t.cacheWrite1h ?? 0, written);
  return {
    tokens: { uncached: t.input - read - written, cacheRead: read, cacheWrite5m: written - oneHour, cacheWrite1h: oneHour, output: t.output },
    notes,
  };
}

/** Dollars of a token split at given rates, or null when it needs a 1-hour rate the model lacks. */
export function tokenCost(tokens: PricedTokens, rates: CallRates): CostByKind | null {
  if (tokens.cacheWrite1h > 0 && rates.cacheWrite1h === null) return null;
  return {
    input: tokens.uncached * rates.input,
    cacheRead: tokens.cacheRead * rates.cacheRead,
    cacheWrite5m: tokens.cacheWrite5m * rates.cacheWrite5m,
    cacheWrite1h: tokens.cacheWrite1h * (rates.cacheWrite1h ?? 0),
    output: tokens.output * rates.output,
    gpuTime: 0,
  };
}

export function sumByKind(byKind: CostByKind): number {
  let s = 0;
  for (const k of COST_KINDS) s += byKind[k];
  return s;
}

function unpriced(reason: string, notes: string[] = []): CallCost {
  return { usd: null, byKind: null, rates: null, priceId: null, origin: null, unpriced: reason, notes };
}

/** Prices one call. The reason a call cannot be priced names the model or tier. */
export function priceCall(call: LlmCall, book: PriceBook, context: { providerHint: string | null; selfHosted: boolean }): { cost: CallCost; unknownKey: string | null } {
  const split = pricedTokens(call);
  if ('missing' in split) return { cost: unpriced(split.missing), unknownKey: 'tokens' };
  const query: PriceQuery = {
    model: call.model,
    providerHint: context.providerHint,
    selfHosted: context.selfHosted,
    timeMs: call.startMs ?? call.endMs,
    inputTokens: call.tokens.input!,
    serviceTier: call.serviceTier ?? null,
    inferenceGeo: call.inferenceGeo ?? null,
  };
  const quote = book.quote(query);
  if (quote.kind === 'unknown') return { cost: unpriced(quote.reason, split.notes), unknownKey: quote.key };
  const notes = [...quote.notes, ...split.notes];
  if (quote.kind === 'gpu-time') {
    const durationMs = call.server?.e2eMs ?? (call.startMs !== null && call.endMs !== null && call.endMs >= call.startMs ? call.endMs - call.startMs : null);
    if (durationMs === null) return { cost: unpriced(`its duration is unknown, and "${call.model}" is priced per GPU-hour`, notes), unknownKey: 'duration' };
    const usd = (durationMs / 3_600_000) * quote.usdPerHour;
    return { cost: { usd, byKind: { ...zeroByKind(), gpuTime: usd }, rates: null, priceId: quote.priceId, origin: quote.origin, unpriced: null, notes }, unknownKey: null };
  }
  const byKind = tokenCost(split.tokens, quote.rates);
  if (!byKind) return { cost: unpriced(`"${call.model}" has no 1-hour cache-write price`, notes), unknownKey: `no-1h:${call.model}` };
  return { cost: { usd: sumByKind(byKind), byKind, rates: quote.rates, priceId: quote.priceId, origin: quote.origin, unpriced: null, notes }, unknownKey: null };
}

/** Calls that could not be priced for one reason. */
export interface UnpricedGroup {
  key: string;
  reason: string;
  /** Indexes of the calls in their session. */
  calls: number[];
}

/** A session priced call by call. */
export interface SessionCost extends CostSummary {
  /** One per call, in call order. */
  calls: CallCost[];
  unpriced: UnpricedGroup[];
  /** The cost the agent itself reported for the session (SWE-agent, ATIF), beside ours. */
  reportedUsd: number | null;
  /** Assumptions with how many calls each concerns: "3 calls: long-context tier (input over 200,000 tokens)". */
  notes: string[];
}

/** Sums priced calls; `totalUsd` is null only when there were calls and none was priced. */
export function summarizeCosts(calls: ReadonlyArray<{ model: string | null; cost: CallCost }>, priceSource: string): CostSummary {
  const byKind = zeroByKind();
  const byModel: CostSummary['byModel'] = {};
  let total = 0;
  let priced = 0;
  for (const { model, cost } of calls) {
    const key = model ?? 'unknown model';
    const m = (byModel[key] ??= { usd: null, calls: 0, unpricedCalls: 0 });
    m.calls += 1;
    if (cost.usd === null || cost.byKind === null) {
      m.unpricedCalls += 1;
      continue;
    }
    priced += 1;
    total += cost.usd;
    m.usd = (m.usd ?? 0) + cost.usd;
    for (const k of COST_KINDS) byKind[k] += cost.byKind[k];
  }
  return {
    totalUsd: priced === 0 && calls.length > 0 ? null : total,
    byModel,
    byKind,
    pricedCalls: priced,
    unpricedCalls: calls.length - priced,
    priceSource,
  };
}

function countedNotes(costs: readonly CallCost[]): string[] {
  const counts = new Map<string, number>();
  for (const c of costs) for (const n of c.notes) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([note, n]) => `${n} call${n === 1 ? '' : 's'}: ${note}`);
}

export function priceSession(session: Session, format: FormatId | null, book: PriceBook): SessionCost {
  const context = pricingContext(format, session);
  const groups = new Map<string, UnpricedGroup>();
  const calls = session.calls.map((call) => {
    const { cost, unknownKey } = priceCall(call, book, context);
    if (unknownKey !== null) {
      const g = groups.get(unknownKey) ?? { key: unknownKey, reason: cost.unpriced ?? '', calls: [] };
      g.calls.push(call.index);
      groups.set(unknownKey, g);
    }
    return cost;
  });
  const summary = summarizeCosts(
    session.calls.map((c, i) => ({ model: c.model, cost: calls[i]! })),
    book.source,
  );
  return { ...summary, calls, unpriced: [...groups.values()], reportedUsd: session.reportedTotals?.costUsd ?? null, notes: countedNotes(calls) };
}

/** Every session priced, the whole trace's total (sub-agents included), and diagnostics for what could not be priced. */
export interface TraceCost {
  sessions: SessionCost[];
  total: CostSummary;
  diagnostics: Diagnostic[];
}

export function priceTrace(model: TraceModel, book: PriceBook): TraceCost {
  const sessions = model.sessions.map((s) => priceSession(s, model.format, book));
  const all = model.sessions.flatMap((s, i) => s.calls.map((c, j) => ({ model: c.model, cost: sessions[i]!.calls[j]! })));
  return { sessions, total: summarizeCosts(all, book.source), diagnostics: costDiagnostics(model, sessions) };
}

/** One diagnostic per reason a call could not be priced (naming the model), at its first call, and one per shared assumption. */
function costDiagnostics(model: TraceModel, sessions: readonly SessionCost[]): Diagnostic[] {
  const byKey = new Map<string, { reason: string; calls: number; first: LlmCall }>();
  const notes = new Map<string, { calls: number; first: LlmCall }>();
  model.sessions.forEach((session, i) => {
    const cost = sessions[i]!;
    for (const g of cost.unpriced) {
      const d = byKey.get(g.key);
      if (d) d.calls += g.calls.length;
      else byKey.set(g.key, { reason: g.reason, calls: g.calls.length, first: session.calls[g.calls[0]!]! });
    }
    cost.calls.forEach((c, j) => {
      for (const n of c.notes) {
        if (n !== NOTE_NO_SPLIT && n !== NOTE_NO_CACHED) continue;
        const d = notes.get(n);
        if (d) d.calls += 1;
        else notes.set(n, { calls: 1, first: session.calls[j]! });
      }
    });
  });
  const out: Diagnostic[] = [];
  for (const { reason, calls, first } of byKey.values()) {
    out.push({
      file: first.source.file,
      line: first.source.line,
      severity: 'warning',
      message: `Cost unknown for ${calls} call${calls === 1 ? '' : 's'}: ${reason}. Add a price with the agentTrace.prices setting or --prices FILE.`,
    });
  }
  for (const [note, { calls, first }] of notes) {
    out.push({ file: first.source.file, line: first.source.line, severity: 'info', message: `${calls} call${calls === 1 ? '' : 's'}: ${note}.` });
  }
  return out;
}
