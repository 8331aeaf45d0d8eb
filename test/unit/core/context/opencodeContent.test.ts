import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentContentCollector } from '../../../../src/core/context/agentContent';
import { contextAnatomy } from '../../../../src/core/context/contextAnatomy';
import type { TokenCounter } from '../../../../src/core/context/tokenCounter';
import { LOCAL_ONLY, localSample, parseFile, parseText } from '../../../support/helpers';

// OpenCode exports read as text for the context anatomy (docs/guide/context.md#opencode).
// The real samples are local-only (no licence, test/fixtures/README.md); the export below is
// hand-made in the shape OpenCode 1.18 writes, its sizes counted by hand (one token per character).

const CHARS: TokenCounter = { name: 'characters', count: (t) => t.length };
const MATUGEN = localSample('opencode/pai535Huang+matugen-theme-sync.json');

const EXPORT = {
  info: { id: 'ses_1', projectID: 'global', directory: '/w', time: { created: 1, updated: 2 }, version: '1.18.13' },
  messages: [
    {
      info: { id: 'msg_u1', role: 'user', sessionID: 'ses_1', time: { created: 1000 } },
      parts: [
        { type: 'text', text: 'List files' },
        { type: 'text', text: '<system-reminder>x</system-reminder>', synthetic: true },
      ],
    },
    {
      info: {
        id: 'msg_a1',
        role: 'assistant',
        sessionID: 'ses_1',
        modelID: 'gpt-5.6-sol',
        time: { created: 1100, completed: 1300 },
      },
      parts: [
        { type: 'step-start' },
        { type: 'reasoning', text: '**Listing**' },
        { type: 'text', text: 'Listing.' },
        {
          type: 'tool',
          tool: 'bash',
          callID: 'c1',
          state: {
            status: 'completed',
            input: { command: 'ls' },
            output: 'a.txt\nb.txt\n',
            time: { start: 1150, end: 1160 },
          },
        },
        { type: 'step-finish', tokens: { input: 500, output: 20, reasoning: 7, cache: { read: 0, write: 0 } } },
        { type: 'step-start' },
        { type: 'text', text: 'Two files.' },
        { type: 'step-finish', tokens: { input: 50, output: 4, reasoning: 0, cache: { read: 500, write: 0 } } },
      ],
    },
  ],
};

describe('OpenCode content: what each part of an export is', () => {
  it('places a step’s text, reasoning, tool call and result at the call after it, counted by hand', async () => {
    const collector = new AgentContentCollector(CHARS, CHARS);
    const parsed = await parseText(JSON.stringify(EXPORT, null, 2), 'session.json', {
      recordTap: (r) => collector.record(r),
    });
    assert.equal(parsed.model.format, 'opencode');
    const content = collector.contentFor('opencode')!;
    const pieces = content.pieces.get('0')!;
    assert.deepEqual(
      pieces.map((p) => `${p.kind}:${p.tool ?? ''}`),
      ['userText:', 'injected:', 'thinking:', 'assistantText:', 'toolUse:bash', 'toolResult:bash', 'assistantText:'],
    );
    // The reasoning is its logged count (7), marked estimated; the step's turn is output + reasoning = 27.
    assert.equal(pieces[2]!.tokens, 7);
    assert.equal(pieces[2]!.estimated, true);
    assert.equal(pieces[3]!.turn!.output, 27);
    assert.equal(pieces[5]!.command, 'ls');
    const s = contextAnatomy(parsed.model, { content, tokenizer: () => CHARS, prices: null }).sessions[0]!;
    assert.equal(s.content, 'text');
    // Call 0: 'List files' 10, the synthetic reminder 17 + 1 + 18 = 36 (kept as text, counted by the anatomy).
    assert.deepEqual(
      pieces.slice(0, 2).map((p) => CHARS.count(p.text)),
      [10, 36],
    );
    // Call 1 logged 550 (50 + 500 read): growth 50. Appended: reasoning 7, 'Listing.' 8, 'bash {"command":"ls"}' 21
    // (their 36 exceed the turn's 27, so they are counted), 'a.txt\nb.txt\n' 12: 48, an error of 2 / 50.
    assert.equal(s.calls[1]!.loggedGrowth, 50);
    assert.ok(Math.abs(s.calibration.medianAbsErrorRaw! - 0.04) < 1e-9);
  });

  it('reads a real export (local-only) as text', { skip: MATUGEN ? false : LOCAL_ONLY }, async () => {
    const collector = new AgentContentCollector(CHARS, CHARS);
    const parsed = await parseFile(MATUGEN!, { recordTap: (r) => collector.record(r) });
    const s = contextAnatomy(parsed.model, {
      content: collector.contentFor(parsed.model.format),
      tokenizer: () => CHARS,
      prices: null,
    }).sessions[0]!;
    assert.equal(s.content, 'text');
    // 17 steps (test/fixtures/README.md): 17 calls.
    assert.equal(s.calls.length, 17);
  });
});
