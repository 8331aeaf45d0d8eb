// Writes large traces for the benchmarks and the big-trace tests, made only of real
// records from test/fixtures (see test/fixtures/README.md for their origin and licence):
//
//   claude    --mb N | --copies N
//                           a Claude Code log of about N MB (or N copies): the real spotter session
//                           (1.8 MB, 149 calls, one /compact) repeated, each copy's message
//                           and tool-use ids made distinct so every copy's calls count, as
//                           in one very long session (61 copies = 111 MB, 9,089 calls)
//   codex     --mb N | --copies N
//                           a Codex rollout of about N MB: the real edgerunner session (1.4 MB,
//                           558 lines) repeated as one long session (its session_meta once,
//                           each copy's tool-call ids made distinct)
//   canonical --calls N     one canonical session of N calls: the spotter session's real
//                           calls (tokens, failed tools with their errors, compactions)
//                           repeated in order
//   bailian   --conversations N
//                           a Bailian trace: the 14 real rows (4 conversations) repeated
//                           with chat ids moved past the previous copy's
//   chain     --depth N     a canonical trace of N sessions, each a sub-agent of the one
//                           before, each holding one real call
//
//   npx tsx scripts/makeBigTraces.ts claude --mb 100 --out /tmp/claude-100mb.jsonl
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { join } from 'node:path';
import { writeCanonical } from '../src/core/trace/canonical/canonicalFormat';
import type { Session, TraceModel } from '../src/core/trace/model';
import { parseTrace } from '../src/core/trace/parseTrace';
import { readTraceFiles } from '../src/node/traceFiles';

// The repository: beside this script (scripts/), or two up when bundled into dist/bench/.
const root =
  [join(__dirname, '..'), join(__dirname, '../..')].find((d) => existsSync(join(d, 'test/fixtures'))) ??
  join(__dirname, '..');
const SPOTTER = join(root, 'test/fixtures/claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl');
const CODEX = join(root, 'test/fixtures/codex/edgerunner-code-mode-0.144.1.head558.jsonl');
const BAILIAN = join(root, 'test/fixtures/bailian/qwen_traceA_lite.rows01-14.jsonl');

/** Writes with back-pressure, so a 1 GB file never sits in memory. */
async function write(out: WriteStream, text: string): Promise<void> {
  if (!out.write(text)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
}

async function close(out: WriteStream): Promise<void> {
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
}

/** Copy `i` of the spotter log: message ids and tool-use ids (and the results that name them) made distinct. */
export function spotterCopy(source: string, i: number): string {
  return source.replaceAll('"id":"msg_', `"id":"msg_${i}_`).replaceAll('"toolu_', `"toolu_${i}_`);
}

export async function claude(size: { mb: number } | { copies: number }, path: string): Promise<string> {
  const source = readFileSync(SPOTTER, 'utf8');
  const copies =
    'copies' in size ? size.copies : Math.max(1, Math.round((size.mb * 2 ** 20) / Buffer.byteLength(source)));
  const out = createWriteStream(path);
  for (let i = 0; i < copies; i++) await write(out, spotterCopy(source, i));
  await close(out);
  return `${path}: ${copies} copies of the spotter session (${copies * 149} calls expected)`;
}

/** Copy `i` of the Codex rollout: the session_meta line only in the first copy, tool-call ids made distinct. */
export function codexCopy(source: string, i: number): string {
  if (i === 0) return source;
  return source
    .split('\n')
    .filter((l) => !l.includes('"type":"session_meta"'))
    .join('\n')
    .replaceAll('"call_id":"call_', `"call_id":"call_${i}_`);
}

export async function codex(size: { mb: number } | { copies: number }, path: string): Promise<string> {
  const source = readFileSync(CODEX, 'utf8');
  const copies =
    'copies' in size ? size.copies : Math.max(1, Math.round((size.mb * 2 ** 20) / Buffer.byteLength(source)));
  const out = createWriteStream(path);
  for (let i = 0; i < copies; i++) await write(out, codexCopy(source, i));
  await close(out);
  return `${path}: ${copies} copies of the edgerunner Codex session, one session`;
}

async function spotterMain(): Promise<Session> {
  const parsed = await parseTrace(await readTraceFiles(SPOTTER));
  return parsed.model.sessions.find((s) => s.role === 'main')!;
}

export async function canonical(calls: number, path: string): Promise<string> {
  const base = await spotterMain();
  const n = base.calls.length;
  const out = createWriteStream(path);
  // Header and session record from the writer itself; then calls stream out copy by copy.
  const header = writeCanonical(
    {
      format: 'claude-code',
      files: ['spotter.jsonl'],
      sessions: [{ ...base, calls: [], turns: [], compactions: [] }],
      diagnostics: [],
      skippedRecords: {},
      limitations: [],
    },
    'agent-trace (scripts/makeBigTraces.ts)',
  );
  await write(out, header);
  for (let copy = 0; copy * n < calls; copy++) {
    const count = Math.min(n, calls - copy * n);
    const shiftMs = copy * 3_600_000;
    const slice: Session = {
      ...base,
      calls: base.calls.slice(0, count).map((c) => ({
        ...c,
        id: `${c.id}_${copy}`,
        turn: null,
        startMs: c.startMs === null ? null : c.startMs + shiftMs,
        endMs: c.endMs === null ? null : c.endMs + shiftMs,
        // Only the failed tool calls (with their real error text): a lean file, as a serving log of a million calls is, that still has failures and retry loops.
        toolCalls: c.toolCalls
          .filter((t) => t.isError === true)
          .map((t) => ({
            ...t,
            id: `${t.id}_${copy}`,
            startMs: t.startMs === null ? null : t.startMs + shiftMs,
            endMs: t.endMs === null ? null : t.endMs + shiftMs,
          })),
      })),
      turns: [],
      compactions: base.compactions
        .filter((c) => c.beforeCall < count)
        .map((c) => ({ ...c, timeMs: c.timeMs === null ? null : c.timeMs + shiftMs })),
    };
    const text = writeCanonical(
      { format: 'claude-code', files: [], sessions: [slice], diagnostics: [], skippedRecords: {}, limitations: [] },
      '',
    );
    // Drop this copy's header and session record: its calls continue the one session.
    const body = text.split('\n').slice(2).join('\n');
    await write(out, body);
  }
  await close(out);
  return `${path}: one session of ${calls} calls (the spotter session's ${n} calls repeated)`;
}

export async function bailian(conversations: number, path: string): Promise<string> {
  const rows = readFileSync(BAILIAN, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const perCopy = rows.filter((r) => r['parent_chat_id'] === -1).length;
  const maxId = Math.max(...rows.map((r) => Number(r['chat_id'])));
  const span = Math.max(...rows.map((r) => Number(r['timestamp'])));
  const out = createWriteStream(path);
  const copies = Math.ceil(conversations / perCopy);
  for (let i = 0; i < copies; i++) {
    const lines: string[] = [];
    for (const r of rows) {
      const parent = Number(r['parent_chat_id']);
      // Same key order and separators as the real file (Python's json.dumps defaults).
      const copy = {
        ...r,
        chat_id: Number(r['chat_id']) + i * (maxId + 1),
        parent_chat_id: parent === -1 ? -1 : parent + i * (maxId + 1),
        timestamp: Math.round((Number(r['timestamp']) + i * span) * 1000) / 1000,
      };
      lines.push(
        JSON.stringify(copy)
          .replace(/,"/g, ', "')
          .replace(/":/g, '": ')
          .replace(/,(?=\d|-)/g, ', '),
      );
    }
    await write(out, lines.join('\n') + '\n');
  }
  await close(out);
  return `${path}: ${copies * perCopy} conversations, ${copies * rows.length} requests`;
}

export async function chain(depth: number, path: string): Promise<string> {
  const base = await spotterMain();
  const sessions: Session[] = [];
  for (let i = 0; i < depth; i++) {
    const call = base.calls[i % base.calls.length]!;
    sessions.push({
      ...base,
      id: `chain-${i}`,
      parentId: i === 0 ? null : `chain-${i - 1}`,
      parentToolCallId: null,
      role: i === 0 ? 'main' : 'subagent',
      calls: [
        {
          ...call,
          id: `${call.id}_${i}`,
          index: 0,
          turn: null,
          toolCalls: call.toolCalls.map((t) => ({ ...t, id: `${t.id}_${i}` })),
        },
      ],
      turns: [],
      compactions: [],
    });
  }
  const model: TraceModel = {
    format: 'claude-code',
    files: ['spotter.jsonl'],
    sessions,
    diagnostics: [],
    skippedRecords: {},
    limitations: [],
  };
  const out = createWriteStream(path);
  await write(out, writeCanonical(model, 'agent-trace (scripts/makeBigTraces.ts)'));
  await close(out);
  return `${path}: ${depth} sessions, each a sub-agent of the one before`;
}

function option(args: string[], name: string): string | null {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? null) : null;
}

async function main(args: string[]): Promise<void> {
  const [kind] = args;
  const out = option(args, '--out');
  const number = (name: string): number => {
    const n = Number(option(args, name));
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${kind} needs ${name} N (a number > 0)`);
    return n;
  };
  if (!out)
    throw new Error(
      'usage: makeBigTraces.ts claude --mb N | codex --mb N | canonical --calls N | bailian --conversations N | chain --depth N  --out FILE',
    );
  const said =
    kind === 'claude'
      ? await claude(
          option(args, '--copies') !== null ? { copies: Math.round(number('--copies')) } : { mb: number('--mb') },
          out,
        )
      : kind === 'codex'
        ? await codex(
            option(args, '--copies') !== null ? { copies: Math.round(number('--copies')) } : { mb: number('--mb') },
            out,
          )
        : kind === 'canonical'
          ? await canonical(Math.round(number('--calls')), out)
          : kind === 'bailian'
            ? await bailian(Math.round(number('--conversations')), out)
            : kind === 'chain'
              ? await chain(Math.round(number('--depth')), out)
              : null;
  if (said === null) throw new Error(`unknown kind ${kind ?? ''}`);
  console.log(said);
}

// Run as a script only (the benchmarks import the writers above).
if (require.main === module && /makeBigTraces\.[tj]s$/.test(process.argv[1] ?? '')) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exitCode = 1;
  });
}
