import { count, isoMs, num, parseArguments, firstArgument, clip } from '../json';
import { mostUsedModel, requestedToolCall } from '../model';
import type { Diagnostic, LlmCall, Session, SessionEvent, SourceRef, ToolCall, UserTurn } from '../model';
import { countSkipped } from '../recordReader';
import { ERROR_TEXT_MAX } from '../sweAgent/observationErrors';
import type { Attributes, AttrValue, OtlpLogRecord } from './otlpJson';
import { nanosToMs } from './otlpJson';

/**
 * Coding agents' own OpenTelemetry events (OTLP log records), read as sessions
 * (docs/design/formats.md §5):
 *
 * - **Claude Code** (code.claude.com/docs/en/monitoring-usage, "Events"): `claude_code.api_request`
 *   per model request (`model`, `duration_ms`, `input_tokens`, `output_tokens`, `cache_read_tokens`,
 *   `cache_creation_tokens`; Anthropic's counts, so `input_tokens` excludes the cache),
 *   `claude_code.tool_result` (`tool_name`, `success`, `duration_ms`, `error`, `tool_parameters`),
 *   `claude_code.user_prompt` (`prompt_length`, `prompt` when OTEL_LOG_USER_PROMPTS is on),
 *   `claude_code.api_error`; every event carries `session.id` and `event.timestamp`, and is written
 *   when the thing it reports ended.
 * - **Codex** (openai/codex `codex-rs/otel/src/events/session_telemetry.rs`, `log_event!`):
 *   `codex.sse_event` with `event.kind` "response.completed" and `input_token_count`,
 *   `cached_token_count`, `output_token_count`, `reasoning_token_count` (OpenAI's counts: input
 *   includes the cache, output the reasoning), `codex.api_request` (`duration_ms`, status, error),
 *   `codex.tool_result` (`tool_name`, `call_id`, `arguments`, `duration_ms`, `success`, `output`),
 *   `codex.user_prompt`; every event carries `conversation.id`, `model` and `event.timestamp`.
 *   Most values are written as strings (`%` fields), so counts are read from decimal strings too.
 */

/** Event names this reader turns into calls, tools, turns and errors. */
const CLAUDE = {
  request: 'claude_code.api_request',
  tool: 'claude_code.tool_result',
  prompt: 'claude_code.user_prompt',
  error: 'claude_code.api_error',
} as const;
const CODEX = {
  sse: 'codex.sse_event',
  request: 'codex.api_request',
  tool: 'codex.tool_result',
  prompt: 'codex.user_prompt',
} as const;
const KNOWN = new Set<string>([...Object.values(CLAUDE), ...Object.values(CODEX)]);
/**
 * What an agent writes in a prompt's place when prompts are not logged: Codex "[REDACTED]"
 * (codex-rs `user_prompt`), Claude Code "<REDACTED>" (in `prompt` and `prompt_text`, as a real
 * 2.1.294 capture shows). Either is no prompt: the turn says its length instead.
 */
const PROMPT_PLACEHOLDERS = new Set(['[REDACTED]', '<REDACTED>']);

type Agent = 'claude-code' | 'codex';

interface AgentEvent {
  name: string;
  agent: Agent;
  sessionId: string;
  timeMs: number | null;
  attrs: Attributes;
  resource: Attributes;
  source: SourceRef;
  order: number;
}

function text(v: AttrValue | undefined): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** The known event name of a record: its event name, `event.name` or body; Claude Code's `event.name` is often bare (`api_request`). */
function eventName(r: OtlpLogRecord): string | null {
  for (const n of r.names) if (KNOWN.has(n)) return n;
  if (text(r.resource.get('service.name')) === 'claude-code' || r.names.some((n) => n.startsWith('claude_code.'))) {
    for (const n of r.names) if (KNOWN.has(`claude_code.${n}`)) return `claude_code.${n}`;
  }
  return null;
}

function bool(v: AttrValue | undefined): boolean | null {
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return null;
}

/** Collects agent events; `finish` builds one session per Claude Code `session.id` / Codex `conversation.id`. */
export class AgentEventCollector {
  private readonly events: AgentEvent[] = [];
  private readonly diagnostics: Diagnostic[] = [];

  constructor(private readonly skipped: Record<string, number>) {}

  /** Takes a log record if it is a known agent event; false otherwise (the caller counts it). */
  add(record: OtlpLogRecord, source: SourceRef): boolean {
    const name = eventName(record);
    if (name === null) return false;
    const agent: Agent = name.startsWith('codex.') ? 'codex' : 'claude-code';
    const a = record.attributes;
    const id =
      agent === 'codex'
        ? (text(a.get('conversation.id')) ?? text(record.resource.get('conversation.id')))
        : (text(a.get('session.id')) ?? text(record.resource.get('session.id')));
    // `event.timestamp` is ISO 8601 with milliseconds; the record's own time is the exporter's fallback.
    const timeMs = isoMs(a.get('event.timestamp')) ?? nanosToMs(record.timeNs);
    this.events.push({
      name,
      agent,
      sessionId: id ?? `${agent}-events`,
      timeMs,
      attrs: a,
      resource: record.resource,
      source,
      order: this.events.length,
    });
    return true;
  }

  /** True when some event was taken. */
  get size(): number {
    return this.events.length;
  }

  finish(): { sessions: Session[]; diagnostics: Diagnostic[] } {
    const bySession = new Map<string, AgentEvent[]>();
    for (const e of this.events) {
      const key = `${e.agent}\u0000${e.sessionId}`;
      const list = bySession.get(key) ?? [];
      list.push(e);
      bySession.set(key, list);
    }
    const sessions: Session[] = [];
    for (const list of bySession.values()) {
      list.sort((x, y) => (x.timeMs === null || y.timeMs === null ? 0 : x.timeMs - y.timeMs) || x.order - y.order);
      sessions.push(this.session(list));
    }
    sessions.sort(
      (x, y) => (x.calls[0]?.startMs ?? Number.POSITIVE_INFINITY) - (y.calls[0]?.startMs ?? Number.POSITIVE_INFINITY),
    );
    return { sessions, diagnostics: this.diagnostics };
  }

  private session(list: AgentEvent[]): Session {
    const first = list[0]!;
    const calls: LlmCall[] = [];
    const turns: UserTurn[] = [];
    const events: SessionEvent[] = [];
    const ids = new Set<string>();
    const pendingTools: Array<{ tool: ToolCall; startMs: number | null }> = [];
    let requestStartMs: number | null = null;
    for (const e of list) {
      const a = e.attrs;
      const duration = num(a.get('duration_ms'));
      if (
        e.name === CLAUDE.request ||
        (e.name === CODEX.sse && text(a.get('event.kind')) === 'response.completed' && !a.has('error.message'))
      ) {
        const call = e.agent === 'codex' ? this.codexCall(e, requestStartMs) : this.claudeCall(e, duration);
        if (!call) continue;
        call.index = calls.length;
        call.turn = turns.length > 0 ? turns.length - 1 : null;
        let id = call.id;
        for (let n = 2; ids.has(id); n++) id = `${call.id}#${n}`;
        call.id = id;
        ids.add(id);
        calls.push(call);
        requestStartMs = null;
      } else if (e.name === CODEX.request) {
        requestStartMs = e.timeMs !== null ? e.timeMs - (duration ?? 0) : null;
        const status = num(a.get('http.response.status_code'));
        const error = text(a.get('error.message'));
        if (error !== null || (status !== null && status >= 400))
          events.push({
            kind: 'api-error',
            beforeCall: calls.length,
            timeMs: e.timeMs,
            text: clip(`${status ?? ''} ${error ?? ''}`.trim(), ERROR_TEXT_MAX),
            source: e.source,
          });
      } else if (e.name === CODEX.sse) {
        // A failed response.completed (see_event_completed_failed) or another failed SSE event.
        const error = text(a.get('error.message'));
        if (error !== null)
          events.push({
            kind: 'api-error',
            beforeCall: calls.length,
            timeMs: e.timeMs,
            text: clip(error, ERROR_TEXT_MAX),
            source: e.source,
          });
        else countSkipped(this.skipped, `event:${e.name}:${text(a.get('event.kind')) ?? 'unknown'}`);
      } else if (e.name === CLAUDE.error) {
        const status =
          text(a.get('status_code')) ?? (num(a.get('status_code')) !== null ? String(num(a.get('status_code'))) : null);
        events.push({
          kind: 'api-error',
          beforeCall: calls.length,
          timeMs: e.timeMs,
          text: clip(`${status ?? ''} ${text(a.get('error')) ?? ''}`.trim(), ERROR_TEXT_MAX),
          source: e.source,
        });
      } else if (e.name === CLAUDE.prompt || e.name === CODEX.prompt) {
        const prompt = text(a.get('prompt'));
        const length = count(a.get('prompt_length'));
        const logged = prompt !== null && !PROMPT_PLACEHOLDERS.has(prompt);
        turns.push({
          index: turns.length,
          startMs: e.timeMs,
          preview: logged
            ? clip(prompt.replace(/\s+/g, ' '), 160)
            : `(prompt not logged${length !== null ? `: ${length} characters` : ''})`,
          source: e.source,
        });
      } else if (e.name === CLAUDE.tool || e.name === CODEX.tool) {
        pendingTools.push({
          tool: this.tool(e, duration, ids),
          startMs: e.timeMs !== null && duration !== null ? e.timeMs - duration : e.timeMs,
        });
      }
    }
    // A tool result is written when the tool ends: it belongs to the last call that ended before the tool started.
    for (const { tool, startMs } of pendingTools) {
      let owner: LlmCall | null = null;
      for (const c of calls) if (startMs === null || c.endMs === null || c.endMs <= startMs) owner = c;
      if (owner) owner.toolCalls.push(tool);
      else {
        countSkipped(this.skipped, `${first.agent}:tool_result:before-first-call`);
        this.diagnostics.push({
          file: tool.source.file,
          line: tool.source.line,
          severity: 'info',
          message: `tool result "${tool.name}" comes before any model request of its session; it has no call to belong to and is skipped.`,
        });
      }
    }
    const version = text(first.attrs.get('app.version')) ?? text(first.resource.get('service.version'));
    return {
      id: first.sessionId,
      parentId: null,
      parentToolCallId: null,
      role: 'main',
      agent: { name: first.agent, version },
      model: mostUsedModel(calls),
      cwd: null,
      title: null,
      calls,
      turns,
      compactions: [],
      ...(events.length > 0 ? { events } : {}),
    };
  }

  /** Claude Code: Anthropic counts (input excludes cache reads and writes); the event is written when the response ended. */
  private claudeCall(e: AgentEvent, duration: number | null): LlmCall | null {
    const a = e.attrs;
    const uncached = count(a.get('input_tokens'));
    const read = count(a.get('cache_read_tokens'));
    const written = count(a.get('cache_creation_tokens'));
    const output = count(a.get('output_tokens'));
    if (uncached === null && output === null) {
      this.diagnostics.push({
        file: e.source.file,
        line: e.source.line,
        severity: 'warning',
        message: 'claude_code.api_request without input_tokens or output_tokens: token counts unknown.',
      });
    }
    const input = uncached !== null && read !== null && written !== null ? uncached + read + written : null;
    return {
      id: text(a.get('request_id')) ?? `${e.sessionId}#request`,
      index: 0,
      turn: null,
      model: text(a.get('model')),
      startMs: e.timeMs !== null && duration !== null ? e.timeMs - duration : e.timeMs,
      endMs: e.timeMs,
      tokens: {
        input,
        cached: read,
        appended: uncached !== null && written !== null ? uncached + written : null,
        cacheWrite: written,
        output,
        reasoningOutput: null,
      },
      server: null,
      blocks: null,
      toolCalls: [],
      source: e.source,
    };
  }

  /** Codex: OpenAI counts (input includes the cache, output the reasoning); the request started when its codex.api_request began. */
  private codexCall(e: AgentEvent, requestStartMs: number | null): LlmCall | null {
    const a = e.attrs;
    const input = count(a.get('input_token_count'));
    const cached = count(a.get('cached_token_count'));
    const output = count(a.get('output_token_count'));
    return {
      id: `${e.sessionId}#response`,
      index: 0,
      turn: null,
      model: text(a.get('model')) ?? text(a.get('slug')),
      startMs: requestStartMs ?? e.timeMs,
      endMs: e.timeMs,
      tokens: {
        input,
        cached,
        appended: input !== null && cached !== null && cached <= input ? input - cached : null,
        cacheWrite: null,
        output,
        reasoningOutput: count(a.get('reasoning_token_count')),
      },
      server: null,
      blocks: null,
      toolCalls: [],
      source: e.source,
    };
  }

  private tool(e: AgentEvent, duration: number | null, ids: Set<string>): ToolCall {
    const a = e.attrs;
    // Claude Code: tool_parameters (a JSON string, with OTEL_LOG_TOOL_DETAILS); Codex: arguments.
    const args = parseArguments(a.get('tool_parameters') ?? a.get('arguments'));
    const startMs = e.timeMs !== null && duration !== null ? e.timeMs - duration : null;
    const tool = requestedToolCall({
      id: text(a.get('call_id')) ?? text(a.get('tool_use_id')) ?? `${e.sessionId}#tool${ids.size}`,
      name: text(a.get('tool_name')) ?? 'tool',
      targetFile: firstArgument(args, ['file_path', 'filePath', 'path', 'notebook_path']),
      command: firstArgument(args, ['full_command', 'bash_command', 'command', 'cmd']),
      startMs,
      source: e.source,
    });
    const success = bool(a.get('success'));
    tool.endMs = e.timeMs;
    tool.durationMs = duration;
    tool.isError = success === null ? null : !success;
    if (tool.isError) tool.errorText = clip(text(a.get('error')) ?? text(a.get('output')) ?? 'failed', ERROR_TEXT_MAX);
    tool.resultSource = e.source;
    return tool;
  }
}
