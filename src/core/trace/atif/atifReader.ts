import type { JsonDocument, JsonPath } from '../formatDefinition';
import {
  arr,
  clip,
  contentText,
  count,
  emptyRecord,
  firstLine,
  isObject,
  isoMs,
  nonNegative,
  obj,
  parseArguments,
  str,
} from '../json';
import type { JsonObject } from '../json';
import { mostUsedModel, noOtherInputs, requestedToolCall, unknownTokens } from '../model';
import type { CallTokens, Diagnostic, LlmCall, ReportedTotals, Session, ToolCall, UserTurn } from '../model';
import { countSkipped } from '../recordReader';
import type { ReaderResult } from '../recordReader';
import { errorTextOf, outputFailure } from '../sweAgent/observationErrors';

const PREVIEW_MAX = 160;
const FALLBACK_SESSION_ID = 'atif';
/** Argument names that hold the file a tool reads or writes, in the order they are tried. */
const FILE_ARGUMENTS = ['file_path', 'path', 'filename', 'file', 'notebook_path', 'target_file'];
/** Argument names that hold a shell command (terminus-style agents send `keystrokes`). */
const COMMAND_ARGUMENTS = ['command', 'cmd', 'keystrokes'];

/** Shared by the readers of one document: embedded sub-agents, diagnostics, counts. */
interface Context {
  doc: JsonDocument;
  sessions: Session[];
  diagnostics: Diagnostic[];
  skipped: Record<string, number>;
  /** `subagent_trajectories[]` of the root by `trajectory_id` (ATIF v1.7), with their paths. */
  embedded: Map<string, { value: JsonObject; path: JsonPath }>;
  /** Embedded trajectories already read, so one referenced twice is read once. */
  read: Set<string>;
}

/**
 * Reads a Harbor ATIF trajectory (docs/design/formats.md §8; RFC laude-institute/harbor
 * docs/rfcs/0001-trajectory-format.md). Each `agent` step is one LLM inference (the
 * RFC's "complete agent turn"), with its tokens from `metrics`: `prompt_tokens`
 * includes `cached_tokens`; Anthropic's `cache_creation_input_tokens` sits in
 * `metrics.extra`. `user` steps start turns. Tool results are paired by
 * `source_call_id`. Sub-agents embedded in `subagent_trajectories` (v1.7) become
 * sessions of their own; references to other files are reported, not followed.
 */
export function readAtifDocument(doc: JsonDocument): ReaderResult {
  const ctx: Context = {
    doc,
    sessions: [],
    diagnostics: [],
    skipped: emptyRecord(),
    embedded: new Map(),
    read: new Set(),
  };
  const root = obj(doc.value);
  if (!root || !arr(root['steps'])) {
    note(ctx, [], 'error', 'ATIF trajectory without a "steps" array; nothing to read.');
    return { sessions: [], diagnostics: ctx.diagnostics, skippedRecords: ctx.skipped };
  }
  (arr(root['subagent_trajectories']) ?? []).forEach((sub, k) => {
    const id = isObject(sub) ? (str(sub['trajectory_id']) ?? str(sub['session_id'])) : null;
    if (isObject(sub) && id !== null) ctx.embedded.set(id, { value: sub, path: ['subagent_trajectories', k] });
  });
  const main = readTrajectory(ctx, root, [], null, null);
  // Embedded sub-agents no step refers to still belong to the run.
  for (const [id, sub] of ctx.embedded) {
    if (!ctx.read.has(id)) {
      ctx.read.add(id);
      readTrajectory(ctx, sub.value, sub.path, main.id, null);
    }
  }
  return { sessions: ctx.sessions, diagnostics: ctx.diagnostics, skippedRecords: ctx.skipped };
}

function note(ctx: Context, path: JsonPath, severity: Diagnostic['severity'], message: string): void {
  const at = ctx.doc.locate(path);
  ctx.diagnostics.push({ file: at.file, line: at.line, severity, message });
}

/** Reads one trajectory (the root or an embedded sub-agent) into a session, and its sub-agents after it. */
function readTrajectory(
  ctx: Context,
  t: JsonObject,
  base: JsonPath,
  parentId: string | null,
  parentToolCallId: string | null,
): Session {
  const agent = obj(t['agent']);
  const agentName = agent ? str(agent['name']) : null;
  const defaultModel = agent ? str(agent['model_name']) : null;
  // Embedded sub-agents may share the run's session_id (v1.7 keys them by trajectory_id).
  const named =
    parentId === null
      ? (str(t['session_id']) ?? str(t['trajectory_id']))
      : (str(t['trajectory_id']) ?? str(t['session_id']));
  let id = named ?? (parentId === null ? FALLBACK_SESSION_ID : `${parentId}/subagent-${ctx.sessions.length}`);
  if (ctx.sessions.some((s) => s.id === id)) id = `${id}#${ctx.sessions.length}`;
  const session: Session = {
    id,
    parentId,
    parentToolCallId,
    role: parentId === null ? 'main' : 'subagent',
    agent: agentName !== null ? { name: agentName, version: agent ? str(agent['version']) : null } : null,
    model: null,
    cwd: null,
    title: null,
    calls: [],
    turns: [],
    compactions: [],
  };
  ctx.sessions.push(session);
  const tools = new Map<string, ToolCall>();
  const children: { ref: JsonObject; toolCallId: string | null; path: JsonPath }[] = [];
  const steps = arr(t['steps']) ?? [];
  /** Time the next call's prompt was complete: a user step's time; unknown after tools ran (their results carry no time). */
  let inputReadyMs: number | null = null;
  let multiCallSteps = 0;
  /** After a summarization step, the user steps that hand the summary over are the compaction's, not typed. */
  let handoff = false;
  const other = noOtherInputs();

  steps.forEach((raw, i) => {
    const path = [...base, 'steps', i];
    if (!isObject(raw)) {
      note(ctx, path, 'warning', `step ${i} is not an object; skipped.`);
      countSkipped(ctx.skipped, 'step:not-an-object');
      return;
    }
    const source = str(raw['source']);
    const timeMs = isoMs(raw['timestamp']);
    // A continuation trajectory starts with the context copied from the one before: no new calls or prompts.
    if (raw['is_copied_context'] === true) {
      if (source === 'user') other.injected += 1;
      countSkipped(ctx.skipped, 'step:copied-context');
      return;
    }
    if (source === 'system' && isSummarization(raw)) {
      // Terminus-2 and other Harbor agents summarise the context into a hand-off when it is full:
      // the cache starts again after it (a compaction).
      session.compactions.push({
        beforeCall: session.calls.length,
        trigger: null,
        preTokens: null,
        timeMs,
        source: ctx.doc.locate(path),
      });
      handoff = true;
      countSkipped(ctx.skipped, 'step:summarization');
      collectChildren(raw, path, children);
      return;
    }
    if (source === 'user' && handoff) {
      other.compactionSummary += 1;
      inputReadyMs = timeMs;
      return;
    }
    if (source === 'user') {
      const text = contentText(raw['message']) ?? '';
      session.turns.push({
        index: session.turns.length,
        startMs: timeMs,
        preview: clip(text.replace(/\s+/g, ' ').trim(), PREVIEW_MAX),
        source: ctx.doc.locate(path),
      } satisfies UserTurn);
      session.title ??= firstLine(text, PREVIEW_MAX);
      inputReadyMs = timeMs;
      collectChildren(raw, path, children);
      return;
    }
    if (source !== 'agent') {
      countSkipped(ctx.skipped, `step:${source ?? '(no source)'}`);
      // System steps may delegate to sub-agents too (RFC v1.2).
      collectChildren(raw, path, children);
      return;
    }
    handoff = false;
    const llmCalls = count(raw['llm_call_count']);
    const previous = session.calls[session.calls.length - 1];
    let call: LlmCall;
    if (llmCalls === 0 && previous) {
      // A step that made no LLM request (a delegation) belongs to the call before it.
      call = previous;
      countSkipped(ctx.skipped, 'step:agent-without-llm-call');
    } else {
      if (llmCalls !== null && llmCalls > 1) multiCallSteps += 1;
      const metrics = obj(raw['metrics']);
      call = {
        id: `step-${count(raw['step_id']) ?? i + 1}`,
        index: session.calls.length,
        turn: session.turns.length > 0 ? session.turns.length - 1 : null,
        model: str(raw['model_name']) ?? defaultModel,
        startMs: inputReadyMs !== null && timeMs !== null && inputReadyMs <= timeMs ? inputReadyMs : null,
        endMs: timeMs,
        tokens: metrics ? metricsTokens(metrics) : unknownTokens(),
        server: null,
        blocks: null,
        toolCalls: [],
        source: ctx.doc.locate(path),
      };
      session.calls.push(call);
    }
    (arr(raw['tool_calls']) ?? []).forEach((tc, k) => {
      const tool = toolCall(ctx, tc, [...path, 'tool_calls', k], call.endMs);
      if (!tool) return;
      if (tools.has(tool.id)) {
        note(
          ctx,
          [...path, 'tool_calls', k],
          'warning',
          `tool call "${tool.id}" appears twice; the second is ignored.`,
        );
        return;
      }
      tools.set(tool.id, tool);
      call.toolCalls.push(tool);
    });
    pairResults(ctx, raw, path, tools, children);
    inputReadyMs = call.toolCalls.length > 0 ? null : timeMs;
  });

  if (multiCallSteps > 0) {
    note(
      ctx,
      base,
      'info',
      `${multiCallSteps} agent step(s) of session ${session.id} made several LLM calls (llm_call_count > 1); each is read as one call with the step's summed metrics.`,
    );
  }
  session.model = mostUsedModel(session.calls) ?? defaultModel;
  if (Object.values(other).some((n) => n > 0)) session.otherInputs = other;
  const finalMetrics = obj(t['final_metrics']);
  if (finalMetrics) {
    session.reportedTotals = totalsOf(finalMetrics);
    checkTotals(ctx, session, [...base, 'final_metrics']);
  }
  for (const child of children) readChild(ctx, session, child);
  return session;
}

/**
 * A system step that records a context summarisation: it names a summarisation sub-trajectory
 * (Harbor's `…-summarization-N-summary`) or says so ("Performed context summarization…").
 */
function isSummarization(step: JsonObject): boolean {
  if (/\bcontext summari[sz]ation\b/i.test(contentText(step['message']) ?? '')) return true;
  const results = arr(obj(step['observation'])?.['results']) ?? [];
  return results.some((r) =>
    (arr(obj(r)?.['subagent_trajectory_ref']) ?? []).some((ref) =>
      /summari[sz]ation/i.test(`${str(obj(ref)?.['session_id']) ?? ''} ${str(obj(ref)?.['trajectory_path']) ?? ''}`),
    ),
  );
}

/** `final_metrics` as session totals; total_steps counts steps, not LLM calls, so llmCalls stays unknown. */
function totalsOf(m: JsonObject): ReportedTotals {
  return {
    input: count(m['total_prompt_tokens']),
    output: count(m['total_completion_tokens']),
    cached: count(m['total_cached_tokens']),
    costUsd: nonNegative(m['total_cost_usd']),
    llmCalls: null,
  };
}

/** Says so when final_metrics disagree with the sum over the steps (the RFC defines them as that sum). */
function checkTotals(ctx: Context, session: Session, path: JsonPath): void {
  const r = session.reportedTotals;
  if (!r) return;
  const sum = (key: 'input' | 'output' | 'cached'): number | null => {
    const known = session.calls.map((c) => c.tokens[key]).filter((v): v is number => v !== null);
    return known.length === session.calls.length && known.length > 0 ? known.reduce((a, b) => a + b, 0) : null;
  };
  const differ: string[] = [];
  for (const key of ['input', 'output', 'cached'] as const) {
    const s = sum(key);
    if (s !== null && r[key] !== null && s !== r[key]) differ.push(`${key} ${r[key]} vs ${s}`);
  }
  if (differ.length > 0)
    note(
      ctx,
      path,
      'info',
      `final_metrics of session ${session.id} differ from the sum over its steps (${differ.join(', ')}); the calls' own figures are used.`,
    );
}

/**
 * Step metrics: prompt_tokens includes cached_tokens (RFC v1.2). An absent
 * cached_tokens leaves the cache figure unknown. Anthropic's cache writes, and reasoning
 * tokens, are provider extras in `metrics.extra`.
 */
export function metricsTokens(m: JsonObject): CallTokens {
  const input = count(m['prompt_tokens']);
  const cachedRaw = count(m['cached_tokens']);
  const consistent = input === null || cachedRaw === null || cachedRaw <= input;
  const cached = consistent ? cachedRaw : null;
  const appended = consistent && input !== null && cached !== null ? input - cached : null;
  const extra = obj(m['extra']) ?? {};
  const write = count(extra['cache_creation_input_tokens']);
  const output = count(m['completion_tokens']);
  const reasoning = count(extra['reasoning_tokens']);
  return {
    input,
    cached,
    appended,
    cacheWrite: write !== null && appended !== null && write <= appended ? write : null,
    output,
    reasoningOutput: reasoning !== null && output !== null && reasoning <= output ? reasoning : null,
  };
}

function toolCall(ctx: Context, value: unknown, path: JsonPath, startMs: number | null): ToolCall | null {
  const tc = obj(value);
  const id = tc ? str(tc['tool_call_id']) : null;
  const name = tc ? str(tc['function_name']) : null;
  if (!tc || id === null || name === null) {
    note(ctx, path, 'warning', 'tool call without "tool_call_id" or "function_name"; skipped.');
    countSkipped(ctx.skipped, 'tool_call:invalid');
    return null;
  }
  const args = parseArguments(tc['arguments']) ?? {};
  return requestedToolCall({
    id,
    name,
    targetFile: firstString(args, FILE_ARGUMENTS),
    command: firstString(args, COMMAND_ARGUMENTS),
    startMs,
    source: ctx.doc.locate(path),
  });
}

function firstString(args: JsonObject, keys: readonly string[]): string | null {
  for (const k of keys) {
    const v = str(args[k]);
    if (v !== null && v !== '') return v;
  }
  return null;
}

/** Pairs a step's observation results with tool calls by `source_call_id`, and notes sub-agent references. */
function pairResults(
  ctx: Context,
  step: JsonObject,
  path: JsonPath,
  tools: Map<string, ToolCall>,
  children: { ref: JsonObject; toolCallId: string | null; path: JsonPath }[],
): void {
  const observation = obj(step['observation']);
  (arr(observation?.['results']) ?? []).forEach((raw, k) => {
    const result = obj(raw);
    if (!result) return;
    const resultPath = [...path, 'observation', 'results', k];
    const callId = str(result['source_call_id']);
    const refs = arr(result['subagent_trajectory_ref']) ?? [];
    refs.forEach((ref, r) => {
      if (isObject(ref))
        children.push({ ref, toolCallId: callId, path: [...resultPath, 'subagent_trajectory_ref', r] });
    });
    const tool = callId === null ? undefined : tools.get(callId);
    if (!tool) {
      if (refs.length === 0)
        countSkipped(ctx.skipped, callId === null ? 'observation:without-source_call_id' : 'observation:unpaired');
      return;
    }
    const text = contentText(result['content']) ?? '';
    const extra = obj(result['extra']) ?? {};
    // Writer extensions some converters add; the RFC itself has only the text.
    const flagged = extra['is_error'] === true || extra['status'] === 'error' || result['is_error'] === true;
    const failure = outputFailure(text);
    tool.isError = flagged || failure !== null;
    tool.exitCode = failure?.exitCode ?? null;
    tool.errorText = tool.isError ? errorTextOf(text) : null;
    tool.resultChars = text.length;
    tool.resultSource = ctx.doc.locate(resultPath);
  });
}

/** Sub-agent references of user and system steps (no tool call of theirs to pair). */
function collectChildren(
  step: JsonObject,
  path: JsonPath,
  children: { ref: JsonObject; toolCallId: string | null; path: JsonPath }[],
): void {
  const observation = obj(step['observation']);
  (arr(observation?.['results']) ?? []).forEach((raw, k) => {
    const result = obj(raw);
    (arr(result?.['subagent_trajectory_ref']) ?? []).forEach((ref, r) => {
      if (isObject(ref))
        children.push({
          ref,
          toolCallId: str(result?.['source_call_id']),
          path: [...path, 'observation', 'results', k, 'subagent_trajectory_ref', r],
        });
    });
  });
}

/** Reads a referenced sub-agent embedded in this file; one in another file is named in a diagnostic. */
function readChild(
  ctx: Context,
  parent: Session,
  child: { ref: JsonObject; toolCallId: string | null; path: JsonPath },
): void {
  const key = str(child.ref['trajectory_id']) ?? str(child.ref['session_id']);
  const embedded = key === null ? undefined : ctx.embedded.get(key);
  if (embedded && key !== null) {
    if (ctx.read.has(key)) return;
    ctx.read.add(key);
    readTrajectory(ctx, embedded.value, embedded.path, parent.id, child.toolCallId);
    return;
  }
  const where = str(child.ref['trajectory_path']);
  countSkipped(ctx.skipped, 'subagent:external');
  note(
    ctx,
    child.path,
    'info',
    `Sub-agent trajectory ${key ?? '(no id)'}${where ? ` is in ${where}` : ' is not in this file'}: open that file to see its calls; they are not counted here.`,
  );
}
