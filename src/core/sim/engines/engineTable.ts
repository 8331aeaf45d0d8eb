import type { Engine, EngineName, EngineStarter } from './engineTypes';
import type { PolicyName } from '../policies';
import { runFleet } from '../fleet/fleet';
import { runFast, startFast } from './fastEngine';
import { runHybrid, startHybrid } from './hybridEngine';
import { runRadix, startRadix } from './radixEngine';
import { runReference, startReference } from './referenceEngine';

/** A policy's implementation: a whole run on one GPU, and a run driven turn by turn (one GPU of a fleet). */
export interface EngineImpl {
  run: Engine;
  start: EngineStarter;
}

/** The implementation of each policy under one engine name. */
export type EnginesByPolicy = Readonly<Record<PolicyName, EngineImpl>>;

const FAST: EngineImpl = { run: runFast, start: startFast };
const REFERENCE: EngineImpl = { run: runReference, start: startReference };
const RADIX: EngineImpl = { run: runRadix, start: startRadix };
/** vLLM's hybrid KV-cache manager: one implementation for both names, chosen by the parameters' kvLayout. */
const HYBRID: EngineImpl = { run: runHybrid, start: startHybrid };

/**
 * The fast and the reference engine differ in how they keep vLLM's block pool; SGLang's
 * token-level radix tree (sglang-lru) has one implementation, shared by both names.
 */
export const FAST_ENGINES: EnginesByPolicy = {
  'vllm-lru': FAST,
  'ttl-pin': FAST,
  'admission-cap': FAST,
  'sglang-lru': RADIX,
};
export const REFERENCE_ENGINES: EnginesByPolicy = {
  'vllm-lru': REFERENCE,
  'ttl-pin': REFERENCE,
  'admission-cap': REFERENCE,
  'sglang-lru': RADIX,
};

/** The one engine table: engine name → the implementation of each policy. */
export const ENGINE_TABLE: Readonly<Record<EngineName, EnginesByPolicy>> = {
  fast: FAST_ENGINES,
  reference: REFERENCE_ENGINES,
};

/** An engine that runs each plan on the implementation of its parameters' policy, on one GPU or on the fleet the parameters describe. */
export function enginesByPolicy(table: EnginesByPolicy): Engine {
  return (plan, params, debug) => {
    const impl = params.kvLayout ? HYBRID : table[params.policy];
    if (params.fleet && params.fleet.gpus > 1) return runFleet(impl.start, plan, params, params.fleet, debug);
    return impl.run(plan, params, debug);
  };
}

/** The engine the CLI, its JSON and a sweep's worker threads name (a function cannot be sent to a thread). */
export function engineByName(name: EngineName): Engine {
  return enginesByPolicy(ENGINE_TABLE[name]);
}
