import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { TeamColumns } from '../../../../src/core/team/teamColumns';
import { buildTeamRows } from '../../../../src/core/team/teamRows';
import { CALLS_TABLE, SESSIONS_TABLE, TOOL_CALLS_TABLE } from '../../../../src/core/team/teamSchema';
import type { TeamCell } from '../../../../src/core/team/teamSchema';
import { parseTrace } from '../../../../src/core/trace/parseTrace';
import { chunked, EDIT_LOOP, SPOTTER } from '../../../support/helpers';

/** Every column of the tool calls table, in the schema's order, each cell its own column's position: a literal as the builders write one. */
function toolCallCells(row: number): Record<string, TeamCell> {
  const cells: Record<string, TeamCell> = {};
  TOOL_CALLS_TABLE.columns.forEach((c, j) => {
    cells[c.name] = `${row}:${j}`;
  });
  return cells;
}

describe('TeamColumns: a table held as columns', () => {
  it('append copies a literal by position: cell (row, column j) is the literal’s j-th value', () => {
    const t = new TeamColumns(TOOL_CALLS_TABLE);
    t.append('claude-code', '2026-11-30', 0, toolCallCells(0));
    t.append('codex', null, 1, toolCallCells(1));
    assert.equal(t.length, 2);
    assert.deepEqual(t.agent, ['claude-code', 'codex']);
    assert.deepEqual(t.date, ['2026-11-30', null]);
    assert.deepEqual(t.session, [0, 1]);
    // The tool calls table: gen_ai.conversation.id first, exit_code twelfth, user.name last (17 columns).
    assert.equal(t.cell(1, 'gen_ai.conversation.id'), '1:0');
    assert.equal(t.cell(0, 'exit_code'), '0:11');
    assert.equal(t.cell(1, 'user.name'), '1:16');
    assert.deepEqual(t.row(0), toolCallCells(0));
  });

  it('append refuses a first row whose keys are not the columns in order, or a later row of another size', () => {
    const swapped = toolCallCells(0);
    const { call_index, ...rest } = swapped;
    assert.throws(
      () => new TeamColumns(TOOL_CALLS_TABLE).append('a', null, 0, { ...rest, call_index: call_index! }),
      /not the table's columns in order/,
    );
    const t = new TeamColumns(TOOL_CALLS_TABLE);
    t.append('a', null, 0, toolCallCells(0));
    assert.throws(() => t.append('a', null, 0, rest), /not the table's columns in order/);
    assert.equal(t.length, 1, 'the refused row is not added');
  });

  it('appendByName takes any order, fills what is left out with null, and refuses a name the table lacks', () => {
    const t = new TeamColumns(TOOL_CALLS_TABLE);
    t.appendByName('a', null, 0, { is_error: true, 'gen_ai.tool.name': 'Edit' });
    assert.equal(t.cell(0, 'is_error'), true);
    assert.equal(t.cell(0, 'gen_ai.tool.name'), 'Edit');
    assert.equal(t.cell(0, 'command'), null);
    assert.throws(() => t.appendByName('a', null, 0, { nonsense: 1 }), /no column nonsense/);
    assert.throws(() => t.column('nonsense'), /no column nonsense/);
  });

  it('select keeps the rows asked for, in the order asked, with their partitions', () => {
    const t = new TeamColumns(TOOL_CALLS_TABLE);
    for (let i = 0; i < 4; i++) t.append(`agent${i}`, `day${i}`, i, toolCallCells(i));
    const s = t.select([3, 1]);
    assert.deepEqual(s.agent, ['agent3', 'agent1']);
    assert.deepEqual(s.date, ['day3', 'day1']);
    assert.deepEqual(s.session, [3, 1]);
    assert.deepEqual(s.row(0), toolCallCells(3));
    assert.deepEqual(s.row(1), toolCallCells(1));
  });
});

describe('the team rows as columns, against the parsed trace', () => {
  it('each column holds its own field: tool call ids, call tokens, parents, identity, taken from the model directly', async () => {
    const identity = { userHash: 'abc123', userName: null };
    for (const path of [SPOTTER, EDIT_LOOP]) {
      const parsed = await parseTrace([chunked(path, 1 << 20)]);
      const rows = buildTeamRows(parsed, { book: createPriceBook(), identity });
      const sessions = parsed.model.sessions;
      // The model read directly, in the rows' order: session by session, call by call, tool call by tool call.
      const calls = sessions.flatMap((s) => s.calls);
      const tools = calls.flatMap((c) => c.toolCalls);
      assert.ok(tools.length > 0, `${path} has tool calls`);
      assert.equal(rows.calls.length, calls.length);
      assert.equal(rows.tool_calls.length, tools.length);
      assert.deepEqual(
        rows.tool_calls.column('gen_ai.tool.call.id'),
        tools.map((t) => t.id),
      );
      assert.deepEqual(
        rows.tool_calls.column('gen_ai.tool.name'),
        tools.map((t) => t.name),
      );
      assert.deepEqual(
        rows.tool_calls.column('is_error'),
        tools.map((t) => t.isError),
      );
      assert.deepEqual(
        rows.calls.column('gen_ai.usage.output_tokens'),
        calls.map((c) => c.tokens.output),
      );
      assert.deepEqual(
        rows.calls.column('gen_ai.response.id'),
        calls.map((c) => c.id),
      );
      assert.deepEqual(
        rows.calls.column('tool_calls'),
        calls.map((c) => c.toolCalls.length),
      );
      // The last columns of each table, where a shifted copy would show first.
      assert.deepEqual(
        rows.calls.column('inference_geo'),
        calls.map((c) => c.inferenceGeo ?? null),
      );
      assert.deepEqual(rows.calls.column('user.hash'), Array(calls.length).fill('abc123'));
      assert.deepEqual(rows.tool_calls.column('user.name'), Array(tools.length).fill(null));
      assert.deepEqual(
        rows.sessions.column('parent_tool_call_id'),
        sessions.map((s) => s.parentToolCallId),
      );
      assert.deepEqual(
        rows.sessions.column('llm_calls'),
        sessions.map((s) => s.calls.length),
      );
      // Every table's columns are its schema's, each as long as the table.
      for (const [table, t] of [
        [CALLS_TABLE, rows.calls],
        [TOOL_CALLS_TABLE, rows.tool_calls],
        [SESSIONS_TABLE, rows.sessions],
      ] as const) {
        assert.equal(t.cells.length, table.columns.length);
        for (const c of t.cells) assert.equal(c.length, t.length);
      }
    }
  });
});
