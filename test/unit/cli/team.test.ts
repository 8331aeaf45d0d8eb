import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { queryFolder } from '../../../src/cli/team';
import { TEAM_TABLES } from '../../../src/core/team/teamSchema';
import { NAMED_QUERIES } from '../../../src/core/team/namedQueries';
import { EDIT_LOOP, ensureBuilt, fixtures, repoRoot, SPOTTER } from '../../support/helpers';
import { TEAM_SAMPLES } from '../../support/teamSamples';

const cli = join(repoRoot, 'dist/cli.js');

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const SAMPLES = TEAM_SAMPLES;

type Row = Record<string, string | number | boolean | null>;

async function rows(dir: string, sql: string): Promise<Row[]> {
  const r = await queryFolder(dir, sql);
  return r.rows.map((values) => Object.fromEntries(r.columns.map((c, j) => [c, values[j]!])));
}

/** Equal dollars: the same calls summed in another order differ in the last bits only. */
function sameUsd(actual: unknown, expected: number | null, what: string): void {
  if (expected === null) return assert.equal(actual, null, what);
  assert.equal(typeof actual, 'number', `${what}: ${String(actual)}`);
  assert.ok(
    Math.abs((actual as number) - expected) <= 1e-9 * Math.max(1, Math.abs(expected)),
    `${what}: ${String(actual)} ≠ ${expected}`,
  );
}

describe('agent-trace export --to parquet and query (the built dist/cli.js, DuckDB reading the files)', () => {
  let dir: string;
  before(() => {
    ensureBuilt(cli);
    dir = mkdtempSync(join(tmpdir(), 'agent-trace-team-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the hand-counted sample: 48 calls of session ae4a77f8 with Σinput 5,062,122 and Σcached 4,997,060; the whole trace $5.1342127 as analyze prices it', async () => {
    const out = join(dir, 'sample');
    const r = run('export', '--to', 'parquet', '-o', out, join(repoRoot, 'samples/claude-code-sessions.trace.jsonl'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /3 sessions, 90 LLM calls, 101 tool calls from 1 trace in 6 Parquet files/);
    const [s] = await rows(
      out,
      `SELECT count(*) AS n, sum("gen_ai.usage.input_tokens") AS input, sum("gen_ai.usage.cache_read.input_tokens") AS cached FROM calls WHERE "gen_ai.conversation.id" = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04'`,
    );
    assert.deepEqual(s, { n: 48, input: 5062122, cached: 4997060 });
    const [t] = await rows(out, 'SELECT sum(cost_usd) AS usd FROM calls');
    sameUsd(t!.usd, 5.1342127, 'Σ cost_usd');
  });

  it('writes Hive partitions agent=/date=/machine= per table, user and machine hashed unless --plain-names', async () => {
    const hashed = join(dir, 'hashed');
    assert.equal(
      run('export', '--to', 'parquet', '-o', hashed, '--user', 'jdoe', '--machine', 'jdoe-laptop', SPOTTER).code,
      0,
    );
    // (context_parts is written with --context only: no folder here.)
    const files = (t: string) =>
      (existsSync(join(hashed, t)) ? (readdirSync(join(hashed, t), { recursive: true }) as string[]) : [])
        .filter((f) => f.endsWith('.parquet'))
        .map((f) => f.split(/[\\/]/).slice(0, 3).join('/'));
    for (const t of TEAM_TABLES)
      assert.ok(
        files(t.name).every((f) => /^agent=claude-code\/date=\d{4}-\d{2}-\d{2}\/machine=h[0-9a-f]{16}$/.test(f)),
        files(t.name).join(', '),
      );
    const who = await rows(hashed, 'SELECT DISTINCT "user.hash" AS h, "user.name" AS n, machine FROM calls');
    assert.equal(who.length, 1);
    assert.match(String(who[0]!.h), /^[0-9a-f]{16}$/);
    assert.equal(who[0]!.n, null);
    for (const f of readdirSync(hashed, { recursive: true }) as string[]) assert.ok(!f.includes('jdoe'), f);
    // A salt changes the hash: without it a name can be found by hashing guesses.
    const salted = join(dir, 'salted');
    assert.equal(
      run('export', '--to', 'parquet', '-o', salted, '--user', 'jdoe', '--salt', 'team-secret', SPOTTER).code,
      0,
    );
    const [s] = await rows(salted, 'SELECT DISTINCT "user.hash" AS h FROM sessions');
    assert.notEqual(s!.h, who[0]!.h);
    const plain = join(dir, 'plain');
    assert.equal(
      run(
        'export',
        '--to',
        'parquet',
        '-o',
        plain,
        '--user',
        'jdoe',
        '--machine',
        'jdoe-laptop',
        '--plain-names',
        SPOTTER,
      ).code,
      0,
    );
    const [p] = await rows(plain, 'SELECT DISTINCT "user.hash" AS h, "user.name" AS n, machine FROM tool_calls');
    assert.deepEqual(p, { h: null, n: 'jdoe', machine: 'jdoe-laptop' });
  });

  it('redacts trace text as every export does (a planted key and home folder are gone), and --no-redact keeps them', async () => {
    // The real log with a user's home folder in every cwd and a key in a command the agent ran.
    const planted = join(dir, 'planted.jsonl');
    const text = readFileSync(SPOTTER, 'utf8')
      .replaceAll('/home/USER/projects', '/home/jdoe/projects')
      .replaceAll('"command":"bd show', '"command":"OPENAI_API_KEY=abcdEFGH12345678 bd show');
    assert.ok(text.includes('abcdEFGH12345678'));
    writeFileSync(planted, text);
    const out = join(dir, 'redacted');
    const r = run('export', '--to', 'parquet', '-o', out, planted);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /redaction: removed \d+ values: env-assignment \d+.*home-user \d+/);
    const bytes = (readdirSync(out, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.parquet'))
      .map((f) => readFileSync(join(out, f)).toString('latin1'))
      .join('');
    assert.ok(!bytes.includes('/home/jdoe') && !bytes.includes('abcdEFGH12345678'));
    const [s] = await rows(out, `SELECT project FROM sessions WHERE session_role = 'main'`);
    assert.doesNotMatch(String(s!.project), /jdoe/);
    const kept = join(dir, 'kept');
    assert.match(run('export', '--to', 'parquet', '-o', kept, '--no-redact', planted).stderr, /redaction: off/);
    const [k] = await rows(kept, `SELECT project FROM sessions WHERE session_role = 'main'`);
    assert.equal(k!.project, '/home/jdoe/projects/spotter-worktrees/spotter-4te');
  });

  it('round trip on real samples: DuckDB sums over the Parquet rows equal analyze --json figure for figure', async () => {
    let sessionsChecked = 0;
    for (const file of SAMPLES) {
      const name = relative(repoRoot, file);
      const out = join(dir, `rt-${sessionsChecked}-${name.replace(/\W+/g, '_')}`);
      const x = run('export', '--to', 'parquet', '-o', out, file);
      assert.equal(x.code, 0, `${name}: ${x.stderr}`);
      const a = run('analyze', file, '--json');
      const report = JSON.parse(a.stdout) as {
        cost: {
          totalUsd: number | null;
          byModel: Record<string, { usd: number | null; calls: number; unpricedCalls: number }>;
          unpricedCalls: number;
        };
        sessions: Array<{
          id: string;
          llmCalls: number;
          userTurns: number;
          tokensSource: string;
          cacheHitRate: number | null;
          tokens: {
            input: number | null;
            cached: number | null;
            appended: number | null;
            cacheWrite: number | null;
            output: number | null;
          };
          toolCalls: { total: number; failed: number; denied: number };
          retryLoops: Array<{ attempts: number; wastedUsd: number | null }>;
          missCauses: Record<string, number>;
          compactions: unknown[];
          cost: { totalUsd: number | null; unpricedCalls: number; pricedCalls: number };
          cacheTtl: { replays: Array<{ ttlMin: number; costUsd: number | null }> };
        }>;
      };
      // Per session from the calls and tool_calls tables: an independent sum over rows.
      const calls = new Map(
        (
          await rows(
            out,
            `SELECT "gen_ai.conversation.id" AS id, count(*) AS n, sum("gen_ai.usage.input_tokens") AS input, sum("gen_ai.usage.cache_read.input_tokens") AS cached,
        sum(appended_input_tokens) AS appended, sum("gen_ai.usage.cache_creation.input_tokens") AS cache_write, sum("gen_ai.usage.output_tokens") AS output,
        sum(cost_usd) AS usd, count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced FROM calls GROUP BY 1`,
          )
        ).map((r) => [r.id, r]),
      );
      const tools = existsSync(join(out, 'tool_calls'))
        ? new Map(
            (
              await rows(
                out,
                `SELECT "gen_ai.conversation.id" AS id, count(*) AS n, count(*) FILTER (WHERE is_error) AS failed, count(*) FILTER (WHERE denied_by_user) AS denied,
            count(DISTINCT retry_loop_id) AS loops, count(retry_loop_id) AS attempts FROM tool_calls GROUP BY 1`,
              )
            ).map((r) => [r.id, r]),
          )
        : new Map<unknown, Row>();
      const sessions = new Map(
        (await rows(out, 'SELECT * FROM sessions')).map((r) => [r['gen_ai.conversation.id'], r]),
      );
      assert.equal(sessions.size, report.sessions.length, `${name}: sessions`);
      for (const s of report.sessions) {
        const what = `${name} session ${s.id}`;
        const c = calls.get(s.id);
        const t = tools.get(s.id);
        const row = sessions.get(s.id);
        assert.ok(row, `${what}: no sessions row`);
        assert.equal(c?.n ?? 0, s.llmCalls, `${what}: calls`);
        if (s.tokensSource === 'calls') {
          assert.deepEqual(
            {
              input: c!.input,
              cached: c!.cached,
              appended: c!.appended,
              cacheWrite: c!.cache_write,
              output: c!.output,
            },
            s.tokens,
            `${what}: tokens`,
          );
        }
        sameUsd(c === undefined ? s.cost.totalUsd : c.usd, s.cost.totalUsd, `${what}: cost`);
        assert.equal(c?.unpriced ?? 0, s.cost.unpricedCalls, `${what}: unpriced calls`);
        assert.deepEqual(
          { total: t?.n ?? 0, failed: t?.failed ?? 0, denied: t?.denied ?? 0 },
          { total: s.toolCalls.total, failed: s.toolCalls.failed, denied: s.toolCalls.denied },
          `${what}: tool calls`,
        );
        assert.equal(t?.loops ?? 0, s.retryLoops.length, `${what}: retry loops`);
        assert.equal(
          t?.attempts ?? 0,
          s.retryLoops.reduce((n, l) => n + l.attempts, 0),
          `${what}: loop attempts`,
        );
        // The sessions table: the session's own figures, columns read back through DuckDB.
        assert.equal(row['llm_calls'], s.llmCalls);
        assert.equal(row['user_turns'], s.userTurns);
        assert.deepEqual(
          [
            row['gen_ai.usage.input_tokens'],
            row['gen_ai.usage.cache_read.input_tokens'],
            row['appended_input_tokens'],
            row['gen_ai.usage.cache_creation.input_tokens'],
            row['gen_ai.usage.output_tokens'],
          ],
          [s.tokens.input, s.tokens.cached, s.tokens.appended, s.tokens.cacheWrite, s.tokens.output],
          `${what}: session tokens`,
        );
        assert.equal(row['tokens_source'], s.tokensSource);
        assert.equal(row['cache_hit_rate'], s.cacheHitRate);
        sameUsd(row['cost_usd'], s.cost.totalUsd, `${what}: session cost`);
        assert.deepEqual([row['priced_calls'], row['unpriced_calls']], [s.cost.pricedCalls, s.cost.unpricedCalls]);
        assert.deepEqual(
          [row['tool_calls'], row['failed_tool_calls'], row['denied_tool_calls'], row['retry_loops']],
          [s.toolCalls.total, s.toolCalls.failed, s.toolCalls.denied, s.retryLoops.length],
        );
        const wasted = s.retryLoops.some((l) => l.wastedUsd === null)
          ? null
          : s.retryLoops.reduce((n, l) => n + l.wastedUsd!, 0);
        sameUsd(row['retry_loop_wasted_usd'], wasted, `${what}: wasted`);
        assert.deepEqual(
          [
            row['cache_misses_first_call'],
            row['cache_misses_subagent_start'],
            row['cache_misses_compaction'],
            row['cache_misses_idle_gap'],
            row['cache_misses_prefix_change'],
            row['cache_misses_unexplained'],
          ],
          [
            s.missCauses['first-call'],
            s.missCauses['subagent-start'],
            s.missCauses['compaction'],
            s.missCauses['idle-gap'],
            s.missCauses['prefix-change'],
            s.missCauses['unexplained'],
          ],
          `${what}: miss causes`,
        );
        assert.equal(row['compactions'], s.compactions.length);
        sameUsd(
          row['cache_ttl_1h_cost_usd'],
          s.cacheTtl.replays.find((p) => p.ttlMin === 60)?.costUsd ?? null,
          `${what}: 1-hour TTL cost`,
        );
        sessionsChecked += 1;
      }
      // The whole trace, and per model, from the calls table.
      const [total] = await rows(
        out,
        'SELECT sum(cost_usd) AS usd, count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced FROM calls',
      );
      if (report.sessions.some((s) => s.llmCalls > 0)) {
        sameUsd(total!.usd, report.cost.totalUsd, `${name}: total cost`);
        assert.equal(total!.unpriced, report.cost.unpricedCalls, `${name}: unpriced`);
        const byModel = await rows(
          out,
          `SELECT coalesce("gen_ai.request.model", 'unknown model') AS model, count(*) AS calls, sum(cost_usd) AS usd, count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced FROM calls GROUP BY 1`,
        );
        assert.equal(byModel.length, Object.keys(report.cost.byModel).length, `${name}: models`);
        for (const m of byModel) {
          const e = report.cost.byModel[String(m.model)]!;
          assert.ok(e, `${name}: model ${String(m.model)}`);
          assert.equal(m.calls, e.calls);
          assert.equal(m.unpriced, e.unpricedCalls);
          sameUsd(m.usd, e.usd, `${name}: ${String(m.model)} cost`);
        }
      }
    }
    assert.ok(sessionsChecked >= 19, `only ${sessionsChecked} sessions checked`);
  });

  it('incremental: a second export writes only the traces that changed, and a trace that changed leaves no stale partition behind', async () => {
    const src = join(dir, 'incremental-src');
    const out = join(dir, 'incremental');
    const codex = join(src, 'tracelab-agents-md-0.114.jsonl');
    mkdirSync(src);
    copyFileSync(EDIT_LOOP, join(src, 'edit-retry-loop.jsonl'));
    copyFileSync(join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl'), codex);
    const first = run('export', '--to', 'parquet', '-o', out, src);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /from 2 traces in/);
    const again = run('export', '--to', 'parquet', '-o', out, src);
    assert.match(
      again.stderr,
      /: 0 sessions, 0 LLM calls, 0 tool calls from 0 traces in 0 Parquet files .*; 2 unchanged since the last export/,
    );
    // The Codex rollout cut to its first lines (its session meta, no call): rewritten, its calls and tool calls files gone.
    writeFileSync(codex, readFileSync(codex, 'utf8').split('\n').slice(0, 2).join('\n') + '\n');
    const third = run('export', '--to', 'parquet', '-o', out, src);
    assert.match(third.stderr, /from 1 trace in .*; 1 unchanged since the last export/);
    const expected =
      (JSON.parse(run('analyze', codex, '--json').stdout) as { sessions: Array<{ llmCalls: number }> }).sessions.reduce(
        (n, x) => n + x.llmCalls,
        0,
      ) +
      (
        JSON.parse(run('analyze', EDIT_LOOP, '--json').stdout) as { sessions: Array<{ llmCalls: number }> }
      ).sessions.reduce((n, x) => n + x.llmCalls, 0);
    const [c] = await rows(
      out,
      `SELECT count(*) AS n, count(*) FILTER (WHERE source_format = 'codex') AS codex FROM calls`,
    );
    assert.deepEqual(c, { n: expected, codex: 0 });
    assert.match(run('export', '--to', 'parquet', '-o', out, '--full', src).stderr, /from 2 traces in/);
  });

  it('incremental on a growing log: nothing rewritten when nothing changed, only the grown session when it grew, and every query equals a full export', async () => {
    const src = join(dir, 'growing-src');
    const out = join(dir, 'growing');
    const full = join(dir, 'growing-full');
    mkdirSync(src);
    // A live Claude Code session written line by line (cut at a line, as an agent flushes them), beside a finished Codex rollout.
    const lines = readFileSync(EDIT_LOOP, 'utf8')
      .split('\n')
      .filter((l) => l.length > 0);
    const live = join(src, 'e5821007-9ca0-4a36-afc0-94da583da0ea.jsonl');
    writeFileSync(live, lines.slice(0, Math.floor(lines.length / 2)).join('\n') + '\n');
    copyFileSync(join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl'), join(src, 'codex.jsonl'));
    assert.match(run('export', '--to', 'parquet', '-o', out, src).stderr, /from 2 traces in/);
    const listing = (): Map<string, string> =>
      new Map(
        (readdirSync(out, { recursive: true }) as string[])
          .filter((f) => f.endsWith('.parquet'))
          .map((f) => [f.split(/[\\/]/).join('/'), readFileSync(join(out, f)).toString('base64')]),
      );
    const mtimes = (): Map<string, number> =>
      new Map(
        (readdirSync(out, { recursive: true }) as string[])
          .filter((f) => f.endsWith('.parquet'))
          .map((f) => [f.split(/[\\/]/).join('/'), statSync(join(out, f)).mtimeMs]),
      );
    const [half] = await rows(out, `SELECT count(*) AS n FROM calls WHERE agent = 'claude-code'`);
    const first = mtimes();
    const firstBytes = listing();

    // Nothing changed: nothing written, not a file touched.
    assert.match(
      run('export', '--to', 'parquet', '-o', out, src).stderr,
      /from 0 traces in 0 Parquet files .*; 2 unchanged/,
    );
    assert.deepEqual(mtimes(), first);

    // The session grew by the rest of its lines: only its files are written again.
    appendFileSync(live, lines.slice(Math.floor(lines.length / 2)).join('\n') + '\n');
    assert.match(run('export', '--to', 'parquet', '-o', out, src).stderr, /from 1 trace in .*; 1 unchanged/);
    const grown = mtimes();
    const changed = [...grown.keys()].filter((f) => grown.get(f) !== first.get(f)).sort();
    assert.ok(changed.length > 0);
    assert.ok(
      changed.every((f) => f.includes('agent=claude-code/')),
      `only the grown session's files: ${changed.join(', ')}`,
    );
    const after = listing();
    for (const [f, bytes] of firstBytes)
      if (f.includes('agent=codex/')) assert.equal(after.get(f), bytes, `${f} kept byte for byte`);
    const [grownCalls] = await rows(out, `SELECT count(*) AS n FROM calls WHERE agent = 'claude-code'`);
    const analyzed = (JSON.parse(run('analyze', live, '--json').stdout) as { sessions: Array<{ llmCalls: number }> })
      .sessions;
    assert.equal(
      grownCalls!.n,
      analyzed.reduce((n, x) => n + x.llmCalls, 0),
    );
    assert.ok(
      Number(grownCalls!.n) > Number(half!.n),
      `${String(grownCalls!.n)} calls after, ${String(half!.n)} before`,
    );

    // The same answers as a full export of the grown folder: every table's rows and every named query.
    assert.match(run('export', '--to', 'parquet', '-o', full, '--full', src).stderr, /from 2 traces in/);
    // Dollars summed in another order (other files, parallel scans) differ in the last bits only: 12 digits compared.
    const sorted = async (folder: string, sql: string): Promise<string[]> =>
      (await rows(folder, sql))
        .map((r) =>
          JSON.stringify(r, (_, v: unknown) =>
            typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(12)) : v,
          ),
        )
        .sort();
    for (const t of TEAM_TABLES)
      assert.deepEqual(
        await sorted(out, `SELECT * FROM ${t.name}`),
        await sorted(full, `SELECT * FROM ${t.name}`),
        t.name,
      );
    for (const q of NAMED_QUERIES) assert.deepEqual(await sorted(out, q.sql), await sorted(full, q.sql), q.name);
  });

  it('compaction: the files become a few, every table and named query answers as before, and incremental exports stay exact after it', async () => {
    const src = join(dir, 'compact-src');
    const out = join(dir, 'compact');
    const full = join(dir, 'compact-full');
    mkdirSync(src);
    const lines = readFileSync(EDIT_LOOP, 'utf8')
      .split('\n')
      .filter((l) => l.length > 0);
    const live = join(src, 'e5821007-9ca0-4a36-afc0-94da583da0ea.jsonl');
    const codex = join(src, 'codex.jsonl');
    writeFileSync(live, lines.slice(0, Math.floor(lines.length / 2)).join('\n') + '\n');
    copyFileSync(join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl'), codex);
    copyFileSync(join(fixtures, 'claude-code/user-rejections.jsonl'), join(src, 'rejections.jsonl'));
    const parquet = (folder: string): string[] =>
      (readdirSync(folder, { recursive: true }) as string[])
        .filter((f) => f.endsWith('.parquet'))
        .map((f) => f.split(/[\\/]/).join('/'))
        .sort();
    // Dollars summed in another order (other files, parallel scans) differ in the last bits only: 12 digits compared.
    const sorted = async (folder: string, sql: string): Promise<string[]> =>
      (await rows(folder, sql))
        .map((r) =>
          JSON.stringify(r, (_, v: unknown) =>
            typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(12)) : v,
          ),
        )
        .sort();
    const sameAnswers = async (what: string): Promise<void> => {
      rmSync(full, { recursive: true, force: true });
      assert.equal(run('export', '--to', 'parquet', '--no-redact', '-o', full, src).code, 0);
      for (const t of TEAM_TABLES)
        assert.deepEqual(
          await sorted(out, `SELECT * FROM ${t.name}`),
          await sorted(full, `SELECT * FROM ${t.name}`),
          `${what}: ${t.name}`,
        );
      for (const q of NAMED_QUERIES)
        assert.deepEqual(await sorted(out, q.sql), await sorted(full, q.sql), `${what}: ${q.name}`);
    };

    assert.equal(run('export', '--to', 'parquet', '--no-redact', '-o', out, src).code, 0);
    const before = parquet(out);
    const compacted = run('compact', out);
    assert.equal(compacted.code, 0, compacted.stderr);
    assert.match(compacted.stderr, new RegExp(`compacted: ${before.length} files into 3 under`));
    // One file per table, all in the compacted tier: the export's own files are gone.
    assert.deepEqual(
      parquet(out).map((f) => f.replace(/compacted-[^/]+\.parquet$/, 'F')),
      ['compacted/calls/F', 'compacted/sessions/F', 'compacted/tool_calls/F'],
    );
    assert.ok(before.length > 3, `${before.length} files before`);
    await sameAnswers('compacted');

    // Nothing changed: nothing written, the compacted files untouched.
    const stamps = new Map(parquet(out).map((f) => [f, statSync(join(out, f)).mtimeMs]));
    assert.match(
      run('export', '--to', 'parquet', '--no-redact', '-o', out, src).stderr,
      /from 0 traces in 0 Parquet files .*; 3 unchanged/,
    );
    assert.deepEqual(new Map(parquet(out).map((f) => [f, statSync(join(out, f)).mtimeMs])), stamps);

    // The live session grows, the Codex rollout is cut to no call: both written again, their compacted rows replaced, not added to.
    appendFileSync(live, lines.slice(Math.floor(lines.length / 2)).join('\n') + '\n');
    writeFileSync(codex, readFileSync(codex, 'utf8').split('\n').slice(0, 2).join('\n') + '\n');
    const grown = run('export', '--to', 'parquet', '--no-redact', '-o', out, src);
    assert.match(grown.stderr, /from 2 traces in .*; 1 unchanged/);
    // (--no-redact: redaction numbers its placeholders per run, so a trace exported in another run than the full export's would differ in them.)
    const [c] = await rows(out, `SELECT count(*) FILTER (WHERE source_format = 'codex') AS codex FROM calls`);
    assert.equal(c!.codex, 0);
    await sameAnswers('grown after compaction');
    assert.ok(
      parquet(out).every((f) => f.startsWith('compacted/')),
      parquet(out).join(', '),
    );
    assert.match(grown.stderr, /compacted \(2 traces written again replaced their compacted rows\)/);

    // --full rewrites every trace: compacted again at once, still one copy of each row.
    assert.match(
      run('export', '--to', 'parquet', '--no-redact', '-o', out, '--full', src).stderr,
      /compacted \(3 traces written again/,
    );
    await sameAnswers('--full after compaction');
  });

  it('context parts (--context): per trace, the Parquet sums by kind, tool, MCP server and file equal agent-trace context --json, and context-sources ranks them', async () => {
    const traces = [
      EDIT_LOOP,
      join(fixtures, 'claude-code/context-excerpt.jsonl'),
      join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl'),
    ];
    type Total = { tokens: number; usd: number | null; parts?: number };
    const near = (a: unknown, b: number, what: string) =>
      assert.ok(
        typeof a === 'number' && Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)),
        `${what}: ${String(a)} ≠ ${b}`,
      );
    for (const [i, trace] of traces.entries()) {
      const out = join(dir, `context-${i}`);
      const r = run('export', '--to', 'parquet', '--context', '--no-redact', '-o', out, trace);
      assert.equal(r.code, 0, r.stderr);
      const doc = JSON.parse(run('context', trace, '--json').stdout) as {
        totals: {
          inputUsd: number | null;
          byKind: Record<string, Total>;
          byTool: Array<Total & { name: string }>;
          byMcpServer: Array<Total & { name: string }>;
          byFile: Array<Total & { name: string }>;
        };
        sessions: Array<{ calls: unknown[] }>;
      };
      const parts = await rows(out, 'SELECT count(*) AS n, sum(cost_usd) AS usd FROM context_parts');
      assert.ok(Number(parts[0]!.n) > 0, `${trace}: no context part`);
      if (doc.totals.inputUsd !== null) near(parts[0]!.usd, doc.totals.inputUsd, `${trace}: Σ cost_usd = inputUsd`);
      const byKind = await rows(
        out,
        'SELECT kind, sum(tokens) AS tokens, sum(cost_usd) AS usd FROM context_parts GROUP BY kind',
      );
      const kinds = Object.entries(doc.totals.byKind).filter(([, t]) => t.tokens > 0);
      assert.deepEqual(byKind.map((k) => k.kind).sort(), kinds.map(([k]) => k).sort(), `${trace}: kinds`);
      for (const [kind, t] of kinds) {
        const got = byKind.find((k) => k.kind === kind)!;
        near(got.tokens, t.tokens, `${trace} ${kind} tokens`);
        if (t.usd !== null) near(got.usd, t.usd, `${trace} ${kind} usd`);
      }
      const grouped = async (
        column: string,
        where: string,
        expected: Array<Total & { name: string }>,
        what: string,
      ) => {
        const got = await rows(
          out,
          `SELECT ${column} AS name, sum(tokens) AS tokens, sum(cost_usd) AS usd, count(*) AS parts FROM context_parts WHERE ${column} IS NOT NULL ${where} GROUP BY 1`,
        );
        assert.equal(got.length, expected.length, `${trace}: ${what} groups`);
        for (const e of expected) {
          const g = got.find((x) => x.name === e.name);
          assert.ok(g, `${trace}: ${what} ${e.name}`);
          near(g.tokens, e.tokens, `${trace} ${what} ${e.name} tokens`);
          assert.equal(g.parts, e.parts, `${trace} ${what} ${e.name} parts`);
          if (e.usd !== null) near(g.usd, e.usd, `${trace} ${what} ${e.name} usd`);
        }
      };
      await grouped('"gen_ai.tool.name"', '', doc.totals.byTool, 'tool');
      await grouped('mcp_server', '', doc.totals.byMcpServer, 'MCP server');
      await grouped('target_file', "AND kind = 'toolResult'", doc.totals.byFile, 'file');
      // Every part lies within its session's calls.
      const [bad] = await rows(
        out,
        'SELECT count(*) FILTER (WHERE first_call_index > last_call_index OR calls_carried <> last_call_index - first_call_index + 1) AS n FROM context_parts',
      );
      assert.equal(bad!.n, 0);
      // The named query ranks the sources by their dollars: its first row is the costliest group.
      const q = JSON.parse(run('query', out, '--named', 'context-sources', '--json').stdout) as Array<{
        cost_usd: number | null;
      }>;
      assert.ok(q.length > 0);
      const usd = q.map((x) => x.cost_usd ?? 0);
      assert.deepEqual(
        usd,
        [...usd].sort((a, b) => b - a),
        `${trace}: context-sources ordered by dollars`,
      );
    }
  });

  it('on export threads the rows are those one thread writes: every text and count equal (secrets numbered, ids learnt, in the order of the traces), dollars to 12 digits', async () => {
    ensureBuilt(join(repoRoot, 'dist/teamExportWorker.js'));
    // Traces of three readers whose home folders the one redactor numbers across traces (several distinct ones).
    const sources = ['claude-code', 'codex', 'otlp'].map((f) => join(fixtures, f));
    const exportWith = (threads: string, out: string) => {
      const r = spawnSync(process.execPath, [cli, 'export', '--to', 'parquet', '-o', out, ...sources], {
        encoding: 'utf8',
        env: { ...process.env, AGENT_TRACE_EXPORT_THREADS: threads },
      });
      assert.equal(r.status, 0, r.stderr);
      return r.stderr.replaceAll(out, 'OUT');
    };
    const one = join(dir, 'one-thread');
    const three = join(dir, 'three-threads');
    const said = exportWith('0', one);
    assert.equal(exportWith('3', three), said);
    const distinct = /home-user \d+ \((\d+) distinct\)/.exec(said);
    assert.ok(distinct && Number(distinct[1]) >= 2, `several home folders numbered across traces: ${said}`);
    const files = (d: string) =>
      (readdirSync(d, { recursive: true }) as string[]).filter((f) => f.endsWith('.parquet')).sort();
    assert.deepEqual(files(three), files(one));
    assert.ok(files(one).length >= 20, `${files(one).length} files`);
    // A price's per-token rate is cached per model and tier from the first call that asks (src/core/cost/genaiPrices.ts),
    // so a thread that priced other traces first may differ in a dollar's last bits, as an incremental export does.
    for (const t of ['calls', 'tool_calls', 'sessions']) {
      const a = await rows(one, `SELECT * FROM ${t} ORDER BY ALL`);
      const b = await rows(three, `SELECT * FROM ${t} ORDER BY ALL`);
      assert.equal(b.length, a.length, t);
      assert.ok(a.length > 0, t);
      a.forEach((row, i) => {
        for (const [k, v] of Object.entries(row)) {
          const w = b[i]![k];
          if (typeof v === 'number' && !Number.isInteger(v) && typeof w === 'number')
            assert.ok(Math.abs(v - w) <= 1e-12 * Math.max(1, Math.abs(v)), `${t} row ${i} ${k}: ${w} ≠ ${v}`);
          else assert.equal(w, v, `${t} row ${i} ${k}`);
        }
      });
    }
  });

  it('a folder of hostile files: the readable traces are exported, each other file is named with its reason, no escape sequence reaches the terminal', async () => {
    const out = join(dir, 'hostile');
    const r = run('export', '--to', 'parquet', '-o', out, join(fixtures, 'hostile'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /hostile\/binary\.jsonl: not read \(This file is not text/);
    assert.match(r.stderr, /hostile\/whitespace-only\.jsonl: not read \(This file is empty/);
    assert.match(r.stderr, /from \d+ traces in \d+ Parquet files .*; 5 not read/);
    for (const c of ['\u001b', '\u0007', '\u202e'])
      assert.ok(!r.stderr.includes(c), `U+${c.codePointAt(0)!.toString(16)} reached stderr`);
    const [n] = await rows(out, 'SELECT count(*) AS n FROM sessions');
    assert.ok(Number(n!.n) > 0);
  });

  it("every named query runs on an export; query prints a table, --json an array, and a bad query exits 1 with DuckDB's message", () => {
    const out = join(dir, 'named');
    assert.equal(
      run(
        'export',
        '--to',
        'parquet',
        '-o',
        out,
        SPOTTER,
        join(fixtures, 'claude-code/m-claude'),
        join(fixtures, 'codex'),
      ).code,
      0,
    );
    for (const q of NAMED_QUERIES) {
      const r = run('query', out, '--named', q.name, '--json', '--set', 'budget_usd=0.5');
      assert.equal(r.code, 0, `${q.name}: ${r.stderr}`);
      assert.ok(Array.isArray(JSON.parse(r.stdout)), q.name);
    }
    // SPOTTER's loop: 7 failed "git add && git commit" attempts over 32 calls (the analyze contract's example).
    const loops = JSON.parse(run('query', out, '--named', 'worst-retry-loops', '--json').stdout) as Row[];
    const spotter = loops.filter((l) => l.session === 'ae4a77f8-aedd-4bc1-888f-c94edc91af04');
    assert.deepEqual(
      spotter.map((l) => [l.tool, l.attempts, l.calls_spanned]),
      [['Bash', 7, 32]],
    );
    // Worst first: M-Claude's session 554b9fa6 failed the same Bash command 81 times.
    assert.deepEqual([loops[0]!.attempts, String(loops[0]!.session).slice(0, 8)], [81, '554b9fa6']);
    const table = run('query', out, 'SELECT agent, count(*) AS n FROM sessions GROUP BY 1 ORDER BY 1');
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^agent +n\n-+ +-+\nclaude-code +\d+\ncodex +\d+\n\(2 rows\)\n$/);
    const bad = run('query', out, 'SELECT nope FROM calls');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /agent-trace query: .*nope/);
    assert.equal(run('query', out, '--named', 'no-such-query').code, 2);
    assert.equal(run('export', '--to', 'parquet', SPOTTER).code, 2);
  });
});
