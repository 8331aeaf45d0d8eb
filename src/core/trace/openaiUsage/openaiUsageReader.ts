import { arr, count, emptyRecord, firstArgument, isObject, num, obj, parseArguments, str } from '../json';
import type { JsonObject } from '../json';
import { mostUsedModel, requestedToolCall, unknownTokens } from '../model';
import type { CallTokens, Diagnostic, LlmCall, Session, SourceRef, ToolCall } from '../model';
import { countSkipped } from '../recordReader';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';

/** `object` values of OpenAI-compatible completion responses (and the last chunk of a stream, which carries usage). */
const COMPLETION_OBJECTS = new Set(['chat.completion', 'text_completion', 'chat.completion.chunk']);
/** Fields a logging client may use to group requests into conversations. */
const SESSION_KEYS = ['conversation_id', 'session_id', 'conversationId', 'sessionId'];
/** Session id when the log has no conversation field: the whole file is one session. */
export const FILE_SESSION_ID = 'usage-log';

/** A completion found in a record, and what wrapped it. */
export interface FoundCompletion {
  completion: JsonObject;
  /** The record itself, or the wrapper around the completion. */
  wrapper: JsonObject;
  /** `custom_id` of an OpenAI Batch output line. */
  customId: string | null;
}

/** True when the value looks like a chat/completions response body. */
export function isCompletion(value: unknown): value is JsonObject {
  if (!isObject(value)) return false;
  const object = str(value['object']);
  if (object !== null)
    return COMPLETION_OBJECTS.has(object) && (isObject(value['usage']) || Array.isArray(value['choices']));
  // Some OpenAI-compatible servers leave out `object`: usage with prompt_tokens plus choices.
  const usage = obj(value['usage']);
  return usage !== null && 'prompt_tokens' in usage && Array.isArray(value['choices']);
}

/**
 * The completion in a record: the record itself; `{"response": completion}` or
 * `{"request": …, "response": completion}` as request/response loggers write it; or an
 * OpenAI Batch API output line `{"id", "custom_id", "response": {"status_code",
 * "request_id", "body": completion}, "error"}` (also what `vllm run-batch` writes).
 */
export function findCompletion(record: JsonObject): FoundCompletion | null {
  if (isCompletion(record)) return { completion: record, wrapper: record, customId: null };
  const response = obj(record['response']);
  if (!response) return null;
  if (isCompletion(response)) return { completion: response, wrapper: record, customId: str(record['custom_id']) };
  const body = response['body'];
  if (isCompletion(body)) return { completion: body, wrapper: record, customId: str(record['custom_id']) };
  return null;
}

/** An OpenAI Batch output line for a request that failed: `response` null and an `error`. */
function batchError(record: JsonObject): string | null {
  if (!('custom_id' in record) || !isObject(record['error'])) return null;
  const error = record['error'];
  return [str(error['code']), str(error['message'])].filter((s) => s !== null).join(': ') || 'unknown error';
}

/**
 * Usage tokens of an OpenAI-compatible response. `prompt_tokens` includes cached
 * tokens (docs/design/formats.md §12.3). A missing `prompt_tokens_details` means the server did not
 * say (vLLM fills it only with --enable-prompt-tokens-details), so cached stays null,
 * never 0 (§12.10).
 */
export function usageTokens(usage: JsonObject): { tokens: CallTokens; cachedExceedsInput: boolean } {
  const input = count(usage['prompt_tokens']);
  const details = obj(usage['prompt_tokens_details']);
  const cached = details ? count(details['cached_tokens']) : null;
  const outDetails = obj(usage['completion_tokens_details']);
  const output = count(usage['completion_tokens']);
  const cachedExceedsInput = input !== null && cached !== null && cached > input;
  const appended = input !== null && cached !== null && !cachedExceedsInput ? input - cached : null;
  return {
    tokens: {
      input,
      // An impossible cached figure is dropped rather than kept beside a null appended.
      cached: cachedExceedsInput ? null : cached,
      appended,
      cacheWrite: null,
      output,
      reasoningOutput: outDetails ? count(outDetails['reasoning_tokens']) : null,
    },
    cachedExceedsInput,
  };
}

function sessionKey(found: FoundCompletion): string | null {
  const places = [
    found.wrapper,
    obj(found.wrapper['metadata']),
    obj(obj(found.wrapper['request'])?.['metadata']),
    obj(found.completion['metadata']),
  ];
  for (const place of places) {
    if (!place) continue;
    for (const key of SESSION_KEYS) {
      const v = place[key];
      if (typeof v === 'string' && v !== '') return v;
      if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    }
  }
  return null;
}

interface SessionState {
  id: string;
  calls: LlmCall[];
  callsById: Map<string, LlmCall>;
  /** Tool call ids of the session so far, so a repeated id gets a suffix without rescanning every call. */
  toolIds: Set<string>;
  order: number;
}

/**
 * Reads OpenAI-compatible usage logs: JSON Lines where each line is a chat/completions
 * response, or a log record holding one (see `findCompletion`). One session per file,
 * unless records carry a conversation or session id. A response says nothing of the
 * tools' results, so its tool calls have `isError: null`.
 */
export class OpenAiUsageReader implements RecordReader {
  private readonly sessions = new Map<string, SessionState>();
  private readonly diagnostics: Diagnostic[] = [];
  private readonly skipped: Record<string, number> = emptyRecord();

  record({ value, source }: TraceRecord): void {
    const found = findCompletion(value);
    if (!found) {
      const error = batchError(value);
      if (error !== null) {
        countSkipped(this.skipped, 'request-error');
        this.report(
          source,
          'info',
          `request ${str(value['custom_id']) ?? ''} failed (${error}); it has no usage and is not a call.`,
        );
      } else countSkipped(this.skipped, str(value['object']) ?? '(no completion)');
      return;
    }
    const { completion } = found;
    const usage = obj(completion['usage']);
    if (str(completion['object']) === 'chat.completion.chunk' && !usage) {
      // Stream chunks before the last one carry no usage; the last one stands for the call.
      countSkipped(this.skipped, 'chat.completion.chunk');
      return;
    }
    const session = this.session(sessionKey(found) ?? FILE_SESSION_ID);
    const preferred = str(completion['id']) ?? found.customId ?? `call-${session.calls.length + 1}`;
    const earlier = session.callsById.get(preferred);
    if (earlier) {
      if (str(completion['object']) === 'chat.completion.chunk') {
        // vLLM's continuous_usage_stats puts usage on every chunk of a stream: keep the last count.
        const output = usage ? count(usage['completion_tokens']) : null;
        if (output !== null && (earlier.tokens.output === null || output > earlier.tokens.output))
          earlier.tokens.output = output;
        countSkipped(this.skipped, 'chat.completion.chunk');
        return;
      }
      countSkipped(this.skipped, 'duplicate-id');
      this.report(
        source,
        'warning',
        `response id "${preferred}" appears again in session "${session.id}"; the repeat is skipped.`,
      );
      return;
    }
    let tokens = unknownTokens();
    if (usage) {
      const read = usageTokens(usage);
      tokens = read.tokens;
      if (read.cachedExceedsInput)
        this.report(
          source,
          'warning',
          'prompt_tokens_details.cached_tokens exceeds prompt_tokens; cached read as unknown.',
        );
    } else this.report(source, 'info', `response "${preferred}" has no usage: its tokens are unknown.`);
    const created = num(completion['created']);
    const call: LlmCall = {
      id: preferred,
      index: session.calls.length,
      turn: null,
      model: str(completion['model']),
      // `created` is the server's whole-second clock when it took the request.
      startMs: created !== null && created >= 0 ? created * 1000 : null,
      endMs: null,
      tokens,
      server: null,
      blocks: null,
      toolCalls: [],
      source,
    };
    // OpenAI's flex tier bills at half price: kept for pricing, and only when the response says.
    const serviceTier = str(completion['service_tier']);
    if (serviceTier) call.serviceTier = serviceTier;
    call.toolCalls = this.toolCalls(completion, call, session, source);
    session.calls.push(call);
    session.callsById.set(preferred, call);
  }

  finish(): ReaderResult {
    const sessions: Session[] = [...this.sessions.values()]
      .sort((a, b) => a.order - b.order)
      .map((s) => {
        // Batch output and merged logs are not in time order; sort when every call has a time.
        const calls = s.calls.every((c) => c.startMs !== null)
          ? [...s.calls].sort((a, b) => a.startMs! - b.startMs!)
          : s.calls;
        calls.forEach((c, i) => (c.index = i));
        return {
          id: s.id,
          parentId: null,
          parentToolCallId: null,
          role: 'main',
          agent: null,
          model: mostUsedModel(calls),
          cwd: null,
          title: null,
          calls,
          turns: [],
          compactions: [],
        };
      });
    return { sessions, diagnostics: this.diagnostics, skippedRecords: this.skipped };
  }

  private session(id: string): SessionState {
    let s = this.sessions.get(id);
    if (!s)
      this.sessions.set(
        id,
        (s = { id, calls: [], callsById: new Map(), toolIds: new Set(), order: this.sessions.size }),
      );
    return s;
  }

  /** `choices[].message.tool_calls` (and the legacy `function_call`): names and arguments, no results. */
  private toolCalls(completion: JsonObject, call: LlmCall, session: SessionState, source: SourceRef): ToolCall[] {
    const tools: ToolCall[] = [];
    const seen = session.toolIds;
    const add = (id: string | null, fn: JsonObject | null): void => {
      const name = fn ? str(fn['name']) : null;
      if (name === null) {
        countSkipped(this.skipped, 'tool_call:no-name');
        return;
      }
      let toolId = id ?? `${call.id}#${tools.length + 1}`;
      for (let n = 2; seen.has(toolId); n++) toolId = `${id ?? call.id}#${n}`;
      seen.add(toolId);
      const args = parseArguments(fn!['arguments']);
      tools.push(
        requestedToolCall({
          id: toolId,
          name,
          targetFile: firstArgument(args, ['file_path', 'filePath', 'path', 'notebook_path', 'target_file']),
          command: firstArgument(args, ['command', 'cmd']),
          startMs: null,
          source,
        }),
      );
    };
    for (const choice of arr(completion['choices']) ?? []) {
      const message = obj(obj(choice)?.['message']);
      if (!message) continue;
      for (const tc of arr(message['tool_calls']) ?? []) {
        if (isObject(tc)) add(str(tc['id']), obj(tc['function']));
      }
      const legacy = obj(message['function_call']);
      if (legacy) add(null, legacy);
    }
    return tools;
  }

  private report(source: SourceRef, severity: Diagnostic['severity'], message: string): void {
    this.diagnostics.push({ file: source.file, line: source.line, severity, message });
  }
}
