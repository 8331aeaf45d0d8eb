import { arr, count, isObject, obj, ownedText, str } from '../trace/json';
import type { JsonObject } from '../trace/json';
import type { TraceRecord } from '../trace/recordReader';
import { CODE_MODE_EXEC, scriptActions } from '../trace/codex/codeMode';
import { INJECTED_PREFIXES, ROLLOUT_TYPES } from '../trace/codex/codexReader';
import { callArguments, outputText, patchTarget, resolvePath, shellCommand } from '../trace/codex/toolOutput';
import type { CollectedContent, ContentCollector } from './claudeCodeContent';
import { PieceColumnsBuilder, mcpServerOf, piecesOfColumns } from './contextParts';
import type { AssistantTurn, ContentPiece, PartKind, PieceColumns, PieceSource } from './contextParts';
import type { TokenCounter } from './tokenCounter';

/**
 * User-role text Codex writes itself (docs/design/formats.md §2), as the Codex reader knows it:
 * memory files first, then the rest of what it injects (environment, permissions, modes,
 * aborted turns, plugins).
 */
const MEMORY_PREFIXES = ['# AGENTS.md instructions for', '<user_instructions>'];

/** True when a record has the shape of a Codex rollout line (`{type, payload}`, a type the Codex reader knows). */
export function isRolloutRecord(value: JsonObject): boolean {
  const type = value['type'];
  return typeof type === 'string' && ROLLOUT_TYPES.has(type) && isObject(value['payload']);
}

/**
 * Message framing, from OpenAI's published accounts of how messages become tokens: the
 * tiktoken cookbook's count for chat models ("every message follows
 * `<|start|>{role}<|message|>{content}<|end|>`", 3 tokens besides the content) and the harmony
 * format gpt-oss is trained on, which renders Responses API items the same way, a tool's output
 * as a message from `functions.NAME to=assistant` on the `commentary` channel
 * (docs/guide/context.md#codex). These are what each item sends besides its text, counted with
 * the same tokenizer: no constant is fitted to a log.
 */
export const MESSAGE_FRAMING_SPECIALS = 3;
/** A tool output: `<|start|>`, `<|channel|>`, `<|message|>`, `<|end|>` around its header words. */
export const TOOL_OUTPUT_SPECIALS = 4;

/** Events after which the model's current response is over (the Codex reader's endResponse). */
const ENDS_RESPONSE: ReadonlySet<string> = new Set(['user_message', 'task_started', 'task_complete', 'turn_aborted']);

/**
 * One model response: its turn (the logged output; `turnId` its index in the file's columns,
 * −1 until a piece needs it), its first reasoning item's piece (−1: none yet), and the logged
 * reasoning tokens once known.
 */
interface Response {
  turn: AssistantTurn;
  turnId: number;
  firstReasoning: number;
  reasoningTokens: number | null;
}

/** What the collector keeps per file (a rollout is one session per file). */
interface FileState {
  /** The pieces, as columns (no object per piece: a 1 GB rollout has hundreds of thousands). */
  pieces: PieceColumnsBuilder;
  /** Each call id's tool, file and command: the source its call's piece and its output's share. */
  tools: Map<string, PieceSource>;
  /** Where model items sit relative to their usage report (as the Codex reader decides it). */
  order: 'unknown' | 'usage-first' | 'items-first';
  /** items-first: the response whose items were seen and whose usage was not. */
  pending: Response | null;
  /** usage-first: the response the last usage report opened. */
  open: Response | null;
  lastTotalKey: string | number | null;
  /** The working directory patches' relative paths resolve against (session_meta, then each turn_context). */
  cwd: string | null;
  lastLine: number;
  unread: number[];
}

/**
 * Collects the text a Codex rollout shows entering the model's context
 * (docs/guide/context.md#codex): the base instructions (`session_meta.base_instructions`, 0.114
 * on) and developer messages as agent-written input, user messages (AGENTS.md as memory, Codex's
 * own context as agent-written input, typed prompts), the model's reasoning (its encrypted
 * content has no text: sized from the logged reasoning tokens, an estimate), assistant
 * messages, tool calls with their arguments, tool outputs (by tool, command and patched file)
 * and compaction summaries. Counted with the counter
 * given (o200k_base: the encoding of OpenAI's current models) as it comes; the text is let go.
 */
export class CodexContentCollector implements ContentCollector {
  private readonly files = new Map<number, FileState>();
  private readonly headers = new Map<string, number>();
  private readonly toolFraming = new Map<string, number>();

  /**
   * `counter` counts the pieces' text (null: the text is kept and counted later, without its
   * framing); `exact` the framing's header words (a budgeted counter past its budget would
   * estimate them from their length): by default the counter itself.
   */
  constructor(
    private readonly counter: TokenCounter | null = null,
    private readonly exact: TokenCounter | null = counter,
  ) {}

  record({ value, source }: TraceRecord): void {
    const state = this.stateOf(source.file);
    if (source.line > state.lastLine + 1) state.unread.push(source.line - 1);
    if (source.line > state.lastLine) state.lastLine = source.line;
    const payload = obj(value['payload']);
    if (!payload) return;
    const at = source.line;
    switch (str(value['type'])) {
      case 'session_meta':
        state.cwd ??= str(payload['cwd']);
        this.sessionMeta(state, payload, at, source.file);
        return;
      case 'turn_context':
        state.cwd = str(payload['cwd']) ?? state.cwd;
        return;
      case 'response_item':
        this.item(state, payload, at, source.file);
        return;
      case 'event_msg':
        this.event(state, payload);
        return;
      case 'compacted': {
        state.open = null;
        state.pending = null;
        const text = str(payload['message']);
        if (text) this.push(state, 'compactionSummary', source.file, at, text, null);
        return;
      }
    }
  }

  result(): CollectedContent {
    const columns = new Map<string, PieceColumns>();
    const unreadLines = new Map<number, number[]>();
    for (const [file, s] of this.files) {
      columns.set(String(file), s.pieces);
      if (s.unread.length > 0) unreadLines.set(file, s.unread);
    }
    let pieces: Map<string, ContentPiece[]> | null = null;
    return {
      // As objects only when asked for: the anatomy reads the columns.
      get pieces(): Map<string, ContentPiece[]> {
        pieces ??= new Map([...columns].map(([key, c]) => [key, piecesOfColumns(c)]));
        return pieces;
      },
      columns,
      keyOfCall: (file) => (this.files.has(file) ? String(file) : undefined),
      unreadLines,
    };
  }

  private stateOf(file: number): FileState {
    let s = this.files.get(file);
    if (!s)
      this.files.set(
        file,
        (s = {
          pieces: new PieceColumnsBuilder(this.counter === null),
          tools: new Map(),
          order: 'unknown',
          pending: null,
          open: null,
          lastTotalKey: null,
          cwd: null,
          lastLine: -1,
          unread: [],
        }),
      );
    return s;
  }

  private sessionMeta(state: FileState, p: JsonObject, at: number, file: number): void {
    // A second session_meta is a sub-agent replaying its parent's history: the instructions are its own only once.
    if (state.pieces.length > 0) return;
    const base = obj(p['base_instructions']);
    const text = (base ? str(base['text']) : null) ?? str(p['instructions']);
    if (text)
      this.push(state, 'injected', file, at, text, null, MESSAGE_FRAMING_SPECIALS + this.headerTokens('system'));
  }

  private item(state: FileState, p: JsonObject, at: number, file: number): void {
    const type = str(p['type']);
    switch (type) {
      case 'message': {
        const role = str(p['role']);
        const text = messageText(p['content']);
        if (role === 'assistant') {
          const turn = this.responseOf(state);
          if (text) this.push(state, 'assistantText', file, at, text, null, 0, turn);
        } else if (role === 'user' || role === 'developer' || role === 'system') {
          if (!text) return;
          this.push(
            state,
            inputKind(role, text),
            file,
            at,
            text,
            null,
            MESSAGE_FRAMING_SPECIALS + this.headerTokens(role),
          );
        }
        return;
      }
      case 'reasoning': {
        const response = this.responseOf(state);
        // The encrypted reasoning has no text: its tokens are the logged reasoning tokens, set when the usage comes.
        // (The usage comes first in 0.60 rollouts, last in later ones.)
        const first = response.firstReasoning < 0;
        const tokens = first ? (response.reasoningTokens ?? 0) : 0;
        const piece = this.push(state, 'thinking', file, at, '', null, 0, response, tokens);
        if (first) response.firstReasoning = piece;
        return;
      }
      case 'function_call':
      case 'custom_tool_call':
      case 'local_shell_call':
      case 'web_search_call':
        this.toolCall(state, type, p, at, file);
        return;
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const asked = state.tools.get(str(p['call_id']) ?? '') ?? null;
        const text = outputText(p['output']).text;
        // `functions.NAME to=assistant` and `commentary`: the header of a tool's output message, counted apart (a special token lies between).
        this.push(state, 'toolResult', file, at, text, asked, this.toolOutputFraming(asked?.tool ?? 'tool'));
        return;
      }
    }
  }

  private toolCall(state: FileState, type: string, p: JsonObject, at: number, file: number): void {
    const response = this.responseOf(state);
    const id = str(p['call_id']) ?? str(p['id']);
    let name: string;
    let input: string;
    let command: string | null = null;
    let target: string | null = null;
    if (type === 'custom_tool_call') {
      name = str(p['name']) ?? 'custom_tool';
      input = str(p['input']) ?? '';
      if (name === CODE_MODE_EXEC) {
        const actions = scriptActions(input);
        command = actions.commands.length > 0 ? actions.commands.join(' && ') : null;
        target = actions.patchedFiles[0] ?? null;
      } else if (input.includes('*** Begin Patch')) target = patchTarget(input);
    } else if (type === 'local_shell_call') {
      name = 'local_shell';
      const action = obj(p['action']);
      command = shellCommand(action);
      input = JSON.stringify(action ?? {});
    } else if (type === 'web_search_call') {
      name = 'web_search';
      input = JSON.stringify(p['action'] ?? {});
    } else {
      name = str(p['name']) ?? 'function';
      const raw = p['arguments'];
      input = typeof raw === 'string' ? raw : JSON.stringify(raw ?? {});
      const args = callArguments(raw);
      command = shellCommand(args);
      const patch = name === 'apply_patch' ? (str(args?.['input']) ?? str(args?.['patch']) ?? input) : command;
      if (patch?.includes('*** Begin Patch')) target = patchTarget(patch);
    }
    // Own strings: a path cut from a patch, a command from a script, would keep the whole text alive.
    const targetFile = target === null ? null : resolvePath(target, state.cwd);
    const ownCommand = command === null ? null : ownedText(command);
    const source: PieceSource = { tool: name, mcpServer: mcpServerOf(name), targetFile, command: ownCommand };
    if (id !== null) state.tools.set(id, source);
    const counter = this.counter;
    // Past the exact budget only a length is counted: the call's text is not built.
    if (counter?.lengthOnly && counter.countLength)
      this.push(
        state,
        'toolUse',
        file,
        at,
        '',
        source,
        0,
        response,
        counter.countLength(name.length + 1 + input.length),
        false,
      );
    else this.push(state, 'toolUse', file, at, `${name} ${input}`, source, 0, response);
  }

  private event(state: FileState, p: JsonObject): void {
    const type = str(p['type']);
    if (type === 'token_count') {
      const info = obj(p['info']);
      if (info) this.usage(state, info);
    } else if (ENDS_RESPONSE.has(type ?? '')) {
      // As the reader: a prompt, a task boundary or an interruption ends the response (one with no report keeps output 0).
      state.pending = null;
      state.open = null;
    }
  }

  /** A usage report: the output (and reasoning) tokens of the response it belongs to (as the Codex reader pairs them). */
  private usage(state: FileState, info: JsonObject): void {
    const total = obj(info['total_token_usage']);
    const key = total ? (count(total['total_tokens']) ?? JSON.stringify(total)) : null;
    // 0.60 writes each report twice.
    if (key !== null && key === state.lastTotalKey) return;
    if (total) state.lastTotalKey = key;
    const last = obj(info['last_token_usage']);
    const output = last ? count(last['output_tokens']) : null;
    const reasoning = last ? count(last['reasoning_output_tokens']) : null;
    if (state.order === 'unknown') state.order = state.pending ? 'items-first' : 'usage-first';
    let response: Response;
    if (state.order === 'items-first') {
      if (!state.pending) return;
      response = state.pending;
      state.pending = null;
    } else {
      response = newResponse();
      state.open = response;
    }
    settle(state.pieces, response, output, reasoning);
  }

  /** The response the model's next item belongs to. */
  private responseOf(state: FileState): Response {
    if (state.order === 'usage-first' && state.open) return state.open;
    state.pending ??= newResponse();
    return state.pending;
  }

  /**
   * The framing of a tool's output message, once per tool name: the header's words are not
   * built again for every output (a long rollout has tens of thousands).
   */
  private toolOutputFraming(name: string): number {
    let n = this.toolFraming.get(name);
    if (n === undefined) {
      n = TOOL_OUTPUT_SPECIALS + this.headerTokens(`functions.${name} to=assistant`) + this.headerTokens('commentary');
      this.toolFraming.set(name, n);
    }
    return n;
  }

  /** Tokens of a message header's words (a role, a recipient), counted once each: headers repeat. */
  private headerTokens(header: string): number {
    let n = this.headers.get(header);
    if (n === undefined) {
      n = this.exact === null ? 0 : this.exact.count(header);
      this.headers.set(header, n);
    }
    return n;
  }

  /** Appends a piece to the file's columns; returns its index. */
  private push(
    state: FileState,
    kind: PartKind,
    file: number,
    line: number,
    text: string,
    source: PieceSource | null,
    framing = 0,
    response: Response | null = null,
    tokens: number | null = null,
    sized = tokens !== null,
  ): number {
    const counter = this.counter;
    const counted = counter !== null && tokens === null;
    let turn = -1;
    if (response !== null) {
      if (response.turnId < 0) response.turnId = state.pieces.addTurn(response.turn);
      turn = response.turnId;
    }
    return state.pieces.push(
      kind,
      file,
      line,
      counted ? '' : text,
      source,
      tokens ?? (counted ? counter.count(text) + framing : Number.NaN),
      turn,
      sized,
    );
  }
}

function newResponse(): Response {
  return { turn: { output: 0, thinking: false }, turnId: -1, firstReasoning: -1, reasoningTokens: null };
}

/**
 * The logged usage given to a response: its output tokens, and its reasoning tokens on its first
 * reasoning item (now, or when that item comes after the report).
 */
function settle(
  pieces: PieceColumnsBuilder,
  response: Response,
  output: number | null,
  reasoning: number | null,
): void {
  if (output !== null) response.turn.output = output;
  response.reasoningTokens = reasoning;
  if (response.firstReasoning >= 0 && reasoning !== null) pieces.tokens[response.firstReasoning] = reasoning;
}

/** A message's text: its text content items joined (images are left out, as for Claude Code). */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  const parts: string[] = [];
  for (const block of arr(content) ?? [])
    if (isObject(block) && typeof block['text'] === 'string') parts.push(block['text']);
  return parts.join('\n');
}

/**
 * The kind of an input message: AGENTS.md is memory; developer and system messages (Codex's own
 * instructions) and the context Codex writes into user messages are agent-written input; the
 * rest was typed. (`system` stays the unlogged base: the tool definitions.)
 */
function inputKind(role: string, text: string): PartKind {
  if (role !== 'user') return 'injected';
  const trimmed = text.trimStart();
  if (MEMORY_PREFIXES.some((p) => trimmed.startsWith(p))) return 'memory';
  if (INJECTED_PREFIXES.some((p) => trimmed.startsWith(p))) return 'injected';
  return 'userText';
}
