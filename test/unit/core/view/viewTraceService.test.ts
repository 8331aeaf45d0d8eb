import assert from 'node:assert/strict';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { buildReportTrace } from '../../../../src/core/share/reportDocument';
import { TraceService } from '../../../../src/core/view/traceService';
import { ViewTraceService } from '../../../../src/core/view/viewTraceService';
import { EDIT_LOOP, fixtures, parseFile, SPOTTER } from '../../../support/helpers';

// The HTML report answers the page from the view it embeds (ViewTraceService); the
// inspector from the model in its trace worker (TraceService). Two ways to the same
// answers: compared here call by call on real traces, so the report cannot drift from the
// inspector. (TraceService's own answers are checked against raw-log counts in
// traceService.test.ts.)

const PRICED = join(fixtures, 'canonical/priced-session.trace.jsonl');

describe('ViewTraceService answers as TraceService does', () => {
  for (const [path, priced] of [
    [SPOTTER, false],
    [SPOTTER, true],
    [EDIT_LOOP, false],
    [PRICED, true],
  ] as const) {
    it(`${basename(path)}${priced ? ' with prices' : ''}`, async () => {
      const parsed = await parseFile(path);
      const prices = priced ? createPriceBook() : null;
      const model = new TraceService(parsed, { fileName: basename(path), formatChosen: false, analysis: {}, prices });
      const { view, details } = buildReportTrace(parsed, basename(path), { prices });
      const fromView = new ViewTraceService(view, details);
      const header = model.header();
      // The report names only its own file (it opens no source line); every other header field is the inspector's.
      assert.deepEqual({ ...fromView.header(), files: header.files }, header);
      assert.deepEqual(
        fromView.sessionList({ query: '', offset: 0, limit: 1000 }),
        model.sessionList({ query: '', offset: 0, limit: 1000 }),
      );
      assert.deepEqual(
        fromView.sessionList({ query: 'agent', offset: 1, limit: 5 }),
        model.sessionList({ query: 'agent', offset: 1, limit: 5 }),
      );
      let searched = 0;
      for (const s of parsed.model.sessions) {
        const n = s.calls.length;
        assert.deepEqual(
          fromView.sessionIntro({ sessionId: s.id }),
          model.sessionIntro({ sessionId: s.id }),
          `intro of ${s.id}`,
        );
        assert.deepEqual(
          fromView.sessionBody({ sessionId: s.id }),
          model.sessionBody({ sessionId: s.id }),
          `body of ${s.id}: columns, tools, analysis`,
        );
        assert.deepEqual(
          fromView.callRows({ sessionId: s.id, from: 0, count: n }),
          model.callRows({ sessionId: s.id, from: 0, count: n }),
        );
        const tools = model.sessionBody({ sessionId: s.id })!.toolCallCount;
        assert.deepEqual(
          fromView.toolRows({ sessionId: s.id, from: 0, count: tools + 5 }),
          model.toolRows({ sessionId: s.id, from: 0, count: tools + 5 }),
        );
        assert.deepEqual(
          fromView.toolRows({ sessionId: s.id, from: 3, count: 7 }),
          model.toolRows({ sessionId: s.id, from: 3, count: 7 }),
        );
        for (const t of model.sessionBody({ sessionId: s.id })!.tools)
          assert.deepEqual(
            fromView.callsUsingTool({ sessionId: s.id, tool: t.name }),
            model.callsUsingTool({ sessionId: s.id, tool: t.name }),
          );
        for (let i = 0; i < n; i += Math.max(1, Math.floor(n / 10)))
          assert.deepEqual(
            fromView.callDetail({ sessionId: s.id, callIndex: i }),
            model.callDetail({ sessionId: s.id, callIndex: i }),
          );
        // Search by each tool's name, a file, a command and an error text the session has.
        for (const call of s.calls) {
          for (const t of call.toolCalls) {
            for (const q of [t.name, t.targetFile, t.command, t.errorText?.slice(0, 30) ?? null]) {
              if (!q || searched > 60) continue;
              searched += 1;
              assert.deepEqual(
                fromView.search({ query: q, sessionId: s.id }),
                model.search({ query: q, sessionId: s.id }),
                `search ${q}`,
              );
              assert.deepEqual(
                fromView.search({ query: q, sessionId: null }),
                model.search({ query: q, sessionId: null }),
                `search ${q} in all`,
              );
            }
          }
        }
      }
      // And by prompt text, the first words of each turn.
      for (const s of parsed.model.sessions) {
        for (const turn of s.turns.slice(0, 3)) {
          const q = turn.preview?.trim().slice(0, 20);
          if (!q) continue;
          searched += 1;
          assert.deepEqual(
            fromView.search({ query: q, sessionId: null }),
            model.search({ query: q, sessionId: null }),
            `search ${q}`,
          );
        }
      }
      // The canonical priced session has no tool calls and no prompts to look for.
      if (path !== PRICED) assert.ok(searched > 0);
      if (priced)
        assert.ok(
          header.cost !== null && fromView.sessionBody({ sessionId: header.defaultSessionId! })!.columns.cost !== null,
          'the cost columns are compared too',
        );
    });
  }
});
