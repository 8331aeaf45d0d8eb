import type { JsonDocument, JsonPath } from '../formatDefinition';
import { arr, mostlyOfKind, clip, count, emptyRecord, isObject, isoMs, obj, str } from '../json';
import type { JsonObject } from '../json';
import { markDenied, mostUsedModel, noOtherInputs, requestedToolCall, unknownTokens } from '../model';
import type {
  CallTokens,
  Compaction,
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

const PREVIEW_MAX = 160;
const EVENT_TEXT_MAX = 300;
/** Message types Gemini CLI records in a chat (packages/core chatRecordingService). */
const MESSAGE_TYPES = new Set(['user', 'gemini', 'info', 'error', 'warning']);
/** What Gemini CLI writes in a tool call's status when the user refused or stopped it. */
const CANCELLED = 'cancelled';
/**
 * The reason of a cancelled call the user refused at its confirmation prompt, as the CLI sends
 * it to the model (`[Operation Cancelled] Reason: User denied execution.`): google-gemini/gemini-cli
 * `packages/core/src/scheduler/scheduler.ts`, `state-manager.ts`. Calls cancelled otherwise (Esc
 * while running, the rest of a refused batch) are stopped, not denied.
 */
const USER_DENIED = 'User denied execution';

/** A chat session document: `{sessionId, projectHash, startTime, messages: [...]}`. */
export function isGeminiChat(v: unknown): v is JsonObject {
  if (!isObject(v) || typeof v['sessionId'] !== 'string' || typeof v['projectHash'] !== 'string') return false;
  const messages = arr(v['messages']);
  return messages !== null && mostlyOfKind(messages, isGeminiMessage);
}

/** One recorded message: an id, a time and a known type. */
export function isGeminiMessage(v: unknown): v is JsonObject {
  return (
    isObject(v) &&
    typeof v['id'] === 'string' &&
    typeof v['timestamp'] === 'string' &&
    MESSAGE_TYPES.has(str(v['type']) ?? '')
  );
}

/** The same test as isGeminiMessage, without narrowing the record's type away in the other branches. */
function isGeminiRecordMessage(r: JsonObject): boolean {
  return isGeminiMessage(r);
}

/** `{"$rewindTo": id}`: the user rewound the chat to just before that message (`/rewind`). */
function rewindTargetOf(r: JsonObject): string | null {
  return Object.keys(r).length === 1 ? str(r['$rewindTo']) : null;
}

/** A record of the JSON Lines chat files newer CLIs write: the session header, a message, a `$set` update or a rewind. */
export function isGeminiRecord(r: JsonObject): boolean {
  if (isGeminiMessage(r)) return true;
  if (typeof r['sessionId'] === 'string' && typeof r['projectHash'] === 'string') return true;
  if (rewindTargetOf(r) !== null) return true;
  const set = obj(r['$set']);
  return set !== null && Object.keys(r).length === 1 && ('lastUpdated' in set || 'messages' in set || 'summary' in set);
}

/** A message's text: a string, or the text parts of a part list. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return (arr(content) ?? [])
    .map((p) => (isObject(p) ? (str(p['text']) ?? '') : ''))
    .filter((t) => t !== '')
    .join('\n');
}

/**
 * Gemini usage metadata as recorded: `input` (promptTokenCount) includes `cached`
 * (cachedContentTokenCount); `tool` (toolUsePromptTokenCount) is further prompt read from
 * tool results; `output` (candidatesTokenCount) excludes `thoughts` (thoughtsTokenCount).
 */
function tokensOf(t: JsonObject | null): CallTokens {
  if (!t) return unknownTokens();
  const prompt = count(t['input']);
  const tool = count(t['tool']) ?? 0;
  const input = prompt === null ? null : prompt + tool;
  const cached = 'cached' in t ? count(t['cached']) : null;
  const candidates = count(t['output']);
  const thoughts = count(t['thoughts']);
  return {
    input,
    cached,
    appended: input !== null && cached !== null && cached <= input ? input - cached : null,
    cacheWrite: null,
    output: candidates === null ? null : candidates + (thoughts ?? 0),
    reasoningOutput: thoughts,
  };
}

/** The file a Gemini CLI tool acts on (read_file, write_file, replace, read_many_files…). */
export function targetOf(args: JsonObject): string | null {
  return str(args['file_path']) ?? str(args['absolute_path']) ?? str(args['path']) ?? null;
}

/** A failed or cancelled tool call's text: the function response's error, else what was shown. */
function toolErrorText(tc: JsonObject): string {
  for (const r of arr(tc['result']) ?? []) {
    const response = obj(obj(obj(r)?.['functionResponse'])?.['response']);
    const error = response ? (str(response['error']) ?? str(response['output'])) : null;
    if (error) return error;
  }
  return textOf(tc['resultDisplay']) || str(tc['status']) || 'failed';
}

/**
 * Texts Gemini CLI sends the model as the user by itself, each recorded as a `user` message
 * (`GeminiChat.sendMessageStream` and `addHistory` record every user-role content they are
 * given: packages/core/src/core/geminiChat.ts), by the kind of input they are. Tested on the
 * start of the trimmed text; every source is listed in docs/design/formats.md §13.
 */
const CLI_WRITTEN: ReadonlyArray<[prefix: string, kind: keyof OtherInputs]> = [
  ['<session_context>', 'injected'],
  ['<hook_context>', 'hookOutput'],
  ["Here is the user's editor context", 'injected'],
  ["Here is a summary of changes in the user's editor context", 'injected'],
  ['- **Workspace Directories:**', 'injected'],
  ['User has manually exited Plan Mode.', 'injected'],
  ['Plan approved. Switching to ', 'injected'],
  ['System: Potential loop detected.', 'injected'],
  ['I ran the following shell command:', 'localCommand'],
  ['Background execution update:', 'notification'],
];
/** The next-speaker check's nudge (packages/core/src/core/client.ts): the whole text, never a prefix of a typed prompt. */
const CONTINUATION = 'Please continue.';

/**
 * What a `user` message is. Gemini CLI records more than typed prompts under `user`: since it
 * syncs the recorded chat with the model's history it writes what it sends the model itself
 * (CLI_WRITTEN: the environment, hook and editor context, plan-mode notices, loop recovery,
 * `!` shell results, background completions, the continuation nudge) and each turn of tool
 * results (`functionResponse` parts, no text); slash commands (`/…`) and help (`?`) can be
 * recorded too. Its own test of a prompt worth resuming (`isIgnoredUserContent`,
 * packages/core/src/utils/sessionUtils.ts) skips part of these; this reader counts none of
 * them as typed.
 */
export function userMessageKind(content: unknown): keyof OtherInputs | 'prompt' | 'tool-results' {
  const text = textOf(content).trim();
  if (text === '')
    return (arr(content) ?? []).some((p) => isObject(p) && isObject(p['functionResponse']))
      ? 'tool-results'
      : 'injected';
  const written = CLI_WRITTEN.find(([prefix]) => text.startsWith(prefix));
  if (written) return written[1];
  if (text === CONTINUATION) return 'injected';
  if (text.startsWith('/') || text.startsWith('?')) return 'localCommand';
  return 'prompt';
}

/** Messages in order, a re-written message (same id) replacing the earlier copy in place; or a rewind. */
type Collected = { message: JsonObject; source: SourceRef } | { rewindTo: string; source: SourceRef };

/**
 * Builds one session from Gemini CLI chat messages (`~/.gemini/tmp/<project>/chats/`).
 * Each `gemini` message with `tokens` is one model response, one LLM call; its
 * `toolCalls` (with `status` and `result`) are the tool calls; `user` messages are the
 * typed prompts, except what the CLI writes there itself (userMessageKind); `error`
 * messages about the API are API errors; an `info` about compressing the chat history is
 * a compaction, and so is a rewind (`$rewindTo`).
 */
function buildSession(
  header: JsonObject,
  messages: readonly Collected[],
  diagnostics: Diagnostic[],
  skipped: Record<string, number>,
): Session {
  const calls: LlmCall[] = [];
  const turns: UserTurn[] = [];
  const compactions: Compaction[] = [];
  const events: SessionEvent[] = [];
  const other = noOtherInputs();
  /** Ids of the messages the conversation holds at this point, in order, as Gemini CLI rebuilds it, and where each is. */
  const inConversation: string[] = [];
  const positionOf = new Map<string, number>();
  let lastInputMs: number | null = null;
  for (const collected of messages) {
    const { source } = collected;
    if ('rewindTo' in collected) {
      // The rewound messages leave the conversation the model is sent next, but they were
      // sent and billed: their calls stay, and the cut is a manual compaction before the next call.
      const at = positionOf.get(collected.rewindTo) ?? -1;
      const removed = inConversation.splice(at === -1 ? 0 : at);
      for (const gone of removed) positionOf.delete(gone);
      const dropped = removed.length;
      compactions.push({
        beforeCall: calls.length,
        trigger: 'manual',
        preTokens: null,
        timeMs: lastInputMs,
        source,
        rewind: true,
      });
      diagnostics.push({
        file: source.file,
        line: source.line,
        severity: 'info',
        message: `The chat was rewound${at === -1 ? ' to a message no longer in it (the whole conversation)' : ''}: ${dropped} message(s) left the conversation; the calls among them stay counted, they were made.`,
      });
      continue;
    }
    const m = collected.message;
    const id = str(m['id']);
    if (id !== null && !positionOf.has(id)) {
      positionOf.set(id, inConversation.length);
      inConversation.push(id);
    }
    const type = str(m['type']);
    const timeMs = isoMs(m['timestamp']);
    const text = textOf(m['content']);
    if (type === 'user') {
      const kind = userMessageKind(m['content']);
      if (kind === 'prompt')
        turns.push({
          index: turns.length,
          startMs: timeMs,
          preview: clip(text.replace(/\s+/g, ' ').trim(), PREVIEW_MAX),
          source,
        });
      else if (kind !== 'tool-results') other[kind] += 1;
      lastInputMs = timeMs;
      continue;
    }
    if (type === 'gemini') {
      const tools: ToolCall[] = [];
      for (const tc of arr(m['toolCalls']) ?? []) {
        if (!isObject(tc)) continue;
        const name = str(tc['name']);
        if (name === null) continue;
        const args = obj(tc['args']) ?? {};
        const tool = requestedToolCall({
          id: str(tc['id']) ?? `${str(m['id'])}/${tools.length}`,
          name,
          targetFile: targetOf(args),
          command: str(args['command']),
          startMs: isoMs(tc['timestamp']) ?? timeMs,
          source,
        });
        const status = str(tc['status']);
        if (status === 'success' || status === 'error' || status === CANCELLED) {
          tool.isError = status !== 'success';
          tool.resultSource = source;
          if (tool.isError)
            tool.errorText = clip(
              status === CANCELLED
                ? `cancelled: the user rejected or stopped the call. ${toolErrorText(tc)}`
                : toolErrorText(tc),
              ERROR_TEXT_MAX,
            );
          if (status === CANCELLED && toolErrorText(tc).includes(USER_DENIED)) markDenied(tool, tool.errorText!);
        }
        tools.push(tool);
      }
      calls.push({
        id: str(m['id']) ?? `message-${calls.length + 1}`,
        index: calls.length,
        turn: turns.length > 0 ? turns.length - 1 : null,
        model: str(m['model']),
        startMs: lastInputMs,
        endMs: timeMs,
        tokens: tokensOf(obj(m['tokens'])),
        server: null,
        blocks: null,
        toolCalls: tools,
        source,
      });
      lastInputMs = timeMs;
      continue;
    }
    if (type === 'error' && /api|quota|rate limit|429|503|overloaded|resource exhausted/i.test(text)) {
      const clipped = clip(text.trim(), EVENT_TEXT_MAX);
      events.push({ kind: 'api-error', beforeCall: calls.length, timeMs, text: clipped, source });
      diagnostics.push({
        file: source.file,
        line: source.line,
        severity: 'warning',
        message: `API request failed: ${clipped}`,
      });
      continue;
    }
    if (type === 'info' && /compress/i.test(text)) {
      compactions.push({ beforeCall: calls.length, trigger: null, preTokens: null, timeMs, source });
      continue;
    }
    countSkipped(skipped, `message:${type ?? '(no type)'}`);
  }
  const session: Session = {
    id: str(header['sessionId']) ?? 'gemini-session',
    parentId: null,
    parentToolCallId: null,
    role: 'main',
    agent: { name: 'gemini-cli', version: null },
    model: mostUsedModel(calls),
    cwd: null,
    title: str(header['summary']),
    calls,
    turns,
    compactions,
  };
  if (events.length > 0) session.events = events;
  if (Object.values(other).some((n) => n > 0)) session.otherInputs = other;
  return session;
}

/**
 * A chat document as the records a content collector is fed (ParseOptions.recordTap): its
 * header (without the messages), then each message where it is in the document. The reader
 * itself reads the document whole (readGeminiDocument).
 */
export function geminiDocumentRecords(doc: JsonDocument): TraceRecord[] {
  const v = doc.value as JsonObject;
  const at = (source: SourceRef): TraceRecord['line'] => ({
    line: source.line,
    offset: source.offset,
    byteLength: 0,
    text: null,
  });
  const header: JsonObject = {};
  for (const key of Object.keys(v)) if (key !== 'messages') header[key] = v[key];
  const top = doc.locate([]);
  const records: TraceRecord[] = [{ value: header, source: top, line: at(top) }];
  (arr(v['messages']) ?? []).forEach((m, i) => {
    if (!isGeminiMessage(m)) return;
    const source = doc.locate(['messages', i] as JsonPath);
    records.push({ value: m, source, line: at(source) });
  });
  return records;
}

/** A chat session saved as one JSON document (Gemini CLI up to 0.3x). */
export function readGeminiDocument(doc: JsonDocument): ReaderResult {
  const diagnostics: Diagnostic[] = [];
  const skipped: Record<string, number> = emptyRecord();
  const v = doc.value as JsonObject;
  const messages = (arr(v['messages']) ?? []).flatMap((m, i): Collected[] => {
    const source = doc.locate(['messages', i] as JsonPath);
    if (isGeminiMessage(m)) return [{ message: m, source }];
    diagnostics.push({
      file: source.file,
      line: source.line,
      severity: 'warning',
      message: `messages[${i}] is not a Gemini CLI message (an object with an id, a timestamp and a known type); skipped.`,
    });
    return [];
  });
  return { sessions: [buildSession(v, dedupe(messages), diagnostics, skipped)], diagnostics, skippedRecords: skipped };
}

/** The last copy of each message id, at the place of its first copy; rewinds stay where they were written. */
function dedupe(messages: readonly Collected[]): Collected[] {
  const at = new Map<string, number>();
  const out: Collected[] = [];
  for (const c of messages) {
    if ('rewindTo' in c) {
      out.push(c);
      continue;
    }
    const id = str(c.message['id']);
    const i = id === null ? undefined : at.get(id);
    if (i === undefined) {
      if (id !== null) at.set(id, out.length);
      out.push(c);
    } else out[i] = c;
  }
  return out;
}

/**
 * A chat session written as JSON Lines (newer Gemini CLI): a header record, then each
 * message as it is recorded; a message recorded again (when its tool calls finish) replaces
 * the earlier copy, and `$set` records update the header.
 */
export class GeminiRecordReader implements RecordReader {
  private header: JsonObject = {};
  private readonly messages: Collected[] = [];
  private readonly diagnostics: Diagnostic[] = [];
  private readonly skipped: Record<string, number> = emptyRecord();

  record({ value, source }: TraceRecord): void {
    const set = obj(value['$set']);
    const rewindTo = rewindTargetOf(value);
    if (isGeminiRecordMessage(value)) this.messages.push({ message: value, source });
    else if (rewindTo !== null) this.messages.push({ rewindTo, source });
    else if (set) this.header = { ...this.header, ...set };
    else if (typeof value['sessionId'] === 'string') {
      this.header = { ...this.header, ...value };
      // A whole-session record in JSON Lines (one JSON chat per line) carries its own messages.
      for (const m of arr(value['messages']) ?? []) if (isGeminiMessage(m)) this.messages.push({ message: m, source });
    } else countSkipped(this.skipped, '(not a Gemini CLI record)');
  }

  finish(): ReaderResult {
    if (this.messages.length === 0 && Object.keys(this.header).length === 0)
      return { sessions: [], diagnostics: this.diagnostics, skippedRecords: this.skipped };
    return {
      sessions: [buildSession(this.header, dedupe(this.messages), this.diagnostics, this.skipped)],
      diagnostics: this.diagnostics,
      skippedRecords: this.skipped,
    };
  }
}
