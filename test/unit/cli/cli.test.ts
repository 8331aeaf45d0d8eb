import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { ensureBuilt, fixtures, repoRoot, SPOTTER } from '../../support/helpers';

const cli = join(repoRoot, 'dist/cli.js');

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('agent-trace CLI (the built dist/cli.js)', () => {
  before(() => ensureBuilt(cli));

  it("the README's first command: npx agent-trace analyze on the bundled sample (the bin must be executable)", () => {
    const r = spawnSync('npx', ['--no-install', 'agent-trace', 'analyze', 'samples/claude-code-sessions.trace.jsonl'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    // Counted from the sample's llm_call records: 48 calls; Σcached 4,997,060 / Σinput 5,062,122 = 98.7%.
    assert.match(r.stdout, /session ae4a77f8-aedd-4bc1-888f-c94edc91af04\n[^\n]*\n {2}LLM calls 48, user turns 2\n/);
    assert.match(r.stdout, /input 5,062,122 {2}cached 4,997,060/);
    assert.match(r.stdout, /cache hit rate \(Σcached\/Σinput\) +98\.7%/);
  });

  it('analyze --json follows the documented contract', () => {
    const r = run('analyze', SPOTTER, '--json');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(report), [
      'format',
      'detection',
      'detectionConfidence',
      'limitations',
      'problem',
      'cost',
      'sessions',
      'diagnostics',
    ]);
    assert.match(report.detection, /records look like Claude Code session log/);
    assert.equal(report.detectionConfidence, 'certain');
    assert.equal(report.limitations.length, 1);
    assert.equal(report.format, 'claude-code');
    const main = report.sessions[0];
    assert.deepEqual(Object.keys(main), [
      'id',
      'parentId',
      'role',
      'agent',
      'model',
      'llmCalls',
      'userTurns',
      'otherInputs',
      'apiErrors',
      'tokens',
      'tokensSource',
      'unattributedTokens',
      'cacheHitRate',
      'rawInputToOutput',
      'appendToOutput',
      'outputPerCall',
      'toolCalls',
      'retryLoops',
      'retryLoopSummary',
      'missCauses',
      'prefillShare',
      'intentByQuartile',
      'context',
      'compactions',
      'cost',
      'cacheTtl',
      'idealCache',
    ]);
    assert.deepEqual(Object.keys(main.tokens), ['input', 'cached', 'appended', 'cacheWrite', 'output']);
    assert.deepEqual(Object.keys(main.appendToOutput), ['mean', 'median', 'p90', 'aggregate']);
    // The tool-call and retry-loop fields, with figures from test/reference/claude_retry_loops.py and hand counts.
    assert.deepEqual(Object.keys(main.toolCalls), ['total', 'failed', 'denied', 'byTool', 'toolTimeMs', 'llmTimeMs']);
    assert.deepEqual(
      [
        main.toolCalls.total,
        main.toolCalls.failed,
        main.toolCalls.denied,
        main.toolCalls.byTool.Edit.total,
        main.toolCalls.byTool.Edit.failed,
      ],
      [162, 11, 0, 45, 2],
    );
    // spotter reports no session totals of its own: nothing is unattributed.
    assert.equal(main.unattributedTokens, null);
    assert.deepEqual(main.retryLoops, [
      {
        tool: 'Bash',
        target: 'git add && git commit',
        attempts: 7,
        callsSpanned: 32,
        escaped: false,
        file: 'ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl',
        firstLine: 1209,
        lastLine: 1463,
        firstError: main.retryLoops[0].firstError,
        wastedTokens: 7550,
        carryForwardTokens: 62358,
        wastedUsd: main.retryLoops[0].wastedUsd,
        carriedForwardUsd: main.retryLoops[0].carriedForwardUsd,
      },
    ]);
    assert.ok(main.retryLoops[0].wastedUsd > 0 && main.retryLoops[0].carriedForwardUsd > 0);
    assert.match(main.retryLoops[0].firstError, /^Pre-commit validation failed/);
    assert.deepEqual(main.missCauses, {
      'first-call': 0,
      'subagent-start': 0,
      compaction: 1,
      'idle-gap': 0,
      'prefix-change': 1,
      unexplained: 0,
    });
    assert.equal(main.prefillShare.estimated, true);
    assert.equal(main.intentByQuartile.length, 4);
    assert.equal(main.llmCalls, 149);
    assert.equal(main.tokens.cached, 11560832);
    assert.equal(report.sessions[1].parentId, main.id);
    // Diagnostic lines are 1-based in the contract: the undercount note sits on file line 141.
    const note = report.diagnostics.find((d: { message: string }) => /output_tokens/.test(d.message));
    assert.equal(note.line, 141);
  });

  it('analyze --json prices the trace: cost {totalUsd, byModel, byKind, unpricedCalls, priceSource}, per session and in total', () => {
    const report = JSON.parse(run('analyze', SPOTTER, '--json').stdout);
    // Totals: test/reference/cost_reference.mjs prints 2.9056013 for this trace (test/unit/core/cost/referenceCost.test.ts re-runs it).
    assert.deepEqual(Object.keys(report.cost), [
      'totalUsd',
      'byModel',
      'byKind',
      'pricedCalls',
      'unpricedCalls',
      'priceSource',
    ]);
    assert.ok(Math.abs(report.cost.totalUsd - 2.9056013) < 1e-9);
    assert.equal(report.cost.unpricedCalls, 0);
    assert.deepEqual(Object.keys(report.cost.byKind), [
      'input',
      'cacheRead',
      'cacheWrite5m',
      'cacheWrite1h',
      'output',
      'gpuTime',
    ]);
    assert.match(
      report.cost.priceSource,
      /^@pydantic\/genai-prices 0\.1\.8 \+ price-supplement\.json \(checked \d{4}-\d{2}-\d{2}\)$/,
    );
    const sessions = report.sessions.reduce(
      (sum: number, s: { cost: { totalUsd: number } }) => sum + s.cost.totalUsd,
      0,
    );
    assert.ok(
      Math.abs(sessions - report.cost.totalUsd) < 1e-12,
      'the sessions add up to the trace, sub-agents included',
    );
    const main = report.sessions[0];
    assert.deepEqual(Object.keys(main.cacheTtl), ['ranWithTtlMin', 'basis', 'actualUsd', 'sentence', 'replays']);
    assert.deepEqual(
      main.cacheTtl.replays.map((r: { ttlMin: number }) => r.ttlMin),
      [5, 60],
    );
    assert.match(
      main.cacheTtl.sentence,
      /^With 1-hour caching this session would have cost \$\d\.\d\d \(\+\d+%\); 0 calls re-wrote the cache after a gap longer than 5 min\.$/,
    );
    assert.deepEqual(
      main.idealCache.points.map((p: { ttlMin: number }) => p.ttlMin),
      [1, 5, 60],
    );
    assert.deepEqual(main.idealCache.points[0].published, { hitRate: 0.854, amplification: 18.9, approximate: false });
  });

  it('--prices adds a price, --what-if-ttl-min a TTL to replay; an unknown model is null with a diagnostic, never $0', () => {
    const priced = join(fixtures, 'canonical/priced-session.trace.jsonl');
    const plain = JSON.parse(run('analyze', priced, '--json').stdout);
    assert.equal(plain.cost.unpricedCalls, 1);
    assert.deepEqual(plain.cost.byModel['glm-4.6'], { usd: null, calls: 1, unpricedCalls: 1 });
    assert.ok(
      plain.diagnostics.some(
        (d: { message: string; severity: string }) =>
          d.severity === 'warning' && /no price for model "glm-4\.6"/.test(d.message),
      ),
    );
    const dir = mkdtempSync(join(tmpdir(), 'agent-trace-prices-'));
    try {
      const file = join(dir, 'prices.json');
      writeFileSync(file, JSON.stringify({ prices: [{ model: 'glm-4.6', input: 0.6, cacheRead: 0.11, output: 2.2 }] }));
      const r = run(
        'analyze',
        priced,
        '--json',
        '--prices',
        file,
        '--what-if-ttl-min',
        '30',
        '--what-if-ttl-write',
        '1.5',
      );
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout);
      // The hand-worked figures (test/unit/core/cost/handWorkedPricing.test.ts): 328,117.75 + 4,766.63 µ$.
      assert.ok(Math.abs(report.cost.totalUsd - 0.33288438) < 1e-12);
      assert.equal(report.cost.unpricedCalls, 0);
      assert.match(report.cost.priceSource, /\+ user prices \(prices\.json\)$/);
      assert.deepEqual(
        report.sessions[0].cacheTtl.replays.map((x: { ttlMin: number; writePrice: string }) => [
          x.ttlMin,
          x.writePrice,
        ]),
        [
          [5, '5-minute write price'],
          [60, '1-hour write price'],
          [30, '1.5× the input price'],
        ],
      );
      writeFileSync(file, JSON.stringify([{ model: 'glm-4.6', input: 'cheap', output: 1 }]));
      const bad = run('analyze', priced, '--prices', file);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--prices .*prices\.json: prices\[0\]\.input must be a number ≥ 0, got "cheap"/);
      assert.match(run('analyze', priced, '--prices', join(dir, 'none.json')).stderr, /no such file/);
      // A FIFO is refused at once (a plain read of one waits forever; run() would time out).
      const fifo = join(dir, 'prices.fifo.json');
      spawnSync('mkfifo', [fifo]);
      const piped = run('analyze', priced, '--prices', fifo);
      assert.equal(piped.code, 2);
      assert.match(piped.stderr, /--prices .*prices\.fifo\.json: .*named pipe \(FIFO\), not a regular file/);
      writeFileSync(file, '[\n{"model": "glm-4.6",,}\n]');
      assert.match(
        run('analyze', priced, '--prices', file).stderr,
        /--prices .*prices\.json: not valid JSON at line 2/,
      );
      assert.equal(run('analyze', priced, '--what-if-ttl-write', '2').code, 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('analyze prints cost, the TTL what-if and the ideal-cache comparison', () => {
    const r = run('analyze', join(fixtures, 'canonical/ttl-timeline.trace.jsonl'), '--what-if-ttl-min', '1.5');
    assert.equal(r.code, 0, r.stderr);
    // Figures of test/unit/core/cost/handWorkedTtl.test.ts.
    assert.match(r.stdout, /cost \$0\.069 \(6 calls priced\)/);
    assert.match(
      r.stdout,
      /5 min +\$0\.069 as logged +3 calls found the cache expired, 36,000 tokens written again \(\$0\.041 more than reading them\)/,
    );
    assert.match(r.stdout, /1 h +\$0\.063 −8% +1 call found the cache expired/);
    assert.match(r.stdout, /1 min 30 s +\$0\.081 \+17% +4 calls found the cache expired/);
    assert.match(
      r.stdout,
      /With 1-hour caching this session would have cost \$0\.063 \(−8%\); 3 calls re-wrote the cache after a gap longer than 5 min\./,
    );
    assert.match(
      r.stdout,
      /hit rate 1 min 21\.9% \[85\.4%\], 5 min 37\.5% \[≈94\.0%\], 1 h 73\.5% \[98\.6%\]; with no TTL 93\.8%/,
    );
    assert.match(
      r.stdout,
      /prefill amplification 1 min 12\.6× \[18\.9×\], 5 min 10\.1× \[7\.40×\], 1 h 4\.28× \[1\.80×\]/,
    );
  });

  it('analyze prints a readable report', () => {
    const r = run('analyze', SPOTTER);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /LLM calls 149, user turns 2/);
    assert.match(r.stdout, /cache hit rate \(Σcached\/Σinput\)\s+98\.4%/);
    assert.match(r.stdout, /sub-agent aac57f5/);
    assert.match(r.stdout, /cache hit rate \(Σcached\/Σinput\)\s+98\.4%\s+\[within published 84\.6%–99\.5%\]/);
    assert.match(r.stdout, /retry loops: 4\.7% of this session's calls were spent in 1 retry loop/);
    assert.match(r.stdout, /Bash on git add && git commit: 7 attempts over 32 calls, gave up/);
    assert.match(r.stdout, /cache misses: 1 compaction, 1 prefix change \(model switch\)/);
  });

  it('exit 1 with the message for a file that is not a trace; null fields in JSON', () => {
    const r = run('analyze', join(fixtures, 'bad-input/empty.trace.jsonl'), '--json');
    assert.equal(r.code, 1);
    const report = JSON.parse(r.stdout);
    assert.equal(report.format, null);
    assert.match(report.problem, /empty/);
  });

  it('exit 2 and usage for bad arguments; exit 1 for a missing file', () => {
    assert.equal(run('frobnicate', 'x').code, 2);
    assert.match(
      run('analyze', 'x', '--min-loop-attempts', '0').stderr,
      /--min-loop-attempts needs a whole number > 0, not "0"/,
    );
    const bad = run('analyze', 'x', '--format', 'nope');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown --format "nope"; one of: agent-trace, claude-code/);
    const missing = run('analyze', join(fixtures, 'no-such-file.jsonl'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no such file/);
  });

  it('--min-loop-attempts and --cache-ttl-min change the analysis', () => {
    const loops = (args: string[]) =>
      JSON.parse(run('analyze', SPOTTER, '--json', ...args).stdout).sessions[0].retryLoops.length;
    assert.equal(loops([]), 1);
    // The 7-attempt loop is the only run of 3 or more; at 8 there is none.
    assert.equal(loops(['--min-loop-attempts', '8']), 0);
  });

  it('convert writes a canonical trace that analyzes to the same figures', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-trace-cli-'));
    try {
      const out = join(dir, 'spotter.trace.jsonl');
      const c = run('convert', SPOTTER, '-o', out);
      assert.equal(c.code, 0, c.stderr);
      assert.match(readFileSync(out, 'utf8').split('\n')[0]!, /"type":"header","format":"agent-trace","version":1/);
      const a = JSON.parse(run('analyze', SPOTTER, '--json').stdout);
      const b = JSON.parse(run('analyze', out, '--json').stdout);
      assert.equal(b.format, 'agent-trace');
      // Lines differ by design: a loop points at the canonical file's own tool_call lines.
      type Loop = { file: string; firstLine: number; lastLine: number };
      const placeless = (sessions: Array<{ retryLoops: Loop[] }>) =>
        sessions.map((s) => ({
          ...s,
          retryLoops: s.retryLoops.map(({ file: _f, firstLine: _a, lastLine: _b, ...rest }) => rest),
        }));
      assert.deepEqual(placeless(b.sessions), placeless(a.sessions));
      const loop: Loop = b.sessions[0].retryLoops[0];
      const record = JSON.parse(readFileSync(out, 'utf8').split('\n')[loop.firstLine - 1]!);
      assert.deepEqual(
        [loop.file, record.type, record.name, record.isError],
        ['spotter.trace.jsonl', 'tool_call', 'Bash', true],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the context tokenizer is a bundle of its own, loaded from beside the bundles that count tokens', () => {
    // gpt-tokenizer's o200k_base (about 4 MB) was inlined in four bundles, and every start of them parsed it: each
    // export thread, the index worker in the extension host, every command of dist/cliCommands.js. Its special token
    // `<|reserved_200000|>` is gpt-tokenizer's own text: it is in the tokenizer's bundle and in none of the others.
    const marker = '<|reserved_200000|>';
    assert.ok(readFileSync(join(repoRoot, 'dist', 'contextTokenizer.js'), 'utf8').includes(marker));
    for (const bundle of ['cliCommands.js', 'teamExportWorker.js', 'indexWorker.js', 'traceWorker.js']) {
      const text = readFileSync(join(repoRoot, 'dist', bundle), 'utf8');
      assert.ok(!text.includes(marker), `${bundle} carries the tokenizer's ranks`);
      assert.ok(text.includes('./contextTokenizer.js'), `${bundle} does not load dist/contextTokenizer.js`);
    }
    // Without it beside the commands' bundle, a command that counts no token runs and `context` says what is missing;
    // with it, `context` prints what the whole dist prints.
    const dir = mkdtempSync(join(tmpdir(), 'agent-trace-cli-tokenizer-'));
    try {
      for (const f of ['cli.js', 'cliCommands.js']) copyFileSync(join(repoRoot, 'dist', f), join(dir, f));
      const trace = join(fixtures, 'claude-code/context-excerpt.jsonl');
      const inDir = (...args: string[]) =>
        spawnSync(process.execPath, [join(dir, 'cli.js'), ...args], { encoding: 'utf8' });
      const cost = inDir('cost', trace);
      assert.equal(cost.status, 0, cost.stderr);
      assert.equal(cost.stdout, run('cost', trace).stdout);
      const missing = inDir('context', trace);
      assert.notEqual(missing.status, 0);
      assert.match(missing.stderr, /contextTokenizer\.js/);
      copyFileSync(join(repoRoot, 'dist', 'contextTokenizer.js'), join(dir, 'contextTokenizer.js'));
      const counted = inDir('context', trace, '--json');
      assert.equal(counted.status, 0, counted.stderr);
      assert.equal(counted.stdout, run('context', trace, '--json').stdout);
      assert.match(counted.stdout, /o200k_base/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("analyze and convert load their own bundle only: they run with the other commands' bundle absent", () => {
    // The launcher (dist/cli.js) loads dist/cliAnalyze.js for them; dist/cliCommands.js brings
    // DuckDB, Parquet, OTLP, secretlint and the tokenizer, which analyze never runs. A copy of
    // dist without it must give the same output, and a command of that bundle must fail there.
    const dir = mkdtempSync(join(tmpdir(), 'agent-trace-cli-split-'));
    try {
      for (const f of ['cli.js', 'cliAnalyze.js']) copyFileSync(join(repoRoot, 'dist', f), join(dir, f));
      const alone = spawnSync(process.execPath, [join(dir, 'cli.js'), 'analyze', SPOTTER, '--json'], {
        encoding: 'utf8',
      });
      const whole = run('analyze', SPOTTER, '--json');
      assert.equal(alone.status, 0, alone.stderr);
      assert.equal(alone.stdout, whole.stdout);
      const out = join(dir, 'out.trace.jsonl');
      const converted = spawnSync(process.execPath, [join(dir, 'cli.js'), 'convert', SPOTTER, '-o', out], {
        encoding: 'utf8',
      });
      assert.equal(converted.status, 0, converted.stderr);
      assert.match(converted.stderr, /redaction: /);
      const other = spawnSync(process.execPath, [join(dir, 'cli.js'), 'cost', SPOTTER], { encoding: 'utf8' });
      assert.notEqual(other.status, 0);
      assert.match(other.stderr, /cliCommands\.js/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
