import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { forEachStringLiteral } from '../../../src/core/redact/jsonStrings';
import type { ParsedTrace } from '../../../src/core/trace/parseTrace';
import { redactTraceFiles } from '../../../src/node/redactFiles';
import { createRedactor } from '../../../src/node/secretlintDetector';
import { fixtures, parseFile, SPOTTER } from '../../support/helpers';

// secretlint's own test vectors (test/fixtures/secretlint-vectors, extracted from
// secretlint v13.0.4's snapshots; see the README there) placed inside real traces of
// several formats, then redacted as `agent-trace redact` does. Expected secrets come from
// secretlint's snapshot outputs (input.slice(range)), not from our redactor.

interface VectorCase {
  rule: string;
  case: string;
  input: string;
  secrets: Array<{ ruleId: string; text: string }>;
}
const VECTORS: VectorCase[] = JSON.parse(readFileSync(join(fixtures, 'secretlint-vectors/vectors.json'), 'utf8')).cases;
/** Each case goes into this many places of a trace. */
const PLACEMENTS = 2;
/** Strings at least this long are message or tool content, safe to overwrite without changing what a reader counts. */
const CONTENT_CHARS = 120;

function occurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) n++;
  return n;
}

/** Every decoded string value of a JSON text, joined (where secrets could hide). */
function decodedStrings(text: string): string {
  const parts: string[] = [];
  for (const line of text.split('\n')) {
    forEachStringLiteral(line, (s, e) => {
      try {
        parts.push(JSON.parse(line.slice(s, e)) as string);
      } catch {
        parts.push(line.slice(s, e));
      }
    });
  }
  return parts.join('\u0000');
}

/** A line with every string literal emptied: what must not change (numbers, keys' places, structure). */
function skeleton(text: string): string {
  let out = '';
  let pos = 0;
  forEachStringLiteral(text, (s, e) => {
    out += text.slice(pos, s) + '""';
    pos = e;
  });
  return out + text.slice(pos);
}

/**
 * Writes `file` with the vector inputs put into its long content strings: every case
 * PLACEMENTS times, spread over the strings (several cases share a string, separated by
 * blank lines, when the trace has fewer strings than placements).
 */
function plant(file: string, to: string): void {
  const lines = readFileSync(file, 'utf8').split('\n');
  const slots: Array<{ line: number; start: number; end: number; inputs: string[] }> = [];
  lines.forEach((line, i) =>
    forEachStringLiteral(line, (s, e) => {
      if (e - s >= CONTENT_CHARS) slots.push({ line: i, start: s, end: e, inputs: [] });
    }),
  );
  assert.ok(slots.length > 0, `${file} has content strings to put the vectors in`);
  for (let k = 0; k < VECTORS.length * PLACEMENTS; k++)
    slots[k % slots.length]!.inputs.push(VECTORS[k % VECTORS.length]!.input);
  // Rewrite each line from its last slot to its first, so earlier offsets stay valid.
  const used = slots.filter((s) => s.inputs.length > 0).sort((a, b) => a.line - b.line || b.start - a.start);
  for (const slot of used) {
    const line = lines[slot.line]!;
    lines[slot.line] = line.slice(0, slot.start) + JSON.stringify(slot.inputs.join('\n\n')) + line.slice(slot.end);
  }
  writeFileSync(to, lines.join('\n'));
}

function callFigures(p: ParsedTrace): string {
  return JSON.stringify(
    p.model.sessions.map((s) => [s.id, s.calls.map((c) => [c.tokens, c.startMs, c.endMs, c.server])]),
  );
}

const SAMPLES = [
  { name: 'Claude Code (with sub-agents)', file: SPOTTER, format: 'claude-code' },
  { name: 'Codex', file: join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl'), format: 'codex' },
  {
    name: 'mini-swe-agent (one pretty-printed JSON document)',
    file: join(fixtures, 'mini-swe-agent/pvlib__pvlib-python-1072.traj.json'),
    format: 'mini-swe-agent',
  },
];

describe("redaction: secretlint's test vectors inside real traces", () => {
  it('has the vectors it was built from (99 text cases, 112 expected secrets)', () => {
    assert.equal(VECTORS.length, 99);
    assert.equal(
      VECTORS.reduce((n, c) => n + c.secrets.length, 0),
      112,
    );
  });

  for (const sample of SAMPLES) {
    it(`${sample.name}: every secret gone, every figure unchanged, still read as ${sample.format}`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'redact-'));
      const planted = join(dir, basename(sample.file));
      // The sub-agent logs come along unchanged, so the planted trace is still a whole session tree.
      const companions = join(dirname(sample.file), basename(sample.file).replace(/\.jsonl$/, ''), 'subagents');
      try {
        for (const name of readdirSync(companions)) {
          mkdirSync(join(dir, basename(planted).replace(/\.jsonl$/, ''), 'subagents'), { recursive: true });
          copyFileSync(join(companions, name), join(dir, basename(planted).replace(/\.jsonl$/, ''), 'subagents', name));
        }
      } catch {
        // No sub-agents for this sample.
      }
      plant(sample.file, planted);
      const out = join(dir, 'out', basename(sample.file));
      const redactor = createRedactor();
      await redactTraceFiles(planted, out, redactor);

      const before = readFileSync(planted, 'utf8');
      const after = readFileSync(out, 'utf8');
      // (a) Every expected secret is gone: as many fewer occurrences as secretlint expects in the placed inputs.
      const beforeText = decodedStrings(before);
      const afterText = decodedStrings(after);
      for (const c of VECTORS) {
        for (const s of new Set(c.secrets.map((x) => x.text))) {
          const expected = c.secrets.filter((x) => x.text === s).length;
          assert.ok(
            occurrences(afterText, s) <= occurrences(beforeText, s) - expected * PLACEMENTS,
            `${c.rule}/${c.case}: ${s.slice(0, 12)}… left ${occurrences(afterText, s)} of ${occurrences(beforeText, s)}`,
          );
        }
      }
      // (b) Nothing outside strings changed, line for line.
      const bl = before.split('\n');
      const al = after.split('\n');
      assert.equal(al.length, bl.length);
      bl.forEach((line, i) => assert.equal(skeleton(al[i]!), skeleton(line), `line ${i + 1}`));
      // (c) Still the same format, with the same per-call figures.
      const p0 = await parseFile(planted);
      const p1 = await parseFile(out);
      assert.equal(p0.model.format, sample.format);
      assert.equal(p1.model.format, sample.format);
      assert.equal(p1.problem, null);
      assert.equal(callFigures(p1), callFigures(p0));
      assert.equal(p1.model.sessions.length, p0.model.sessions.length);
      // The summary names kinds and counts, never a value.
      const summary = JSON.stringify(redactor.summary());
      for (const c of VECTORS) for (const s of c.secrets) assert.ok(!summary.includes(s.text));
      assert.ok(redactor.summary().occurrences >= 112 * PLACEMENTS);
    });
  }

  // OTLP writes int64 values (token counts, nanosecond times) as strings: they must come through untouched.
  it('leaves a trace without secrets byte for byte, numbers written as strings included (OTLP)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'redact-'));
    for (const name of ['agent-vllm.json', 'agent-vllm.jsonl', 'legacy-instrumentation-library.json']) {
      const source = join(fixtures, 'otlp', name);
      const out = join(dir, name);
      const redactor = createRedactor();
      await redactTraceFiles(source, out, redactor);
      assert.equal(readFileSync(out, 'utf8'), readFileSync(source, 'utf8'), name);
      assert.equal(redactor.summary().occurrences, 0);
    }
  });
});
