import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { buildTraceReport } from '../../../src/core/report/traceReport';
import { renderTextReport } from '../../../src/core/report/textReport';
import { isObject } from '../../../src/core/trace/json';
import type { ParsedTrace } from '../../../src/core/trace/parseTrace';
import { buildTraceView } from '../../../src/core/view/traceView';
import { analyzeSession } from '../../../src/core/analysis/sessionAnalysis';
import {
  ALL_PAYLOADS,
  claudeRecords,
  HOSTILE_DIR,
  PAYLOADS,
  RAW_CONTROL,
  smallCases,
  usageLines,
} from '../../support/hostileCorpus';
import { ensureBuilt, parseFile, parseText, repoRoot } from '../../support/helpers';

// The committed hostile corpus (test/fixtures/hostile, written by test/support/hostileCorpus.ts):
// each case read by the core and by the CLI. Expected figures are the real log's own
// numbers, read from its JSON here, minus what the case poisoned: never the reader's output.

const cli = join(repoRoot, 'dist/cli.js');
const file = (name: string): string => join(HOSTILE_DIR, name);
const parse = (name: string): Promise<ParsedTrace> => parseFile(file(name));

function run(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The usage of the M-Claude log's record on 1-based `line`. */
function usageAt(line: number): Record<string, number> {
  return (claudeRecords()[line - 1]!['message'] as { usage: Record<string, number> }).usage;
}

/** Σ of a usage field over the distinct message ids of the first `n` records, first line of each id (the reader's rule for input figures, applied to the raw JSON). */
function firstLineSum(n: number, field: string, skipLine: number | null = null): number {
  const seen = new Set<string>();
  let sum = 0;
  claudeRecords()
    .slice(0, n)
    .forEach((r, i) => {
      const m = r['message'] as { id?: string; usage?: Record<string, number>; model?: string } | undefined;
      if (r['type'] !== 'assistant' || !m?.usage || !m.id || m.model === '<synthetic>' || seen.has(m.id)) return;
      seen.add(m.id);
      if (i + 1 !== skipLine) sum += m.usage[field] ?? 0;
    });
  return sum;
}

const messages = (p: ParsedTrace): string[] => p.model.diagnostics.map((d) => `${d.line + 1}: ${d.message}`);

describe('hostile corpus: the committed files are what the generator writes', () => {
  it('every case in test/fixtures/hostile is byte-identical to smallCases()', () => {
    const cases = smallCases();
    const committed = readdirSync(HOSTILE_DIR)
      .filter((n) => !/^(README\.md|LICENSE-.*|NOTICE-.*)$/.test(n))
      .sort();
    assert.deepEqual(committed, cases.map((c) => c.name).sort());
    for (const c of cases)
      assert.ok(
        Buffer.from(c.bytes).equals(readFileSync(file(c.name))),
        `${c.name} differs: run npx tsx test/support/hostileCorpus.ts write`,
      );
  });
});

describe('hostile corpus through the core reader: what it can read, and a diagnostic with its line for the rest', () => {
  it('a truncated last line: the rest loads, the cut line is reported', async () => {
    const p = await parse('truncated.jsonl');
    assert.equal(p.problem, null);
    assert.deepEqual(
      messages(p)
        .filter((m) => /not valid JSON/.test(m))
        .map((m) => m.split(':')[0]),
      ['21'],
    );
  });

  it('an invalid line in the middle: line 5 reported, the 39 others read', async () => {
    const p = await parse('invalid-line.jsonl');
    assert.match(messages(p).join('\n'), /^5: Line is not valid JSON/m);
    // Line 5 of the log was a progress-free user line; the assistant lines all survive.
    assert.equal(
      p.model.sessions[0]!.calls.length,
      new Set(
        claudeRecords()
          .slice(0, 40)
          .filter((r) => r['type'] === 'assistant')
          .map((r) => (r['message'] as { id: string }).id),
      ).size,
    );
  });

  it('whitespace only: empty, said so', async () => {
    const p = await parse('whitespace-only.jsonl');
    assert.equal(p.problem?.kind, 'empty');
  });

  it('binary: not text, with no per-line noise', async () => {
    const p = await parse('binary.jsonl');
    assert.equal(p.problem?.kind, 'binary');
    assert.deepEqual(p.model.diagnostics, []);
  });

  it('UTF-16 with a BOM (either byte order) reads as the same log as UTF-8, with a note; without one it says to convert', async () => {
    const plain = await parseText(
      claudeRecords()
        .slice(0, 40)
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
      'x.jsonl',
    );
    for (const name of ['utf16le-bom.jsonl', 'utf16be-bom.jsonl', 'utf8-bom.jsonl', 'crlf.jsonl']) {
      const p = await parse(name);
      assert.equal(p.problem, null, name);
      assert.deepEqual(
        p.model.sessions.map((s) => s.calls.map((c) => c.tokens)),
        plain.model.sessions.map((s) => s.calls.map((c) => c.tokens)),
        name,
      );
      if (name.startsWith('utf16'))
        assert.match(
          messages(p).join('\n'),
          /UTF-16 text \((little|big)-endian, by its byte-order mark\); it was decoded/,
        );
    }
    const noBom = await parse('utf16le-no-bom.jsonl');
    assert.equal(noBom.problem?.kind, 'binary');
    assert.match(noBom.problem!.message, /UTF-16 without a byte-order mark: convert it to UTF-8/);
  });

  it('one NUL byte rejects its line, not the file', async () => {
    const p = await parse('nul-byte.jsonl');
    assert.equal(p.problem, null);
    assert.deepEqual(messages(p), ['21: Line holds NUL bytes (binary data), not text; skipped.']);
    assert.ok(p.model.sessions[0]!.calls.length > 5);
  });

  it('invalid UTF-8 and a CESU-8 lone surrogate reject their lines; an escaped lone surrogate is text', async () => {
    const p = await parse('invalid-utf8.jsonl');
    assert.deepEqual(messages(p), [
      '11: Line is not valid UTF-8 text; skipped.',
      '12: Line is not valid UTF-8 text; skipped.',
    ]);
    assert.equal(p.problem, null);
  });

  it('mixed formats: the majority (Claude Code) is read, the Codex lines counted as skipped', async () => {
    const p = await parse('mixed-formats.jsonl');
    assert.equal(p.model.format, 'claude-code');
    assert.ok(Object.keys(p.model.skippedRecords).some((k) => k.startsWith('unknown:')));
  });

  it('numbers as strings: decimal digits are counts; hex, binary, "Infinity" and "1e3" are unknown with a diagnostic on their line', async () => {
    const u = usageLines();
    const p = await parse('numbers-as-strings.jsonl');
    const text = messages(p).join('\n');
    for (const [line, raw] of [
      [u[1], '"0x10"'],
      [u[2], '"0b101"'],
      [u[4], '"Infinity"'],
      [u[5], '"1e3"'],
    ] as const) {
      assert.match(
        text,
        new RegExp(
          `^${line}: usage\\.(input|output)_tokens is not a whole token count from 0 to 2\\^53 \\(${raw.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\); read as unknown\\.$`,
          'm',
        ),
      );
    }
    const calls = p.model.sessions[0]!.calls;
    const byLine = (line: number) => calls.find((c) => c.source.line === line - 1)!;
    // "123" and " 7 " are counts; appended = input_tokens + cache_creation (the log's own figure).
    assert.equal(byLine(u[0]!).tokens.appended, 123 + usageAt(u[0]!)['cache_creation_input_tokens']!);
    assert.equal(byLine(u[3]!).tokens.appended, 7 + usageAt(u[3]!)['cache_creation_input_tokens']!);
    assert.equal(byLine(u[1]!).tokens.input, null);
    assert.equal(byLine(u[2]!).tokens.appended, null);
  });

  it('negative, 1e308, 2^64 and 1e400 counts are unknown with a diagnostic; totals are the other calls\' sums, and no NaN is "within range"', async () => {
    const u = usageLines();
    const p = await parse('bad-counts.jsonl');
    const text = messages(p).join('\n');
    assert.match(text, new RegExp(`^${u[0]}: usage.input_tokens is not a whole token count .*\\(-5\\)`, 'm'));
    assert.match(
      text,
      new RegExp(`^${u[1]}: usage.cache_read_input_tokens is not a whole token count .*\\(1e\\+308\\)`, 'm'),
    );
    assert.match(
      text,
      new RegExp(`^${u[2]}: usage.input_tokens is not a whole token count .*\\(18446744073709552000\\)`, 'm'),
    );
    assert.match(
      text,
      new RegExp(
        `^${u[3]}: usage.output_tokens is not a whole token count .*\\(a number too large for JSON \\(Infinity\\)\\)`,
        'm',
      ),
    );
    const report = buildTraceReport(p);
    const s = report.sessions[0]!;
    // Σcached over calls whose cached is known: every first line but the poisoned one.
    assert.equal(s.tokens.cached, firstLineSum(40, 'cache_read_input_tokens', u[1]!));
    for (const v of [s.cacheHitRate, s.rawInputToOutput, s.appendToOutput.mean, s.prefillShare.value])
      assert.ok(v === null || Number.isFinite(v), String(v));
    const figures = renderTextReport('bad-counts.jsonl', report)
      .split('\ndiagnostics')[0]!
      .split(/\n\d+ diagnostics?:/)[0]!;
    assert.doesNotMatch(figures, /NaN|Infinity|∞/);
  });

  it('missing fields: each record reported on its line (or counted as skipped), the log still read', async () => {
    const p = await parse('missing-fields.jsonl');
    assert.equal(p.problem, null);
    const text = messages(p).join('\n');
    for (const line of [42, 43, 44, 45, 46]) assert.match(text, new RegExp(`^${line}: `, 'm'));
    // A record without a type, and a tool result naming no call, are listed among the skipped records.
    assert.equal(p.model.skippedRecords['(no type)'], 1);
    assert.ok((p.model.skippedRecords['tool_result:unpaired'] ?? 0) >= 1);
  });

  it('duplicate ids: conflicting usage on one message id and a reused tool-call id each get a warning; no call is dropped', async () => {
    const u = usageLines();
    const p = await parse('duplicate-ids.jsonl');
    const text = messages(p).join('\n');
    assert.match(
      text,
      new RegExp(
        `^41: call \\S+ gives different usage here than on line ${u[1]} \\(cached 1 vs ${usageAt(u[1]!)['cache_read_input_tokens']}`,
        'm',
      ),
    );
    assert.match(text, /^42: Tool-call id "toolu_\w+" is used again \(first at line \d+\): both calls are kept/m);
    const calls = p.model.sessions[0]!.calls;
    const reuse = calls.find((c) => c.id === 'msg_reuses_a_tool_id')!;
    assert.equal(reuse.toolCalls.length, 1, 'the second use is a call of its own');
    // The first line's input figures stand for the conflicting message.
    const conflicted = calls.find((c) => c.source.line === u[1]! - 1)!;
    assert.equal(conflicted.tokens.cached, usageAt(u[1]!)['cache_read_input_tokens']);
  });

  it('duplicate keys: the last one wins, as in JSON.parse', async () => {
    const u = usageLines();
    const p = await parse('duplicate-keys.jsonl');
    const call = p.model.sessions[0]!.calls.find((c) => c.source.line === u[0]! - 1)!;
    assert.equal(
      call.tokens.appended,
      usageAt(u[0]!)['input_tokens']! + usageAt(u[0]!)['cache_creation_input_tokens']!,
    );
  });

  it('__proto__, constructor and prototype: tools keep their names in the per-tool table, nothing is polluted', async () => {
    const p = await parse('proto-keys.jsonl');
    const a = analyzeSession(p.model.sessions[0]!);
    for (const name of ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString']) {
      assert.equal(Object.getOwnPropertyDescriptor(a.fingerprint.tools.byTool, name)?.value?.total, 1, name);
    }
    assert.equal(Object.getOwnPropertyDescriptor(p.model.skippedRecords, 'unknown:__proto__')?.value, 1);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    const json = JSON.parse(JSON.stringify(buildTraceReport(p)));
    assert.equal(json.sessions[0].toolCalls.byTool.__proto__.total, 1);
  });

  it('5,000 levels of nesting: that record is skipped with its line, the rest loads (Claude Code log, document, workload)', async () => {
    const p = await parse('deep-5000.jsonl');
    assert.equal(p.problem, null);
    assert.match(messages(p).join('\n'), /^41: Line nests deeper than 512 levels; skipped\.$/m);
    assert.ok(p.model.sessions[0]!.calls.length > 5);
    // A one-line document: read with the deep part left out (its one step is still there).
    const doc = await parse('deep-5000.json');
    assert.deepEqual(messages(doc), [
      '1: A value on this line nests deeper than 512 levels; left out, the rest is read.',
    ]);
    assert.equal(doc.model.format, 'swe-agent');
    assert.equal(doc.model.sessions[0]!.calls.length, 1);
  });

  it('keys that are Markdown command links: an unknown format, the keys quoted as data', async () => {
    const p = await parse('unknown-keys.jsonl');
    assert.equal(p.problem?.kind, 'unknown-format');
    assert.ok(p.problem!.message.includes(PAYLOADS.link));
  });

  it("payloads in every shown field: read as data, unchanged (escaping is each surface's job)", async () => {
    const p = await parse('payloads.jsonl');
    const s = p.model.sessions[0]!;
    assert.ok(s.id.includes(PAYLOADS.link) && s.id.includes(PAYLOADS.bidi));
    assert.ok(s.model!.includes(PAYLOADS.html) && s.model!.includes(PAYLOADS.ansi));
    assert.ok(s.title!.includes(ALL_PAYLOADS));
    assert.ok(s.calls.some((c) => c.toolCalls.some((t) => t.name.includes(PAYLOADS.codicon))));
    const a = analyzeSession(s);
    assert.equal(a.retry.loops.length, 1, 'the Edit/Write loop on the poisoned file is still found');
    assert.ok(a.retry.loops[0]!.target.includes(PAYLOADS.link));
    const view = buildTraceView(p, 'payloads.jsonl');
    assert.ok(view.sessions[0]!.summary.id.includes(PAYLOADS.bidi));
    const canonical = await parse('payloads.trace.jsonl');
    assert.equal(canonical.problem, null);
    assert.equal(canonical.model.sessions.length, 2);
  });
});

describe('hostile corpus through the CLI: a clear message with its line, or what it could read; never raw escapes', () => {
  before(() => ensureBuilt(cli));

  const cases = smallCases().map((c) => c.name);
  for (const name of cases) {
    it(`analyze ${name}`, () => {
      const text = run('analyze', file(name));
      assert.ok(text.code === 0 || text.code === 1, `exit ${text.code}: ${text.stderr}`);
      assert.doesNotMatch(text.stderr, /\n\s+at /, 'no stack trace');
      assert.doesNotMatch(text.stdout + text.stderr, RAW_CONTROL, 'control and bidi characters are escaped');
      assert.match(text.stdout, new RegExp(`^${name.replace(/[.]/g, '\\.')}: `), 'the report names the file');
      const json = run('analyze', file(name), '--json');
      assert.equal(json.code, text.code);
      assert.doesNotMatch(json.stdout, RAW_CONTROL);
      const report = JSON.parse(json.stdout) as { diagnostics: Array<{ line: number | null }> };
      assert.ok(isObject(report));
      // Every diagnostic has its file and a line or null (the whole file).
      for (const d of report.diagnostics)
        assert.ok(d.line === null || (Number.isInteger(d.line) && d.line >= 1), JSON.stringify(d));
    });
  }

  it('the payload log prints every payload escaped in text and intact in JSON', () => {
    const text = run('analyze', file('payloads.jsonl'));
    assert.equal(text.code, 0);
    assert.ok(text.stdout.includes('\\x1b[2J\\x1b]0;pwned\\x07'), 'ANSI/OSC shown as escapes');
    assert.ok(text.stdout.includes('\\u202egnp.exe\\u202c'), 'bidi overrides shown as escapes');
    assert.ok(text.stdout.includes('\\x9b31m'), 'the C1 CSI shown as an escape');
    const json = JSON.parse(run('analyze', file('payloads.jsonl'), '--json').stdout);
    assert.ok(json.sessions[0].model.includes(PAYLOADS.ansi), 'JSON keeps the value exactly');
  });

  it('simulate --workload on a 5,000-deep workload file says where and why', () => {
    const r = run('simulate', '--workload', file('deep-5000.workload.json'));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /deep-5000\.workload\.json: nests deeper than 512 levels at line 1; a workload never does/);
  });
});
