import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DEFAULT_PARAMS } from '../../../../src/core/sim/params';
import { runRadix } from '../../../../src/core/sim/engines/radixEngine';
import { planWorkload, visitKeys } from '../../../../src/core/sim/simRequests';
import type { KeyRun } from '../../../../src/core/sim/simRequests';
import type { AgentWorkload } from '../../../../src/core/sim/workload';

// The planner gives every block (and every token) a key instead of content; the engines
// treat equal keys as equal blocks. That is only right if, for every block that can ever
// be hashed (a full block of prompt + output), equal keys ⇔ equal content and equal
// everything before it (vLLM's hash chain). Here the content is built for real, token by
// token, straight from the workload's definition (a call re-sends the first prefixTokens
// tokens of the previous call's prompt + output, then new tokens; a session's first call
// starts with the shared prefix), and compared with the keys.

const RUNS = Number(process.env['PROPERTY_RUNS'] ?? 300);
const BS = 16;

const workloadArb: fc.Arbitrary<{ w: AgentWorkload; replicas: number }> = fc
  .record({
    shared: fc.integer({ min: 0, max: 70 }),
    replicas: fc.integer({ min: 1, max: 3 }),
    sessions: fc.array(
      fc.array(
        fc.record({
          first: fc.integer({ min: 1, max: 120 }),
          // Mostly the whole previous context (an agent appending), sometimes less (a compaction, a shrink).
          keep: fc.oneof(fc.constant(1), fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
          grow: fc.integer({ min: 0, max: 40 }),
          output: fc.integer({ min: 1, max: 40 }),
        }),
        { minLength: 1, maxLength: 6 },
      ),
      { minLength: 1, maxLength: 3 },
    ),
  })
  .map(({ shared, replicas, sessions }) => ({
    replicas,
    w: {
      kind: 'sessions' as const,
      sharedPrefixTokens: shared,
      sessions: sessions.map((calls, i) => {
        let previous = 0;
        return {
          id: `s${i}`,
          startS: 0,
          calls: calls.map((c, k) => {
            const prefix = k === 0 ? 0 : Math.round(previous * c.keep);
            const prompt = k === 0 ? c.first : Math.max(1, prefix + c.grow);
            previous = prompt + c.output;
            return { promptTokens: prompt, prefixTokens: prefix, outputTokens: c.output, toolWaitS: 0 };
          }),
        };
      }),
    },
  }));

/** Every request's tokens (prompt + output), built from the workload's definition; new tokens are unique numbers. */
function contents(w: AgentWorkload, replicas: number): number[][] {
  let fresh = 1_000_000;
  const out: number[][] = [];
  for (let r = 0; r < replicas; r++) {
    for (const s of w.sessions) {
      let context: number[] = [];
      s.calls.forEach((c, k) => {
        const kept =
          k === 0
            ? Array.from({ length: Math.min(w.sharedPrefixTokens, c.promptTokens) }, (_, t) => t)
            : context.slice(0, c.prefixTokens);
        const prompt = [...kept];
        while (prompt.length < c.promptTokens) prompt.push(fresh++);
        context = [...prompt];
        for (let t = 0; t < c.outputTokens; t++) context.push(fresh++);
        out.push(context);
      });
    }
  }
  return out;
}

/** Checks equal keys ⇔ equal chains over `units` positions of every request, unit = `size` tokens. */
function checkBijection(tokens: number[][], keysOf: (r: number) => KeyRun[], size: number, what: string): void {
  const chainToKey = new Map<string, number>();
  const keyToChain = new Map<number, string>();
  tokens.forEach((toks, r) => {
    const units = Math.floor(toks.length / size);
    const keys: number[] = [];
    visitKeys(keysOf(r), 0, units, (key) => (keys.push(key), true));
    assert.equal(keys.length, units, `${what}: request ${r} has keys for ${keys.length} of its ${units} full units`);
    let chain = '';
    for (let j = 0; j < units; j++) {
      chain += `${toks.slice(j * size, (j + 1) * size).join(',')}|`;
      const key = keys[j]!;
      const seenKey = chainToKey.get(chain);
      assert.ok(
        seenKey === undefined || seenKey === key,
        `${what}: request ${r} unit ${j}: equal content under two keys`,
      );
      const seenChain = keyToChain.get(key);
      assert.ok(
        seenChain === undefined || seenChain === chain,
        `${what}: request ${r} unit ${j}: key ${key} names two contents`,
      );
      chainToKey.set(chain, key);
      keyToChain.set(key, chain);
    }
  });
}

describe('planned keys stand for content (property tests)', () => {
  it(`block keys and token keys: equal ⇔ same content and prefix, on ${RUNS} random workloads`, () => {
    fc.assert(
      fc.property(workloadArb, ({ w, replicas }) => {
        const plan = planWorkload(w, BS, { replicas, staggerS: 0, staggerMode: 'fixed', seed: 1, toolWaitScale: 1 });
        const tokens = contents(w, replicas);
        assert.equal(plan.requests.length, tokens.length);
        checkBijection(tokens, (r) => plan.requests[r]!.keys, BS, 'blocks');
        checkBijection(tokens, (r) => plan.requests[r]!.tokenKeys, 1, 'tokens');
        // The block-level engines' plan leaves the token keys out and nothing else.
        const blocksOnly = planWorkload(
          w,
          BS,
          { replicas, staggerS: 0, staggerMode: 'fixed', seed: 1, toolWaitScale: 1 },
          false,
        );
        assert.equal(blocksOnly.tokenKeys, false);
        assert.deepEqual(
          blocksOnly.requests,
          plan.requests.map((q) => ({ ...q, tokenKeys: [] })),
        );
      }),
      { numRuns: RUNS, seed: Number(process.env['PROPERTY_SEED'] ?? 20261130) },
    );
  });

  it('an agent that only appends keeps one key run per call, not one per earlier call', () => {
    // 300 calls, each re-sending the whole previous context: the old one-lineage-per-call plan
    // gave call k about k runs; continuing the lineage keeps it at two (shared prefix + session).
    const calls = Array.from({ length: 300 }, (_, k) => ({
      promptTokens: 1000 + 50 * k,
      prefixTokens: k === 0 ? 0 : 1000 + 50 * (k - 1) + 10,
      outputTokens: 10,
      toolWaitS: 1,
    }));
    const w: AgentWorkload = { kind: 'sessions', sharedPrefixTokens: 500, sessions: [{ id: 'a', startS: 0, calls }] };
    const plan = planWorkload(w, BS);
    assert.equal(Math.max(...plan.requests.map((r) => r.keys.length)), 2);
    assert.equal(Math.max(...plan.requests.map((r) => r.tokenKeys.length)), 2);
  });

  it('the token-level engine refuses a plan made without token keys instead of reading it as an empty cache', () => {
    const w: AgentWorkload = {
      kind: 'sessions',
      sharedPrefixTokens: 0,
      sessions: [
        { id: 'a', startS: 0, calls: [{ promptTokens: 100, prefixTokens: 0, outputTokens: 5, toolWaitS: 0 }] },
      ],
    };
    assert.throws(
      () => runRadix(planWorkload(w, BS, undefined, false), { ...DEFAULT_PARAMS, policy: 'sglang-lru' }),
      /needs a plan with token keys/,
    );
    assert.equal(runRadix(planWorkload(w, BS), { ...DEFAULT_PARAMS, policy: 'sglang-lru' }).records.length, 1);
  });
});
