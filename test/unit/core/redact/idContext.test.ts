import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { idContextAt, TraceIds } from '../../../../src/core/redact/idContext';
import { Redactor } from '../../../../src/core/redact/redactor';
import { strictFindings } from '../../../../src/core/redact/strictRules';

// Default redaction takes bare values of an id's shape (hex, UUIDs, long numbers) unless the
// trace explains them as ids. The secrets below are gitleaks' rule test cases
// (test/fixtures/gitleaks-cases, MIT): a Heroku API key is a v4 UUID, a Facebook secret 32
// hex digits, an Asana client id 16 digits. Every expectation is reasoned in its comment.

const core = (mode: 'default' | 'strict' = 'default'): Redactor => new Redactor([], 'core', { mode });
const HEROKU = '832d2129-a846-4e27-99f4-7004b6ad53ef'; // gitleaks' heroku-api-key case: a v4 UUID
const FACEBOOK = 'f424ae6eca4d738e62dce600978582cb'; // gitleaks' facebook-secret case: 32 hex digits
const SESSION = '4217662e-98af-48eb-b641-b260c6a6e985'; // a v4 UUID, the same shape as HEROKU

/** A Claude Code line: a tool result with `text`, in session `sessionId`. */
function toolResult(text: string, sessionId = 'b0000000-0000-4000-8000-000000000001'): string {
  return JSON.stringify({
    type: 'user',
    sessionId,
    uuid: 'b0000000-0000-4000-8000-000000000002',
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: text }] },
  });
}

/** The tool result's text after redaction. */
function content(line: string): string {
  return (JSON.parse(line) as { message: { content: Array<{ content: string }> } }).message.content[0]!.content;
}

describe("default redaction: bare values of an id's shape", () => {
  it('takes a Heroku key (a UUID) and a Facebook secret (32 hex) bare, in the four bare contexts of the bench', async () => {
    // Nothing in these lines declares the values or stands before them as an id's context:
    // a folder of a path, a URL query value under `ref`, a sentence, a neutral name.
    const texts = [
      `cat /srv/app/releases/${HEROKU}/config.yml`,
      `curl -s "https://api.example.com/v1/items?ref=${FACEBOOK}&page=2"`,
      `I checked it and the value ${HEROKU} was accepted by the server.`,
      `item = "${FACEBOOK}"`,
    ];
    const out = (await core().redactJsonTexts(texts.map((t) => toolResult(t)))).map(content);
    assert.deepEqual(out, [
      'cat /srv/app/releases/[REDACTED:strict-uuid#1]/config.yml',
      'curl -s "https://api.example.com/v1/items?ref=[REDACTED:strict-hex#1]&page=2"',
      'I checked it and the value [REDACTED:strict-uuid#1] was accepted by the server.',
      'item = "[REDACTED:strict-hex#1]"',
    ]);
  });

  it('leaves a UUID the trace declares as its sessionId, in a path; takes the same shape undeclared', async () => {
    // SESSION is this trace's sessionId (line 1); HEROKU has the same shape but no line declares it.
    const lines = [
      toolResult('started', SESSION),
      toolResult(`ls /srv/sessions/${SESSION}/ /srv/sessions/${HEROKU}/`, SESSION),
    ];
    const [, second] = await core().redactJsonTexts(lines);
    assert.equal(content(second!), `ls /srv/sessions/${SESSION}/ /srv/sessions/[REDACTED:strict-uuid#1]/`);
    // Strict mode takes both (the trace's own sessionId field stays: its key names an id).
    const [, strict] = await core('strict').redactJsonTexts(lines);
    assert.equal(
      content(strict!),
      'ls /srv/sessions/[REDACTED:strict-uuid#1]/ /srv/sessions/[REDACTED:strict-uuid#2]/',
    );
    assert.equal((JSON.parse(strict!) as { sessionId: string }).sessionId, SESSION);
  });

  it("leaves commit hashes in git's output forms; takes the same hex in a sentence", async () => {
    const a = '7a23400eab5017830cb5bc748a35610891e2469e';
    const b = '5fa24238937a5471a9d7edef01a65fd48e632bd8';
    const log = `commit ${a}\nAuthor: M <m@example.org>\n\n    fix\n\ngit diff ${a}..${b}\nhttps://github.com/o/r/blob/${b}/src/x.ts`;
    const [out] = await core().redactJsonTexts([toolResult(log)]);
    // The e-mail address is taken by its own rule; both hashes stay (after `commit `, around `..`, after `/blob/`).
    assert.equal(content(out!), log.replace('m@example.org', '[REDACTED:email#1]'));
    const [prose] = await core().redactJsonTexts([
      toolResult(`the value ${FACEBOOK}${FACEBOOK.slice(0, 8)} was accepted`),
    ]);
    assert.equal(content(prose!), 'the value [REDACTED:strict-hex#1] was accepted');
  });

  it("reads a value as an id everywhere once the trace shows it in an id's context anywhere, before or after", async () => {
    // Line 1 names the GUID bare in a sentence; line 2 shows it in braces (a registry key): it is an id in both.
    const guid = 'D6886603-9D2F-4EB2-B667-1971041FA96B';
    const lines = [
      toolResult(`NGC Credential Provider (${guid}) is active`),
      toolResult(`Credential Providers\\{${guid}}`),
    ];
    const out = await core().redactJsonTexts(lines);
    assert.deepEqual(out, lines);
  });

  it('takes ids of other traces it never declares: a v4 UUID as a folder, unless a file name or a name says id', async () => {
    const other = 'ab454957-7a00-4f51-bbef-edab48892c60';
    const [out] = await core().redactJsonTexts([
      toolResult(`-rw-r--r-- 1 m 23100 Dec 12 ${other}.jsonl\n"parentUuid":"${HEROKU}"\nmv /tmp/${other}/ /x`),
    ]);
    // `<uuid>.jsonl` is a file name, `"parentUuid":"` names an id: both make the value an id for the whole trace.
    assert.equal(
      content(out!),
      `-rw-r--r-- 1 m 23100 Dec 12 ${other}.jsonl\n"parentUuid":"${HEROKU}"\nmv /tmp/${other}/ /x`,
    );
  });

  it('leaves a nanosecond timestamp after a time field; takes a 16-digit id in a URL query', async () => {
    // 1783709313394819000 ns = 2026-07-10T18:48:33Z; 2010841243844626 (gitleaks' asana-client-id case) after `ref=`, no time word.
    const text = `"created_time_ns": 1783709313394819000, see https://app.asana.com/x?ref=2010841243844626&a=1`;
    const [out] = await core().redactJsonTexts([toolResult(text)]);
    assert.equal(
      content(out!),
      `"created_time_ns": 1783709313394819000, see https://app.asana.com/x?ref=[REDACTED:strict-number#1]&a=1`,
    );
  });
});

describe('the id contexts, one by one', () => {
  /** The reason idContextAt gives for the one shape finding in `text`. */
  const reason = (text: string): string | null => {
    const [f] = strictFindings(text);
    assert.ok(f, text);
    return idContextAt(text, f.start, f.end, f.kind);
  };

  it('names each context', () => {
    assert.equal(reason('commit 7a23400eab5017830cb5bc748a35610891e2469e'), 'git');
    assert.equal(reason(`root=UUID=${SESSION} rw`), 'named id');
    assert.equal(reason(`\\"uuid\\":\\"${SESSION}\\"`), 'named id');
    assert.equal(reason(`CHAT_LOGS/${SESSION}.jsonl`), 'file name');
    assert.equal(reason('backups/284b4d4b3c9220c5@v1'), 'file name'); // Claude Code's file-history backup name
    assert.equal(reason('target/debug/deps/edgerunner_core-c39b92f3645816ae'), 'name suffix');
    assert.equal(reason(`https://research.example.com/endpoint/${SESSION}/`), 'web address path');
    assert.equal(reason(`identifier {${SESSION}}`), 'braced GUID');
    // A v7 UUID: its first 48 bits are milliseconds since 1970, 0x019b76daa800 = 2026-01-01T00:00:00Z.
    assert.equal(reason('no sessions for project 019b76da-a800-7123-8456-0123456789ab'), 'time-based UUID');
    // The same digits as a v4 UUID: random by its version, nothing says id.
    assert.equal(reason('no sessions for project 019b76da-a800-4123-8456-0123456789ab'), null);
    assert.equal(reason('"last_book_time_ns": 1783709313394799000'), 'timestamp');
    // 1783709313394799000 without a time word: the size of a timestamp alone says nothing.
    assert.equal(reason('the value 1783709313394799000 was accepted'), null);
  });
});

describe('the ids a trace declares', () => {
  it('a declared id declares the id-shaped pieces inside it, and only those', () => {
    const ids = new TraceIds();
    const uuid = 'ab454957-7a00-4f51-bbef-edab48892c60';
    ids.add(`codex:${uuid}:0123456789abcdef`);
    ids.add('call_9f3a2b7c1d4e5f60718293a4');
    ids.add('tool-1234567890123456');
    // No 8 hex digits in a row: nothing inside it is id-shaped.
    ids.add('toolu_01XyZqWvRtPsMnLkJhGfDcBa');
    for (const piece of [uuid, '0123456789abcdef', '9f3a2b7c1d4e5f60718293a4', '1234567890123456'])
      assert.ok(ids.has(piece), piece);
    assert.ok(ids.has('toolu_01XyZqWvRtPsMnLkJhGfDcBa'));
    // Four declared values and four pieces (two, one, one, none).
    assert.equal(ids.size, 8);
    // Pieces stop at letters and digits on either side: 16 hex digits inside a longer run of letters are not one.
    const inside = new TraceIds();
    inside.add('zz0123456789abcdefzz');
    assert.equal(inside.size, 1);
  });

  it('reads id fields, numbers under id keys, JSON inside strings, OTLP attributes across pretty-printed lines, and file names', () => {
    const ids = new TraceIds();
    // Written out by hand: JSON.stringify would round the 19-digit number to a double.
    ids.learnJson(
      `{"sessionId":"${SESSION}","args":${JSON.stringify(JSON.stringify({ call_id: 'call_9f3a2b7c1d4e5f60718293a4' }))},"trace":{"span_id": 1234567890123456789}}`,
    );
    // An OTLP file read line by line: the attribute's name and its value are on different lines.
    for (const line of [
      '{',
      '  "key": "gen_ai.conversation.id",',
      '  "value": {',
      `    "stringValue": "${HEROKU}"`,
      '  }',
      '}',
    ])
      ids.learnJson(line);
    ids.learnFileName('ab454957-7a00-4f51-bbef-edab48892c60.jsonl');
    for (const v of [
      SESSION,
      'call_9f3a2b7c1d4e5f60718293a4',
      '1234567890123456789',
      HEROKU,
      'ab454957-7a00-4f51-bbef-edab48892c60',
    ])
      assert.ok(ids.has(v), v);
    // A value under a key that names no id is not declared.
    const other = new TraceIds();
    other.learnJson(JSON.stringify({ content: `the value ${SESSION}` }));
    assert.ok(!other.has(SESSION));
  });
});
