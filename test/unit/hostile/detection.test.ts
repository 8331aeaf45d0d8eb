import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DETECTION_RECORDS } from '../../../src/core/trace/detectFormat';
import { parseTrace, TraceParse } from '../../../src/core/trace/parseTrace';
import { claudeRecords, HOSTILE_DIR } from '../../support/hostileCorpus';
import { ensureBuilt, parseFile, repoRoot } from '../../support/helpers';

// Round two of the hostile probe, detection: a file whose first records match no format is
// decided on its sample once (it was decided again on every later record, over a growing
// buffer: 40,000 lines took 12–18 s), and a file with a few real records among many that no
// format knows is read for those records, each other one named with its line (it was refused
// whole since detection stopped letting a weak match win).

const cli = join(repoRoot, 'dist/cli.js');
const temp: string[] = [];
after(() => {
  for (const d of temp) rmSync(d, { recursive: true, force: true });
});

/** 40,000 records no format knows: the case. */
const UNRECOGNISED = '{"a":1}\n'.repeat(40_000);

describe('a file whose records match no format is decided once, on its sample', () => {
  it('TraceParse stops taking bytes once the sample is decided: the rest of the file is never read', () => {
    const bytes = new TextEncoder().encode(UNRECOGNISED);
    const parse = new TraceParse(['a.jsonl']);
    let pushes = 0;
    for (let at = 0; at < bytes.length; at += 4096) {
      pushes += 1;
      if (!parse.push(0, bytes.subarray(at, at + 4096))) break;
    }
    // The sample (DETECTION_RECORDS lines of 8 bytes) is in the first 4 KiB chunk.
    assert.ok(DETECTION_RECORDS * 8 < 4096);
    assert.equal(pushes, 1, 'reading stops at the chunk that completes the sample');
    assert.equal(parse.stopped, true);
    const parsed = parse.snapshot();
    assert.equal(parsed.problem?.kind, 'unknown-format');
    assert.match(parsed.problem!.message, /none of the first 50 records matched a known format \(keys seen: "a"\)/);
  });

  it('parseTrace asks its source for no more chunks after the sample (a stream of 79 chunks: one read)', async () => {
    const bytes = new TextEncoder().encode(UNRECOGNISED);
    let served = 0;
    async function* chunks(): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < bytes.length; at += 4096) {
        served += 1;
        yield bytes.subarray(at, at + 4096);
      }
    }
    const parsed = await parseTrace([{ key: 'a.jsonl', bytes: chunks() }]);
    assert.equal(parsed.problem?.kind, 'unknown-format');
    assert.equal(Math.ceil(bytes.length / 4096), 79);
    assert.equal(served, 1);
  });

  it("the same file with its records known after the sample is still refused: the decision is the sample's, as before", async () => {
    // 60 unknown records, then the real log: detection looks at the first 50 records only.
    const text =
      '{"a":1}\n'.repeat(60) +
      claudeRecords()
        .map((r) => JSON.stringify(r))
        .join('\n') +
      '\n';
    const dir = mkdtempSync(join(tmpdir(), 'agent-trace-detect-'));
    temp.push(dir);
    writeFileSync(join(dir, 'late.jsonl'), text);
    const parsed = await parseFile(join(dir, 'late.jsonl'));
    assert.equal(parsed.problem?.kind, 'unknown-format');
  });
});

describe('a few real records among many that no format knows: read them, name the others with their lines', () => {
  // test/fixtures/hostile/few-valid-records.jsonl: the M-Claude log's first 40 records, each followed by three writer lines.
  const FILE = join(HOSTILE_DIR, 'few-valid-records.jsonl');
  const real = claudeRecords().slice(0, 40);
  /** 0-based lines of the writer's records: the three after each real one. */
  const writerLines = real.flatMap((_, i) => [4 * i + 1, 4 * i + 2, 4 * i + 3]);

  it('is read as Claude Code (weak), with the calls of the 40 real records', async () => {
    const p = await parseFile(FILE);
    assert.equal(p.problem, null, p.problem?.message);
    assert.equal(p.model.format, 'claude-code');
    assert.equal(p.detection.confidence, 'weak');
    // 13 of the first 50 records are the log's (records 1, 5, 9, …, 49): a quarter, below the half a format needs to claim a file outright.
    assert.match(
      p.detection.evidence,
      /^only 13 of the first 50 records look like Claude Code session log; read as one, the 120 other records skipped$/,
    );
    // The calls: the distinct assistant message ids among the 40 real records (the reader's rule, applied to the raw JSON).
    const ids = new Set(real.filter((r) => r['type'] === 'assistant').map((r) => (r['message'] as { id: string }).id));
    assert.equal(p.model.sessions[0]!.calls.length, ids.size);
    assert.ok(ids.size >= 10);
  });

  it('names each skipped record with its line, and says once what was done', async () => {
    const p = await parseFile(FILE);
    const skipped = p.model.diagnostics.filter((d) =>
      /^Record does not look like a Claude Code session log record \(keys "level", "msg", "pid"\); skipped\.$/.test(
        d.message,
      ),
    );
    assert.deepEqual(
      skipped.map((d) => d.line),
      writerLines,
    );
    const summary = p.model.diagnostics.filter(
      (d) => d.line === -1 && /^Read as Claude Code session log though only 13 of the first 50 records/.test(d.message),
    );
    assert.equal(summary.length, 1);
    assert.match(
      summary[0]!.message,
      /the 120 that do not are skipped\. If this is another format, choose it \(--format\)\.$/,
    );
  });

  it('a weak match that gives no call or prompt is still refused, naming --format (a log with two look-alike lines)', async () => {
    const lines = [
      ...Array.from({ length: 6 }, (_, i) =>
        JSON.stringify({ level: 'info', msg: `started worker ${i}`, port: 8000 + i }),
      ),
      JSON.stringify({ sessionId: 's', uuid: 'u1', type: 'user' }),
      JSON.stringify({ sessionId: 's', uuid: 'u2', type: 'user' }),
    ];
    const dir = mkdtempSync(join(tmpdir(), 'agent-trace-detect-'));
    temp.push(dir);
    writeFileSync(join(dir, 'mixed.jsonl'), lines.join('\n'));
    const p = await parseFile(join(dir, 'mixed.jsonl'));
    assert.equal(p.model.format, null);
    assert.equal(p.problem?.kind, 'unknown-format');
    assert.match(
      p.problem!.message,
      /only 2 of the first 8 records look like Claude Code session log, too few to read the file as one .*--format claude-code/,
    );
    assert.ok(
      !p.model.diagnostics.some((d) => /^Record does not look like/.test(d.message)),
      'nothing said about records of a file that was not read',
    );
  });

  describe('through the CLI', () => {
    before(() => ensureBuilt(cli));

    it('analyze says weak and prints the calls', () => {
      const r = spawnSync(process.execPath, [cli, 'analyze', FILE], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr);
      assert.match(
        r.stdout,
        /^few-valid-records\.jsonl: claude-code \(weak: only 13 of the first 50 records look like Claude Code session log; read as one, the 120 other records skipped\)/,
      );
    });

    it('analyze of the 40,000 unrecognised lines says what it saw', () => {
      const dir = mkdtempSync(join(tmpdir(), 'agent-trace-detect-'));
      temp.push(dir);
      writeFileSync(join(dir, 'a.jsonl'), UNRECOGNISED);
      const r = spawnSync(process.execPath, [cli, 'analyze', join(dir, 'a.jsonl')], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(r.status, 1);
      assert.match(
        r.stdout,
        /^a\.jsonl: unreadable \(none of the first 50 records matched a known format \(keys seen: "a"\)\)/,
      );
    });
  });
});
