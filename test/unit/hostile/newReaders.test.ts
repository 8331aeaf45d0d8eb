import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../src/core/analysis/sessionSummary';
import { parseTrace } from '../../../src/core/trace/parseTrace';
import type { ParsedTrace } from '../../../src/core/trace/parseTrace';
import { deepText } from '../../support/hostileCorpus';
import { fixtures, LOCAL_ONLY, localSample } from '../../support/helpers';

// The hostile corpus's cases run through the readers issue 11 added (Gemini CLI, OpenCode,
// OpenHands, Cline / Roo Code, AIPerf), each starting from a real log of its format: a
// value nested 100,000 deep, a NUL byte, invalid UTF-8, __proto__ / constructor keys,
// counts that are not counts, a message of no known kind. Each reader reads the rest
// exactly as it reads the clean log (the same calls and token sums: a differential check
// against the same file without the poison), and says what it skipped with its line.
// Cline and OpenCode logs carry no licence: read from $AGENT_TRACE_LOCAL_SAMPLES, skipped without.

const bytes = (s: string | Buffer): Buffer => (typeof s === 'string' ? Buffer.from(s) : s);
const parse = (name: string, data: string | Buffer): Promise<ParsedTrace> =>
  parseTrace([{ key: name, bytes: bytes(data) }]);

/** What must survive: format, sessions' calls and token sums. */
function figures(p: ParsedTrace): unknown {
  return {
    format: p.model.format,
    problem: p.problem,
    sessions: p.model.sessions.map((s) => {
      const x = summarizeSession(s);
      return [x.llmCalls, x.tokens.input, x.tokens.cached, x.tokens.output, x.toolCalls];
    }),
  };
}

/** `line: message` of each diagnostic (1-based lines). */
const said = (p: ParsedTrace): string[] => p.model.diagnostics.map((d) => `${d.line + 1}: ${d.message}`);

/** The 1-based line of the first occurrence of `marker` in `text`. */
const lineOf = (text: string, marker: string): number => text.slice(0, text.indexOf(marker)).split('\n').length;

/**
 * A JSON Lines log with hostile lines put after its first line: a line nested 100,000 deep,
 * a copy of line 1 with a NUL byte, one with invalid UTF-8, and an object of __proto__ /
 * constructor keys that is no record of the format. Returns the text and the lines they sit on.
 */
function poisonLines(path: string): {
  data: Buffer;
  lines: { deep: number; nul: number; utf8: number; proto: number };
} {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const first = lines[0]!;
  const poison = [
    Buffer.from(`{"deep": ${deepText(100_000)}}`),
    Buffer.concat([Buffer.from(first.slice(0, 20)), Buffer.from([0]), Buffer.from(first.slice(20))]),
    Buffer.concat([
      Buffer.from(first.slice(0, 1)),
      Buffer.from('"bad": "'),
      Buffer.from([0xe9, 0xff, 0xed, 0xa0, 0x80]),
      Buffer.from('", '),
      Buffer.from(first.slice(1)),
    ]),
    Buffer.from('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}'),
  ];
  const data = Buffer.concat([
    Buffer.from(`${first}\n`),
    ...poison.flatMap((p) => [p, Buffer.from('\n')]),
    Buffer.from(`${lines.slice(1).join('\n')}\n`),
  ]);
  return { data, lines: { deep: 2, nul: 3, utf8: 4, proto: 5 } };
}

async function checkLines(name: string, path: string): Promise<void> {
  const clean = await parse(name, readFileSync(path));
  const { data, lines } = poisonLines(path);
  const hostile = await parse(name, data);
  assert.deepEqual(figures(hostile), figures(clean));
  const s = said(hostile);
  assert.ok(s.includes(`${lines.deep}: Line nests deeper than 512 levels; skipped.`), s.join('\n'));
  assert.ok(s.includes(`${lines.nul}: Line holds NUL bytes (binary data), not text; skipped.`), s.join('\n'));
  assert.ok(s.includes(`${lines.utf8}: Line is not valid UTF-8 text; skipped.`), s.join('\n'));
  assert.equal(({} as { polluted?: unknown }).polluted, undefined);
}

/**
 * A JSON document whose list at `listKey` (null: the document is the list) gets hostile
 * elements at index 1: a value nested 100,000 deep, and an object of __proto__ /
 * constructor keys and an unknown type. Pretty-printed, so each sits on its own line.
 */
function poisonDocument(path: string, listKey: string | null): { text: string; deepLine: number; protoLine: number } {
  const doc = JSON.parse(readFileSync(path, 'utf8')) as unknown;
  const list = (listKey === null ? doc : (doc as Record<string, unknown>)[listKey]) as unknown[];
  list.splice(1, 0, '@@DEEP@@', '@@PROTO@@');
  let text = JSON.stringify(doc, null, 2);
  const deepLine = lineOf(text, '"@@DEEP@@"');
  const protoLine = lineOf(text, '"@@PROTO@@"');
  text = text
    .replace('"@@DEEP@@"', deepText(100_000))
    .replace(
      '"@@PROTO@@"',
      '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "type": "__proto__", "id": "x"}',
    );
  return { text, deepLine, protoLine };
}

async function checkDocument(
  name: string,
  path: string,
  listKey: string | null,
  skippedMessage: RegExp | null,
): Promise<void> {
  const clean = await parse(name, readFileSync(path));
  const { text, deepLine, protoLine } = poisonDocument(path, listKey);
  const hostile = await parse(name, text);
  assert.deepEqual(figures(hostile), figures(clean));
  const s = said(hostile);
  assert.ok(s.includes(`${deepLine}: A value here nests deeper than 512 levels; it is left out.`), s.join('\n'));
  if (skippedMessage)
    assert.ok(
      s.some((m) => m.startsWith(`${protoLine}: `) && skippedMessage.test(m)),
      s.join('\n'),
    );
  assert.equal(({} as { polluted?: unknown }).polluted, undefined);
}

describe('hostile lines and elements in the logs of the newer readers: the rest read as clean, the poison said with its line', () => {
  it('AIPerf profile_export.jsonl', async () => {
    await checkLines('profile_export.jsonl', join(fixtures, 'aiperf/qwen_concurrency1.profile_export.jsonl'));
  });

  it('OpenHands evaluation output.jsonl', async () => {
    await checkLines('output.jsonl', join(fixtures, 'openhands/multi_swe_bench-output.head2.jsonl'));
  });

  it('OpenHands saved trajectory (a JSON array of events)', async () => {
    await checkDocument('trajectory.json', join(fixtures, 'openhands/basic_gui_mode.json'), null, null);
  });

  it('Gemini CLI chat session: a hostile message among the first no longer hides the whole session', async () => {
    await checkDocument(
      'session-1.json',
      join(fixtures, 'gemini-cli/harbor-rfc-gemini-cli-trajectory.json'),
      'messages',
      /^\d+: messages\[2\] is not a Gemini CLI message .*; skipped\.$/,
    );
  });

  const cline = localSample('cline/haram-333-fineye-ui_messages.json');
  it('Cline task (ui_messages.json)', { skip: cline === null && LOCAL_ONLY }, async () => {
    await checkDocument('ui_messages.json', cline!, null, /^\d+: Element 2 is not a Cline UI message .*; skipped\.$/);
  });

  const opencode = localSample('opencode/italo-luz+pfm-categorization.json');
  it('OpenCode export', { skip: opencode === null && LOCAL_ONLY }, async () => {
    await checkDocument(
      'session.json',
      opencode!,
      'messages',
      /^\d+: messages\[2\] is not an OpenCode message .*; skipped\.$/,
    );
  });

  it('OpenCode export: a message with a role it does not know is said with its line, the rest read as clean', {
    skip: opencode === null && LOCAL_ONLY,
  }, async () => {
    const clean = await parse('session.json', readFileSync(opencode!));
    const doc = JSON.parse(readFileSync(opencode!, 'utf8')) as { messages: Array<{ info: Record<string, unknown> }> };
    const copy = JSON.parse(JSON.stringify(doc.messages[1])) as { info: Record<string, unknown> };
    copy.info['role'] = 'tool\u202e[x](command:workbench.action.terminal.new)';
    doc.messages.splice(1, 0, copy);
    const text = JSON.stringify(doc, null, 2);
    const hostile = await parse('session.json', text);
    assert.deepEqual(figures(hostile), figures(clean));
    // Said on the line where that message starts: the last "    {" (an element of messages) before its role.
    const rows = text.split('\n');
    let line = lineOf(text, '"role": "tool');
    while (rows[line - 1] !== '    {') line -= 1;
    const s = said(hostile);
    assert.ok(
      s.some(
        (m) =>
          m.startsWith(`${line}: A message with role "tool`) &&
          m.endsWith('is neither a user nor an assistant message; skipped.'),
      ),
      s.join('\n'),
    );
  });
});

describe('AIPerf metrics are {value, unit}: a count that is not a count is said with its line and read as unknown', () => {
  it('negative, 2^64 and hex input/output lengths', async () => {
    const path = join(fixtures, 'aiperf/qwen_concurrency1.profile_export.jsonl');
    const records = readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { metrics: Record<string, { value: unknown }> });
    records[1]!.metrics['input_sequence_length']!.value = -100;
    // AIPerf writes the output twice (output_sequence_length, output_token_count): both poisoned.
    records[2]!.metrics['output_sequence_length']!.value = 18446744073709551616;
    records[2]!.metrics['output_token_count']!.value = 18446744073709551616;
    records[3]!.metrics['input_sequence_length']!.value = '0x10';
    const p = await parse('profile_export.jsonl', records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const s = said(p);
    assert.ok(
      s.includes('2: input_sequence_length is not a whole token count from 0 to 2^53 (-100); read as unknown.'),
      s.join('\n'),
    );
    assert.ok(
      s.includes(
        '3: output_sequence_length is not a whole token count from 0 to 2^53 (18446744073709552000); read as unknown.',
      ),
      s.join('\n'),
    );
    assert.ok(
      s.includes('4: input_sequence_length is not a whole token count from 0 to 2^53 ("0x10"); read as unknown.'),
      s.join('\n'),
    );
    // The three poisoned calls have unknown figures; the others keep the file's own (Σ of the rest, from the JSON).
    const calls = p.model.sessions.flatMap((x) => x.calls);
    assert.equal(calls.length, records.length);
    const known = records
      .filter((_, i) => i !== 1 && i !== 3)
      .reduce((n, r) => n + (r.metrics['input_sequence_length']!.value as number), 0);
    assert.equal(
      calls.reduce((n, c) => n + (c.tokens.input ?? 0), 0),
      known,
    );
    assert.deepEqual([calls[1]!.tokens.input, calls[2]!.tokens.output, calls[3]!.tokens.input], [null, null, null]);
  });
});
