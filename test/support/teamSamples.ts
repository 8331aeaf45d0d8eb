import { join } from 'node:path';
import { EDIT_LOOP, fixtures, REJECTIONS, repoRoot, SPOTTER } from './helpers';

/**
 * Real samples of each kind of trace, for the team exports' round trips (Parquet and OTLP):
 * Claude Code with sub-agents, loops and denials, the canonical sample, Codex, Gemini CLI,
 * OpenHands, OpenTelemetry (spans and Claude Code's events), VS Code Copilot Chat, SWE-agent
 * (session totals only), AIPerf (no prices).
 */
export const TEAM_SAMPLES = [
  join(repoRoot, 'samples/claude-code-sessions.trace.jsonl'),
  SPOTTER,
  EDIT_LOOP,
  REJECTIONS,
  join(fixtures, 'claude-code/m-claude/0a8fc187-681a-4c42-9538-ba0f628ee289.jsonl'),
  join(fixtures, 'codex/tracelab-agents-md-0.114.jsonl'),
  join(fixtures, 'codex/edgerunner-code-mode-0.144.1.head558.jsonl'),
  join(fixtures, 'gemini-cli/harbor-rfc-gemini-cli-trajectory.json'),
  join(fixtures, 'openhands/basic_gui_mode.json'),
  join(fixtures, 'otlp/claude-code-events.jsonl'),
  join(fixtures, 'otlp/agent-vllm.json'),
  join(fixtures, 'vscode-copilot/copilot-usage.chatSessions.jsonl'),
  join(fixtures, 'swe-agent/6e44b9__sweagenttestrepo-1c2844.traj'),
  join(fixtures, 'aiperf/qwen_concurrency1.profile_export.jsonl'),
];
