import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GEN_AI } from '../../../../src/core/trace/otlp/genAi';
import { CALLS_TABLE, otlpAttributeName, TEAM_TABLES, TOOL_CALLS_TABLE } from '../../../../src/core/team/teamSchema';

const column = (name: string) => CALLS_TABLE.columns.find((c) => c.name === name)!;

describe("the OTLP export's attribute names (one table with the Parquet columns)", () => {
  it("conventions' names are kept, exit_code is process.exit.code, the rest are agent_trace.*", () => {
    assert.equal(
      otlpAttributeName(column('gen_ai.usage.cache_read.input_tokens')),
      'gen_ai.usage.cache_read.input_tokens',
    );
    assert.equal(otlpAttributeName(TOOL_CALLS_TABLE.columns.find((c) => c.name === 'exit_code')!), 'process.exit.code');
    assert.equal(otlpAttributeName(column('appended_input_tokens')), 'agent_trace.appended_input_tokens');
    for (const t of TEAM_TABLES) {
      const names = t.columns.map(otlpAttributeName);
      assert.equal(new Set(names).size, names.length, `${t.name}: two columns share an attribute name`);
    }
  });

  it('the reader reads back the names the export writes for what changes a price', () => {
    assert.deepEqual(
      [GEN_AI.cacheWrite5mTokens[0], GEN_AI.cacheWrite1hTokens[0], GEN_AI.serviceTier, GEN_AI.inferenceGeo],
      ['cache_creation_5m_input_tokens', 'cache_creation_1h_input_tokens', 'service_tier', 'inference_geo'].map((n) =>
        otlpAttributeName(column(n)),
      ),
    );
    // The conventions' token names the export writes are the first the reader looks for.
    for (const n of [
      'gen_ai.usage.input_tokens',
      'gen_ai.usage.output_tokens',
      'gen_ai.usage.cache_read.input_tokens',
      'gen_ai.usage.cache_creation.input_tokens',
    ]) {
      assert.ok(
        [GEN_AI.inputTokens[0], GEN_AI.outputTokens[0], GEN_AI.cacheReadTokens[0], GEN_AI.cacheWriteTokens[0]].includes(
          otlpAttributeName(column(n)) as never,
        ),
        n,
      );
    }
  });
});
