import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { createPriceBook } from '../../../src/core/cost/priceBook';
import { buildTraceReport } from '../../../src/core/report/traceReport';
import { terminalJson } from '../../../src/core/text/safeText';
import { slimClaudeCodeRecord } from '../../../src/core/trace/claudeCode/claudeCodeReader';
import { parseTrace } from '../../../src/core/trace/parseTrace';
import type { ParsedTrace, TraceFile } from '../../../src/core/trace/parseTrace';
import { parseTraceParallel } from '../../../src/node/parallelParse';
import { readTraceFiles } from '../../../src/node/traceFiles';
import {
  EDIT_LOOP,
  ensureBuilt,
  fixtures,
  repoRoot,
  sharedTracesDir,
  SPOTTER,
  traceFilesUnder,
} from '../../support/helpers';

// One big file on parse threads (src/node/parallelParse.ts) must read exactly as on one
// thread: the same model, the same diagnostics, the same `analyze --json` text. Chunks
// are made as small as can be, so chunk ends fall between the lines of one API response,
// between a tool call and its result and inside retry loops; the expected result is the
// one-thread parse of the same bytes, a different path through the code.

// Worker threads run the bundled worker (as the CLI does): tsx's loader does not reach them.
const workerScript = join(repoRoot, 'dist/parseChunkWorker.js');

/** The files of a trace (with its companions), their bytes fed in pieces of `size`. */
async function inPieces(path: string, size: number): Promise<TraceFile[]> {
  const files = await readTraceFiles(path);
  const out: TraceFile[] = [];
  for (const f of files) {
    const parts: Uint8Array[] = [];
    for await (const c of f.bytes as AsyncIterable<Uint8Array>) parts.push(c);
    const all = Buffer.concat(parts);
    const pieces: Uint8Array[] = [];
    for (let at = 0; at < all.length; at += size) pieces.push(all.subarray(at, at + size));
    out.push({ ...f, bytes: pieces });
  }
  return out;
}

/** What `agent-trace analyze --json` prints for a parse (src/cli/main.ts). */
function analyzeJson(parsed: ParsedTrace): string {
  if (parsed.problem) return JSON.stringify(parsed);
  const report = buildTraceReport(parsed, {}, { book: createPriceBook({}), customTtl: null });
  return `${terminalJson(JSON.stringify(report, null, 2))}\n`;
}

/** Equal texts, or a failure that quotes where they part (the texts are long). */
function same(actual: string, expected: string, what: string): void {
  if (actual === expected) return;
  let i = 0;
  while (actual[i] === expected[i]) i += 1;
  const around = (t: string): string => t.slice(Math.max(0, i - 200), i + 200);
  assert.fail(`${what} differs at character ${i}:\n  threads: …${around(actual)}…\n  one:     …${around(expected)}…`);
}

interface Compared {
  chunks: Array<{ file: number; offset: number; length: number }>;
  parsed: ParsedTrace;
}

/**
 * Where chunks are parsed: as parseTraceParallel chooses; all on the parse thread; all on the
 * reader's thread (each next in file order: records whole); or mixed, a parse thread's chunk
 * then two of the reader's, which wait behind it (records slimmed) or not, as the thread is quick.
 */
type Placement = 'chosen' | 'threads' | 'reader' | 'mixed';
const placed: Record<Placement, ((n: number) => 'thread' | 'here') | undefined> = {
  chosen: undefined,
  threads: () => 'thread',
  reader: () => 'here',
  mixed: (n) => (n % 3 === 0 ? 'thread' : 'here'),
};

async function compare(
  path: string,
  options: { longLineBytes?: number; placement?: Placement } = {},
): Promise<Compared> {
  const { placement = 'chosen', ...parseOptions } = options;
  const one = await parseTrace(await inPieces(path, 4096), parseOptions);
  const chunks: Compared['chunks'] = [];
  const many = await parseTraceParallel(await inPieces(path, 4096), {
    threads: 2,
    workerScript,
    chunkBytes: 1,
    ...parseOptions,
    where: placed[placement],
    onChunk: (file, offset, length) => chunks.push({ file, offset, length }),
  });
  same(JSON.stringify(many), JSON.stringify(one), `${path} (${placement}): the model`);
  same(analyzeJson(many), analyzeJson(one), `${path} (${placement}): analyze --json`);
  return { chunks, parsed: many };
}

const samples = [
  ...traceFilesUnder(join(repoRoot, 'samples')),
  ...traceFilesUnder(fixtures).filter((p) => !p.includes('/subagents/') && !p.includes('/workloads/')),
];

describe('slimmed records (FormatDefinition.slimRecord)', () => {
  it('a Claude Code record keeps every key the reader reads', () => {
    // The keys ClaudeCodeReader reads, found in its source: a new read there must be kept.
    const source = readFileSync(join(repoRoot, 'src/core/trace/claudeCode/claudeCodeReader.ts'), 'utf8');
    const read = [...new Set([...source.matchAll(/\bvalue\['([A-Za-z_]+)'\]/g)].map((m) => m[1]!))];
    assert.ok(read.length > 15, `${read.length} keys read`);
    const record = Object.fromEntries([
      ...read.map((k, i) => [k, `v${i}`]),
      ['gitBranch', 'main'],
      ['userType', 'external'],
    ]);
    for (const type of ['assistant', 'user', 'system', 'summary']) {
      const slim = slimClaudeCodeRecord({ ...record, type, toolUseResult: { agentId: 'a1', file: { content: 'x' } } });
      for (const k of read.filter((k) => k !== 'type' && k !== 'toolUseResult'))
        assert.equal(slim[k], record[k], `${type}: ${k}`);
      assert.deepEqual(slim['toolUseResult'], { agentId: 'a1' });
      assert.equal(slim['gitBranch'], undefined, 'a key the reader does not read is left out');
    }
  });
});

describe('one file parsed on parse threads (src/node/parallelParse)', () => {
  before(() => ensureBuilt(workerScript));

  it('reads the spotter session and its sub-agents as one thread does, with chunk ends inside one API response', async () => {
    const { chunks, parsed } = await compare(SPOTTER);
    // Independent of the reader: the raw lines and the offsets where chunks were cut.
    const text = readFileSync(SPOTTER, 'utf8');
    const lines = text.split('\n');
    const starts: number[] = [];
    let at = 0;
    for (const l of lines) {
      starts.push(at);
      at += Buffer.byteLength(l) + 1;
    }
    const cutAt = new Set(chunks.filter((c) => c.file === 0).map((c) => c.offset));
    let split = 0;
    for (let i = 1; i < lines.length; i++) {
      const a = lines[i - 1] ? (JSON.parse(lines[i - 1]!) as { message?: { id?: string } }) : null;
      const b = lines[i] ? (JSON.parse(lines[i]!) as { message?: { id?: string } }) : null;
      if (a?.message?.id && a.message.id === b?.message?.id && cutAt.has(starts[i]!)) split += 1;
    }
    assert.ok(split > 10, `lines of one API response fell in different chunks ${split} times`);
    assert.ok(
      chunks.some((c) => c.file > 0),
      'the sub-agent logs were read on the parse threads too',
    );
    assert.equal(parsed.model.sessions.length > 1, true);
  });

  it('keeps a retry loop whose attempts are in different chunks', async () => {
    const { chunks, parsed } = await compare(EDIT_LOOP);
    const report = buildTraceReport(parsed, {}, { book: createPriceBook({}), customTtl: null });
    const loops = report.sessions.flatMap((s) => s.retryLoops);
    assert.ok(loops.length > 0, 'the fixture holds a retry loop');
    // Line numbers of chunk starts, from the raw bytes.
    const bytes = readFileSync(EDIT_LOOP);
    const lineAt = (offset: number): number => bytes.subarray(0, offset).filter((b) => b === 0x0a).length;
    const cutLines = chunks.filter((c) => c.file === 0).map((c) => lineAt(c.offset) + 1);
    for (const l of loops)
      assert.ok(
        cutLines.some((n) => n > l.firstLine && n <= l.lastLine),
        `a chunk starts inside the loop at lines ${l.firstLine}–${l.lastLine}`,
      );
  });

  it('reads every sample and hostile case as one thread does', async () => {
    let handedOut = 0;
    for (const path of samples) {
      const { chunks } = await compare(path);
      if (chunks.length > 0) handedOut += 1;
    }
    // Claude Code and Codex logs go to the parse threads; the other formats stay on one.
    assert.ok(handedOut >= 10, `${handedOut} of ${samples.length} files were read on parse threads`);
  });

  it('reads every sample and hostile case as one thread does wherever its chunks are parsed', async () => {
    // All on the parse thread, all on the reader's thread, and mixed: records slimmed or
    // whole, given to the parser straight away or after waiting behind another thread's chunk.
    for (const placement of ['threads', 'reader', 'mixed'] as const)
      for (const path of samples) await compare(path, { placement });
    for (const path of [SPOTTER, EDIT_LOOP]) await compare(path, { placement: 'mixed', longLineBytes: 2048 });
  });

  it("parses on the reader's thread when told, and the default chunk is cut at a line end", async () => {
    // No parse thread: none is started (its script is not even there) and every chunk is read here.
    const one = await parseTrace(await inPieces(SPOTTER, 65536));
    const chunks: Array<{ file: number; offset: number; length: number }> = [];
    const alone = await parseTraceParallel(await inPieces(SPOTTER, 65536), {
      threads: 0,
      workerScript: join(repoRoot, 'no-such-worker.js'),
      onChunk: (file, offset, length) => chunks.push({ file, offset, length }),
    });
    same(JSON.stringify(alone), JSON.stringify(one), 'no parse thread');
    // The spotter log is 1.8 MB, fed in 64 KiB pieces: a chunk is cut at the last line end once
    // 256 KiB are held, so each is within a piece of 256 KiB, ends a line, and starts where the one before ended.
    const bytes = readFileSync(SPOTTER);
    const main = chunks.filter((c) => c.file === 0);
    assert.ok(
      main.length >= 5 && main.length <= Math.ceil(bytes.length / (2 ** 18 - 2 ** 16)),
      `${main.length} chunks`,
    );
    for (const [i, c] of main.entries()) {
      assert.equal(bytes[c.offset + c.length - 1], 0x0a, `chunk ${i} ends a line`);
      if (i > 0) assert.equal(c.offset, main[i - 1]!.offset + main[i - 1]!.length, `chunk ${i} follows chunk ${i - 1}`);
      if (i < main.length - 1)
        assert.ok(c.length > 2 ** 18 - 2 ** 16 && c.length < 2 ** 18 + 2 ** 16, `chunk ${i}: ${c.length}`);
    }
    const last = main.at(-1)!;
    assert.equal(last.offset + last.length, bytes.length, 'the chunks reach the end of the file');
  });

  it('reads lines past the long-line limit, streamed, as one thread does', async () => {
    for (const path of samples.filter((p) => /claude-code|codex|hostile/.test(p)))
      await compare(path, { longLineBytes: 2048 });
  });

  it('agent-trace analyze --json --parse-threads 2 prints what it prints on one thread', () => {
    const cli = join(repoRoot, 'dist/cli.js');
    ensureBuilt(cli);
    for (const path of [SPOTTER, EDIT_LOOP, join(fixtures, 'codex/edgerunner-code-mode-0.144.1.head558.jsonl')]) {
      const run = (...extra: string[]): string =>
        execFileSync(process.execPath, [cli, 'analyze', '--json', ...extra, path], { encoding: 'utf8' });
      same(run('--parse-threads', '2'), run(), `${path}: the CLI's output`);
    }
  });

  it('reads the shared real traces as one thread does', {
    skip: sharedTracesDir === null && 'AGENT_TRACE_SHARED_TRACES not set and no shared/traces beside the checkout',
  }, async () => {
    const shared = traceFilesUnder(sharedTracesDir!).filter(
      (p) => !p.includes('/subagents/') && readFileSync(p).length < 64 * 2 ** 20,
    );
    for (const path of shared) await compare(path);
  });
});
