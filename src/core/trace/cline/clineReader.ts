import type { JsonDocument } from '../formatDefinition';
import { arr, mostlyOfKind, clip, count, emptyRecord, isObject, num, obj, parseArguments, str } from '../json';
import type { JsonObject } from '../json';
import { markDenied, mostUsedModel, requestedToolCall, unknownTokens } from '../model';
import type {
  CallTokens,
  Compaction,
  Diagnostic,
  LlmCall,
  Session,
  SessionEvent,
  SourceRef,
  ToolCall,
  UserTurn,
} from '../model';
import { countSkipped } from '../recordReader';
import type { ReaderResult } from '../recordReader';
import { ERROR_TEXT_MAX } from '../sweAgent/observationErrors';

const PREVIEW_MAX = 160;
const EVENT_TEXT_MAX = 300;

/** A message of Cline's (and Roo Code's) `ui_messages.json`: `{ts, type: "say" | "ask", say | ask, text}`. */
function isUiMessage(v: unknown): v is JsonObject {
  if (!isObject(v) || typeof v['ts'] !== 'number') return false;
  return (v['type'] === 'say' && typeof v['say'] === 'string') || (v['type'] === 'ask' && typeof v['ask'] === 'string');
}

/** A task's `ui_messages.json`: an array of UI messages, one of them an API request. */
export function isClineUiMessages(v: unknown): boolean {
  const messages = arr(v);
  if (!messages || messages.length === 0 || !mostlyOfKind(messages, isUiMessage)) return false;
  return messages.some((m) => isObject(m) && m['say'] === 'api_req_started');
}

/**
 * Cline's usage per request: `tokensIn` excludes the cache for Anthropic-style providers,
 * with `cacheReads` and `cacheWrites` beside it; `tokensOut` is the output.
 */
function tokensOf(info: JsonObject | null): CallTokens {
  if (!info || !('tokensIn' in info)) return unknownTokens();
  const fresh = count(info['tokensIn']);
  const read = 'cacheReads' in info ? count(info['cacheReads']) : null;
  const write = 'cacheWrites' in info ? count(info['cacheWrites']) : null;
  const appended = fresh === null ? null : fresh + (write ?? 0);
  return {
    input: appended === null || read === null ? null : appended + read,
    cached: read,
    appended,
    cacheWrite: write,
    output: count(info['tokensOut']),
    reasoningOutput: null,
  };
}

/**
 * What Cline and Roo Code send the model for a tool call the user refused (`formatResponse.toolDenied`,
 * and `toolDeniedWithFeedback` which goes on "and provided the following feedback"):
 * cline/cline `src/core/prompts/responses.ts`, RooCodeInc/Roo-Code `src/core/prompts/responses.ts`.
 */
const TOOL_DENIED = 'The user denied this operation';
/** One tool result in a request's text: `[write_to_file for 'src/a.ts'] Result:` and what follows, up to the next. */
const RESULT_BLOCK = /\[([A-Za-z_]+)(?: for '((?:[^'\n]|'(?!\] Result:))*)')?\] Result:\s*/g;

/**
 * The tool results a request sends back (`api_req_started`'s `request` text: Cline writes the
 * user content of each request there), as the tool's name, its quoted argument and whether the
 * user denied it.
 */
export function resultsInRequest(request: string): Array<{ tool: string; arg: string | null; denied: boolean }> {
  const out: Array<{ tool: string; arg: string | null; denied: boolean }> = [];
  for (const m of request.matchAll(RESULT_BLOCK)) {
    const after = request.slice(m.index + m[0].length, m.index + m[0].length + TOOL_DENIED.length);
    out.push({ tool: m[1]!, arg: m[2] ?? null, denied: after === TOOL_DENIED });
  }
  return out;
}

/** Tools Cline shows by what they do to a file; the name is the UI's (`readFile`, `editedExistingFile`…). */
function fileTool(text: string, ts: number | null, source: SourceRef): ToolCall | null {
  const t = parseArguments(text);
  const name = t ? str(t['tool']) : null;
  if (!t || name === null) return null;
  return requestedToolCall({
    id: `${name}@${ts ?? source.line}`,
    name,
    targetFile: str(t['path']),
    command: null,
    startMs: ts,
    source,
  });
}

/**
 * Reads a Cline or Roo Code task's `ui_messages.json` (the task folder under the extension's
 * global storage, `tasks/<id>/`). Each `api_req_started` is one LLM request with its usage;
 * the tools shown after it (file tools, commands, MCP tools) are its tool calls; the first
 * text (the task) and every `user_feedback` are the typed prompts; failed and retried
 * requests are API errors; requests Cline deleted to fit the context (`deleted_api_reqs`)
 * mark a compaction.
 */
export function readClineUiMessages(doc: JsonDocument): ReaderResult {
  const diagnostics: Diagnostic[] = [];
  const skipped: Record<string, number> = emptyRecord();
  const calls: LlmCall[] = [];
  const turns: UserTurn[] = [];
  const compactions: Compaction[] = [];
  const events: SessionEvent[] = [];
  let lastTool: ToolCall | null = null;
  const messages = arr(doc.value) ?? [];
  messages.forEach((raw, i) => {
    const source = doc.locate([i]);
    if (!isUiMessage(raw)) {
      countSkipped(skipped, '(not a UI message)');
      diagnostics.push({
        file: source.file,
        line: source.line,
        severity: 'warning',
        message: `Element ${i} is not a Cline UI message (an object with ts and a say or ask type); skipped.`,
      });
      return;
    }
    const ts = num(raw['ts']);
    const kind = str(raw['say']) ?? str(raw['ask'])!;
    const text = str(raw['text']) ?? '';
    const current = calls[calls.length - 1];
    const attach = (tool: ToolCall | null): void => {
      if (!tool) return;
      if (!current) {
        countSkipped(skipped, `${kind} before any request`);
        return;
      }
      current.toolCalls.push(tool);
      current.endMs = ts;
      lastTool = tool;
    };
    switch (kind) {
      case 'task':
      case 'user_feedback':
        turns.push({
          index: turns.length,
          startMs: ts,
          preview: clip(text.replace(/\s+/g, ' ').trim(), PREVIEW_MAX),
          source,
        });
        return;
      case 'text':
        // The task comes first as text; later text is the model's.
        if (calls.length === 0 && turns.length === 0)
          turns.push({ index: 0, startMs: ts, preview: clip(text.replace(/\s+/g, ' ').trim(), PREVIEW_MAX), source });
        else if (current) current.endMs = ts;
        return;
      case 'api_req_started': {
        const info = parseArguments(text);
        // The results this request sends back answer the previous request's tools: a denial fails its tool.
        const request = info ? str(info['request']) : null;
        if (request !== null && current) markDenials(current, resultsInRequest(request), diagnostics, source);
        const model = str(obj(raw['modelInfo'])?.['modelId']);
        calls.push({
          id: `request-${calls.length + 1}`,
          index: calls.length,
          turn: turns.length > 0 ? turns.length - 1 : null,
          model,
          startMs: ts,
          endMs: null,
          tokens: tokensOf(info),
          server: null,
          blocks: null,
          toolCalls: [],
          source,
        });
        lastTool = null;
        return;
      }
      case 'tool':
        // The same tool is shown when asked (ask) and when it ran on its own (say): one call each way.
        attach(fileTool(text, ts, source));
        return;
      case 'command':
        attach(
          requestedToolCall({
            id: `execute_command@${ts ?? i}`,
            name: 'execute_command',
            targetFile: null,
            command: text,
            startMs: ts,
            source,
          }),
        );
        return;
      case 'use_mcp_server': {
        const t = parseArguments(text);
        const name = t ? `${str(t['serverName']) ?? 'mcp'}/${str(t['toolName']) ?? str(t['uri']) ?? 'tool'}` : 'mcp';
        attach(requestedToolCall({ id: `mcp@${ts ?? i}`, name, targetFile: null, command: null, startMs: ts, source }));
        return;
      }
      case 'command_output':
      case 'mcp_server_response': {
        const tool = lastTool;
        if (!tool || tool.resultSource !== null) return;
        tool.resultSource = source;
        tool.endMs = ts;
        tool.resultChars = text.length;
        // Cline logs no exit code: a command's outcome is unknown; an MCP server says "Error".
        if (kind === 'mcp_server_response') fail(tool, /^\s*Error\b/.test(text) ? text : null);
        return;
      }
      case 'error':
      case 'diff_error': {
        const tool = lastTool;
        if (tool && tool.isError !== true) {
          tool.resultSource ??= source;
          tool.endMs = ts;
          fail(tool, text || kind);
        } else countSkipped(skipped, `say:${kind} (no tool)`);
        return;
      }
      case 'api_req_failed':
      case 'error_retry': {
        const info = parseArguments(text);
        const detail = clip(
          str(info?.['message']) ??
            (info && 'attempt' in info
              ? `retry ${str(info['attempt']) ?? num(info['attempt'])} of ${num(info['maxAttempts']) ?? '?'}`
              : text) ??
            kind,
          EVENT_TEXT_MAX,
        );
        events.push({ kind: 'api-error', beforeCall: calls.length, timeMs: ts, text: detail, source });
        diagnostics.push({
          file: source.file,
          line: source.line,
          severity: kind === 'api_req_failed' ? 'warning' : 'info',
          message: `API request failed: ${detail}`,
        });
        return;
      }
      case 'deleted_api_reqs':
        // Cline dropped old requests from the conversation to fit the context window.
        compactions.push({ beforeCall: calls.length, trigger: 'auto', preTokens: null, timeMs: ts, source });
        return;
      default:
        if (current && raw['type'] === 'say') current.endMs = ts;
        countSkipped(skipped, `${str(raw['type'])}:${kind}`);
    }
  });
  for (const call of calls)
    for (const t of call.toolCalls)
      if (t.isError === null && t.name !== 'execute_command' && !t.name.includes('/')) t.isError = false;
  const session: Session = {
    id: 'cline-task',
    parentId: null,
    parentToolCallId: null,
    role: 'main',
    agent: { name: 'cline', version: null },
    model: mostUsedModel(calls),
    cwd: null,
    title: turns[0]?.preview ?? null,
    calls,
    turns,
    compactions,
  };
  if (events.length > 0) session.events = events;
  return { sessions: [session], diagnostics, skippedRecords: skipped };
}

/**
 * Marks the tools of `call` that the next request says the user denied. A result names its
 * tool's argument (`[write_to_file for 'src/a.ts']`, `[execute_command for 'npm test']`): the
 * tool shown with that path or command is the one; a call with one tool has no doubt.
 */
function markDenials(
  call: LlmCall,
  results: ReadonlyArray<{ tool: string; arg: string | null; denied: boolean }>,
  diagnostics: Diagnostic[],
  source: SourceRef,
): void {
  for (const r of results) {
    if (!r.denied) continue;
    const open = call.toolCalls.filter((t) => t.deniedByUser !== true);
    const byArg = r.arg === null ? undefined : open.find((t) => t.targetFile === r.arg || t.command === r.arg);
    const tool = byArg ?? (call.toolCalls.length === 1 ? open[0] : undefined);
    if (tool) markDenied(tool, clip(`${TOOL_DENIED}.`, ERROR_TEXT_MAX));
    else
      diagnostics.push({
        file: source.file,
        line: source.line,
        severity: 'info',
        message: `The user denied a ${r.tool} call of the previous request, but no tool shown for it matches${r.arg === null ? '' : ` "${clip(r.arg, 80)}"`}; it is not counted.`,
      });
  }
}

function fail(tool: ToolCall, text: string | null): void {
  tool.isError = text !== null;
  if (text !== null) tool.errorText = clip(text.trim(), ERROR_TEXT_MAX);
}
