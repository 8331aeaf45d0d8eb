import type { AgentWorkload, BlockWorkload, Workload } from './workload';

/**
 * Block keys of a request, as runs: block `j` in `[from, to)` has key `base + j`.
 * An agent session's content is a tree of lineages: each call keeps the blocks it
 * shares with the previous call's prompt + output and writes the rest in a new
 * lineage, so equal keys mean equal content (a vLLM hash chain) without hashing
 * millions of blocks.
 */
export interface KeyRun {
  base: number;
  from: number;
  to: number;
}

/** Blocks per lineage in the key space: lineage L owns keys L·2^24 … L·2^24 + 2^24 − 1. */
export const LINEAGE_SPAN = 2 ** 24;

/** One request the engine replays: an agent call or a trace request. */
export interface SimRequest {
  id: number;
  /** Index into `SimPlan.sessions`, or −1 for open-loop trace requests. */
  session: number;
  callIndex: number;
  promptTokens: number;
  /** At least 1: vLLM always samples a token. */
  outputTokens: number;
  /** Open loop: the arrival time; closed loop: null until the previous call finishes. */
  arrivalS: number | null;
  /** Closed loop: wait after this call before the session's next call. */
  toolWaitS: number;
  keys: KeyRun[];
}

/** A replayed session (a replica of a workload session). */
export interface SimSession {
  id: string;
  /** Which workload session it replicates. */
  source: number;
  replica: number;
  startS: number;
  requests: number[];
}

/** Everything an engine run needs besides the parameters. */
export interface SimPlan {
  requests: SimRequest[];
  sessions: SimSession[];
  /** Block size the keys were cut for. */
  blockSizeTokens: number;
}

/** How replicas start: all at once, one every `staggerS` seconds, or with seeded random gaps of mean `staggerS`. */
export interface ReplicaOptions {
  replicas: number;
  staggerS: number;
  staggerMode: 'fixed' | 'random';
  seed: number;
  /** Multiplies every tool wait (the what-if panel's ×0.25 … ×4). */
  toolWaitScale: number;
}

export const DEFAULT_REPLICAS: ReplicaOptions = { replicas: 1, staggerS: 0, staggerMode: 'fixed', seed: 1, toolWaitScale: 1 };

/** A small, seeded PRNG (mulberry32): the same seed gives the same run everywhere. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function blocksOf(tokens: number, blockSize: number): number {
  return Math.ceil(tokens / blockSize);
}

/** The first `blocks` blocks of a run list. */
function truncateRuns(runs: readonly KeyRun[], blocks: number): KeyRun[] {
  const out: KeyRun[] = [];
  for (const r of runs) {
    if (r.from >= blocks) break;
    out.push({ base: r.base, from: r.from, to: Math.min(r.to, blocks) });
  }
  return out;
}

/** Replays an agent workload as `replicas` copies of each session, each with its own content but the shared prefix. */
function planAgents(w: AgentWorkload, blockSize: number, o: ReplicaOptions): SimPlan {
  const requests: SimRequest[] = [];
  const sessions: SimSession[] = [];
  let lineage = 1;
  const GLOBAL = lineage++;
  const random = seededRandom(o.seed);
  let randomOffset = 0;
  for (let r = 0; r < o.replicas; r++) {
    const offset = o.staggerMode === 'fixed' ? r * o.staggerS : r === 0 ? 0 : (randomOffset += -Math.log(1 - random()) * o.staggerS);
    w.sessions.forEach((ws, wi) => {
      const session: SimSession = { id: o.replicas > 1 ? `${ws.id}#${r + 1}` : ws.id, source: wi, replica: r, startS: ws.startS + offset, requests: [] };
      const sessionIndex = sessions.length;
      sessions.push(session);
      let path: KeyRun[] = [];
      ws.calls.forEach((call, k) => {
        const output = Math.max(1, call.outputTokens);
        const total = blocksOf(call.promptTokens + output, blockSize);
        const own = lineage++;
        let keys: KeyRun[];
        if (k === 0) {
          const shared = Math.floor(Math.min(w.sharedPrefixTokens, call.promptTokens) / blockSize);
          keys = shared > 0 ? [{ base: GLOBAL * LINEAGE_SPAN, from: 0, to: shared }] : [];
          keys.push({ base: own * LINEAGE_SPAN, from: shared, to: total });
        } else {
          const kept = Math.floor(call.prefixTokens / blockSize);
          keys = truncateRuns(path, kept);
          keys.push({ base: own * LINEAGE_SPAN, from: kept, to: total });
        }
        path = keys;
        const id = requests.length;
        session.requests.push(id);
        requests.push({ id, session: sessionIndex, callIndex: k, promptTokens: call.promptTokens, outputTokens: output, arrivalS: k === 0 ? session.startS : null, toolWaitS: call.toolWaitS * o.toolWaitScale, keys });
      });
    });
  }
  return { requests, sessions, blockSizeTokens: blockSize };
}

/**
 * Replays a block-hash trace open loop. Keys follow the hash chain: block j's key is
 * interned from (key of block j−1, hash j), so equal hashes after equal prefixes are
 * equal blocks. The last, partial prompt block and the output get keys of their own.
 */
function planBlocks(w: BlockWorkload): SimPlan {
  const interned = new Map<string, number>();
  let nextKey = 1;
  let lineage = 1;
  const requests: SimRequest[] = w.requests.map((q, i) => {
    const output = Math.max(1, q.outputTokens);
    const full = Math.min(Math.floor(q.promptTokens / w.blockSizeTokens), q.hashes.length);
    const keys: KeyRun[] = [];
    let parent = 0;
    for (let j = 0; j < full; j++) {
      const id = `${parent}/${q.hashes[j]}`;
      let key = interned.get(id);
      if (key === undefined) {
        key = -nextKey++; // negative: never collides with lineage keys
        interned.set(id, key);
      }
      parent = key;
      keys.push({ base: key - j, from: j, to: j + 1 });
    }
    const total = blocksOf(q.promptTokens + output, w.blockSizeTokens);
    keys.push({ base: lineage++ * LINEAGE_SPAN, from: full, to: total });
    return { id: i, session: -1, callIndex: i, promptTokens: q.promptTokens, outputTokens: output, arrivalS: q.arrivalS, toolWaitS: 0, keys };
  });
  return { requests, sessions: [], blockSizeTokens: w.blockSizeTokens };
}

/** Builds the engine's plan for a workload. Block traces keep their own block size; agents use the engine's. */
export function planWorkload(w: Workload, engineBlockSize: number, o: ReplicaOptions = DEFAULT_REPLICAS): SimPlan {
  return w.kind === 'sessions' ? planAgents(w, engineBlockSize, o) : planBlocks(w);
}

/**
 * Calls `visit(key, j)` for blocks j in [from, to) in order, walking the runs once;
 * stops early when `visit` returns false. Returns the first j not visited.
 */
export function visitKeys(runs: readonly KeyRun[], from: number, to: number, visit: (key: number, j: number) => boolean): number {
  let j = from;
  for (const r of runs) {
    if (r.to <= j) continue;
    if (r.from > j) return j; // a gap: no keys there
    const end = Math.min(r.to, to);
    for (; j < end; j++) if (!visit(r.base + j, j)) return j;
    if (j >= to) return j;
  }
  return j;
}

/** Block j's key in a run list (undefined beyond its end). */
export function keyAt(runs: readonly KeyRun[], j: number): number | undefined {
  for (const r of runs) if (j >= r.from && j < r.to) return r.base + j;
  return undefined;
}
