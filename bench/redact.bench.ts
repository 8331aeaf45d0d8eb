// Redaction recall and precision (not a timed benchmark: the figures are counts).
//
// Recall: each test secret is put in a real trace line in 9 contexts and redacted as every
// export redacts (createRedactor: secretlint's preset + src/core/redact); a secret counts as
// caught when no 12-character stretch of it (the whole of a shorter one) is left in the
// redacted line, decoded, and for the base64 context when its blob is gone.
//   plain        the case's line (gitleaks' literal true positive, else `<ID>_TOKEN=<secret>`) as a tool result
//   tool-arg     that line in a JSON string inside a tool's JSON arguments (a Codex function call)
//   read-tool    that line as Claude Code's Read tool shows a file: line-numbered (`     2→`)
//   path         the bare secret as a folder in a path
//   url-query    the bare secret as a URL query value under a neutral name (`?ref=`)
//   prose        the bare secret in a sentence
//   neutral-name the bare secret assigned to a name that says nothing (`item = "…"`)
//   base64       the line base64-encoded on a command line
//   split        the line with a line break in the middle of the secret (a wrap)
// Corpora: gitleaks' rule test cases (test/fixtures/gitleaks-cases: the rule set we run was
// written against them; this is issue 23's measurement), and secretlint's preset test
// vectors (test/fixtures/secretlint-vectors) twice: with every detector, and without
// secretlint's preset, which was written against them (gitleaks' rules, our own rules and
// the entropy rules were not: the figure for a corpus the rules were not tuned on).
//
// Every measurement runs twice: default redaction, and strict mode (--redact strict), which
// also takes bare hex, UUIDs, long numbers, short random tokens and user:password pairs.
//
// Precision: the benign strings (test/fixtures/redaction-benign: secret-looking lines of the
// real sample traces, and gitleaks' own false-positive cases) as a tool result; any change is
// a false positive. And every real sample trace of test/fixtures redacted whole: what was
// found, by kind.
//
// Private keys: EC, PKCS#8 and RSA keys made for the run, in every form a trace shows a file.
//
// Run: npm run bench:redact [-- --kinds] [-- --misses] [-- --list-strict]   (--kinds prints
// recall for every kind, --misses every secret missed, --list-strict every value of the real
// samples that strict mode's own kinds take)
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { forEachStringLiteral } from '../src/core/redact/jsonStrings';
import { Redactor, type RedactionMode } from '../src/core/redact/redactor';
import { createRedactor } from '../src/node/secretlintDetector';

const root = resolve(__dirname, '../..');
const fixtures = join(root, 'test/fixtures');
const showKinds = process.argv.includes('--kinds');
const showMisses = process.argv.includes('--misses');
const listStrict = process.argv.includes('--list-strict');

export interface RecallCase {
  kind: string;
  secret: string;
  /** The line the secret appears in with its context (an assignment, a command); the bare secret's contexts do not use it. */
  line: string;
}

const CONTEXTS = [
  'plain',
  'tool-arg',
  'read-tool',
  'path',
  'url-query',
  'prose',
  'neutral-name',
  'base64',
  'split',
] as const;
type Context = (typeof CONTEXTS)[number];

/** A Claude Code user line carrying a tool result with `text`. */
function toolResult(text: string): string {
  return JSON.stringify({
    type: 'user',
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Bench', content: text }] },
    uuid: 'b0000000-0000-4000-8000-000000000001',
  });
}

/** The trace line of a case in a context, and what must be gone from its redaction. */
function placed(c: RecallCase, context: Context): { line: string; gone: string[] } {
  const s = c.secret;
  switch (context) {
    case 'plain':
      return { line: toolResult(c.line), gone: [s] };
    case 'tool-arg': {
      const args = JSON.stringify({ command: `${c.line} ./deploy.sh`, workdir: '/repo' });
      return {
        line: JSON.stringify({
          type: 'response_item',
          payload: { type: 'function_call', name: 'shell', arguments: args, call_id: 'call_bench' },
        }),
        gone: [s],
      };
    }
    case 'read-tool':
      return {
        line: toolResult(`     1→# settings\n     2→${c.line.split('\n').join('\n     3→')}\n     4→DEBUG=false\n`),
        gone: [s],
      };
    case 'path':
      return { line: toolResult(`cat /srv/app/releases/${s}/config.yml`), gone: [s] };
    case 'url-query':
      return { line: toolResult(`curl -s "https://api.example.com/v1/items?ref=${s}&page=2"`), gone: [s] };
    case 'prose':
      return { line: toolResult(`I checked it and the value ${s} was accepted by the server.`), gone: [s] };
    case 'neutral-name':
      return { line: toolResult(`item = "${s}"`), gone: [s] };
    case 'base64': {
      const blob = Buffer.from(c.line, 'utf8').toString('base64');
      return { line: toolResult(`echo ${blob} | base64 -d >> .env`), gone: [blob] };
    }
    case 'split': {
      const at = Math.floor(s.length / 2);
      const line = c.line.includes(s)
        ? c.line.replace(s, `${s.slice(0, at)}\n${s.slice(at)}`)
        : `${s.slice(0, at)}\n${s.slice(at)}`;
      return { line: toolResult(line), gone: [s.slice(0, at), s.slice(at)] };
    }
  }
}

/** Every decoded string of a JSON line, joined. */
function decodedText(line: string): string {
  const parts: string[] = [];
  forEachStringLiteral(line, (a, b) => {
    try {
      const v = JSON.parse(line.slice(a, b)) as string;
      parts.push(v);
      // JSON inside a string (tool arguments): its strings too.
      if (v.startsWith('{')) parts.push(decodedText(v));
    } catch {
      parts.push(line.slice(a, b));
    }
  });
  return parts.join('\u0000');
}

/** Whether any `window`-character stretch of `secret` (all of it if shorter) is still in `text`. */
function leaks(text: string, secret: string, window = 12): boolean {
  if (secret.length <= window) return text.includes(secret);
  for (let i = 0; i + window <= secret.length; i++) if (text.includes(secret.slice(i, i + window))) return true;
  return false;
}

interface Tally {
  caught: number;
  total: number;
}

/**
 * What a bare secret looks like, judged from its characters alone: hex, a UUID, digits or
 * a value under 16 characters cannot be told from the hashes, ids and counts a trace is full
 * of without a name or a prefix before it; the rest has a form of its own.
 */
function shape(secret: string): 'hex, UUID or number' | 'under 16 characters' | 'distinctive' {
  if (/^[0-9a-fA-F-]+$/.test(secret) || /^[0-9]+$/.test(secret)) return 'hex, UUID or number';
  if (secret.length < 16) return 'under 16 characters';
  return 'distinctive';
}
const SHAPES = ['distinctive', 'hex, UUID or number', 'under 16 characters'] as const;
const BARE: readonly Context[] = ['path', 'url-query', 'prose', 'neutral-name'];

/** Recall per context of each run, for the summary table at the end. */
const summary = new Map<string, Map<Context, Tally>>();

async function recall(name: string, cases: RecallCase[], redactor: () => Redactor): Promise<void> {
  const byContext = new Map<Context, Tally>();
  const byKind = new Map<string, Map<Context, Tally>>();
  const byShape = new Map<string, Tally>();
  for (const context of CONTEXTS) {
    const r = redactor();
    const placements = cases.map((c) => placed(c, context));
    const out = await r.redactJsonTexts(placements.map((p) => p.line));
    const tally: Tally = { caught: 0, total: 0 };
    cases.forEach((c, i) => {
      const text = context === 'base64' ? out[i]! : decodedText(out[i]!);
      const caught = !placements[i]!.gone.some((g) => leaks(text, g));
      tally.total++;
      if (caught) tally.caught++;
      else if (showMisses) console.log(`  missed in ${context}: ${c.kind} ${c.secret}`);
      let kind = byKind.get(c.kind);
      if (!kind) byKind.set(c.kind, (kind = new Map()));
      const t = kind.get(context) ?? { caught: 0, total: 0 };
      t.total++;
      if (caught) t.caught++;
      kind.set(context, t);
      if (BARE.includes(context)) {
        const key = `${context}\u0000${shape(c.secret)}`;
        const st = byShape.get(key) ?? { caught: 0, total: 0 };
        st.total++;
        if (caught) st.caught++;
        byShape.set(key, st);
      }
    });
    byContext.set(context, tally);
  }
  summary.set(name, byContext);
  const pct = (t: Tally | undefined): string =>
    t && t.total > 0 ? `${((100 * t.caught) / t.total).toFixed(1)}%` : '–';
  console.log(`\n### ${name}: ${cases.length} secrets of ${byKind.size} kinds\n`);
  console.log(`| context | caught | recall |\n|---|---:|---:|`);
  for (const context of CONTEXTS) {
    const t = byContext.get(context)!;
    console.log(`| ${context} | ${t.caught}/${t.total} | ${pct(t)} |`);
  }
  console.log(
    `\nBare contexts by the secret's shape (caught/total):\n\n| context | ${SHAPES.join(' | ')} |\n|---|${SHAPES.map(() => '---:').join('|')}|`,
  );
  for (const context of BARE) {
    console.log(
      `| ${context} | ${SHAPES.map((sh) => {
        const t = byShape.get(`${context}\u0000${sh}`);
        return t ? `${t.caught}/${t.total} (${pct(t)})` : '–';
      }).join(' | ')} |`,
    );
  }
  const never = [...byKind].filter(([, m]) => [...m.values()].every((t) => t.caught === 0)).map(([k]) => k);
  const partial = [...byKind].filter(([, m]) => [...m.values()].some((t) => t.caught < t.total));
  console.log(`\nkinds never caught in any context: ${never.length}${never.length ? ` (${never.join(', ')})` : ''}`);
  console.log(`kinds missed somewhere: ${partial.length} of ${byKind.size}`);
  if (showKinds || partial.length <= 40) {
    console.log(`\n| kind | ${CONTEXTS.join(' | ')} |\n|---|${CONTEXTS.map(() => '---:').join('|')}|`);
    for (const [kind, m] of [...byKind].sort(([a], [b]) => a.localeCompare(b))) {
      if (!showKinds && [...m.values()].every((t) => t.caught === t.total)) continue;
      console.log(`| ${kind} | ${CONTEXTS.map((c) => pct(m.get(c))).join(' | ')} |`);
    }
  }
}

/** gitleaks' rule test cases: a literal line keeps its own context; a sampled secret gets gitleaks' own `<ID>_TOKEN=<secret>` form. */
function gitleaksCases(): RecallCase[] {
  const data = JSON.parse(readFileSync(join(fixtures, 'gitleaks-cases/cases.json'), 'utf8')) as {
    cases: Array<{ rule: string; identifier?: string; line?: string; secret: string }>;
  };
  return data.cases.map((c) => ({
    kind: c.rule,
    secret: c.secret,
    line: c.line ?? `${(c.identifier ?? c.rule).toUpperCase()}_TOKEN=${c.secret}`,
  }));
}

/** secretlint's preset vectors: each expected secret, its line the vector's input line holding it. */
function secretlintCases(): RecallCase[] {
  const data = JSON.parse(readFileSync(join(fixtures, 'secretlint-vectors/vectors.json'), 'utf8')) as {
    cases: Array<{ rule: string; input: string; secrets: Array<{ ruleId: string; text: string }> }>;
  };
  const out: RecallCase[] = [];
  for (const c of data.cases) {
    for (const s of c.secrets) {
      const at = c.input.indexOf(s.text);
      const from = c.input.lastIndexOf('\n', at - 1) + 1;
      let to = c.input.indexOf('\n', at + s.text.length);
      if (to === -1) to = c.input.length;
      out.push({ kind: s.ruleId, secret: s.text, line: c.input.slice(from, to) });
    }
  }
  return out;
}

/**
 * Private keys made for the run (EC in SEC1 and PKCS#8, encrypted PKCS#8, RSA) in every form
 * a trace shows a file: caught when no body line (24 characters of one) is left.
 */
async function privateKeys(): Promise<void> {
  const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const keys: Array<[string, string]> = [
    ['EC PRIVATE KEY (SEC1)', ec.export({ type: 'sec1', format: 'pem' }).toString()],
    ['PRIVATE KEY (PKCS#8, EC)', ec.export({ type: 'pkcs8', format: 'pem' }).toString()],
    [
      'ENCRYPTED PRIVATE KEY (PKCS#8, EC)',
      ec.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'bench' }).toString(),
    ],
    ['RSA PRIVATE KEY (PKCS#1)', rsa.export({ type: 'pkcs1', format: 'pem' }).toString()],
  ];
  const numbered = (ls: string[], sep: string): string =>
    ls.map((l, i) => `${String(i + 1).padStart(6)}${sep}${l}`).join('\n');
  const forms: Array<[string, (pem: string) => string]> = [
    ['cat', (pem) => toolResult(pem)],
    ['read-tool', (pem) => toolResult(numbered(pem.trimEnd().split('\n'), '→'))],
    ['cat -n', (pem) => toolResult(numbered(pem.trimEnd().split('\n'), '\t'))],
    ['escaped in a file', (pem) => toolResult(`{"private_key": "${pem.trimEnd().split('\n').join('\\n')}\\n"}`)],
    [
      'tool-arg',
      (pem) =>
        JSON.stringify({
          type: 'response_item',
          payload: {
            type: 'function_call',
            name: 'shell',
            arguments: JSON.stringify({ cmd: `cat > key.pem <<'EOF'\n${pem}EOF` }),
            call_id: 'call_bench',
          },
        }),
    ],
    ['cut before END', (pem) => toolResult(numbered(pem.trimEnd().split('\n').slice(0, -1), '→'))],
    ['base64', (pem) => toolResult(`echo ${Buffer.from(pem).toString('base64')} | base64 -d > key.pem`)],
  ];
  console.log(`\n### Private keys made for the run, in every form (body lines left / body lines)\n`);
  console.log(`| key | ${forms.map(([f]) => f).join(' | ')} |\n|---|${forms.map(() => '---:').join('|')}|`);
  for (const [label, pem] of keys) {
    const body = pem
      .trimEnd()
      .split('\n')
      .filter((l) => !l.startsWith('-----') && !l.includes(':') && l.length >= 24);
    const cells: string[] = [];
    for (const [form, make] of forms) {
      const [out] = await createRedactor().redactJsonTexts([make(pem)]);
      const text = form === 'base64' ? out! : decodedText(out!);
      const left =
        form === 'base64'
          ? leaks(text, Buffer.from(pem).toString('base64'), 24)
            ? body.length
            : 0
          : body.filter((b) => text.includes(b.slice(0, 24))).length;
      cells.push(`${left}/${body.length}`);
    }
    console.log(`| ${label} | ${cells.join(' | ')} |`);
  }
}

/** Benign strings: each is a tool result; any change is a false positive. */
async function precision(mode: RedactionMode): Promise<void> {
  const dir = join(fixtures, 'redaction-benign');
  const sets = readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .sort();
  console.log(
    `\n### Precision (${mode}): benign strings (test/fixtures/redaction-benign)\n\n| set | strings | redacted |\n|---|---:|---:|`,
  );
  const wrong: string[] = [];
  for (const set of sets) {
    const strings = readFileSync(join(dir, set), 'utf8')
      .split('\n')
      .filter((l) => l.length > 0 && !l.startsWith('#'));
    const r = createRedactor(mode);
    const out = await r.redactJsonTexts(strings.map((s) => toolResult(s)));
    let changed = 0;
    strings.forEach((s, i) => {
      if (out[i] !== toolResult(s)) {
        changed++;
        wrong.push(
          `${set}: ${s}  →  ${(JSON.parse(out[i]!) as { message: { content: Array<{ content: string }> } }).message.content[0]!.content}`,
        );
      }
    });
    console.log(`| ${set.replace(/\.txt$/, '')} | ${strings.length} | ${changed} |`);
  }
  for (const w of wrong) console.log(`  false positive: ${w}`);
}

/**
 * Every real sample trace in test/fixtures (hostile and hand-made ones aside), each redacted
 * whole by a redactor of its own (as one export redacts one trace: the ids it declares are
 * its own and its file name's): findings by kind, and every value of an id's shape taken.
 */
async function samples(mode: RedactionMode): Promise<void> {
  const skip = new Set([
    'hostile',
    'bad-input',
    'gitleaks-cases',
    'secretlint-vectors',
    'redaction-benign',
    'workloads',
    'canonical',
  ]);
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) {
        if (!skip.has(e)) walk(p);
      } else if (/\.(jsonl|json|traj)$/.test(e)) files.push(p);
    }
  };
  walk(fixtures);
  // Values taken, by kind (distinct over all files), and what the shape rules took and default mode left as ids.
  const taken = new Map<string, Map<string, number>>();
  const shapeTaken = new Map<string, Map<string, string>>();
  let mb = 0;
  const t = performance.now();
  for (const f of files) {
    const rel = f.slice(fixtures.length + 1);
    const r = createRedactor(mode, {
      onRedacted: (kind, value) => {
        const k = taken.get(kind) ?? new Map<string, number>();
        taken.set(kind, k.set(value, (k.get(value) ?? 0) + 1));
        if (!kind.startsWith('strict-')) return;
        const set = shapeTaken.get(kind) ?? new Map<string, string>();
        shapeTaken.set(kind, set.set(value, rel));
      },
      onLeftAsId: (reason, _kind, value) => {
        if (!leftByDefault.has(value)) leftByDefault.set(value, reason);
      },
    });
    const text = readFileSync(f, 'utf8');
    mb += text.length / 2 ** 20;
    r.learnFileName(basename(f));
    await r.redactJsonTexts(text.split('\n'));
  }
  console.log(
    `\n### Real sample traces (${mode}): ${files.length} files, ${mb.toFixed(1)} MB (${((performance.now() - t) / 1000).toFixed(1)} s)\n`,
  );
  console.log(`| kind | occurrences | distinct values |\n|---|---:|---:|`);
  for (const [kind, values] of [...taken].sort(([a], [b]) => a.localeCompare(b)))
    console.log(`| ${kind} | ${[...values.values()].reduce((n, v) => n + v, 0)} | ${values.size} |`);
  const distinct = [...shapeTaken.values()].reduce((n, v) => n + v.size, 0);
  console.log(
    `\nthe shape rules (kinds strict-*) took ${distinct} distinct values of the real samples, none a secret${listStrict ? ':' : ' (--list-strict lists them)'}`,
  );
  if (listStrict)
    for (const [kind, values] of shapeTaken) for (const [v, file] of values) console.log(`  ${kind}: ${v}  (${file})`);
  if (mode === 'strict') {
    // What strict mode takes and default leaves, by the context that explained each value as an id.
    const table = new Map<string, Map<string, number>>();
    for (const [kind, values] of shapeTaken) {
      for (const v of values.keys()) {
        const why = leftByDefault.get(v) ?? 'taken by default too';
        const row = table.get(why) ?? new Map<string, number>();
        table.set(why, row.set(kind, (row.get(kind) ?? 0) + 1));
      }
    }
    const kinds = [...shapeTaken.keys()].sort();
    console.log(
      `\nThe values strict mode takes, by what made default mode leave them (distinct values):\n\n| why default leaves it | ${kinds.join(' | ')} | all |\n|---|${kinds.map(() => '---:').join('|')}|---:|`,
    );
    for (const [why, row] of [...table].sort(
      ([, a], [, b]) => [...b.values()].reduce((x, y) => x + y, 0) - [...a.values()].reduce((x, y) => x + y, 0),
    )) {
      console.log(
        `| ${why} | ${kinds.map((k) => row.get(k) ?? 0).join(' | ')} | ${[...row.values()].reduce((x, y) => x + y, 0)} |`,
      );
    }
  }
}

/** Each value of an id's shape default redaction left in the real samples, and why (the first reason seen). */
const leftByDefault = new Map<string, string>();

async function main(): Promise<void> {
  console.log(
    `redaction bench (${createRedactor().summary().detectors}); load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const runs: Array<[string, RecallCase[], () => Redactor]> = [];
  for (const mode of ['default', 'strict'] as const) {
    runs.push([`gitleaks' rule test cases, ${mode}`, gitleaksCases(), () => createRedactor(mode)]);
    runs.push([`secretlint's preset test vectors, ${mode}`, secretlintCases(), () => createRedactor(mode)]);
    // The same vectors without secretlint's preset: only rules that were not written against them.
    runs.push([
      `secretlint's preset test vectors without secretlint, ${mode}`,
      secretlintCases(),
      () => new Redactor([], 'core', { mode }),
    ]);
  }
  for (const [name, cases, redactor] of runs) await recall(name, cases, redactor);
  const names = [...summary.keys()];
  console.log(
    `\n### Recall per context, every run\n\n| context | ${names.join(' | ')} |\n|---|${names.map(() => '---:').join('|')}|`,
  );
  for (const context of CONTEXTS) {
    console.log(
      `| ${context} | ${names
        .map((n) => {
          const t = summary.get(n)!.get(context)!;
          return `${((100 * t.caught) / t.total).toFixed(1)}%`;
        })
        .join(' | ')} |`,
    );
  }
  await privateKeys();
  for (const mode of ['default', 'strict'] as const) {
    await precision(mode);
    await samples(mode);
  }
  console.log(
    `\nload average at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

void main();
