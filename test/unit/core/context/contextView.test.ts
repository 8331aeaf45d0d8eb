import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ClaudeCodeContentCollector } from '../../../../src/core/context/claudeCodeContent';
import { CHAR_ESTIMATE } from '../../../../src/core/context/tokenCounter';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { buildReportTrace } from '../../../../src/core/share/reportDocument';
import { TraceService } from '../../../../src/core/view/traceService';
import { ViewTraceService } from '../../../../src/core/view/viewTraceService';
import { fixtures, parseFile } from '../../../support/helpers';

// The context panel's data (the sessionContext query) on the hand-worked excerpt
// (test/fixtures/claude-code/context-excerpt.jsonl; its figures: contextAnatomy.test.ts and
// test/reference/context_anatomy.py), asked of the trace worker's service and of the HTML
// report's, which must answer the same.

const EXCERPT = join(fixtures, 'claude-code/context-excerpt.jsonl');

async function excerpt(): Promise<{
  service: TraceService;
  source: ConstructorParameters<typeof TraceService>[1]['context'];
}> {
  const collector = new ClaudeCodeContentCollector();
  const parsed = await parseFile(EXCERPT, { recordTap: (r) => collector.record(r) });
  const source = { content: collector.result(), tokenizer: () => CHAR_ESTIMATE, notes: [] };
  return {
    service: new TraceService(parsed, {
      fileName: 'context-excerpt.jsonl',
      formatChosen: false,
      analysis: {},
      prices: createPriceBook(),
      context: source,
    }),
    source,
  };
}

describe('sessionContext: what the context panel is given', () => {
  it('gives each call by kind, the estimates named, the largest parts each call appended', async () => {
    const { service } = await excerpt();
    const id = service.header().defaultSessionId!;
    const ctx = service.sessionContext({ sessionId: id })!;
    assert.equal(ctx.loggedInput.length, 6);
    // Call 1's logged input, 3 + 17,842 + 8,165 = 26,010, is the unlogged base and the typed prompt, nothing else.
    assert.equal(ctx.loggedInput[0], 26_010);
    assert.equal(ctx.byKind.system![0]! + ctx.byKind.userText![0]!, 26_010);
    for (const k of ctx.kinds) if (k !== 'system' && k !== 'userText') assert.equal(ctx.byKind[k]![0], 0, k);
    // What no log carries: the base, and what the /compact restored (calls 4–6 only).
    assert.deepEqual(ctx.estimatedKinds, ['system', 'restored']);
    assert.deepEqual(
      ctx.byKind.restored!.map((t) => t > 0),
      [false, false, false, true, true, true],
    );
    // Call 5 paid $0.28757375 of input (no cache read: 1 uncached at $5/MTok, 46,011 written at $6.25/MTok).
    assert.ok(Math.abs(ctx.inputUsd[4]! - 0.28757375) < 1e-12);
    // Every part appended is listed under the call that first held it; the base under call 1.
    assert.ok(ctx.appended.every((p, i) => i === 0 || ctx.appended[i - 1]!.call <= p.call));
    assert.equal(ctx.appended.filter((p) => p.call === 0 && p.kind === 'system').length, 1);
    assert.ok(ctx.contributors.length > 0 && ctx.contributors[0]!.key === 'kind:system');
    // The session's input dollars are its calls' (the parts share them, nothing lost).
    const calls = ctx.inputUsd.reduce<number>((a, b) => a + (b ?? 0), 0);
    assert.ok(Math.abs(ctx.totalUsd! - calls) < 1e-12);
    assert.equal(service.sessionContext({ sessionId: 'no-such-session' }), null);
  });

  it('is built again with new prices (none: no dollars)', async () => {
    const { service } = await excerpt();
    const id = service.header().defaultSessionId!;
    assert.notEqual(service.sessionContext({ sessionId: id })!.totalUsd, null);
    service.setPrices(null);
    const ctx = service.sessionContext({ sessionId: id })!;
    assert.equal(ctx.totalUsd, null);
    assert.ok(ctx.inputUsd.every((u) => u === null));
  });

  it('is answered the same by the HTML report from the anatomy it embeds, and said missing when a report has none', async () => {
    const { service, source } = await excerpt();
    const { view, details, context } = buildReportTrace(service.parsed, 'context-excerpt.jsonl', {
      prices: createPriceBook(),
      context: source,
    });
    const id = service.header().defaultSessionId!;
    const report = new ViewTraceService(view, details, context);
    assert.deepEqual(report.sessionContext({ sessionId: id }), service.sessionContext({ sessionId: id }));
    assert.equal(report.sessionContext({ sessionId: 'no-such-session' }), null);
    const without = new ViewTraceService(view, details);
    assert.deepEqual(without.sessionContext({ sessionId: id })!.kinds, []);
    assert.match(without.sessionContext({ sessionId: id })!.notes[0]!, /without the context anatomy/);
  });

  it('without the collected text (a service before the trace worker collected it) counts sizes and says so', async () => {
    const parsed = await parseFile(EXCERPT);
    const service = new TraceService(parsed, { fileName: 'x.jsonl', formatChosen: false, analysis: {}, prices: null });
    const ctx = service.sessionContext({ sessionId: service.header().defaultSessionId! })!;
    assert.equal(ctx.content, 'sizes');
    assert.ok(ctx.notes.some((n) => /no tokenizer was loaded/.test(n)));
  });
});
