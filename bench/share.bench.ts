// Size and speed of what leaves the machine, against baselines measured in the same run
// (this machine is noisy, so ratios are what matter):
//   report    the standalone HTML report of a ~1,000-call session (the spotter Claude Code
//             session repeated with distinct message ids): its size (and gzipped), and the
//             time to build it against the time to parse the trace
//   redaction `agent-trace redact` throughput against reading + splitting + JSON.parse of
//             every line of the same file, and its first pass alone (the ids the trace
//             declares, read before redacting: docs/redaction.md)
// Run: node scripts/runBench.mjs share [copies]   (default 7 copies: 1,043 main-session calls)
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildReportTrace } from '../src/core/share/reportDocument';
import { parseTrace } from '../src/core/trace/parseTrace';
import { readReportAssets, redactReport, reportHtml } from '../src/node/htmlReport';
import { learnTraceIds, redactTraceFiles } from '../src/node/redactFiles';
import { createRedactor } from '../src/node/secretlintDetector';
import { readTraceFiles } from '../src/node/traceFiles';

const root = resolve(__dirname, '../..');
const copies = Number(process.argv[2] ?? 7);
const source = readFileSync(join(root, 'test/fixtures/claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'agent-trace-share-'));
const big = join(dir, 'long-session.jsonl');
writeFileSync(
  big,
  Array.from({ length: copies }, (_, i) => source.replaceAll('"id":"msg_', `"id":"msg_${i}_`)).join(''),
);
const mb = statSync(big).size / 2 ** 20;

async function main(): Promise<void> {
  let t = performance.now();
  const parsed = await parseTrace(await readTraceFiles(big));
  const parseMs = performance.now() - t;
  const calls = parsed.model.sessions[0]!.calls.length;
  t = performance.now();
  const redactor = createRedactor();
  const doc = await redactReport(
    {
      schema: 1,
      title: 'bench',
      generatedAt: new Date().toISOString(),
      generator: 'bench',
      traces: [buildReportTrace(parsed, 'long-session.jsonl')],
      redaction: null,
    },
    redactor,
  );
  const html = reportHtml(doc, await readReportAssets(root));
  const reportMs = performance.now() - t;
  const assets = await readReportAssets(root);
  const bytes = Buffer.byteLength(html);
  console.log(
    `report: ${calls} calls in the main session (${parsed.model.sessions.length} sessions), ${(bytes / 1024).toFixed(0)} KB (${(gzipSync(html).length / 1024).toFixed(0)} KB gzipped); page code ${(assets.script.length / 1024).toFixed(0)} KB, styles ${(assets.style.length / 1024).toFixed(0)} KB, data ${((bytes - assets.script.length - assets.style.length) / 1024).toFixed(0)} KB`,
  );
  console.log(
    `report: built in ${reportMs.toFixed(0)} ms = ${(reportMs / parseMs).toFixed(2)}× the ${parseMs.toFixed(0)} ms it took to parse the ${mb.toFixed(1)} MB trace`,
  );

  t = performance.now();
  let n = 0;
  for (const line of readFileSync(big, 'utf8').split('\n'))
    if (line) n += Object.keys(JSON.parse(line) as object).length > 0 ? 1 : 0;
  const baseMs = performance.now() - t;
  t = performance.now();
  await learnTraceIds([big], createRedactor());
  const learnMs = performance.now() - t;
  t = performance.now();
  await redactTraceFiles(big, join(dir, 'redacted.jsonl'), createRedactor());
  const redactMs = performance.now() - t;
  console.log(
    `redaction: ${(mb / (redactMs / 1000)).toFixed(1)} MB/s (${redactMs.toFixed(0)} ms for ${mb.toFixed(1)} MB, ${n} lines) = ${(redactMs / baseMs).toFixed(1)}× read + split + JSON.parse (${baseMs.toFixed(0)} ms)`,
  );
  console.log(
    `redaction's first pass (the trace's ids), included above: ${learnMs.toFixed(0)} ms = ${(learnMs / baseMs).toFixed(1)}× read + split + JSON.parse`,
  );
}

void main();
