import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createPriceBook } from '../../../src/core/cost/priceBook';
import { TraceService } from '../../../src/core/view/traceService';
import { analyzeTrace, summaryTitle } from '../../../src/extension/traceAnalysis';
import { EDIT_LOOP, parseFile, repoRoot } from '../../support/helpers';

// The CodeLens on a trace's first line counts what the inspector's session picker lists: every
// session of the file, sub-agents included, and all their calls (the scope its cost always had).
// The sample's figures from test/reference/canonical_scopes.py and cost_reference.mjs: 3 sessions
// (2 main, 1 compaction agent), 90 calls, 21 failed tool calls, hit 93.2978%, $5.1342127; retry
// loops by hand from samples/README.md: 2.

const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');

describe("CodeLens and the inspector's session picker count the same sessions and calls", async () => {
  const parsed = await parseFile(SAMPLE);

  it("the sample: 3 sessions, 90 calls in both (the reference's whole-file figures)", () => {
    const title = summaryTitle(analyzeTrace(parsed, {}, createPriceBook()));
    assert.equal(
      title,
      '$(pulse) Agent Trace · 3 sessions (2 main, 1 sub-agent) · 90 calls · $5.13 · cache hit 93.3% · 21 failed tool calls · 2 retry loops',
    );
    const picker = new TraceService(parsed, {
      fileName: 'claude-code-sessions.trace.jsonl',
      formatChosen: false,
      analysis: {},
    }).sessionList({ query: '', offset: 0, limit: 1000 });
    assert.equal(picker.total, 3);
    const calls = picker.entries.reduce(
      (n, e) => n + Number(/ · ([\d,]+) calls?$/.exec(e.label)![1]!.replace(/,/g, '')),
      0,
    );
    assert.equal(calls, 90);
  });

  it('one session: no session count, the figures as before', async () => {
    const title = summaryTitle(analyzeTrace(await parseFile(EDIT_LOOP), {}, createPriceBook()));
    assert.equal(
      title,
      '$(pulse) Agent Trace · 41 calls · $3.37 · cache hit 85.5% · 13 failed tool calls · 1 retry loop',
    );
  });
});
