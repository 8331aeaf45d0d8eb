import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseWorkloadJson,
  WorkloadError,
  workloadFromBlockTrace,
  workloadFromSession,
} from '../../../../src/core/sim/workload';
import { fixtures, parseFile, SPOTTER } from '../../../support/helpers';
import { SessionBuilder } from '../../../support/sessionBuilder';
import { join } from 'node:path';

const t = (s: number) => s * 1000;

describe('workload from a traced session', () => {
  it('prefix = previous prompt + output while the context grows; the provider cache after a shrink or compaction', () => {
    const s = new SessionBuilder()
      .call({ input: 1000, cached: 600, output: 50 }, [], { startMs: t(0), endMs: t(2) }) // c0
      .call({ input: 1200, cached: 1050, output: 30 }, [], { startMs: t(5), endMs: t(6) }) // c1: grows: prefix 1000 + 50
      .call({ input: 1100, cached: 700, output: 20 }, [], { startMs: t(6), endMs: t(7) }) // c2: shrank below 1200: prefix = cached 700
      .compaction()
      .call({ input: 2000, cached: 600, output: 10 }, [], { startMs: t(17), endMs: t(18) }) // c3: after compaction: cached 600
      .build();
    const { workload, notes } = workloadFromSession(s);
    assert.deepEqual(notes, []);
    assert.equal(workload.sharedPrefixTokens, 600); // what the first call found cached
    assert.deepEqual(workload.sessions[0]!.calls, [
      { promptTokens: 1000, prefixTokens: 0, outputTokens: 50, toolWaitS: 3 },
      { promptTokens: 1200, prefixTokens: 1050, outputTokens: 30, toolWaitS: 0 },
      { promptTokens: 1100, prefixTokens: 700, outputTokens: 20, toolWaitS: 10 },
      { promptTokens: 2000, prefixTokens: 600, outputTokens: 10, toolWaitS: 0 },
    ]);
  });

  it('unknown waits take the median known wait; calls without tokens are left out, with notes', () => {
    const s = new SessionBuilder()
      .call({ input: 100, output: 1 }, [], { startMs: t(0), endMs: t(1) })
      .call({ input: 200, output: 1 }, [], { startMs: t(5), endMs: t(6) }) // wait 4
      .call({ input: 300, output: 1 }, [], { startMs: null, endMs: null }) // wait unknown
      .call({ input: null, output: 1 })
      .build();
    const { workload, notes } = workloadFromSession(s);
    assert.deepEqual(
      workload.sessions[0]!.calls.map((c) => c.toolWaitS),
      [4, 4, 0],
    );
    assert.deepEqual(notes, [
      '1 of 4 calls have no input or output token count and are left out.',
      "1 tool waits are unknown (no timestamps) and use the session's median wait, 4.0 s.",
    ]);
  });

  it('the spotter session: shared prefix 17,842 (first call cached), call 1 extends call 0, call 138 restarts after /compact', async () => {
    const main = (await parseFile(SPOTTER)).model.sessions[0]!;
    const { workload } = workloadFromSession(main);
    const calls = workload.sessions[0]!.calls;
    assert.equal(workload.sharedPrefixTokens, 17842);
    assert.equal(calls.length, 149);
    // By hand from lines 8–28: call 0 input 26,010 + output 209; call 1 input 1 + 1,531 + 26,007 = 27,539.
    assert.deepEqual(calls[1], {
      promptTokens: 27539,
      prefixTokens: 26219,
      outputTokens: 8,
      toolWaitS: calls[1]!.toolWaitS,
    });
    // After the compaction (line 1481) the first call found 21,448 tokens cached: the prefix it kept.
    assert.equal(calls[138]!.prefixTokens, 21448);
  });

  it('a Bailian trace becomes an open-loop request list with its 16-token block hashes', async () => {
    const parsed = await parseFile(join(fixtures, 'bailian/qwen_traceA_lite.rows01-14.jsonl'));
    const { workload } = workloadFromBlockTrace(parsed.model);
    assert.ok(workload);
    assert.equal(workload.blockSizeTokens, 16);
    assert.equal(workload.requests.length, 14);
    // Row 1 of the file: timestamp 322.612 s, input 70 tokens, hash_ids [1089, 1090, 1091, 67598, 67599].
    const first = workload.requests.find((r) => r.hashes[0] === 1089 && r.promptTokens === 70);
    assert.ok(first);
    assert.deepEqual([first.arrivalS, first.hashes], [322.612, [1089, 1090, 1091, 67598, 67599]]);
  });
});

describe('workload JSON', () => {
  const call = (over: object = {}) => ({
    promptTokens: 1000,
    prefixTokens: 0,
    outputTokens: 100,
    toolWaitS: 1,
    ...over,
  });

  it('reads the documented shape', () => {
    const w = parseWorkloadJson({
      sharedPrefixTokens: 500,
      sessions: [{ id: 'a', startS: 2, calls: [call(), call({ promptTokens: 1500, prefixTokens: 1100 })] }],
    });
    assert.equal(w.kind, 'sessions');
    assert.deepEqual(w.kind === 'sessions' && w.sessions[0]!.calls[1], {
      promptTokens: 1500,
      prefixTokens: 1100,
      outputTokens: 100,
      toolWaitS: 1,
    });
  });

  it('names the bad parameter', () => {
    const bad: Array<[object, RegExp]> = [
      [{ sessions: [] }, /^sessions must be a non-empty array/],
      [
        { sessions: [{ calls: [call({ toolWaitS: -2 })] }] },
        /^sessions\[0\]\.calls\[0\]\.toolWaitS must be a number ≥ 0, got -2$/,
      ],
      [{ sessions: [{ calls: [call({ prefixTokens: 5 })] }] }, /^sessions\[0\]\.calls\[0\]\.prefixTokens must be ≤ 0/],
      [
        { sessions: [{ calls: [call(), call({ prefixTokens: 1101 })] }] },
        /^sessions\[0\]\.calls\[1\]\.prefixTokens must be ≤ 1000 /,
      ],
      [
        { sessions: [{ calls: [call({ promptTokens: 'many' })] }] },
        /promptTokens must be a whole number > 0, got "many"/,
      ],
      [{ sharedPrefixTokens: -1, sessions: [{ calls: [call()] }] }, /^sharedPrefixTokens must be a whole number ≥ 0/],
      [{ blockSizeTokens: 0, requests: [] }, /^blockSizeTokens must be a whole number > 0/],
      [
        { blockSizeTokens: 16, requests: [{ arrivalS: 0, promptTokens: 10, outputTokens: 1, hashes: [1.5] }] },
        /^requests\[0\]\.hashes must be an array of integers/,
      ],
    ];
    for (const [doc, message] of bad)
      assert.throws(
        () => parseWorkloadJson(doc),
        (e: unknown) => e instanceof WorkloadError && message.test(e.message),
      );
  });
});
