/**
 * A roofline cost model for one engine step (docs/design/simulator.md §5). The analyses use it
 * to estimate the prefill and decode time of a session when the trace has no server
 * timings; the simulator uses the same constants for its clock.
 */
export interface CostModel {
  /** Human name of the model and GPU these constants describe. */
  label: string;
  /** Fixed cost of one decode step: reading the weights once (ms). */
  stepFixedMs: number;
  /** Linear prefill cost per new token (µs). */
  prefillUsPerToken: number;
  /** Attention prefill cost per new token per 1,000 tokens of context before it (µs). */
  prefillAttnUsPerTokenPerKctx: number;
  /** Decode cost of reading one context token's KV per step (ns). */
  kvReadNsPerToken: number;
  /** Extra decode cost per sequence in a step (µs). */
  decodeUsPerSeq: number;
}

/** The default: a ~32B dense bf16 model (Qwen3-32B) on one H100 (docs/design/simulator.md §5). */
export const QWEN3_32B_H100: CostModel = {
  label: 'Qwen3-32B bf16 on one H100',
  stepFixedMs: 23,
  prefillUsPerToken: 132.7,
  prefillAttnUsPerTokenPerKctx: 4.2,
  kvReadNsPerToken: 92,
  decodeUsPerSeq: 0,
};

/**
 * Time to prefill `appended` new tokens after `cached` tokens already in the cache (ms).
 * Each new token attends to everything before it: on average `cached + appended / 2`.
 */
export function prefillMs(model: CostModel, cached: number, appended: number): number {
  const meanContextK = (cached + appended / 2) / 1000;
  return (appended * (model.prefillUsPerToken + model.prefillAttnUsPerTokenPerKctx * meanContextK)) / 1000;
}

/**
 * Time to decode `output` tokens after a prompt of `input` tokens, running alone (ms):
 * every step reads the weights and the whole KV so far.
 */
export function decodeMs(model: CostModel, input: number, output: number): number {
  const meanContext = input + output / 2;
  return output * (model.stepFixedMs + (meanContext * model.kvReadNsPerToken) / 1e6 + model.decodeUsPerSeq / 1000);
}
