import type { JsonDocument } from '../formatDefinition';
import {
  arr,
  clip,
  contentText,
  count,
  emptyRecord,
  firstLine,
  isObject,
  nonNegative,
  num,
  obj,
  parseArguments,
  str,
} from '../json';
import type { JsonObject } from '../json';
import { unknownTokens } from '../model';
import type { Diagnostic, LlmCall, ReportedTotals, Session, ToolCall, UserTurn } from '../model';
import type { ReaderResult } from '../recordReader';
import { errorTextOf, outputFailure, SWE_AGENT_TOOLS } from './observationErrors';

const PREVIEW_MAX = 160;
/** Used when the trajectory names no instance (SWE-agent 0.x keeps the id only in the file name). */
const FALLBACK_SESSION_ID = 'swe-agent';

/** SWE-agent commands whose first argument is the file they open or create. */
const PATH_ARGUMENT_TOOLS = new Set(['open', 'create']);
/** Windowed edit commands act on the file open at the time (`state.open_file`). */
const OPEN_FILE_TOOLS = new Set(['edit', 'insert']);

/**
 * Reads a SWE-agent `.traj` trajectory (docs/design/formats.md §8): one LLM call per `trajectory`
 * step, each with one tool call (its `action`). SWE-agent logs token counts only as
 * instance totals (`info.model_stats`): every call's tokens stay null and the totals go
 * to `Session.reportedTotals`. There are no timestamps; `execution_time` (1.x) is the
 * action's duration.
 */
export function readSweAgentDocument(doc: JsonDocument): ReaderResult {
  const diagnostics: Diagnostic[] = [];
  const note = (path: ReadonlyArray<string | number>, severity: Diagnostic['severity'], message: string): void => {
    const at = doc.locate(path);
    diagnostics.push({ file: at.file, line: at.line, severity, message });
  };
  const root = obj(doc.value);
  const steps = root ? arr(root['trajectory']) : null;
  if (!root || !steps) {
    note([], 'error', 'SWE-agent trajectory without a "trajectory" array; nothing to read.');
    return { sessions: [], diagnostics, skippedRecords: {} };
  }
  const info = obj(root['info']) ?? {};
  const stats = obj(info['model_stats']);
  // `replay_config` is an object in 1.x test data and a JSON string in other runs.
  const replay = parseArguments(root['replay_config']);
  const problem = replay ? obj(replay['problem_statement']) : null;
  const agentConfig = replay ? obj(replay['agent']) : null;
  const modelConfig = agentConfig ? obj(agentConfig['model']) : null;
  const model = modelConfig ? str(modelConfig['name']) : null;

  const task = taskMessage(arr(root['history']) ?? []);
  const turns: UserTurn[] = task
    ? [
        {
          index: 0,
          startMs: null,
          preview: clip(issueText(task.text).replace(/\s+/g, ' ').trim(), PREVIEW_MAX),
          source: doc.locate(['history', task.index]),
        },
      ]
    : [];
  const toolIds = toolCallIds(arr(root['history']) ?? [], steps);

  const calls: LlmCall[] = [];
  let cwd: string | null = null;
  const skipped: Record<string, number> = emptyRecord();
  steps.forEach((raw, i) => {
    if (!isObject(raw)) {
      note(['trajectory', i], 'warning', `trajectory step ${i} is not an object; skipped.`);
      skipped['trajectory:not-an-object'] = (skipped['trajectory:not-an-object'] ?? 0) + 1;
      return;
    }
    const state = stepState(raw['state']);
    cwd ??= state.workingDir;
    const call: LlmCall = {
      id: `step-${i}`,
      index: calls.length,
      turn: turns.length > 0 ? 0 : null,
      model,
      startMs: null,
      endMs: null,
      // Never divide model_stats over the steps: per-call figures are unknown (docs/design/formats.md §11).
      tokens: unknownTokens(),
      server: null,
      blocks: null,
      toolCalls: [],
      source: doc.locate(['trajectory', i]),
    };
    const tool = actionTool(raw, i, state, toolIds[i] ?? null, doc);
    if (tool) call.toolCalls.push(tool);
    calls.push(call);
  });

  const reportedTotals = stats ? totalsOf(stats) : null;
  // Demonstrations and replays write model_stats with every figure 0 although steps ran:
  // nothing was recorded, which is not the same as zero tokens.
  if (
    reportedTotals &&
    reportedTotals.input === 0 &&
    reportedTotals.output === 0 &&
    (calls.length > 0 || (reportedTotals.llmCalls ?? 0) > 0)
  ) {
    const apiCalls = reportedTotals.llmCalls ?? 0;
    note(
      ['info', 'model_stats'],
      'warning',
      `model_stats reports 0 tokens sent and received for ${apiCalls > 0 ? `${apiCalls} API calls` : `${calls.length} steps`}: this run did not record its usage (a demonstration or a replay), so its tokens and cost are unknown, not 0.`,
    );
    reportedTotals.input = null;
    reportedTotals.output = null;
    if (reportedTotals.costUsd === 0) reportedTotals.costUsd = null;
    if (apiCalls === 0) reportedTotals.llmCalls = null;
  }
  if (reportedTotals?.llmCalls != null && reportedTotals.llmCalls !== calls.length) {
    note(
      ['info', 'model_stats', 'api_calls'],
      'info',
      reportedTotals.llmCalls > calls.length
        ? `model_stats counts ${reportedTotals.llmCalls} API calls but the trajectory has ${calls.length} steps: ${reportedTotals.llmCalls - calls.length} requeries (format errors, retries) are not in the trajectory.`
        : `model_stats counts ${reportedTotals.llmCalls} API calls but the trajectory has ${calls.length} steps.`,
    );
  }
  const session: Session = {
    id: (problem ? str(problem['id']) : null) ?? str(info['instance_id']) ?? FALLBACK_SESSION_ID,
    parentId: null,
    parentToolCallId: null,
    role: 'main',
    agent: { name: 'swe-agent', version: str(info['swe_agent_version']) },
    model,
    cwd,
    title: task ? firstLine(issueText(task.text), PREVIEW_MAX) : null,
    calls,
    turns,
    compactions: [],
    reportedTotals,
  };
  return { sessions: [session], diagnostics, skippedRecords: skipped };
}

/** `info.model_stats` as session totals: tokens_sent is the whole prompt, cache reads included. */
function totalsOf(stats: JsonObject): ReportedTotals {
  return {
    input: count(stats['tokens_sent']),
    output: count(stats['tokens_received']),
    cached: null,
    costUsd: nonNegative(stats['instance_cost']),
    llmCalls: count(stats['api_calls']),
  };
}

/** The task: the first user message of the history that is not a demonstration. */
function taskMessage(history: unknown[]): { index: number; text: string } | null {
  for (let i = 0; i < history.length; i++) {
    const h = history[i];
    if (!isObject(h) || h['role'] !== 'user' || h['is_demo'] === true) continue;
    const text = contentText(h['content']);
    if (text !== null) return { index: i, text };
  }
  return null;
}

/** The issue itself, without SWE-agent's "We're currently solving…ISSUE:" preamble. */
function issueText(text: string): string {
  const at = text.indexOf('ISSUE:\n');
  return at >= 0 ? text.slice(at + 'ISSUE:\n'.length) : text;
}

/**
 * Tool call ids from the history (1.x function calling): its non-demo assistant turns
 * follow the trajectory steps in order (the last step may be missing). A turn's id is
 * used only when its `action` is the step's action, so a shifted history gives none.
 */
function toolCallIds(history: unknown[], steps: unknown[]): (string | null)[] {
  const turns = history.filter(
    (h): h is JsonObject => isObject(h) && h['role'] === 'assistant' && h['is_demo'] !== true,
  );
  return steps.map((step, i) => {
    const turn = turns[i];
    if (!turn || !isObject(step) || (str(turn['action']) ?? '').trim() !== (str(step['action']) ?? '').trim())
      return null;
    const first = (arr(turn['tool_calls']) ?? []).find(isObject);
    return first ? str(first['id']) : null;
  });
}

interface StepState {
  openFile: string | null;
  workingDir: string | null;
}

/** `state` is a JSON string in 0.x and an object in 1.x; "n/a" means no file open. */
function stepState(value: unknown): StepState {
  const state = parseArguments(value);
  const openFile = state ? str(state['open_file']) : null;
  return {
    openFile: openFile === null || openFile === 'n/a' || openFile === '' ? null : openFile,
    workingDir: state ? str(state['working_dir']) : null,
  };
}

/** The step's action as a tool call, or null when the step ran nothing (an empty action). */
function actionTool(
  step: JsonObject,
  i: number,
  state: StepState,
  id: string | null,
  doc: JsonDocument,
): ToolCall | null {
  const action = (str(step['action']) ?? '').trim();
  if (action === '') return null;
  const words = action.split(/\s+/);
  const name = words[0]!;
  const observation = str(step['observation']);
  const failure = observation === null ? null : outputFailure(observation, SWE_AGENT_TOOLS.has(name));
  const seconds = num(step['execution_time']);
  return {
    id: id ?? `step-${i}/action`,
    name,
    targetFile: targetFile(name, words, state),
    command: action,
    startMs: null,
    endMs: null,
    durationMs: seconds !== null && seconds >= 0 ? seconds * 1000 : null,
    isError: observation === null ? null : failure !== null,
    errorText: failure && observation !== null ? errorTextOf(observation) : null,
    exitCode: failure?.exitCode ?? null,
    resultChars: observation?.length ?? null,
    source: doc.locate(['trajectory', i]),
    resultSource: observation === null ? null : doc.locate(['trajectory', i, 'observation']),
  };
}

/**
 * The file an action reads or changes: the argument of `open`/`create`, the path of
 * `str_replace_editor <command> <path>`, or the open file for windowed `edit`/`insert`.
 * Relative paths are resolved against the working directory so that `open x.py` and a
 * later `edit` of the open file name the same file.
 */
function targetFile(name: string, words: string[], state: StepState): string | null {
  let path: string | null = null;
  if (PATH_ARGUMENT_TOOLS.has(name)) path = words[1] ?? null;
  else if (name === 'str_replace_editor') path = words[2] ?? null;
  else if (OPEN_FILE_TOOLS.has(name)) return state.openFile;
  if (path === null) return null;
  path = path.replace(/^(["'])(.*)\1$/, '$2');
  if (path.startsWith('/') || state.workingDir === null) return path;
  return `${state.workingDir.replace(/\/+$/, '')}/${path.replace(/^\.\//, '')}`;
}
