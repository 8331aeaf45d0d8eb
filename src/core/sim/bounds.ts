/**
 * The one table of what every number of a scenario may be: the engine's parameters, each
 * policy's own, the replay's, and the GPU memory a preset may be given. The engine's checks
 * (validateParams), the command line and the what-if panel's fields all read it.
 */

/** The range a numeric parameter may take: far wider than any real GPU or model, narrow enough that nothing overflows, hangs or exhausts memory. */
export interface ParamBound {
  min: number;
  max: number;
  /** The minimum itself is not allowed (a rate, a bandwidth). */
  minExclusive?: boolean;
  /** The maximum itself is not allowed (a backoff factor). */
  maxExclusive?: boolean;
  integer?: boolean;
}

/**
 * Every numeric parameter's bounds. The maxima are a thousandfold past real hardware
 * (an H200 holds ~255k tokens of Qwen3-32B KV; a step takes milliseconds), so any value
 * outside them is a typo or an attack: 1e308 µs per token made the clock infinite and
 * the run never end, a 1e15-token cache asked for more memory than exists.
 */
export const PARAM_BOUNDS = {
  blockSizeTokens: { min: 1, max: 4096, integer: true },
  capacityTokens: { min: 1, max: 2 ** 28 },
  maxNumBatchedTokens: { min: 1, max: 10_000_000, integer: true },
  maxNumSeqs: { min: 1, max: 1_000_000, integer: true },
  maxModelLenTokens: { min: 1, max: 1_000_000_000, integer: true },
  sglangPageSizeTokens: { min: 1, max: 4096, integer: true },
  stepFixedMs: { min: 0, max: 1_000_000 },
  prefillUsPerToken: { min: 0, max: 1_000_000 },
  kvReadNsPerToken: { min: 0, max: 1_000_000 },
  decodeUsPerSeq: { min: 0, max: 1_000_000 },
  kvBytesPerToken: { min: 0, max: 1_000_000_000 },
  ttlS: { min: 0, max: 10_000_000 },
  maxTtlS: { min: 0, max: 10_000_000 },
  cap: { min: 1, max: 1_000_000, integer: true },
  initialCap: { min: 1, max: 1_000_000, integer: true },
  hitRateFloor: { min: 0, max: 1, minExclusive: true },
  backoff: { min: 0, max: 1, minExclusive: true, maxExclusive: true },
  windowS: { min: 0, max: 10_000_000, minExclusive: true },
  offloadTokens: { min: 1, max: 2 ** 30 },
  offloadGbps: { min: 0, max: 1_000_000, minExclusive: true },
  /** A GPU's memory (`--gpu-memory-gib`, the panel's custom GPU). */
  gpuMemoryGiB: { min: 0, max: 100_000, minExclusive: true },
} as const satisfies Record<string, ParamBound>;

/** A parameter with bounds. */
export type BoundedParam = keyof typeof PARAM_BOUNDS;

/** Bounds of the replay options (agent sessions only). */
export const REPLICA_BOUNDS = {
  replicas: { min: 1, max: 100_000, integer: true },
  staggerS: { min: 0, max: 10_000_000 },
  seed: { min: 0, max: 2 ** 32 - 1, integer: true },
  toolWaitScale: { min: 0, max: 1000 },
} as const satisfies Record<string, ParamBound>;

/** "1,000,000": a bound for messages. */
function boundText(n: number): string {
  return Number.isInteger(n) && Math.abs(n) >= 10_000 ? n.toLocaleString('en-US') : String(n);
}

/** What a bound asks for, in words: "a whole number from 1 to 4,096". */
export function describeBound(b: ParamBound): string {
  const kind = b.integer ? 'a whole number' : 'a number';
  const max = b.maxExclusive ? `below ${boundText(b.max)}` : `at most ${boundText(b.max)}`;
  if (b.minExclusive) return `${kind} above ${boundText(b.min)} and ${max}`;
  return b.maxExclusive
    ? `${kind} from ${boundText(b.min)} and ${max}`
    : `${kind} from ${boundText(b.min)} to ${boundText(b.max)}`;
}

/** True when `value` is a finite number within the bound. */
export function withinBound(value: unknown, b: ParamBound): value is number {
  return (
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (b.minExclusive ? value > b.min : value >= b.min) &&
    (b.maxExclusive ? value < b.max : value <= b.max) &&
    (!b.integer || Number.isInteger(value))
  );
}
