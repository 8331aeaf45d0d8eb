import { planWorkload } from '../sim/simRequests';
import type { KeyRun, ReplicaOptions } from '../sim/simRequests';
import { describeBound, REPLICA_BOUNDS, withinBound } from '../sim/params';
import { workloadFromSession } from '../sim/workload';
import type { AgentWorkload, WorkloadSession } from '../sim/workload';
import type { LlmCall, Session, TraceModel } from '../trace/model';

/**
 * Agent sessions written as block-hash traces for serving benchmarks (docs/replay.md):
 * Mooncake's and AIPerf's `mooncake_trace` rows with 512-token `hash_ids`, Bailian's rows
 * with 16-token ones. A prompt is described by its length and one id per block; equal ids
 * at equal positions mean equal tokens up to there, so a replaying server with prefix
 * caching sees exactly the sharing the session had.
 *
 * The content model is the simulator's (src/core/sim/simRequests.ts): each call keeps the
 * part of the previous call's prompt + output that the trace says it kept, and writes the
 * rest new; the first call of every session and replica starts with the shared prefix
 * (system prompt and tools); everything else is private to its session and replica. The
 * plan's token keys name every token by (content lineage, position), and a token's key
 * fixes everything before it, so a block is named by the key of its last token:
 *
 * - a full block gets one id per last-token key: equal prefixes, equal ids;
 * - the last, partial block of a prompt gets an id of its own (keyed by its last token
 *   too, but in a separate table), so a partial block's id is never reused for the full
 *   block that later fills that position. AIPerf builds each id's tokens on its first use
 *   and would otherwise cut the later prompt short; a prefix cache never hits a partial
 *   block's tokens as a full block either.
 *
 * Ids are numbered 0, 1, 2, … in the order the file first uses them, as Mooncake's
 * remapped hashes are.
 */

export type ReplayTarget = 'mooncake' | 'aiperf' | 'bailian';
export const REPLAY_TARGETS: readonly ReplayTarget[] = ['mooncake', 'aiperf', 'bailian'];

/** Tokens per hash block: Mooncake's FAST'25 traces and AIPerf's default use 512, Bailian's 16. */
export const REPLAY_BLOCK_TOKENS: Record<ReplayTarget, number> = { mooncake: 512, aiperf: 512, bailian: 16 };

export interface ReplayOptions {
  /** Copies of every exported session, each with its own private content (1 or more). */
  replicas: number;
  /** Seconds between the copies' starts. */
  staggerS: number;
  /** Session ids (or unique prefixes) to export with their sub-agents; null: every session with token counts. */
  sessions: string[] | null;
}

export const DEFAULT_REPLAY_OPTIONS: ReplayOptions = { replicas: 1, staggerS: 0, sessions: null };

/** One exported request: a call of a traced session in one replica. */
export interface ReplayRequest {
  /** The traced session and the call's index in its calls. */
  traceSessionId: string;
  callIndex: number;
  /** 0-based replica. */
  replica: number;
  /** Arrival in the replay, ms from its start: the traced start offset, plus the replica's stagger. */
  arrivalMs: number;
  promptTokens: number;
  /** At least 1: a server always generates a token. */
  outputTokens: number;
  /** Leading prompt tokens it shares with the previous call's prompt + output (0 for a first call). */
  prefixTokens: number;
  /** Tool wait after the previous call of its session, ms (0 for a first call). */
  waitMs: number;
  /** One id per block of the prompt (ceil(prompt / block)). */
  hashIds: number[];
}

/** What an export writes: its rows (JSON objects, one per line) and how each maps back to the trace. */
export interface ReplayExport {
  target: ReplayTarget;
  blockSizeTokens: number;
  /** Every request, in the order of `records` for mooncake and bailian; for aiperf, record i is request `recordRequest[i]`. */
  requests: ReplayRequest[];
  records: Array<Record<string, unknown>>;
  /** For each record, the index of its request. */
  recordRequest: number[];
  /** AIPerf: each record's `session_id` and turn in it (the join key of AIPerf's profile_export.jsonl). */
  recordSession: Array<{ sessionId: string; turn: number } | null>;
  /** Traced sessions exported (before replicas). */
  sessions: string[];
  notes: string[];
}

/** Replay export problems, in words for the user. */
export class ReplayError extends Error {}

/** The sessions to export: the chosen ones (by id or unique prefix) and their sub-agents, in trace order. */
function chosenSessions(model: TraceModel, wanted: string[] | null): Session[] {
  const usable = (s: Session): boolean => s.calls.some((c) => c.tokens.input !== null && c.tokens.output !== null);
  if (wanted === null || wanted.length === 0) return model.sessions.filter(usable);
  const picked = new Set<string>();
  for (const w of wanted) {
    const exact = model.sessions.find((s) => s.id === w);
    const matches = exact ? [exact] : model.sessions.filter((s) => s.id.startsWith(w));
    if (matches.length === 0)
      throw new ReplayError(`no session "${w}" in this trace; sessions: ${model.sessions.map((s) => s.id).join(', ')}`);
    if (matches.length > 1)
      throw new ReplayError(`"${w}" matches ${matches.length} sessions: ${matches.map((s) => s.id).join(', ')}`);
    picked.add(matches[0]!.id);
  }
  // Sub-agents of a chosen session come along (their parents' ids, followed to the top).
  const byId = new Map(model.sessions.map((s) => [s.id, s]));
  const chosen = (s: Session): boolean => {
    for (
      let at: Session | undefined = s, depth = 0;
      at && depth < 64;
      at = at.parentId !== null ? byId.get(at.parentId) : undefined, depth++
    )
      if (picked.has(at.id)) return true;
    return false;
  };
  return model.sessions.filter((s) => chosen(s) && usable(s));
}

/** A call's time, for its arrival offset: start, else end. */
function callTime(c: LlmCall): number | null {
  return c.startMs ?? c.endMs;
}

/** The key of the token at position `t` of a request's token runs. */
export function tokenKeyAt(runs: readonly KeyRun[], t: number, hint: { run: number }): number {
  while (hint.run < runs.length && runs[hint.run]!.to <= t) hint.run++;
  const r = runs[hint.run];
  if (!r || r.from > t) throw new Error(`no token key at ${t}`);
  return r.base + t;
}

/** Numbers block ids in first-use order: per key space, full blocks and partial last blocks in separate tables. */
export class BlockIds {
  private readonly tables = new Map<number, { full: Map<number, number>; partial: Map<number, number> }>();

  /** `first`: the first id handed out (0 for Mooncake's remapped hashes; Weka traces count from 1). */
  constructor(private next = 0) {}

  /** The id of a block named by its last token's key. */
  id(space: number, key: number, isFull: boolean): number {
    let tables = this.tables.get(space);
    if (!tables) this.tables.set(space, (tables = { full: new Map(), partial: new Map() }));
    const table = isFull ? tables.full : tables.partial;
    let id = table.get(key);
    if (id === undefined) table.set(key, (id = this.next++));
    return id;
  }

  /** An id used nowhere else (AIPerf's new turn content). */
  fresh(): number {
    return this.next++;
  }
}

/** A request before its block ids: its token keys and where it belongs. */
export interface PlannedRequest extends Omit<ReplayRequest, 'hashIds'> {
  keys: KeyRun[];
  /** Key space: one per traced session (each is planned alone, so their keys overlap). */
  space: number;
  /** Workload session (before replicas) and position in it, for stable ordering. */
  order: number;
}

/** Plans every request: content keys, arrival times, prefixes and waits. */
export function planRequests(
  model: TraceModel,
  options: ReplayOptions,
  notes: string[],
): { planned: PlannedRequest[]; sessions: string[] } {
  if (model.sessions.some((s) => s.calls.some((c) => c.blocks !== null))) {
    throw new ReplayError('this trace is already a block-hash trace (its requests carry hash_ids): replay it as it is');
  }
  // The simulator's bounds: a trillion replicas never finished, whoever asked (the CLI, a what-if document).
  if (!withinBound(options.replicas, REPLICA_BOUNDS.replicas))
    throw new ReplayError(`--replicas must be ${describeBound(REPLICA_BOUNDS.replicas)}, got ${options.replicas}`);
  if (!withinBound(options.staggerS, REPLICA_BOUNDS.staggerS))
    throw new ReplayError(`--stagger-s must be ${describeBound(REPLICA_BOUNDS.staggerS)}, got ${options.staggerS}`);
  const sessions = chosenSessions(model, options.sessions);
  if (sessions.length === 0)
    throw new ReplayError('no session in this trace has calls with input and output token counts: nothing to replay');
  const kept = sessions.map((s) => s.calls.filter((c) => c.tokens.input !== null && c.tokens.output !== null));
  const firstTimes = kept.map((calls) => callTime(calls[0]!)).filter((t): t is number => t !== null);
  const t0 = firstTimes.length > 0 ? Math.min(...firstTimes) : null;
  const workloads = sessions.map((s) => workloadFromSession(s));
  for (const [i, w] of workloads.entries()) for (const n of w.notes) notes.push(`${sessions[i]!.id}: ${n}`);
  const untimed = sessions.filter((_, i) => callTime(kept[i]![0]!) === null).length;
  if (untimed > 0 && sessions.length > 1)
    notes.push(`${untimed} sessions have no start time: they start with the first.`);
  const replicas: ReplicaOptions = {
    replicas: options.replicas,
    staggerS: options.staggerS,
    staggerMode: 'fixed',
    seed: 1,
    toolWaitScale: 1,
  };
  const planned: PlannedRequest[] = [];
  workloads.forEach((w, space) => {
    // Each traced session is planned alone, as the simulator replays it: its replicas share
    // its first call's cached prefix (system prompt and tools); different sessions share nothing.
    const start = callTime(kept[space]![0]!);
    const ws: WorkloadSession = {
      ...w.workload.sessions[0]!,
      startS: start !== null && t0 !== null ? (start - t0) / 1000 : 0,
    };
    const workload: AgentWorkload = {
      kind: 'sessions',
      sharedPrefixTokens: w.workload.sharedPrefixTokens,
      sessions: [ws],
    };
    // Token keys name every token; blocks are cut from them at the target's block size.
    const plan = planWorkload(workload, 16, replicas, true);
    const calls = kept[space]!;
    for (const simSession of plan.sessions) {
      let previous: PlannedRequest | null = null;
      simSession.requests.forEach((id, k) => {
        const r = plan.requests[id]!;
        const call = calls[k]!;
        let arrival = simSession.startS * 1000;
        if (previous) {
          // The recorded offset from the session's first call when both times are known; else the previous arrival + its duration + the tool wait.
          const t = callTime(call);
          const first = callTime(calls[0]!);
          const before = calls[k - 1]!;
          const duration =
            before.startMs !== null && before.endMs !== null ? Math.max(0, before.endMs - before.startMs) : 0;
          arrival =
            t !== null && first !== null
              ? Math.max(previous.arrivalMs, simSession.startS * 1000 + (t - first))
              : previous.arrivalMs + duration + ws.calls[k - 1]!.toolWaitS * 1000;
        }
        const request: PlannedRequest = {
          traceSessionId: sessions[space]!.id,
          callIndex: call.index,
          replica: simSession.replica,
          arrivalMs: arrival,
          promptTokens: r.promptTokens,
          outputTokens: r.outputTokens,
          prefixTokens:
            k === 0
              ? 0
              : Math.min(ws.calls[k]!.prefixTokens, previous!.promptTokens + previous!.outputTokens, r.promptTokens),
          waitMs: k === 0 ? 0 : ws.calls[k - 1]!.toolWaitS * 1000,
          keys: r.tokenKeys,
          space,
          order: planned.length,
        };
        planned.push(request);
        previous = request;
      });
    }
  });
  return { planned, sessions: sessions.map((s) => s.id) };
}

/** What an export tells about a planned request (its keys and plan bookkeeping stay behind). */
export function requestFields(p: PlannedRequest): Omit<ReplayRequest, 'hashIds'> {
  return {
    traceSessionId: p.traceSessionId,
    callIndex: p.callIndex,
    replica: p.replica,
    arrivalMs: p.arrivalMs,
    promptTokens: p.promptTokens,
    outputTokens: p.outputTokens,
    prefixTokens: p.prefixTokens,
    waitMs: p.waitMs,
  };
}

function hashIdsOf(request: PlannedRequest, blockSize: number, ids: BlockIds): number[] {
  const out: number[] = [];
  const hint = { run: 0 };
  const blocks = Math.ceil(request.promptTokens / blockSize);
  for (let j = 0; j < blocks; j++) {
    const end = Math.min((j + 1) * blockSize, request.promptTokens);
    out.push(ids.id(request.space, tokenKeyAt(request.keys, end - 1, hint), end - j * blockSize === blockSize));
  }
  return out;
}

/**
 * A traced session id as the head of AIPerf session ids: `%`, `#` and `~` percent-encoded,
 * so the `#r…` and `~…` added after it are never read as part of it (a continuation of
 * `B` is `B~2`; a traced session named `B~2` is `B%7E2`).
 */
export function aiperfIdHead(traceSessionId: string): string {
  return traceSessionId.replace(/[%#~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The head of each key space's AIPerf ids: its traced id encoded, and when two traced
 * sessions share an id, `%%2`, `%%3`, … after the second and later (encoding never writes
 * `%%`). So ids are unique by construction: head, replica and part each read back apart.
 */
function aiperfHeads(planned: readonly PlannedRequest[]): Map<number, string> {
  const heads = new Map<number, string>();
  const seen = new Map<string, number>();
  for (const p of planned) {
    if (heads.has(p.space)) continue;
    const n = (seen.get(p.traceSessionId) ?? 0) + 1;
    seen.set(p.traceSessionId, n);
    heads.set(p.space, `${aiperfIdHead(p.traceSessionId)}${n > 1 ? `%%${n}` : ''}`);
  }
  return heads;
}

/** The session id AIPerf replays a request under: its session's head, its replica, and its part after a context reset. */
function aiperfSessionId(head: string, request: ReplayRequest, part: number, replicas: number): string {
  return `${head}${replicas > 1 ? `#r${request.replica + 1}` : ''}${part > 1 ? `~${part}` : ''}`;
}

/**
 * Builds the rows of an export. Pure: the CLI and the extension write `records` as JSON
 * Lines (and redact them first).
 */
export function buildReplayExport(
  model: TraceModel,
  target: ReplayTarget,
  options: ReplayOptions = DEFAULT_REPLAY_OPTIONS,
): ReplayExport {
  const notes: string[] = [];
  const { planned, sessions } = planRequests(model, options, notes);
  const blockSize = REPLAY_BLOCK_TOKENS[target];
  const ids = new BlockIds();
  const records: Array<Record<string, unknown>> = [];
  const recordRequest: number[] = [];
  const recordSession: Array<{ sessionId: string; turn: number } | null> = [];
  let requests: ReplayRequest[];

  if (target === 'aiperf') {
    // Grouped by session (AIPerf replays a session's rows in file order), sessions by start.
    const order = [...planned].sort((a, b) => a.order - b.order);
    const heads = aiperfHeads(order);
    requests = [];
    let part = 0;
    let turn = 0;
    let sessionId = '';
    let previous: ReplayRequest | null = null;
    let previousSpace = -1;
    for (const p of order) {
      const rest = requestFields(p);
      const continues = previous !== null && previousSpace === p.space && previous.replica === p.replica;
      const kept = previous ? previous.promptTokens + previous.outputTokens : 0;
      const delta = p.promptTokens - kept;
      // A new turn in AIPerf = history + the live reply + a new user message: only a context that kept everything and grew fits.
      const appends = continues && p.prefixTokens === kept && delta > 0;
      const request: ReplayRequest = { ...rest, hashIds: appends ? [] : hashIdsOf(p, blockSize, ids) };
      if (appends) {
        for (let j = 0; j < Math.ceil(delta / blockSize); j++) request.hashIds.push(ids.fresh());
        turn += 1;
        records.push({
          session_id: sessionId,
          input_length: delta,
          output_length: p.outputTokens,
          hash_ids: request.hashIds,
          delay: round3(p.waitMs),
        });
      } else {
        part = continues ? part + 1 : 1;
        turn = 0;
        sessionId = aiperfSessionId(heads.get(p.space)!, request, part, options.replicas);
        records.push({
          session_id: sessionId,
          input_length: p.promptTokens,
          output_length: p.outputTokens,
          hash_ids: request.hashIds,
          timestamp: round3(p.arrivalMs),
        });
      }
      recordRequest.push(requests.length);
      recordSession.push({ sessionId, turn });
      requests.push(request);
      previous = request;
      previousSpace = p.space;
    }
    const parts = records.filter((r) => 'timestamp' in r).length;
    const resets = parts - sessions.length * options.replicas;
    if (resets > 0)
      notes.push(
        `${resets} calls did not extend the previous call's context (a compaction or a shrunk prompt): each starts a new AIPerf session (…~2, ~3) at its recorded time, with its full prompt.`,
      );
  } else {
    // Open loop, in arrival order; ties keep session order, so a parent always comes before its follow-up.
    const order = [...planned].sort((a, b) => a.arrivalMs - b.arrivalMs || a.order - b.order);
    requests = order.map((p) => ({ ...requestFields(p), hashIds: hashIdsOf(p, blockSize, ids) }));
    const chatIds = new Map<string, number>();
    requests.forEach((r, i) => {
      recordRequest.push(i);
      recordSession.push(null);
      if (target === 'mooncake') {
        records.push({
          timestamp: Math.round(r.arrivalMs),
          input_length: r.promptTokens,
          output_length: r.outputTokens,
          hash_ids: r.hashIds,
        });
        return;
      }
      // A conversation is a key space (a traced session) in one replica: two traced sessions that share an id stay apart.
      const key = `${order[i]!.space}\u0000${r.replica}`;
      const parent = chatIds.get(key);
      chatIds.set(key, i);
      records.push({
        chat_id: i,
        parent_chat_id: parent ?? -1,
        timestamp: round3(r.arrivalMs / 1000),
        input_length: r.promptTokens,
        output_length: r.outputTokens,
        type: 'text',
        turn: 0,
        hash_ids: r.hashIds,
      });
    });
    if (target === 'bailian') {
      // `turn` is the request's depth in its conversation, 1 for the first.
      const depth = new Map<number, number>();
      for (const rec of records) {
        const d = rec['parent_chat_id'] === -1 ? 1 : (depth.get(rec['parent_chat_id'] as number) ?? 0) + 1;
        depth.set(rec['chat_id'] as number, d);
        rec['turn'] = d;
      }
    }
  }
  return { target, blockSizeTokens: blockSize, requests, records, recordRequest, recordSession, sessions, notes };
}

/** Milliseconds (or seconds) to 3 decimals: what the files need, without float noise. */
function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** The export as JSON Lines text. */
export function replayJsonLines(e: ReplayExport): string {
  return e.records.map((r) => JSON.stringify(r)).join('\n') + (e.records.length > 0 ? '\n' : '');
}
