import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readMeasuredRequests } from '../../../../src/core/replay/measuredRequests';
import { calibrate, reconstructSteps } from '../../../../src/core/sim/calibrate';
import type { MeasuredRequest, StepModel } from '../../../../src/core/sim/calibrate';
import type { StepLogEntry } from '../../../../src/core/sim/engines/engineTypes';
import { runReference } from '../../../../src/core/sim/engines/referenceEngine';
import { DEFAULT_PARAMS } from '../../../../src/core/sim/params';
import type { EngineParams } from '../../../../src/core/sim/params';
import { planWorkload } from '../../../../src/core/sim/simRequests';
import { workloadFromSession } from '../../../../src/core/sim/workload';
import { parseFile, repoRoot, SPOTTER } from '../../../support/helpers';

// The calibration sees what a benchmark client sees (when each request was sent, when each
// token arrived) and must find the step constants the server ran with. Here the server is
// the reference engine, run with known constants on a real Claude Code session's calls,
// six copies staggered so that steps mix prefills and decodes of several requests; its step
// log says when each step ended, which is when its tokens reach the client.

/** What a client would have measured of a reference-engine run. */
async function measuredRun(
  model: StepModel,
  replicas: number,
  budget: number,
): Promise<{ requests: MeasuredRequest[]; steps: number }> {
  const parsed = await parseFile(SPOTTER);
  const { workload } = workloadFromSession(parsed.model.sessions.find((s) => s.role === 'main')!);
  // The first 12 calls: prompts of 20k–40k tokens, so a 8,192-token budget chunks them.
  const w = { ...workload, sessions: workload.sessions.map((s) => ({ ...s, calls: s.calls.slice(0, 12) })) };
  const params: EngineParams = { ...DEFAULT_PARAMS, ...model, maxNumBatchedTokens: budget };
  const plan = planWorkload(w, 16, { replicas, staggerS: 3, staggerMode: 'fixed', seed: 1, toolWaitScale: 1 });
  const log: StepLogEntry[] = [];
  const outcome = runReference(plan, params, { onStepLog: (e) => log.push(e) });
  assert.equal(outcome.totals.preemptions, 0, 'the pool is large enough that nothing is preempted');
  const tokens = outcome.records.map((): number[] => []);
  const computed = outcome.records.map(() => 0);
  for (const step of log)
    for (const [r, n, decode] of step.sched) {
      const rec = outcome.records[r]!;
      if (decode) tokens[r]!.push(step.end * 1000);
      else {
        computed[r]! += n;
        // The prompt's last chunk samples the first token.
        if (computed[r]! + rec.hitTokens === rec.promptTokens) tokens[r]!.push(step.end * 1000);
      }
    }
  const requests = outcome.records.map((rec, r): MeasuredRequest => {
    const ts = tokens[r]!;
    assert.equal(ts.length, rec.outputTokens, `request ${r}: one arrival per output token`);
    const start = rec.arrivalS * 1000;
    return {
      startMs: start,
      ttftMs: ts[0]! - start,
      itlsMs: ts.slice(1).map((t, k) => t - ts[k]!),
      latencyMs: ts.at(-1)! - start,
      inputTokens: rec.promptTokens,
      cachedTokens: rec.hitTokens,
      outputTokens: rec.outputTokens,
      label: `request ${r}`,
    };
  });
  return { requests, steps: outcome.totals.steps };
}

const H200_QWEN: StepModel = { stepFixedMs: 16.1, prefillUsPerToken: 133, kvReadNsPerToken: 64, decodeUsPerSeq: 20 };

function assertWithin(found: StepModel, truth: StepModel, share: number): void {
  for (const key of Object.keys(truth) as Array<keyof StepModel>) {
    const error = Math.abs(found[key] - truth[key]) / truth[key];
    assert.ok(error <= share, `${key}: found ${found[key]}, ran with ${truth[key]} (${(error * 100).toFixed(3)}% off)`);
  }
}

describe('calibrate: the step model from what a client measured (src/core/sim/calibrate)', () => {
  it('recovers the four constants a server ran with, within 1%, prompts chunked by an 8,192-token budget', async () => {
    const { requests, steps } = await measuredRun(H200_QWEN, 6, 8192);
    const fit = calibrate(requests, { maxBatchedTokens: 8192, toleranceMs: 1e-6 });
    assertWithin(fit.model, H200_QWEN, 0.01);
    assert.deepEqual(fit.notIdentified, []);
    // Every interval between arrivals is explained: the reconstruction found the engine's steps.
    assert.equal(fit.rows + 0, fit.residuals.length);
    assert.ok(fit.rSquared > 0.9999, `R² ${fit.rSquared}`);
    const stepsSeen = fit.residuals.reduce((s, r) => s + r.steps, 0);
    assert.equal(stepsSeen, steps, 'as many steps as the engine ran');
  });

  it('recovers other constants too (no preset is built in), with the default one-step prefill when the budget is large', async () => {
    const truth: StepModel = { stepFixedMs: 5.6, prefillUsPerToken: 32.5, kvReadNsPerToken: 46, decodeUsPerSeq: 7 };
    const { requests } = await measuredRun(truth, 4, 1_000_000);
    const fit = calibrate(requests);
    assertWithin(fit.model, truth, 0.01);
  });

  it('with the wrong budget the intervals do not add up, and it says so', async () => {
    const { requests } = await measuredRun(H200_QWEN, 6, 8192);
    const notes: string[] = [];
    reconstructSteps(requests, { maxBatchedTokens: 2048, toleranceMs: 1e-6 }, notes);
    assert.ok(
      notes.some((n) => /budget of 2048/.test(n)),
      notes.join('\n'),
    );
    const fit = calibrate(requests, { maxBatchedTokens: 2048, toleranceMs: 1e-6 });
    assert.ok(fit.rSquared < 0.9999, `a wrong budget cannot fit as well: R² ${fit.rSquared}`);
  });

  it('one request alone, by hand: 3 tokens, each gap one decode step', () => {
    // A 1,000-token prompt sent at 0; first token at 30 ms, then gaps of 10 and 10.002 ms.
    // Rows: [0, 30] one step prefilling 1,000 tokens; [30, 40] a decode over 1,000 tokens;
    // [40, 50.002] a decode over 1,001. With fixed F and per-KV-token K:
    //   30 = F + 1000·P, 10 = F + 1000·K, 10.002 = F + 1001·K → K = 0.002 ms = 2,000 ns, F = 8 ms,
    //   P = 22 µs. The per-sequence cost cannot be told from F (one sequence per step).
    const fit = calibrate([
      {
        startMs: 100,
        ttftMs: 30,
        itlsMs: [10, 10.002],
        latencyMs: null,
        inputTokens: 1000,
        cachedTokens: 0,
        outputTokens: 3,
        label: 'line 1',
      },
    ]);
    assert.equal(fit.rows, 3);
    assert.ok(Math.abs(fit.model.stepFixedMs - 8) < 1e-6, String(fit.model.stepFixedMs));
    assert.ok(Math.abs(fit.model.prefillUsPerToken - 22) < 1e-6, String(fit.model.prefillUsPerToken));
    assert.ok(Math.abs(fit.model.kvReadNsPerToken - 2000) < 1e-3, String(fit.model.kvReadNsPerToken));
    assert.deepEqual(
      fit.notIdentified.map((n) => n.key),
      ['decodeUsPerSeq'],
    );
    assert.match(fit.notIdentified[0]!.reason, /at most one request/);
  });
});

describe('calibrate on a real AIPerf run (test/fixtures/aiperf/qwen_concurrency1)', () => {
  it('one request at a time: the fixed cost is the mean gap between tokens, the prefill cost what the first token adds', () => {
    const text = readFileSync(join(repoRoot, 'test/fixtures/aiperf/qwen_concurrency1.profile_export.jsonl'), 'utf8');
    const results = readMeasuredRequests(text)!;
    assert.equal(results.format, 'aiperf');
    assert.equal(results.requests.length, 10);
    // The expected figures by plain arithmetic over the file: every request ran alone (each was sent after
    // the one before ended), so each gap is one decode step and each TTFT one 100-token prefill step.
    const records = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).metrics);
    const gaps = records.flatMap((m) => m.inter_chunk_latency.value as number[]);
    const ttfts = records.map((m) => m.time_to_first_token.value as number);
    const meanGap = gaps.reduce((s, g) => s + g, 0) / gaps.length;
    const meanTtft = ttfts.reduce((s, t) => s + t, 0) / ttfts.length;
    const fit = calibrate(results.requests);
    assert.equal(fit.rows, 10 * 200);
    // The gaps shrink a little as the context grows (a slope below 0): no per-context-token cost can be fitted.
    assert.deepEqual(fit.notIdentified.map((n) => n.key).sort(), ['decodeUsPerSeq', 'kvReadNsPerToken']);
    assert.ok(Math.abs(fit.model.stepFixedMs - meanGap) < 1e-9, `${fit.model.stepFixedMs} vs ${meanGap}`);
    const prefillUs = ((meanTtft - meanGap) / 100) * 1000;
    assert.ok(
      Math.abs(fit.model.prefillUsPerToken - prefillUs) < 1e-6,
      `${fit.model.prefillUsPerToken} vs ${prefillUs}`,
    );
    assert.ok(fit.notes.some((n) => /do not say how much of each prompt/.test(n)));
  });
});
