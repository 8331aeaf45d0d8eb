import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { summarizeSession } from '../../../../../src/core/analysis/sessionSummary';
import { formatById } from '../../../../../src/core/trace/formats';
import type { Session } from '../../../../../src/core/trace/model';
import { fixtures, parseFile, parseText, repoRoot } from '../../../../support/helpers';
import { assertRoundTrip } from '../../../../support/roundTrip';

// Real traces from callanjfox/kv-cache-tester (traces/, Apache-2.0; see test/fixtures/README.md).
// Expected figures: test/reference/weka_trace.py replays every call of a trace in
// kv-cache-tester's own time order (flatten_requests: a sub-agent's requests at spawn t + t)
// against a set of whole hash-id prefixes (tuples), not of single ids as the reader does; its
// output is quoted below and, where python3 is installed, compared again live. Single calls
// were read off the files by hand.

const T26 = join(fixtures, 'weka/kv-cache-tester-trace_0026.json');
const T242 = join(fixtures, 'weka/kv-cache-tester-trace_0242.json');
const T291 = join(fixtures, 'weka/kv-cache-tester-trace_0291.json');

interface Reference {
  session: string;
  calls: number;
  turns: number;
  input: number;
  cached: number;
  output: number;
  firstStartMs: number | null;
  lastEndMs: number | null;
}

function python(): string | null {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return 'python3';
  } catch {
    return null;
  }
}
const PY = python();

function reference(path: string): Reference[] {
  const out = execFileSync(PY!, [join(repoRoot, 'test/reference/weka_trace.py'), path], { encoding: 'utf8' });
  return out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Reference);
}

function figures(s: Session): Reference {
  const t = summarizeSession(s).tokens;
  const starts = s.calls.map((c) => c.startMs).filter((x): x is number => x !== null);
  const ends = s.calls.map((c) => c.endMs).filter((x): x is number => x !== null);
  return {
    session: s.id,
    calls: s.calls.length,
    turns: s.turns.length,
    input: t.input!,
    cached: t.cached!,
    output: t.output!,
    firstStartMs: starts.length ? Math.min(...starts) : null,
    lastEndMs: ends.length ? Math.max(...ends) : null,
  };
}

// weka_trace.py's output on the three fixtures, as printed when this test was written.
const REFERENCE: Record<string, Reference[]> = {
  [T26]: [
    {
      session: 'trace_0026',
      calls: 3,
      turns: 2,
      input: 52760,
      cached: 32576,
      output: 5294,
      firstStartMs: 0,
      lastEndMs: 150340,
    },
  ],
  [T242]: [
    {
      session: 'trace_0242',
      calls: 3,
      turns: 3,
      input: 52760,
      cached: 32576,
      output: 5027,
      firstStartMs: 0,
      lastEndMs: 188800,
    },
  ],
  [T291]: [
    {
      session: 'trace_0291',
      calls: 20,
      turns: 4,
      input: 1576322,
      cached: 1474560,
      output: 12771,
      firstStartMs: 0,
      lastEndMs: 1366470,
    },
    {
      session: 'trace_0291/agent_001',
      calls: 5,
      turns: 1,
      input: 271860,
      cached: 202112,
      output: 3568,
      firstStartMs: 1148013,
      lastEndMs: 1192853,
    },
    {
      session: 'trace_0291/agent_002',
      calls: 7,
      turns: 1,
      input: 405937,
      cached: 345920,
      output: 3165,
      firstStartMs: 1180553,
      lastEndMs: 1256153,
    },
  ],
};

describe('Weka reader on real kv-cache-tester traces', async () => {
  const parsed26 = await parseFile(T26);
  const parsed242 = await parseFile(T242);
  const parsed291 = await parseFile(T291);

  it('detects each file as a Weka trace, certain from its own "hash_id_scope" marker, with no diagnostics', () => {
    for (const p of [parsed26, parsed242, parsed291]) {
      assert.equal(p.problem, null);
      assert.equal(p.model.format, 'weka');
      assert.equal(p.detection.confidence, 'certain');
      assert.deepEqual(p.model.diagnostics, []);
    }
  });

  it('every session matches the quoted reference figures', () => {
    for (const [file, parsed] of [
      [T26, parsed26],
      [T242, parsed242],
      [T291, parsed291],
    ] as const) {
      assert.deepEqual(parsed.model.sessions.map(figures), REFERENCE[file]);
    }
  });

  it('and the reference run again now gives the same', { skip: PY === null && 'python3 not installed' }, () => {
    for (const file of [T26, T242, T291]) assert.deepEqual(reference(file), REFERENCE[file]);
  });

  it("trace_0026 by hand: call 2 re-sends call 1's 238 blocks (15,232 of 17,401 tokens cached); call 3 re-sends 271 (17,344 of 20,068)", () => {
    const calls = parsed26.model.sessions[0]!.calls;
    assert.deepEqual(
      calls.map((c) => [c.tokens.input, c.tokens.cached, c.tokens.appended, c.tokens.output]),
      [
        [15291, 0, 15291, 2282],
        [17401, 15232, 2169, 2905],
        [20068, 17344, 2724, 107],
      ],
    );
    // floor(15,291 / 64) = 238 full blocks named; the partial 239th is private to the call.
    assert.equal(calls[0]!.blocks!.hashes.length, 238);
    assert.equal(calls[0]!.blocks!.blockSizeTokens, 64);
    // t = 94 s, api_time 48.05 s.
    assert.deepEqual([calls[1]!.startMs, calls[1]!.endMs], [94000, 142050]);
    assert.equal(calls[1]!.model, 'claude-opus-4-5-20251101');
  });

  it("the trace's own parent totals are kept as reported totals, apart from the calls", () => {
    assert.deepEqual(parsed26.model.sessions[0]!.reportedTotals, {
      input: 52760,
      output: 5294,
      cached: null,
      costUsd: null,
      llmCalls: null,
    });
    assert.deepEqual(parsed291.model.sessions[0]!.reportedTotals, {
      input: 1576322,
      output: 12771,
      cached: null,
      costUsd: null,
      llmCalls: null,
    });
  });

  it('trace_0242: a streaming call keeps its ttft and api_time as timing; a call without api_time has no end', () => {
    const calls = parsed242.model.sessions[0]!.calls;
    assert.deepEqual(calls[0]!.server, { queueMs: null, ttftMs: 1440, prefillMs: null, decodeMs: null, e2eMs: 43480 });
    assert.equal(calls[1]!.endMs, null);
    assert.equal(calls[1]!.server, null);
  });

  it("trace_0291: two Explore sub-agents become sessions of their own, on the parent's clock, spawned after call 16", () => {
    const [main, a1, a2] = parsed291.model.sessions;
    assert.deepEqual(
      [a1!.parentId, a1!.role, a1!.title, a1!.model],
      ['trace_0291', 'subagent', 'Explore', 'claude-haiku-4-5-20251001'],
    );
    assert.equal(a2!.parentId, 'trace_0291');
    // Inner "t" 0.0 at spawn 1,148.013 s is read as relative to the spawn.
    assert.equal(a1!.calls[0]!.startMs, 1148013);
    assert.equal(a1!.calls[4]!.startMs, 1168013);
    // Spawned after the parent's call 16 (t = 1,085 s); agent_001 is done (1,168.013 s) before the parent's call 17 (1,209 s),
    // agent_002 still runs then (its last call at 1,180.553 + 54 s).
    assert.ok(main!.calls[15]!.startMs! < a1!.calls[0]!.startMs! && a1!.calls[4]!.startMs! < main!.calls[16]!.startMs!);
    assert.deepEqual([main!.calls[16]!.startMs, a2!.calls[6]!.startMs], [1209000, 1234553]);
    // The sub-agents' first blocks (1584…) are not the parent's (1…): agent_001's first call misses; agent_002's
    // 177-block prompt shares its first 174 ids with agent_001's (the same system prompt and tools, a different task).
    assert.equal(a1!.calls[0]!.tokens.cached, 0);
    assert.equal(a2!.calls[0]!.tokens.cached, 174 * 64);
  });

  it('turns are the calls whose new input is text (input_types), with no prompt text to show', () => {
    const main = parsed291.model.sessions[0]!;
    assert.deepEqual(
      main.turns.map((t) => t.startMs),
      [0, 114000, 752000, 1085000],
    );
    assert.ok(main.turns.every((t) => t.preview === '(prompt text not recorded)'));
    assert.deepEqual(
      main.calls.map((c) => c.turn),
      [0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3],
    );
  });

  it('says what the format cannot give', () => {
    assert.deepEqual(parsed291.model.limitations, formatById('weka')!.limitations);
    assert.ok(
      parsed291.model.limitations.some((l) =>
        l.startsWith('Cached tokens are what an infinite prefix cache would hit'),
      ),
    );
  });

  it('round trip through the canonical format keeps every call and its block hashes', async () => {
    await assertRoundTrip(parsed291);
    await assertRoundTrip(parsed242);
  });
});

describe('Weka reader: the other shapes the same real traces come in', () => {
  it('a JSON Lines corpus (one trace per line, as published on Hugging Face) gives the same sessions as the files', async () => {
    const text = [T26, T291].map((f) => JSON.stringify(JSON.parse(readFileSync(f, 'utf8')))).join('\n') + '\n';
    const parsed = await parseText(text, 'corpus.jsonl');
    assert.equal(parsed.model.format, 'weka');
    assert.deepEqual(parsed.model.sessions.map(figures), [...REFERENCE[T26]!, ...REFERENCE[T291]!]);
    // Each trace is its own hash namespace: the second trace's first call shares nothing with the first trace.
    assert.equal(parsed.model.sessions[1]!.calls[0]!.tokens.cached, 0);
  });

  it('sub-agent requests in root-trace seconds (current captures) read the same as relative ones', async () => {
    const trace = JSON.parse(readFileSync(T291, 'utf8')) as {
      requests: Array<{ type: string; t: number; requests?: Array<{ t: number }> }>;
    };
    for (const r of trace.requests)
      if (r.type === 'subagent') for (const inner of r.requests!) inner.t = Math.round((r.t + inner.t) * 1000) / 1000;
    const parsed = await parseText(JSON.stringify(trace), 'absolute.json');
    assert.deepEqual(parsed.model.sessions.map(figures), REFERENCE[T291]);
  });

  it('a request without hash_ids has unknown cache figures (not 0) and a warning on its line; the trace still loads', async () => {
    const trace = JSON.parse(readFileSync(T26, 'utf8')) as { requests: Array<Record<string, unknown>> };
    delete trace.requests[1]!['hash_ids'];
    const parsed = await parseText(JSON.stringify(trace, null, 1), 'broken.json');
    const calls = parsed.model.sessions[0]!.calls;
    assert.equal(calls.length, 3);
    assert.deepEqual([calls[1]!.tokens.cached, calls[1]!.tokens.appended, calls[1]!.blocks], [null, null, null]);
    // Call 3 still hits call 1's 238 blocks (call 2's ids were never seen).
    assert.equal(calls[2]!.tokens.cached, 238 * 64);
    assert.equal(parsed.model.diagnostics.length, 1);
    assert.match(parsed.model.diagnostics[0]!.message, /"hash_ids" should be an array of integers/);
  });
});
