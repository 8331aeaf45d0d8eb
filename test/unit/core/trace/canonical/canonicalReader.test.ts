import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Ajv from 'ajv';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import type { SessionSummary } from '../../../../../src/core/analysis/sessionSummary';
import { writeCanonical } from '../../../../../src/core/trace/canonical/canonicalFormat';
import type { Diagnostic, LlmCall, Session } from '../../../../../src/core/trace/model';
import { fixtures, parseFile, parseText, repoRoot } from '../../../../support/helpers';

// The canonical format v1 (docs/trace-format.md) against its schema
// (schema/agent-trace-v1.schema.json), the writer and the reader. Every expected number
// below is worked out by hand from the records in the test or fixture, never copied from output.

const schema: unknown = JSON.parse(readFileSync(join(repoRoot, 'schema/agent-trace-v1.schema.json'), 'utf8'));
const validateRecord = new Ajv({ allErrors: true }).compile(schema as object);
const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');
const HAND_WRITTEN = join(fixtures, 'canonical/hand-written-minimal.trace.jsonl');
const CLAUDE_DIR = join(fixtures, 'claude-code');
const HEADER = { type: 'header', format: 'agent-trace', version: 1, generator: 'canonical.test.ts' };

/** Schema failures of a JSON Lines text, as "line N: …" (1-based); empty when every line is valid. */
function schemaFailures(text: string): string[] {
  const failures: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    if (!validateRecord(JSON.parse(line))) failures.push(`line ${i + 1}: ${JSON.stringify(validateRecord.errors)}`);
  });
  return failures;
}

/** One JSON Lines text from records, one per line. */
function jsonl(...records: object[]): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

/** The model without source positions (`source`, `resultSource`), which differ between formats by design. */
function withoutSources(sessions: Session[]): unknown {
  return JSON.parse(
    JSON.stringify(sessions, (key, value: unknown) => (key === 'source' || key === 'resultSource' ? undefined : value)),
  );
}

function sessionById(sessions: Session[], id: string): Session {
  const s = sessions.find((x) => x.id === id);
  assert.ok(s, `session ${id} not found among ${sessions.map((x) => x.id).join(', ')}`);
  return s;
}

function callById(session: Session, id: string): LlmCall {
  const c = session.calls.find((x) => x.id === id);
  assert.ok(c, `call ${id} not found in session ${session.id}`);
  return c;
}

/** Diagnostics as [1-based line, severity], for compact exact assertions. */
function where(diagnostics: Diagnostic[]): Array<[number, string]> {
  return diagnostics.map((d) => [d.line + 1, d.severity]);
}

describe('schema/agent-trace-v1.schema.json', () => {
  it('accepts every line of the bundled sample', () => {
    const text = readFileSync(SAMPLE, 'utf8');
    // samples/README.md: 3 sessions with 48 + 1 + 41 = 90 calls, so the check is not vacuous.
    const types = text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    assert.equal(types[0], 'header');
    assert.equal(types.filter((t) => t === 'session').length, 3);
    assert.equal(types.filter((t) => t === 'llm_call').length, 90);
    assert.deepEqual(schemaFailures(text), []);
  });

  it('accepts every line of the hand-written fixture', () => {
    assert.deepEqual(schemaFailures(readFileSync(HAND_WRITTEN, 'utf8')), []);
  });

  it('accepts the examples in docs/trace-format.md; its complete example is the fixture, line for line', () => {
    const doc = readFileSync(join(repoRoot, 'docs/trace-format.md'), 'utf8');
    const blocks = [...doc.matchAll(/```jsonl\n([\s\S]*?)```/g)].map((m) => m[1]!);
    assert.equal(blocks.length, 2);
    const [glance, complete] = blocks;
    assert.deepEqual(schemaFailures(glance!), []);
    // The complete example shows 1-based line numbers before each record.
    const numbered = complete!.split('\n').filter((l) => l.trim() !== '');
    assert.deepEqual(
      numbered.map((l) => Number(/^\s*(\d+) /.exec(l)?.[1])),
      Array.from({ length: 14 }, (_, i) => i + 1),
    );
    const fixtureLines = readFileSync(HAND_WRITTEN, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    assert.deepEqual(
      numbered.map((l) => l.replace(/^\s*\d+ /, '')),
      fixtureLines,
    );
  });

  it('rejects what the format forbids', () => {
    const call = { type: 'llm_call', session: 's', id: 'c' };
    const rejected: Array<[string, object]> = [
      ['negative tokens', { ...call, tokens: { input: -1 } }],
      ['fractional tokens', { ...call, tokens: { output: 2.5 } }],
      ['tokens as text', { ...call, tokens: { input: '100' } }],
      ['llm_call without id', { type: 'llm_call', session: 's' }],
      ['llm_call with empty id', { ...call, id: '' }],
      ['tool_call without call', { type: 'tool_call', session: 's', id: 't', name: 'Bash' }],
      ['tool_call without name', { type: 'tool_call', session: 's', call: 'c', id: 't' }],
      ['turn without session', { type: 'turn', startMs: 0 }],
      ['session without id', { type: 'session', role: 'main' }],
      ['unknown role', { type: 'session', id: 's', role: 'helper' }],
      ['unknown compaction trigger', { type: 'compaction', session: 's', trigger: 'sometimes' }],
      ['header of another format', { ...HEADER, format: 'other' }],
      ['header with version 0', { ...HEADER, version: 0 }],
      ['header without generator', { type: 'header', format: 'agent-trace', version: 1 }],
      ['time as ISO string', { ...call, startMs: '2026-01-01T00:00:00Z' }],
      ['negative time', { ...call, endMs: -1 }],
      ['isError as text', { type: 'tool_call', session: 's', call: 'c', id: 't', name: 'Bash', isError: 'yes' }],
      ['block size 0', { ...call, blocks: { blockSizeTokens: 0, hashes: [1] } }],
      ['hash beyond 2^53', { ...call, blocks: { blockSizeTokens: 16, hashes: [2 ** 64] } }],
      ['fractional hash', { ...call, blocks: { blockSizeTokens: 16, hashes: [1.5] } }],
      ['unknown record type', { type: 'llm-call', session: 's', id: 'c' }],
      ['no type', { session: 's', id: 'c' }],
    ];
    const wronglyAccepted = rejected.filter(([, record]) => validateRecord(record)).map(([why]) => why);
    assert.deepEqual(wronglyAccepted, []);
  });

  it('accepts nulls for unknown values and extra properties for forward compatibility', () => {
    const accepted: object[] = [
      { ...HEADER, version: 2, x_vendor: { anything: true } },
      { type: 'session', id: 's', parentId: null, role: null, agent: null, model: null, x_costUsd: 0.5 },
      {
        type: 'llm_call',
        session: 's',
        id: 'c',
        tokens: {
          input: null,
          cached: null,
          appended: null,
          cacheWrite: null,
          output: null,
          reasoningOutput: null,
          x_audio: 3,
        },
      },
      { type: 'llm_call', session: 's', id: 'c', startMs: 12.5, tokens: null, server: null, blocks: null },
      { type: 'tool_call', session: 's', call: 'c', id: 't', name: 'Bash', isError: null, exitCode: -1 },
      { type: 'compaction', session: 's', trigger: null, preTokens: null, timeMs: null },
    ];
    assert.deepEqual(
      accepted.filter((r) => !validateRecord(r)).map((r) => JSON.stringify(r)),
      [],
    );
  });
});

describe('round trip: Claude Code fixture → writeCanonical → canonical reader', () => {
  const files = readdirSync(CLAUDE_DIR)
    .filter((n) => n.endsWith('.jsonl'))
    .sort();

  it('finds the four Claude Code fixtures', () => {
    assert.deepEqual(files, [
      'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl',
      'context-excerpt.jsonl',
      'edit-retry-loop.jsonl',
      'user-rejections.jsonl',
    ]);
  });

  // Session and call counts from test/fixtures/README.md: the spotter log has a Task
  // sub-agent and a compaction agent beside its 149-call main thread; the edit loop has
  // 41 calls; the rejections log has one call; the context excerpt has six message ids
  // (three before its /compact boundary, three after) and no sidechain line.
  const expectedShape: Record<string, { sessions: number; mainCalls: number }> = {
    'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl': { sessions: 3, mainCalls: 149 },
    'context-excerpt.jsonl': { sessions: 1, mainCalls: 6 },
    'edit-retry-loop.jsonl': { sessions: 1, mainCalls: 41 },
    'user-rejections.jsonl': { sessions: 1, mainCalls: 1 },
  };

  for (const name of files) {
    it(`${name}: written lines validate and read back to the same model`, async () => {
      const original = await parseFile(join(CLAUDE_DIR, name));
      assert.equal(original.problem, null);
      assert.equal(original.model.format, 'claude-code');
      const shape = expectedShape[name];
      assert.ok(shape, `no expected shape for ${name}`);
      assert.equal(original.model.sessions.length, shape.sessions);
      assert.equal(original.model.sessions.find((s) => s.role === 'main')?.calls.length, shape.mainCalls);

      const text = writeCanonical(original.model, 'canonical.test.ts');
      assert.deepEqual(schemaFailures(text), []);

      const reread = await parseText(text, 'x.trace.jsonl');
      assert.equal(reread.problem, null);
      assert.equal(reread.model.format, 'agent-trace');
      assert.deepEqual(reread.model.diagnostics, []);
      assert.deepEqual(reread.model.skippedRecords, {});
      // Sessions, calls (tokens, times, models, turn indexes), tool calls, turns and
      // compactions, all equal; only source positions differ.
      assert.deepEqual(withoutSources(reread.model.sessions), withoutSources(original.model.sessions));
    });
  }

  it('carries the pricing fields: the TTL split of cache writes, the service tier and the inference region', async () => {
    const original = await parseFile(join(CLAUDE_DIR, 'user-rejections.jsonl'));
    const text = writeCanonical(original.model, 'canonical.test.ts');
    const call = text
      .split('\n')
      .map((l) => (l ? (JSON.parse(l) as Record<string, unknown>) : null))
      .find((r) => r?.['type'] === 'llm_call')!;
    assert.deepEqual(call['tokens'], {
      input: 25353,
      cached: 11515,
      appended: 13838,
      cacheWrite: 13835,
      output: 13,
      reasoningOutput: null,
      cacheWrite5m: 0,
      cacheWrite1h: 13835,
    });
    assert.deepEqual([call['serviceTier'], call['inferenceGeo']], ['standard', 'not_available']);
  });

  it('warns about a split larger than the writes, and a tier that is not a string', async () => {
    const lines = [
      '{"type":"session","id":"s"}',
      '{"type":"llm_call","session":"s","id":"c","tokens":{"input":100,"cached":0,"appended":100,"cacheWrite":50,"cacheWrite5m":40,"cacheWrite1h":20},"serviceTier":7}',
    ];
    const parsed = await parseText(lines.join('\n'), 'x.trace.jsonl');
    assert.deepEqual(
      parsed.model.diagnostics.filter((d) => d.severity === 'warning').map((d) => d.message),
      [
        'tokens.cacheWrite5m + cacheWrite1h (60) exceed cacheWrite (50); they split it.',
        'llm_call serviceTier must be a string or null, not 7; ignored.',
      ],
    );
  });

  it('writes a header that names the source', async () => {
    const original = await parseFile(join(CLAUDE_DIR, 'user-rejections.jsonl'));
    const first = JSON.parse(writeCanonical(original.model, 'gen 1.0').split('\n')[0]!) as unknown;
    assert.deepEqual(first, {
      type: 'header',
      format: 'agent-trace',
      version: 1,
      generator: 'gen 1.0',
      source: { format: 'claude-code', files: ['user-rejections.jsonl'] },
    });
  });
});

describe('hand-written fixture (canonical/hand-written-minimal.trace.jsonl)', async () => {
  // The file, by line (1-based):
  //   1 header   2 session main   3 turn 0 (startMs 0)
  //   4 c1: input 1200, cached 0, appended 1200, cacheWrite 1150, output 80, reasoning 30
  //   5 t1 Edit of c1, failed      6 session sub-1 (parent main, started by t2)
  //   7 s1 (sub-1): cached 0, appended 600, output 45 → input derived 0 + 600 = 600
  //   8 t2 Task of c1, ok (written after the sub-agent's call: its result came last)
  //   9 c2: input 1500, cached 1024, no appended → appended derived 1500 − 1024 = 476; output 119
  //  10 t3 Bash of c2, ok, exit 0   11 compaction (after c2, so before call index 2)
  //  12 turn 1 (startMs 20000)     13 c3: every token field null   14 t4 Write of c3, no result
  //
  // main, over the calls that know a figure (c1, c2; c3 unknown everywhere):
  //   input 1200 + 1500 = 2700; cached 0 + 1024 = 1024; appended 1200 + 476 = 1676;
  //   cacheWrite 1150 (c1 only); output 80 + 119 = 199
  //   cache hit rate 1024 / 2700; raw input/output 2700 / 199; aggregate appended/output 1676 / 199
  //   per call appended/output: c1 1200 / 80 = 15, c2 476 / 119 = 4 → mean 9.5, median 9.5
  //   tool calls 4 (t1..t4), failed 1 (t1; t4 is unknown, not failed); compactions 1
  //   start 0 (turn 0 and c1), end 23000 (c3); model: model-a used by 2 of 3 calls
  // sub-1: input 600, cached 0 → hit rate 0 (known zero, not null); 600 / 45 for every ratio
  const parsed = await parseFile(HAND_WRITTEN);
  const sessions = parsed.model.sessions;
  const main = sessionById(sessions, 'main');
  const sub = sessionById(sessions, 'sub-1');

  it('reads without diagnostics or skipped records', () => {
    assert.equal(parsed.problem, null);
    assert.equal(parsed.model.format, 'agent-trace');
    assert.deepEqual(parsed.model.diagnostics, []);
    assert.deepEqual(parsed.model.skippedRecords, {});
    assert.deepEqual(
      sessions.map((s) => s.id),
      ['main', 'sub-1'],
    );
  });

  it('summarises the main session as computed by hand', () => {
    const expected: SessionSummary = {
      id: 'main',
      parentId: null,
      role: 'main',
      agent: 'my-agent',
      agentVersion: '0.3.0',
      model: 'model-a',
      title: 'Fix the failing date test',
      // The file's own title (its session record), a name: the one to show.
      displayTitle: 'Fix the failing date test',
      llmCalls: 3,
      userTurns: 2,
      otherInputs: null,
      apiErrors: 0,
      tokens: { input: 2700, cached: 1024, appended: 1676, cacheWrite: 1150, output: 199 },
      tokensSource: 'calls',
      callsWithTokens: 2,
      cacheHitRate: 1024 / 2700,
      rawInputToOutput: 2700 / 199,
      appendToOutput: { mean: 9.5, median: 9.5, aggregate: 1676 / 199 },
      toolCalls: 4,
      failedToolCalls: 1,
      deniedToolCalls: 0,
      unattributedTokens: null,
      compactions: 1,
      startMs: 0,
      endMs: 23000,
    };
    assert.deepEqual(summarizeSession(main), expected);
  });

  it('summarises the sub-agent as computed by hand', () => {
    const expected: SessionSummary = {
      id: 'sub-1',
      parentId: 'main',
      role: 'subagent',
      agent: 'my-agent',
      agentVersion: '0.3.0',
      model: 'model-small',
      title: null,
      // No title and no turn of its own: nothing to call it by but what it is (the views say "sub-agent sub-1").
      displayTitle: null,
      llmCalls: 1,
      userTurns: 0,
      otherInputs: null,
      apiErrors: 0,
      tokens: { input: 600, cached: 0, appended: 600, cacheWrite: null, output: 45 },
      tokensSource: 'calls',
      callsWithTokens: 1,
      cacheHitRate: 0,
      rawInputToOutput: 600 / 45,
      appendToOutput: { mean: 600 / 45, median: 600 / 45, aggregate: 600 / 45 },
      toolCalls: 0,
      failedToolCalls: 0,
      deniedToolCalls: 0,
      unattributedTokens: null,
      compactions: 0,
      startMs: 2500,
      endMs: 8900,
    };
    assert.deepEqual(summarizeSession(sub), expected);
    assert.equal(sub.parentToolCallId, 't2');
    assert.equal(sub.calls[0]!.turn, null);
  });

  it('gives membership by order: calls to turns, tool calls to calls, the compaction before call 2', () => {
    assert.deepEqual(
      main.calls.map((c) => [c.id, c.index, c.turn, c.toolCalls.map((t) => t.id)]),
      [
        ['c1', 0, 0, ['t1', 't2']],
        ['c2', 1, 0, ['t3']],
        ['c3', 2, 1, ['t4']],
      ],
    );
    assert.deepEqual(
      main.compactions.map((c) => [c.beforeCall, c.trigger, c.preTokens, c.timeMs, c.source.line + 1]),
      [[2, 'auto', 1650, 14500, 11]],
    );
    assert.deepEqual(
      main.turns.map((t) => [t.index, t.startMs, t.preview, t.source.line + 1]),
      [
        [0, 0, 'Fix the failing date test', 3],
        [1, 20000, 'Now update the docs', 12],
      ],
    );
  });

  it('derives the missing third token figure and keeps unknowns null', () => {
    assert.deepEqual(callById(main, 'c2').tokens, {
      input: 1500,
      cached: 1024,
      appended: 476,
      cacheWrite: null,
      output: 119,
      reasoningOutput: null,
    });
    assert.deepEqual(callById(sub, 's1').tokens, {
      input: 600,
      cached: 0,
      appended: 600,
      cacheWrite: null,
      output: 45,
      reasoningOutput: null,
    });
    assert.deepEqual(callById(main, 'c3').tokens, {
      input: null,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: null,
      reasoningOutput: null,
    });
  });

  it('reads server timing and block hashes', () => {
    const c1 = callById(main, 'c1');
    const c2 = callById(main, 'c2');
    assert.equal(c1.server, null);
    assert.deepEqual(c2.server, { queueMs: 3, ttftMs: 180, prefillMs: 120, decodeMs: 1650, e2eMs: 1900 });
    assert.deepEqual(c1.blocks, { blockSizeTokens: 512, hashes: [11, 12, 13] });
    assert.deepEqual(c2.blocks, { blockSizeTokens: 512, hashes: [11, 12, 14] });
  });

  it('reads tool results: failed, ok with exit code, and no result yet', () => {
    const tools = main.calls.flatMap((c) => c.toolCalls);
    assert.deepEqual(
      tools.map((t) => [
        t.id,
        t.name,
        t.targetFile,
        t.command,
        t.isError,
        t.errorText,
        t.exitCode,
        t.resultChars,
        t.startMs,
        t.endMs,
      ]),
      [
        ['t1', 'Edit', 'src/date.ts', null, true, 'String to replace not found in file.', null, 36, 2400, 2450],
        ['t2', 'Task', null, null, false, null, null, 300, 2400, 9100],
        ['t3', 'Bash', null, 'npm test', false, null, 0, 1200, 11000, 14200],
        ['t4', 'Write', 'docs/usage.md', null, null, null, null, null, 23000, null],
      ],
    );
    // A tool call with no result has no result line; the others' result is their own line.
    assert.deepEqual(
      tools.map((t) => (t.resultSource === null ? null : t.resultSource.line + 1)),
      [5, 8, 10, null],
    );
  });
});

describe('canonical reader edge cases', () => {
  it('missing header: one file-level info diagnostic, and the records still load', async () => {
    const parsed = await parseText(
      jsonl(
        { type: 'session', id: 's' },
        { type: 'llm_call', session: 's', id: 'c1', tokens: { input: 10, cached: 4 } },
      ),
      'x.trace.jsonl',
    );
    assert.equal(parsed.model.format, 'agent-trace');
    assert.equal(parsed.model.diagnostics.length, 1);
    const d = parsed.model.diagnostics[0]!;
    assert.equal(d.line, -1);
    assert.equal(d.severity, 'info');
    assert.match(d.message, /header/);
    assert.deepEqual(parsed.model.sessions[0]!.calls[0]!.tokens, {
      input: 10,
      cached: 4,
      appended: 6,
      cacheWrite: null,
      output: null,
      reasoningOutput: null,
    });
  });

  it('newer version: a warning on the header line; known fields read, unknown fields and types skipped', async () => {
    const parsed = await parseText(
      jsonl(
        { ...HEADER, version: 2 },
        { type: 'session', id: 's', x_newField: 1 },
        { type: 'span_link', session: 's', id: 'l1' },
        {
          type: 'llm_call',
          session: 's',
          id: 'c1',
          model: 'm',
          tokens: { input: 10, cached: 10, output: 2, audioTokens: 5 },
        },
      ),
      'x.trace.jsonl',
    );
    assert.deepEqual(where(parsed.model.diagnostics), [[1, 'warning']]);
    assert.match(parsed.model.diagnostics[0]!.message, /version 2/);
    assert.deepEqual(parsed.model.skippedRecords, { 'unknown:span_link': 1 });
    const call = parsed.model.sessions[0]!.calls[0]!;
    assert.equal(call.model, 'm');
    assert.deepEqual(call.tokens, {
      input: 10,
      cached: 10,
      appended: 0,
      cacheWrite: null,
      output: 2,
      reasoningOutput: null,
    });
  });

  it('tool_call naming an unknown call, or a call that comes later: a warning on its line, and skipped', async () => {
    const parsed = await parseText(
      jsonl(
        HEADER, // line 1
        { type: 'session', id: 's' }, // line 2
        { type: 'llm_call', session: 's', id: 'c1' }, // line 3
        { type: 'tool_call', session: 's', call: 'nope', id: 't1', name: 'Bash', isError: false }, // line 4
        { type: 'tool_call', session: 's', call: 'c2', id: 't2', name: 'Edit', isError: true }, // line 5: before its call
        { type: 'llm_call', session: 's', id: 'c2' }, // line 6
        { type: 'tool_call', session: 's', call: 'c2', id: 't3', name: 'Read', isError: false }, // line 7: fine
      ),
      'x.trace.jsonl',
    );
    assert.deepEqual(where(parsed.model.diagnostics), [
      [4, 'warning'],
      [5, 'warning'],
    ]);
    assert.match(parsed.model.diagnostics[0]!.message, /"nope"/);
    assert.match(parsed.model.diagnostics[1]!.message, /"c2"/);
    const s = parsed.model.sessions[0]!;
    assert.deepEqual(
      s.calls.map((c) => [c.id, c.toolCalls.map((t) => t.id)]),
      [
        ['c1', []],
        ['c2', ['t3']],
      ],
    );
  });

  it('negative or fractional token counts: a warning each, and that field null', async () => {
    const parsed = await parseText(
      jsonl(
        HEADER,
        { type: 'session', id: 's' },
        {
          type: 'llm_call',
          session: 's',
          id: 'c1',
          tokens: { input: 1000, cached: 400, appended: 600, cacheWrite: 2.5, output: -5, reasoningOutput: 3 },
        }, // line 3
        { type: 'llm_call', session: 's', id: 'c2', tokens: { input: -1, cached: 10 } }, // line 4
      ),
      'x.trace.jsonl',
    );
    assert.deepEqual(where(parsed.model.diagnostics), [
      [3, 'warning'],
      [3, 'warning'],
      [4, 'warning'],
    ]);
    assert.match(parsed.model.diagnostics[0]!.message, /tokens\.cacheWrite/);
    assert.match(parsed.model.diagnostics[1]!.message, /tokens\.output/);
    assert.match(parsed.model.diagnostics[2]!.message, /tokens\.input/);
    const [c1, c2] = parsed.model.sessions[0]!.calls;
    assert.deepEqual(c1!.tokens, {
      input: 1000,
      cached: 400,
      appended: 600,
      cacheWrite: null,
      output: null,
      reasoningOutput: 3,
    });
    // Only cached is left, so nothing can be derived.
    assert.deepEqual(c2!.tokens, {
      input: null,
      cached: 10,
      appended: null,
      cacheWrite: null,
      output: null,
      reasoningOutput: null,
    });
  });

  it('input ≠ cached + appended: a warning, values kept as written', async () => {
    const parsed = await parseText(
      jsonl(
        HEADER,
        { type: 'session', id: 's' },
        { type: 'llm_call', session: 's', id: 'c1', tokens: { input: 1000, cached: 600, appended: 300, output: 7 } },
      ),
      'x.trace.jsonl',
    );
    assert.deepEqual(where(parsed.model.diagnostics), [[3, 'warning']]);
    assert.match(parsed.model.diagnostics[0]!.message, /cached \+ appended/);
    assert.deepEqual(parsed.model.sessions[0]!.calls[0]!.tokens, {
      input: 1000,
      cached: 600,
      appended: 300,
      cacheWrite: null,
      output: 7,
      reasoningOutput: null,
    });
  });

  it('input smaller than cached (appended absent) cannot satisfy the identity: a warning, appended stays null', async () => {
    // 500 = 800 + appended would need appended = −300.
    const parsed = await parseText(
      jsonl(
        HEADER,
        { type: 'session', id: 's' },
        { type: 'llm_call', session: 's', id: 'c1', tokens: { input: 500, cached: 800 } },
      ),
      'x.trace.jsonl',
    );
    assert.deepEqual(parsed.model.sessions[0]!.calls[0]!.tokens, {
      input: 500,
      cached: 800,
      appended: null,
      cacheWrite: null,
      output: null,
      reasoningOutput: null,
    });
    assert.deepEqual(where(parsed.model.diagnostics), [[3, 'warning']]);
  });

  it('unknown record types and records without a type are counted in skippedRecords, not fatal', async () => {
    const parsed = await parseText(
      jsonl(
        HEADER,
        { type: 'session', id: 's' },
        { type: 'annotation', session: 's', text: 'hello' },
        { type: 'annotation', session: 's', text: 'again' },
        { session: 's', id: 'x' },
        { type: 'llm_call', session: 's', id: 'c1', tokens: { input: 5, appended: 5 } },
      ),
      'x.trace.jsonl',
    );
    assert.equal(parsed.problem, null);
    assert.deepEqual(parsed.model.diagnostics, []);
    assert.deepEqual(parsed.model.skippedRecords, { 'unknown:annotation': 2, '(no type)': 1 });
    assert.deepEqual(parsed.model.sessions[0]!.calls[0]!.tokens, {
      input: 5,
      cached: 0,
      appended: 5,
      cacheWrite: null,
      output: null,
      reasoningOutput: null,
    });
  });

  it('duplicate session id: a warning on the second record; the first declaration wins', async () => {
    const parsed = await parseText(
      jsonl(
        HEADER,
        { type: 'session', id: 's', title: 'first', role: 'main' }, // line 2
        { type: 'llm_call', session: 's', id: 'c1' },
        { type: 'session', id: 's', title: 'second', role: 'subagent', parentId: 'p' }, // line 4
        { type: 'llm_call', session: 's', id: 'c2' },
      ),
      'x.trace.jsonl',
    );
    assert.deepEqual(where(parsed.model.diagnostics), [[4, 'warning']]);
    assert.match(parsed.model.diagnostics[0]!.message, /"s"/);
    assert.equal(parsed.model.sessions.length, 1);
    const s = parsed.model.sessions[0]!;
    assert.deepEqual([s.title, s.role, s.parentId], ['first', 'main', null]);
    assert.deepEqual(
      s.calls.map((c) => [c.id, c.index]),
      [
        ['c1', 0],
        ['c2', 1],
      ],
    );
  });

  it('llm_call before its session record: the session is created implicitly (info); the late record fills in its metadata', async () => {
    const parsed = await parseText(
      jsonl(
        HEADER,
        { type: 'llm_call', session: 'late', id: 'c1', tokens: { cached: 3, appended: 4 } }, // line 2
        { type: 'session', id: 'late', title: 'Late', parentId: 'p', role: 'subagent' }, // line 3
        { type: 'turn', session: 'late', startMs: 50, preview: 'go' },
        { type: 'llm_call', session: 'late', id: 'c2' }, // line 5
      ),
      'x.trace.jsonl',
    );
    assert.deepEqual(where(parsed.model.diagnostics), [[2, 'info']]);
    assert.match(parsed.model.diagnostics[0]!.message, /"late"/);
    assert.equal(parsed.model.sessions.length, 1);
    const s = parsed.model.sessions[0]!;
    assert.deepEqual([s.id, s.role, s.parentId, s.title, s.agent], ['late', 'subagent', 'p', 'Late', null]);
    assert.deepEqual(
      s.calls.map((c) => [c.id, c.index, c.turn]),
      [
        ['c1', 0, null],
        ['c2', 1, 0],
      ],
    );
    assert.equal(s.calls[0]!.tokens.input, 7);
  });

  it('bad lines are skipped with errors on their lines; the rest of the file loads', async () => {
    const text = [
      JSON.stringify(HEADER), // line 1
      '{"type":"session","id":"s"', // line 2: cut JSON
      JSON.stringify({ type: 'llm_call', session: 's' }), // line 3: no id (and the session is implicit here)
      '[1, 2]', // line 4: not an object
      JSON.stringify({ type: 'session', id: 's' }), // line 5
      JSON.stringify({ type: 'llm_call', session: 's', id: 'c1', tokens: { input: 9, cached: 0 } }), // line 6
      JSON.stringify({ type: 'llm_call', session: 's', id: 'c1' }), // line 7: duplicate call id
      JSON.stringify({ type: 'llm_call', session: 's', id: 'c2', blocks: { blockSizeTokens: 0, hashes: [1] } }), // line 8
    ].join('\n');
    const parsed = await parseText(text, 'x.trace.jsonl');
    assert.equal(parsed.problem, null);
    // Line 3 names session "s" before its record: an info, then the record is an error (no id);
    // line 5 is the session record that fills in the implicit session (no diagnostic).
    assert.deepEqual(where(parsed.model.diagnostics), [
      [2, 'error'],
      [3, 'info'],
      [3, 'error'],
      [4, 'error'],
      [7, 'warning'],
      [8, 'warning'],
    ]);
    const s = parsed.model.sessions[0]!;
    assert.deepEqual(
      s.calls.map((c) => [c.id, c.blocks]),
      [
        ['c1', null],
        ['c2', null],
      ],
    );
    assert.deepEqual(s.calls[0]!.tokens, {
      input: 9,
      cached: 0,
      appended: 9,
      cacheWrite: null,
      output: null,
      reasoningOutput: null,
    });
  });

  it('values of the wrong kind are warnings and read as unknown: text numbers, negative times, unsafe hashes, bad header format', async () => {
    const parsed = await parseText(
      jsonl(
        { type: 'header', format: 'something-else', version: 1 }, // line 1
        { type: 'session', id: 's' },
        { type: 'llm_call', session: 's', id: 'c1', tokens: { input: '1200', cached: 200, output: 5 } }, // line 3
        { type: 'llm_call', session: 's', id: 'c2', startMs: -5, tokens: { input: 10, cached: 20 } }, // line 4
        { type: 'llm_call', session: 's', id: 'c3', blocks: { blockSizeTokens: 16, hashes: [1, 2 ** 60] } }, // line 5
        { type: 'tool_call', session: 's', call: 'c3', id: 't', name: 'Bash', isError: false },
        { type: 'tool_call', session: 's', call: 'c3', id: 't', name: 'Bash', isError: true }, // line 7: same id
        {
          type: 'llm_call',
          session: 's',
          id: 'c4',
          tokens: { input: 10, cached: 2, appended: 8, cacheWrite: 9, output: 3, reasoningOutput: 4 },
        }, // line 8
      ),
      'x.trace.jsonl',
    );
    assert.deepEqual(where(parsed.model.diagnostics), [
      [1, 'warning'],
      [3, 'warning'],
      [4, 'warning'],
      [4, 'warning'],
      [5, 'warning'],
      [7, 'warning'],
      [8, 'warning'],
      [8, 'warning'],
    ]);
    const [c1, c2, c3, c4] = parsed.model.sessions[0]!.calls;
    // "1200" is text: input unknown; cached 200 alone gives nothing else.
    assert.deepEqual([c1!.tokens.input, c1!.tokens.cached, c1!.tokens.appended], [null, 200, null]);
    // input 10 < cached 20 cannot be right: appended stays unknown; the negative start is dropped.
    assert.deepEqual([c2!.startMs, c2!.tokens.appended], [null, null]);
    assert.equal(c3!.blocks, null);
    assert.deepEqual(
      c3!.toolCalls.map((t) => t.isError),
      [false],
    );
    // Inconsistent sub-figures are kept as given, with warnings.
    assert.deepEqual([c4!.tokens.cacheWrite, c4!.tokens.reasoningOutput], [9, 4]);
  });
});
