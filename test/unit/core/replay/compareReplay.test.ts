import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { compareReplay, predictReplay } from '../../../../src/core/replay/compareReplay';
import { buildReplayExport } from '../../../../src/core/replay/replayExport';
import { runFast } from '../../../../src/core/sim/engines/fastEngine';
import { DEFAULT_PARAMS } from '../../../../src/core/sim/params';
import { runScenario } from '../../../../src/core/sim/scenario';
import { workloadFromSession } from '../../../../src/core/sim/workload';
import type { ParsedTrace } from '../../../../src/core/trace/parseTrace';
import { fixtures, parseFile, parseText, repoRoot } from '../../../support/helpers';

// No replay of an export has been run on a GPU for this project yet, so the join is tested
// on real benchmark records relabelled to an export's sessions: the 10 real AIPerf records
// of test/fixtures/aiperf (their conversation_id and turn_index set to the export's first
// session and turns 0–9), and the real-shaped vllm bench result of test/fixtures/vllm-bench
// joined by order. Measured figures must come through unchanged; predicted ones must be the
// simulator's for the same scenario (checked against runScenario, a separate entry point).

const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');
// The sample's M-Claude session: 41 calls, no sub-agents, so the export and one simulated session are the same scenario.
const MAIN = 'e5821007-9ca0-4a36-afc0-94da583da0ea';
const RAW = readFileSync(join(fixtures, 'aiperf/qwen_concurrency1.profile_export.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));

describe('replay results joined to the export and the prediction', () => {
  let sample: ParsedTrace;
  before(async () => {
    sample = await parseFile(SAMPLE);
  });

  it("AIPerf: joins by conversation and turn; measured TTFT per call is the record's, predicted hits are the simulator's", async () => {
    const e = buildReplayExport(sample.model, 'aiperf', { replicas: 2, staggerS: 10, sessions: [MAIN] });
    const ids = e.records.map((r) => r['session_id'] as string);
    // Replica 2's first AIPerf session: its turns 0–9 get the real records.
    const target = ids.find((id) => id.endsWith('#r2'))!;
    const results = await parseText(
      RAW.map((r, i) =>
        JSON.stringify({ ...r, metadata: { ...r.metadata, conversation_id: target, turn_index: i } }),
      ).join('\n'),
      'profile_export.jsonl',
    );
    assert.equal(results.model.format, 'aiperf');
    const prediction = predictReplay(sample.model, e, DEFAULT_PARAMS, runFast, 2, 10);
    const c = compareReplay(sample.model, e, ids, results.model, prediction);
    assert.equal(c.join, 'conversation-turn');
    assert.equal(c.matched, 10);
    assert.equal(c.unmatchedResults, 0);
    const joined = c.calls.filter((x) => x.measured !== null);
    assert.deepEqual(
      joined.map((x) => [x.replica, x.callIndex]),
      Array.from({ length: 10 }, (_, k) => [1, k]),
    );
    joined.forEach((x, i) => assert.equal(x.measured!.ttftMs, RAW[i].metrics.time_to_first_token.value));
    const ttfts = RAW.map((r) => r.metrics.time_to_first_token.value as number);
    assert.ok(Math.abs(c.measured.ttftMs.mean! - ttfts.reduce((a, b) => a + b, 0) / 10) < 1e-9);
    assert.equal(c.measured.cachedRate, null, 'the run recorded no cached tokens');
    // The same scenario through the simulator's public entry point: the second copy's calls.
    const { workload } = workloadFromSession(sample.model.sessions.find((s) => s.id === MAIN)!);
    const run = runScenario(runFast, workload, {
      params: DEFAULT_PARAMS,
      replicas: { replicas: 2, staggerS: 10, staggerMode: 'fixed', seed: 1, toolWaitScale: 1 },
    });
    assert.ok(Math.abs(c.predicted!.hitRate! - run.admissionHitRate!) < 1e-12);
    const firstCopy = c.calls.filter((x) => x.replica === 0);
    assert.deepEqual(
      firstCopy.map((x) => x.predicted!.hitTokens),
      run.calls.map((r) => r.hitTokens),
    );
  });

  it('vllm bench: joins by order, and says so when the counts differ', async () => {
    const e = buildReplayExport(sample.model, 'mooncake', { replicas: 1, staggerS: 0, sessions: [MAIN] });
    const results = await parseFile(
      join(fixtures, 'vllm-bench/openai-infqps-concurrency2-Qwen3-8B-20260315-101500.json'),
    );
    assert.equal(results.model.format, 'vllm-bench');
    const raw = JSON.parse(
      readFileSync(join(fixtures, 'vllm-bench/openai-infqps-concurrency2-Qwen3-8B-20260315-101500.json'), 'utf8'),
    );
    const c = compareReplay(
      sample.model,
      e,
      e.records.map(() => null),
      results.model,
      null,
    );
    assert.equal(c.join, 'order');
    assert.equal(c.matched, raw.ttfts.length);
    c.calls
      .slice(0, raw.ttfts.length)
      .forEach((x, i) => assert.equal(x.measured!.ttftMs, raw.errors[i] ? null : raw.ttfts[i] * 1000));
    assert.equal(c.measured.failed, 1, 'the request that failed on the server');
    assert.ok(c.notes.some((n) => /joined by order, the first 4 only/.test(n)));
    assert.equal(c.predicted, null);
  });
});
