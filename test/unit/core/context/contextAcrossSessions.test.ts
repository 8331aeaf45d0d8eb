import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ClaudeCodeContentCollector } from '../../../../src/core/context/claudeCodeContent';
import { contextAcrossSessions, keepSessions } from '../../../../src/core/context/contextAcrossSessions';
import { contextAnatomy } from '../../../../src/core/context/contextAnatomy';
import type { TraceAnatomy } from '../../../../src/core/context/contextAnatomy';
import { contextReport } from '../../../../src/core/context/contextReport';
import { CHAR_ESTIMATE } from '../../../../src/core/context/tokenCounter';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { fixtures, parseFile, SPOTTER } from '../../../support/helpers';

// Two real Claude Code logs (the spotter session with its sub-agents, and the edit-retry loop),
// counted as ceil(length / 4) so the check is the summing, not the tokenizer: what the
// several-sessions view shows by tool, MCP server and file must be each trace's own report
// added up, and a tool counted once per session it appears in.

async function anatomyOf(path: string): Promise<TraceAnatomy> {
  const collector = new ClaudeCodeContentCollector();
  const parsed = await parseFile(path, { recordTap: (r) => collector.record(r) });
  return contextAnatomy(parsed.model, {
    content: collector.result(),
    tokenizer: () => CHAR_ESTIMATE,
    prices: createPriceBook(),
  });
}

describe('context contributors over many sessions', () => {
  it('adds up each trace’s totals by tool and file, and counts the sessions each appears in', async () => {
    const traces = [await anatomyOf(SPOTTER), await anatomyOf(join(fixtures, 'claude-code/edit-retry-loop.jsonl'))];
    const across = contextAcrossSessions(traces);
    const reports = traces.map((t) => contextReport(t));
    assert.equal(across.traces, 2);
    assert.equal(across.sessions, traces[0]!.sessions.length + traces[1]!.sessions.length);
    assert.equal(across.calls, reports[0]!.calls + reports[1]!.calls);
    // Both logs read files: Read is in both, and its total is the two reports' Read totals.
    const read = across.byTool.find((t) => t.name === 'Read')!;
    const perTrace = reports.map((r) => r.byTool.find((t) => t.name === 'Read'));
    assert.ok(perTrace[0] && perTrace[1], 'both logs use Read');
    assert.equal(read.tokens, perTrace[0]!.tokens + perTrace[1]!.tokens);
    assert.equal(read.parts, perTrace[0]!.parts + perTrace[1]!.parts);
    assert.ok(Math.abs(read.usd! - (perTrace[0]!.usd! + perTrace[1]!.usd!)) < 1e-9);
    // Sessions holding a Read part, counted from the sessions themselves.
    const withRead = traces.flatMap((t) => t.sessions).filter((s) => s.parts.some((p) => p.tool === 'Read')).length;
    assert.equal(read.sessions, withRead);
    // Files: every file of either report, with the same tokens where only one trace read it.
    const names = new Set(reports.flatMap((r) => r.byFile.map((f) => f.name)));
    assert.equal(across.byFile.length, names.size);
    // Dearest first.
    for (let i = 1; i < across.byTool.length; i++)
      assert.ok((across.byTool[i - 1]!.usd ?? 0) >= (across.byTool[i]!.usd ?? 0));
    // Input dollars: the sum of both traces' priced calls.
    assert.ok(Math.abs(across.inputUsd! - (reports[0]!.inputUsd! + reports[1]!.inputUsd!)) < 1e-9);
  });

  it('keeps only the sessions a view shows, and prices re-reads and the base from the parts themselves', async () => {
    const spotter = await anatomyOf(SPOTTER);
    const main = spotter.sessions.find((s) => s.role === 'main')!;
    const only = contextAcrossSessions([keepSessions(spotter, new Set([main.sessionId]))]);
    // The spotter's main session alone: 149 calls (its sub-agent's 3 and the /compact run's 1 left out).
    assert.deepEqual([only.sessions, only.mainSessions, only.calls], [1, 1, 149]);
    // Its base is its one system part; its suggestion carries that part's dollars.
    const system = main.parts.filter((p) => p.kind === 'system');
    assert.equal(system.length, 1);
    assert.equal(only.base!.tokensPerCall, system[0]!.tokens);
    const baseSentence = only.suggestions.find((s) => s.text.startsWith('System prompt'))!;
    assert.equal(baseSentence.usd, system[0]!.usd);
    assert.match(baseSentence.text, / over this session \(/);
    // A file read twice: the suggestion's dollars are the cheaper read's, found here by filtering the parts by hand.
    const mix = '/home/USER/projects/spotter-worktrees/spotter-4te/mix.exs';
    const reads = main.parts.filter((p) => p.kind === 'toolResult' && p.tool === 'Read' && p.targetFile === mix);
    assert.equal(reads.length, 2);
    const cheaper = Math.min(reads[0]!.usd!, reads[1]!.usd!);
    const sentence = only.suggestions.find((s) => s.text.startsWith(`\`${mix}\` read 2 times`));
    assert.ok(sentence, only.suggestions.map((s) => s.text).join('\n'));
    assert.ok(Math.abs(sentence.usd - cheaper) < 1e-12);
  });

  it('is empty over no traces', () => {
    const across = contextAcrossSessions([]);
    assert.deepEqual([across.sessions, across.calls, across.inputUsd, across.byTool.length], [0, 0, null, 0]);
  });
});
