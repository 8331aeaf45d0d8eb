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
export function pricingContext(
  format: FormatId | null,
  session: Session,
): { providerHint: string | null; selfHosted: boolean } {
  // Serving traces record one's own server: list prices of an API do not apply to them. A Weka
  // trace is a replay input: its cached tokens are an ideal cache's, not a bill's.
  if (format === 'vllm-bench' || format === 'mooncake' || format === 'bailian' || format === 'weka')
    return { providerHint: null, selfHosted: true };
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
    tokens: {
      uncached: t.input - read - written,
      cacheRead: read,
      cacheWrite5m: written - oneHour,
      cacheWrite1h: oneHour,
      output: t.output,
    },
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
export function priceCall(
  call: LlmCall,
  book: PriceBook,
  context: { providerHint: string | null; selfHosted: boolean },
): { cost: CallCost; unknownKey: string | null } {
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
    const durationMs =
      call.server?.e2eMs ??
      (call.startMs !== null && call.endMs !== null && call.endMs >= call.startMs ? call.endMs - call.startMs : null);
    if (durationMs === null)
      return {
        cost: unpriced(`its duration is unknown, and "${call.model}" is priced per GPU-hour`, notes),
        unknownKey: 'duration',
      };
    const usd = (durationMs / 3_600_000) * quote.usdPerHour;
    return {
      cost: {
        usd,
        byKind: { ...zeroByKind(), gpuTime: usd },
        rates: null,
        priceId: quote.priceId,
        origin: quote.origin,
        unpriced: null,
        notes,
      },
      unknownKey: null,
    };
  }
  const byKind = tokenCost(split.tokens, quote.rates);
  if (!byKind)
    return {
      cost: unpriced(`"${call.model}" has no 1-hour cache-write price`, notes),
      unknownKey: `no-1h:${call.model}`,
    };
  return {
    cost: {
      usd: sumByKind(byKind),
      byKind,
      rates: quote.rates,
      priceId: quote.priceId,
      origin: quote.origin,
      unpriced: null,
      notes,
    },
    unknownKey: null,
  };
}

/** Calls that could not be priced for one reason. */
export interface UnpricedGroup {
  key: string;
  reason: string;
  /** Indexes of the calls in their session. */
  calls: number[];
}

/** What calls priced alike share: stored once per distinct value, not once per call. */
type SharedCallCost = Pick<CallCost, 'rates' | 'priceId' | 'origin' | 'unpriced' | 'notes'>;

/**
 * The stored entry holds the same values as `cost`: where this says yes, CallCosts' key
 * (the values as text) is the same too (=== differs from the text only on NaN, which
 * this refuses, and on 0 and −0, which the text does not tell apart either).
 */
function sameShared(s: SharedCallCost, cost: CallCost): boolean {
  const a = s.rates;
  const b = cost.rates;
  if (
    a !== b &&
    (a === null ||
      b === null ||
      a.input !== b.input ||
      a.cacheRead !== b.cacheRead ||
      a.cacheWrite5m !== b.cacheWrite5m ||
      a.cacheWrite1h !== b.cacheWrite1h ||
      a.output !== b.output)
  )
    return false;
  if (
    a !== null &&
    a === b &&
    (Number.isNaN(a.input) ||
      Number.isNaN(a.cacheRead) ||
      Number.isNaN(a.cacheWrite5m) ||
      (a.cacheWrite1h !== null && Number.isNaN(a.cacheWrite1h)) ||
      Number.isNaN(a.output))
  )
    return false;
  if (
    s.priceId !== cost.priceId ||
    s.origin !== cost.origin ||
    s.unpriced !== cost.unpriced ||
    s.notes.length !== cost.notes.length
  )
    return false;
  for (let k = 0; k < s.notes.length; k++) if (s.notes[k] !== cost.notes[k]) return false;
  return true;
}

/**
 * A session's call costs, stored by column: dollars by kind in a Float64Array per kind (NaN
 * for an unpriced call), and per call an index into the distinct rates, price ids, reasons
 * and notes, which a million calls of one model share. A CallCost object per call cost
 * about 300 bytes (its byKind, boxed doubles, a notes array); this keeps 60 at most. A kind
 * no call has (GPU time in an API's log, 1-hour cache writes in most) has no column: 16 bytes
 * a call less each (docs/performance.md, "Issue 27, tenth session").
 * `at(i)` builds one call's CallCost when asked.
 */
export class CallCosts implements Iterable<CallCost> {
  readonly length: number;
  /** Per kind (COST_KINDS' order), dollars per call; null while every call so far had exactly 0 of it. */
  private readonly kinds: Array<Float64Array | null>;
  /** 1 for a call without dollars by kind (unpriced): each of its kinds reads NaN. */
  private readonly noKinds: Uint8Array;
  private readonly usd: Float64Array;
  private readonly shared: Int32Array;
  private readonly table: SharedCallCost[] = [];
  private readonly tableIndex = new Map<string, number>();
  private filled = 0;
  /** The table entry of the last call whose key was built. */
  private last = -1;

  constructor(length: number) {
    this.length = length;
    this.kinds = COST_KINDS.map(() => null);
    this.noKinds = new Uint8Array(length);
    this.usd = new Float64Array(length);
    this.shared = new Int32Array(length);
  }

  /** Stores the next call's cost (calls are pushed in order). */
  push(cost: CallCost): void {
    const i = this.filled++;
    // Calls in a row are mostly priced alike: the previous call's entry, when equal, saves building the key.
    let at = this.last >= 0 && sameShared(this.table[this.last]!, cost) ? this.last : undefined;
    if (at === undefined) {
      const r = cost.rates;
      // By value: a price book may give equal rates as distinct objects.
      const key = `${r ? `${r.input},${r.cacheRead},${r.cacheWrite5m},${r.cacheWrite1h},${r.output}` : '-'}\u0000${cost.priceId ?? '\u0001'}\u0000${cost.origin ?? '\u0001'}\u0000${cost.unpriced ?? '\u0001'}\u0000${cost.notes.join('\u0000')}`;
      at = this.tableIndex.get(key);
      if (at === undefined) {
        at = this.table.length;
        this.table.push({
          rates: cost.rates,
          priceId: cost.priceId,
          origin: cost.origin,
          unpriced: cost.unpriced,
          notes: cost.notes,
        });
        this.tableIndex.set(key, at);
      }
      this.last = at;
    }
    this.shared[i] = at;
    this.usd[i] = cost.usd ?? Number.NaN;
    const byKind = cost.byKind;
    if (byKind === null) {
      this.noKinds[i] = 1;
      return;
    }
    for (let j = 0; j < COST_KINDS.length; j++) {
      const v = byKind[COST_KINDS[j]!];
      // A column is made for the first value that is not +0 (-0 and NaN are kept as they are); the calls before read 0.
      if (!Object.is(v, 0)) (this.kinds[j] ??= new Float64Array(this.length))[i] = v;
    }
  }

  private has(i: number): boolean {
    return Number.isInteger(i) && i >= 0 && i < this.length;
  }

  /** Dollars of call `i`, null when unpriced (or out of range). */
  usdOf(i: number): number | null {
    const v = this.has(i) ? this.usd[i]! : Number.NaN;
    return Number.isNaN(v) ? null : v;
  }

  /** Dollars of call `i` for one kind, NaN when unpriced. */
  kindOf(i: number, kind: number): number {
    if (!this.has(i) || !Number.isInteger(kind) || kind < 0 || kind >= COST_KINDS.length || this.noKinds[i] === 1)
      return Number.NaN;
    const column = this.kinds[kind];
    return column ? column[i]! : 0;
  }

  /** Rates of call `i` (null when unpriced or priced per GPU-hour). */
  ratesOf(i: number): CallRates | null {
    return this.has(i) ? this.table[this.shared[i]!]!.rates : null;
  }

  /** Notes of call `i` (shared: do not change them). */
  notesOf(i: number): readonly string[] {
    return this.has(i) ? this.table[this.shared[i]!]!.notes : [];
  }

  /**
   * Each note with how many calls carry it and the first that does, in the order a walk over
   * the calls would first meet them: one pass over the per-call entry indexes, not one over
   * every call's notes.
   */
  noteTally(): Map<string, { calls: number; first: number }> {
    const count = new Int32Array(this.table.length);
    const first = new Int32Array(this.table.length).fill(-1);
    const order: number[] = [];
    for (let i = 0; i < this.length; i++) {
      const e = this.shared[i]!;
      if (first[e] === -1) {
        first[e] = i;
        order.push(e);
      }
      count[e] = count[e]! + 1;
    }
    const tally = new Map<string, { calls: number; first: number }>();
    for (const e of order) {
      for (const note of this.table[e]!.notes) {
        const known = tally.get(note);
        if (known) known.calls += count[e]!;
        else tally.set(note, { calls: count[e]!, first: first[e]! });
      }
    }
    return tally;
  }

  /** Call `i`'s price id (`at(i)?.priceId` without building the call's object), undefined out of range. */
  priceIdOf(i: number): string | null | undefined {
    return this.has(i) ? this.table[this.shared[i]!]!.priceId : undefined;
  }

  /** Why call `i` is unpriced (`at(i)?.unpriced` without building the call's object), undefined out of range. */
  unpricedOf(i: number): string | null | undefined {
    return this.has(i) ? this.table[this.shared[i]!]!.unpriced : undefined;
  }

  /** Call `i`'s cost as one object (a new one each time), undefined out of range. */
  at(i: number): CallCost | undefined {
    if (!this.has(i)) return undefined;
    const s = this.table[this.shared[i]!]!;
    let byKind: CostByKind | null = null;
    if (!Number.isNaN(this.kindOf(i, 0))) {
      byKind = zeroByKind();
      COST_KINDS.forEach((k, j) => (byKind![k] = this.kindOf(i, j)));
    }
    return {
      usd: this.usdOf(i),
      byKind,
      rates: s.rates,
      priceId: s.priceId,
      origin: s.origin,
      unpriced: s.unpriced,
      notes: [...s.notes],
    };
  }

  *[Symbol.iterator](): Iterator<CallCost> {
    for (let i = 0; i < this.length; i++) yield this.at(i)!;
  }
}

/** The index of each kind in CallCosts' columns. */
export const COST_KIND_INDEX: Readonly<Record<keyof CostByKind, number>> = Object.fromEntries(
  COST_KINDS.map((k, j) => [k, j]),
) as Record<keyof CostByKind, number>;

/** A session priced call by call. */
export interface SessionCost extends CostSummary {
  /** One per call, in call order. */
  calls: CallCosts;
  unpriced: UnpricedGroup[];
  /** The cost the agent itself reported for the session (SWE-agent, ATIF), beside ours. */
  reportedUsd: number | null;
  /** Assumptions with how many calls each concerns: "3 calls: long-context tier (input over 200,000 tokens)". */
  notes: string[];
}

/** Sums priced calls; `totalUsd` is null only when there were calls and none was priced. */
export function summarizeCosts(
  calls: Iterable<{ model: string | null; cost: CallCost }>,
  priceSource: string,
): CostSummary {
  const summary = newCostTotals();
  for (const { model, cost } of calls)
    addCost(summary, model, cost.usd, cost.byKind ? (k) => cost.byKind![COST_KINDS[k]!] : null);
  return finishCostTotals(summary, priceSource);
}

interface CostTotals {
  byKind: CostByKind;
  byModel: CostSummary['byModel'];
  total: number;
  priced: number;
  calls: number;
}

function newCostTotals(): CostTotals {
  return { byKind: zeroByKind(), byModel: {}, total: 0, priced: 0, calls: 0 };
}

function addCost(t: CostTotals, model: string | null, usd: number | null, kind: ((k: number) => number) | null): void {
  t.calls += 1;
  const key = model ?? 'unknown model';
  const m = (t.byModel[key] ??= { usd: null, calls: 0, unpricedCalls: 0 });
  m.calls += 1;
  if (usd === null || kind === null) {
    m.unpricedCalls += 1;
    return;
  }
  t.priced += 1;
  t.total += usd;
  m.usd = (m.usd ?? 0) + usd;
  COST_KINDS.forEach((k, j) => (t.byKind[k] += kind(j)));
}

/**
 * Adds a session's priced calls to totals, straight from their columns (no closure or
 * object per call); `also`, when given, gets the same additions in the same order (the
 * whole trace's totals, summed in the one pass over the session's calls).
 */
function addSessionCosts(t: CostTotals, session: Session, costs: CallCosts, also: CostTotals | null = null): void {
  for (let i = 0; i < costs.length; i++) {
    const model = session.calls[i]!.model;
    const usd = costs.usdOf(i);
    addColumns(t, model, usd, costs, i);
    if (also) addColumns(also, model, usd, costs, i);
  }
}

/** addCost for call `i` of a CallCosts, reading its kinds from the columns. */
function addColumns(t: CostTotals, model: string | null, usd: number | null, costs: CallCosts, i: number): void {
  t.calls += 1;
  const key = model ?? 'unknown model';
  const m = (t.byModel[key] ??= { usd: null, calls: 0, unpricedCalls: 0 });
  m.calls += 1;
  if (usd === null) {
    m.unpricedCalls += 1;
    return;
  }
  t.priced += 1;
  t.total += usd;
  m.usd = (m.usd ?? 0) + usd;
  const byKind = t.byKind;
  for (let j = 0; j < COST_KINDS.length; j++) byKind[COST_KINDS[j]!] += costs.kindOf(i, j);
}

function finishCostTotals(t: CostTotals, priceSource: string): CostSummary {
  const { byKind, byModel, total, priced, calls } = t;
  return {
    totalUsd: priced === 0 && calls > 0 ? null : total,
    byModel,
    byKind,
    pricedCalls: priced,
    unpricedCalls: calls - priced,
    priceSource,
  };
}

function countedNotes(costs: CallCosts): string[] {
  return [...costs.noteTally()].map(([note, { calls: n }]) => `${n} call${n === 1 ? '' : 's'}: ${note}`);
}

export function priceSession(session: Session, format: FormatId | null, book: PriceBook): SessionCost {
  return pricedSession(session, format, book, null);
}

/** priceSession, adding its calls to `traceTotals` too (in the same pass, so in the same order as a pass of their own). */
function pricedSession(
  session: Session,
  format: FormatId | null,
  book: PriceBook,
  traceTotals: CostTotals | null,
): SessionCost {
  const context = pricingContext(format, session);
  const groups = new Map<string, UnpricedGroup>();
  const calls = new CallCosts(session.calls.length);
  for (const call of session.calls) {
    const { cost, unknownKey } = priceCall(call, book, context);
    if (unknownKey !== null) {
      const g = groups.get(unknownKey) ?? { key: unknownKey, reason: cost.unpriced ?? '', calls: [] };
      g.calls.push(call.index);
      groups.set(unknownKey, g);
    }
    calls.push(cost);
  }
  const totals = newCostTotals();
  addSessionCosts(totals, session, calls, traceTotals);
  return {
    ...finishCostTotals(totals, book.source),
    calls,
    unpriced: [...groups.values()],
    reportedUsd: session.reportedTotals?.costUsd ?? null,
    notes: countedNotes(calls),
  };
}

/** Every session priced, the whole trace's total (sub-agents included), and diagnostics for what could not be priced. */
export interface TraceCost {
  sessions: SessionCost[];
  total: CostSummary;
  diagnostics: Diagnostic[];
}

export function priceTrace(model: TraceModel, book: PriceBook): TraceCost {
  // The trace's totals add every session's calls in session order, as a pass over each priced session would.
  const totals = newCostTotals();
  const sessions = model.sessions.map((s) => pricedSession(s, model.format, book, totals));
  return { sessions, total: finishCostTotals(totals, book.source), diagnostics: costDiagnostics(model, sessions) };
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
    for (const [n, tally] of cost.calls.noteTally()) {
      if (n !== NOTE_NO_SPLIT && n !== NOTE_NO_CACHED) continue;
      const d = notes.get(n);
      if (d) d.calls += tally.calls;
      else notes.set(n, { calls: tally.calls, first: session.calls[tally.first]! });
    }
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
    out.push({
      file: first.source.file,
      line: first.source.line,
      severity: 'info',
      message: `${calls} call${calls === 1 ? '' : 's'}: ${note}.`,
    });
  }
  return out;
}
