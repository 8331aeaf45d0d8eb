// The before/after check of the session index's contents (issue 27): indexes a home folder
// from scratch and writes every table of the index as sorted text lines, with what differs
// between two indexes of the same files left out (row ids, replaced by the file's path and
// the session's key; `indexed_ms`, when a file was read). Two builds that must build the
// same index give byte-identical dumps of the same home:
//
//   npx tsx bench/dumpSessionIndex.ts HOME OUT [--threads N]
//
// HOME is a folder with the agents' folders inside (.claude/projects, .codex/sessions, …):
// a fake home of the fixtures (test/support/fakeHome.mjs) or the bench:sessions corpus
// (bench/sessionCorpus.ts), made once and kept, so both builds read the same files with the
// same modification times. `--threads N` reads on N parse threads (dist/indexParseWorker.js,
// `npm run build` first) as a cold index does; without it, in this thread.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { deserialize } from 'node:v8';
import { inflateRawSync } from 'node:zlib';
import { agentRoots, resolveRoots } from '../src/node/sessions/agentRegistry';
import { indexPriceBook, ParsePool } from '../src/node/sessions/parsePool';
import { SessionIndex } from '../src/node/sessions/sessionIndex';
import { SessionIndexer } from '../src/node/sessions/sessionIndexer';
import { openDatabase } from '../src/node/sessions/sqlite';
import { fakeHomeRoots } from '../test/support/fakeHome.mjs';

async function main(): Promise<void> {
  const [homeArg, out] = process.argv.slice(2);
  if (!homeArg || !out) throw new Error('usage: npx tsx bench/dumpSessionIndex.ts HOME OUT [--threads N]');
  const home = resolve(homeArg);
  const i = process.argv.indexOf('--threads');
  const threads = i >= 0 ? Number(process.argv[i + 1]) : 0;
  const work = mkdtempSync(join(tmpdir(), 'agent-trace-index-dump-'));
  try {
    const dbPath = join(work, 'index.sqlite');
    const { index } = SessionIndex.open(dbPath);
    const roots = agentRoots(resolveRoots(fakeHomeRoots(home), { env: {}, home, workspaceFolders: [home] }));
    const indexer = new SessionIndexer(index, { prices: indexPriceBook([]), stateVersion: 'dump' });
    let pool: ParsePool | null = null;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const result = await indexer.sync(roots, {
      freshReader: () =>
        threads > 0
          ? (pool = new ParsePool(resolve(__dirname, '../dist/indexParseWorker.js'), threads, {
              analysis: {},
              userPrices: [],
            }))
          : null,
    });
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    await (pool as ParsePool | null)?.close();
    index.close();
    const db = openDatabase(dbPath);
    const lines: string[] = [];
    const paths = new Map<number, string>();
    for (const r of db.all('SELECT * FROM files ORDER BY path')) {
      paths.set(Number(r['id']), String(r['path']));
      // Its row without the row id and the time it was read.
      lines.push(`files ${JSON.stringify({ ...r, id: undefined, indexed_ms: undefined })}`);
    }
    for (const r of db.all('SELECT * FROM file_states')) {
      // The saved parse as the values it holds: V8's serializer writes a string in one or two
      // bytes a character as the heap happens to hold it, so the same parse can give other bytes.
      const state = JSON.stringify(deserialize(inflateRawSync(r['state'] as Uint8Array)), (_key, v: unknown) =>
        typeof v === 'bigint' ? `${v}n` : v instanceof Map ? ['Map', ...v] : v instanceof Set ? ['Set', ...v] : v,
      );
      lines.push(
        `file_states ${paths.get(Number(r['file_id']))} ${r['state_version']} ${state.length} ${createHash('sha1').update(state).digest('hex')}`,
      );
    }
    const sessions = new Map<number, string>();
    for (const r of db.all('SELECT * FROM sessions')) {
      const name = `${paths.get(Number(r['file_id']))} ${r['key']}`;
      sessions.set(Number(r['id']), name);
      lines.push(`sessions ${name} ${r['record']}`);
    }
    for (const r of db.all('SELECT * FROM session_calls'))
      lines.push(`session_calls ${sessions.get(Number(r['session_id']))} ${r['calls']}`);
    for (const r of db.all('SELECT rowid, text FROM search'))
      lines.push(`search ${sessions.get(Number(r['rowid']))} ${JSON.stringify(r['text'])}`);
    for (const r of db.all("SELECT * FROM meta WHERE key <> 'generation' ORDER BY key"))
      lines.push(`meta ${JSON.stringify(r)}`);
    db.close();
    lines.sort();
    writeFileSync(out, lines.join('\n') + '\n');
    console.log(
      `${result.files} files, ${result.counts.new} new, ${result.counts.problem} problems; ${lines.length} lines in ${out}; sync ${(ms / 1000).toFixed(1)} s, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

void main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
