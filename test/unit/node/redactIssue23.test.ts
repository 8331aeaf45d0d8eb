import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import { createRedactor } from '../../../src/node/secretlintDetector';

// Issue 23's redaction defects, each through the redactor every export uses
// (createRedactor: the same entry point before and after the fix, so each case can be run
// against the old redactor and seen to fail). A real EC key is made for each run; the
// provider tokens are made-up values in each provider's documented form. What must be gone
// is worked out from the input (the key's body lines, the token), never read from the output.

/** A Claude Code line carrying a tool result whose text is `text`. */
function toolResult(text: string): string {
  return JSON.stringify({
    type: 'user',
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Issue23', content: text }] },
  });
}

/** A Codex line calling a shell tool with `args` as its JSON arguments. */
function functionCall(args: object): string {
  return JSON.stringify({
    type: 'response_item',
    payload: { type: 'function_call', name: 'shell', arguments: JSON.stringify(args), call_id: 'call_issue23' },
  });
}

/** Redacts each line as one export does. */
async function redact(lines: string[]): Promise<string[]> {
  return createRedactor().redactJsonTexts(lines);
}

/** Every JSON-decoded string of a line (tool arguments too), joined, so an escaped secret cannot hide. */
function decoded(line: string): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      out.push(v);
      if (v.startsWith('{')) {
        try {
          walk(JSON.parse(v));
        } catch {
          /* not JSON: the string itself is enough */
        }
      }
    } else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(JSON.parse(line));
  return out.join('\n');
}

/** Whether a 16-character stretch of `secret` is still in `text` (issue 23 counted a secret caught when it was gone). */
function leaks(text: string, secret: string): boolean {
  for (let i = 0; i + 16 <= secret.length; i++) if (text.includes(secret.slice(i, i + 16))) return true;
  return secret.length < 16 && text.includes(secret);
}

const pseudo = (seed: number, n: number, alphabet: string): string => {
  let x = seed;
  let out = '';
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += alphabet[(x >>> 16) % alphabet.length];
  }
  return out;
};
const hex = (n: number, seed = 3): string => pseudo(seed, n, '0123456789abcdef');
const alnum = (n: number, seed = 5): string =>
  pseudo(seed, n, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789');

describe('issue 23: an EC private key is redacted in every form', () => {
  const pem = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .privateKey.export({ type: 'sec1', format: 'pem' })
    .toString();
  const lines = pem.trimEnd().split('\n');
  const body = lines.filter((l) => !l.startsWith('-----'));
  const numbered = (ls: string[], sep: string): string =>
    ls.map((l, i) => `${String(i + 1).padStart(6)}${sep}${l}`).join('\n');
  const forms: Array<[string, string]> = [
    ['as a file printed by cat', toolResult(pem)],
    ["as Claude Code's Read tool shows it (`     1→` before each line)", toolResult(numbered(lines, '→'))],
    ['as cat -n prints it', toolResult(numbered(lines, '\t'))],
    [
      'with `\\n` escapes, inside a string inside a file that was read',
      toolResult(`{"service_account": {"private_key": "${lines.join('\\n')}\\n"}}`),
    ],
    ['as the content a tool was asked to write (JSON arguments)', functionCall({ path: 'key.pem', content: pem })],
    ['cut before its END line (a Read with a line limit)', toolResult(numbered(lines.slice(0, -1), '→'))],
  ];
  it('the key made for the test is an EC key in PEM (the label the old redactor never matched)', () => {
    assert.equal(lines[0], '-----BEGIN EC PRIVATE KEY-----');
    assert.ok(body.length >= 2);
  });
  for (const [form, line] of forms) {
    it(form, async () => {
      const [out] = await redact([line]);
      const text = decoded(out!);
      for (const b of body) assert.ok(!leaks(text, b), `body line left: ${b}`);
    });
  }
  it('base64-encoded on a command line', async () => {
    const blob = Buffer.from(pem).toString('base64');
    const [out] = await redact([toolResult(`echo ${blob} | base64 -d > key.pem`)]);
    assert.ok(!leaks(decoded(out!), blob), 'the blob is left');
  });
});

describe('issue 23: a NAME_TOKEN=value inside a JSON string in tool arguments', () => {
  const value = 'f3a9c2b7e1d4a8f6c0b5';
  it('is redacted as a plain line is (control: the rule knows the assignment)', async () => {
    const [out] = await redact([toolResult(`SENTRY_TOKEN=${value}`)]);
    assert.ok(!leaks(decoded(out!), value));
  });
  it('is redacted after an earlier `"cmd": "` key was rejected', async () => {
    const [out] = await redact([functionCall({ cmd: `SENTRY_TOKEN=${value} ./deploy.sh`, workdir: '/repo' })]);
    assert.ok(!leaks(decoded(out!), value), decoded(out!));
  });
});

describe('issue 23: bare, encoded and wrapped secrets', () => {
  const token = `ghp_${alnum(36, 17)}`;
  const random = 'q7Xk2mP9vR4tL8wN3zB6yH1c';
  const cases: Array<[string, string, string]> = [
    ['a random value as a folder of a path', `cat /srv/app/releases/${random}/config.yml`, random],
    [
      'a random value as a URL query value under a neutral name',
      `curl -s "https://api.example.com/v1/items?ref=${random}&page=2"`,
      random,
    ],
    ['a random value in a sentence', `I checked it and the value ${random} was accepted by the server.`, random],
    ['a GitHub token in a path (a control: caught before the fix too)', `ls /tmp/${token}/`, token],
    [
      'a token base64-encoded on a command line',
      `echo ${Buffer.from(`GITHUB_TOKEN=${token}\n`).toString('base64')} | base64 -d >> .env`,
      Buffer.from(`GITHUB_TOKEN=${token}\n`).toString('base64'),
    ],
    [
      'a token wrapped across two lines: its first half (a control: caught before the fix too)',
      `export GITHUB_TOKEN=${token.slice(0, 20)}\n${token.slice(20)}\nls`,
      token.slice(0, 20),
    ],
    [
      'a token wrapped across two lines: its second half',
      `export GITHUB_TOKEN=${token.slice(0, 20)}\n${token.slice(20)}\nls`,
      token.slice(20),
    ],
  ];
  for (const [name, text, secret] of cases) {
    it(name, async () => {
      const [out] = await redact([toolResult(text)]);
      assert.ok(!leaks(decoded(out!), secret), decoded(out!));
    });
  }
});

describe('issue 23: token kinds the old rules never caught', () => {
  const tokens: Array<[string, string]> = [
    ['PyPI', `pypi-AgEIcHlwaS5vcmc${alnum(60)}`],
    ['DigitalOcean', `dop_v1_${hex(64)}`],
    ['Twilio', `SK${hex(32)}`],
    ['Discord webhook', `https://discord.com/api/webhooks/123456789012345678/${alnum(68, 7)}`],
    ['Doppler', `dp.pt.${alnum(43).toLowerCase()}`],
    ['Sentry', `sntryu_${hex(64)}`],
    ['PlanetScale', `pscale_tkn_${alnum(43)}`],
    ['Pulumi', `pul-${hex(40)}`],
    ['Postman', `PMAK-${hex(24)}-${hex(34, 9)}`],
    ['Heroku', `HRKU-AA${alnum(58)}`],
    ['Amazon Bedrock', `ABSK${alnum(132)}`],
    ['GitLab deploy token', `gldt-${alnum(20)}`],
    ['GitLab runner token', `glrt-${alnum(20)}`],
    ['Stripe sk_prod', `sk_prod_${alnum(24)}`],
    ['Stripe rk_prod', `rk_prod_${alnum(24, 11)}`],
    ['Vault s. token', `s.${alnum(24).toLowerCase()}`],
  ];
  for (const [kind, token] of tokens) {
    it(kind, async () => {
      // The secret part: for the webhook, its token after the id.
      const secret = kind === 'Discord webhook' ? token.slice(token.lastIndexOf('/') + 1) : token;
      const [out] = await redact([toolResult(`deploy with ${token} then exit`)]);
      assert.ok(!leaks(decoded(out!), secret), decoded(out!));
    });
  }
});

describe('issue 23: names that describe a secret are not secrets', () => {
  for (const benign of ['secret_name: my-app-secrets', 'private_key_path: ~/.ssh/id_ed25519']) {
    it(benign, async () => {
      const [out] = await redact([toolResult(benign)]);
      assert.equal(out, toolResult(benign));
    });
  }
});
