import type { JsonDocument, JsonPath } from '../formatDefinition';
import { arr, clip, contentText, count, emptyRecord, isObject, nonNegative, num, obj, str } from '../json';
import type { JsonObject } from '../json';
import { mostUsedModel, requestedToolCall, unknownTokens } from '../model';
import type { CallTokens, Diagnostic, LlmCall, ReportedTotals, Session, ToolCall, UserTurn } from '../model';
import { countSkipped } from '../recordReader';
import type { ReaderResult } from '../recordReader';
import { errorTextOf } from '../sweAgent/observationErrors';

const PREVIEW_MAX = 160;
const FALLBACK_SESSION_ID = 'mini-swe-agent';

/** Text-based actions: v1's ```bash block and v2's ```mswea_bash_command block (exactly one per response). */
const ACTION_BLOCK = /```(?:bash|mswea_bash_command)\s*\n(.*?)\n```/gs;
/** The default observation template starts with the exit code (v1 and v2). */
const RETURN_CODE = /^\s*(?:<exception>[\s\S]*?<\/exception>\s*)?<returncode>(-?\d+)<\/returncode>/;
/** v1's timeout template: the command was killed. */
const TIMED_OUT = /^The last command <command>[\s\S]*?<\/command> timed out and has been killed\./;

/** A tool call waiting for its observation message. */
interface PendingTool {
  tool: ToolCall;
  callEndMs: number | null;
}

/**
 * Reads mini-swe-agent trajectories (docs/design/formats.md §8): the `mini-swe-agent-1` (v1.x) and
 * `mini-swe-agent-1.1` (v2.x) documents `{info, messages, trajectory_format}`, and the
 * older bare messages array. One LLM call per message that carries a model response
 * (`extra.response`): every assistant message, and in v2 the format-error message that
 * keeps the response it could not parse. Tokens come from the response's `usage`:
 * `prompt_tokens` includes `prompt_tokens_details.cached_tokens`; without those
 * details the cached figure is unknown, not 0 (§12.10).
 */
export function readMiniSweAgentDocument(doc: JsonDocument): ReaderResult {
  const diagnostics: Diagnostic[] = [];
  const skipped: Record<string, number> = emptyRecord();
  const note = (path: JsonPath, severity: Diagnostic['severity'], message: string): void => {
    const at = doc.locate(path);
    diagnostics.push({ file: at.file, line: at.line, severity, message });
  };
  const legacy = Array.isArray(doc.value);
  const root = legacy ? {} : (obj(doc.value) ?? {});
  const messages = legacy ? (doc.value as unknown[]) : arr(root['messages']);
  const base: JsonPath = legacy ? [] : ['messages'];
  if (!messages) {
    note([], 'error', 'mini-swe-agent trajectory without a "messages" array; nothing to read.');
    return { sessions: [], diagnostics, skippedRecords: skipped };
  }
  const info = obj(root['info']) ?? {};
  const config = obj(info['config']) ?? {};
  const modelConfig = obj(config['model']) ?? {};
  const environment = obj(config['environment']) ?? {};
  const configuredModel = str(modelConfig['model_name']);

  const calls: LlmCall[] = [];
  const turns: UserTurn[] = [];
  const ids = new Set<string>();
  const byToolCallId = new Map<string, PendingTool>();
  /** Text-based actions, answered by the next observation messages in order. */
  let queue: PendingTool[] = [];
  /** Time of the last message that went to the model: the start of the next call. */
  let lastInputMs: number | null = null;
  let title: string | null = null;
  let callsWithoutUsage = 0;

  messages.forEach((raw, j) => {
    const path = [...base, j];
    if (!isObject(raw)) {
      note(path, 'warning', `message ${j} is not an object; skipped.`);
      countSkipped(skipped, 'message:not-an-object');
      return;
    }
    const role = str(raw['role']) ?? (raw['object'] === 'response' ? 'assistant' : null);
    const extra = obj(raw['extra']) ?? {};
    const timeMs = secondsToMs(num(extra['timestamp']) ?? num(raw['timestamp']));
    const response = obj(extra['response']);

    if (role === 'assistant' || response) {
      const call = makeCall(
        response,
        path,
        calls.length,
        turns.length > 0 ? 0 : null,
        lastInputMs,
        timeMs,
        configuredModel,
        ids,
        doc,
      );
      if (response && !obj(response['usage'])) callsWithoutUsage += 1;
      calls.push(call);
      queue = [];
      for (const { tool, toolCallId } of actionsOf(raw, extra, role === 'assistant', call, path, doc)) {
        call.toolCalls.push(tool);
        const pending = { tool, callEndMs: call.endMs };
        // Tool-calling results name their call; text-based results follow in order.
        if (toolCallId !== null) byToolCallId.set(toolCallId, pending);
        else queue.push(pending);
      }
      if (role !== 'assistant') countSkipped(skipped, 'message:format-error-with-response');
      if (timeMs !== null) lastInputMs = timeMs;
      return;
    }
    if (role === 'tool') {
      const id = str(raw['tool_call_id']);
      const pending = id === null ? undefined : byToolCallId.get(id);
      if (pending) settle(pending, raw, extra, timeMs, path, doc);
      else countSkipped(skipped, 'tool:unpaired');
      if (timeMs !== null) lastInputMs = timeMs;
      return;
    }
    if (role === 'user') {
      const text = contentText(raw['content']) ?? '';
      if (turns.length === 0 && calls.length === 0) {
        // The instance template: the task, the run's only prompt.
        turns.push({
          index: 0,
          startMs: timeMs,
          preview: clip(text.replace(/\s+/g, ' ').trim(), PREVIEW_MAX),
          source: doc.locate(path),
        });
        title = titleOf(text);
      } else if (queue.length > 0 && isObservation(text, extra, queue.length === 1)) {
        settle(queue.shift()!, raw, extra, timeMs, path, doc);
      } else {
        countSkipped(
          skipped,
          extra['interrupt_type'] !== undefined ? `user:${String(extra['interrupt_type'])}` : 'user:message',
        );
      }
      if (timeMs !== null) lastInputMs = timeMs;
      return;
    }
    countSkipped(skipped, `message:${role ?? '(no role)'}`);
  });

  const stats = obj(info['model_stats']);
  const reportedTotals = stats ? totalsOf(stats) : null;
  if (reportedTotals?.llmCalls != null && reportedTotals.llmCalls !== calls.length) {
    const exit = str(info['exit_status']);
    note(
      ['info', 'model_stats', 'api_calls'],
      'info',
      reportedTotals.llmCalls > calls.length
        ? `model_stats counts ${reportedTotals.llmCalls} API calls but ${calls.length} responses are in the trajectory: ${reportedTotals.llmCalls - calls.length} call(s) left no response${exit ? ` (the run ended with ${exit})` : ''}.`
        : `model_stats counts ${reportedTotals.llmCalls} API calls but ${calls.length} responses are in the trajectory.`,
    );
  }
  if (callsWithoutUsage > 0)
    note(base, 'info', `${callsWithoutUsage} of ${calls.length} responses have no "usage": their tokens are unknown.`);
  if (legacy)
    note(
      [],
      'info',
      'Legacy mini-swe-agent trajectory (a bare messages array): it has no token counts, times or run info.',
    );

  const session: Session = {
    id: str(root['instance_id']) ?? str(info['instance_id']) ?? FALLBACK_SESSION_ID,
    parentId: null,
    parentToolCallId: null,
    role: 'main',
    agent: { name: 'mini-swe-agent', version: str(info['mini_version']) },
    model: mostUsedModel(calls) ?? configuredModel,
    cwd: str(environment['cwd']),
    title,
    calls,
    turns,
    compactions: [],
    ...(legacy ? {} : { reportedTotals }),
  };
  return { sessions: [session], diagnostics, skippedRecords: skipped };
}

function makeCall(
  response: JsonObject | null,
  path: JsonPath,
  index: number,
  turn: number | null,
  startMs: number | null,
  endMs: number | null,
  configuredModel: string | null,
  ids: Set<string>,
  doc: JsonDocument,
): LlmCall {
  let id = (response ? str(response['id']) : null) ?? `message-${String(path[path.length - 1])}`;
  // Some providers reuse or omit response ids; ids must be unique in the session.
  if (ids.has(id)) id = `${id}#${String(path[path.length - 1])}`;
  ids.add(id);
  const usage = response ? obj(response['usage']) : null;
  return {
    id,
    index,
    turn,
    model: (response ? str(response['model']) : null) ?? configuredModel,
    startMs: startMs !== null && endMs !== null && startMs <= endMs ? startMs : null,
    endMs,
    tokens: usage ? usageTokens(usage) : unknownTokens(),
    server: null,
    blocks: null,
    toolCalls: [],
    source: doc.locate(path),
  };
}

/**
 * Tokens of an OpenAI/litellm `usage` (chat completions, or the Responses API's
 * input/output names). Prompt tokens include the cached ones; a missing details object
 * leaves cached unknown. litellm passes Anthropic's `cache_creation_input_tokens`
 * through: a cache write, part of appended.
 */
export function usageTokens(usage: JsonObject): CallTokens {
  const input = count(usage['prompt_tokens']) ?? count(usage['input_tokens']);
  const promptDetails = obj(usage['prompt_tokens_details']) ?? obj(usage['input_tokens_details']);
  const cachedRaw = promptDetails ? count(promptDetails['cached_tokens']) : null;
  const cached = cachedRaw ?? count(usage['cache_read_input_tokens']);
  // A cached figure above the whole prompt is impossible: then neither part is known.
  const consistent = input === null || cached === null || cached <= input;
  const appended = consistent && input !== null && cached !== null ? input - cached : null;
  const write = count(usage['cache_creation_input_tokens']);
  const outputDetails = obj(usage['completion_tokens_details']) ?? obj(usage['output_tokens_details']);
  const output = count(usage['completion_tokens']) ?? count(usage['output_tokens']);
  const reasoning = outputDetails ? count(outputDetails['reasoning_tokens']) : null;
  return {
    input,
    cached: consistent ? cached : null,
    appended,
    // A cache write larger than the new prompt part cannot be part of it: the provider counts differently.
    cacheWrite: write !== null && appended !== null && write <= appended ? write : null,
    output,
    reasoningOutput: reasoning !== null && output !== null && reasoning <= output ? reasoning : null,
  };
}

/** The tool calls a response asked for: v2 `extra.actions`, else the one action block of the text (v1, legacy). */
function actionsOf(
  message: JsonObject,
  extra: JsonObject,
  isAssistant: boolean,
  call: LlmCall,
  path: JsonPath,
  doc: JsonDocument,
): { tool: ToolCall; toolCallId: string | null }[] {
  const actions = arr(extra['actions']);
  const names = toolNames(message);
  const tools: { tool: ToolCall; toolCallId: string | null }[] = [];
  if (actions) {
    actions.forEach((a, k) => {
      const action = obj(a);
      const command = action ? str(action['command']) : null;
      if (command === null) return;
      const toolCallId = action ? str(action['tool_call_id']) : null;
      const name = (toolCallId !== null ? names.get(toolCallId) : undefined) ?? 'bash';
      tools.push({
        tool: newTool(
          toolCallId ?? `${call.id}/action-${k}`,
          name,
          command,
          call.endMs,
          [...path, 'extra', 'actions', k],
          doc,
        ),
        toolCallId,
      });
    });
    return tools;
  }
  if (!isAssistant) return tools;
  // v1 and legacy files keep no parsed actions: the agent ran the text's single block.
  const blocks = [...(contentText(message['content']) ?? '').matchAll(ACTION_BLOCK)];
  if (blocks.length === 1)
    tools.push({
      tool: newTool(`${call.id}/action-0`, 'bash', blocks[0]![1]!.trim(), call.endMs, path, doc),
      toolCallId: null,
    });
  return tools;
}

/** Tool names by tool call id, from the message's own `tool_calls` (the model's output). */
function toolNames(message: JsonObject): Map<string, string> {
  const names = new Map<string, string>();
  for (const tc of arr(message['tool_calls']) ?? []) {
    if (!isObject(tc)) continue;
    const fn = obj(tc['function']);
    const id = str(tc['id']);
    const name = fn ? str(fn['name']) : null;
    if (id !== null && name !== null) names.set(id, name);
  }
  return names;
}

function newTool(
  id: string,
  name: string,
  command: string,
  startMs: number | null,
  path: JsonPath,
  doc: JsonDocument,
): ToolCall {
  return requestedToolCall({
    id,
    name,
    targetFile: shellWriteTarget(command),
    command,
    startMs,
    source: doc.locate(path),
  });
}

/** Whether a user message is the observation of the pending text-based action. */
function isObservation(text: string, extra: JsonObject, lastPending: boolean): boolean {
  if (extra['interrupt_type'] === 'FormatError') return false;
  if ('returncode' in extra || RETURN_CODE.test(text) || TIMED_OUT.test(text)) return true;
  // v1 writes the submission itself (no return code) after the submitting command.
  return lastPending && !('interrupt_type' in extra);
}

/** Fills a tool call from its observation message: exit code, error, size, times. */
function settle(
  pending: PendingTool,
  message: JsonObject,
  extra: JsonObject,
  timeMs: number | null,
  path: JsonPath,
  doc: JsonDocument,
): void {
  const { tool } = pending;
  const text = contentText(message['content']) ?? '';
  const returnCode =
    typeof extra['returncode'] === 'number' && Number.isInteger(extra['returncode'])
      ? extra['returncode']
      : parseReturnCode(text);
  const exception = str(extra['exception_info']) ?? '';
  tool.exitCode = returnCode;
  tool.isError = exception !== '' || TIMED_OUT.test(text) || (returnCode !== null && returnCode !== 0);
  tool.errorText = tool.isError ? errorTextOf(exception !== '' ? exception : text) : null;
  tool.resultChars = text.length;
  tool.resultSource = doc.locate(path);
  tool.endMs = timeMs;
  const start = pending.callEndMs;
  tool.durationMs = timeMs !== null && start !== null && timeMs >= start ? timeMs - start : null;
}

function parseReturnCode(text: string): number | null {
  const m = RETURN_CODE.exec(text);
  return m ? Number(m[1]) : null;
}

/** `info.model_stats`: mini-swe-agent counts cost and calls, no tokens. */
function totalsOf(stats: JsonObject): ReportedTotals {
  return {
    input: null,
    output: null,
    cached: null,
    costUsd: nonNegative(stats['instance_cost']),
    llmCalls: count(stats['api_calls']),
  };
}

/** A label: the task's first line that is not a bare tag (`<pr_description>`) or a lead-in ending in ":". */
function titleOf(text: string): string | null {
  for (const line of text.split('\n')) {
    const t = line.replace(/\r$/, '').trim();
    if (t === '' || /^<[^>]+>$/.test(t) || t.endsWith(':')) continue;
    return clip(t, PREVIEW_MAX);
  }
  return null;
}

function secondsToMs(seconds: number | null): number | null {
  return seconds !== null && seconds >= 0 ? seconds * 1000 : null;
}

/**
 * The file a shell command writes, when its first line says so plainly: `sed -i … FILE`,
 * `cat > FILE`, `cat <<'EOF' > FILE`, `tee FILE`. Anything subtler stays null.
 */
export function shellWriteTarget(command: string): string | null {
  const line = command.split('\n')[0]!.trim();
  const sed =
    /(?:^|[;&|]\s*|\bcd\s+\S+\s*&&\s*)sed\s+-i(?:\S*)?\s+(?:-e\s+)?(?:'[^']*'|"[^"]*"|\S+)\s+([^\s;&|<>'"]+)\s*$/.exec(
      line,
    );
  if (sed) return sed[1]!;
  const redirect = /(?:^|[;&|]\s*)(?:cat|echo|printf)\b[^>]*?(?<![\d&])>(?!>|&)\s*([^\s;&|<>'"]+)/.exec(line);
  if (redirect && redirect[1] !== '/dev/null') return redirect[1]!;
  const tee = /\|\s*tee\s+(?:-a\s+)?([^\s;&|<>'"]+)/.exec(line);
  if (tee && tee[1] !== '/dev/null') return tee[1]!;
  return null;
}

/**
 * A bare messages array written by mini-swe-agent (its older `*.traj.json`, still in its
 * tests/test_data): system then user first, and an action block or a `<returncode>`
 * observation somewhere. A generic chat export has neither, so it is not claimed.
 */
export function isLegacyMessages(value: unknown[]): boolean {
  if (value.length < 3) return false;
  const ok = value.every(
    (m) =>
      isObject(m) && typeof m['role'] === 'string' && (typeof m['content'] === 'string' || Array.isArray(m['content'])),
  );
  if (!ok) return false;
  const messages = value as JsonObject[];
  if (messages[0]!['role'] !== 'system' || messages[1]!['role'] !== 'user') return false;
  return messages.some((m) => {
    const text = contentText(m['content']) ?? '';
    return (
      (m['role'] === 'assistant' && new RegExp(ACTION_BLOCK.source, 's').test(text)) ||
      (m['role'] === 'user' && RETURN_CODE.test(text))
    );
  });
}
