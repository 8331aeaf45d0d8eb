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

/**
 * Tokens per lineage in the token key space (SimRequest.tokenKeys): lineage L owns
 * token keys L·2^28 … L·2^28 + 2^28 − 1. Keys must stay exact doubles (≤ 2^53), so
 * 2^28 tokens per lineage leaves 2^25 ≈ 33.5 million lineages (one per request, plus
 * the shared prefix), and a request may be 268 million tokens long: the same reach as
 * the block keys at 16-token blocks (2^24 · 16), 268 times the default
 * maxModelLenTokens. 2^32 tokens per lineage would have left only 2^21 ≈ 2.1 million
 * lineages, which a large replica sweep could reach.
 */
export const TOKEN_LINEAGE_SPAN = 2 ** 28;

/** Lineages the token key space holds: 2^53 / TOKEN_LINEAGE_SPAN. */
export const MAX_TOKEN_LINEAGES = 2 ** 53 / TOKEN_LINEAGE_SPAN;

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
  /**
   * The same content token by token, for the token-level radix cache (sglang-lru):
   * token `t` in `[from, to)` has key `base + t`, runs contiguous from 0 to prompt +
   * output. Unlike `keys`, a kept prefix is not rounded down to whole blocks. Empty
   * unless the plan was made with token keys (SimPlan.tokenKeys).
   */
  tokenKeys: KeyRun[];
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
  /** Whether requests carry tokenKeys (only the token-level sglang-lru engine reads them; otherwise they are left empty). */
  tokenKeys: boolean;
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

export const DEFAULT_REPLICAS: ReplicaOptions = {
  replicas: 1,
  staggerS: 0,
  staggerMode: 'fixed',
  seed: 1,
  toolWaitScale: 1,
};

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

/**
 * The key runs of a call that keeps the first `kept` keys of `path`, up to `to`:
 * continuing the last run's lineage, or else a new lineage starting at `newBase`.
 */
function extendRuns(path: readonly KeyRun[], kept: number, continues: boolean, newBase: number, to: number): KeyRun[] {
  const keys = truncateRuns(path, kept);
  // The previous call's own lineage (never the shared prefix's: a call always adds a run of its own after it).
  const lineage = continues && path.length > 0 ? path[path.length - 1]!.base : newBase;
  const last = keys[keys.length - 1];
  if (last && last.base === lineage && last.to === kept) last.to = to;
  else keys.push({ base: lineage, from: kept, to });
  return keys;
}

/** The first token key of a lineage; refuses what the token key space cannot hold exactly. */
function tokenBase(lineage: number, tokens: number): number {
  if (lineage >= MAX_TOKEN_LINEAGES)
    throw new RangeError(`more than ${MAX_TOKEN_LINEAGES} requests: the token key space is full`);
  if (tokens > TOKEN_LINEAGE_SPAN)
    throw new RangeError(`a request of ${tokens} tokens is longer than a token lineage (${TOKEN_LINEAGE_SPAN})`);
  return lineage * TOKEN_LINEAGE_SPAN;
}

/** Replays an agent workload as `replicas` copies of each session, each with its own content but the shared prefix. */
function planAgents(w: AgentWorkload, blockSize: number, o: ReplicaOptions, withTokenKeys: boolean): SimPlan {
  const requests: SimRequest[] = [];
  const sessions: SimSession[] = [];
  let lineage = 1;
  const GLOBAL = lineage++;
  const random = seededRandom(o.seed);
  let randomOffset = 0;
  for (let r = 0; r < o.replicas; r++) {
    const offset =
      o.staggerMode === 'fixed' ? r * o.staggerS : r === 0 ? 0 : (randomOffset += -Math.log(1 - random()) * o.staggerS);
    w.sessions.forEach((ws, wi) => {
      const session: SimSession = {
        id: o.replicas > 1 ? `${ws.id}#${r + 1}` : ws.id,
        source: wi,
        replica: r,
        startS: ws.startS + offset,
        requests: [],
      };
      const sessionIndex = sessions.length;
      sessions.push(session);
      let path: KeyRun[] = [];
      let tokenPath: KeyRun[] = [];
      let previousTokens = 0;
      ws.calls.forEach((call, k) => {
        const output = Math.max(1, call.outputTokens);
        const totalTokens = call.promptTokens + output;
        const total = blocksOf(totalTokens, blockSize);
        const own = lineage++;
        const ownTokens = withTokenKeys ? tokenBase(own, totalTokens) : 0;
        let keys: KeyRun[];
        let tokenKeys: KeyRun[] = [];
        if (k === 0) {
          const sharedTokens = Math.min(w.sharedPrefixTokens, call.promptTokens);
          const shared = Math.floor(sharedTokens / blockSize);
          keys = shared > 0 ? [{ base: GLOBAL * LINEAGE_SPAN, from: 0, to: shared }] : [];
          keys.push({ base: own * LINEAGE_SPAN, from: shared, to: total });
          if (withTokenKeys) {
            // Token level: the exact shared prefix, not rounded down to blocks.
            tokenKeys = sharedTokens > 0 ? [{ base: GLOBAL * TOKEN_LINEAGE_SPAN, from: 0, to: sharedTokens }] : [];
            tokenKeys.push({ base: ownTokens, from: sharedTokens, to: totalTokens });
          }
        } else {
          // Clamped to the previous call's length so the runs stay contiguous even for a prefix the JSON checks would refuse.
          const keptTokens = Math.min(call.prefixTokens, previousTokens, call.promptTokens);
          const kept = Math.floor(keptTokens / blockSize);
          // A call that keeps every full block of the previous context continues its lineage:
          // past that point the previous call had at most a partial block, never hashed, so
          // no key is shared by two contents. Keys then stay one run per compaction instead
          // of one per call (an 800-call session would otherwise carry 800 runs a call).
          keys = extendRuns(path, kept, kept === Math.floor(previousTokens / blockSize), own * LINEAGE_SPAN, total);
          if (withTokenKeys) {
            tokenKeys = extendRuns(tokenPath, keptTokens, keptTokens === previousTokens, ownTokens, totalTokens);
            if (keptTokens === previousTokens) tokenBase(0, totalTokens); // the continued token lineage must still hold the context
          }
        }
        path = keys;
        tokenPath = tokenKeys;
        previousTokens = totalTokens;
        const id = requests.length;
        session.requests.push(id);
        requests.push({
          id,
          session: sessionIndex,
          callIndex: k,
          promptTokens: call.promptTokens,
          outputTokens: output,
          arrivalS: k === 0 ? session.startS : null,
          toolWaitS: call.toolWaitS * o.toolWaitScale,
          keys,
          tokenKeys,
        });
      });
    });
  }
  return { requests, sessions, blockSizeTokens: blockSize, tokenKeys: withTokenKeys };
}

/**
 * Replays a block-hash trace open loop. Keys follow the hash chain: block j's key is
 * interned from (key of block j−1, hash j), so equal hashes after equal prefixes are
 * equal blocks. The last, partial prompt block and the output get keys of their own.
 *
 * Token keys: the bs tokens of interned block −n (n ≥ 1) are −(n+1)·bs … −n·bs − 1,
 * one key per (block key, token offset), all negative so they never meet lineage
 * tokens; the trace says nothing finer, so two requests share a hashed block's tokens
 * all or none.
 */
function planBlocks(w: BlockWorkload, withTokenKeys: boolean): SimPlan {
  const bs = w.blockSizeTokens;
  const interned = new Map<string, number>();
  let nextKey = 1;
  let lineage = 1;
  const requests: SimRequest[] = w.requests.map((q, i) => {
    const output = Math.max(1, q.outputTokens);
    const full = Math.min(Math.floor(q.promptTokens / bs), q.hashes.length);
    const keys: KeyRun[] = [];
    const tokenKeys: KeyRun[] = [];
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
      // Token t = j·bs + o of this block has key (key − 1)·bs + o.
      if (withTokenKeys) tokenKeys.push({ base: (key - 1) * bs - j * bs, from: j * bs, to: (j + 1) * bs });
    }
    const total = blocksOf(q.promptTokens + output, bs);
    const own = lineage++;
    keys.push({ base: own * LINEAGE_SPAN, from: full, to: total });
    if (withTokenKeys)
      tokenKeys.push({ base: tokenBase(own, q.promptTokens + output), from: full * bs, to: q.promptTokens + output });
    return {
      id: i,
      session: -1,
      callIndex: i,
      promptTokens: q.promptTokens,
      outputTokens: output,
      arrivalS: q.arrivalS,
      toolWaitS: 0,
      keys,
      tokenKeys,
    };
  });
  return { requests, sessions: [], blockSizeTokens: w.blockSizeTokens, tokenKeys: withTokenKeys };
}

/**
 * Builds the engine's plan for a workload. Block traces keep their own block size; agents
 * use the engine's. Token keys are for the token-level engine (sglang-lru) alone: leaving
 * them out spares the block-level engines a second key list per request.
 */
export function planWorkload(
  w: Workload,
  engineBlockSize: number,
  o: ReplicaOptions = DEFAULT_REPLICAS,
  withTokenKeys = true,
): SimPlan {
  return w.kind === 'sessions' ? planAgents(w, engineBlockSize, o, withTokenKeys) : planBlocks(w, withTokenKeys);
}

/**
 * Calls `visit(key, j)` for blocks j in [from, to) in order, walking the runs once;
 * stops early when `visit` returns false. Returns the first j not visited.
 */
export function visitKeys(
  runs: readonly KeyRun[],
  from: number,
  to: number,
  visit: (key: number, j: number) => boolean,
): number {
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
