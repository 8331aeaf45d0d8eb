/** The typed arrays the columns of the readers, the anatomy and the simulator engines use. */
export type NumberColumn = Uint8Array | Int32Array | Uint32Array | Float64Array;

/**
 * A copy of `a` in a new array of its own type with `length` elements, the ones past `a`'s
 * zero: how a column grows when it is full (typed arrays have a fixed length).
 */
export function widened<T extends NumberColumn>(a: T, length: number): T {
  const b = new (a.constructor as new (length: number) => T)(length);
  b.set(a);
  return b;
}
