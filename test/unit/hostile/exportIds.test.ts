import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { aiperfIdHead, buildReplayExport, REPLAY_TARGETS } from '../../../src/core/replay/replayExport';
import type { ReplayExport } from '../../../src/core/replay/replayExport';
import { parseText, repoRoot } from '../../support/helpers';

// Round two of the hostile probe, exports: the compaction continuation of session B was
// exported to AIPerf as `B~2`, the id of a real session named `B~2`, and AIPerf merged the
// two conversations. Ids must be unique by construction, whatever the traced ids hold.

const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');
/** The sample's main session: its call after a compaction does not extend the context, so AIPerf gets it as a second session. */
const MAIN = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04';

/** The sample with copies of its main session under other ids (every record of it, the id replaced). */
function withCopies(...ids: string[]): string {
  const lines = readFileSync(SAMPLE, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  const mine = lines.filter((l) => {
    const r = JSON.parse(l) as Record<string, unknown>;
    return (r['type'] === 'session' && r['id'] === MAIN) || r['session'] === MAIN;
  });
  const copies = ids.flatMap((id) => mine.map((l) => l.replaceAll(`"${MAIN}"`, JSON.stringify(id))));
  return [...lines, ...copies].join('\n') + '\n';
}

/** Each AIPerf session id with the traced sessions (and replicas) whose requests it carries. */
function conversations(e: ReplayExport): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  e.records.forEach((r, i) => {
    const q = e.requests[e.recordRequest[i]!]!;
    const id = r['session_id'] as string;
    if (!out.has(id)) out.set(id, new Set());
    out.get(id)!.add(`${q.traceSessionId} replica ${q.replica}`);
  });
  return out;
}

describe('export ids are unique by construction', () => {
  it("AIPerf: a session named like another's continuation (B~2) keeps its own conversation", async () => {
    const parsed = await parseText(withCopies(`${MAIN}~2`, `${MAIN}#r2`), 'collide.trace.jsonl');
    assert.equal(parsed.problem, null);
    for (const replicas of [1, 2]) {
      const e = buildReplayExport(parsed.model, 'aiperf', { replicas, staggerS: 0, sessions: null });
      const byId = conversations(e);
      for (const [id, sources] of byId) assert.equal(sources.size, 1, `${id} carries ${[...sources].join(' and ')}`);
      // The continuation keeps the readable name; the session named like it is encoded.
      const suffix = replicas > 1 ? '#r1' : '';
      assert.deepEqual([...byId.get(`${MAIN}${suffix}~2`)!], [`${MAIN} replica 0`]);
      assert.deepEqual([...byId.get(`${MAIN}%7E2${suffix}`)!], [`${MAIN}~2 replica 0`]);
      assert.deepEqual([...byId.get(`${MAIN}%23r2${suffix}`)!], [`${MAIN}#r2 replica 0`]);
    }
  });

  it('AIPerf and Bailian: two traced sessions with the same id stay two conversations', async () => {
    // A canonical trace may repeat a session record: the reader keeps one session per id, so make the model by hand from two ids and then rename.
    const parsed = await parseText(withCopies('twin'), 'twins.trace.jsonl');
    const twin = parsed.model.sessions.find((s) => s.id === 'twin')!;
    twin.id = MAIN;
    const aiperf = buildReplayExport(parsed.model, 'aiperf', { replicas: 1, staggerS: 0, sessions: null });
    const starts = aiperf.records.filter((r) => 'timestamp' in r).map((r) => r['session_id'] as string);
    assert.equal(new Set(starts).size, starts.length, `every AIPerf session starts once: ${starts.join(', ')}`);
    assert.ok(starts.includes(`${MAIN}%%2`));
    // Bailian chains each request to the previous of its conversation: never across the two sessions.
    const bailian = buildReplayExport(parsed.model, 'bailian', { replicas: 1, staggerS: 0, sessions: null });
    const byChat = new Map(bailian.records.map((r, i) => [r['chat_id'] as number, i]));
    const mainCalls = parsed.model.sessions
      .filter((s) => s.id === MAIN)
      .map((s) => s.calls.filter((c) => c.tokens.input !== null && c.tokens.output !== null).length);
    assert.deepEqual(mainCalls.length, 2);
    const roots = bailian.records.filter(
      (r) =>
        r['parent_chat_id'] === -1 && bailian.requests[byChat.get(r['chat_id'] as number)!]!.traceSessionId === MAIN,
    );
    assert.equal(roots.length, 2, 'two conversations start');
    assert.deepEqual(
      roots
        .map((r) => r['chat_id'] as number)
        .map((root) => bailian.records.filter((x) => chainRoot(bailian, x['chat_id'] as number) === root).length)
        .sort(),
      [...mainCalls].sort(),
    );
  });

  it('the encoding is the identity on ordinary ids and never writes %%', () => {
    assert.equal(aiperfIdHead(MAIN), MAIN);
    assert.equal(aiperfIdHead('a%b#c~d'), 'a%25b%23c%7Ed');
    assert.ok(!aiperfIdHead('%%').includes('%%'));
    assert.deepEqual([...REPLAY_TARGETS], ['mooncake', 'aiperf', 'bailian']);
  });
});

/** The first request of the Bailian conversation a chat belongs to. */
function chainRoot(e: ReplayExport, chat: number): number {
  const byChat = new Map(e.records.map((r) => [r['chat_id'] as number, r['parent_chat_id'] as number]));
  let at = chat;
  for (let hops = 0; hops < 10_000 && byChat.get(at) !== -1; hops++) at = byChat.get(at)!;
  return at;
}
