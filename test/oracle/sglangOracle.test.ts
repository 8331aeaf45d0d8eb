import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { EngineOutcome } from '../../src/core/sim/engines/engineTypes';
import { DEFAULT_PARAMS } from '../../src/core/sim/params';
import { workloadFromBlockTrace, workloadFromSession } from '../../src/core/sim/workload';
import type { AgentWorkload, Workload } from '../../src/core/sim/workload';
import { fixtures, LOCAL_ONLY, localSample, parseFile, repoRoot, sharedTrace } from '../support/helpers';
import type { OracleJob } from './oracleRun';
import { findSglangOracle, runRadixJob, runSglangOracle } from './sglangOracleRun';
import type { SglangOracleReport } from './sglangOracleRun';
import { radixStepDiff } from './radixStepDiff';

// The sglang-lru engine against SGLang's own code. Real sessions of every agent format
// (and the two block-hash request logs) are replayed as N staggered copies at SGLang's page
// sizes 1 and 16, on a pool that holds every copy and on pools a little larger than the
// largest call, where copies evict each other and decoding requests are retracted. The
// oracle (SGLang's RadixCache, KV allocators and PrefillAdder driven by a mirror of its
// non-overlap scheduler loop, Python) must agree with the engine exactly: admission hits,
// the never-evicting tree's ideal, evicted tokens, SGLang's #cached-token / #new-token
// counters, retractions, steps, prefill tokens, times, and per call the hit, the ideal,
// SGLang's cached_tokens and the retractions. On a failure the first step where the engine
// and the oracle part is printed.

const oracle = findSglangOracle();
const skipAll = 'missing' in oracle ? oracle.missing : false;
const oracleDir = 'dir' in oracle ? oracle.dir : '';

interface Source {
  name: string;
  /** The trace, or null when it is not here (a shared or local-only sample). */
  path: string | null;
  /** Why a missing trace is missing. */
  absent?: string;
  /** Replay only the session's first calls, or a request log's first requests (the oracle is Python: this keeps the suite to minutes). */
  calls?: number;
  replicas: number;
  staggerS: number;
  /** The tight pools, in largest calls (prompt + output): copies evict each other, decodes are retracted. */
  tight: number[];
  /** Only these pools (tokens) and page sizes: cases kept because they once told the engine and SGLang apart. */
  only?: Array<{ capacityTokens: number; pageSize: number; why: string }>;
}

// Chosen so that each case runs in seconds; the roomy pool holds every copy's largest call at
// once, the tight ones stay above SGLang's prompt limit (so no call is refused: the oracle
// ends a session at a refused call, the simulator goes on with its next call).
const SOURCES: Source[] = [
  {
    name: 'bundled sample (Claude Code)',
    path: join(repoRoot, 'samples/claude-code-sessions.trace.jsonl'),
    calls: 7,
    replicas: 3,
    staggerS: 0.5,
    tight: [1.05],
  },
  {
    name: 'Claude Code, spotter session',
    path: join(fixtures, 'claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl'),
    calls: 6,
    replicas: 4,
    staggerS: 2,
    tight: [1.05, 1.5],
  },
  {
    name: 'Claude Code, edit retry loop',
    path: join(fixtures, 'claude-code/edit-retry-loop.jsonl'),
    calls: 8,
    replicas: 4,
    staggerS: 3,
    tight: [1.05],
  },
  {
    name: 'Codex CLI 0.114 (TraceLab)',
    path: join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl'),
    replicas: 8,
    staggerS: 2,
    tight: [1.05],
  },
  {
    name: 'Codex CLI 0.60, rtchess (shared)',
    path: sharedTrace('codex/rtchess-exported-session.jsonl'),
    calls: 5,
    replicas: 4,
    staggerS: 1,
    tight: [1.05],
  },
  {
    name: 'mini-swe-agent, pvlib',
    path: join(fixtures, 'mini-swe-agent/pvlib__pvlib-python-1072.traj.json'),
    replicas: 8,
    staggerS: 1,
    tight: [1.05],
  },
  {
    name: 'TraceLab round trace (Claude)',
    path: join(fixtures, 'tracelab/round_trace.sanitized.jsonl'),
    calls: 2,
    replicas: 3,
    staggerS: 2,
    tight: [1.3],
  },
  {
    name: 'OpenHands, Multi-SWE-bench run',
    path: join(fixtures, 'openhands/multi_swe_bench-output.head2.jsonl'),
    calls: 8,
    replicas: 6,
    staggerS: 1,
    tight: [1.05],
  },
  {
    name: 'OpenHands, saved trajectory',
    path: join(fixtures, 'openhands/basic_gui_mode.json'),
    replicas: 8,
    staggerS: 1,
    tight: [1.05],
  },
  {
    name: 'Gemini CLI (Harbor RFC)',
    path: join(fixtures, 'gemini-cli/harbor-rfc-gemini-cli-trajectory.json'),
    replicas: 8,
    staggerS: 0.2,
    tight: [1.05],
  },
  {
    name: 'AIPerf profile export',
    path: join(fixtures, 'aiperf/non_uniform_requests.profile_export.jsonl'),
    replicas: 8,
    staggerS: 0.5,
    tight: [1.05],
  },
  {
    name: 'OpenCode export (local-only)',
    path: localSample('opencode/w12z+Cap.json'),
    absent: LOCAL_ONLY,
    calls: 10,
    replicas: 4,
    staggerS: 1,
    tight: [1.05],
  },
  {
    name: 'Cline task (local-only)',
    path: localSample('cline/haram-333-fineye-ui_messages.json'),
    absent: LOCAL_ONLY,
    calls: 10,
    replicas: 4,
    staggerS: 1,
    tight: [1.05],
  },
  {
    name: 'Mooncake conversation trace (block hashes)',
    path: join(fixtures, 'mooncake/conversation_trace.head300.jsonl'),
    calls: 150,
    replicas: 1,
    staggerS: 0,
    tight: [1.5],
  },
  {
    name: 'Bailian trace A (block hashes)',
    path: join(fixtures, 'bailian/qwen_traceA_lite.rows01-14.jsonl'),
    replicas: 1,
    staggerS: 0,
    tight: [1.5],
  },
];

async function loadWorkload(s: Source): Promise<Workload> {
  const parsed = await parseFile(s.path!);
  assert.equal(parsed.problem, null, `${s.path}: ${parsed.problem?.message}`);
  const model = parsed.model;
  if (model.sessions.some((x) => x.calls.some((c) => c.blocks !== null))) {
    const requests = workloadFromBlockTrace(model).workload!;
    return s.calls === undefined ? requests : { ...requests, requests: requests.requests.slice(0, s.calls) };
  }
  // The session the CLI replays: the first main session with token counts.
  const usable = (x: (typeof model.sessions)[number]): boolean =>
    x.calls.some((c) => c.tokens.input !== null && c.tokens.output !== null);
  const session = model.sessions.find((x) => x.role === 'main' && usable(x)) ?? model.sessions.find(usable)!;
  const w: AgentWorkload = workloadFromSession(session).workload;
  if (s.calls !== undefined) w.sessions[0]!.calls = w.sessions[0]!.calls.slice(0, s.calls);
  return w;
}

/** The largest call (prompt + output) and the whole run's peak demand if nothing were shared. */
function sizes(w: Workload, replicas: number): { largest: number; all: number } {
  const calls =
    w.kind === 'sessions'
      ? w.sessions.flatMap((s) => s.calls.map((c) => c.promptTokens + Math.max(1, c.outputTokens)))
      : w.requests.map((r) => r.promptTokens + Math.max(1, r.outputTokens));
  const largest = Math.max(...calls);
  return { largest, all: w.kind === 'sessions' ? largest * replicas : calls.reduce((a, b) => a + b, 0) };
}

/** Both sides of the cliff: every copy's largest call fits at once; or the pool is a little larger than one call. */
function capacities(w: Workload, replicas: number, tight: number[]): Array<{ label: string; capacityTokens: number }> {
  const { largest, all } = sizes(w, replicas);
  return [
    { label: 'roomy', capacityTokens: Math.ceil(all * 1.1) },
    ...tight.map((t) => ({ label: `tight ×${t}`, capacityTokens: Math.ceil(largest * t) + 64 })),
  ];
}

/** The engine's figures that differ from the oracle's, as messages. */
function compare(o: EngineOutcome, cachedTokens: number[], job: OracleJob, r: SglangOracleReport): string[] {
  const bad: string[] = [];
  const eq = (what: string, ours: number, theirs: number): void => {
    if (ours !== theirs) bad.push(`${what}: ours ${ours}, oracle ${theirs}`);
  };
  const near = (what: string, ours: number, theirs: number): void => {
    if (Math.abs(ours - theirs) > 1e-6 * Math.max(1, Math.abs(theirs)))
      bad.push(`${what}: ours ${ours}, oracle ${theirs}`);
  };
  const near4 = (what: string, ours: number, theirs: number): void => {
    if (Math.abs(ours - theirs) > 0.51e-4) bad.push(`${what}: ours ${ours}, oracle ${theirs}`);
  };
  if (r.crash) bad.push(`the oracle stopped where SGLang raises: ${r.crash}`);
  const done = o.records.filter((x) => !x.rejected);
  const sum = (f: (x: (typeof done)[number]) => number): number => done.reduce((a, x) => a + f(x), 0);
  eq('calls admitted', done.length, r.calls);
  eq('refused calls (prompt too long)', o.totals.rejectedRequests, r.rejected_calls_too_long);
  eq(
    'prompt tokens',
    sum((x) => x.promptTokens),
    r.prompt_tokens,
  );
  eq(
    'hit tokens at first admission',
    sum((x) => x.hitTokens),
    r.admission_hit_tokens,
  );
  eq(
    'ideal hit tokens (never-evicting tree)',
    sum((x) => x.idealHitTokens),
    r.ideal_infinite_cache_hit_tokens,
  );
  eq('evicted tokens', o.totals.evictedTokens ?? -1, r.evicted_tokens);
  eq("SGLang's #cached-token", o.totals.sglangCachedTokens ?? -1, r.sglang_metric_cached_tokens);
  eq("SGLang's #new-token", o.totals.sglangNewTokens ?? -1, r.sglang_metric_new_tokens);
  eq('retractions', o.totals.preemptions, r.retractions);
  eq(
    'prefill tokens computed',
    sum((x) => x.prefillTokens),
    r.prefill_tokens_computed,
  );
  eq(
    'recomputed prefill tokens',
    sum((x) => x.recomputedTokens),
    r.recomputed_prefill_tokens,
  );
  eq('engine steps', o.totals.steps, r.engine_steps);
  near('makespan (s)', o.totals.makespanS, r.makespan_s);
  // SGLang never mixes prefill and decode in a step: a step's fixed cost belongs to its kind.
  const fixedS = job.params.stepFixedMs / 1e3;
  near('prefill time (s)', o.totals.prefillMs / 1e3, r.t_prefill_s + fixedS * r.prefill_steps);
  near('decode time (s)', o.totals.decodeMs / 1e3, r.t_decode_s + fixedS * r.decode_steps);
  const calls = r.per_call ?? [];
  eq('calls reported per call', calls.length, done.length);
  calls.forEach((c, i) => {
    const x = done[i];
    if (!x) return;
    const where = `call ${c.call} of ${c.session}`;
    eq(`${where}: prompt`, x.promptTokens, c.prompt);
    eq(`${where}: hit`, x.hitTokens, c.admit_hit);
    eq(`${where}: ideal hit`, x.idealHitTokens, c.ideal_hit);
    eq(`${where}: SGLang's cached_tokens`, cachedTokens[x.request]!, c.sglang_cached_tokens);
    eq(`${where}: retractions`, x.preemptions, c.retractions);
    eq(`${where}: prefill tokens`, x.prefillTokens, c.prefill_computed);
    // The oracle rounds per-call times to 0.1 ms.
    near4(`${where}: first scheduled (s)`, x.admittedS ?? -1, c.first_sched_s);
    near4(`${where}: finished (s)`, x.finishedS ?? -1, c.finish_s ?? -1);
  });
  return bad.slice(0, 12);
}

const seen: Array<{
  name: string;
  pageSize: number;
  retractions: number;
  evicted: number;
  steps: number;
  ms: number;
  hitBelowIdeal: boolean;
}> = [];

describe('sglang-lru engine = SGLang oracle, on real sessions', { skip: skipAll }, () => {
  describe('each case', { concurrency: 2 }, () => {
    for (const source of SOURCES) {
      const absent =
        source.path === null || !existsSync(source.path)
          ? `${source.name}: ${source.absent ?? 'the shared trace is not beside the repository'}`
          : false;
      for (const pageSize of [1, 16]) {
        const sides = source.only
          ? source.only
              .filter((o) => o.pageSize === pageSize)
              .map((o) => ({ label: `${o.capacityTokens}-token pool (${o.why})`, fixed: o.capacityTokens }))
          : ['roomy', ...source.tight.map((t) => `tight ×${t}`)].map((label) => ({ label, fixed: 0 }));
        for (const side of sides) {
          it(`${source.name}, page ${pageSize}, ${side.label}`, { skip: absent }, async () => {
            const workload = await loadWorkload(source);
            const replicas = workload.kind === 'sessions' ? source.replicas : 1;
            const capacityTokens =
              side.fixed ||
              capacities(workload, replicas, source.tight).find((c) => c.label === side.label)!.capacityTokens;
            const job: OracleJob = {
              workload,
              replicas,
              staggerS: source.staggerS,
              params: { ...DEFAULT_PARAMS, policy: 'sglang-lru', capacityTokens, sglangPageSizeTokens: pageSize },
            };
            const t0 = Date.now();
            const report = await runSglangOracle(oracleDir, job);
            const { outcome, cachedTokens } = runRadixJob(job, { selfCheck: true });
            const bad = compare(outcome, cachedTokens, job, report);
            seen.push({
              name: `${source.name}, page ${pageSize}, ${side.label}`,
              pageSize,
              retractions: report.retractions,
              evicted: report.evicted_tokens,
              steps: report.engine_steps,
              ms: Date.now() - t0,
              hitBelowIdeal: report.admission_hit_tokens < report.ideal_infinite_cache_hit_tokens,
            });
            if (bad.length > 0) {
              const diff = await radixStepDiff(oracleDir, job);
              const first = diff.first
                ? `first step where they part: ${diff.first.step}: ${diff.first.what}`
                : 'every step agrees';
              assert.fail(
                `${capacityTokens}-token pool, page ${pageSize}, ×${replicas}:\n  ${bad.join('\n  ')}\n  ${first}`,
              );
            }
            // Never above the ceiling, and whole pages.
            for (const rec of outcome.records) {
              assert.ok(
                rec.hitTokens <= rec.idealHitTokens,
                `request ${rec.request}: hit ${rec.hitTokens} above its ideal ${rec.idealHitTokens}`,
              );
              assert.equal(
                rec.hitTokens % pageSize,
                0,
                `request ${rec.request}: a hit of ${rec.hitTokens} tokens is not whole ${pageSize}-token pages`,
              );
            }
          });
        }
      }
    }

    after(() => {
      for (const s of seen)
        console.log(
          `  ${s.name}: ${s.steps} steps, ${s.retractions} retractions, ${s.evicted} tokens evicted (${(s.ms / 1000).toFixed(1)} s)`,
        );
    });
  });

  it('the cases cross the cliff at both page sizes: some evict and retract, some keep everything', () => {
    // Runs after every case above.
    for (const pageSize of [1, 16]) {
      const at = seen.filter((s) => s.pageSize === pageSize);
      assert.ok(
        at.some((s) => s.retractions > 0),
        `page ${pageSize}: no case retracted`,
      );
      assert.ok(
        at.some((s) => s.evicted > 0 && s.hitBelowIdeal),
        `page ${pageSize}: no case evicted a prefix it needed`,
      );
      assert.ok(
        at.some((s) => s.retractions === 0 && s.evicted === 0),
        `page ${pageSize}: every case evicted`,
      );
    }
  });
});
