import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import type { Session } from '../../../../../src/core/trace/model';
import type { ParsedTrace } from '../../../../../src/core/trace/parseTrace';
import { fixtures, parseFile, repoRoot } from '../../../../support/helpers';
import { assertRoundTrip, withoutSources } from '../../../../support/roundTrip';

// Real sessions: two chats exported from VS Code (Copilot Chat agent mode, January 2026) and
// committed by their author to oocx/tfplan2md (MIT; see test/fixtures/README.md). The .jsonl
// forms and the token-bearing session are made by test/fixtures/vscode-copilot/build_fixtures.py
// (it says how). Expected figures: test/reference/vscode_chat.py reads or replays each file
// by itself and counts turns, calls, tools, failures and recorded tokens; its output is quoted
// here and compared again live where python3 is installed. Single values were read by hand.

const REAL_043 = join(fixtures, 'vscode-copilot/tfplan2md-043-task-planner.chat.json');
const REAL_029 = join(fixtures, 'vscode-copilot/tfplan2md-029-requirements-engineer.chat.json');
const LOG_043 = join(fixtures, 'vscode-copilot/tfplan2md-043-task-planner.chatSessions.jsonl');
const USAGE = join(fixtures, 'vscode-copilot/copilot-usage.chatSessions.jsonl');

interface Figures {
  turns: number;
  calls: number;
  tools: Record<string, number>;
  failedTools: number;
  canceled: number;
  input: number;
  output: number;
  cached: number;
  callsWithInput: number;
}

const REFERENCE: Record<string, Figures> = {
  [REAL_029]: {
    cached: 0,
    calls: 30,
    callsWithInput: 0,
    canceled: 2,
    failedTools: 0,
    input: 0,
    output: 0,
    tools: {
      create_directory: 1,
      create_file: 2,
      grep_search: 1,
      list_dir: 1,
      replace_string_in_file: 4,
      run_in_terminal: 7,
      semantic_search: 1,
    },
    turns: 15,
  },
  [REAL_043]: {
    cached: 0,
    calls: 8,
    callsWithInput: 0,
    canceled: 0,
    failedTools: 0,
    input: 0,
    output: 0,
    tools: { create_file: 1, list_dir: 1, run_in_terminal: 4 },
    turns: 2,
  },
  [LOG_043]: {
    cached: 0,
    calls: 8,
    callsWithInput: 0,
    canceled: 0,
    failedTools: 0,
    input: 0,
    output: 0,
    tools: { create_file: 1, list_dir: 1, run_in_terminal: 4 },
    turns: 2,
  },
  [USAGE]: {
    cached: 73560,
    calls: 6,
    callsWithInput: 4,
    canceled: 0,
    failedTools: 2,
    input: 99060,
    output: 373,
    tools: { read_file: 1, run_in_terminal: 3 },
    turns: 2,
  },
};

function figures(s: Session): Figures {
  const tools: Record<string, number> = {};
  for (const c of s.calls) for (const t of c.toolCalls) tools[t.name] = (tools[t.name] ?? 0) + 1;
  const t = summarizeSession(s).tokens;
  return {
    turns: s.turns.length,
    calls: s.calls.length,
    tools: Object.fromEntries(Object.entries(tools).sort(([a], [b]) => (a < b ? -1 : 1))),
    failedTools: s.calls.flatMap((c) => c.toolCalls).filter((x) => x.isError === true).length,
    canceled: s.otherInputs?.interruption ?? 0,
    input: t.input ?? 0,
    output: t.output ?? 0,
    cached: t.cached ?? 0,
    callsWithInput: s.calls.filter((c) => c.tokens.input !== null).length,
  };
}

function python(): boolean {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('VS Code Copilot Chat reader', async () => {
  const parsed = new Map<string, ParsedTrace>();
  for (const f of [REAL_029, REAL_043, LOG_043, USAGE]) parsed.set(f, await parseFile(f));

  it("detects the exported chats by their structure and the store's operation log by its first line", () => {
    for (const f of [REAL_029, REAL_043]) {
      assert.equal(parsed.get(f)!.model.format, 'vscode-copilot');
      assert.equal(parsed.get(f)!.detection.confidence, 'likely');
    }
    for (const f of [LOG_043, USAGE]) {
      assert.equal(parsed.get(f)!.model.format, 'vscode-copilot');
      assert.equal(parsed.get(f)!.detection.confidence, 'certain');
    }
  });

  it('every file matches the reference counts', () => {
    for (const [f, p] of parsed) {
      assert.equal(p.model.sessions.length, 1);
      assert.deepEqual(figures(p.model.sessions[0]!), REFERENCE[f], f);
    }
  });

  it('and the reference run again now gives the same', { skip: !python() && 'python3 not installed' }, () => {
    for (const f of parsed.keys()) {
      const out = JSON.parse(
        execFileSync('python3', [join(repoRoot, 'test/reference/vscode_chat.py'), f], { encoding: 'utf8' }),
      ) as Figures;
      assert.deepEqual(out, REFERENCE[f], f);
    }
  });

  it('the operation log replays to the same session as the export it was made from', () => {
    const log = parsed.get(LOG_043)!.model.sessions;
    const doc = parsed.get(REAL_043)!.model.sessions;
    assert.deepEqual(withoutSources(log), withoutSources(doc));
  });

  it("real chat 043 by hand: prompts, the agent's rounds as calls, run_in_terminal with its command, the model without its vendor", () => {
    const s = parsed.get(REAL_043)!.model.sessions[0]!;
    assert.equal(s.id, 'badbd1d2-1f0b-4626-a215-56ee404562fe');
    assert.deepEqual(s.agent, { name: 'GitHub Copilot Chat', version: '0.36.1' });
    assert.match(s.turns[0]!.preview, /^Follow instructions in \[tp\.prompt\.md\]/);
    // Request 1: five rounds (four tool calls, then the answer), starting at the request's timestamp and ending after totalElapsed 29,899 ms.
    assert.deepEqual(
      s.calls.map((c) => c.turn),
      [0, 0, 0, 0, 0, 1, 1, 1],
    );
    assert.equal(s.calls[0]!.startMs, 1768862666486);
    assert.equal(s.calls[4]!.endMs, 1768862666486 + 29899);
    assert.equal(s.calls[0]!.model, 'gemini-3-flash-preview');
    const t = s.calls[0]!.toolCalls[0]!;
    assert.deepEqual(
      [t.name, t.command, t.exitCode, t.isError],
      ['run_in_terminal', 'git branch --show-current', 0, false],
    );
  });

  it('real chat 029: the two canceled requests are interruptions, not calls or API errors', () => {
    const s = parsed.get(REAL_029)!.model.sessions[0]!;
    assert.equal(s.otherInputs!.interruption, 2);
    assert.equal(s.events, undefined);
    assert.ok(
      s.calls.every((c) => c.tokens.input === null),
      'this VS Code version recorded no tokens',
    );
  });

  it("recorded tokens: a request's promptTokens/outputTokens are its last call's; a round's own usage is its call's, cached included", () => {
    const s = parsed.get(USAGE)!.model.sessions[0]!;
    assert.deepEqual(
      s.calls.map((c) => [c.tokens.input, c.tokens.cached, c.tokens.output]),
      [
        [null, null, null],
        [null, null, null],
        [23950, null, 142],
        [24800, 23900, 60],
        [25010, 24700, 75],
        [25300, 24960, 96],
      ],
    );
    assert.equal(s.calls[5]!.tokens.reasoningOutput, 40);
    assert.equal(s.calls[5]!.tokens.appended, 340);
    assert.ok(parsed.get(USAGE)!.model.diagnostics.some((d) => /last model call of a request only/.test(d.message)));
  });

  it("tool failures: the user denied one command (isConfirmed type 0), another exited 1; the title is the session's", () => {
    const s = parsed.get(USAGE)!.model.sessions[0]!;
    const tools = s.calls.flatMap((c) => c.toolCalls);
    assert.deepEqual(
      tools.map((t) => [t.name, t.isError, t.exitCode, t.errorText]),
      [
        ['read_file', false, null, null],
        ['run_in_terminal', false, 0, null],
        ['run_in_terminal', true, null, 'denied by the user'],
        ['run_in_terminal', true, 1, 'exit code 1'],
      ],
    );
    assert.equal(s.title, 'Fix the failing date test');
    // Rounds with their own timestamps keep them.
    assert.deepEqual(
      s.calls.slice(3).map((c) => c.startMs! - 1796083200000),
      [60100, 66000, 74000],
    );
  });

  it('round trip through the canonical format', async () => {
    await assertRoundTrip(parsed.get(REAL_029)!);
    await assertRoundTrip(parsed.get(USAGE)!);
  });
});
