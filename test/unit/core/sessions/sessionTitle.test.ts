import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  cleanTitle,
  isIdName,
  isPlaceholderTitle,
  sessionTitle,
  tabTitle,
} from '../../../../src/core/sessions/sessionTitle';
import { EDIT_LOOP, fixtures, parseFile, parseText, SPOTTER } from '../../../support/helpers';

// A session's title on real logs: the agent's own where it is a name, else the first prompt
// typed. The prompts and summaries quoted here were read off the files by eye
// (test/reference/claude_sessions.py lists the typed prompts of a Claude Code log).

const CODEX = join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl');
const M_CLAUDE_SUMMARY = join(fixtures, 'claude-code/m-claude/0a8fc187-681a-4c42-9538-ba0f628ee289.jsonl');

describe('sessionTitle on real sessions', () => {
  it('a Claude Code summary record is the title (the agent named the session)', async () => {
    const parsed = await parseFile(M_CLAUDE_SUMMARY);
    assert.equal(sessionTitle(parsed.model.sessions[0]!), 'Claude Code Initial Greeting and Chrome Command');
  });

  it('a summary that is the error of the request that should have written it is passed over for the first typed prompt', async () => {
    // The M-Claude log with the summary Claude Code writes when the summarising request failed.
    const text = readFileSync(EDIT_LOOP, 'utf8');
    const parsed = await parseText(
      `{"type":"summary","summary":"API Error: 401 {\\"type\\":\\"error\\",\\"error\\":{\\"type\\":\\"authentication_error\\",\\"message\\":\\"invalid x-api-key\\"}}","leafUuid":"x"}\n${text}`,
      'e5821007-9ca0-4a36-afc0-94da583da0ea.jsonl',
    );
    const main = parsed.model.sessions.find((s) => s.role === 'main')!;
    assert.match(main.title ?? '', /^API Error: 401/, 'the reader keeps what the log says');
    assert.equal(sessionTitle(main), 'open M-Claude repo');
  });

  it('without an own title, the first prompt typed (the spotter session; its sub-agent: the task it was given)', async () => {
    const parsed = await parseFile(SPOTTER);
    const main = parsed.model.sessions.find((s) => s.role === 'main')!;
    assert.match(
      sessionTitle(main) ?? '',
      /^Work on bead spotter-4te\. Run bd show spotter-4te to see the issue details/,
    );
    const sub = parsed.model.sessions.find((s) => s.role === 'subagent')!;
    assert.match(sessionTitle(sub) ?? '', /^Search hex\.pm for the latest versions of these Elixir packages/);
  });

  it('a pasted terminal frame is dropped from a typed prompt (the Codex 0.114 rollout)', async () => {
    const parsed = await parseFile(CODEX);
    // Its first user_message: "│ Public status panel omitted │\n╰──…──╯ why still show agents.md none".
    assert.equal(sessionTitle(parsed.model.sessions[0]!), 'Public status panel omitted why still show agents.md none');
  });

  it("a Codex thread's name (event_msg thread_name_updated, the last one) is its title", async () => {
    const lines = readFileSync(CODEX, 'utf8').trimEnd().split('\n');
    const named = (name: string): string =>
      `{"timestamp":"2026-03-21T10:07:00.000Z","type":"event_msg","payload":{"type":"thread_name_updated","thread_id":"01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73","thread_name":${JSON.stringify(name)}}}`;
    const text = [
      ...lines.slice(0, 20),
      named('agents.md check'),
      ...lines.slice(20),
      named('Why AGENTS.md shows none'),
    ].join('\n');
    const parsed = await parseText(text, 'rollout-2026-03-21T10-05-38-01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73.jsonl');
    const session = parsed.model.sessions[0]!;
    assert.equal(session.title, 'Why AGENTS.md shows none');
    assert.equal(sessionTitle(session), 'Why AGENTS.md shows none');
    // Nothing else changed: the same 9 calls as the rollout without the names (test/reference/codex_deltas.py).
    assert.equal(session.calls.length, 9);
  });
});

describe('what is not a title', () => {
  it('ids and files named by them', () => {
    for (const id of [
      'ae4a77f8-aedd-4bc1-888f-c94edc91af04',
      'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl',
      'rollout-2026-03-21T10-05-38-01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73.jsonl',
      'session-2025-10-10T06-59-cdd63974.json',
      'f53b52ad6d21cceb72dfa78fb67614fe14f110c58e68412b01508d6a485501c3',
    ]) {
      assert.ok(isIdName(id), id);
    }
    for (const name of ['claude-code-sessions.trace.jsonl', 'edit-retry-loop.jsonl', 'Fix the build', 'session notes'])
      assert.ok(!isIdName(name), name);
  });

  it('errors an agent wrote where the title goes, and not a prompt that happens to start with "Error"', async () => {
    for (const t of [
      'API Error: Request was aborted.',
      'Invalid API key · Please run /login',
      'Request was aborted.',
      'Prompt is too long',
    ])
      assert.ok(isPlaceholderTitle(t), t);
    assert.ok(!isPlaceholderTitle('Error handling in the upload path'));
    // A typed prompt is the user's own words: kept whatever it says.
    const session = { id: 's', title: 'API Error: 500', turns: [{ preview: 'Error: cannot find module x, fix it' }] };
    assert.equal(sessionTitle(session), 'Error: cannot find module x, fix it');
  });

  it('cleanTitle: injected context dropped, whitespace collapsed, nothing readable is no title', () => {
    assert.equal(cleanTitle('<system-reminder>be brief</system-reminder>  Fix\n the   build'), 'Fix the build');
    assert.equal(cleanTitle('╭───╮\n│   │'), null);
    assert.equal(cleanTitle(''), null);
    assert.equal(cleanTitle('x'.repeat(500))!.length, 200);
  });

  it('the editor tab takes the title only when the file is named by an id', () => {
    assert.equal(
      tabTitle('ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl', 'Work on bead spotter-4te'),
      'Work on bead spotter-4te',
    );
    assert.equal(tabTitle('claude-code-sessions.trace.jsonl', 'Work on bead spotter-4te'), null);
    assert.equal(tabTitle('ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl', null), null);
  });
});
