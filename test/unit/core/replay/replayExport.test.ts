import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { buildReplayExport, replayJsonLines } from '../../../../src/core/replay/replayExport';
import type { ReplayExport, ReplayRequest } from '../../../../src/core/replay/replayExport';
import type { LlmCall, Session } from '../../../../src/core/trace/model';
import { parseTrace } from '../../../../src/core/trace/parseTrace';
import type { ParsedTrace } from '../../../../src/core/trace/parseTrace';
import { parseFile, repoRoot, SPOTTER } from '../../../support/helpers';

// The independent check of block-id assignment: every session is rebuilt here as explicit
// token arrays (each call keeps what the trace says it kept of the previous prompt +
// output and appends fresh tokens; a session's first call starts with the tokens its first
// call found cached, shared by its replicas), prompts are cut into blocks and hashed as a
// chain with SHA-1 (what a prefix cache does), and the hits an ideal cache would give are
// counted from those hashes. The export's ids, read back by our own Mooncake and Bailian
// readers, must give the same cached tokens, request by request.

const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');

/** What the trace says a call kept of the previous call's prompt + output (docs/guide/simulate.md's "Inputs" rule, restated). */
function keptTokens(previous: LlmCall, call: LlmCall, compactedBetween: boolean): number {
  const before = previous.tokens.input! + previous.tokens.output!;
  const prompt = call.tokens.input!;
  if (compactedBetween || prompt < previous.tokens.input!) return Math.min(call.tokens.cached ?? 0, prompt, before);
  return Math.min(before, prompt);
}

/** Token arrays of every call of a session in one replica. */
function tokenModel(session: Session, fresh: () => number, shared: Int32Array): Int32Array[] {
  const calls = session.calls.filter((c) => c.tokens.input !== null && c.tokens.output !== null);
  const prompts: Int32Array[] = [];
  let context = new Int32Array(0);
  calls.forEach((call, k) => {
    const prompt = new Int32Array(call.tokens.input!);
    const kept = k === 0 ? Math.min(shared.length, prompt.length) : keptFrom(calls[k - 1]!, call);
    prompt.set((k === 0 ? shared : context).subarray(0, kept));
    for (let t = kept; t < prompt.length; t++) prompt[t] = fresh();
    prompts.push(prompt);
    context = new Int32Array(prompt.length + Math.max(1, call.tokens.output!));
    context.set(prompt);
    for (let t = prompt.length; t < context.length; t++) context[t] = fresh();
  });
  return prompts;

  function keptFrom(previous: LlmCall, call: LlmCall): number {
    const compacted = session.compactions.some((c) => c.beforeCall > previous.index && c.beforeCall <= call.index);
    return keptTokens(previous, call, compacted);
  }
}

/** Chain hashes of a prompt's blocks: each over the previous hash and the block's tokens (a partial block hashes its length too). */
function blockHashes(prompt: Int32Array, block: number): string[] {
  const out: string[] = [];
  let previous = '';
  for (let at = 0; at < prompt.length; at += block) {
    previous = createHash('sha1')
      .update(previous)
      .update(prompt.subarray(at, at + block))
      .digest('base64');
    out.push(previous);
  }
  return out;
}

/** The prompts of an export's requests from the token model, keyed by (session, replica, call). */
function modelPrompts(parsed: ParsedTrace, replicas: number): Map<string, Int32Array> {
  const prompts = new Map<string, Int32Array>();
  let counter = 1;
  const fresh = (): number => counter++;
  for (const session of parsed.model.sessions) {
    const calls = session.calls.filter((c) => c.tokens.input !== null && c.tokens.output !== null);
    if (calls.length === 0) continue;
    const sharedCount = Math.min(calls[0]!.tokens.cached ?? 0, calls[0]!.tokens.input!);
    const shared = Int32Array.from({ length: sharedCount }, fresh);
    for (let r = 0; r < replicas; r++) {
      tokenModel(session, fresh, shared).forEach((p, k) => prompts.set(`${session.id}|${r}|${calls[k]!.index}`, p));
    }
  }
  return prompts;
}

const keyOf = (q: ReplayRequest): string => `${q.traceSessionId}|${q.replica}|${q.callIndex}`;

async function readBack(e: ReplayExport): Promise<ParsedTrace> {
  return parseTrace([{ key: `x.${e.target}.jsonl`, bytes: new TextEncoder().encode(replayJsonLines(e)) }]);
}

describe('replay export: block ids against an independent token-level model', () => {
  let sample: ParsedTrace;
  let spotter: ParsedTrace;
  before(async () => {
    sample = await parseFile(SAMPLE);
    spotter = await parseFile(SPOTTER);
  });

  for (const [name, replicas, staggerS] of [
    ['one copy', 1, 0],
    ['three copies 10 s apart', 3, 10],
  ] as const) {
    it(`mooncake, ${name}: the Mooncake reader's cached tokens equal the chain-hash model's, request by request`, async () => {
      for (const parsed of replicas === 1 ? [sample, spotter] : [sample]) {
        const e = buildReplayExport(parsed.model, 'mooncake', { replicas, staggerS, sessions: null });
        const prompts = modelPrompts(parsed, replicas);
        // Expected: walk the requests in file order; a block hits if an earlier request had the same chain hash.
        const seen = new Set<string>();
        const expected = e.requests.map((q) => {
          const hashes = blockHashes(prompts.get(keyOf(q))!, 512);
          assert.equal(q.promptTokens, prompts.get(keyOf(q))!.length);
          let hit = 0;
          while (hit < hashes.length && seen.has(hashes[hit]!)) hit++;
          for (const h of hashes) seen.add(h);
          return Math.min(hit * 512, q.promptTokens);
        });
        const back = await readBack(e);
        assert.equal(back.model.format, 'mooncake');
        assert.deepEqual(back.model.diagnostics, []);
        assert.deepEqual(
          back.model.sessions[0]!.calls.map((c) => c.tokens.cached),
          expected,
        );
        // Not all hits: the check would pass on an export that shares nothing only if the model shared nothing too.
        assert.ok(expected.filter((x) => x > 0).length > e.requests.length / 2);
      }
    });
  }

  it('bailian, two copies: the Bailian reader (each request against its parent) agrees with the model, 16-token blocks', async () => {
    for (const parsed of [sample]) {
      const e = buildReplayExport(parsed.model, 'bailian', { replicas: 2, staggerS: 30, sessions: null });
      const prompts = modelPrompts(parsed, 2);
      const previousOf = new Map<string, string[]>();
      const expected = e.requests.map((q) => {
        const hashes = blockHashes(prompts.get(keyOf(q))!, 16);
        const parent = previousOf.get(`${q.traceSessionId}|${q.replica}`);
        previousOf.set(`${q.traceSessionId}|${q.replica}`, hashes);
        if (!parent) return 0;
        let lcp = 0;
        while (lcp < hashes.length && lcp < parent.length && hashes[lcp] === parent[lcp]) lcp++;
        return Math.min(lcp * 16, q.promptTokens);
      });
      const back = await readBack(e);
      assert.equal(back.model.format, 'bailian');
      const byChat = new Map(back.model.sessions.flatMap((s) => s.calls).map((c) => [Number(c.id), c.tokens.cached]));
      assert.deepEqual(
        e.records.map((r) => byChat.get(r['chat_id'] as number)),
        expected,
      );
    }
  });

  it("the ideal hit rate of one copy equals the source session's at the block size (prompt blocks only)", async () => {
    // The spotter main session alone, by hand from its calls: block-rounded kept prefix over the prompt.
    const main = spotter.model.sessions[0]!;
    const e = buildReplayExport(spotter.model, 'mooncake', { replicas: 1, staggerS: 0, sessions: [main.id] });
    // Its sub-agents come along; count the main session's rows.
    const calls = main.calls.filter((c) => c.tokens.input !== null && c.tokens.output !== null);
    let hit = 0;
    let input = 0;
    calls.forEach((call, k) => {
      input += call.tokens.input!;
      if (k === 0) return;
      const previous = calls[k - 1]!;
      const compacted = main.compactions.some((c) => c.beforeCall > previous.index && c.beforeCall <= call.index);
      // A block is shared when it lies inside what both the previous prompt and this one hold.
      const shared = Math.min(keptTokens(previous, call, compacted), previous.tokens.input!);
      hit += Math.floor(shared / 512) * 512;
    });
    const back = await readBack(e);
    const byRow = back.model.sessions[0]!.calls;
    let readHit = 0;
    let readInput = 0;
    e.requests.forEach((q, i) => {
      if (q.traceSessionId !== main.id) return;
      readHit += byRow[i]!.tokens.cached!;
      readInput += byRow[i]!.tokens.input!;
    });
    assert.equal(readInput, input);
    assert.equal(readHit, hit);
  });

  it('never reuses a partial last block id as a full block, and gives every prompt ceil(length / 512) ids', () => {
    const e = buildReplayExport(spotter.model, 'mooncake', { replicas: 2, staggerS: 5, sessions: null });
    const partial = new Set<number>();
    const full = new Set<number>();
    for (const q of e.requests) {
      assert.equal(q.hashIds.length, Math.ceil(q.promptTokens / 512));
      q.hashIds.forEach((id, j) => ((j + 1) * 512 <= q.promptTokens ? full : partial).add(id));
    }
    for (const id of partial)
      assert.ok(!full.has(id), `id ${id} is a partial block in one prompt and a full one in another`);
  });

  it('aiperf: sessions grouped, first turn with timestamp and the whole prompt, later turns with delay and only the new tokens', () => {
    const e = buildReplayExport(sample.model, 'aiperf', { replicas: 2, staggerS: 10, sessions: null });
    // Rebuild each AIPerf session's contexts the way AIPerf replays them: history + the reply (output_length tokens) + the new turn.
    const contexts = new Map<string, number>();
    const order: string[] = [];
    e.records.forEach((r, i) => {
      const q = e.requests[e.recordRequest[i]!]!;
      const id = r['session_id'] as string;
      assert.equal(typeof id, 'string');
      assert.equal(
        (r['hash_ids'] as number[]).length,
        Math.ceil((r['input_length'] as number) / 512),
        'len(hash_ids) == ceil(input_length / 512)',
      );
      if ('timestamp' in r) {
        assert.ok(!contexts.has(id), `${id} starts once`);
        assert.ok(!('delay' in r));
        assert.equal(r['input_length'], q.promptTokens);
        assert.equal(r['timestamp'], Math.round(q.arrivalMs * 1000) / 1000);
        contexts.set(id, q.promptTokens + q.outputTokens);
        order.push(id);
      } else {
        assert.equal(order[order.length - 1], id, "a session's turns are consecutive");
        assert.equal(
          (r['input_length'] as number) + contexts.get(id)!,
          q.promptTokens,
          'history + reply + new turn = the traced prompt',
        );
        assert.equal(r['delay'], Math.round(q.waitMs * 1000) / 1000);
        contexts.set(id, q.promptTokens + q.outputTokens);
      }
      assert.equal(r['output_length'], q.outputTokens);
      assert.deepEqual(
        Object.keys(r).sort(),
        ['session_id', 'input_length', 'output_length', 'hash_ids', 'timestamp' in r ? 'timestamp' : 'delay'].sort(),
      );
    });
    // Replicas share the first turn's shared prefix ids and nothing else.
    const firsts = e.records.filter((r) => 'timestamp' in r && /^ae4a77f8[^~]*$/.test(r['session_id'] as string));
    assert.ok(firsts.length >= 2);
    const [a, b] = firsts.map((r) => r['hash_ids'] as number[]);
    const sharedBlocks = Math.floor(105638 / 512); // the main session's first call found 105,638 tokens cached
    assert.deepEqual(a!.slice(0, sharedBlocks), b!.slice(0, sharedBlocks));
    assert.notEqual(a![sharedBlocks], b![sharedBlocks]);
    // Every session is ordered by replica and start; the recorded waits are the tool waits.
    assert.deepEqual(new Set(order).size, order.length);
  });
});
