import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { entropyFindings, looksRandom, wordiness } from '../../../../src/core/redact/entropyRules';
import { gitleaksFindings, KEYWORDS } from '../../../../src/core/redact/gitleaksRules';
import { KeywordIndex } from '../../../../src/core/redact/keywordIndex';
import { ownFindings } from '../../../../src/core/redact/ownRules';
import { privateKeyFindings } from '../../../../src/core/redact/privateKeys';
import { Redactor } from '../../../../src/core/redact/redactor';
import { decodedBlobs, joinedPieces, originalSpan } from '../../../../src/core/redact/views';
import { repoRoot } from '../../../support/workspace.mjs';

// The defects of issue 23's redaction part, each as a case: expected spans and kinds are
// worked out from the input (where the key's markers are, what the provider's documented
// prefix is), not read from the redactor's output.

/** Deterministic base64 text (not a key: the detectors read structure, not ASN.1). */
function base64Line(seed: number, length = 64): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let x = seed;
  let out = '';
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += alphabet[(x >>> 16) % 64];
  }
  return out;
}
const BODY = [base64Line(1), base64Line(2), base64Line(3), base64Line(4).slice(0, 24)];

/** Every finding as "kind:text". */
function found(detect: (t: string) => Array<{ kind: string; start: number; end: number }>, text: string): string[] {
  return detect(text).map((f) => `${f.kind}:${text.slice(f.start, f.end)}`);
}

/** The core redactor (no secretlint: that one is tested through the CLI). */
const core = (): Redactor => new Redactor([], 'core');

describe('private keys', () => {
  for (const label of [
    'EC PRIVATE KEY',
    'RSA PRIVATE KEY',
    'PRIVATE KEY',
    'ENCRYPTED PRIVATE KEY',
    'OPENSSH PRIVATE KEY',
    'DSA PRIVATE KEY',
    'PGP PRIVATE KEY BLOCK',
  ]) {
    it(`are found as shown by Claude Code's Read tool (line numbers before each line): ${label}`, () => {
      const lines = [`-----BEGIN ${label}-----`, ...BODY, `-----END ${label}-----`];
      const text = lines.map((l, i) => `${String(i + 1).padStart(6)}→${l}`).join('\n') + '\n';
      const start = text.indexOf('-----BEGIN');
      const end = text.indexOf(`-----END ${label}-----`) + `-----END ${label}-----`.length;
      assert.deepEqual(privateKeyFindings(text), [{ kind: 'private-key', start, end }]);
    });
  }

  it('are found with `\\n` escapes left in (a key inside a string inside a file) and as cat -n prints them', () => {
    const escaped = `key = "-----BEGIN EC PRIVATE KEY-----\\n${BODY.join('\\n')}\\n-----END EC PRIVATE KEY-----\\n"`;
    assert.equal(
      found(privateKeyFindings, escaped)[0],
      `private-key:${escaped.slice(escaped.indexOf('-----BEGIN'), escaped.indexOf('-----END EC PRIVATE KEY-----') + 28)}`,
    );
    const catN = ['-----BEGIN OPENSSH PRIVATE KEY-----', ...BODY, '-----END OPENSSH PRIVATE KEY-----']
      .map((l, i) => `     ${i + 1}\t${l}`)
      .join('\n');
    assert.equal(privateKeyFindings(catN).length, 1);
  });

  it('cut before the END line (a Read with a line limit) are still found, up to the last body line', () => {
    const text = [
      '     1→-----BEGIN EC PRIVATE KEY-----',
      `     2→${BODY[0]}`,
      `     3→${BODY[1]}`,
      '',
      'The file continues past the read limit.',
    ].join('\n');
    const end = text.indexOf(BODY[1]!) + BODY[1]!.length;
    assert.deepEqual(privateKeyFindings(text), [{ kind: 'private-key', start: text.indexOf('-----BEGIN'), end }]);
  });

  it('SSH2 and PuTTY forms are found; markers without a body (code that looks for them) are not', () => {
    const ssh2 = `---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n${BODY.join('\n')}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----`;
    assert.deepEqual(privateKeyFindings(ssh2), [{ kind: 'private-key', start: 0, end: ssh2.length }]);
    const putty = `PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n${BODY[0]}\nPrivate-MAC: 0123456789abcdef0123456789abcdef`;
    assert.deepEqual(privateKeyFindings(putty), [{ kind: 'private-key', start: 0, end: putty.length }]);
    assert.deepEqual(
      privateKeyFindings(
        'if line.startswith("-----BEGIN EC PRIVATE KEY-----"):\n    return parse(line)\n# -----END EC PRIVATE KEY-----',
      ),
      [],
    );
  });

  it('leave no body line in a redacted Claude Code Read result', async () => {
    const content = ['-----BEGIN EC PRIVATE KEY-----', ...BODY, '-----END EC PRIVATE KEY-----']
      .map((l, i) => `${String(i + 1).padStart(6)}→${l}`)
      .join('\n');
    const line = JSON.stringify({
      type: 'user',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content }] },
    });
    const [out] = await core().redactJsonTexts([line]);
    for (const body of BODY) assert.ok(!out!.includes(body), body);
    assert.match(out!, /\[REDACTED:private-key#1\]/);
  });
});

describe('assignments inside JSON arguments', () => {
  it('a NAME_TOKEN=value right after a rejected `"cmd":"` is still found (the value is read only after the name passed)', () => {
    const args = '{"cmd":"SENTRY_TOKEN=f3a9c2b7e1d4a8f6c0b5 ./deploy.sh","workdir":"/repo"}';
    assert.deepEqual(
      found(ownFindings, args).filter((f) => f.startsWith('env-assignment')),
      ['env-assignment:f3a9c2b7e1d4a8f6c0b5'],
    );
  });
});

describe('precision on names that describe a secret', () => {
  it('leaves the two benign strings of the issue, and names ending in path, file, name, url or id', async () => {
    const benign = [
      'secret_name: my-app-secrets',
      'private_key_path: ~/.ssh/id_ed25519',
      'TOKEN_FILE=/run/secrets/token',
      'token_url: https://auth.example.com/oauth/token',
      'api_key_id: 12345678-aaaa',
    ];
    const out = await core().redactJsonTexts(benign.map((b) => JSON.stringify({ t: b })));
    assert.deepEqual(
      out.map((o) => (JSON.parse(o) as { t: string }).t),
      benign,
    );
  });

  it('still takes the value of a name that holds a secret', () => {
    assert.deepEqual(found(ownFindings, 'secret_key: 9fQ2xL7pR4vT8mK3'), ['env-assignment:9fQ2xL7pR4vT8mK3']);
    assert.deepEqual(found(ownFindings, 'DB_PASSWORD=correcthorsebattery'), ['env-assignment:correcthorsebattery']);
  });

  it('leaves code names, dates, URL queries and shell references after a secret-sounding name', () => {
    for (const text of [
      'tokenMint: SUBSCRIPTION_TOKEN_MINT,',
      'const tokenVault = getAssociatedTokenAddressSync(',
      'PasswordLastSet  : 11/15/2025',
      'feed.php?ident=id&passwd=pwd&ot=0&peid=3004878',
      'let api_token = std::env::var("X")',
      'ENV CONTROL_TOKEN=replace-me',
    ]) {
      assert.deepEqual(
        found(ownFindings, text).filter((f) => f.startsWith('env-assignment')),
        [],
        text,
      );
    }
    assert.deepEqual(found(ownFindings, 'https://oauth2:${GITLAB_TOKEN}@gitlab.com/x.git'), []);
  });
});

describe("gitleaks' rule set", () => {
  // Providers' documented prefixes and lengths, with made-up random parts.
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const hex = (n: number, seed = 7): string =>
    [...base64Line(seed, n)].map((c) => '0123456789abcdef'[B64.indexOf(c) % 16]).join('');
  const alnum = (n: number, seed = 9): string =>
    base64Line(seed, n * 2)
      .replace(/[^A-Za-z0-9]/g, '')
      .slice(0, n);
  const cases: Array<[string, string]> = [
    ['pypi-upload-token', `pypi-AgEIcHlwaS5vcmc${alnum(60)}`],
    ['digitalocean-pat', `dop_v1_${hex(64)}`],
    ['digitalocean-access-token', `doo_v1_${hex(64)}`],
    ['twilio-api-key', `SK${hex(32)}`],
    ['doppler-api-token', `dp.pt.${alnum(43).toLowerCase()}`],
    ['sentry-user-token', `sntryu_${hex(64)}`],
    ['planetscale-api-token', `pscale_tkn_${alnum(43)}`],
    ['pulumi-api-token', `pul-${hex(40)}`],
    ['postman-api-token', `PMAK-${hex(24)}-${hex(34)}`],
    ['heroku-api-key-v2', `HRKU-AA${alnum(58)}`],
    ['aws-amazon-bedrock-api-key-long-lived', `ABSK${alnum(132)}`],
    ['gitlab-deploy-token', `gldt-${alnum(20)}`],
    ['gitlab-runner-authentication-token', `glrt-${alnum(20)}`],
    ['gitlab-feed-token', `glft-${alnum(20)}`],
    ['stripe-access-token', `sk_prod_${alnum(24)}`],
    ['stripe-access-token', `rk_prod_${alnum(24, 11)}`],
    ['vault-service-token', `s.${alnum(24).toLowerCase()}`],
  ];
  for (const [kind, secret] of cases) {
    it(`finds ${kind}`, () => {
      const text = `deploy with ${secret} then exit`;
      assert.ok(
        found(gitleaksFindings, text).includes(`${kind}:${secret}`),
        `${kind}: ${found(gitleaksFindings, text).join(', ')}`,
      );
    });
  }

  it('runs a semi-generic rule at its keyword and takes only the secret (sentry: 64 hex after the name)', () => {
    const secret = hex(64);
    assert.deepEqual(
      found(gitleaksFindings, `SENTRY_TOKEN=${secret}`).filter((f) => f.startsWith('sentry')),
      [`sentry-access-token:${secret}`],
    );
  });

  it('keeps gitleaks allowlists: a placeholder value is not a secret', () => {
    assert.deepEqual(found(gitleaksFindings, 'api_key = "${API_KEY}"'), []);
  });
});

describe('provider tokens that gitleaks reads only after its keyword', () => {
  // Made-up values in each provider's documented form; bare, in a sentence, with no name before them.
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const hex = (n: number, seed = 13): string =>
    [...base64Line(seed, n)].map((c) => '0123456789abcdef'[B64.indexOf(c) % 16]).join('');
  const alnum = (n: number, seed = 15): string =>
    base64Line(seed, n * 2)
      .replace(/[^A-Za-z0-9]/g, '')
      .slice(0, n);
  const tokens = [
    `key-${hex(32)}`,
    `pubkey-${hex(32)}`,
    `${hex(32)}-us18`,
    `NRJS-${hex(19)}`,
    `NRII-${hex(32)}`,
    `access-production-${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`,
    `squ_${alnum(40)}`,
    `test_pub_${hex(31)}`,
    `live_${hex(35)}`,
    `pat${alnum(14)}.${hex(64)}`,
    `1308742762612587|${alnum(27)}`,
    `${'A'.repeat(22)}${alnum(90)}`,
  ];
  for (const token of tokens) {
    it(`takes ${token.slice(0, 12)}…`, () => {
      const text = `the value ${token} was accepted`;
      assert.deepEqual(
        found(ownFindings, text).filter((f) => f.startsWith('provider-token')),
        [`provider-token:${token}`],
      );
    });
  }
  it('leaves a hash, a UUID and a hex run with a longer suffix', () => {
    for (const text of [
      `commit ${hex(40)}`,
      `id ${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`,
      `${hex(32)}-usage`,
      `monkey-${hex(32)}`,
    ]) {
      assert.deepEqual(
        found(ownFindings, text).filter((f) => f.startsWith('provider-token')),
        [],
        text,
      );
    }
  });
});

describe('Discord webhooks', () => {
  it('lose their token', () => {
    const token = base64Line(5, 68).replace(/[+/]/g, '_');
    assert.deepEqual(
      found(ownFindings, `curl https://discord.com/api/webhooks/123456789012345678/${token}`).filter((f) =>
        f.startsWith('discord'),
      ),
      [`discord-webhook:${token}`],
    );
  });
});

describe('entropy rules', () => {
  it('take a random token bare (in a path, a query, a sentence) and after a keyword', () => {
    const key = 'q7Xk2mP9vR4tL8wN3zB6yH1c';
    for (const text of [
      `cat /srv/app/${key}/config.yml`,
      `https://x.example.com/v1?ref=${key}&page=2`,
      `the value ${key} was accepted`,
    ]) {
      assert.ok(
        entropyFindings(text).some((f) => text.slice(f.start, f.end).includes(key)),
        text,
      );
    }
    assert.deepEqual(found(entropyFindings, 'my token is 3f9a1c7e5b2d8f4a6c0e9b1d7a3f5c8e'), [
      'keyword-entropy:3f9a1c7e5b2d8f4a6c0e9b1d7a3f5c8e',
    ]);
  });

  it('leave names, ids, hashes and public keys', () => {
    for (const token of [
      'Win32_OperatingSystem',
      'PlaywrightDownload',
      'tmpclaude-8f62-cwd',
      'toolu_01REq16BWafxpmPTLWV6wncF',
      'tooluse_FDLQkx1JRHyCEk7CSwChVA__vscode-1767369314705',
      'gen-1746001974-alxKxkQSJ8j9QsfNTvnX',
      'dccb368a-ae08-48db-9563-9415e327bb90',
      '2KW2XRd9kwqet15Aha2oK3tYvd3nWbTFH1MBiRAv1BE1',
      '8D357AFBEA94CD48BC1982CCBDDE13F749C6CF8A',
    ]) {
      assert.equal(looksRandom(token), false, token);
    }
    assert.deepEqual(
      found(
        entropyFindings,
        '**Public Key:** `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGjZ0BxASfhkkjW9BNzyUgxqlWueK0KVOMLpa71KcygP`',
      ),
      [],
    );
    assert.deepEqual(found(entropyFindings, '{"x-request-id", "GJOGAOf-hoLS20MAABCM"}'), []);
  });

  it('score English letter pairs high and random ones low', () => {
    assert.ok(wordiness('getAssociatedTokenAddress') > 0.6);
    assert.ok(wordiness('ehvtcytsgpzhyaaqxvkz') < 0.3);
  });
});

describe('views', () => {
  it('join a value wrapped across lines and map it back over the break', () => {
    const text = `export GITHUB_TOKEN=ghp_${'a1B2c3D4e5F6g7H8i9J0'}\n${'k1L2m3N4o5P6q7'}\nls`;
    const [piece] = joinedPieces(text);
    assert.ok(piece!.text.includes('ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7'));
    const at = piece!.text.indexOf('ghp_');
    assert.deepEqual(originalSpan(piece!, at, at + 38), [text.indexOf('ghp_'), text.indexOf('k1L2m3N4o5P6q7') + 14]);
  });

  it('decode base64 blobs that hold text, and skip those that do not', () => {
    const blob = Buffer.from('GITHUB_TOKEN=ghp_0123456789abcdefghij0123456789abcdef\n').toString('base64');
    assert.deepEqual(
      decodedBlobs(`echo ${blob} | base64 -d`).map((b) => b.text),
      ['GITHUB_TOKEN=ghp_0123456789abcdefghij0123456789abcdef\n'],
    );
    const binary = Buffer.from(Array.from({ length: 60 }, (_, i) => (i * 37) % 256)).toString('base64');
    assert.deepEqual(decodedBlobs(binary), []);
  });

  it('decode a blob whose first 48 bytes hold no control byte, and skip one whose first 48 hold one', () => {
    // By hand: the first 64 characters decode to 48 bytes, of which a fiftieth (0.96) may be
    // other than text: none. The whole blob (100 bytes) may hold two.
    const text = (controls: number[]): Buffer =>
      Buffer.from(Array.from({ length: 100 }, (_, i) => (controls.includes(i) ? 0x01 : 0x61 + (i % 26))));
    const blobOf = (controls: number[]): string => text(controls).toString('base64');
    assert.equal(decodedBlobs(blobOf([])).length, 1);
    assert.equal(decodedBlobs(blobOf([60])).length, 1);
    assert.equal(decodedBlobs(blobOf([60, 70])).length, 1);
    assert.equal(decodedBlobs(blobOf([60, 70, 80])).length, 0);
    assert.equal(decodedBlobs(blobOf([47])).length, 0);
    assert.equal(decodedBlobs(blobOf([0])).length, 0);
    assert.equal(decodedBlobs(blobOf([48])).length, 1);
    // URL-safe, unpadded: the same bytes.
    assert.deepEqual(
      decodedBlobs(text([60]).toString('base64url')).map((b) => b.text),
      [text([60]).toString('latin1')],
    );
  });

  it('read decoded bytes as text only when they are UTF-8: random ids are not, accented and emoji text is', () => {
    // 10,000 ids of Claude's shape (`toolu_01` + 22 letters and digits: 30 base64 characters,
    // 22 bytes). By hand, a random byte is printable ASCII or a tab or line end with
    // probability 98/256, and a random byte sequence is almost never well-formed UTF-8 beyond
    // that, so an id reads as text about once in 10^9 (counting only control bytes, as
    // before, let 226/256 of the bytes pass: about one id in sixteen).
    let x = 11;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const id = (): string =>
      `toolu_01${Array.from({ length: 22 }, () => {
        x = (x * 1103515245 + 12345) % 2147483648;
        return alphabet[(x >>> 16) % 62];
      }).join('')}`;
    const ids = Array.from({ length: 10_000 }, id);
    assert.equal(decodedBlobs(ids.join('\n\n')).length, 0);

    const secret = 'GITHUB_TOKEN=ghp_0123456789abcdefghij0123456789abcdef';
    for (const text of [`Passwort für die Übung: ${secret} ✓ 🔑\n`, `${'é'.repeat(30)}${secret}`]) {
      const blob = Buffer.from(text, 'utf8').toString('base64');
      assert.deepEqual(
        decodedBlobs(blob).map((b) => b.text),
        [Buffer.from(text, 'utf8').toString('latin1')],
        text,
      );
    }
    // Latin-1 (é as the lone byte 0xE9): each is not UTF-8. 100 bytes may hold two.
    const latin1 = (accents: number): string =>
      Buffer.from(
        `${secret}${'x'.repeat(100 - secret.length - accents * 2)}${' \u00e9'.repeat(accents)}`,
        'latin1',
      ).toString('base64');
    assert.equal(Buffer.from(latin1(2), 'base64').length, 100);
    assert.equal(decodedBlobs(latin1(2)).length, 1);
    assert.equal(decodedBlobs(latin1(3)).length, 0);
  });

  it("read a UTF-8 character cut at the first 48 bytes' end as text, and one cut at the blob's end as not", () => {
    // € is three bytes (E2 82 AC): at bytes 47–49 it crosses the end of the first 64 characters.
    const bytes = Buffer.concat([Buffer.from('a'.repeat(47)), Buffer.from('€'), Buffer.from('b'.repeat(50))]);
    assert.equal(decodedBlobs(bytes.toString('base64')).length, 1);
    // Without its last byte, at the blob's end: one byte in 49 is not text (0.98 allowed).
    const cut = Buffer.concat([Buffer.from('a'.repeat(47)), Buffer.from('€').subarray(0, 2)]);
    assert.equal(decodedBlobs(cut.toString('base64')).length, 0);
    // The same with 50 bytes before it: one in 102 (2.04 allowed).
    const longer = Buffer.concat([Buffer.from('a'.repeat(100)), Buffer.from('€').subarray(0, 2)]);
    assert.equal(decodedBlobs(longer.toString('base64')).length, 1);
  });

  it('let the redactor remove a base64-encoded token and a wrapped one', async () => {
    const token = 'ghp_R4nD0mT0k3nV4lu3Xy9Zq8Wp7Vo6Un5Tm4S';
    const blob = Buffer.from(`GITHUB_TOKEN=${token}\n`).toString('base64');
    const [b64, wrapped] = await core().redactJsonTexts([
      JSON.stringify({ t: `echo ${blob} | base64 -d` }),
      JSON.stringify({ t: `${token.slice(0, 20)}\n${token.slice(20)}\n` }),
    ]);
    assert.equal((JSON.parse(b64!) as { t: string }).t, 'echo [REDACTED:base64#1] | base64 -d');
    assert.ok(!wrapped!.includes(token.slice(0, 12)) && !wrapped!.includes(token.slice(20)), wrapped);
  });
});

describe('keyword index', () => {
  it('finds every occurrence, overlapping and case folded, as indexOf would', () => {
    const keywords = ['sk', 'ghp_', 'key', 'ke', 'api'];
    const text = 'SK ghp_ APIKEY keys sks skSK Api_key ke';
    const expected: string[] = [];
    const lower = text.toLowerCase();
    keywords.forEach((k, i) => {
      for (let at = lower.indexOf(k); at !== -1; at = lower.indexOf(k, at + 1)) expected.push(`${i}@${at}`);
    });
    const got: string[] = [];
    new KeywordIndex(keywords).scan(text, (k, at) => got.push(`${k}@${at}`));
    assert.deepEqual(got.sort(), expected.sort());
  });

  /** Every occurrence by indexOf over the text with only its ASCII letters folded (what the index folds). */
  function byIndexOf(keywords: readonly string[], text: string): string[] {
    const folded = text.replace(/[A-Z]/g, (c) => c.toLowerCase());
    const out: string[] = [];
    keywords.forEach((k, i) => {
      const key = k.toLowerCase();
      for (let at = folded.indexOf(key); at !== -1; at = folded.indexOf(key, at + 1)) out.push(`${i}@${at}`);
    });
    return out.sort();
  }
  const scanned = (index: KeywordIndex, text: string): string[] => {
    const got: string[] = [];
    index.scan(text, (k, at) => got.push(`${k}@${at}`));
    return got.sort();
  };

  it("gitleaks' own keywords over every real sample: what indexOf finds", () => {
    gitleaksFindings('');
    assert.ok(KEYWORDS.length > 200, `${KEYWORDS.length} keywords`);
    const index = new KeywordIndex(KEYWORDS);
    const root = path.join(repoRoot, 'test', 'fixtures');
    let hits = 0;
    const walk = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (fs.statSync(p).size < 1 << 20) {
          const text = fs.readFileSync(p, 'utf8');
          const expected = byIndexOf(KEYWORDS, text);
          assert.deepEqual(scanned(index, text), expected, p);
          hits += expected.length;
        }
      }
    };
    walk(root);
    assert.ok(hits > 1000, `${hits} keyword hits`);
  });

  it('an automaton too large for 16-bit states (thousands of long keywords) finds the same', () => {
    let x = 3;
    const letter = (): string => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return 'abcdefghijklmnopqrstuvwxyz0123456789'[(x >>> 16) % 36]!;
    };
    const keywords = Array.from({ length: 3000 }, () => Array.from({ length: 24 }, letter).join(''));
    const index = new KeywordIndex(keywords);
    assert.ok(index.size * 37 > 65536, `${index.size} states`);
    const text = `${keywords[5]!.toUpperCase()} é ${keywords[17]}${keywords[17]!.slice(0, 10)} ${Array.from({ length: 5000 }, letter).join('')} ${keywords[2999]}`;
    const expected = byIndexOf(keywords, text);
    assert.ok(expected.length >= 3);
    assert.deepEqual(scanned(index, text), expected);
  });
});
