import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ensureBuilt, repoRoot, SPOTTER } from '../../support/helpers';

const cli = join(repoRoot, 'dist/cli.js');
const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('agent-trace report, redact, export, compare (the built dist/cli.js)', () => {
  let dir: string;
  before(() => {
    ensureBuilt(cli);
    ensureBuilt(join(repoRoot, 'dist/report.js'));
    dir = mkdtempSync(join(tmpdir(), 'share-cli-'));
  });

  it('report writes one HTML file with the CSP, the data block and the redaction summary', () => {
    const out = join(dir, 'r.html');
    const r = run('report', SPOTTER, '-o', out);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /r\.html: 1 trace, 3 sessions, 153 LLM calls, \d+ KB; opens offline/);
    assert.match(r.stderr, /^redaction: /m);
    const html = readFileSync(out, 'utf8');
    assert.match(
      html,
      /content="default-src &#39;none&#39;; script-src &#39;sha256-|content="default-src 'none'; script-src 'sha256-/,
    );
    assert.match(html, /<script type="application\/json" id="report-data">\{"schema":1/);
  });

  it('report --no-redact says so, and an unknown session is a usage error', () => {
    const r = run('report', SPOTTER, '-o', join(dir, 'r2.html'), '--no-redact');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /redaction: off \(--no-redact\)/);
    const bad = run('report', SPOTTER, '-o', join(dir, 'r3.html'), '--session', 'nope');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--session nope: no such session/);
  });

  it('redact refuses to overwrite its input and writes a copy that reads the same', () => {
    assert.equal(run('redact', SPOTTER, '-o', SPOTTER).code, 2);
    const line = JSON.parse(readFileSync(SPOTTER, 'utf8').split('\n')[0]!) as Record<string, unknown>;
    // A real first line of the Claude log with a user's home folder and a key in it.
    const planted = join(dir, 'planted.jsonl');
    writeFileSync(
      planted,
      [
        JSON.stringify({ ...line, cwd: '/home/jdoe/project', note: 'export OPENAI_API_KEY=abcdEFGH12345678' }),
        ...readFileSync(SPOTTER, 'utf8').split('\n').slice(1),
      ].join('\n'),
    );
    const out = join(dir, 'planted.redacted.jsonl');
    const r = run('redact', planted, '-o', out);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /every token figure unchanged/);
    assert.match(r.stderr, /removed 2 values: env-assignment 1, home-user 1/);
    const text = readFileSync(out, 'utf8');
    assert.ok(!text.includes('jdoe') && !text.includes('abcdEFGH12345678'));
  });

  it("redact takes a bare UUID-shaped key (gitleaks' Heroku case) and leaves a commit hash after `commit`; --redact strict takes both; a bad mode is a usage error", () => {
    const lines = readFileSync(SPOTTER, 'utf8').split('\n');
    const first = JSON.parse(lines[0]!) as Record<string, unknown>;
    const planted = join(dir, 'bare-uuid.jsonl');
    // The key stands bare in a sentence: nothing in the trace declares it or says id. The hash follows `commit `: git's log form.
    const commit = '7a23400eab5017830cb5bc748a35610891e2469e';
    writeFileSync(
      planted,
      [
        JSON.stringify({
          ...first,
          note: `set the key to fc568dc3-95e5-4bfc-1e4a-f119d9825df0 and retry after commit ${commit}`,
        }),
        ...lines.slice(1),
      ].join('\n'),
    );
    const plain = run('redact', planted, '-o', join(dir, 'bare-uuid.default.jsonl'));
    assert.equal(plain.code, 0, plain.stderr);
    const plainText = readFileSync(join(dir, 'bare-uuid.default.jsonl'), 'utf8');
    assert.ok(!plainText.includes('fc568dc3-95e5-4bfc-1e4a-f119d9825df0'));
    assert.ok(plainText.includes(`after commit ${commit}`));
    // The whole real session besides: nothing else of an id's shape is taken.
    assert.match(plain.stderr, /removed 1 value: strict-uuid 1 \(/);
    assert.match(plain.stderr, /the trace does not explain as ids\)/);
    const strict = run('redact', planted, '-o', join(dir, 'bare-uuid.strict.jsonl'), '--redact', 'strict');
    assert.equal(strict.code, 0, strict.stderr);
    assert.match(strict.stderr, /every token figure unchanged/);
    assert.match(strict.stderr, /strict-uuid \d+/);
    assert.match(strict.stderr, /ids included \(strict\)/);
    const strictText = readFileSync(join(dir, 'bare-uuid.strict.jsonl'), 'utf8');
    assert.ok(!strictText.includes('fc568dc3-95e5-4bfc-1e4a-f119d9825df0'));
    assert.ok(!strictText.includes(commit));
    const bad = run('redact', planted, '-o', join(dir, 'bare-uuid.bad.jsonl'), '--redact', 'paranoid');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--redact must be default or strict, not "paranoid"/);
  });

  it('redact, report and convert remove a private key shown by the Read tool (line-numbered), EC included', () => {
    // A real tool result of the Claude log, its content replaced by what Read prints for an EC key
    // file, marked failed so that the report shows its text too.
    const body = [
      'MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oTQmyxS+RDgkoAoGCCqGSM49',
      'AwEHoUQDQgAEXw0yBq9bFGe6j5t5XcX3QJ0S5bWqB4wK3g1m8u2fJdF0sT8pQ9uV',
      'r1Lh6Yc2oN4aE7kM3zW9xDqPs5TbJ8gHf0vR2iU1yA==',
    ];
    const content = ['-----BEGIN EC PRIVATE KEY-----', ...body, '-----END EC PRIVATE KEY-----', '']
      .map((l, i) => `${String(i + 1).padStart(6)}→${l}`)
      .join('\n');
    const lines = readFileSync(SPOTTER, 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('"type":"tool_result"') && l.includes('"content":"'));
    const record = JSON.parse(lines[at]!) as { message: { content: Array<{ type: string; content?: unknown }> } };
    for (const part of record.message.content)
      if (part.type === 'tool_result') Object.assign(part, { content, is_error: true });
    lines[at] = JSON.stringify(record);
    const planted = join(dir, 'key.jsonl');
    writeFileSync(planted, lines.join('\n'));
    const outs = {
      redact: join(dir, 'key.redacted.jsonl'),
      report: join(dir, 'key.html'),
      convert: join(dir, 'key.trace.jsonl'),
    };
    for (const [command, out] of Object.entries(outs)) {
      // Control: without redaction the key is carried into the output (so the check below can fail).
      if (command !== 'redact') {
        assert.equal(run(command, planted, '-o', out, '--no-redact').code, 0);
        assert.ok(readFileSync(out, 'utf8').includes(body[0]!.slice(0, 24)), `${command} --no-redact carries the key`);
      }
      const r = run(command, planted, '-o', out);
      assert.equal(r.code, 0, `${command}: ${r.stderr}`);
      assert.match(r.stderr, /private-key 1/, `${command}: ${r.stderr}`);
      const text = readFileSync(out, 'utf8');
      for (const b of body) assert.ok(!text.includes(b.slice(0, 24)), `${command} leaves ${b.slice(0, 24)}`);
    }
  });

  it('export --to each target reports its rows and, for Mooncake and Bailian, the ideal hit rate read back', () => {
    for (const to of ['mooncake', 'bailian', 'aiperf']) {
      const out = join(dir, `x.${to}.jsonl`);
      const r = run('export', SAMPLE, '--to', to, '-o', out, '--replicas', '2', '--stagger-s', '5');
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`x\\.${to}\\.jsonl: 180 ${to} rows from 3 sessions × 2 replicas, 5 s apart`));
      if (to !== 'aiperf') assert.match(r.stderr, /read back as \w+: ideal prefix-cache hit rate \d+\.\d%/);
    }
    assert.equal(run('export', SAMPLE, '--to', 'sglang', '-o', join(dir, 'y.jsonl')).code, 2);
    assert.equal(run('export', SAMPLE, '--to', 'aiperf', '-o', join(dir, 'y.jsonl'), '--replicas', '0').code, 2);
  });

  it('export --to weka writes one document per top-level session, prints the read-back hit rate and the AIPerf command', () => {
    const one = join(dir, 'spotter.weka.json');
    const r = run('export', SPOTTER, '--to', 'weka', '-o', one);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /spotter\.weka\.json: 1 Weka trace, \d+ requests, 2 sub-agents \(64-token blocks, full blocks only\)/,
    );
    assert.match(r.stderr, /read back as weka: ideal prefix-cache hit rate \d+\.\d%/);
    assert.match(
      r.stderr,
      /aiperf profile --url URL --model MODEL --endpoint-type chat --streaming --custom-dataset-type weka_trace --input-file \S+spotter\.weka\.json --fixed-schedule/,
    );
    assert.equal((JSON.parse(readFileSync(one, 'utf8')) as { hash_id_scope: string }).hash_id_scope, 'local');
    // Two top-level sessions: a folder, or a usage message naming them.
    const refused = run('export', SAMPLE, '--to', 'weka', '-o', join(dir, 'two.json'));
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /2 top-level sessions make 2 Weka traces \(ae4a77f8-aedd-4bc1-888f-c94edc91af04, e5821007-9ca0-4a36-afc0-94da583da0ea\)/,
    );
    const folder = run('export', SAMPLE, '--to', 'weka', '-o', join(dir, 'weka') + '/');
    assert.equal(folder.code, 0, folder.stderr);
    assert.match(folder.stderr, /weka\/: 2 files: 2 Weka traces/);
    assert.equal(run('export', SPOTTER, '--to', 'weka', '-o', join(dir, 'r.json'), '--replicas', '2').code, 2);
  });

  it('compare joins relabelled real AIPerf records to the export and prints measured beside simulated', () => {
    const out = join(dir, 'c.aiperf.jsonl');
    assert.equal(run('export', SAMPLE, '--to', 'aiperf', '-o', out, '--session', 'e5821007').code, 0);
    const id = (JSON.parse(readFileSync(out, 'utf8').split('\n')[0]!) as { session_id: string }).session_id;
    const raw = readFileSync(join(repoRoot, 'test/fixtures/aiperf/qwen_concurrency1.profile_export.jsonl'), 'utf8')
      .trim()
      .split('\n');
    const results = join(dir, 'profile_export.jsonl');
    writeFileSync(
      results,
      raw
        .map((l, i) => {
          const r = JSON.parse(l);
          r.metadata.conversation_id = id;
          r.metadata.turn_index = i;
          return JSON.stringify(r);
        })
        .join('\n'),
    );
    const r = run('compare', SAMPLE, results, '--session', 'e5821007', '--json');
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.matched, 10);
    assert.equal(doc.join, 'conversation-turn');
    assert.ok(doc.predicted.hitRate > 0);
    const text = run('compare', SAMPLE, results, '--session', 'e5821007');
    assert.match(text.stdout, /joined 10 of 41 exported requests/);
    assert.match(text.stdout, /TTFT mean +\d+ ms/);
  });
});
