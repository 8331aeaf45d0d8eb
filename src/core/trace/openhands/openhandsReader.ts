import type { JsonDocument, JsonPath } from '../formatDefinition';
import { arr, clip, count, emptyRecord, firstLine, isObject, isoMs, nonNegative, num, obj, str } from '../json';
import type { JsonObject } from '../json';
import { mostUsedModel, noOtherInputs, requestedToolCall, unknownTokens } from '../model';
import type {
  CallTokens,
  Compaction,
  Diagnostic,
  LlmCall,
  ReportedTotals,
  Session,
  SourceRef,
  ToolCall,
  UserTurn,
} from '../model';
import { countSkipped } from '../recordReader';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';
import { ERROR_TEXT_MAX } from '../sweAgent/observationErrors';

const PREVIEW_MAX = 160;
/** Session id when the events name none (a saved trajectory, an events folder). */
const FALLBACK_SESSION_ID = 'openhands-session';
/** Name of a failed call whose action never became a tool call (the model's call was rejected). */
const UNKNOWN_TOOL = '(unknown tool)'; // toolTaxonomy's UNKNOWN_TOOL_NAME: never grouped into a retry loop

/** One OpenHands event: an action or an observation, with its numeric id and source. */
export function isOpenHandsEvent(v: unknown): v is JsonObject {
  return (
    isObject(v) &&
    typeof v['id'] === 'number' &&
    typeof v['source'] === 'string' &&
    (typeof v['action'] === 'string' || typeof v['observation'] === 'string')
  );
}

/** One instance of an OpenHands evaluation `output.jsonl`: its id and event history. */
export function isOpenHandsInstance(v: unknown): v is JsonObject {
  if (!isObject(v) || !('instance_id' in v || 'instance' in v || 'metrics' in v)) return false;
  const history = arr(v['history']);
  return history !== null && history.length > 0 && history.slice(0, 3).every(isOpenHandsEvent);
}

/** A saved trajectory: an array of events (the first few confirm it). */
export function isOpenHandsTrajectory(v: unknown): boolean {
  if (isOpenHandsInstance(v)) return true;
  const events = arr(v);
  return events !== null && events.length > 0 && events.slice(0, 5).every(isOpenHandsEvent);
}

/** Where an event is: a path in a document, or a line of a JSON Lines file. */
type Locate = (path: JsonPath) => SourceRef;

/**
 * Builds one session from OpenHands events in order (docs/design/formats.md §15, V0 events).
 *
 * - A typed prompt is a `message` action from the user; `recall` and system events are not.
 * - One LLM call per model response: agent actions carry `tool_call_metadata.model_response`
 *   (its `id` and `usage`); parallel tool calls of one response share it. Without it, a
 *   change in the accumulated `llm_metrics` marks a new call and the difference is its usage.
 *   An agent `message` with neither is a reply in text: a call whose tokens are unknown.
 * - Tokens: `prompt_tokens` includes `prompt_tokens_details.cached_tokens` (litellm); an
 *   evaluation's `metrics.token_usages` fill in by `response_id`.
 * - Tool calls are the actions the model asked for (`tool_call_id`, `function_name`); their
 *   observation (`cause` = the action's id) is the result: `error`, a non-zero exit code, or
 *   an `ERROR:` text fails it. A condensation is a compaction.
 */
class SessionBuilder {
  readonly calls: LlmCall[] = [];
  readonly turns: UserTurn[] = [];
  readonly compactions: Compaction[] = [];
  private readonly callsByResponse = new Map<string, LlmCall>();
  private readonly toolsByAction = new Map<number, ToolCall>();
  private readonly toolsById = new Map<string, ToolCall>();
  private lastAccumulated: { prompt: number; completion: number; cached: number | null } | null = null;
  private lastInputMs: number | null = null;
  private readonly other = noOtherInputs();
  model: string | null = null;
  totals: ReportedTotals | null = null;

  constructor(
    readonly id: string,
    private readonly usages: Map<string, JsonObject>,
    private readonly skipped: Record<string, number>,
  ) {}

  event(e: JsonObject, source: SourceRef): void {
    const timeMs = isoMs(e['timestamp']);
    const sourceKind = str(e['source']);
    const action = str(e['action']);
    const observation = str(e['observation']);
    this.noteMetrics(obj(e['llm_metrics']));
    if (action !== null) this.action(e, action, sourceKind, timeMs, source);
    else if (observation !== null) this.observation(e, observation, timeMs, source);
  }

  private action(
    e: JsonObject,
    action: string,
    sourceKind: string | null,
    timeMs: number | null,
    source: SourceRef,
  ): void {
    const args = obj(e['args']) ?? {};
    if (sourceKind === 'user') {
      if (action === 'message') {
        const text = str(args['content']) ?? str(e['message']) ?? '';
        this.turns.push({
          index: this.turns.length,
          startMs: timeMs,
          preview: clip(text.replace(/\s+/g, ' ').trim(), PREVIEW_MAX),
          source,
        });
        this.lastInputMs = timeMs;
      } else countSkipped(this.skipped, `user action:${action}`);
      return;
    }
    if (action === 'condensation' || action === 'condensation_request') {
      // The condenser replaced older events with a summary: the cache starts again after it.
      this.compactions.push({
        beforeCall: this.calls.length,
        trigger: action === 'condensation_request' ? 'manual' : 'auto',
        preTokens: null,
        timeMs,
        source,
      });
      this.other.compactionSummary += action === 'condensation' ? 1 : 0;
      return;
    }
    if (sourceKind !== 'agent') {
      countSkipped(this.skipped, `${sourceKind ?? '(no source)'} action:${action}`);
      return;
    }
    if (action === 'system' || action === 'recall') {
      countSkipped(this.skipped, `agent action:${action}`);
      return;
    }
    const meta = obj(e['tool_call_metadata']);
    const call =
      action === 'message' && !hasResponseId(meta)
        ? this.replyCall(e, timeMs, source)
        : this.callFor(meta, timeMs, source);
    if (!call) {
      countSkipped(this.skipped, `agent action:${action} (no model response)`);
      return;
    }
    const toolId = meta ? str(meta['tool_call_id']) : null;
    if (toolId === null) return; // a message or a step the model took without a tool
    const key = `${call.id}/${toolId}`;
    if (this.toolsById.has(key)) return;
    const tool = requestedToolCall({
      id: toolId,
      name: str(meta!['function_name']) ?? action,
      targetFile: str(args['path']) ?? str(args['file_path']) ?? null,
      command: action === 'run' || action === 'run_ipython' ? (str(args['command']) ?? str(args['code'])) : null,
      startMs: timeMs,
      source,
    });
    call.toolCalls.push(tool);
    this.toolsById.set(key, tool);
    const id = num(e['id']);
    if (id !== null) this.toolsByAction.set(id, tool);
  }

  /** The call an agent action belongs to: its model response, else a change in the accumulated usage, else the last call. */
  private callFor(meta: JsonObject | null, timeMs: number | null, source: SourceRef): LlmCall | null {
    const response = meta ? obj(meta['model_response']) : null;
    const responseId = response ? str(response['id']) : null;
    if (responseId !== null) {
      const known = this.callsByResponse.get(responseId);
      if (known) return known;
      const model = str(response!['model']);
      const usage = obj(response!['usage']);
      const tokens = usage && count(usage['prompt_tokens']) !== null ? usageTokens(usage) : this.tokensOf(responseId);
      const call = this.newCall(responseId, model, timeMs, tokens, source);
      this.callsByResponse.set(responseId, call);
      // The rise in the accumulated usage is this response's: it makes no call of its own.
      this.pendingDelta = null;
      return call;
    }
    const delta = this.pendingDelta;
    if (delta) {
      this.pendingDelta = null;
      return this.newCall(`call-${this.calls.length + 1}`, null, timeMs, delta, source);
    }
    return this.calls[this.calls.length - 1] ?? null;
  }

  /**
   * An agent `message` without a model response id: the model answered in text and asked for
   * no tool, so no action carries the response's metadata and usage. It is a call of its own,
   * with the rise in accumulated usage as its tokens when the event carries one, else unknown
   * tokens. Only an event whose accumulated usage did not rise (no new response) stays with
   * the last call.
   */
  private replyCall(e: JsonObject, timeMs: number | null, source: SourceRef): LlmCall | null {
    const delta = this.pendingDelta;
    this.pendingDelta = null;
    if (delta) return this.newCall(`call-${this.calls.length + 1}`, null, timeMs, delta, source);
    if (obj(obj(e['llm_metrics'])?.['accumulated_token_usage'])) return this.calls[this.calls.length - 1] ?? null;
    return this.newCall(
      `reply-${str(e['id']) ?? num(e['id']) ?? this.calls.length + 1}`,
      null,
      timeMs,
      unknownTokens(),
      source,
    );
  }

  private newCall(
    id: string,
    model: string | null,
    timeMs: number | null,
    tokens: CallTokens,
    source: SourceRef,
  ): LlmCall {
    const call: LlmCall = {
      id,
      index: this.calls.length,
      turn: this.turns.length > 0 ? this.turns.length - 1 : null,
      model: model ?? this.model,
      startMs: this.lastInputMs,
      endMs: timeMs,
      tokens,
      server: null,
      blocks: null,
      toolCalls: [],
      source,
    };
    this.calls.push(call);
    return call;
  }

  /** Tokens of a response from an evaluation's `metrics.token_usages`, by `response_id`. */
  private tokensOf(responseId: string): CallTokens {
    const u = this.usages.get(responseId);
    if (!u) return unknownTokens();
    const input = count(u['prompt_tokens']);
    const cached = 'cache_read_tokens' in u ? count(u['cache_read_tokens']) : null;
    const write = 'cache_write_tokens' in u ? count(u['cache_write_tokens']) : null;
    return {
      input,
      cached,
      appended: input !== null && cached !== null && cached <= input ? input - cached : null,
      cacheWrite: write,
      output: count(u['completion_tokens']),
      reasoningOutput: null,
    };
  }

  private pendingDelta: CallTokens | null = null;

  /** Accumulated usage on an event: a rise without a model response id is a call of its own. */
  private noteMetrics(m: JsonObject | null): void {
    const acc = m ? obj(m['accumulated_token_usage']) : null;
    if (!acc) return;
    const prompt = count(acc['prompt_tokens']);
    const completion = count(acc['completion_tokens']);
    if (prompt === null || completion === null) return;
    const cached = count(acc['cache_read_tokens']);
    const model = str(acc['model']);
    if (model !== null && model !== 'default') this.model ??= model;
    const before = this.lastAccumulated;
    this.lastAccumulated = { prompt, completion, cached };
    if (!before || (prompt === before.prompt && completion === before.completion)) {
      if (!before && (prompt > 0 || completion > 0))
        this.pendingDelta = deltaTokens(prompt, completion, cached, 0, 0, 0);
      return;
    }
    if (prompt < before.prompt || completion < before.completion) return;
    this.pendingDelta = deltaTokens(prompt, completion, cached, before.prompt, before.completion, before.cached ?? 0);
  }

  private observation(e: JsonObject, kind: string, timeMs: number | null, source: SourceRef): void {
    this.lastInputMs = timeMs ?? this.lastInputMs;
    const cause = num(e['cause']);
    let tool = cause !== null ? this.toolsByAction.get(cause) : undefined;
    const meta = obj(e['tool_call_metadata']);
    const response = meta ? str(obj(meta['model_response'])?.['id']) : null;
    const toolId = meta ? str(meta['tool_call_id']) : null;
    if (!tool && response !== null && toolId !== null) tool = this.toolsById.get(`${response}/${toolId}`);
    const extras = obj(e['extras']) ?? {};
    const text = str(e['content']) ?? str(e['message']) ?? '';
    if (kind === 'agent_condensation' || kind === 'condense') {
      this.compactions.push({ beforeCall: this.calls.length, trigger: 'auto', preTokens: null, timeMs, source });
      return;
    }
    if (!tool) {
      // An error the agent got back for a call that never became an action (a rejected tool call):
      // a failed call of a tool the log does not name, on the call that made it.
      const call = this.calls[this.calls.length - 1];
      if (kind === 'error' && call) {
        const orphan = requestedToolCall({
          id: `error-${str(e['id']) ?? num(e['id']) ?? source.line}`,
          name: UNKNOWN_TOOL,
          targetFile: null,
          command: null,
          startMs: timeMs,
          source,
        });
        settle(orphan, true, null, text, timeMs, source);
        call.toolCalls.push(orphan);
      } else
        countSkipped(this.skipped, `observation:${kind}${tool === undefined && cause !== null ? ' (unpaired)' : ''}`);
      return;
    }
    if (tool.resultSource !== null) {
      countSkipped(this.skipped, `observation:${kind} (repeated)`);
      return;
    }
    const metadata = obj(extras['metadata']);
    const exit = num(metadata?.['exit_code'] ?? extras['exit_code']);
    const exitCode = exit !== null && Number.isInteger(exit) && exit >= 0 ? exit : null;
    if (kind === 'run' && exit === -1) {
      // Exit code -1: the command was still running when OpenHands stopped waiting ("no new output after 30 seconds"): no outcome yet.
      settle(tool, false, null, text, timeMs, source);
      tool.isError = null;
      return;
    }
    const failed =
      kind === 'error' ||
      (exitCode !== null && exitCode !== 0) ||
      e['success'] === false ||
      /^ERROR:/.test(text.trimStart()) ||
      (kind === 'browse' && str(extras['error']) !== null && extras['error'] !== '');
    settle(tool, failed, exitCode, text, timeMs, source);
  }

  build(): Session {
    const session: Session = {
      id: this.id,
      parentId: null,
      parentToolCallId: null,
      role: 'main',
      agent: { name: 'openhands', version: null },
      model: mostUsedModel(this.calls) ?? this.model,
      cwd: null,
      title: this.turns[0] ? firstLine(this.turns[0].preview, PREVIEW_MAX) : null,
      calls: this.calls,
      turns: this.turns,
      compactions: this.compactions,
    };
    if (this.totals) session.reportedTotals = this.totals;
    if (Object.values(this.other).some((n) => n > 0)) session.otherInputs = this.other;
    return session;
  }
}

/** True when tool-call metadata names the model response it came from. */
function hasResponseId(meta: JsonObject | null): boolean {
  return meta !== null && str(obj(meta['model_response'])?.['id']) !== null;
}

function settle(
  tool: ToolCall,
  failed: boolean,
  exitCode: number | null,
  text: string,
  timeMs: number | null,
  source: SourceRef,
): void {
  tool.isError = failed;
  tool.exitCode = exitCode;
  tool.endMs = timeMs;
  tool.durationMs = timeMs !== null && tool.startMs !== null && timeMs >= tool.startMs ? timeMs - tool.startMs : null;
  tool.resultSource = source;
  tool.resultChars = text.length;
  if (failed) tool.errorText = clip(text.trim() || 'failed', ERROR_TEXT_MAX);
}

/** litellm usage: prompt_tokens includes the cached ones (prompt_tokens_details.cached_tokens). */
function usageTokens(usage: JsonObject): CallTokens {
  const input = count(usage['prompt_tokens']);
  const details = obj(usage['prompt_tokens_details']);
  const cached =
    details && 'cached_tokens' in details
      ? count(details['cached_tokens'])
      : 'cache_read_input_tokens' in usage
        ? count(usage['cache_read_input_tokens'])
        : null;
  const write = 'cache_creation_input_tokens' in usage ? count(usage['cache_creation_input_tokens']) : null;
  const reasoning = obj(usage['completion_tokens_details']);
  return {
    input,
    cached,
    appended: input !== null && cached !== null && cached <= input ? input - cached : null,
    cacheWrite: write,
    output: count(usage['completion_tokens']),
    reasoningOutput: reasoning && 'reasoning_tokens' in reasoning ? count(reasoning['reasoning_tokens']) : null,
  };
}

function deltaTokens(
  prompt: number,
  completion: number,
  cached: number | null,
  prompt0: number,
  completion0: number,
  cached0: number,
): CallTokens {
  const input = prompt - prompt0;
  const c = cached === null ? null : cached - cached0;
  return {
    input,
    cached: c !== null && c >= 0 ? c : null,
    appended: c !== null && c >= 0 && c <= input ? input - c : null,
    cacheWrite: null,
    output: completion - completion0,
    reasoningOutput: null,
  };
}

/** An evaluation's run totals (`metrics.accumulated_token_usage`, `accumulated_cost`). */
function totalsOf(metrics: JsonObject | null): ReportedTotals | null {
  const acc = metrics ? obj(metrics['accumulated_token_usage']) : null;
  if (!metrics || !acc) return null;
  const usages = arr(metrics['token_usages']);
  return {
    input: count(acc['prompt_tokens']),
    output: count(acc['completion_tokens']),
    cached: count(acc['cache_read_tokens']),
    costUsd: nonNegative(metrics['accumulated_cost']),
    llmCalls: usages ? usages.length : null,
  };
}

/** `metrics.token_usages` by response id. */
function usagesOf(metrics: JsonObject | null): Map<string, JsonObject> {
  const map = new Map<string, JsonObject>();
  for (const u of arr(metrics?.['token_usages']) ?? []) {
    const id = isObject(u) ? str(u['response_id']) : null;
    if (id) map.set(id, u as JsonObject);
  }
  return map;
}

/** One evaluation instance (or a bare trajectory) as a session. */
function readEvents(
  id: string,
  events: unknown[],
  metrics: JsonObject | null,
  locate: Locate,
  base: JsonPath,
  skipped: Record<string, number>,
): Session {
  const b = new SessionBuilder(id, usagesOf(metrics), skipped);
  events.forEach((e, i) => {
    if (isOpenHandsEvent(e)) b.event(e, locate([...base, i]));
    else countSkipped(skipped, '(not an event)');
  });
  b.totals = totalsOf(metrics);
  return b.build();
}

/** A saved trajectory (an array of events) or one evaluation instance, as a document. */
export function readOpenHandsDocument(doc: JsonDocument): ReaderResult {
  const diagnostics: Diagnostic[] = [];
  const skipped: Record<string, number> = emptyRecord();
  const v = doc.value;
  const session = isOpenHandsInstance(v)
    ? readEvents(
        instanceId(v) ?? FALLBACK_SESSION_ID,
        arr(v['history'])!,
        obj(v['metrics']),
        doc.locate,
        ['history'],
        skipped,
      )
    : readEvents(FALLBACK_SESSION_ID, arr(v) ?? [], null, doc.locate, [], skipped);
  return { sessions: [session], diagnostics, skippedRecords: skipped };
}

function instanceId(v: JsonObject): string | null {
  return str(v['instance_id']) ?? str(obj(v['instance'])?.['instance_id']);
}

/**
 * JSON Lines: an evaluation `output.jsonl` (one instance per line, each its own session),
 * or events one per line (a session's `events/` folder read in order).
 */
export class OpenHandsRecordReader implements RecordReader {
  private readonly sessions: Session[] = [];
  private readonly diagnostics: Diagnostic[] = [];
  private readonly skipped: Record<string, number> = emptyRecord();
  private events: SessionBuilder | null = null;

  record({ value, source }: TraceRecord): void {
    if (isOpenHandsInstance(value)) {
      const line = source;
      this.sessions.push(
        readEvents(
          instanceId(value) ?? `instance-${this.sessions.length + 1}`,
          arr(value['history'])!,
          obj(value['metrics']),
          () => line,
          ['history'],
          this.skipped,
        ),
      );
      return;
    }
    if (isOpenHandsEvent(value)) {
      this.events ??= new SessionBuilder(FALLBACK_SESSION_ID, new Map(), this.skipped);
      this.events.event(value, source);
      return;
    }
    countSkipped(this.skipped, '(not an OpenHands event)');
  }

  finish(): ReaderResult {
    if (this.events) this.sessions.push(this.events.build());
    return { sessions: this.sessions, diagnostics: this.diagnostics, skippedRecords: this.skipped };
  }
}
