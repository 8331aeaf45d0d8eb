import type { EngineName } from './engines/engineTypes';
import { ParamError } from './params';
import type { ScenarioOptions } from './scenario';
import { DEFAULT_REPLICAS } from './simRequests';
import type { Workload } from './workload';

/*
 * What a run will hold at its peak, known before it starts, so a run that would not fit
 * is refused by name instead of dying with a heap overflow minutes in. The figures are
 * upper estimates from measurements of the fast, reference and radix engines on the
 * sample session (docs/design/simulator.md, "Memory"): a fleet's GPUs keep state only
 * for the calls routed to them, so memory grows with the calls and the GPUs, never with
 * their product.
 */

/** Per simulated call: its request, its record, an engine's per-request slots, its session's result (measured ≈ 0.85–1.1 KB). */
const CALL_BYTES = 1_600;
/** Per key run of a request's block keys (and again for token keys under sglang-lru). */
const KEY_RUN_BYTES = 64;
/** Per block hash of a block-hash trace: its key run and its interned chain key. */
const HASH_BYTES = 200;
/** Per GPU: its engine, its cache's bookkeeping, its feed (measured ≈ 10 KB). */
const GPU_BYTES = 64 * 1024;
/** Per block of the reference engine's pool on each GPU, allocated up front: ref count, key, queue links, queue flag (21 bytes). */
const REFERENCE_BLOCK_BYTES = 24;
/** Per block key the reference engine caches: its hash-map entry while cached and its entry in the set of keys ever cached. */
const REFERENCE_KEY_BYTES = 128;

/** A run's size and what its memory goes to, for the estimate and for the message that refuses it. */
export interface RunSize {
  /** Calls simulated (replicas × the workload's calls). */
  calls: number;
  replicas: number;
  gpus: number;
  /** Estimated peak bytes of the whole run. */
  bytes: number;
  /** Of which, growing with the replicas (the calls, their keys, their new blocks). */
  perReplicaBytes: number;
  /** Of which, growing with the GPUs (each one's engine and, on the reference engine, its block pool). */
  perGpuBytes: number;
}

/** Calls, key runs and newly written blocks of one replica of the workload (block-hash traces: of the whole trace). */
function workloadShape(
  w: Workload,
  blockSize: number,
): { calls: number; keyRuns: number; newBlocks: number; hashes: number } {
  if (w.kind === 'requests') {
    let hashes = 0;
    let newBlocks = 0;
    for (const r of w.requests) {
      hashes += r.hashes.length;
      newBlocks += Math.ceil((r.promptTokens + Math.max(1, r.outputTokens)) / w.blockSizeTokens);
    }
    return { calls: w.requests.length, keyRuns: w.requests.length + hashes, newBlocks, hashes };
  }
  let calls = 0;
  let keyRuns = 0;
  let newBlocks = 0;
  for (const s of w.sessions) {
    // A call's keys are its kept runs plus one of its own; a call that keeps less than all of the previous context adds a run.
    let runs = 0;
    let previous = 0;
    s.calls.forEach((c, k) => {
      const total = c.promptTokens + Math.max(1, c.outputTokens);
      const kept =
        k === 0 ? Math.min(w.sharedPrefixTokens, c.promptTokens) : Math.min(c.prefixTokens, previous, c.promptTokens);
      runs = k === 0 ? 2 : kept === previous ? runs : runs + 1;
      keyRuns += runs;
      newBlocks += Math.max(0, Math.ceil(total / blockSize) - Math.floor(kept / blockSize));
      previous = total;
      calls++;
    });
  }
  return { calls, keyRuns, newBlocks, hashes: 0 };
}

/** The estimated peak memory of a run (one scenario: one sweep point). */
export function estimateRun(engine: EngineName, workload: Workload, options: ScenarioOptions): RunSize {
  const p = options.params;
  const replicas = workload.kind === 'sessions' ? (options.replicas ?? DEFAULT_REPLICAS).replicas : 1;
  const gpus = p.fleet?.gpus ?? 1;
  const blockSize = workload.kind === 'requests' ? workload.blockSizeTokens : p.blockSizeTokens;
  const shape = workloadShape(workload, blockSize);
  const tokenKeys = p.policy === 'sglang-lru';
  const blockPool = engine === 'reference' && !tokenKeys;
  const perReplicaBytes =
    shape.calls * CALL_BYTES +
    shape.keyRuns * KEY_RUN_BYTES * (tokenKeys ? 2 : 1) +
    shape.hashes * HASH_BYTES * (tokenKeys ? 2 : 1) +
    (blockPool ? shape.newBlocks * REFERENCE_KEY_BYTES : 0);
  const poolBlocks = Math.floor(p.capacityTokens / blockSize);
  const perGpuBytes = GPU_BYTES + (blockPool ? poolBlocks * REFERENCE_BLOCK_BYTES : 0);
  return {
    calls: shape.calls * replicas,
    replicas,
    gpus,
    bytes: replicas * perReplicaBytes + gpus * perGpuBytes,
    perReplicaBytes,
    perGpuBytes,
  };
}

function gib(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${Math.max(1, Math.round(bytes / 2 ** 20))} MiB`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * Refuses, before it starts, a run estimated to need more than `budgetBytes` (what the
 * process may still use): the message says what the memory goes to and how many
 * replicas or GPUs would fit.
 */
export function checkRunFits(
  engine: EngineName,
  workload: Workload,
  options: ScenarioOptions,
  budgetBytes: number,
): RunSize {
  const size = estimateRun(engine, workload, options);
  if (size.bytes <= budgetBytes) return size;
  const gpuPart = size.gpus * size.perGpuBytes;
  const replicaPart = size.replicas * size.perReplicaBytes;
  const what =
    workload.kind === 'sessions'
      ? `${count(size.replicas)} replica${size.replicas === 1 ? '' : 's'} × ${count(size.calls / size.replicas)} calls (${count(size.calls)} calls) on ${count(size.gpus)} GPU${size.gpus === 1 ? '' : 's'}`
      : `${count(size.calls)} requests on ${count(size.gpus)} GPU${size.gpus === 1 ? '' : 's'}`;
  const advice: string[] = [];
  if (workload.kind === 'sessions' && budgetBytes > gpuPart) {
    const replicas = Math.floor((budgetBytes - gpuPart) / size.perReplicaBytes);
    if (replicas >= 1)
      advice.push(`at most ${count(replicas)} replicas fit on ${count(size.gpus)} GPU${size.gpus === 1 ? '' : 's'}`);
  }
  if (gpuPart > replicaPart && budgetBytes > replicaPart) {
    const gpus = Math.floor((budgetBytes - replicaPart) / size.perGpuBytes);
    if (gpus >= 1)
      advice.push(
        `at most ${count(gpus)} GPUs fit${engine === 'reference' ? ' (the reference engine keeps every block of each GPU: the fast engine does not)' : ''}`,
      );
  }
  if (advice.length === 0) advice.push('this workload is too large for the memory at hand');
  throw new ParamError(
    `${what} would need about ${gib(size.bytes)} of memory, more than the ${gib(budgetBytes)} this process can use: ${advice.join('; ')}`,
  );
}
