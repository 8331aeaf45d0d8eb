import type { Engine, EngineName } from './engineTypes';
import type { PolicyName } from '../policies';
import { runFast } from './fastEngine';
import { runRadix } from './radixEngine';
import { runReference } from './referenceEngine';

/** The implementation of each policy under one engine name. */
export type EnginesByPolicy = Readonly<Record<PolicyName, Engine>>;

/**
 * The fast and the reference engine differ in how they keep vLLM's block pool; SGLang's
 * token-level radix tree (sglang-lru) has one implementation, shared by both names.
 */
export const FAST_ENGINES: EnginesByPolicy = { 'vllm-lru': runFast, 'ttl-pin': runFast, 'admission-cap': runFast, 'sglang-lru': runRadix };
export const REFERENCE_ENGINES: EnginesByPolicy = { 'vllm-lru': runReference, 'ttl-pin': runReference, 'admission-cap': runReference, 'sglang-lru': runRadix };

/** The one engine table: engine name → the implementation of each policy. */
export const ENGINE_TABLE: Readonly<Record<EngineName, EnginesByPolicy>> = { fast: FAST_ENGINES, reference: REFERENCE_ENGINES };

/** An engine that runs each plan on the implementation of its parameters' policy. */
export function enginesByPolicy(table: EnginesByPolicy): Engine {
  return (plan, params, debug) => table[params.policy](plan, params, debug);
}

/** The engine the CLI, its JSON and a sweep's worker threads name (a function cannot be sent to a thread). */
export function engineByName(name: EngineName): Engine {
  return enginesByPolicy(ENGINE_TABLE[name]);
}
