import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyRecord } from '../../../../src/core/trace/json';
import { countSkipped } from '../../../../src/core/trace/recordReader';

describe('countSkipped', () => {
  it('counts any type as an own property, "__proto__" included, on a null-prototype or an ordinary object', () => {
    for (const skipped of [emptyRecord<number>(), {} as Record<string, number>]) {
      const prototype = Object.getPrototypeOf(skipped) as object | null;
      for (const type of ['progress', '__proto__', 'progress', '__proto__', '__proto__', 'constructor'])
        countSkipped(skipped, type);
      assert.equal(Object.getPrototypeOf(skipped), prototype, 'the prototype is not replaced');
      assert.deepEqual(Object.entries(skipped), [
        ['progress', 2],
        ['__proto__', 3],
        ['constructor', 1],
      ]);
    }
  });

  it('counts a very long type under its first 119 characters and an ellipsis', () => {
    const skipped = emptyRecord<number>();
    countSkipped(skipped, 'x'.repeat(200));
    countSkipped(skipped, `${'x'.repeat(119)}yyy`);
    assert.deepEqual(Object.entries(skipped), [[`${'x'.repeat(119)}…`, 2]]);
  });
});
