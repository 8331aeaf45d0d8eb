// The team path at scale (issue 30), each figure beside a baseline measured in the same run:
//
//   export       `agent-trace export --to parquet` of every session on a machine: 1,000 real
//                sessions / 5 GB under a fake home (the bench:sessions corpus, bench/sessionCorpus.ts),
//                the CLI as a user runs it. Target: ≤ the cold index of the same sessions.
//                Baseline: that cold index (dist/indexWorker.js, as the extension runs it, on the
//                parse threads it takes on an idle machine). Two of each, index, export, export,
//                index: the ratio of the sums, so a drift of the machine moves both sides alike;
//                each side's CPU (user + system) beside it, and the cores it kept busy.
//   again        the same export a second time (nothing changed): the incremental check alone.
//   bytes        bytes on disk per LLM call: the calls table alone and all three tables; then
//                the id columns' cells holding a placeholder (a defect: exits 1), and what
//                creating one file costs this machine's file system, beside the files written.
//   10 M calls   a named query (cost-by-user-day) over 10,000,000 calls: synthetic copies of
//                the exported real sessions (each copy its own conversation id, one of 2,000
//                users, a day shifted within 30, one of 8 machines), written by DuckDB into
//                the same Hive layout. Target ≤ 2 s. Baseline: the least a query over those
//                files can do, one column summed (SELECT sum(cost_usd) FROM calls).
//                Measured once in the export's layout (thousands of files), then after
//                `agent-trace compact` (a few large files): compaction's time beside it.
//
//   no-redact    with --with-no-redact, `export --no-redact` too, in the same block (index, export,
//                no-redact, no-redact, export, index): what redaction adds, beside the export.
//
// Run: npm run bench:team [-- --sessions 1000 --gb 5 --calls 10000000] [--cpu-prof DIR] [--keep DIR] [--rounds N] [--with-no-redact]
//      (--quick: 100 sessions, 0.5 GB, 1,000,000 calls; --keep DIR keeps the compacted 10 M-call
//      folder, then `-- --queries-only DIR` times only the named query and its baseline over it;
//      --export-only stops after the export and bytes per call)
import { spawnSync } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { namedQuery } from '../src/core/team/namedQueries';
import { TEAM_TABLES } from '../src/core/team/teamSchema';
import { SessionIndexClient } from '../src/node/sessions/indexClient';
import { parseThreadsFor } from '../src/node/sessions/parsePool';
import { queryFolder } from '../src/cli/team';
import { COMPACTED, compactExport } from '../src/node/team/compact';
import { exportThreadsFor } from '../src/node/team/exportPool';
import { isTraceIdColumn } from '../src/node/team/exportRows';
import { repoRoot } from '../test/support/helpers';
import { generate } from './sessionCorpus';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const SESSIONS = option('--sessions', quick ? 100 : 1000);
const TARGET_BYTES = option('--gb', quick ? 0.5 : 5) * 2 ** 30;
const CALLS = option('--calls', quick ? 1_000_000 : 10_000_000);
const PROFILE = args.includes('--cpu-prof') ? args[args.indexOf('--cpu-prof') + 1] : undefined;
/** --keep DIR: the 10 M-call folder (compacted) is moved to DIR after the run, for --queries-only. */
const KEEP = args.includes('--keep') ? args[args.indexOf('--keep') + 1] : undefined;
/** --export-only: the cold index, the export and bytes per call; no 10 M-call copies, compaction or queries. */
const EXPORT_ONLY = args.includes('--export-only');
/** --queries-only DIR: only the named query and its baseline, over a folder kept by --keep. */
const QUERIES_ONLY = args.includes('--queries-only') ? args[args.indexOf('--queries-only') + 1] : undefined;
/** --with-no-redact: also `export --no-redact`, twice per block, between the two exports. */
const WITH_NO_REDACT = args.includes('--with-no-redact');
/** --rounds N: the block index, export, export, index N times (default 1). */
const ROUNDS = Math.max(1, Math.floor(option('--rounds', 1)));

const MB = (b: number): string => `${(b / 2 ** 20).toFixed(0)} MB`;
const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = (): string => {
  try {
    return execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim().split(' ').slice(0, 3).join(' ');
  } catch {
    return 'unknown';
  }
};

/** Clock ticks per second of /proc's CPU times (getconf CLK_TCK; 100 on Linux when it cannot say). */
const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU seconds (user + system) of this process's waited-for children, from /proc/self/stat
 * (fields 16 and 17, after the command name's closing parenthesis); null where there is no /proc.
 */
function childrenCpu(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is the state (field 3): cutime and cstime are fields 16 and 17.
    return (Number(fields[13]) + Number(fields[14])) / TICKS;
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) of this process, all its threads (the index worker and its parse threads among them). */
const ownCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** Bytes of every .parquet file under `dir`, and how many. */
function parquetBytes(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const f of readdirSync(dir, { recursive: true }) as string[]) {
    if (!f.endsWith('.parquet')) continue;
    bytes += statSync(join(dir, f)).size;
    files += 1;
  }
  return { bytes, files };
}

/** The CLI's export of every session under the fake home, as a user on that machine runs it. */
function exportAll(
  home: string,
  out: string,
  profile = false,
  extra: readonly string[] = [],
): { ms: number; cpu: number | null; stderr: string } {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
  };
  delete env['CODEX_HOME'];
  delete env['CLAUDE_CONFIG_DIR'];
  const cpu0 = childrenCpu();
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    [
      // --cpu-prof DIR: V8's sampling profile of the first export (a few per cent slower), for where its time goes.
      ...(profile && PROFILE ? ['--cpu-prof', '--cpu-prof-dir', PROFILE] : []),
      join(repoRoot, 'dist/cli.js'),
      'export',
      '--to',
      'parquet',
      '-o',
      out,
      '--user',
      'bench',
      '--machine',
      'bench',
      ...extra,
    ],
    { env, encoding: 'utf8', maxBuffer: 256 * 2 ** 20 },
  );
  const ms = performance.now() - t0;
  const cpu1 = childrenCpu();
  if (r.status !== 0) throw new Error(`export exited ${String(r.status)}: ${r.stderr.slice(-2000)}`);
  return { ms, cpu: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0, stderr: r.stderr };
}

/** Median ms of `rounds` runs of the named query and of the one-column baseline over `folder`. */
async function timeQueries(folder: string, rounds: number) {
  const sql = namedQuery('cost-by-user-day')!.sql;
  const times: number[] = [];
  const base: number[] = [];
  let rows = 0;
  for (let round = 0; round < rounds; round++) {
    let t = performance.now();
    await queryFolder(folder, 'SELECT sum(cost_usd) FROM calls');
    base.push(performance.now() - t);
    t = performance.now();
    rows = (await queryFolder(folder, sql)).rows.length;
    times.push(performance.now() - t);
  }
  return { times, base, rows };
}

/**
 * The trace's own ids are its structure, never redacted in their columns: a placeholder there
 * is a defect (826 of 2,000 sessions had one in `gen_ai.conversation.id` once, unnoticed).
 * Counts the cells of every id column (those the export declares as ids: isTraceIdColumn) holding one.
 */
async function checkIdColumns(folder: string): Promise<void> {
  const counts: string[] = [];
  let total = 0;
  for (const table of TEAM_TABLES) {
    if (table.name === 'context_parts') continue;
    for (const c of table.columns) {
      if (!isTraceIdColumn(c)) continue;
      const [row] = (
        await queryFolder(folder, `SELECT count(*) FROM ${table.name} WHERE "${c.name}" LIKE '%[REDACTED:%'`)
      ).rows;
      const n = Number(row![0]);
      total += n;
      counts.push(`${table.name}.${c.name} ${n}`);
    }
  }
  console.log(
    `  placeholders in id columns: ${total} (${counts.join(', ')})${total > 0 ? ' DEFECT: ids redacted' : ''}`,
  );
  if (total > 0) process.exitCode = 1;
}

/**
 * What creating a file costs on this machine's file system, in CPU (user + system): the export
 * writes a file per source, table and partition, the index one database. On the virtual machines
 * this bench runs on, making an empty file has cost the kernel from 0.02 to 0.9 ms from one hour
 * to the next (a tmpfs: microseconds): that part of the export's time is the machine's.
 */
function fileCreationCost(work: string, files: number): void {
  const dir = mkdtempSync(join(work, 'creation-'));
  const n = 400;
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) closeSync(openSync(join(dir, `f${i}`), 'w'));
  const c = process.cpuUsage(c0);
  rmSync(dir, { recursive: true, force: true });
  const perFile = (c.user + c.system) / 1000 / n;
  console.log(
    `  creating a file here: ${perFile.toFixed(3)} ms of CPU (${n} empty files); the export's ${files.toLocaleString('en-US')} files: about ${((perFile * files) / 1000).toFixed(1)} s of its CPU (the index: one file)`,
  );
}

/** The named query over a compacted folder kept by an earlier run (--keep): its own figures only. */
async function queriesOnly(folder: string): Promise<void> {
  const [n] = (await queryFolder(folder, 'SELECT count(*) FROM calls')).rows;
  console.log(`load average at start: ${load()}; ${Number(n![0]).toLocaleString('en-US')} calls in ${folder}`);
  const after = await timeQueries(folder, 5);
  console.log(
    `named query cost-by-user-day: ${after.times.map((x) => x.toFixed(0)).join(', ')} ms (median ${median(after.times).toFixed(0)} ms, ${after.rows} rows; target ≤ 2000 ms; load ${load()})`,
  );
  console.log(
    `  baseline: SELECT sum(cost_usd) over the same files: ${after.base.map((x) => x.toFixed(0)).join(', ')} ms (median ${median(after.base).toFixed(0)} ms); ratio ${(median(after.times) / median(after.base)).toFixed(2)}`,
  );
}

async function main(): Promise<void> {
  if (QUERIES_ONLY) return queriesOnly(QUERIES_ONLY);
  execFileSync(process.execPath, ['esbuild.mjs'], { cwd: repoRoot, stdio: 'ignore' });
  console.log(`load average at start: ${load()}`);
  console.log(`generating ${SESSIONS} sessions (${MB(TARGET_BYTES)}) under a fake home…`);
  const corpus = generate(SESSIONS, TARGET_BYTES);
  console.log(`  ${corpus.files.length} sessions, ${MB(corpus.bytes)}`);
  const work = mkdtempSync(join(tmpdir(), 'agent-trace-bench-team-'));
  try {
    // Baseline: the cold index of the same sessions, through the index worker, on the parse
    // threads it takes on an idle machine. It takes none when the load average is at the cores,
    // and writing the corpus just now can leave it there: the export keeps two threads at any
    // load, so the baseline would be the one-thread index and the ratio flattered.
    const idleThreads = parseThreadsFor(
      corpus.files.map((f) => ({ sizeBytes: statSync(f).size })),
      availableParallelism(),
      0,
    );
    process.env['AGENT_TRACE_PARSE_THREADS'] = String(idleThreads);
    let indexThreads = 'no parse threads';
    /** One cold index into a new database. */
    const coldIndex = async (name: string): Promise<{ ms: number; cpu: number; files: number }> => {
      const client = new SessionIndexClient(join(repoRoot, 'dist/indexWorker.js'), (e) => {
        const m = e.event === 'log' ? /on (\d+) parse threads/.exec(e.message) : null;
        if (m) indexThreads = `${m[1]} parse threads`;
      });
      await client.request('configure', {
        dbPath: join(work, `${name}.sqlite`),
        roots: [
          { agentId: 'claude-code', root: join(corpus.home, '.claude/projects') },
          { agentId: 'codex', root: join(corpus.home, '.codex/sessions') },
        ],
        analysis: {},
        prices: [],
        maxFileBytes: 2 ** 33,
        stateVersion: 'bench',
      });
      const cpu0 = ownCpu();
      const start = performance.now();
      const cold = await client.request('sync', {});
      const ms = performance.now() - start;
      const cpu = ownCpu() - cpu0;
      await client.dispose();
      if (cold.readOnly) throw new Error('another process holds the lease');
      return { ms, cpu, files: cold.files };
    };

    // The machine's speed drifts by a fifth within minutes: two of each, in the order index,
    // export, export, index, so that a drift across the four moves both sides alike. --rounds N
    // repeats that block N times (the ratio of the sums over all of them, each pair's beside it).
    const out = join(work, 'export');
    const pairs: Array<{ index: { ms: number; cpu: number }; export: { ms: number; cpu: number | null } }> = [];
    /** The --no-redact exports (--with-no-redact): two a block, as many as the pairs. */
    const unredacted: Array<{ ms: number; cpu: number | null }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const indexA = await coldIndex(`index-${round}-a`);
      console.log(
        `\n${round === 0 ? 'baseline' : `round ${round + 1}`}: cold index ${s(indexA.ms)} for ${indexA.files} files on ${indexThreads} (load ${load()})`,
      );
      // The first export is kept (bytes per call, the incremental run); the others go into new folders, all
      // removed with the work folder at the end: creating files soon after deleting thousands costs more on some disks.
      const first = exportAll(corpus.home, round === 0 ? out : join(work, `export-${round}-a`), round === 0);
      console.log(
        `export --to parquet: ${s(first.ms)} (load ${load()}; ${exportThreadsFor(indexA.files)} export threads at the load now)`,
      );
      if (round === 0) console.log(`  ${first.stderr.split('\n')[0]}`);
      if (WITH_NO_REDACT) {
        for (const half of ['a', 'b']) {
          const plain = exportAll(corpus.home, join(work, `plain-${round}-${half}`), false, ['--no-redact']);
          console.log(`export --to parquet --no-redact: ${s(plain.ms)} (load ${load()})`);
          unredacted.push(plain);
        }
      }
      const second = exportAll(corpus.home, join(work, `export-${round}-b`));
      console.log(`export --to parquet, again into a new folder: ${s(second.ms)} (load ${load()})`);
      const indexB = await coldIndex(`index-${round}-b`);
      console.log(`baseline again: cold index ${s(indexB.ms)} on ${indexThreads} (load ${load()})`);
      pairs.push({ index: indexA, export: first }, { index: indexB, export: second });
    }
    const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
    const coldMs = sum(pairs.map((p) => p.index.ms)) / pairs.length;
    console.log(
      `  ratio export / cold index: ${(sum(pairs.map((p) => p.export.ms)) / sum(pairs.map((p) => p.index.ms))).toFixed(2)} (target ≤ 1; each pair ${pairs.map((p) => (p.export.ms / p.index.ms).toFixed(2)).join(', ')}${pairs.length > 2 ? `; median pair ${median(pairs.map((p) => p.export.ms / p.index.ms)).toFixed(2)}` : ''})`,
    );
    if (unredacted.length > 0)
      console.log(
        `  ratio export --no-redact / cold index: ${(sum(unredacted.map((u) => u.ms)) / sum(pairs.map((p) => p.index.ms))).toFixed(2)} (each ${unredacted.map((u, i) => (u.ms / pairs[i]!.index.ms).toFixed(2)).join(', ')}); redaction adds ${((sum(pairs.map((p) => p.export.ms)) / sum(unredacted.map((u) => u.ms)) - 1) * 100).toFixed(0)}% to the export`,
      );
    // CPU beside the times: whether the export does more work than the index, or keeps fewer cores busy.
    const cores = (cpu: number, ms: number): string => (cpu / (ms / 1000)).toFixed(2);
    const exportCpu = pairs.map((p) => p.export.cpu);
    console.log(
      exportCpu.some((c) => c === null)
        ? '  CPU: not measured (no /proc here)'
        : `  CPU (user + system): cold index ${pairs.map((p) => `${p.index.cpu.toFixed(1)} s (${cores(p.index.cpu, p.index.ms)} cores)`).join(', ')}; ` +
            `export ${pairs.map((p) => `${p.export.cpu!.toFixed(1)} s (${cores(p.export.cpu!, p.export.ms)} cores)`).join(', ')}; ` +
            `ratio of the sums ${(sum(exportCpu as number[]) / sum(pairs.map((p) => p.index.cpu))).toFixed(2)}`,
    );
    const again = exportAll(corpus.home, out);
    console.log(
      `again, nothing changed: ${s(again.ms)}; ratio / cold index ${(again.ms / coldMs).toFixed(3)}\n  ${again.stderr.split('\n')[0]}`,
    );

    // Bytes per call.
    const [counts] = (
      await queryFolder(
        out,
        'SELECT (SELECT count(*) FROM calls) AS calls, (SELECT count(*) FROM tool_calls) AS tools, (SELECT count(*) FROM sessions) AS sessions',
      )
    ).rows;
    const [calls, tools, sessions] = counts!.map(Number) as [number, number, number];
    const tables = Object.fromEntries(['calls', 'tool_calls', 'sessions'].map((t) => [t, parquetBytes(join(out, t))]));
    const all = Object.values(tables).reduce((n, t) => n + t.bytes, 0);
    console.log(`\nbytes on disk: ${calls} calls, ${tools} tool calls, ${sessions} sessions in ${MB(all)}`);
    for (const [t, b] of Object.entries(tables))
      console.log(`  ${t.padEnd(10)} ${MB(b.bytes).padStart(7)} in ${b.files} files`);
    console.log(
      `  per LLM call: ${(tables['calls']!.bytes / calls).toFixed(0)} B (calls table), ${(all / calls).toFixed(0)} B (all three tables)`,
    );
    console.log(
      `  rows per LLM call: ${(tools / calls).toFixed(2)} tool calls, ${(sessions / calls).toFixed(4)} sessions`,
    );
    await checkIdColumns(out);
    fileCreationCost(
      work,
      Object.values(tables).reduce((n, t) => n + t.files, 0),
    );

    if (EXPORT_ONLY) return;
    // 10 M calls: copies of the real calls, written by DuckDB in the same layout.
    const big = join(work, 'big');
    const copies = Math.ceil(CALLS / calls);
    mkdirSync(big, { recursive: true });
    let t0 = performance.now();
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run(`SET preserve_insertion_order = false`);
    await connection.run(
      // Each copy of a session is another session: its own id, one of 2,000 users (each on one of 8 machines), its days shifted by 0–29.
      `COPY (SELECT * EXCLUDE (copy, h) REPLACE ("gen_ai.conversation.id" || '-' || copy AS "gen_ai.conversation.id",
          md5('user' || (h % 2000))[1:16] AS "user.hash",
          start_time + to_days(CAST((h // 2000) % 30 AS INTEGER)) AS start_time,
          date + CAST((h // 2000) % 30 AS INTEGER) AS date, 'm' || (h % 2000 % 8) AS machine)
        FROM (SELECT c.*, r.range AS copy, hash(c."gen_ai.conversation.id", r.range) AS h
          FROM read_parquet('${out}/calls/**/*.parquet', hive_partitioning = true, hive_types = {'agent': VARCHAR, 'date': DATE, 'machine': VARCHAR}) c,
            range(${copies}) r)
        LIMIT ${CALLS})
      TO '${big}/calls' (FORMAT parquet, PARTITION_BY (agent, date, machine))`,
    );
    connection.closeSync();
    instance.closeSync();
    const bigBytes = parquetBytes(join(big, 'calls'));
    console.log(
      `\n${CALLS.toLocaleString('en-US')} calls (${copies} copies of the ${calls} real ones) written by DuckDB in ${s(performance.now() - t0)}: ${MB(bigBytes.bytes)} in ${bigBytes.files} files, ${(bigBytes.bytes / CALLS).toFixed(0)} B per call`,
    );
    const before = await timeQueries(big, 1);
    console.log(
      `named query cost-by-user-day over ${CALLS.toLocaleString('en-US')} calls in the export's layout (${bigBytes.files} files): ${before.times[0]!.toFixed(0)} ms (${before.rows} rows; load ${load()}); SELECT sum(cost_usd): ${before.base[0]!.toFixed(0)} ms`,
    );

    // Compaction: the same files merged into a few (agent-trace compact), then the same query.
    t0 = performance.now();
    const compaction = await compactExport(big);
    const compactMs = performance.now() - t0;
    const merged = parquetBytes(join(big, COMPACTED, 'calls'));
    console.log(
      `compact: ${compaction.tables[0]!.filesRead} files into ${merged.files} (${MB(merged.bytes)}, ${(merged.bytes / CALLS).toFixed(0)} B per call) in ${s(compactMs)} (load ${load()})`,
    );
    const after = await timeQueries(big, 3);
    console.log(
      `named query cost-by-user-day over ${CALLS.toLocaleString('en-US')} calls, compacted: ${after.times.map((x) => x.toFixed(0)).join(', ')} ms (median ${median(after.times).toFixed(0)} ms, ${after.rows} rows; target ≤ 2000 ms; load ${load()})`,
    );
    console.log(
      `  baseline: SELECT sum(cost_usd) over the same files: median ${median(after.base).toFixed(0)} ms; ratio ${(median(after.times) / median(after.base)).toFixed(2)}; before compaction / after: ${(before.times[0]! / median(after.times)).toFixed(1)}×`,
    );
    if (KEEP) {
      rmSync(KEEP, { recursive: true, force: true });
      renameSync(big, KEEP);
      console.log(`kept the 10 M-call folder at ${KEEP} (npm run bench:team -- --queries-only ${KEEP})`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(corpus.home, { recursive: true, force: true });
  }
}

void main().then(
  () => process.stdout.write('', () => process.exit(0)),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
