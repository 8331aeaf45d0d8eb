import type { Session, TraceModel } from '../trace/model';

/** One LLM call of an agent session, as the simulator replays it. */
export interface WorkloadCall {
  /** Tokens in the prompt. */
  promptTokens: number;
  /** Leading prompt tokens equal to the previous call's prompt + output (0 for a first call). */
  prefixTokens: number;
  outputTokens: number;
  /** Time from this call's end to the session's next call (the tool runs, the user thinks), in seconds. */
  toolWaitS: number;
}

/** One agent session: its calls run one after another, each after the previous call's tool wait. */
export interface WorkloadSession {
  id: string;
  /** When its first call arrives, in seconds from the start of the run. */
  startS: number;
  calls: WorkloadCall[];
}

/**
 * A closed-loop agent workload (the documented workload JSON): every session's first
 * `sharedPrefixTokens` prompt tokens are the same across sessions (a shared system
 * prompt and tool list).
 */
export interface AgentWorkload {
  kind: 'sessions';
  sharedPrefixTokens: number;
  sessions: WorkloadSession[];
}

/** One request of a block-hash trace (Mooncake, Bailian), replayed open loop at its arrival time. */
export interface BlockRequest {
  id: string;
  arrivalS: number;
  promptTokens: number;
  outputTokens: number;
  /** One hash per block of the prompt; equal hashes at equal positions after equal prefixes mean equal blocks. */
  hashes: number[];
}

/** An open-loop workload of requests with their own block hashes and block size. */
export interface BlockWorkload {
  kind: 'requests';
  blockSizeTokens: number;
  requests: BlockRequest[];
}

/** Any workload the simulator runs. */
export type Workload = AgentWorkload | BlockWorkload;

/** What was left out or assumed while turning a trace into a workload, for the user to read. */
export interface WorkloadNotes {
  notes: string[];
}

function isWhole(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0;
}

/**
 * Turns one traced session into a workload (docs/guide/simulate.md, "Inputs: how a trace becomes a workload"). Per call: prompt =
 * input tokens; prefix = the part of the previous prompt + output that this prompt
 * still starts with (all of it while the context only grows; after a compaction or a
 * shrink, what the provider found cached); output; tool wait = next start − this end.
 * The shared prefix across sessions is what the first call found cached already (the
 * system prompt and tools other sessions wrote).
 */
export function workloadFromSession(session: Session): { workload: AgentWorkload; notes: string[] } {
  const notes: string[] = [];
  const calls: WorkloadCall[] = [];
  const known = session.calls.filter((c) => c.tokens.input !== null && c.tokens.output !== null);
  const skipped = session.calls.length - known.length;
  if (skipped > 0)
    notes.push(`${skipped} of ${session.calls.length} calls have no input or output token count and are left out.`);
  const compactionAt = new Set(session.compactions.map((c) => c.beforeCall));
  const waits: number[] = [];
  let unknownWaits = 0;
  let previous: (typeof known)[number] | null = null;
  for (const call of known) {
    const prompt = call.tokens.input!;
    const output = call.tokens.output!;
    let prefix = 0;
    if (previous) {
      const before = previous.tokens.input! + previous.tokens.output!;
      const compacted = [...compactionAt].some((b) => b > previous!.index && b <= call.index);
      prefix =
        compacted || prompt < previous.tokens.input!
          ? Math.min(call.tokens.cached ?? 0, prompt, before)
          : Math.min(before, prompt);
      const wait =
        previous.endMs !== null && (call.startMs ?? call.endMs) !== null
          ? ((call.startMs ?? call.endMs)! - previous.endMs) / 1000
          : null;
      if (wait === null) unknownWaits += 1;
      else waits.push(Math.max(0, wait));
      calls[calls.length - 1]!.toolWaitS = wait === null ? Number.NaN : Math.max(0, wait);
    }
    calls.push({ promptTokens: prompt, prefixTokens: prefix, outputTokens: output, toolWaitS: 0 });
    previous = call;
  }
  // Unknown waits (no timestamps) take the session's median wait, or 0 when none is known.
  const sorted = [...waits].sort((a, b) => a - b);
  const medianWait = sorted.length > 0 ? sorted[Math.floor((sorted.length - 1) / 2)]! : 0;
  for (const c of calls) if (Number.isNaN(c.toolWaitS)) c.toolWaitS = medianWait;
  if (unknownWaits > 0)
    notes.push(
      `${unknownWaits} tool waits are unknown (no timestamps) and use the session's median wait, ${medianWait.toFixed(1)} s.`,
    );
  const first = known[0];
  const sharedPrefixTokens = first ? Math.min(first.tokens.cached ?? 0, first.tokens.input!) : 0;
  return {
    workload: { kind: 'sessions', sharedPrefixTokens, sessions: [{ id: session.id, startS: 0, calls }] },
    notes,
  };
}

/** Turns a block-hash trace (Mooncake, Bailian) into an open-loop workload. */
export function workloadFromBlockTrace(model: TraceModel): { workload: BlockWorkload | null; notes: string[] } {
  const requests: BlockRequest[] = [];
  let blockSize: number | null = null;
  let skipped = 0;
  for (const s of model.sessions) {
    for (const c of s.calls) {
      if (!c.blocks || c.tokens.input === null || c.startMs === null) {
        skipped += 1;
        continue;
      }
      blockSize ??= c.blocks.blockSizeTokens;
      if (c.blocks.blockSizeTokens !== blockSize) {
        skipped += 1;
        continue;
      }
      requests.push({
        id: `${s.id}/${c.id}`,
        arrivalS: c.startMs / 1000,
        promptTokens: c.tokens.input,
        outputTokens: c.tokens.output ?? 0,
        hashes: c.blocks.hashes,
      });
    }
  }
  requests.sort((a, b) => a.arrivalS - b.arrivalS);
  const notes = skipped > 0 ? [`${skipped} requests without block hashes, input or arrival time are left out.`] : [];
  return { workload: blockSize === null ? null : { kind: 'requests', blockSizeTokens: blockSize, requests }, notes };
}

/** A problem with a workload, naming the parameter. */
export class WorkloadError extends Error {}

/**
 * Checks a parsed workload JSON document and returns it typed, or throws a
 * WorkloadError naming the first bad parameter (e.g. "sessions[0].calls[3].toolWaitS
 * must be a number ≥ 0, got -2").
 */
export function parseWorkloadJson(value: unknown): Workload {
  const fail = (path: string, want: string, got: unknown): never => {
    throw new WorkloadError(`${path} must be ${want}, got ${JSON.stringify(got)}`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('workload', 'a JSON object', value);
  const w = value as Record<string, unknown>;
  if ('requests' in w) {
    if (!isWhole(w['blockSizeTokens']) || w['blockSizeTokens'] === 0)
      fail('blockSizeTokens', 'a whole number > 0', w['blockSizeTokens']);
    if (!Array.isArray(w['requests'])) fail('requests', 'an array', w['requests']);
    const requests = (w['requests'] as unknown[]).map((r, i): BlockRequest => {
      const p = `requests[${i}]`;
      if (typeof r !== 'object' || r === null) fail(p, 'an object', r);
      const o = r as Record<string, unknown>;
      if (typeof o['arrivalS'] !== 'number' || !(o['arrivalS'] >= 0))
        fail(`${p}.arrivalS`, 'a number ≥ 0', o['arrivalS']);
      if (!isWhole(o['promptTokens']) || o['promptTokens'] === 0)
        fail(`${p}.promptTokens`, 'a whole number > 0', o['promptTokens']);
      if (!isWhole(o['outputTokens'])) fail(`${p}.outputTokens`, 'a whole number ≥ 0', o['outputTokens']);
      if (!Array.isArray(o['hashes']) || !(o['hashes'] as unknown[]).every((h) => Number.isSafeInteger(h)))
        fail(`${p}.hashes`, 'an array of integers', o['hashes']);
      return {
        id: typeof o['id'] === 'string' ? o['id'] : String(i),
        arrivalS: o['arrivalS'] as number,
        promptTokens: o['promptTokens'] as number,
        outputTokens: o['outputTokens'] as number,
        hashes: o['hashes'] as number[],
      };
    });
    return { kind: 'requests', blockSizeTokens: w['blockSizeTokens'] as number, requests };
  }
  const shared = w['sharedPrefixTokens'] ?? 0;
  if (!isWhole(shared)) fail('sharedPrefixTokens', 'a whole number ≥ 0', shared);
  if (!Array.isArray(w['sessions']) || (w['sessions'] as unknown[]).length === 0)
    fail('sessions', 'a non-empty array', w['sessions']);
  const sessions = (w['sessions'] as unknown[]).map((s, i): WorkloadSession => {
    const p = `sessions[${i}]`;
    if (typeof s !== 'object' || s === null) fail(p, 'an object', s);
    const o = s as Record<string, unknown>;
    const startS = o['startS'] ?? 0;
    if (typeof startS !== 'number' || !(startS >= 0)) fail(`${p}.startS`, 'a number ≥ 0', startS);
    if (!Array.isArray(o['calls']) || (o['calls'] as unknown[]).length === 0)
      fail(`${p}.calls`, 'a non-empty array', o['calls']);
    let previousContext = 0;
    const calls = (o['calls'] as unknown[]).map((c, k): WorkloadCall => {
      const q = `${p}.calls[${k}]`;
      if (typeof c !== 'object' || c === null) fail(q, 'an object', c);
      const x = c as Record<string, unknown>;
      if (!isWhole(x['promptTokens']) || x['promptTokens'] === 0)
        fail(`${q}.promptTokens`, 'a whole number > 0', x['promptTokens']);
      if (!isWhole(x['outputTokens'])) fail(`${q}.outputTokens`, 'a whole number ≥ 0', x['outputTokens']);
      const prefix = x['prefixTokens'] ?? 0;
      if (!isWhole(prefix)) fail(`${q}.prefixTokens`, 'a whole number ≥ 0', prefix);
      const limit = Math.min(previousContext, x['promptTokens'] as number);
      if ((prefix as number) > limit)
        fail(`${q}.prefixTokens`, `≤ ${limit} (the previous call's prompt + output, and this prompt)`, prefix);
      const wait = x['toolWaitS'] ?? 0;
      if (typeof wait !== 'number' || !(wait >= 0) || !Number.isFinite(wait))
        fail(`${q}.toolWaitS`, 'a number ≥ 0', wait);
      previousContext = (x['promptTokens'] as number) + (x['outputTokens'] as number);
      return {
        promptTokens: x['promptTokens'] as number,
        prefixTokens: prefix as number,
        outputTokens: x['outputTokens'] as number,
        toolWaitS: wait as number,
      };
    });
    return { id: typeof o['id'] === 'string' ? o['id'] : `s${i}`, startS: startS as number, calls };
  });
  return { kind: 'sessions', sharedPrefixTokens: shared as number, sessions };
}

/** The documented JSON form of an agent workload (what `--emit-workload` writes). */
export function workloadToJson(w: AgentWorkload): object {
  return {
    sharedPrefixTokens: w.sharedPrefixTokens,
    sessions: w.sessions.map((s) => ({ id: s.id, startS: s.startS, calls: s.calls })),
  };
}
