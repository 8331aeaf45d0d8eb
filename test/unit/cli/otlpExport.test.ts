import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createRequire } from 'node:module';
import { ensureBuilt, repoRoot, SPOTTER } from '../../support/helpers';
import { TEAM_SAMPLES } from '../../support/teamSamples';

const cli = join(repoRoot, 'dist/cli.js');

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The CLI without blocking this process (a test server here must answer it). */
function runAsync(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args]);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

interface KeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string; doubleValue?: number; boolValue?: boolean };
}
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano?: string;
  endTimeUnixNano?: string;
  attributes: KeyValue[];
  status?: { code: number; message?: string };
}
interface Request {
  resourceSpans: Array<{
    resource: { attributes: KeyValue[] };
    scopeSpans: Array<{ scope: { name: string }; spans: Span[] }>;
  }>;
}

function requests(file: string): Request[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Request);
}

function spansOf(reqs: readonly Request[]): Span[] {
  return reqs.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)));
}

function attr(span: Span, key: string): string | number | boolean | undefined {
  const v = span.attributes.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue));
}

const op = (span: Span) => attr(span, 'gen_ai.operation.name');

/** Equal dollars: the same calls summed in another order differ in the last bits only. */
function sameUsd(actual: number | null, expected: number | null, what: string): void {
  if (expected === null || actual === null) return assert.equal(actual, expected, what);
  assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${actual} ≠ ${expected}`);
}

interface AnalyzedSession {
  id: string;
  parentId: string | null;
  model: string | null;
  llmCalls: number;
  tokensSource: string;
  tokens: {
    input: number | null;
    cached: number | null;
    appended: number | null;
    cacheWrite: number | null;
    output: number | null;
  };
  toolCalls: { total: number; failed: number };
  cost: { totalUsd: number | null; unpricedCalls: number };
}

function analyze(file: string): AnalyzedSession[] {
  const r = run('analyze', file, '--json');
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { sessions: AnalyzedSession[] }).sessions;
}

/** A message type of protobufjs's generated static code (the package types its root only as a Root). */
interface MessageType {
  fromObject(object: Record<string, unknown>): unknown;
  verify(message: unknown): string | null;
  encode(message: unknown): { finish(): Uint8Array };
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>;
}

/**
 * The OTLP protobuf definitions as OpenTelemetry JS generates them (opentelemetry-proto's
 * trace and collector service messages): a devDependency, pinned to the last release that
 * ships the generated protobufjs root (docs/reference/otlp.md says why).
 */
const otlpRoot = createRequire(join(repoRoot, 'package.json'))(
  '@opentelemetry/otlp-transformer/build/src/generated/root.js',
) as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: MessageType } } } } };
};
const ExportTraceServiceRequest = otlpRoot.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** Maps the id fields of a request (OTLP/JSON writes them as hex, protobuf holds bytes). */
function mapIds(value: unknown, f: (id: unknown) => unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => mapIds(v, f));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, ID_FIELDS.has(k) ? f(v) : mapIds(v, f)]));
}

describe('agent-trace export --to otlp (the built dist/cli.js)', () => {
  let dir: string;
  before(() => {
    ensureBuilt(cli);
    dir = mkdtempSync(join(tmpdir(), 'agent-trace-otlp-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the hand-counted sample as GenAI spans: 48 chat spans of conversation ae4a77f8 with Σinput 5,062,122 (cached included) and Σcache reads 4,997,060; each chat under its invoke_agent, each tool under its chat, the compactor under its session', () => {
    const out = join(dir, 'sample.otlp.jsonl');
    const r = run('export', '--to', 'otlp', '-o', out, join(repoRoot, 'samples/claude-code-sessions.trace.jsonl'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /3 sessions, 90 LLM calls, 101 tool calls from 1 trace as 194 spans/);
    const spans = spansOf(requests(out));
    const chats = spans.filter(
      (s) => op(s) === 'chat' && attr(s, 'gen_ai.conversation.id') === 'ae4a77f8-aedd-4bc1-888f-c94edc91af04',
    );
    assert.equal(chats.length, 48);
    assert.equal(
      chats.reduce((n, s) => n + Number(attr(s, 'gen_ai.usage.input_tokens')), 0),
      5062122,
    );
    assert.equal(
      chats.reduce((n, s) => n + Number(attr(s, 'gen_ai.usage.cache_read.input_tokens')), 0),
      4997060,
    );
    assert.ok(
      chats.every(
        (s) =>
          s.kind === 3 &&
          s.name === `chat ${String(attr(s, 'gen_ai.request.model'))}` &&
          attr(s, 'gen_ai.provider.name') === 'anthropic',
      ),
    );
    // Per session one invoke_agent; each chat under its session's, each execute_tool under its chat.
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const agents = spans.filter((s) => op(s) === 'invoke_agent');
    assert.equal(agents.length, 3);
    for (const s of spans.filter((x) => op(x) === 'chat')) assert.equal(op(byId.get(s.parentSpanId!)!), 'invoke_agent');
    for (const s of spans.filter((x) => op(x) === 'execute_tool')) assert.equal(op(byId.get(s.parentSpanId!)!), 'chat');
    // The compactor (acompact-946d2b) is a child invoke_agent of the main session, in its trace.
    const compactor = agents.find((s) => attr(s, 'gen_ai.conversation.id') === 'acompact-946d2b')!;
    const main = agents.find((s) => attr(s, 'gen_ai.conversation.id') === 'ae4a77f8-aedd-4bc1-888f-c94edc91af04')!;
    assert.deepEqual([compactor.parentSpanId, compactor.traceId], [main.spanId, main.traceId]);
    // Session totals are not gen_ai.usage.* (a backend summing every span would count them twice).
    assert.ok(agents.every((s) => s.attributes.every((a) => !a.key.startsWith('gen_ai.usage.'))));
    assert.equal(attr(main, 'agent_trace.session.input_tokens'), 5062122);
  });

  it("a sub-agent hangs under the Task call that started it (SPOTTER's aac57f5, started by toolu_01Hf8v1Za7y4af8VUwSR4CXU), in its parent's trace", () => {
    const out = join(dir, 'spotter.otlp.jsonl');
    assert.equal(run('export', '--to', 'otlp', '-o', out, SPOTTER).code, 0);
    const spans = spansOf(requests(out));
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const sub = spans.find((s) => op(s) === 'invoke_agent' && attr(s, 'gen_ai.conversation.id') === 'aac57f5')!;
    const task = byId.get(sub.parentSpanId!)!;
    const main = spans.find(
      (s) => op(s) === 'invoke_agent' && attr(s, 'gen_ai.conversation.id') === 'ae4a77f8-aedd-4bc1-888f-c94edc91af04',
    )!;
    assert.deepEqual(
      [op(task), attr(task, 'gen_ai.tool.name'), attr(task, 'gen_ai.tool.call.id'), task.traceId],
      ['execute_tool', 'Task', 'toolu_01Hf8v1Za7y4af8VUwSR4CXU', main.traceId],
    );
    assert.equal(spans.filter((s) => op(s) === 'chat' && s.parentSpanId === sub.spanId).length, 3);
  });

  it('a failed tool call has status ERROR with its error text; ids are hex of 16 and 8 bytes; a re-export writes the same bytes', () => {
    const a = join(dir, 'spotter-a.jsonl');
    const b = join(dir, 'spotter-b.jsonl');
    assert.equal(run('export', '--to', 'otlp', '-o', a, SPOTTER).code, 0);
    assert.equal(run('export', '--to', 'otlp', '-o', b, SPOTTER).code, 0);
    assert.equal(readFileSync(a, 'utf8'), readFileSync(b, 'utf8'));
    const spans = spansOf(requests(a));
    assert.ok(
      spans.every(
        (s) =>
          /^[0-9a-f]{32}$/.test(s.traceId) &&
          /^[0-9a-f]{16}$/.test(s.spanId) &&
          (s.parentSpanId === undefined || /^[0-9a-f]{16}$/.test(s.parentSpanId)),
      ),
    );
    assert.equal(new Set(spans.map((s) => s.spanId)).size, spans.length);
    const failed = spans.filter((s) => op(s) === 'execute_tool' && s.status?.code === 2);
    const analyzed = analyze(SPOTTER);
    assert.equal(
      failed.length,
      analyzed.reduce((n, s) => n + s.toolCalls.failed, 0),
    );
    assert.ok(
      failed.every(
        (s) =>
          attr(s, 'agent_trace.is_error') === true &&
          attr(s, 'error.type') !== undefined &&
          (s.status!.message ?? '').length > 0,
      ),
    );
    assert.ok(
      spans
        .filter((s) => op(s) === 'execute_tool' && s.status === undefined)
        .every((s) => attr(s, 'error.type') === undefined),
    );
  });

  it("round trip on real samples: the OTLP reader reads the export back to analyze --json's figures per session", () => {
    let checked = 0;
    for (const file of TEAM_SAMPLES) {
      const name = relative(repoRoot, file);
      const out = join(dir, `rt-${name.replace(/\W+/g, '_')}.otlp.jsonl`);
      const x = run('export', '--to', 'otlp', '-o', out, file);
      assert.equal(x.code, 0, `${name}: ${x.stderr}`);
      const original = analyze(file);
      const back = new Map(analyze(out).map((s) => [s.id, s]));
      assert.equal(back.size, original.length, `${name}: sessions`);
      for (const s of original) {
        const what = `${name} session ${s.id}`;
        const b = back.get(s.id);
        assert.ok(b, `${what}: not read back (read: ${[...back.keys()].join(', ')})`);
        assert.deepEqual(
          [b.llmCalls, b.model, b.parentId],
          [s.llmCalls, s.model, s.parentId],
          `${what}: calls, model, parent`,
        );
        // Session totals the trace reports apart from its calls (SWE-agent) have no call to ride on: their calls carry no tokens either way.
        if (s.tokensSource === 'calls') assert.deepEqual(b.tokens, s.tokens, `${what}: tokens`);
        else assert.equal(b.tokens.input, null, `${what}: no call tokens`);
        assert.deepEqual(
          [b.toolCalls.total, b.toolCalls.failed],
          [s.toolCalls.total, s.toolCalls.failed],
          `${what}: tool calls`,
        );
        if (s.tokensSource === 'calls') sameUsd(b.cost.totalUsd, s.cost.totalUsd, `${what}: cost`);
        assert.equal(b.cost.unpricedCalls, s.cost.unpricedCalls, `${what}: unpriced calls`);
        checked += 1;
      }
    }
    assert.ok(checked >= 19, `only ${checked} sessions checked`);
  });

  it("every request is an ExportTraceServiceRequest by the OTLP protobuf definitions (@opentelemetry/otlp-transformer's generated root): through protobuf and back unchanged", () => {
    const out = join(dir, 'schema.otlp.jsonl');
    assert.equal(run('export', '--to', 'otlp', '-o', out, '--max-request-bytes', '200000', ...TEAM_SAMPLES).code, 0);
    const lines = readFileSync(out, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    assert.ok(lines.length > 3, `${lines.length} requests`);
    for (const line of lines) {
      const json = JSON.parse(line) as unknown;
      // fromObject drops a field the definitions do not have and converts a value of the wrong type: either changes the round trip.
      const message = ExportTraceServiceRequest.fromObject(
        mapIds(json, (id) => Buffer.from(String(id), 'hex')) as Record<string, unknown>,
      );
      assert.equal(ExportTraceServiceRequest.verify(message), null);
      const decoded = ExportTraceServiceRequest.decode(ExportTraceServiceRequest.encode(message).finish());
      const plain = ExportTraceServiceRequest.toObject(decoded, { longs: String, enums: Number, bytes: Array });
      assert.deepEqual(
        mapIds(plain, (id) => Buffer.from(id as number[]).toString('hex')),
        json,
      );
    }
    // The check bites: a misspelt field, and an int64 written as a JSON number, do not come back the same.
    const mutations: Array<(span: Span & Record<string, unknown>) => void> = [
      (span) => (span['startTimeUnixNanos'] = span.startTimeUnixNano),
      (span) =>
        ((span.attributes.find((a) => a.value.intValue !== undefined)!.value as Record<string, unknown>)['intValue'] =
          5),
    ];
    for (const mutate of mutations) {
      const bad = JSON.parse(lines[0]!) as Request;
      mutate(bad.resourceSpans[0]!.scopeSpans[0]!.spans[0]! as Span & Record<string, unknown>);
      const badMessage = ExportTraceServiceRequest.fromObject(
        mapIds(bad, (id) => Buffer.from(String(id), 'hex')) as Record<string, unknown>,
      );
      const plain = ExportTraceServiceRequest.toObject(badMessage, { longs: String, enums: Number, bytes: Array });
      assert.notDeepEqual(
        mapIds(plain, (id) => Buffer.from(id as number[]).toString('hex')),
        bad,
      );
    }
  });

  it("POSTs to an OTLP/HTTP endpoint: /v1/traces, application/json, the headers given, in batches under the limit whose bodies are the file's lines", async () => {
    const received: Array<{ url: string; type: string | undefined; auth: string | undefined; body: string }> = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push({
          url: req.url ?? '',
          type: req.headers['content-type'],
          auth: req.headers['authorization'],
          body,
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const file = join(dir, 'posted.otlp.jsonl');
      const r = await runAsync(
        'export',
        '--to',
        'otlp',
        '--endpoint',
        `http://127.0.0.1:${port}`,
        '--header',
        'Authorization=Basic dGVzdDp0ZXN0',
        '--max-request-bytes',
        '100000',
        '-o',
        file,
        SPOTTER,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(`http://127\\.0\\.0\\.1:${port}/v1/traces: .* sent in ${received.length} requests`),
      );
      assert.ok(received.length > 1, `${received.length} requests`);
      assert.ok(
        received.every(
          (q) => q.url === '/v1/traces' && q.type === 'application/json' && q.auth === 'Basic dGVzdDp0ZXN0',
        ),
      );
      assert.ok(received.every((q) => Buffer.byteLength(q.body) <= 100000));
      assert.equal(received.map((q) => q.body + '\n').join(''), readFileSync(file, 'utf8'));
      // Split or not, the same spans: the batches hold what one request would.
      const whole = join(dir, 'whole.otlp.jsonl');
      assert.equal(run('export', '--to', 'otlp', '-o', whole, SPOTTER).code, 0);
      assert.equal(requests(whole).length, 1);
      assert.deepEqual(spansOf(received.map((q) => JSON.parse(q.body) as Request)), spansOf(requests(whole)));
    } finally {
      server.close();
    }
  });

  it('a refused or unreachable endpoint: exit status 1 and a message that says which and why', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(401, { 'content-type': 'text/plain' }).end('missing credentials\u001b[31m'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const refused = await runAsync(
        'export',
        '--to',
        'otlp',
        '--endpoint',
        `http://127.0.0.1:${port}/api/public/otel`,
        SPOTTER,
      );
      assert.equal(refused.code, 1);
      assert.match(
        refused.stderr,
        new RegExp(
          `http://127\\.0\\.0\\.1:${port}/api/public/otel/v1/traces refused the request: HTTP 401 Unauthorized \\(check the --header with the credentials\\): missing credentials`,
        ),
      );
      assert.ok(!refused.stderr.includes('\u001b'), 'an escape sequence from the receiver reached the terminal');
    } finally {
      await new Promise((r) => server.close(r));
    }
    // The port is closed now: nothing listens.
    const unreachable = await runAsync(
      'export',
      '--to',
      'otlp',
      '--endpoint',
      `http://127.0.0.1:${port}/v1/traces`,
      SPOTTER,
    );
    assert.equal(unreachable.code, 1);
    assert.match(
      unreachable.stderr,
      new RegExp(`could not reach http://127\\.0\\.0\\.1:${port}/v1/traces \\(ECONNREFUSED\\)`),
    );
    assert.match(run('export', '--to', 'otlp', SPOTTER).stderr, /needs -o FILE or --endpoint URL/);
  });

  it('redacts trace text and hashes the user as the Parquet export does; --no-redact and --plain-names keep them', () => {
    const planted = join(dir, 'planted.jsonl');
    const text = readFileSync(SPOTTER, 'utf8')
      .replaceAll('/home/USER/projects', '/home/jdoe/projects')
      .replaceAll('"command":"bd show', '"command":"OPENAI_API_KEY=abcdEFGH12345678 bd show');
    assert.ok(text.includes('abcdEFGH12345678'));
    writeFileSync(planted, text);
    const out = join(dir, 'redacted.otlp.jsonl');
    const r = run('export', '--to', 'otlp', '-o', out, '--user', 'jdoe', '--machine', 'jdoe-laptop', planted);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /redaction: removed \d+ values: env-assignment \d+.*home-user \d+/);
    const written = readFileSync(out, 'utf8');
    assert.ok(!written.includes('jdoe') && !written.includes('abcdEFGH12345678'));
    const resource = requests(out)[0]!.resourceSpans[0]!.resource.attributes;
    assert.match(String(resource.find((a) => a.key === 'user.hash')?.value.stringValue), /^[0-9a-f]{16}$/);
    const kept = join(dir, 'kept.otlp.jsonl');
    assert.match(
      run('export', '--to', 'otlp', '-o', kept, '--no-redact', '--plain-names', '--user', 'jdoe', planted).stderr,
      /redaction: off/,
    );
    const keptText = readFileSync(kept, 'utf8');
    assert.ok(
      keptText.includes('abcdEFGH12345678') && keptText.includes('{"key":"user.name","value":{"stringValue":"jdoe"}}'),
    );
  });
});
