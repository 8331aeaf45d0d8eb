import { isObject, str } from '../trace/json';
import type { JsonObject } from '../trace/json';
import type { TraceRecord } from '../trace/recordReader';
import { mcpServerOf } from './contextParts';
import type { ContentPiece, PartKind } from './contextParts';
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
  pieces: Map<string, ContentPiece[]>;
  /** `file:line` of a call's first line → its conversation key. */
  callLines: Map<string, string>;
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
  private readonly callLines = new Map<string, string>();
  /** tool_use id → what the model asked for, to name its result. */
  private readonly tools = new Map<string, { name: string; file: string | null; command: string | null }>();
  /** Inline (1.0.x) sidechain record uuid → conversation key. */
  private readonly sidechainOf = new Map<string, string>();
  private inline = 0;
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
      const seen = `${source.file}:${source.line}`;
      if (id !== null && isObject(message['usage'])) this.callLines.set(seen, key);
      this.assistant(key, message, at);
    } else this.user(key, value, message, at);
  }

  result(): CollectedContent {
    return { pieces: this.pieces, callLines: this.callLines, unreadLines: this.unread };
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
    if (value['isSidechain'] !== true) return `${file}|${sessionId}`;
    const agentId = str(value['agentId']);
    if (agentId !== null) return `${file}|${sessionId}/${agentId}`;
    const uuid = str(value['uuid']);
    const parent = str(value['parentUuid']);
    let key = parent !== null ? this.sidechainOf.get(parent) : undefined;
    if (key === undefined) key = `${file}|${sessionId}/inline-${this.inline++}`;
    if (uuid !== null) this.sidechainOf.set(uuid, key);
    return key;
  }

  private push(key: string, piece: ContentPiece): void {
    if (this.counter !== null) {
      piece.tokens = this.counter.count(piece.text);
      piece.text = '';
    }
    let list = this.pieces.get(key);
    if (!list) this.pieces.set(key, (list = []));
    list.push(piece);
  }

  private assistant(key: string, message: JsonObject, at: { file: number; line: number }): void {
    const content = message['content'];
    if (!Array.isArray(content)) return;
    for (const block of content) {
      if (!isObject(block)) continue;
      const t = str(block['type']);
      if (t === 'text') this.piece(key, at, 'assistantText', str(block['text']) ?? '');
      else if (t === 'thinking') this.piece(key, at, 'thinking', str(block['thinking']) ?? '');
      else if (t === 'tool_use') {
        const name = str(block['name']) ?? '(unnamed tool)';
        const input = isObject(block['input']) ? block['input'] : {};
        const file = str(input['file_path']) ?? str(input['notebook_path']) ?? str(input['path']);
        const command = str(input['command']);
        const id = str(block['id']);
        if (id !== null) this.tools.set(id, { name, file, command });
        this.push(key, {
          kind: 'toolUse',
          ...at,
          text: `${name} ${JSON.stringify(input)}`,
          tool: name,
          mcpServer: mcpServerOf(name),
          targetFile: file,
          command,
        });
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
        this.push(key, {
          kind: name !== null && SUBAGENT_TOOLS.has(name) ? 'subagentResult' : 'toolResult',
          ...at,
          text: resultText(block['content']),
          tool: name,
          mcpServer: mcpServerOf(name),
          targetFile: asked?.file ?? null,
          command: asked?.command ?? null,
        });
      }
    }
  }

  private piece(key: string, at: { file: number; line: number }, kind: PartKind, text: string): void {
    if (text.length === 0) return;
    this.push(key, { kind, ...at, text, tool: null, mcpServer: null, targetFile: null, command: null });
  }
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
