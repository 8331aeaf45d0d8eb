import fc from 'fast-check';
import type { AgentWorkload, BlockWorkload } from '../../src/core/sim/workload';

// Random small workloads for the simulator's property tests: short prompts, so that with
// tiny caches and small token budgets eviction, chunked prefill, preemption and
// rejection all happen.

const callArb = fc.record({
  promptTokens: fc.integer({ min: 1, max: 160 }),
  grow: fc.integer({ min: 0, max: 48 }),
  keep: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true })),
  outputTokens: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 40, max: 160 })),
  toolWaitS: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 0.5, noNaN: true })),
});

/**
 * Agent sessions whose later calls extend the previous context (an agent appending) or
 * keep only part of it; `sharing` false: no shared prefix and no call reuses the last.
 */
export function agentWorkloadArb(sharing = true): fc.Arbitrary<AgentWorkload> {
  return fc
    .record({
      shared: fc.integer({ min: 0, max: 64 }),
      sessions: fc.array(
        fc.record({
          startS: fc.double({ min: 0, max: 0.3, noNaN: true }),
          calls: fc.array(callArb, { minLength: 1, maxLength: 5 }),
        }),
        { minLength: 1, maxLength: 4 },
      ),
    })
    .map(({ shared, sessions }) => ({
      kind: 'sessions' as const,
      sharedPrefixTokens: sharing ? shared : 0,
      sessions: sessions.map((s, i) => {
        let previous = 0;
        return {
          id: `s${i}`,
          startS: s.startS,
          calls: s.calls.map((c, k) => {
            const prompt =
              k === 0 ? c.promptTokens : Math.max(1, Math.min(400, Math.round(previous * c.keep) + c.grow));
            const prefix = k === 0 || !sharing ? 0 : Math.min(previous, prompt, Math.round(previous * c.keep));
            previous = prompt + c.outputTokens;
            return { promptTokens: prompt, prefixTokens: prefix, outputTokens: c.outputTokens, toolWaitS: c.toolWaitS };
          }),
        };
      }),
    }));
}

/** Block-hash requests (16-token blocks); small hash alphabets make shared prefixes (equal leading hashes) common. */
export const blockWorkloadArb: fc.Arbitrary<BlockWorkload> = fc
  .array(
    fc.record({
      arrivalS: fc.double({ min: 0, max: 0.2, noNaN: true }),
      prefix: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 0, maxLength: 6 }),
      promptTokens: fc.integer({ min: 1, max: 120 }),
      outputTokens: fc.integer({ min: 1, max: 20 }),
    }),
    { minLength: 1, maxLength: 8 },
  )
  .map((rows) => ({
    kind: 'requests' as const,
    blockSizeTokens: 16,
    requests: rows.map((r, i) => {
      const blocks = Math.ceil(r.promptTokens / 16);
      const hashes = Array.from({ length: blocks }, (_, j) => r.prefix[j] ?? 100 + i * 10 + j);
      return {
        id: String(i),
        arrivalS: r.arrivalS,
        promptTokens: r.promptTokens,
        outputTokens: r.outputTokens,
        hashes,
      };
    }),
  }));
