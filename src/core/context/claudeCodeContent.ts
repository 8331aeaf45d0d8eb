import { isObject, str } from '../trace/json';
import type { JsonObject } from '../trace/json';
import type { TraceRecord } from '../trace/recordReader';
import { mcpServerOf } from './contextParts';
import type { AssistantTurn, ContentPiece, PartKind, PieceColumns } from './contextParts';
import type { TokenCounter } from './tokenCounter';

/** Tools whose result is a sub-agent's answer (Claude Code's Task, later Agent). */
const SUBAGENT_TOOLS = new Set(['Task', 'Agent']);
/** Text Claude Code writes into user lines itself (docs/design/formats.md §1): not typed by a person. */
const AGENT_WRITTEN_PREFIXES = [
  '<task-notification>',
  '<local-command-stdout>',
  '<local-command-stderr>',
  '<local-command-caveat>',
  '<command-name>',
  '<bash-input>',
  '<bash-stdout>',
  '<bash-stderr>',
  'Stop hook feedback:',
  '<user-prompt-submit-hook>',
  '[Request interrupted by user',
  '<system-reminder>',
];

/** What a content collector hands back: the pieces of every conversation, and which conversation each call line belongs to. */
export interface CollectedContent {
  /** Conversation key → its pieces in file order. */
  readonly pieces: Map<string, ContentPiece[]>;
  /**
   * The same pieces as columns, when the collector keeps them so (Codex): the anatomy reads
   * these, and `pieces` is then built from them only when asked for.
   */
  readonly columns?: Map<string, PieceColumns>;
  /** The conversation a call's line (file, 0-based line) belongs to, or undefined. */
  keyOfCall(file: number, line: number): string | undefined;
  /**
   * Lines the reader could not hand over (broken or cut JSON, over-long lines), per file, sorted:
   * whatever they held entered some conversation uncounted, so the calls after them are not
   * compared with the log. Absent = none known.
   */
  unreadLines?: Map<number, number[]>;
}

/** Something that is fed a trace's records as they are read and collects what entered the context. */
export interface ContentCollector {
  record(record: TraceRecord): void;
  result(): CollectedContent;
}

/**
 * Collects the text Claude Code logs entering each conversation: typed prompts, tool results
 * (by tool, file, MCP server), sub-agent answers, the model's text, thinking and tool calls,
 * compaction summaries. A separate pass over the records the reader already parsed
 * (ParseOptions.recordTap), so the reader's own loop is untouched.
 */
export class ClaudeCodeContentCollector implements ContentCollector {
  private readonly pieces = new Map<string, ContentPiece[]>();
  /**
   * Per file, the lines of calls in increasing order and their conversation keys (two arrays
   * searched by bisection: a map entry per call line cost more than the rest of the line's
   * collecting on a 1 GB log).
   */
  private readonly callLines = new Map<number, { lines: number[]; keys: string[] }>();
  /** The last main conversation's key, reused while records keep to it (not a new string to hash per record). */
  private lastMain: { file: number; sessionId: string; key: string } | null = null;
  /** The last conversation pieces were added to. */
  private lastList: { key: string; list: ContentPiece[] } | null = null;
  /** tool_use id → what the model asked for, to name its result. */
  private readonly tools = new Map<string, { name: string; file: string | null; command: string | null }>();
  /** Inline (1.0.x) sidechain record uuid → conversation key. */
  private readonly sidechainOf = new Map<string, string>();
  private inline = 0;
  /** Per conversation, the assistant message its records last belonged to (a message's records come one after another). */
  private readonly lastTurn = new Map<string, { id: string; turn: AssistantTurn }>();
  /** Per file, the last line handed over and the lines skipped before later ones. */
  private readonly lastLine = new Map<number, number>();
  private readonly unread = new Map<number, number[]>();

  /** With a counter, each piece is counted as it comes and its text let go (a 1 GB log's text does not stay in memory). */
  constructor(private readonly counter: TokenCounter | null = null) {}

  record({ value, source }: TraceRecord): void {
    this.noteGap(source.file, source.line);
    const type = str(value['type']);
    if (type !== 'user' && type !== 'assistant') return;
    const message = value['message'];
    if (!isObject(message)) return;
    const key = this.keyOf(value, source.file);
    if (key === null) return;
    const at = { file: source.file, line: source.line };
    if (type === 'assistant') {
      const id = str(message['id']);
      if (id !== null && isObject(message['usage'])) this.noteCall(source.file, source.line, key);
      this.assistant(key, message, at);
    } else this.user(key, value, message, at);
  }

  result(): CollectedContent {
    const callLines = this.callLines;
    return {
      pieces: this.pieces,
      keyOfCall(file, line) {
        const at = callLines.get(file);
        if (!at) return undefined;
        const i = lowerBound(at.lines, line);
        return at.lines[i] === line ? at.keys[i] : undefined;
      },
      unreadLines: this.unread,
    };
  }

  private noteCall(file: number, line: number, key: string): void {
    let at = this.callLines.get(file);
    if (!at) this.callLines.set(file, (at = { lines: [], keys: [] }));
    const n = at.lines.length;
    if (n === 0 || at.lines[n - 1]! < line) {
      at.lines.push(line);
      at.keys.push(key);
      return;
    }
    // Records come in line order; should one not, it is put in its place.
    const i = lowerBound(at.lines, line);
    if (at.lines[i] === line) at.keys[i] = key;
    else {
      at.lines.splice(i, 0, line);
      at.keys.splice(i, 0, key);
    }
  }

  /** Records come line by line; a line skipped between two (the reader reported it) held something the log lost. */
  private noteGap(file: number, line: number): void {
    const last = this.lastLine.get(file) ?? -1;
    if (line > last + 1) {
      let list = this.unread.get(file);
      if (!list) this.unread.set(file, (list = []));
      // Only the last skipped line matters for the calls after it: a run of them counts once.
      list.push(line - 1);
    }
    if (line > last) this.lastLine.set(file, line);
  }

  private keyOf(value: JsonObject, file: number): string | null {
    const sessionId = str(value['sessionId']);
    if (sessionId === null) return null;
    if (value['isSidechain'] !== true) {
      const last = this.lastMain;
      if (last !== null && last.file === file && last.sessionId === sessionId) return last.key;
      const key = `${file}|${sessionId}`;
      this.lastMain = { file, sessionId, key };
      return key;
    }
    const agentId = str(value['agentId']);
    if (agentId !== null) return `${file}|${sessionId}/${agentId}`;
    const uuid = str(value['uuid']);
    const parent = str(value['parentUuid']);
    let key = parent !== null ? this.sidechainOf.get(parent) : undefined;
    if (key === undefined) key = `${file}|${sessionId}/inline-${this.inline++}`;
    if (uuid !== null) this.sidechainOf.set(uuid, key);
    return key;
  }

  /**
   * One piece, built in one object literal of a fixed shape (no spread, no field added later):
   * a 1 GB log makes hundreds of thousands and keeps them until the anatomy is built.
   */
  private push(
    key: string,
    kind: PartKind,
    at: { file: number; line: number },
    text: string,
    tool: string | null,
    targetFile: string | null,
    command: string | null,
    tokens: number | null = null,
    turn: AssistantTurn | null = null,
  ): void {
    const counter = this.counter;
    const counted = counter !== null;
    const piece: ContentPiece = {
      kind,
      file: at.file,
      line: at.line,
      text: counted ? '' : text,
      tool,
      mcpServer: mcpServerOf(tool),
      targetFile,
      command,
      charsOnly: null,
      tokens: tokens ?? (counted ? counter.count(text) : null),
      turn,
    };
    let list = this.lastList !== null && this.lastList.key === key ? this.lastList.list : this.pieces.get(key);
    if (!list) this.pieces.set(key, (list = []));
    if (this.lastList === null || this.lastList.list !== list) this.lastList = { key, list };
    list.push(piece);
  }

  private assistant(key: string, message: JsonObject, at: { file: number; line: number }): void {
    const content = message['content'];
    if (!Array.isArray(content)) return;
    const turn = this.turnOf(key, message, content);
    for (const block of content) {
      if (!isObject(block)) continue;
      const t = str(block['type']);
      if (t === 'text') this.piece(key, at, 'assistantText', str(block['text']) ?? '', turn);
      else if (t === 'thinking') this.piece(key, at, 'thinking', str(block['thinking']) ?? '', turn);
      else if (t === 'tool_use') {
        const name = str(block['name']) ?? '(unnamed tool)';
        const input = isObject(block['input']) ? block['input'] : {};
        const file = str(input['file_path']) ?? str(input['notebook_path']) ?? str(input['path']);
        const command = str(input['command']);
        const id = str(block['id']);
        if (id !== null) this.tools.set(id, { name, file, command });
        const counter = this.counter;
        // Past the exact budget only a length is counted: the JSON's characters without its escapes, without building it.
        if (counter?.lengthOnly && counter.countLength)
          this.push(
            key,
            'toolUse',
            at,
            '',
            name,
            file,
            command,
            counter.countLength(name.length + 1 + jsonChars(input)),
            turn,
          );
        else this.push(key, 'toolUse', at, `${name} ${JSON.stringify(input)}`, name, file, command, null, turn);
      }
    }
  }

  private user(key: string, value: JsonObject, message: JsonObject, at: { file: number; line: number }): void {
    const content = message['content'];
    const summary = value['isCompactSummary'] === true;
    const meta = value['isMeta'] === true;
    if (typeof content === 'string') {
      this.piece(key, at, summary ? 'compactionSummary' : textKind(content, meta), content);
      return;
    }
    if (!Array.isArray(content)) return;
    for (const block of content) {
      if (!isObject(block)) continue;
      const t = str(block['type']);
      if (t === 'text') {
        const text = str(block['text']) ?? '';
        this.piece(key, at, summary ? 'compactionSummary' : textKind(text, meta), text);
      } else if (t === 'tool_result') {
        const asked = this.tools.get(str(block['tool_use_id']) ?? '');
        const name = asked?.name ?? null;
        this.push(
          key,
          name !== null && SUBAGENT_TOOLS.has(name) ? 'subagentResult' : 'toolResult',
          at,
          resultText(block['content']),
          name,
          asked?.file ?? null,
          asked?.command ?? null,
        );
      }
    }
  }

  private piece(
    key: string,
    at: { file: number; line: number },
    kind: PartKind,
    text: string,
    turn: AssistantTurn | null = null,
  ): void {
    if (text.length === 0) return;
    this.push(key, kind, at, text, null, null, null, null, turn);
  }

  /**
   * The assistant message a record belongs to, by its message id: one object shared by the
   * message's pieces, holding the largest output count logged on its records so far (the last
   * record of a streamed message carries the final count) and whether any record held thinking.
   */
  private turnOf(key: string, message: JsonObject, content: unknown[]): AssistantTurn | null {
    const id = str(message['id']);
    const usage = message['usage'];
    const raw = isObject(usage) ? usage['output_tokens'] : null;
    // A count only when it is one (hostile logs hold 1e400, negatives, strings).
    const output = typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0 ? raw : null;
    if (id === null) return null;
    let last = this.lastTurn.get(key);
    if (last === undefined || last.id !== id) {
      last = { id, turn: { output: 0, thinking: false } };
      this.lastTurn.set(key, last);
    }
    const turn = last.turn;
    if (output !== null && output > turn.output) turn.output = output;
    for (const b of content) {
      const t = isObject(b) ? str(b['type']) : null;
      if (t === 'thinking' || t === 'redacted_thinking') turn.thinking = true;
    }
    return turn;
  }
}

/**
 * The length of a value's JSON without its escapes (a string's quotes counted, not the
 * backslashes `\n` or `\"` would add): what a length-only count needs of a tool call's input,
 * at a tenth of JSON.stringify's cost (no string built).
 */
export function jsonChars(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (value === null || typeof value !== 'object') return value === undefined ? 0 : String(value).length;
  let n = 2;
  let first = true;
  if (Array.isArray(value)) {
    for (const v of value) {
      n += jsonChars(v) + (first ? 0 : 1);
      first = false;
    }
    return n;
  }
  for (const k in value as Record<string, unknown>) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    n += k.length + 3 + jsonChars(v) + (first ? 0 : 1);
    first = false;
  }
  return n;
}

/** The first index of a sorted array whose value is ≥ `x`. */
function lowerBound(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function textKind(text: string, meta: boolean): PartKind {
  const trimmed = text.trimStart();
  if (meta || AGENT_WRITTEN_PREFIXES.some((p) => trimmed.startsWith(p))) return 'injected';
  return 'userText';
}

/** A tool result's text: a string, or the text blocks of a list (images are left out: see the notes). */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const b of content) if (isObject(b) && str(b['type']) === 'text') texts.push(str(b['text']) ?? '');
  return texts.join('\n');
}
