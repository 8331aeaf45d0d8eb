// The hostile corpus: traces written the way an attacker (or a broken writer) would
// write them. Every case starts from real records (the CC0 M-Claude log,
// test/fixtures/claude-code/edit-retry-loop.jsonl, and the Apache-2.0 TraceLab Codex
// rollout, test/fixtures/codex/tracelab-agents-md-0.114.jsonl) and breaks or poisons
// them in one way, so a reader meets exactly what it would meet in the wild, plus the
// one hostile thing.
//
// Small cases are committed in test/fixtures/hostile/ (written by this module:
// `npx tsx test/support/hostileCorpus.ts write`, checked by a unit test to be what it
// writes). Large ones (50 MB and 600 MB lines, a million lines, a 2 GB file, 20,000
// sub-agents, deep nesting, FIFOs and links) are made in a temporary folder by the
// tests that need them, with the functions below.
import { createWriteStream, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../..');
export const HOSTILE_DIR = join(root, 'test/fixtures/hostile');
const M_CLAUDE = join(root, 'test/fixtures/claude-code/edit-retry-loop.jsonl');
const CODEX = join(root, 'test/fixtures/codex/tracelab-agents-md-0.114.jsonl');

/** A Markdown link to a command that would be seen at once if it ran: it opens an untitled editor. */
export const COMMAND_LINK = '[Click to repair this trace](command:workbench.action.files.newUntitledFile)';
/** The attack the issue saw run: a link that types a shell command into the terminal. */
export const TERMINAL_LINK =
  '[Fix permissions](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22touch%20%2Ftmp%2Fagent-trace-pwned%5Cn%22%7D)';

/** One payload per kind of surface that could act on text. */
export const PAYLOADS = {
  html: '<img src=x onerror="window.__pwned=1">',
  script: '<script>window.__pwned=1</script>',
  javascript: 'javascript:window.__pwned=1',
  css: '</style><style>body{display:none}</style>',
  bidi: '\u202egnp.exe\u202c \u2066isolated\u2069',
  ansi: '\u001b[2J\u001b]0;pwned\u0007\u001b]8;;https://evil.example\u0007link\u001b]8;;\u0007\u009b31m',
  codicon: '$(check) $(pass-filled)',
  link: COMMAND_LINK,
  terminal: TERMINAL_LINK,
} as const;

/** Every payload in one string: what each poisoned field holds. */
export const ALL_PAYLOADS = Object.values(PAYLOADS).join(' ');

/** Characters that must never reach a terminal or a VS Code surface raw once a payload went through. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
export const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

function realLines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
}

/** The M-Claude log's records (120), parsed. */
export function claudeRecords(): Array<Record<string, unknown>> {
  return realLines(M_CLAUDE).map((l) => JSON.parse(l) as Record<string, unknown>);
}

const jsonl = (records: readonly unknown[]): string => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** Applies `fn` to every string value (not key) of a record, walking it. */
function mapStrings(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === 'string') return fn(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, fn)]));
  return value;
}

/**
 * The M-Claude log with a payload in every field the inspector shows: the session id,
 * cwd, model, the failing file (the retry loop's target), tool names, commands, every
 * error text, the prompt, a title of 100,000 characters, and a 10 MiB tool result. The
 * structure is untouched, so the same calls, failures and retry loop are found.
 */
export function payloadClaudeLog(): string {
  const id = `e5821007-${PAYLOADS.bidi}-${PAYLOADS.link}`;
  const file = `C:/Users/x/${PAYLOADS.link} ${PAYLOADS.codicon} ${PAYLOADS.bidi}.py`;
  const records = claudeRecords().map(
    (r) =>
      mapStrings(r, (s) =>
        s
          .replaceAll('e5821007-9ca0-4a36-afc0-94da583da0ea', id)
          .replaceAll('C:/Users/[USER]/Documents/M-Claude/scripts/sync_raw_logs.py', file)
          .replaceAll('claude-opus-4-5-20251101', `claude-${PAYLOADS.html}${PAYLOADS.ansi}`)
          .replaceAll('C:\\Windows\\System32', `C:\\${PAYLOADS.link}\\${PAYLOADS.bidi}`)
          .replace(/^File has (been unexpectedly modified|not been read yet)/, `${ALL_PAYLOADS} File has $1`)
          .replace(/^Exit code (\d+)\n/, `Exit code $1\n${ALL_PAYLOADS}\n`),
      ) as Record<string, unknown>,
  );
  // Tool names: the Bash calls become a payload name (the Edit/Write loop keeps its names, so it is still found).
  for (const r of records) {
    const content = (r['message'] as { content?: unknown } | undefined)?.content;
    if (!Array.isArray(content)) continue;
    for (const b of content as Array<Record<string, unknown>>) {
      if (b['type'] === 'tool_use' && b['name'] === 'Bash') b['name'] = `Bash ${PAYLOADS.codicon} ${PAYLOADS.link}`;
      if (b['type'] === 'tool_use' && typeof (b['input'] as Record<string, unknown>)['command'] === 'string') {
        (b['input'] as Record<string, unknown>)['command'] =
          `${(b['input'] as Record<string, unknown>)['command'] as string} ${PAYLOADS.ansi} ${PAYLOADS.terminal}`;
      }
    }
  }
  const session = (records.find((r) => typeof r['sessionId'] === 'string')!['sessionId'] as string) ?? id;
  const title = { type: 'summary', sessionId: session, summary: `${ALL_PAYLOADS} ${'A'.repeat(100_000)}` };
  const prompt = {
    ...records.find(
      (r) =>
        r['type'] === 'user' &&
        typeof (r['message'] as { content?: unknown })['content'] === 'string' &&
        r['isMeta'] !== true,
    )!,
  };
  prompt['message'] = { role: 'user', content: `${ALL_PAYLOADS} please fix` };
  prompt['uuid'] = 'hostile-prompt';
  return jsonl([...records.slice(0, 3), prompt, ...records.slice(3), title]);
}

/** A canonical trace whose every shown field holds the payloads (the canonical reader passes fields through as they are). */
export function payloadCanonicalTrace(): string {
  const p = ALL_PAYLOADS;
  return jsonl([
    { type: 'header', format: 'agent-trace', version: 1, generator: p, source: p },
    {
      type: 'session',
      id: `main ${PAYLOADS.link}`,
      parentId: null,
      parentToolCallId: null,
      role: 'main',
      agent: { name: p, version: p },
      cwd: p,
      title: p,
    },
    { type: 'turn', session: `main ${PAYLOADS.link}`, startMs: 0, preview: p },
    {
      type: 'llm_call',
      session: `main ${PAYLOADS.link}`,
      id: p,
      model: p,
      startMs: 0,
      endMs: 1000,
      tokens: { input: 1000, cached: 0, appended: 1000, output: 10 },
    },
    ...[1, 2, 3].flatMap((n) => [
      {
        type: 'llm_call',
        session: `main ${PAYLOADS.link}`,
        id: `c${n}`,
        model: p,
        startMs: 1000 * n,
        endMs: 1000 * n + 500,
        tokens: { input: 1000 + 100 * n, cached: 1000, appended: 100 * n, output: 10 },
      },
      {
        type: 'tool_call',
        session: `main ${PAYLOADS.link}`,
        call: `c${n}`,
        id: `t${n}`,
        name: `Edit ${PAYLOADS.codicon}`,
        targetFile: `src/${PAYLOADS.link}${PAYLOADS.bidi}.ts`,
        command: p,
        startMs: 1000 * n + 500,
        endMs: 1000 * n + 600,
        isError: true,
        errorText: p,
        exitCode: 1,
        resultChars: 100,
      },
    ]),
    {
      type: 'session',
      id: `sub ${PAYLOADS.bidi}`,
      parentId: `main ${PAYLOADS.link}`,
      parentToolCallId: 't1',
      role: 'subagent',
      agent: { name: p, version: null },
    },
    {
      type: 'llm_call',
      session: `sub ${PAYLOADS.bidi}`,
      id: 's1',
      model: p,
      startMs: 1200,
      endMs: 1300,
      tokens: { input: 10, cached: 0, appended: 10, output: 1 },
    },
  ]);
}

/** One small case: a file name in test/fixtures/hostile/ and its bytes. */
export interface HostileFile {
  name: string;
  bytes: Uint8Array;
}

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

function utf16(text: string, bigEndian: boolean): Uint8Array {
  const le = Buffer.from(text, 'utf16le');
  if (bigEndian) le.swap16();
  return Buffer.concat([Buffer.from(bigEndian ? [0xfe, 0xff] : [0xff, 0xfe]), le]);
}

/** The M-Claude log's first `n` records with the assistant usage of record `at` (1-based line) rewritten. */
function withUsage(changes: Record<number, Record<string, unknown>>, n = 40): string {
  const records = claudeRecords().slice(0, n);
  for (const [line, usage] of Object.entries(changes)) {
    const message = records[Number(line) - 1]!['message'] as Record<string, unknown>;
    message['usage'] = { ...(message['usage'] as Record<string, unknown>), ...usage };
  }
  return jsonl(records);
}

/** Lines (1-based) of the M-Claude log that are assistant lines with usage, in order. */
export function usageLines(): number[] {
  return claudeRecords().flatMap((r, i) =>
    r['type'] === 'assistant' && (r['message'] as { usage?: unknown }).usage ? [i + 1] : [],
  );
}

/** A value nested `depth` levels deep (arrays), as text: what one hostile record needs to take a recursive walker down. */
export function deepText(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** The committed small cases. */
export function smallCases(): HostileFile[] {
  const lines = realLines(M_CLAUDE);
  const codex = realLines(CODEX);
  const u = usageLines();
  const first40 = lines.slice(0, 40).join('\n') + '\n';
  const dup = claudeRecords().slice(0, 40);
  // The 2nd usage line is a response of its own; a later line claims the same message id with other figures.
  const second = dup[u[1]! - 1]!;
  const conflicting = JSON.parse(JSON.stringify(second)) as Record<string, unknown>;
  const cm = conflicting['message'] as Record<string, unknown>;
  cm['usage'] = {
    ...(cm['usage'] as Record<string, unknown>),
    input_tokens: 5,
    cache_read_input_tokens: 1,
    cache_creation_input_tokens: 2,
  };
  cm['content'] = [];
  // A later response reuses the tool_use id of an earlier call.
  const firstToolUse = dup.find(
    (r) =>
      Array.isArray((r['message'] as { content?: unknown } | undefined)?.content) &&
      (r['message'] as { content: Array<Record<string, unknown>> }).content.some((b) => b['type'] === 'tool_use'),
  )!;
  const reusedId = (firstToolUse['message'] as { content: Array<Record<string, unknown>> }).content.find(
    (b) => b['type'] === 'tool_use',
  )!['id'] as string;
  const reuse = JSON.parse(JSON.stringify(dup[u[3]! - 1]!)) as Record<string, unknown>;
  const rm = reuse['message'] as Record<string, unknown>;
  rm['id'] = 'msg_reuses_a_tool_id';
  rm['content'] = [{ type: 'tool_use', id: reusedId, name: 'Bash', input: { command: 'echo again' } }];
  const protoRecords = claudeRecords().slice(0, 40);
  const pm = JSON.parse(JSON.stringify(protoRecords[u[2]! - 1]!)) as Record<string, unknown>;
  (pm['message'] as Record<string, unknown>)['id'] = 'msg_proto_tools';
  (pm['message'] as Record<string, unknown>)['content'] = [
    '__proto__',
    'constructor',
    'prototype',
    'hasOwnProperty',
    'toString',
  ].map((name, i) => ({
    type: 'tool_use',
    id: `toolu_proto_${i}`,
    name,
    input: JSON.parse(
      `{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "file_path": "${name}.txt"}`,
    ) as unknown,
  }));
  const protoText =
    jsonl([...protoRecords, pm]).trimEnd() +
    '\n' +
    '{"type":"__proto__","sessionId":"e5821007-9ca0-4a36-afc0-94da583da0ea","__proto__":{"polluted":true}}\n{"type":"constructor","sessionId":"e5821007-9ca0-4a36-afc0-94da583da0ea"}\n';

  const missing = [
    { sessionId: 's', message: { role: 'user', content: 'no type' } },
    { type: 'assistant', sessionId: 's' },
    { type: 'assistant', message: { id: 'm1', model: 'x', usage: { input_tokens: 1, output_tokens: 1 }, content: [] } },
    { type: 'assistant', sessionId: 's', message: { model: 'x', content: [] } },
    { type: 'assistant', sessionId: 's', message: { id: 'm2', model: 'x', content: [{ type: 'tool_use' }] } },
    { type: 'user', sessionId: 's', message: {} },
    { type: 'user', sessionId: 's', message: { content: [{ type: 'tool_result', is_error: true }] } },
  ];
  const mixed = lines.slice(0, 30).flatMap((l, i) => (codex[i] ? [l, codex[i]!] : [l]));
  const surrogates = lines.slice(0, 10).join('\n') + '\n';
  const invalidUtf8 = Buffer.concat([
    Buffer.from(surrogates),
    Buffer.from(
      '{"type":"user","sessionId":"e5821007-9ca0-4a36-afc0-94da583da0ea","message":{"role":"user","content":"latin-1: ',
    ),
    Buffer.from([0xe9, 0xff, 0xfe]),
    Buffer.from(
      '"}}\n{"type":"user","sessionId":"e5821007-9ca0-4a36-afc0-94da583da0ea","message":{"role":"user","content":"CESU-8 lone surrogate: ',
    ),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from(
      '"}}\n{"type":"user","sessionId":"e5821007-9ca0-4a36-afc0-94da583da0ea","uuid":"lone","timestamp":"2026-01-01T22:40:00.000Z","message":{"role":"user","content":"escaped lone surrogate: \\ud800 and a pair \\ud83d\\ude00"}}\n',
    ),
    Buffer.from(lines.slice(10, 20).join('\n') + '\n'),
  ]);
  const nulLine = Buffer.concat([
    Buffer.from(lines.slice(0, 20).join('\n') + '\n'),
    Buffer.from(lines[20]!.slice(0, 50)),
    Buffer.from([0]),
    Buffer.from(lines[20]!.slice(50) + '\n'),
    Buffer.from(lines.slice(21, 40).join('\n') + '\n'),
  ]);
  const binary = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]),
    Buffer.alloc(200, 0),
    Buffer.from([0x0a, 0xff, 0x00, 0x7b, 0x7d, 0x0a]),
  ]);
  const duplicateKeys = lines[u[0]! - 1]!.replace('"input_tokens":', '"input_tokens":99999,"input_tokens":');
  const deepRecord = `{"type":"assistant","sessionId":"e5821007-9ca0-4a36-afc0-94da583da0ea","message":{"id":"msg_deep","model":"m","usage":{"input_tokens":1,"output_tokens":1},"content":[{"type":"tool_use","id":"toolu_deep","name":"Bash","input":{"command":"x","deep":${deepText(5000)}}}]}}`;
  // A log a broken writer interleaved with its own lines: each real record is followed by three that no format knows.
  const fewValid = lines
    .slice(0, 40)
    .flatMap((l, i) => [
      l,
      ...[0, 1, 2].map((k) =>
        JSON.stringify({ level: 'warn', msg: `writer ${i}.${k}: buffer flushed late`, pid: 4242 }),
      ),
    ]);
  const unknownKeys = jsonl(
    [1, 2, 3].map((i) => ({
      [COMMAND_LINK]: i,
      [TERMINAL_LINK]: i,
      [PAYLOADS.codicon]: i,
      [PAYLOADS.bidi]: i,
      [PAYLOADS.ansi]: i,
      [PAYLOADS.html]: i,
    })),
  );
  return [
    {
      name: 'truncated.jsonl',
      bytes: utf8(lines.slice(0, 20).join('\n') + '\n' + lines[20]!.slice(0, Math.floor(lines[20]!.length / 2))),
    },
    {
      name: 'invalid-line.jsonl',
      bytes: utf8(
        [...lines.slice(0, 4), '{"type":"assistant", "message": {broken', ...lines.slice(5, 40)].join('\n') + '\n',
      ),
    },
    { name: 'whitespace-only.jsonl', bytes: utf8('  \n\t\n   \r\n\n') },
    { name: 'binary.jsonl', bytes: binary },
    { name: 'utf16le-bom.jsonl', bytes: utf16(first40, false) },
    { name: 'utf16be-bom.jsonl', bytes: utf16(first40, true) },
    { name: 'utf16le-no-bom.jsonl', bytes: utf16(first40, false).subarray(2) },
    { name: 'utf8-bom.jsonl', bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(first40)]) },
    { name: 'crlf.jsonl', bytes: utf8(lines.slice(0, 40).join('\r\n') + '\r\n') },
    { name: 'nul-byte.jsonl', bytes: nulLine },
    { name: 'invalid-utf8.jsonl', bytes: invalidUtf8 },
    { name: 'mixed-formats.jsonl', bytes: utf8(mixed.join('\n') + '\n') },
    {
      name: 'numbers-as-strings.jsonl',
      bytes: utf8(
        withUsage({
          [u[0]!]: { input_tokens: '123' },
          [u[1]!]: { input_tokens: '0x10' },
          [u[2]!]: { input_tokens: '0b101' },
          [u[3]!]: { input_tokens: ' 7 ' },
          [u[4]!]: { input_tokens: 'Infinity' },
          [u[5]!]: { output_tokens: '1e3' },
        }),
      ),
    },
    {
      name: 'bad-counts.jsonl',
      bytes: utf8(
        withUsage({ [u[0]!]: { input_tokens: -5 }, [u[1]!]: { cache_read_input_tokens: 1e308 } })
          .replace(
            '"input_tokens":' +
              String(
                (claudeRecords()[u[2]! - 1]!['message'] as { usage: { input_tokens: number } }).usage.input_tokens,
              ),
            '"input_tokens":18446744073709551616',
          )
          .replace(
            '"output_tokens":' +
              String(
                (claudeRecords()[u[3]! - 1]!['message'] as { usage: { output_tokens: number } }).usage.output_tokens,
              ),
            '"output_tokens":1e400',
          ),
      ),
    },
    { name: 'missing-fields.jsonl', bytes: utf8(first40 + jsonl(missing)) },
    { name: 'duplicate-ids.jsonl', bytes: utf8(jsonl([...dup, conflicting, reuse])) },
    {
      name: 'duplicate-keys.jsonl',
      bytes: utf8([...lines.slice(0, u[0]! - 1), duplicateKeys, ...lines.slice(u[0]!, 40)].join('\n') + '\n'),
    },
    { name: 'proto-keys.jsonl', bytes: utf8(protoText) },
    { name: 'deep-5000.jsonl', bytes: utf8(first40 + deepRecord + '\n' + lines.slice(40, 50).join('\n') + '\n') },
    {
      name: 'deep-5000.json',
      bytes: utf8(
        `{"trajectory": [{"action": "ls", "observation": "x", "deep": ${deepText(5000)}}], "info": {"model_stats": {"api_calls": 1}}}\n`,
      ),
    },
    {
      name: 'deep-5000.workload.json',
      bytes: utf8(
        `{"sharedPrefixTokens": 0, "sessions": [{"id": "s", "calls": [{"promptTokens": 10, "outputTokens": 1, "toolWaitS": 0, "deep": ${deepText(5000)}}]}]}\n`,
      ),
    },
    { name: 'unknown-keys.jsonl', bytes: utf8(unknownKeys) },
    { name: 'few-valid-records.jsonl', bytes: utf8(fewValid.join('\n') + '\n') },
    { name: 'payloads.jsonl', bytes: utf8(payloadClaudeLog()) },
    { name: 'payloads.trace.jsonl', bytes: utf8(payloadCanonicalTrace()) },
  ];
}

// ---- large cases, made at test time ----

/** Writes `lines` (a generator of strings) to `path`, streaming, and returns the byte count. */
async function writeLines(path: string, parts: Iterable<string | Uint8Array>): Promise<number> {
  const out = createWriteStream(path);
  let bytes = 0;
  for (const part of parts) {
    const b = typeof part === 'string' ? Buffer.from(part) : part;
    bytes += b.length;
    if (!out.write(b)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return bytes;
}

/** A Claude Code log (the M-Claude log's first 40 records) with one tool result of `mb` MiB on one line, then the rest. */
export async function writeLongLineLog(path: string, mb: number): Promise<number> {
  const records = claudeRecords();
  const user = records.find(
    (r) =>
      Array.isArray((r['message'] as { content?: unknown } | undefined)?.content) &&
      (r['message'] as { content: Array<Record<string, unknown>> }).content.some((b) => b['type'] === 'tool_result'),
  )!;
  const [before, after] = JSON.stringify({ ...user, uuid: 'long-line' }).split('"content":[', 2) as [string, string];
  const chunk = 'x'.repeat(1 << 20);
  function* parts(): Generator<string> {
    yield jsonl(records.slice(0, 40));
    yield `${before}"content":[{"type":"tool_result","tool_use_id":"toolu_long","is_error":false,"content":"`;
    for (let i = 0; i < mb; i++) yield chunk;
    yield `"},${after}\n`;
    yield jsonl(records.slice(40));
  }
  return writeLines(path, parts());
}

/** A million (or `n`) tiny lines: a Claude progress record each, between the first and last real records. */
export async function writeManyLines(path: string, n = 1_000_000): Promise<number> {
  const records = claudeRecords();
  const tiny = '{"type":"progress"}\n';
  function* parts(): Generator<string> {
    yield jsonl(records.slice(0, 40));
    const batch = tiny.repeat(10_000);
    for (let i = 0; i < n / 10_000; i++) yield batch;
    yield jsonl(records.slice(40));
  }
  return writeLines(path, parts());
}

/**
 * One JSON document of about `mb` MiB on a single line: an OTLP/JSON export (the format
 * that is one document per file) of `mb` spans, each carrying 1 MiB of attribute text.
 * Too long for one JavaScript string, so it can only be read streamed.
 */
export async function writeSingleLineDocument(path: string, mb: number): Promise<number> {
  const filler = 'y'.repeat((1 << 20) - 400);
  function* parts(): Generator<string> {
    yield '{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"agent"},"spans":[';
    for (let i = 0; i < mb; i++) {
      const span = {
        traceId: '5b8efff798038103d269b633813fc60c',
        spanId: (0x1000 + i).toString(16).padStart(16, '0'),
        name: `chat m${i}`,
        startTimeUnixNano: String(1_700_000_000_000_000_000 + i * 1_000_000_000),
        endTimeUnixNano: String(1_700_000_000_500_000_000 + i * 1_000_000_000),
        attributes: [
          { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
          { key: 'gen_ai.usage.input_tokens', value: { intValue: String(1000 + i) } },
          { key: 'gen_ai.usage.output_tokens', value: { intValue: '10' } },
          { key: 'filler', value: { stringValue: filler } },
        ],
      };
      yield (i > 0 ? ',' : '') + JSON.stringify(span);
    }
    yield ']}]}]}\n';
  }
  return writeLines(path, parts());
}

/** A pretty-printed SWE-agent trajectory of about `mb` MiB (each step's observation 1 MiB): a document over many lines. */
export async function writeLargeTrajectory(path: string, mb: number): Promise<number> {
  const observation = 'z'.repeat((1 << 20) - 200);
  function* parts(): Generator<string> {
    yield '{\n  "trajectory": [\n';
    for (let i = 0; i < mb; i++)
      yield `${i > 0 ? ',\n' : ''}    {\n      "action": "ls step ${i}",\n      "observation": ${JSON.stringify(observation)},\n      "response": "step ${i}",\n      "thought": "t"\n    }`;
    yield '\n  ],\n  "history": [],\n  "info": {\n    "model_stats": {"api_calls": ' +
      String(mb) +
      ', "tokens_sent": 1000, "tokens_received": 10}\n  }\n}\n';
  }
  return writeLines(path, parts());
}

/**
 * A file of `gb` GiB: the M-Claude log, then one tool result line after another (each
 * 1 MiB of text, so the model stays small while every byte must still be read), then the
 * log's last records.
 */
export async function writeHugeLog(path: string, gb: number): Promise<number> {
  const records = claudeRecords();
  const user = records.find(
    (r) =>
      Array.isArray((r['message'] as { content?: unknown } | undefined)?.content) &&
      (r['message'] as { content: Array<Record<string, unknown>> }).content.some((b) => b['type'] === 'tool_result'),
  )!;
  const line = Buffer.from(
    JSON.stringify({
      ...user,
      message: {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_none', content: 'q'.repeat((1 << 20) - 300) }],
      },
    }) + '\n',
  );
  const count = Math.ceil((gb * 2 ** 30) / line.length);
  function* parts(): Generator<string | Uint8Array> {
    yield jsonl(records.slice(0, 60));
    for (let i = 0; i < count; i++) yield line;
    yield jsonl(records.slice(60));
  }
  return writeLines(path, parts());
}

/** A canonical trace of `n` sub-agents, each the child of the one before: a chain 20,000 deep. */
export async function writeSubagentChain(path: string, n = 20_000): Promise<number> {
  function* parts(): Generator<string> {
    yield JSON.stringify({
      type: 'header',
      format: 'agent-trace',
      version: 1,
      generator: 'hostile corpus',
      source: null,
    }) + '\n';
    yield JSON.stringify({
      type: 'session',
      id: 'main',
      parentId: null,
      parentToolCallId: null,
      role: 'main',
      agent: { name: 'a', version: null },
    }) + '\n';
    yield JSON.stringify({
      type: 'llm_call',
      session: 'main',
      id: 'c0',
      model: 'm',
      startMs: 0,
      endMs: 1,
      tokens: { input: 10, cached: 0, appended: 10, output: 1 },
    }) + '\n';
    for (let i = 1; i <= n; i++) {
      const parent = i === 1 ? 'main' : `sub-${i - 1}`;
      yield JSON.stringify({
        type: 'session',
        id: `sub-${i}`,
        parentId: parent,
        parentToolCallId: null,
        role: 'subagent',
        agent: { name: 'a', version: null },
      }) + '\n';
      yield JSON.stringify({
        type: 'llm_call',
        session: `sub-${i}`,
        id: `s${i}`,
        model: 'm',
        startMs: i,
        endMs: i + 1,
        tokens: { input: 10, cached: 5, appended: 5, output: 1 },
      }) + '\n';
    }
  }
  return writeLines(path, parts());
}

/** An ATIF trajectory whose sub-agent trajectories nest `n` deep (each embedded in the one before). */
export function atifNested(n: number): string {
  const step = (i: number): string =>
    `{"step_id":1,"source":"agent","message":"step ${i}","metrics":{"prompt_tokens":10,"completion_tokens":1}}`;
  let text = '';
  for (let i = 0; i < n; i++)
    text += `{"schema_version":"ATIF-v1.7","session_id":"s${i}","agent":{"name":"a","version":"1"},"steps":[${step(i)}],"subagent_trajectories":[`;
  text += ']}'.repeat(n);
  return `{"schema_version":"ATIF-v1.7","session_id":"root","agent":{"name":"a","version":"1"},"steps":[${step(-1)}],"subagent_trajectories":[${text}]}\n`;
}

/**
 * A Claude Code session with sub-agent "logs" that are not what their names say: a
 * folder named agent-dir.jsonl, a FIFO (reading it would wait for a writer forever), a
 * link to a file outside the session's folder, a link that stays inside, and `n`
 * real one-line logs (20,000 by default). Returns the session log's path.
 */
export function writeTrickyCompanions(dir: string, n = 20_000, outside = '/etc/passwd'): string {
  const records = claudeRecords().slice(0, 40);
  const log = join(dir, 'session.jsonl');
  writeFileSync(log, jsonl(records));
  const sub = join(dir, 'session/subagents');
  mkdirSync(join(sub, 'agent-dir.jsonl'), { recursive: true });
  execFileSync('mkfifo', [join(sub, 'agent-fifo.jsonl')]);
  symlinkSync(outside, join(sub, 'agent-outside.jsonl'));
  const one = (i: number): string =>
    JSON.stringify({
      type: 'assistant',
      isSidechain: true,
      agentId: `a${i}`,
      sessionId: records.find((r) => typeof r['sessionId'] === 'string')!['sessionId'],
      message: {
        id: `msg_sub_${i}`,
        model: 'm',
        usage: { input_tokens: 1, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
        content: [],
      },
      timestamp: '2026-01-01T22:40:00.000Z',
    }) + '\n';
  writeFileSync(join(sub, 'agent-a0.jsonl'), one(0));
  symlinkSync('agent-a0.jsonl', join(sub, 'agent-link-inside.jsonl'));
  for (let i = 1; i <= n; i++) writeFileSync(join(sub, `agent-a${i}.jsonl`), one(i));
  return log;
}

/** Writes the small cases into `dir` (the committed fixture folder by default). */
export function writeSmallCases(dir = HOSTILE_DIR): string[] {
  mkdirSync(dir, { recursive: true });
  return smallCases().map((c) => {
    writeFileSync(join(dir, c.name), c.bytes);
    return c.name;
  });
}

if (require.main === module && process.argv[2] === 'write') {
  for (const name of writeSmallCases()) console.log(join('test/fixtures/hostile', name));
}
