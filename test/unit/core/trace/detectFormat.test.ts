import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FORMATS } from '../../../../src/core/trace/formats';
import type { FormatId } from '../../../../src/core/trace/model';
import {
  fixtures,
  LOCAL_ONLY,
  localSample,
  needsShared,
  parseFile,
  parseText,
  sharedTrace,
} from '../../../support/helpers';

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
  ['claude-code/m-claude/3cfce0ff-0725-47be-a572-f8af8122b71e.jsonl', 'claude-code'],
  ['claude-code/m-claude/abc757d1-3da3-42fb-bb7b-ffa293a4ba29.jsonl', 'claude-code'],
  ['claude-code/m-claude/agent-abc3cb6.jsonl', 'claude-code'],
  ['claude-code/m-claude/0a8fc187-681a-4c42-9538-ba0f628ee289.jsonl', 'claude-code'],
  ['claude-code/m-claude/554b9fa6-f719-40e8-ba70-beee69bd60b5.jsonl', 'claude-code'],
  ['claude-code/claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl', 'claude-code'],
  ['claude-code/claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl', 'claude-code'],
  ['swe-agent/demo-replay-marshmallow-1867.traj', 'swe-agent'],
  ['swe-agent/demo-ctf-networking_1.traj', 'swe-agent'],
  ['atif/harbor/hello-world-context-summarization.trajectory.json', 'atif'],
  ['atif/harbor/hello-world-context-summarization-linear-history.trajectory.json', 'atif'],
  ['atif/harbor/hello-world-context-summarization-linear-history.trajectory.cont-1.json', 'atif'],
  ['aiperf/non_uniform_requests.profile_export.jsonl', 'aiperf'],
  ['weka/kv-cache-tester-trace_0026.json', 'weka'],
  ['weka/kv-cache-tester-trace_0242.json', 'weka'],
  ['weka/kv-cache-tester-trace_0291.json', 'weka'],
  ['vscode-copilot/tfplan2md-043-task-planner.chat.json', 'vscode-copilot'],
  ['vscode-copilot/tfplan2md-029-requirements-engineer.chat.json', 'vscode-copilot'],
  ['otlp/logs.json', 'otlp'],
  ['openhands/multi_swe_bench-output.head2.jsonl', 'openhands'],
  ['openhands/basic_gui_mode.json', 'openhands'],
  ['gemini-cli/harbor-rfc-gemini-cli-trajectory.json', 'gemini-cli'],
  ['codex/edgerunner-code-mode-0.144.1.head558.jsonl', 'codex'],
];

/**
 * Formats whose only real samples found have no licence that lets the project copy them:
 * tested on samples read from $AGENT_TRACE_LOCAL_SAMPLES (test/fixtures/README.md says where
 * each comes from) and skipped, with that reason, where the folder is absent.
 */
const LOCAL: Array<[string, FormatId]> = [
  ['opencode/italo-luz+pfm-categorization.json', 'opencode'],
  ['opencode/w12z+Cap.json', 'opencode'],
  ['cline/haram-333-fineye-ui_messages.json', 'cline'],
  ['cline/Jeehunter-mcp-vscode-server-ui_messages.json', 'cline'],
  ['opencode/iesta+TUIPTV.json', 'opencode'],
  ['opencode/pai535Huang+matugen-theme-sync.json', 'opencode'],
  ['codex/inspi-writer001+gildore-arena-codex-session.jsonl', 'codex'],
  ['codex/mesayanroy+Valdyum-Labs-codex-session.jsonl', 'codex'],
  ['gemini-cli/yds233013+forensicds+p31-prospective-1.jsonl', 'gemini-cli'],
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
  it('every registered format has at least one real sample here, bundled or (licence permitting none) local', () => {
    const covered = new Set([...BUNDLED, ...LOCAL].map(([, f]) => f));
    assert.deepEqual(
      FORMATS.map((f) => f.id).filter((id) => !covered.has(id)),
      [],
    );
  });

  for (const [rel, expected] of LOCAL) {
    const path = localSample(rel);
    it(`local sample ${rel} → ${expected}`, { skip: path === null && LOCAL_ONLY }, async () => {
      const r = await parseFile(path!);
      assert.equal(r.problem, null, r.problem?.message);
      assert.equal(r.model.format, expected, r.detection.evidence);
    });
  }

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

describe('a weak match does not win, and an empty reading says why', () => {
  it('a JSON Lines file where only a few records look like a format is not read as that format', async () => {
    // 2 Claude-looking records among 8 log lines: 25% of the sample, below the half a format needs.
    const lines = [
      ...Array.from({ length: 6 }, (_, i) =>
        JSON.stringify({ level: 'info', msg: `started worker ${i}`, port: 8000 + i }),
      ),
      JSON.stringify({ sessionId: 's', uuid: 'u1', type: 'user' }),
      JSON.stringify({ sessionId: 's', uuid: 'u2', type: 'user' }),
    ];
    const r = await parseText(lines.join('\n'), 'mixed.jsonl');
    assert.equal(r.model.format, null);
    assert.equal(r.detection.confidence, 'weak');
    assert.match(r.problem!.message, /only 2 of the first 8 records look like Claude Code session log/);
    assert.match(r.problem!.message, /--format claude-code/);
  });

  it('a file read as a format but holding nothing gets a warning instead of a silent empty analysis', async () => {
    // A Codex rollout header and nothing after it: the reader reads a session with no call or prompt.
    const r = await parseText(
      JSON.stringify({
        timestamp: '2026-01-01T00:00:00Z',
        type: 'session_meta',
        payload: { id: 'x', cli_version: '0.150.0' },
      }),
      'rollout.jsonl',
    );
    assert.equal(r.model.format, 'codex');
    assert.ok(
      r.model.diagnostics.some(
        (d) => d.severity === 'warning' && /holds 1 session but no LLM call or prompt/.test(d.message),
      ),
    );
  });
});
