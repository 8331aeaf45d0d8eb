import { arr, count, isObject, obj, str } from '../trace/json';
import type { JsonObject } from '../trace/json';
import type { TraceRecord } from '../trace/recordReader';
import { isGeminiMessage, targetOf, textOf, userMessageKind } from '../trace/geminiCli/geminiCliReader';
import type { CollectedContent, ContentCollector } from './claudeCodeContent';
import { mcpServerOf } from './contextParts';
import type { AssistantTurn, ContentPiece, PartKind } from './contextParts';
import type { TokenCounter } from './tokenCounter';

/** True when a record is a Gemini CLI chat header (`sessionId` and `projectHash`): the first record of its JSON Lines chats and of the documents as tapped. */
export function isGeminiHeader(value: JsonObject): boolean {
  return typeof value['sessionId'] === 'string' && typeof value['projectHash'] === 'string';
}

/** A tool result waiting for the user turn that sends it (`functionResponse` parts), else entering at its call's message. */
interface PendingResult {
  id: string | null;
  line: number;
  name: string;
  targetFile: string | null;
  command: string | null;
  text: string;
}

/**
 * Collects the text a Gemini CLI chat shows entering the model's context
 * (docs/guide/context.md#gemini-cli): the user messages (typed prompts, and what the CLI writes
 * there itself — `<session_context>`, plan-mode notices, `!` shell results — as agent-written
 * input), the model's answer text and its tool calls with their arguments (together sized by
 * the logged output tokens: Gemini leaves its thoughts out of the history it sends back), and
 * each tool's result by tool and file: the `functionResponse` parts of the user turn that sends
 * them when the chat records it (0.5x on), else the call's own `result` (older chats). A
 * message written twice (JSON Lines chats re-write a `gemini` message when its tool calls end)
 * counts once, as its last copy, as the reader reads it. GEMINI.md memory goes into the system
 * instruction, which the chat does not record: it stays in the unlogged base. Counted with the
 * counter given as it comes (o200k_base, a stand-in: docs/guide/context.md#tokenizers).
 */
export class GeminiContentCollector implements ContentCollector {
  private readonly pieces: ContentPiece[] = [];
  /** Message id → index of its first piece, for the message written again. */
  private readonly startOf = new Map<string, number>();
  private pending: PendingResult[] = [];
  private file = 0;
  private lastLine = -1;
  /** Two messages on one line (a minified document): pieces cannot be placed between calls, so none are handed over. */
  private unordered = false;

  constructor(private readonly counter: TokenCounter | null = null) {}

  record({ value, source }: TraceRecord): void {
    if (!isGeminiMessage(value)) {
      // A whole chat on one line (read as one record): its messages share that line.
      if ((arr(value['messages']) ?? []).length > 1) this.unordered = true;
      return;
    }
    if (source.line <= this.lastLine && !this.startOf.has(str(value['id']) ?? '')) this.unordered = true;
    this.lastLine = Math.max(this.lastLine, source.line);
    this.file = source.file;
    const at = source.line;
    const id = str(value['id']);
    const type = str(value['type']);
    if (type === 'user' && userMessageKind(value['content']) === 'tool-results') {
      this.toolResponses(value['content'], at);
      return;
    }
    // Info, warning and error lines (a cancelled request) come between a call and the turn that sends its results.
    if (type !== 'user' && type !== 'gemini') return;
    this.flush();
    if (id !== null) {
      // A message written again replaces its earlier copy (and what it brought), as the reader keeps the last.
      const start = this.startOf.get(id);
      if (start !== undefined) this.pieces.length = start;
      this.startOf.set(id, this.pieces.length);
    }
    if (type === 'user') {
      const text = textOf(value['content']);
      if (text === '') return;
      const kind = userMessageKind(value['content']);
      this.push(kind === 'prompt' ? 'userText' : 'injected', at, text, null, null, null);
    } else if (type === 'gemini') this.modelTurn(value, at);
  }

  result(): CollectedContent {
    this.flush();
    const pieces = new Map<string, ContentPiece[]>();
    // Nothing read as text (a chat on one line, no message handed over): the anatomy reads the sizes.
    const usable = !this.unordered && this.pieces.length > 0;
    if (usable) pieces.set('0', this.pieces);
    return { pieces, keyOfCall: () => (usable ? '0' : undefined) };
  }

  /** A `gemini` message: its text and tool calls, one turn sized by its logged output; its tool results wait for the turn that sends them. */
  private modelTurn(m: JsonObject, at: number): void {
    const tokens = obj(m['tokens']);
    const turn: AssistantTurn = { output: (tokens ? count(tokens['output']) : null) ?? 0, thinking: false };
    const text = textOf(m['content']);
    if (text !== '') this.push('assistantText', at, text, null, null, null, turn);
    for (const tc of arr(m['toolCalls']) ?? []) {
      if (!isObject(tc)) continue;
      const name = str(tc['name']);
      if (name === null) continue;
      const args = obj(tc['args']) ?? {};
      const targetFile = targetOf(args);
      const command = str(args['command']);
      this.push('toolUse', at, `${name} ${JSON.stringify(args)}`, name, targetFile, command, turn);
      const id = str(tc['id']);
      for (const r of arr(tc['result']) ?? []) {
        const fr = obj(obj(r)?.['functionResponse']);
        if (fr)
          this.pending.push({ id, line: at, name, targetFile, command, text: responseText(name, fr['response']) });
      }
    }
  }

  /** A user turn of `functionResponse` parts: each result enters here, named by the call it answers. */
  private toolResponses(content: unknown, at: number): void {
    for (const part of arr(content) ?? []) {
      const fr = obj(obj(part)?.['functionResponse']);
      if (!fr) continue;
      const id = str(fr['id']);
      const i = this.pending.findIndex((p) => p.id !== null && p.id === id);
      const asked = i === -1 ? null : this.pending.splice(i, 1)[0]!;
      const name = str(fr['name']) ?? asked?.name ?? 'tool';
      this.push(
        'toolResult',
        at,
        responseText(name, fr['response']),
        name,
        asked?.targetFile ?? null,
        asked?.command ?? null,
      );
    }
  }

  /** Results no user turn sent (older chats record them only on the call): they enter after their call's message. */
  private flush(): void {
    for (const p of this.pending) this.push('toolResult', p.line, p.text, p.name, p.targetFile, p.command);
    this.pending = [];
  }

  private push(
    kind: PartKind,
    line: number,
    text: string,
    tool: string | null,
    targetFile: string | null,
    command: string | null,
    turn: AssistantTurn | null = null,
  ): void {
    const counter = this.counter;
    this.pieces.push({
      kind,
      file: this.file,
      line,
      text: counter ? '' : text,
      tool,
      mcpServer: mcpServerOf(tool),
      targetFile,
      command,
      charsOnly: null,
      tokens: counter ? counter.count(text) : null,
      turn,
    });
  }
}

/** What a tool's response sends the model: its name and the response object as JSON (`{"output": …}` or `{"error": …}`). */
function responseText(name: string, response: unknown): string {
  return `${name} ${JSON.stringify(response ?? {})}`;
}
