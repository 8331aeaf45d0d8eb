import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createPriceBook } from '../../../src/core/cost/priceBook';
import type { PriceQuery } from '../../../src/core/cost/costTypes';
import { readUserPrices, UserPriceIndex } from '../../../src/core/cost/userPrices';
import type { UserPriceEntry } from '../../../src/core/cost/userPrices';
import { deepText } from '../../support/hostileCorpus';
import { ensureBuilt, repoRoot } from '../../support/helpers';

// Round two of the hostile probe, the CLI's own files: an output that is a FIFO blocked
// `simulate --emit-workload` (and `/` printed a raw EISDIR); a --prices file nested too deep
// was said to be a workload; a price list of 300,000 entries took 88 s (every entry tried
// for every call, its pattern compiled each time).

const cli = join(repoRoot, 'dist/cli.js');
const SAMPLE = join(repoRoot, 'samples/claude-code-sessions.trace.jsonl');
const dir = mkdtempSync(join(tmpdir(), 'agent-trace-cli-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function run(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  // A blocked write would hang: the timeout turns that into a failure (status null).
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('outputs that are not regular files are refused, by name, before any work', () => {
  before(() => ensureBuilt(cli));
  const fifo = join(dir, 'out.fifo');
  before(() => execFileSync('mkfifo', [fifo]));

  for (const [what, args] of [
    ['simulate --emit-workload', ['simulate', SAMPLE, '--emit-workload']],
    ['convert -o', ['convert', SAMPLE, '-o']],
    ['export -o', ['export', SAMPLE, '--to', 'mooncake', '-o']],
    ['report -o', ['report', SAMPLE, '-o']],
  ] as const) {
    const flag = what.split(' ')[1]!;
    it(`${what} a FIFO: exit 2 at once, the FIFO named, nothing written`, () => {
      const r = run(...args, fifo);
      assert.equal(r.code, 2, `exit ${r.code}: ${r.stderr}`);
      assert.match(
        r.stderr,
        new RegExp(
          `^agent-trace: ${flag} ${fifo.replace(/[.]/g, '\\.')} is a named pipe \\(FIFO\\), not a regular file: nothing is written there\\n`,
        ),
      );
    });
    it(`${what} /: exit 2, said in words (no raw EISDIR)`, () => {
      const r = run(...args, '/');
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(`^agent-trace: ${flag} / is a folder, not a regular file: nothing is written there\\n`),
      );
      assert.doesNotMatch(r.stderr, /EISDIR/);
    });
  }

  it('a regular file is still written (and an existing one replaced)', () => {
    const out = join(dir, 'w.json');
    writeFileSync(out, 'x'.repeat(100_000));
    const r = run('simulate', SAMPLE, '--emit-workload', out);
    assert.equal(r.code, 0, r.stderr);
    const w = JSON.parse(readFileSync(out, 'utf8')) as { sessions: Array<{ calls: unknown[] }> };
    assert.equal(w.sessions[0]!.calls.length, 48);
  });
});

describe('--prices: a file nested too deep is called a price list', () => {
  before(() => ensureBuilt(cli));

  it('names the price list, not a workload', () => {
    const deep = join(dir, 'deep-prices.json');
    writeFileSync(deep, `[{"model": "m", "input": 1, "output": 2, "note": ${deepText(5000)}}]\n`);
    const r = run('analyze', SAMPLE, '--prices', deep);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^agent-trace: --prices .*deep-prices\.json: nests deeper than 512 levels at line 1; a price list never does\n/,
    );
    assert.doesNotMatch(r.stderr, /workload/);
  });
});

describe('a price list of 300,000 entries: each call tries only the entries that name its model', () => {
  const entries: unknown[] = Array.from({ length: 300_000 }, (_, i) => ({ model: `model-${i}`, input: 1, output: 2 }));
  // Two entries name claude-opus-4-5: a pattern early on, limited to a service tier the calls do not report, and an exact name near the end.
  entries[10] = { model: 'claude-opus-*', serviceTier: 'priority', input: 100, output: 100 };
  entries[299_990] = { model: 'Claude-Opus-4-5-20251101', input: 3, output: 30 };
  const user = readUserPrices(entries);

  it('reads every entry', () => {
    assert.deepEqual(user.problems, []);
    assert.equal(user.entries.length, 300_000);
  });

  it('the lookup asks about 2 entries, not 300,000, and the first that fits wins', () => {
    const index = new UserPriceIndex(user.entries);
    const asked: UserPriceEntry[] = [];
    const found = index.first('claude-opus-4-5-20251101', (e) => (asked.push(e), e.serviceTier === null));
    assert.equal(asked.length, 2);
    assert.equal(found?.model, 'Claude-Opus-4-5-20251101');
    // A priority call takes the pattern: it comes first in the list.
    assert.equal(
      index.first('claude-opus-4-5-20251101', (e) => e.serviceTier === null || e.serviceTier === 'priority')?.model,
      'claude-opus-*',
    );
    assert.equal(
      index.first('gpt-5', () => true),
      undefined,
    );
  });

  it('the price book quotes with it: the user price for that model, list prices for the rest', () => {
    const book = createPriceBook({ user, userLabel: 'big.json' });
    const query = (model: string, serviceTier: string | null): PriceQuery =>
      ({
        model,
        timeMs: Date.UTC(2026, 0, 1),
        serviceTier,
        inferenceGeo: null,
        providerHint: null,
        selfHosted: false,
        inputTokens: 1000,
      }) as PriceQuery;
    const q = book.quote(query('claude-opus-4-5-20251101', null));
    assert.equal(q.kind, 'tokens');
    assert.equal(q.kind === 'tokens' ? q.priceId : null, 'user: Claude-Opus-4-5-20251101');
    const p = book.quote(query('claude-opus-4-5-20251101', 'priority'));
    assert.equal(p.kind === 'tokens' ? p.priceId : null, 'user: claude-opus-*');
    const other = book.quote(query('claude-haiku-4-5-20251001', null));
    assert.equal(other.kind === 'tokens' ? other.origin : null, 'genai-prices');
  });
});
