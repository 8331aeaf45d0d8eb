// Throughput and memory of the streaming trace reader against a baseline measured in the
// same run (this machine is noisy, so only ratios are meaningful):
//   baseline  = read the whole file, split into lines, JSON.parse every line (no model)
//   streaming = parseTrace over a 256 KB-chunk file stream, building the full model
// Each measurement runs in its own child process, so peak RSS is not hidden by memory
// the other one already took from the OS.
// Run: npm run bench [-- copies]   (default 60 copies ≈ 100 MB; bundled by scripts/runBench.mjs like the other benchmarks)
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTrace } from '../src/core/trace/parseTrace';
import { repoRoot } from '../test/support/helpers';

const [mode, arg] = process.argv.slice(2);

function makeFile(copies: number): string {
  const source = readFileSync(join(repoRoot, 'test/fixtures/claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl'), 'utf8');
  const dir = mkdtempSync(join(tmpdir(), 'agent-trace-bench-'));
  const big = join(dir, 'big.jsonl');
  // Distinct message ids per copy, so every copy's calls count (as in one long session).
  writeFileSync(big, Array.from({ length: copies }, (_, i) => source.replaceAll('"id":"msg_', `"id":"msg_${i}_`)).join(''));
  return big;
}

function peakDuring<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; peakMB: number }> {
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const t0 = performance.now();
  return fn().then((value) => {
    const ms = performance.now() - t0;
    clearInterval(timer);
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, ms, peakMB: (peak - base) / 2 ** 20 };
  });
}

/** One measurement in this process; prints a JSON line for the parent. */
async function measure(which: string, big: string): Promise<void> {
  const r =
    which === 'baseline'
      ? await peakDuring(async () => {
          let n = 0;
          for (const line of readFileSync(big, 'utf8').split('\n')) if (line && JSON.parse(line)) n += 1;
          return n;
        })
      : await peakDuring(async () => {
          const parsed = await parseTrace([{ key: 'big.jsonl', bytes: createReadStream(big, { highWaterMark: 256 * 1024 }) }]);
          return parsed.model.sessions.reduce((n, s) => n + s.calls.length, 0);
        });
  console.log(JSON.stringify({ count: r.value, ms: r.ms, peakMB: r.peakMB }));
}

function child(which: string, big: string): { count: number; ms: number; peakMB: number } {
  const out = spawnSync(process.execPath, ['--expose-gc', __filename, which, big], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!);
}

function main(copies: number): void {
  const big = makeFile(copies);
  const mb = readFileSync(big).length / 2 ** 20;
  const baseline = child('baseline', big);
  const streaming = child('streaming', big);
  console.log(`file: ${mb.toFixed(0)} MB, ${baseline.count} lines, ${streaming.count} LLM calls`);
  console.log(`baseline  (readFileSync + split + JSON.parse): ${baseline.ms.toFixed(0)} ms, ${(mb / (baseline.ms / 1000)).toFixed(0)} MB/s, +${baseline.peakMB.toFixed(0)} MB RSS`);
  console.log(`streaming (parseTrace, full model):            ${streaming.ms.toFixed(0)} ms, ${(mb / (streaming.ms / 1000)).toFixed(0)} MB/s, +${streaming.peakMB.toFixed(0)} MB RSS`);
  console.log(`ratio time streaming/baseline:   ${(streaming.ms / baseline.ms).toFixed(2)}  (target ≤ 1.5)`);
  console.log(`ratio memory streaming/baseline: ${(streaming.peakMB / Math.max(1, baseline.peakMB)).toFixed(2)}  (target ≤ 0.5)`);
  rmSync(join(big, '..'), { recursive: true, force: true });
}

// The parent runs with [copies]; each child with its mode and the file.
if (mode === 'baseline' || mode === 'streaming') void measure(mode, arg!);
else main(Number(mode ?? 60));
