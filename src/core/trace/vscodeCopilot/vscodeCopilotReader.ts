import type { JsonDocument, JsonPath } from '../formatDefinition';
import { arr, clip, count, emptyRecord, firstArgument, isObject, num, obj, parseArguments, str } from '../json';
import type { JsonObject } from '../json';
import { mostUsedModel, noOtherInputs, requestedToolCall, unknownTokens } from '../model';
import type {
  CallTokens,
  Diagnostic,
  LlmCall,
  OtherInputs,
  Session,
  SessionEvent,
  SourceRef,
  ToolCall,
  UserTurn,
} from '../model';
import { countSkipped } from '../recordReader';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';
import { ERROR_TEXT_MAX } from '../sweAgent/observationErrors';

/**
 * VS Code's chat sessions (GitHub Copilot Chat, agent mode), docs/design/formats.md §19:
 * the store VS Code keeps per workspace (`workspaceStorage/<hash>/chatSessions/<id>.json`, and
 * `globalStorage/emptyWindowChatSessions/` for windows without a folder) and the file
 * *Chat: Export Chat…* writes. Shapes from microsoft/vscode
 * `src/vs/workbench/contrib/chat/common/model/chatModel.ts` (`ISerializableChatData`,
 * `ISerializableChatRequestData`), `chatSessionStore.ts` and `objectMutationLog.ts`, and
 * microsoft/vscode-copilot-chat `src/extension/prompt/common/conversation.ts`
 * (`IResultMetadata`), `intents.ts` (`IToolCallRound`), `toolCallRound.ts`.
 *
 * Newer VS Code writes the same object as an operation log (`<id>.jsonl`): a first line
 * `{"kind":0,"v":<the whole session>}`, then `{"kind":1,"k":[path],"v":value}` (set),
 * `{"kind":2,"k":[path],"v":[items],"i":index}` (cut the array at `i`, then push) and
 * `{"kind":3,"k":[path]}` (delete); replaying the lines gives the session.
 *
 * One request (a message the user sent) is a turn. Its model calls are the agent loop's
 * rounds (`result.metadata.toolCallRounds`: one request to the model each, with the tool
 * calls it asked for); a request without rounds that got an answer is one call. Token
 * counts are recorded sparsely: a round's own `usage` where the extension stores it, else
 * the request's `result.metadata.promptTokens`/`outputTokens` or `usage`, which describe the
 * request's last model call only (the context-window figure of its last fetch), so the
 * other calls' tokens stay unknown; reasoning from a round's `thinking.tokens`.
 */

/** True when the value is a VS Code chat session (store or export): `requests` of `{message, …}` and a Copilot marker. */
export function isChatSession(value: unknown): value is JsonObject {
  if (!isObject(value) || !Array.isArray(value['requests'])) return false;
  const marked =
    typeof value['responderUsername'] === 'string' ||
    typeof value['requesterUsername'] === 'string' ||
    (value['version'] === 3 && typeof value['sessionId'] === 'string');
  if (!marked) return false;
  const requests = value['requests'].slice(0, 20);
  return requests.every(
    (r) => isObject(r) && 'message' in r && ('requestId' in r || 'response' in r || 'timestamp' in r),
  );
}

/** True for a line of the operation log (`{"kind": 0..3, …}`). */
export function isChatLogEntry(value: unknown): boolean {
  if (!isObject(value)) return false;
  const kind = value['kind'];
  if (kind === 0) return isObject(value['v']) && Array.isArray((value['v'] as JsonObject)['requests']);
  return (kind === 1 || kind === 2 || kind === 3) && Array.isArray(value['k']);
}

/** The log's first line: it names the format. */
export function isChatLogHeader(value: unknown): boolean {
  return (
    isObject(value) &&
    value['kind'] === 0 &&
    isObject(value['v']) &&
    Array.isArray((value['v'] as JsonObject)['requests']) &&
    typeof (value['v'] as JsonObject)['version'] === 'number'
  );
}

type Locate = (path: JsonPath) => SourceRef;

/** Turn labels: the prompt's first characters (the canonical format keeps 160). */
const PREVIEW_MAX = 160;

/** Model ids are stored with their vendor (`copilot/claude-sonnet-4.5`). */
function modelName(id: string | null): string | null {
  if (id === null) return null;
  const slash = id.indexOf('/');
  return slash >= 0 ? id.slice(slash + 1) : id;
}

/** A round's OpenAI-shaped usage (`APIUsage`): prompt tokens include the cached ones. */
function roundUsage(u: JsonObject | null): CallTokens | null {
  if (!u) return null;
  const input = count(u['prompt_tokens']);
  const output = count(u['completion_tokens']);
  if (input === null && output === null) return null;
  const cached = count(obj(u['prompt_tokens_details'])?.['cached_tokens']);
  return {
    input,
    cached,
    appended: input !== null && cached !== null && cached <= input ? input - cached : null,
    cacheWrite: null,
    output,
    reasoningOutput: count(obj(u['completion_tokens_details'])?.['reasoning_tokens']),
  };
}

/** A request's usage of its last model call: the extension's metadata, VS Code's `usage`, or a `usage` response part. */
function requestUsage(r: JsonObject): { input: number | null; output: number | null } | null {
  const result = obj(r['result']);
  const md = obj(result?.['metadata']);
  const candidates: Array<JsonObject | null> = [
    md ? { promptTokens: md['promptTokens'], completionTokens: md['outputTokens'] } : null,
    obj(result?.['usage']),
    obj(r['usage']),
    ...(arr(r['response']) ?? []).filter((p) => isObject(p) && p['kind'] === 'usage').map((p) => p as JsonObject),
  ];
  for (const c of candidates) {
    if (!c) continue;
    const input = count(c['promptTokens']);
    const output = count(c['completionTokens']);
    if (input !== null || output !== null) return { input, output };
  }
  return null;
}

/** Reads one session object (the store's, the export's, or the log replayed). */
export function readChatSession(
  value: JsonObject,
  locate: Locate,
  fileKey: string,
  diagnostics: Diagnostic[],
  skipped: Record<string, number>,
): Session {
  const requests = arr(value['requests']) ?? [];
  const calls: LlmCall[] = [];
  const turns: UserTurn[] = [];
  const events: SessionEvent[] = [];
  const other: OtherInputs = noOtherInputs();
  let version: string | null = null;
  let sessionId = str(value['sessionId']);
  requests.forEach((raw, i) => {
    const path: JsonPath = ['requests', i];
    if (!isObject(raw)) {
      countSkipped(skipped, 'request:not-an-object');
      return;
    }
    const r = raw;
    const source = locate(path);
    const startMs = num(r['timestamp']);
    const message = obj(r['message']);
    const prompt = str(message?.['text']) ?? str(r['message']) ?? '';
    turns.push({
      index: turns.length,
      startMs,
      preview: clip(prompt.trim().replace(/\s+/g, ' '), PREVIEW_MAX),
      source,
    });
    const turn = turns.length - 1;
    const agent = obj(r['agent']);
    version ??= str(agent?.['extensionVersion']);
    const result = obj(r['result']);
    const md = obj(result?.['metadata']);
    sessionId ??= str(md?.['sessionId']);
    const timings = obj(result?.['timings']);
    const elapsed = num(timings?.['totalElapsed']);
    const error = obj(result?.['errorDetails']);
    const errorText = str(error?.['message']);
    const requestModel = modelName(str(md?.['resolvedModel']) ?? str(r['modelId']));
    const rounds = (arr(md?.['toolCallRounds']) ?? []).filter(isObject);
    const invocations = (arr(r['response']) ?? []).filter(
      (p): p is JsonObject => isObject(p) && p['kind'] === 'toolInvocationSerialized',
    );
    const used = new Set<JsonObject>();
    const results = obj(md?.['toolCallResults']);
    const answered =
      (arr(r['response']) ?? []).some(
        (p) => isObject(p) && (typeof p['value'] === 'string' || p['kind'] === 'markdownContent'),
      ) && rounds.length === 0;
    if (errorText !== null && rounds.length === 0 && !answered) {
      // Nothing reached the model's answer: a canceled or failed request.
      if (/^cancel/i.test(errorText)) other.interruption += 1;
      else
        events.push({
          kind: 'api-error',
          beforeCall: calls.length,
          timeMs: startMs,
          text: clip(errorText, ERROR_TEXT_MAX),
          source,
        });
      return;
    }
    const roundList = rounds.length > 0 ? rounds : answered || result ? [null] : [];
    const usage = requestUsage(r);
    roundList.forEach((round, k) => {
      const last = k === roundList.length - 1;
      const at: JsonPath = round ? [...path, 'result', 'metadata', 'toolCallRounds', k] : path;
      let tokens = round ? roundUsage(obj(round['usage'])) : null;
      if (!tokens && last && usage)
        tokens = {
          input: usage.input,
          cached: null,
          appended: null,
          cacheWrite: null,
          output: usage.output,
          reasoningOutput: null,
        };
      tokens ??= unknownTokens();
      const thinking = count(obj(round?.['thinking'])?.['tokens']);
      if (thinking !== null && tokens.reasoningOutput === null) tokens.reasoningOutput = thinking;
      const roundStart = num(round?.['timestamp']) ?? (k === 0 ? startMs : null);
      const call: LlmCall = {
        id: str(round?.['id']) ?? `${str(r['requestId']) ?? `request-${i + 1}`}#${k + 1}`,
        index: calls.length,
        turn,
        model: modelName(str(round?.['modelId']) ?? str(round?.['phaseModelId'])) ?? requestModel,
        startMs: roundStart,
        endMs: last && startMs !== null && elapsed !== null ? startMs + elapsed : null,
        tokens,
        server: null,
        blocks: null,
        toolCalls: [],
        source: locate(at),
      };
      for (const [j, c] of (arr(round?.['toolCalls']) ?? []).entries()) {
        if (!isObject(c)) continue;
        call.toolCalls.push(tool(c, [...at, 'toolCalls', j], invocations, used, results, locate));
      }
      calls.push(call);
    });
    if (errorText !== null && !/^cancel/i.test(errorText))
      events.push({
        kind: 'api-error',
        beforeCall: calls.length,
        timeMs: startMs !== null && elapsed !== null ? startMs + elapsed : startMs,
        text: clip(errorText, ERROR_TEXT_MAX),
        source,
      });
    else if (errorText !== null) other.interruption += 1;
  });
  if (calls.some((c) => c.tokens.input === null) && calls.some((c) => c.tokens.input !== null)) {
    diagnostics.push({
      file: 0,
      line: -1,
      severity: 'info',
      message:
        "VS Code records token counts for the last model call of a request only (and only in newer versions): the other calls' tokens are unknown.",
    });
  }
  return {
    id: sessionId ?? fileKey,
    parentId: null,
    parentToolCallId: null,
    role: 'main',
    agent: { name: 'GitHub Copilot Chat', version },
    model: mostUsedModel(calls),
    cwd: null,
    title: str(value['customTitle']),
    calls,
    turns,
    compactions: [],
    otherInputs: other,
    ...(events.length > 0 ? { events } : {}),
  };
}

/**
 * A tool call of a round, paired with what VS Code showed for it: the next
 * `toolInvocationSerialized` part of the request with the same tool id (the two use different
 * call ids, so they are paired by name and order). A terminal command's exit code comes from
 * there; a call the user denied is a failure.
 */
function tool(
  c: JsonObject,
  path: JsonPath,
  invocations: JsonObject[],
  used: Set<JsonObject>,
  results: JsonObject | null,
  locate: Locate,
): ToolCall {
  const name = str(c['name']) ?? 'tool';
  const id = str(c['id']) ?? `${name}-${path.join('.')}`;
  const args = parseArguments(c['arguments']);
  const t = requestedToolCall({
    id,
    name,
    targetFile: firstArgument(args, ['filePath', 'file_path', 'path', 'uri']),
    command: firstArgument(args, ['command', 'cmd']),
    startMs: null,
    source: locate(path),
  });
  const shown = invocations.find((p) => !used.has(p) && str(p['toolId']) === name);
  if (shown) used.add(shown);
  const data = obj(shown?.['toolSpecificData']);
  const state = obj(data?.['terminalCommandState']);
  const exit = num(state?.['exitCode']);
  const confirmed = shown?.['isConfirmed'];
  const denied = confirmed === false || (isObject(confirmed) && confirmed['type'] === 0);
  const result = results ? obj(results[id]) : null;
  if (t.command === null) t.command = str(obj(data?.['commandLine'])?.['original']);
  if (state) {
    t.startMs = num(state['timestamp']);
    t.durationMs = num(state['duration']);
  }
  if (denied) {
    t.isError = true;
    t.errorText = 'denied by the user';
  } else if (exit !== null) {
    t.exitCode = exit;
    t.isError = exit !== 0;
    if (t.isError) t.errorText = `exit code ${exit}`;
  } else if (result || shown?.['isComplete'] === true) t.isError = false;
  const parts = arr(result?.['content']) ?? [];
  const text = parts.map((p) => str(obj(p)?.['value']) ?? '').join('');
  if (result) t.resultChars = text.length;
  return t;
}

/**
 * A copy of a record's value: the log's state is built by changing what earlier lines gave,
 * and a record must stay as it was read (a snapshot of a growing file feeds the first records
 * again to a fresh reader).
 */
function copy<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Replays the operation log's entries onto the state (objectMutationLog.ts `read`). */
function apply(state: JsonObject | null, entry: JsonObject): JsonObject | null {
  const kind = entry['kind'];
  if (kind === 0) return isObject(entry['v']) ? copy(entry['v'] as JsonObject) : state;
  if (!state) return null;
  const path = arr(entry['k']) ?? [];
  if (path.length === 0) return state;
  let at: unknown = state;
  for (const key of path.slice(0, -1)) {
    at =
      isObject(at) || Array.isArray(at) ? (at as Record<string | number, unknown>)[key as string | number] : undefined;
    if (at === undefined || at === null) return state;
  }
  const last = path[path.length - 1] as string | number;
  const target = at as Record<string | number, unknown>;
  if (kind === 1) target[last] = copy(entry['v']);
  else if (kind === 3) delete target[last];
  else if (kind === 2) {
    const list = Array.isArray(target[last]) ? (target[last] as unknown[]) : [];
    const cut = num(entry['i']);
    if (cut !== null) list.length = Math.max(0, Math.min(list.length, cut));
    for (const item of arr(entry['v']) ?? []) list.push(copy(item));
    target[last] = list;
  }
  return state;
}

/** The operation log (`chatSessions/<id>.jsonl`): replayed line by line, read at the end. */
export class ChatLogReader implements RecordReader {
  private state: JsonObject | null = null;
  private readonly diagnostics: Diagnostic[] = [];
  private readonly skipped: Record<string, number> = emptyRecord();
  /** The line that last wrote each request, for "reveal source". */
  private readonly requestSource = new Map<number, SourceRef>();
  private first: SourceRef | null = null;

  record({ value, source }: TraceRecord): void {
    if (!isChatLogEntry(value)) {
      countSkipped(this.skipped, '(not a chat log entry)');
      this.diagnostics.push({
        file: source.file,
        line: source.line,
        severity: 'warning',
        message: 'Not a line of VS Code\'s chat operation log ({"kind": 0–3, …}); skipped.',
      });
      return;
    }
    if (value['kind'] !== 0 && this.state === null) {
      this.diagnostics.push({
        file: source.file,
        line: source.line,
        severity: 'warning',
        message: 'Change before the log\'s first full session line ({"kind": 0}); skipped.',
      });
      return;
    }
    this.first ??= source;
    this.state = apply(this.state, value);
    const path = arr(value['k']) ?? [];
    if (value['kind'] === 0) (arr(this.state?.['requests']) ?? []).forEach((_, i) => this.requestSource.set(i, source));
    else if (path[0] === 'requests' && typeof path[1] === 'number') this.requestSource.set(path[1], source);
    else if (path[0] === 'requests' && path.length === 1 && value['kind'] === 2) {
      const n = (arr(this.state?.['requests']) ?? []).length;
      for (let i = n - (arr(value['v']) ?? []).length; i < n; i++) this.requestSource.set(i, source);
    }
  }

  finish(): ReaderResult {
    if (!this.state) return { sessions: [], diagnostics: this.diagnostics, skippedRecords: this.skipped };
    const locate: Locate = (path) =>
      path[0] === 'requests' && typeof path[1] === 'number'
        ? (this.requestSource.get(path[1]) ?? this.first!)
        : this.first!;
    // finish() may run more than once (snapshots of a growing file): what it adds stays out of the reader's own lists.
    const diagnostics = [...this.diagnostics];
    const skipped = { ...this.skipped };
    const session = readChatSession(this.state, locate, 'chat-session', diagnostics, skipped);
    return { sessions: [session], diagnostics, skippedRecords: skipped };
  }
}

/** A session file (`chatSessions/<id>.json`) or an exported chat. */
export function readChatDocument(doc: JsonDocument): ReaderResult {
  const diagnostics: Diagnostic[] = [];
  const skipped = emptyRecord<number>();
  const sessions = isChatSession(doc.value)
    ? [readChatSession(doc.value, (p) => doc.locate(p), 'chat-session', diagnostics, skipped)]
    : [];
  return { sessions, diagnostics, skippedRecords: skipped };
}
