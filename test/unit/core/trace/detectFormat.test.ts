import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FORMATS } from '../../../../src/core/trace/formats';
import type { FormatId } from '../../../../src/core/trace/model';
import { fixtures, needsShared, parseFile, sharedTrace } from '../../../support/helpers';

// Detection across formats: every sample is recognised as its own format and no
// reader claims another's files. Expected formats are what each file is (see
// test/fixtures/README.md and the shared traces' SOURCES.md), not what the code says.
const BUNDLED: Array<[string, FormatId]> = [
  ['canonical/hand-written-minimal.trace.jsonl', 'agent-trace'],
  ['claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl', 'claude-code'],
  ['claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl', 'claude-code'],
  ['claude-code/edit-retry-loop.jsonl', 'claude-code'],
  ['claude-code/user-rejections.jsonl', 'claude-code'],
  ['codex/tracelab-agents-md-0.114.jsonl', 'codex'],
  ['tracelab/round_trace.sanitized.jsonl', 'tracelab'],
  ['tracelab/round_trace.derived.jsonl', 'tracelab'],
  ['bailian/qwen_traceA_lite.rows01-14.jsonl', 'bailian'],
  ['mooncake/conversation_trace.head300.jsonl', 'mooncake'],
  ['otlp/trace.json', 'otlp'],
  ['otlp/agent-vllm.json', 'otlp'],
  ['otlp/agent-vllm.jsonl', 'otlp'],
  ['otlp/legacy-instrumentation-library.json', 'otlp'],
  ['otlp/vllm-only.jsonl', 'otlp'],
  ['openai-usage/vllm-responses.jsonl', 'openai-usage'],
  ['openai-usage/batch-output.jsonl', 'openai-usage'],
  ['openai-usage/conversations.jsonl', 'openai-usage'],
  ['swe-agent/pydicom__pydicom-1458.traj', 'swe-agent'],
  ['swe-agent/6e44b9__sweagenttestrepo-1c2844.traj', 'swe-agent'],
  ['mini-swe-agent/pvlib__pvlib-python-1072.traj.json', 'mini-swe-agent'],
  ['mini-swe-agent/github_issue.traj.json', 'mini-swe-agent'],
  ['atif/hand-built-v1.4.trajectory.json', 'atif'],
  ['atif/hand-built-v1.7-embedded-subagent.trajectory.json', 'atif'],
  ['vllm-bench/openai-infqps-concurrency2-Qwen3-8B-20260315-101500.json', 'vllm-bench'],
  ['vllm-bench/pretty-printed.json', 'vllm-bench'],
  ['vllm-bench/legacy-benchmark_serving.json', 'vllm-bench'],
];

const SHARED: Array<[string, FormatId]> = [
  ['claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl', 'claude-code'],
  ['codex/rtchess-exported-session.jsonl', 'codex'],
  ['tracelab/round_trace.sanitized.jsonl', 'tracelab'],
  ['bailian/qwen_traceA_lite.rows01-14.jsonl', 'bailian'],
  ['mooncake/conversation_trace.head3000.jsonl', 'mooncake'],
  ['otlp/trace.json', 'otlp'],
  ['swe-agent/pydicom__pydicom-1458.traj', 'swe-agent'],
];

describe('format detection on every sample', () => {
  it('every registered format has at least one bundled sample here', () => {
    const covered = new Set(BUNDLED.map(([, f]) => f));
    assert.deepEqual(FORMATS.map((f) => f.id).filter((id) => !covered.has(id)), []);
  });

  for (const [rel, expected] of BUNDLED) {
    it(`test/fixtures/${rel} → ${expected}`, async () => {
      const r = await parseFile(join(fixtures, rel));
      assert.equal(r.problem, null, r.problem?.message);
      assert.equal(r.model.format, expected, r.detection.evidence);
      assert.notEqual(r.detection.evidence, 'chosen by the user');
    });
  }

  for (const [rel, expected] of SHARED) {
    const path = sharedTrace(rel);
    it(`shared traces: ${rel} → ${expected}`, { skip: needsShared(path) }, async () => {
      const r = await parseFile(path!);
      assert.equal(r.model.format, expected, r.detection.evidence);
    });
  }
});
