// Format detection stays linear in the file's length when nothing in it is a known format
// (issue 23: it ran detection again on every record after its sample, over a growing buffer,
// so 40,000 lines of {"a":1} took 12–18 s and 3 MB ran past 300 s). For 10k, 100k and 1M
// lines of three kinds of unrecognised lines, prints the reader's time per line, its ratio
// to the 10k file of the same kind (flat within 2× is linear), and its ratio to a baseline
// measured on the same file in the same run: read the whole file, split it into lines,
// JSON.parse every line. Only ratios mean anything on this shared machine; the load average
// is printed beside them.
//   objects   {"a":N}: records no format claims. The reader decides on its sample (50
//             records) and reads no further, so its time per line falls as the file grows.
//   not-json  lines that are not JSON: never a record, so the whole file is read, each line
//             reported (diagnostics are capped, the rest counted).
//   weak      nine log lines of a writer for every Mooncake row: a weak match, read on trial
//             to the end, each of the writer's records checked and skipped.
// Run: npm run bench:detect [-- sizes…]   (default 10000 100000 1000000)
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTrace } from '../src/core/trace/parseTrace';

type Kind = 'objects' | 'not-json' | 'weak';
const KINDS: readonly Kind[] = ['objects', 'not-json', 'weak'];

function line(kind: Kind, i: number): string {
  switch (kind) {
    case 'objects':
      return `{"a":${i}}`;
    case 'not-json':
      return `not json: line ${i} of a log`;
    case 'weak':
      return i % 10 === 0
        ? `{"timestamp":${i},"input_length":${1000 + (i % 7)},"output_length":${10 + (i % 5)},"hash_ids":[${i},${i + 1}]}`
        : `{"level":"warn","msg":"writer ${i}: buffer flushed late","pid":4242}`;
  }
}

function makeFile(dir: string, kind: Kind, lines: number): string {
  const path = join(dir, `${kind}-${lines}.jsonl`);
  const parts: string[] = [];
  for (let i = 0; i < lines; i++) parts.push(line(kind, i));
  writeFileSync(path, parts.join('\n') + '\n');
  return path;
}

function baselineMs(path: string): number {
  const t0 = performance.now();
  let n = 0;
  for (const text of readFileSync(path, 'utf8').split('\n')) {
    if (text === '') continue;
    try {
      if (JSON.parse(text) !== undefined) n += 1;
    } catch {
      n -= 1;
    }
  }
  if (n === Number.MIN_SAFE_INTEGER) console.log(n); // keep the loop's result alive
  return performance.now() - t0;
}

async function readerMs(path: string): Promise<{ ms: number; what: string }> {
  const t0 = performance.now();
  const parsed = await parseTrace([{ key: 'f.jsonl', bytes: createReadStream(path, { highWaterMark: 256 * 1024 }) }]);
  const ms = performance.now() - t0;
  const what = parsed.problem
    ? parsed.problem.kind
    : `${parsed.model.format} (${parsed.detection.confidence}), ${parsed.model.sessions.reduce((n, s) => n + s.calls.length, 0)} calls`;
  return { ms, what };
}

/** The faster of `runs` measurements (the least disturbed by other work on the machine). */
async function best(runs: number, fn: () => Promise<number> | number): Promise<number> {
  let min = Infinity;
  for (let r = 0; r < runs; r++) {
    global.gc?.();
    min = Math.min(min, await fn());
  }
  return min;
}

async function main(sizes: number[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-trace-detect-bench-'));
  try {
    console.log(
      `load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
    console.log('kind       lines      reader µs/line  ×10k   baseline µs/line  reader/baseline  read as');
    for (const kind of KINDS) {
      // Warm the JIT on the smallest file first, so the first size is not charged for it.
      const warm = makeFile(dir, kind, sizes[0]!);
      await readerMs(warm);
      baselineMs(warm);
      let first: number | null = null;
      for (const lines of sizes) {
        const path = makeFile(dir, kind, lines);
        const runs = lines >= 1_000_000 ? 1 : 3;
        let what = '';
        const reader = await best(runs, async () => {
          const r = await readerMs(path);
          what = r.what;
          return r.ms;
        });
        const base = await best(runs, () => baselineMs(path));
        const perLine = (1000 * reader) / lines;
        first ??= perLine;
        console.log(
          `${kind.padEnd(9)} ${lines.toLocaleString('en-US').padStart(9)}  ${perLine.toFixed(3).padStart(14)}  ${(perLine / first).toFixed(2).padStart(5)}  ` +
            `${((1000 * base) / lines).toFixed(3).padStart(16)}  ${(reader / base).toFixed(2).padStart(15)}  ${what}`,
        );
        rmSync(path, { force: true });
      }
    }
    console.log(
      `load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
    console.log(
      '×10k: time per line against the 10k file of the same kind (linear: within 2×; objects falls, its reading stops after the sample).',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0);
void main(sizes.length > 0 ? sizes : [10_000, 100_000, 1_000_000]);
