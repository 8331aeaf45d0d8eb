/**
 * A parser's state is a graph of plain data (records, sessions, maps of tool calls) held
 * by a few class instances (the parser, a format's reader and its session builders) and
 * pointing at a few objects it never owns (format definitions, which carry functions).
 * A saved parse resumes in another process: the session index keeps each session
 * file's state, so an append after a restart is read from where the last read stopped
 * (TraceParse.saveState in parseTrace.ts).
 *
 * `portableState` / `restorePortableState` turn a state into plain data that a
 * structured-clone serializer (Node's `v8.serialize`) can store: class instances are
 * tagged with a registered name and shared objects replaced by their name.
 * Anything else (a function, an unregistered class) makes the state unsavable: the
 * callers then read the file again from the start, which is always correct.
 */

/** Names of classes whose instances may appear in a parser state, both ways. */
const classByName = new Map<string, object>();
const nameByPrototype = new Map<object, string>();
/** Objects a state refers to but never owns, both ways (format definitions). */
const sharedByName = new Map<string, object>();
const nameByShared = new Map<object, string>();

/** Lets instances of a class (a reader, its session builder) be saved and restored by `name`. */
export function registerStateClass(name: string, ctor: { prototype: object }): void {
  classByName.set(name, ctor.prototype);
  nameByPrototype.set(ctor.prototype, name);
}

/** Marks an object a state may point at without owning (kept by reference, saved by name). */
export function registerSharedObject(name: string, value: object): void {
  sharedByName.set(name, value);
  nameByShared.set(value, name);
}

/** Why a state could not be copied: the first thing in it that is not data. */
export class UncopyableState extends Error {}

const PLAIN_PROTOTYPES: ReadonlySet<object | null> = new Set([Object.prototype, null]);

function isTypedArray(value: object): value is Uint8Array {
  return ArrayBuffer.isView(value);
}

/** A placeholder for a shared object in a portable state. */
interface SharedRef {
  $sharedState: string;
}

/** What a portable state holds: plain data plus how to make it live again. */
export interface PortableState {
  root: unknown;
  /** Objects of the copy that were class instances, with their registered names. */
  classes: Array<[object, string]>;
}

/**
 * Copies a graph without recursion (sub-agent chains and long call lists must not
 * overflow the stack), keeping shared structure: an object referenced twice is copied
 * once. Class instances become plain objects listed in `classes`; shared objects
 * become references by name.
 */
function copyGraph(root: unknown): { root: unknown; classes: Array<[object, string]> } {
  const copies = new Map<object, unknown>();
  const classes: Array<[object, string]> = [];
  const work: Array<() => void> = [];
  const copyOf = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') {
      if (typeof value === 'function')
        throw new UncopyableState(`a function (${(value as { name?: string }).name || 'anonymous'})`);
      if (typeof value === 'symbol') throw new UncopyableState('a symbol');
      return value;
    }
    const known = copies.get(value);
    if (known !== undefined) return known;
    const shared = nameByShared.get(value);
    if (shared !== undefined) {
      const ref = { $sharedState: shared } satisfies SharedRef;
      copies.set(value, ref);
      return ref;
    }
    if (isTypedArray(value)) {
      const copy = value.slice();
      copies.set(value, copy);
      return copy;
    }
    if (value instanceof Map) {
      const copy = new Map();
      copies.set(value, copy);
      work.push(() => {
        for (const [k, v] of value) copy.set(copyOf(k), copyOf(v));
      });
      return copy;
    }
    if (value instanceof Set) {
      const copy = new Set();
      copies.set(value, copy);
      work.push(() => {
        for (const v of value) copy.add(copyOf(v));
      });
      return copy;
    }
    if (Array.isArray(value)) {
      const copy: unknown[] = new Array(value.length);
      copies.set(value, copy);
      work.push(() => {
        for (let i = 0; i < value.length; i++) copy[i] = copyOf(value[i]);
      });
      return copy;
    }
    const proto = Object.getPrototypeOf(value) as object | null;
    let copy: Record<string, unknown>;
    if (PLAIN_PROTOTYPES.has(proto)) {
      copy = proto === null ? (Object.create(null) as Record<string, unknown>) : {};
    } else {
      const name = proto ? nameByPrototype.get(proto) : undefined;
      if (name === undefined)
        throw new UncopyableState(
          `an instance of ${(proto as { constructor?: { name?: string } } | null)?.constructor?.name ?? 'an unknown class'}`,
        );
      copy = {};
      classes.push([copy, name]);
    }
    copies.set(value, copy);
    work.push(() => {
      for (const key of Object.keys(value)) copy[key] = copyOf((value as Record<string, unknown>)[key]);
    });
    return copy;
  };
  const result = copyOf(root);
  while (work.length > 0) work.pop()!();
  return { root: result, classes };
}

/** The state as plain data for a structured-clone serializer, or null when it cannot be saved. */
export function portableState(state: unknown): PortableState | null {
  try {
    return copyGraph(state);
  } catch (e) {
    if (e instanceof UncopyableState) return null;
    throw e;
  }
}

function isSharedRef(value: unknown): value is SharedRef {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<SharedRef>).$sharedState === 'string' &&
    Object.keys(value).length === 1
  );
}

/**
 * Makes a deserialized portable state live again: prototypes back on its class
 * instances and shared objects back in place. Null when it names a class or shared
 * object this build does not have (saved by another version): read from the start.
 */
export function restorePortableState<T>(portable: PortableState): T | null {
  for (const [object, name] of portable.classes) {
    const proto = classByName.get(name);
    if (!proto || typeof object !== 'object' || object === null) return null;
    Object.setPrototypeOf(object, proto);
  }
  const resolve = (value: unknown): unknown => {
    if (!isSharedRef(value)) return value;
    const shared = sharedByName.get(value.$sharedState);
    if (shared === undefined) throw new UncopyableState(`unknown shared object ${value.$sharedState}`);
    return shared;
  };
  const seen = new Set<object>();
  const stack: unknown[] = [portable.root];
  try {
    const rootResolved = resolve(portable.root);
    if (rootResolved !== portable.root) return rootResolved as T;
    while (stack.length > 0) {
      const value = stack.pop();
      if (
        value === null ||
        typeof value !== 'object' ||
        seen.has(value) ||
        isSharedRef(value) ||
        ArrayBuffer.isView(value)
      )
        continue;
      seen.add(value);
      if (value instanceof Map) {
        const entries = [...value.entries()];
        value.clear();
        for (const [k, v] of entries) {
          value.set(resolve(k), resolve(v));
          stack.push(k, v);
        }
      } else if (value instanceof Set) {
        const items = [...value];
        value.clear();
        for (const v of items) {
          value.add(resolve(v));
          stack.push(v);
        }
      } else if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          stack.push(value[i]);
          value[i] = resolve(value[i]);
        }
      } else {
        const record = value as Record<string, unknown>;
        for (const key of Object.keys(record)) {
          stack.push(record[key]);
          record[key] = resolve(record[key]);
        }
      }
    }
  } catch (e) {
    if (e instanceof UncopyableState) return null;
    throw e;
  }
  return portable.root as T;
}
