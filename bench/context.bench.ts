// The context anatomy, two figures (docs/performance.md#context-anatomy-benchcontext):
// 1. Accuracy: per session of every real sample at hand, the median |error| of the tokenizer's
//    count of what each call appended against the logged input growth: raw, calibrated on the
//    same calls (in-sample) and predicted from the session's earlier calls only, then the median
//    over sessions by model family (goal ≤ 5% for Claude and OpenAI models).
// 2. Cost: what `analyze` does (read, analyses, costs) without and with the content tap, the
//    anatomy and its report, on copies of
//    the spotter log (default 60 ≈ 100 MB; 600 ≈ 1 GB), each in its own child process; the
//    ratio (goal ≤ 1.3×) is what counts, this machine being noisy.
// Run: node scripts/runBench.mjs context [copies]   (CONTEXT_BENCH_COST_ONLY=1 skips the accuracy table,
//      CONTEXT_BENCH_ACCURACY_ONLY=1 the cost; CONTEXT_BENCH_CALLS=text prints, for the samples whose path
//      holds that text, every call's logged growth against the parts it appended (residual analysis);
//      CONTEXT_BENCH_ROUNDS=N alternates N without/with pairs, default 3, and
//      CONTEXT_BENCH_PHASES=1 prints each child's CPU ms by step (read, price, report, anatomy); CONTEXT_BENCH_COUNTER=module.js
//      counts Claude's text with another tokenizer, to compare; CONTEXT_BENCH_CODEX_SIZES=1 reads Codex logs
//      as sizes, as before its text was counted, CONTEXT_BENCH_GEMINI_SIZES=1 Gemini CLI logs likewise, CONTEXT_BENCH_OPENCODE_SIZES=1 OpenCode exports (local
//      samples: AGENT_TRACE_LOCAL_SAMPLES/gemini-cli and /opencode, test/fixtures/README.md); CONTEXT_BENCH_LOG=codex measures the cost on copies of the
//      shared Codex rollout, 1.9 MB each: 540 ≈ 1 GB)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import {
  createReadStream,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentContentCollector } from '../src/core/context/agentContent';
import { contextAnatomy } from '../src/core/context/contextAnatomy';
import { BudgetedCounter, median } from '../src/core/context/tokenCounter';
import type { TokenCounter } from '../src/core/context/tokenCounter';
import type { SessionAnatomy } from '../src/core/context/contextParts';
import { priceTrace } from '../src/core/cost/callCost';
import { createPriceBook } from '../src/core/cost/priceBook';
import { parseTrace } from '../src/core/trace/parseTrace';
import { buildTraceReport } from '../src/core/report/traceReport';
import { contextReport } from '../src/core/context/contextReport';
import { CLAUDE_STANDIN, O200K, tokenCounterFor } from '../src/node/contextTokenizer';
import { listCompanions } from '../src/node/traceFiles';
import { localSample, repoRoot, sharedTracesDir } from '../test/support/helpers';

const [mode, arg] = process.argv.slice(2);

/** Real samples: the committed fixtures of the agent formats, the shared traces and local samples when present. */
function samples(): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) {
        if (name !== 'subagents') walk(p);
      } else if (/\.(jsonl|json)$/.test(name) && !name.startsWith('agent-') && !name.startsWith('LICENSE'))
        found.push(p);
    }
  };
  for (const f of ['claude-code', 'codex', 'gemini-cli']) walk(join(repoRoot, 'test/fixtures', f));
  if (sharedTracesDir) for (const f of ['claude-code', 'codex']) walk(join(sharedTracesDir, f));
  for (const local of ['opencode', 'gemini-cli']) {
    const dir = localSample(local);
    if (dir) walk(dir);
  }
  return found;
}

function family(model: string | null): string {
  const m = (model ?? '').toLowerCase();
  if (m.includes('claude')) return 'Claude';
  if (/gpt|codex|^o\d/.test(m)) return 'OpenAI';
  if (m.includes('gemini')) return 'Gemini';
  return 'other';
}

/**
 * The counter for Claude's text: the Claude stand-in as shipped, or, to compare a tokenizer the
 * extension does not ship, a CommonJS module named by CONTEXT_BENCH_COUNTER exporting
 * `{ name, count(text) }` (docs/performance.md#context-anatomy-benchcontext).
 */
function benchCounter(): TokenCounter {
  const path = process.env.CONTEXT_BENCH_COUNTER;
  if (!path) return CLAUDE_STANDIN;
  // A module chosen at run time, outside the bundle.
  const m = createRequire(__filename)(path) as TokenCounter;
  return { name: m.name, count: (t) => m.count(t) };
}

async function accuracy(): Promise<void> {
  const byFamily = new Map<string, { raw: number[]; cal: number[]; pred: number[]; predRaw: number[] }>();
  const counter = benchCounter();
  console.log(
    `Claude Code text counted with ${counter.name}; Codex text with ${O200K.name}${process.env.CONTEXT_BENCH_CODEX_SIZES === '1' ? ' (CONTEXT_BENCH_CODEX_SIZES=1: Codex read as sizes, as before)' : ''}; Gemini CLI text with ${O200K.name} as a stand-in${process.env.CONTEXT_BENCH_GEMINI_SIZES === '1' ? ' (CONTEXT_BENCH_GEMINI_SIZES=1: Gemini CLI read as sizes, as before)' : ''}; sizes-only logs as characters ÷ 4.`,
  );
  console.log('"fitted" = calibrated on all the session\'s compared calls, the measured ones included (in-sample);');
  console.log(
    '"predicted" = each call from a calibration learnt on the earlier calls of its session only, from the 4th compared call on; "raw" beside it on the same calls.',
  );
  console.log(
    'sample                                              session   model                       content  calls  raw     fitted  | pred.calls  raw    predicted | input',
  );
  const seen = new Set<string>();
  for (const path of samples()) {
    // The same log at two places (a fixture and its shared original) is one sample, not two.
    const digest = createHash('sha256').update(readFileSync(path)).digest('hex');
    if (seen.has(digest)) continue;
    seen.add(digest);
    const listing = await listCompanions(path);
    const files = [
      { key: path, bytes: readFileSync(path) },
      ...listing.files.map((c) => ({ key: c.rel, bytes: readFileSync(c.path) })),
    ];
    const collector = new AgentContentCollector(counter, O200K);
    const parsed = await parseTrace(files, { recordTap: (r) => collector.record(r) });
    if (parsed.problem) continue;
    const sizesOnly =
      (process.env.CONTEXT_BENCH_CODEX_SIZES === '1' && parsed.model.format === 'codex') ||
      (process.env.CONTEXT_BENCH_GEMINI_SIZES === '1' && parsed.model.format === 'gemini-cli') ||
      (process.env.CONTEXT_BENCH_OPENCODE_SIZES === '1' && parsed.model.format === 'opencode');
    const anatomy = contextAnatomy(parsed.model, {
      content: sizesOnly ? null : collector.contentFor(parsed.model.format),
      tokenizer: tokenCounterFor,
      prices: null,
    });
    for (const s of anatomy.sessions) {
      const c = s.calibration;
      if (c.comparedCalls < 3) continue;
      const fam = family(s.model);
      const f = byFamily.get(fam) ?? { raw: [], cal: [], pred: [], predRaw: [] };
      f.raw.push(c.medianAbsErrorRaw!);
      f.cal.push(c.medianAbsError!);
      if (c.predictive.medianAbsError !== null) {
        f.pred.push(c.predictive.medianAbsError);
        f.predRaw.push(c.predictive.medianAbsErrorRaw!);
      }
      byFamily.set(fam, f);
      const name = path
        .replace(repoRoot + '/', '')
        .replace(sharedTracesDir ?? '\0', 'shared')
        .slice(-50);
      if (process.env.CONTEXT_BENCH_CALLS && path.includes(process.env.CONTEXT_BENCH_CALLS)) printCalls(s);
      console.log(
        `${name.padEnd(51)} ${s.sessionId.slice(0, 8).padEnd(9)} ${(s.model ?? '?').slice(0, 27).padEnd(27)} ${s.content.padEnd(8)} ${String(c.comparedCalls).padStart(5)}  ${pct(c.medianAbsErrorRaw)}  ${pct(c.medianAbsError)}  | ${String(c.predictive.comparedCalls).padStart(10)}  ${pct(c.predictive.medianAbsErrorRaw)}  ${pct(c.predictive.medianAbsError)}    | ${pct(c.medianInputError)}`,
      );
    }
  }
  console.log('\nmedian over sessions of the median |error| of appended tokens (goal ≤ 5% for Claude and OpenAI):');
  for (const [fam, f] of byFamily)
    console.log(
      `  ${fam.padEnd(8)} ${String(f.cal.length).padStart(3)} sessions  raw ${pct(median(f.raw))}  fitted (in-sample) ${pct(median(f.cal))}  |  ${String(f.pred.length).padStart(3)} sessions  raw ${pct(median(f.predRaw))}  predicted from earlier calls ${pct(median(f.pred))}`,
    );
}

/**
 * A session call by call: the logged growth, the anatomy's calibrated count of what the call
 * appended, their difference, and the parts it appended (kind, tool, tokens): where the log and
 * the count part ways (docs/performance.md#context-anatomy-benchcontext).
 */
function printCalls(s: SessionAnatomy): void {
  const c = s.calibration;
  console.log(
    `  ${s.sessionId}: factor ${c.factor.toFixed(3)}, per piece ${c.perPiece.toFixed(1)}, per call ${c.perCall.toFixed(1)}`,
  );
  const byCall = new Map<number, string[]>();
  for (const p of s.parts) {
    if (p.kind === 'system' || p.kind === 'restored') continue;
    const list = byCall.get(p.firstCall) ?? [];
    list.push(`${p.kind}${p.tool ? `:${p.tool}` : ''}=${p.tokens}`);
    byCall.set(p.firstCall, list);
  }
  for (const call of s.calls) {
    if (call.loggedGrowth === null) continue;
    const diff = call.loggedGrowth - call.estimatedGrowth;
    console.log(
      `    call ${String(call.index + 1).padStart(4)}  logged ${String(call.loggedGrowth).padStart(6)}  counted ${String(call.estimatedGrowth).padStart(6)}  logged − counted ${String(diff).padStart(6)}  | ${(byCall.get(call.index) ?? []).join(' ')}`,
    );
  }
}

function pct(x: number | null): string {
  return x === null ? '  n/a ' : `${(x * 100).toFixed(1).padStart(5)}%`;
}

/** CONTEXT_BENCH_LOG=codex: the cost measured on copies of the shared Codex rollout instead of the spotter log. */
const codexCost = process.env.CONTEXT_BENCH_LOG === 'codex';

function makeFile(copies: number): string {
  const codex = sharedTracesDir ? join(sharedTracesDir, 'codex/rtchess-exported-session.jsonl') : null;
  if (codexCost && (codex === null || !existsSync(codex)))
    throw new Error('CONTEXT_BENCH_LOG=codex needs the shared traces (the Codex rollout)');
  const source = readFileSync(
    codexCost ? codex! : join(repoRoot, 'test/fixtures/claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl'),
    'utf8',
  );
  const dir = mkdtempSync(join(tmpdir(), 'agent-trace-bench-'));
  const big = join(dir, 'big.jsonl');
  // Distinct message (or tool call) ids per copy, so every copy's calls count (as in one long session); written copy by copy.
  writeFileSync(big, '');
  for (let i = 0; i < copies; i++)
    writeFileSync(
      big,
      codexCost
        ? source.replaceAll('"call_id":"call_', `"call_id":"call_${i}_`)
        : source.replaceAll('"id":"msg_', `"id":"msg_${i}_`),
      { flag: 'a' },
    );
  return big;
}

/** `analyze` without the anatomy (read, analyses, costs), or with it (the content tap, the anatomy, its report). */
async function measure(which: string, big: string): Promise<void> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const stream = createReadStream(big, { highWaterMark: 256 * 1024 });
  const book = createPriceBook();
  let calls = 0;
  // CPU ms of each step (CONTEXT_BENCH_PHASES=1 prints them): where the anatomy's extra goes.
  const phases: Record<string, number> = {};
  let mark = cpu0;
  const phase = (name: string): void => {
    const used = process.cpuUsage(mark);
    phases[name] = Math.round((used.user + used.system) / 1000);
    mark = process.cpuUsage();
  };
  if (which === 'without') {
    const parsed = await parseTrace([{ key: 'big.jsonl', bytes: stream }]);
    phase('read');
    buildTraceReport(parsed, {}, { book, customTtl: null });
    phase('report');
    calls = parsed.model.sessions.reduce((n, s) => n + s.calls.length, 0);
  } else {
    const collector = new AgentContentCollector(new BudgetedCounter(CLAUDE_STANDIN), new BudgetedCounter(O200K), O200K);
    const parsed = await parseTrace([{ key: 'big.jsonl', bytes: stream }], { recordTap: (r) => collector.record(r) });
    phase('read+text');
    // The trace priced once, for the report and the anatomy's dollars (as the HTML report does).
    const priced = priceTrace(parsed.model, book);
    phase('price');
    buildTraceReport(parsed, {}, { book, customTtl: null, priced });
    phase('report');
    const anatomy = contextAnatomy(parsed.model, {
      content: collector.contentFor(parsed.model.format),
      tokenizer: tokenCounterFor,
      prices: book,
      costs: priced,
    });
    phase('anatomy');
    contextReport(anatomy);
    phase('contextReport');
    // Counted as without (the anatomy's call objects are built only when read: the report reads its columns).
    calls = parsed.model.sessions.reduce((n, s) => n + s.calls.length, 0);
  }
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ calls, ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, phases }));
}

function child(
  which: string,
  big: string,
): { calls: number; ms: number; cpuMs: number; phases: Record<string, number> } {
  const out = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=4096', __filename, which, big], {
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as ReturnType<typeof child>;
}

async function main(copies: number): Promise<void> {
  if (process.env.CONTEXT_BENCH_COST_ONLY !== '1') await accuracy();
  if (process.env.CONTEXT_BENCH_ACCURACY_ONLY === '1') return;
  const big = makeFile(copies);
  const mb = statSync(big).size / 2 ** 20;
  // Without and with alternate, round after round, so both meet the same load; each round's ratio is its own pair's.
  const rounds = Math.max(1, Number(process.env.CONTEXT_BENCH_ROUNDS ?? 3));
  const wall: number[] = [];
  const cpu: number[] = [];
  let calls = 0;
  console.log(
    `\ncost on ${mb.toFixed(0)} MB of ${codexCost ? 'the Codex rollout' : 'the Claude Code log'}: analyze (read, analyses, costs) without and with the anatomy, ${rounds} rounds`,
  );
  for (let r = 1; r <= rounds; r++) {
    const load0 = loadavg()[0]!;
    const without = child('without', big);
    const withAnatomy = child('with', big);
    calls = without.calls;
    wall.push(withAnatomy.ms / without.ms);
    cpu.push(withAnatomy.cpuMs / without.cpuMs);
    console.log(
      `  round ${r}: load ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}; wall ${without.ms.toFixed(0)} → ${withAnatomy.ms.toFixed(0)} ms (${wall.at(-1)!.toFixed(2)}); CPU ${without.cpuMs.toFixed(0)} → ${withAnatomy.cpuMs.toFixed(0)} ms (${cpu.at(-1)!.toFixed(2)})`,
    );
    if (process.env.CONTEXT_BENCH_PHASES === '1') {
      const steps = (p: Record<string, number>): string =>
        Object.entries(p)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ');
      console.log(`    CPU ms by step: without: ${steps(without.phases)}; with: ${steps(withAnatomy.phases)}`);
    }
  }
  // CPU time (the child's user + system, the collector's included) moves far less than wall time on a shared machine.
  console.log(
    `${calls} calls; median ratio with/without: CPU ${median(cpu)!.toFixed(2)}, wall ${median(wall)!.toFixed(2)}  (goal ≤ 1.3)`,
  );
  rmSync(join(big, '..'), { recursive: true, force: true });
}

if (mode === 'without' || mode === 'with') void measure(mode, arg!);
else void main(Number(mode ?? 60));
