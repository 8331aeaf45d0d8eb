import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import type { Session } from '../../../../../src/core/trace/model';
import { fixtures, parseFile, parseText } from '../../../../support/helpers';
import { assertRoundTrip } from '../../../../support/roundTrip';

// Expected figures: session totals, tool counts and durations come from
// test/reference/tracelab_totals.py (plain Python grouping by session_id); single rows, times
// and tools were read off the files by hand.

const SANITIZED = join(fixtures, 'tracelab/round_trace.sanitized.jsonl');
const DERIVED = join(fixtures, 'tracelab/round_trace.derived.jsonl');
const CLAUDE = 'claude:92ee5b8a-429c-e80b-5db6-5381512f4697';
const CODEX = 'codex:a611041f-625d-6fad-5e59-845850dc6543';

function byId(sessions: Session[], id: string): Session {
  const s = sessions.find((x) => x.id === id);
  assert.ok(s, `session ${id} not found among ${sessions.map((x) => x.id).join(', ')}`);
  return s;
}

/** The sample with one row changed by `edit` (0-based row). */
function edited(row: number, edit: (r: Record<string, unknown>) => void): string {
  const lines = readFileSync(SANITIZED, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const value = JSON.parse(lines[row]!) as Record<string, unknown>;
  edit(value);
  lines[row] = JSON.stringify(value);
  return lines.join('\n') + '\n';
}

describe('TraceLab reader on the sanitized example (10 Claude + 9 Codex rounds)', async () => {
  const parsed = await parseFile(SANITIZED);
  const sessions = parsed.model.sessions;
  const claude = byId(sessions, CLAUDE);
  const codex = byId(sessions, CODEX);

  it('is detected as TraceLab (provider + prefix_tokens + newly_append_tokens)', () => {
    assert.equal(parsed.problem, null);
    assert.equal(parsed.model.format, 'tracelab');
    assert.equal(parsed.detection.evidence, '19 of the first 19 records look like TraceLab round trace');
    assert.deepEqual(parsed.model.diagnostics, []);
  });

  it('groups rows by session_id: two sessions, agent from provider, rounds in round_index order', () => {
    assert.deepEqual(
      sessions.map((s) => [s.id, s.agent?.name, s.model, s.title, s.calls.length]),
      [
        [CLAUDE, 'claude', 'claude-opus-4-8', 'project_4c7b8a1b', 10],
        [CODEX, 'codex', 'gpt-5.4', null, 9],
      ],
    );
    assert.deepEqual(
      codex.calls.map((c) => c.id.slice(-2)),
      [':0', ':1', ':2', ':3', ':4', ':0', ':1', ':0', ':1'],
    );
  });

  it('token totals agree with the Python grouping (input = prefix + append on every row)', () => {
    assert.deepEqual(summarizeSession(claude).tokens, {
      input: 418193,
      cached: 394068,
      appended: 24125,
      cacheWrite: 21086,
      output: 9423,
    });
    assert.deepEqual(summarizeSession(codex).tokens, {
      input: 95819,
      cached: 79488,
      appended: 16331,
      cacheWrite: null,
      output: 1912,
    });
    assert.ok(sessions.flatMap((s) => s.calls).every((c) => c.tokens.input === c.tokens.cached! + c.tokens.appended!));
  });

  it('Claude round 0 by hand: tokens, cache write, times from the first to the last timing event', () => {
    const c = claude.calls[0]!;
    assert.equal(c.id, 'msg_3e0cf83dc2523801f59077fd');
    assert.deepEqual(c.tokens, {
      input: 32272,
      cached: 27217,
      appended: 5055,
      cacheWrite: 2163,
      output: 931,
      reasoningOutput: null,
    });
    assert.equal(c.startMs, Date.parse('2026-06-01T05:40:20.151Z')); // user_message
    assert.equal(c.endMs, Date.parse('2026-06-01T05:40:31.647Z')); // last tool_call block (Claude rows have no usage_report)
  });

  it('Codex round 0 by hand: reasoning tokens, no cache write, end at the usage report', () => {
    const c = codex.calls[0]!;
    assert.deepEqual(c.tokens, {
      input: 9324,
      cached: 6912,
      appended: 2412,
      cacheWrite: null,
      output: 444,
      reasoningOutput: 199,
    });
    assert.equal(c.startMs, Date.parse('2026-03-21T10:05:59.328Z'));
    assert.equal(c.endMs, Date.parse('2026-03-21T10:06:05.542Z'));
    // Round 3 is a cache miss: 3,456 of 10,152 tokens.
    assert.deepEqual([codex.calls[3]!.tokens.cached, codex.calls[3]!.tokens.appended], [3456, 6696]);
  });

  it('a round whose first input is a user message starts a turn: 2 Claude turns, 3 Codex turns', () => {
    assert.deepEqual(
      claude.calls.map((c) => c.turn),
      [0, 0, 0, 0, 0, 1, 1, 1, 1, 1],
    );
    assert.deepEqual(
      codex.calls.map((c) => c.turn),
      [0, 0, 0, 0, 0, 1, 1, 2, 2],
    );
    assert.deepEqual(
      claude.turns.map((t) => [t.startMs, t.preview]),
      [
        [Date.parse('2026-06-01T05:40:20.151Z'), ''],
        [claude.calls[5]!.startMs, ''],
      ],
    );
  });

  it('tools: names, outcomes, result sizes; durationMs prefers the internal latency, else the wall latency', () => {
    const [bash, search] = claude.calls[0]!.toolCalls;
    // Bash: internal null → wall 860 ms; WebSearch: internal 19,287 ms (wall 19,291).
    assert.deepEqual([bash!.name, bash!.durationMs, bash!.resultChars, bash!.isError], ['Bash', 860, 231, false]);
    assert.deepEqual([search!.name, search!.durationMs, search!.resultChars], ['WebSearch', 19287, 4893]);
    assert.equal(bash!.startMs, Date.parse('2026-06-01T05:40:30.836Z'));
    assert.equal(bash!.endMs, Date.parse('2026-06-01T05:40:31.696Z'));
    // Codex round 0: internal 0, 0, 1002 (wall 67, 79, 1176); is_error false, true, null.
    assert.deepEqual(
      codex.calls[0]!.toolCalls.map((t) => [t.durationMs, t.isError]),
      [
        [0, false],
        [0, true],
        [1002, null],
      ],
    );
    const tally = (s: Session): number[] => {
      const tools = s.calls.flatMap((c) => c.toolCalls);
      return [
        tools.length,
        tools.filter((t) => t.isError === true).length,
        tools.filter((t) => t.isError === null).length,
        tools.reduce((a, t) => a + t.durationMs!, 0),
        tools.reduce((a, t) => a + t.resultChars!, 0),
      ];
    };
    assert.deepEqual(tally(claude), [9, 0, 0, 73386, 16130]);
    assert.deepEqual(tally(codex), [10, 1, 3, 6021, 2036]);
    assert.ok(
      sessions
        .flatMap((s) => s.calls.flatMap((c) => c.toolCalls))
        .every((t) => t.command === null && t.targetFile === null && t.errorText === null),
    );
  });

  it('reads rows in any order: round_index decides', async () => {
    const reversed = readFileSync(SANITIZED, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .reverse()
      .join('\n');
    const r = await parseText(reversed);
    assert.deepEqual(
      r.model.sessions.map((s) => [s.id, s.calls.map((c) => c.id)]).sort(),
      sessions.map((s) => [s.id, s.calls.map((c) => c.id)]).sort(),
    );
  });

  it('round trip: canonical output is valid and reads back the same', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('TraceLab reader on the derived (unsanitized) example', async () => {
  const parsed = await parseFile(DERIVED);

  it('reads the same rounds and totals as the sanitized rows it was made from', () => {
    assert.equal(parsed.model.format, 'tracelab');
    assert.deepEqual(
      parsed.model.sessions.map((s) => [s.id, s.title, s.cwd, s.calls.length, s.turns.length]),
      [
        ['claude:claude-public-example', 'example-claude-session', null, 10, 2],
        ['codex:01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73', null, '/workspace/project', 9, 3],
      ],
    );
    assert.deepEqual(summarizeSession(parsed.model.sessions[0]!).tokens, {
      input: 418193,
      cached: 394068,
      appended: 24125,
      cacheWrite: 21086,
      output: 9423,
    });
    assert.deepEqual(summarizeSession(parsed.model.sessions[1]!).tokens, {
      input: 95819,
      cached: 79488,
      appended: 16331,
      cacheWrite: null,
      output: 1912,
    });
  });

  it('takes command and target file from tools[].input (a Claude object, a Codex JSON string)', () => {
    const [claude, codex] = parsed.model.sessions;
    const bash = claude!.calls[0]!.toolCalls[0]!;
    assert.equal(
      bash.command,
      'ls -la /workspace/project 2>/dev/null && echo "---python---" && which python3 python 2>/dev/null',
    );
    assert.equal(bash.targetFile, null);
    const write = claude!.calls[2]!.toolCalls[0]!;
    assert.deepEqual(
      [write.name, write.targetFile, write.command],
      ['Write', '/workspace/project/gpu_token_capacity.py', null],
    );
    assert.deepEqual(
      codex!.calls[0]!.toolCalls.map((t) => t.command),
      [
        'pwd',
        "rg --files -g 'AGENTS.md' -g 'agents.md' -g 'Agents.md'",
        'find .. -name AGENTS.md -o -name agents.md -o -name Agents.md',
      ],
    );
    // write_stdin feeds a running process: no command of its own.
    assert.deepEqual(
      [codex!.calls[1]!.toolCalls[0]!.name, codex!.calls[1]!.toolCalls[0]!.command],
      ['write_stdin', null],
    );
  });

  it('round trip: canonical output is valid and reads back the same', async () => {
    await assertRoundTrip(parsed);
  });
});

describe('TraceLab reader: token identity and missing usage', () => {
  it('warns when input_tokens_total ≠ prefix_tokens + newly_append_tokens, and keeps the figures as reported', async () => {
    const r = await parseText(edited(0, (row) => (row['newly_append_tokens'] = 5000)));
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[0, 'warning']],
    );
    assert.match(
      r.model.diagnostics[0]!.message,
      /input_tokens_total \(32272\) is not prefix_tokens \+ newly_append_tokens \(27217 \+ 5000\)/,
    );
    assert.deepEqual(
      [r.model.sessions[0]!.calls[0]!.tokens.input, r.model.sessions[0]!.calls[0]!.tokens.appended],
      [32272, 5000],
    );
  });

  it('pitfall 10: a row without cache figures has unknown cached and appended, not 0', async () => {
    const r = await parseText(
      edited(0, (row) => {
        row['prefix_tokens'] = null;
        row['newly_append_tokens'] = null;
      }),
    );
    assert.deepEqual(r.model.sessions[0]!.calls[0]!.tokens, {
      input: 32272,
      cached: null,
      appended: null,
      cacheWrite: 2163,
      output: 931,
      reasoningOutput: null,
    });
    assert.deepEqual(r.model.diagnostics, []);
  });

  it('pitfall 10: a round with 0 input tokens is TraceLab\'s "no usage logged" placeholder: tokens unknown, with a note', async () => {
    const r = await parseText(
      edited(4, (row) => {
        for (const k of [
          'input_tokens_total',
          'prefix_tokens',
          'newly_append_tokens',
          'claude_uncached_input_tokens',
          'claude_cache_creation_input_tokens',
          'claude_cache_read_input_tokens',
          'output_tokens',
        ])
          row[k] = 0;
      }),
    );
    const c = r.model.sessions[0]!.calls[4]!;
    assert.deepEqual(c.tokens, {
      input: null,
      cached: null,
      appended: null,
      cacheWrite: null,
      output: null,
      reasoningOutput: null,
    });
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[4, 'info']],
    );
  });

  it('a row without session_id is skipped with a warning; the rest loads', async () => {
    const r = await parseText(edited(3, (row) => delete row['session_id']));
    assert.deepEqual(
      r.model.sessions.map((s) => s.calls.length),
      [9, 9],
    );
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[3, 'warning']],
    );
  });
});
