import type { JsonDocument, JsonPath } from '../formatDefinition';
import { arr, mostlyOfKind, clip, count, firstLine, isObject, nonNegative, num, obj, str } from '../json';
import type { JsonObject } from '../json';
import { markDenied, mostUsedModel, noOtherInputs, requestedToolCall, unknownTokens } from '../model';
import type {
  CallTokens,
  Compaction,
  Diagnostic,
  LlmCall,
  ReportedTotals,
  Session,
  SessionEvent,
  SourceRef,
  ToolCall,
  UserTurn,
} from '../model';
import type { ReaderResult, TraceRecord } from '../recordReader';
import { failedPatchTarget, patchTarget } from '../codex/toolOutput';
import { ERROR_TEXT_MAX } from '../sweAgent/observationErrors';

const PREVIEW_MAX = 160;
const EVENT_TEXT_MAX = 300;

/** OpenCode's session info: `ses_…` id, the project it belongs to, its version. */
function isSessionInfo(v: unknown): v is JsonObject {
  return isObject(v) && typeof v['id'] === 'string' && ('projectID' in v || 'directory' in v) && isObject(v['time']);
}

/** A message as `opencode export` writes it: `{info: {id, role, sessionID…}, parts: [...]}`. */
function isExportMessage(v: unknown): v is JsonObject {
  const info = obj(obj(v)?.['info']);
  return (
    info !== null &&
    typeof info['role'] === 'string' &&
    typeof info['id'] === 'string' &&
    Array.isArray(obj(v)!['parts'])
  );
}

/** `opencode export <session>`: `{info, messages: [{info, parts}]}`. */
export function isOpenCodeExport(v: unknown): v is JsonObject {
  if (!isObject(v) || !isSessionInfo(v['info'])) return false;
  const messages = arr(v['messages']);
  return messages !== null && mostlyOfKind(messages, isExportMessage);
}

/**
 * OpenCode token counts: `input` excludes the cache (OpenCode subtracts cache reads for
 * every provider), `cache.read` and `cache.write` come on top; `output` excludes
 * `reasoning`. So input = input + read + write, cached = read, appended = input + write.
 */
function tokensOf(t: JsonObject | null): CallTokens {
  if (!t) return unknownTokens();
  const fresh = count(t['input']);
  const cache = obj(t['cache']);
  const read = cache ? count(cache['read']) : null;
  const write = cache ? count(cache['write']) : null;
  const output = count(t['output']);
  const reasoning = count(t['reasoning']);
  const appended = fresh === null ? null : fresh + (write ?? 0);
  return {
    input: appended === null || read === null ? null : appended + read,
    cached: read,
    appended,
    cacheWrite: write,
    output: output === null ? null : output + (reasoning ?? 0),
    reasoningOutput: reasoning,
  };
}

/**
 * How OpenCode ends a tool call the user refused at its permission prompt (`PermissionNext.RejectedError`,
 * and `CorrectedError` which adds the user's feedback): sst/opencode `packages/opencode/src/permission/`.
 */
const PERMISSION_REJECTED = 'The user rejected permission to use';

/** Milliseconds since the epoch, as OpenCode writes them. */
function msOf(v: unknown): number | null {
  return nonNegative(v);
}

/** A tool part (`{type: "tool", tool, callID, state: {status, input, output, error, metadata, time}}`) as a tool call. */
function toolOf(part: JsonObject, source: SourceRef): ToolCall | null {
  const name = str(part['tool']);
  if (name === null) return null;
  const state = obj(part['state']) ?? {};
  const input = obj(state['input']) ?? {};
  const time = obj(state['time']);
  const patch = str(input['patchText']) ?? str(input['patch']);
  const tool = requestedToolCall({
    id: str(part['callID']) ?? str(part['id']) ?? `${name}@${source.line}`,
    name,
    targetFile: str(input['filePath']) ?? str(input['file_path']) ?? (patch !== null ? patchTarget(patch) : null),
    command: str(input['command']),
    startMs: time ? msOf(time['start']) : null,
    source,
  });
  const status = str(state['status']);
  if (status !== 'completed' && status !== 'error') return tool; // pending or running: no result yet
  const metadata = obj(state['metadata']);
  const exit = num(metadata?.['exit']);
  const exitCode = exit !== null && Number.isInteger(exit) ? exit : null;
  tool.exitCode = exitCode;
  tool.isError = status === 'error' || (exitCode !== null && exitCode !== 0);
  tool.endMs = time ? msOf(time['end']) : null;
  tool.durationMs =
    tool.endMs !== null && tool.startMs !== null && tool.endMs >= tool.startMs ? tool.endMs - tool.startMs : null;
  tool.resultSource = source;
  const output = str(state['output']) ?? str(state['error']) ?? '';
  tool.resultChars = output.length;
  if (tool.isError) {
    const text = (str(state['error']) ?? output).trim();
    tool.errorText = clip(text || `exited with code ${exitCode}`, ERROR_TEXT_MAX);
    if (status === 'error' && text.startsWith(PERMISSION_REJECTED)) markDenied(tool, tool.errorText);
    // The file a failed patch names is the one that failed.
    tool.targetFile = failedPatchTarget(text) ?? tool.targetFile;
  }
  return tool;
}

/** Where a message or part is. */
type Locate = (path: JsonPath) => SourceRef;

/**
 * Builds one session from OpenCode messages in order (`opencode export`, and the same
 * messages read from OpenCode's storage). Every `step-finish` part of an assistant message
 * is one LLM request with its own tokens; the tool parts before it are its tool calls (a
 * message without steps is one call with the message's tokens). User messages are the typed
 * prompts, except text OpenCode adds itself (`synthetic`); a `compaction` part marks a
 * compaction; an assistant message's `error` is a failed API request.
 */
export function buildOpenCodeSession(
  info: JsonObject,
  messages: ReadonlyArray<{ message: JsonObject; path: JsonPath }>,
  locate: Locate,
  diagnostics: Diagnostic[],
): Session {
  const calls: LlmCall[] = [];
  const turns: UserTurn[] = [];
  const compactions: Compaction[] = [];
  const events: SessionEvent[] = [];
  const other = noOtherInputs();
  let lastInputMs: number | null = null;
  for (const { message, path } of messages) {
    const m = obj(message['info']) ?? {};
    const parts = (arr(message['parts']) ?? [])
      .map((p, i) => ({ part: obj(p), path: [...path, 'parts', i] as JsonPath }))
      .filter((p): p is { part: JsonObject; path: JsonPath } => p.part !== null);
    const time = obj(m['time']);
    const created = time ? msOf(time['created']) : null;
    const source = locate(path);
    if (m['role'] === 'user') {
      if (parts.some((p) => p.part['type'] === 'compaction')) {
        compactions.push({
          beforeCall: calls.length,
          trigger: m['auto'] === true || parts.some((p) => p.part['auto'] === true) ? 'auto' : null,
          preTokens: null,
          timeMs: created,
          source,
        });
        other.compactionSummary += 1;
        continue;
      }
      const typed = parts.filter((p) => p.part['type'] === 'text' && p.part['synthetic'] !== true);
      if (typed.length === 0) {
        other.injected += 1;
        continue;
      }
      const text = typed.map((p) => str(p.part['text']) ?? '').join('\n');
      turns.push({
        index: turns.length,
        startMs: created,
        preview: clip(text.replace(/\s+/g, ' ').trim(), PREVIEW_MAX),
        source,
      });
      lastInputMs = created;
      continue;
    }
    if (m['role'] !== 'assistant') {
      // Neither typed nor answered: said, so a message the reader does not know is never lost without a word.
      diagnostics.push({
        file: source.file,
        line: source.line,
        severity: 'warning',
        message: `A message with role ${JSON.stringify(String(m['role']).slice(0, 40))} is neither a user nor an assistant message; skipped.`,
      });
      continue;
    }
    const model = str(m['modelID']) ?? str(obj(m['model'])?.['modelID']) ?? null;
    const error = obj(m['error']);
    if (error && str(error['name']) === 'MessageAbortedError') {
      // The user stopped the response: an interruption, not a failed request.
      other.interruption += 1;
    } else if (error) {
      const text = clip(
        `${str(error['name']) ?? 'error'}: ${str(obj(error['data'])?.['message']) ?? ''}`.trim(),
        EVENT_TEXT_MAX,
      );
      events.push({ kind: 'api-error', beforeCall: calls.length, timeMs: created, text, source });
      diagnostics.push({
        file: source.file,
        line: source.line,
        severity: 'warning',
        message: `API request failed: ${text}`,
      });
    }
    const finishes = parts.filter((p) => p.part['type'] === 'step-finish');
    let tools: ToolCall[] = [];
    let stepStart = lastInputMs ?? created;
    const completed = time ? msOf(time['completed']) : null;
    const addCall = (tokens: CallTokens, at: SourceRef, endMs: number | null): void => {
      calls.push({
        id: `${str(m['id']) ?? 'message'}#${calls.length + 1}`,
        index: calls.length,
        turn: turns.length > 0 ? turns.length - 1 : null,
        model,
        startMs: stepStart,
        endMs,
        tokens,
        server: null,
        blocks: null,
        toolCalls: tools,
        source: at,
      });
      tools = [];
    };
    let stepsSeen = 0;
    for (const { part, path: partPath } of parts) {
      if (part['type'] === 'tool') {
        const tool = toolOf(part, locate(partPath));
        if (tool) tools.push(tool);
      } else if (part['type'] === 'step-finish') {
        stepsSeen += 1;
        // A step ends when the model asked for its tools (they start right after), else when the message completed.
        const endMs =
          tools.length > 0 ? (tools[0]!.startMs ?? completed) : stepsSeen === finishes.length ? completed : null;
        addCall(tokensOf(obj(part['tokens'])), locate(partPath), endMs);
        stepStart = tools.length > 0 ? null : endMs;
        const lastTool = calls[calls.length - 1]!.toolCalls.at(-1);
        if (lastTool?.endMs != null) stepStart = lastTool.endMs;
      }
    }
    if (finishes.length === 0 && !error) addCall(tokensOf(obj(m['tokens'])), source, completed);
    else if (tools.length > 0) addCall(unknownTokens(), source, completed);
    lastInputMs = completed ?? lastInputMs;
  }
  const session: Session = {
    id: str(info['id']) ?? 'opencode-session',
    parentId: str(info['parentID']),
    parentToolCallId: null,
    role: str(info['parentID']) !== null ? 'subagent' : 'main',
    agent: { name: 'opencode', version: str(info['version']) },
    model: mostUsedModel(calls),
    cwd: str(info['directory']),
    title: firstLine(str(info['title']) ?? '', PREVIEW_MAX),
    calls,
    turns,
    compactions,
  };
  const totals = totalsOf(info);
  if (totals) {
    session.reportedTotals = totals;
    noteUnattributed(totals, calls, locate(['info']), diagnostics);
  }
  if (Object.values(other).some((n) => n > 0)) session.otherInputs = other;
  if (events.length > 0) session.events = events;
  return session;
}

/**
 * OpenCode adds every request's usage to the session's own `tokens` as it goes; the export's
 * messages carry their own. When the session's totals exceed the sum over the messages, the
 * difference was counted for the session but is carried by no message of the export: the
 * summary shows it as unattributed tokens (sessionSummary.ts), and this says so once.
 */
function noteUnattributed(
  totals: ReportedTotals,
  calls: readonly LlmCall[],
  at: SourceRef,
  diagnostics: Diagnostic[],
): void {
  const sum = (pick: (t: CallTokens) => number | null): number => calls.reduce((n, c) => n + (pick(c.tokens) ?? 0), 0);
  const parts: string[] = [];
  const excess = (label: string, reported: number | null, summed: number): void => {
    if (reported !== null && reported > summed) parts.push(`${(reported - summed).toLocaleString('en-US')} ${label}`);
  };
  excess(
    'input',
    totals.input,
    sum((t) => t.input),
  );
  excess(
    'cached',
    totals.cached,
    sum((t) => t.cached),
  );
  excess(
    'output',
    totals.output,
    sum((t) => t.output),
  );
  if (parts.length === 0) return;
  diagnostics.push({
    file: at.file,
    line: at.line,
    severity: 'info',
    message: `The session's own totals (info.tokens) exceed the sum over its messages by ${parts.join(', ')} tokens: counted by OpenCode for this session, carried by no message in the export. They are shown as unattributed tokens, not spread over the calls.`,
  });
}

/** The session totals newer OpenCode keeps on the session itself (`tokens`, `cost`). */
function totalsOf(info: JsonObject): ReportedTotals | null {
  const t = obj(info['tokens']);
  if (!t) return null;
  const tokens = tokensOf(t);
  return {
    input: tokens.input,
    output: tokens.output,
    cached: tokens.cached,
    costUsd: nonNegative(info['cost']),
    llmCalls: null,
    coversEveryCall: true,
  };
}

/**
 * An export as the records a content collector is fed (ParseOptions.recordTap): the session
 * info, then per message its info and each part, where each is in the document. The reader
 * itself reads the document whole (readOpenCodeExport).
 */
export function openCodeDocumentRecords(doc: JsonDocument): TraceRecord[] {
  const v = doc.value as JsonObject;
  const records: TraceRecord[] = [];
  const add = (value: JsonObject, path: JsonPath): void => {
    const source = doc.locate(path);
    records.push({ value, source, line: { line: source.line, offset: source.offset, byteLength: 0, text: null } });
  };
  add({ $opencodeSession: obj(v['info']) ?? {} }, ['info']);
  (arr(v['messages']) ?? []).forEach((m, i) => {
    if (!isExportMessage(m)) return;
    add({ $message: obj(m['info']) ?? {} }, ['messages', i]);
    (arr(m['parts']) ?? []).forEach((p, j) => {
      if (isObject(p)) add({ $part: p }, ['messages', i, 'parts', j]);
    });
  });
  return records;
}

/** `opencode export <session>` JSON. */
export function readOpenCodeExport(doc: JsonDocument): ReaderResult {
  const diagnostics: Diagnostic[] = [];
  const v = doc.value as JsonObject;
  const messages = (arr(v['messages']) ?? []).flatMap((m, i) => {
    const path = ['messages', i] as JsonPath;
    if (isExportMessage(m)) return [{ message: m as JsonObject, path }];
    const source = doc.locate(path);
    diagnostics.push({
      file: source.file,
      line: source.line,
      severity: 'warning',
      message: `messages[${i}] is not an OpenCode message ({info: {id, role}, parts: […]}); skipped.`,
    });
    return [];
  });
  const session = buildOpenCodeSession(obj(v['info'])!, messages, doc.locate, diagnostics);
  return { sessions: [session], diagnostics, skippedRecords: {} };
}
