import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forEachStringLiteral } from '../../../../src/core/redact/jsonStrings';
import { ID_FIELD, ID_LEARNT, Redactor } from '../../../../src/core/redact/redactor';

/** Our own rules only (secretlint's preset is tested through the CLI's redactor in test/unit/node). */
const ownOnly = (): Redactor => new Redactor([], 'own rules');

describe('string literals of JSON text', () => {
  it('are found with escaped quotes and backslashes, and a literal cut at the end runs to the end', () => {
    const text = '{"a":"x\\"y","b\\\\":"z\\\\","c":"open';
    const found: string[] = [];
    forEachStringLiteral(text, (s, e) => found.push(text.slice(s, e)));
    assert.deepEqual(found, ['"a"', '"x\\"y"', '"b\\\\"', '"z\\\\"', '"c"', '"open']);
  });
});

describe('Redactor', () => {
  it('changes only inside strings: numbers, keys and spacing stay byte for byte', async () => {
    const line =
      '{"usage": {"input_tokens": 12345678901234567890, "cached": 1.5e3},  "cwd": "/home/marco/app", "n": "123456789012"}';
    const [out] = await ownOnly().redactJsonTexts([line]);
    assert.equal(
      out,
      '{"usage": {"input_tokens": 12345678901234567890, "cached": 1.5e3},  "cwd": "/home/USER/app", "n": "123456789012"}',
    );
  });

  it('sees through escapes: a secret before \\n is found, and JSON inside a string is redacted as JSON', async () => {
    const text = JSON.stringify({
      out: 'export GITHUB_TOKEN=abcdefgh12345678\nnext',
      args: JSON.stringify({ cmd: 'curl -u x https://bob:hunter2hunter2@example.com/\nls' }),
    });
    const [out] = await ownOnly().redactJsonTexts([text]);
    const value = JSON.parse(out!) as { out: string; args: string };
    assert.equal(value.out, 'export GITHUB_TOKEN=[REDACTED:env-assignment#1]\nnext');
    assert.equal(JSON.parse(value.args).cmd, 'curl -u x https://bob:[REDACTED:url-password#1]@example.com/\nls');
  });

  it('gives the same value the same placeholder and different values different ones, and counts without values', async () => {
    const r = ownOnly();
    const out = await r.redactJsonTexts([
      '{"a":"mail ann@example.org"}',
      '{"b":"again ann@example.org and bob@example.org"}',
    ]);
    assert.deepEqual(out, [
      '{"a":"mail [REDACTED:email#1]"}',
      '{"b":"again [REDACTED:email#1] and [REDACTED:email#2]"}',
    ]);
    assert.deepEqual(r.summary().byKind, { email: { occurrences: 3, distinct: 2 } });
    assert.ok(!JSON.stringify(r.summary()).includes('example.org'));
  });

  it('still redacts a line that is not valid JSON, leaving its broken part as it was', async () => {
    const [out] = await ownOnly().redactJsonTexts(['{"a": "ls /Users/jdoe/x\u0001", "b": 1']);
    assert.equal(out, '{"a": "ls /Users/USER/x\u0001", "b": 1');
  });

  it('merges overlapping findings into one placeholder', async () => {
    const r = new Redactor(
      [
        {
          detect: (t) =>
            t.includes('XYZ')
              ? [
                  { kind: 'a', start: t.indexOf('XYZ'), end: t.indexOf('XYZ') + 2 },
                  { kind: 'b', start: t.indexOf('XYZ') + 1, end: t.indexOf('XYZ') + 3 },
                ]
              : [],
        },
      ],
      'test',
    );
    const [out] = await r.redactJsonTexts(['{"k":"before XYZ after"}']);
    assert.equal(out, '{"k":"before [REDACTED:a#1] after"}');
  });
});

describe('Redactor.redactDistinctJsonTexts (the team export: a column repeats its values)', () => {
  it('gives each repeated text what redactJsonTexts gives it, and the same summary, scanning each distinct text once', async () => {
    // Two home folders (numbered USER, USER2 in order of appearance), a key, JSON nested in a string, texts repeated out of order.
    const a = JSON.stringify('cd /home/marco/app && npm test');
    const b = JSON.stringify('cat /home/giulia/notes.txt');
    const c = JSON.stringify(
      JSON.stringify({ cmd: 'ls /home/marco', token: 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8' }),
    );
    const d = JSON.stringify('nothing secret here at all');
    const texts = [a, b, a, c, d, a, c, b, d, a];
    const plain = ownOnly();
    const once = ownOnly();
    const expected = await plain.redactJsonTexts(texts);
    const scanned: string[] = [];
    const counting = new Redactor([{ detect: (t: string) => (scanned.push(t), []) }], 'spy');
    assert.deepEqual(await once.redactDistinctJsonTexts(texts), expected);
    assert.deepEqual(once.summary(), plain.summary());
    // By hand: marco's folder 4 times in a and twice in c, giulia's twice; the GitHub token twice.
    assert.equal(plain.summary().byKind['home-user']?.occurrences, 8);
    assert.equal(plain.summary().byKind['home-user']?.distinct, 2);
    assert.match(expected[0]!, /\/home\/USER\/app/);
    assert.match(expected[1]!, /\/home\/USER2\/notes/);
    // Each distinct text reaches the detectors once (in one batch), not once per repeat.
    await counting.redactDistinctJsonTexts(texts);
    const joined = scanned.join('\n');
    assert.equal(joined.split('npm test').length - 1, 1);
    assert.equal(joined.split('notes.txt').length - 1, 1);
  });

  it('scans a value found clean once never again in that redactor, and still scans every other value', async () => {
    const scanned: string[] = [];
    const r = new Redactor([{ detect: (t: string) => (scanned.push(t), []) }], 'spy');
    const clean = JSON.stringify('npm test --workspace api');
    const secret = JSON.stringify('export GITHUB_TOKEN=abcdefgh12345678');
    await r.redactCountedJsonTexts([clean], [1]);
    scanned.length = 0;
    const [a, b] = await r.redactCountedJsonTexts([clean, secret], [3, 1]);
    assert.equal(a, clean);
    assert.equal(JSON.parse(b!), 'export GITHUB_TOKEN=[REDACTED:env-assignment#1]');
    const joined = scanned.join('\n');
    assert.equal(joined.split('npm test').length - 1, 0, 'the clean value is not scanned again');
    assert.equal(joined.split('GITHUB_TOKEN').length - 1 > 0, true, 'the new value is');
    // A value with a finding (remembered with it, or scanned again) is replaced and counted again.
    await r.redactCountedJsonTexts([secret], [2]);
    assert.equal(r.summary().byKind['env-assignment']?.occurrences, 3);
  });

  it('replaces a value remembered with its findings as a scan does, numbered in its turn, without scanning it', async () => {
    const scanned: string[] = [];
    const spy = { detect: (t: string) => (scanned.push(t), []) };
    const r = new Redactor([spy], 'spy');
    // A listener on onLeftAsId turns the memory off: the same redactor without it, for comparison.
    const fresh = new Redactor([], 'no memory', { onLeftAsId: () => undefined });
    const marco = JSON.stringify('cd /home/marco/app');
    const texts = [JSON.stringify('ls /home/giulia/x'), marco, JSON.stringify('cat /home/anna/y')];
    assert.deepEqual(await r.redactCountedJsonTexts([marco], [1]), [JSON.stringify('cd /home/USER/app')]);
    scanned.length = 0;
    const out = await r.redactCountedJsonTexts(texts, [1, 2, 1]);
    // By hand: marco is USER since the first call; one batch is rewritten from its last string to its
    // first, so anna's folder is numbered before giulia's: USER2, then USER3.
    assert.deepEqual(out, [
      JSON.stringify('ls /home/USER3/x'),
      JSON.stringify('cd /home/USER/app'),
      JSON.stringify('cat /home/USER2/y'),
    ]);
    assert.equal(scanned.join('\n').includes('/home/marco/app'), false, 'the remembered value is not scanned');
    assert.equal(scanned.join('\n').includes('/home/anna/y'), true);
    // marco 1 + 2 times, giulia and anna once each: 5 places, 3 folders.
    assert.deepEqual(r.summary().byKind['home-user'], { occurrences: 5, distinct: 3 });
    await fresh.redactCountedJsonTexts([marco], [1]);
    assert.deepEqual(await fresh.redactCountedJsonTexts(texts, [1, 2, 1]), out);
    assert.deepEqual(fresh.summary().byKind, r.summary().byKind);
  });

  it('does not remember a value a finding reached out of, into the next value of the batch', async () => {
    // A rule that reads across the blank line between two values: KEY, then VAL within 30 characters.
    const acrossValues = {
      detect: (t: string) => {
        const m = /KEY[^]{0,30}?VAL/.exec(t);
        return m ? [{ kind: 'pair', start: m.index, end: m.index + m[0].length }] : [];
      },
    };
    const a = JSON.stringify('aaaaaaaa KEY');
    const b = JSON.stringify('VAL bbbbbbbb');
    const r = new Redactor([acrossValues], 'test');
    const fresh = new Redactor([acrossValues], 'no memory', { onLeftAsId: () => undefined });
    const [together] = await r.redactCountedJsonTexts([a, b], [1, 1]);
    assert.equal(together, JSON.stringify('aaaaaaaa [REDACTED:pair#1]'));
    await fresh.redactCountedJsonTexts([a, b], [1, 1]);
    // Alone, nothing follows KEY: a scan finds nothing, and so must the redactor that saw it before.
    const [alone] = await r.redactCountedJsonTexts([a], [1]);
    assert.equal(alone, a);
    assert.deepEqual(await fresh.redactCountedJsonTexts([a], [1]), [alone]);
  });

  it('does not remember a value with a finding an id learnt later takes away (a bare UUID)', async () => {
    const id = '3f2b8c1e-7a4d-4e9b-8c2f-5d6e7f8a9b0c';
    const text = JSON.stringify(`cd /home/marco/${id}`);
    const r = ownOnly();
    // Bare and explained by nothing: default mode takes it, with the home folder.
    const [first] = await r.redactCountedJsonTexts([text], [1]);
    assert.equal(first, JSON.stringify('cd /home/USER/[REDACTED:strict-uuid#1]'));
    // Then the trace declares it as a session id: from now on it is left, as a fresh redactor leaves it.
    r.learnIds([JSON.stringify({ sessionId: id })]);
    const [second] = await r.redactCountedJsonTexts([text], [1]);
    assert.equal(second, JSON.stringify(`cd /home/USER/${id}`));
  });

  it('does not remember a value left as an id only by the value before it in the batch', async () => {
    // "commit" then the hash: git's form, read across the separator of the batch. Alone, the
    // same 40 hex digits explain nothing and default mode takes them (strict-hex).
    const hex = 'f3a9c1d27be84a0c9d11e2f3a4b5c6d7e8f90123';
    const r = ownOnly();
    const [, together] = await r.redactCountedJsonTexts(
      [JSON.stringify('see the commit'), JSON.stringify(hex)],
      [1, 1],
    );
    assert.equal(JSON.parse(together!), hex);
    const [alone] = await r.redactCountedJsonTexts([JSON.stringify(hex)], [1]);
    assert.match(JSON.parse(alone!) as string, /^\[REDACTED:strict-hex#\d+\]$/);
    // A fresh redactor gives the same for the value alone: the memory changed nothing.
    const [fresh] = await ownOnly().redactCountedJsonTexts([JSON.stringify(hex)], [1]);
    assert.equal(fresh, alone);
  });

  it('leaves a remembered value that an id learnt later explains as it did, and one learnt earlier as ids do', async () => {
    // Clean once, then its id declared: still clean (ids only ever take findings away).
    const id = '9d8c7b6a-5f4e-4d3c-9b2a-1f0e9d8c7b6a';
    const r = ownOnly();
    r.learnIds([JSON.stringify({ sessionId: id })]);
    const text = JSON.stringify(`resumed ${id}`);
    const [first] = await r.redactCountedJsonTexts([text], [1]);
    const [second] = await r.redactCountedJsonTexts([text], [1]);
    assert.equal(first, text);
    assert.equal(second, text);
    // Without the declaration the bare UUID is taken, the first time and the second.
    const other = ownOnly();
    const [taken] = await other.redactCountedJsonTexts([text], [1]);
    const [again] = await other.redactCountedJsonTexts([text], [1]);
    assert.notEqual(taken, text);
    assert.equal(again, taken);
  });
});

describe('Redactor.learnIdValues (the Parquet export declares its id columns)', () => {
  it('learns what learnIds learns from each value under an id key, nested JSON and ids in context included', async () => {
    const values = [
      'c0ffee00-1234-4abc-9def-0123456789ab',
      JSON.stringify({ tool_use_id: 'toolu_0a1b2c3d4e5f60718293a4b5' }),
      'see commit 4be5a1c9d0e7f6a8b9c0d1e2f3a4b5c6d7e8f901',
    ];
    const text = JSON.stringify(
      'ids c0ffee00-1234-4abc-9def-0123456789ab, 4be5a1c9d0e7f6a8b9c0d1e2f3a4b5c6d7e8f901 and 9f8e7d6c5b4a39281706f5e4d3c2b1a0',
    );
    const byJson = ownOnly();
    byJson.learnIds(values.map((v) => JSON.stringify({ 'gen_ai.conversation.id': v })));
    const byValue = ownOnly();
    byValue.learnIdValues(values);
    const [a] = await byJson.redactCountedJsonTexts([text], [1]);
    const [b] = await byValue.redactCountedJsonTexts([text], [1]);
    assert.equal(b, a);
    // By hand: the declared UUID and the hash git's form explains stay; the third hex, declared nowhere, is taken.
    assert.equal(
      JSON.parse(b!),
      'ids c0ffee00-1234-4abc-9def-0123456789ab, 4be5a1c9d0e7f6a8b9c0d1e2f3a4b5c6d7e8f901 and [REDACTED:strict-hex#1]',
    );
    // Unlearnt, the UUID is taken too.
    const [c] = await ownOnly().redactCountedJsonTexts([text], [1]);
    assert.match(JSON.parse(c!) as string, /^ids \[REDACTED:strict-uuid#1\]/);
  });
});

describe('Redactor.redactCountedValues with the ids learnIdValues learnt from (the team export)', () => {
  it('neither learns from them again nor remembers them: the same values and summary as without being told, twice over', async () => {
    const uuid = 'c0ffee00-1234-4abc-9def-0123456789ab';
    const token = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
    // Ids as the export's id columns hold them: a UUID, a tool call id, a token someone used as an id, JSON.
    const ids = [
      uuid,
      'toolu_01AbCdEfGhIjKlMnOpQrStUv',
      token,
      JSON.stringify({ tool_use_id: 'toolu_0a1b2c3d4e5f60718293a4b5' }),
    ];
    const values = [...ids, `resumed ${uuid} in /home/marco/app`, 'cd /home/marco/app && npm test'];
    const weights = values.map((_, i) => 1 + (i % 3));
    const told = ownOnly();
    const untold = ownOnly();
    const answers: string[][] = [];
    for (let round = 0; round < 2; round++) {
      // The second round meets the untold redactor's memory of the first: the ids remembered, here scanned again.
      const said = told.learnIdValues(ids);
      untold.learnIdValues(ids);
      const learnt = new Uint8Array(values.length);
      said.forEach((s, k) => {
        if (s) learnt[k] = 1;
      });
      const byTold = await told.redactCountedValues(values, weights, learnt);
      assert.deepEqual(byTold, await untold.redactCountedValues(values, weights));
      answers.push(byTold);
    }
    assert.deepEqual(told.summary(), untold.summary());
    assert.deepEqual(answers[1], answers[0]);
    // By hand: the plain ids were learnt from whole, the JSON one is read as JSON; the token is still taken where it
    // stands as an id, the declared UUID left in free text, marco's folder taken.
    assert.deepEqual(ownOnly().learnIdValues(ids), [true, true, true, false]);
    assert.equal(answers[0]![0], uuid);
    assert.equal(answers[0]![1], 'toolu_01AbCdEfGhIjKlMnOpQrStUv');
    assert.notEqual(answers[0]![2], token);
    assert.match(answers[0]![2]!, /^\[REDACTED:/);
    assert.equal(answers[0]![4], `resumed ${uuid} in /home/USER/app`);
  });
});

/**
 * The values with each kind's placeholders numbered again in order of first appearance: two
 * redactions that take the same secrets, equal ones alike and different ones apart, give equal lists.
 */
function renumbered(values: readonly string[]): string[] {
  const numbers = new Map<string, Map<string, number>>();
  const renumber = (kind: string, n: string): number => {
    const own = numbers.get(kind) ?? numbers.set(kind, new Map()).get(kind)!;
    return own.get(n) ?? own.set(n, own.size + 1).get(n)!;
  };
  return values.map((v) =>
    v
      .replace(/\[REDACTED:([a-z0-9-]+)#(\d+)\]/g, (_, kind: string, n: string) => `[${kind} ${renumber(kind, n)}]`)
      .replace(/\/home\/USER(\d*)/g, (_, n: string) => `/home/[user ${renumber('home-user', n || '1')}]`),
  );
}

describe("Redactor.redactCountedValues of id fields' values (ID_FIELD: scanned in batches of their own, without the shapes)", () => {
  const declared = 'c0ffee00-1234-4abc-9def-0123456789ab';
  const loose = 'b7e4c2d1-5a6f-4e3d-8c2b-1a0f9e8d7c6b';
  const hidden = '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a';
  const token = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
  // base64 of a text holding a UUID nothing declares: decoded, the shapes find it, so the whole id is taken as base64.
  const blob = btoa(`resumed ${hidden} today`);
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  /** 40,000 tool call ids of 30 characters: 1.3 M characters, more than one batch (1 M). */
  const bulk = Array.from({ length: 40_000 }, (_, i) => {
    let id = 'toolu_01';
    for (let k = 0, x = i * 7919 + 13; k < 22; k++, x = (x * 48271) % 2147483647) id += letters[x % 62];
    return id;
  });
  const ids = [declared, 'toolu_01AbCdEfGhIjKlMnOpQrStUv', token, blob, `run_${'0123456789abcdef'.repeat(2)}0a1b2c3d`];
  const free = [`resumed ${declared} in /home/marco/app`, `bare ${loose}`, 'export GITHUB_TOKEN=abcdefgh12345678'];
  // Interleaved as a table's cells are (an id column beside text columns), the token once more among the bulk ids.
  const values = [
    ...ids.flatMap((id, i) => [id, free[i % free.length]!]),
    ...bulk.slice(0, 20_000),
    `${token.slice(0, -1)}X`,
    ...bulk.slice(20_000),
    'cd /home/giulia/x',
  ];
  const isId = new Set([...ids, ...bulk, `${token.slice(0, -1)}X`]);

  it('gives each value what its JSON gives it, an id under an id key, with the same summary, twice over', async () => {
    const byValue = ownOnly();
    const byJson = ownOnly();
    const weights = values.map((_, i) => 1 + (i % 3));
    for (let round = 0; round < 2; round++) {
      const said = byValue.learnIdValues(values.filter((v) => isId.has(v)));
      let k = 0;
      const flags = values.map((v) => (isId.has(v) ? ID_FIELD | (said[k++] ? ID_LEARNT : 0) : 0));
      const plain = await byValue.redactCountedValues(values, weights, flags);
      const json = await byJson.redactCountedJsonTexts(
        values.map((v) => JSON.stringify(isId.has(v) ? { tool_use_id: v } : v)),
        weights,
      );
      // The batches differ (the ids apart), so secrets may be numbered in another order: equal up to that.
      assert.deepEqual(
        renumbered(plain),
        renumbered(
          json.map((t, i) =>
            isId.has(values[i]!) ? (JSON.parse(t) as { tool_use_id: string }).tool_use_id : (JSON.parse(t) as string),
          ),
        ),
      );
      if (round === 0) {
        // By hand: in the ids, both tokens and the blob are taken, the UUID, tool call id and hex left; in the free
        // text the declared UUID is left, the loose one taken, marco's and giulia's folders and the assignment taken.
        const at = (v: string): string => plain[values.indexOf(v)]!;
        assert.equal(at(declared), declared);
        assert.equal(at('toolu_01AbCdEfGhIjKlMnOpQrStUv'), 'toolu_01AbCdEfGhIjKlMnOpQrStUv');
        const tokens = [at(token), at(`${token.slice(0, -1)}X`)];
        for (const t of tokens) assert.match(t, /^\[REDACTED:github-pat#[12]\]$/);
        assert.notEqual(tokens[0], tokens[1]);
        assert.equal(at(blob), '[REDACTED:base64#1]');
        assert.equal(at(ids[4]!), ids[4]);
        assert.match(at(free[0]!), new RegExp(`^resumed ${declared} in /home/USER2?/app$`));
        assert.equal(at(free[1]!), 'bare [REDACTED:strict-uuid#1]');
        assert.equal(at(free[2]!), 'export GITHUB_TOKEN=[REDACTED:env-assignment#1]');
        assert.match(at('cd /home/giulia/x'), /^cd \/home\/USER2?\/x$/);
        assert.notEqual(at(free[0]!).slice(-9), at('cd /home/giulia/x').slice(-7));
        assert.deepEqual(
          bulk.filter((id) => at(id) !== id),
          [],
        );
      }
    }
    assert.deepEqual(byValue.summary(), byJson.summary());
  });
});

describe('Redactor.redactCountedValues (the team export sends values, not JSON)', () => {
  const uuid = '6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';
  const hash = '0badc0ffee1234567890abcdef0123456789abcd';
  // Values that JSON writes with escapes (quotes, backslashes, a control, a lone surrogate, \u
  // escapes next to hex digits), JSON inside a value, a number, short values, shapes left as ids
  // by their context and shapes taken: each as its own cell would be.
  const values = [
    'cd /home/marco/app && npm test',
    'say "hi" to C:\\Users\\marco\\x and /home/giulia/y',
    'bell\u0007 then /home/marco/z',
    'half \ud800 a surrogate /home/anna/w',
    '\u00e9abcdef0 \u00e9123456789abcdef01234 /home/anna/v',
    JSON.stringify({ cmd: 'ls /home/marco', token: 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8' }),
    '12345678901234567890',
    'short',
    `git show ${hash}`,
    `bare ${hash} again`,
    `resumed ${uuid}`,
    'export GITHUB_TOKEN=abcdefgh12345678',
  ];

  it('gives each value what redactCountedJsonTexts gives its JSON, with the same summary, twice over', async () => {
    const byJson = ownOnly();
    const byValue = ownOnly();
    const weights = values.map((_, i) => 1 + (i % 3));
    for (let round = 0; round < 2; round++) {
      // The second round meets the redactors' memory of the first: remembered clean and remembered findings.
      const order = round === 0 ? values : [...values].reverse();
      const json = await byJson.redactCountedJsonTexts(
        order.map((v) => JSON.stringify(v)),
        weights,
      );
      const plain = await byValue.redactCountedValues(order, weights);
      assert.deepEqual(
        plain,
        json.map((t) => JSON.parse(t) as string),
      );
    }
    assert.deepEqual(byValue.summary(), byJson.summary());
    // By hand, first round: marco, giulia and anna's folders are found (marco's in the nested JSON too),
    // the token in the nested JSON, the env assignment; the hash after `git show` is git's, so the bare one is left too.
    const [first] = await ownOnly().redactCountedValues([values[0]!], [1]);
    assert.equal(first, 'cd /home/USER/app && npm test');
    assert.deepEqual(byValue.summary().byKind['home-user']?.distinct, 3);
    const once = await ownOnly().redactCountedValues(values, weights);
    assert.equal(once[9], `bare ${hash} again`);
    assert.equal(once[7], 'short');
    assert.equal(once[6], '12345678901234567890');
    assert.equal(once[11], 'export GITHUB_TOKEN=[REDACTED:env-assignment#1]');
    assert.match(once[10]!, /^resumed \[REDACTED:strict-uuid#1\]$/);
  });

  it('takes a literal off an OTLP attribute pending from an id value, as a JSON literal does', async () => {
    // An id column's value ending in an attribute's name: its next three literals are its value's.
    const pending = '{"key":"session.id"';
    const then = `{"value":{"stringValue":"${uuid}"}}`;
    const fillers = ['aaaaaaaa one', 'bbbbbbbb two', 'cccccccc three'];
    const run = async (redact: (r: Redactor) => Promise<unknown>): Promise<string> => {
      const r = ownOnly();
      r.learnIdValues([pending]);
      await redact(r);
      r.learnIds([then]);
      const [out] = await r.redactCountedValues([`resumed ${uuid}`], [1]);
      return out!;
    };
    const byValue = await run((r) => r.redactCountedValues(fillers, [1, 1, 1]));
    const byJson = await run((r) =>
      r.redactCountedJsonTexts(
        fillers.map((f) => JSON.stringify(f)),
        [1, 1, 1],
      ),
    );
    assert.equal(byValue, byJson);
    // By hand: the three cells took the attribute's three literals, so the later stringValue declares
    // nothing and the UUID is taken; without them it would be the attribute's value, an id, and left.
    assert.equal(byValue, 'resumed [REDACTED:strict-uuid#1]');
    assert.equal(await run(async () => undefined), `resumed ${uuid}`);
  });
});
