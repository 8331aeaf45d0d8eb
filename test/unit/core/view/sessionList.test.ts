import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionLabel, sessionTreeOrder, shortSessionId } from '../../../../src/core/view/sessionList';

const s = (id: string, parentId: string | null): { id: string; parentId: string | null } => ({ id, parentId });

describe('session picker order', () => {
  it('each main session is followed by its sub-agents, depth first, in model order; orphans start their own tree', () => {
    const sessions = [
      s('m1', null),
      s('a', 'm1'),
      s('m2', null),
      s('b', 'a'),
      s('c', 'm1'),
      s('orphan', 'gone'),
      s('d', 'm2'),
    ];
    assert.deepEqual(
      sessionTreeOrder(sessions).map(({ index, depth }) => `${sessions[index]!.id}:${depth}`),
      ['m1:0', 'a:1', 'b:2', 'c:1', 'm2:0', 'd:1', 'orphan:0'],
    );
  });

  it('a parent cycle (no root) still lists every session once', () => {
    const sessions = [s('x', 'y'), s('y', 'x')];
    const order = sessionTreeOrder(sessions);
    assert.deepEqual(order.map((o) => o.index).sort(), [0, 1]);
  });

  it('a 20,000-deep chain of sub-agents: every session once, depth capped at 2, no deep stack', () => {
    const sessions = Array.from({ length: 20_000 }, (_, i) => s(`s${i}`, i === 0 ? null : `s${i - 1}`));
    const order = sessionTreeOrder(sessions);
    assert.equal(order.length, 20_000);
    assert.deepEqual(
      order.slice(0, 4).map((o) => [o.index, o.depth]),
      [
        [0, 0],
        [1, 1],
        [2, 2],
        [3, 2],
      ],
    );
    assert.equal(order[19_999]!.index, 19_999);
  });

  it('50,000 conversations without parents keep their order', () => {
    const sessions = Array.from({ length: 50_000 }, (_, i) => s(`c${i}`, null));
    const order = sessionTreeOrder(sessions);
    assert.equal(order.length, 50_000);
    assert.ok(order.every((o, i) => o.index === i && o.depth === 0));
  });

  it('labels say the kind, a short id, the title and the calls', () => {
    assert.equal(
      sessionLabel({ id: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04', role: 'main', title: 'Fix the build' }, 1234, 0),
      'main session ae4a77f8 · Fix the build · 1,234 calls',
    );
    assert.equal(
      sessionLabel({ id: 'acompact-1', role: 'compaction', title: null }, 1, 1),
      '└ compaction agent acompact-1 · 1 call',
    );
    assert.equal(shortSessionId('plain-id'), 'plain-id');
  });
});
