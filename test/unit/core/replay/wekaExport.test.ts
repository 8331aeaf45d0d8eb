import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ReplayError } from '../../../../src/core/replay/replayExport';
import { buildWekaExport, wekaJson } from '../../../../src/core/replay/wekaExport';
import type { WekaExport, WekaRequestOut, WekaSubagentOut } from '../../../../src/core/replay/wekaExport';
import type { LlmCall, Session } from '../../../../src/core/trace/model';
import { parseTrace } from '../../../../src/core/trace/parseTrace';
import type { ParsedTrace } from '../../../../src/core/trace/parseTrace';
import { fixtures, parseFile, repoRoot, SPOTTER } from '../../../support/helpers';

// The independent check of the Weka export's block ids is the Mooncake export's
// (replayExport.test.ts), restated for Weka's rules: every traced session is rebuilt as
// explicit token arrays (each call keeps what the trace says it kept of the previous prompt
// + output and appends fresh tokens), prompts are cut into 64-token blocks, full blocks only
// (a Weka trace names floor(in / 64) blocks), hashed as a chain with SHA-1, and an ideal cache
// is walked over every request of the file in the order of their `t` (what the Weka reader
// does). The export's ids, read back by our Weka reader, must give the same cached tokens,
// call by call. The file's fields are checked against AIPerf's loader models, restated in
// test/reference/weka_schema.py.

const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');
const BLOCK = 64;

function keptTokens(previous: LlmCall, call: LlmCall, compactedBetween: boolean): number {
  const before = previous.tokens.input! + previous.tokens.output!;
  const prompt = call.tokens.input!;
  if (compactedBetween || prompt < previous.tokens.input!) return Math.min(call.tokens.cached ?? 0, prompt, before);
  return Math.min(before, prompt);
}

/** Token arrays of every call of a session with counts. */
function prompts(session: Session, fresh: () => number): Map<number, Int32Array> {
  const calls = session.calls.filter((c) => c.tokens.input !== null && c.tokens.output !== null);
  const out = new Map<number, Int32Array>();
  let context = new Int32Array(0);
  calls.forEach((call, k) => {
    const prompt = new Int32Array(call.tokens.input!);
    let kept = 0;
    if (k > 0) {
      const previous = calls[k - 1]!;
      const compacted = session.compactions.some((c) => c.beforeCall > previous.index && c.beforeCall <= call.index);
      kept = keptTokens(previous, call, compacted);
    }
    prompt.set(context.subarray(0, kept));
    for (let t = kept; t < prompt.length; t++) prompt[t] = fresh();
    out.set(call.index, prompt);
    context = new Int32Array(prompt.length + Math.max(1, call.tokens.output!));
    context.set(prompt);
    for (let t = prompt.length; t < context.length; t++) context[t] = fresh();
  });
  return out;
}

function fullBlockHashes(prompt: Int32Array): string[] {
  const out: string[] = [];
  let previous = '';
  for (let at = 0; at + BLOCK <= prompt.length; at += BLOCK) {
    previous = createHash('sha1')
      .update(previous)
      .update(prompt.subarray(at, at + BLOCK))
      .digest('base64');
    out.push(previous);
  }
  return out;
}

/** Every request of a document with its session id, in file order. */
function flatten(e: WekaExport['traces'][number]): Array<{ session: string; r: WekaRequestOut }> {
  const out: Array<{ session: string; r: WekaRequestOut }> = [];
  for (const r of e.requests) {
    if (r.type === 'subagent')
      for (const x of (r as WekaSubagentOut).requests) out.push({ session: (r as WekaSubagentOut).agent_id, r: x });
    else out.push({ session: e.id, r: r as WekaRequestOut });
  }
  return out;
}

async function readBack(text: string): Promise<ParsedTrace> {
  return parseTrace([{ key: 'x.weka.json', bytes: new TextEncoder().encode(text) }]);
}

function python(): boolean {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('Weka export', () => {
  let spotter: ParsedTrace;
  let sample: ParsedTrace;
  before(async () => {
    spotter = await parseFile(SPOTTER);
    sample = await parseFile(SAMPLE);
  });

  it('a Claude Code session with a Task sub-agent and a compaction: one document, the two as sub-agent markers at their start', () => {
    const e = buildWekaExport(spotter.model, null);
    assert.equal(e.traces.length, 1);
    const t = e.traces[0]!;
    assert.equal(t.id, 'ae4a77f8-aedd-4bc1-888f-c94edc91af04');
    assert.deepEqual([t.block_size, t.hash_id_scope, t.tool_tokens, t.system_tokens], [64, 'local', 0, 0]);
    const markers = t.requests.filter((r): r is WekaSubagentOut => r.type === 'subagent');
    // The Task sub-agent's log in the fixture holds 3 calls, the compaction 1.
    assert.deepEqual(
      markers.map((m) => [m.agent_id, m.subagent_type, m.requests.length]),
      [
        ['aac57f5', 'Task', 3],
        ['acompact-946d2b', 'compaction', 1],
      ],
    );
    // Every call with input and output counts is a request.
    const own = t.requests.filter((r) => r.type === 'n');
    assert.equal(own.length + markers.reduce((n, m) => n + m.requests.length, 0), e.requests.length);
    assert.equal(
      e.requests.length,
      spotter.model.sessions.reduce(
        (n, s) => n + s.calls.filter((c) => c.tokens.input !== null && c.tokens.output !== null).length,
        0,
      ),
    );
    // Markers sit between the parent's calls by time.
    const times = t.requests.map((r) => r.t);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
    // The totals add up what was written.
    const sum = (list: WekaRequestOut[]): number => list.reduce((n, r) => n + r.in, 0);
    assert.equal(t.totals.parent_tokens.input, sum(own as WekaRequestOut[]));
    assert.equal(t.totals.subagent_count, 2);
  });

  it('each request: prompt and output as planned, full 64-token blocks only, text or tool_result input, tool_use or end_turn stop', () => {
    const e = buildWekaExport(spotter.model, null);
    const requests = flatten(e.traces[0]!);
    for (const { r } of requests) assert.equal(r.hash_ids.length, Math.floor(r.in / BLOCK));
    const first = requests[0]!.r;
    const main = spotter.model.sessions[0]!;
    assert.deepEqual(
      [first.t, first.in, first.out, first.input_types, first.think_time],
      [0, main.calls[0]!.tokens.input, main.calls[0]!.tokens.output, ['text'], 0],
    );
    assert.equal(first.model, main.calls[0]!.model);
    assert.ok(requests.every(({ r }) => (r.stop === 'tool_use') === r.output_types.includes('tool_use')));
    assert.ok(requests.some(({ r }) => r.input_types[0] === 'tool_result'));
    // A call's recorded duration is its api_time.
    const c0 = main.calls[0]!;
    assert.equal(first.api_time, Math.round(c0.endMs! - c0.startMs!) / 1000);
  });

  it('the Weka reader reads the export back with the cached tokens of an independent chain-hash model, call by call', async () => {
    for (const parsed of [spotter, sample]) {
      const e = buildWekaExport(parsed.model, null);
      let counter = 1;
      const fresh = (): number => counter++;
      const bySession = new Map(parsed.model.sessions.map((s) => [s.id, prompts(s, fresh)]));
      for (const doc of e.traces) {
        const flat = flatten(doc);
        // The reader's order: t, then file order.
        const order = flat.map((x, i) => ({ ...x, i })).sort((a, b) => a.r.t - b.r.t || a.i - b.i);
        const perSession = new Map<string, number>();
        const seen = new Set<string>();
        const expected = new Map<string, number>();
        for (const x of order) {
          // The export keeps each session's calls in order, so the k-th request of a session is its k-th call with counts.
          const k = perSession.get(x.session) ?? 0;
          perSession.set(x.session, k + 1);
          const sessionPrompts = [...bySession.get(x.session)!.values()];
          const prompt = sessionPrompts[k]!;
          assert.equal(prompt.length, x.r.in);
          const hashes = fullBlockHashes(prompt);
          let hit = 0;
          while (hit < hashes.length && seen.has(hashes[hit]!)) hit++;
          for (const h of hashes) seen.add(h);
          expected.set(`${x.session}|${k}`, hit * BLOCK);
        }
        const back = await readBack(wekaJson(doc));
        assert.equal(back.model.format, 'weka');
        assert.deepEqual(back.model.diagnostics, []);
        // The reader lists the main session's calls, then each sub-agent's.
        const sessionsInOrder = [
          doc.id,
          ...doc.requests.filter((r): r is WekaSubagentOut => r.type === 'subagent').map((m) => m.agent_id),
        ];
        const want = sessionsInOrder.flatMap((id) =>
          Array.from({ length: perSession.get(id) ?? 0 }, (_, k) => expected.get(`${id}|${k}`)),
        );
        const got = back.model.sessions.flatMap((s) => s.calls.map((c) => c.tokens.cached));
        assert.deepEqual(got, want);
        assert.ok(
          got.some((c) => c! > 0),
          'some blocks are shared',
        );
      }
    }
  });

  it('sessions, sub-agent structure and token counts survive the round trip through the file', async () => {
    const e = buildWekaExport(spotter.model, null);
    const back = await readBack(wekaJson(e.traces[0]!));
    assert.deepEqual(
      back.model.sessions.map((s) => [s.id, s.parentId, s.role]),
      [
        ['ae4a77f8-aedd-4bc1-888f-c94edc91af04', null, 'main'],
        ['ae4a77f8-aedd-4bc1-888f-c94edc91af04/aac57f5', 'ae4a77f8-aedd-4bc1-888f-c94edc91af04', 'subagent'],
        ['ae4a77f8-aedd-4bc1-888f-c94edc91af04/acompact-946d2b', 'ae4a77f8-aedd-4bc1-888f-c94edc91af04', 'subagent'],
      ],
    );
    const inOut = (s: Session): Array<[number | null, number | null]> =>
      s.calls
        .filter((c) => c.tokens.input !== null && c.tokens.output !== null)
        .map((c) => [c.tokens.input, Math.max(1, c.tokens.output!)]);
    assert.deepEqual(
      back.model.sessions.map((s) => s.calls.map((c) => [c.tokens.input, c.tokens.output])),
      spotter.model.sessions.map(inOut),
    );
  });

  it("every field is one AIPerf's Weka loader accepts (its models restated in weka_schema.py)", {
    skip: !python() && 'python3 not installed',
  }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'weka-export-'));
    const files: string[] = [];
    for (const parsed of [spotter, sample]) {
      for (const doc of buildWekaExport(parsed.model, null).traces) {
        const f = join(dir, `${files.length}.json`);
        writeFileSync(f, wekaJson(doc));
        files.push(f);
      }
    }
    assert.equal(
      execFileSync('python3', [join(repoRoot, 'test/reference/weka_schema.py'), ...files], { encoding: 'utf8' }).trim(),
      'ok',
    );
  });

  it('refuses a trace that already is block hashes, and names the sessions it has when one is unknown', async () => {
    const weka = await parseFile(join(fixtures, 'weka/kv-cache-tester-trace_0026.json'));
    assert.throws(
      () => buildWekaExport(weka.model, null),
      (e: unknown) => e instanceof ReplayError && /already a block-hash trace/.test((e as Error).message),
    );
    assert.throws(() => buildWekaExport(sample.model, ['nope']), /no session "nope" in this trace/);
  });
});
