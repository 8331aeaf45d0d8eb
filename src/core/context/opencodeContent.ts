import { isObject, obj, str, count } from '../trace/json';
import type { JsonObject } from '../trace/json';
import type { TraceRecord } from '../trace/recordReader';
import type { CollectedContent, ContentCollector } from './claudeCodeContent';
import { mcpServerOf } from './contextParts';
import type { AssistantTurn, ContentPiece, PartKind } from './contextParts';

/** The first record an OpenCode export is tapped as: `{$opencodeSession: info}` (geminiDocumentRecords' OpenCode twin). */
export function isOpenCodeSessionRecord(value: JsonObject): boolean {
  return isObject(value['$opencodeSession']);
}

/**
 * Collects the text an OpenCode export (`opencode export`) shows entering the model's context
 * (docs/guide/context.md#opencode): the user messages' text parts (typed, or `synthetic` ones
 * OpenCode adds itself as agent-written input), and per step of an assistant message its text,
 * reasoning, tool calls with their input and tool results with their output. A step's pieces
 * enter the call after it (they are placed at its `step-finish`, the call), its text and tool
 * calls sized by the step's logged output tokens, its reasoning by the logged reasoning tokens
 * (an estimate: the text OpenCode keeps of it is not what the model produced). The text is kept and counted by the anatomy
 * with the tokenizer of the session's model.
 */
export class OpenCodeContentCollector implements ContentCollector {
  private readonly pieces: ContentPiece[] = [];
  private role: string | null = null;
  private summary = false;
  private messageLine = 0;
  private step: ContentPiece[] = [];
  private turn: AssistantTurn = { output: 0, thinking: false };
  private file = 0;

  record({ value, source }: TraceRecord): void {
    this.file = source.file;
    const info = obj(value['$message']);
    if (info) {
      this.endStep(this.messageLine);
      this.role = str(info['role']);
      this.summary = info['summary'] === true;
      this.messageLine = source.line;
      return;
    }
    const part = obj(value['$part']);
    if (!part) return;
    const type = str(part['type']);
    if (this.role === 'user') {
      const text = type === 'text' ? str(part['text']) : null;
      if (text) this.add(part['synthetic'] === true ? 'injected' : 'userText', text, null, null, null, source.line);
      return;
    }
    if (this.role !== 'assistant') return;
    if (type === 'text') {
      const text = str(part['text']);
      if (text)
        this.step.push(this.piece(this.summary ? 'compactionSummary' : 'assistantText', text, null, null, null));
    } else if (type === 'reasoning') {
      // Sized at the step's end by its logged reasoning tokens (the text may be a summary or empty).
      this.step.push({ ...this.piece('thinking', '', null, null, null), tokens: 0, estimated: true });
    } else if (type === 'tool') {
      const name = str(part['tool']) ?? 'tool';
      const state = obj(part['state']) ?? {};
      const input = obj(state['input']) ?? {};
      const file = str(input['filePath']) ?? str(input['file_path']);
      const command = str(input['command']);
      this.step.push(this.piece('toolUse', `${name} ${JSON.stringify(input)}`, name, file, command));
      const output = str(state['output']) ?? str(state['error']);
      // The result is no part of the model's turn: it enters beside it, counted (turn null).
      if (output !== null) this.step.push({ ...this.piece('toolResult', output, name, file, command), turn: null });
    } else if (type === 'step-finish') {
      // `output` excludes `reasoning` (the reader adds them): the step's turn is both, its reasoning the logged count.
      const tokens = obj(part['tokens']);
      const reasoning = (tokens ? count(tokens['reasoning']) : null) ?? 0;
      this.turn.output = ((tokens ? count(tokens['output']) : null) ?? 0) + reasoning;
      const thinking = this.step.find((p) => p.kind === 'thinking');
      if (thinking) thinking.tokens = reasoning;
      this.endStep(source.line);
    }
  }

  result(): CollectedContent {
    this.endStep(this.messageLine);
    const pieces = new Map<string, ContentPiece[]>();
    const usable = this.pieces.length > 0;
    if (usable) pieces.set('0', this.pieces);
    return { pieces, keyOfCall: () => (usable ? '0' : undefined) };
  }

  /** A step's pieces enter at `line` (its step-finish, the call; or its message's line when it has none). */
  private endStep(line: number): void {
    // The model's own pieces first, one run (knownTurnTokens sizes a run of one turn), then the results.
    for (const own of [true, false])
      for (const p of this.step)
        if ((p.turn != null) === own) {
          p.line = line;
          this.pieces.push(p);
        }
    this.step = [];
    this.turn = { output: 0, thinking: false };
  }

  private add(
    kind: PartKind,
    text: string,
    tool: string | null,
    file: string | null,
    command: string | null,
    line: number,
  ): void {
    this.pieces.push({ ...this.piece(kind, text, tool, file, command), line, turn: null });
  }

  private piece(
    kind: PartKind,
    text: string,
    tool: string | null,
    targetFile: string | null,
    command: string | null,
  ): ContentPiece {
    return {
      kind,
      file: this.file,
      line: 0,
      text,
      tool,
      mcpServer: mcpServerOf(tool),
      targetFile,
      command,
      charsOnly: null,
      tokens: null,
      turn: this.turn,
    };
  }
}
