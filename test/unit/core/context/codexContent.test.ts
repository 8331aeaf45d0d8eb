import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AgentContentCollector } from '../../../../src/core/context/agentContent';
import { ClaudeCodeContentCollector } from '../../../../src/core/context/claudeCodeContent';
import { CodexContentCollector } from '../../../../src/core/context/codexContent';
import { contextAnatomy } from '../../../../src/core/context/contextAnatomy';
import type { TraceAnatomy } from '../../../../src/core/context/contextAnatomy';
import type { ContentPiece } from '../../../../src/core/context/contextParts';
import type { TokenCounter } from '../../../../src/core/context/tokenCounter';
import type { TraceRecord } from '../../../../src/core/trace/recordReader';
import { O200K } from '../../../../src/node/contextTokenizer';
import { fixtures, needsShared, parseFile, parseText, sharedTracesDir } from '../../../support/helpers';

// Codex rollouts read as text for the context anatomy (docs/guide/context.md#codex).
// The figures expected below come from the logs themselves (the input growth between two
// usage reports, the output and reasoning tokens a report gives) or from hand counts of
// made-up lines; none is the program's output pasted back.

const TRACELAB = join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl');
const EDGERUNNER = join(fixtures, 'codex/edgerunner-code-mode-0.144.1.head558.jsonl');

/** One token per character: the framing and the sizes can be worked out on paper. */
const CHARS: TokenCounter = { name: 'characters', count: (t) => t.length };

async function anatomyOf(
  path: string,
  counter: TokenCounter,
): Promise<{ anatomy: TraceAnatomy; pieces: ContentPiece[] }> {
  const collector = new CodexContentCollector(counter);
  const parsed = await parseFile(path, { recordTap: (r) => collector.record(r) });
  const content = collector.result();
  const anatomy = contextAnatomy(parsed.model, { content, tokenizer: () => counter, prices: null });
  return { anatomy, pieces: content.pieces.get('0') ?? [] };
}

/** The logged inputs of a session's calls, read from the rollout's usage reports with no reader of ours. */
function loggedInputs(text: string): number[] {
  const inputs: number[] = [];
  let last: number | null = null;
  for (const line of text.split('\n')) {
    if (!line.includes('"token_count"')) continue;
    const info = JSON.parse(line).payload.info;
    if (!info || info.total_token_usage.total_tokens === last) continue;
    last = info.total_token_usage.total_tokens;
    inputs.push(info.last_token_usage.input_tokens);
  }
  return inputs;
}

describe('Codex content: what each part of a rollout is', () => {
  it('names the parts of the first turn of a 0.114 rollout, and sizes the reasoning from the log', async () => {
    const { pieces } = await anatomyOf(TRACELAB, CHARS);
    // Lines 0–40 of the rollout, read by eye: base instructions, a developer message (permissions), AGENTS.md as a
    // user message, a developer message (collaboration mode), the typed prompt (line 6); then the first response.
    // Codex's own instructions are agent-written input: `system` stays the unlogged base (the tool definitions).
    const first = pieces.filter((p) => p.line <= 6).map((p) => p.kind);
    assert.deepEqual(first, ['injected', 'injected', 'memory', 'injected', 'userText']);
    // The first response (lines 8–13): reasoning, a message, three exec_command calls; its report (line 14) says
    // 444 output tokens of which 199 reasoning.
    const response = pieces.filter((p) => p.line >= 8 && p.line <= 13);
    assert.deepEqual(
      response.map((p) => `${p.kind}:${p.tool ?? ''}`),
      ['thinking:', 'assistantText:', 'toolUse:exec_command', 'toolUse:exec_command', 'toolUse:exec_command'],
    );
    assert.equal(response[0]!.tokens, 199);
    assert.equal(response[0]!.estimated, true);
    assert.equal(response[0]!.turn!.output, 444);
    assert.ok(response.every((p) => p.turn === response[0]!.turn));
    assert.equal(response[2]!.command, 'pwd');
    // Its three outputs (lines 15–17) are tool results of exec_command, with the command each ran.
    const outputs = pieces.filter((p) => p.line >= 15 && p.line <= 17);
    assert.deepEqual(
      outputs.map((p) => `${p.kind}:${p.tool}:${p.command}`),
      [
        'toolResult:exec_command:pwd',
        "toolResult:exec_command:rg --files -g 'AGENTS.md' -g 'agents.md' -g 'Agents.md'",
        'toolResult:exec_command:find .. -name AGENTS.md -o -name agents.md -o -name Agents.md',
      ],
    );
  });

  it('frames each input message as the harmony format writes it', async () => {
    // A user message `hi`: <|start|>user<|message|>hi<|end|> = 3 special tokens + "user" + "hi"; with one token per
    // character that is 3 + 4 + 2 = 9. A tool output `a.txt` of a call named `shell`:
    // <|start|>functions.shell to=assistant<|channel|>commentary<|message|>a.txt<|end|> = 4 specials
    // + "functions.shell to=assistant" (28) + "commentary" (10) + "a.txt" (5) = 47.
    const collector = new CodexContentCollector(CHARS);
    const lines = MINI.split('\n');
    lines.forEach((line, i) => {
      collector.record({
        value: JSON.parse(line),
        source: { file: 0, line: i, offset: 0 },
        line: null,
      } as unknown as TraceRecord);
    });
    const pieces = collector.result().pieces.get('0')!;
    assert.equal(pieces.find((p) => p.kind === 'userText')!.tokens, 9);
    assert.equal(pieces.find((p) => p.kind === 'toolResult')!.tokens, 47);
  });
});

/**
 * A made-up rollout (the 0.114 shape: a response's items, then its usage report), three calls
 * in two user turns, its logged inputs worked out on paper with one token per character:
 * call 1 reads 100 (not checked). Call 2 appends the first response as logged, 100 output
 * tokens (20 of them reasoning), and the `ls` output framed, 47 (see above): 100 + 147 = 247.
 * Call 3 appends the second response, 50 output tokens (25 reasoning), and the user's `next`,
 * 3 + 4 + 4 = 11, and drops the reasoning of the turn before it, 20 + 25 = 45:
 * 247 + 50 + 11 − 45 = 263.
 */
const MINI = [
  { type: 'session_meta', payload: { id: 'mini', cli_version: '0.114.0' } },
  { type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] } },
  { type: 'response_item', payload: { type: 'reasoning', summary: [], encrypted_content: 'xyz' } },
  {
    type: 'response_item',
    payload: { type: 'function_call', name: 'shell', arguments: '{"command":"ls"}', call_id: 'c1' },
  },
  usage(100, 100, 20, 200),
  { type: 'response_item', payload: { type: 'function_call_output', call_id: 'c1', output: 'a.txt' } },
  { type: 'response_item', payload: { type: 'reasoning', summary: [], encrypted_content: 'xyz' } },
  {
    type: 'response_item',
    payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] },
  },
  usage(247, 50, 25, 497),
  {
    type: 'response_item',
    payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'next' }] },
  },
  { type: 'response_item', payload: { type: 'reasoning', summary: [], encrypted_content: 'xyz' } },
  {
    type: 'response_item',
    payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
  },
  usage(263, 10, 5, 770),
]
  .map((r) => JSON.stringify({ timestamp: '2026-01-01T00:00:00.000Z', ...r }))
  .join('\n');

function usage(input: number, output: number, reasoning: number, total: number): object {
  const last = {
    input_tokens: input,
    cached_input_tokens: 0,
    output_tokens: output,
    reasoning_output_tokens: reasoning,
    total_tokens: input + output,
  };
  return {
    type: 'event_msg',
    payload: {
      type: 'token_count',
      info: { total_token_usage: { ...last, total_tokens: total }, last_token_usage: last },
    },
  };
}

describe('Codex content in the anatomy', () => {
  it('matches a made-up rollout worked out on paper: the reasoning of an earlier turn leaves the prompt', async () => {
    const collector = new CodexContentCollector(CHARS);
    const parsed = await parseText(MINI, 'mini.jsonl', { recordTap: (r) => collector.record(r) });
    assert.equal(parsed.model.format, 'codex');
    const anatomy = contextAnatomy(parsed.model, {
      content: collector.result(),
      tokenizer: () => CHARS,
      prices: null,
    });
    const s = anatomy.sessions[0]!;
    assert.equal(s.content, 'text');
    assert.deepEqual(
      s.calls.map((c) => c.loggedGrowth),
      [null, 147, 16],
    );
    assert.equal(s.calibration.comparedCalls, 2);
    assert.equal(s.calibration.medianAbsErrorRaw, 0);
    // The two reasoning parts are the logged reasoning tokens, marked as estimates.
    const thinking = s.parts.filter((p) => p.kind === 'thinking');
    assert.deepEqual(
      thinking.map((p) => [p.tokens, p.estimated]),
      [
        [20, true],
        [25, true],
      ],
    );
    // The tool call gets what is left of the first response's output: 100 − 20.
    assert.equal(s.parts.find((p) => p.kind === 'toolUse')!.tokens, 80);
  });

  it('with o200k_base and the framing, a real 0.114 rollout appends what its log says, within 3% a call', async () => {
    const inputs = loggedInputs(readFileSync(TRACELAB, 'utf8'));
    const { anatomy } = await anatomyOf(TRACELAB, O200K);
    const s = anatomy.sessions[0]!;
    // Calls 2–5, within the first turn (no reasoning dropped): the logged growth is the difference of the logged inputs.
    for (const k of [1, 2, 3, 4]) {
      const logged = inputs[k]! - inputs[k - 1]!;
      assert.equal(s.calls[k]!.loggedGrowth, logged);
      const error = Math.abs(s.calls[k]!.estimatedGrowth - logged) / logged;
      assert.ok(error <= 0.03, `call ${k + 1}: ${s.calls[k]!.estimatedGrowth} vs ${logged}`);
    }
  });

  it('on a real code-mode rollout (0.144) tool outputs of thousands of tokens count what the log appended', async () => {
    const inputs = loggedInputs(readFileSync(EDGERUNNER, 'utf8'));
    const { anatomy } = await anatomyOf(EDGERUNNER, O200K);
    const s = anatomy.sessions[0]!;
    // Calls 4–12 each append one response and one script output of 1,000–9,000 tokens.
    for (let k = 3; k <= 11; k++) {
      const logged = inputs[k]! - inputs[k - 1]!;
      assert.ok(logged > 1000, `call ${k + 1} appended ${logged}`);
      assert.ok(Math.abs(s.calls[k]!.estimatedGrowth - logged) / logged < 0.01, `call ${k + 1}`);
    }
    assert.ok(s.calibration.medianAbsErrorRaw! <= 0.05);
  });

  it('reads a 0.60 rollout (usage report before the items) alike', { skip: needsShared(codexShared()) }, async () => {
    const { anatomy, pieces } = await anatomyOf(codexShared()!, O200K);
    // Line 30 reports 4,315 output tokens of which 4,224 reasoning; the reasoning item comes after it (line 31).
    const reasoning = pieces.find((p) => p.line === 31)!;
    assert.equal(reasoning.kind, 'thinking');
    assert.equal(reasoning.tokens, 4224);
    assert.equal(reasoning.turn!.output, 4315);
    assert.ok(anatomy.sessions[0]!.calibration.medianAbsErrorRaw! <= 0.05);
  });
});

function codexShared(): string | null {
  const path = sharedTracesDir ? join(sharedTracesDir, 'codex/rtchess-exported-session.jsonl') : null;
  return path !== null && existsSync(path) ? path : null;
}

describe('the agent collector', () => {
  it('reads a Codex rollout with the Codex collector and a Claude Code log with the Claude one', async () => {
    const codex = new AgentContentCollector(CHARS, CHARS);
    const parsed = await parseFile(TRACELAB, { recordTap: (r) => codex.record(r) });
    assert.equal(codex.contentFor(parsed.model.format)!.pieces.get('0')!.length > 0, true);
    assert.equal(codex.contentFor('claude-code'), null);

    const claudePath = join(fixtures, 'claude-code/context-excerpt.jsonl');
    const agent = new AgentContentCollector(CHARS, null);
    const alone = new ClaudeCodeContentCollector(CHARS);
    const claude = await parseFile(claudePath, {
      recordTap: (r) => {
        agent.record(r);
        alone.record(r);
      },
    });
    assert.equal(claude.model.format, 'claude-code');
    assert.deepEqual([...agent.contentFor('claude-code')!.pieces], [...alone.result().pieces]);
    assert.equal(agent.contentFor('codex'), null);
  });
});
