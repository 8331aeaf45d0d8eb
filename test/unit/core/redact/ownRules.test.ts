import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkSync } from 'recheck';
import { isSecretName, OWN_RULES, ownFindings } from '../../../../src/core/redact/ownRules';

/** What each rule finds in `text`, as "kind:value". */
function found(text: string): string[] {
  return ownFindings(text).map((f) => `${f.kind}:${text.slice(f.start, f.end)}`);
}

describe('own redaction rules', () => {
  it('find e-mail addresses, but not git@github.com', () => {
    assert.deepEqual(found('mail bob.smith+x@corp.example.org now'), ['email:bob.smith+x@corp.example.org']);
    assert.deepEqual(found('git clone git@github.com:foo/bar.git'), []);
    assert.deepEqual(found('write to ann@example.org. Or bob@localhost'), ['email:ann@example.org']);
  });

  it('find the password of a URL (even a placeholder-looking one) and not the host as an e-mail', () => {
    assert.deepEqual(found('https://user:s3cretpass@example.com/x'), ['url-password:s3cretpass']);
    assert.deepEqual(found('mongodb://localhost:27017/db'), []);
  });

  it('find bearer tokens and authorization headers', () => {
    assert.deepEqual(found('Authorization: Bearer abcdefghijklmnop.qrs'), ['bearer-token:abcdefghijklmnop.qrs']);
    assert.deepEqual(found('"authorization": "Basic dXNlcjpwYXNzd29yZA=="'), [
      'authorization-header:dXNlcjpwYXNzd29yZA==',
    ]);
    assert.deepEqual(found('-H "Authorization: token ghx_notarealtoken1234"'), [
      'authorization-header:ghx_notarealtoken1234',
    ]);
  });

  it('find .env-style assignments whose name says secret, and leave references, placeholders and numbers', () => {
    assert.deepEqual(found('export OPENAI_API_KEY=sk-abcdef12345678'), ['env-assignment:sk-abcdef12345678']);
    assert.deepEqual(found('"api_key": "zzz12345678"'), ['env-assignment:zzz12345678']);
    assert.deepEqual(found('DB_PASSWORD = "correct horse"'), []); // the value stops at the space: 7 characters are too few
    assert.deepEqual(found('DB_PASSWORD=correcthorsebattery'), ['env-assignment:correcthorsebattery']);
    assert.deepEqual(found('const API_KEY = process.env.OPENAI_API_KEY;'), []);
    assert.deepEqual(found('token: ${GITHUB_TOKEN} password: <your-password> max_tokens: 40960000'), []);
    assert.deepEqual(found('tokenizer: Qwen/Qwen3-32B primary_key: customer_identifier'), []);
    assert.deepEqual(found('MONGO_NO_AUTH="mongodb://localhost:27017/database"'), []);
  });

  it('judge names by their parts', () => {
    for (const name of [
      'OPENAI_API_KEY',
      'GITHUB_TOKEN',
      '_authToken',
      'apiKey',
      'APIKEY',
      'AWS_SECRET_ACCESS_KEY',
      'db_password',
      'DB_PWD',
      'clientSecret',
    ])
      assert.equal(isSecretName(name), true, name);
    for (const name of ['tokenizer', 'max_tokens', 'primary_key', 'sort_key', 'PWD', 'keyboard', 'author'])
      assert.equal(isSecretName(name), false, name);
  });

  it('find the user name of home folders, on every system, and in Claude Code project folders', () => {
    assert.deepEqual(found('cd /home/marco/app && ls /Users/jdoe/x C:\\Users\\Ann\\y C:\\\\Users\\\\Bo\\\\z'), [
      'home-user:marco',
      'home-user:jdoe',
      'home-user:Ann',
      'home-user:Bo',
    ]);
    assert.deepEqual(found('~/.claude/projects/-home-marco-spotter/ae4a.jsonl'), ['home-user:marco']);
    assert.deepEqual(found('/home/USER/app /home/runner/work /Users/Shared'), []);
  });

  it('find Google API keys, JWTs and Anthropic admin keys (gitleaks patterns)', () => {
    const google = 'AIza' + 'SyA1234567890abcdefghijklmnopqrstuv';
    assert.deepEqual(
      found(`key=${google}&q=x`).filter((f) => f.startsWith('gcp')),
      [`gcp-api-key:${google}`],
    );
    const jwt =
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
    assert.deepEqual(found(`jwt ${jwt} end`), [`jwt:${jwt}`]);
    const admin = `sk-ant-admin01-${'a'.repeat(93)}AA`;
    assert.deepEqual(found(`k ${admin} k`), [`anthropic:${admin}`]);
  });

  // Trace text is hostile: a rule that backtracks super-linearly on some input would let a
  // trace stall an export. recheck (a ReDoS checker) must find every rule safe. Its fuzzer
  // is seeded and its time limits are off (its own step limits remain), so the verdict does
  // not depend on how busy the machine is.
  it('are free of super-linear backtracking (recheck)', () => {
    const deterministic = {
      randomSeed: 1,
      timeout: null,
      attackTimeout: null,
      incubationTimeout: null,
      recallTimeout: null,
      maxAttackStringSize: 30_000,
    };
    for (const rule of OWN_RULES) {
      const result = checkSync(rule.pattern.source, rule.pattern.flags.replace('g', ''), deterministic);
      assert.equal(
        result.status,
        'safe',
        `${rule.kind} /${rule.pattern.source}/: ${result.status === 'vulnerable' ? `attack ${result.attack.pattern}` : result.status}`,
      );
    }
  });

  it('are caught by the checker when they would backtrack (a control: the e-mail rule without its look-behind)', () => {
    const result = checkSync('[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,24}\\b', '', {
      timeout: 60_000,
      randomSeed: 1,
    });
    assert.equal(result.status, 'vulnerable');
  });
});
