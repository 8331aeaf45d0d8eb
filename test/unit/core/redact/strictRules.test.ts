import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gitleaksFindings } from '../../../../src/core/redact/gitleaksRules';
import { ownFindings } from '../../../../src/core/redact/ownRules';
import { Redactor } from '../../../../src/core/redact/redactor';
import { isIdKey, strictFindings } from '../../../../src/core/redact/strictRules';
import { fixtures } from '../../../support/helpers';

// Secrets are gitleaks' rule test cases (test/fixtures/gitleaks-cases, MIT); benign strings
// are what the real sample traces of test/fixtures hold (the bench lists where). Each
// expectation is worked out by hand in the comment beside it.

/** The findings of `detect` in `text`, as [kind, the text found]. */
function found(
  detect: (text: string) => Array<{ kind: string; start: number; end: number }>,
  text: string,
): Array<[string, string]> {
  return detect(text).map((f) => [f.kind, text.slice(f.start, f.end)]);
}

describe('strict rules: the bare shapes default redaction leaves', () => {
  it('a UUID in a path (a Heroku API key) is taken whole', () => {
    assert.deepEqual(found(strictFindings, 'cat /srv/app/releases/fc568dc3-95e5-4bfc-1e4a-f119d9825df0/config.yml'), [
      ['strict-uuid', 'fc568dc3-95e5-4bfc-1e4a-f119d9825df0'],
    ]);
  });

  it('hex groups joined by dashes (a Mailgun signing key: 32 + 8 + 8) are one value', () => {
    assert.deepEqual(
      found(
        strictFindings,
        'I checked it and the value 0f98c3e33184ec4bf3bfdf4cbdb954fa-00001111-22223333 was accepted.',
      ),
      [['strict-hex', '0f98c3e33184ec4bf3bfdf4cbdb954fa-00001111-22223333']],
    );
  });

  it('a 16-digit number in a URL query (an Asana client id) is taken; a 13-digit millisecond time is not', () => {
    // 2010841243844626: 9 distinct digits over 16, entropy 2.70 bits, above the floor of a random 16-digit number (2.43).
    assert.deepEqual(found(strictFindings, 'curl -s "https://api.example.com/v1/items?ref=2010841243844626&page=2"'), [
      ['strict-number', '2010841243844626'],
    ]);
    assert.deepEqual(found(strictFindings, 'started at 1746001974123 and ended'), []);
  });

  it('a short random run in a path (a LinkedIn client id, 14 characters) is taken', () => {
    // Digits in four places, the class changes 7 times in 13 steps (0.54), entropy 3.38 bits (floor 3.21).
    assert.deepEqual(found(strictFindings, 'cat /srv/app/releases/2dho1s4souwn2i/config.yml'), [
      ['strict-short', '2dho1s4souwn2i'],
    ]);
  });

  it('a user:password pair standing alone is taken whole', () => {
    assert.deepEqual(
      found(strictFindings, 'I checked it and the value developer:yqDVtkqPECriaLRi was accepted by the server.'),
      [['strict-credential', 'developer:yqDVtkqPECriaLRi']],
    );
    assert.deepEqual(found(strictFindings, "curl -u 'johns:h0pk1ns~21s' https://example.com"), [
      ['strict-credential', 'johns:h0pk1ns~21s'],
    ]);
  });

  it('leaves what the real samples hold: CSS classes, image tags, shell defaults, citation marks, GPG key ids, agent ids, blobs, patterns', () => {
    for (const benign of [
      'className="text-red-500 hover:text-red-700 p-1"', // value without a digit-and-symbol or random mix
      'FROM rust:1.95-bookworm AS rust',
      '-H "x-spotter-hook-event: ${HOOK_EVENT:-PostToolUse}"', // a shell default, not a password
      'turn5search25', // the class changes 4 times in 12 steps (0.33)
      '**Subkey:** `rsa4096/0603BC876BB7E4B0` (Sign, Encrypt, Authenticate)', // upper-case hex of 16: a GPG key id
      'msg_0c1127beef27e0f7016a513ffabf008191b3cf4ecdd4ffc191', // an OpenAI message id
      'zqCd66wPZKDWDqQdcUf/pdquPOuBB+zTJeX6QTCznTv1+UTAg7tk0OHkhV0S1NY+', // a piece of a signature: its neighbours are random too
      'sidekiq cafebabe:deadbeef', // entropy 2.43 bits, under a random 16-hex string's floor (2.76)
      'localhost:8080 at 2024-01-15T10:30:00 on commit f8a2feeb',
    ]) {
      assert.deepEqual(found(strictFindings, benign), [], benign);
    }
  });

  it('a namespaced UUID gives the UUID, not a credential', () => {
    assert.deepEqual(found(strictFindings, 'codex:01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73'), [
      ['strict-uuid', '01a7c9e4-6d12-7b3a-9f42-8c6d5e1a0b73'],
    ]);
  });

  it('knows the keys that name an id', () => {
    for (const key of [
      'uuid',
      'parentUuid',
      'tool_use_id',
      'sessionId',
      'id',
      'call_id',
      'traceId',
      'commit_sha',
      'signature',
    ])
      assert.ok(isIdKey(key), key);
    for (const key of ['content', 'text', 'command', 'password', 'valid', 'paid']) assert.ok(!isIdKey(key), key);
  });
});

describe('strict mode in the redactor', () => {
  const line = JSON.stringify({
    uuid: 'b0000000-0000-4000-8000-000000000001',
    parentUuid: '4217662e-98af-48eb-b641-b260c6a6e985',
    message: {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01Bench',
          content: 'run 4217662e-98af-48eb-b641-b260c6a6e985 failed',
        },
      ],
    },
  });

  it("takes a UUID in a tool result but leaves the trace's own id fields; default mode leaves both", async () => {
    const [strict] = await new Redactor([], 'core', { mode: 'strict' }).redactJsonTexts([line]);
    const v = JSON.parse(strict!) as {
      uuid: string;
      parentUuid: string;
      message: { content: Array<{ content: string }> };
    };
    assert.equal(v.uuid, 'b0000000-0000-4000-8000-000000000001');
    assert.equal(v.parentUuid, '4217662e-98af-48eb-b641-b260c6a6e985');
    assert.equal(v.message.content[0]!.content, 'run [REDACTED:strict-uuid#1] failed');
    const [plain] = await new Redactor([], 'core').redactJsonTexts([line]);
    assert.equal(plain, line);
  });
});

describe('bare secrets default redaction now takes', () => {
  it('an Azure AD client secret as a path part or a URL query value', () => {
    assert.deepEqual(
      found(gitleaksFindings, 'cat /srv/app/releases/~Gg8Q~nVhlLi2vpg_nXBGqFsbGK-t~Hus1JmTa0y/config.yml'),
      [['azure-ad-client-secret', '~Gg8Q~nVhlLi2vpg_nXBGqFsbGK-t~Hus1JmTa0y']],
    );
    assert.deepEqual(
      found(
        gitleaksFindings,
        'curl -s "https://api.example.com/v1/items?ref=2Vq7Q~q5VgKljZ7cb3.0sp0Apz.vOjRIPyeTr&page=2"',
      ),
      [['azure-ad-client-secret', '2Vq7Q~q5VgKljZ7cb3.0sp0Apz.vOjRIPyeTr']],
    );
  });

  it('a Telegram bot token bare (bot id of 5 to 16 digits, `:A`, 34 more); not one whose id has 17 digits', () => {
    assert.deepEqual(
      found(ownFindings, 'the value 14261:An3iew14w2kavurx3stojppnwan5tbcovog was accepted').filter(
        ([k]) => k === 'provider-token',
      ),
      [['provider-token', '14261:An3iew14w2kavurx3stojppnwan5tbcovog']],
    );
    // gitleaks' own false positive: a bot id one digit too long.
    assert.deepEqual(
      found(ownFindings, 'the value 81353442440693903:A85tlrji59s4z31nm77yyd5fwf20o9uxlab was accepted').filter(
        ([k]) => k === 'provider-token',
      ),
      [],
    );
  });
});

describe('the gitleaks test corpus (test/fixtures/gitleaks-cases)', () => {
  it("holds only true positives: every Telegram secret is a token gitleaks' rule reads (bot id of 5 to 16 digits), none of its false positives", () => {
    const { cases } = JSON.parse(readFileSync(join(fixtures, 'gitleaks-cases/cases.json'), 'utf8')) as {
      cases: Array<{ rule: string; secret: string; line?: string }>;
    };
    const telegram = cases.filter((c) => c.rule === 'telegram-bot-api-token');
    assert.ok(telegram.length > 0);
    // gitleaks' fps for this rule: a 4-digit and a 17-digit bot id, XSD lines, `telegram_api_token = "…"` lines with text glued on.
    for (const c of telegram) assert.match(c.secret, /^[0-9]{5,16}:A[a-z0-9_-]{34}$/i, c.secret);
  });
});
