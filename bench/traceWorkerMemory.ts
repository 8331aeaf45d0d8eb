// What the extension's trace worker (dist/traceWorker.js, started by TraceWorkerClient in the
// extension host's process) costs that process while it reads a big log: the peak resident
// memory of a process that only opens the log in the worker, with the worker's young
// generation bounded as the CLI's analyze thread has it (READER_YOUNG_GENERATION_MB) and left
// to V8 (each semi-space may grow to 16 MB). Each open runs in a child process of its own,
// the two settings alternated; the CPU is the child's own, every thread included.
//
// Run: npm run build && npx tsx bench/traceWorkerMemory.ts [--mb N] [--runs N]   (default 777 MB, 2 runs)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { claude, codex } from '../scripts/makeBigTraces';
import { TraceWorkerClient, WORKER_HEAP_MB } from '../src/node/traceWorkerClient';
import { READER_YOUNG_GENERATION_MB } from '../src/node/youngGeneration';

const WORKER = join(__dirname, '../dist/traceWorker.js');

/** The child: opens FILE in a trace worker with the young generation YOUNG (MB, or `v8`: V8's own), prints its peak. */
async function child(file: string, young: string): Promise<void> {
  const cpu0 = process.cpuUsage();
  const client = new TraceWorkerClient(WORKER, WORKER_HEAP_MB, young === 'v8' ? null : Number(young));
  try {
    await client.open(
      {
        files: [{ key: basename(file), path: file }],
        totalBytes: statSync(file).size,
        format: null,
        fileName: basename(file),
        analysis: {},
        prices: null,
      },
      () => undefined,
    );
  } finally {
    client.dispose();
  }
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ peakMiB: process.resourceUsage().maxRSS / 1024, cpuS: (cpu.user + cpu.system) / 1e6 }));
}

async function main(args: string[]): Promise<void> {
  const option = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const mb = Number(option('--mb') ?? 777);
  const runs = Number(option('--runs') ?? 2);
  const dir = mkdtempSync(join(tmpdir(), 'trace-worker-memory-'));
  try {
    for (const [name, make] of [
      ['Claude Code', claude],
      ['Codex', codex],
    ] as const) {
      const path = join(dir, `${name.replace(' ', '-')}.jsonl`);
      await make({ mb }, path);
      console.log(`\n${name}, ${(statSync(path).size / 2 ** 20).toFixed(0)} MiB`);
      for (let r = 0; r < runs; r++) {
        for (const young of [String(READER_YOUNG_GENERATION_MB), 'v8']) {
          const run = spawnSync(process.execPath, [...process.execArgv, __filename, '--child', path, young], {
            encoding: 'utf8',
          });
          if (run.status !== 0) throw new Error(`child failed: ${run.stderr}`);
          const m = JSON.parse(run.stdout.trim().split('\n').pop()!) as { peakMiB: number; cpuS: number };
          const label = young === 'v8' ? "young generation V8's own" : `young generation ${young} MB`;
          console.log(
            `  ${label.padEnd(30)} peak RSS ${m.peakMiB.toFixed(0).padStart(4)} MiB  CPU ${m.cpuS.toFixed(2)} s  load ${loadavg()[0]!.toFixed(1)}`,
          );
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') void child(argv[1]!, argv[2]!);
else void main(argv);
