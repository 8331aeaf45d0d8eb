import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { detectFormat } from '../../../../src/core/trace/detectFormat';
import { MAX_DIAGNOSTICS, parseTrace } from '../../../../src/core/trace/parseTrace';
import {
  EDIT_LOOP,
  fixtures,
  parseFile,
  parseText,
  REJECTIONS,
  SPOTTER,
  traceFilesUnder,
} from '../../../support/helpers';

const BAD = join(fixtures, 'bad-input');

describe('parseTrace: bad input never throws and says what was expected', () => {
  it('an empty file', async () => {
    const r = await parseFile(join(BAD, 'empty.trace.jsonl'));
    assert.equal(r.problem?.kind, 'empty');
    assert.match(r.problem!.message, /This file is empty\..*Claude Code session log/);
    assert.deepEqual(r.model.sessions, []);
  });

  it('a file of blank lines counts as empty', async () => {
    const r = await parseText('\n\r\n   \n');
    assert.equal(r.problem?.kind, 'empty');
  });

  it('a binary file (NUL bytes) is not text, with no per-line noise', async () => {
    const r = await parseFile(join(BAD, 'binary.trace.jsonl'));
    assert.equal(r.problem?.kind, 'binary');
    assert.match(r.problem!.message, /not text/);
    assert.deepEqual(r.model.diagnostics, []);
  });

  it('a file that is not UTF-8 is not text', async () => {
    const r = await parseTrace([
      { key: 'latin1.jsonl', bytes: new Uint8Array([0x7b, 0xe9, 0xe8, 0x7d, 0x0a, 0xff, 0x0a]) },
    ]);
    assert.equal(r.problem?.kind, 'binary');
    assert.match(r.problem!.message, /not UTF-8/);
  });

  it('JSON Lines of another kind: lists the supported formats and the keys it saw', async () => {
    const r = await parseFile(join(BAD, 'not-a-trace.jsonl'));
    assert.equal(r.problem?.kind, 'unknown-format');
    assert.match(r.problem!.message, /keys seen: "level", "msg"/);
    assert.match(r.problem!.message, /Agent Trace \(canonical\) \(\*\.trace\.jsonl/);
  });

  it('a pretty-printed JSON document of no known kind: read whole, then named by its keys', async () => {
    const r = await parseFile(join(BAD, 'pretty-printed.json'));
    assert.equal(r.problem?.kind, 'unknown-format');
    assert.match(
      r.problem!.message,
      /the document matched no known format \(keys seen: "name", "version", "private"\)/,
    );
    assert.deepEqual(r.model.diagnostics, []); // its lines are not "malformed JSON Lines"
  });

  it('a JSON Lines file whose first line is broken is still read as JSON Lines', async () => {
    const good =
      '{"type":"user","sessionId":"s","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}';
    const r = await parseText(`{"type":"user","sessionId":"s",\n${good}\n${good.replace('u1', 'u2')}\n`);
    assert.equal(r.model.format, 'claude-code');
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[0, 'error']],
    );
    assert.equal(r.model.sessions[0]!.turns.length, 2);
  });

  it('a broken JSON document reports the syntax error on its line and reads what it can', async () => {
    const r = await parseText('{\n  "resourceSpans": [\n    {"scopeSpans": [}\n  ]\n}\n', 'broken.json');
    const syntax = r.model.diagnostics.filter((d) => /JSON syntax error/.test(d.message));
    assert.ok(syntax.length >= 1);
    assert.equal(syntax[0]!.line, 2);
  });

  it('a malformed line in the middle: one diagnostic on its line, the rest loads', async () => {
    const r = await parseFile(join(BAD, 'malformed-line.trace.jsonl'));
    assert.equal(r.problem, null);
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.severity]),
      [[4, 'error']], // file line 5
    );
    assert.match(r.model.diagnostics[0]!.message, /not valid JSON/);
    // By hand: llm_call records on lines 4, 7 and 9 survive.
    assert.equal(r.model.sessions[0]!.calls.length, 3);
  });

  it('JSON that is not an object, and CRLF line ends, in a Claude Code log', async () => {
    const good =
      '{"type":"user","sessionId":"s","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}';
    const r = await parseText(`${good}\r\n[1,2]\r\n"text"\r\n${good.replace('u1', 'u2')}\r\n`);
    assert.equal(r.model.format, 'claude-code');
    assert.deepEqual(
      r.model.diagnostics.map((d) => [d.line, d.message]),
      [
        [1, 'Line is JSON but not an object; skipped.'],
        [2, 'Line is JSON but not an object; skipped.'],
      ],
    );
    assert.equal(r.model.sessions[0]!.turns.length, 2);
  });

  it('keeps at most MAX_DIAGNOSTICS diagnostics and counts the rest', async () => {
    const header = '{"type":"header","format":"agent-trace","version":1}\n';
    const r = await parseText(header + 'x\n'.repeat(MAX_DIAGNOSTICS + 5));
    assert.equal(r.model.diagnostics.length, MAX_DIAGNOSTICS + 1);
    // File-level notes sort before line diagnostics.
    assert.match(r.model.diagnostics[0]!.message, /^5 more diagnostics/);
    assert.equal(r.model.diagnostics[0]!.line, -1);
  });

  it('--format overrides detection', async () => {
    const r = await parseFile(join(BAD, 'not-a-trace.jsonl'), { format: 'claude-code' });
    assert.equal(r.problem, null);
    assert.equal(r.detection.evidence, 'chosen by the user');
    assert.deepEqual(r.model.sessions, []);
  });
});

describe('detectFormat', () => {
  it('detects every Claude Code fixture although line 1 is a snapshot or progress line', async () => {
    for (const path of [SPOTTER, EDIT_LOOP, REJECTIONS]) {
      const r = await parseFile(path);
      assert.equal(r.model.format, 'claude-code', path);
      assert.match(r.detection.evidence, /records look like Claude Code session log/);
    }
  });

  it('a canonical header decides at once', () => {
    const d = detectFormat([
      { type: 'header', format: 'agent-trace', version: 1 },
      { sessionId: 'x', uuid: 'y' },
    ]);
    assert.deepEqual(d, {
      format: 'agent-trace',
      evidence: 'a header record of Agent Trace (canonical)',
      confidence: 'certain',
    });
  });

  it('majority vote over the first records', () => {
    const claude = { sessionId: 's', uuid: 'u', type: 'user' };
    const canonical = { type: 'llm_call', session: 's', id: 'c' };
    assert.equal(detectFormat([canonical, claude, claude]).format, 'claude-code');
    assert.equal(detectFormat([canonical, canonical, claude]).format, 'agent-trace');
  });
});

/** The model without where things are (streamed documents locate to the nearest object or array, not to a field's own line). */
function figures(p: Awaited<ReturnType<typeof parseFile>>): unknown {
  const model = JSON.parse(
    JSON.stringify(p.model, (key, value: unknown) => (key === 'source' || key === 'resultSource' ? undefined : value)),
  ) as { diagnostics: Array<{ line?: number }> };
  for (const d of model.diagnostics) delete d.line;
  return model;
}

/** Diagnostics with the wording of a JSON syntax error left out (V8's and the streaming parser's words differ; the line and severity must not). */
function sameDiagnostics(p: Awaited<ReturnType<typeof parseFile>>): unknown {
  return p.model.diagnostics.map((d) => ({
    ...d,
    message: /^Line (\([^)]*\) )?is not valid JSON/.test(d.message) ? 'not valid JSON' : d.message,
  }));
}

describe('parseTrace: the streaming paths read what the fast paths read', () => {
  it('every line streamed through the incremental parser (a 1-byte line limit) gives the same model, every fixture', async () => {
    for (const path of traceFilesUnder(fixtures).filter((f) => !f.includes('/hostile/') && !/workload/.test(f))) {
      const fast = await parseFile(path);
      const streamed = await parseFile(path, { longLineBytes: 1 });
      if (path.endsWith('.jsonl')) {
        assert.deepEqual(sameDiagnostics(streamed), sameDiagnostics(fast), path);
        assert.deepEqual({ ...streamed.model, diagnostics: [] }, { ...fast.model, diagnostics: [] }, path);
      } else assert.deepEqual(figures(streamed), figures(fast), path); // a document with a long line is streamed whole
      assert.deepEqual(streamed.problem, fast.problem, path);
    }
  });

  it('every document streamed (none of its lines kept) gives the same figures, every fixture', async () => {
    for (const path of traceFilesUnder(fixtures).filter((f) => !f.includes('/hostile/') && !/workload/.test(f))) {
      const held = await parseFile(path);
      const streamed = await parseFile(path, { heldDocumentChars: 0 });
      if (held.model.diagnostics.some((d) => /JSON syntax error/.test(d.message))) continue; // recovery differs by design: jsonc-parser reads on past an error
      assert.deepEqual(figures(streamed), figures(held), path);
    }
  });

  it('a streamed document still knows which step is on which line', async () => {
    const traj = join(fixtures, 'swe-agent/pydicom__pydicom-1458.traj');
    const held = await parseFile(traj);
    const streamed = await parseFile(traj, { heldDocumentChars: 0 });
    // Each step's call starts at the step's own object: the same line either way.
    assert.deepEqual(
      streamed.model.sessions[0]!.calls.map((c) => c.source.line),
      held.model.sessions[0]!.calls.map((c) => c.source.line),
    );
  });
});

// Issue 25: a command's progress text captured before its JSON (`opencode export` writes
// "Exporting session: ses_…" to stderr first). The document after such lines is read and the lines
// are said to be skipped; JSON Lines with a bad first line stay JSON Lines. Real committed samples,
// with the lines put in front in memory.
describe('parseTrace: a JSON document after leading lines of text', () => {
  const withLead = (lead: string, path: string): Uint8Array => Buffer.concat([Buffer.from(lead), readFileSync(path)]);
  const GEMINI = join(fixtures, 'gemini-cli/harbor-rfc-gemini-cli-trajectory.json');
  const OPENHANDS = join(fixtures, 'openhands/basic_gui_mode.json');

  it('reads a pretty-printed document after one line, which it says was skipped', async () => {
    const plain = await parseFile(GEMINI);
    const parsed = await parseTrace([{ key: 'chat.json', bytes: withLead('Exporting session: latest\n', GEMINI) }]);
    assert.equal(parsed.problem, null);
    assert.equal(parsed.model.format, 'gemini-cli');
    assert.deepEqual(
      parsed.model.sessions.map((s) => [s.id, s.calls.length, s.turns.length]),
      plain.model.sessions.map((s) => [s.id, s.calls.length, s.turns.length]),
    );
    assert.deepEqual(
      parsed.model.diagnostics.map((d) => [d.line, d.severity]),
      [[0, 'warning']],
    );
    assert.match(
      parsed.model.diagnostics[0]!.message,
      /^Line 1 is text, not JSON \("Exporting session: latest"\).*skipped, and the document after it was read\.$/,
    );
  });

  it("up to five lines, blank lines between them allowed; their sources stay the file's own lines", async () => {
    const lead = 'Exporting session: latest\n\n[plugin] loaded 5 tools\nExporting session...\n';
    const parsed = await parseTrace([{ key: 'events.json', bytes: withLead(lead, OPENHANDS) }]);
    const plain = await parseFile(OPENHANDS);
    assert.equal(parsed.problem, null);
    assert.equal(parsed.model.format, 'openhands');
    assert.deepEqual(
      parsed.model.sessions[0]!.calls.map((c) => c.source.line),
      plain.model.sessions[0]!.calls.map((c) => c.source.line + 4),
    );
    const lead0 = parsed.model.diagnostics.filter((d) => d.line < 4);
    assert.deepEqual(
      lead0.map((d) => [d.line, d.severity]),
      [[0, 'warning']],
    );
    assert.match(lead0[0]!.message, /^Lines 1–4 are text, not JSON \(the first: "Exporting session: latest"\)/);
  });

  it('a sixth line of text is too many: the file is not taken for a document', async () => {
    const lead = 'a\nb\nc\nd\ne\nf\n';
    const parsed = await parseTrace([{ key: 'chat.json', bytes: withLead(lead, GEMINI) }]);
    assert.notEqual(parsed.problem, null);
  });

  it('JSON Lines whose first line is text are still JSON Lines: that line stays an error, every record is read', async () => {
    const plain = await parseFile(REJECTIONS);
    const parsed = await parseTrace([{ key: 'log.jsonl', bytes: withLead('Exporting session: latest\n', REJECTIONS) }]);
    assert.equal(parsed.model.format, 'claude-code');
    assert.equal(parsed.model.sessions[0]!.calls.length, plain.model.sessions[0]!.calls.length);
    assert.deepEqual(
      parsed.model.diagnostics.filter((d) => d.line === 0).map((d) => d.severity),
      ['error'],
    );
  });
});
