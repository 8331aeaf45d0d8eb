import { arr, clip, count, emptyRecord, firstLine, isObject, isoMs, obj, ownedText, str } from '../json';
import type { JsonObject } from '../json';
import { mostUsedModel, requestedToolCall, unknownTokens, withTool } from '../model';
import type { CallTokens, Compaction, Diagnostic, LlmCall, Session, SourceRef, ToolCall, UserTurn } from '../model';
import { countSkipped } from '../recordReader';
import type { ReaderResult, RecordReader, TraceRecord } from '../recordReader';
import { ERROR_TEXT_MAX } from '../sweAgent/observationErrors';
import { CODE_MODE_EXEC, CODE_MODE_WAIT, nestedItem, patchApplied, scriptActions, scriptOutcome } from './codeMode';
import type { NestedItem } from './codeMode';
import {
  callArguments,
  failedPatchTarget,
  outputText,
  patchTarget,
  resolvePath,
  shellCommand,
  toolOutcome,
} from './toolOutput';

/** Record types of a Codex rollout envelope (docs/design/formats.md §10); `world_state` from 0.144 on. */
export const ROLLOUT_TYPES: ReadonlySet<string> = new Set([
  'session_meta',
  'turn_context',
  'response_item',
  'event_msg',
  'compacted',
  'world_state',
]);
const PREVIEW_MAX = 160;

/**
 * Text Codex itself puts into user-role messages (environment, AGENTS.md, permissions):
 * context for the model, never typed by the user. Only needed for files without
 * `event_msg/user_message` lines; when those exist they decide (see finish).
 */
export const INJECTED_PREFIXES: readonly string[] = [
  '<environment_context>',
  '<user_instructions>',
  '# AGENTS.md instructions for',
  '<INSTRUCTIONS>',
  '<permissions instructions>',
  '<collaboration_mode>',
  '<user_shell_command>',
  '<turn_aborted>',
  // 0.147 and later: plugins the user could install, sent as a user-role message (observed on 0.152).
  '<recommended_plugins>',
];

/** Usage fields compared between `last_token_usage` and the difference of the cumulative totals. */
const USAGE_FIELDS = ['input_tokens', 'cached_input_tokens', 'output_tokens', 'reasoning_output_tokens'] as const;

/**
 * Where the model's response items sit relative to their usage report. Codex 0.60 records a
 * response's items after the request completed, so `token_count` comes first; newer CLIs
 * (0.114) record items as they stream in and report usage at the end.
 */
type ItemOrder = 'unknown' | 'usage-first' | 'items-first';

/** Model items seen that no usage report has claimed yet. */
interface PendingResponse {
  source: SourceRef;
  startMs: number | null;
  endMs: number | null;
  model: string | null;
  tools: ToolCall[];
}

interface PendingTurn extends UserTurn {
  /** Where the turn was seen: the response item, the UI event, or a task with no prompt. */
  kind: 'item' | 'event' | 'task';
  /** The other view of the same prompt (item ↔ event) was seen. */
  matched: boolean;
  text: string;
  callsBefore: number;
}

/**
 * Reads OpenAI Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`),
 * 0.60-style and 0.114-style (docs/design/formats.md §2, §12).
 *
 * One LLM call per distinct usage report: `event_msg/token_count` with `info`, deduplicated
 * on `total_token_usage.total_tokens` (0.60 writes each report twice, §12.2); `info: null`
 * says nothing. Tokens come from `last_token_usage`, whose `input_tokens` includes the cached
 * ones (§12.3): appended = input − cached, no cache-write figure.
 *
 * The model's response items (reasoning, assistant messages, tool calls) go to the call whose
 * report they are next to. Which side that is depends on the CLI version (see ItemOrder); it is
 * decided once per file, at the first report, from whether model items were waiting for it.
 * A call's `source` is its first line: the `token_count` line in 0.60 files, the first
 * response item in 0.114 files.
 */
export class CodexReader implements RecordReader {
  private readonly diagnostics: Diagnostic[] = [];
  private readonly skipped: Record<string, number> = emptyRecord();
  private sessionId: string | null = null;
  private parentId: string | null = null;
  private agentVersion: string | null = null;
  private sessionCwd: string | null = null;
  /** The thread's name (`event_msg/thread_name_updated`), null until one is set. */
  private threadName: string | null = null;
  /** cwd and model of the latest turn_context: what the next request runs with. */
  private turnCwd: string | null = null;
  private model: string | null = null;
  private readonly calls: LlmCall[] = [];
  private readonly turns: PendingTurn[] = [];
  private readonly compactions: Compaction[] = [];
  private readonly toolsById = new Map<string, ToolCall>();
  private order: ItemOrder = 'unknown';
  /** usage-first files: the call whose items are still being written. */
  private open: LlmCall | null = null;
  private pending: PendingResponse | null = null;
  /** Time of the last line that starts a request: prompt, tool output, turn_context, task_started. */
  private lastInputMs: number | null = null;
  private lastTotal: JsonObject | null = null;
  private lastTotalKey: string | number | null = null;
  private usageMismatches = 0;
  private firstMismatch: SourceRef | null = null;
  private usagelessCalls = 0;
  private firstUsageless: SourceRef | null = null;
  private eventPromptsSeen = false;
  /** A task_started not yet followed by a prompt. */
  private pendingTask: { source: SourceRef; timeMs: number | null } | null = null;
  private firstSource: SourceRef | null = null;
  /** Code mode: the last `exec`/`wait` call, which the nested commands Codex reports belong to. */
  private scriptTool: ToolCall | null = null;
  /** Code mode: nested commands and file changes reported for each script call, until its result. */
  private readonly nested = new Map<ToolCall, NestedItem[]>();
  /** Code mode: the `exec` call a still-running cell belongs to, by cell id. */
  private readonly cells = new Map<string, ToolCall>();
  /** Exit codes `item_completed` reported for calls whose output is not seen yet, by call id. */
  private readonly reportedExit = new Map<string, number>();
  /**
   * What `exec_command_end` said of a command, by call id: read only when the file ends before
   * the call's own output (a rollout copied while the turn ran), which otherwise decides.
   */
  private readonly commandEnds = new Map<string, CommandEnd>();
  /**
   * A search only `web_search_end` has reported so far: 0.128 writes it before the
   * `web_search_call` item, which carries no id (observed), so the item is the same search.
   */
  private searchEnded: { tool: ToolCall; action: string } | null = null;

  record({ value, source }: TraceRecord): void {
    this.firstSource ??= source;
    const type = str(value['type']);
    if (type === null) {
      countSkipped(this.skipped, '(no type)');
      return;
    }
    if (!ROLLOUT_TYPES.has(type)) {
      countSkipped(this.skipped, `unknown:${type}`);
      return;
    }
    const payload = obj(value['payload']);
    if (!payload) {
      this.warn(source, `Codex ${type} record without "payload"; skipped.`);
      return;
    }
    const timeMs = isoMs(value['timestamp']);
    switch (type) {
      case 'session_meta':
        this.sessionMeta(payload, source);
        return;
      case 'turn_context':
        this.model = str(payload['model']) ?? this.model;
        this.turnCwd = str(payload['cwd']) ?? this.turnCwd;
        this.sessionCwd ??= this.turnCwd;
        this.noteInput(timeMs);
        return;
      case 'response_item':
        this.responseItem(payload, timeMs, source);
        return;
      case 'event_msg':
        this.event(payload, timeMs, source);
        return;
      case 'compacted':
        this.compaction(timeMs, source);
        return;
      case 'world_state':
        // The environment the model is told about (cwd, sandbox, skills): not part of the conversation.
        countSkipped(this.skipped, 'world_state');
        return;
    }
  }

  /**
   * The session read so far. Repeatable: reading may go on after it (a live rollout), so
   * it changes none of the reader's state. A response still waiting for its usage report
   * is counted with unknown tokens in this result only; if the report comes, the next
   * result has it.
   */
  finish(): ReaderResult {
    const diagnostics = [...this.diagnostics];
    const note = (severity: Diagnostic['severity'], source: SourceRef, message: string): void =>
      void diagnostics.push({ file: source.file, line: source.line, severity, message });
    const calls = [...this.calls];
    let usageless = this.usagelessCalls;
    let firstUsageless = this.firstUsageless;
    const p = this.pending;
    if (p) {
      usageless += 1;
      firstUsageless ??= p.source;
      calls.push({
        id: '',
        index: calls.length,
        turn: null,
        model: p.model,
        startMs: p.startMs,
        endMs: p.endMs,
        tokens: unknownTokens(),
        server: null,
        blocks: null,
        toolCalls: p.tools,
        source: p.source,
      });
    }
    const ended = this.endedWithoutOutput(calls);
    if (ended.count > 0 && ended.first) {
      note(
        'info',
        ended.first,
        `${ended.count} command${ended.count === 1 ? ' has' : 's have'} no output record (the file ends first): ${ended.count === 1 ? 'its' : 'their'} outcome is read from exec_command_end.`,
      );
    }
    if (this.usageMismatches > 0 && this.firstMismatch) {
      note(
        'info',
        this.firstMismatch,
        `${this.usageMismatches} usage reports give a last_token_usage that differs from the change in total_token_usage; the per-call figures (last_token_usage) are used.`,
      );
    }
    if (usageless > 0 && firstUsageless) {
      note(
        'info',
        firstUsageless,
        `${usageless} model responses have no usage report (interrupted, or the file ends first): their tokens are unknown.`,
      );
    }
    if (this.sessionId === null && calls.length === 0 && this.turns.length === 0) {
      return { sessions: [], diagnostics, skippedRecords: { ...this.skipped } };
    }
    if (this.sessionId === null && this.firstSource) {
      note('warning', this.firstSource, 'No session_meta line: the session id, CLI version and cwd are unknown.');
    }
    const id = this.sessionId ?? 'codex-session';
    calls.forEach((c, i) => (c.id = `${id}#${i + 1}`));
    const turns = this.keptTurns();
    assignTurns(calls, turns);
    const session: Session = {
      id,
      parentId: this.parentId,
      parentToolCallId: null,
      role: this.parentId === null ? 'main' : 'subagent',
      agent: { name: 'codex', version: this.agentVersion },
      model: mostUsedModel(calls) ?? this.model,
      cwd: this.sessionCwd,
      title: this.threadName,
      calls,
      turns,
      compactions: [...this.compactions],
    };
    return { sessions: [session], diagnostics, skippedRecords: { ...this.skipped } };
  }

  /**
   * Commands whose output never came but whose `exec_command_end` did: settled from it, on
   * copies (the output may still come when reading goes on). Replaces those calls in `calls`.
   */
  private endedWithoutOutput(calls: LlmCall[]): { count: number; first: SourceRef | null } {
    let count = 0;
    let first: SourceRef | null = null;
    if (this.commandEnds.size === 0) return { count, first };
    calls.forEach((c, i) => {
      if (!c.toolCalls.some((t) => t.resultSource === null && this.commandEnds.has(t.id))) return;
      const toolCalls = c.toolCalls.map((t) => {
        const end = t.resultSource === null ? this.commandEnds.get(t.id) : undefined;
        if (!end) return t;
        count += 1;
        first ??= end.source;
        return settledByEnd(t, end);
      });
      calls[i] = { ...c, toolCalls };
    });
    return { count, first };
  }

  private sessionMeta(p: JsonObject, source: SourceRef): void {
    const id = str(p['id']);
    if (this.sessionId !== null) {
      // Sub-agent rollouts replay the parent's history, session_meta included.
      if (id !== null && id !== this.sessionId)
        this.info(
          source,
          `A second session_meta (${id}) follows: the lines after it replay that session's history and are read as part of ${this.sessionId}.`,
        );
      countSkipped(this.skipped, 'session_meta (repeated)');
      return;
    }
    this.sessionId = id;
    this.agentVersion = str(p['cli_version']);
    this.sessionCwd = str(p['cwd']) ?? this.sessionCwd;
    this.turnCwd ??= this.sessionCwd;
    const origin = obj(p['source']);
    const spawn = origin ? obj(obj(origin['subagent'])?.['thread_spawn']) : null;
    this.parentId = spawn ? str(spawn['parent_thread_id']) : null;
  }

  private responseItem(p: JsonObject, timeMs: number | null, source: SourceRef): void {
    const type = str(p['type']) ?? '(none)';
    switch (type) {
      case 'message': {
        const role = str(p['role']) ?? '(none)';
        if (role === 'assistant') this.modelItem(null, timeMs, source);
        else if (role === 'user') this.userItem(p, timeMs, source);
        else countSkipped(this.skipped, `response_item:message (${role})`);
        return;
      }
      case 'reasoning':
        this.modelItem(null, timeMs, source);
        return;
      case 'web_search_call':
        this.modelItem(this.webSearch(p, timeMs, source), timeMs, source);
        return;
      case 'function_call':
      case 'custom_tool_call':
      case 'local_shell_call':
        this.modelItem(this.toolCall(type, p, timeMs, source), timeMs, source);
        return;
      case 'function_call_output':
      case 'custom_tool_call_output':
        this.toolResult(type, p, timeMs, source);
        return;
      default:
        // ghost_snapshot (a git snapshot) and anything newer: not part of the conversation.
        countSkipped(this.skipped, `response_item:${type}`);
    }
  }

  private event(p: JsonObject, timeMs: number | null, source: SourceRef): void {
    const type = str(p['type']) ?? '(none)';
    switch (type) {
      case 'token_count': {
        const info = obj(p['info']);
        if (info) this.usage(info, timeMs, source);
        else countSkipped(this.skipped, 'event_msg:token_count (no usage)');
        return;
      }
      case 'user_message':
        this.prompt(str(p['message']) ?? '', 'event', timeMs, source);
        return;
      case 'task_started':
        this.endResponse();
        this.pendingTask = { source, timeMs };
        this.noteInput(timeMs);
        return;
      case 'task_complete':
        this.endResponse();
        return;
      case 'turn_aborted':
        this.endResponse();
        this.info(source, `The user interrupted the turn here (reason: ${str(p['reason']) ?? 'not given'}).`);
        return;
      case 'web_search_end':
        this.webSearchEnd(p, timeMs, source);
        return;
      case 'item_completed': {
        const item = nestedItem(p);
        const completed = obj(p['item']);
        if (item) this.nestedItemDone(item);
        else if (completed && str(completed['type']) === 'UserMessage') {
          // 0.15x writes no user_message event: this is the UI's copy of the typed prompt (observed on 0.152).
          this.prompt(itemText(completed), 'event', timeMs, source);
        } else countSkipped(this.skipped, `event_msg:item_completed (${str(completed?.['type']) ?? 'no item'})`);
        return;
      }
      case 'exec_command_end': {
        const id = str(p['call_id']);
        const tool = id === null ? undefined : this.toolsById.get(id);
        if (tool && tool.resultSource === null) this.commandEnds.set(tool.id, commandEnd(p, timeMs, source));
        countSkipped(this.skipped, 'event_msg:exec_command_end');
        return;
      }
      case 'patch_apply_end': {
        // 0.14x code mode reports each nested apply_patch here (`exec-…` ids); elsewhere the output says it all.
        const item = patchApplied(p);
        if (item && item.id !== null && !this.toolsById.has(item.id)) this.nestedItemDone(item);
        else countSkipped(this.skipped, 'event_msg:patch_apply_end');
        return;
      }
      case 'thread_name_updated': {
        // The thread's name as the user set it (/rename) or Codex gave it: the session's own title; the last one wins.
        const name = str(p['thread_name']);
        if (name !== null && name.trim() !== '') this.threadName = firstLine(name, PREVIEW_MAX);
        else countSkipped(this.skipped, 'event_msg:thread_name_updated (no name)');
        return;
      }
      case 'context_compacted': {
        const last = this.compactions[this.compactions.length - 1];
        // The same compaction is also written as a `compacted` line by some versions.
        if (last && last.beforeCall === this.calls.length) countSkipped(this.skipped, 'event_msg:context_compacted');
        else this.compaction(timeMs, source);
        return;
      }
      default:
        // agent_message, agent_reasoning (UI copies of response items), and the rest.
        countSkipped(this.skipped, `event_msg:${type}`);
    }
  }

  /** A reasoning item, assistant message or tool call: output of the model's current response. */
  private modelItem(tool: ToolCall | null, timeMs: number | null, source: SourceRef): void {
    this.promoteTask();
    if (tool) {
      if (this.toolsById.has(tool.id)) {
        countSkipped(this.skipped, 'response_item:tool call (repeated id)');
        tool = null;
      } else this.toolsById.set(tool.id, tool);
    }
    if (this.order === 'usage-first' && this.open) {
      if (tool) this.open.toolCalls = withTool(this.open.toolCalls, tool);
      return;
    }
    this.pending ??= { source, startMs: this.lastInputMs, endMs: timeMs, model: this.model, tools: [] };
    if (timeMs !== null) this.pending.endMs = timeMs;
    if (tool) this.pending.tools = withTool(this.pending.tools, tool);
  }

  private usage(info: JsonObject, timeMs: number | null, source: SourceRef): void {
    const total = obj(info['total_token_usage']);
    const last = obj(info['last_token_usage']);
    const key = total ? (count(total['total_tokens']) ?? JSON.stringify(total)) : null;
    if (key !== null && key === this.lastTotalKey) {
      countSkipped(this.skipped, 'event_msg:token_count (repeated)');
      return;
    }
    const delta = total ? difference(total, this.lastTotal) : null;
    if (last && delta && this.lastTotal && USAGE_FIELDS.some((f) => count(last[f]) !== delta[f])) {
      this.usageMismatches += 1;
      this.firstMismatch ??= source;
    }
    const tokens = last ? usageTokens(last) : delta ? usageTokens(delta) : unknownTokens();
    if (total) {
      this.lastTotal = total;
      this.lastTotalKey = key;
    }
    if (this.order === 'unknown') this.order = this.pending ? 'items-first' : 'usage-first';
    this.promoteTask();
    if (this.order === 'items-first' && this.pending) {
      const p = this.pending;
      this.pending = null;
      this.addCall(p.source, p.startMs, timeMs ?? p.endMs, p.model, tokens, p.tools);
      return;
    }
    this.flushPending();
    const call = this.addCall(source, this.lastInputMs, timeMs, this.model, tokens, []);
    if (this.order === 'usage-first') this.open = call;
  }

  private addCall(
    source: SourceRef,
    startMs: number | null,
    endMs: number | null,
    model: string | null,
    tokens: CallTokens,
    tools: ToolCall[],
  ): LlmCall {
    const call: LlmCall = {
      id: '',
      index: this.calls.length,
      turn: null,
      model,
      startMs,
      endMs,
      tokens,
      server: null,
      blocks: null,
      toolCalls: tools,
      source,
    };
    this.calls.push(call);
    return call;
  }

  /** A prompt, a finished task, an interruption or a compaction: the current response is over. */
  private endResponse(): void {
    this.open = null;
    this.flushPending();
  }

  /** Model items no report claimed: a response that was interrupted or cut off. Kept, tokens unknown. */
  private flushPending(): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    this.usagelessCalls += 1;
    this.firstUsageless ??= p.source;
    this.addCall(p.source, p.startMs, p.endMs, p.model, unknownTokens(), p.tools);
  }

  private userItem(p: JsonObject, timeMs: number | null, source: SourceRef): void {
    const parts: string[] = [];
    for (const block of arr(p['content']) ?? []) {
      if (isObject(block) && typeof block['text'] === 'string') parts.push(block['text']);
    }
    const text = parts.join('\n');
    const trimmed = text.trimStart();
    if (INJECTED_PREFIXES.some((m) => trimmed.startsWith(m))) {
      countSkipped(this.skipped, 'response_item:message (injected context)');
      return;
    }
    this.prompt(text, 'item', timeMs, source);
  }

  /**
   * A typed prompt. Codex writes it twice, as a response item and as a UI event, next to
   * each other: the second view marks the first as matched instead of adding a turn.
   */
  private prompt(text: string, kind: 'item' | 'event', timeMs: number | null, source: SourceRef): void {
    this.endResponse();
    this.pendingTask = null;
    this.noteInput(timeMs);
    if (kind === 'event') this.eventPromptsSeen = true;
    const last = this.turns[this.turns.length - 1];
    if (
      last &&
      last.kind !== kind &&
      last.kind !== 'task' &&
      !last.matched &&
      last.callsBefore === this.calls.length &&
      sameText(last.text, text)
    ) {
      last.matched = true;
      return;
    }
    this.turns.push({
      index: this.turns.length,
      startMs: timeMs,
      preview: ownedText(clip(text.trim().replace(/\s+/g, ' '), PREVIEW_MAX)),
      source,
      kind,
      matched: false,
      text,
      callsBefore: this.calls.length,
    });
  }

  /** A task (0.114) that reached the model without a typed prompt still starts a turn. */
  private promoteTask(): void {
    const task = this.pendingTask;
    if (!task) return;
    this.pendingTask = null;
    this.turns.push({
      index: this.turns.length,
      startMs: task.timeMs,
      preview: '(task started without a typed prompt)',
      source: task.source,
      kind: 'task',
      matched: false,
      text: '',
      callsBefore: this.calls.length,
    });
  }

  /**
   * When the file has `user_message` events, they are the typed prompts: a user-role item
   * that no event repeats is context Codex injected (a form INJECTED_PREFIXES does not know).
   */
  private keptTurns(): UserTurn[] {
    const kept = this.turns.filter((t) => !this.eventPromptsSeen || t.kind !== 'item' || t.matched);
    return kept.map((t, index) => ({ index, startMs: t.startMs, preview: t.preview, source: t.source }));
  }

  private compaction(timeMs: number | null, source: SourceRef): void {
    this.endResponse();
    // Codex logs neither what triggered the compaction nor the context size before it.
    this.compactions.push({ beforeCall: this.calls.length, trigger: null, preTokens: null, timeMs, source });
  }

  private toolCall(type: string, p: JsonObject, timeMs: number | null, source: SourceRef): ToolCall | null {
    const id = str(p['call_id']) ?? str(p['id']);
    if (id === null) {
      this.warn(source, `${type} without call_id; its result cannot be paired.`);
      return null;
    }
    const cwd = this.turnCwd ?? this.sessionCwd;
    let name: string;
    let command: string | null = null;
    let patch: string | null = null;
    if (type === 'custom_tool_call' && str(p['name']) === CODE_MODE_EXEC) {
      // Code mode: a script whose nested tool calls are the commands and edits.
      name = CODE_MODE_EXEC;
      const actions = scriptActions(str(p['input']) ?? '');
      command = actions.commands.length > 0 ? actions.commands.join(' && ') : null;
      const file = actions.patchedFiles[0];
      const tool = requestedToolCall({
        id,
        name,
        targetFile: file === undefined ? null : resolvePath(file, cwd),
        command,
        startMs: timeMs,
        source,
      });
      this.scriptTool = tool;
      return tool;
    } else if (type === 'custom_tool_call') {
      // Freeform input: apply_patch's patch text.
      name = str(p['name']) ?? 'custom_tool';
      const input = str(p['input']);
      if (input !== null && (name === 'apply_patch' || input.includes('*** Begin Patch'))) patch = input;
    } else if (type === 'local_shell_call') {
      name = 'local_shell';
      command = shellCommand(obj(p['action']));
    } else {
      name = str(p['name']) ?? 'function';
      const raw = p['arguments'];
      const args = callArguments(raw);
      if (args === null && typeof raw === 'string' && raw.trim() !== '')
        this.info(source, `Arguments of ${name} (${id}) are not a JSON object; its command is unknown.`);
      command = shellCommand(args);
      if (name === CODE_MODE_WAIT) {
        // Waiting on a running script continues that script: same command, same files.
        const cell = str(args?.['cell_id']) ?? (typeof args?.['cell_id'] === 'number' ? String(args['cell_id']) : null);
        const script = cell === null ? undefined : this.cells.get(cell);
        const tool = requestedToolCall({
          id,
          name,
          targetFile: script?.targetFile ?? null,
          command: script?.command ?? null,
          startMs: timeMs,
          source,
        });
        this.scriptTool = tool;
        return tool;
      }
      if (name === 'apply_patch')
        patch = str(args?.['input']) ?? str(args?.['patch']) ?? (typeof raw === 'string' ? raw : null);
      // Older CLIs ran apply_patch through the shell with the patch in a heredoc.
      else if (command?.includes('*** Begin Patch')) patch = command;
    }
    const target = patch === null ? null : patchTarget(patch);
    return requestedToolCall({
      id,
      name,
      targetFile: target === null ? null : resolvePath(target, cwd),
      command,
      startMs: timeMs,
      source,
    });
  }

  private toolResult(type: string, p: JsonObject, timeMs: number | null, source: SourceRef): void {
    this.noteInput(timeMs);
    const id = str(p['call_id']);
    const tool = id === null ? undefined : this.toolsById.get(id);
    if (!tool) {
      // The call can sit before a cut: nothing to pair it with (§12.9).
      countSkipped(this.skipped, `response_item:${type} (unpaired)`);
      return;
    }
    if (tool.resultSource !== null) {
      countSkipped(this.skipped, `response_item:${type} (repeated)`);
      return;
    }
    const { text, success } = outputText(p['output']);
    if ((tool.name === CODE_MODE_EXEC || tool.name === CODE_MODE_WAIT) && this.scriptResult(tool, text, timeMs, source))
      return;
    const outcome = toolOutcome(text, success);
    const reported = this.reportedExit.get(tool.id);
    if (reported !== undefined && outcome.exitCode === null) {
      outcome.exitCode = reported;
      outcome.isError = reported !== 0;
    }
    tool.endMs = timeMs;
    tool.resultSource = source;
    tool.resultChars = text.length;
    tool.isError = outcome.isError;
    tool.exitCode = outcome.exitCode;
    // The runner's own measure first: 0.60 writes a call and its output at the same moment.
    tool.durationMs = outcome.durationMs ?? (timeMs !== null && tool.startMs !== null ? timeMs - tool.startMs : null);
    if (outcome.isError === true) {
      tool.errorText = ownedText(clip(outcome.detail.trim(), ERROR_TEXT_MAX));
      // The file a failed patch names is the one that failed, even in a multi-file patch.
      const failedFile = failedPatchTarget(text);
      if (failedFile !== null) tool.targetFile = resolvePath(failedFile, this.turnCwd ?? this.sessionCwd);
    }
  }

  /** A built-in web search the model ran: a tool call, complete when Codex says so. */
  private webSearch(p: JsonObject, timeMs: number | null, source: SourceRef): ToolCall | null {
    const ended = this.searchEnded;
    this.searchEnded = null;
    const ownId = str(p['id']) ?? str(p['call_id']);
    if (ownId === null && ended && ended.action === JSON.stringify(p['action'] ?? null)) {
      // The item of the search web_search_end already reported (0.128): one search, not two.
      countSkipped(this.skipped, 'response_item:web_search_call (reported by web_search_end)');
      if (str(p['status']) === 'failed') {
        ended.tool.isError = true;
        ended.tool.errorText = 'web search failed';
      }
      return null;
    }
    const id = ownId ?? `web_search@${source.line + 1}`;
    const action = obj(p['action']);
    const query = action
      ? (str(action['query']) ??
        (arr(action['queries']) ?? []).filter((q): q is string => typeof q === 'string').join(' | '))
      : null;
    const tool = requestedToolCall({
      id,
      name: 'web_search',
      targetFile: null,
      command: null,
      startMs: timeMs,
      source,
    });
    const status = str(p['status']);
    if (status === 'completed' || status === 'failed') {
      tool.isError = status === 'failed';
      tool.endMs = timeMs;
      tool.resultSource = source;
      if (tool.isError) tool.errorText = clip(`web search failed${query ? `: ${query}` : ''}`, ERROR_TEXT_MAX);
    }
    return tool;
  }

  /**
   * `web_search_end`: completes the search with that call id; inside a running code-mode
   * script it is a search the script ran (`tools.web__run`, `exec-…` ids, observed on 0.144),
   * part of that `exec` call; otherwise it is the first record of a built-in search.
   */
  private webSearchEnd(p: JsonObject, timeMs: number | null, source: SourceRef): void {
    const id = str(p['call_id']);
    const known = id === null ? undefined : this.toolsById.get(id);
    if (known) {
      known.endMs = timeMs ?? known.endMs;
      known.resultSource ??= source;
      known.isError ??= false;
      if (known.startMs !== null && known.endMs !== null) known.durationMs = known.endMs - known.startMs;
      return;
    }
    if (this.scriptTool && this.scriptTool.resultSource === null && (id === null || id.startsWith('exec-'))) {
      countSkipped(this.skipped, 'event_msg:web_search_end (inside exec)');
      return;
    }
    const tool = requestedToolCall({
      id: id ?? `web_search@${source.line + 1}`,
      name: 'web_search',
      targetFile: null,
      command: null,
      startMs: timeMs,
      source,
    });
    tool.isError = false;
    tool.endMs = timeMs;
    tool.resultSource = source;
    this.modelItem(tool, timeMs, source);
    this.searchEnded = { tool, action: JSON.stringify(p['action'] ?? null) };
  }

  /**
   * A nested command or file change Codex reports as done (`item_completed`): it belongs to
   * the tool call with its id, or (code mode) to the script running it.
   */
  private nestedItemDone(item: NestedItem): void {
    const own = item.id === null ? undefined : this.toolsById.get(item.id);
    if (own && own.name !== CODE_MODE_EXEC && own.name !== CODE_MODE_WAIT) {
      if (item.exitCode !== null) {
        if (own.resultSource === null) this.reportedExit.set(own.id, item.exitCode);
        else if (own.exitCode === null) {
          own.exitCode = item.exitCode;
          own.isError = item.exitCode !== 0;
        }
      }
      return;
    }
    const script = this.scriptTool;
    if (!script || script.resultSource !== null) {
      countSkipped(this.skipped, `event_msg:item_completed (${item.kind}, no script)`);
      return;
    }
    this.nested.set(script, [...(this.nested.get(script) ?? []), item]);
    if (item.command !== null && script.command === null) script.command = item.command;
    const file = item.files[0];
    if (file !== undefined && script.targetFile === null)
      script.targetFile = resolvePath(file, this.turnCwd ?? this.sessionCwd);
  }

  /**
   * The result of a code-mode script (`Script completed|failed|running…`): it failed when the
   * script failed, when a nested command it reported exited non-zero, or when a nested
   * command's printed result says so. False when the text is no script result.
   */
  private scriptResult(tool: ToolCall, text: string, timeMs: number | null, source: SourceRef): boolean {
    const outcome = scriptOutcome(text);
    if (!outcome) return false;
    const nested = this.nested.get(tool) ?? [];
    this.nested.delete(tool);
    tool.endMs = timeMs;
    tool.resultSource = source;
    tool.resultChars = text.length;
    tool.durationMs = outcome.durationMs ?? (timeMs !== null && tool.startMs !== null ? timeMs - tool.startMs : null);
    if (outcome.status === 'running') {
      // Still running: its end comes with the `wait` on this cell.
      if (outcome.cellId !== null) this.cells.set(outcome.cellId, tool);
      tool.isError = null;
      return true;
    }
    const failedCommand = nested.find((n) => n.failed === true);
    const failedCode = failedCommand?.exitCode ?? outcome.exitCodes.find((c) => c !== 0) ?? null;
    const patchFailure =
      outcome.body.includes('apply_patch verification failed') ||
      outcome.body.includes('Failed to find expected lines in');
    const failed =
      outcome.status === 'failed' ||
      outcome.status === 'terminated' ||
      failedCommand !== undefined ||
      failedCode !== null ||
      patchFailure;
    tool.isError = failed;
    const knownCodes = [...nested.map((n) => n.exitCode), ...outcome.exitCodes].filter((c): c is number => c !== null);
    tool.exitCode = failedCode ?? (knownCodes.length > 0 ? 0 : null);
    if (failedCommand?.command) tool.command = failedCommand.command;
    if (failed) {
      const what = failedCommand?.command
        ? `\`${failedCommand.command}\` ${failedCommand.exitCode !== null ? `exited with code ${failedCommand.exitCode}` : 'failed'}`
        : outcome.status === 'failed' || outcome.status === 'terminated'
          ? `script ${outcome.status}`
          : 'a nested command failed';
      tool.errorText = ownedText(clip(`${what}\n${outcome.body.trim()}`.trim(), ERROR_TEXT_MAX));
      const failedFile = failedPatchTarget(outcome.body);
      if (failedFile !== null) tool.targetFile = resolvePath(failedFile, this.turnCwd ?? this.sessionCwd);
    }
    return true;
  }

  private noteInput(timeMs: number | null): void {
    if (timeMs !== null) this.lastInputMs = timeMs;
  }

  private info(source: SourceRef, message: string): void {
    this.diagnostics.push({ file: source.file, line: source.line, severity: 'info', message });
  }

  private warn(source: SourceRef, message: string): void {
    this.diagnostics.push({ file: source.file, line: source.line, severity: 'warning', message });
  }
}

/** A command's end as `exec_command_end` reports it (0.12x and later; observed on 0.125). */
interface CommandEnd {
  exitCode: number | null;
  failed: boolean;
  output: string;
  durationMs: number | null;
  timeMs: number | null;
  source: SourceRef;
}

function commandEnd(p: JsonObject, timeMs: number | null, source: SourceRef): CommandEnd {
  const exit = count(p['exit_code']);
  const duration = obj(p['duration']);
  const secs = duration ? count(duration['secs']) : null;
  const nanos = duration ? count(duration['nanos']) : null;
  const output =
    str(p['aggregated_output']) ??
    str(p['formatted_output']) ??
    [str(p['stdout']), str(p['stderr'])].filter((t) => t).join('\n');
  return {
    exitCode: exit,
    failed: (exit !== null && exit !== 0) || str(p['status']) === 'failed',
    output,
    durationMs: secs === null ? null : Math.round(secs * 1000 + (nanos ?? 0) / 1e6),
    timeMs,
    source,
  };
}

/** A copy of a command call settled by its `exec_command_end`. */
function settledByEnd(tool: ToolCall, end: CommandEnd): ToolCall {
  const settled: ToolCall = {
    ...tool,
    endMs: end.timeMs,
    durationMs: end.durationMs ?? (end.timeMs !== null && tool.startMs !== null ? end.timeMs - tool.startMs : null),
    isError: end.failed,
    exitCode: end.exitCode,
    resultChars: end.output.length,
    resultSource: end.source,
  };
  if (end.failed)
    settled.errorText = ownedText(
      clip((end.output.trim() || `exited with code ${end.exitCode ?? '?'}`).trim(), ERROR_TEXT_MAX),
    );
  return settled;
}

/**
 * Call tokens from a Codex usage object. `input_tokens` includes `cached_input_tokens`
 * (§12.3) and `output_tokens` includes reasoning; only 0.145 and later say how many input
 * tokens were written to the cache.
 */
function usageTokens(usage: JsonObject): CallTokens {
  const input = count(usage['input_tokens']);
  const cached = 'cached_input_tokens' in usage ? count(usage['cached_input_tokens']) : null;
  return {
    input,
    cached,
    appended: input !== null && cached !== null && cached <= input ? input - cached : null,
    // 0.145 and later report cache writes, part of the input and not cached; 0 is a value.
    cacheWrite: 'cache_write_input_tokens' in usage ? count(usage['cache_write_input_tokens']) : null,
    output: count(usage['output_tokens']),
    reasoningOutput: 'reasoning_output_tokens' in usage ? count(usage['reasoning_output_tokens']) : null,
  };
}

/** The change in the cumulative usage since the previous report (from zero for the first). */
function difference(total: JsonObject, previous: JsonObject | null): JsonObject {
  const out: JsonObject = {};
  for (const f of USAGE_FIELDS) {
    const now = count(total[f]);
    const before = previous ? count(previous[f]) : 0;
    out[f] = now === null || before === null || now < before ? null : now - before;
  }
  return out;
}

/** The text of an `item_completed` UserMessage: its `content` text parts, joined. */
function itemText(item: JsonObject): string {
  const parts: string[] = [];
  for (const block of arr(item['content']) ?? []) {
    if (isObject(block) && typeof block['text'] === 'string') parts.push(block['text']);
  }
  return parts.join('\n');
}

function sameText(a: string, b: string): boolean {
  const x = a.trim();
  const y = b.trim();
  return x === y || (x !== '' && y !== '' && (x.includes(y) || y.includes(x)));
}

/** Gives each call the index of the last turn whose prompt came before it. */
function assignTurns(calls: LlmCall[], turns: UserTurn[]): void {
  let t = -1;
  for (const call of calls) {
    while (t + 1 < turns.length && isBefore(turns[t + 1]!.source, call.source)) t += 1;
    call.turn = t >= 0 ? t : null;
  }
}

function isBefore(a: SourceRef, b: SourceRef): boolean {
  return a.file < b.file || (a.file === b.file && a.offset < b.offset);
}

/**
 * A record as CodexReader reads it, without what it never reads: a `reasoning` item and an
 * assistant `message` only say that the model is answering (modelItem), so their text and
 * encrypted content are left out. Other records are returned as they are. Kept beside the
 * reader: a new read of either must be kept here too (test/unit/node/parallelParse.test.ts).
 */
export function slimCodexRecord(value: JsonObject): JsonObject {
  if (value['type'] !== 'response_item') return value;
  const payload = obj(value['payload']);
  if (!payload) return value;
  if (payload['type'] === 'reasoning') return { ...value, payload: { type: 'reasoning' } };
  if (payload['type'] === 'message' && payload['role'] === 'assistant')
    return { ...value, payload: { type: 'message', role: 'assistant' } };
  return value;
}
