import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CALL_FLAG } from '../../../../src/core/view/timelineColumns';
import { MAX_SEARCH_HITS, PROBLEM_LOOPS_MAX, TraceService } from '../../../../src/core/view/traceService';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { EDIT_LOOP, fixtures, parseFile, parseText, SPOTTER } from '../../../support/helpers';

// Expected figures come from reading the fixtures (by hand, or with the small raw-JSON
// walk below, which does not use the reader), never from the service's own output.

const MAIN = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04';

/** The assistant message ids (calls) whose tool results are errors containing `text`, walking the raw log. */
function callsWithError(path: string, text: string): Set<string> {
  const messageOfTool = new Map<string, string>();
  const failing = new Set<string>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const r = JSON.parse(line) as {
      type?: string;
      isSidechain?: boolean;
      message?: { id?: string; content?: unknown };
    };
    const content = Array.isArray(r.message?.content) ? (r.message!.content as Array<Record<string, unknown>>) : [];
    for (const b of content) {
      if (r.type === 'assistant' && b['type'] === 'tool_use') messageOfTool.set(String(b['id']), String(r.message!.id));
      if (r.type === 'user' && b['type'] === 'tool_result' && b['is_error'] === true) {
        const body = typeof b['content'] === 'string' ? b['content'] : JSON.stringify(b['content']);
        if (body.toLowerCase().includes(text.toLowerCase())) failing.add(String(b['tool_use_id']));
      }
    }
  }
  return new Set([...failing].map((t) => messageOfTool.get(t)!));
}

describe('TraceService on the spotter session (what the inspector page is answered)', async () => {
  const parsed = await parseFile(SPOTTER);
  const service = new TraceService(parsed, { fileName: 'spotter.jsonl', formatChosen: false, analysis: {} });
  const callIds = parsed.model.sessions.find((s) => s.id === MAIN)!.calls.map((c) => c.id);

  it('the header says what the trace is without any session: 3 sessions, 153 calls, the main one first', () => {
    const h = service.header();
    assert.equal(h.format, 'claude-code');
    // 149 main-thread calls, 3 in sub-agent aac57f5, 1 in the compaction agent (the reader tests count them).
    assert.deepEqual([h.sessionCount, h.callCount, h.defaultSessionId], [3, 153, MAIN]);
    assert.deepEqual(h.files, [
      'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl',
      'ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl',
      'ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-acompact-946d2b.jsonl',
    ]);
  });

  it('the picker lists the main session, then its sub-agents labelled and indented; a query narrows it', () => {
    assert.deepEqual(service.sessionList({ query: '', offset: 0, limit: 10 }), {
      total: 3,
      offset: 0,
      entries: [
        { id: MAIN, label: 'main session ae4a77f8 · 149 calls', depth: 0 },
        { id: 'aac57f5', label: '└ sub-agent aac57f5 · 3 calls', depth: 1 },
        { id: 'acompact-946d2b', label: '└ compaction agent acompact-946d2b · 1 call', depth: 1 },
      ],
    });
    assert.deepEqual(
      service.sessionList({ query: 'COMPACT', offset: 0, limit: 10 }).entries.map((e) => e.id),
      ['acompact-946d2b'],
    );
    assert.deepEqual(service.sessionList({ query: '', offset: 1, limit: 1 }), {
      total: 3,
      offset: 1,
      entries: [{ id: 'aac57f5', label: '└ sub-agent aac57f5 · 3 calls', depth: 1 }],
    });
  });

  it('the body carries one column entry per call with the failed, miss, loop, sub-agent and compaction marks', () => {
    const body = service.sessionBody({ sessionId: MAIN })!;
    const flags = body.columns.flags;
    assert.equal(flags.length, 149);
    const count = (flag: number): number => flags.filter((f) => (f & flag) !== 0).length;
    // 11 calls with a failed tool; misses at calls 5 and 138; the 7-attempt loop; the Task call (index 4); the /compact before call 138.
    assert.deepEqual(
      [
        count(CALL_FLAG.failed),
        count(CALL_FLAG.miss),
        count(CALL_FLAG.loop),
        count(CALL_FLAG.subagent),
        count(CALL_FLAG.compaction),
      ],
      [11, 2, 7, 1, 1],
    );
    assert.ok(flags[4]! & CALL_FLAG.subagent);
    assert.ok(flags[138]! & CALL_FLAG.compaction);
    assert.equal(body.toolCallCount, 162);
    assert.deepEqual(body.tools.slice(0, 1), [{ name: 'Bash', calls: body.tools[0]!.calls, failed: 9 }]);
  });

  it('rows come by page and tool-call rows in call order', () => {
    const rows = service.callRows({ sessionId: MAIN, from: 100, count: 5 });
    assert.deepEqual(
      rows.map((r) => r.index),
      [100, 101, 102, 103, 104],
    );
    assert.deepEqual(
      service.callRows({ sessionId: MAIN, from: 147, count: 10 }).map((r) => r.index),
      [147, 148],
    );
    const tools = service.toolRows({ sessionId: MAIN, from: 0, count: 1000 });
    assert.equal(tools.length, 162);
    assert.ok(tools.every((t, i) => i === 0 || t.callIndex >= tools[i - 1]!.callIndex));
    assert.equal(tools.filter((t) => t.failed === true).length, 11);
    assert.deepEqual(service.callRows({ sessionId: 'no such session', from: 0, count: 5 }), []);
  });

  it('search finds calls by error text, in one session or all, and says where it matched', () => {
    // Two Edit calls failed with "String to replace not found" (the raw log, walked without the reader).
    const expected = callsWithError(SPOTTER, 'String to replace not found');
    assert.equal(expected.size, 2);
    const r = service.search({ query: 'string to REPLACE not found', sessionId: MAIN });
    assert.equal(r.total, 2);
    assert.deepEqual(new Set(r.hits.map((h) => callIds[h.callIndex])), expected);
    assert.ok(r.hits.every((h) => h.field === 'error' && /String to replace not found/.test(h.text)));
    const permission = service.search({ query: 'permission denied', sessionId: null });
    assert.deepEqual(
      new Set(permission.hits.map((h) => callIds[h.callIndex])),
      callsWithError(SPOTTER, 'permission denied'),
    );
    assert.deepEqual(service.search({ query: '   ', sessionId: MAIN }), { query: '   ', total: 0, hits: [] });
  });

  it('search matches tool names, files, commands and prompts too', () => {
    const bash = service.search({ query: 'bash', sessionId: MAIN });
    assert.ok(bash.total > 0 && bash.hits.every((h) => h.field === 'tool'));
    // The first user prompt starts "Work on bead spotter-4te" (line 2 of the log): its turn's first call.
    const prompt = service.search({ query: 'work on bead', sessionId: MAIN });
    assert.ok(prompt.hits.some((h) => h.field === 'prompt'));
    assert.equal(service.search({ query: 'git commit', sessionId: MAIN }).hits[0]!.field, 'command');
  });

  it('lists the calls that used one tool, and details and sources by call', () => {
    const edits = service.callsUsingTool({ sessionId: MAIN, tool: 'Edit' });
    const byModel = parsed.model.sessions[0]!.calls.filter((c) => c.toolCalls.some((t) => t.name === 'Edit')).map(
      (c) => c.index,
    );
    assert.deepEqual([...edits], byModel);
    assert.equal(service.callDetail({ sessionId: MAIN, callIndex: 200 }), null);
    assert.equal(service.callDetail({ sessionId: MAIN, callIndex: 0 })!.index, 0);
    assert.deepEqual(service.sourceOf(MAIN, 0, null), parsed.model.sessions[0]!.calls[0]!.source);
  });

  it('new analysis settings redo the analyses, not the parse', () => {
    const before = service.sessionBody({ sessionId: MAIN })!.analysis.loops.length;
    service.setAnalysisOptions({ minLoopAttempts: 8 });
    assert.equal(service.sessionBody({ sessionId: MAIN })!.analysis.loops.length, 0);
    assert.equal(service.problems().loops.length, 0);
    service.setAnalysisOptions({});
    assert.equal(service.sessionBody({ sessionId: MAIN })!.analysis.loops.length, before);
    assert.equal(service.parsed, parsed);
  });
});

describe('TraceService problems and bad input', () => {
  it('problems list the M-Claude retry loop and the read errors, with every file', async () => {
    const service = new TraceService(await parseFile(EDIT_LOOP), {
      fileName: 'edit-retry-loop.jsonl',
      formatChosen: false,
      analysis: {},
    });
    const p = service.problems();
    assert.equal(p.loops.length, 1);
    // The loop's attempts answer on lines 61, 65, 70 and 74 (1-based) of the file.
    assert.deepEqual(
      p.loops[0]!.attempts.map((a) => a.source.line + 1),
      [61, 65, 70, 74],
    );
    assert.equal(p.problem, null);
  });

  it('problems give the Problems view the first 1,000 retry loops and count the rest', async () => {
    // The M-Claude log has one retry loop (above); 1,003 copies of its session have 1,003.
    const parsed = await parseFile(EDIT_LOOP);
    const session = parsed.model.sessions[0]!;
    const sessions = Array.from({ length: 1003 }, (_, i) => ({ ...session, id: `copy-${i}` }));
    const service = new TraceService(
      { ...parsed, model: { ...parsed.model, sessions } },
      { fileName: 'copies.jsonl', formatChosen: false, analysis: {} },
    );
    const p = service.problems();
    assert.equal(PROBLEM_LOOPS_MAX, 1000);
    assert.equal(p.loops.length, 1000);
    assert.equal(p.loopsLeftOut, 3);
    assert.deepEqual(
      p.loops[999]!.attempts.map((a) => a.source.line + 1),
      [61, 65, 70, 74],
    );
    // Fewer loops than that: all of them, none left out.
    assert.equal(
      new TraceService(parsed, { fileName: 'edit-retry-loop.jsonl', formatChosen: false, analysis: {} }).problems()
        .loopsLeftOut,
      0,
    );
  });

  it('an empty file has a problem, no sessions and no default session', async () => {
    const service = new TraceService(await parseText(''), {
      fileName: 'empty.jsonl',
      formatChosen: false,
      analysis: {},
    });
    const h = service.header();
    assert.equal(h.problem?.kind, 'empty');
    assert.deepEqual([h.sessionCount, h.defaultSessionId], [0, null]);
    assert.equal(service.sessionIntro({ sessionId: 'x' }), null);
    assert.equal(service.sessionBody({ sessionId: 'x' }), null);
    assert.equal(service.problems().problem?.kind, 'empty');
  });

  it('search lists at most MAX_SEARCH_HITS hits and counts the rest', async () => {
    const line = (i: number): string =>
      JSON.stringify({
        type: 'llm_call',
        session: 's',
        id: `c${i}`,
        model: 'm',
        startMs: i,
        endMs: i + 1,
        tokens: { input: 10, cached: 0, appended: 10, cacheWrite: null, output: 1, reasoningOutput: null },
      });
    const tool = (i: number): string =>
      JSON.stringify({
        type: 'tool_call',
        session: 's',
        call: `c${i}`,
        id: `t${i}`,
        name: 'Bash',
        targetFile: null,
        command: 'ls',
        startMs: null,
        endMs: null,
        durationMs: null,
        isError: true,
        errorText: 'boom',
        exitCode: 1,
        resultChars: 4,
      });
    const n = MAX_SEARCH_HITS + 5;
    const text = [
      JSON.stringify({ type: 'header', format: 'agent-trace', version: 1 }),
      JSON.stringify({ type: 'session', id: 's', role: 'main' }),
      ...Array.from({ length: n }, (_, i) => `${line(i)}\n${tool(i)}`),
    ].join('\n');
    const service = new TraceService(await parseText(text, 'many.trace.jsonl'), {
      fileName: 'many.trace.jsonl',
      formatChosen: false,
      analysis: {},
    });
    const r = service.search({ query: 'boom', sessionId: null });
    assert.equal(r.total, n);
    assert.equal(r.hits.length, MAX_SEARCH_HITS);
  });
});

describe('TraceService: the cost panel gets figures, and a typed TTL is replayed in the worker', async () => {
  // The gapped Haiku session of test/unit/core/cost/handWorkedTtl.test.ts: $0.069025 as
  // logged; under a 2-hour TTL at 3× the input price no gap expires and it costs $0.053.
  const parsed = await parseFile(`${fixtures}/canonical/ttl-timeline.trace.jsonl`);
  const service = new TraceService(parsed, {
    fileName: 'ttl-timeline.trace.jsonl',
    formatChosen: false,
    analysis: {},
    prices: createPriceBook(),
  });
  const id = parsed.model.sessions[0]!.id;

  it('the intro carries no per-call replay input (it would be hundreds of MB at a million calls)', () => {
    const cost = service.sessionIntro({ sessionId: id })!.cost!;
    assert.equal('ttlCalls' in cost, false);
    assert.equal(cost.ttl.pricedCalls, 6);
  });

  it('customTtl replays the typed TTL: 2 h at 3× the input price costs $0.053, no call finds the cache expired', () => {
    const replay = service.customTtl({ sessionId: id, minutes: 120, writeMultiple: 3 })!;
    assert.equal(Math.round(replay.costUsd! * 1e6), 53_000);
    assert.deepEqual(replay.expiredCalls, []);
    assert.equal(service.customTtl({ sessionId: 'no such session', minutes: 120, writeMultiple: 3 }), null);
  });

  it('without prices there is nothing to replay', () => {
    const unpriced = new TraceService(parsed, { fileName: 'x', formatChosen: false, analysis: {} });
    assert.equal(unpriced.customTtl({ sessionId: id, minutes: 120, writeMultiple: 3 }), null);
  });
});
