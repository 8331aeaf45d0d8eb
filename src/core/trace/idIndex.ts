import { registerStateClass } from './parserState';

/** Probes of one lookup before a key is looked for in the overflow map instead (see IdIndex). */
const MAX_PROBES = 32;
const FIRST_SLOTS = 64;

/** FNV-1a over the string's UTF-16 code units. */
function hashOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Items of an array found by their `id`, as a `Map<string, T>` would find them (a later item
 * with the same id replaces the earlier one), in a fraction of the memory: a table of
 * positions in the array (an `Int32Array`, half full at most) instead of a map's entries.
 * A reader that keeps every call or tool call of a long session by id grew a `Map` of tens
 * of thousands of entries by copies, each a large object that only a full collection frees
 * (docs/performance.md, "Issue 27, seventh round").
 *
 * Ids are trace data: a key whose probe sequence finds MAX_PROBES other keys goes to an
 * ordinary `Map`, so ids made to collide cost a map lookup each, never a long scan. Plain
 * data only (the items, a typed array, a map): a parser state holding it can be saved.
 */
export class IdIndex<T extends { readonly id: string }> {
  /** Position in `items` + 1 of the item each slot holds; 0: free. */
  private slots = new Int32Array(FIRST_SLOTS);
  /**
   * The top byte of the hash of each slot's id: compared before the strings, so a probe past
   * another id rarely reads it. A byte, not the whole hash (the table's keys are hashed again
   * when it grows): at 777 MB a Claude Code session's two indexes of 262,144 slots each were
   * 4 MB with whole hashes, 2.6 MB so, live at the peak of analyze at the end of reading
   * (docs/performance.md, "Issue 27, tenth session").
   */
  private tags = new Uint8Array(FIRST_SLOTS);
  /** The id last looked for and its hash: `put` after a failed lookup of the same id hashes it once. */
  private lastId: string | null = null;
  private lastHash = 0;
  private used = 0;
  /** Keys whose probe sequence was full when they were added (no key is ever removed). */
  private overflow: Map<string, number> | null = null;

  /** ITEMS is the caller's array (it may be shared with the model): the index never changes it. */
  constructor(readonly items: T[]) {}

  /** The position in `items` of the last item put under ID, or -1. */
  indexOf(id: string): number {
    const h = hashOf(id) | 0;
    this.lastId = id;
    this.lastHash = h;
    const slots = this.slots;
    const mask = slots.length - 1;
    let s = h & mask;
    for (let probe = 0; probe < MAX_PROBES; probe++) {
      const held = slots[s]!;
      if (held === 0) return -1;
      if (this.tags[s] === h >>> 24 && this.items[held - 1]!.id === id) return held - 1;
      s = (s + 1) & mask;
    }
    return this.overflow?.get(id) ?? -1;
  }

  /** The last item put under ID. */
  get(id: string): T | undefined {
    const i = this.indexOf(id);
    return i < 0 ? undefined : this.items[i];
  }

  has(id: string): boolean {
    return this.indexOf(id) >= 0;
  }

  /** Finds `items[index]` by its id from now on (in place of any earlier item with that id). */
  put(index: number): void {
    if ((this.used + 1) * 2 > this.slots.length) this.grow();
    const id = this.items[index]!.id;
    this.place(id, index, id === this.lastId ? this.lastHash : hashOf(id) | 0);
  }

  private place(id: string, index: number, h: number): void {
    const slots = this.slots;
    const mask = slots.length - 1;
    let s = h & mask;
    for (let probe = 0; probe < MAX_PROBES; probe++) {
      const held = slots[s]!;
      if (held === 0) {
        slots[s] = index + 1;
        this.tags[s] = h >>> 24;
        this.used += 1;
        return;
      }
      if (this.tags[s] === h >>> 24 && this.items[held - 1]!.id === id) {
        slots[s] = index + 1;
        return;
      }
      s = (s + 1) & mask;
    }
    (this.overflow ??= new Map()).set(id, index);
  }

  /** Twice the slots, every key hashed and placed again (the overflow's too: it may fit now). */
  private grow(): void {
    const old = this.slots;
    const overflow = this.overflow;
    this.slots = new Int32Array(old.length * 2);
    this.tags = new Uint8Array(old.length * 2);
    this.used = 0;
    this.overflow = null;
    for (let s = 0; s < old.length; s++) {
      const held = old[s]!;
      if (held === 0) continue;
      const id = this.items[held - 1]!.id;
      this.place(id, held - 1, hashOf(id) | 0);
    }
    if (overflow) for (const [id, index] of overflow) this.place(id, index, hashOf(id) | 0);
  }
}

registerStateClass('id-index', IdIndex);
