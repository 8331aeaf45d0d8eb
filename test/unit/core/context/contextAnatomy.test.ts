import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ClaudeCodeContentCollector } from '../../../../src/core/context/claudeCodeContent';
import { contextAnatomy } from '../../../../src/core/context/contextAnatomy';
import type { TraceAnatomy } from '../../../../src/core/context/contextAnatomy';
import { contextReport } from '../../../../src/core/context/contextReport';
import { CHAR_ESTIMATE } from '../../../../src/core/context/tokenCounter';
import { priceTrace } from '../../../../src/core/cost/callCost';
import { createPriceBook } from '../../../../src/core/cost/priceBook';
import { O200K } from '../../../../src/node/contextTokenizer';
import { fixtures, parseFile, repoRoot } from '../../../support/helpers';

// The context anatomy of a small real session, worked out apart from the program.
// test/fixtures/claude-code/context-excerpt.jsonl: the first 3 calls of the spotter session,
// its /compact and the 3 calls after it, the middle one moved 6 minutes later with its cache
// read turned into a write (what an expired 5-minute cache logs). Tokens are counted as
// ceil(UTF-16 length / 4) on both sides (CHAR_ESTIMATE), so what is checked is the anatomy, not
// the tokenizer library; the expected figures come from test/reference/context_anatomy.py,
// which reads the raw log on its own and prices at Anthropic's published rates.

const EXCERPT = join(fixtures, 'claude-code/context-excerpt.jsonl');

interface Reference {
  factor: number;
  perPiece: number;
  comparedCalls: number;
  medianAbsError: number;
  calls: Array<{ loggedInput: number; estimatedInput: number; inputUsd: number; byKind: Record<string, number> }>;
  parts: Array<{
    kind: string;
    tokens: number;
    firstCall: number;
    lastCall: number;
    usd: number;
    read: number;
    write: number;
    writes: number;
  }>;
}

async function anatomyOf(path: string, counter = CHAR_ESTIMATE): Promise<TraceAnatomy> {
  const collector = new ClaudeCodeContentCollector();
  const parsed = await parseFile(path, { recordTap: (r) => collector.record(r) });
  return contextAnatomy(parsed.model, {
    content: collector.result(),
    tokenizer: () => counter,
    prices: createPriceBook(),
  });
}

function python(): Reference | null {
  try {
    return JSON.parse(
      execFileSync('python3', [join(repoRoot, 'test/reference/context_anatomy.py'), EXCERPT], { encoding: 'utf8' }),
    ) as Reference;
  } catch {
    return null;
  }
}

describe('context anatomy of a real session through a compaction and a cache expiry', () => {
  it('matches the hand-worked figures', async () => {
    const s = (await anatomyOf(EXCERPT)).sessions[0]!;
    assert.equal(s.calls.length, 6);
    // Call 1's logged input: 3 uncached + 17,842 read + 8,165 written = 26,010; the only visible
    // text is the typed prompt (line 7), so the unlogged base is 26,010 minus the prompt's count.
    assert.equal(s.calls[0]!.loggedInput, 26_010);
    const base = s.parts[0]!;
    assert.equal(base.kind, 'system');
    assert.equal(base.estimated, true);
    assert.equal(base.tokens + s.calls[0]!.byKind.userText, 26_010);
    // The base rides in every call, the compaction included.
    assert.deepEqual([base.firstCall, base.lastCall], [0, 5]);
    // Everything appended before the /compact left the context with it: nothing of calls 1–3 lives past call 3.
    for (const p of s.parts.slice(1))
      if (p.firstCall <= 2) assert.equal(p.lastCall, 2, `${p.kind} from call ${p.firstCall + 1}`);
    // Call 4 (first after the compaction) holds the base, the summary, what /compact printed and the typed "continue implementation", and the rest is what was restored unlogged.
    const c4 = s.calls[3]!;
    assert.equal(c4.loggedInput, 3 + 21_448 + 23_812);
    assert.equal(c4.estimatedInput, c4.loggedInput);
    assert.ok(c4.byKind.compactionSummary > 4000, 'the summary is 16,958 bytes of JSON line: thousands of tokens');
    assert.ok(c4.byKind.restored > 0);
    // Call 5 read nothing from the cache (the expiry): 1 uncached token at $5/MTok and 46,011
    // written for 5 minutes at $6.25/MTok (claude-opus-4-6): $0.000005 + $0.28756875.
    assert.ok(Math.abs(s.calls[4]!.inputUsd! - 0.28757375) < 1e-12);
    // …so the summary, written by call 4, was written again by call 5: two writes.
    const summary = s.parts.find((p) => p.kind === 'compactionSummary')!;
    assert.equal(summary.writes, 2);
    // The parts' dollars add up to the calls' input dollars: nothing lost, nothing counted twice.
    const partsUsd = s.parts.reduce((a, p) => a + (p.usd ?? 0), 0);
    const callsUsd = s.calls.reduce((a, c) => a + (c.inputUsd ?? 0), 0);
    assert.ok(Math.abs(partsUsd - callsUsd) < 1e-12);
  });

  it('agrees with the independent Python reference part by part', async (t) => {
    const ref = python();
    if (ref === null) {
      t.skip('python3 not available to run test/reference/context_anatomy.py');
      return;
    }
    const s = (await anatomyOf(EXCERPT)).sessions[0]!;
    assert.equal(s.calibration.comparedCalls, ref.comparedCalls);
    assert.ok(Math.abs(s.calibration.factor - ref.factor) < 1e-9);
    assert.ok(Math.abs(s.calibration.perPiece - ref.perPiece) < 1e-9);
    assert.ok(Math.abs(s.calibration.medianAbsError! - ref.medianAbsError) < 1e-9);
    assert.equal(s.calls.length, ref.calls.length);
    s.calls.forEach((c, k) => {
      const r = ref.calls[k]!;
      assert.equal(c.loggedInput, r.loggedInput, `call ${k + 1}`);
      assert.equal(c.estimatedInput, r.estimatedInput, `call ${k + 1}`);
      assert.ok(Math.abs(c.inputUsd! - r.inputUsd) < 1e-12, `call ${k + 1} dollars`);
      const kinds = Object.fromEntries(Object.entries(c.byKind).filter(([, v]) => v > 0));
      assert.deepEqual(kinds, r.byKind, `call ${k + 1} by kind`);
    });
    assert.equal(s.parts.length, ref.parts.length);
    s.parts.forEach((p, i) => {
      const r = ref.parts[i]!;
      assert.deepEqual(
        [p.kind, p.tokens, p.firstCall, p.lastCall, p.writes],
        [r.kind, r.tokens, r.firstCall, r.lastCall, r.writes],
        `part ${i}`,
      );
      assert.ok(
        Math.abs(p.usd! - r.usd) < 1e-12 &&
          Math.abs(p.cacheReadUsd - r.read) < 1e-12 &&
          Math.abs(p.writeUsd - r.write) < 1e-12,
        `part ${i} dollars`,
      );
    });
  });

  it('reports contributors and suggestions with their figures', async () => {
    const anatomy = await anatomyOf(EXCERPT);
    const report = contextReport(anatomy);
    const s = anatomy.sessions[0]!;
    // The unlogged base is the largest contributor here: 6 calls carried it.
    const top = report.contributors[0]!;
    assert.equal(top.key, 'kind:system');
    assert.equal(top.calls, 6);
    assert.ok(Math.abs(top.usd! - s.parts[0]!.usd!) < 1e-12);
    // Every suggestion carries a dollar figure and says how it was computed.
    assert.ok(report.suggestions.length > 0);
    for (const sug of report.suggestions) {
      assert.match(sug.text, /\$\d/);
      assert.ok(sug.how.length > 0);
    }
    assert.ok(Math.abs(report.inputUsd! - s.calls.reduce((a, c) => a + c.inputUsd!, 0)) < 1e-12);
  });
});

describe('o200k tokenizer against the logged growth', () => {
  it('is within 15% of what each call appended once calibrated, on a real Claude Code session', async () => {
    // Claude's tokenizer is not published: o200k_base stands in and calibration fixes its scale.
    // edit-retry-loop.jsonl, 41 calls: 5.7% measured when this was written (the bench prints it on every sample).
    const s = (await anatomyOf(join(fixtures, 'claude-code/edit-retry-loop.jsonl'), O200K)).sessions[0]!;
    assert.equal(s.calibration.comparedCalls, 40);
    assert.ok(s.calibration.medianAbsError! < 0.15, `median |error| ${s.calibration.medianAbsError}`);
    assert.ok(s.calibration.medianAbsError! < s.calibration.medianAbsErrorRaw!);
  });
});

describe('what the log leaves out of the calibration', () => {
  it('knows which Claude models drop earlier thinking at a new user turn', async () => {
    const { stripsEarlierThinking } = await import('../../../../src/core/context/contextAnatomy');
    // Anthropic's extended-thinking guide: models before Opus 4.5 strip it, Opus 4.5 and later keep it.
    for (const m of [
      'claude-sonnet-4-20250514',
      'claude-opus-4-20250514',
      'claude-sonnet-4-5-20250929',
      'claude-haiku-4-5-20251001',
      'claude-3-7-sonnet-20250219',
    ])
      assert.equal(stripsEarlierThinking(m), true, m);
    for (const m of ['claude-opus-4-5-20251101', 'claude-opus-4-6', 'gpt-5.4', null])
      assert.equal(stripsEarlierThinking(m), false, String(m));
  });

  it('leaves out the calls after a line cut short in the log', async () => {
    // m-claude/554b9fa6…: 28 of its lines are JSON cut short (line 45, a Bash result; lines
    // 56–84, the Write calls' results); none of them is next to another, so each is its own run.
    const path = join(fixtures, 'claude-code/m-claude/554b9fa6-f719-40e8-ba70-beee69bd60b5.jsonl');
    const cut: number[] = [];
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (line === '') return;
        try {
          JSON.parse(line);
        } catch {
          cut.push(i);
        }
      });
    assert.equal(cut.length, 28);
    const collector = new ClaudeCodeContentCollector();
    const parsed = await parseFile(path, { recordTap: (r) => collector.record(r) });
    assert.deepEqual(collector.result().unreadLines!.get(0), cut);
    const anatomy = contextAnatomy(parsed.model, {
      content: collector.result(),
      tokenizer: () => CHAR_ESTIMATE,
      prices: null,
    });
    const s = anatomy.sessions.find((x) => x.sessionId.startsWith('554b9fa6'))!;
    assert.ok(s.notes.some((n) => /after a line the reader could not read/.test(n)));
  });
});

describe('dollars from a trace already priced', () => {
  it('charges the same parts the same dollars as pricing each call itself', async () => {
    const collector = new ClaudeCodeContentCollector();
    const parsed = await parseFile(EXCERPT, { recordTap: (r) => collector.record(r) });
    const book = createPriceBook();
    const options = { content: collector.result(), tokenizer: () => CHAR_ESTIMATE, prices: book };
    const own = contextAnatomy(parsed.model, options);
    const shared = contextAnatomy(parsed.model, { ...options, costs: priceTrace(parsed.model, book) });
    assert.ok(own.sessions[0]!.calls.some((c) => c.inputUsd !== null && c.inputUsd > 0));
    assert.deepEqual(shared, own);
  });
});
