import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { buildTraceReport } from '../../../../src/core/report/traceReport';
import { analyzeNotice } from '../../../../src/core/report/traceScopes';
import { EDIT_LOOP, parseFile, repoRoot } from '../../../support/helpers';

// The bundled sample in each scope. Figures from test/reference/canonical_scopes.py (plain Python
// over the raw records) and test/reference/cost_reference.mjs (its own pricing):
//   python3 test/reference/canonical_scopes.py samples/claude-code-sessions.trace.jsonl
//     main       ae4a77f8-…: calls 48, turns 2, failed 8,  hit 98.7147%   cost $0.9958422
//     compaction acompact-946d2b: calls 1, turns 1, failed 0, hit 12.7868%  cost $0.76969225
//     main       e5821007-…: calls 41, turns 3, failed 13, hit 85.4752%   cost $3.36867825
//     whole: 3 sessions (2 main, 1 sub-agent), calls 90, failed 21, hit 93.2978%, cost $5.1342127
// Retry loops by hand from the sample's README: the seven failing pre-commit `git commit` runs of
// the first session, the four failing Edit/Write calls of the third: 1 + 0 + 1.

const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');

describe('the Analyze Agent Session notification: one scope per sentence, each named', async () => {
  const parsed = await parseFile(SAMPLE);
  const report = buildTraceReport(parsed, {}, { book: createPriceBook() });
  const notice = analyzeNotice('claude-code-sessions.trace.jsonl', report);

  it('the whole trace: its sessions, calls, hit rate, cost, failed tool calls, retry loops and read errors', () => {
    assert.equal(
      notice.trace,
      'Whole trace, 3 sessions (2 main, 1 sub-agent): 90 LLM calls, cache hit rate 93.3%, cost $5.13, 21 failed tool calls, 2 retry loops, 0 read errors.',
    );
  });

  it('the main session, named by its id, with its own calls, turns, hit rate, cost, failures and loops, then its cache TTL what-if', () => {
    assert.match(
      notice.session!,
      /^The main session ae4a77f8 \(the first of 2\) alone: 48 LLM calls, 2 user turns, cache hit rate 98\.7%, cost \$0\.996, 8 failed tool calls, 1 retry loop\. With 1-hour caching this session would have cost \$1\.13 \(\+14%\)/,
    );
    assert.equal(notice.text, `claude-code-sessions.trace.jsonl. ${notice.trace} ${notice.session}`);
  });

  it('a trace of one session says it once', async () => {
    const one = buildTraceReport(await parseFile(EDIT_LOOP), {}, { book: createPriceBook() });
    const n = analyzeNotice('edit-retry-loop.jsonl', one);
    assert.equal(n.trace, null);
    // test/reference/claude_code_totals.py: 41 calls at 85.5%; claude_sessions.py: 3 typed prompts, 13 failed results; cost_reference.mjs $3.36867825.
    assert.match(
      n.text,
      /^edit-retry-loop\.jsonl: The main session e5821007: 41 LLM calls, 3 user turns, cache hit rate 85\.5%, cost \$3\.37, 13 failed tool calls, 1 retry loop, 0 read errors\./,
    );
  });

  it('a session id is trace text: plain in the notification', async () => {
    const hostile = structuredClone(report);
    hostile.sessions[0]!.id = '[run](command:workbench.action.terminal.new)';
    assert.ok(!analyzeNotice('x.jsonl', hostile).text.includes('](command:'));
  });
});
