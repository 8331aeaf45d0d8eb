import { arr, count, isObject, isoMs, nonNegative, obj, str } from '../json';
import type { JsonObject } from '../json';
import { mostUsedModel, unknownTokens } from '../model';
import type { CallTokens, Diagnostic, LlmCall, Session, SourceRef, ToolCall, UserTurn } from '../model';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';

/** A call read from one row, with what ordering and turns need once the file ends. */
interface RoundEntry {
  call: LlmCall;
  roundIndex: number | null;
  /** Row position in the file: keeps the order among rows without round_index. */
  order: number;
  /** Start of a user turn (the round's first input is a user message), or null. */
  turnStartMs: number | null | undefined;
}

/** Rows of one session_id, gathered in any order; sorted by round_index at the end. */
interface SessionEntries {
  id: string;
  provider: string | null;
  project: string | null;
  cwd: string | null;
  entries: RoundEntry[];
  callIds: Set<string>;
  toolIds: Set<string>;
}

/** Input events of a round: what it answers (docs/design/formats.md §3). */
const INPUT_EVENTS = new Set(['user_message', 'tool_result']);

/**
 * Reads TraceLab normalized round traces (`uw-syfi/TraceLab`, docs/design/formats.md §3): one row per
 * LLM call, in both public shapes: the derived rows of `example_sessions/derived/` (with
 * `cwd`, `tools[].input`) and the sanitized release (`example_sessions/sanitized/`, the
 * 357K-round dataset), which drops inputs and paths.
 *
 * - Sessions: `session_id`, calls in `round_index` order; `agent.name` = `provider`;
 *   `title` = the (pseudonymous) `project`; `cwd` from the derived shape.
 * - Tokens (docs/prompt_cache_accounting.md): input = `input_tokens_total`, cached =
 *   `prefix_tokens`, appended = `newly_append_tokens`, cacheWrite =
 *   `claude_cache_creation_input_tokens` (null for Codex), output = `output_tokens`,
 *   reasoningOutput = `reasoning_output_tokens`. A row breaking input = prefix + append
 *   gets a warning. TraceLab's extractors write 0 for every token field when the provider
 *   logged no usage; a round with 0 input tokens is read as unknown, not as an empty prompt.
 * - Times: start = the first `timing_events` timestamp (the input the round answers), end =
 *   its `usage_report` (Codex) or else the last event (Claude's last content block).
 * - Turns: a round whose first input event is a user message starts one (no preview: the
 *   text is not in the trace).
 * - Tools: `tools[]`, `emitted_at` → start, `result_at` → end; durationMs is TraceLab's own
 *   "effective tool latency": `tool_internal_latency_ms` (the runner's measure: Codex
 *   `Wall time`, Claude `durationMs`) when present, else `tool_wall_latency_ms` (result −
 *   emission, which also holds approval waits). `command` / `targetFile` come from
 *   `tools[].input` in the derived shape only.
 */
export class TraceLabReader implements RecordReader {
  private readonly sessions = new Map<string, SessionEntries>();
  private readonly diagnostics: Diagnostic[] = [];
  private rows = 0;

  record({ value, source }: TraceRecord): void {
    const sessionId = str(value['session_id']);
    if (sessionId === null || sessionId === '') {
      this.warn(source, 'TraceLab round without "session_id"; skipped.');
      return;
    }
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = {
        id: sessionId,
        provider: null,
        project: null,
        cwd: null,
        entries: [],
        callIds: new Set(),
        toolIds: new Set(),
      };
      this.sessions.set(sessionId, session);
    }
    session.provider ??= str(value['provider']);
    session.project ??= str(value['project']);
    session.cwd ??= str(value['cwd']);
    const roundIndex = count(value['round_index']);
    const order = this.rows++;
    const callId = str(value['round_id']) || `${sessionId}#${roundIndex ?? `row${order}`}`;
    if (session.callIds.has(callId)) {
      this.warn(source, `round ${callId} appears twice in session ${sessionId}; the second is skipped.`);
      return;
    }
    session.callIds.add(callId);
    const events = timingEvents(value['timing_events']);
    const call: LlmCall = {
      id: callId,
      index: 0,
      turn: null,
      model: str(value['model']),
      startMs: events.startMs,
      endMs: events.endMs,
      tokens: this.tokens(value, callId, source),
      server: null,
      blocks: null,
      toolCalls: this.tools(value, callId, session, source),
      source,
    };
    const first = str(value['first_input_event_type']) ?? events.firstInput;
    session.entries.push({
      call,
      roundIndex,
      order,
      turnStartMs: first === 'user_message' ? (events.userMessageMs ?? events.startMs) : undefined,
    });
  }

  finish(): ReaderResult {
    const sessions: Session[] = [];
    for (const s of this.sessions.values()) {
      s.entries.sort(
        (a, b) =>
          (a.roundIndex ?? Number.MAX_SAFE_INTEGER) - (b.roundIndex ?? Number.MAX_SAFE_INTEGER) || a.order - b.order,
      );
      const turns: UserTurn[] = [];
      const calls = s.entries.map((entry, index) => {
        const call = entry.call;
        if (entry.turnStartMs !== undefined)
          turns.push({ index: turns.length, startMs: entry.turnStartMs, preview: '', source: call.source });
        call.index = index;
        call.turn = turns.length > 0 ? turns.length - 1 : null;
        return call;
      });
      sessions.push({
        id: s.id,
        parentId: null,
        parentToolCallId: null,
        role: 'main',
        agent: s.provider === null ? null : { name: s.provider, version: null },
        model: mostUsedModel(calls),
        cwd: s.cwd,
        title: s.project,
        calls,
        turns,
        compactions: [],
      });
    }
    return { sessions, diagnostics: this.diagnostics, skippedRecords: {} };
  }

  private tokens(value: JsonObject, callId: string, source: SourceRef): CallTokens {
    let input = count(value['input_tokens_total']);
    if (input === 0) {
      this.warn(
        source,
        `round ${callId} reports 0 input tokens: TraceLab writes 0 when the agent logged no usage, so its tokens are read as unknown.`,
        'info',
      );
      return unknownTokens();
    }
    let cached = count(value['prefix_tokens']);
    let appended = count(value['newly_append_tokens']);
    // input = cached + appended: any two give the third (as the canonical reader does).
    if (input === null && cached !== null && appended !== null) input = cached + appended;
    else if (appended === null && input !== null && cached !== null && input >= cached) appended = input - cached;
    else if (cached === null && input !== null && appended !== null && input >= appended) cached = input - appended;
    else if (input !== null && cached !== null && appended !== null && input !== cached + appended) {
      this.warn(
        source,
        `round ${callId}: input_tokens_total (${input}) is not prefix_tokens + newly_append_tokens (${cached} + ${appended}).`,
      );
    }
    return {
      input,
      cached,
      appended,
      cacheWrite: count(value['claude_cache_creation_input_tokens']),
      output: count(value['output_tokens']),
      reasoningOutput: count(value['reasoning_output_tokens']),
    };
  }

  private tools(value: JsonObject, callId: string, session: SessionEntries, source: SourceRef): ToolCall[] {
    const tools: ToolCall[] = [];
    (arr(value['tools']) ?? []).forEach((raw, i) => {
      if (!isObject(raw)) return;
      const id = str(raw['tool_call_id']) || `${callId}#tool${i}`;
      if (session.toolIds.has(id)) {
        this.warn(source, `tool call ${id} appears twice in session ${session.id}; the second is skipped.`);
        return;
      }
      session.toolIds.add(id);
      const startMs = isoMs(raw['emitted_at']);
      const endMs = isoMs(raw['result_at']);
      const isError = typeof raw['is_error'] === 'boolean' ? raw['is_error'] : null;
      const { targetFile, command } = toolInput(raw['input']);
      tools.push({
        id,
        name: str(raw['tool_name']) || 'unknown',
        targetFile,
        command,
        startMs,
        endMs,
        durationMs:
          nonNegative(raw['tool_internal_latency_ms']) ??
          nonNegative(raw['tool_wall_latency_ms']) ??
          (startMs !== null && endMs !== null && endMs >= startMs ? endMs - startMs : null),
        isError,
        errorText: null,
        exitCode: null,
        resultChars: count(raw['result_chars']),
        source,
        // The row holds the call and its result together.
        resultSource: endMs !== null || isError !== null ? source : null,
      });
    });
    return tools;
  }

  private warn(source: SourceRef, message: string, severity: Diagnostic['severity'] = 'warning'): void {
    this.diagnostics.push({ file: source.file, line: source.line, severity, message });
  }
}

/** What the round's timing events say: its span, its first input and its user message. */
function timingEvents(value: unknown): {
  startMs: number | null;
  endMs: number | null;
  firstInput: string | null;
  userMessageMs: number | null;
} {
  let startMs: number | null = null;
  let lastMs: number | null = null;
  let usageMs: number | null = null;
  let firstInput: string | null = null;
  let userMessageMs: number | null = null;
  for (const raw of arr(value) ?? []) {
    const event = obj(raw);
    if (!event) continue;
    const type = str(event['event_type']);
    const ms = isoMs(event['timestamp']);
    if (type !== null && INPUT_EVENTS.has(type)) firstInput ??= type;
    if (ms === null) continue;
    if (type === 'user_message') userMessageMs ??= ms;
    if (type === 'usage_report') usageMs = ms;
    startMs = startMs === null ? ms : Math.min(startMs, ms);
    lastMs = lastMs === null ? ms : Math.max(lastMs, ms);
  }
  return { startMs, endMs: usageMs ?? lastMs, firstInput, userMessageMs };
}

/**
 * File and command of a tool call, from `tools[].input` (derived shape only): a JSON object
 * for Claude (`file_path`, `command`), a JSON string for Codex (`cmd` or `command`, string or
 * argv), or apply_patch text whose `*** Update File:` header names the file.
 */
function toolInput(value: unknown): { targetFile: string | null; command: string | null } {
  let input: unknown = value;
  let text: string | null = null;
  if (typeof value === 'string') {
    text = value;
    try {
      input = JSON.parse(value);
    } catch {
      input = null;
    }
  }
  const o = obj(input);
  if (o && typeof o['input'] === 'string') text = o['input'];
  const patched = text === null ? null : /^\*\*\* (?:Update|Add|Delete) File: (.+)$/m.exec(text);
  const targetFile = (o && (str(o['file_path']) ?? str(o['notebook_path']))) ?? (patched ? patched[1]!.trim() : null);
  return { targetFile, command: o ? (commandText(o['cmd']) ?? commandText(o['command'])) : null };
}

/** A shell command as text: a string, or an argv array (`["bash", "-lc", "…"]` gives the script). */
function commandText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  const argv = arr(value);
  if (!argv || argv.length === 0 || !argv.every((a) => typeof a === 'string')) return null;
  const parts = argv as string[];
  if (parts.length === 3 && /(?:^|\/)(?:ba|z)?sh$/.test(parts[0]!) && (parts[1] === '-lc' || parts[1] === '-c'))
    return parts[2]!;
  return parts.join(' ');
}
