import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { metricsTokens } from '../../../../../src/core/trace/atif/atifReader';
import { assertRoundTrip } from '../../../../support/roundTrip';
import { fixtures, parseFile, parseText } from '../../../../support/helpers';

// No real ATIF file could be found to copy (see test/fixtures/README.md): both fixtures are
// hand-built from the RFC, and every figure below is counted by hand from them.
const V14 = join(fixtures, 'atif/hand-built-v1.4.trajectory.json');
const V17 = join(fixtures, 'atif/hand-built-v1.7-embedded-subagent.trajectory.json');

describe('ATIF reader on the hand-built v1.4 trajectory', async () => {
  const parsed = await parseFile(V14);
  const session = parsed.model.sessions[0]!;

  it('detects schema_version "ATIF-v1.4" with steps', () => {
    assert.equal(parsed.problem, null);
    assert.equal(parsed.model.format, 'atif');
    assert.deepEqual(
      parsed.model.sessions.map((s) => s.id),
      ['hand-built-7c1e'],
    );
    assert.deepEqual(session.agent, { name: 'terminus-2', version: '2.0.0' });
  });

  it('makes one call per agent step (steps 3, 4, 5, 7, 8, 9), each on its step line', () => {
    assert.deepEqual(
      session.calls.map((c) => [c.id, c.source.line + 1, c.turn]),
      [
        ['step-3', 32, 0],
        ['step-4', 62, 0],
        ['step-5', 100, 0],
        ['step-7', 140, 1],
        ['step-8', 170, 1],
        ['step-9', 205, 1],
      ],
    );
  });

  it('§12.3 prompt_tokens includes cached_tokens; extra.cache_creation_input_tokens is a cache write', () => {
    // Step 3: 2,400 prompt, 0 cached → appended 2,400, of which 2,350 written to the cache.
    assert.deepEqual(session.calls[0]!.tokens, {
      input: 2400,
      cached: 0,
      appended: 2400,
      cacheWrite: 2350,
      output: 60,
      reasoningOutput: null,
    });
    // Step 5: 3,100 prompt, 2,520 cached → appended 580; extra.reasoning_tokens 40 of 140.
    assert.deepEqual(session.calls[2]!.tokens, {
      input: 3100,
      cached: 2520,
      appended: 580,
      cacheWrite: 580,
      output: 140,
      reasoningOutput: 40,
    });
  });

  it('§12.10 a step without cached_tokens has unknown cache figures, not 0', () => {
    assert.deepEqual(session.calls[3]!.tokens, {
      input: 3400,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: 80,
      reasoningOutput: null,
    });
  });

  it('sums as counted by hand', () => {
    // input 2400+2520+3100+3400+3520+3600 = 18,540; output 60+95+140+80+45+50 = 470
    // cached (5 calls that say) 0+2350+2520+3100+3520 = 11,490 of their 15,140 input
    // appended 2400+170+580+420+80 = 3,650; cache writes 2350+170+580 = 3,100
    // per call appended/output: 40, 170/95, 580/140, 420/45, 80/50 → median 580/140
    const s = summarizeSession(session);
    assert.deepEqual(s.tokens, { input: 18540, cached: 11490, appended: 3650, cacheWrite: 3100, output: 470 });
    assert.equal(s.tokensSource, 'calls');
    assert.equal(s.callsWithTokens, 5);
    assert.equal(s.cacheHitRate, 11490 / 15140);
    assert.equal(s.rawInputToOutput, 18540 / 470);
    assert.equal(s.appendToOutput.aggregate, 3650 / 390);
    assert.equal(s.appendToOutput.median, 580 / 140);
    assert.ok(Math.abs(s.appendToOutput.mean! - (40 + 170 / 95 + 580 / 140 + 420 / 45 + 80 / 50) / 5) < 1e-12);
    assert.equal(s.userTurns, 2);
  });

  it('keeps final_metrics as reported totals; they agree with the steps, so nothing is said', () => {
    assert.deepEqual(session.reportedTotals, {
      input: 18540,
      output: 470,
      cached: 11490,
      costUsd: 0.0301,
      llmCalls: null,
    });
    assert.ok(!parsed.model.diagnostics.some((d) => /final_metrics/.test(d.message)));
  });

  it('pairs results by source_call_id and reads failures from the text: command not found, Exit code 1', () => {
    const tools = session.calls.flatMap((c) => c.toolCalls);
    assert.deepEqual(
      tools.map((t) => [t.id, t.name, t.isError, t.exitCode, t.resultSource!.line + 1]),
      [
        ['call_1', 'bash', true, null, 48],
        ['call_2', 'bash', true, 1, 82],
        ['call_3', 'read_file', false, null, 86],
        ['call_4', 'edit_file', false, null, 120],
        ['call_5', 'write_file', false, null, 155],
        ['call_6', 'delegate_review', false, null, 185],
      ],
    );
    assert.equal(tools[0]!.command, 'pytest tests/test_dates.py');
    assert.equal(tools[0]!.errorText, 'bash: pytest: command not found');
    assert.deepEqual(
      tools.map((t) => t.targetFile),
      [null, null, 'src/dates.py', 'src/dates.py', 'CHANGELOG.md', null],
    );
    assert.equal(
      tools[2]!.resultChars,
      'def parse(text):\n    return datetime.fromisoformat(text).replace(tzinfo=None)\n'.length,
    );
  });

  it('times calls from step timestamps: a start only after a user step (tool results carry no time)', () => {
    const t = (iso: string): number => Date.parse(iso);
    assert.deepEqual(
      session.calls.map((c) => [c.startMs, c.endMs]),
      [
        [t('2026-03-02T09:00:01Z'), t('2026-03-02T09:00:04.500Z')],
        [null, t('2026-03-02T09:00:07.250Z')],
        [null, t('2026-03-02T09:00:12Z')],
        [t('2026-03-02T09:00:30Z'), t('2026-03-02T09:00:33Z')],
        [null, t('2026-03-02T09:00:41Z')],
        [null, t('2026-03-02T09:00:44Z')],
      ],
    );
    assert.deepEqual(
      session.turns.map((u) => [u.startMs, u.preview]),
      [
        [t('2026-03-02T09:00:01Z'), 'Fix the failing test in tests/test_dates.py The parser drops the time zone.'],
        [t('2026-03-02T09:00:30Z'), 'Also add a line to the changelog.'],
      ],
    );
  });

  it('reports the sub-agent in another file, and counts what it skipped', () => {
    assert.deepEqual(
      parsed.model.diagnostics.map((d) => [d.line + 1, d.severity, d.message]),
      [
        [
          189,
          'info',
          'Sub-agent trajectory review-1 is in review-1.trajectory.json: open that file to see its calls; they are not counted here.',
        ],
      ],
    );
    assert.deepEqual(parsed.model.skippedRecords, {
      'step:system': 1,
      'observation:without-source_call_id': 1,
      'subagent:external': 1,
    });
  });

  it('round-trips through the canonical format', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('ATIF reader on the hand-built v1.7 trajectory with an embedded sub-agent', async () => {
  const parsed = await parseFile(V17);
  const [main, sub] = parsed.model.sessions;

  it('reads the embedded trajectory as a sub-agent of the tool call that spawned it', () => {
    assert.deepEqual(
      parsed.model.sessions.map((s) => [s.id, s.role, s.parentId, s.parentToolCallId, s.calls.length]),
      [
        ['run-42', 'main', null, null, 2],
        ['explorer-1', 'subagent', 'run-42', 'call_a', 2], // shares session_id "run-42": keyed by trajectory_id
      ],
    );
    assert.equal(sub!.model, 'openai/gpt-5.4-mini');
  });

  it('a step with llm_call_count 0 is no call: its result pairs with the call before it', () => {
    const spawn = main!.calls[0]!.toolCalls[0]!;
    assert.equal(spawn.id, 'call_a');
    assert.equal(spawn.isError, false);
    assert.equal(spawn.resultSource!.line + 1, 31);
    assert.deepEqual(
      main!.calls.map((c) => [c.id, c.source.line + 1]),
      [
        ['step-2', 13],
        ['step-4', 39],
      ],
    );
    assert.equal(parsed.model.skippedRecords['step:agent-without-llm-call'], 1);
  });

  it('reads content-part messages and string arguments, and notes a step of several LLM calls', () => {
    assert.equal(main!.turns[0]!.preview, 'Summarise the repository.');
    assert.deepEqual(
      parsed.model.diagnostics.map((d) => d.message),
      [
        "1 agent step(s) of session run-42 made several LLM calls (llm_call_count > 1); each is read as one call with the step's summed metrics.",
      ],
    );
    // main: 1000 + 1500 input, 0 + 1000 cached; sub: 400 (cache unknown) + 450 (400 cached)
    assert.deepEqual(summarizeSession(main!).tokens, {
      input: 2500,
      cached: 1000,
      appended: 1500,
      cacheWrite: null,
      output: 80,
    });
    assert.deepEqual(summarizeSession(sub!).tokens, {
      input: 850,
      cached: 400,
      appended: 50,
      cacheWrite: null,
      output: 27,
    });
    assert.equal(sub!.calls[0]!.toolCalls[0]!.command, 'ls src');
  });

  it('round-trips through the canonical format, sub-agent included', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('ATIF pitfalls', () => {
  it('final_metrics that disagree with the steps are kept as reported and said', async () => {
    const r = await parseText(
      JSON.stringify({
        schema_version: 'ATIF-v1.4',
        session_id: 's',
        agent: { name: 'a', version: '1' },
        steps: [
          { step_id: 1, source: 'user', message: 'go' },
          {
            step_id: 2,
            source: 'agent',
            message: 'ok',
            metrics: { prompt_tokens: 100, completion_tokens: 10, cached_tokens: 0 },
          },
        ],
        final_metrics: { total_prompt_tokens: 250, total_completion_tokens: 10 },
      }),
      'x.json',
    );
    assert.deepEqual(r.model.sessions[0]!.reportedTotals, {
      input: 250,
      output: 10,
      cached: null,
      costUsd: null,
      llmCalls: null,
    });
    assert.match(
      r.model.diagnostics[0]!.message,
      /final_metrics of session s differ from the sum over its steps \(input 250 vs 100\)/,
    );
  });

  it('a cached figure above the prompt is impossible: both parts become unknown', () => {
    assert.deepEqual(metricsTokens({ prompt_tokens: 100, cached_tokens: 150, completion_tokens: 5 }), {
      input: 100,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: 5,
      reasoningOutput: null,
    });
  });

  it('a tool call without a result has isError null; a result for an unknown call is counted, not fatal', async () => {
    const r = await parseText(
      JSON.stringify({
        schema_version: 'ATIF-v1.5',
        session_id: 's',
        agent: { name: 'a', version: '1' },
        steps: [
          {
            step_id: 1,
            source: 'agent',
            message: '',
            tool_calls: [{ tool_call_id: 't1', function_name: 'bash', arguments: { command: 'ls' } }],
            observation: { results: [{ source_call_id: 'nope', content: 'x' }] },
          },
        ],
      }),
      'x.json',
    );
    const s = r.model.sessions[0]!;
    assert.equal(s.calls[0]!.toolCalls[0]!.isError, null);
    assert.equal(s.calls[0]!.turn, null);
    assert.deepEqual(r.model.skippedRecords, { 'observation:unpaired': 1 });
  });

  it('is not fooled by look-alikes: "schema_version": "1.4" without the ATIF- prefix is not ATIF', async () => {
    const r = await parseText(
      JSON.stringify({ schema_version: '1.4', session_id: 'x', agent: { name: 'claude-code' }, steps: [] }),
      'x.json',
    );
    assert.notEqual(r.model.format, 'atif');
  });
});

// Harbor's own golden trajectories of Terminus-2 summarising its context (harbor-framework/harbor
// tests/golden/terminus_2, Apache-2.0, produced by Harbor's code against its scripted test model).
// Counted by hand from the files: steps 2–4 and 7–10 are agent steps with metrics; step 5 is the
// system step "Performed context summarization and handoff to continue task." naming the
// summarization-1 summary, questions and answers sub-trajectories; step 6 is the user step that
// hands the answers over.
describe('ATIF context summarisation (Terminus-2) is a compaction', () => {
  it('the summarisation step marks a compaction before the 4th call; the hand-over is no typed prompt', async () => {
    const parsed = await parseFile(join(fixtures, 'atif/harbor/hello-world-context-summarization.trajectory.json'));
    const s = parsed.model.sessions[0]!;
    assert.equal(s.calls.length, 7);
    assert.deepEqual(
      s.compactions.map((c) => [c.beforeCall, c.source.line > 0]),
      [[3, true]],
    );
    assert.equal(s.turns.length, 1);
    assert.equal(s.otherInputs?.compactionSummary, 1);
    assert.equal(summarizeSession(s).compactions, 1);
  });

  it('a continuation file starts with the copied context (is_copied_context): no calls or prompts from it', async () => {
    const parsed = await parseFile(
      join(fixtures, 'atif/harbor/hello-world-context-summarization-linear-history.trajectory.cont-1.json'),
    );
    const s = parsed.model.sessions[0]!;
    // 8 steps: 4 copied (user, user, agent, user), then 4 agent steps with metrics.
    assert.equal(s.calls.length, 4);
    assert.equal(s.turns.length, 0);
    assert.equal(s.otherInputs?.injected, 3);
    await assertRoundTrip(parsed);
  });
});
