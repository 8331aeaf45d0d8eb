import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { parseTrace } from '../../../../../src/core/trace/parseTrace';
import type { Session } from '../../../../../src/core/trace/model';
import { chunked, EDIT_LOOP, parseFile, parseText, REJECTIONS, SPOTTER } from '../../../../support/helpers';

// Expected figures: totals and ratios come from test/reference/claude_code_totals.py (plain
// Python grouping by message.id); single calls, lines and turns were read off the files by hand.

function session(sessions: Session[], id: string): Session {
  const s = sessions.find((x) => x.id === id);
  assert.ok(s, `session ${id} not found among ${sessions.map((x) => x.id).join(', ')}`);
  return s;
}

describe('Claude Code reader on the spotter session (2.1.39, sub-agents, compaction)', async () => {
  const parsed = await parseFile(SPOTTER);
  const main = session(parsed.model.sessions, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04');

  it('detects the format from the first records, not line 1 alone', () => {
    // Line 1 is a file-history-snapshot, which has no sessionId or uuid.
    assert.equal(parsed.model.format, 'claude-code');
    assert.equal(parsed.problem, null);
  });

  it('counts one call per message.id: 149 calls, not the 281 assistant lines', () => {
    assert.equal(main.calls.length, 149);
  });

  it('maps the first call by hand: line 8, cached 17,842, appended 3 + 8,165, output from the last line', () => {
    const c = main.calls[0]!;
    assert.equal(c.source.line, 7); // 0-based line of file line 8
    assert.equal(c.id, 'msg_01AjAtmphJjr4oSLfTyzk8LA');
    assert.equal(c.tokens.cached, 17842);
    assert.equal(c.tokens.appended, 8168);
    assert.equal(c.tokens.cacheWrite, 8165);
    assert.equal(c.tokens.input, 26010);
    assert.equal(c.tokens.output, 209);
    assert.equal(c.model, 'claude-opus-4-6');
    assert.deepEqual(
      c.toolCalls.map((t) => t.name),
      ['Bash', 'Bash'],
    );
  });

  it('totals match the independent Python grouping', () => {
    const s = summarizeSession(main);
    assert.deepEqual(s.tokens, {
      input: 11746257,
      cached: 11560832,
      appended: 185425,
      cacheWrite: 185255,
      output: 31625,
    });
    assert.ok(Math.abs(s.cacheHitRate! - 0.9842141202938094) < 1e-12);
    assert.ok(Math.abs(s.rawInputToOutput! - 371.4231462450593) < 1e-9);
    assert.ok(Math.abs(s.appendToOutput.mean! - 196.94014062937714) < 1e-9);
    assert.equal(s.appendToOutput.median, 5.6);
    assert.ok(Math.abs(s.appendToOutput.aggregate! - 5.863241106719368) < 1e-12);
  });

  it('counts two user turns: the task prompt and "continue implementation", not /compact or its output', () => {
    assert.deepEqual(
      main.turns.map((t) => [t.source.line + 1, t.preview.slice(0, 24)]),
      [
        [7, 'Work on bead spotter-4te'],
        [1491, 'continue implementation'],
      ],
    );
    assert.equal(main.calls[0]!.turn, 0);
    assert.equal(main.calls[148]!.turn, 1);
  });

  it('records the /compact boundary before call 138 (line 1481, manual, 142,431 tokens)', () => {
    assert.deepEqual(
      main.compactions.map((c) => [c.beforeCall, c.trigger, c.preTokens, c.source.line + 1]),
      [[138, 'manual', 142431, 1481]],
    );
    // The cache collapses there: call 137 read 141,369 cached tokens, call 138 only 21,448.
    assert.equal(main.calls[137]!.tokens.cached, 141369);
    assert.equal(main.calls[138]!.tokens.cached, 21448);
  });

  it('pairs 162 tool uses with their results; 11 failed (2 Edit misses, 9 Bash)', () => {
    const tools = main.calls.flatMap((c) => c.toolCalls);
    assert.equal(tools.length, 162);
    const failed = tools.filter((t) => t.isError === true);
    assert.deepEqual(
      failed.map((t) => [t.name, t.resultSource!.line + 1]),
      [
        ['Edit', 259],
        ['Bash', 661],
        ['Bash', 916],
        ['Bash', 1209],
        ['Edit', 1300],
        ['Bash', 1343],
        ['Bash', 1366],
        ['Bash', 1389],
        ['Bash', 1419],
        ['Bash', 1447],
        ['Bash', 1463],
      ],
    );
    const edit = failed[0]!;
    assert.equal(edit.targetFile, '/home/USER/projects/spotter-worktrees/spotter-4te/lib/spotter/telemetry/otel.ex');
    assert.match(edit.errorText!, /^String to replace not found in file\./);
    assert.equal(edit.source.line + 1, 258);
    assert.equal(failed[2]!.exitCode, 1); // "Exit code 1\n(eval):1: permission denied"
  });

  it('loads the sub-agent logs with the parent and keeps them apart from the main thread', () => {
    assert.deepEqual(
      parsed.model.sessions.map((s) => [s.id, s.role, s.parentId, s.calls.length]),
      [
        ['ae4a77f8-aedd-4bc1-888f-c94edc91af04', 'main', null, 149],
        ['aac57f5', 'subagent', 'ae4a77f8-aedd-4bc1-888f-c94edc91af04', 3],
        ['acompact-946d2b', 'compaction', 'ae4a77f8-aedd-4bc1-888f-c94edc91af04', 1],
      ],
    );
    const sub = session(parsed.model.sessions, 'aac57f5');
    // The Task tool_use on line 71 started it; its tool_result names agentId aac57f5.
    assert.equal(sub.parentToolCallId, 'toolu_01Hf8v1Za7y4af8VUwSR4CXU');
    assert.deepEqual(summarizeSession(sub).tokens, {
      input: 50496,
      cached: 29274,
      appended: 21222,
      cacheWrite: 18814,
      output: 7,
    });
    assert.equal(parsed.model.files[1], 'ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl');
    assert.equal(sub.calls[0]!.source.file, 1);
  });

  it('skips progress, snapshot and other non-message lines, and says how many', () => {
    // Counted by hand with grep: 956 + 147 + 25 progress lines, 20 snapshots.
    assert.equal(parsed.model.skippedRecords['progress'], 956 + 147 + 25 + 12);
    assert.equal(parsed.model.skippedRecords['file-history-snapshot'], 20);
    assert.equal(parsed.model.skippedRecords['system:turn_duration'], 1);
  });

  it('gives the same model whatever the chunk size', async () => {
    const small = await parseTrace([chunked(SPOTTER, 4093)]);
    const one = await parseTrace([chunked(SPOTTER, 1 << 30)]);
    assert.deepEqual(
      small.model.sessions[0]!.calls.map((c) => [c.id, c.tokens, c.source.offset]),
      one.model.sessions[0]!.calls.map((c) => [c.id, c.tokens, c.source.offset]),
    );
  });

  it('flags calls whose output Claude Code logged before the response ended', () => {
    const note = parsed.model.diagnostics.find((d) => d.file === 0 && /output_tokens ≤ 1/.test(d.message));
    assert.ok(note, 'expected an undercount note');
    assert.match(note.message, /^29 of 149 calls/);
  });
});

describe('Claude Code reader on the M-Claude session (2.0.64, Windows, edit retry loop)', async () => {
  const parsed = await parseFile(EDIT_LOOP);
  const main = parsed.model.sessions[0]!;

  it('reads 41 calls with the Python totals', () => {
    assert.equal(parsed.model.sessions.length, 1);
    assert.equal(main.calls.length, 41);
    const s = summarizeSession(main);
    assert.deepEqual(s.tokens, {
      input: 2069302,
      cached: 1768739,
      appended: 300563,
      cacheWrite: 297935,
      output: 24363,
    });
    assert.equal(s.appendToOutput.median, 9);
  });

  it('drops the /clear local command and keeps three typed prompts', () => {
    assert.deepEqual(
      main.turns.map((t) => t.source.line + 1),
      [6, 9, 16],
    );
  });

  it('sees the four failing Edit/Write calls on sync_raw_logs.py in a row', () => {
    const failed = main.calls
      .flatMap((c) => c.toolCalls)
      .filter((t) => t.isError && t.targetFile?.endsWith('sync_raw_logs.py'));
    assert.deepEqual(
      failed.map((t) => [t.name, t.resultSource!.line + 1]),
      [
        ['Edit', 61],
        ['Edit', 65],
        ['Write', 70],
        ['Write', 74],
      ],
    );
    assert.match(failed[2]!.errorText!, /^File has not been read yet/);
  });
});

describe('Claude Code reader: user rejections and interruptions', async () => {
  const parsed = await parseFile(REJECTIONS);
  const main = parsed.model.sessions[0]!;

  it('one call with two rejected tool uses, each failed and denied by the user; the interruption note is not a prompt', () => {
    // test/reference/tool_denials.py: "claude-code denied 2".
    assert.equal(main.calls.length, 1);
    assert.deepEqual(
      main.calls[0]!.toolCalls.map((t) => [t.name, t.isError, t.deniedByUser === true]),
      [
        ['Bash', true, true],
        ['Glob', true, true],
      ],
    );
    assert.equal(summarizeSession(main).deniedToolCalls, 2);
    assert.deepEqual(
      main.turns.map((t) => t.preview),
      ['mix phx.server doesnt seem to start'],
    );
  });

  it('keeps what pricing needs: its writes are 1-hour writes (line 5: ephemeral_1h_input_tokens 13,835), tier standard', () => {
    const c = main.calls[0]!;
    assert.deepEqual([c.tokens.cacheWrite, c.tokens.cacheWrite5m, c.tokens.cacheWrite1h], [13835, 0, 13835]);
    assert.deepEqual([c.serviceTier, c.inferenceGeo], ['standard', 'not_available']);
  });
});

describe('Claude Code reader: pricing fields on the spotter session', async () => {
  const parsed = await parseFile(SPOTTER);
  const main = parsed.model.sessions.find((s) => s.role === 'main')!;

  it('line 8: 8,165 tokens written for 5 minutes, none for 1 hour; standard tier, global inference', () => {
    const c = main.calls[0]!;
    assert.deepEqual([c.tokens.cacheWrite5m, c.tokens.cacheWrite1h], [8165, 0]);
    assert.deepEqual([c.serviceTier, c.inferenceGeo], ['standard', 'global']);
  });

  it('every call splits its writes, and the split adds up to cache_creation_input_tokens', () => {
    for (const c of main.calls)
      assert.equal((c.tokens.cacheWrite5m ?? NaN) + (c.tokens.cacheWrite1h ?? NaN), c.tokens.cacheWrite, c.id);
  });

  it('a log without the split or tier leaves the fields out (not 0)', async () => {
    const line = {
      type: 'assistant',
      sessionId: 's',
      uuid: 'u',
      timestamp: '2026-01-01T00:00:00.000Z',
      message: {
        id: 'm',
        model: 'claude-sonnet-4-5',
        usage: {
          input_tokens: 5,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 10,
          output_tokens: 3,
          inference_geo: '',
        },
      },
    };
    const c = (await parseText(JSON.stringify(line) + '\n')).model.sessions[0]!.calls[0]!;
    assert.equal('cacheWrite5m' in c.tokens, false);
    assert.equal('serviceTier' in c, false);
    assert.equal('inferenceGeo' in c, false);
  });

  it('a tier alone or a region alone is kept alone, after the fields every call has (built in one literal)', async () => {
    const call = async (usage: object) => {
      const line = {
        type: 'assistant',
        sessionId: 's',
        uuid: 'u',
        timestamp: '2026-01-01T00:00:00.000Z',
        message: { id: 'm', model: 'claude-sonnet-4-5', usage: { input_tokens: 5, output_tokens: 3, ...usage } },
      };
      return (await parseText(JSON.stringify(line) + '\n')).model.sessions[0]!.calls[0]!;
    };
    const every = [
      'id',
      'index',
      'turn',
      'model',
      'startMs',
      'endMs',
      'tokens',
      'server',
      'blocks',
      'toolCalls',
      'source',
    ];
    const tier = await call({ service_tier: 'priority' });
    assert.deepEqual(Object.keys(tier), [...every, 'serviceTier']);
    assert.equal(tier.serviceTier, 'priority');
    const geo = await call({ inference_geo: 'us' });
    assert.deepEqual(Object.keys(geo), [...every, 'inferenceGeo']);
    assert.equal(geo.inferenceGeo, 'us');
    const both = await call({
      service_tier: 'batch',
      inference_geo: 'us',
      cache_creation: { ephemeral_1h_input_tokens: 7 },
    });
    assert.deepEqual(Object.keys(both), [...every, 'serviceTier', 'inferenceGeo']);
    assert.deepEqual(Object.keys(both.tokens), [
      'input',
      'cached',
      'appended',
      'cacheWrite',
      'output',
      'reasoningOutput',
      'cacheWrite5m',
      'cacheWrite1h',
    ]);
    assert.deepEqual([both.tokens.cacheWrite5m, both.tokens.cacheWrite1h], [null, 7]);
  });
});

describe('Claude Code reader: edge cases from docs/design/formats.md §12', () => {
  const base = { sessionId: 's1', uuid: 'u', parentUuid: null, timestamp: '2026-01-01T00:00:00.000Z' };
  const assistant = (id: string, usage: object, extra: object = {}): string =>
    JSON.stringify({
      ...base,
      type: 'assistant',
      message: { id, model: 'm', role: 'assistant', content: [{ type: 'text', text: 'hi' }], usage },
      ...extra,
    });

  it('a missing cache field is unknown, not zero', async () => {
    const { model } = await parseText(assistant('a', { input_tokens: 10, output_tokens: 5 }) + '\n');
    const t = model.sessions[0]!.calls[0]!.tokens;
    assert.equal(t.cached, null);
    assert.equal(t.input, null);
    assert.equal(t.appended, 10);
    assert.equal(summarizeSession(model.sessions[0]!).cacheHitRate, null);
  });

  it('skips <synthetic> assistant lines (local API errors), unknown types and keeps going', async () => {
    const text = [
      JSON.stringify({ type: 'some-future-type', x: 1 }),
      assistant(
        'err',
        { input_tokens: 0, output_tokens: 0 },
        { message: { id: 'err', model: '<synthetic>', content: [] } },
      ),
      assistant('a', { input_tokens: 1, cache_read_input_tokens: 2, cache_creation_input_tokens: 3, output_tokens: 4 }),
    ].join('\n');
    const { model } = await parseText(text);
    assert.equal(model.sessions[0]!.calls.length, 1);
    assert.equal(model.skippedRecords['unknown:some-future-type'], 1);
    assert.equal(model.skippedRecords['assistant:<synthetic>'], 1);
  });

  it('accepts sidechain lines inside the main file as their own sub-agent session', async () => {
    const text = [
      assistant('a', { input_tokens: 1, output_tokens: 1 }),
      assistant('b', { input_tokens: 1, output_tokens: 1 }, { isSidechain: true, agentId: 'x1' }),
    ].join('\n');
    const { model } = await parseText(text);
    assert.deepEqual(
      model.sessions.map((s) => [s.id, s.role, s.parentId]),
      [
        ['s1', 'main', null],
        ['x1', 'subagent', 's1'],
      ],
    );
  });

  it('takes the largest output of a streamed response, and input only once', async () => {
    const text = [
      assistant('a', {
        input_tokens: 3,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 10,
        output_tokens: 9,
      }),
      assistant('a', {
        input_tokens: 3,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 10,
        output_tokens: 209,
      }),
    ].join('\n');
    const { model } = await parseText(text);
    assert.deepEqual(
      model.sessions[0]!.calls.map((c) => [c.tokens.input, c.tokens.output]),
      [[113, 209]],
    );
  });
});

describe('Claude Code reader: a retried long command and its error, kept once (docs/performance.md, eleventh session)', () => {
  const at = (s: string): string => `2026-01-01T00:00:${s}Z`;
  const line = (type: string, time: string, content: unknown[], id?: string): string =>
    JSON.stringify({
      type,
      sessionId: 's1',
      uuid: `u-${time}`,
      timestamp: at(time),
      message: {
        ...(id !== undefined ? { id, model: 'm', usage: { input_tokens: 1, output_tokens: 1 } } : {}),
        role: type,
        content,
      },
    });
  const use = (id: string, command: string) => ({ type: 'tool_use', id, name: 'Bash', input: { command } });
  const result = (id: string, text: string) => ({
    type: 'tool_result',
    tool_use_id: id,
    is_error: true,
    content: text,
  });
  // 700 characters, past the 512 of the short-value table; `other` differs in its last one only.
  const command = 'x'.repeat(699) + 'a';
  const other = 'x'.repeat(699) + 'b';
  // 800 characters: kept as its first 599 and an ellipsis (ERROR_TEXT_MAX 600).
  const error = 'E'.repeat(800);

  it('keeps each command and error text whole and apart, and the times of each call', async () => {
    const text = [
      line('user', '00.000', [{ type: 'text', text: 'go' }]),
      line('assistant', '01.250', [use('t1', command)], 'm1'),
      line('user', '03.000', [result('t1', error)]),
      line('assistant', '04.500', [use('t2', command)], 'm2'),
      line('user', '05.000', [result('t2', error)]),
      line('assistant', '06.000', [use('t3', other)], 'm3'),
      line('user', '09.999', [result('t3', 'Exit code 2\nother')]),
    ].join('\n');
    const calls = (await parseText(text)).model.sessions[0]!.calls;
    const tools = calls.flatMap((c) => c.toolCalls);
    assert.deepEqual(
      tools.map((t) => [t.command === command, t.command === other]),
      [
        [true, false],
        [true, false],
        [false, true],
      ],
    );
    const clipped = 'E'.repeat(599) + '…';
    assert.deepEqual(
      tools.map((t) => t.errorText),
      [clipped, clipped, 'Exit code 2\nother'],
    );
    const ms = (s: string): number => Date.parse(at(s));
    // Each call starts at the line before it (the prompt, then each result) and ends at its own line.
    assert.deepEqual(
      calls.map((c) => [c.startMs, c.endMs]),
      [
        [ms('00.000'), ms('01.250')],
        [ms('03.000'), ms('04.500')],
        [ms('05.000'), ms('06.000')],
      ],
    );
    assert.deepEqual(
      tools.map((t) => [t.startMs, t.endMs, t.durationMs]),
      [
        [ms('01.250'), ms('03.000'), 1750],
        [ms('04.500'), ms('05.000'), 500],
        [ms('06.000'), ms('09.999'), 3999],
      ],
    );
  });

  it('past the table of 4,096 texts, each failed call still keeps its own error', async () => {
    const n = 4200;
    const lines: string[] = [line('user', '00.000', [{ type: 'text', text: 'go' }])];
    for (let i = 0; i < n; i++) {
      lines.push(line('assistant', '01.000', [use(`t${i}`, `cmd ${i}`)], `m${i}`));
      lines.push(line('user', '02.000', [result(`t${i}`, `error number ${i}`)]));
    }
    const tools = (await parseText(lines.join('\n'))).model.sessions[0]!.calls.flatMap((c) => c.toolCalls);
    assert.equal(tools.length, n);
    const wrong = tools.filter((t, i) => t.errorText !== `error number ${i}` || t.command !== `cmd ${i}`);
    assert.deepEqual(wrong, []);
  });
});
