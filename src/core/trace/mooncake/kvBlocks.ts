import { arr } from '../json';

/**
 * Helpers for the KV-cache traces (Mooncake, Bailian): both describe a prompt only by
 * its length and the hash ids of its fixed-size token blocks (docs/design/formats.md §6, §7).
 */

/** The hash ids of a row: an array of integers exact in a double, else null. */
export function hashIds(value: unknown): number[] | null {
  const list = arr(value);
  if (!list || !list.every((h) => typeof h === 'number' && Number.isSafeInteger(h))) return null;
  return list as number[];
}

/** Blocks a prompt of `inputTokens` fills; the last one is partial unless the length is a multiple. */
export function expectedBlocks(inputTokens: number, blockSizeTokens: number): number {
  return Math.ceil(inputTokens / blockSizeTokens);
}

/**
 * A warning when a row's hash count does not match its length, or null. Both formats
 * promise `len(hash_ids) == ceil(input_length / block)`; a row that breaks it was cut or
 * produced differently, and its cache figures are only as good as its hashes.
 */
export function blockCountProblem(
  hashes: readonly number[],
  inputTokens: number,
  blockSizeTokens: number,
): string | null {
  const expected = expectedBlocks(inputTokens, blockSizeTokens);
  if (hashes.length === expected) return null;
  return (
    `${hashes.length} hash_ids for ${inputTokens} input tokens; ${blockSizeTokens}-token blocks need ceil(${inputTokens}/${blockSizeTokens}) = ${expected}. ` +
    'Its cached tokens are computed from the hashes it has.'
  );
}

/** How many leading hashes `a` and `b` share. */
export function commonPrefixBlocks(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * Tokens a prefix hit of `hitBlocks` blocks covers. The cap at the prompt length makes a hit
 * on the last, partial block count only the tokens the prompt really has in it.
 */
export function hitTokens(hitBlocks: number, blockSizeTokens: number, inputTokens: number): number {
  return Math.min(hitBlocks * blockSizeTokens, inputTokens);
}
