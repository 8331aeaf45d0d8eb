import type { JsonDocument, JsonPath } from '../formatDefinition';
import { clip, emptyRecord, firstArgument, parseArguments } from '../json';
import { mostUsedModel } from '../model';
import type { Diagnostic, LlmCall, Session, SourceRef, ToolCall, UserTurn } from '../model';
import { countSkipped } from '../recordReader';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';
import { ERROR_TEXT_MAX } from '../sweAgent/observationErrors';
import { attrString, classifySpan, GEN_AI, serverTiming, spanModel, spanTokens } from './genAi';
import type { SpanRole, SpanTokens } from './genAi';
import { AgentEventCollector } from './agentEvents';
import {
  compareNanos,
  isLogsData,
  isResourceLogs,
  isResourceSpans,
  isTracesData,
  nanosToMs,
  readLogRecords,
  readSpans,
} from './otlpJson';
import type { OtlpLogRecord, OtlpSpan, SpanPath, SpanProblem } from './otlpJson';

/** Parent chains longer than this are treated as broken (a cycle in a malformed file). */
const MAX_DEPTH = 10_000;

/** A span as the reader keeps it: what it is, where it came from, in which order it was read. */
interface Entry {
  span: OtlpSpan;
  role: SpanRole;
  source: SourceRef;
  order: number;
  /** For `llm` entries: the vLLM span that served this call (see `join`). */
  server: Entry | null;
  /** For `server` entries: joined into an agent call, so not a call of its own. */
  joined: boolean;
}

/** One session being built: an `invoke_agent` span, a whole trace, or a pool of one-call traces. */
interface SessionDraft {
  id: string;
  parent: SessionDraft | null;
  agentSpan: Entry | null;
  parentToolCallId: string | null;
  members: Entry[];
  anchorNs: bigint | null;
  order: number;
}

/**
 * Reads OTLP/JSON traces: a whole `{"resourceSpans": …}` document, or file-exporter
 * JSON Lines (one `TracesData`, or one `ResourceSpans`, per line, in no guaranteed
 * order). Everything is collected first and sorted by exact nanosecond start times,
 * so line order does not matter.
 *
 * Model calls come from GenAI spans (chat, text_completion…) and from vLLM request
 * spans. **Join rule**: a vLLM span is the server side of the agent call whose span is
 * its nearest `llm` ancestor in the same trace (vLLM continues the caller's
 * `traceparent`, so its span is a child, or a grandchild through an HTTP client span,
 * of the agent's chat span). A vLLM span without such an ancestor is matched by time
 * instead: to the not yet joined agent call of the same trace whose span contains the
 * vLLM span's start, the largest overlap winning. One agent call takes one vLLM span;
 * a vLLM span left over is a call of its own.
 *
 * Sessions: each `invoke_agent` span is a session, nested ones are sub-agents of the
 * agent above them; calls and tools belong to their nearest `invoke_agent` ancestor.
 * Without agent spans, a trace is a session. A trace whose only GenAI span is one root
 * call (vLLM without a propagated `traceparent`, a client that traces each request
 * alone) is pooled with the others of its `gen_ai.conversation.id`, else of its
 * `service.name`, instead of making a session per request.
 */
export class OtlpCollector {
  private readonly entries: Entry[] = [];
  private readonly seen = new Set<string>();
  private readonly diagnostics: Diagnostic[] = [];
  private readonly skipped: Record<string, number> = emptyRecord();
  private spanCount = 0;
  /** Root agent sessions and the conversation they belong to (`gen_ai.conversation.id`). */
  private readonly conversationOf = new Map<Session, string>();
  /** Sub-agents whose agent span names a conversation of their own (not their parent's). */
  private readonly ownConversation = new Map<Session, string>();
  /** Spans whose input tokens had to be read as excluding the cache (reported once). */
  private readonly exclusive = new Set<Entry>();

  /** Adds the spans of one TracesData / ResourceSpans value; `locate` maps a path inside it to a line. */
  add(value: unknown, base: SpanPath, locate: (path: SpanPath) => SourceRef): void {
    const problems: SpanProblem[] = [];
    for (const span of readSpans(value, base, problems)) {
      this.spanCount += 1;
      const key = `${span.traceId}/${span.spanId}`;
      if (this.seen.has(key)) {
        countSkipped(this.skipped, 'span:duplicate');
        continue;
      }
      this.seen.add(key);
      const role = classifySpan(span);
      this.entries.push({
        span,
        role,
        source: locate(span.path),
        order: this.entries.length,
        server: null,
        joined: false,
      });
    }
    for (const p of problems) this.report(locate(p.path), 'warning', p.message);
  }

  /** Counts a value that is neither OTLP traces nor logs (a `resourceMetrics` line of the same exporter). */
  skip(kind: string): void {
    countSkipped(this.skipped, kind);
  }

  private readonly events = new AgentEventCollector(this.skipped);

  /**
   * Adds the log records of one LogsData / ResourceLogs value: agents' own events (Claude Code,
   * Codex). A value with none of them is counted as skipped whole; beside events that are read,
   * every other record is counted by its event name (`event:claude_code.hook_registered`), so
   * what the agents write and this reader leaves out is still said.
   */
  addLogs(value: unknown, base: SpanPath, locate: (path: SpanPath) => SourceRef): void {
    let taken = 0;
    const others: string[] = [];
    for (const record of readLogRecords(value, base)) {
      if (this.events.add(record, locate(record.path))) taken++;
      else others.push(eventNameOf(record));
    }
    if (taken === 0) countSkipped(this.skipped, 'resourceLogs');
    else for (const name of others) countSkipped(this.skipped, `event:${name}`);
  }

  finish(): ReaderResult {
    const traces = new Map<string, Map<string, Entry>>();
    for (const e of this.entries) {
      let byId = traces.get(e.span.traceId);
      if (!byId) traces.set(e.span.traceId, (byId = new Map()));
      byId.set(e.span.spanId, e);
      if (e.role === 'not-genai') countSkipped(this.skipped, 'span:not-genai');
      else if (e.role === 'other-genai')
        countSkipped(this.skipped, `gen_ai:${attrString(e.span.attributes, GEN_AI.operation) ?? 'other'}`);
    }
    const drafts: SessionDraft[] = [];
    const pools = new Map<string, SessionDraft>();
    for (const [traceId, byId] of traces) this.traceSessions(traceId, byId, drafts, pools);
    if (
      !this.entries.some((e) => e.role === 'llm' || e.role === 'server' || e.role === 'tool' || e.role === 'agent') &&
      this.events.size === 0
    )
      this.noGenAi();
    drafts.sort((a, b) => compareNanos(a.anchorNs, b.anchorNs) || a.order - b.order);
    const sessions = this.mergeConversations(
      drafts.filter((d) => d.agentSpan !== null || d.members.length > 0).map((d) => this.build(d)),
    );
    this.noteExclusiveInput();
    if (this.events.size > 0) {
      const fromEvents = this.events.finish();
      this.diagnostics.push(...fromEvents.diagnostics);
      const spanIds = new Set(sessions.filter((s) => s.calls.length > 0).map((s) => s.id));
      for (const s of fromEvents.sessions) {
        if (spanIds.has(s.id)) {
          // The same requests as spans and as events: counted once, from the spans.
          this.diagnostics.push({
            file: 0,
            line: -1,
            severity: 'info',
            message: `session ${s.id} is in this file both as spans and as log events: its calls are read from the spans; the ${s.calls.length} api_request events are not counted again.`,
          });
          continue;
        }
        sessions.push(s);
      }
    }
    return { sessions, diagnostics: this.diagnostics, skippedRecords: this.skipped };
  }

  private traceSessions(
    traceId: string,
    byId: Map<string, Entry>,
    drafts: SessionDraft[],
    pools: Map<string, SessionDraft>,
  ): void {
    const all = [...byId.values()].sort(byStart);
    for (const server of all.filter((e) => e.role === 'server')) this.join(server, byId, all);
    const agents = all.filter((e) => e.role === 'agent');
    const members = all.filter((e) => e.role === 'llm' || e.role === 'tool' || (e.role === 'server' && !e.joined));
    if (members.length === 0 && agents.length === 0) return;

    // A trace that is one call and nothing else: pool it rather than make a one-call session.
    const only = members[0];
    if (agents.length === 0 && members.length === 1 && only!.role !== 'tool' && only!.span.parentSpanId === null) {
      const conversation = attrString(only!.span.attributes, GEN_AI.conversationId);
      const key = conversation ?? `service:${attrString(only!.span.resource, 'service.name') ?? 'unknown'}`;
      let pool = pools.get(key);
      if (!pool) {
        pool = draft(key, null, null, drafts.length, only!.span.startNs);
        pools.set(key, pool);
        drafts.push(pool);
      }
      pool.members.push(only!);
      return;
    }

    const agentDrafts = new Map<Entry, SessionDraft>();
    let rest: SessionDraft | null = null;
    const rootAgents = agents.filter((a) => nearest(a, byId, (e) => e.role === 'agent') === null);
    const traceOwnsOne = rootAgents.length + (members.some((m) => this.ownerAgent(m, byId) === null) ? 1 : 0) === 1;
    for (const agent of agents) {
      const parentAgent = nearest(agent, byId, (e) => e.role === 'agent');
      const isOnlyRoot = parentAgent === null && traceOwnsOne;
      const d = draft(
        isOnlyRoot ? traceId : `${traceId}/${agent.span.spanId}`,
        parentAgent ? agentDrafts.get(parentAgent)! : null,
        agent,
        drafts.length,
        agent.span.startNs,
      );
      if (parentAgent) {
        const tool = nearest(agent, byId, (e) => e.role === 'tool' || e === parentAgent);
        if (tool && tool.role === 'tool') d.parentToolCallId = toolId(tool);
      }
      agentDrafts.set(agent, d);
      drafts.push(d);
    }
    for (const m of members) {
      const owner = this.ownerAgent(m, byId);
      if (owner) agentDrafts.get(owner)!.members.push(m);
      else {
        if (!rest) drafts.push((rest = draft(traceId, null, null, drafts.length, m.span.startNs)));
        rest.members.push(m);
      }
    }
  }

  /** The `invoke_agent` span a call or tool belongs to (through its agent call, for joined vLLM spans). */
  private ownerAgent(e: Entry, byId: Map<string, Entry>): Entry | null {
    return nearest(e, byId, (x) => x.role === 'agent');
  }

  /** Joins one vLLM span to the agent call it served (see the class comment for the rule). */
  private join(server: Entry, byId: Map<string, Entry>, all: Entry[]): void {
    const ancestor = nearest(server, byId, (e) => e.role === 'llm');
    if (ancestor && ancestor.server === null) {
      ancestor.server = server;
      server.joined = true;
      return;
    }
    if (ancestor) return; // its agent call already has a server span (a retry): a call of its own
    const s = server.span;
    if (s.startNs === null) return;
    let best: Entry | null = null;
    let bestOverlap = -1n;
    for (const c of all) {
      if (c.role !== 'llm' || c.server !== null || c.span.startNs === null || c.span.endNs === null) continue;
      if (c.span.startNs > s.startNs || s.startNs > c.span.endNs) continue;
      const end = s.endNs !== null && s.endNs < c.span.endNs ? s.endNs : c.span.endNs;
      const overlap = end - s.startNs;
      if (overlap > bestOverlap) {
        best = c;
        bestOverlap = overlap;
      }
    }
    if (best) {
      best.server = server;
      server.joined = true;
    }
  }

  private build(d: SessionDraft): Session {
    const members = [...d.members].sort(byStart);
    const calls: LlmCall[] = [];
    const callOf = new Map<Entry, LlmCall>();
    const callIds = new Set<string>();
    const toolIds = new Set<string>();
    for (const m of members) {
      if (m.role === 'tool') continue;
      const call = this.call(m, calls.length, callIds);
      calls.push(call);
      callOf.set(m, call);
    }
    for (const m of members) {
      if (m.role !== 'tool') continue;
      const call = this.callForTool(m, members, callOf);
      if (!call) {
        countSkipped(this.skipped, 'execute_tool:before-first-call');
        this.report(
          m.source,
          'info',
          `tool span "${m.span.name}" comes before any model call of its session; it has no call to belong to and is skipped.`,
        );
        continue;
      }
      call.toolCalls.push(this.tool(m, toolIds));
    }
    const agentAttrs = d.agentSpan?.span.attributes;
    const firstClient = members.find((m) => m.role === 'llm');
    const resource = d.agentSpan?.span.resource ?? firstClient?.span.resource;
    const agentName =
      (agentAttrs && attrString(agentAttrs, GEN_AI.agentName)) ?? (resource && attrString(resource, 'service.name'));
    const turns: UserTurn[] = [];
    const prompt = d.agentSpan ? userPrompt(d.agentSpan.span) : null;
    if (prompt !== null) {
      turns.push({
        index: 0,
        startMs: nanosToMs(d.agentSpan!.span.startNs),
        preview: clip(prompt.replace(/\s+/g, ' '), 160),
        source: d.agentSpan!.source,
      });
      for (const c of calls) c.turn = 0;
    }
    const conversation =
      (agentAttrs && attrString(agentAttrs, GEN_AI.conversationId)) ??
      (firstClient && attrString(firstClient.span.attributes, GEN_AI.conversationId));
    const session: Session = {
      id: d.id,
      parentId: d.parent?.id ?? null,
      parentToolCallId: d.parentToolCallId,
      role: d.parent ? 'subagent' : 'main',
      agent: agentName
        ? { name: agentName, version: (resource && attrString(resource, 'service.version')) ?? null }
        : null,
      model: mostUsedModel(calls),
      cwd: null,
      title: null,
      calls,
      turns,
      compactions: [],
    };
    if (conversation && !d.parent && d.agentSpan) this.conversationOf.set(session, conversation);
    const parentConversation = d.parent?.agentSpan
      ? attrString(d.parent.agentSpan.span.attributes, GEN_AI.conversationId)
      : null;
    if (
      conversation &&
      d.parent &&
      agentAttrs &&
      attrString(agentAttrs, GEN_AI.conversationId) === conversation &&
      conversation !== parentConversation
    )
      this.ownConversation.set(session, conversation);
    return session;
  }

  /** Root agent runs of one `gen_ai.conversation.id` (one trace per user request, as VS Code's Copilot Chat writes them): one session, a turn each. */
  private mergeConversations(sessions: Session[]): Session[] {
    const groups = new Map<string, Session[]>();
    for (const s of sessions) {
      const c = this.conversationOf.get(s);
      if (c === undefined) continue;
      const list = groups.get(c) ?? [];
      list.push(s);
      groups.set(c, list);
    }
    const dropped = new Set<Session>();
    const renamed = new Map<string, string>();
    for (const [conversation, list] of groups) {
      if (list.length < 2) continue;
      const [head, ...rest] = list as [Session, ...Session[]];
      for (const s of list) renamed.set(s.id, conversation);
      const ids = new Set(head.calls.map((c) => c.id));
      for (const s of rest) {
        const turnBase = head.turns.length;
        for (const t of s.turns) head.turns.push({ ...t, index: head.turns.length });
        for (const c of s.calls) {
          let id = c.id;
          for (let n = 2; ids.has(id); n++) id = `${c.id}#${n}`;
          ids.add(id);
          head.calls.push({ ...c, id, index: head.calls.length, turn: c.turn === null ? null : c.turn + turnBase });
        }
        dropped.add(s);
      }
      head.id = conversation;
      head.model = mostUsedModel(head.calls);
    }
    const kept = sessions.filter((s) => !dropped.has(s));
    // One run of a conversation (or a sub-agent with its own) is named by it too, unless another session has that id.
    const taken = new Set(kept.map((s) => s.id));
    for (const s of kept) {
      const c = this.conversationOf.get(s) ?? this.ownConversation.get(s);
      if (c === undefined || s.id === c || taken.has(c)) continue;
      taken.add(c);
      renamed.set(s.id, c);
      s.id = c;
    }
    for (const s of kept) if (s.parentId !== null && renamed.has(s.parentId)) s.parentId = renamed.get(s.parentId)!;
    return kept;
  }

  private call(m: Entry, index: number, ids: Set<string>): LlmCall {
    const server = m.role === 'server' ? m : m.server;
    const own = this.tokensOf(m);
    const tokens = own.tokens;
    if (server && server !== m) {
      const served = this.tokensOf(server).tokens;
      if (tokens.input === null && served.input !== null) {
        tokens.input = served.input;
        if (tokens.cached !== null && tokens.cached <= served.input) tokens.appended = served.input - tokens.cached;
      } else if (
        tokens.input !== null &&
        served.input !== null &&
        tokens.input !== served.input &&
        !own.exclusiveInput
      ) {
        this.report(
          m.source,
          'info',
          `agent span reports ${tokens.input} input tokens, its vLLM span ${served.input} (another tokenizer or chat template); the agent's figure is kept.`,
        );
      }
      if (tokens.output === null) tokens.output = served.output;
    }
    let timing = null;
    if (server) {
      const t = serverTiming(server.span.attributes);
      if (t.negativeKeys.length > 0)
        this.report(server.source, 'warning', `negative latency in ${t.negativeKeys.join(', ')}; read as unknown.`);
      timing = t.timing;
    }
    const a = m.span.attributes;
    const preferred = m.role === 'server' ? attrString(a, GEN_AI.requestId) : attrString(a, GEN_AI.responseId);
    return {
      id: uniqueId(preferred ?? m.span.spanId, m.span.spanId, ids),
      index,
      turn: null,
      model: spanModel(a) ?? (server ? spanModel(server.span.attributes) : null),
      startMs: nanosToMs(m.span.startNs),
      endMs: nanosToMs(m.span.endNs),
      tokens,
      server: timing,
      blocks: null,
      toolCalls: [],
      source: m.source,
      ...optionalText('serviceTier', attrString(a, GEN_AI.serviceTier)),
      ...optionalText('inferenceGeo', attrString(a, GEN_AI.inferenceGeo)),
    };
  }

  private tokensOf(e: Entry): SpanTokens {
    const t = spanTokens(e.span.attributes);
    if (t.badKeys.length > 0)
      this.report(
        e.source,
        'warning',
        `${t.badKeys.join(', ')} is not a whole token count ≥ 0 below 2^53; read as unknown.`,
      );
    if (t.exclusiveInput) this.exclusive.add(e);
    return t;
  }

  /** The call a tool span belongs to: an agent call above it, else the last call that started before it. */
  private callForTool(tool: Entry, members: Entry[], callOf: Map<Entry, LlmCall>): LlmCall | null {
    let best: Entry | null = null;
    for (const m of members) {
      if (m.role === 'tool' || !callOf.has(m)) continue;
      if (m.span.spanId === tool.span.parentSpanId) return callOf.get(m)!;
      if (compareNanos(m.span.startNs, tool.span.startNs) <= 0 && m.span.startNs !== null) best = m;
    }
    return best ? callOf.get(best)! : null;
  }

  private tool(e: Entry, ids: Set<string>): ToolCall {
    const s = e.span;
    const a = s.attributes;
    // `gen_ai.tool.call.arguments` is a JSON string (the usual form) or a kvlist.
    const args = parseArguments(a.get(GEN_AI.toolArguments));
    const startMs = nanosToMs(s.startNs);
    const endMs = nanosToMs(s.endNs);
    const isError = s.statusError ? true : s.endNs !== null ? false : null;
    const result = a.get(GEN_AI.toolResult);
    const exit = a.get('process.exit.code');
    return {
      id: uniqueId(toolId(e), s.spanId, ids),
      name: attrString(a, GEN_AI.toolName) ?? s.name,
      targetFile: firstArgument(args, ['file_path', 'filePath', 'path', 'notebook_path', 'target_file']),
      command: firstArgument(args, ['command', 'cmd']),
      startMs,
      endMs,
      durationMs: startMs !== null && endMs !== null && endMs >= startMs ? endMs - startMs : null,
      isError,
      errorText: isError ? clipOrNull(errorText(s)) : null,
      exitCode: typeof exit === 'number' && Number.isInteger(exit) ? exit : null,
      resultChars: typeof result === 'string' ? result.length : null,
      source: e.source,
      resultSource: isError === null ? null : e.source,
    };
  }

  private noGenAi(): void {
    const logs = this.skipped['resourceLogs'] ?? 0;
    const message =
      this.spanCount === 0 && logs > 0
        ? "The OTLP file contains log records but no spans, and none of the records is an agent event this reader knows (Claude Code's claude_code.*, Codex's codex.*), so there are no LLM calls to show."
        : this.spanCount === 0
          ? 'The OTLP file contains no spans, so there are no LLM calls to show.'
          : `No GenAI spans found: ${this.spanCount} span${this.spanCount === 1 ? ' was' : 's were'} read, none with gen_ai.* attributes ` +
            '(gen_ai.operation.name, gen_ai.usage.input_tokens, vLLM gen_ai.latency.*), so the trace has no LLM calls to show.';
    this.diagnostics.push({ file: 0, line: -1, severity: 'warning', message });
  }

  private noteExclusiveInput(): void {
    const first = this.exclusive.values().next().value;
    if (!first) return;
    this.report(
      first.source,
      'info',
      `${this.exclusive.size} span${this.exclusive.size === 1 ? ' reports' : 's report'} more cached than input tokens: their instrumentation counts input without the cache ` +
        '(Anthropic style), so input was read as input_tokens + cache reads + cache writes.',
    );
  }

  private report(source: SourceRef, severity: Diagnostic['severity'], message: string): void {
    this.diagnostics.push({ file: source.file, line: source.line, severity, message });
  }
}

/**
 * A log record's event name for the skipped counts: of its `eventName`, `event.name` and body,
 * the longest without a space. Claude Code writes `hook_registered` beside the body
 * `claude_code.hook_registered`; Codex's `eventName` is a source location with a space in it.
 */
function eventNameOf(record: OtlpLogRecord): string {
  return record.names.filter((n) => !/\s/.test(n)).sort((a, b) => b.length - a.length)[0] ?? 'unnamed';
}

function draft(
  id: string,
  parent: SessionDraft | null,
  agentSpan: Entry | null,
  order: number,
  anchorNs: bigint | null,
): SessionDraft {
  return { id, parent, agentSpan, parentToolCallId: null, members: [], anchorNs, order };
}

function byStart(a: Entry, b: Entry): number {
  return compareNanos(a.span.startNs, b.span.startNs) || compareNanos(a.span.endNs, b.span.endNs) || a.order - b.order;
}

/** The nearest ancestor (not the entry itself) that satisfies `test`, following parentSpanId within the trace. */
function nearest(e: Entry, byId: Map<string, Entry>, test: (x: Entry) => boolean): Entry | null {
  let id = e.span.parentSpanId;
  for (let depth = 0; id !== null && depth < MAX_DEPTH; depth++) {
    const p = byId.get(id);
    if (!p || p === e) return null;
    if (test(p)) return p;
    id = p.span.parentSpanId;
  }
  return null;
}

function toolId(e: Entry): string {
  return attrString(e.span.attributes, GEN_AI.toolCallId) ?? e.span.spanId;
}

/** `preferred` unless a call of the session already has it; then the span id, then a counter. */
function uniqueId(preferred: string, spanId: string, ids: Set<string>): string {
  let id = ids.has(preferred) ? spanId : preferred;
  for (let n = 2; ids.has(id); n++) id = `${spanId}#${n}`;
  ids.add(id);
  return id;
}

/**
 * The prompt that started an agent run, when the span records it: a `user_message` event's
 * `content` (VS Code's Copilot Chat), else the user part of `gen_ai.input.messages` (the
 * semantic conventions' opt-in content, a JSON string of `[{role, parts: [{type, content}]}]`).
 */
function userPrompt(s: OtlpSpan): string | null {
  for (const ev of s.events) {
    if (ev.name !== 'user_message') continue;
    const content = attrString(ev.attributes, 'content');
    if (content) return content;
  }
  const raw = s.attributes.get('gen_ai.input.messages');
  const messages = typeof raw === 'string' ? parseJsonArray(raw) : Array.isArray(raw) ? raw : null;
  for (const m of messages ?? []) {
    if (typeof m !== 'object' || m === null || Array.isArray(m) || (m as Record<string, unknown>)['role'] !== 'user')
      continue;
    const parts = (m as Record<string, unknown>)['parts'];
    const texts = Array.isArray(parts)
      ? parts
          .map((p) => (typeof p === 'object' && p !== null ? (p as Record<string, unknown>)['content'] : null))
          .filter((t): t is string => typeof t === 'string')
      : [];
    if (texts.length > 0) return texts.join('\n');
  }
  return null;
}

function parseJsonArray(text: string): unknown[] | null {
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** Why a failed span failed: its status message, else its exception event, else `error.type`. */
function errorText(s: OtlpSpan): string | null {
  if (s.statusMessage) return s.statusMessage;
  for (const ev of s.events) {
    if (ev.name !== 'exception') continue;
    const type = attrString(ev.attributes, 'exception.type');
    const message = attrString(ev.attributes, 'exception.message');
    if (message || type) return type && message ? `${type}: ${message}` : (message ?? type);
  }
  return attrString(s.attributes, 'error.type');
}

/** `{key: value}` when the span gives the value, else nothing (the call's field stays absent, as other readers leave it). */
function optionalText<K extends string>(key: K, value: string | null): Partial<Record<K, string>> {
  return value === null ? {} : ({ [key]: value } as Record<K, string>);
}

function clipOrNull(text: string | null): string | null {
  return text === null ? null : clip(text, ERROR_TEXT_MAX);
}

/** A record reader: each JSON Lines record (or a whole document fed as one) is a TracesData / ResourceSpans or a LogsData / ResourceLogs. */
export class OtlpRecordReader implements RecordReader {
  private readonly collector = new OtlpCollector();

  record({ value, source }: TraceRecord): void {
    if (isTracesData(value) || isResourceSpans(value)) this.collector.add(value, [], () => source);
    else if (isLogsData(value) || isResourceLogs(value)) this.collector.addLogs(value, [], () => source);
    else this.collector.skip(['resourceMetrics'].find((k) => k in value) ?? '(not OTLP traces)');
  }

  finish(): ReaderResult {
    return this.collector.finish();
  }
}

/** Reads a whole OTLP/JSON document (or a JSON array of TracesData), with a line for every span. */
export function readOtlpDocument(doc: JsonDocument): ReaderResult {
  const collector = new OtlpCollector();
  const locate = (path: SpanPath): SourceRef => doc.locate(path as JsonPath);
  const parts = Array.isArray(doc.value) ? doc.value.map((v, i) => [v, [i]] as const) : [[doc.value, []] as const];
  for (const [value, base] of parts) {
    if (isTracesData(value) || isResourceSpans(value)) collector.add(value, [...base], locate);
    else if (isLogsData(value) || isResourceLogs(value)) collector.addLogs(value, [...base], locate);
    else collector.skip('(not OTLP traces)');
  }
  return collector.finish();
}
