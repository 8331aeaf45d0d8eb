import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AgentContentCollector } from '../../../../src/core/context/agentContent';
import { contextAnatomy } from '../../../../src/core/context/contextAnatomy';
import type { ContentPiece } from '../../../../src/core/context/contextParts';
import { GeminiContentCollector } from '../../../../src/core/context/geminiContent';
import type { TokenCounter } from '../../../../src/core/context/tokenCounter';
import { LOCAL_ONLY, fixtures, localSample, parseFile, parseText } from '../../../support/helpers';

// Gemini CLI chats read as text for the context anatomy (docs/guide/context.md#gemini-cli).
// Expected figures are hand counts (characters, with a one-token-per-character counter), the
// log's own numbers, or counts made from the raw JSON with no reader of ours.

const HARBOR = join(fixtures, 'gemini-cli/harbor-rfc-gemini-cli-trajectory.json');
/** Local-only (no licence): a Gemini CLI 0.4x chat document, 93 calls (test/fixtures/README.md). */
const PERSONAL_FINANCE = localSample('gemini-cli/bhanu7410+personal_finance-gemini_session.json');

/** One token per character: every size below can be worked out on paper. */
const CHARS: TokenCounter = { name: 'characters', count: (t) => t.length };

async function collect(text: string | null, path: string | null, name = 'inline.jsonl') {
  const collector = new GeminiContentCollector(CHARS);
  const options = { recordTap: (r: Parameters<typeof collector.record>[0]) => collector.record(r) };
  const parsed = path ? await parseFile(path, options) : await parseText(text!, name, options);
  const content = collector.result();
  const anatomy = contextAnatomy(parsed.model, { content, tokenizer: () => CHARS, prices: null });
  return { parsed, content, anatomy, pieces: content.pieces.get('0') ?? [] };
}

describe('Gemini CLI content: what each part of a chat is', () => {
  it('reads the Harbor chat document (real, one prompt, one answer) as its text, counted by hand', async () => {
    const { pieces, anatomy } = await collect(null, HARBOR);
    // The document, read by eye: messages[0] (the prompt) starts on line 6, messages[1] (the answer) on line 12.
    assert.deepEqual(
      pieces.map((p) => `${p.kind}@${p.line}`),
      ['userText@6', 'assistantText@12'],
    );
    // 'Create a file called hello.txt with "Hello, world!" as the content.\n': 67 characters and the newline.
    assert.equal(pieces[0]!.tokens, 68);
    // 'Okay, I\'ve created the file `/app/hello.txt` with the content "Hello, world!".': 78 characters; the
    // answer is sized by its logged output (24 tokens) when it goes back into a later call.
    assert.equal(pieces[1]!.tokens, 78);
    assert.equal(pieces[1]!.turn!.output, 24);
    const s = anatomy.sessions[0]!;
    assert.equal(s.content, 'text');
    // The one call: 5915 input tokens logged, 68 of them the prompt, the rest the unlogged base.
    assert.equal(s.calls[0]!.byKind.userText, 68);
    assert.equal(s.calls[0]!.byKind.system, 5915 - 68);
    assert.match(s.calibration.tokenizer, /stand-in for Gemini's tokenizer/);
    assert.ok(s.notes.some((n) => n.includes('GEMINI.md')));
  });

  it('falls back to sizes when the chat is on one line (pieces cannot be placed between calls)', async () => {
    const minified = JSON.stringify(JSON.parse(readFileSync(HARBOR, 'utf8')));
    const { anatomy } = await collect(minified, null, 'chat.json');
    assert.equal(anatomy.sessions[0]!.content, 'sizes');
  });

  it('counts a JSON Lines chat: a message written twice once, each tool result once, by tool and file', async () => {
    // Hand-made in the shape Gemini CLI 0.5x writes (the forensicds sample of test/fixtures/README.md): a header, the
    // prompt, the answer written before and after its tool call ran, an info line, the user turn of functionResponse
    // parts, the next answer.
    const header = { sessionId: 's1', projectHash: 'p1', startTime: '2026-09-24T08:44:47.775Z', kind: 'main' };
    const t = (s: number) => `2026-09-24T08:44:${String(s).padStart(2, '0')}.000Z`;
    const answer = {
      id: 'g1',
      timestamp: t(50),
      type: 'gemini',
      content: 'Reading it.',
      thoughts: [],
      tokens: { input: 100, output: 30, cached: 0, thoughts: 5, tool: 0, total: 135 },
      model: 'gemini-3-flash-preview',
    };
    const call = {
      id: 'read_file__1',
      name: 'read_file',
      args: { file_path: 'hello.txt' },
      result: [{ functionResponse: { id: 'read_file__1', name: 'read_file', response: { output: 'Hello, world!' } } }],
      status: 'success',
      timestamp: t(51),
    };
    const lines = [
      header,
      { id: 'u1', timestamp: t(48), type: 'user', content: [{ text: 'Read hello.txt' }] },
      answer,
      { $set: { lastUpdated: t(50) } },
      { ...answer, toolCalls: [call] },
      { id: 'i1', timestamp: t(52), type: 'info', content: 'Request cancelled.' },
      { id: 'u2', timestamp: t(53), type: 'user', content: call.result },
      {
        id: 'g2',
        timestamp: t(55),
        type: 'gemini',
        content: 'It says hello.',
        thoughts: [],
        tokens: { input: 200, output: 4, cached: 100, thoughts: 0, tool: 0, total: 204 },
        model: 'gemini-3-flash-preview',
      },
    ];
    const { pieces, anatomy } = await collect(lines.map((l) => JSON.stringify(l)).join('\n'), null);
    assert.deepEqual(
      pieces.map((p: ContentPiece) => `${p.kind}:${p.tool ?? ''}@${p.line}`),
      ['userText:@1', 'assistantText:@4', 'toolUse:read_file@4', 'toolResult:read_file@6', 'assistantText:@7'],
    );
    // 'Read hello.txt' 14; 'Reading it.' 11; 'read_file {"file_path":"hello.txt"}' 9 + 1 + 25;
    // 'read_file {"output":"Hello, world!"}' 9 + 1 + 26.
    assert.deepEqual(
      pieces.map((p) => p.tokens),
      [14, 11, 35, 36, 14],
    );
    assert.equal(pieces[3]!.targetFile, 'hello.txt');
    // The answer's text and its tool call are one turn: 30 output tokens logged.
    assert.equal(pieces[1]!.turn, pieces[2]!.turn);
    assert.equal(pieces[1]!.turn!.output, 30);
    // The second call appended the answer (11 + 35 characters, more than its 30 logged tokens: counted) and the result.
    const s = anatomy.sessions[0]!;
    assert.equal(s.content, 'text');
    assert.equal(s.calls[1]!.loggedGrowth, 100);
    // Counted before calibration: 11 + 35 + 36 = 82 against 100 logged, an error of 18%.
    assert.equal(s.calibration.comparedCalls, 1);
    assert.ok(Math.abs(s.calibration.medianAbsErrorRaw! - 0.18) < 1e-9);
  });

  it('is chosen by the agent collector for a Gemini CLI chat, and hands its text over only for that format', async () => {
    const collector = new AgentContentCollector(CHARS, CHARS);
    const parsed = await parseFile(HARBOR, { recordTap: (r) => collector.record(r) });
    assert.equal(parsed.model.format, 'gemini-cli');
    assert.notEqual(collector.contentFor('gemini-cli'), null);
    assert.equal(collector.contentFor('claude-code'), null);
  });

  it('counts each tool result of a real 93-call chat once, from the user turn that sends it', {
    skip: PERSONAL_FINANCE ? false : LOCAL_ONLY,
  }, async () => {
    const { pieces, anatomy } = await collect(null, PERSONAL_FINANCE);
    // From the raw JSON: every functionResponse part of a user message, plus results of calls no user turn answers.
    const doc = JSON.parse(readFileSync(PERSONAL_FINANCE!, 'utf8')) as {
      messages: { type: string; content: unknown; toolCalls?: { id: string; result?: unknown[] }[] }[];
    };
    const sent = new Set<string>();
    let responses = 0;
    for (const m of doc.messages)
      if (m.type === 'user' && Array.isArray(m.content))
        for (const p of m.content as { functionResponse?: { id: string } }[])
          if (p.functionResponse) {
            responses++;
            sent.add(p.functionResponse.id);
          }
    let unanswered = 0;
    for (const m of doc.messages)
      for (const c of m.toolCalls ?? []) if (!sent.has(c.id)) unanswered += (c.result ?? []).length;
    assert.equal(pieces.filter((p) => p.kind === 'toolResult').length, responses + unanswered);
    assert.equal(anatomy.sessions[0]!.content, 'text');
  });
});
