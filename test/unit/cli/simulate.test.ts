import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ensureBuilt, fixtures, repoRoot } from '../../support/helpers';

const cli = join(repoRoot, 'dist/cli.js');
const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');
const workloads = join(fixtures, 'workloads');
const ONE_SESSION = join(workloads, 'one-session-two-calls.workload.json');
const TWO_SESSIONS = join(workloads, 'two-sessions-small-cache.workload.json');
const GROWING = join(workloads, 'growing-session.workload.json');
const NEGATIVE_WAIT = join(workloads, 'negative-tool-wait.workload.json');
const MOONCAKE = join(fixtures, 'mooncake/conversation_trace.head300.jsonl');

/** Step costs easy to add up by hand: 1 ms a step, 10 µs a prefilled token, decode context free. */
const HAND_COSTS = ['--step-fixed-ms', '1', '--prefill-us-per-token', '10', '--kv-read-ns-per-token', '0'];

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, 'simulate', ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function json(...args: string[]) {
  const r = run(...args, '--json');
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** Exit status and message, and never a stack trace. */
function fails(code: number, message: RegExp, ...args: string[]): void {
  const r = run(...args);
  assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
  assert.match(r.stderr, message);
  assert.doesNotMatch(r.stderr, /\n\s+at .*:\d+:\d+/, 'no stack trace');
  assert.equal(r.stdout, '');
}

describe('agent-trace simulate (the built dist/cli.js)', () => {
  before(() => ensureBuilt(cli));

  it('--help names every option the webview may write', () => {
    const r = run('--help');
    assert.equal(r.code, 0);
    const flags = [
      '--workload',
      '--session',
      '--replicas',
      '--stagger-s',
      '--stagger',
      '--seed',
      '--tool-wait-scale',
      '--capacity-tokens',
      '--gpu',
      '--model',
      '--gpu-memory-gib',
      '--policy',
      '--ttl-s',
      '--max-ttl-s',
      '--admission-cap',
      '--initial-cap',
      '--hit-rate-floor',
      '--backoff',
      '--window-s',
      '--offload-tokens',
      '--offload-gbps',
      '--block-size',
      '--max-batched-tokens',
      '--max-num-seqs',
      '--max-model-len',
      '--free-order',
      '--step-fixed-ms',
      '--prefill-us-per-token',
      '--kv-read-ns-per-token',
      '--decode-us-per-seq',
      '--kv-bytes-per-token',
      '--engine',
      '--sweep',
      '--cliff-threshold',
      '--threads',
      '--emit-workload',
      '--json',
      '--gpus',
      '--router',
      '--target-hit-rate',
    ];
    for (const f of flags) assert.match(r.stdout, new RegExp(`^  ${f}[ =]`, 'm'), f);
    assert.match(r.stdout, /A\.\.B is A, 2A, 4A, \.\.\. up\s+to B \(B included\)/);
    const main = spawnSync(process.execPath, [cli, '--help'], { encoding: 'utf8' });
    assert.match(main.stdout, /agent-trace simulate \(FILE \| --workload W\.json\) \[options\] \[--json\]/);
  });

  it('--json follows the documented contract', () => {
    const doc = json(SAMPLE, '--replicas', '2');
    assert.deepEqual(Object.keys(doc), ['input', 'scenario']);
    assert.deepEqual(Object.keys(doc.input), [
      'file',
      'workload',
      'format',
      'session',
      'workloadKind',
      'replay',
      'notes',
      'engine',
      'gpu',
      'model',
      'gpuMemoryGiB',
      'params',
      'replicas',
      'sweep',
    ]);
    assert.deepEqual(Object.keys(doc.input.params), [
      'blockSizeTokens',
      'capacityTokens',
      'maxNumBatchedTokens',
      'maxNumSeqs',
      'maxModelLenTokens',
      'freeOrder',
      'stepFixedMs',
      'prefillUsPerToken',
      'kvReadNsPerToken',
      'decodeUsPerSeq',
      'kvBytesPerToken',
      'policy',
      'ttlPin',
      'admissionCap',
      'offload',
    ]);
    assert.deepEqual(doc.input.replicas, { replicas: 2, staggerS: 0, staggerMode: 'fixed', seed: 1, toolWaitScale: 1 });
    assert.deepEqual(
      [doc.input.format, doc.input.session, doc.input.workloadKind, doc.input.engine],
      ['agent-trace', 'ae4a77f8-aedd-4bc1-888f-c94edc91af04', 'sessions', 'fast'],
    );
    assert.deepEqual(Object.keys(doc.scenario), [
      'replicas',
      'capacityTokens',
      'policy',
      'requests',
      'rejectedRequests',
      'promptTokens',
      'admissionHitRate',
      'idealHitRate',
      'vllmMetricHitRate',
      'prefillTokens',
      'recomputedPrefillTokens',
      'offloadHitTokens',
      'preemptions',
      'prefillShare',
      'makespanS',
      'steps',
      'slowdown',
      'sessions',
      'calls',
    ]);
    assert.deepEqual(Object.keys(doc.scenario.calls[0]), [
      'callIndex',
      'promptTokens',
      'outputTokens',
      'hitTokens',
      'idealHitTokens',
      'prefillTokens',
      'recomputedTokens',
      'offloadHitTokens',
      'waitedS',
      'latencyS',
      'preemptions',
      'rejected',
    ]);
    // The sample's main session has 48 calls; two copies make 96 requests, and the calls listed are the first copy's.
    assert.deepEqual([doc.scenario.requests, doc.scenario.calls.length, doc.scenario.sessions.length], [96, 48, 2]);
  });

  it('one session, two calls, a big cache: call 2 hits the full blocks call 1 computed', () => {
    // Call 1: prompt 100, output 20. vLLM computes KV for 100 + 19 tokens (the last sampled
    // token is never computed): 7 full 16-token blocks = 112 tokens are cached.
    // Call 2: prompt 200 whose first 120 tokens are call 1's prompt + output. It may hit at
    // most floor((200 − 1)/16) = 12 blocks; the chain holds 7: hit 112, an infinite cache too.
    // Time: call 1 = a 100-token prefill step (1 + 100 × 0.01 = 2 ms) + 19 decode steps (1 ms
    // each) = 21 ms; the 1 s tool wait; call 2 = an 88-token prefill (1.88 ms) + 9 decodes.
    const s = json('--workload', ONE_SESSION, '--capacity-tokens', '4096', ...HAND_COSTS).scenario;
    assert.deepEqual(
      s.calls.map((c: { hitTokens: number }) => c.hitTokens),
      [0, 112],
    );
    assert.deepEqual(
      s.calls.map((c: { idealHitTokens: number }) => c.idealHitTokens),
      [0, 112],
    );
    assert.equal(s.promptTokens, 300);
    assert.equal(s.admissionHitRate, 112 / 300);
    assert.equal(s.idealHitRate, 112 / 300);
    assert.equal(s.vllmMetricHitRate, 112 / 300);
    assert.deepEqual([s.recomputedPrefillTokens, s.preemptions, s.steps], [0, 0, 1 + 19 + 1 + 9]);
    assert.ok(Math.abs(s.makespanS - (0.021 + 1 + 0.00188 + 0.009)) < 1e-9, String(s.makespanS));
    // Prefill time 2 + 1.88 ms, decode time 19 + 9 ms (a step with a decode bills its fixed cost to decode).
    assert.ok(Math.abs(s.prefillShare - 3.88 / 31.88) < 1e-12, String(s.prefillShare));
  });

  it("two sessions on a 16-block cache: the second evicts the first one's deepest blocks", () => {
    // Session a, call 1: prompt 160, output 16 → 11 blocks, 10 of them full and cached. When it
    // ends, its partial block goes to the head of the free queue and its full blocks to the tail,
    // deepest first (b9 … b0). Session b (new content, at 0.5 s) takes 11 blocks from the head:
    // the partial block, the 5 never-used blocks, then b9, b8, b7, b6 and b5. Session a's call 2
    // (at ≈1.02 s, prompt 192, its first 176 tokens call 1's context) finds b0–b4: 80 tokens hit
    // where an infinite cache would give the 10 full blocks, 160. The 80 lost are recomputed.
    const s = json('--workload', TWO_SESSIONS, '--capacity-tokens', '256', ...HAND_COSTS).scenario;
    assert.deepEqual(
      s.calls.map((c: { hitTokens: number; idealHitTokens: number; recomputedTokens: number }) => [
        c.hitTokens,
        c.idealHitTokens,
        c.recomputedTokens,
      ]),
      [
        [0, 0, 0],
        [80, 160, 80],
      ],
    );
    assert.equal(s.promptTokens, 160 + 192 + 160);
    assert.equal(s.admissionHitRate, 80 / 512);
    assert.equal(s.idealHitRate, 160 / 512);
    assert.equal(s.recomputedPrefillTokens, 80);
    // With a cache of 4,096 tokens nothing is evicted: call 2 hits all 160.
    assert.equal(
      json('--workload', TWO_SESSIONS, '--capacity-tokens', '4096', ...HAND_COSTS).scenario.admissionHitRate,
      160 / 512,
    );
  });

  it('--emit-workload writes the workload JSON, and simulating it gives the same figures as the trace', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-trace-sim-'));
    try {
      const out = join(dir, 'sample.workload.json');
      const emitted = run(SAMPLE, '--emit-workload', out);
      assert.equal(emitted.code, 0, emitted.stderr);
      assert.equal(emitted.stdout, '', 'nothing else was asked');
      assert.match(emitted.stderr, /workload of 1 session, 48 calls/);
      const w = JSON.parse(readFileSync(out, 'utf8'));
      assert.deepEqual(Object.keys(w), ['sharedPrefixTokens', 'sessions']);
      assert.deepEqual(Object.keys(w.sessions[0]), ['id', 'startS', 'calls']);
      assert.deepEqual(Object.keys(w.sessions[0].calls[0]), [
        'promptTokens',
        'prefixTokens',
        'outputTokens',
        'toolWaitS',
      ]);
      assert.equal(w.sessions[0].calls.length, 48);
      const fromTrace = json(SAMPLE, '--replicas', '8');
      const fromWorkload = json('--workload', out, '--replicas', '8');
      assert.deepEqual(fromWorkload.scenario, fromTrace.scenario);
      assert.deepEqual(
        [fromWorkload.input.file, fromWorkload.input.workload, fromWorkload.input.format],
        [null, out, null],
      );
      // Eight copies of the sample on the default cache lose hits to eviction.
      assert.ok(fromTrace.scenario.admissionHitRate < fromTrace.scenario.idealHitRate - 0.01);
      // With --json as well, it writes the file and simulates.
      const both = run(SAMPLE, '--emit-workload', out, '--json');
      assert.equal(both.code, 0);
      assert.ok(JSON.parse(both.stdout).scenario);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a replica sweep finds the cliff between 4 and 8 sessions', () => {
    // One session of 6 calls growing by 32 tokens to a 432-token context (27 blocks) with
    // 0.5 s tool waits, on a 2,048-token cache (128 blocks): while every copy waits on its
    // tool, LRU keeps all their contexts only while N × 27 ≤ 128, i.e. N ≤ 4.
    const args = [
      '--workload',
      GROWING,
      '--capacity-tokens',
      '2048',
      '--step-fixed-ms',
      '1',
      '--prefill-us-per-token',
      '10',
      '--kv-read-ns-per-token',
      '10',
      '--sweep',
      'replicas=1..8',
    ];
    const doc = json(...args);
    assert.deepEqual(Object.keys(doc), ['input', 'sweep', 'cliff']);
    assert.deepEqual(doc.input.sweep, { axis: 'replicas', values: [1, 2, 4, 8], hitRateDropThreshold: 0.1 });
    assert.deepEqual(
      doc.sweep.map((p: { value: number }) => p.value),
      [1, 2, 4, 8],
    );
    assert.equal(doc.sweep[0].calls, undefined, 'points leave out the per-call list');
    assert.equal(doc.sweep[3].replicas, 8);
    assert.deepEqual(Object.keys(doc.cliff), [
      'axis',
      'at',
      'reason',
      'hitRateDropThreshold',
      'lastGood',
      'suggestedAdmissionCap',
      'summary',
    ]);
    assert.deepEqual(
      [doc.cliff.at, doc.cliff.reason, doc.cliff.lastGood, doc.cliff.suggestedAdmissionCap],
      [8, 'hit-rate', 4, 4],
    );
    for (const p of doc.sweep.slice(0, 3)) assert.ok(p.idealHitRate - p.admissionHitRate < 0.01, `N=${p.value}`);

    const text = run(...args);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^\s+8\s+\d+\.\d%.*◀ cliff$/m);
    assert.match(
      text.stdout,
      /The cliff is at 8 sessions: the hit rate falls to \d+% \(ideal \d+%\)\. Admit at most 4 sessions at once/,
    );
    // A stricter threshold cannot move the cliff later.
    assert.ok(json(...args, '--cliff-threshold', '0.05').cliff.at <= 8);
  });

  it('--threads runs the sweep points on worker threads with the same document', () => {
    const args = [
      '--workload',
      GROWING,
      '--capacity-tokens',
      '2048',
      '--step-fixed-ms',
      '1',
      '--prefill-us-per-token',
      '10',
      '--kv-read-ns-per-token',
      '10',
      '--sweep',
      'replicas=1..8',
    ];
    assert.deepEqual(json(...args, '--threads', '3'), json(...args, '--threads', '1'));
    // A point the engine refuses (capacity below one block) is reported from its thread as it is in-process.
    const refused = ['--workload', GROWING, '--sweep', 'capacity=8,4096', '--threads', '2'];
    fails(1, /^agent-trace: capacityTokens must be at least one block \(16 tokens\), got 8$/m, ...refused);
    fails(
      2,
      /--threads needs a whole number from 1 to 256, not "0"/,
      '--workload',
      GROWING,
      '--sweep',
      'replicas=1..8',
      '--threads',
      '0',
    );
    fails(
      2,
      /--threads needs a whole number from 1 to 256, not "1\.5"/,
      '--workload',
      GROWING,
      '--sweep',
      'replicas=1..8',
      '--threads',
      '1.5',
    );
    fails(2, /--threads needs --sweep/, '--workload', GROWING, '--threads', '2');
  });

  it('--engine reference gives the same results as the fast engine', () => {
    const args = [
      '--workload',
      GROWING,
      '--capacity-tokens',
      '2048',
      '--replicas',
      '6',
      '--step-fixed-ms',
      '1',
      '--prefill-us-per-token',
      '10',
      '--kv-read-ns-per-token',
      '10',
    ];
    const fast = json(...args);
    const reference = json(...args, '--engine', 'reference');
    assert.equal(reference.input.engine, 'reference');
    assert.deepEqual(reference.scenario, fast.scenario);
    assert.deepEqual({ ...reference.input, engine: 'fast' }, fast.input);
    assert.ok(fast.scenario.recomputedPrefillTokens > 0, 'a case where eviction happens');
  });

  it('--gpu and --model set the capacity as capacityFor computes it, and the preset step costs', () => {
    // H200 + Qwen3-32B bf16 (docs/design/simulator.md §4): 140.4 GiB × 0.9 − 61.1 GiB weights − 3 GiB = 62.26 GiB
    // of KV; × 2^30 / 262,144 bytes per token = 255,016.96 → 255,016 tokens → whole 16-token
    // blocks: 255,008 (≈255k).
    const h200 = json('--workload', ONE_SESSION, '--gpu', 'h200', '--model', 'qwen3-32b').input;
    assert.deepEqual([h200.gpu, h200.model, h200.gpuMemoryGiB], ['h200', 'qwen3-32b', 140.4]);
    const p = h200.params;
    assert.deepEqual(
      [p.capacityTokens, p.kvBytesPerToken, p.stepFixedMs, p.kvReadNsPerToken, p.prefillUsPerToken],
      [255_008, 262_144, 16.1, 64, 132.7],
    );
    // A step cost given explicitly wins over the preset.
    assert.equal(
      json('--workload', ONE_SESSION, '--gpu', 'h200', '--model', 'qwen3-32b', '--step-fixed-ms', '20').input.params
        .stepFixedMs,
      20,
    );
    // H100: 79.65 × 0.9 − 64.1 = 7.585 GiB → 31,068.16 → 31,056 tokens, and its own step costs.
    const h100 = json('--workload', ONE_SESSION, '--gpu', 'h100', '--model', 'qwen3-32b').input.params;
    assert.deepEqual([h100.capacityTokens, h100.stepFixedMs, h100.kvReadNsPerToken], [31_056, 23, 92]);
    // A custom GPU memory with the model: 100 GiB × 0.9 − 64.1 = 25.9 GiB → 106,086.4 → 106,080.
    const custom = json('--workload', ONE_SESSION, '--gpu-memory-gib', '100', '--model', 'qwen3-32b').input;
    assert.deepEqual([custom.gpu, custom.gpuMemoryGiB, custom.params.capacityTokens], ['custom', 100, 106_080]);
  });

  it('a Mamba preset brings the block size vLLM forces for it, and says when vLLM turns prefix caching off', () => {
    // docs/design/simulator.md §4.1. Nemotron Nano 9B v2 on an H200: 140.4 × 0.9 − 16.6 − 3 = 106.76 GiB
    // × 2^30 / 16,384 B = 6,996,643.8 → 6,996,643 slots → whole 768-token blocks: 9,110 × 768 = 6,996,480.
    const nemotron = json('--workload', ONE_SESSION, '--gpu', 'h200', '--model', 'nemotron-nano-9b').input.params;
    assert.deepEqual([nemotron.blockSizeTokens, nemotron.capacityTokens], [768, 6_996_480]);
    assert.equal(nemotron.kvLayout.other, 'mamba');
    // A block size given still wins.
    const given = json('--workload', ONE_SESSION, '--gpu', 'h200', '--model', 'nemotron-nano-9b', '--block-size', '16');
    assert.equal(given.input.params.blockSizeTokens, 16);
    // Qwen3-Next: 126.36 − 74.2 − 3 = 49.16 GiB × 2^30 / 24,576 B = 2,147,833.2 → 3,948 blocks of 544 = 2,147,712.
    const qwen = json('--workload', ONE_SESSION, '--gpu', 'h200', '--model', 'qwen3-next-80b');
    assert.deepEqual([qwen.input.params.blockSizeTokens, qwen.input.params.capacityTokens], [544, 2_147_712]);
    assert.equal(qwen.input.params.kvLayout.prefixCaching, false);
    const text = run('--workload', ONE_SESSION, '--gpu', 'h200', '--model', 'qwen3-next-80b');
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /544-token blocks, hybrid engine \(1 full-attention \+ 3 Mamba-state block tables, no prefix caching/,
    );
    assert.match(text.stdout, /nothing hits \(vLLM turns prefix caching off for this model\)/);
  });

  it("prints the headline figures, one plain sentence and the chosen session's calls", () => {
    const r = run(SAMPLE, '--replicas', '24', '--gpu', 'h200', '--model', 'qwen3-32b');
    assert.equal(r.code, 0, r.stderr);
    for (const line of [
      /admission hit rate\s+\d+\.\d%\s+ideal \d+\.\d%/,
      /vLLM's metric\s+\d+\.\d%/,
      /recomputed prefill\s+[\d,]+ tokens/,
      /preemptions\s+[\d,]+/,
      /prefill share\s+\d+\.\d% of LLM time/,
      /makespan\s+/,
      /slowdown\s+mean \d/,
    ]) {
      assert.match(r.stdout, line);
    }
    assert.match(
      r.stdout,
      /^24 sessions like this on one H200 141 GB with Qwen3-32B \(bf16\): hit rate falls from \d+% to \d+%, prefill becomes \d+% of LLM time and sessions take [\d.]+× as long as alone\.$/m,
    );
    assert.match(
      r.stdout,
      /calls of session ae4a77f8-aedd-4bc1-888f-c94edc91af04 \(its first copy\):\n\s+call\s+prompt\s+hit\s+ideal hit\s+recomputed\s+waited\s+preemptions/,
    );
    assert.match(
      r.stdout,
      /\d+ of 48 calls shown: the first and last 5 and the 10 that lost the most cache; --json lists every call\./,
    );
  });

  it('a block-hash trace is replayed open loop, and says so', () => {
    const r = run(MOONCAKE, '--capacity-tokens', '65536');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^simulate: mooncake trace, 300 requests with 512-token block hashes$/m);
    assert.match(r.stdout, /replay\s+open loop, 300 requests at their recorded arrival times/);
    const doc = json(MOONCAKE, '--capacity-tokens', '65536');
    assert.deepEqual(
      [doc.input.workloadKind, doc.input.session, doc.input.replicas, doc.input.params.blockSizeTokens],
      ['requests', null, null, 512],
    );
    fails(
      2,
      /--replicas applies to agent sessions; a block-hash trace is replayed open loop/,
      MOONCAKE,
      '--replicas',
      '2',
    );
  });

  it('--gpus 1 is one GPU, byte for byte; --gpus K --router R adds the fleet and each GPU', () => {
    const args = [
      '--workload',
      GROWING,
      '--capacity-tokens',
      '2048',
      '--replicas',
      '6',
      '--stagger-s',
      '0.05',
      ...HAND_COSTS,
    ];
    const one = run(...args, '--json');
    assert.equal(run(...args, '--gpus', '1', '--json').stdout, one.stdout);
    // Six 27-block contexts thrash one 128-block cache; on 2 GPUs behind session affinity each
    // GPU keeps 3 (81 blocks): the hit rate goes up.
    const doc = json(...args, '--gpus', '2', '--router', 'session-affinity');
    assert.deepEqual(doc.input.params.fleet, { gpus: 2, router: 'session-affinity' });
    assert.deepEqual([doc.scenario.gpus, doc.scenario.router], [2, 'session-affinity']);
    assert.deepEqual(Object.keys(doc.scenario.perGpu[0]), [
      'gpu',
      'requests',
      'sessions',
      'promptTokens',
      'admissionHitRate',
      'idealHitRate',
      'recomputedPrefillTokens',
      'preemptions',
      'prefillShare',
      'steps',
      'busyS',
      'utilization',
      'makespanS',
    ]);
    assert.deepEqual(
      doc.scenario.perGpu.map((g: { sessions: number }) => g.sessions),
      [3, 3],
    );
    assert.equal(
      doc.scenario.perGpu.reduce((n: number, g: { requests: number }) => n + g.requests, 0),
      36,
    );
    assert.ok(doc.scenario.admissionHitRate > JSON.parse(one.stdout).scenario.admissionHitRate);
    // The chosen session's calls say where they ran: all on one GPU.
    assert.equal(new Set(doc.scenario.calls.map((c: { gpu: number }) => c.gpu)).size, 1);
    const text = run(...args, '--gpus', '2', '--router', 'session-affinity');
    assert.match(text.stdout, /2 GPUs behind the session-affinity router/);
    assert.match(text.stdout, /^per GPU \(session-affinity router\):$/m);
    // A router with one GPU does nothing, and says so.
    assert.match(
      run(...args, '--router', 'kv-aware').stderr,
      /note: --router kv-aware only matters with --gpus 2 or more/,
    );
  });

  it('--sweep gpus=… answers the capacity planner: the fewest GPUs that keep the hit rate at the target', () => {
    const args = [
      '--workload',
      GROWING,
      '--capacity-tokens',
      '2048',
      '--replicas',
      '16',
      '--stagger-s',
      '0.05',
      ...HAND_COSTS,
      '--router',
      'session-affinity',
      '--sweep',
      'gpus=1,8',
    ];
    const doc = json(...args, '--target-hit-rate', '0.75');
    assert.deepEqual(Object.keys(doc), ['input', 'sweep', 'cliff', 'plan']);
    assert.deepEqual(doc.input.sweep, { axis: 'gpus', values: [1, 8], hitRateDropThreshold: 0.1, targetHitRate: 0.75 });
    // 4 copies' contexts (108 blocks) fit a GPU's 128 blocks, 5 do not (sweep.test.ts works it
    // through). 1 falls short and 8 reaches it: the search runs 4 (reaches), 2 and 3 (short).
    assert.equal(doc.plan.gpus, 4);
    assert.deepEqual(
      doc.plan.tried.map((t: { gpus: number }) => t.gpus),
      [1, 2, 3, 4, 8],
    );
    const text = run(...args, '--target-hit-rate', '0.75');
    assert.match(
      text.stdout,
      /^To serve 16 sessions like this at ≥ 75% hit rate you need 4 GPUs with the session-affinity router/m,
    );
    // On worker threads the points and the planner's search give the same document.
    assert.deepEqual(json(...args, '--target-hit-rate', '0.75', '--threads', '2'), doc);
    fails(2, /--sweep and --gpus cannot go together: the sweep sets the number of GPUs/, ...args, '--gpus', '4');
    fails(2, /--target-hit-rate needs --sweep gpus=LIST/, '--workload', GROWING, '--target-hit-rate', '0.9');
  });

  it('bad input: exit 2 for the command line, exit 1 for what cannot be simulated, each named', () => {
    fails(2, /--gpus needs a whole number from 1 to 1024, not "0"/, SAMPLE, '--gpus', '0');
    fails(
      2,
      /--router must be one of round-robin, least-loaded, session-affinity, kv-aware, not "random"/,
      SAMPLE,
      '--router',
      'random',
    );
    fails(
      2,
      /--target-hit-rate needs a hit rate above 0 and at most 1/,
      SAMPLE,
      '--sweep',
      'gpus=1,2',
      '--target-hit-rate',
      '1.5',
    );
    fails(2, /--sweep gpus values must each be at most 1024, not "2048"/, SAMPLE, '--sweep', 'gpus=2048');
    fails(1, /fleet\.gpus must be 1 with policy 'admission-cap'/, SAMPLE, '--gpus', '2', '--policy', 'admission-cap');
    fails(
      2,
      /^agent-trace: unknown option --frobnicate\nRun "agent-trace simulate --help" for usage\./,
      SAMPLE,
      '--frobnicate',
    );
    fails(2, /--replicas needs a whole number > 0, not "0"/, SAMPLE, '--replicas', '0');
    fails(2, /--replicas needs a value/, SAMPLE, '--replicas');
    fails(2, /--stagger-s needs a number, not "soon"/, SAMPLE, '--stagger-s', 'soon');
    fails(
      2,
      /--policy must be one of vllm-lru, sglang-lru, ttl-pin, admission-cap, not "lfu"/,
      SAMPLE,
      '--policy',
      'lfu',
    );
    fails(2, /--sweep replicas values must be whole numbers > 0, not "0"/, SAMPLE, '--sweep', 'replicas=0,2');
    fails(
      2,
      /--capacity-tokens and --gpu cannot go together/,
      SAMPLE,
      '--capacity-tokens',
      '1000',
      '--gpu',
      'h100',
      '--model',
      'qwen3-32b',
    );
    fails(2, /simulate needs a trace FILE or --workload W\.json/);
    fails(
      1,
      /^agent-trace: capacityTokens must be at least one block \(16 tokens\), got 8\n$/,
      SAMPLE,
      '--capacity-tokens',
      '8',
    );
    fails(
      1,
      /negative-tool-wait\.workload\.json: sessions\[0\]\.calls\[1\]\.toolWaitS must be a number ≥ 0, got -2/,
      '--workload',
      NEGATIVE_WAIT,
    );
    // The sample's calls (45k–142k tokens) cannot fit in Qwen3-32B's 31k-token cache on an H100.
    fails(
      1,
      /no call fits in the KV cache of 31,056 tokens \(one H100 SXM 80 GB with Qwen3-32B \(bf16\)\): the shortest needs [\d,]+ tokens/,
      SAMPLE,
      '--gpu',
      'h100',
      '--model',
      'qwen3-32b',
    );
    fails(
      1,
      /Qwen3-32B \(bf16\) does not fit on a 60 GiB GPU: 0\.9 × 60 GiB = 54\.0 GiB usable, not more than its weights \(61\.1 GiB\) \+ 3 GiB reserve/,
      SAMPLE,
      '--gpu-memory-gib',
      '60',
      '--model',
      'qwen3-32b',
    );
    fails(
      1,
      /sessions\[0\]\.calls\[0\] has 106595 tokens \(prompt \+ output\), longer than maxModelLenTokens 100000/,
      SAMPLE,
      '--max-model-len',
      '100000',
    );
    fails(
      1,
      /no session "nope" in .*; sessions: ae4a77f8-aedd-4bc1-888f-c94edc91af04 \(main, 48 calls\)/,
      SAMPLE,
      '--session',
      'nope',
    );
    fails(1, /no such file/, join(fixtures, 'no-such-file.jsonl'));
  });

  it('every parameter is bounded and named: the inputs that hung, ran out of memory or printed Infinity are refused at once', () => {
    fails(
      1,
      /^agent-trace: prefillUsPerToken must be a number from 0 to 1,000,000, got 1e\+308\n$/,
      SAMPLE,
      '--prefill-us-per-token',
      '1e308',
    );
    fails(
      2,
      /^agent-trace: --sweep replicas values must each be a whole number from 1 to 100,000, not "1e15"/,
      SAMPLE,
      '--sweep',
      'replicas=1..1e15',
    );
    fails(
      2,
      /^agent-trace: --tool-wait-scale must be a number from 0 to 1000, not "1e308"/,
      SAMPLE,
      '--tool-wait-scale',
      '1e308',
    );
    fails(
      2,
      /^agent-trace: --capacity-tokens needs a number, not "1e400" \(too large to compute with\)/,
      SAMPLE,
      '--capacity-tokens',
      '1e400',
    );
    fails(
      2,
      /^agent-trace: --replicas must be a whole number from 1 to 100,000, not "100001"/,
      SAMPLE,
      '--replicas',
      '100001',
    );
    fails(
      1,
      /^agent-trace: capacityTokens must be a number from 1 to 268,435,456, got 1000000000000000\n$/,
      SAMPLE,
      '--capacity-tokens',
      '1e15',
    );
    fails(
      1,
      /^agent-trace: stepFixedMs must be a number from 0 to 1,000,000, got 10000000\n$/,
      SAMPLE,
      '--step-fixed-ms',
      '1e7',
    );
    fails(
      1,
      /^agent-trace: maxNumSeqs must be a whole number from 1 to 1,000,000, got 1e\+300\n$/,
      SAMPLE,
      '--max-num-seqs',
      '1e300',
    );
    fails(
      1,
      /^agent-trace: ttlPin.ttlS must be a number from 0 to 10,000,000, got 1e\+100\n$/,
      SAMPLE,
      '--policy',
      'ttl-pin',
      '--ttl-s',
      '1e100',
    );
    fails(
      2,
      /^agent-trace: --sweep lists at most 64 values/,
      SAMPLE,
      '--sweep',
      `replicas=${Array.from({ length: 65 }, (_, i) => i + 1).join(',')}`,
    );
    fails(
      2,
      /^agent-trace: --stagger-s must be a number from 0 to 10,000,000, not "1e9"/,
      SAMPLE,
      '--stagger-s',
      '1e9',
    );
    fails(
      2,
      /--gpu-memory-gib needs a number > 0 and at most 100,000/,
      SAMPLE,
      '--gpu-memory-gib',
      '1e9',
      '--model',
      'qwen3-32b',
    );
  });

  it('--progress reports how far a run has got, on stderr, and leaves the results alone', () => {
    const args = ['--workload', GROWING, '--capacity-tokens', '2048', '--replicas', '200', ...HAND_COSTS];
    const quiet = run(...args, '--json');
    const loud = run(...args, '--json', '--progress');
    assert.equal(loud.code, 0, loud.stderr);
    assert.equal(loud.stdout, quiet.stdout);
    assert.match(loud.stderr, /^simulating: [\d,]+ of [\d,]+ calls done \(\d+%\)$/m);
    assert.equal(quiet.stderr, '', 'not a terminal and no --progress: no progress lines');
  });
});
