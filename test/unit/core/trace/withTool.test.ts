import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { requestedToolCall, withTool } from '../../../../src/core/trace/model';
import type { ToolCall } from '../../../../src/core/trace/model';

const tool = (id: string): ToolCall =>
  requestedToolCall({
    id,
    name: 'Bash',
    targetFile: null,
    command: null,
    startMs: null,
    source: { file: 0, line: 0, offset: 0 },
  });

describe('withTool: a call tool list one longer, in an array of its own', () => {
  it('keeps the tools in order, adds the new one last and leaves the list it was given as it was', () => {
    const a = tool('a');
    const b = tool('b');
    const empty: ToolCall[] = [];
    const one = withTool(empty, a);
    const two = withTool(one, b);
    assert.deepEqual(empty, []);
    assert.deepEqual(one, [a]);
    assert.equal(two.length, 2);
    assert.equal(two[0], a);
    assert.equal(two[1], b);
    assert.notEqual(two, one);
  });

  it('adds to a frozen list (the shared empty list of a call without tools) without touching it', () => {
    const frozen = Object.freeze([]) as readonly ToolCall[];
    const a = tool('a');
    assert.deepEqual(withTool(frozen, a), [a]);
    assert.equal(frozen.length, 0);
  });
});
