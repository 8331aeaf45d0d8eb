import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IdIndex } from '../../../../src/core/trace/idIndex';
import { portableState, restorePortableState } from '../../../../src/core/trace/parserState';

interface Item {
  id: string;
  n: number;
}

/** FNV-1a of the UTF-16 code units, written here from its definition (offset 2166136261, prime 16777619). */
function fnv1a(key: string): number {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Number((BigInt(h) * 16777619n) % 4294967296n);
  }
  return h;
}

/** Adds the items in order to an index and to a Map keyed by id; every id looked up must agree. */
function sameAsMap(ids: string[], probes: string[]): IdIndex<Item> {
  const items: Item[] = [];
  const index = new IdIndex(items);
  const map = new Map<string, Item>();
  ids.forEach((id, n) => {
    const item = { id, n };
    items.push(item);
    index.put(items.length - 1);
    map.set(id, item);
  });
  for (const id of [...ids, ...probes]) {
    assert.equal(index.get(id), map.get(id), id);
    assert.equal(index.has(id), map.has(id), id);
    assert.equal(index.indexOf(id), map.has(id) ? items.indexOf(map.get(id)!) : -1, id);
  }
  return index;
}

describe('IdIndex', () => {
  it('finds each id as a Map would: the last item put under it, -1 for an id never put', () => {
    // Three items, "a" twice: by hand, a → the third item (position 2), b → position 1, c → none.
    const items: Item[] = [
      { id: 'a', n: 0 },
      { id: 'b', n: 1 },
      { id: 'a', n: 2 },
    ];
    const index = new IdIndex(items);
    for (let i = 0; i < items.length; i++) index.put(i);
    assert.equal(index.indexOf('a'), 2);
    assert.equal(index.get('a')?.n, 2);
    assert.equal(index.indexOf('b'), 1);
    assert.equal(index.indexOf('c'), -1);
    assert.equal(index.get('c'), undefined);
    assert.equal(index.has('c'), false);
    assert.equal(index.has(''), false);
  });

  it('agrees with a Map over 20,000 ids with repeats, across every growth of its table', () => {
    const ids: string[] = [];
    for (let i = 0; i < 20_000; i++) ids.push(`msg_${i % 3 === 0 ? Math.floor(i / 7) : i}_01AbCdEf`);
    sameAsMap(
      ids,
      Array.from({ length: 500 }, (_, i) => `absent_${i}`),
    );
  });

  it('keeps ids made to collide correct, beyond the probes of one lookup', () => {
    // 80 ids whose FNV-1a hashes share their low 12 bits: with at most 80 ids the table never has more
    // than 256 slots, so all 80 want the same slot, and more than 32 of them cannot be reached by probing.
    const colliding: string[] = [];
    const home = fnv1a('toolu_x0') & 0xfff;
    for (let i = 0; colliding.length < 80; i++)
      if ((fnv1a(`toolu_x${i}`) & 0xfff) === home) colliding.push(`toolu_x${i}`);
    const index = sameAsMap(
      [...colliding, ...colliding.slice(0, 40)],
      ['toolu_y', 'toolu_x1'].filter((id) => !colliding.includes(id)),
    );
    assert.ok(
      (index as unknown as { overflow: Map<string, number> | null }).overflow !== null,
      'the overflow was used',
    );
  });

  it('tells apart ids whose hashes share the byte each slot keeps', () => {
    // A slot keeps the top byte of its id's hash: 300 ids with the same top byte (and 100 absent ones),
    // put with repeats, must still each find their own item, through every growth of the table.
    const tag = fnv1a('msg_t0') >>> 24;
    const same: string[] = [];
    for (let i = 0; same.length < 400; i++) if (fnv1a(`msg_t${i}`) >>> 24 === tag) same.push(`msg_t${i}`);
    const put = same.slice(0, 300);
    sameAsMap([...put, ...put.slice(0, 50)], same.slice(300));
  });

  it('is plain data: a saved index, restored, finds the same items', () => {
    const items: Item[] = Array.from({ length: 300 }, (_, n) => ({ id: `call_${n % 250}`, n }));
    const index = new IdIndex(items);
    for (let i = 0; i < items.length; i++) index.put(i);
    const portable = portableState({ items, index });
    assert.ok(portable);
    const restored = restorePortableState<{ items: Item[]; index: IdIndex<Item> }>(structuredClone(portable));
    assert.ok(restored);
    // call_10 was put at 10 and again at 260: the later wins; call_249 only once.
    assert.equal(restored.index.get('call_10')?.n, 260);
    assert.equal(restored.index.get('call_249')?.n, 249);
    assert.equal(restored.index.get('call_250'), undefined);
    // The restored index reads the restored array, not the original one.
    assert.equal(restored.index.get('call_10'), restored.items[260]);
  });
});
