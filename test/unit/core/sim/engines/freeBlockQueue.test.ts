import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FreeBlockQueue } from '../../../../../src/core/sim/engines/freeBlockQueue';

// vLLM's FreeKVCacheBlockQueue order, worked by hand on a pool of 5 blocks.

describe('free block queue', () => {
  it('starts with every block, ordered by id', () => {
    const q = new FreeBlockQueue(5);
    assert.deepEqual(q.inOrder(), [0, 1, 2, 3, 4]);
    assert.equal(q.size, 5);
  });

  it('pops from the head, takes a hit block out of the middle, and frees hashed blocks to the tail', () => {
    const q = new FreeBlockQueue(5);
    assert.equal(q.popHead(), 0);
    assert.equal(q.popHead(), 1);
    q.remove(3); // a prefix hit on a free block
    assert.deepEqual(q.inOrder(), [2, 4]);
    assert.equal(q.has(3), false);
    q.pushTail(1);
    q.pushTail(0);
    assert.deepEqual(q.inOrder(), [2, 4, 1, 0]);
    assert.equal(q.size, 4);
    assert.equal(q.has(0), true);
  });

  it('puts unhashed blocks at the head in their own order (prepend_n)', () => {
    const q = new FreeBlockQueue(5);
    for (let i = 0; i < 5; i++) q.popHead();
    assert.deepEqual(q.inOrder(), []);
    q.pushTail(4);
    q.pushHeadAll([2, 0, 3]);
    assert.deepEqual(q.inOrder(), [2, 0, 3, 4]);
    assert.equal(q.popHead(), 2);
    assert.equal(q.size, 3);
  });
});
