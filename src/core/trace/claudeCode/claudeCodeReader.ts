import { arr, clip, count, emptyRecord, isObject, isoMs, obj, ownedText, str } from '../json';
import type { JsonObject } from '../json';
import { markDenied, mostUsedModel, noOtherInputs, requestedToolCall, unknownTokens, withTool } from '../model';
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
import { IdIndex } from '../idIndex';
import { registerStateClass } from '../parserState';
import { countSkipped } from '../recordReader';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';
import { widened } from '../../typedArrays';

/** Longest error text kept per failed tool call; the full text stays in the file. */
const ERROR_TEXT_MAX = 600;
const PREVIEW_MAX = 160;
/** A response of this many characters cannot be 0 or 1 tokens long. */
const UNDERCOUNT_MIN_CHARS = 20;

/** Record types that carry nothing for the model (docs/design/formats.md §1, §12.6). */
const IGNORED_TYPES = new Set([
  'progress',
  'file-history-snapshot',
  'queue-operation',
  'mode',
  'permission-mode',
  'last-prompt',
  'attachment',
]);

/**
 * Text Claude Code writes into user lines itself, by the kind of input it is: never prompts
 * a person typed. Tested on the start of the text (docs/design/formats.md §1; seen in 2.0–2.1 logs).
 */
const NOT_TYPED_MARKERS: ReadonlyArray<[string, keyof OtherInputs]> = [
  ['<task-notification>', 'notification'],
  ['<local-command-stdout>', 'localCommand'],
  ['<local-command-stderr>', 'localCommand'],
  ['<local-command-caveat>', 'localCommand'],
  ['<bash-input>', 'localCommand'],
  ['<bash-stdout>', 'localCommand'],
  ['<bash-stderr>', 'localCommand'],
  ['Stop hook feedback:', 'hookOutput'],
  ['<user-prompt-submit-hook>', 'hookOutput'],
  ['[Request interrupted by user', 'interruption'],
];
/**
 * How Claude Code answers a tool use the user refused: "…proceed with this tool use. The tool
 * use was rejected…" (a permission prompt answered no) or "…take this action right now…" (the
 * prompt dismissed). Observed on 2.0.64–2.1.39 (docs/design/formats.md §12.19).
 */
const USER_DENIAL_PREFIX = "The user doesn't want to ";
/** Tools whose call starts a sub-agent; its `input.prompt` is the sub-agent's first prompt. */
const SUBAGENT_TOOLS = new Set(['Task', 'Agent']);
/** Longest API error text kept per event. */
const EVENT_TEXT_MAX = 300;
/** Strings kept once per reader (see `intern`): at most this many, each at most this long. */
const INTERN_MAX_VALUES = 4096;
const INTERN_MAX_CHARS = 512;
/**
 * Longer texts kept once per reader (see `internText`): commands beyond INTERN_MAX_CHARS and
 * failed calls' error texts. A retried command and the error it gets again are the same text.
 */
const INTERN_TEXT_MAX_VALUES = 4096;
const INTERN_TEXT_MAX_CHARS = 65_536;
/**
 * Each reader's table of those texts (a table of their own, so that they never take the places of
 * the short values in `interned`). Kept beside the reader, not in it: a saved parse
 * (TraceParse.saveState) copies the reader's fields, and every text here is in the model already,
 * so the table would only add a second copy of each to the state; a resumed parse starts a new one.
 * Every text it keeps is kept by the model too, so it costs only its entries.
 */
const INTERNED_TEXTS = new WeakMap<object, Map<string, string>>();

interface PendingTurn extends UserTurn {
  /** A `/command` line: kept only if a call of this session answers it (see finish). */
  isSlashCommand: boolean;
  answered: boolean;
}

/** Builds one session while its records stream in. Owned by ClaudeCodeReader. */
class SessionBuilder {
  readonly calls: LlmCall[] = [];
  /** The calls by message id (an index of `calls`, not a `Map`: see IdIndex). */
  readonly callsById = new IdIndex(this.calls);
  readonly turns: PendingTurn[] = [];
  readonly compactions: Compaction[] = [];
  /** Every tool call of the session, in the order read, and by id (a later one with the same id wins). */
  readonly tools: ToolCall[] = [];
  readonly toolsById = new IdIndex(this.tools);
  agentVersion: string | null = null;
  cwd: string | null = null;
  title: string | null = null;
  parentToolCallId: string | null = null;
  /**
   * Characters of text and tool input each call produced, by its position in `calls`, counted
   * up to UNDERCOUNT_MIN_CHARS (all that matters): to spot undercounted output.
   */
  contentChars = new Uint8Array(64);
  /** Time of the last user or tool-result line: the start of the next call. */
  lastInputMs: number | null = null;
  readonly otherInputs: OtherInputs = noOtherInputs();
  readonly events: SessionEvent[] = [];
  /** Inline sub-agents (1.0.x sidechains without agentId): the first prompt, to find the Task call that asked for it. */
  firstPrompt: string | null = null;

  constructor(
    readonly id: string,
    readonly parentId: string | null,
    readonly role: Session['role'],
    readonly order: number,
  ) {}
}

/**
 * Reads Claude Code session logs (`~/.claude/projects/<cwd>/<session>.jsonl`) and the
 * sub-agent logs next to them (`<session>/subagents/agent-*.jsonl`).
 *
 * One API response is written as several lines sharing `message.id`: the call is
 * counted once, input and cache figures from its first line, output from the largest
 * (the last lines carry the final count). cached = cache_read_input_tokens,
 * appended = input_tokens + cache_creation_input_tokens (docs/design/formats.md §1, §12.1).
 */
export class ClaudeCodeReader implements RecordReader {
  private readonly sessions = new Map<string, SessionBuilder>();
  private readonly diagnostics: Diagnostic[] = [];
  private readonly skipped: Record<string, number> = emptyRecord();
  /** agentId → Task tool call that started it, from the parent's tool results. */
  private readonly agentParents = new Map<string, string>();
  /** agentId → the Task result that names it (2.0.x, 2.1.x `toolUseResult.agentId`): its transcript should be beside the session. */
  private readonly namedAgents = new Map<string, { toolId: string; source: SourceRef }>();
  /** Sub-agent prompt → Task tool call ids that asked for it (inline sidechains have no agentId to link by). */
  private readonly taskPrompts = new Map<string, string[]>();
  /** Inline sidechain record uuid → key of the sub-agent session it belongs to. */
  private readonly sidechainOfUuid = new Map<string, string>();
  private inlineSidechains = 0;
  /** A title seen before any session record (old-style `summary` first lines). */
  private pendingTitle: string | null = null;
  /** Calls whose lines disagree on usage, reported once each. */
  private readonly conflictsNoted = new Set<LlmCall>();
  /**
   * One copy of each model name, service tier, region, tool name, file and command: calls repeat
   * them, and JSON.parse makes a new string each time. Bounded (the values are trace data).
   */
  private readonly interned = new Map<string, string>();

  private intern(value: string | null): string | null {
    if (value === null || value.length > INTERN_MAX_CHARS) return value;
    const known = this.interned.get(value);
    if (known !== undefined) return known;
    if (this.interned.size < INTERN_MAX_VALUES) this.interned.set(value, value);
    return value;
  }

  /** A command: short ones in `interned`, longer ones in `internedTexts`. */
  private internCommand(value: string | null): string | null {
    return value === null || value.length <= INTERN_MAX_CHARS ? this.intern(value) : this.internText(value);
  }

  /** One copy of each long command and each error text (see INTERNED_TEXTS). */
  private internText(value: string): string {
    if (value.length > INTERN_TEXT_MAX_CHARS) return value;
    let texts = INTERNED_TEXTS.get(this);
    if (texts === undefined) INTERNED_TEXTS.set(this, (texts = new Map()));
    const known = texts.get(value);
    if (known !== undefined) return known;
    if (texts.size < INTERN_TEXT_MAX_VALUES) texts.set(value, value);
    return value;
  }

  record({ value, source }: TraceRecord): void {
    const type = str(value['type']);
    if (type === null) {
      countSkipped(this.skipped, '(no type)');
      return;
    }
    switch (type) {
      case 'assistant':
        this.assistant(value, source);
        return;
      case 'user':
        this.user(value, source);
        return;
      case 'system':
        this.system(value, source);
        return;
      case 'summary':
      case 'ai-title':
      case 'custom-title':
        this.titleRecord(value, type);
        return;
      default:
        if (type === 'progress') this.noteAgentProgress(value);
        countSkipped(this.skipped, IGNORED_TYPES.has(type) ? type : `unknown:${type}`);
    }
  }

  /** The sessions read so far. Repeatable: reading may go on after it (a live log), so nothing here changes the reader's state. */
  finish(): ReaderResult {
    const builders = [...this.sessions.values()].sort((a, b) => a.order - b.order);
    const diagnostics = [...this.diagnostics];
    // Parallel Task calls with the same prompt are handed out in order, from a copy.
    const prompts = new Map([...this.taskPrompts].map(([k, v]) => [k, [...v]]));
    const sessions = builders.map((b) => this.build(b, diagnostics, prompts));
    this.noteMissingSubagents(diagnostics);
    return { sessions, diagnostics, skippedRecords: { ...this.skipped } };
  }

  private sessionFor(value: JsonObject, source: SourceRef): SessionBuilder | null {
    const sessionId = str(value['sessionId']);
    if (sessionId === null) {
      this.diagnostics.push({
        file: source.file,
        line: source.line,
        severity: 'warning',
        message: 'Claude Code record without "sessionId"; skipped.',
      });
      return null;
    }
    const agentId = str(value['agentId']);
    const sidechain = value['isSidechain'] === true;
    // Sub-agent logs carry the parent's sessionId plus their own agentId (docs/design/formats.md §1).
    // Older versions (1.0.x) write sub-agents inline, without agentId and several at once:
    // each chain of parentUuid links from a root is one sub-agent.
    const key = !sidechain
      ? sessionId
      : agentId !== null
        ? `${sessionId}/${agentId}`
        : this.inlineSidechainKey(sessionId, value);
    let builder = this.sessions.get(key);
    if (!builder) {
      if (sidechain) {
        const id = agentId ?? `${sessionId}-sidechain-${this.inlineSidechains}`;
        const role = agentId?.startsWith('acompact') ? 'compaction' : 'subagent';
        builder = new SessionBuilder(id, sessionId, role, this.sessions.size);
      } else {
        builder = new SessionBuilder(sessionId, null, 'main', this.sessions.size);
      }
      this.sessions.set(key, builder);
    }
    builder.agentVersion ??= str(value['version']);
    builder.cwd ??= str(value['cwd']);
    return builder;
  }

  /** The key of the inline sub-agent a sidechain record without agentId belongs to: its parent's, or a new one at a root. */
  private inlineSidechainKey(sessionId: string, value: JsonObject): string {
    const parent = str(value['parentUuid']);
    let key = parent !== null ? this.sidechainOfUuid.get(parent) : undefined;
    if (key === undefined) {
      this.inlineSidechains += 1;
      key = `${sessionId}/sidechain-${this.inlineSidechains}`;
    }
    const uuid = str(value['uuid']);
    if (uuid !== null) this.sidechainOfUuid.set(uuid, key);
    return key;
  }

  private assistant(value: JsonObject, source: SourceRef): void {
    const message = obj(value['message']);
    if (!message) {
      this.warn(source, 'assistant record without "message"; skipped.');
      return;
    }
    const model = this.intern(str(message['model']));
    // Claude Code writes local errors ("API Error…", rate limits, interrupted requests) as
    // assistant lines with model "<synthetic>": no request reached the model, so no call.
    // The API errors among them are shown as events and diagnostics, never dropped.
    if (model === '<synthetic>') {
      const text = contentOf(message['content']);
      if (value['isApiErrorMessage'] === true || /^API Error/i.test(text)) {
        const session = this.sessionFor(value, source);
        if (session)
          this.apiError(
            session,
            clip(text.trim() || 'API error (no text)', EVENT_TEXT_MAX),
            isoMs(value['timestamp']),
            source,
            'warning',
          );
      }
      countSkipped(this.skipped, 'assistant:<synthetic>');
      return;
    }
    const session = this.sessionFor(value, source);
    if (!session) return;
    const callId = str(message['id']) ?? str(value['requestId']) ?? str(value['uuid']);
    if (callId === null) {
      this.warn(source, 'assistant record without message.id, requestId or uuid; skipped.');
      return;
    }
    const timeMs = isoMs(value['timestamp']);
    const usage = obj(message['usage']);
    let position = session.callsById.indexOf(callId);
    let call: LlmCall;
    if (position < 0) {
      // What pricing needs beside the counts: written only when the log says, so other fields stay
      // as they were; set in the literal, not added after it (an added field costs a property store).
      const serviceTier = usage ? this.intern(str(usage['service_tier'])) : null;
      const inferenceGeo = usage ? this.intern(str(usage['inference_geo'])) : null;
      call = newCall(
        callId,
        session.calls.length,
        model,
        session.lastInputMs,
        timeMs,
        usage ? usageTokens(usage) : unknownTokens(),
        source,
        serviceTier,
        inferenceGeo,
      );
      if (!usage) this.warn(source, `call ${callId} has no usage: its tokens are unknown.`, 'info');
      position = session.calls.length;
      session.calls.push(call);
      session.callsById.put(position);
      const turn = session.turns[session.turns.length - 1];
      if (turn) turn.answered = true;
    } else {
      call = session.calls[position]!;
      if (timeMs !== null) call.endMs = timeMs;
      const output = usage ? count(usage['output_tokens']) : null;
      if (output !== null && (call.tokens.output === null || output > call.tokens.output)) call.tokens.output = output;
      if (usage) this.noteConflictingUsage(call, usageTokens(usage), source);
    }
    // Only whether a call reached UNDERCOUNT_MIN_CHARS matters (finish): counting stops there,
    // so most tool inputs are never serialised just to be measured.
    if (position >= session.contentChars.length) {
      session.contentChars = widened(session.contentChars, session.contentChars.length * 2);
    }
    let chars = session.contentChars[position]!;
    if (chars < UNDERCOUNT_MIN_CHARS) {
      for (const block of arr(message['content']) ?? []) {
        if (!isObject(block)) continue;
        if (block['type'] === 'text') chars += str(block['text'])?.length ?? 0;
        if (block['type'] === 'tool_use') chars += JSON.stringify(block['input'] ?? null).length;
        if (chars >= UNDERCOUNT_MIN_CHARS) break;
      }
      session.contentChars[position] = Math.min(chars, UNDERCOUNT_MIN_CHARS);
    }
    for (const block of arr(message['content']) ?? []) {
      if (!isObject(block) || block['type'] !== 'tool_use') continue;
      const tool = this.toolUse(block, timeMs, source);
      if (!tool) continue;
      // The lines of one response may repeat its tool_use blocks: the same call, once.
      if (call.toolCalls.some((t) => t.id === tool.id)) continue;
      // An id reused by another call is a second call, not the first again: keep both
      // (parseTrace reports the reuse); a result naming the id pairs with the later one.
      call.toolCalls = withTool(call.toolCalls, tool);
      session.tools.push(tool);
      session.toolsById.put(session.tools.length - 1);
    }
  }

  private toolUse(block: JsonObject, timeMs: number | null, source: SourceRef): ToolCall | null {
    const id = str(block['id']);
    const name = str(block['name']);
    if (id === null || name === null) {
      this.warn(source, 'tool_use block without id or name; skipped.');
      return null;
    }
    const input = obj(block['input']) ?? {};
    const prompt = SUBAGENT_TOOLS.has(name) ? str(input['prompt']) : null;
    if (prompt !== null) this.taskPrompts.set(prompt.trim(), [...(this.taskPrompts.get(prompt.trim()) ?? []), id]);
    const tool = requestedToolCall({
      id,
      name: this.intern(name)!,
      targetFile: this.intern(str(input['file_path']) ?? str(input['notebook_path']) ?? null),
      command: this.internCommand(str(input['command'])),
      startMs: null,
      source,
    });
    // Null in the literal and set here: a field that has held null keeps a time as a pointer to
    // its box, so this start and the call's end share one; a double field, or a time read back
    // from the literal above, is a box of its own (16 bytes).
    tool.startMs = timeMs;
    return tool;
  }

  private user(value: JsonObject, source: SourceRef): void {
    const session = this.sessionFor(value, source);
    if (!session) return;
    const timeMs = isoMs(value['timestamp']);
    const message = obj(value['message']);
    const content = message ? message['content'] : undefined;
    if (typeof content === 'string') {
      this.prompt(session, value, content, timeMs, source);
      return;
    }
    const blocks = arr(content);
    if (!blocks) {
      this.warn(source, 'user record without message.content; skipped.');
      return;
    }
    let promptText: string | null = null;
    for (const block of blocks) {
      if (!isObject(block)) continue;
      if (block['type'] === 'tool_result') this.toolResult(session, value, block, timeMs, source);
      else if (block['type'] === 'text' && promptText === null) promptText = str(block['text']);
    }
    if (promptText !== null) this.prompt(session, value, promptText, timeMs, source);
    if (timeMs !== null) session.lastInputMs = timeMs;
  }

  private prompt(
    session: SessionBuilder,
    value: JsonObject,
    text: string,
    timeMs: number | null,
    source: SourceRef,
  ): void {
    if (timeMs !== null) session.lastInputMs = timeMs;
    const trimmed = text.trimStart();
    if (session.role !== 'main' && session.firstPrompt === null) session.firstPrompt = trimmed.trim();
    // The compaction summary, hook feedback, notifications and command output are written by
    // Claude Code, not typed by the user (docs/design/formats.md §12.5, §12.6); so are meta lines (skill
    // bodies, caveats). They are counted by kind instead of starting turns.
    const kind: keyof OtherInputs | null =
      value['isCompactSummary'] === true
        ? 'compactionSummary'
        : (NOT_TYPED_MARKERS.find(([m]) => trimmed.startsWith(m))?.[1] ??
          (value['isMeta'] === true ? 'injected' : null));
    if (kind !== null) {
      session.otherInputs[kind] += 1;
      return;
    }
    const command = /<command-name>([^<]*)<\/command-name>/.exec(trimmed);
    const preview = ownedText(command ? command[1]!.trim() : clip(trimmed.replace(/\s+/g, ' '), PREVIEW_MAX));
    session.turns.push({
      index: session.turns.length,
      startMs: timeMs,
      preview,
      source,
      isSlashCommand: command !== null,
      answered: false,
    });
  }

  private toolResult(
    session: SessionBuilder,
    value: JsonObject,
    block: JsonObject,
    timeMs: number | null,
    source: SourceRef,
  ): void {
    const id = str(block['tool_use_id']);
    const tool = id === null ? undefined : session.toolsById.get(id);
    if (!tool) {
      // The call can sit before a cut or in another file, or its line was unreadable. A
      // failure still counts as a failed call, of a tool the log no longer names.
      if (block['is_error'] === true && id !== null) this.orphanFailure(session, id, block, timeMs, source);
      else countSkipped(this.skipped, 'tool_result:unpaired');
      return;
    }
    const text = resultText(block['content']);
    tool.endMs = timeMs;
    // Both are whole milliseconds (Date.parse), so rounding changes nothing; but V8's interpreter
    // boxes a difference of two boxed numbers (16 bytes a call), and Math.round gives a small integer.
    tool.durationMs = timeMs !== null && tool.startMs !== null ? Math.round(timeMs - tool.startMs) : null;
    tool.resultSource = source;
    tool.isError = block['is_error'] === true;
    tool.resultChars = text.length;
    const exit = /^Exit code (\d+)/.exec(text);
    if (exit) tool.exitCode = Number(exit[1]);
    if (tool.isError) tool.errorText = this.internText(ownedText(clip(stripErrorTags(text), ERROR_TEXT_MAX)));
    if (tool.isError && text.trimStart().startsWith(USER_DENIAL_PREFIX)) markDenied(tool, tool.errorText!);
    const result = obj(value['toolUseResult']);
    const agentId = result ? str(result['agentId']) : null;
    if (agentId !== null) {
      this.agentParents.set(agentId, tool.id);
      if (!this.namedAgents.has(agentId)) this.namedAgents.set(agentId, { toolId: tool.id, source });
    }
  }

  private system(value: JsonObject, source: SourceRef): void {
    const subtype = str(value['subtype']) ?? '(none)';
    if (subtype === 'api_error') {
      const session = this.sessionFor(value, source);
      if (session) this.apiError(session, retryText(value), isoMs(value['timestamp']), source, 'info');
      countSkipped(this.skipped, `system:${subtype}`);
      return;
    }
    if (subtype !== 'compact_boundary') {
      countSkipped(this.skipped, `system:${subtype}`);
      return;
    }
    const session = this.sessionFor(value, source);
    if (!session) return;
    const meta = obj(value['compactMetadata']);
    const trigger = meta ? str(meta['trigger']) : null;
    session.compactions.push({
      beforeCall: session.calls.length,
      trigger: trigger === 'manual' || trigger === 'auto' ? trigger : null,
      preTokens: meta ? count(meta['preTokens']) : null,
      timeMs: isoMs(value['timestamp']),
      source,
    });
  }

  private titleRecord(value: JsonObject, type: string): void {
    const title = str(value['summary']) ?? str(value['title']) ?? str(value['aiTitle']) ?? str(value['customTitle']);
    const sessionId = str(value['sessionId']);
    // Old-style `summary` lines have no sessionId: they title the file's main session.
    const target =
      sessionId !== null ? this.sessions.get(sessionId) : [...this.sessions.values()].find((s) => s.role === 'main');
    if (title !== null && target) target.title ??= title;
    else if (title !== null) this.pendingTitle ??= title;
    countSkipped(this.skipped, type);
  }

  private noteAgentProgress(value: JsonObject): void {
    const data = obj(value['data']);
    if (!data || data['type'] !== 'agent_progress') return;
    const agentId = str(data['agentId']);
    const parent = str(value['parentToolUseID']);
    if (agentId !== null && parent !== null && !this.agentParents.has(agentId)) this.agentParents.set(agentId, parent);
  }

  /** A failed API request: an event on the session's timeline and a diagnostic on its line. */
  private apiError(
    session: SessionBuilder,
    text: string,
    timeMs: number | null,
    source: SourceRef,
    severity: Diagnostic['severity'],
  ): void {
    session.events.push({ kind: 'api-error', beforeCall: session.calls.length, timeMs, text, source });
    this.warn(source, `API request failed: ${text}`, severity);
  }

  /** A failed tool_result whose tool_use is not in the log: a failed call of an unknown tool, on the call before it. */
  private orphanFailure(
    session: SessionBuilder,
    id: string,
    block: JsonObject,
    timeMs: number | null,
    source: SourceRef,
  ): void {
    const call = session.calls[session.calls.length - 1];
    if (!call) {
      this.warn(source, `Failed tool result ${id} comes before any call of its session; it cannot be counted.`);
      countSkipped(this.skipped, 'tool_result:unpaired');
      return;
    }
    const text = resultText(block['content']);
    const tool = requestedToolCall({ id, name: UNKNOWN_TOOL, targetFile: null, command: null, startMs: null, source });
    tool.endMs = timeMs;
    tool.resultSource = source;
    tool.isError = true;
    tool.resultChars = text.length;
    tool.errorText = this.internText(ownedText(clip(stripErrorTags(text), ERROR_TEXT_MAX)));
    if (text.trimStart().startsWith(USER_DENIAL_PREFIX)) markDenied(tool, tool.errorText);
    const exit = /^Exit code (\d+)/.exec(text);
    if (exit) tool.exitCode = Number(exit[1]);
    call.toolCalls = withTool(call.toolCalls, tool);
    session.tools.push(tool);
    session.toolsById.put(session.tools.length - 1);
    this.warn(
      source,
      `Failed tool result ${id} has no readable tool_use line: counted as a failed call of an unknown tool.`,
    );
  }

  private build(b: SessionBuilder, diagnostics: Diagnostic[], prompts: Map<string, string[]>): Session {
    // A slash command that no call of this session answered was a local command
    // (/clear, /compact, /cost): not a turn of the conversation.
    const turns: UserTurn[] = [];
    const renumber = new Map<number, number>();
    const otherInputs = { ...b.otherInputs };
    for (const t of b.turns) {
      if (t.isSlashCommand && !t.answered) {
        otherInputs.localCommand += 1;
        continue;
      }
      renumber.set(t.index, turns.length);
      turns.push({ index: turns.length, startMs: t.startMs, preview: t.preview, source: t.source });
    }
    assignTurns(b, turns);
    this.noteUndercountedOutput(b, diagnostics);
    const parentToolCallId = b.role === 'main' ? null : this.parentToolOf(b, prompts);
    // A sub-agent belongs to the session whose Task call started it: sub-agents nest.
    const parent =
      parentToolCallId === null
        ? undefined
        : [...this.sessions.values()].find((s) => s !== b && s.toolsById.has(parentToolCallId));
    return {
      id: b.id,
      parentId: parent?.id ?? b.parentId,
      parentToolCallId,
      role: b.role,
      agent: { name: 'claude-code', version: b.agentVersion },
      model: mostUsedModel(b.calls),
      cwd: b.cwd,
      title: b.title ?? (b.role === 'main' ? this.pendingTitle : null),
      calls: [...b.calls],
      turns,
      compactions: [...b.compactions],
      otherInputs,
      ...(b.events.length > 0 ? { events: [...b.events] } : {}),
    };
  }

  /**
   * A Task result names the sub-agent it ran (`toolUseResult.agentId`), whose transcript
   * Claude Code writes beside the session (2.1.x `<session>/subagents/agent-<id>.jsonl`, 2.0.x
   * a sibling `agent-<id>.jsonl`, §1). When no file of that agent was read, its calls are
   * missing from the analysis: said once per missing sub-agent, on the Task result's line.
   */
  private noteMissingSubagents(diagnostics: Diagnostic[]): void {
    const present = new Set([...this.sessions.values()].map((b) => b.id));
    for (const [agentId, { toolId, source }] of this.namedAgents) {
      if (present.has(agentId)) continue;
      const name = clip(agentId, 80);
      diagnostics.push({
        file: source.file,
        line: source.line,
        severity: 'warning',
        message: `Task call ${clip(toolId, 80)} ran sub-agent ${name}, whose transcript is not beside the session (no subagents/agent-${name}.jsonl, no sibling agent-${name}.jsonl): its calls and tokens are not in this analysis.`,
      });
    }
  }

  /** The Task call that started a sub-agent: by its agentId, else (inline sub-agents) by its first prompt. */
  private parentToolOf(b: SessionBuilder, prompts: Map<string, string[]>): string | null {
    const byId = this.agentParents.get(b.id);
    if (byId !== undefined) return byId;
    if (b.firstPrompt === null) return null;
    const asked = prompts.get(b.firstPrompt);
    if (!asked || asked.length === 0) return null;
    // Parallel Task calls with the same prompt are paired in the order they were asked.
    return asked.shift()!;
  }

  /**
   * Claude Code writes `usage` as each content block is logged, so a response whose
   * final count was never logged shows output_tokens of 0 or 1 even though it wrote
   * text or a tool call. Those outputs are undercounted; say so once per session.
   */
  private noteUndercountedOutput(b: SessionBuilder, diagnostics: Diagnostic[]): void {
    const suspects = b.calls.filter(
      (c, i) => (c.tokens.output ?? 2) <= 1 && (b.contentChars[i] ?? 0) >= UNDERCOUNT_MIN_CHARS,
    );
    const first = suspects[0];
    if (!first) return;
    diagnostics.push({
      file: first.source.file,
      line: first.source.line,
      severity: 'info',
      message:
        `${suspects.length} of ${b.calls.length} calls in session ${b.id} log output_tokens ≤ 1 although they wrote ` +
        `${UNDERCOUNT_MIN_CHARS}+ characters: Claude Code logged their usage before the response ended, so their output is undercounted.`,
    });
  }

  /**
   * The lines of one response should repeat its input figures; when a later line gives
   * different ones the first line's are kept (the call is counted once), and the
   * difference is said once per call instead of being resolved silently.
   */
  private noteConflictingUsage(call: LlmCall, later: CallTokens, source: SourceRef): void {
    if (this.conflictsNoted.has(call)) return;
    const differs = (['cached', 'appended', 'cacheWrite'] as const).filter(
      (k) => later[k] !== null && call.tokens[k] !== null && later[k] !== call.tokens[k],
    );
    if (differs.length === 0) return;
    this.conflictsNoted.add(call);
    this.warn(
      source,
      `call ${clip(call.id, 80)} gives different usage here than on line ${call.source.line + 1} (${differs.map((k) => `${k} ${later[k]} vs ${call.tokens[k]}`).join(', ')}); the first line's input figures are used and the largest output.`,
    );
  }

  private warn(source: SourceRef, message: string, severity: Diagnostic['severity'] = 'warning'): void {
    this.diagnostics.push({ file: source.file, line: source.line, severity, message });
  }
}

/**
 * Claude's `input_tokens` excludes cache reads and writes (docs/design/formats.md §12.3).
 * Absent cache fields mean the log does not say, so cached stays unknown.
 */
function usageTokens(usage: JsonObject): CallTokens {
  const fresh = count(usage['input_tokens']);
  const cached = 'cache_read_input_tokens' in usage ? count(usage['cache_read_input_tokens']) : null;
  const cacheWrite = 'cache_creation_input_tokens' in usage ? count(usage['cache_creation_input_tokens']) : null;
  const appended = fresh === null ? null : fresh + (cacheWrite ?? 0);
  const input = appended === null || cached === null ? null : appended + cached;
  const output = count(usage['output_tokens']);
  // Writes split by TTL (newer logs only): 5-minute and 1-hour writes have their own prices.
  // One literal either way: fields added after it would cost the object a property store.
  const byTtl = obj(usage['cache_creation']);
  return byTtl
    ? {
        input,
        cached,
        appended,
        cacheWrite,
        output,
        reasoningOutput: null,
        cacheWrite5m: count(byTtl['ephemeral_5m_input_tokens']),
        cacheWrite1h: count(byTtl['ephemeral_1h_input_tokens']),
      }
    : { input, cached, appended, cacheWrite, output, reasoningOutput: null };
}

/**
 * A new call, its service tier and region set only when the log gives them (as fields of the
 * literal: added afterwards they would cost every call a property store of their own). Its
 * times are null in the literal and set after it: V8 then keeps them as pointers to boxes the
 * call shares with the lines they came from (a tool result's time is the next call's start),
 * where a field that only ever held numbers gets a 16-byte box of its own in every call.
 */
function newCall(
  id: string,
  index: number,
  model: string | null,
  startMs: number | null,
  endMs: number | null,
  tokens: CallTokens,
  source: SourceRef,
  serviceTier: string | null,
  inferenceGeo: string | null,
): LlmCall {
  const toolCalls: ToolCall[] = [];
  let call: LlmCall;
  if (serviceTier && inferenceGeo)
    call = {
      id,
      index,
      turn: null,
      model,
      startMs: null,
      endMs: null,
      tokens,
      server: null,
      blocks: null,
      toolCalls,
      source,
      serviceTier,
      inferenceGeo,
    };
  else if (serviceTier)
    call = {
      id,
      index,
      turn: null,
      model,
      startMs: null,
      endMs: null,
      tokens,
      server: null,
      blocks: null,
      toolCalls,
      source,
      serviceTier,
    };
  else if (inferenceGeo)
    call = {
      id,
      index,
      turn: null,
      model,
      startMs: null,
      endMs: null,
      tokens,
      server: null,
      blocks: null,
      toolCalls,
      source,
      inferenceGeo,
    };
  else
    call = {
      id,
      index,
      turn: null,
      model,
      startMs: null,
      endMs: null,
      tokens,
      server: null,
      blocks: null,
      toolCalls,
      source,
    };
  call.startMs = startMs;
  call.endMs = endMs;
  return call;
}

/** Gives each call the index of the last kept turn whose prompt came before it. */
function assignTurns(b: SessionBuilder, turns: UserTurn[]): void {
  let t = -1;
  for (const call of b.calls) {
    while (t + 1 < turns.length && isBefore(turns[t + 1]!.source, call.source)) t += 1;
    call.turn = t >= 0 ? t : null;
  }
}

function isBefore(a: SourceRef, b: SourceRef): boolean {
  return a.file < b.file || (a.file === b.file && a.offset < b.offset);
}

/** Name given to a failed call whose tool_use line could not be read. */
export const UNKNOWN_TOOL = '(unknown tool)'; // toolTaxonomy's UNKNOWN_TOOL_NAME: never grouped into a retry loop // toolTaxonomy's UNKNOWN_TOOL_NAME: never grouped into a retry loop

/** The text of an assistant message's content: a string, or its text blocks. */
function contentOf(content: unknown): string {
  return resultText(content);
}

/** A retried API request (`system/api_error`): the error and where the retries stand. */
function retryText(value: JsonObject): string {
  const error = obj(value['error']);
  const detail = error
    ? (str(error['message']) ??
      str(obj(error['error'])?.['message']) ??
      (Object.keys(error).length > 0 ? JSON.stringify(error) : null))
    : str(value['error']);
  const attempt = count(value['retryAttempt']);
  const max = count(value['maxRetries']);
  const retry = attempt !== null ? `retry ${attempt}${max !== null ? ` of ${max}` : ''}` : 'retried';
  return clip(`${detail ?? 'no error text'} (${retry})`, EVENT_TEXT_MAX);
}

/** The text of a tool_result's content: a string, or text blocks (images are skipped). */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  const parts: string[] = [];
  for (const block of arr(content) ?? []) {
    if (isObject(block) && typeof block['text'] === 'string') parts.push(block['text']);
  }
  return parts.join('\n');
}

function stripErrorTags(text: string): string {
  return text.replace(/<\/?tool_use_error>/g, '').trim();
}

// A session's parse is saved with its builders: the session index resumes it (TraceParse.saveState, parserState.ts).
registerStateClass('claude-code/session-builder', SessionBuilder);

/**
 * The keys of a record ClaudeCodeReader reads (`value['…']` above; a unit test checks the
 * list against this file). Records carry many more (uuids of the UI, git branch, user type…).
 */
const READ_KEYS = [
  'agentId',
  'aiTitle',
  'compactMetadata',
  'customTitle',
  'cwd',
  'data',
  'error',
  'isApiErrorMessage',
  'isCompactSummary',
  'isMeta',
  'isSidechain',
  'maxRetries',
  'message',
  'parentToolUseID',
  'parentUuid',
  'requestId',
  'retryAttempt',
  'sessionId',
  'subtype',
  'summary',
  'timestamp',
  'title',
  'toolUseResult',
  'type',
  'uuid',
  'version',
] as const;

/**
 * A record as ClaudeCodeReader reads it, without what it never reads: only the keys it
 * reads (READ_KEYS), of a `progress` record only `data.type`, `data.agentId` and
 * `parentToolUseID` (noteAgentProgress), of a `toolUseResult` only its `agentId`
 * (toolResult). What a parse thread sends the reader's thread (src/node/parallelParse.ts);
 * test/unit/node/parallelParse.test.ts compares both readings on every sample.
 */
export function slimClaudeCodeRecord(value: JsonObject): JsonObject {
  const type = value['type'];
  if (type === 'progress') {
    const data = obj(value['data']);
    return {
      type,
      data: data ? { type: data['type'], agentId: data['agentId'] } : null,
      parentToolUseID: value['parentToolUseID'],
    };
  }
  const slim: JsonObject = {};
  for (const key of READ_KEYS) if (Object.prototype.hasOwnProperty.call(value, key)) slim[key] = value[key]!;
  if ('toolUseResult' in slim) {
    const result = obj(slim['toolUseResult']);
    slim['toolUseResult'] = result ? { agentId: result['agentId'] } : null;
  }
  return slim;
}
